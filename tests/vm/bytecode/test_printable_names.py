"""Names from a module are shown escaped (issue 30, item 6): a real iree-compile module whose type,
import and function names are rewritten in place (same length) to hold NUL, ESC, a newline, a byte
that is not UTF-8 and a backslash loads with those names intact (they round-trip to the file's
bytes), and every message or line that echoes them shows `\\x00`, `\\x1b`, `\\x0a`, `\\xff`, `\\\\`
instead of the raw characters. iree-run-module, given the same files, fails the same way (its
messages are the oracle for the statuses; they print the names raw, cut at the NUL)."""
from __future__ import annotations

import codecs
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ireeabi.abi.printable import printable, printable_text
from ireeabi.modules.hal.runtime import run_module_type_names
from ireeabi.vm.bytecode.module_errors import ModuleFileError
from ireeabi.vm.bytecode.module_file import read_module
from ireeabi.base.status import StatusCode

from support import iree_tools as tools

PROGRAMS = Path(__file__).parents[2] / "programs"
NASTY = b"\x00\x1b\n\xff\\"  # NUL, ESC, newline, not UTF-8, backslash
SHOWN = r"\x00\x1b\x0a\xff\\"  # how `printable` shows them
RAW_CHARS = ("\x00", "\x1b", "\udcff")


def _flatbuffer_string(text: bytes) -> bytes:
    return len(text).to_bytes(4, "little") + text + b"\0"


def _rename(data: bytes, old: bytes, new: bytes, times: int = 1) -> bytes:
    """`data` with the FlatBuffer string `old` (its length prefix and terminator included, found
    `times` times) rewritten in place to `new`, of the same length."""
    assert len(old) == len(new)
    before, after = _flatbuffer_string(old), _flatbuffer_string(new)
    assert data.count(before) == times, old
    return data.replace(before, after)


@pytest.fixture(scope="module")
def add16(tmp_path_factory) -> bytes:
    return tools.compile_mlir(PROGRAMS / "add16.mlir", tmp_path_factory.mktemp("names"),
                              model="inline-static").read_bytes()


