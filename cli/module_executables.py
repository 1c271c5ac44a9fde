"""The executables a compiled module holds: what each of its `hal.executable.create` (full `hal`
module) and `hal_loader.executable.load` (inline-dynamic) calls passes as the format and the image.

iree-compile stores both as rodata: the format string (`embedded-elf-riscv_32`, `vmvx-bytecode-fb`,
...) and the image (an ELF, a wasm module, a vmvx archive) are `vm.const.ref.rodata` segments, and
the module's initializer passes them to the import. Which segments reach the call is found as the
VM would move them: a forward dataflow over each function's blocks of the ref registers that hold
rodata (through `vm.assign.ref`, `vm.select.ref` and the branches' register remaps), so a module
with several variants of an executable (one create per format, a `vm.br_table` choosing) lists each
variant with its own format and image. The global each create's result is stored in groups the
variants of one executable. IREE's files: compiler/src/iree/compiler/Dialect/HAL/Conversion/HALToVM/
ConvertExecutableOps.cpp (what the calls look like); the runtime takes them in modules/hal/module.c
and modules/hal/loader/module.c.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..vm.bytecode import decoder, isa
from ..vm.bytecode import module_file as mf

# The imports that make an executable: the format, the image and the constants are their last
# three operands (hal.executable.create: device, queue affinity, format, data, constants;
# hal_loader.executable.load: format, data, constants).
CREATE_IMPORTS = ("hal.executable.create", "hal_loader.executable.load")
_MAX_PASSES = 10_000  # a bound on the fixpoint's block visits per block (monotone sets end far sooner)

_Value = tuple  # ("rodata", ordinal) or ("exe", pc of the create call)
_State = dict  # ref register ordinal -> frozenset of _Value


@dataclass(frozen=True)
class ModuleExecutable:
    """One call that makes an executable: where it is, the rodata segments that may reach its
    format and image operands (one each in what iree-compile emits), and the global it is stored
    in (None when not stored in one)."""

    function: str
    pc: int
    import_name: str
    format_rodata: tuple[int, ...]
    image_rodata: tuple[int, ...]
    global_ordinal: int | None

    def formats(self, module: mf.ModuleFile) -> tuple[str, ...]:
        """The format strings (text of the format segments; a segment that is no UTF-8 as escapes)."""
        return tuple(mf.rodata_bytes(module.rodata_segments[k]).decode("utf-8", "backslashreplace")
                     for k in self.format_rodata)

    def image(self, module: mf.ModuleFile) -> bytes | None:
        """The image's bytes (None unless exactly one segment reaches the image operand)."""
        if len(self.image_rodata) != 1:
            return None
        return mf.rodata_bytes(module.rodata_segments[self.image_rodata[0]])


def _ref_writes(inst: decoder.Instruction) -> Iterable[int]:
    for f in inst.op.fields:
        if f.access != isa.WRITE:
            continue
        v = inst.operands.get(f.name)
        for r in ((v,) if isinstance(v, decoder.Register) else v if isinstance(v, tuple) else ()):
            if isinstance(r, decoder.Register) and r.is_ref:
                yield r.ordinal


def _edges(inst: decoder.Instruction) -> list[tuple[int, tuple]]:
    """(destination block pc, remaps) of each edge a terminator takes."""
    o = inst.operands
    m = inst.mnemonic
    if m in ("br", "yield"):
        return [(o["dest"], o["operands"])]
    if m == "cond_br":
        return [(o["true_dest"], o["true_operands"]), (o["false_dest"], o["false_operands"])]
    if m == "br_table":
        return [(o["default_dest"], o["default_operands"])] + [(c.dest, c.operands) for c in o["cases"]]
    if "resume" in o:
        return [(o["resume"], ())]
    return []


def _remapped(state: _State, remaps: tuple) -> _State:
    out = dict(state)
    moved = [(p.dst.ordinal, state.get(p.src.ordinal, frozenset())) for p in remaps
             if p.src.is_ref and p.dst.is_ref]
    for dst, values in moved:  # a parallel move: every source is read before any is written
        out[dst] = values
    return out


