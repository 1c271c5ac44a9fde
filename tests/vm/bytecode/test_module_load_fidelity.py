"""Module loading and bytecode verification against IREE's loader (iree-run-module 3.13).

Real modules from iree-compile are mutated one field or one bytecode operand at a time and loaded by
both iree-run-module and ireeabi (`Context`, or `read_module` for modules that need the HAL). Each
case states what iree-run-module 3.13 did with it (run live here, and compared), and ours must make
the same decision with the same status code; where both reject for the same reason, a piece of
IREE's message must appear in ours too. The IREE functions behind each rule are named per case
(runtime/src/iree/vm/bytecode/: archive.c, verifier.c, module.c, utils/block_list.c; flatcc's
runtime/verifier.c; the schema schemas/bytecode_module_def.fbs).

Where iree-run-module 3.13 crashes or accepts a module that then reads or writes outside its frame,
ours rejects it with a clear error instead; those cases are marked `iree="crash"` or say why
`iree="ok"` differs from ours.

Import resolution (runtime/src/iree/vm/context.c, iree_vm_context_resolve_module_imports) is
compared on a module importing from provider modules registered before it: with iree-run-module
(several --module flags) for the status code, and with iree.runtime's VmContext (which resolves
without the tooling's own dependency pass) for the message.
"""
from __future__ import annotations

import os
import re
import resource
import signal
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from support import iree_tools as tools
from ireeabi.abi.errors import IreeAbiError
from ireeabi.modules.hal.runtime import run_module_type_names
from ireeabi.vm.bytecode import ContextImports, ImportResolutionError
from ireeabi.vm.bytecode import isa
from ireeabi.vm.bytecode.decoder import DecodeError, decode_module
from ireeabi.vm.bytecode import Context, FunctionImports
from ireeabi.vm.errors import VmTrapError
from ireeabi.vm.bytecode.module_errors import ModuleFileError
from ireeabi.abi.printable import printable
from ireeabi.vm.bytecode.module_file import read_module
from ireeabi.base.status import StatusCode

HERE = Path(__file__).parents[2]

# --------------------------------------------------------------------------------------------------
# Programs (VM dialect, compiled with --compile-from=vm)

MINI = """
vm.module @mini {
  vm.rodata private @blob dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>
  vm.func @f(%a : i32) -> i32 {
    %blob = vm.const.ref.rodata @blob : !vm.buffer
    %c0 = vm.const.i64 0
    %v = vm.buffer.load.i8.u %blob[%c0] : !vm.buffer -> i32
    %b = vm.add.i32 %a, %v : i32
    vm.return %b : i32
  }
  vm.export @f
}
"""

BRANCHY = """
vm.module @br {
  vm.func private @sq(%x : i32) -> i32 {
    %y = vm.mul.i32 %x, %x : i32
    vm.return %y : i32
  }
  vm.func @f(%a : i32) -> i32 {
    %c0 = vm.const.i32 0
    %nz = vm.cmp.nz.i32 %a : i32
    vm.cond_br %nz, ^bb1(%a : i32), ^bb2(%c0 : i32)
  ^bb1(%v : i32):
    %s = vm.call @sq(%v) : (i32) -> i32
    vm.br ^bb2(%s : i32)
  ^bb2(%r : i32):
    vm.return %r : i32
  }
  vm.export @f
}
"""

MISC = """
vm.module @misc {
  vm.import private optional @absent.fn(%a : i32) -> i32
  vm.global.i32 private mutable @counter : i32
  vm.func @f(%a : i32) -> i32 {
    %x = vm.ext.i32.i64.s %a : i32 -> i64
    %y = vm.add.i64 %x, %x : i64
    %z = vm.trunc.i64.i32 %y : i64 -> i32
    %r = vm.import.resolved @absent.fn : i32
    %c = vm.global.load.i32 @counter : i32
    %s = vm.add.i32 %z, %r : i32
    %t = vm.add.i32 %s, %c : i32
    %fl = vm.cast.si32.f32 %t : i32 -> f32
    %u = vm.cast.f32.si32 %fl : f32 -> i32
    vm.return %u : i32
  }
  vm.export @f
}
"""

# Every ref type iree-run-module registers (modules/hal/types.c, iree_hal_module_register_all_types,
# and the VM's builtin types): a global of each puts it in the types table.
REF_TYPES = ["!vm.ref<!hal.allocator>", "!vm.ref<!hal.buffer>", "!vm.ref<!hal.buffer_view>",
             "!vm.ref<!hal.channel>", "!vm.ref<!hal.command_buffer>", "!vm.ref<!hal.device>",
             "!vm.ref<!hal.event>", "!vm.ref<!hal.executable>", "!vm.ref<!hal.fence>",
             "!vm.ref<!hal.file>", "!vm.ref<!hal.semaphore>", "!vm.list<i32>", "!vm.buffer",
             "!vm.ref<?>"]
TYPES = "vm.module @types {\n" + "".join(
    f"  vm.global.ref private mutable @g{i} : {t}\n" for i, t in enumerate(REF_TYPES)) + \
    "  vm.func @f(%a : i32) -> i32 {\n" + "".join(
    f"    %v{i} = vm.global.load.ref @g{i} : {t}\n    vm.global.store.ref %v{i}, @g{i} : {t}\n"
    for i, t in enumerate(REF_TYPES)) + "    vm.return %a : i32\n  }\n  vm.export @f\n}\n"

# Imports from three modules, the middle one optional; dependencies (and imports) in the order
# zeta, opt, alpha.
IMP = """
vm.module @imp {
  vm.import private @zeta.g(%a : i32) -> i32
  vm.import private optional @opt.h(%a : i32) -> i32
  vm.import private @alpha.f(%a : i32) -> i32
  vm.func @f(%a : i32) -> i32 {
    %x = vm.call @zeta.g(%a) : (i32) -> i32
    %y = vm.call @alpha.f(%x) : (i32) -> i32
    vm.return %y : i32
  }
  vm.export @f
}
"""


