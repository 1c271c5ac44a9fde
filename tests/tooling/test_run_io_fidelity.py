"""`ireeabi run` against the real iree-run-module (3.13): input parsing and result printing.

Every case runs both tools on the same compiled module (tests/programs/io_fidelity, both inline
execution models) with the same arguments. A success must print the same bytes (and write the same
--output files); a failure must fail in both, with iree-run-module's status text (its code and
message, up to the tool's own annotations) inside ours, no traceback, and our message naming the
offending part of the input. Nothing expected is written here by hand: it is the tool's output.
"""
from __future__ import annotations

import contextlib
import io
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from support import iree_tools as tools
from ireeabi.cli.main import main
from ireeabi.tooling.program import Program
from ireeabi.tooling.function_io import format_results, parse_input

HERE = Path(__file__).parents[1]
PROGRAMS = HERE / "programs" / "io_fidelity"
MODELS = ("inline-static", "inline-dynamic")
F64 = ("--iree-input-demote-f64-to-f32=false",)


@pytest.fixture(scope="module")
def compiled() -> dict[tuple[str, str], Path]:
    jobs = [(PROGRAMS / f"{name}.mlir", model) for name in ("echo", "compute") for model in MODELS]
    jobs += [(PROGRAMS / "single.mlir", "inline-static"), (PROGRAMS / "fail.mlir", "inline-static")]
    paths = tools.map_compiles(lambda j: tools.compile_mlir(j[0], model=j[1], extra_flags=F64), jobs)
    return {(src.stem, model): path for (src, model), path in zip(jobs, paths)}


def iree(path: Path, function: str | None, inputs=(), flags=(), cwd=None):
    """iree-run-module's (exit status, stdout, stderr)."""
    argv = [tools.find_tool("iree-run-module"), tools.RUN_DEVICE, f"--module={path}",
            *([f"--function={function}"] if function is not None else []),
            *(f"--input={i}" for i in inputs), *flags]
    p = tools.run_tool(argv, cwd=cwd, timeout=300)  # remembered unless it reads or writes files
    return p.returncode, p.stdout, p.stderr


