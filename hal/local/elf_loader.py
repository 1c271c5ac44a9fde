"""IREE's own loader for embedded-elf kernel libraries, instead of the system's dlopen.

IREE never hands an embedded ELF to the system loader: runtime/src/iree/hal/local/elf/elf_module.c
checks the file, maps its PT_LOAD segments into memory it reserves, reads .dynamic, .dynsym and
.dynstr from that memory, refuses imports, applies the relocations its arch/*.c knows for the running
architecture, protects the segments, runs the initializers and looks up the one exported symbol.
`load` does the same, in the same order and with the same statuses and messages, so a broken library
fails here as it fails in iree-run-module, and never inside glibc's ld.so.

Where IREE trusts the file further than its checks go (a table pointer, a relocation target, a
symbol name or an initializer that lies outside the loaded image), IREE would read, write or jump
outside memory it owns; ireeabi refuses with FAILED_PRECONDITION saying so instead. Library code
(initializers, the query function) runs under the fault trap of `native.py`: a fault is an error, not
the end of the process.

The ELF structs come from pyelftools' factory for the running data model (the host's: kernels are
host machine code). Only x86_64 relocations are implemented (IREE's arch/x86_64.c); another host
architecture gets UNIMPLEMENTED.

Target memory (a runtime's heap at target addresses, for emulated kernels) is `elf_heap_loader`,
which shares this file's ELF reading (`verify_header`, `elf_structs`, `DT`, ...).
"""
from __future__ import annotations

import ctypes
import mmap
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from elftools.elf.structs import ELFStructs

from ...base.machine import host as _host_machine
from ...base.host_libraries import library_name

from .executable_library import ExecutableError
from .native import FAULTED, budget_ns, native, stop_flags, stopped
from ...base.status import StatusCode

PAGE = mmap.PAGESIZE
# The running architecture's e_machine, as iree_elf_machine_is_valid checks it.
_E_MACHINE = {"x86_64": 0x3E, "aarch64": 0xB7, "riscv64": 0xF3, "riscv32": 0xF3, "armv7": 0x28, "i386": 0x03}
PT_LOAD, PT_DYNAMIC, PT_GNU_RELRO = 1, 2, 0x6474E552
PF_X, PF_W, PF_R = 1, 2, 4
SHN_UNDEF = 0
_STB_GLOBAL, _STB_WEAK = 1, 2
DT = {"NULL": 0, "PLTRELSZ": 2, "HASH": 4, "STRTAB": 5, "SYMTAB": 6, "RELA": 7, "RELASZ": 8, "RELAENT": 9,
       "STRSZ": 10, "SYMENT": 11, "INIT": 12, "REL": 17, "RELSZ": 18, "RELENT": 19, "PLTREL": 20,
       "JMPREL": 23, "INIT_ARRAY": 25, "INIT_ARRAYSZ": 27}
_PROT_NONE, _PROT_READ, _PROT_WRITE, _PROT_EXEC = 0, 1, 2, 4
_MAP_PRIVATE, _MAP_ANONYMOUS = 0x02, 0x20
MAX_IMAGE = 1 << 30  # a larger vaddr range is refused (IREE's reservation would fail)

# arch/x86_64.c's relocation types
_R_X86_64 = {"NONE": 0, "64": 1, "PC32": 2, "COPY": 5, "GLOB_DAT": 6, "JUMP_SLOT": 7, "RELATIVE": 8,
             "32": 10, "32S": 11}


def elf_error(message: str, code: StatusCode = StatusCode.FAILED_PRECONDITION) -> ExecutableError:
    return ExecutableError(code, message)


@lru_cache(maxsize=None)
def elf_structs(pointer_size: int) -> Any:
    s = ELFStructs(little_endian=True, elfclass=8 * pointer_size)
    s.create_basic_structs()
    s.create_advanced_structs(e_type="ET_DYN", e_machine="EM_X86_64", e_ident_osabi="ELFOSABI_SYSV")
    return s


