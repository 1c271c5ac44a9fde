"""The `ireeabi` process entry: the console script (`ireeabi`), `python -m ireeabi.cli` and
`python -m ireeabi` all start here.

Its first act, before the command line's modules are imported, is to take SIGINT over
(`interrupt.install`), so that Ctrl-C at any moment from here on (importing, parsing the arguments,
running, writing the output) ends in IREE's CANCELLED line and exit 1, never in a traceback or a
death by SIGINT. This module imports nothing else at its top: the window before `run` is entered
stays as short as the interpreter allows.

Before any command's module is imported it also sets OPENBLAS_NUM_THREADS=1 unless the environment
sets it: numpy's OpenBLAS otherwise starts a thread per core at import, which spin for some 0.1 s of
CPU time a process (numpy's import takes 0.28 s of CPU instead of 0.17 s on this project's 2-core
machine); ireeabi does no linear algebra with numpy.

Its last act, once the command has returned, is `gc.freeze()`: the objects the process still holds
(every imported module, the runtime's tables, numpy's) leave the cyclic collector's reach, so the
interpreter's shutdown frees them by reference counting alone instead of traversing the whole heap
in full collections first, which costs more than IREE's tools take for a whole run. (Only cyclic
garbage left at exit is not collected; the process's memory goes back to the system either way, and
the commands close their files and runtimes themselves.)
"""
from __future__ import annotations

import gc
import os
import sys

from . import interrupt

__all__ = ["run"]


def run(argv: "list[str] | None" = None) -> int:
    """Run the `ireeabi` command line (`cli.main.main`) as a process: the exit status."""
    interrupts = interrupt.install()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported (module docstring)
    try:
        try:
            # start-up: a SIGINT is only recorded while importing, the command's parser and the
            # modules it imports included (numpy's import turns a KeyboardInterrupt into ImportError)
            from .main import build_parser, main
            parser = build_parser(sys.argv[1:] if argv is None else argv)
            interrupts.start_raising()  # one recorded during the imports is raised here
            try:
                status = main(argv, parser=parser)
            finally:
                interrupts.stop_raising()
        except KeyboardInterrupt:
            return interrupt.report_cancelled(sys.stderr)
        if interrupts.interrupted:  # after the command's work, or swallowed inside it
            return interrupt.report_cancelled(sys.stderr)
        return status
    finally:
        gc.freeze()  # shutdown without full collections of the whole heap (module docstring)


if __name__ == "__main__":
    sys.exit(run())
