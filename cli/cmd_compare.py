"""`ireeabi compare MODULE.vmfb --tool CMD [--function F] [--input V]...`: one call, run by a real
IREE tool and by `ireeabi run`, side by side.

The tool command is the user's own build of iree-run-module (possibly under qemu-user, e.g. `qemu-arm
-L /usr/arm-linux-gnueabihf build/tools/iree-run-module`); it gets `--module=MODULE`, `--function=F`
and each `--input=V` appended, as iree-run-module takes them. `ireeabi run` gets the same module,
function and inputs, with `--target`, `--device` and the `--legacy-*` switches passed through.

Each side ends in one outcome:
- results: exit 0; what it printed (stdout) is compared byte for byte;
- a status: exit 1 with an IREE status (the code; and the import whose call failed, when the text
  names it: iree-run-module's "while invoking native function X", ireeabi's "while calling import X");
- a signal: the tool died by one (under qemu-user, qemu dies by the guest's signal);
- a refusal: ireeabi refused where IREE's own runtime reads or writes out of bounds or crashes
  (base.status.IreeFaultError: its error has no status code), naming the import. `ireeabi run` runs
  in a process of its own under the same bounds as the tool.

They agree when both print the same results, fail with the same status code at the same import
(when both name one), or when the tool dies by a signal where ireeabi refuses saying IREE's runtime
faults. Otherwise the first difference is printed, and with `--trace` ireeabi's trace of the import
call where they part: the one that failed on either side; for a tool that died by a signal without
naming one, the last dispatch ireeabi made (a kernel runs there); else the last import call.

The tool is bounded: `--cpu-seconds` of CPU time (RLIMIT_CPU, whole seconds; a machine under load
does not change the verdict), a wall-clock `--backstop` only for a tool that blocks (default: ten
times the CPU bound, at least 60 s, so that a busy tool on a loaded machine meets its CPU bound
first), and 16 MiB of output per stream (RLIMIT_FSIZE). A tool that cannot be started, that runs past its bound, or whose output is not
iree-run-module's (no `EXEC @F` line) is an error (exit 2).

Exit status: 0 when they agree, 1 when they differ, 2 for usage errors and a tool that cannot be
compared.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Sequence, TextIO

from ..abi.printable import printable_text

from . import render
from .errors import CliError

EXIT_AGREE, EXIT_DIFFER = 0, 1
DEFAULT_CPU_SECONDS = 60
OUTPUT_LIMIT = 16 << 20  # bytes of each stream kept (and the tool's file size limit)
BACKSTOP, MIN_BACKSTOP = 10, 60.0  # default wall-clock bound: max(BACKSTOP x the CPU bound, MIN_BACKSTOP)
_STATUS_CODES = ("CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                 "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                 "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                 "UNAUTHENTICATED", "DEFERRED", "INCOMPATIBLE")
_STATUS = re.compile(r"\b(" + "|".join(_STATUS_CODES) + r")\b;")
_TOOL_IMPORT = re.compile(r"while invoking native function ([^\s;]+)")
_OUR_IMPORT = re.compile(r"while calling import ([^\s;(]+)")


@dataclass
class Outcome:
    """How one side ended: `kind` is results, status, signal or refused."""

    kind: str
    stdout: str
    stderr: str = ""
    exit: int = 0
    code: str | None = None  # the status code (status), or the signal's name (signal)
    where: str | None = None  # the import whose call failed, when named
    detail: str = ""  # the error's text (status, refused)
    events: list[dict] = field(default_factory=list)  # ireeabi's trace (--trace)

    def summary(self) -> str:
        if self.kind == "results":
            return "exit 0: results"
        if self.kind == "signal":
            return f"died by signal {self.exit} ({self.code})"
        at = f" at {self.where}" if self.where else ""
        if self.kind == "refused":
            return f"exit 1: refused{at} (IREE's own runtime faults there)"
        return f"exit {self.exit}: {self.code or 'error'}{at}"


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "compare", help="run one call with a real IREE tool and with `ireeabi run`, side by side",
        description="Runs the real tool command (your iree-run-module build, e.g. under qemu-user) "
                    "and `ireeabi run` on the same module, function and inputs; prints both outcomes "
                    "side by side and the first difference. Exit 0 when they agree, 1 when they "
                    "differ, 2 for usage errors or a tool that cannot be compared.")
    p.add_argument("module", metavar="MODULE.vmfb")
    p.add_argument("--tool", required=True, metavar="CMD",
                   help="the real tool's command line (split as a shell would, not run by one); "
                        "--module, --function and each --input are appended")
    p.add_argument("--function", default=None, metavar="F", help="the exported function to call")
    p.add_argument("--input", action="append", default=[], metavar="VALUE",
                   help="an input in iree-run-module's syntax (repeatable), given to both")
    p.add_argument("--target", default=None, metavar="T", help="`ireeabi run --target`")
    p.add_argument("--device", default=None, help="`--device` for both (e.g. local-sync)")
    for name in ("legacy-loader", "legacy-inline", "legacy-vm-buffer"):
        p.add_argument(f"--{name}", action="store_true", help=f"`ireeabi run --{name}`")
    p.add_argument("--trace", action="store_true",
                   help="print ireeabi's trace of the import call where the two part")
    p.add_argument("--cpu-seconds", type=int, default=DEFAULT_CPU_SECONDS, metavar="S",
                   help=f"bound the tool's CPU time, whole seconds (default {DEFAULT_CPU_SECONDS})")
    p.add_argument("--backstop", type=float, default=None, metavar="S",
                   help=f"wall-clock bound for a tool that blocks (default {BACKSTOP} x --cpu-seconds, at "
                        f"least {MIN_BACKSTOP:g} s)")


def command(args: argparse.Namespace, out: TextIO) -> int:
    if not args.module or not os.path.isfile(args.module):
        raise CliError(f"no module file at {args.module}")
    try:
        tool = shlex.split(args.tool)
    except ValueError as e:
        raise CliError(f"--tool {args.tool!r}: {e}") from None
    if not tool:
        raise CliError("--tool is empty")
    if not args.cpu_seconds > 0:
        raise CliError(f"--cpu-seconds {args.cpu_seconds}: must be positive")
    backstop = max(BACKSTOP * args.cpu_seconds, MIN_BACKSTOP) if args.backstop is None else args.backstop
    if not backstop > 0:
        raise CliError(f"--backstop {args.backstop}: must be positive")
    flags = [f"--module={args.module}"] + ([f"--function={args.function}"] if args.function else []) \
        + ([f"--device={args.device}"] if args.device else []) + [f"--input={v}" for v in args.input]
    real = run_tool(tool + flags, args.cpu_seconds, backstop)
    ours = run_ireeabi(args, args.cpu_seconds, backstop)
    agree, why = compare(real, ours)
    _report(out, tool + flags, args, real, ours, agree, why)
    return EXIT_AGREE if agree else EXIT_DIFFER


# -- the real tool ----------------------------------------------------------------------------------


def _limits(cpu_seconds: int) -> Any:
    def set_limits() -> None:  # in the child, before exec
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_LIMIT, OUTPUT_LIMIT))
    return set_limits


def _read(f: Any) -> str:
    f.seek(0)
    return f.read(OUTPUT_LIMIT).decode("utf-8", "replace")


def _run_bounded(argv: Sequence[str], cpu_seconds: int, backstop: float,
                 who: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `argv` under the bounds; CliError when it cannot be
    started, blocks past the backstop, runs past its CPU time or writes too much."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                    preexec_fn=_limits(cpu_seconds), start_new_session=True)
        except OSError as e:
            raise CliError(f"{who}: cannot run {argv[0]}: {e.strerror or e}") from None
        try:
            rc = proc.wait(timeout=backstop)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise CliError(f"{who}: {argv[0]} was still running after {backstop:g} s (--backstop; "
                           f"blocked: it used less than its {cpu_seconds} s of CPU time)") from None
        stdout, stderr = _read(fo), _read(fe)
    if rc in (-signal.SIGXCPU, -signal.SIGKILL):  # RLIMIT_CPU's soft and hard limits
        raise CliError(f"{who}: {argv[0]} ran past its {cpu_seconds} s of CPU time (--cpu-seconds), "
                       f"or was killed (signal {-rc})")
    if rc == -signal.SIGXFSZ:
        raise CliError(f"{who}: {argv[0]} wrote more than {OUTPUT_LIMIT >> 20} MiB of output")
    return rc, stdout, stderr


def run_tool(argv: Sequence[str], cpu_seconds: int, backstop: float) -> Outcome:
    """Run the real tool under its bounds; its outcome (CliError when it cannot be compared)."""
    rc, stdout, stderr = _run_bounded(argv, cpu_seconds, backstop, "--tool")
    if rc < 0:
        return Outcome("signal", stdout, stderr, -rc, signal.Signals(-rc).name)
    if not stdout.startswith("EXEC @"):
        first = (stdout or stderr).splitlines()[0] if (stdout or stderr).strip() else "(nothing)"
        if rc != 0 and _STATUS.search(stderr):  # a failure before EXEC (loading, parsing inputs)
            return _status(stdout, stderr, rc)
        raise CliError(f"--tool: {argv[0]} printed no `EXEC @function` line (not iree-run-module's "
                       f"output); its first line: {printable_text(first[:200])}")
    if rc == 0:
        return Outcome("results", stdout, stderr)
    return _status(stdout, stderr, rc)


def _status(stdout: str, stderr: str, rc: int) -> Outcome:
    m = _STATUS.search(stderr)
    where = _TOOL_IMPORT.search(stderr)
    line = next((ln for ln in stderr.splitlines() if m and m.group(1) in ln), stderr.strip()[:300])
    return Outcome("status", stdout, stderr, rc, m.group(1) if m else None,
                   where.group(1) if where else None, line)


# -- ireeabi run ------------------------------------------------------------------------------------


def run_ireeabi(args: argparse.Namespace, cpu_seconds: int, backstop: float) -> Outcome:
    """`ireeabi run` on the same call, in a process of its own under the tool's bounds (as the
    tool runs: a crash of either ends its side, not the comparison); its outcome, with its trace
    for --trace. Its one-line error tells a status (`ireeabi: error: CODE; ...`) from a refusal
    where IREE's own runtime faults (IreeFaultError: no status code)."""
    argv = [sys.executable, "-m", "ireeabi", "run", args.module] \
        + (["--function", args.function] if args.function else []) \
        + [f"--input={v}" for v in args.input] + (["--target", args.target] if args.target else []) \
        + ([f"--device={args.device}"] if args.device else []) \
        + [f"--{n}" for n in ("legacy-loader", "legacy-inline", "legacy-vm-buffer")
           if getattr(args, n.replace("-", "_"))]
    trace_file = None
    if args.trace:
        trace_file = tempfile.NamedTemporaryFile("w+", suffix=".jsonl", delete=False)
        trace_file.close()
        argv += ["--trace-file", trace_file.name]
    try:
        rc, stdout, stderr = _run_bounded(argv, cpu_seconds, backstop, "ireeabi run")
        text = " ".join(stderr.split())
        if rc == 0:
            outcome = Outcome("results", stdout, stderr)
        elif rc == 1 and text.startswith("ireeabi: error:"):
            message = text[len("ireeabi: error:"):].strip()
            m = re.match(r"([A-Z_]+);", message)
            where = _OUR_IMPORT.search(message)
            if m and m.group(1) in _STATUS_CODES:
                outcome = Outcome("status", stdout, stderr, rc, m.group(1),
                                  where.group(1) if where else None, message)
            else:  # no status: ireeabi refuses where IREE's own runtime faults
                outcome = Outcome("refused", stdout, stderr, rc, None,
                                  message.split(":", 1)[0], message)
        elif rc < 0:
            outcome = Outcome("signal", stdout, stderr, -rc, signal.Signals(-rc).name)
        else:
            raise CliError(f"ireeabi run cannot take this call (exit {rc}): "
                           f"{printable_text(text[:300]) or '(no message)'}")
        if trace_file is not None:
            with open(trace_file.name) as f:
                outcome.events = [json.loads(line) for line in f if line.strip()]
    finally:
        if trace_file is not None:
            os.unlink(trace_file.name)
    return outcome


