"""Target memory (`load_into_heap(data, heap) -> HeapElfImage`): the same steps for the data model of
`heap.machine` (x86_64, aarch64, riscv64, riscv32, armv7, i386), with the image placed in one
allocation of the program's heap at TARGET addresses, so a kernel run by an emulated CPU that maps
the heap's arena sees the same addresses; nothing of the library runs here. IREE's checks, statuses
and messages are kept (ehdr, phdr table, .dynamic, imports, the arch file's relocation set and its
refusals, W+X segments); .dynamic, .dynsym and the relocation tables are read from the loaded image
with pyelftools' structs for the file's class. Every table, symbol, string and relocation target is
checked against the image, and what IREE would touch outside it is refused (FAILED_PRECONDITION
"... lies outside the loaded image"). Work stays proportional to the file: zero entries are
skipped in bulk, and PT_LOAD segments may not copy more file bytes than the file holds (only
overlapping segments do; refused). A wasm32 heap gets UNIMPLEMENTED: its kernels are not ELF.

`HeapElfImage` gives:
- `machine`: the target's name; `heap`: the heap holding the image.
- `base`: target address of vaddr 0 (IREE's vaddr_bias); `start`, `size`: the allocation (whole
  4 KiB pages, aligned to the largest power-of-two p_align of PT_LOAD, at least a page, at most
  2 MiB).
- `segments`: the image's page protection after IREE's protect step, as (target address, size,
  readable, writable, executable) runs covering [start, start + size) in address order: PT_LOAD
  access widened as IREE widens it (W or X imply R), then PT_GNU_RELRO read-only; pages no segment
  covers are inaccessible (IREE reserves them without committing).
- `initializers`: target addresses of DT_INIT then of DT_INIT_ARRAY's entries (0 and -1 skipped),
  in IREE's order, not run. As IREE does, the array's entries are read after relocation, biased
  again, and DT_INIT_ARRAYSZ (a byte size) is taken as the entry count.
- `lookup(name)`: the target address of an exported symbol (IREE's rule: the last GLOBAL or WEAK
  symbol of that name; NOT_FOUND otherwise); `iree_hal_executable_library_query` is the one IREE
  looks up. The value is bias + st_value as the ELF gives it: a Thumb function on ARM keeps bit 0.
- `close()`: frees the allocation (idempotent; the image is also a context manager).

Relocations follow the arch file of the heap's target (runtime/src/iree/hal/local/elf/arch/*.c,
unchanged in IREE since 2023), arithmetic wrapping at the target's word: x86_64 reads DT_RELA and
DT_JMPREL (DT_PLTREL must be DT_RELA); aarch64 and riscv read DT_RELA only, i386 and ARM DT_REL
only, and IREE leaves their DT_JMPREL (PLT) slots as the file has them, so does ireeabi (unless the
linker's DT_RELASZ spans .rela.plt too, as GNU ld's does on riscv). The other kind of table is
refused with IREE's FAILED_PRECONDITION; an unhandled type with its UNIMPLEMENTED message. IREE's
own arithmetic is kept where it departs from the psABI (ARM REL32 subtracts r_offset, not the
place; aarch64 ABS64 adds to the stored word).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from elftools.elf.structs import ELFStructs

from ...base.heap import Heap
from ...base.status import StatusError

from .elf_loader import (DT, MAX_IMAGE, PF_R, PF_W, PF_X, PT_DYNAMIC, PT_GNU_RELRO, PT_LOAD,
                                          SHN_UNDEF, elf_error, read_phdrs, segment_type, verify_header)
from ...base.status import StatusCode

TARGET_PAGE = 4096  # the page the emulated CPU protects (every target here uses 4 KiB pages)
_MAX_ALIGN = 1 << 21  # a larger p_align still gets this alignment (IREE itself gives only a page)
_IMAGE_TAG = "ELF image"


@dataclass(frozen=True)
class _Arch:
    """What IREE's arch/<file>.c of one target decides: its e_machine, which tables it reads
    (`rela`: DT_RELA, else DT_REL; `jmprel`: DT_JMPREL too, x86_64 only) and, per relocation type,
    (bytes written, the value as a function of stored word, S, A, P, bias and r_offset)."""

    e_machine: int
    em_name: str
    rela: bool
    jmprel: bool
    label: str  # as the arch file's "unimplemented <label> relocation type" names it
    types: dict


def _arch_table() -> dict[str, _Arch]:
    def keep(width: int, f: Any) -> tuple[int, Any]:
        return width, f

    # f(stored, S, A, P, bias, r_offset); REL tables have no A (0), RELA ones ignore `stored` unless
    # the arch file adds to the stored word (aarch64 ABS64).
    x86_64 = {8: keep(8, lambda w, S, A, P, b, o: b + A), 7: keep(8, lambda w, S, A, P, b, o: S),
              6: keep(8, lambda w, S, A, P, b, o: S), 5: keep(8, lambda w, S, A, P, b, o: S),
              1: keep(8, lambda w, S, A, P, b, o: S + A), 10: keep(4, lambda w, S, A, P, b, o: S + A),
              11: keep(4, lambda w, S, A, P, b, o: S + A),  # int32 store: the same low 4 bytes
              2: keep(4, lambda w, S, A, P, b, o: S + A - P)}
    i386 = {7: keep(4, lambda w, S, A, P, b, o: S), 6: keep(4, lambda w, S, A, P, b, o: S),
            8: keep(4, lambda w, S, A, P, b, o: w + b), 1: keep(4, lambda w, S, A, P, b, o: w + S),
            2: keep(4, lambda w, S, A, P, b, o: w + S - P)}
    # ARM REL32: IREE subtracts r_offset (not the place bias + r_offset); kept as IREE computes it.
    arm = {2: keep(4, lambda w, S, A, P, b, o: w + S), 3: keep(4, lambda w, S, A, P, b, o: w + S - o),
           21: keep(4, lambda w, S, A, P, b, o: S), 22: keep(4, lambda w, S, A, P, b, o: S),
           23: keep(4, lambda w, S, A, P, b, o: w + b)}
    aarch64 = {257: keep(8, lambda w, S, A, P, b, o: w + S + A), 1025: keep(8, lambda w, S, A, P, b, o: S + A),
               1026: keep(8, lambda w, S, A, P, b, o: S + A), 1027: keep(8, lambda w, S, A, P, b, o: b + A)}
    riscv32 = {1: keep(4, lambda w, S, A, P, b, o: S + A), 5: keep(4, lambda w, S, A, P, b, o: S),
               3: keep(4, lambda w, S, A, P, b, o: b + A)}
    riscv64 = {1: keep(4, lambda w, S, A, P, b, o: S + A), 2: keep(8, lambda w, S, A, P, b, o: S + A),
               5: keep(8, lambda w, S, A, P, b, o: S), 3: keep(8, lambda w, S, A, P, b, o: b + A)}
    return {
        "x86_64": _Arch(0x3E, "EM_X86_64", True, True, "x86_64", x86_64),
        "aarch64": _Arch(0xB7, "EM_AARCH64", True, False, "aarch64", aarch64),
        "riscv64": _Arch(0xF3, "EM_RISCV", True, False, "riscv64", riscv64),
        "riscv32": _Arch(0xF3, "EM_RISCV", True, False, "riscv32", riscv32),
        "armv7": _Arch(0x28, "EM_ARM", False, False, "ARM", arm),
        "i386": _Arch(0x03, "EM_386", False, False, "x86", i386),
    }


_ARCHES = _arch_table()


@lru_cache(maxsize=None)
def _file_structs(elfclass: int, em_name: str) -> Any:
    """pyelftools' structs for a little-endian file of `elfclass` bits (every target is LE)."""
    s = ELFStructs(little_endian=True, elfclass=elfclass)
    s.create_basic_structs()
    s.create_advanced_structs(e_type="ET_DYN", e_machine=em_name, e_ident_osabi="ELFOSABI_SYSV")
    return s


