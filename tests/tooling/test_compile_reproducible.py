"""The modules the seeded tests mutate are the same bytes in every folder and on every machine.

iree-compile writes the path it is given into the module (source locations): the same source
compiled as `/a/x.mlir` and `/b/c/x.mlir` differs from byte 15 on, and so would every mutant a seed
draws over it. A fresh clone's CI in another folder then tested other mutants than the developers'
runs (and met a failure they never saw). The suite compiles from the source's folder by file name
(iree_tools.compile_argv); here the e2e corpus and the campaign's foreign builds, compiled again
from a copy in another folder without the cache, are byte for byte the modules the suite uses.
"""
from __future__ import annotations

import io
import shutil
import subprocess
import zipfile

from support import e2e_corpus
from support import iree_tools
from support import mutation_campaign


def _compile_uncached(src, flags, out, raw=False):
    """iree-compile's module of `src`, compiled as the suite compiles (without its cache); `raw`:
    without fixing the wasm side modules' temporary names (iree_tools.fixed_wasm_names)."""
    argv, cwd = iree_tools.compile_argv(src, flags, "-o", str(out))
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, timeout=600)
    return out.read_bytes() if raw else iree_tools.fixed_wasm_names(out.read_bytes())


def test_the_corpus_compiled_in_another_folder_is_the_same_bytes(tmp_path):
    other = tmp_path / "a" / "much" / "longer" / "checkout path"
    other.mkdir(parents=True)
    built = e2e_corpus.compile_all()
    jobs = []
    for (stem, model), path in sorted(built.items()):
        copy = other / f"{stem}.mlir"
        if not copy.exists():
            shutil.copyfile(e2e_corpus.E2E / f"{stem}.mlir", copy)
        jobs.append((copy, iree_tools.compile_flags(model) + e2e_corpus.F64, path))
    # compiled again without the cache, as many at once as the suite's compiles
    again = iree_tools.map_compiles(
        lambda j: _compile_uncached(j[0], j[1], tmp_path / f"out.{j[2].name}"), jobs)
    different = [path.name for (_, _, path), data in zip(jobs, again) if data != path.read_bytes()]
    assert len(jobs) == 2 * len(list(e2e_corpus.E2E.glob("*.mlir"))) and not different, different
    # and the cache takes the copy for the same module (the key holds the file name, not the folder)
    copy, flags, path = jobs[0]
    assert iree_tools.compile_with_flags(copy, flags).read_bytes() == path.read_bytes()


def test_the_campaigns_foreign_builds_are_the_same_bytes_in_another_folder(tmp_path):
    src, _, _ = mutation_campaign.PROGRAMS[0]
    copy = tmp_path / "elsewhere" / src.name
    copy.parent.mkdir()
    shutil.copyfile(src, copy)
    for target, flags in mutation_campaign.FOREIGN:
        full = (iree_tools.compile_flags("inline-dynamic") + ("--iree-input-demote-f64-to-f32=false",)
                + tuple(flags))
        cached = iree_tools.compile_with_flags(src, full).read_bytes()
        raw = _compile_uncached(copy, full, tmp_path / f"{target}.vmfb", raw=True)
        assert iree_tools.fixed_wasm_names(raw) == cached, target
        # the zip directory's CRC-32s hold for the fixed module (Python's zipfile checks them)
        assert zipfile.ZipFile(io.BytesIO(cached)).testzip() is None
        if target == "wasm32":
            # what the fix is for: a second compile names the side module anew (LLVM's temporary
            # file), and nothing else differs
            again = _compile_uncached(copy, full, tmp_path / "again.vmfb", raw=True)
            assert again != raw and b"-000000.wasm" in cached
            assert iree_tools.fixed_wasm_names(again) == cached
        else:
            assert raw == cached, target
