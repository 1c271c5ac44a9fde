import sys
from pathlib import Path

# Test-only helper modules (catalog_sample, iree_tools) live beside the tests.
sys.path.insert(0, str(Path(__file__).parent))


def pytest_sessionstart(session):
    # The README's test command sets up a fresh Debian machine itself: compilers, qemu, sysroots.
    import debian_tools
    debian_tools.install_missing()
