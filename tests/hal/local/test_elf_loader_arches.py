"""IREE's ELF loader on every ELF target, the image placed in the program's heap (`load_into_heap`).

Oracles: iree-compile's own kernels for each triple and small shared objects built here with the
cross compilers, read back with pyelftools. What a slot must hold after loading is what the psABI
says a loader writes (S + A, B + A, ...) computed from pyelftools' reading of the same file, or the
file's own word where IREE's arch file leaves a table alone; IREE's departures from the psABI
(ARM REL32) follow runtime/src/iree/hal/local/elf/arch/*.c. Hostile files must give an
ExecutableError, never another exception, and never a write outside the image: the bytes around
the image (red zones and neighbours) are compared before and after every load.
"""
from __future__ import annotations

import io
import random
import struct
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from support import iree_tools as tools
from support.debian_tools import debian_tool
from ireeabi.hal.local.elf_heap_loader import TARGET_PAGE, HeapElfImage, load_into_heap
from ireeabi.hal.local.executable_library import ExecutableError
from ireeabi.base.heap import Heap, tracked_heap
from ireeabi.vm.bytecode.module_file import read_module
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS
from ireeabi.base.status import StatusCode

PROGRAM = Path(__file__).parents[2] / "programs" / "add16.mlir"
QUERY = "iree_hal_executable_library_query"

# The library's foreign kernel flags, except riscv32 built single-float (+m,+f: a kernel without
# the D extension, which the library's +d build does not cover).
TRIPLES = {
    "riscv32": ("--iree-llvmcpu-target-triple=riscv32-pc-linux-elf", "--iree-llvmcpu-target-cpu-features=+m,+f"),
    **{t: KERNEL_TARGET_FLAGS[t] for t in ("riscv64", "armv7", "aarch64", "i386")},
}
ARCHES = list(TRIPLES)

# Cross compilers per target (`-nostdlib -shared`; DT_HASH is the only symbol count IREE reads).
COMPILERS = {
    "x86_64": ["gcc"],
    "i386": ["gcc", "-m32"],
    "aarch64": ["aarch64-linux-gnu-gcc"],
    "armv7": ["arm-linux-gnueabihf-gcc", "-marm"],
    "riscv64": ["riscv64-linux-gnu-gcc"],
    "riscv32": ["riscv64-linux-gnu-gcc", "-march=rv32imf", "-mabi=ilp32f"],
}


def compiler_of(arch: str) -> list[str]:
    """The compiler's argv for `arch`, its Debian package installed when missing."""
    command, *flags = COMPILERS[arch]
    return [debian_tool(command), *flags]


SO_FLAGS = ["-O1", "-shared", "-nostdlib", "-Wl,--hash-style=sysv"]

# Data holding pointers to global (preemptible) symbols, a GOT access and a PLT call.
POINTERS_C = """
int shared_var = 7;
int other[4] = {1, 2, 3, 4};
int f(void) { return shared_var; }
int g(void) { return f() + other[1]; }
int *ptrs[] = {&shared_var, &other[2]};
int (*fns[])(void) = {f, g};
static int local = 3;
int *lp = &local;
"""
# Initial-exec TLS: a relocation type no arch file of IREE handles.
TLS_C = "__thread int t = 1;\nint *tp(void) { return &t; }\n"
# Non-PIC code: a text relocation that is PC-relative (R_386_PC32 on i386).
TEXTREL_C = """
int target_var = 5;
__attribute__((noinline)) int f(void) { return target_var; }
int g(void) { return f() + 1; }
"""
# The word "unimplemented <label> relocation type" of each arch file (IREE's message text).
LABELS = {"x86_64": "x86_64", "i386": "x86", "aarch64": "aarch64", "armv7": "ARM", "riscv64": "riscv64",
          "riscv32": "riscv32"}


# -- fixtures ---------------------------------------------------------------------------------------

def _embedded_elf(vmfb: bytes) -> bytes:
    segs = [s for s in read_module(vmfb).rodata_segments if vmfb[s.offset:s.offset + 4] == b"\x7fELF"]
    assert len(segs) == 1, "add16 has one executable"
    return vmfb[segs[0].offset:segs[0].offset + segs[0].length]


@lru_cache(maxsize=None)
def kernel(arch: str, debug_symbols: bool = False) -> bytes:
    """add16's embedded ELF compiled by iree-compile for `arch` (cached per session)."""
    flags = list(TRIPLES[arch])
    if debug_symbols:
        flags.remove("--iree-llvmcpu-debug-symbols=false")
    return _embedded_elf(tools.compile_mlir(PROGRAM, None, "inline-dynamic", flags).read_bytes())


@lru_cache(maxsize=None)
def shared_object(arch: str, source: str, pic: bool = True) -> bytes:
    out = tools.session_dir() / "elf-arches"
    out.mkdir(exist_ok=True)
    name = f"{arch}-{abs(hash((source, pic)))}"
    (out / f"{name}.c").write_text(source)
    subprocess.run([*compiler_of(arch), *SO_FLAGS, "-fPIC" if pic else "-fno-PIC",
                    *(["-ftls-model=initial-exec"] if "__thread" in source else []),
                    "-o", str(out / f"{name}.so"), str(out / f"{name}.c")],
                   check=True, capture_output=True, timeout=120)
    return (out / f"{name}.so").read_bytes()


