"""The interpreter's generated call sites (dispatch.py's reference loops, as one function each):
an export's entry (`entry_function`: `Dispatch.begin_call`'s argument loop; `direct_entry_maker`:
the same for repeated calls that differ in a few scalars, `Dispatch.direct_call`), a return to the caller of
`invoke` (`leave_function`: `Dispatch._leave_external`), and an import call site over a planned
native call (`native_call_site`: `Context.import_call`'s gathering, call and result stores). Each
is generated once per export, return site or call site, through `ireeabi.abi.generated`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...abi.generated import define
from .decoder import Register
from ..errors import VmError, VmStatusError, annotate
from ..ops import M32, M64, F32, F64, I32, I64, U32, U64
from .registers import Frame, Function, release_frame, store_value, value_chars
from ..call import as_ref
from ..ref import NULL_REF, Ref
from ...base.status import StatusError

# A scalar register's struct per cconv character; the values an i32/i64 argument takes (signed or
# unsigned) on the fast store.
SCALARS = {"i": I32, "I": I64, "f": F32, "F": F64}
I32_MIN, U32_END, I64_MIN, U64_END = -(1 << 31), 1 << 32, -(1 << 63), 1 << 64


def _scalar_store(char: str, at: int, value: str, what: str, pad: str) -> list[str]:
    """The lines that store scalar argument `value` (cconv character `char`) at register byte `at`:
    an i32/i64 in range packed at once, anything else through store_value's checks and message."""
    if char in "Ii":
        lo, hi, pack, mask = ((I64_MIN, U64_END, "P64", M64) if char == "I"
                              else (I32_MIN, U32_END, "P32", M32))
        return [f"{pad}if type({value}) is int and {lo} <= {value} < {hi}: "
                f"{pack}(regs, {at}, {value} & {mask})",
                f"{pad}else: store_value(regs, {at}, {char!r}, {value}, {what!r})"]
    return [f"{pad}store_value(regs, {at}, {char!r}, {value}, {what!r})"]


def entry_function(fn: Function, places: tuple, function_name: str) -> Callable:
    """`Dispatch.begin_call`'s argument loop for one export, generated: `enter(ctx, args) -> frame`
    with each argument's register or ref slot, fast test and message as literals (the same checks,
    the same stores, the same release of the frame on an error)."""
    names: dict[str, Any] = {"Frame": Frame, "fn": fn, "store_value": store_value,
                             "release_frame": release_frame, "P64": U64.pack_into, "P32": U32.pack_into}
    lines = ["def enter(ctx, args):", "    frame = Frame(fn)", "    regs = frame.regs",
             "    refs = frame.refs", "    try:"]
    for index, (char, at) in enumerate(places):
        what = f"{function_name} argument {index}"
        lines.append(f"        v = args[{index}]")
        if char == "r":
            lines += ["        if v is not None:", "            ctx.retain(v)", f"        refs[{at}] = v"]
        else:
            lines += _scalar_store(char, at, "v", what, "        ")
    if not places:
        lines.append("        pass")
    lines += ["    except BaseException:", "        release_frame(ctx, frame)", "        raise", "    return frame"]
    return define("\n".join(lines), "entry", repr(function_name), names, "enter")


def direct_entry_maker(fn: Function, places: tuple, function_name: str, varying: tuple[int, ...],
                       fixed_refs: tuple[int, ...], prefix: int) -> Callable:
    """`entry_function` for calls of one export that differ only in the scalar arguments at the
    indexes `varying` (`Dispatch.direct_call`): `make(template, refs) -> enter(ctx, *values) ->
    frame`. The fixed scalars were checked and stored once into `template`, the first `prefix`
    bytes of every frame's registers; the fixed refs (argument indexes `fixed_refs`, values `refs`)
    are retained into each frame as begin_call retains them; the varying values get entry_function's
    test and message. Generated once per export and set of varying indexes; `make` binds one
    dispatch's values without generating anything."""
    names: dict[str, Any] = {"Frame": Frame, "fn": fn, "store_value": store_value,
                             "release_frame": release_frame, "P64": U64.pack_into, "P32": U32.pack_into}
    params = ", ".join(f"v{i}" for i in varying)
    lines = ["def make(T, R):", *(f"    R{i} = R[{k}]" for k, i in enumerate(fixed_refs)),
             f"    def enter(ctx{', ' if params else ''}{params}):", "        frame = Frame(fn)",
             "        regs = frame.regs", "        refs = frame.refs"]
    if prefix:
        lines.append(f"        regs[0:{prefix}] = T")
    lines.append("        try:")
    for index, (char, at) in enumerate(places):  # in argument order, as begin_call places them
        if index in fixed_refs:
            lines += [f"            if R{index} is not None:", f"                ctx.retain(R{index})",
                      f"            refs[{at}] = R{index}"]
        elif index in varying:
            what = f"{function_name} argument {index}"
            lines += _scalar_store(char, at, f"v{index}", what, "            ")
    lines += ["            pass", "        except BaseException:", "            release_frame(ctx, frame)",
              "            raise", "        return frame", "    return enter"]
    return define("\n".join(lines), "direct entry", repr(function_name), names, "make")