# -- the comparison ---------------------------------------------------------------------------------


def compare(real: Outcome, ours: Outcome) -> tuple[bool, str]:
    """(agree, why): the rule of the module docstring, and the first difference when they differ."""
    if real.kind == "results" and ours.kind == "results":
        if real.stdout == ours.stdout:
            return True, "both print the same results"
        a, b = real.stdout.splitlines(), ours.stdout.splitlines()
        i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
        left = a[i] if i < len(a) else "(no more lines)"
        right = b[i] if i < len(b) else "(no more lines)"
        return False, f"output line {i + 1}: the tool prints {left!r}, ireeabi {right!r}"
    if real.kind == "signal" and ours.kind == "refused":
        return True, (f"the tool dies by {real.code} where ireeabi refuses, saying IREE's runtime faults "
                      f"({ours.where})")
    if real.kind == "status" and ours.kind == "status":
        if real.code != ours.code:
            return False, f"status: the tool's is {real.code}, ireeabi's {ours.code}"
        if real.where and ours.where and real.where != ours.where:
            return False, f"{real.code} at another import: the tool's {real.where}, ireeabi's {ours.where}"
        return True, f"both fail with {real.code}" + (f" at {ours.where or real.where}"
                                                      if ours.where or real.where else "")
    return False, f"outcome: the tool's {real.summary()}; ireeabi's {ours.summary()}"