def elf_of(data: bytes) -> ELFFile:
    return ELFFile(io.BytesIO(data))


def relocations(elf: ELFFile) -> list[tuple[int, object, bool]]:
    """(vaddr of the entry, relocation, is applied by IREE) of every dynamic relocation. IREE's arch
    files read DT_RELA (or DT_REL) and, on x86_64 only, DT_JMPREL: a PLT entry is applied elsewhere
    only where the linker's DT_RELASZ happens to span .rela.plt too (GNU ld on riscv does that)."""
    tags = {t.entry.d_tag: t.entry.d_val for t in elf.get_section_by_name(".dynamic").iter_tags()}
    spans = []
    for table, size in (("DT_RELA", "DT_RELASZ"), ("DT_REL", "DT_RELSZ")):
        if table in tags:
            spans.append((tags[table], tags[table] + tags.get(size, 0)))
    if elf.header.e_machine == "EM_X86_64" and "DT_JMPREL" in tags:
        spans.append((tags["DT_JMPREL"], tags["DT_JMPREL"] + tags.get("DT_PLTRELSZ", 0)))
    out = []
    for sec in elf.iter_sections():
        if isinstance(sec, RelocationSection) and sec["sh_flags"] & 2:  # SHF_ALLOC: dynamic ones
            for i, r in enumerate(sec.iter_relocations()):
                at = sec["sh_addr"] + i * sec["sh_entsize"]
                out.append((at, r, any(lo <= at < hi for lo, hi in spans)))
    return out

@lru_cache(maxsize=None)
def _readelf_types(data: bytes) -> dict:
    """(r_offset, r_info) -> relocation type name, as binutils' readelf names it (pyelftools has no
    RISC-V names)."""
    path = tools.session_dir() / f"readelf-{abs(hash(data))}.so"
    path.write_bytes(data)
    out = subprocess.run([debian_tool("readelf"), "-rW", str(path)], check=True, capture_output=True, text=True).stdout
    names = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2].startswith("R_"):
            try:
                names[(int(parts[0], 16), int(parts[1], 16))] = parts[2]
            except ValueError:
                continue
    return names


def kind_of(data: bytes, r) -> str:
    return _readelf_types(data)[(r["r_offset"], r["r_info"])]


def type_name(data: bytes, number: int) -> str:
    """The name readelf gives relocation type `number` of this file's machine."""
    names = {info & (0xFF if elf_of(data).elfclass == 32 else 0xFFFFFFFF): n
             for (_, info), n in _readelf_types(data).items()}
    return names[number]


def word(elf: ELFFile) -> int:
    return elf.elfclass // 8


def file_word(data: bytes, elf: ELFFile, vaddr: int, width: int) -> int:
    """The `width`-byte word the file holds at `vaddr` (0 in the bss)."""
    for seg in elf.iter_segments():
        h = seg.header
        if h.p_type == "PT_LOAD" and h.p_vaddr <= vaddr and vaddr + width <= h.p_vaddr + h.p_memsz:
            off = vaddr - h.p_vaddr
            raw = data[h.p_offset + off:h.p_offset + min(off + width, h.p_filesz)]
            return int.from_bytes(raw.ljust(width, b"\0"), "little")
    raise AssertionError(f"vaddr 0x{vaddr:x} is in no PT_LOAD")


def image_word(img: HeapElfImage, vaddr: int, width: int) -> int:
    return int.from_bytes(img.heap.read(img.base + vaddr, width), "little")


def symbol_value(elf: ELFFile, index: int) -> int:
    return elf.get_section_by_name(".dynsym").get_symbol(index)["st_value"]