@lru_cache(maxsize=None)
def _dt_values(em_name: str) -> dict:
    """d_tag names pyelftools decodes -> their numbers (unknown tags stay numbers)."""
    from elftools.elf import enums
    values = dict(enums.ENUM_D_TAG_COMMON)
    values.update(enums.ENUMMAP_EXTRA_D_TAG_MACHINE.get(em_name, {}))
    return values


@dataclass(eq=False)
class HeapElfImage:
    """An embedded ELF loaded into a heap's memory at target addresses (see the module docstring)."""

    heap: Heap
    machine: str
    base: int
    start: int
    size: int
    segments: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    closed: bool = False
    _dynsym: int = field(default=0, repr=False)
    _dynsym_count: int = field(default=0, repr=False)
    _dynstr: int = field(default=0, repr=False)
    _structs: Any = field(default=None, repr=False)

    @property
    def end(self) -> int:
        return self.start + self.size

    def inside(self, address: int, n: int) -> bool:
        return self.start <= address and address + n <= self.end

    def _check(self, address: int, n: int, what: str, verb: str = "read") -> None:
        if not self.inside(address, n):
            raise elf_error(f"ELF {what} at 0x{address:x} (+{n}) lies outside the loaded image "
                            f"[0x{self.start:x}, 0x{self.end:x}): IREE would {verb} memory it does not own")

    def read(self, address: int, n: int, what: str) -> bytes:
        self._check(address, n, what)
        return self.heap.read(address, n)

    def write(self, address: int, data: bytes, what: str) -> None:
        self._check(address, len(data), what, "write")
        self.heap.write(address, data)

    def cstring(self, address: int, what: str) -> bytes:
        """The NUL-terminated string at `address` (IREE reads it as far as the NUL goes)."""
        self._check(address, 1, what)
        raw = self.heap.read(address, self.end - address)
        stop = raw.find(b"\0")
        if stop < 0:
            raise elf_error(f"ELF {what} at 0x{address:x} is not terminated inside the loaded image: IREE "
                            "would read memory it does not own")
        return raw[:stop]

    def _symbol(self, i: int) -> Any:
        size = self._structs.Elf_Sym.sizeof()
        address = (self._dynsym + i * size) & self.heap.machine.word_mask
        return self._structs.Elf_Sym.parse(self.read(address, size, f"symbol {i}"))

    def _names(self, st_name: int, wanted: bytes, i: int) -> bool:
        """strcmp(dynstr + st_name, wanted) == 0, reading no further than strcmp would."""
        address = (self._dynstr + st_name) & self.heap.machine.word_mask
        self._check(address, 1, f"symbol {i} name")
        n = min(len(wanted) + 1, self.end - address)
        raw = self.heap.read(address, n)
        if raw == (wanted + b"\0")[:n] and n < len(wanted) + 1:
            raise elf_error(f"ELF symbol {i} name at 0x{address:x} runs to the end of the loaded image: IREE "
                            "would read memory it does not own")
        return raw == wanted + b"\0"

    def lookup(self, name: str) -> int:
        """iree_elf_module_lookup_export: the last GLOBAL or WEAK symbol called `name`; its target
        address (bias + st_value, wrapped at the target's word; a Thumb function keeps bit 0)."""
        if self.closed:
            raise elf_error(f"lookup of '{name}' in a closed ELF image")
        wanted = name.encode()
        for i in range(self._dynsym_count - 1, 0, -1):
            sym = self._symbol(i)
            if sym.st_info.bind not in ("STB_GLOBAL", "STB_WEAK") or not sym.st_name:
                continue
            if self._names(sym.st_name, wanted, i):
                return (self.base + sym.st_value) & self.heap.machine.word_mask
        raise elf_error(f"exported symbol with name '{name}' not found in module", StatusCode.NOT_FOUND)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.heap.free(self.start)

    def __enter__(self) -> "HeapElfImage":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_into_heap(data: bytes, heap: Heap) -> HeapElfImage:
    """iree_elf_module_initialize_from_memory for the data model of `heap.machine`, the image in
    one allocation of `heap` at target addresses; nothing runs (see the module docstring). Every
    refusal is an ExecutableError carrying IREE's status code; the allocation is freed on failure."""
    data = bytes(data)
    m = heap.machine
    arch = _ARCHES.get(m.name)
    if arch is None:
        raise elf_error(f"no ELF kernels on {m.name}: its llvm-cpu kernels are not ELF files", StatusCode.UNIMPLEMENTED)
    s = _file_structs(8 * m.pointer_size, arch.em_name)
    phdrs = read_phdrs(data, s, verify_header(data, s, arch.e_machine))
    image = _reserve(data, phdrs, heap, m.name, s)
    try:
        dyn = _heap_dynamic(image, phdrs, s, arch)
        _heap_verify_no_imports(image, m.name)
        _heap_relocate(image, dyn, s, arch)
        image.segments = _heap_protection(image, phdrs)
        image.initializers = _heap_initializers(image, dyn)
    except BaseException:
        image.close()
        raise
    return image


