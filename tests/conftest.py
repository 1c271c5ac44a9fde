import sys
from pathlib import Path

# Test-only helper modules (catalog_sample, iree_tools) live beside the tests.
sys.path.insert(0, str(Path(__file__).parent))
