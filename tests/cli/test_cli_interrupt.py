"""Ctrl-C anywhere in the `ireeabi` process ends in IREE's CANCELLED line and exit 1 (issue 30, item 5):
never a traceback, never a death by SIGINT, whether it lands while the command line's modules are
imported, while the arguments are parsed, while a call runs or while the output is written.

The child is the real process (the console script, `python -m ireeabi.cli`, `python -m ireeabi`),
with no test hook in the product. Where the signal is sent is chosen by what the child observably
did, never by a delay:

- start-up: Python's own `-X importtime` (PYTHONPROFILEIMPORTTIME=1) prints a line to stderr as each
  import ends; SIGINT follows the k-th import line after `ireeabi.cli.interrupt`'s (the entry's
  first import; the next line printed comes from after its `install`), for k spread over the whole
  start-up;
- the command itself then reads an input from a FIFO nobody writes (`--input 16xf32=@FIFO`), so it
  can never finish before the signal: wherever the signal lands, the process is still running;
- a run: SIGINT after the child has used N more clock ticks of CPU (/proc/PID/stat) inside a call
  of 2**31 - 1 loop iterations;
- output: the child's stdout is a pipe shrunk to one page, not read until after the signal: once
  it holds some output (FIONREAD), the child is writing, and cannot finish (it has twice as much).

What is not covered, because no package code runs there: the interpreter's own start-up before the
entry's first line (before Python installs its handler the kernel's default ends the process; in
`site`, Python reports a fatal error). See cli/interrupt.py.
"""
from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from support import iree_tools as tools
from ireeabi.cli.interrupt import CANCELLED_LINE

HERE = Path(__file__).parents[1]
MARKER = "ireeabi.cli.interrupt"  # the entry's first import; `install` runs before the next line
BEFORE_INSTALL = {"ireeabi.cli.__main__"}  # printed after MARKER, but before `run` is called
BACKSTOP = 600.0  # seconds: only a child that never ends hits it (a failure either way)
POLL = 0.02  # seconds between looks at the child: how often we look, never a verdict


def _entries() -> dict[str, list[str]]:
    script = Path(sys.executable).parent / "ireeabi"
    assert script.is_file(), f"the console script {script} is not installed: pip install -e ."
    return {"console script": [str(script)],
            "python -m ireeabi.cli": [sys.executable, "-m", "ireeabi.cli"],
            "python -m ireeabi": [sys.executable, "-m", "ireeabi"]}


ENTRIES = _entries()


@pytest.fixture(scope="module")
def add16() -> Path:
    return tools.compile_mlir(HERE / "programs" / "add16.mlir", model="inline-static")


@pytest.fixture(scope="module")
def control() -> Path:
    """Host program with a loop: sum_squares(n) runs n iterations."""
    return tools.compile_with_flags(HERE / "programs" / "host" / "control.mlir", tools.HOST_FLAGS)


@pytest.fixture(scope="module")
def fifo(tmp_path_factory):
    """A FIFO held open for writing (O_RDWR: no wait for a reader) and never written: a child that
    reads it blocks until a signal ends it."""
    path = tmp_path_factory.mktemp("interrupt") / "input.fifo"
    os.mkfifo(path)
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    yield path
    os.close(fd)


def _start(entry: str, argv: list[str], **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    return subprocess.Popen(ENTRIES[entry] + argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdout=kw.pop("stdout", subprocess.PIPE), env=env, **kw)


def _import_name(line: bytes) -> str | None:
    text = line.decode("utf-8", "replace")
    return text.rsplit("|", 1)[-1].strip() if text.startswith("import time:") else None


def _has_open(pid: int, path: Path) -> bool:
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(fds / fd) == str(path) for fd in os.listdir(fds))
    except (FileNotFoundError, ProcessLookupError):
        return False


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _interrupt_after_import(proc: subprocess.Popen, k: int, fifo: Path) -> tuple[int, bytes]:
    """Read the child's stderr; send SIGINT right after its k-th import line past MARKER (or,
    when start-up has fewer, once it has the FIFO open). Returns (lines seen past MARKER, stderr)."""
    seen, buf, err, past = 0, b"", b"", False
    fd = proc.stderr.fileno()
    while True:
        assert proc.poll() is None, f"the child ended before the signal: {err.decode()[-2000:]}"
        ready, _, _ = select.select([fd], [], [], POLL)
        if ready:
            chunk = os.read(fd, 65536)
            err += chunk
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                name = _import_name(line)
                if name == MARKER:
                    past = True
                elif past and name is not None and name not in BEFORE_INSTALL:
                    seen += 1
                    if seen == k:
                        proc.send_signal(signal.SIGINT)
                        return seen, err
        elif past and _has_open(proc.pid, fifo):
            proc.send_signal(signal.SIGINT)
            return seen, err


def _verdict(proc: subprocess.Popen, err: bytes = b"") -> tuple[bytes, str]:
    out, rest = proc.communicate(timeout=BACKSTOP)
    text = (err + rest).decode("utf-8", "replace")
    mine = [line for line in text.splitlines() if not line.startswith("import time:")]
    assert proc.returncode != -signal.SIGINT, f"died by SIGINT:\n{text[-3000:]}"
    assert "Traceback" not in text and "Exception ignored" not in text, text[-3000:]
    assert (proc.returncode, mine) == (1, [CANCELLED_LINE]), text[-3000:]
    return out, text


def _run_blocked_on(add16: Path, fifo: Path) -> list[str]:
    return ["run", str(add16), "--function", "add", "--input", f"16xf32=@{fifo}", "--input", "16xf32=2"]