def _provider(module: str, function: str, arg: str = "i32") -> str:
    """A module exporting `function` (arg) -> i32."""
    return (f"vm.module @{module} {{\n  vm.func @{function}(%a : {arg}) -> i32 {{\n"
            f"    %c = vm.const.i32 7\n    vm.return %c : i32\n  }}\n  vm.export @{function}\n}}\n")


PROVIDERS = {
    "zeta": _provider("zeta", "g"),
    "zeta_i64": _provider("zeta", "g", "i64"),  # cconv 0I_i where imp expects 0i_i
    "zeta_no_g": _provider("zeta", "other"),
    "alpha_no_f": _provider("alpha", "other"),
    "opt_f32": _provider("opt", "h", "f32"),  # cconv 0f_i where imp expects 0i_i
}

NO_ZIP = ("--iree-vm-emit-polyglot-zip=false",)


@dataclass(frozen=True)
class Mods:
    data: dict[str, bytes]

    def __getitem__(self, name: str) -> bytes:
        return self.data[name]


@pytest.fixture(scope="module")
def mods(tmp_path_factory) -> Mods:
    src = tmp_path_factory.mktemp("load_fidelity_src")
    out = tools.session_dir()
    data = {}
    for name, text in {"mini": MINI, "br": BRANCHY, "misc": MISC, "types": TYPES, "imp": IMP,
                       **PROVIDERS}.items():
        path = src / f"{name}.vm.mlir"
        path.write_text(text)
        data[name] = tools.compile_with_flags(path, tools.VM_INPUT_FLAGS, out).read_bytes()
    data["mini_plain"] = tools.compile_with_flags(src / "mini.vm.mlir",
                                                  tools.VM_INPUT_FLAGS + NO_ZIP, out).read_bytes()
    data["variadic"] = tools.compile_with_flags(HERE / "programs" / "host" / "variadic.vm.mlir",
                                                tools.VM_INPUT_FLAGS, out).read_bytes()
    # llvm-cpu kernels in an external rodata segment (uint64 fields in the FlatBuffer)
    data["add16"] = tools.compile_mlir(HERE / "programs" / "add16.mlir", out, "inline-dynamic",
                                       extra_flags=NO_ZIP).read_bytes()
    return Mods(data)


# --------------------------------------------------------------------------------------------------
# Running both loaders

_STATUS_LINE = re.compile(r"^\S+:\d+: ([A-Z_]+); (.*)$", re.M)


@dataclass(frozen=True)
class Outcome:
    kind: str  # "ok", "status" (a failing iree_status_t / ireeabi error) or "crash"
    code: str | None  # StatusCode name for "status"
    text: str


@lru_cache(maxsize=None)
def _run_module_binary() -> str:
    """The wheel's native iree-run-module (the one on PATH is a Python launcher: a timeout must
    reach the process doing the work, which the process group below ensures anyway)."""
    try:
        import iree._runtime_libs as libs
        native = Path(libs.__file__).parent / "iree-run-module"
        if native.is_file():
            return str(native)
    except ImportError:
        pass
    return tools.find_tool("iree-run-module")


def _limit_memory() -> None:
    # A negative descriptor block count makes IREE allocate and clear a 2^32-entry block list;
    # with 4 GiB of address space it fails at once (RESOURCE_EXHAUSTED) instead of stalling.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def iree(data: bytes, function: str = "f", inputs: tuple = ("3",),
         before: tuple[bytes, ...] = ()) -> Outcome:
    """iree-run-module on `data`, registered after the modules `before`."""
    with tempfile.TemporaryDirectory(prefix="ireeabi-load-") as tmp:
        paths = []
        for i, module in enumerate((*before, data)):
            paths.append(Path(tmp) / f"m{i}.vmfb")
            paths[-1].write_bytes(module)
        argv = [_run_module_binary(), tools.RUN_DEVICE, *(f"--module={p}" for p in paths),
                f"--function={function}", *(f"--input={i}" for i in inputs)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=_limit_memory)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise AssertionError(f"iree-run-module did not finish on this module: {argv}")
    text = (out + err).decode("utf-8", "backslashreplace")
    if proc.returncode == 0:
        return Outcome("ok", None, text)
    status = _STATUS_LINE.search(text)
    if status is not None:
        return Outcome("status", status.group(1), status.group(2))
    return Outcome("crash", None, f"exit status {proc.returncode}: {text}")


def ours(data: bytes, function: str = "f", args: tuple = (3,), imports=None) -> Outcome:
    """Load (read, resolve types against iree-run-module's instance, verify every function) and
    call; ireeabi errors become outcomes."""
    try:
        ctx = Context(read_module(data, ref_types=run_module_type_names()), imports)
    except (ModuleFileError, DecodeError) as e:  # BytecodeVerifyError is a DecodeError
        return Outcome("status", e.code.name, str(e))
    except ImportResolutionError as e:
        code = getattr(e, "code", None)
        return Outcome("status", code.name if code is not None else None, str(e))
    try:
        return Outcome("ok", None, repr(ctx.invoke(function, *args)))
    except VmTrapError as e:  # where IREE would read or write outside its frame
        return Outcome("trap", None, str(e))
    finally:
        ctx.close()


def ours_read(data: bytes) -> Outcome:
    try:
        read_module(data, ref_types=run_module_type_names())
    except ModuleFileError as e:
        return Outcome("status", e.code.name, str(e))
    return Outcome("ok", None, "")


# --------------------------------------------------------------------------------------------------
# Finding things in a module (an independent walk of the FlatBuffer; slots from
# bytecode_module_def.fbs: BytecodeModuleDef name 0, requirements 2, types 4, imported_functions 6,
# exported_functions 7, function_signatures 8, rodata_segments 9, module_state 11,
# function_descriptors 12, bytecode_version 13, debug_database 15)

