"""Resident memory of a process tree, read from Linux's /proc: a test process with every process it
started (xdist workers, compilers, qemu, the CLI runs of tests).

Used by benchmarks/bench_suite.py (the suite's peak) and by tests/conftest.py, which with
IREEABI_TEST_RSS_LOG=FILE appends each test's peak tree RSS to FILE (which tests make the peak).
RSS counts pages shared between processes (the interpreter, numpy, libIREE) once per process, so a
sum over a tree overstates physical memory somewhat: the conservative measure of a bound.
"""
from __future__ import annotations

import os
import threading
import time

__all__ = ["Sampler", "command_line", "tree_rss_kib"]

PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, for every process now visible in /proc."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields resume after the last ')'.
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE_KIB
    except (OSError, IndexError, ValueError):
        return 0  # the process ended between the listing and the read


def command_line(pid: int) -> str:
    """A process's command line (first 120 characters), '?' once it has ended."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:120]
    except OSError:
        return "?"


def tree_rss_kib(root: int) -> tuple[int, list[tuple[int, int]]]:
    """(summed RSS in KiB of `root` and its descendants, [(rss KiB, pid)] of each)."""
    children = _children()
    todo, each = [root], []
    while todo:
        pid = todo.pop()
        each.append((_rss_kib(pid), pid))
        todo.extend(children.get(pid, ()))
    return sum(r for r, _ in each), each


class Sampler(threading.Thread):
    """Samples the tree under `pid` every `period` seconds until stopped; keeps the peak, when it
    happened (seconds after the start) and the largest processes then (rss KiB, pid, command)."""

    def __init__(self, pid: int, period: float = 0.2, describe: bool = True) -> None:
        super().__init__(daemon=True)
        self.pid, self.period, self.describe = pid, period, describe
        self.peak_kib, self.peak_at = 0, 0.0
        self.peak_procs: list[tuple[int, int, str]] = []
        self._halt = threading.Event()
        self._t0 = time.monotonic()

    def run(self) -> None:
        while True:
            total, each = tree_rss_kib(self.pid)
            if total > self.peak_kib:
                self.peak_kib, self.peak_at = total, time.monotonic() - self._t0
                if self.describe:
                    self.peak_procs = [(rss, pid, command_line(pid))
                                       for rss, pid in sorted(each, reverse=True)[:6]]
            if self._halt.wait(self.period):
                return

    def stop(self) -> int:
        """Stops sampling; the peak in KiB."""
        self._halt.set()
        self.join()
        return self.peak_kib
