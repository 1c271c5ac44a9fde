"""The folders of ireeabi's packages, as the import system finds them: what the suite compiles to
bytecode caches at its start (tests/conftest.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def package_folders() -> list[str]:
    """Every top-level folder of the checkout that is a subpackage of ireeabi (a fixed list missed
    `base`, added later: a fresh clone's every process compiled the heap from source), and ireeabi's
    own folder; each is compiled whole, subpackages included."""
    folders: list[str] = []
    for d in sorted(ROOT.iterdir()):
        if (d / "__init__.py").is_file():
            try:
                spec = importlib.util.find_spec(f"ireeabi.{d.name}")
            except ImportError:
                spec = None
            folders += list(spec.submodule_search_locations or ()) if spec else []
    spec = importlib.util.find_spec("ireeabi")
    folders += list(spec.submodule_search_locations or ()) if spec else []
    return list(dict.fromkeys(folders))