def test_ctrl_c_once_the_command_waits_is_cancelled(start_up_imports):
    """The end of start-up, for each entry: the command has its input FIFO open and waits on it."""
    assert set(start_up_imports) == set(ENTRIES)


@pytest.fixture(scope="module")
def start_up_imports(add16, fifo) -> dict[str, int]:
    """Each entry's run of the command blocked on the FIFO, SIGINT once it waits there: the
    verdicts checked, and the import lines seen after MARKER counted (the start-up's length, which
    the test of every stage spreads its points over)."""
    seen_by_entry = {}
    for entry in ENTRIES:
        proc = _start(entry, _run_blocked_on(add16, fifo))
        try:
            seen, err = _interrupt_after_import(proc, 10**9, fifo)
            assert seen > 50, f"{entry}: {seen} imports after {MARKER}: were they printed?"
            out, _ = _verdict(proc, err)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert out == b"", entry  # EXEC @add comes after the inputs, which never arrived
        seen_by_entry[entry] = seen
    return seen_by_entry


def test_ctrl_c_at_every_stage_of_start_up_is_cancelled(add16, fifo, start_up_imports):
    """SIGINT after the k-th import of the command line's start-up, for k from the first to the
    last, through the three entries in turn (the start-up's length: the console script's, counted
    by the fixture's run to the end of start-up)."""
    total = start_up_imports["console script"]
    points = sorted({1, 2, 3, 5, 8} | set(range(total // 24, total, max(1, total // 24))))
    names = list(ENTRIES)
    tried = []
    for i, k in enumerate(points):
        entry = names[i % len(names)]
        proc = _start(entry, _run_blocked_on(add16, fifo))
        try:
            seen, err = _interrupt_after_import(proc, k, fifo)
            _verdict(proc, err)
            tried.append((entry, seen))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert len(tried) >= 20, tried


@pytest.mark.parametrize("ticks", [0, 1, 3, 10, 30])
def test_ctrl_c_during_a_call_is_cancelled(control, ticks):
    """SIGINT once the child has used `ticks` more clock ticks of CPU inside a call that loops
    2**31 - 1 times (it cannot end first)."""
    proc = _start("console script", ["run", str(control), "--function", "sum_squares",
                                      "--input", str(2**31 - 1)])
    try:
        assert proc.stdout.readline() == b"EXEC @sum_squares\n"  # the call has started
        start = _cpu_ticks(proc.pid)
        while _cpu_ticks(proc.pid) < start + ticks:
            assert proc.poll() is None, "the loop of 2**31 - 1 iterations ended already"
            select.select([], [], [], POLL)
        proc.send_signal(signal.SIGINT)
        _verdict(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_ctrl_c_while_the_output_is_blocked_is_cancelled():
    """The output (8 KiB) goes to a pipe of one page that nobody reads: once output has started the
    child cannot finish; SIGINT then, and only then is the pipe drained."""
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page
    try:
        proc = _start("console script", ["check", "0rIiiiCiDCrIID_v", "--all-targets"], stdout=w)
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as pipe:
        try:
            pending = bytearray(4)
            while True:
                fcntl.ioctl(pipe.fileno(), termios.FIONREAD, pending)
                if int.from_bytes(pending, sys.byteorder):
                    break
                assert proc.poll() is None, "the child ended with its output unread"
                select.select([], [], [], POLL)
            proc.send_signal(signal.SIGINT)
            # drain stdout while stderr is collected
            proc.stdout = pipe
            out, text = _verdict(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert 0 < len(out) < 8522, len(out)  # it stopped part-way


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=BACKSTOP)


def test_a_sigint_while_recording_is_raised_at_the_next_check():
    """Start-up mode: the signal raises nothing where it lands (another package's import); the
    entry's next check (`start_raising`) raises it."""
    proc = _python("import signal, sys\nfrom ireeabi.cli import interrupt\n"
                   "i = interrupt.install()\nsignal.raise_signal(signal.SIGINT)\n"
                   "print('recorded', i.interrupted, flush=True)\n"
                   "try:\n    i.start_raising()\nexcept KeyboardInterrupt:\n"
                   "    sys.exit(interrupt.report_cancelled(sys.stderr))\n")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "recorded True\n", CANCELLED_LINE + "\n")


def test_the_status_line_is_written_once_and_later_signals_change_nothing():
    proc = _python("import signal, sys\nfrom ireeabi.cli import interrupt\n"
                   "i = interrupt.install()\ni.start_raising()\n"
                   "try:\n    signal.raise_signal(signal.SIGINT)\nexcept KeyboardInterrupt:\n"
                   "    interrupt.report_cancelled(sys.stderr)\n"
                   "signal.raise_signal(signal.SIGINT)\nsignal.raise_signal(signal.SIGINT)\n"
                   "sys.exit(interrupt.report_cancelled(sys.stderr))\n")
    assert (proc.returncode, proc.stderr) == (1, CANCELLED_LINE + "\n")


def test_a_keyboard_interrupt_that_escapes_everything_is_still_cancelled():
    """The last resort (excepthook): exit 1 and the line, not a traceback and a death by SIGINT."""
    proc = _python("from ireeabi.cli import interrupt\ninterrupt.install()\nraise KeyboardInterrupt\n")
    assert (proc.returncode, proc.stderr) == (1, CANCELLED_LINE + "\n")
    plain = _python("raise KeyboardInterrupt\n")  # what Python does without it
    assert plain.returncode == -signal.SIGINT and "Traceback" in plain.stderr