def _join(a: _State | None, b: _State) -> _State:
    if a is None:
        return dict(b)
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, frozenset()) | v
    return out


def _function(module: mf.ModuleFile, name: str, insts: list[decoder.Instruction],
              imports: dict[int, str]) -> list[ModuleExecutable]:
    blocks: dict[int, list[decoder.Instruction]] = {}
    order: list[int] = []
    for inst in insts:
        if inst.is_block or not order:
            order.append(inst.pc)
            blocks[inst.pc] = []
        if not inst.is_block:
            blocks[order[-1]].append(inst)
    if not order:
        return []
    following = {a: b for a, b in zip(order, order[1:])}
    rodata_count = len(module.rodata_segments)
    entry: dict[int, _State] = {order[0]: {}}
    calls: dict[int, tuple[str, frozenset, frozenset]] = {}
    stores: dict[int, int] = {}  # create pc -> global ordinal
    work, visits = [order[0]], 0
    while work:
        visits += 1
        if visits > _MAX_PASSES * len(order):
            break
        pc = work.pop()
        state = dict(entry[pc])
        out_edges: list[tuple[int, tuple]] = []
        for inst in blocks[pc]:
            m, o = inst.mnemonic, inst.operands
            callee = o.get("callee")
            target = imports.get(callee & ~isa.FUNCTION_ORDINAL_IMPORT_BIT) \
                if isinstance(callee, int) and callee & isa.FUNCTION_ORDINAL_IMPORT_BIT else None
            values: frozenset | None = None
            if m == "const.ref.rodata":  # an ordinal past the segments: the verifier refuses it
                values = frozenset({("rodata", o["rodata"])}) if 0 <= o["rodata"] < rodata_count else frozenset()
            elif m == "assign.ref":
                values = state.get(o["source"].ordinal, frozenset())
            elif m == "select.ref":
                values = state.get(o["true_value"].ordinal, frozenset()) | \
                    state.get(o["false_value"].ordinal, frozenset())
            elif m == "global.store.ref":
                for v in state.get(o["value"].ordinal, frozenset()):
                    if v[0] == "exe":
                        stores[v[1]] = o["global"]
            elif target in CREATE_IMPORTS and len(o.get("operands", ())) >= 3:
                ops = o["operands"]
                calls[inst.pc] = (target, state.get(ops[-3].ordinal, frozenset()),
                                  state.get(ops[-2].ordinal, frozenset()))
                values = frozenset({("exe", inst.pc)})
            for reg in _ref_writes(inst):
                state[reg] = values if values is not None else frozenset()
            out_edges += _edges(inst)
        last = blocks[pc][-1] if blocks[pc] else None
        if pc in following and (last is None or not _edges(last) and last.mnemonic not in ("return", "fail")):
            out_edges.append((following[pc], ()))  # no terminator: the next block follows
        for dest, remaps in out_edges:
            if dest not in blocks:
                continue  # the verifier refuses such a branch before anything runs
            new = _join(entry.get(dest), _remapped(state, remaps))
            if new != entry.get(dest):
                entry[dest] = new
                work.append(dest)
    out = []
    for pc, (target, fmt, image) in sorted(calls.items()):
        out.append(ModuleExecutable(
            name, pc, target,
            tuple(sorted(v[1] for v in fmt if v[0] == "rodata")),
            tuple(sorted(v[1] for v in image if v[0] == "rodata")), stores.get(pc)))
    return out


def executables(module: mf.ModuleFile) -> list[ModuleExecutable]:
    """Every call of the module that makes an executable, in function and bytecode order (empty
    when the module makes none, or its bytecode does not decode: the loader refuses it then)."""
    imports = {k: f.full_name for k, f in enumerate(module.imported_functions)}
    if not any(n in CREATE_IMPORTS for n in imports.values()):
        return []
    try:
        decoded = decoder.decode_module(module)
    except decoder.DecodeError:
        return []
    names = decoder.function_names(module)
    out: list[ModuleExecutable] = []
    for ordinal in sorted(decoded):
        out += _function(module, names.get(ordinal, str(ordinal)), decoded[ordinal], imports)
    return out


__all__ = ["ModuleExecutable", "executables", "CREATE_IMPORTS"]