# -- iree-compile's kernels -------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHES)
def test_kernel_loads_as_the_file_says(arch):
    data = kernel(arch)
    elf = elf_of(data)
    w = word(elf)
    mask = (1 << (8 * w)) - 1
    relocs = relocations(elf)
    kinds = {kind_of(data, r) for _, r, _ in relocs}
    assert kinds == {f"R_{ {'i386': '386', 'armv7': 'ARM', 'aarch64': 'AARCH64'}.get(arch, 'RISCV')}_RELATIVE"}, kinds
    with tracked_heap(target=arch) as heap:
        img = load_into_heap(data, heap)
        assert img.machine == arch and img.heap is heap
        loads = [s.header for s in elf.iter_segments() if s.header.p_type == "PT_LOAD"]
        assert img.start % max(TARGET_PAGE, max(h.p_align for h in loads)) == 0
        assert img.size % TARGET_PAGE == 0 and img.base == img.start - min(h.p_vaddr for h in loads)
        slots = {r["r_offset"] for _, r, _ in relocs}
        # Every RELATIVE slot: base + addend (RELA), base + the stored word (REL).
        for _, r, _ in relocs:
            addend = r["r_addend"] if r.is_RELA() else file_word(data, elf, r["r_offset"], w)
            assert image_word(img, r["r_offset"], w) == (img.base + addend) & mask, hex(r["r_offset"])
        # Every other byte of the segments is the file's; the bss is zero.
        for h in loads:
            got = bytearray(heap.read(img.base + h.p_vaddr, h.p_memsz))
            want = bytearray(data[h.p_offset:h.p_offset + h.p_filesz].ljust(h.p_memsz, b"\0"))
            for slot in slots:
                if h.p_vaddr <= slot < h.p_vaddr + h.p_memsz:
                    at = slot - h.p_vaddr
                    got[at:at + w] = want[at:at + w] = bytes(w)
            assert got == want
            assert not any(heap.read(img.base + h.p_vaddr + h.p_filesz, h.p_memsz - h.p_filesz))
        query = elf.get_section_by_name(".dynsym").get_symbol_by_name(QUERY)[0]
        assert img.lookup(QUERY) == img.base + query["st_value"]
        # Protection: the query's page executable and not writable, .dynamic's page (RELRO) read
        # only, the runs cover the image exactly.
        runs = img.segments
        assert runs[0][0] == img.start and sum(r[1] for r in runs) == img.size
        assert all(a[0] + a[1] == b[0] for a, b in zip(runs, runs[1:]))

        def access(address: int) -> tuple:
            return next(r[2:] for r in runs if r[0] <= address < r[0] + r[1])

        assert access(img.lookup(QUERY)) == (True, False, True)
        dynamic = elf.get_section_by_name(".dynamic").header.sh_addr
        assert access(img.base + dynamic) == (True, False, False)
        tags = {t.entry.d_tag for t in elf.get_section_by_name(".dynamic").iter_tags()}
        assert img.initializers == [] and not tags & {"DT_INIT", "DT_INIT_ARRAY"}
        with pytest.raises(ExecutableError, match="NOT_FOUND: exported symbol with name 'nope' not found"):
            img.lookup("nope")
        img.close()
        img.close()  # idempotent
        assert heap.live() == []


def test_armv7_kernel_with_debug_symbols_imports_the_unwinder():
    data = kernel("armv7", debug_symbols=True)
    undefined = [s.name for s in elf_of(data).get_section_by_name(".dynsym").iter_symbols()
                 if s.name and s["st_shndx"] == "SHN_UNDEF"]
    assert undefined, "the oracle: debug symbols make the kernel import something"
    with tracked_heap(target="armv7") as heap:
        with pytest.raises(ExecutableError) as e:
            load_into_heap(data, heap)
    assert e.value.code == StatusCode.UNAVAILABLE
    assert e.value.message.startswith(
        f"ELF imports one or more symbols (trying '{undefined[0]}'); imports are not supported in the "
        "platform-agnostic loader")
    assert "--iree-llvmcpu-debug-symbols=false" in e.value.message


def test_the_host_model_loads_into_its_heap_too():
    data = kernel_x86_64()
    elf = elf_of(data)
    with tracked_heap(target="x86_64") as heap:
        img = load_into_heap(data, heap)
        q = elf.get_section_by_name(".dynsym").get_symbol_by_name(QUERY)[0]
        assert img.lookup(QUERY) == img.base + q["st_value"]
        img.close()


@lru_cache(maxsize=None)
def kernel_x86_64() -> bytes:
    return _embedded_elf(tools.compile_mlir(PROGRAM, None, "inline-dynamic").read_bytes())


# -- relocation types beyond RELATIVE ---------------------------------------------------------------

def _expected(arch: str, elf: ELFFile, data: bytes, r, applied: bool, base: int) -> int:
    """The psABI's value of one relocation slot after loading, from pyelftools' reading; a slot in a
    table IREE does not read (DT_JMPREL but on x86_64) stays as the file has it."""
    w = word(elf)
    mask = (1 << (8 * w)) - 1
    kind = kind_of(data, r)
    stored = file_word(data, elf, r["r_offset"], w)
    if not applied:
        return stored
    S = (base + symbol_value(elf, r["r_info_sym"])) & mask if r["r_info_sym"] else 0
    A = r["r_addend"] if r.is_RELA() else stored
    if kind.endswith("RELATIVE"):
        return (base + A) & mask
    if kind.endswith(("GLOB_DAT", "JUMP_SLOT", "JMP_SLOT")):
        return (S + (A if arch == "aarch64" else 0)) & mask
    if kind in ("R_X86_64_64", "R_386_32", "R_ARM_ABS32", "R_AARCH64_ABS64", "R_RISCV_64", "R_RISCV_32"):
        return (S + A) & mask
    if kind == "R_386_PC32":
        return (S + A - (base + r["r_offset"])) & mask
    raise AssertionError(f"no expectation for {kind}")


