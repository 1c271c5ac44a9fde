"""The text iree-dump-module prints for a module: typed signatures and `--output=disassembly`.

IREE keeps its disassembler with its tools (runtime/src/iree/vm/bytecode/disassembler.c, driven by
tools/iree-dump-module-main.c), so it is tooling here too. Instructions come from the VM's decoder
(`vm.bytecode.decoder`, over the opcode tables of `vm.bytecode.isa`); this file knows only how IREE writes them:

- most ops read `RESULTS = vm.MNEMONIC OPERANDS`, registers in encoding order (`_generic`);
- the ops IREE writes otherwise (globals, constants, stores, selects, switches, lists of refs,
  casts, control flow, calls) each have a writer in `_WRITERS`;
- i64/f64 registers print as `%iN:N+1`; a ref register prints `%R` (a move) only where IREE's
  disassembler decodes that operand with its move bit (the fields `vm.bytecode.isa` marks `move`, and every
  entry of a register list), else `%r`;
- blocks are numbered `^bbN` in bytecode order; `bytecode_offsets` prefixes `[%08X]` as
  `--bytecode_offsets` does.

`disassembly(module)` is the whole `iree-dump-module --output=disassembly` text (module
directives, then every internal function); `signature_text` / `fragment_types` are the typed
signatures of its metadata listing ("(i32, i64) -> (!vm.ref<?>)").

The tool creates the module before it disassembles anything, and creating it runs IREE's bytecode
verifier over every function (runtime/src/iree/vm/bytecode/verifier.c): a module whose bytecode
it rejects has no text, only that status. So here: `verify_for_disassembly` (called by
`disassembly` for every function, by `function_lines` for its own) decodes and verifies as the
loader does, with IREE's checks only (`vm.bytecode.verifier`'s extra safety checks guard execution;
a listing runs nothing), and raises the `DecodeError` (`BytecodeVerifyError`, ...) naming the
function and pc. Only verified bytecode reaches the writers: every branch target is then a block
marker and every cconv character known. An op starting at a function's last byte, which IREE's
verifier never looks at and its disassembler decodes from the bytes past the function, is refused. What the decoder refuses and IREE's verifier lets through
(a register of the wrong bank in a typed operand, which IREE decodes without looking) is refused
here too: a listing of it would show registers the interpreter never reads.
"""
from __future__ import annotations

import math
import struct
from typing import Callable, Iterable, cast

from ..vm.bytecode import isa
from ..vm.bytecode.decoder import (BranchCase, DecodeError, Instruction,
                                         MalformedBytecodeError, Register, Remap, decode_function,
                                         function_bytecode)
from ..vm.bytecode.module_file import VALUE_TYPE_NAMES, ModuleFile, rodata_bytes
from ..vm.bytecode.ops_ref import ref_type_key
from ..vm.bytecode.registers import Function as _VerifiedFunction
from ..vm.bytecode.registers import cconv_fragments as _value_fragments
from ..vm.bytecode.state import ExecutionState
from ..vm.bytecode.verifier import frame_i32_registers, verify_function

_TYPE_NAMES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64", "r": "!vm.ref<?>"}


# --------------------------------------------------------------------------------------------------
# Typed signatures


def cconv_fragments(cconv: str) -> tuple[str, str]:
    """(arguments, results) text of a calling convention `0ARGS_RESULTS` (either may be empty)."""
    body = cconv[1:] if cconv.startswith("0") else cconv
    args, _, results = body.partition("_")
    return args, results


def fragment_types(fragment: str) -> str:
    """One cconv fragment as iree-dump-module lists it: `i32, !vm.ref<?>, tuple<i64>...`; `v`
    (void) prints nothing but keeps its separator, as the tool's loop does."""
    out: list[str] = []
    i = 0
    while i < len(fragment):
        c = fragment[i]
        if c == "C":
            end = fragment.find("D", i + 1)
            if end < 0:
                raise ValueError(f"unterminated cconv span in {fragment!r}")
            out.append(f"tuple<{fragment_types(fragment[i + 1:end])}>...")
            i = end + 1
            continue
        if c != "v" and c not in _TYPE_NAMES:
            raise ValueError(f"unsupported cconv type {c!r} in {fragment!r}")
        out.append(_TYPE_NAMES.get(c, ""))
        i += 1
    return ", ".join(out)


