"""Several `ireeabi` command lines in one child process under a CPU-time limit: what a hang test
needs without a process start-up per case.

`run_bounded(argvs, cpu_limit)` starts one Python process that imports ireeabi once, runs each argv
through `ireeabi.cli.main.main` in turn (stdout and stderr captured per command) and answers with
each command's exit status and output. The child's RLIMIT_CPU is `cpu_limit` seconds of CPU: a
command that runs away kills the child with SIGXCPU, whatever the machine's load (CPU time, not
wall time), and `run_bounded` raises `Runaway` naming the command that was running then. A
command blocked without computing (opening a FIFO nobody opens the other end of) never reaches the
CPU limit: the wall-clock `backstop` (generous, a blocked command's verdict only) ends it. A
traceback leaving `main` is reported as such (exit status None, the traceback as stderr).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

_CHILD = r"""
import io, json, sys, traceback
from ireeabi.cli.main import main
argvs = json.loads(sys.stdin.read())
for argv in argvs:
    print(json.dumps({"started": argv}), flush=True)
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(argv, stdout=out, stderr=err)
    except BaseException:
        code, err = None, io.StringIO(traceback.format_exc())
    print(json.dumps({"code": code, "stdout": out.getvalue()[-4000:], "stderr": err.getvalue()[-4000:]}),
          flush=True)
"""


@dataclass
class Ended:
    argv: list[str]
    code: "int | None"  # None: a traceback left main
    stdout: str
    stderr: str

    @property
    def clean(self) -> bool:
        """Ended with exit 0, 1 or 2 and no traceback."""
        return self.code in (0, 1, 2) and "Traceback" not in self.stderr


class Runaway(AssertionError):
    """The child died (past its CPU limit, or by another signal) while running a command."""


def run_bounded(argvs: "list[list[str]]", cpu_limit: float, backstop: float = 600) -> "list[Ended]":
    """Each argv's end (see the module docstring)."""
    def limit() -> None:
        seconds = max(1, int(cpu_limit))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))

    env = dict(os.environ)
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(argvs), capture_output=True,
                              text=True, preexec_fn=limit, env=env, cwd=TESTS, timeout=backstop)
    except subprocess.TimeoutExpired as e:
        started = [line for line in (e.stdout or b"").decode(errors="replace").splitlines() if "started" in line]
        raise Runaway(f"blocked: no end after {backstop} s of wall time, in {started[-1:]}") from None
    out: list[Ended] = []
    running = None
    for line in proc.stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "started" in record:
            running = record["started"]
        else:
            out.append(Ended(running, record["code"], record["stdout"], record["stderr"]))
            running = None
    if proc.returncode != 0 or len(out) != len(argvs):
        raise Runaway(f"the child ended with {proc.returncode} (CPU limit {cpu_limit} s) while running "
                      f"{running}; stderr: {proc.stderr[-2000:]}")
    return out


__all__ = ["run_bounded", "Ended", "Runaway"]