@pytest.mark.parametrize("arch", list(COMPILERS))
def test_symbol_relocations_match_the_psabi(arch):
    data = shared_object(arch, POINTERS_C)
    elf = elf_of(data)
    relocs = relocations(elf)
    kinds = {kind_of(data, r) for _, r, _ in relocs}
    # The fixture carries what the test is about: absolute ones and a PLT slot on every arch, GOT
    # entries where the ISA has GLOB_DAT.
    assert any("JUMP_SLOT" in kind_of(data, r) or "JMP_SLOT" in kind_of(data, r) for _, r, _ in relocs)
    assert len(kinds) >= 3, kinds
    if arch.startswith("riscv"):
        assert any(r.is_RELA() and r["r_addend"] for _, r, _ in relocs if r["r_info_sym"])
    w = word(elf)
    with tracked_heap(target=arch) as heap:
        img = load_into_heap(data, heap)
        for _, r, applied in relocs:
            if applied and kind_of(data, r) == "R_AARCH64_ABS64":
                # IREE adds ABS64 to the stored word: the psABI's S + A only where the linker left 0
                assert file_word(data, elf, r["r_offset"], w) == 0
            assert image_word(img, r["r_offset"], w) == _expected(arch, elf, data, r, applied, img.base), \
                (kind_of(data, r), hex(r["r_offset"]))
        f = elf.get_section_by_name(".dynsym").get_symbol_by_name("f")[0]
        assert img.lookup("f") == img.base + f["st_value"]
        img.close()


def test_i386_text_relocation_is_pc_relative():
    data = shared_object("i386", TEXTREL_C, pic=False)
    elf = elf_of(data)
    relocs = relocations(elf)
    assert "R_386_PC32" in {kind_of(data, r) for _, r, _ in relocs}
    with tracked_heap(target="i386") as heap:
        img = load_into_heap(data, heap)
        for _, r, applied in relocs:
            assert image_word(img, r["r_offset"], 4) == _expected("i386", elf, data, r, applied, img.base)
        img.close()


def _patched_type(data: bytes, arch: str, from_kind: str, to_type: int) -> tuple[bytes, object]:
    """`data` with the first `from_kind` relocation's type set to `to_type` (in place in the file)."""
    elf = elf_of(data)
    for sec in elf.iter_sections():
        if isinstance(sec, RelocationSection) and sec["sh_flags"] & 2:
            for i, r in enumerate(sec.iter_relocations()):
                if kind_of(data, r) == from_kind:
                    at = sec["sh_offset"] + i * sec["sh_entsize"] + word(elf)
                    out = bytearray(data)
                    if word(elf) == 8:
                        out[at:at + 4] = struct.pack("<I", to_type)
                    else:
                        out[at] = to_type
                    return bytes(out), r
    raise AssertionError(f"no {from_kind} in the {arch} fixture")


def test_arm_rel32_as_iree_computes_it():
    """arch/arm_32.c adds S - r_offset (not S - P) to the stored word: reproduced as IREE does it."""
    data, r = _patched_type(shared_object("armv7", POINTERS_C), "armv7", "R_ARM_ABS32", 3)
    elf = elf_of(data)
    assert type_name(data, 3) == "R_ARM_REL32"
    with tracked_heap(target="armv7") as heap:
        img = load_into_heap(data, heap)
        S = img.base + symbol_value(elf, r["r_info_sym"])
        stored = file_word(data, elf, r["r_offset"], 4)
        assert image_word(img, r["r_offset"], 4) == (stored + S - r["r_offset"]) & 0xFFFFFFFF
        img.close()


@pytest.mark.parametrize("new_type,name", [(2, "R_X86_64_PC32"), (10, "R_X86_64_32"), (11, "R_X86_64_32S")])
def test_x86_64_narrow_relocations(new_type, name):
    data, r = _patched_type(shared_object("x86_64", POINTERS_C), "x86_64", "R_X86_64_64", new_type)
    elf = elf_of(data)
    assert type_name(data, new_type) == name
    with tracked_heap(target="x86_64") as heap:
        img = load_into_heap(data, heap)
        S = img.base + symbol_value(elf, r["r_info_sym"])
        P = img.base + r["r_offset"]
        want = S + r["r_addend"] - (P if name.endswith("PC32") else 0)
        assert image_word(img, r["r_offset"], 4) == want & 0xFFFFFFFF
        # only the low 4 bytes are written; the rest stays as the file holds it
        assert image_word(img, r["r_offset"] + 4, 4) == file_word(data, elf, r["r_offset"] + 4, 4)
        img.close()


@pytest.mark.parametrize("arch", list(COMPILERS))
def test_tls_relocation_is_unimplemented_as_iree_says(arch):
    data = shared_object(arch, TLS_C)
    elf = elf_of(data)
    (_, r, _), = relocations(elf)
    assert "TLS" in kind_of(data, r) or "TPOFF" in kind_of(data, r)
    with tracked_heap(target=arch) as heap:
        with pytest.raises(ExecutableError) as e:
            load_into_heap(data, heap)
        assert heap.live() == []
    assert e.value.code == StatusCode.UNIMPLEMENTED
    assert e.value.message == f"unimplemented {LABELS[arch]} relocation type {r['r_info_type']:08X}"


def test_riscv_copy_is_not_in_iree_switch():
    """arch/riscv.c names R_RISCV_COPY (4) but applies it nowhere: UNIMPLEMENTED."""
    data, _ = _patched_type(shared_object("riscv64", POINTERS_C), "riscv64", "R_RISCV_64", 4)
    with tracked_heap(target="riscv64") as heap:
        with pytest.raises(ExecutableError, match="^UNIMPLEMENTED: unimplemented riscv64 relocation type 00000004$"):
            load_into_heap(data, heap)