def u16(b: bytes, at: int) -> int:
    return struct.unpack_from("<H", b, at)[0]


def u32(b: bytes, at: int) -> int:
    return struct.unpack_from("<I", b, at)[0]


def fb_start(b: bytes) -> int:
    if b[:4] == b"PK\x03\x04":
        return 30 + u16(b, 26) + u16(b, 28) + 4
    return 4


def root(b: bytes) -> int:
    return fb_start(b) + u32(b, fb_start(b))


def vtable(b: bytes, table: int) -> int:
    return table - struct.unpack_from("<i", b, table)[0]


def slot_entry(b: bytes, table: int, slot: int) -> int:
    """File offset of the vtable entry for `slot`."""
    return vtable(b, table) + 4 + 2 * slot


def field(b: bytes, table: int, slot: int) -> int:
    vt = vtable(b, table)
    vo = 4 + 2 * slot
    assert vo < u16(b, vt) and u16(b, vt + vo), f"slot {slot} absent"
    return table + u16(b, vt + vo)


def deref(b: bytes, at: int) -> int:
    return at + u32(b, at)


def tables(b: bytes, table: int, slot: int) -> list[int]:
    vec = deref(b, field(b, table, slot))
    return [deref(b, vec + 4 + 4 * i) for i in range(u32(b, vec))]


def chars(b: bytes, table: int, slot: int) -> int:
    """File offset of the first character of a string field."""
    return deref(b, field(b, table, slot)) + 4


def descriptor(b: bytes, i: int = 0) -> int:
    return deref(b, field(b, root(b), 12)) + 4 + 20 * i


def cconv_at(b: bytes, ordinal: int = 0) -> int:
    return chars(b, tables(b, root(b), 8)[ordinal], 0)


def patch(b: bytes, at: int, new: bytes) -> bytes:
    out = bytearray(b)
    out[at:at + len(new)] = new
    return bytes(out)


def inst(b: bytes, function: int, mnemonic: str, nth: int = 0):
    """(file offset of the function's pc 0, the nth instruction with that mnemonic)."""
    m = read_module(b)
    found = [i for i in decode_module(m)[function] if i.mnemonic == mnemonic][nth]
    return m.bytecode_offset + m.function_descriptors[function].bytecode_offset, found


def operand(b: bytes, function: int, mnemonic: str, offset: int, value: bytes, nth: int = 0):
    """Overwrite bytes `offset` past the opcode of an instruction."""
    base, i = inst(b, function, mnemonic, nth)
    return patch(b, base + i.pc + offset, value)


def p16(v: int) -> bytes:
    return struct.pack("<H", v & 0xFFFF)


def p32(v: int) -> bytes:
    return struct.pack("<I", v & 0xFFFFFFFF)


def s16(v: int) -> bytes:
    return struct.pack("<h", v)


def zip_header(name_length: int) -> bytes:
    return b"PK\x03\x04" + bytes(22) + struct.pack("<HH", name_length, 0) + bytes(name_length)


# --------------------------------------------------------------------------------------------------
# The cases


@dataclass(frozen=True)
class Case:
    id: str
    module: str
    mutate: Callable[[bytes], bytes]
    iree: str  # what iree-run-module 3.13 does: "ok", "crash" or a StatusCode name
    ours: str  # "ok", "trap" (when the op runs) or a StatusCode name
    same_text: str = ""  # in IREE's message and in ours
    function: str = "f"
    inputs: tuple = (3,)
    imports: object = None


# br: f is internal function 1; its cond_br is opcode, condition (2), true target (4) at +3,
# true operands at +7, false target (4) at +9, false operands count at +13, pair at +15.
# call: opcode, callee (4) at +1, operands count at +5, register at +7, results count at +9,
# register at +11. return: opcode, pad, count at +1.. (aligned), register at +3.
BR_F = 1
INV, OOR, EXH = "INVALID_ARGUMENT", "OUT_OF_RANGE", "RESOURCE_EXHAUSTED"


def _sq_byte(b: bytes, pc: int, value: int) -> bytes:
    """Set the byte at `pc` of br's function 0 (sq)."""
    return patch(b, inst(b, 0, "block")[0] + pc, bytes([value]))


def desc(offset: int, value: bytes, function: int = 0) -> Callable[[bytes], bytes]:
    """Overwrite bytes `offset` into a function descriptor (FunctionDescriptor in the schema:
    offset 0, length 4, requirements 8, reserved 12, block count 14, i32 count 16, ref count 18)."""
    return lambda b: patch(b, descriptor(b, function) + offset, value)

