import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# Test-only helper modules (catalog_sample, iree_tools) live beside the tests.
sys.path.insert(0, str(Path(__file__).parent))

import iree_tools  # noqa: E402
import process_memory  # noqa: E402

# The compile cache this run made (and removes at its end), None when the caller named one.
_own_cache: Path | None = None


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    # One compile cache for the whole run: the controller (or a serial session) names it before
    # pytest-xdist starts its workers, which inherit the environment, so each module compiles once
    # per run whatever the number of workers. A cache named by the caller is kept (and reused).
    global _own_cache
    if not _is_xdist_worker(config) and iree_tools.CACHE_ENV not in os.environ:
        _own_cache = Path(tempfile.mkdtemp(prefix="ireeabi-vmfb-"))
        os.environ[iree_tools.CACHE_ENV] = str(_own_cache)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _own_cache
    if _own_cache is not None:
        shutil.rmtree(_own_cache, ignore_errors=True)
        os.environ.pop(iree_tools.CACHE_ENV, None)
        _own_cache = None


def pytest_sessionstart(session: pytest.Session) -> None:
    # The README's test command sets up a fresh Debian machine itself: compilers, qemu, sysroots.
    # Once per run: in the controller, before pytest-xdist (whose hook runs last) starts workers.
    if not _is_xdist_worker(session.config):
        import debian_tools
        debian_tools.install_missing()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: "pytest.Item | None"):
    # IREEABI_TEST_RSS_LOG=FILE: append each test's peak RSS (KiB) of this process and its children,
    # fixtures set up for it included, to FILE (benchmarks/bench_suite.py finds the heavy tests).
    log = os.environ.get("IREEABI_TEST_RSS_LOG")
    if not log:
        yield
        return
    sampler = process_memory.Sampler(os.getpid(), period=0.1, describe=False)
    sampler.start()
    yield
    peak = sampler.stop()
    with open(log, "a") as f:
        f.write(f"{peak}\t{item.nodeid}\n")