def ours(path: Path, function: str | None, inputs=(), flags=(), cwd=None):
    """`ireeabi run`'s (exit status, stdout, stderr), in-process."""
    argv = ["run", str(path), *(["--function", function] if function is not None else []),
            *(f"--input={i}" for i in inputs), *flags]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        rc = main(argv, stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def iree_status(stderr: str) -> str:
    """The status iree-run-module reports (`CODE; message; parsing input ...`), without its
    source location and the annotations only the tool adds."""
    line = stderr.strip().splitlines()[0]
    line = re.sub(r"^\S+\.c:\d+: ", "", line)
    for tail in ("; parsing function inputs", "; invoking function", "; outputting results",
                 "; processing function outputs", "; creating run context"):
        line = line.split(tail)[0]
    return line


def squash(text: str) -> str:  # our messages are wrapped to the terminal width
    return "".join(text.split())


def assert_same_failure(theirs, mine, offending: str | None = None) -> None:
    assert theirs[0] != 0, f"iree-run-module accepted it:\n{theirs[1]}"
    assert mine[0] == 1, mine  # iree-run-module's failure status (test_failure_exit_status_...)
    assert "Traceback" not in mine[2]
    assert mine[1] == theirs[1]  # nothing, or the EXEC line where the tool prints it too
    status = squash(iree_status(theirs[2]))
    assert status in squash(mine[2]), (theirs[2], mine[2])
    if offending is not None:  # in our explanation, beyond the tool's text
        assert squash(offending) in squash(mine[2]).replace(status, "", 1), mine[2]


# --------------------------------------------------------------------------------------------------
# Successes: identical stdout

ECHO = [
    # signed/unsigned integer types print with their own names and signedness
    ("tsi8", ["3xsi8=1 -2 127"]), ("tsi8", ["3xsi8=-129"]), ("ti8", ["4xi8=1 200 255 -128"]),
    ("tui8", ["3xui8=0 200 255"]), ("tsi16", ["2xsi16=-32768 32767"]),
    ("tui16", ["3xui16=65535 0x10 010"]), ("tsi32", ["2xsi32=-2147483648 0x7fffffff"]),
    ("tui32", ["2xui32=4294967295 -1"]), ("tsi64", ["2xsi64=-9223372036854775808 0x10"]),
    ("tui64", ["2xui64=18446744073709551615 -1"]), ("ti64", ["2xi64=-1 9223372036854775807"]),
    # f16 / bf16 / f8: IREE's rounding (subnormal flush below half the smallest step) and its
    # unsigned NaN
    ("tf16", ["8xf16=nan -nan inf -inf -0.0 6e-8 65504 65520"]),
    ("tf16", ["4xf16=4.5e-8 3e-8 2.99e-8 6e-8"]),
    ("tbf16", ["8xbf16=nan -nan inf -inf -0.0 1e-40 3.4e38 1.00390625"]),
    ("tbf16", ["4xbf16=1.0078125 1.01171875 3.3961514e+38 -1e39"]),
    ("tf8", ["8xf8E4M3FN=1 -2.5 448 500 nan -nan 0.001 -0"]),
    ("tf8", ["8xf8E5M2=1 -2.5 57344 70000 nan inf -inf 1e-5"]),
    ("tf8", ["8xf8E4M3FNUZ=1 -2.5 240 500 nan inf -0 0.001"]),
    ("tf8", ["8xf8E5M2FNUZ=1 -2.5 57344 1e6 nan inf -0 1e-6"]),
    ("tf8", ["8xf8E8M0FNU=1 0.75 0.7 3 nan -1 0 1e38"]),
    # hex element types
    ("tc64", ["2xcf64=0000803F00000040 0000000000000000"]),
    ("tc128", ["1xcf128=0000000000000000000000000000F03F"]), ("tc64", ["2xcf32=0000803F 00000040"]),
    ("tf32", ["2x*16=ABCD 0123"]), ("ti1", ["4xi1=01 FF zz 00"]), ("ti1", ["3xi1=FF"]),
    # f32 / f64 specials with %G
    ("tf32", ["9xf32=nan -nan inf -inf -0.0 1e-45 1.17549435e-38 3.4028235e38 123456789"]),
    ("tf64", ["8xf64=nan -nan inf -inf -0.0 4.9e-324 1.7976931348623157e308 1e100"]),
    ("tf32", ["6xf32=nan(123) -nan(0x7) 0x1p3 -0x.8p1 1e50 -1e39"]),
    # forms: brackets, commas, C whitespace, one pair of quotes, splat, zero fill, empty, rank 0
    ("t2d", ["2x3xf32=[1 2 3][4 5 6]"]), ("t2d", ["2x3xf32=[[1,2,3],[4,5,6]]"]),
    ("t2d", ["2x3xf32= , 1 ,, 2 [3] 4\t5\n6\v,"]), ("t2d", ['"2x2xf32=1 2 3 4"']),
    ("t2d", [' \t"2x2xf32=1"\n']), ("t2d", ["8x16xf32=0.25"]), ("tf32", ["3xf32"]),
    ("t4d", ["2x0x3x2xi32"]), ("t4d", ["0x1099511627776x1048576x1xi32"]),
    ("tf32", ["0xf32="]), ("t0d", ["i32=-7"]), ("t0d", ["xi32=0x7fffffff"]),
    ("t0d", ["i32="]), ("tf32", ["(null)"]), ("tf32", ["&3xf32=1"]),
    # scalars: C parsing (trailing text ignored, wrapping) and %g
    ("f32s", ["-nan"]), ("f32s", ["1e-45"]), ("f32s", ["3.4e39"]), ("f32s", ["1,5"]),
    ("f32s", ["infinity"]), ("f32s", ["(null)"]), ("f64s", ["1e-320"]), ("f64s", ["-0"]),
    ("f64s", ["123456789012"]), ("i32s", ["-0x80000000"]), ("i32s", [" \t7 "]),
    ("i32s", ["4294967295"]), ("i32s", ["3xf32=1"]), ("i64s", ["-9223372036854775808"]),
    ("i64s", ["(ignored)"]), ("mixed", ["7", "2.5", "3xf32=1 2 3", "-9", "1e300"]),
]
COMPUTE = [
    ("to_bf16", ["9xf32=1 1.00390625 1.01171875 3.4e38 -3.3961514e+38 nan -nan 1e-40 -0"]),
    ("is_pos", ["5xf32=1 -1 0 nan inf"]),
    ("lists", ["7", "2.5", "3xf32=1 2 3"]), ("lists", ["7", "-nan", "0xf32"]),
]
ELIDED = [  # --output_max_element_count, read as C's atoi; negative means no limit
    ("t2d", ["3x4xf32=1"], ["--output_max_element_count=5"]),
    ("t2d", ["3x4xf32=1"], ["--output_max_element_count=0"]),
    ("t2d", ["3x4xf32=1"], ["--output_max_element_count=-1"]),
    ("t2d", ["3x4xf32=1"], ["--output_max_element_count=abc"]),
    ("t2d", ["3x4xf32=1"], ["--output_max_element_count=5000000000"]),
    ("t0d", ["i32=4"], ["--output_max_element_count=0"]),
    ("t4d", ["2x1x1x3xi32=[[[1 2 3]]][[[4 5 6]]]"], ["--output_max_element_count=4"]),
    ("tf32", ["1025xf32=2"], []),
]
OK = ([("echo", f, i, []) for f, i in ECHO] + [("compute", f, i, []) for f, i in COMPUTE]
      + [("echo", f, i, fl) for f, i, fl in ELIDED])


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("program,function,inputs,flags", OK,
                         ids=[f"{p}.{f}.{n}" for n, (p, f, _, _) in enumerate(OK)])
def test_prints_what_iree_run_module_prints(compiled, model, program, function, inputs, flags):
    path = compiled[program, model]
    theirs = iree(path, function, inputs, flags)
    assert theirs[0] == 0, theirs[2]
    assert ours(path, function, inputs, flags) == (0, theirs[1], "")


def test_default_function(compiled):
    """Without --function both run the module's only export, or both refuse to choose."""
    single = compiled["single", "inline-static"]
    theirs = iree(single, None, ["41"])
    assert theirs[0] == 0
    assert ours(single, None, ["41"]) == (0, theirs[1], "")
    echo = compiled["echo", "inline-static"]
    assert_same_failure(iree(echo, None), ours(echo, None))


# --------------------------------------------------------------------------------------------------
# Failures: same status, our message names the offending text

FAIL = [
    ("tf32", ["2xf32=x 1 2"], "`x`"),  # a bad element fails before the surplus is noticed
    ("tf32", ["2xf32=1 2 3 4"], "`3`"), ("tf32", ["2xf32=1 2 3,"], "`3`"),
    ("tf32", ["2xf32=1 2 3"], "`3`"), ("tf32", ["3xf32=1 2"], "2 element(s) given for 3"),
    ("tf32", ["3xf32=,"], None), ("tf32", ["0xf32=1"], "`1`"),
    ("tf32", ["1xf32=1e-50"], "`1e-50`"), ("tf16", ["2xf16=1e-50 1"], "`1e-50`"),
    ("tf32", ["1xf32=" + "0" * 29 + "2.5"], "characters"),
    ("f32s", ["1e-50"], "`1e-50`"), ("f64s", ["1e-400"], "`1e-400`"),
    ("tsi8", ["1xsi8=128"], "`128`"), ("ti8", ["2xi8=-128 -129"], "`-129`"),
    ("tui8", ["2xui8=-1 3"], "`-1`"), ("tsi16", ["2xsi16=32768"], "`32768`"),
    ("ti64", ["2xi64=9223372036854775808 1"], "`9223372036854775808`"),
    ("ti1", ["2xi1=1 0"], "`1`"), ("tc64", ["2xcf32=1 2"], "`1`"),
    ("t2d", ["2xx3xf32=1"], "`2xx3`"), ("t2d", ["x2xf32=1"], "`x2`"),
    ("t2d", ["2x3xf32x=1"], "`f32`"), ("tf32", ["-1xf32=1"], "`-1`"),
    ("tf32", ["2xq32=1"], "`q32`"), ("tf32", ["2xf256=1"], "`256`"), ("tf32", ["2xi0"], "i0"),
    ("tf32", ["f32"], "`f32`"), ("t0d", ["i32"], "`i32`"), ("tf32", ["=3"], None),
    ("tf32", ["  "], None), ("i32s", [" +7 "], "`+7`"),
    ("i32s", ["i32=5"], "`i32=5`"), ("i32s", ["- 7"], "`- 7`"), ("i32s", ['"5"'], '`"5"`'),
    ("i32s", ["0000000000000005"], "characters"), ("i64s", ["9223372036854775808"], None),
    ("tf32", ["9223372036854775807xf32"], None), ("t2d", ["4294967296x4294967296xf32"], None),
    ("t4d", ["2x9223372036854775807x2x1xi32"], None),
    ("t2d", ["x".join(["1"] * 130) + "xf32=1"], "130"),
    ("tf32", ["3xf32=1", "2"], "more inputs"), ("i32s", ["&3xf32=1"], None),
    ("i32s", ["+7"], None), ("mixed", ["1", "2"], "takes 5 input(s), 2 given"),
]


@pytest.mark.parametrize("function,inputs,offending", FAIL,
                         ids=[f"{f}.{n}" for n, (f, _, _) in enumerate(FAIL)])
def test_fails_as_iree_run_module_does(compiled, function, inputs, offending):
    path = compiled["echo", "inline-static"]
    assert_same_failure(iree(path, function, inputs), ours(path, function, inputs), offending)


# --------------------------------------------------------------------------------------------------
# Files: --input=@f.npy / +f.npy / *f.npy / 4xf32=@f.bin, and --output=


@pytest.fixture(scope="module")
def npy_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("io-files")
    with open(d / "a.npy", "wb") as f:  # three arrays in one stream
        np.save(f, np.array([1, 2, 3], np.int32))
        np.save(f, np.array([[1.5, 2], [3, 4]], np.float32))
        np.save(f, np.array(True))
    np.save(d / "h.npy", np.array([1, -2.5, np.nan], np.float16))
    np.save(d / "c.npy", np.array([1 + 2j], np.complex64))
    np.save(d / "u64.npy", np.array([2 ** 64 - 1], np.uint64))
    np.save(d / "be.npy", np.array([1, 2], ">i4"))
    np.save(d / "fo.npy", np.asfortranarray(np.ones((2, 3), np.float32)))
    np.save(d / "u.npy", np.array(["ab"]))
    np.save(d / "s.npy", np.array(2.5))
    (d / "raw.bin").write_bytes(np.array([1, 2, 3], np.float32).tobytes())
    (d / "short.npy").write_bytes((d / "c.npy").read_bytes()[:-1])
    (d / "junk.npy").write_bytes(b"not an npy file at all")
    return d


FILE_OK = [
    ("tf32", ["@a.npy"]), ("mixed", ["1", "2", "@a.npy", "3", "4"]),
    ("pair", ["@a.npy", "+a.npy"]), ("pair", ["@a.npy", "@a.npy"]), ("pair", ["+a.npy", "+a.npy"]),
    ("triple", ["*a.npy"]), ("triple", ["@a.npy", "+a.npy", "+a.npy"]),
    ("tf16", ["@h.npy"]), ("tc64", ["@c.npy"]), ("tui64", ["@u64.npy"]),
    ("tf32", ["3xf32=@raw.bin"]), ("pair", ["2xf32=@raw.bin", "1x1xf32=+raw.bin"]),
]
FILE_FAIL = [
    ("tf32", ["*a.npy"], None), ("mixed", ["1", "2", "*a.npy"], None),
    ("tf32", ["@be.npy"], "little-endian"), ("t2d", ["@fo.npy"], None), ("tf32", ["@u.npy"], "`U`"),
    ("f64s", ["@s.npy"], None), ("tf32", ["4xf32=@raw.bin"], "4 byte(s) early"),
    ("tc64", ["@short.npy"], None), ("tf32", ["@junk.npy"], None), ("tf32", ["@raw.bin"], None),
    ("tf32", ["@missing.npy"], "No such file"),
]


@pytest.mark.parametrize("function,inputs", FILE_OK, ids=[f for f, _ in FILE_OK])
def test_file_inputs(compiled, npy_dir, function, inputs):
    path = compiled["echo", "inline-static"]
    theirs = iree(path, function, inputs, cwd=npy_dir)
    assert theirs[0] == 0, theirs[2]
    assert ours(path, function, inputs, cwd=npy_dir) == (0, theirs[1], "")


@pytest.mark.parametrize("function,inputs,offending", FILE_FAIL,
                         ids=[f"{f}.{n}" for n, (f, _, _) in enumerate(FILE_FAIL)])
def test_file_input_failures(compiled, npy_dir, function, inputs, offending):
    path = compiled["echo", "inline-static"]
    assert_same_failure(iree(path, function, inputs, cwd=npy_dir),
                        ours(path, function, inputs, cwd=npy_dir), offending)


MIXED = ["7", "2.5", "3xf32=1 2 3", "-9", "1e300"]
OUTPUTS = [  # (program, function, inputs, --output specs): same stdout, same files
    ("echo", "mixed", MIXED, ["@o.npy", "+o.npy", "-", "", "@o.bin"]),
    ("echo", "ti1", ["2xi1=01 00"], ["@b.npy"]), ("echo", "tsi8", ["2xsi8=-1 2"], ["@s.npy"]),
    ("echo", "tc64", ["1xcf64=0000803F00000040"], ["@c.npy"]),
    ("echo", "t0d", ["i32=5"], ["+z.npy"]), ("echo", "tf16", ["3xf16=1 nan -nan"], ["@h.npy"]),
    ("echo", "tf32", ["(null)"], ["@n.npy"]), ("echo", "tf32", ["1025xf32=1"], ["-"]),
    ("compute", "lists", ["7", "2.5", "3xf32=1"], ["-", "@k.bin"]),
    # failures after EXEC: count, mode, an npy without that dtype, a list to a file
    ("echo", "mixed", MIXED, ["-"]), ("echo", "mixed", MIXED, ["-", "x", "-", "-", "-"]),
    ("echo", "tbf16", ["3xbf16=1"], ["@bf.npy"]),
    ("compute", "lists", ["7", "2.5", "3xf32=1"], ["@l.npy", "-"]),
]


@pytest.mark.parametrize("program,function,inputs,specs", OUTPUTS,
                         ids=[f"{f}.{n}" for n, (_, f, _, _) in enumerate(OUTPUTS)])
def test_outputs(compiled, tmp_path, program, function, inputs, specs):
    path = compiled[program, "inline-static"]
    flags = [f"--output={s}" for s in specs]
    mine_dir, their_dir = tmp_path / "ours", tmp_path / "iree"
    mine_dir.mkdir()
    their_dir.mkdir()
    theirs = iree(path, function, inputs, flags, cwd=their_dir)
    mine = ours(path, function, inputs, flags, cwd=mine_dir)
    if theirs[0] == 0:
        assert mine == (0, theirs[1], "")
    else:
        assert_same_failure(theirs, mine)
    files = sorted(p.name for p in their_dir.iterdir())
    assert sorted(p.name for p in mine_dir.iterdir()) == files
    for name in files:
        assert (mine_dir / name).read_bytes() == (their_dir / name).read_bytes(), name


# --------------------------------------------------------------------------------------------------
# Narrow floats, exhaustively and bit for bit


def test_every_narrow_float_pattern_prints_alike(compiled, tmp_path):
    """Every bit pattern of f16, bf16 and the f8 types (read raw from a file), and of i1/si16/ui16,
    printed in full by both tools."""
    path = compiled["echo", "inline-static"]
    np.arange(1 << 16, dtype=np.uint16).tofile(tmp_path / "all16.bin")
    np.arange(1 << 8, dtype=np.uint8).tofile(tmp_path / "all8.bin")
    flags = ["--output_max_element_count=70000"]
    for name in ("f16", "bf16", "si16", "ui16", "f8E5M2", "f8E4M3FN", "f8E5M2FNUZ", "f8E4M3FNUZ",
                 "f8E8M0FNU", "i1"):
        bits = 16 if name in ("f16", "bf16", "si16", "ui16") else 8
        inputs = [f"{1 << bits}x{name}=@all{bits}.bin"]
        theirs = iree(path, "tf32", inputs, flags, cwd=tmp_path)
        assert theirs[0] == 0, theirs[2]
        assert ours(path, "tf32", inputs, flags, cwd=tmp_path) == (0, theirs[1], ""), name


def test_narrow_float_parsing_rounds_alike(compiled, tmp_path):
    """strtof then IREE's rounding into f16, bf16 and the f8 types, compared as the raw bytes each
    tool writes (`--output=@x.bin`): random f32 patterns, ties and the edges of each range."""
    path = compiled["echo", "inline-static"]
    rng = np.random.default_rng(13)
    vals = rng.integers(0, 1 << 32, 1500, dtype=np.uint64).astype(np.uint32).view(np.float32)
    edges = np.array([65504, 65519.99, 65520, 6.1e-5, 5.96e-8, 2.98e-8, 2.9802322e-8, 4.47e-8,
                      1.0009765625, 1.00048828125, 448, 464, 480, 57344, 61440, 240,
                      3.3895314e38, 3.3961514e38, 1.17549435e-38, 1e-40, 1.00390625, 1.01171875,
                      0.75, 0.7, 0.0], np.float32)
    scaled = (rng.standard_normal(300) * 10.0 ** rng.integers(-8, 6, 300)).astype(np.float32)
    vals = np.concatenate([vals[np.isfinite(vals)], edges, -edges, scaled])
    text = " ".join(repr(float(v)) for v in vals)
    for name in ("f16", "bf16", "f8E5M2", "f8E4M3FN", "f8E5M2FNUZ", "f8E4M3FNUZ", "f8E8M0FNU"):
        inputs = [f"{len(vals) + 4}x{name}={text} nan -nan inf -inf"]
        theirs = iree(path, "tf32", inputs, ["--output=@theirs.bin"], cwd=tmp_path)
        assert theirs[0] == 0, theirs[2]
        assert ours(path, "tf32", inputs, ["--output=@ours.bin"], cwd=tmp_path)[0] == 0
        assert (tmp_path / "ours.bin").read_bytes() == (tmp_path / "theirs.bin").read_bytes(), name


# --------------------------------------------------------------------------------------------------
# Random malformed text


def test_random_text_fails_or_prints_alike(compiled):
    """Random specs over the syntax's pieces: both accept (same stdout) or both refuse (same
    status), never a traceback."""
    path = compiled["echo", "inline-static"]
    pieces = ["0", "1", "9", "x", "x", "=", "[", "]", ",", " ", "\t", "\v", "f32", "i8", "si8",
              "bf16", "f16", "i1", "-", ".", "e", "nan", "inf", "0x", "ff", '"', "1e-50", "255",
              "-129", "(null)", "&", "+", "08", "1e400", "4294967296"]
    rnd = np.random.default_rng(29)
    for _ in range(40):
        function = str(rnd.choice(["tf32", "t2d", "tsi8", "ti1", "tbf16", "f32s", "i32s", "i64s"]))
        spec = "".join(rnd.choice(pieces, rnd.integers(1, 10)))
        if function.startswith("t") and rnd.random() < 0.5:
            spec = str(rnd.choice(["2x", "3x", "2x2x", "", "0x"])) + \
                str(rnd.choice(["f32", "i8", "si8", "bf16", "i1", "ui8"])) + "=" + spec
        theirs, mine = iree(path, function, [spec]), ours(path, function, [spec])
        if theirs[0] == 0:
            assert mine == (0, theirs[1], ""), (function, spec)
        else:
            assert_same_failure(theirs, mine)


# --------------------------------------------------------------------------------------------------
# Where ireeabi cannot follow: a clear error, never a traceback


def test_limits_fail_cleanly(compiled):
    """iree-run-module takes ranks up to 128 and packed sub-byte types; numpy has at most 64
    dimensions and ireeabi whole-byte elements. A tensor beyond the emulated heap is refused before
    numpy fills it (iree-run-module would allocate the 400 MB; a 64 MiB --heap-limit refuses it)."""
    path = compiled["echo", "inline-static"]
    rank65 = "x".join(["1"] * 65) + "xf32=1"
    assert iree(path, "t2d", [rank65])[0] == 0
    rc, out, err = ours(path, "t2d", [rank65])
    assert (rc, out) == (1, "") and "rank of 65" in err and "Traceback" not in err
    huge_empty = "0x4294967296x4294967296x4294967296xi32"
    assert iree(path, "t4d", [huge_empty])[0] == 0
    rc, out, err = ours(path, "t4d", [huge_empty])
    assert (rc, out) == (1, "") and "beyond ireeabi's numpy" in err
    rc, out, err = ours(path, "tf32", ["1xi4=05"])
    assert (rc, out) == (1, "") and "i4 elements are not supported" in err
    tracemalloc.start()  # numpy's allocations are traced too
    try:
        rc, out, err = ours(path, "tf32", ["100000000xf32=1"], ["--heap-limit", "64M"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (rc, out) == (1, "") and "RESOURCE_EXHAUSTED" in err
    assert peak < 64 << 20, peak  # refused before anything made the 400 MB tensor


# --------------------------------------------------------------------------------------------------
# Failing calls: the EXEC line, the exit status

def _failures(compiled, tmp_path):
    """(what, module, function, inputs) of each kind of failure the brief names: the real tool
    prints `EXEC @f` once the inputs parse, so a call that then fails (vm.fail, too few inputs)
    prints it and an input, function or module it rejects does not."""
    echo, fail = compiled["echo", "inline-static"], compiled["fail", "inline-static"]
    return [("vm.fail", fail, "check", ["-1"]), ("too few inputs", echo, "mixed", ["1", "2"]),
            ("bad --input", echo, "tf32", ["2xf32=x 1"]), ("unknown --function", echo, "nope", []),
            ("missing module", tmp_path / "missing.vmfb", "check", ["1"])]


def test_failing_call_prints_exec_as_iree_run_module_does(compiled, tmp_path):
    for what, path, function, inputs in _failures(compiled, tmp_path):
        theirs, mine = iree(path, function, inputs), ours(path, function, inputs)
        assert theirs[0] != 0 and mine[0] != 0, what
        assert mine[1] == theirs[1], what  # `EXEC @f` or nothing, as the tool
        assert "Traceback" not in mine[2]
    path = compiled["fail", "inline-static"]
    theirs, mine = iree(path, "check", ["-1"]), ours(path, "check", ["-1"])
    assert theirs[1] == mine[1] == "EXEC @check\n"
    assert "FAILED_PRECONDITION; x must be positive;" in theirs[2]
    assert "FAILED_PRECONDITION; x must be positive" in mine[2] and "check at pc 0x" in mine[2]


def test_failure_exit_status_matches_iree_run_module(compiled, tmp_path):
    for what, path, function, inputs in _failures(compiled, tmp_path):
        theirs = iree(path, function, inputs)
        assert theirs[0] == 1, what
        assert ours(path, function, inputs)[0] == theirs[0], what


# --------------------------------------------------------------------------------------------------
# --expected_output: comparison.cc's text, tolerances and exit status

MIXED_IGNORED = ["(ignored)"] * 5
EXPECTED = [  # (program, function, inputs, flags)
    # matching: [SUCCESS], exit 0
    ("echo", "tf32", ["3xf32=1 2 3"], ["--expected_output=3xf32=1 2 3"]),
    ("echo", "t2d", ["2x3xf32=[1 2 3][4 5 6]"], ["--expected_output=2x3xf32=1,2,3,4,5,6"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.00001"]),  # within atol + rtol
    ("echo", "tf32", ["3xf32=nan -nan inf"], ["--expected_output=3xf32=-nan nan inf"]),
    ("echo", "tf32", ["3xf32=0"], ["--expected_output=3xf32=-0"]),
    ("echo", "tf32", ["0xf32"], ["--expected_output=0xf32"]),
    ("echo", "t0d", ["i32=-7"], ["--expected_output=i32=-7"]),
    ("echo", "tf16", ["3xf16=1"], ["--expected_output=3xf16=1.001"]),
    ("echo", "tbf16", ["3xbf16=1"], ["--expected_output=3xbf16=1.01"]),
    ("echo", "tf8", ["3xf8E4M3FN=1 2 3"], ["--expected_output=3xf8E4M3FN=1 2 3"]),
    ("echo", "tsi8", ["2xsi8=-1 2"], ["--expected_output=2xsi8=-1 2"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=(ignored)"]),
    ("echo", "tf32", ["(null)"], ["--expected_output=(null)"]),
    ("echo", "pair", ["2xf32=1", "1x2xf32=3"], ["--expected_output=(ignored)",
                                                 "--expected_output=1x2xf32=3 3"]),
    ("echo", "t2d", ["2x3xf32=1"], ["--expected_output=2x3xf32=1", "--output=-"]),  # wins
    ("compute", "lists", ["7", "2.5", "3xf32=1"], ["--expected_output=(ignored)"] * 2),
    ("compute", "to_bf16", ["3xf32=1 1.00390625 -2"], ["--expected_output=3xbf16=1 1 -2"]),
    # mismatching values: the first differing element, both views printed (1024 elements, whatever
    # --output_max_element_count says), exit 1
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1 2 1"]),
    ("echo", "tf32", ["3xf32=1e30"], ["--expected_output=3xf32=inf"]),
    ("echo", "t0d", ["i32=1"], ["--expected_output=i32=2"]),
    ("echo", "tsi8", ["3xsi8=1"], ["--expected_output=3xsi8=1 -2 3"]),
    ("echo", "tui8", ["3xui8=1"], ["--expected_output=3xui8=1 200 3"]),
    ("echo", "ti1", ["3xi1=01"], ["--expected_output=3xi1=01 00 01"]),
    ("echo", "tc64", ["1xcf64=0000803F00000040"], ["--expected_output=1xcf64=0000803F00000041"]),
    ("echo", "tf64", ["2xf64=1 2"], ["--expected_output=2xf64=1 2.001"]),
    ("echo", "tf16", ["3xf16=1"], ["--expected_output=3xf16=1.002"]),
    ("echo", "tbf16", ["2xbf16=100"], ["--expected_output=2xbf16=100 101"]),
    ("echo", "tf32", ["2000xf32=1"], ["--expected_output=2000xf32=2",
                                      "--output_max_element_count=5"]),
    ("echo", "t2d", ["40x60xf32=1"], ["--expected_output=40x60xf32=1.5"]),
    ("compute", "is_pos", ["4xf32=1 -1 0 nan"], ["--expected_output=4xi1=01 00 00 01"]),
    # shape and element type mismatches
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=4xf32=1"]),
    ("echo", "t2d", ["2x3xf32=1"], ["--expected_output=3x2xf32=1"]),
    ("echo", "t0d", ["i32=1"], ["--expected_output=1xi32=1"]),
    ("echo", "t4d", ["2x0x3x2xi32"], ["--expected_output=2x0x3x1xi32"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf64=1"]),
    ("echo", "tf32", ["2xf32=1 2"], ["--expected_output=2x*32=0000803F 00000040"]),
    ("echo", "ti8", ["2xi8=1"], ["--expected_output=2xsi8=1"]),
    # scalars and other variant kinds: 3.13 reports every primitive result as a type mismatch,
    # even against its own type and value (and `(ignored)` is a zero of the result's type)
    ("echo", "i32s", ["5"], ["--expected_output=5"]),
    ("echo", "i32s", ["5"], ["--expected_output=(ignored)"]),
    ("echo", "i32s", ["5"], ["--expected_output=3xf32=1"]),  # a scalar: atoi reads `3`
    ("echo", "f64s", ["2.5"], ["--expected_output=2.5"]),
    ("echo", "mixed", MIXED, ["--expected_output=1e300", "--expected_output=3xf32=1 2 3",
                              "--expected_output=(ignored)", "--expected_output=2.5",
                              "--expected_output=(null)"]),
    ("echo", "mixed", MIXED, [f"--expected_output={e}" for e in MIXED_IGNORED]),
    ("echo", "tf32", ["(null)"], ["--expected_output=3xf32=1"]),  # a null result is `empty`
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=&3xf32=1"]),  # hal.buffer
    ("echo", "tf32", ["&3xf32=1"], ["--expected_output=3xf32=1"]),
    ("compute", "lists", ["7", "2.5", "3xf32=1"], ["--expected_output=3xf32=1",
                                                   "--expected_output=5"]),
    # counts: fewer is a [FAILED] line; more, or text the result's cconv refuses, a parse error
    ("echo", "mixed", MIXED, ["--expected_output=1e300"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1", "--expected_output=3xf32=1"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3"]),
    ("echo", "i32s", ["5"], ["--expected_output=i32=5"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1 2"]),
    # tolerance flags
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.1", "--expected_f32_threshold=0.2"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.1", "--expected_rtol=0.1"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.00001",
                                   "--expected_f32_threshold=abc"]),  # atof: 0
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.00001", "--expected_rtol=",
                                   "--expected_f32_threshold=1e-50"]),  # float: 0
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.3",
                                   "--expected_f32_threshold=0.25xyz"]),
    ("echo", "tf64", ["2xf64=1"], ["--expected_output=2xf64=1.5", "--expected_f64_threshold=0.5"]),
    ("echo", "tf16", ["2xf16=1"], ["--expected_output=2xf16=1.5", "--expected_f16_threshold=0.5"]),
    ("echo", "tbf16", ["2xbf16=100"], ["--expected_output=2xbf16=101",
                                       "--expected_bf16_threshold=1"]),
    ("echo", "tf32", ["3xf32=0"], ["--expected_output=3xf32=-0", "--equality_mode=exact"]),
    ("echo", "tf32", ["3xf32=nan"], ["--expected_output=3xf32=-nan", "--equality_mode=exact"]),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.00001", "--equality_mode=exact"]),
    ("echo", "tf32", ["3xf32=0"], ["--expected_output=3xf32=-0", "--equality_mode=foo"]),
    ("echo", "tf32", ["3xf32=0"], ["--expected_output=3xf32=-0", '--equality_mode="approximate"']),
    ("echo", "tf32", ["3xf32=1"], ["--expected_output=3xf32=1.5", "--equality_mode=exact",
                                   "--expected_f32_threshold=1"]),
    # where the tool aborts: a mismatch message naming an f8 type of 8+ characters
    ("echo", "tf8", ["3xf8E4M3FN=1"], ["--expected_output=3xf8E4M3FN=1.25"]),
    ("echo", "tf8", ["3xf8E4M3FN=1"], ["--expected_output=3xf8E5M2=1"]),
    ("echo", "tf8", ["3xf8E5M2=1"], ["--expected_output=3xf8E5M2=2"]),  # 6 characters: fine
]


@pytest.mark.parametrize("program,function,inputs,flags", EXPECTED,
                         ids=[f"{p}.{f}.{n}" for n, (p, f, _, _) in enumerate(EXPECTED)])
def test_expected_output_as_iree_run_module(compiled, program, function, inputs, flags):
    path = compiled[program, "inline-static"]
    theirs, mine = iree(path, function, inputs, flags), ours(path, function, inputs, flags)
    if theirs[0] in (0, 1) and not theirs[2]:  # compared: the verdict is on stdout
        assert mine == theirs
    else:  # a status (or an abort) after EXEC
        assert_same_failure(theirs, mine)


@pytest.mark.parametrize("model", MODELS)
def test_expected_output_of_kernel_results(compiled, model):
    """Results computed by the module's kernels (both execution models), within and beyond the
    default tolerances."""
    path = compiled["compute", model]
    x = "5xf32=1 1.00390625 -3.3961514e+38 1e-40 nan"
    for expected in ("5xbf16=1 1 -3.3961514e+38 0 nan", "5xbf16=1 1.0078125 -3.4e38 0 nan",
                     "5xbf16=1 1 -3.3961514e+38 1e-38 nan", "(ignored)"):
        flags = [f"--expected_output={expected}"]
        theirs = iree(path, "to_bf16", [x], flags)
        assert theirs[0] in (0, 1) and not theirs[2], theirs
        assert ours(path, "to_bf16", [x], flags) == theirs, expected


def _boundary_pairs() -> list[tuple[str, str, str, list[str]]]:
    """(element type, actual, expected, flags) around `atol + rtol * |expected|`."""
    pairs = []
    for a, e in [("1", "1.0001"), ("1", "1.00011"), ("1", "1.000111"), ("1", "0.99989"),
                 ("0", "0.0001"), ("0", "0.000100001"), ("1000", "1000.0101"),
                 ("1000", "1000.0102"), ("-1e5", "-100001.1"), ("inf", "-inf"), ("1e38", "inf"),
                 ("nan", "1"), ("1", "nan"), ("1e-45", "-1e-45")]:
        pairs.append(("f32", a, e, []))
    for a, e, flags in [("1", "1.5", ["--expected_f32_threshold=0.5", "--expected_rtol=0"]),
                        ("1", "1.50001", ["--expected_f32_threshold=0.5", "--expected_rtol=0"]),
                        ("1", "1.0000001", ["--expected_f32_threshold=1e-50"]),
                        ("10", "11", ["--expected_rtol=0.1", "--expected_f32_threshold=0"]),
                        ("10", "11.000001", ["--expected_rtol=0.1", "--expected_f32_threshold=0"])]:
        pairs.append(("f32", a, e, flags))
    for a, e in [("1", "1.001"), ("1", "1.002"), ("2048", "2050"), ("0", "0.0009765625"),
                 ("65504", "inf"), ("6e-8", "0")]:
        pairs.append(("f16", a, e, []))
    pairs.append(("f16", "2048", "2050", ["--expected_f16_threshold=2"]))
    for a, e in [("1", "1.0078125"), ("1", "1.015625"), ("100", "101"), ("0", "0.01"),
                 ("0", "0.0100098")]:
        pairs.append(("bf16", a, e, []))
    pairs.append(("bf16", "100", "101", ["--expected_bf16_threshold=1"]))
    for a, e in [("1", "1.0001"), ("1", "1.00011"), ("1", "1.0001100011"), ("1", "1.00011000111"),
                 ("1e300", "1.00001e300"), ("1e300", "1.0000100001e300")]:
        pairs.append(("f64", a, e, []))
    pairs.append(("f64", "1", "1.25", ["--expected_f64_threshold=0.25", "--expected_rtol=0"]))
    return pairs


def test_tolerance_boundaries_as_iree_run_module(compiled):
    """Element pairs on either side of the approximate-mode bound, per float type and flags."""
    path = compiled["echo", "inline-static"]
    function = {"f32": "tf32", "f16": "tf16", "bf16": "tbf16", "f64": "tf64"}
    for kind, a, e, flags in _boundary_pairs():
        inputs, all_flags = [f"1x{kind}={a}"], [f"--expected_output=1x{kind}={e}", *flags]
        theirs = iree(path, function[kind], inputs, all_flags)
        assert theirs[0] in (0, 1) and not theirs[2], theirs
        assert ours(path, function[kind], inputs, all_flags) == theirs, (kind, a, e, flags)


# --------------------------------------------------------------------------------------------------
# Program.call: vm.list results as Python lists


def _printed_value(text: str, lines):
    """A value as iree-run-module prints it, read back into Python: `vm.list` (items until the
    blank line), `hal.buffer_view` (the view on the next line), `(null)`, `i32=7`, `f32=2.5`."""
    if text == "vm.list":
        items = []
        for line in lines:
            if not line:
                return items
            head, _, rest = line.partition(": ")
            assert head == f"child_list[{len(items)}]", line
            items.append(_printed_value(rest, lines))
        raise AssertionError("unterminated vm.list")
    if text == "hal.buffer_view":
        return parse_input(next(lines), "r")
    if text == "(null)":
        return None
    kind, _, number = text.partition("=")
    return int(number) if kind[0] == "i" else float(number)


def _assert_same(got, want, where="result") -> None:
    if isinstance(want, list):
        assert isinstance(got, list), (where, got)
        assert len(got) == len(want), (where, got)
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype, (where, got)
        np.testing.assert_array_equal(got, want)
    else:
        assert type(got) is type(want) and got == want, (where, got, want)


@pytest.mark.parametrize("model", MODELS)
def test_program_returns_lists_as_python_lists(compiled, model):
    """`Program.call` gives a vm.list result as a Python list (nested lists, numpy arrays, Python
    ints / floats, None) holding what iree-run-module prints for it, and `format_results` prints
    the result exactly as the tool does."""
    path = compiled["compute", model]
    inputs = ["7", "2.5", "3xf32=1 2 3"]
    theirs = iree(path, "lists", inputs)
    assert theirs[0] == 0, theirs[2]
    lines = iter(theirs[1].splitlines())
    assert next(lines) == "EXEC @lists"
    head, _, text = next(lines).partition(": ")
    assert head == "result[0]"
    want = _printed_value(text, lines)
    assert want == [7, want[1], None, [2.5]]  # what the program stores, as the tool shows it
    with Program(path) as p:
        got = p.call("lists", np.int32(7), np.float32(2.5), np.array([1, 2, 3], np.float32))
        listed = p.call_results("lists", np.int32(7), np.float32(2.5), np.array([1, 2, 3], np.float32))
    assert len(got) == 2 and type(got[0]) is not tuple
    _assert_same(got[0], want)
    assert type(got[1]) is int and f"result[1]: i64={got[1]}" in theirs[1]
    assert type(listed[1]) is np.int64 and "EXEC @lists\n" + format_results(listed) == theirs[1]
