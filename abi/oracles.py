"""Layout oracles nobody here wrote: real C compilers measuring the C text of `cdecl`.

- `measure_libclang(structs, target)`: libclang (PyPI wheel) parses the C for the target's triple with
  `-ffreestanding -nostdinc` and reports sizes, alignments and every field's bit offset.
- `measure_host_cc(structs)`: the host C compiler, through cffi, compiles a probe function that
  returns sizeof/alignof/offsetof for every struct and field, and is called in-process.
- `measure_gcc_m32(structs)`: `gcc -m32` builds and runs the same probe as a program (i386).

All return `{struct name: Measured}` so tests compare them to the engine's layouts field by field.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .cdecl import c_source
from .errors import IreeAbiError
from .layout import Struct, StructLayout
from .targets import Target


class OracleError(IreeAbiError):
    """An oracle could not run (missing compiler, compile error, ...)."""


@dataclass
class Measured:
    size: int
    align: int
    # dotted field path -> absolute offset in bits (bytes * 8 for ordinary fields)
    bit_offsets: dict[str, int] = field(default_factory=dict)


def engine_view(lay: StructLayout) -> Measured:
    """The engine's numbers in the oracles' form."""
    m = Measured(lay.size, lay.align)
    for path, f, offset, _ in lay.walk():
        m.bit_offsets[path] = offset * 8 + (f.bit_offset or 0)
    return m


def diff(engine: Measured, oracle: Measured) -> list[str]:
    """Human-readable disagreements (empty when identical)."""
    out = []
    if engine.size != oracle.size:
        out.append(f"sizeof: engine {engine.size}, oracle {oracle.size}")
    if engine.align != oracle.align:
        out.append(f"alignof: engine {engine.align}, oracle {oracle.align}")
    for path in sorted(set(engine.bit_offsets) | set(oracle.bit_offsets)):
        e, o = engine.bit_offsets.get(path), oracle.bit_offsets.get(path)
        if e != o:
            out.append(f"{path}: engine bit {e}, oracle bit {o}")
    return out


def disagreements(structs: Sequence[Struct], measured: dict[str, Measured],
                  target: Target) -> dict[str, list[str]]:
    """{struct name: differences} between the engine and an oracle, nested structs included."""
    problems: dict[str, list[str]] = {}
    for s in structs:
        for n in (*s.nested(), s):
            d = diff(engine_view(n.layout(target)), measured[n.name])
            if d:
                problems[n.name] = d
    return problems


def _field_paths(s: Struct, prefix: str = "") -> Iterable[tuple[str, bool]]:
    """(dotted path, is bit-field) for every field, nested structs included."""
    for f in s.fields:
        path = prefix + f.name
        yield path, f.bits is not None
        if isinstance(f.type, Struct):
            yield from _field_paths(f.type, path + ".")


# -- libclang ---------------------------------------------------------------------------------------


def clang_index() -> Any:
    try:
        import clang.cindex as ci
    except ImportError as e:  # pragma: no cover - the test extra installs it
        raise OracleError("libclang is not installed (pip install libclang)") from e
    return ci


def new_clang_index(ci: Any) -> Any:
    """`ci.Index.create()` without libclang's crash recovery. clang_createIndex otherwise installs
    LLVM's fault handlers for the rest of the process, over whatever was there (wasmtime's, which
    turn a wasm kernel's fault into a trap), and chained with the native helper's they can send a
    fault round in a loop until the stack overflows. ireeabi parses hostile headers in a bounded
    child process, so recovery buys nothing; libclang reads the variable only in that call."""
    name = "LIBCLANG_DISABLE_CRASH_RECOVERY"
    was = os.environ.get(name)
    os.environ[name] = "1"
    try:
        return ci.Index.create()
    finally:
        if was is None:
            del os.environ[name]
        else:
            os.environ[name] = was


def measure_libclang(structs: Sequence[Struct], target: Target, extra_source: str = "") -> dict[str, Measured]:
    ci = clang_index()
    src = c_source(structs) + extra_source
    tu = new_clang_index(ci).parse(
        "ireeabi_probe.c",
        args=["-target", target.triple, "-ffreestanding", "-nostdinc", "-std=gnu11"],
        unsaved_files=[("ireeabi_probe.c", src)],
    )
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise OracleError(f"libclang ({target.triple}) rejected the C: {errors[:3]}")
    typedefs = {}
    for c in tu.cursor.get_children():
        if c.kind == ci.CursorKind.TYPEDEF_DECL:
            typedefs[c.spelling] = c.underlying_typedef_type.get_canonical()
    out: dict[str, Measured] = {}
    wanted = {s.name for s in structs} | {n.name for s in structs for n in s.nested()}
    for name in wanted:
        t = typedefs[name]
        m = Measured(t.get_size(), t.get_align())
        _clang_fields(t, "", 0, m)
        out[name] = m
    return out


def _clang_fields(t: Any, prefix: str, base_bits: int, m: Measured) -> None:
    ci = clang_index()
    for f in t.get_fields():
        path = prefix + f.spelling
        bits = base_bits + f.get_field_offsetof()
        m.bit_offsets[path] = bits
        ft = f.type.get_canonical()
        if ft.kind == ci.TypeKind.RECORD:
            _clang_fields(ft, path + ".", bits, m)


def measure_scalars_libclang(target: Target, c_types: Iterable[str]) -> dict[str, tuple[int, int, int]]:
    """{C type: (sizeof, alignment as struct member, GNU __alignof__)} from libclang."""
    ci = clang_index()
    lines = [c_source([], prelude=True)]
    names = list(c_types)
    for i, t in enumerate(names):
        lines.append(f"char sz_{i}[sizeof({t})]; char ga_{i}[__alignof__({t})];")
        lines.append(f"struct member_{i} {{ char c; {t} x; }};")
        lines.append(f"char ma_{i}[__builtin_offsetof(struct member_{i}, x)];")
    tu = new_clang_index(ci).parse(
        "ireeabi_scalars.c",
        args=["-target", target.triple, "-ffreestanding", "-nostdinc", "-std=gnu11"],
        unsaved_files=[("ireeabi_scalars.c", "\n".join(lines))],
    )
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise OracleError(f"libclang ({target.triple}) rejected the C: {errors[:3]}")
    sizes = {}
    for c in tu.cursor.get_children():
        if c.kind == ci.CursorKind.VAR_DECL:
            sizes[c.spelling] = c.type.get_array_size()
    return {t: (sizes[f"sz_{i}"], sizes[f"ma_{i}"], sizes[f"ga_{i}"]) for i, t in enumerate(names)}


# -- real compilers ---------------------------------------------------------------------------------


def _probe_source(structs: Sequence[Struct]) -> tuple[str, list[tuple[str, str]]]:
    """C with `ireeabi_probe(unsigned long long*)` filling one number per (struct, query)."""
    all_structs: list[Struct] = []
    seen: set[int] = set()
    for s in structs:
        for n in (*s.nested(), s):
            if id(n) not in seen:
                seen.add(id(n))
                all_structs.append(n)
    helpers: list[str] = []
    body: list[str] = []
    keys: list[tuple[str, str]] = []

    def emit(name: str, query: str, expr: str) -> None:
        body.append(f"  out[{len(keys)}] = (unsigned long long)({expr});")
        keys.append((name, query))

    for s in all_structs:
        emit(s.name, "#size", f"sizeof({s.name})")
        emit(s.name, "#align", f"_Alignof({s.name})")
        for path, is_bits in _field_paths(s):
            if is_bits:
                fn = f"ireeabi_bitpos_{len(helpers)}"
                # Set the field to 1 in a zeroed object and find the lowest set bit (little endian).
                helpers.append(
                    f"static unsigned long long {fn}(void) {{\n"
                    f"  {s.name} v; unsigned char* p = (unsigned char*)&v; unsigned long long i;\n"
                    f"  for (i = 0; i < sizeof v; ++i) p[i] = 0;\n"
                    f"  v.{path} = 1;\n"
                    f"  for (i = 0; i < sizeof v * 8; ++i) if (p[i / 8] >> (i % 8) & 1) return i;\n"
                    f"  return ~0ull;\n}}")
                emit(s.name, path, f"{fn}()")
            else:
                emit(s.name, path, f"offsetof({s.name}, {path}) * 8")
    src = (c_source(all_structs) + "\n".join(helpers)
           + "\nvoid ireeabi_probe(unsigned long long* out) {\n" + "\n".join(body) + "\n}\n")
    return src, keys


def _collect(keys: list[tuple[str, str]], values: Sequence[int]) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    for (name, query), v in zip(keys, values):
        m = out.setdefault(name, Measured(0, 0))
        if query == "#size":
            m.size = v
        elif query == "#align":
            m.align = v
        else:
            m.bit_offsets[query] = v
    return out


def measure_host_cc(structs: Sequence[Struct]) -> dict[str, Measured]:
    """Compile the probe with the host compiler through cffi and call it in this process."""
    import cffi

    src, keys = _probe_source(structs)
    ffi = cffi.FFI()
    ffi.cdef("void ireeabi_probe(unsigned long long* out);")
    tmp = tempfile.mkdtemp(prefix="ireeabi-cc-")
    modname = f"_ireeabi_probe_{os.getpid()}_{abs(hash(src)) % 10**12}"
    ffi.set_source(modname, src)
    try:
        lib_path = ffi.compile(tmpdir=tmp, verbose=False)
    except Exception as e:  # cffi raises distutils/setuptools errors
        raise OracleError(f"host C compiler failed: {e}") from e
    spec = importlib.util.spec_from_file_location(modname, lib_path)
    if spec is None or spec.loader is None:
        raise OracleError(f"host C compiler's module {lib_path} cannot be loaded")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.ffi.new("unsigned long long[]", len(keys))
    mod.lib.ireeabi_probe(out)
    shutil.rmtree(tmp, ignore_errors=True)
    return _collect(keys, list(out))


def measure_gcc_m32(structs: Sequence[Struct], cc: str = "gcc") -> dict[str, Measured]:
    """Build the probe as an i386 program with `gcc -m32`, run it, read its numbers."""
    if shutil.which(cc) is None:
        raise OracleError(f"{cc} not found")
    src, keys = _probe_source(structs)
    main = (
        "\nint printf(const char*, ...);\n"
        f"int main(void) {{ static unsigned long long out[{max(len(keys), 1)}]; unsigned i;\n"
        "  ireeabi_probe(out);\n"
        f"  for (i = 0; i < {len(keys)}u; ++i) printf(\"%llu\\n\", out[i]);\n  return 0; }}\n"
    )
    with tempfile.TemporaryDirectory(prefix="ireeabi-m32-") as tmp:
        c_path = os.path.join(tmp, "probe.c")
        exe = os.path.join(tmp, "probe")
        with open(c_path, "w") as fh:
            fh.write(src + main)
        r = subprocess.run([cc, "-m32", "-std=gnu11", "-O0", c_path, "-o", exe],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise OracleError(f"gcc -m32 failed (is gcc-multilib installed?): {r.stderr.strip()[:500]}")
        run = subprocess.run([exe], capture_output=True, text=True, check=True)
    return _collect(keys, [int(x) for x in run.stdout.split()])


def host_target_name() -> str:
    """The ireeabi target matching this Python's host (for the cffi oracle)."""
    from .targets import HostError, host

    try:
        return host().name
    except HostError as e:
        raise OracleError(str(e)) from None


__all__ = ["Measured", "OracleError", "diff", "disagreements", "engine_view", "measure_libclang", "measure_host_cc",
           "measure_gcc_m32", "measure_scalars_libclang", "host_target_name", "clang_index", "new_clang_index"]
