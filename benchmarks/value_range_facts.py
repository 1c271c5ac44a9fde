"""Every value-range analysis a run makes, one line each, to compare a change to value_ranges.py or
to an op's interval rules before and after (the facts must stay identical for a pure move).

    FACTS_OUT=facts.txt python benchmarks/value_range_facts.py kernels
    FACTS_OUT=facts.txt python benchmarks/value_range_facts.py tests TEST_FILE... --hypothesis-seed=0

`kernels`: each of bench_kernels.py's kernels called once per model (the fast path, as
`--call-once` does); `tests`: pytest over the files in this process (-n 0; seed hypothesis, whose
programs otherwise differ between runs). A line: the function's name, the assumed argument
intervals, whether the analysis gave up, the reads and results per instruction, the blocks' entry
states, the function's constants and its blocks. Run the "before" tree from a copy of it
(`git archive`, imported through PYTHONPATH) and `cmp` the two files.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import ireeabi.vm.bytecode.value_ranges as value_ranges

ROOT = Path.cwd()  # the tree whose tests and kernels run (its ireeabi is the one imported)


def record(out: Any) -> None:
    """Make every ValueRanges write its facts to `out` once it is made."""
    made = value_ranges.ValueRanges.__init__

    def init(self: value_ranges.ValueRanges, fn: Any, code: list, assume: Any = None) -> None:
        made(self, fn, code, assume)
        line = [getattr(fn, "name", None), sorted(self.assume.items()), self.given_up,
                sorted((i, sorted(d.items())) for i, d in self.reads.items()), sorted(self.result.items()),
                sorted((s, None if e is None else sorted(e.items())) for s, e in self.entry.items()),
                sorted(self.consts.items()), self.blocks]
        out.write(repr(line) + "\n")
        out.flush()

    value_ranges.ValueRanges.__init__ = init  # type: ignore[method-assign]


def main() -> int:
    print("value_ranges.py from", value_ranges.__file__, file=sys.stderr)
    mode, rest = sys.argv[1], sys.argv[2:]
    with open(os.environ["FACTS_OUT"], "a") as out:
        record(out)
        if mode == "kernels":
            sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests")]
            import bench_kernels  # noqa: PLC0415
            from support import iree_tools  # noqa: PLC0415
            work = Path(iree_tools.session_dir())
            for name, kernel in bench_kernels.KERNELS.items():
                for model in bench_kernels.MODELS:
                    print(name, model, file=sys.stderr, flush=True)
                    vmfb = iree_tools.compile_mlir(bench_kernels.KERNELS_DIR / kernel.source, work, model)
                    bench_kernels.call_once(vmfb, kernel)
            return 0
        import pytest  # noqa: PLC0415
        return int(pytest.main(["-q", "-x", "-n", "0", "-p", "no:cacheprovider", *rest]))


if __name__ == "__main__":
    sys.exit(main())
