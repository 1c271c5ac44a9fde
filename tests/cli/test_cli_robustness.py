"""Every CLI command fails in one clear message, never a traceback (issue 18, "Every CLI command").

OS errors, out of memory and Ctrl-C anywhere; unwritable fixture folders and malformed fixture
sidecars; module files refused from their header on a memory map before being read whole; empty
target names; IREE's text for a hex element of a packed type; `run --max-steps` and `--reference`.
Where iree-run-module has an answer, it is run on the same input.
"""
from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.cli import cmd_run
from ireeabi.cli.main import CANCELLED_LINE, main
from ireeabi.layouts import fixtures
from ireeabi.hal.string_util import InputParseError
from ireeabi.tooling.function_io import parse_input

HERE = Path(__file__).parents[1]
FIXTURES = HERE / "fixtures" / "signatures"
F64 = ("--iree-input-demote-f64-to-f32=false",)
GIB3 = 3 << 30


def cli(*argv: str) -> tuple[int, str, str]:
    """`ireeabi ARGV` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def cli_process(*argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ireeabi.cli.main", *argv], capture_output=True,
                          text=True, timeout=120, **kw)


def squash(text: str) -> str:  # error messages are wrapped to the terminal width
    return "".join(text.split())


def clean_failure(rc: int, err: str, code: int) -> None:
    assert rc == code, (rc, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.startswith("ireeabi"), err


@pytest.fixture(scope="module")
def control() -> Path:
    """Host program with a loop: sum_squares(n) runs n iterations."""
    return tools.compile_with_flags(HERE / "programs" / "host" / "control.mlir", tools.HOST_FLAGS)


@pytest.fixture(scope="module")
def echo() -> Path:
    return tools.compile_mlir(HERE / "programs" / "io_fidelity" / "echo.mlir", model="inline-static",
                              extra_flags=F64)


@pytest.fixture(scope="module")
def add16() -> Path:
    return tools.compile_mlir(HERE / "programs" / "add16.mlir", model="inline-dynamic")


# --------------------------------------------------------------------------------------------------
# Ctrl-C, out of memory and OS errors in cli/main.py


def test_ctrl_c_during_run_is_cancelled_in_one_line(control):
    """SIGINT in the middle of a long call: IREE's CANCELLED status in one line, exit 1."""
    proc = subprocess.Popen([sys.executable, "-u", "-m", "ireeabi.cli.main", "run", str(control),
                             "--function", "sum_squares", "--input", str(2**31 - 1)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "EXEC @sum_squares\n"  # the call has started
        time.sleep(0.5)
        assert proc.poll() is None, "the loop of 2**31 - 1 iterations ended already"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert err == CANCELLED_LINE + "\n"
    assert CANCELLED_LINE == "ireeabi: CANCELLED; interrupted (Ctrl-C)"


@pytest.mark.parametrize("command", [["layout", "iree_vm_buffer_t"], ["check", "0i_i"], ["targets"],
                                     ["list"], ["fixtures", "verify", str(FIXTURES)]])
def test_ctrl_c_and_out_of_memory_in_any_command(monkeypatch, command):
    """Whatever a command is doing when Ctrl-C or an exhausted allocator strikes: one line, exit 1."""
    import ireeabi.cli.main as cli_main
    for exc, line in ((KeyboardInterrupt(), CANCELLED_LINE),
                      (MemoryError(), "ireeabi: error: RESOURCE_EXHAUSTED; out of memory: the host "
                                      "refused an allocation")):
        def fail(args, out, exc=exc):
            out.write("partial output\n")
            raise exc
        monkeypatch.setitem(cli_main.COMMANDS, command[0], fail)
        rc, out, err = cli(*command)
        assert (rc, err) == (1, line + "\n")


def test_out_of_memory_reading_a_module_is_resource_exhausted(tmp_path, add16):
    """A module followed by 3 GiB passes the header checks and is read whole; under an address
    space limit that read fails, and the failure is RESOURCE_EXHAUSTED, not a MemoryError."""
    big = tmp_path / "big.vmfb"
    shutil.copyfile(add16, big)
    with open(big, "r+b") as f:
        f.truncate(GIB3)
    script = (
        "import re, resource, sys\n"
        "from ireeabi.cli.main import main\n"
        "vm = int(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
        "resource.setrlimit(resource.RLIMIT_AS, (vm * 1024 + (1 << 30), resource.RLIM_INFINITY))\n"
        "sys.exit(main(sys.argv[1:]))\n")
    p = subprocess.run([sys.executable, "-c", script, "inspect", str(big)], capture_output=True,
                       text=True, timeout=120)
    clean_failure(p.returncode, p.stderr, 1)
    assert p.stderr.startswith("ireeabi: error: RESOURCE_EXHAUSTED; out of memory"), p.stderr


def test_full_disk_on_standard_output_is_one_line():
    """stdout on /dev/full: the flush fails with ENOSPC; one line, exit 1, and no second report
    from the interpreter's flush at exit."""
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "ireeabi.cli.main", "targets"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    clean_failure(p.returncode, p.stderr, 1)
    assert p.stderr == ("ireeabi: error: cannot write the output: No space left on device "
                        "(ENOSPC)\n")


@pytest.mark.parametrize("command", ["inspect", "run"])
def test_unreadable_module_names_the_path_and_reason(command):
    """A regular file whose read fails (EIO): the path and the system's reason, exit 1."""
    rc, out, err = cli(command, "/proc/self/mem")
    clean_failure(rc, err, 1)
    assert err == "ireeabi: error: /proc/self/mem: Input/output error (EIO)\n"


@pytest.mark.parametrize("command", ["inspect", "run"])
def test_not_a_module_path(tmp_path, command):
    code = 1 if command == "run" else 2
    rc, _, err = cli(command, str(tmp_path / "absent.vmfb"))
    clean_failure(rc, err, code)
    assert squash(f"no module file at {tmp_path / 'absent.vmfb'}") in squash(err)
    rc, _, err = cli(command, str(tmp_path))
    clean_failure(rc, err, code)
    assert squash(f"{tmp_path} is not a regular file") in squash(err)


# --------------------------------------------------------------------------------------------------
# fixtures build / verify


def _unwritable_fixture(root: Path) -> Path:
    """A fixture file the process cannot write (EACCES): a read-only folder, or for root (whom
    modes do not stop) the fixture's name linked to a read-only kernel file."""
    first = next(fixtures.instances())
    folder = root / first.target
    folder.mkdir(parents=True)
    if os.geteuid() != 0:
        folder.chmod(0o500)
        return folder / f"{first.stem}.bin"
    (folder / f"{first.stem}.bin").symlink_to("/proc/sys/kernel/ostype")
    return folder / f"{first.stem}.bin"


@pytest.mark.parametrize("case", ["under-a-file", "is-a-file", "permission", "disk-full"])
def test_fixtures_build_into_an_unwritable_place(tmp_path, case):
    regular = tmp_path / "file"
    regular.write_text("x")
    if case == "under-a-file":
        root, named, reason = regular / "sub", regular / "sub" / "x86_64", "Not a directory"
    elif case == "is-a-file":
        root, named, reason = regular, regular, "it is not a folder"
    elif case == "permission":
        root = tmp_path / "out"
        named, reason = _unwritable_fixture(root), "Permission denied"
    else:
        root = tmp_path / "out"
        first = next(fixtures.instances())
        (root / first.target).mkdir(parents=True)
        named = root / first.target / f"{first.stem}.bin"
        named.symlink_to("/dev/full")
        reason = "No space left on device"
    try:
        with pytest.raises(fixtures.FixtureError) as e:
            fixtures.build(root)
        assert str(named) in str(e.value) and reason in str(e.value)
        rc, out, err = cli("fixtures", "build", str(root))
        clean_failure(rc, err, 2)
        assert squash(f"{named}: {reason}") in squash(err), err
        assert out == ""
    finally:
        if case == "permission" and os.geteuid() != 0:
            named.parent.chmod(0o700)


@pytest.fixture
def fixture_copy(tmp_path) -> Path:
    root = tmp_path / "signatures"
    shutil.copytree(FIXTURES, root)
    return root


SIDECARS = [
    # (sidecar text, the key the message names, whether to change the .bin as well)
    ("[]", "the top level is a JSON list, not an object", True),
    ('"fields"', "the top level is a JSON string, not an object", False),
    ('{"fields": []}', "key 'size' is missing", False),
    ('{"size": 16}', "key 'fields' is missing", True),
    ('{"size": "16", "fields": []}', "key 'size' is a JSON string, not an integer", False),
    ('{"size": true, "fields": []}', "key 'size' is a JSON boolean, not an integer", False),
    ('{"size": 16, "fields": {}}', "key 'fields' is a JSON object, not a list", True),
    ('{"size": 16, "fields": [3]}', "fields[0] is a JSON integer, not an object", True),
    ('{"size": 16, "fields": [{"name": "a", "size": 4}]}', "fields[0].offset is missing", True),
    ('{"size": 16, "fields": [{"name": "a", "offset": 0, "size": 4}, '
     '{"name": "b", "offset": "4", "size": 4}]}', "fields[1].offset is a JSON string, not an integer",
     True),
    ('{"size": 16, "fields": [{"name": null, "offset": 0, "size": 4}]}',
     "fields[0].name is a JSON null, not a string", False),
]


@pytest.mark.parametrize("text,problem,change_bin", SIDECARS)
def test_fixtures_verify_malformed_sidecar(fixture_copy, text, problem, change_bin):
    """Valid JSON of the wrong shape: a FixtureError naming the sidecar and the key (these were
    AttributeError, KeyError or TypeError when a byte differed and verify looked up its field)."""
    inst = next(fixtures.instances())
    sidecar = fixture_copy / inst.target / f"{inst.stem}.json"
    sidecar.write_text(text)
    if change_bin:
        binary = sidecar.with_suffix(".bin")
        data = bytearray(binary.read_bytes())
        data[0] ^= 0xFF
        binary.write_bytes(bytes(data))
    with pytest.raises(fixtures.FixtureError) as e:
        fixtures.verify(fixture_copy)
    assert str(e.value) == f"malformed fixture sidecar {sidecar}: {problem}"
    rc, out, err = cli("fixtures", "verify", str(fixture_copy))
    clean_failure(rc, err, 2)
    assert squash(f"{sidecar}: {problem}") in squash(err)


def test_fixtures_verify_reads_no_more_than_it_compares(fixture_copy):
    """A 3 GiB fixture file (sparse) and a 3 GiB sidecar: verify reports both as differing without
    reading either whole."""
    inst = next(fixtures.instances())
    binary = fixture_copy / inst.target / f"{inst.stem}.bin"
    size = binary.stat().st_size
    with open(binary, "r+b") as f:
        f.truncate(GIB3)
    other = list(fixtures.instances())[1]
    with open(fixture_copy / other.target / f"{other.stem}.json", "r+b") as f:
        f.truncate(GIB3)
    script = ("import resource, sys\nfrom ireeabi.layouts import fixtures\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "bad = fixtures.verify(sys.argv[1])\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
              "print('\\n'.join(map(str, bad)))\n")
    p = subprocess.run([sys.executable, "-c", script, str(fixture_copy)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    grown_kib, *lines = p.stdout.splitlines()
    assert int(grown_kib) < 64 * 1024
    assert lines[0] == (f"{inst.target}/{inst.stem} at offset {size} (field padding): fixture "
                        f"byte 0 but the engine now packs None (sizes {GIB3} / {size}; now at "
                        f"this offset: padding)")
    assert lines[1].startswith(f"{other.target}/{other.stem}: unreadable sidecar: {GIB3} bytes")
    assert len(lines) == 2


def test_fixtures_verify_unreadable_fixture_names_it(fixture_copy):
    inst = next(fixtures.instances())
    binary = fixture_copy / inst.target / f"{inst.stem}.bin"
    binary.unlink()
    binary.symlink_to("/proc/self/mem")  # a regular file whose read fails (EIO)
    rc, out, err = cli("fixtures", "verify", str(fixture_copy))
    clean_failure(rc, err, 2)
    assert squash(f"cannot read fixture {binary}: Input/output error") in squash(err)


# --------------------------------------------------------------------------------------------------
# Module files: header first, on a memory map


def _rss_script(command: str, path: Path) -> subprocess.CompletedProcess:
    # the exit status, the bytes the command read (read(2) and friends: /proc/self/io's rchar) and
    # the growth of its peak RSS (a memory-mapped file's touched pages count there)
    script = ("import resource, sys\nfrom ireeabi.cli.main import main\n"
              "def rchar():\n"
              "    return int(open('/proc/self/io').read().split('rchar: ')[1].split()[0])\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "read = rchar()\n"
              "rc = main(sys.argv[1:])\n"
              "print(rc, rchar() - read,\n"
              "      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    return subprocess.run([sys.executable, "-c", script, command, str(path)], capture_output=True,
                          text=True, timeout=120)


BAD_HEADERS = [
    # (first bytes of a 3 GiB file, what the refusal says)
    (b"this is no module at all, just text", "identifier mismatch"),
    (b"\x00" * 64, "buffer header too small"),
    ((0xFFFFFF00).to_bytes(4, "little") + b"\x08\x00\x00\x00IREE", "exceeds the"),
    ((64).to_bytes(4, "little") + b"\x08\x00\x00\x00IREE" + b"\xFF" * 56,
     "FlatBuffer verification failed"),
    (b"PK\x03\x04" + b"\x00" * 22 + b"\xFF\xFF\xFF\xFF", "buffer header too small (size prefix 0"),
]


@pytest.mark.parametrize("command", ["inspect", "run"])
@pytest.mark.parametrize("head,why", BAD_HEADERS)
def test_large_non_module_is_refused_without_reading_it(tmp_path, command, head, why):
    """A 3 GiB sparse file that is no module: refused from its header (and FlatBuffer), with the
    reader's own message, reading no more of it than of a 2 GiB file with the same header (the
    command's own imports read the same either way; each header here is refused alike at both
    sizes), while the peak RSS grows by less than 64 MiB."""
    read = {}
    for name, size in (("small", 2 << 30), ("big", GIB3)):
        path = tmp_path / f"{name}.vmfb"
        with open(path, "wb") as f:
            f.write(head)
            f.truncate(size)
        p = _rss_script(command, path)
        rc, read_bytes, grown_kib = p.stdout.split()
        clean_failure(int(rc), p.stderr, 1 if command == "run" else 2)
        assert why in squash(p.stderr) or squash(why) in squash(p.stderr), p.stderr
        read[name] = int(read_bytes)
    assert read["big"] <= read["small"] + (64 << 10), read
    assert int(grown_kib) < 64 * 1024, grown_kib


@pytest.mark.parametrize("size", [0, 1, 15])
def test_short_module_files_are_refused_as_the_reader_does(tmp_path, size):
    path = tmp_path / "short.vmfb"
    path.write_bytes(b"\x01" * size)
    for command, code in (("inspect", 2), ("run", 1)):
        rc, _, err = cli(command, str(path))
        clean_failure(rc, err, code)
        assert squash("FlatBuffer data is not present or less than 16 bytes") in squash(err)


def test_a_module_still_loads_through_the_map(add16):
    rc, out, err = cli("inspect", str(add16))
    assert (rc, err) == (0, "")
    assert "add" in out and "hal_loader" in out


# --------------------------------------------------------------------------------------------------
# --target ''


@pytest.mark.parametrize("empty", ["", " "])
def test_empty_target_is_an_error_for_every_command(tmp_path, add16, empty):
    for argv, code in ((["layout", "iree_vm_buffer_t"], 2), (["check", "0i_i"], 2),
                       (["inspect", str(add16)], 2), (["run", str(add16)], 1),
                       # the argument is checked before the file
                       (["inspect", str(tmp_path / "absent.vmfb")], 2),
                       (["run", str(tmp_path / "absent.vmfb")], 1)):
        for flag in ("--target", "-t"):
            rc, out, err = cli(*argv, flag, empty)
            clean_failure(rc, err, code)
            assert err.startswith("ireeabi: error: --target is empty; valid targets: x86_64"), err
            assert out == ""


# --------------------------------------------------------------------------------------------------
# `--input=16xi255=1`: IREE's hex length error


def _iree_run(path: Path, function: str, *args: str) -> tuple[int, str, str]:
    p = subprocess.run([tools.find_tool("iree-run-module"), tools.RUN_DEVICE, f"--module={path}",
                        f"--function={function}", *args], capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def _iree_status(stderr: str) -> str:
    """`CODE; message; parsing input `...``: without the source location and the tool's notes."""
    line = re.sub(r"^\S+\.c:\d+: ", "", stderr.strip().splitlines()[0])
    return line.split("; parsing function inputs")[0]


@pytest.mark.parametrize("value", ["16xi255=1", "16xi249=01", "2xi250=00 00", "1xi255=" + "0" * 63])
def test_hex_elements_of_wide_packed_types_fail_as_in_iree(echo, value):
    """Packed types of 249..255 bits take 32-byte hex elements in IREE; a short one is its
    INVALID_ARGUMENT hex length error (it was a bit-count error of ireeabi's own)."""
    theirs = _iree_run(echo, "tf32", f"--input={value}")
    assert theirs[0] != 0 and theirs[1] == ""
    status = _iree_status(theirs[2])
    assert status.startswith("INVALID_ARGUMENT; binary hex element count mismatch: buffer length=")
    assert status.endswith("< expected=64; parsing input `" + value + "`")
    rc, out, err = cli("run", str(echo), "--function", "tf32", f"--input={value}")
    clean_failure(rc, err, 1)
    assert out == ""
    assert squash(status) in squash(err), (status, err)
    with pytest.raises(InputParseError) as e:
        parse_input(value, "r")
    assert e.value.reason in status


# --------------------------------------------------------------------------------------------------
# run --max-steps, run --reference


def test_max_steps_ends_a_long_loop_with_deadline_exceeded(control):
    rc, out, err = cli("run", str(control), "--function", "sum_squares", f"--input={2**31 - 1}",
                       "--max-steps", "20000")
    clean_failure(rc, err, 1)
    assert out == "EXEC @sum_squares\n"
    assert squash("DEADLINE_EXCEEDED; the call ran 20000 instructions") in squash(err)
    assert squash("(in sum_squares at pc 0x") in squash(err)


def test_max_steps_large_enough_changes_nothing(control):
    want = _iree_run(control, "sum_squares", "--input=7")
    assert want[0] == 0
    for flag in ((), ("--max-steps", "20000"), ("--max_steps=20000",)):
        assert cli("run", str(control), "--function", "sum_squares", "--input=7", *flag) == \
            (0, want[1], "")


@pytest.mark.parametrize("bad", ["0", "-1", "1.5", "ten", "", "0x10"])
def test_max_steps_must_be_a_positive_count(control, bad, capsys):
    rc, out, err = cli("run", str(control), "--function", "sum_squares", "--input=7",
                       f"--max-steps={bad}")
    assert rc == 2 and out == ""
    assert f"--max-steps/--max_steps: {bad!r} is not a positive instruction count" in \
        capsys.readouterr().err  # argparse's usage error


def test_reference_runs_the_reference_path_with_the_same_output(monkeypatch, add16, control):
    """--reference gives iree-run-module's output, as the default does, and its program really
    runs the per-instruction path (the compiled blocks are off)."""
    monkeypatch.delenv("IREEABI_REFERENCE", raising=False)
    made = []

    class Spy(cmd_run.Program):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append((self.context.reference, self.context.compiled))

    monkeypatch.setattr(cmd_run, "Program", Spy)
    cases = [(add16, "add", ["--input=16xf32=1.5", "--input=16xf32=-2"]),
             (control, "sum_squares", ["--input=9"]), (control, "collatz", ["--input=27"])]
    for path, function, inputs in cases:
        want = _iree_run(path, function, *inputs)
        assert want[0] == 0
        default = cli("run", str(path), "--function", function, *inputs)
        reference = cli("run", str(path), "--function", function, *inputs, "--reference")
        assert default == reference == (0, want[1], "")
    assert made == [(False, True), (True, False)] * len(cases)