def leave_function(fn: Function, operands: Sequence[Register], counted: bool) -> Callable:
    """`Dispatch._leave_external` for one return site, generated: `leave(ctx, frame) -> results`
    with each result's register, move and reader as literals (the same retains, the same release
    of the results already taken on an error, the same frame release)."""
    names: dict[str, Any] = {"release_frame": release_frame, "num": (int, float)}
    lines = ["def leave(ctx, frame):", "    out = []", "    refs = frame.refs", "    regs = frame.regs", "    try:"]
    for char, reg in zip(fn.result_chars, operands):
        k = reg.ordinal
        if char == "r":
            lines.append(f"        v = refs[{k}]")
            lines.append(f"        refs[{k}] = None" if reg.move else "        if v is not None: ctx.retain(v)")
            lines.append("        out.append(v)")
        else:
            names[f"U{char}"] = SCALARS[char].unpack_from
            lines.append(f"        out.append(U{char}(regs, {4 * k})[0])")
    if len(lines) == 5:  # no results
        lines.append("        pass")
    lines += ["    except BaseException:", "        for v in out:",
              "            if v is not None and not isinstance(v, num):", "                ctx.release(v)",
              "        raise", "    finally:"]
    lines.append("        release_frame(ctx, frame)" if counted else "        pass")
    lines.append("    return out")
    return define("\n".join(lines), "return of", repr(fn.name), names, "leave")


def native_call_site(ctx: Any, full_name: str, cconv: str, plan: tuple, results_cc: str | None,
                     results: Sequence[Register]) -> Callable[[Any, Frame, Any], None] | None:
    """The call site as one generated function over a planned native call
    (`NativeModule.planned`): operand registers read straight into the argument values in
    packer order (scalars as the register bits, refs as they are, MOVE-marked ones handed to the
    argument buffer as the VM's retain_or_move does), results written straight back. None when
    the call site cannot take this path (a MOVE-marked register read twice)."""
    module, ordinal = ctx.imports.bound(full_name, cconv)
    flat = [e for entry in plan for e in (
        [x for element in entry[1] for x in element] if entry[0] == 2 else [entry])]
    moved_regs = [a for kind, a, b in flat if kind == 1 and b]
    ref_regs = [a for kind, a, _ in flat if kind == 1]
    if any(ref_regs.count(a) > 1 for a in moved_regs):
        return None
    counts = tuple(len(entry[1]) for entry in plan if entry[0] == 2)
    moved = tuple(i for i, (kind, _, b) in enumerate(flat) if kind == 1 and b)
    planned = module.planned(ordinal, counts, moved)
    ns: dict[str, Any] = {"_planned": planned, "_Ref": Ref, "_NULL": NULL_REF, "as_ref": as_ref,
                          "_VmError": VmError, "_StatusError": StatusError,
                          "_VmStatusError": VmStatusError, "_annotate": annotate, "_ctx": ctx,
                          "I32": I32.unpack_from, "I64": I64.unpack_from,
                          "_I32p": I32.pack_into, "_I64p": I64.pack_into,
                          "_MASK": ctx.machine.word_mask}
    wide = {I64, F64}
    lines = ["def call(_c, frame, _p):", "    regs, refs = frame.regs, frame.refs"]
    names = []
    for i, (kind, a, b) in enumerate(flat):
        if kind == 0:
            names.append(f"{'I64' if a in wide else 'I32'}(regs, {b})[0]")
            continue
        lines += [f"    v{i} = refs[{a}]", f"    if type(v{i}) is not _Ref:",
                  f"        v{i} = _NULL if v{i} is None else as_ref(v{i}, 'operand {i} of "
                  f"{full_name}', _MASK)"]
        names.append(f"v{i}")
    lines += [f"    refs[{a}] = None" for a in moved_regs]
    lines += ["    try:", f"        out = _planned([{', '.join(names)}])",
              "    except _VmError:", "        raise", "    except _StatusError as e:",
              f"        raise _VmStatusError(e.code, _annotate(e.message, 'while calling import "
              f"{full_name}')) from e"]
    for i, (char, reg) in enumerate(zip(value_chars(results_cc or ""), results)):
        if char == "r":
            lines += [f"    x = out[{i}]", "    if x[1] == 0:", "        x = None",
                      f"    old = refs[{reg.ordinal}]", f"    refs[{reg.ordinal}] = x",
                      "    if old is not None:", "        _ctx.release(old)"]
        else:
            lines.append(f"    {'_I64p' if char in 'IF' else '_I32p'}(regs, {4 * reg.ordinal}, "
                         f"out[{i}])")
    return define("\n".join(lines) + "\n", "import call", full_name, ns, "call")


__all__ = ["SCALARS", "I32_MIN", "U32_END", "I64_MIN", "U64_END", "entry_function", "direct_entry_maker",
           "leave_function",
           "native_call_site"]