@lru_cache(maxsize=None)
def _libc() -> Any:
    libc = ctypes.CDLL(library_name("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def _align_start(addr: int, alignment: int) -> int:
    """iree_page_align_start: the C mask arithmetic, whatever the alignment (as the ELF gives it)."""
    return addr & ~(alignment - 1) & 0xFFFFFFFFFFFFFFFF


def _align_end(addr: int, alignment: int) -> int:
    return _align_start(addr + (alignment - 1), alignment)


@dataclass(eq=False)
class ElfModule:
    """A loaded embedded ELF: `base` (host address) of `size` bytes, `bias` the host address of vaddr 0."""

    base: int
    size: int
    bias: int
    dynsym: int = 0  # host address of .dynsym
    dynsym_count: int = 0
    dynstr: int = 0
    dynstr_size: int = 0
    closed: bool = field(default=False)
    # Pages made unreadable by protect_segments (a segment without R, W or X): (lo, hi) host ranges.
    unreadable: list = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.base + self.size

    def inside(self, address: int, n: int) -> bool:
        return self.base <= address and address + n <= self.end

    def read(self, address: int, n: int, what: str) -> bytes:
        if not self.inside(address, n):
            raise elf_error(f"ELF {what} at 0x{address:x} (+{n}) lies outside the loaded image "
                            f"[0x{self.base:x}, 0x{self.end:x}): IREE would read memory it does not own")
        self._check_readable(address, n, what)
        return ctypes.string_at(address, n)

    def _check_readable(self, address: int, n: int, what: str) -> None:
        for lo, hi in self.unreadable:
            if address < hi and lo < address + max(n, 1):
                raise elf_error(f"ELF {what} at 0x{address:x} lies in a segment mapped without access: IREE "
                                "would fault reading it")

    def write(self, address: int, data: bytes, what: str) -> None:
        if not self.inside(address, len(data)):
            raise elf_error(f"ELF {what} at 0x{address:x} (+{len(data)}) lies outside the loaded image "
                            f"[0x{self.base:x}, 0x{self.end:x}): IREE would write memory it does not own")
        ctypes.memmove(address, data, len(data))

    def cstring(self, address: int, what: str) -> bytes:
        """A NUL-terminated string inside .dynstr (IREE reads it as far as the NUL goes)."""
        if not (self.dynstr <= address < self.dynstr + self.dynstr_size) or not self.inside(address, 1):
            raise elf_error(f"ELF {what} at 0x{address:x} lies outside .dynstr: IREE would read memory it "
                            "does not own")
        n = min(self.dynstr + self.dynstr_size, self.end) - address
        self._check_readable(address, n, what)
        raw = ctypes.string_at(address, n)
        end = raw.find(b"\0")
        if end < 0:
            raise elf_error(f"ELF {what} at 0x{address:x} is not terminated inside .dynstr")
        return raw[:end]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _libc().munmap(self.base, self.size)


def _call(fn: int, kind: int, a0: int = 0, a1: int = 0, what: str = "", cpu_time: "float | None" = None) -> int:
    """Library code under the fault trap, within `cpu_time` CPU seconds (None: no bound; Ctrl-C
    stops it either way); a fault is an INTERNAL error naming it."""
    lib = native()
    result = lib.ffi.new("uintptr_t*")
    fault = lib.ffi.new("ireeabi_fault_t*")
    status = lib.lib.ireeabi_call_guarded(fn, kind, a0, a1, result, fault, budget_ns(cpu_time), stop_flags())
    if status == FAULTED:
        raise elf_error(f"{what} at 0x{fn:x} faulted (signal {fault.signal} at address 0x{fault.address:x})",
                        StatusCode.INTERNAL)
    error = stopped(status, f"{what} at 0x{fn:x}", cpu_time)  # a looping initializer or query
    if error is not None:
        raise error
    return result[0]


def load(data: bytes, cpu_time: "float | None" = None) -> ElfModule:
    """iree_elf_module_initialize_from_memory on `data` (FatELF is not supported: a FatELF file is
    not an ELF identifier and fails as such); each initializer gets `cpu_time` CPU seconds (None:
    no bound)."""
    module, phdrs, s = _map(data)
    try:
        dyn = _parse_dynamic(module, phdrs, s)
        _verify_no_imports(module, s)
        _apply_relocations(module, dyn, s)
        _protect_segments(module, phdrs)
        _run_initializers(module, dyn, s, cpu_time)
    except BaseException:
        module.close()
        raise
    return module


def validate(data: bytes) -> None:
    """The checks a system library (system-elf) passes before dlopen sees it: IREE's header,
    program-header and dynamic-section checks (but for the symbol table), the relocation tables
    inside the image and each relocation's target inside it (the system loader writes there
    unchecked). Not IREE's import and relocation-type rules: a system library may link against
    libc. Nothing of the library runs."""
    module, phdrs, s = _map(data)
    try:
        dyn = _parse_dynamic(module, phdrs, s, symbols=False)
        entry = s.Elf_Rela.sizeof()
        tables = {tag: value for tag, value in dyn["entries"]}
        for table, size in ((DT["RELA"], DT["RELASZ"]), (DT["JMPREL"], DT["PLTRELSZ"])):
            if table not in tables or not tables.get(size):
                continue
            count = tables[size] // entry
            raw = module.read(module.bias + tables[table], count * entry, "relocation table")
            for i in range(count):
                r = s.Elf_Rela.parse(raw[i * entry:(i + 1) * entry])
                if not module.inside(module.bias + r.r_offset, s.elfclass // 8):
                    raise elf_error(f"relocation {i} targets 0x{r.r_offset:x}, outside the loaded image")
    finally:
        module.close()


def _map(data: bytes) -> tuple[ElfModule, list, Any]:
    """The header and program-header checks, then the PT_LOAD segments mapped (not yet protected)."""
    m = _host_machine()
    if m.name != "x86_64":
        raise elf_error(f"ireeabi's ELF loader applies x86_64 relocations only; this host is {m.name}",
                        StatusCode.UNIMPLEMENTED)
    s = elf_structs(m.pointer_size)
    phdrs = read_phdrs(data, s, verify_header(data, s, _E_MACHINE[m.name]))
    return _load_segments(data, phdrs), phdrs, s


def read_phdrs(data: bytes, s: Any, ehdr: Any) -> list:
    """The program headers of a verified header, each PT_LOAD's file bytes within the file
    (iree_elf_module_verify_phdr_table)."""
    phdrs = [s.Elf_Phdr.parse(data[ehdr.e_phoff + i * ehdr.e_phentsize:][:ehdr.e_phentsize])
             for i in range(ehdr.e_phnum)]
    for p in phdrs:
        if segment_type(p) == PT_LOAD and p.p_offset + p.p_filesz > len(data):
            raise elf_error(f"phdr reference outside of file extents: {p.p_offset}-{p.p_offset + p.p_filesz}"
                            f"of max {len(data)}")
    return phdrs


def segment_type(p: Any) -> int:
    t = p.p_type
    return t if isinstance(t, int) else {"PT_LOAD": PT_LOAD, "PT_DYNAMIC": PT_DYNAMIC,
                                          "PT_GNU_RELRO": PT_GNU_RELRO}.get(t, -1)


def verify_header(data: bytes, s: Any, machine: int) -> Any:
    """iree_elf_module_verify_ehdr, check by check."""
    size = s.Elf_Ehdr.sizeof()
    if len(data) < size:
        raise elf_error(f"ELF data provided ({len(data)}) is smaller than ehdr ({size})")
    if data[:4] != b"\x7fELF":
        raise elf_error("data provided does not contain the ELF identifier")
    if data[4] != (2 if s.elfclass == 64 else 1):
        raise elf_error(f"system/ELF class mismatch: expected {s.elfclass}-bit")
    if data[5] != 1:
        raise elf_error("system/ELF endianness mismatch: expected little-endian")
    raw = _structs_raw(s, data[:size])
    if raw["e_version"] != 1:
        raise elf_error("ELF version unsupported; expected 1")
    if raw["e_machine"] != machine:
        raise elf_error(f"ELF machine specification ({raw['e_machine']:04X}) does not match the running "
                        "architecture")
    if raw["e_type"] != 3:  # ET_DYN
        raise elf_error("only shared object ELFs are supported")
    if (raw["e_ehsize"] != size or raw["e_phentsize"] != s.Elf_Phdr.sizeof()
            or raw["e_shentsize"] != s.Elf_Shdr.sizeof()):
        raise elf_error("ELF entity size mismatch")
    if raw["e_phoff"] == 0 or raw["e_phnum"] == 0 or \
            raw["e_phoff"] + raw["e_phnum"] * raw["e_phentsize"] > len(data):
        raise elf_error("invalid mandatory phdr table")
    if raw["e_shoff"] == 0 or raw["e_shnum"] == 0 or \
            raw["e_shoff"] + raw["e_shnum"] * raw["e_shentsize"] > len(data):
        raise elf_error("invalid mandatory shdr table")
    return s.Elf_Ehdr.parse(data[:size])


def _structs_raw(s: Any, header: bytes) -> dict:
    """The ehdr's integer fields as stored (pyelftools names known enum values)."""
    import struct
    fmt = "<16sHHIQQQIHHHHHH" if s.elfclass == 64 else "<16sHHIIIIIHHHHHH"
    names = ("e_ident", "e_type", "e_machine", "e_version", "e_entry", "e_phoff", "e_shoff", "e_flags",
             "e_ehsize", "e_phentsize", "e_phnum", "e_shentsize", "e_shnum", "e_shstrndx")
    return dict(zip(names, struct.unpack(fmt, header[:struct.calcsize(fmt)])))


def _load_segments(data: bytes, phdrs: list) -> ElfModule:
    """iree_elf_module_calculate_vaddr_range + load_segments: one reservation, the file bytes copied."""
    loads = [p for p in phdrs if segment_type(p) == PT_LOAD]
    if loads:
        lo = min(_align_start(p.p_vaddr, p.p_align) for p in loads)
        hi = max(_align_end(p.p_vaddr + p.p_memsz, p.p_align) for p in loads)
    else:
        lo = hi = 0
    size = _align_end(max(hi - lo, 0), PAGE)
    if size > MAX_IMAGE or hi < lo:
        raise elf_error(f"ELF segments span {hi - lo} bytes of address space; ireeabi reserves at most "
                        f"{MAX_IMAGE}", StatusCode.RESOURCE_EXHAUSTED)
    libc = _libc()
    base = libc.mmap(None, max(size, PAGE), _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_ANONYMOUS, -1, 0)
    if base in (None, ctypes.c_void_p(-1).value):
        raise elf_error(f"cannot reserve {size} bytes for the ELF image", StatusCode.RESOURCE_EXHAUSTED)
    module = ElfModule(base, max(size, PAGE), base - lo)
    try:
        for p in loads:
            if p.p_filesz:
                module.write(module.bias + p.p_vaddr, data[p.p_offset:p.p_offset + p.p_filesz],
                             "PT_LOAD segment")
    except BaseException:
        module.close()
        raise
    return module


def _parse_dynamic(module: ElfModule, phdrs: list, s: Any, symbols: bool = True) -> dict:
    """iree_elf_module_parse_dynamic_tables: every entry of PT_DYNAMIC (IREE does not stop at
    DT_NULL), read from the loaded image. `symbols`: the symbol table's presence is checked too (a
    system library may have only DT_GNU_HASH, which IREE's loader does not read, and dlopen does)."""
    dyn_phdr = next((p for p in phdrs if segment_type(p) == PT_DYNAMIC), None)
    entry = s.Elf_Dyn.sizeof()
    count = dyn_phdr.p_filesz // entry if dyn_phdr is not None else 0
    if not count or dyn_phdr is None:
        raise elf_error("no PT_DYNAMIC/.dynamic segment")
    raw = module.read(module.bias + dyn_phdr.p_vaddr, count * entry, ".dynamic table")
    word = "<q" if s.elfclass == 64 else "<i"
    import struct
    tags: list[tuple[int, int]] = []
    for i in range(count):
        tag = struct.unpack_from(word, raw, i * entry)[0]
        value = struct.unpack_from(word.upper(), raw, i * entry + entry // 2)[0]
        tags.append((tag, value))
    dyn: dict = {"entries": tags}
    for tag, value in tags:
        if tag == DT["STRTAB"]:
            module.dynstr = module.bias + value
        elif tag == DT["STRSZ"]:
            module.dynstr_size = value
        elif tag == DT["SYMTAB"]:
            module.dynsym = module.bias + value
        elif tag == DT["SYMENT"]:
            if value != s.Elf_Sym.sizeof():
                raise elf_error("DT_SYMENT size mismatch")
        elif tag == DT["HASH"]:
            hash_words = module.read(module.bias + value, 8, "DT_HASH table")
            module.dynsym_count = struct.unpack_from("<I", hash_words, 4)[0]  # nchain: the symbol count
        elif tag == DT["INIT"]:
            dyn["init"] = value
        elif tag == DT["INIT_ARRAY"]:
            dyn["init_array"] = module.bias + value
        elif tag == DT["INIT_ARRAYSZ"]:
            dyn["init_array_count"] = value  # as IREE stores it: the byte size, counted as entries
        elif tag == DT["RELENT"]:
            if value != 2 * (s.elfclass // 8):
                raise elf_error("DT_RELENT size mismatch")
        elif tag == DT["RELAENT"]:
            if value != s.Elf_Rela.sizeof():
                raise elf_error("DT_RELAENT size mismatch")
    if symbols and (not module.dynstr or not module.dynstr_size or not module.dynsym
                    or not module.dynsym_count):
        raise elf_error("missing .dynsym/.dynstr in ELF .dynamic segment")
    return dyn


def _symbol(module: ElfModule, s: Any, i: int) -> Any:
    size = s.Elf_Sym.sizeof()
    return s.Elf_Sym.parse(module.read(module.dynsym + i * size, size, f"symbol {i}"))


def _verify_no_imports(module: ElfModule, s: Any) -> None:
    """iree_elf_module_verify_no_imports (slot 0 is the null symbol)."""
    for i in range(1, module.dynsym_count):
        sym = _symbol(module, s, i)
        if sym.st_shndx in ("SHN_UNDEF", SHN_UNDEF):
            name = module.cstring(module.dynstr + sym.st_name, "import name").decode("utf-8", "replace") \
                if sym.st_name else "(null)"
            raise elf_error(f"ELF imports one or more symbols (trying '{name}'); imports are not supported "
                            "in the platform-agnostic loader", StatusCode.UNAVAILABLE)


def _apply_relocations(module: ElfModule, dyn: dict, s: Any) -> None:
    """arch/x86_64.c iree_elf_arch_apply_relocations: DT_RELA then the PLT's DT_JMPREL."""
    rela = rela_size = plt = plt_size = None
    for tag, value in dyn["entries"]:
        if tag == DT["RELA"]:
            rela = module.bias + value
        elif tag == DT["RELASZ"]:
            rela_size = value
        elif tag == DT["PLTREL"]:
            if value != DT["RELA"]:
                raise elf_error("unsupported DT_PLTREL != DT_RELA")
        elif tag == DT["JMPREL"]:
            plt = module.bias + value
        elif tag == DT["PLTRELSZ"]:
            plt_size = value
        elif tag in (DT["REL"], DT["RELSZ"]):
            raise elf_error("unsupported DT_REL relocations")
    entry = s.Elf_Rela.sizeof()
    for table, size in ((rela, rela_size), (plt, plt_size)):
        if table is None or not size:
            continue
        count = size // entry
        raw = module.read(table, count * entry, "relocation table")
        for i in range(count):
            _relocate(module, s, s.Elf_Rela.parse(raw[i * entry:(i + 1) * entry]))


def _relocate(module: ElfModule, s: Any, r: Any) -> None:
    import struct
    kind = r.r_info_type
    if kind == _R_X86_64["NONE"]:
        return
    sym_addr = 0
    ordinal = r.r_info_sym
    if ordinal:
        if ordinal >= module.dynsym_count:
            raise elf_error(f"invalid symbol in relocation: {ordinal}", StatusCode.OUT_OF_RANGE)
        sym_addr = module.bias + _symbol(module, s, ordinal).st_value
    where = module.bias + r.r_offset
    mask = 0xFFFFFFFFFFFFFFFF
    if kind == _R_X86_64["RELATIVE"]:
        value, fmt = (module.bias + r.r_addend) & mask, "<Q"
    elif kind in (_R_X86_64["JUMP_SLOT"], _R_X86_64["GLOB_DAT"], _R_X86_64["COPY"]):
        value, fmt = sym_addr & mask, "<Q"
    elif kind == _R_X86_64["64"]:
        value, fmt = (sym_addr + r.r_addend) & mask, "<Q"
    elif kind == _R_X86_64["32"]:
        value, fmt = (sym_addr + r.r_addend) & 0xFFFFFFFF, "<I"
    elif kind == _R_X86_64["32S"]:
        value, fmt = ((sym_addr + r.r_addend + (1 << 31)) & 0xFFFFFFFF) - (1 << 31), "<i"
    elif kind == _R_X86_64["PC32"]:
        value, fmt = (sym_addr + r.r_addend - where) & 0xFFFFFFFF, "<I"
    else:
        raise elf_error(f"unimplemented x86_64 relocation type {kind:08X}", StatusCode.UNIMPLEMENTED)
    module.write(where, struct.pack(fmt, value), "relocation target")


def _protect_segments(module: ElfModule, phdrs: list) -> None:
    """iree_elf_module_protect_segments: each PT_LOAD's access (W or X imply R; W+X refused), then
    PT_GNU_RELRO read-only."""
    libc = _libc()

    def protect(vaddr: int, size: int, prot: int) -> None:
        lo = _align_start(module.bias + vaddr, PAGE)
        hi = _align_end(module.bias + vaddr + size, PAGE)
        if size and not (module.base <= lo and hi <= module.end):
            raise elf_error(f"ELF segment at vaddr 0x{vaddr:x} (+{size}) lies outside the loaded image")
        if hi > lo and libc.mprotect(lo, hi - lo, prot) != 0:
            raise elf_error(f"cannot protect the ELF segment at vaddr 0x{vaddr:x}", StatusCode.INTERNAL)
        if hi > lo:  # later protections override earlier ones for these pages
            module.unreadable = [(a, b) for a, b in module.unreadable if b <= lo or a >= hi] + \
                ([(lo, hi)] if not prot & _PROT_READ else [])

    for p in phdrs:
        if segment_type(p) != PT_LOAD:
            continue
        if p.p_flags & PF_X and p.p_flags & PF_W:
            raise elf_error("unable to create a writable executable segment", StatusCode.PERMISSION_DENIED)
        prot = ((_PROT_READ if p.p_flags & (PF_R | PF_W | PF_X) else 0) | (_PROT_WRITE if p.p_flags & PF_W else 0)
                | (_PROT_EXEC if p.p_flags & PF_X else 0))
        protect(p.p_vaddr, p.p_memsz, prot)
    for p in phdrs:
        if segment_type(p) == PT_GNU_RELRO:
            protect(p.p_vaddr, p.p_memsz, _PROT_READ)


def executable(module: ElfModule, address: int) -> bool:
    """Whether code at `address` lies in the image (ireeabi calls nothing outside it)."""
    return module.inside(address, 1)


def _run_initializers(module: ElfModule, dyn: dict, s: Any, cpu_time: "float | None") -> None:
    """iree_elf_module_run_initializers: DT_INIT, then DT_INIT_ARRAY's entries (0 and -1 skipped),
    each under the fault trap and only inside the image."""
    import struct
    word = s.elfclass // 8
    calls = []
    if dyn.get("init"):
        calls.append(("DT_INIT", module.bias + dyn["init"]))
    if dyn.get("init_array") and dyn.get("init_array_count"):
        n = dyn["init_array_count"]
        raw = module.read(dyn["init_array"], n * word, "DT_INIT_ARRAY")
        for i in range(n):
            ptr = struct.unpack_from("<Q" if word == 8 else "<I", raw, i * word)[0]
            if ptr in (0, (1 << (8 * word)) - 1):
                continue
            calls.append((f"DT_INIT_ARRAY[{i}]", module.bias + ptr))
    for what, fn in calls:
        if not executable(module, fn):
            raise elf_error(f"ELF initializer {what} at 0x{fn:x} lies outside the loaded image: IREE would "
                            "jump there")
        _call(fn, 0, what=f"ELF initializer {what}", cpu_time=cpu_time)


def lookup_export(module: ElfModule, name: str) -> int:
    """iree_elf_module_lookup_export: a global or weak symbol named `name`, searched from the last
    one; its host address."""
    s = elf_structs(_host_machine().pointer_size)
    wanted = name.encode()
    for i in range(module.dynsym_count - 1, 0, -1):
        sym = _symbol(module, s, i)
        if sym.st_info.bind not in ("STB_GLOBAL", "STB_WEAK") or not sym.st_name:
            continue
        if module.cstring(module.dynstr + sym.st_name, f"symbol {i} name") == wanted:
            return module.bias + sym.st_value
    raise elf_error(f"exported symbol with name '{name}' not found in module", StatusCode.NOT_FOUND)


def query(module: ElfModule, fn: int, version: int, environment: int, cpu_time: "float | None" = None) -> int:
    """The library's query function, called under the fault trap within `cpu_time` CPU seconds
    (None: no bound)."""
    if not executable(module, fn):
        raise elf_error(f"iree_hal_executable_library_query at 0x{fn:x} lies outside the loaded image")
    return _call(fn, 1, version, environment, what="iree_hal_executable_library_query", cpu_time=cpu_time)


# -- target memory: the image in the program's heap -------------------------------------------------


__all__ = ["ElfModule", "load", "validate", "lookup_export", "query", "executable", "PAGE", "DT", "MAX_IMAGE",
           "SHN_UNDEF", "elf_error", "segment_type", "elf_structs", "verify_header", "read_phdrs", "PT_LOAD", "PT_DYNAMIC",
           "PT_GNU_RELRO", "PF_R", "PF_W", "PF_X"]