# -- hostile files ----------------------------------------------------------------------------------

def _dyn_entry(elf: ELFFile, tag: str) -> int:
    dyn = elf.get_section_by_name(".dynamic")
    for i, t in enumerate(dyn.iter_tags()):
        if t.entry.d_tag == tag:
            return dyn["sh_offset"] + i * dyn["sh_entsize"]
    raise AssertionError(tag)


def _phdr(elf: ELFFile, p_type: str) -> int:
    for i, s in enumerate(elf.iter_segments()):
        if s.header.p_type == p_type:
            return elf.header.e_phoff + i * elf.header.e_phentsize
    raise AssertionError(p_type)


def _put(data: bytes, at: int, value: int, width: int) -> bytes:
    out = bytearray(data)
    out[at:at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    return bytes(out)


def _load_fails(arch: str, data: bytes) -> ExecutableError:
    with tracked_heap(target=arch) as heap:
        with pytest.raises(ExecutableError) as e:
            load_into_heap(data, heap)
        assert heap.live() == []
    return e.value


@pytest.mark.parametrize("arch", ARCHES)
def test_hostile_fields_are_refused_naming_them(arch):
    data = kernel(arch)
    elf = elf_of(data)
    w = word(elf)
    far = 0x7FFF0000
    p_vaddr = 8 if w == 4 else 16  # offset of p_vaddr in a phdr
    table = "DT_RELA" if arch in ("aarch64", "riscv64", "riscv32") else "DT_REL"
    reloc_sec = elf.get_section_by_name(".rela.dyn" if table == "DT_RELA" else ".rel.dyn")
    cases = {
        "PT_DYNAMIC outside the image": (_put(data, _phdr(elf, "PT_DYNAMIC") + p_vaddr, far, w),
                                         ".dynamic table at"),
        "DT_SYMTAB outside": (_put(data, _dyn_entry(elf, "DT_SYMTAB") + w, far, w), "symbol 1 at"),
        "DT_HASH outside": (_put(data, _dyn_entry(elf, "DT_HASH") + w, far, w), "DT_HASH table at"),
        "relocation table outside": (_put(data, _dyn_entry(elf, table) + w, far, w), "relocation table at"),
        "relocation target outside": (_put(data, reloc_sec["sh_offset"], far, w), "relocation 0 target at"),
        "relocation table longer than the image": (_put(data, _dyn_entry(elf, table + "SZ") + w, 1 << 24, w),
                                                   "relocation table at"),
    }
    for case, (broken, what) in cases.items():
        e = _load_fails(arch, broken)
        assert e.code == StatusCode.FAILED_PRECONDITION, (case, e)
        assert f"ELF {what} 0x" in e.message and "lies outside the loaded image" in e.message, (case, e)


@pytest.mark.parametrize("arch", ARCHES)
def test_wrong_table_kind_and_symbol_are_refused_as_iree_does(arch):
    data = kernel(arch)
    elf = elf_of(data)
    w = word(elf)
    rela = arch in ("aarch64", "riscv64", "riscv32")
    table = "DT_RELA" if rela else "DT_REL"
    other = 17 if rela else 7  # DT_REL / DT_RELA
    e = _load_fails(arch, _put(data, _dyn_entry(elf, table), other, w))
    assert (e.code, e.message) == (StatusCode.FAILED_PRECONDITION, f"unsupported DT_{'REL' if rela else 'RELA'} relocations")
    # a symbol index past DT_HASH's count
    sec = elf.get_section_by_name(".rela.dyn" if rela else ".rel.dyn")
    count = elf.get_section_by_name(".dynsym").num_symbols()
    r0 = next(sec.iter_relocations())
    info = (count << 32 | r0["r_info_type"]) if w == 8 else (count << 8 | r0["r_info_type"])
    e = _load_fails(arch, _put(data, sec["sh_offset"] + w, info, w))
    assert (e.code, e.message) == (StatusCode.OUT_OF_RANGE, f"invalid symbol in relocation: {count}")


def test_x86_64_pltrel_must_be_rela():
    data = shared_object("x86_64", POINTERS_C)
    elf = elf_of(data)
    e = _load_fails("x86_64", _put(data, _dyn_entry(elf, "DT_PLTREL") + 8, 17, 8))
    assert (e.code, e.message) == (StatusCode.FAILED_PRECONDITION, "unsupported DT_PLTREL != DT_RELA")


@pytest.mark.parametrize("arch", ARCHES)
def test_wrong_machine_and_class(arch):
    data = kernel(arch)
    other = {"riscv32": "armv7", "armv7": "i386", "i386": "riscv32", "aarch64": "riscv64", "riscv64": "aarch64"}[arch]
    e = _load_fails(other, data)
    e_machine = elf_of(data).header.e_machine
    from elftools.elf.enums import ENUM_E_MACHINE
    assert (e.code, e.message) == (StatusCode.FAILED_PRECONDITION,
                                   f"ELF machine specification ({ENUM_E_MACHINE[e_machine]:04X}) does not match "
                                   "the running architecture")
    wrong_class = {"riscv32": "riscv64", "riscv64": "riscv32", "armv7": "aarch64", "aarch64": "armv7",
                   "i386": "x86_64"}[arch]
    e = _load_fails(wrong_class, data)
    bits = 32 if word(elf_of(data)) == 8 else 64
    assert (e.code, e.message) == (StatusCode.FAILED_PRECONDITION, f"system/ELF class mismatch: expected {bits}-bit")


def test_wasm32_has_no_elf_kernels():
    e = _load_fails("wasm32", kernel("riscv32"))
    assert e.code == StatusCode.UNIMPLEMENTED and "wasm32" in e.message


@pytest.mark.parametrize("arch", ARCHES)
def test_truncated_files(arch):
    data = kernel(arch)
    for n in sorted({0, 3, 16, 40, 52, 63, 64, len(data) // 2, len(data) - 1}):
        e = _load_fails(arch, data[:n])
        assert e.code == StatusCode.FAILED_PRECONDITION, (n, e)


class SpyHeap(Heap):
    """A heap that remembers each block it hands out and the bytes around it at that moment."""

    SPAN = 64 << 10

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.made: list = []

    def malloc(self, size: int, **kwargs) -> int:
        address = super().malloc(size, **kwargs)
        arena = self.space.bytes
        lo = max(address - self.space.base - self.SPAN, 0)
        hi = min(address - self.space.base + size + self.SPAN, len(arena))
        self.made.append((address, size, lo, hi, bytes(arena[lo:address - self.space.base]),
                          bytes(arena[address - self.space.base + size:hi])))
        return address

    def check_surroundings(self) -> None:
        arena = self.space.bytes
        for address, size, lo, hi, before, after in self.made:
            assert bytes(arena[lo:address - self.space.base]) == before, f"write below 0x{address:x}"
            assert bytes(arena[address - self.space.base + size:hi]) == after, f"write above 0x{address:x}"
        self.made.clear()


def _fields(elf: ELFFile) -> list[tuple[int, int]]:
    """(file offset, length) of the tables a loader reads: headers, .dynamic, symbols, relocations."""
    out = [(0, elf.header.e_ehsize), (elf.header.e_phoff, elf.header.e_phnum * elf.header.e_phentsize)]
    for sec in elf.iter_sections():
        if sec.name in (".dynamic", ".dynsym", ".hash", ".rel.dyn", ".rela.dyn", ".dynstr"):
            out.append((sec["sh_offset"], sec["sh_size"]))
    return out


MUTANTS = 300


@pytest.mark.parametrize("source", ["kernel", "shared object"])
@pytest.mark.parametrize("arch", ARCHES + ["x86_64"])
def test_mutants_fail_cleanly_and_write_only_inside_the_image(arch, source):
    if source == "kernel":
        data = kernel(arch) if arch != "x86_64" else kernel_x86_64()
    else:  # symbol, GOT and PLT relocations too
        data = shared_object(arch, POINTERS_C)
    elf = elf_of(data)
    fields = _fields(elf)
    rng = random.Random(f"elf-mutants-{arch}-{source}")
    w = word(elf)
    interesting = [0, 1, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, (1 << (8 * w)) - 1, len(data), 0x10000, 0x1000]
    outcomes = {"loaded": 0, "refused": 0}
    heap = SpyHeap(target=arch)
    try:
        for _ in range(MUTANTS):
            m = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                start, length = rng.choice(fields)
                at = start + rng.randrange(max(length, 1))
                width = rng.choice([1, 2, 4, w])
                value = rng.choice(interesting + [rng.getrandbits(8 * width)])
                m[at:at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
            if rng.random() < 0.05:
                del m[rng.randrange(len(m)):]
            try:
                img = load_into_heap(bytes(m), heap)
            except ExecutableError:
                outcomes["refused"] += 1
            else:
                outcomes["loaded"] += 1
                for a, n, r_, w_, x_ in img.segments:
                    assert img.start <= a and a + n <= img.end
                if img.initializers:
                    assert all(img.inside(fn, 1) for fn in img.initializers)
                img.close()
            heap.check_surroundings()
            assert heap.live() == []
    finally:
        heap.close()
    assert outcomes["refused"] > MUTANTS // 10 and outcomes["loaded"] > 0, outcomes


# -- initializers, self-rewriting tables, overlapping segments ---------------------------------------

INIT_C = "int counter;\nvoid ctor(void) { counter = 1; }\nint get(void) { return counter; }\n"
CTOR_C = "int counter;\n__attribute__((constructor)) void ctor(void) { counter = 1; }\n"


@lru_cache(maxsize=None)
def shared_object_with_init(arch: str) -> bytes:
    """INIT_C linked with `-Wl,-init,ctor`: DT_INIT names ctor."""
    out = tools.session_dir() / "elf-arches"
    out.mkdir(exist_ok=True)
    (out / "init.c").write_text(INIT_C)
    subprocess.run([*compiler_of(arch), *SO_FLAGS, "-fPIC", "-Wl,-init,ctor", "-o", str(out / f"{arch}-init.so"),
                    str(out / "init.c")], check=True, capture_output=True, timeout=120)
    return (out / f"{arch}-init.so").read_bytes()


@pytest.mark.parametrize("arch", list(COMPILERS))
def test_dt_init_is_listed_not_run(arch):
    data = shared_object_with_init(arch)
    elf = elf_of(data)
    tags = {t.entry.d_tag: t.entry.d_val for t in elf.get_section_by_name(".dynamic").iter_tags()}
    ctor = elf.get_section_by_name(".dynsym").get_symbol_by_name("ctor")[0]["st_value"]
    assert tags["DT_INIT"] == ctor and "DT_INIT_ARRAY" not in tags
    with tracked_heap(target=arch) as heap:
        img = load_into_heap(data, heap)
        assert img.initializers == [img.base + ctor]
        counter = elf.get_section_by_name(".dynsym").get_symbol_by_name("counter")[0]["st_value"]
        assert image_word(img, counter, 4) == 0  # nothing ran
        img.close()


@pytest.mark.parametrize("arch", list(COMPILERS))
def test_relocated_init_array_is_biased_twice_as_iree_does(arch):
    """IREE reads DT_INIT_ARRAY after relocation and adds the bias again (elf_module.c): a relocated
    constructor pointer lands outside the image, where IREE would jump; ireeabi refuses."""
    data = shared_object(arch, CTOR_C)
    elf = elf_of(data)
    w = word(elf)
    mask = (1 << (8 * w)) - 1
    tags = {t.entry.d_tag: t.entry.d_val for t in elf.get_section_by_name(".dynamic").iter_tags()}
    (slot,) = [(r, applied) for _, r, applied in relocations(elf) if r["r_offset"] == tags["DT_INIT_ARRAY"]]
    if kind_of(data, slot[0]) == "R_AARCH64_ABS64":
        assert file_word(data, elf, slot[0]["r_offset"], w) == 0  # IREE's += is the psABI's S + A
    heap = SpyHeap(target=arch)
    try:
        with pytest.raises(ExecutableError) as e:
            load_into_heap(data, heap)
        base = heap.made[0][0] - min(s.header.p_vaddr for s in elf.iter_segments() if s.header.p_type == "PT_LOAD")
        relocated = _expected(arch, elf, data, slot[0], slot[1], base)
        assert e.value.code == StatusCode.FAILED_PRECONDITION
        assert e.value.message == (f"ELF initializer DT_INIT_ARRAY[0] at 0x{(base + relocated) & mask:x} lies "
                                   "outside the loaded image: IREE would jump there")
        heap.check_surroundings()
    finally:
        heap.close()


def test_a_relocation_rewriting_a_later_entry_is_seen_by_that_entry():
    """IREE reads each relocation from the image as it reaches it: on riscv32, entry 0 made
    R_RISCV_RELATIVE with addend 3 aimed at entry 3's r_info (zeroed, so type NONE) turns entry 3
    into type 3 with symbol (base + 3) >> 8, which IREE refuses as out of range."""
    data = kernel("riscv32")
    elf = elf_of(data)
    sec = elf.get_section_by_name(".rela.dyn")
    assert sec.num_relocations() > 3
    entry3 = sec["sh_offset"] + 3 * 12
    broken = _put(data, entry3, 0, 12)  # entry 3: all zero, type NONE
    r_info3 = sec["sh_addr"] + 3 * 12 + 4
    broken = _put(broken, sec["sh_offset"], r_info3, 4)
    broken = _put(broken, sec["sh_offset"] + 4, 3, 4)  # R_RISCV_RELATIVE, no symbol
    broken = _put(broken, sec["sh_offset"] + 8, 3, 4)  # addend 3
    heap = SpyHeap(target="riscv32")
    try:
        with pytest.raises(ExecutableError) as e:
            load_into_heap(broken, heap)
        base = heap.made[0][0]
        assert (e.value.code, e.value.message) == (StatusCode.OUT_OF_RANGE, f"invalid symbol in relocation: {(base + 3) >> 8}")
        heap.check_surroundings()
    finally:
        heap.close()


def test_overlapping_segments_are_refused():
    """A PT_LOAD made to copy the whole file again: more file bytes than the file holds (work would
    grow with the number of such headers); ireeabi refuses."""
    data = kernel("i386")
    elf = elf_of(data)
    at = _phdr(elf, "PT_GNU_STACK")
    broken = _put(data, at, 1, 4)  # PT_LOAD
    broken = _put(broken, at + 4, 0, 4)  # p_offset
    broken = _put(broken, at + 16, len(data), 4)  # p_filesz
    broken = _put(broken, at + 20, len(data), 4)  # p_memsz
    e = _load_fails("i386", broken)
    assert e.code == StatusCode.FAILED_PRECONDITION and "(they overlap)" in e.message


def test_init_array_size_without_an_array_is_refused():
    """DT_INIT_ARRAYSZ alone: IREE would read the initializers from address 0."""
    data = shared_object_with_init("riscv64")
    elf = elf_of(data)
    e = _load_fails("riscv64", _put(data, _dyn_entry(elf, "DT_INIT"), 27, 8))  # DT_INIT -> DT_INIT_ARRAYSZ
    assert e.code == StatusCode.FAILED_PRECONDITION and "DT_INIT_ARRAYSZ without a DT_INIT_ARRAY" in e.message


def test_image_is_a_context_manager():
    with tracked_heap(target="aarch64") as heap:
        with load_into_heap(kernel("aarch64"), heap) as img:
            assert heap.live() != []
        assert img.closed and heap.live() == []


@pytest.mark.parametrize("arch", ["riscv32", "i386", "aarch64", "armv7"])
def test_relocation_arithmetic_wraps_at_the_target_word(arch):
    """A RELATIVE slot whose addend (RELA) or stored word (REL) is -16: base - 16 in the target's
    word, not a wider number."""
    data = kernel(arch)
    elf = elf_of(data)
    w = word(elf)
    mask = (1 << (8 * w)) - 1
    _, r, _ = relocations(elf)[0]
    if r.is_RELA():
        sec = elf.get_section_by_name(".rela.dyn")
        broken = _put(data, sec["sh_offset"] + 2 * w, -16, w)  # r_addend of entry 0
    else:
        seg = next(s.header for s in elf.iter_segments()
                   if s.header.p_type == "PT_LOAD" and s.header.p_vaddr <= r["r_offset"] < s.header.p_vaddr + s.header.p_filesz)
        broken = _put(data, seg.p_offset + r["r_offset"] - seg.p_vaddr, -16, w)  # the stored word
    with tracked_heap(target=arch) as heap:
        with load_into_heap(broken, heap) as img:
            assert image_word(img, r["r_offset"], w) == (img.base - 16) & mask


def test_heap_and_host_paths_agree_on_x86_64():
    """The same x86_64 kernel through the host loader (mmap, initializers run) and into an x86_64
    heap: every segment byte equal once each image's own base is taken out of the relocated words."""
    from ireeabi.hal.local import elf_loader
    data = kernel_x86_64()
    elf = elf_of(data)
    slots = {r["r_offset"] for _, r, _ in relocations(elf)}
    host = elf_loader.load(data)
    try:
        with tracked_heap(target="x86_64") as heap, load_into_heap(data, heap) as img:
            for seg in elf.iter_segments():
                h = seg.header
                if h.p_type != "PT_LOAD":
                    continue
                a = bytearray(host.read(host.bias + h.p_vaddr, h.p_memsz, "segment"))
                b = bytearray(heap.read(img.base + h.p_vaddr, h.p_memsz))
                for slot in slots:
                    if h.p_vaddr <= slot < h.p_vaddr + h.p_memsz:
                        at = slot - h.p_vaddr
                        a[at:at + 8] = (int.from_bytes(a[at:at + 8], "little") - host.bias).to_bytes(8, "little")
                        b[at:at + 8] = (int.from_bytes(b[at:at + 8], "little") - img.base).to_bytes(8, "little")
                assert a == b
            assert img.lookup(QUERY) - img.base == elf_loader.lookup_export(host, QUERY) - host.bias
    finally:
        host.close()


def test_thumb_functions_keep_bit_0():
    """A Thumb function's symbol value has bit 0 set; lookup and ABS32 relocations keep it."""
    data = _thumb_object()
    elf = elf_of(data)
    f = elf.get_section_by_name(".dynsym").get_symbol_by_name("f")[0]["st_value"]
    assert f & 1, "the oracle: gcc -mthumb gives f an odd symbol value"
    with tracked_heap(target="armv7") as heap, load_into_heap(data, heap) as img:
        assert img.lookup("f") == img.base + f
        fns = elf.get_section_by_name(".dynsym").get_symbol_by_name("fns")[0]["st_value"]
        assert image_word(img, fns, 4) == img.base + f


@lru_cache(maxsize=None)
def _thumb_object() -> bytes:
    out = tools.session_dir() / "elf-arches"
    out.mkdir(exist_ok=True)
    (out / "thumb.c").write_text(POINTERS_C)
    subprocess.run([debian_tool("arm-linux-gnueabihf-gcc"), "-mthumb", *SO_FLAGS, "-fPIC", "-o", str(out / "thumb.so"),
                    str(out / "thumb.c")], check=True, capture_output=True, timeout=120)
    return (out / "thumb.so").read_bytes()


@pytest.mark.parametrize("arch", ARCHES)
def test_string_table_outside_the_image_is_refused_at_lookup(arch):
    """No import to name, so the load succeeds; the lookup then reads names: refused, not read."""
    data = kernel(arch)
    elf = elf_of(data)
    w = word(elf)
    broken = _put(data, _dyn_entry(elf, "DT_STRTAB") + w, 0x7FFF0000, w)
    with tracked_heap(target=arch) as heap, load_into_heap(broken, heap) as img:
        with pytest.raises(ExecutableError) as e:
            img.lookup(QUERY)
    assert e.value.code == StatusCode.FAILED_PRECONDITION
    assert e.value.message.startswith("ELF symbol 1 name at 0x") and "lies outside the loaded image" in e.value.message
