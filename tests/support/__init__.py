"""The tests' helpers, shared by the test folders: `from support import iree_tools` (tests/ is on the
import path: pytest puts the folder of its rootdir conftest.py there).

- `iree_tools`: the real IREE tools (iree-compile, iree-run-module, iree-dump-module,
  iree-as-module) behind the suite's content-addressed compile cache and remembered tool runs;
- `debian_tools`: the compilers, qemu and sysroots the tests need, installed when missing (also a
  script: `python tests/support/debian_tools.py`, what .ci/run runs first);
- `e2e_corpus`, `check_corpus`, `check_reference`, `hal_programs`, `vm_ir`, `catalog_sample`: the
  test programs and catalogs, and what the compiler's own output says of them;
- `full_hal_oracle`: IREE's real `hal` module (iree.runtime) and ireeabi's, call for call;
- `hal_session`: the HAL tests' runtime fixtures; `own_native_module`: a native module of one's own;
- `forked`, `peak_rss`, `process_memory`: running a piece of a test in a child, a command's own
  peak memory, a process tree's memory;
- `long_lived_heap`: the test processes' long-lived heap kept out of full garbage collections
  (tests/conftest.py); `gc_stats`: a pytest plugin counting a run's collections and its heap
  (`PYTHONPATH=tests python -m pytest -p support.gc_stats`, by hand);
- `mutation_campaign`: the seeded campaign of mutated modules (also a script, run from tests/:
  `python -m support.mutation_campaign`);
- `vm_fixture_gen`, `vm_fuzz_common`, `vm_fuzz_atheris`: the VM's binary fixtures and fuzzers (the
  generator a script: `python tests/support/vm_fixture_gen.py --write`; the atheris harness run from
  tests/ as `python -m support.vm_fuzz_atheris`).
"""