def _reserve(data: bytes, phdrs: list, heap: Heap, name: str, s: Any) -> HeapElfImage:
    """iree_elf_module_calculate_vaddr_range + load_segments, in the target's word arithmetic."""
    mask = heap.machine.word_mask
    loads = [p for p in phdrs if segment_type(p) == PT_LOAD]
    copied = sum(p.p_filesz for p in loads)
    if copied > len(data):  # only overlapping segments do this; it would make work unbounded
        raise elf_error(f"PT_LOAD segments copy {copied} file bytes from a {len(data)}-byte file (they overlap); "
                        "ireeabi refuses overlapping segments")
    if loads:
        lo = min(p.p_vaddr & ~(p.p_align - 1) & mask for p in loads)
        hi = max((((p.p_vaddr + p.p_memsz) & mask) + p.p_align - 1) & ~(p.p_align - 1) & mask for p in loads)
    else:
        lo = hi = 0
    length = (hi - lo) & mask  # wraps as IREE's iree_host_size_t does when hi < lo
    size = (length + TARGET_PAGE - 1) // TARGET_PAGE * TARGET_PAGE
    if size > MAX_IMAGE:
        raise elf_error(f"ELF segments span {length} bytes of address space; ireeabi reserves at most "
                        f"{MAX_IMAGE}", StatusCode.RESOURCE_EXHAUSTED)
    size = max(size, TARGET_PAGE)
    aligns = [p.p_align for p in loads if p.p_align > 0 and not p.p_align & (p.p_align - 1)]
    align = min(max([TARGET_PAGE] + aligns), _MAX_ALIGN)
    try:
        start = heap.malloc(size, zero=True, align=align, tag=_IMAGE_TAG)
    except StatusError as e:
        raise elf_error(f"cannot reserve {size} bytes for the ELF image: {e}", StatusCode.RESOURCE_EXHAUSTED) from None
    image = HeapElfImage(heap, name, (start - lo) & mask, start, size, _structs=s)
    try:
        for i, p in enumerate(loads):
            # IREE commits [vaddr, vaddr + memsz) and copies p_filesz bytes there; the memory is
            # zeroed already (the bss needs nothing more, as in IREE).
            at = (image.base + p.p_vaddr) & mask
            image._check(at, max(p.p_memsz, p.p_filesz), f"PT_LOAD segment {i}", "write")
            if p.p_filesz:
                image.write(at, data[p.p_offset:p.p_offset + p.p_filesz], f"PT_LOAD segment {i}")
    except BaseException:
        image.close()
        raise
    return image


