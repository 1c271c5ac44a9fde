"""Where a mutation campaign case's CPU goes (run by hand; tests/support/mutation_campaign.py):

    python benchmarks/bench_campaign_cases.py [--mutants N] [--seed S] [--commands N] [--unfrozen]

In one process prepared as the campaign's own (its modules handed over from a forked helper, so
that this process never loads the compiler; the campaign's warm-ups; the heap frozen unless
--unfrozen), for the seed's first N mutants:

- an empty fork: a child that exits at once (the page tables copied, the exit's teardown);
- each mutant forked and watched as the campaign does (`_run_one`): the children's CPU and minor
  page faults (the kernel's counts), the parent's CPU;
- the same mutants' commands run in this process, unforked (the commands' own work).

"forked - in-process - empty fork" is what the copy-on-write of the parent's pages costs. Then the
command campaign's cases (the first --commands of each kind of the suite's seed), forked from a
process warmed up as `--commands-from` warms up, by kind. CPU time and fault counts, never wall
time: the machine's load changes how long a case takes, not how much CPU it uses.
"""
from __future__ import annotations

import argparse
import collections
import gc
import os
import pickle
import resource
import sys
import tempfile

import tests_support  # noqa: F401 - puts tests/ on the path

from support import mutation_campaign as mc

SEED = 20261203


def _usage() -> "tuple[float, float, int, int]":
    """(own CPU, children's CPU, children's minor faults, children's system CPU) so far."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, kids.ru_minflt, kids.ru_stime


def _delta(before: "tuple[float, float, int, int]", n: int) -> str:
    after = _usage()
    return (f"child {1000 * (after[1] - before[1]) / n:6.2f} ms (sys {1000 * (after[3] - before[3]) / n:5.2f}), "
            f"{(after[2] - before[2]) / n:6.0f} faults; parent {1000 * (after[0] - before[0]) / n:5.2f} ms")


def _handed_over(fn, *args):
    """fn(*args) computed in a forked helper and handed over pickled (whatever it imports or loads
    stays in the helper)."""
    with tempfile.NamedTemporaryFile(suffix=".pickle") as f:
        pid = os.fork()
        if pid == 0:
            try:
                with open(f.name, "wb") as out:
                    pickle.dump(fn(*args), out)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        return pickle.load(open(f.name, "rb"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=200)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--commands", type=int, default=10, help="cases of each command kind")
    ap.add_argument("--unfrozen", action="store_true", help="fork from a heap not frozen")
    args = ap.parse_args()
    mods = _handed_over(mc.modules)
    vm_modules = _handed_over(mc.vm_test_modules)
    n = args.commands
    cases = _handed_over(lambda: mc.command_cases(n, n, n, args.seed, mods=mods, inputs=n, vm_tests=n))
    by_name = {m.name: m for m in mods}
    mutants = mc.mutants(mods, args.mutants, args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as workdir:
        mc._warm_up_commands(mods, vm_modules, workdir)  # the module campaign's warm-up, and more
        if not args.unfrozen:
            mc.freeze_heap()
        print(f"{len(mutants)} mutants of seed {args.seed}, heap {'not ' if args.unfrozen else ''}frozen "
              f"({gc.get_freeze_count()} objects), iree.compiler loaded: {'iree.compiler' in sys.modules}")
        before = _usage()
        for _ in mutants:
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        print(f"  empty fork:             {_delta(before, len(mutants))}")
        before = _usage()
        for mutant in mutants:
            mc._run_one(by_name[mutant.module], mutant, mc.CPU_LIMIT, 600.0, workdir)
        print(f"  forked and watched:     {_delta(before, len(mutants))}")
        per = collections.defaultdict(list)
        for case in cases:
            per[case.kind].append(case)
        print(f"command cases, {n} of each kind")
        for kind, group in per.items():
            before = _usage()
            for case in group:
                mc.run_command(case, mc.CPU_LIMIT, 600.0, workdir, forked=True)
            print(f"  {kind:12s} {_delta(before, len(group))}")
        # last: a foreign kernel run here leaves threads, which no later fork would keep
        me = resource.getrusage(resource.RUSAGE_SELF)
        path = os.path.join(workdir, "in-process.vmfb")
        for mutant in mutants:
            mod = by_name[mutant.module]
            mc._child(mutant.apply(mod.data), mod.function, mod.inputs, path, mod.target)
        now = resource.getrusage(resource.RUSAGE_SELF)
        print(f"  mutants, in this process: {1000 * ((now.ru_utime - me.ru_utime) + (now.ru_stime - me.ru_stime)) / len(mutants):6.2f} ms, "
              f"{(now.ru_minflt - me.ru_minflt) / len(mutants):6.0f} faults")


if __name__ == "__main__":
    main()