def signature_text(cconv: str) -> str:
    """`(ARGS) -> (RESULTS)` of a cconv, as iree-dump-module prints imports and exports."""
    args, results = cconv_fragments(cconv)
    return f"({fragment_types(args)}) -> ({fragment_types(results)})"


def _function_header_signature(cconv: str | None) -> str:
    """`(%i0: i32, %i1:2: i64, %r0: !vm.ref<?>) -> (i32)`: a `vm.func` line's signature, argument
    registers numbered per bank as the calling convention assigns them."""
    args, results = cconv_fragments(cconv) if cconv else ("", "")
    named, i32, ref = [], 0, 0
    for c in args:
        if c == "v":
            continue
        if c in "if":
            named.append(f"%i{i32}: {_TYPE_NAMES[c]}")
            i32 += 1
        elif c in "IF":
            named.append(f"%i{i32}:{i32 + 1}: {_TYPE_NAMES[c]}")
            i32 += 2
        elif c == "r":
            named.append(f"%r{ref}: {_TYPE_NAMES[c]}")
            ref += 1
        else:
            raise ValueError(f"unsupported cconv argument type {c!r} in {cconv!r}")
    res = ", ".join(_TYPE_NAMES[c] for c in results if c != "v")
    return f"({', '.join(named)}) -> ({res})"


# --------------------------------------------------------------------------------------------------
# Operands


def _reg(r: Register, move: bool = True) -> str:
    """A register as IREE names it; `move`: whether this operand shows its move bit (`%R`)."""
    if r.is_ref:
        return f"%{'R' if move and r.move else 'r'}{r.ordinal}"
    ordinal = r.ordinal & isa.I32_REGISTER_MASK  # IREE prints the masked ordinal, as it reads it
    if r.bank in (isa.I64, isa.F64):
        return f"%i{ordinal}:{ordinal + 1}"
    return f"%i{ordinal}"


def _regs(regs: Iterable[Register]) -> str:
    return ", ".join(_reg(r) for r in regs)


def _remaps(pairs: Iterable[Remap]) -> str:
    return ", ".join(f"{_reg(p.src)}->{_reg(p.dst)}" for p in pairs)


def _f32(value: float) -> str:
    return _c_float(value, "%.9g")


def _c_float(value: float, fmt: str) -> str:
    """printf's %g text: glibc writes inf/nan in lower case with their sign (`-nan` too)."""
    if math.isnan(value) or math.isinf(value):
        sign = "-" if math.copysign(1.0, value) < 0 else ""
        return f"{sign}{'nan' if math.isnan(value) else 'inf'}"
    return fmt % value