def _nonzero_rows(image: HeapElfImage, address: int, count: int, entry: int, word: int, column: int,
                  keep: int, what: str) -> list[int]:
    """Indices of the rows of a table in the image whose `column`-th word, masked by `keep`, is not
    zero: found in bulk so that a table of zeros (bss) costs no per-row Python work."""
    import numpy as np
    image._check(address, count * entry, what)
    if not count:
        return []
    # A view of the image (no copy); the masked column is a new array, a snapshot of this moment.
    words = np.frombuffer(image.heap.view(address, count * entry), dtype="<u8" if word == 8 else "<u4")
    col = words.reshape(count, entry // word)[:, column] & np.array(keep, dtype=words.dtype)
    return [int(i) for i in np.flatnonzero(col)]


def _heap_dynamic(image: HeapElfImage, phdrs: list, s: Any, arch: _Arch) -> dict:
    """iree_elf_module_parse_dynamic_tables on the loaded image, entry by entry in IREE's order."""
    mask = image.heap.machine.word_mask
    word = s.elfclass // 8
    dyn_phdr = next((p for p in phdrs if segment_type(p) == PT_DYNAMIC), None)
    entry = s.Elf_Dyn.sizeof()
    count = dyn_phdr.p_filesz // entry if dyn_phdr is not None else 0
    if not count or dyn_phdr is None:
        raise elf_error("no PT_DYNAMIC/.dynamic segment")
    table = (image.base + dyn_phdr.p_vaddr) & mask
    values = _dt_values(arch.em_name)
    entries: list[tuple[int, int]] = []
    for i in _nonzero_rows(image, table, count, entry, word, 0, mask, ".dynamic table"):
        d = s.Elf_Dyn.parse(image.heap.read(table + i * entry, entry))
        tag = d.d_tag if isinstance(d.d_tag, int) else values[d.d_tag]
        entries.append((tag, d.d_val))
    dyn: dict = {"entries": entries}
    dynstr = dynsym = None
    dynstr_size = dynsym_count = 0
    for tag, value in entries:  # DT_NULL (0) entries are ignored by IREE too
        if tag == DT["STRTAB"]:
            dynstr = (image.base + value) & mask
        elif tag == DT["STRSZ"]:
            dynstr_size = value
        elif tag == DT["SYMTAB"]:
            dynsym = (image.base + value) & mask
        elif tag == DT["SYMENT"]:
            if value != s.Elf_Sym.sizeof():
                raise elf_error("DT_SYMENT size mismatch")
        elif tag == DT["HASH"]:  # nchain, the symbol count, is the table's second 32-bit word
            at = (image.base + value + 4) & mask
            dynsym_count = int.from_bytes(image.read(at, 4, "DT_HASH table"), "little")
        elif tag == DT["INIT"]:
            dyn["init"] = value
        elif tag == DT["INIT_ARRAY"]:
            dyn["init_array"] = (image.base + value) & mask
        elif tag == DT["INIT_ARRAYSZ"]:
            dyn["init_array_count"] = value  # as IREE stores it: the byte size, counted as entries
        elif tag == DT["RELENT"]:
            if value != 2 * word:
                raise elf_error("DT_RELENT size mismatch")
        elif tag == DT["RELAENT"]:
            if value != s.Elf_Rela.sizeof():
                raise elf_error("DT_RELAENT size mismatch")
    if not dynstr or not dynstr_size or not dynsym or not dynsym_count:
        raise elf_error("missing .dynsym/.dynstr in ELF .dynamic segment")
    image._dynstr, image._dynsym, image._dynsym_count = dynstr, dynsym, dynsym_count
    return dyn


_NAME_SHOWN = 1024  # an import name longer than this is cut in the message


def _heap_verify_no_imports(image: HeapElfImage, machine: str) -> None:
    """iree_elf_module_verify_no_imports; an undefined symbol ends the walk, so it reads no more
    symbols than the file holds."""
    mask = image.heap.machine.word_mask
    for i in range(1, image._dynsym_count):
        sym = image._symbol(i)
        if sym.st_shndx in ("SHN_UNDEF", SHN_UNDEF):
            if sym.st_name:
                raw = image.cstring((image._dynstr + sym.st_name) & mask, "import name")
                name = raw[:_NAME_SHOWN].decode("utf-8", "replace") + ("..." if len(raw) > _NAME_SHOWN else "")
            else:
                name = "(null)"
            hint = ""
            if machine == "armv7" and name.startswith("__aeabi_unwind_cpp_pr"):
                hint = ("; armv7 kernels built with debug symbols import it: compile with "
                        "--iree-llvmcpu-debug-symbols=false")
            raise elf_error(f"ELF imports one or more symbols (trying '{name}'); imports are not supported "
                            f"in the platform-agnostic loader{hint}", StatusCode.UNAVAILABLE)


def _heap_relocate(image: HeapElfImage, dyn: dict, s: Any, arch: _Arch) -> None:
    """iree_elf_arch_apply_relocations of the heap's target: the tables it reads, in its order."""
    mask = image.heap.machine.word_mask
    table_tags = ("RELA", "RELASZ") if arch.rela else ("REL", "RELSZ")
    other = ("REL", "RELSZ") if arch.rela else ("RELA", "RELASZ")
    struct_ = s.Elf_Rela if arch.rela else s.Elf_Rel
    entry = struct_.sizeof()
    table = plt = None
    count = plt_count = 0
    for tag, value in dyn["entries"]:
        if tag == DT[table_tags[0]]:
            table = (image.base + value) & mask
        elif tag == DT[table_tags[1]]:
            count = value // entry
        elif tag in (DT[other[0]], DT[other[1]]):
            raise elf_error(f"unsupported DT_{other[0]} relocations")
        elif arch.jmprel and tag == DT["PLTREL"]:
            if value != DT["RELA"]:
                raise elf_error("unsupported DT_PLTREL != DT_RELA")
        elif arch.jmprel and tag == DT["JMPREL"]:
            plt = (image.base + value) & mask
        elif arch.jmprel and tag == DT["PLTRELSZ"]:
            plt_count = value // entry
    for address, n in ((table, count), (plt, plt_count)):
        if address and n > 0:  # a NULL table counts as none, as in IREE
            _heap_apply(image, s, arch, struct_, address, n)


def _heap_apply(image: HeapElfImage, s: Any, arch: _Arch, struct_: Any, table: int, count: int) -> None:
    """One relocation table, entry by entry as IREE walks it. Entries are read from the image as
    they are reached (a relocation may rewrite a later entry); entries of type 0 are skipped in bulk,
    and one that an earlier relocation made non-zero is visited when it is reached."""
    import heapq
    mask = image.heap.machine.word_mask
    word = s.elfclass // 8
    entry = struct_.sizeof()
    type_mask = 0xFF if word == 4 else 0xFFFFFFFF
    pending = _nonzero_rows(image, table, count, entry, word, 1, type_mask, "relocation table")
    heapq.heapify(pending)
    done = -1
    table_end = table + count * entry
    while pending:
        i = heapq.heappop(pending)
        if i <= done:
            continue
        done = i
        r = struct_.parse(image.heap.read(table + i * entry, entry))
        kind = r.r_info_type
        if kind == 0:
            continue
        sym_addr = 0
        if r.r_info_sym:
            if r.r_info_sym >= image._dynsym_count:
                raise elf_error(f"invalid symbol in relocation: {r.r_info_sym}", StatusCode.OUT_OF_RANGE)
            sym_addr = (image.base + image._symbol(r.r_info_sym).st_value) & mask
        rule = arch.types.get(kind)
        if rule is None:
            raise elf_error(f"unimplemented {arch.label} relocation type {kind:08X}", StatusCode.UNIMPLEMENTED)
        width, value = rule
        place = (image.base + r.r_offset) & mask
        stored = int.from_bytes(image.read(place, width, f"relocation {i} target"), "little")
        addend = r.r_addend if arch.rela else 0
        result = value(stored, sym_addr, addend, place, image.base, r.r_offset) & ((1 << (8 * width)) - 1)
        image.write(place, result.to_bytes(width, "little"), f"relocation {i} target")
        if place < table_end and table + (i + 1) * entry < place + width:  # a later entry rewritten
            first = max(i + 1, (place - table) // entry)
            last = min(count - 1, (place + width - 1 - table) // entry)
            for j in range(first, last + 1):
                heapq.heappush(pending, j)


def _heap_protection(image: HeapElfImage, phdrs: list) -> list:
    """iree_elf_module_protect_segments as a page map of the image: each PT_LOAD's access (W or X
    imply R; W+X refused as IREE refuses it), then PT_GNU_RELRO read-only; runs of equal access."""
    import numpy as np
    mask = image.heap.machine.word_mask
    pages = np.zeros(image.size // TARGET_PAGE, dtype=np.uint8)  # bit 0 R, 1 W, 2 X; 0: no access

    def protect(p: Any, access: int) -> None:
        at = (image.base + p.p_vaddr) & mask
        lo = at & ~(TARGET_PAGE - 1)
        hi = (at + p.p_memsz + TARGET_PAGE - 1) & ~(TARGET_PAGE - 1)
        if not (image.start <= lo and hi <= image.end):
            raise elf_error(f"ELF segment at vaddr 0x{p.p_vaddr:x} (+{p.p_memsz}) lies outside the loaded image")
        pages[(lo - image.start) // TARGET_PAGE:(hi - image.start) // TARGET_PAGE] = access

    for p in phdrs:
        if segment_type(p) != PT_LOAD:
            continue
        if p.p_flags & PF_X and p.p_flags & PF_W:
            raise elf_error("unable to create a writable executable segment", StatusCode.PERMISSION_DENIED)
        access = (1 if p.p_flags & (PF_R | PF_W | PF_X) else 0) | (2 if p.p_flags & PF_W else 0) \
            | (4 if p.p_flags & PF_X else 0)
        protect(p, access)
    for p in phdrs:
        if segment_type(p) == PT_GNU_RELRO:
            protect(p, 1)
    runs = []
    edges = [0] + [int(i) for i in np.flatnonzero(np.diff(pages)) + 1] + [len(pages)]
    for a, b in zip(edges, edges[1:]):
        access = int(pages[a])
        runs.append((image.start + a * TARGET_PAGE, (b - a) * TARGET_PAGE, bool(access & 1),
                     bool(access & 2), bool(access & 4)))
    return runs


def _heap_initializers(image: HeapElfImage, dyn: dict) -> list:
    """iree_elf_module_run_initializers' calls, not made: DT_INIT, then DT_INIT_ARRAY's entries
    (read after relocation, biased again, 0 and -1 skipped), each inside the image."""
    mask = image.heap.machine.word_mask
    word = image.heap.machine.pointer_size
    calls = []
    if dyn.get("init"):
        calls.append(("DT_INIT", (image.base + dyn["init"]) & mask))
    n = dyn.get("init_array_count", 0)
    if n:
        array = dyn.get("init_array")
        if not array:  # IREE would read the entries from address 0
            raise elf_error("ELF DT_INIT_ARRAYSZ without a DT_INIT_ARRAY: IREE would read the initializers "
                            "from address 0")
        for i in _nonzero_rows(image, array, n, word, word, 0, mask, "DT_INIT_ARRAY"):
            ptr = int.from_bytes(image.heap.read(array + i * word, word), "little")
            if ptr != mask:
                calls.append((f"DT_INIT_ARRAY[{i}]", (image.base + ptr) & mask))
    for what, fn in calls:
        if not image.inside(fn, 1):
            raise elf_error(f"ELF initializer {what} at 0x{fn:x} lies outside the loaded image: IREE would "
                            "jump there")
    return [fn for _, fn in calls]