CASES = [
    # ---- archive framing (archive.c, iree_vm_bytecode_archive_parse_header)
    Case("empty-file", "mini", lambda b: b"", INV, INV,
         "less than 16 bytes"),
    Case("15-bytes", "mini_plain", lambda b: b[:15], INV, INV,
         "less than 16 bytes"),
    Case("zip-name-past-end", "mini", lambda b: patch(b, 26, p16(0xFFFF)), "INVALID_ARGUMENT",
         "INVALID_ARGUMENT", "archive self-reports as a zip"),
    Case("size-prefix-past-end", "mini_plain", lambda b: b[:200], "INVALID_ARGUMENT",
         "INVALID_ARGUMENT", "length prefix out of bounds"),
    # ---- flatcc verification (verifier.c iree_vm_bytecode_module_flatbuffer_verify -> flatcc)
    Case("identifier", "mini", lambda b: patch(b, fb_start(b) + 4, b"IREX"), "INVALID_ARGUMENT",
         "INVALID_ARGUMENT", "identifier mismatch"),
    Case("flatbuffer-not-4-aligned", "mini_plain", lambda b: zip_header(1) + b,
         INV, INV, "buffer header not aligned"),
    Case("flatbuffer-4-aligned-zip-header", "mini_plain", lambda b: zip_header(2) + b, "ok", "ok"),
    Case("debug-database-offset-out-of-range", "mini",
         lambda b: patch(b, field(b, root(b), 15), p32(0x7FFFFF00)), "INVALID_ARGUMENT",
         "INVALID_ARGUMENT", "table header out of range or unaligned"),
    Case("debug-database-offset-unaligned", "mini",
         lambda b: patch(b, field(b, root(b), 15), p32(u32(b, field(b, root(b), 15)) + 2)),
         INV, INV, "table header out of range or unaligned"),
    Case("scalar-field-unaligned", "mini",
         lambda b: patch(b, slot_entry(b, root(b), 13),
                         p16(u16(b, slot_entry(b, root(b), 13)) + 2)),
         INV, INV, "table field not aligned"),
    Case("string-offset-zero", "mini", lambda b: patch(b, field(b, root(b), 0), p32(0)),
         INV, INV, "string header out of range or unaligned"),
    Case("string-not-terminated", "mini",
         lambda b: patch(b, chars(b, root(b), 0) - 4, p32(u32(b, chars(b, root(b), 0) - 4) - 1)),
         INV, INV, "string not zero terminated"),
    # ---- metadata (verifier.c iree_vm_bytecode_module_flatbuffer_verify)
    Case("module-name-not-utf8", "mini", lambda b: patch(b, chars(b, root(b), 0), b"\xff"),
         "ok", "ok"),  # strings are bytes to IREE: it loads; ours rejected it before
    Case("bytecode-version-18.0", "mini", lambda b: patch(b, field(b, root(b), 13), p32(18 << 16)),
         INV, INV, "runtime supports 17.0, module has 18.0"),
    Case("bytecode-version-17.1", "mini",
         lambda b: patch(b, field(b, root(b), 13), p32(17 << 16 | 1)),
         INV, INV, "runtime supports 17.0, module has 17.1"),
    Case("module-requirements-unknown-bit", "misc",
         lambda b: patch(b, field(b, root(b), 2), p32(0x11)), "INVALID_ARGUMENT",
         "INVALID_ARGUMENT", "are not available in this runtime configuration"),
    Case("module-requirements-all-known", "misc",
         lambda b: patch(b, field(b, root(b), 2), p32(0xF)), "ok", "ok"),
    Case("block-count-0", "mini", desc(14, s16(0)),
         INV, INV, "functions must have at least 1 block"),
    Case("block-count-2", "mini", desc(14, s16(2)),
         INV, INV, "invalid descriptor block count 2; found 1 blocks"),
    # IREE allocates a block list of 2^32 - 1 entries (utils/block_list.c): RESOURCE_EXHAUSTED
    # under the 4 GiB limit here, a long stall without it.
    Case("block-count-negative", "mini", desc(14, s16(-1)),
         EXH, EXH),
    Case("bytecode-length-0", "mini", desc(4, s16(0) + s16(0)),
         INV, INV, "functions must have at least one block"),
    Case("bytecode-offset-negative", "mini", lambda b: patch(b, descriptor(b), p32(-1)),
         INV, INV, "out of range"),
    Case("bytecode-span-int32-overflow", "mini",
         lambda b: patch(b, descriptor(b), p32(0x7FFFFFF0) + p32(0x7FFFFFF0)),
         INV, INV, "out of range"),
    Case("ref-count-above-0x3FFF", "mini", desc(18, s16(0x4000)),
         INV, INV, "register count out of range"),
    # ---- iree_vm_bytecode_function_verify: counts round up to a power of two, then must fit
    Case("i32-count-rounds-past-0x7FFF", "mini", desc(16, s16(0x4001)),
         EXH, EXH, "register count overflow"),
    Case("i32-count-0x4000", "mini", desc(16, s16(0x4000)), "ok", "ok"),
    Case("ref-count-rounds-past-0x3FFF", "mini", desc(18, s16(0x2001)),
         EXH, EXH, "register count overflow"),
    Case("function-requirements-unknown-bit", "mini", desc(8, p32(0x10)),
         INV, INV, "are not available in this runtime configuration"),
    Case("function-requirements-yield-unwind", "mini",
         desc(8, p32(0xC)), "ok", "ok"),
    Case("ext-f32-op-without-requirement", "misc", desc(8, p32(0)),
         INV, INV, "are not available in this runtime configuration"),
    # ---- types (module.c iree_vm_bytecode_module_resolve_type)
    Case("all-registered-types", "types", lambda b: b, "ok", "ok"),
    Case("unknown-ref-type", "types",
         lambda b: patch(b, chars(b, tables(b, root(b), 4)[10], 0) + len("!hal.fil"), b"a"),
         "NOT_FOUND", "NOT_FOUND", "no type registered with name '!hal.fila'"),
    Case("unknown-value-type", "types",
         lambda b: patch(b, chars(b, tables(b, root(b), 4)[0], 0), b"u"),
         "NOT_FOUND", "NOT_FOUND", "no type registered with name 'u32'"),
    Case("vm-list-prefix-is-the-list-type", "types",
         lambda b: patch(b, chars(b, tables(b, root(b), 4)[13], 0) + len("!vm.list"), b"x"),
         "ok", "ok"),
    # ---- the function's own cconv (verifier.c get_cconv_fragments, count_cconv_regs, returns)
    Case("cconv-version-1", "mini", lambda b: patch(b, cconv_at(b), b"1"), "UNIMPLEMENTED",
         "UNIMPLEMENTED", "unsupported cconv version 1"),
    Case("cconv-unknown-argument-char", "mini", lambda b: patch(b, cconv_at(b) + 1, b"x"),
         INV, INV, "unsupported cconv fragment char 'x'"),
    Case("cconv-span-argument", "mini", lambda b: patch(b, cconv_at(b) + 1, b"C"),
         INV, INV, "internal functions cannot accept variadic"),
    Case("cconv-unknown-result-char", "mini", lambda b: patch(b, cconv_at(b) + 3, b"x"),
         INV, INV, "unsupported cconv fragment char 'x'"),
    Case("cconv-span-result", "mini", lambda b: patch(b, cconv_at(b) + 3, b"C"),
         INV, INV, "no segment size list"),
    Case("cconv-i64-result-in-odd-register", "mini", lambda b: patch(b, cconv_at(b) + 3, b"I"),
         INV, INV, "register ordinal 1 not 8-byte aligned"),
    Case("cconv-ref-result-in-i32-register", "mini", lambda b: patch(b, cconv_at(b) + 3, b"r"),
         INV, INV, "ref register required but non-ref 1 provided"),
    # a void result: the returned register is extra, and extra registers are ignored
    Case("cconv-void-result-extra-return-operand", "mini",
         lambda b: patch(b, cconv_at(b) + 3, b"v"),
         "ok", "ok"),
    # ---- blocks (verifier.c in_block, utils/block_list.c)
    Case("branch-to-op-start", "br", lambda b: operand(b, BR_F, "cond_br", 3, p32(0x21)),
         INV, INV, "invalid descriptor block count 3; found at least 4"),
    Case("branch-mid-op", "br", lambda b: operand(b, BR_F, "cond_br", 3, p32(0x22)),
         INV, INV, "invalid descriptor block count 3; found at least 4"),
    Case("branch-outside-function", "br", lambda b: operand(b, BR_F, "cond_br", 3, p32(0x1000)),
         INV, INV, "invalid descriptor block count 3; found at least 4"),
    Case("branch-past-pc-block-max", "br", lambda b: operand(b, BR_F, "cond_br", 3, p32(1 << 24)),
         OOR, OOR, "block pc 01000000 greater than max 00FFFFFF"),
    Case("branch-to-entry-block", "br", lambda b: operand(b, BR_F, "br", 1, p32(0)), "ok", "ok",
         inputs=(0,)),
    Case("block-while-in-block", "br",
         lambda b: operand(b, BR_F, "cmp.nz.i32", 0,
                           bytes([isa.BLOCK_MARKER, isa.BLOCK_MARKER,
                                  isa.op("const.i32.zero").opcode]) + p16(2)),
         INV, INV, "op at pc 00000008 is a block while still in a block"),
    # sq without its entry block marker; the misaligned rest would not even decode
    Case("op-not-in-a-block", "br",
         lambda b: patch(b, descriptor(b, 0), p32(1) + p32(13)),
         INV, INV, "op at pc 00000000 is not in a block"),
    # sq's two padding bytes after its return
    Case("bytes-after-terminator", "br", lambda b: patch(b, descriptor(b, 0) + 4, p32(16)),
         INV, INV, "op at pc 0000000E is not in a block"),
    # f's vm.return turned into a same-size vm.cmp.nz.i32
    Case("missing-terminator", "br",
         lambda b: operand(b, BR_F, "return", 0,
                           bytes([isa.op("cmp.nz.i32").opcode]) + p16(0) + p16(0)),
         INV, INV, "function missing terminator in the last block"),
    # ---- registers in lists and branch operands (checked by IREE, power-of-two bounds)
    Case("call-operand-past-bound", "br", lambda b: operand(b, BR_F, "call", 7, p16(9)),
         OOR, OOR, "i32 register ordinal 9 out of range 4"),
    Case("call-operand-at-pow2-bound", "br", lambda b: operand(b, BR_F, "call", 7, p16(4)),
         OOR, OOR, "i32 register ordinal 4 out of range 4"),
    Case("call-result-past-bound", "br", lambda b: operand(b, BR_F, "call", 11, p16(9)),
         OOR, OOR, "i32 register ordinal 9 out of range 4"),
    Case("branch-operand-past-bound", "br", lambda b: operand(b, BR_F, "cond_br", 15, p16(9)),
         OOR, OOR, "i32 register ordinal 9 out of range 4"),
    Case("call-operand-ref-for-i32", "br", lambda b: operand(b, BR_F, "call", 7, p16(0x8000)),
         INV, INV, "register required but ref register 32768 provided"),
    # the operand count claims 2: the results list then reads as empty
    Case("call-results-underflow", "br", lambda b: operand(b, BR_F, "call", 5, p16(2)),
         OOR, OOR, "register list underflow (have 0, trying to access 0)"),
    # ---- ordinals
    Case("import-ordinal-out-of-range", "br",
         lambda b: operand(b, BR_F, "call", 1, p32(isa.FUNCTION_ORDINAL_IMPORT_BIT)),
         INV, INV, "import ordinal 0 out of range 0"),
    Case("import-resolved-of-internal-function", "misc",
         lambda b: operand(b, 0, "import.resolved", 1, p32(0)),
         INV, INV, "function ordinal 0 is not an import ordinal"),
    Case("import-resolved-out-of-range", "misc",
         lambda b: operand(b, 0, "import.resolved", 1, p32(isa.FUNCTION_ORDINAL_IMPORT_BIT | 1)),
         INV, INV, "import ordinal 1 out of range 1"),
    Case("rodata-ordinal-out-of-range", "mini",
         lambda b: operand(b, 0, "const.ref.rodata", 1, p32(1)),
         OOR, OOR, "rodata ref ordinal out of range: 1 (table=1)"),
    Case("global-byte-offset-out-of-range", "misc",
         lambda b: patch(b, field(b, deref(b, field(b, root(b), 11)), 0), p32(0)),
         OOR, OOR, "global byte_offset out of range: 0 (rwdata=0"),
    Case("variadic-call-of-internal-function", "variadic",
         lambda b: operand(b, 0, "call.variadic", 1, p32(0)), "FAILED_PRECONDITION",
         "FAILED_PRECONDITION", inputs=(1, 2, 3),
         imports=FunctionImports({"native.sum": lambda b, xs: [b], "native.pairs": lambda xs: [0],
                                  "native.wrap": lambda b, n: [b]})),
    # ---- typed operands: IREE 3.13 does not check them (accepts a misaligned pair that fits)
    Case("i64-operands-misaligned-in-range", "misc",
         lambda b: operand(operand(operand(operand(b, 0, "ext.i32.i64.s", 3, p16(1)),
                                           0, "add.i64", 1, p16(1)), 0, "add.i64", 3, p16(1)),
                           0, "add.i64", 5, p16(1)), "ok", "ok"),
    # ---- what IREE 3.13 accepts and then runs outside the frame, or crashes on: ours loads it and
    # the op traps when it runs (VmTrapError)
    # cmp.nz reads %i4 of a 3-register frame (its typed operand is never verified)
    Case("typed-operand-out-of-range", "br", lambda b: operand(b, BR_F, "cmp.nz.i32", 1, p16(4)),
         "ok", "trap", inputs=(0,)),
    # add.i64 writes %i3:4 past a 4-register bank
    Case("i64-result-past-bank", "misc", lambda b: operand(b, 0, "add.i64", 5, p16(3)),
         "ok", "trap"),
    # a ref register where an i32 operand belongs: IREE runs it and crashes
    Case("ref-register-as-i32-operand", "br",
         lambda b: operand(b, BR_F, "cmp.nz.i32", 1, p16(0x8000)), "crash", "trap",
         inputs=(0,)),
    # an i32 copy into a ref-encoded register (regs_i32[0x8000]): IREE crashes
    Case("branch-operand-ref-in-refless-frame", "br",
         lambda b: operand(b, BR_F, "cond_br", 17, p16(0x8000)), "crash", "trap",
         inputs=(0,)),
    # IREE's internal-ordinal check never fires (it compares a boolean) and it crashes loading
    Case("internal-callee-out-of-range", "br", lambda b: operand(b, BR_F, "call", 1, p32(2)),
         "crash", "INVALID_ARGUMENT"),
    # type ids are not verified by IREE 3.13 either: it runs one past the table as type 0
    Case("type-id-out-of-range", "types", lambda b: operand(b, 0, "global.load.ref", 5, p32(99)),
         "ok", "ok"),
    # ref count 0 but %r0 used: IREE verifies against max(1, 0) and keeps %r0 past its frame (no
    # other register there, no call): ours runs it too (vm/bytecode/frames.py)
    Case("ref-count-0-with-ref-register", "mini", desc(18, s16(0)),
         "ok", "ok"),
    # ---- registers past the declared count but inside IREE's frame: its i32 bank is the declared
    # count rounded up to 16 bytes, zeroed (dispatch.c iree_vm_bytecode_function_enter), and IREE
    # runs them; so does ours (frames as IREE allocates them)
    # f's return of %i3 (3 declared; IREE's bound 4, the frame 4): returns the zeroed register
    Case("return-register-past-count-within-frame", "br",
         lambda b: operand(b, BR_F, "return", 3, p16(3)), "ok", "ok"),
    # sq declares 1 (IREE's bound 1, the frame 4): mul's result %i3 is an unchecked typed operand
    Case("typed-result-in-frame-padding", "br", lambda b: operand(b, 0, "mul.i32", 5, p16(3)),
         "ok", "ok"),
    # ---- a lone byte ending a function: IREE's walk (pc < length - 1) never decodes an op starting
    # at the last byte (verifier.c iree_vm_bytecode_function_verify). sq is 14 bytes + 2 padding.
    Case("lone-padding-opcode-after-terminator", "br", desc(4, p32(15)), "ok", "ok"),
    Case("lone-return-opcode-after-terminator", "br",
         lambda b: desc(4, p32(15))(_sq_byte(b, 14, isa.op("return").opcode)), "ok", "ok"),
    Case("lone-unknown-opcode-after-terminator", "br",
         lambda b: desc(4, p32(15))(_sq_byte(b, 14, 0xFF)), "ok", "ok"),
    Case("lone-ext-prefix-after-terminator", "br",
         lambda b: desc(4, p32(15))(_sq_byte(b, 14, min(isa.SETS_BY_PREFIX))), "ok", "ok"),
    # sq cut after its return's opcode, and after its mul's: the block has no terminator
    Case("lone-return-opcode-ending-the-block", "br", desc(4, p32(9)),
         INV, INV, "function missing terminator in the last block"),
    Case("lone-opcode-after-block-marker", "br", desc(4, p32(2)),
         INV, INV, "function missing terminator in the last block"),
    # ---- import resolution (context.c) comes after module creation, which verifies functions
    Case("verify-error-before-missing-imports", "imp", desc(14, s16(2)),
         INV, INV, "invalid descriptor block count 2; found 1 blocks"),
    # iree-run-module: "required module 'zeta' not available in the build" (tooling/modules/
    # resolver.c); the context: "... not registered on the context" (ours, as a context)
    Case("missing-required-module", "imp", lambda b: b, "NOT_FOUND", "NOT_FOUND",
         "required module 'zeta' not"),
    # an optional import is skipped only when NOT_FOUND: a name without a module is an error
    Case("optional-import-name-not-qualified", "misc",
         lambda b: patch(b, chars(b, tables(b, root(b), 6)[0], 0) + len("absent"), b"X"),
         INV, INV, "import name not fully-qualified (module.func): 'absentXfn'"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_load_matches_iree_run_module(mods, case):
    data = case.mutate(mods[case.module])
    inputs = tuple(str(i) for i in case.inputs)
    theirs = iree(data, case.function, inputs)
    if case.iree in ("ok", "crash"):
        assert theirs.kind == case.iree, theirs
    else:
        assert (theirs.kind, theirs.code) == ("status", case.iree), theirs
    mine = ours(data, case.function, case.inputs, case.imports)
    if case.ours in ("ok", "trap"):
        assert mine.kind == case.ours, mine
    else:
        assert (mine.kind, mine.code) == ("status", case.ours), mine
    if case.iree == "ok" and case.ours == "ok":  # same results
        expected = re.findall(r"result\[\d+\]: i32=(-?\d+)", theirs.text)
        assert mine.text == repr([int(x) for x in expected]), (mine, theirs)
    if case.same_text:
        assert case.same_text in theirs.text, theirs
        assert case.same_text in mine.text, mine


# --------------------------------------------------------------------------------------------------
# Import resolution against providers registered first (iree-run-module --module=... --module=imp;
# VmContext(modules=[..., imp]); ours: Context(imp, ContextImports(*providers)))

def _dependency_flags(index: int, flags: int) -> Callable[[bytes], bytes]:
    """Set the flags of dependencies[index] (ModuleDependencyDef: name 0, minimum_version 1,
    flags 2; REQUIRED 1 is the default, so only a non-default flags field is stored)."""
    return lambda b: patch(b, field(b, tables(b, root(b), 5)[index], 2), p32(flags))


IMPORT_CASES = [
    # (id, providers, status code, VmContext's message[, change to imp])
    # dependencies (in their table's order) are checked before any import: zeta is registered
    # (without g, the first import), the required alpha is not
    ("dependency-before-imports", ("zeta_no_g",), "NOT_FOUND",
     "required module 'alpha' not registered on the context; resolving module 'imp' imports"),
    ("first-missing-dependency", ("alpha_no_f",), "NOT_FOUND",
     "required module 'zeta' not registered on the context; resolving module 'imp' imports"),
    # imports in order: zeta.g first
    ("signature-mismatch", ("zeta_i64", "alpha_no_f"), "INTERNAL",
     "import function zeta.g signature mismatch between imp and source zeta; expected 0i_i but "
     "got 0I_i; resolving module 'imp' imports"),
    ("function-not-exported", ("zeta", "alpha_no_f"), "NOT_FOUND",
     "no function `f` exported by module; resolving module 'imp' imports"),
    # the optional opt.h, found with another cconv, fails (before alpha.f, not exported)
    ("optional-import-signature-mismatch", ("zeta", "alpha_no_f", "opt_f32"), "INTERNAL",
     "import function opt.h signature mismatch between imp and source opt; expected 0i_i but "
     "got 0f_i; resolving module 'imp' imports"),
    # a dependency flagged neither required nor optional must be registered (context.c); the
    # tooling's own pass (tools/modules/resolver.c) only insists on required ones
    ("dependency-neither-required-nor-optional", ("zeta", "alpha_no_f"), "NOT_FOUND",
     "required module 'opt' not registered on the context; resolving module 'imp' imports",
     _dependency_flags(1, 0)),
]


def _vm_context_status(modules: tuple[bytes, ...]) -> tuple[str, str] | None:
    """(code, message) of iree.runtime's VmContext creation over `modules` (None: it succeeds)."""
    import iree.runtime as rt

    instance = rt.VmInstance()
    loaded = [rt.VmModule.copy_buffer(instance, m) for m in modules]
    try:
        rt.VmContext(instance, modules=loaded)
    except (ValueError, RuntimeError) as e:  # by status code (INTERNAL: RuntimeError)
        found = re.search(r": ([A-Z_]+); (.*)$", str(e))
        assert found, e
        return found.group(1), found.group(2)
    return None


@pytest.mark.parametrize("name,providers,code,message,change",
                         [(*c, None)[:5] for c in IMPORT_CASES], ids=[c[0] for c in IMPORT_CASES])
def test_import_resolution_matches_iree(mods, name, providers, code, message, change):
    imp = change(mods["imp"]) if change else mods["imp"]
    before = tuple(mods[p] for p in providers)
    theirs = iree(imp, before=before)
    assert (theirs.kind, theirs.code) == ("status", code), theirs
    assert _vm_context_status((*before, imp)) == (code, message)
    contexts = [Context(b) for b in before]
    try:
        mine = ours(imp, imports=ContextImports(*contexts))
    finally:
        for c in contexts:
            c.close()
    assert (mine.kind, mine.code) == ("status", code), mine
    assert message in mine.text, mine


# --------------------------------------------------------------------------------------------------
# Modules that need the HAL: the loader's part only (read_module), against iree-run-module


ADD16_INPUTS = ("16xf32=1", "16xf32=2")


def _rodata_segment(b: bytes) -> int:
    """The RodataSegmentDef with external data (the kernel library)."""
    for seg in tables(b, root(b), 9):
        vt = vtable(b, seg)
        if u16(b, vt) > 4 + 2 * 4 and u16(b, vt + 4 + 2 * 4):  # external_data_length present
            return seg
    raise AssertionError("no external rodata segment")


def _u64_field(b: bytes, table: int, slot: int) -> int:
    vt = vtable(b, table)
    vo = 4 + 2 * slot
    present = vo < u16(b, vt) and u16(b, vt + vo)
    return struct.unpack_from("<Q", b, table + u16(b, vt + vo))[0] if present else 0


def _external_end(b: bytes) -> int:
    seg = _rodata_segment(b)
    fb_end = fb_start(b) + u32(b, fb_start(b) - 4)
    region = -(-fb_end // 64) * 64  # IREE_VM_ARCHIVE_SEGMENT_ALIGNMENT
    return region + _u64_field(b, seg, 3) + _u64_field(b, seg, 4)


HAL_CASES = [
    ("unchanged", lambda b: b, "ok", ""),
    ("truncated-at-rodata-end", lambda b: b[:_external_end(b)], "ok", ""),
    ("truncated-inside-rodata", lambda b: b[:_external_end(b) - 1], "INVALID_ARGUMENT",
     "external reference out of range"),
    ("external-length-wraps", lambda b: patch(b, field(b, _rodata_segment(b), 4),
                                               struct.pack("<Q", 2**64 - 8)),
     "INVALID_ARGUMENT", "external reference out of range"),
    # shifting the FlatBuffer by 4 (mod 8) misaligns its uint64 fields in memory
    ("uint64-field-unaligned", lambda b: zip_header(6) + b, "INVALID_ARGUMENT",
     "table field not aligned"),
]


@pytest.mark.parametrize("name,mutate,expected,text", HAL_CASES, ids=[c[0] for c in HAL_CASES])
def test_hal_module_loading_matches_iree_run_module(mods, name, mutate, expected, text):
    data = mutate(mods["add16"])
    theirs = iree(data, "add", ADD16_INPUTS)
    mine = ours_read(data)
    if expected == "ok":
        assert theirs.kind == "ok" and "16xf32=3 3 3" in theirs.text, theirs
        assert mine.kind == "ok", mine
    else:
        assert (theirs.kind, theirs.code) == ("status", expected), theirs
        assert (mine.kind, mine.code) == ("status", expected), mine
        assert text in theirs.text and text in mine.text, (theirs, mine)


# --------------------------------------------------------------------------------------------------
# Details of the outcomes


def test_status_codes_survive_annotation_and_pickling(mods):
    import pickle
    from ireeabi.vm.bytecode.verifier import BytecodeVerifyError

    data = operand(mods["br"], BR_F, "cond_br", 3, p32(1 << 24))
    with pytest.raises(BytecodeVerifyError) as info:
        Context(data)
    err = info.value
    assert err.code == StatusCode.OUT_OF_RANGE and err.function == "f" and err.pc == 0xD
    again = pickle.loads(pickle.dumps(err))
    assert (again.code, again.pc, again.function) == (err.code, err.pc, err.function)
    with pytest.raises(ModuleFileError) as info:
        read_module(patch(mods["mini"], chars(mods["mini"], tables(mods["mini"],
                                                                   root(mods["mini"]), 4)[0], 0),
                          b"u"), ref_types=run_module_type_names())
    assert pickle.loads(pickle.dumps(info.value)).code == StatusCode.NOT_FOUND


def test_errors_name_the_field_and_offset(mods):
    b = mods["mini"]
    at = descriptor(b) + 14
    with pytest.raises(ModuleFileError) as info:
        read_module(patch(b, at, s16(0)))
    assert info.value.offset == at and "function_descriptors[0].block_count" in str(info.value)
    at = field(b, root(b), 15)
    with pytest.raises(ModuleFileError) as info:
        read_module(patch(b, at, p32(0x7FFFFF00)))
    assert info.value.offset == at and "BytecodeModuleDef.debug_database" in str(info.value)


def test_non_utf8_names_load_and_stay_printable(mods):
    b = mods["mini"]
    m = read_module(patch(b, chars(b, root(b), 0), b"\xff"))
    assert m.name == "\udcffini" and printable(m.name) == "\\xffini"  # the byte kept, shown escaped
    export = tables(b, root(b), 7)[0]
    renamed = patch(b, chars(b, export, 0), b"\xff")
    assert read_module(renamed).exported_functions[0].name.encode("utf-8", "surrogateescape") == b"\xff"
    # iree-run-module finds no `f` in it, and neither does ireeabi
    theirs = iree(renamed)
    assert (theirs.code, "no function `f` exported by module" in theirs.text) == ("NOT_FOUND", True)
    with pytest.raises(IreeAbiError, match="unknown exported function 'f'"):
        Context(renamed).invoke("f", 3)


def test_unparsable_cconv_loads_as_text(mods):
    """IREE checks calling conventions when it verifies a function or resolves an import, not when
    it reads the metadata: read_module keeps the text (signature None); Context rejects it."""
    b = patch(mods["mini"], cconv_at(mods["mini"]) + 1, b"x")
    m = read_module(b)
    assert (m.function_signatures[0].cconv, m.function_signatures[0].signature) == ("0x_i", None)
    assert m.exported_functions[0].cconv == "0x_i"


# --------------------------------------------------------------------------------------------------
# Robustness: mutated FlatBuffers and bytecode raise ireeabi errors only


_FUZZ = settings(max_examples=150, derandomize=True, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@_FUZZ
@given(st.data())
def test_mutated_modules_raise_only_ireeabi_errors(mods, data):
    name = data.draw(st.sampled_from(["mini", "br", "misc", "types"]))
    raw = bytearray(mods[name])
    m = read_module(bytes(raw))
    if data.draw(st.booleans()):  # bytecode
        lo, hi = m.bytecode_offset, m.bytecode_offset + len(m.bytecode)
    else:  # FlatBuffer (tables, vtables, descriptors, strings)
        lo, hi = m.flatbuffer_offset - 4, m.flatbuffer_offset + m.flatbuffer_length
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(lo, hi - 1))
        width = data.draw(st.sampled_from([1, 2, 4]))
        value = data.draw(st.integers(0, 2**32 - 1)).to_bytes(4, "little")[:width]
        raw[at:at + width] = value[:max(0, len(raw) - at)]
    try:
        ctx = Context(bytes(raw), run_init=False)
    except (ModuleFileError, DecodeError) as e:
        assert isinstance(e.code, StatusCode) and e.code != StatusCode.OK
        if isinstance(e, ModuleFileError):
            assert not e.reason.startswith("unreadable module"), repr(e.__cause__)
            assert 0 <= e.offset <= len(raw)
        return
    except IreeAbiError:
        return
    ctx.close()