class RegisterValues:
    """The registers (and globals) of a running frame, printed as IREE's execution trace prints them
    (disassembler.c, IREE_VM_BYTECODE_DISASSEMBLY_FORMAT_INLINE_VALUES): after a typed operand its
    value by the operand's type (i32 signed, i64, f32 `%.9g`, f64 `%.17g`), after an entry of a
    register list its low 32 bits unsigned (the list printer knows no widths), a ref as
    `!type/pointer` or `null`. `ref_text(value)` gives the `!type/0x...` text of a non-null ref;
    `rwdata` and `global_refs` are the module state's globals (a global load prints the loaded
    value after its slot)."""

    def __init__(self, regs: "bytes | bytearray", refs: list, ref_text: Callable[[object], str],
                 rwdata: "bytes | bytearray" = b"", global_refs: "list | None" = None) -> None:
        self.regs = regs
        self.refs = refs
        self.ref_text = ref_text
        self.rwdata = rwdata
        self.global_refs = global_refs if global_refs is not None else []

    def _ref(self, value: object) -> str:
        return "(null)" if value is None else f"({self.ref_text(value)})"

    def _word(self, code: str, offset: int) -> "int | float | None":
        size = struct.calcsize("<" + code)
        if offset < 0 or offset + size > len(self.regs):
            return None
        return struct.unpack_from("<" + code, self.regs, offset)[0]

    def typed(self, r: Register) -> str:
        if r.is_ref:
            return self._ref(self.refs[r.ordinal] if r.ordinal < len(self.refs) else None)
        at = 4 * (r.ordinal & isa.I32_REGISTER_MASK)
        return self._scalar(r.bank, lambda code: self._word(code, at))

    def listed(self, r: Register) -> str:
        if r.is_ref:
            return self._ref(self.refs[r.ordinal] if r.ordinal < len(self.refs) else None)
        value = self._word("I", 4 * (r.ordinal & isa.I32_REGISTER_MASK))
        return f"({value if value is not None else '?'})"

    def global_value(self, mnemonic: str, where: "int | Register") -> str:
        """The value a global load reads (after `.rwdata[N]` / `.refs[N]`)."""
        if isinstance(where, Register):  # an indirect load: the slot is the register's value
            index = int(self._word("i", 4 * (where.ordinal & isa.I32_REGISTER_MASK)) or 0)  # an i32
        else:
            index = where
        kind = mnemonic.rsplit(".", 1)[-1]
        if kind == "ref":
            refs = self.global_refs
            return self._ref(refs[index] if 0 <= index < len(refs) else None)

        def word(code: str) -> "int | float | None":
            size = struct.calcsize("<" + code)
            if index < 0 or index + size > len(self.rwdata):
                return None
            return struct.unpack_from("<" + code, self.rwdata, index)[0]
        return self._scalar(kind, word)

    @staticmethod
    def _scalar(bank: str, word: Callable[[str], "int | float | None"]) -> str:
        if bank == isa.I64:
            value = word("q")
            return f"({value})" if value is not None else "(?)"
        if bank == isa.F32:
            value = word("f")
            return f"({_f32(value)})" if value is not None else "(?)"
        if bank == isa.F64:
            value = word("d")
            return f"({_c_float(value, '%.17g')})" if value is not None else "(?)"
        value = word("i")
        return f"({value})" if value is not None else "(?)"


class _Function:
    """What the writers need besides the instruction: the module, and the function's blocks."""

    def __init__(self, module: ModuleFile, blocks: dict[int, int] | None,
                 name: str | None = None, values: "RegisterValues | None" = None) -> None:
        self.module = module
        self.blocks = blocks  # block marker pc -> ordinal (None: while scanning, as IREE's pass 1)
        self.name = name
        self.pc = 0  # of the instruction being written (for errors)
        self.values = values  # inline values (execution tracing), or None

    def read(self, r: Register, move: bool = True) -> str:
        """An operand register, with its value in parentheses when tracing (results never have one)."""
        text = _reg(r, move)
        return text + self.values.typed(r) if self.values is not None else text

    def listed(self, regs: Iterable[Register]) -> str:
        """A register list; tracing, each entry's value as IREE's list printer writes it."""
        if self.values is None:
            return _regs(regs)
        return ", ".join(_reg(r) + self.values.listed(r) for r in regs)

    def remaps(self, pairs: Iterable[Remap]) -> str:
        if self.values is None:
            return _remaps(pairs)
        return ", ".join(f"{_reg(p.src)}{self.values.listed(p.src)}->{_reg(p.dst)}" for p in pairs)

    def loaded(self, inst: Instruction, where: "int | Register") -> str:
        """Tracing a global load: the global's value, which IREE prints after the slot."""
        if self.values is None:
            return ""
        return self.values.global_value(inst.mnemonic, where)

    def block(self, pc: int) -> str:
        if self.blocks is None:
            return f"^{pc:08X}"
        if pc not in self.blocks:
            # verified bytecode never gets here (every target is a block marker); a caller's own
            # instructions and block map may
            raise MalformedBytecodeError(f"branch target pc {pc:08X} is not a block marker",
                                         self.pc, self.name)
        return f"^bb{self.blocks[pc]}"

    def type_name(self, type_id: int) -> str:
        # IREE's verifier never checks type ids. Its disassembler prints a table entry's full name;
        # an id past the table is mapped to entry 0 (iree_vm_map_type), whose resolved type def it
        # prints: a value type by name, a ref type as `!` and its registered name (`!vm.list<i8>`
        # resolves to `vm.list`), `!vm.opaque` (no type) as `*`.
        types = self.module.types
        if 0 <= type_id < len(types):
            return types[type_id]
        if not types:
            # type_table[0] of an empty table is past the module's allocation in IREE
            raise MalformedBytecodeError(
                f"type id {type_id} with an empty types table: IREE's disassembler reads type "
                f"entry 0 past the end of the module's type table there", self.pc, self.name)
        first = types[0]
        if first in VALUE_TYPE_NAMES:
            return first
        ref = ref_type_key(first)
        return "*" if ref is None else f"!{ref}"

    def callee(self, ordinal: int) -> str:
        m = self.module
        if ordinal & isa.FUNCTION_ORDINAL_IMPORT_BIT:
            i = ordinal & ~isa.FUNCTION_ORDINAL_IMPORT_BIT
            name = m.imported_functions[i].full_name if i < len(m.imported_functions) else ""
            return name or f"import:{i}"
        internal = m.internal_names[ordinal] if ordinal < len(m.internal_names) else None
        return f"{m.name}.{internal}" if internal else f"{m.name}:{ordinal}"


