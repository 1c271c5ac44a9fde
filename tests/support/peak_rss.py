"""A command's own peak resident memory, through a small launcher.

Linux carries a process's peak RSS over fork and exec (the hiwater mark of the mm a fork copies, and
the one exec replaces), so a command started straight from a test process that had grown to
gigabytes, late in a suite, would report the suite's peak. `LAUNCHER` is a few lines of Python,
small when it forks: it starts the command, waits for it, prints the command's peak RSS (wait4's
ru_maxrss: the largest of the command and the descendants it waited for, libclang's child
included) in KiB as the last line of its standard error, and ends as the command did: the same exit
code, or killed by the same signal.

    python -c LAUNCHER ARGV...
"""
from __future__ import annotations

import subprocess
import sys
import tempfile

LAUNCHER = """
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, file=sys.stderr)
sys.stderr.flush()
if os.WIFSIGNALED(status):
    if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):  # no handler to reset there
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def launcher_argv(argv: "list[str]") -> "list[str]":
    """The argv that runs `argv` under the launcher."""
    return [sys.executable, "-c", LAUNCHER, *argv]


def split_stderr(stderr: str) -> "tuple[str, int]":
    """(the command's own standard error, its peak RSS in bytes) from the launcher's stderr."""
    text, _, last = stderr.rstrip("\n").rpartition("\n")
    return (text + "\n" if text else ""), int(last) * 1024


def run_measured(argv: "list[str]") -> "tuple[int, str, int]":
    """(exit code, stdout, peak RSS in bytes) of a command."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.run(launcher_argv(argv), stdout=out, stderr=subprocess.PIPE, text=True)
        out.seek(0)
        _, peak = split_stderr(proc.stderr)
        return proc.returncode, out.read().decode(), peak