def _write(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "renamed.vmfb"
    path.write_bytes(data)
    return str(path)


def _cli(*argv: str) -> tuple[int, str]:
    """`ireeabi ARGV` in a process of its own (the real encoding of its output): exit, stderr."""
    proc = subprocess.run([sys.executable, "-m", "ireeabi.cli", *argv], capture_output=True,
                          timeout=600)
    return proc.returncode, proc.stderr.decode("utf-8", "surrogateescape")


def _iree_run(path: str) -> tuple[int, bytes]:
    proc = subprocess.run([tools.find_tool("iree-run-module"), tools.RUN_DEVICE, f"--module={path}",
                           "--function=add", "--input=16xf32=1", "--input=16xf32=2"],
                          capture_output=True, timeout=600)
    return proc.returncode, proc.stderr


def _assert_clean(text: str) -> None:
    for ch in RAW_CHARS:
        assert ch not in text, (ch, text)
    assert all(line.isprintable() for line in text.split("\n")), text


# -- the function ------------------------------------------------------------------------------------


def test_printable_escapes_each_kind_of_character():
    assert printable("hal_inline.buffer.allocate") == "hal_inline.buffer.allocate"
    assert printable(NASTY) == SHOWN
    assert printable(NASTY.decode("utf-8", "surrogateescape")) == SHOWN
    assert printable("caf\u00e9 \u0085\u00a0\u200b\U000e0001\x7f") == \
        "caf\u00e9 \\u0085\\u00a0\\u200b\\U000e0001\\x7f"
    assert printable(b"\xc2\x85") == "\\u0085" and printable(b"\x85") == "\\x85"  # a char, a byte
    assert printable_text("import a\\x00b: `\x00`\n") == "import a\\x00b: `\\x00`\\x0a"
    assert printable_text(printable(NASTY)) == printable(NASTY)  # idempotent on escaped text
    assert printable_text("input `2xi1=\t-1`") == "input `2xi1=\t-1`"  # as iree-run-module echoes it


@given(st.binary(max_size=40))
def test_printable_bytes_escape_decode_back(name):
    """Python's own escape decoder (codecs.escape_decode: `\\xNN` and `\\\\` back to bytes) gives
    back the very bytes of a name of ASCII and bytes that are not UTF-8."""
    text = name.decode("utf-8", "surrogateescape")
    assume(all(ord(c) < 0x80 or 0xDC80 <= ord(c) <= 0xDCFF for c in text))
    shown = printable(name)
    assert shown.isascii() and shown.isprintable()
    assert codecs.escape_decode(shown.encode("ascii"))[0] == name


@given(st.text(alphabet=st.characters(max_codepoint=0xFF, exclude_categories=("Cs",)), max_size=40))
def test_printable_text_unicode_escape_decodes_back(name):
    """Python's unicode_escape decoder gives back a name of characters (controls, U+0085, U+00A0
    included): `\\uNNNN` for a character, never the `\\xNN` of a raw byte."""
    shown = printable(name)
    assert shown.isprintable()
    assert codecs.decode(shown.encode("latin-1"), "unicode_escape") == name
    assert all(f"\\x{b:02x}" not in shown.replace("\\\\", "") for b in range(0x80, 0x100))


# -- a module with such names -------------------------------------------------------------------------


def test_names_load_intact_and_round_trip_to_the_files_bytes(add16):
    data = _rename(add16, b"hal_inline.buffer.storage", b"hal_inline." + NASTY + b"r.storage")
    data = _rename(data, b"module", NASTY + b"m")
    m = read_module(data)
    imported = m.imported_functions[1].full_name
    assert imported.encode("utf-8", "surrogateescape") == b"hal_inline." + NASTY + b"r.storage"
    assert m.name.encode("utf-8", "surrogateescape") == NASTY + b"m"
    assert printable(m.name) == SHOWN + "m"


def test_a_type_name_in_a_loader_error_is_escaped(add16, tmp_path):
    data = _rename(add16, b"!hal.buffer_view", b"!hal." + NASTY + b"r_view")
    path = _write(tmp_path, data)
    iree_rc, iree_err = _iree_run(path)
    assert iree_rc == 1 and b"NOT_FOUND; no type registered with name '!hal." in iree_err
    with pytest.raises(ModuleFileError) as e:
        read_module(data, ref_types=run_module_type_names())
    assert e.value.code == StatusCode.NOT_FOUND
    assert f"no type registered with name '!hal.{SHOWN}r_view'" in str(e.value)
    _assert_clean(str(e.value))
    for command in (["run", path, "--function=add", "--input=16xf32=1", "--input=16xf32=2"],
                    ["inspect", path]):
        rc, err = _cli(*command)
        assert rc == (1 if command[0] == "run" else 2), err
        assert f"'!hal.{SHOWN}r_view'" in "".join(err.split()), err
        _assert_clean(err)


def test_an_import_name_in_a_resolution_error_is_escaped(add16, tmp_path):
    """IREE: NOT_FOUND, no function `...` exported by module `hal_inline` (the name cut at its
    NUL); ireeabi the same, the name whole and escaped."""
    path = _write(tmp_path, _rename(add16, b"hal_inline.buffer.storage",
                                    b"hal_inline." + NASTY + b"r.storage"))
    iree_rc, iree_err = _iree_run(path)
    assert iree_rc == 1
    assert b"NOT_FOUND; no function `` exported by module `hal_inline`; resolving module 'module' " \
           b"imports" in iree_err
    rc, err = _cli("run", path, "--function=add", "--input=16xf32=1", "--input=16xf32=2")
    assert rc == 1
    flat = "".join(err.split())
    assert f"importhal_inline.{SHOWN}r.storage:nofunction`" in flat, err
    assert "exportedbymodule`hal_inline`;resolvingmodule'module'imports" in flat, err
    _assert_clean(err)


def test_an_export_name_listed_in_an_error_is_escaped(add16, tmp_path):
    """The only export renamed (with its debug name): `run --function add` finds nothing (as
    iree-run-module does) and the valid names it lists are escaped."""
    path = _write(tmp_path, _rename(add16, b"add", b"\x00\x1b\n", times=2))
    iree_rc, iree_err = _iree_run(path)
    assert iree_rc == 1 and b"NOT_FOUND; no function `add` exported by module" in iree_err
    rc, err = _cli("run", path, "--function=add", "--input=16xf32=1", "--input=16xf32=2")
    assert rc == 1
    assert err.rstrip("\n").endswith(r"valid: \x00\x1b\x0a"), err
    _assert_clean(err)


def test_names_in_the_output_reach_it_escaped(add16, tmp_path):
    """`ireeabi inspect` lists the renamed import: its NUL, ESC and the byte that is not UTF-8 reach
    stdout as `\\x00`, `\\x1b`, `\\xff` (the command line's output stream escapes what a
    command echoes), never raw."""
    path = _write(tmp_path, _rename(add16, b"hal_inline.buffer.storage",
                                    b"hal_inline." + NASTY + b"r.storage"))
    proc = subprocess.run([sys.executable, "-m", "ireeabi.cli", "inspect", path], capture_output=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert b"hal_inline.\\x00\\x1b" in proc.stdout and b"\\xff" in proc.stdout
    for raw in (b"\x00", b"\x1b", b"\xff"):
        assert raw not in proc.stdout
    # The whole name in the import listing, escaped at its source: its newline neither splits the
    # line nor becomes a space, its backslash is doubled.
    assert ("hal_inline." + SHOWN + "r.storage").encode() in proc.stdout, proc.stdout


def test_a_backslash_in_a_name_is_doubled_wherever_a_message_composes_it(add16, tmp_path):
    """An import named with the text `\\x00` and then a real NUL: every place a message composes the
    name (the import, IREE's lookup failure quoted after it, the import check's detail) shows
    `\\\\x00\\x00`, so the text and the byte stay apart; a module name's `\\n` (two characters) is
    `\\\\n`, never a lone backslash that would read as an escape."""
    path = _write(tmp_path, _rename(add16, b"hal_inline.buffer.storage", b"hal_inline.\\x00\x00r.storage"))
    shown = r"\\x00\x00r.storage"
    rc, err = _cli("run", path, "--function=add", "--input=16xf32=1", "--input=16xf32=2")
    flat = "".join(err.split())
    assert rc == 1 and f"importhal_inline.{shown}:nofunction`{shown}`exportedbymodule`hal_inline`" in flat, err
    rc, out = _cli_out("inspect", path, "--check-imports")
    assert f"hal_inline.{shown} 0r_r: missing - `hal_inline` exports no function" in out, out
    assert f"`{shown}`" in "".join(out.split()), out
    path = _write(tmp_path, _rename(add16, b"hal_inline.buffer.storage", b"hal_\\nline.buffer.storage"))
    rc, err = _cli("run", path, "--function=add", "--input=16xf32=1", "--input=16xf32=2")
    flat = "".join(err.split())
    assert rc == 1 and r"importhal_\\nline.buffer.storage:module'hal_\\nline'requiredforimport" \
                       r"'hal_\\nline.buffer.storage'notregistered" in flat, err
    assert "\\n" not in err.replace("\\\\n", ""), err  # no lone backslash before the n


def _cli_out(*argv: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "ireeabi.cli", *argv], capture_output=True, timeout=600)
    return proc.returncode, proc.stdout.decode("utf-8", "surrogateescape")