# --------------------------------------------------------------------------------------------------
# Instructions


def _generic(inst: Instruction, fn: _Function) -> str:
    """`RESULTS = vm.MNEMONIC OPERANDS` over the encoding's register fields, in order."""
    results, operands = [], []
    for f in inst.op.fields:
        if f.kind not in isa.REGISTER_KINDS:
            continue
        if f.access == isa.WRITE:
            results.append(_reg(inst.operands[f.name], f.move))
        else:
            operands.append(fn.read(inst.operands[f.name], f.move))
    head = f"{', '.join(results)} = " if results else ""
    tail = f" {', '.join(operands)}" if operands else ""
    return f"{head}vm.{inst.mnemonic}{tail}"


def _value_type(inst: Instruction) -> str:
    return inst.mnemonic.rsplit(".", 1)[-1]


def _global(inst: Instruction, fn: _Function) -> str:
    o, name = inst.operands, inst.mnemonic
    index = o["byte_offset"] if "byte_offset" in o else o["global"]
    where = fn.read(index, False) if "indirect" in name else str(index)
    loaded = fn.loaded(inst, index) if ".load" in name else ""
    if name.endswith(".ref"):
        slot = f".refs[{where}]{loaded} : {fn.type_name(o['type'])}"
        if ".load" in name:
            return f"{_reg(o['result'])} = vm.{name} {slot}"
        return f"vm.{name} {fn.read(o['value'])}, {slot}"
    if ".load" in name:
        return f"{_reg(o['result'])} = vm.{name} .rwdata[{where}]{loaded}"
    return f"vm.{name} {fn.read(o['value'])}, .rwdata[{where}]"


def _const(inst: Instruction, fn: _Function) -> str:
    v, res = inst.operands["value"], _reg(inst.operands["result"])
    t = _value_type(inst)
    if t == "i32":
        return f"{res} = vm.const.i32 {v}  // 0x{v & 0xFFFFFFFF:08X}"
    if t == "i64":
        return f"{res} = vm.const.i64 {v}  // 0x{v & 0xFFFFFFFFFFFFFFFF:016X}"
    if t == "f32":
        return f"{res} = vm.const.f32 {_f32(v)}"
    return f"{res} = vm.const.f64 {_c_float(v, '%.17g')}"


def _const_ref_zero(inst: Instruction, fn: _Function) -> str:
    return f"{_reg(inst.operands['result'], False)} = vm.const.ref.zero"