def _parting_call(real: Outcome, ours: Outcome) -> dict | None:
    imports = [e for e in ours.events if e.get("event") == "import"]
    if not imports:
        return None
    for name in (ours.where, real.where):
        if name:
            named = [e for e in imports if e.get("import") == name]
            if named:
                return named[-1]
    if real.kind == "signal":  # it died without a word: most likely running a kernel
        dispatches = [e for e in imports if e.get("import", "").endswith("dispatch")]
        if dispatches:
            return dispatches[-1]
    return imports[-1]


def _report(out: TextIO, tool_argv: list[str], args: argparse.Namespace, real: Outcome, ours: Outcome,
            agree: bool, why: str) -> None:
    run_flags = " ".join([f"--target {args.target}"] * bool(args.target)
                         + [f"--{n}" for n in ("legacy-loader", "legacy-inline", "legacy-vm-buffer")
                            if getattr(args, n.replace("-", "_"))])
    out.write(f"tool:    {shlex.join(tool_argv)}\n")
    out.write(f"ireeabi: ireeabi run {shlex.quote(args.module)}"
              f"{' ' + run_flags if run_flags else ''} (same function and inputs)\n\n")
    col = (render.WIDTH - 14) // 2  # label (10), then two columns of `col` split by " | "
    rows = [("outcome", real.summary(), ours.summary())]
    a, b = real.stdout.splitlines(), ours.stdout.splitlines()
    for i in range(max(len(a), len(b))):
        rows.append((f"stdout {i + 1}", a[i] if i < len(a) else "", b[i] if i < len(b) else ""))
    if real.detail or ours.detail:
        rows.append(("error", real.detail, ours.detail))
    out.write(f"{'':10} {'the tool':{col}} | ireeabi run\n")
    for label, left, right in rows:
        lw = render.wrap(printable_text(left), width=col)
        rw = render.wrap(printable_text(right), width=col)
        for k in range(max(len(lw), len(rw))):
            l_ = lw[k] if k < len(lw) else ""
            r_ = rw[k] if k < len(rw) else ""
            out.write(f"{label if k == 0 else '':10} {l_:{col}} | {r_}".rstrip() + "\n")
    out.write(f"\n{'agree' if agree else 'differ'}: {why}\n")
    if args.trace:
        event = _parting_call(real, ours)
        if event is None:
            out.write("trace: ireeabi made no import call\n")
            return
        from ..tooling.trace_format import format_event

        out.write(f"\nireeabi's trace of {event['import']}, where they part:\n")
        out.write(format_event(event))


__all__ = ["add_parser", "command", "compare", "run_tool", "run_ireeabi", "Outcome"]