def _const_ref_rodata(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    segments = fn.module.rodata_segments
    length = segments[o["rodata"]].length if o["rodata"] < len(segments) else 0
    return f"{_reg(o['result'])} = vm.const.ref.rodata {o['rodata']}  // {length}b"


def _buffer_store(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return (f"vm.{inst.mnemonic} {fn.read(o['value'])}, {fn.read(o['buffer'], False)}, "
            f"{fn.read(o['offset'])}")


def _select(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    text = (f"{_reg(o['result'])} = vm.{inst.mnemonic} {fn.read(o['condition'])} ? "
            f"{fn.read(o['true_value'])} : {fn.read(o['false_value'])}")
    return text + (f" -> {fn.type_name(o['type'])}" if "type" in o else "")


def _switch(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return (f"{_reg(o['result'])} = vm.{inst.mnemonic} {fn.read(o['index'])}[{fn.listed(o['values'])}] "
            f"else {fn.read(o['default_value'])}")


def _list_alloc(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return (f"{_reg(o['result'])} = vm.list.alloc {fn.read(o['initial_capacity'])} : "
            f"!vm.list<{fn.type_name(o['type'])}>")


def _list_get_ref(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return (f"{_reg(o['result'])} = vm.list.get.ref {fn.read(o['list'], False)}, "
            f"{fn.read(o['index'])} : {fn.type_name(o['type'])}")


def _cast_any_ref(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return (f"{_reg(o['result'])} = vm.cast.any.ref {fn.read(o['operand'])} : !vm.ref<?> -> "
            f"{fn.type_name(o['type'])}")


def _discard_refs(inst: Instruction, fn: _Function) -> str:
    return f"vm.discard.refs {fn.listed(inst.operands['refs'])}"


def _branch(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    cond = f"{fn.read(o['condition'])}, " if "condition" in o else ""
    return f"vm.{inst.mnemonic} {cond}{fn.block(o['dest'])}({fn.remaps(o['operands'])})"


def _cond_branch(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return (f"vm.cond_br {fn.read(o['condition'])}, {fn.block(o['true_dest'])}("
            f"{fn.remaps(o['true_operands'])}), {fn.block(o['false_dest'])}("
            f"{fn.remaps(o['false_operands'])})")


def _branch_table(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    text = (f"vm.br_table {fn.read(o['index'])} {{ default: {fn.block(o['default_dest'])}("
            f"{fn.remaps(o['default_operands'])}")
    case: BranchCase
    for i, case in enumerate(o["cases"]):
        text += f"), {i}: {fn.block(case.dest)}({fn.remaps(case.operands)}"
    return text + ") }"


def _call(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    callee = f"@{fn.callee(o['callee'])}"
    if "segment_sizes" in o:
        callee += f" segments[{', '.join(str(n) for n in o['segment_sizes'])}]"
    call = f"vm.{inst.mnemonic} {callee}({fn.listed(o['operands'])})"
    if "resume" in o:  # yieldable: results after the resume block
        return f"{call} -> {fn.block(o['resume'])}({_regs(o['results'])})"
    return (f"{_regs(o['results'])} = " if o["results"] else "") + call


def _return(inst: Instruction, fn: _Function) -> str:
    regs = inst.operands["operands"]
    return "vm.return" + (f" {fn.listed(regs)}" if regs else "")


def _c_text(text: str) -> str:
    """A string operand as IREE prints it (`%.*s`): up to its first NUL byte. Bytes that are not
    UTF-8 stay as the decoder's `\\xNN` escapes (IREE writes them raw; a str cannot)."""
    return text.partition("\0")[0]


def _fail(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return f'vm.fail {fn.read(o["status"])}, "{_c_text(o["message"])}"'


def _import_resolved(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    head = f"{_reg(o['result'])} = vm.import.resolved @"
    ordinal = o["import"]
    if not ordinal & isa.FUNCTION_ORDINAL_IMPORT_BIT:
        return head + f"{{{{INVALID ORDINAL {struct.unpack('<i', struct.pack('<I', ordinal))[0]}}}}}"
    return head + fn.callee(ordinal)


def _trace(inst: Instruction, fn: _Function) -> str:
    o = inst.operands
    return f'vm.{inst.mnemonic} "{_c_text(o["event_name"])}"({fn.listed(o["operands"])})'


def _block(inst: Instruction, fn: _Function) -> str:
    return f"{fn.block(inst.pc)}:" if fn.blocks is not None else "<block>"


_Writer = Callable[[Instruction, _Function], str]

# Encodings (vm.bytecode.isa) IREE writes in their own shape; everything else is `_generic`.
_BY_ENCODING: dict[str, _Writer] = {
    "marker": _block, "const_ref_zero": _const_ref_zero, "const_ref_rodata": _const_ref_rodata,
    "list_alloc": _list_alloc, "list_get_ref": _list_get_ref, "select_ref": _select,
    "switch_ref": _switch, "cast_any_ref": _cast_any_ref, "discard_refs": _discard_refs,
    "branch": _branch, "conditional_break": _branch, "conditional_branch": _cond_branch,
    "branch_table": _branch_table, "call": _call, "call_variadic": _call,
    "yieldable_call": _call, "call_variadic_yieldable": _call, "return": _return, "fail": _fail,
    "import_resolved": _import_resolved, "trace": _trace,
    "global_load_ref": _global, "global_store_ref": _global, "global_load_indirect_ref": _global,
    "global_store_indirect_ref": _global,
}
for _t in (isa.I32, isa.I64, isa.F32, isa.F64):
    for _cls, _writer in (("global_load", _global), ("global_store", _global),
                          ("global_load_indirect", _global), ("global_store_indirect", _global),
                          ("constant", _const), ("buffer_store", _buffer_store),
                          ("select", _select), ("switch", _switch)):
        _BY_ENCODING[f"{_t}_{_cls}"] = _writer


def instruction_text(inst: Instruction, module: ModuleFile,
                     blocks: dict[int, int] | None = None, values: RegisterValues | None = None) -> str:
    """One instruction as iree-dump-module writes it (without indentation); `blocks` maps block
    marker pcs to their ordinals (without it, blocks show as `^%08X` pcs; with it, a branch to a pc
    it lacks is a `MalformedBytecodeError`). With `values` (a running frame's registers), each
    operand carries its value as IREE's execution trace prints it (`RegisterValues`)."""
    fn = _Function(module, blocks, values=values)
    fn.pc = inst.pc
    return _BY_ENCODING.get(inst.op.encoding, _generic)(inst, fn)


# --------------------------------------------------------------------------------------------------
# Functions and modules


def function_name(module: ModuleFile, ordinal: int) -> str:
    """The name iree-dump-module gives internal function `ordinal`: its first export's, else its
    debug-database name, else `fnN`."""
    for e in module.exported_functions:
        if e.internal_ordinal == ordinal:
            return e.name
    return module.internal_names[ordinal] or f"fn{ordinal}"


class _LoadingState:
    """What IREE's verifier reads of a module instance: the module and the sizes of its global
    tables (ranges: their lengths without allocating them, as a damaged module may claim 2 GiB)."""

    def __init__(self, module: ModuleFile) -> None:
        self.module = module
        self.rwdata = range(max(module.global_bytes_capacity, 0))
        self.global_refs = range(max(module.global_ref_count, 0))


def verify_for_disassembly(module: ModuleFile, ordinal: int) -> list[Instruction]:
    """The instructions of internal function `ordinal` once IREE's loader accepts it (decoded,
    then verified with IREE's checks); else the `DecodeError` it raises, naming function and pc."""
    name = function_name(module, ordinal)
    d = module.function_descriptors[ordinal]
    code = function_bytecode(module, ordinal)
    last: DecodeError | None = None
    try:
        insts = decode_function(code, name)
    except DecodeError as e:
        if e.pc != len(code) - 1:
            raise
        # IREE's verifier walks pc < length - 1: an op starting at the last byte is never
        # verified (the walk then needs a terminator before it), so the module loads
        last, insts = e, decode_function(code[:-1], name)
    args, results = _value_fragments(module.function_signatures[ordinal].cconv)
    fn = _VerifiedFunction(ordinal, name, frame_i32_registers(d.i32_register_count),
                           d.ref_register_count, d.requirements, args, results, insts)
    try:
        verify_function(cast(ExecutionState, _LoadingState(module)), fn, beyond_iree=False)
    except DecodeError as e:
        raise e.in_function(name) from None
    if last is not None:
        # ... but IREE's disassembler then decodes that op from the bytes after the function
        # (another function's, or past the bytecode): garbage or "unhandled opcode". Refused.
        raise last
    return insts


def _lines(module: ModuleFile, ordinal: int, insts: list[Instruction],
           bytecode_offsets: bool) -> list[str]:
    blocks = {i.pc: n for n, i in enumerate(x for x in insts if x.is_block)}
    fn = _Function(module, blocks, function_name(module, ordinal))
    lines = []
    for inst in insts:
        indent = "" if inst.is_block else "  "
        prefix = f"[{inst.pc:08X}]" if bytecode_offsets else ""
        writer = _BY_ENCODING.get(inst.op.encoding, _generic)
        fn.pc = inst.pc
        lines.append(prefix + indent + writer(inst, fn))
    return lines


def function_lines(module: ModuleFile, ordinal: int, bytecode_offsets: bool = False) -> list[str]:
    """The body lines of one internal function (blocks unindented, ops indented by two); a
    `DecodeError` naming the function and pc where IREE's loader would reject it."""
    return _lines(module, ordinal, verify_for_disassembly(module, ordinal), bytecode_offsets)


def _directives(module: ModuleFile) -> list[str]:
    lines = [f"vm.type {t}" for t in module.types]
    lines += [f'vm.import {"optional " if f.optional else ""}@{f.full_name} cconv '
              f'"{f.cconv or ""}"' for f in module.imported_functions]
    lines += [f"vm.rodata[{s.ordinal}] = {_rodata_hex(module, s.ordinal)}"
              for s in module.rodata_segments]
    return lines


def _rodata_hex(module: ModuleFile, ordinal: int) -> str:
    return rodata_bytes(module.rodata_segments[ordinal]).hex().upper()


def disassembly(module: ModuleFile, function: str | None = None,
                bytecode_offsets: bool = False) -> str:
    """`iree-dump-module --output=disassembly` (with `--function=` / `--bytecode_offsets`): the
    module's directives, then every internal function (or the one `function` names, by name or
    internal ordinal)."""
    # the tool creates (so verifies) the whole module first: one rejected function, no text at all
    verified = [verify_for_disassembly(module, i) for i in range(len(module.function_descriptors))]
    out = [f"vm.module @{module.name} version {module.version}\n"]
    directives = _directives(module)
    if directives:
        out.append("".join(line + "\n" for line in directives) + "\n")
    for i in range(len(module.function_descriptors)):
        name = function_name(module, i)
        if function is not None and function != (str(i) if function.isdigit() else name):
            continue
        text = "".join(out)
        if not text.endswith("\n\n"):  # one blank line before each top-level item
            out.append("\n")
        for e in module.exported_functions:
            if e.internal_ordinal == i:
                out.append(f"vm.export @{e.name}\n" if e.name == name
                           else f"vm.export @{e.name} = @{name}\n")
        sig = module.function_signatures[i].cconv
        out.append(f"vm.func @{name}{_function_header_signature(sig)} {{\n")
        out.append("".join(line + "\n" for line in _lines(module, i, verified[i], bytecode_offsets)))
        out.append("}\n")
    return "".join(out)


__all__ = ["cconv_fragments", "fragment_types", "signature_text", "instruction_text", "RegisterValues",
           "function_name", "function_lines", "verify_for_disassembly", "disassembly"]
