"""tests/support/iree_oracle.py's cache keys: a build is found again exactly when nothing it reads changed
(the sources, the patches, the compilers, the arguments), without building anything here."""
from __future__ import annotations

from support import iree_oracle


def test_the_fix_patch_keys_the_fixed_variant_only(monkeypatch, tmp_path):
    shipped, fixed = iree_oracle.build_key("armv7"), iree_oracle.variant_key("armv7", "fixed")
    assert iree_oracle.variant_key("armv7", "shipped") == shipped != fixed
    changed = tmp_path / iree_oracle.FIX_PATCH.name
    changed.write_text(iree_oracle.FIX_PATCH.read_text() + "\n")
    monkeypatch.setattr(iree_oracle, "FIX_PATCH", changed)
    assert iree_oracle.variant_key("armv7", "fixed") != fixed
    assert iree_oracle.build_key("armv7") == shipped


def test_a_targets_own_patch_keys_that_target_only(monkeypatch, tmp_path):
    keys = {t: iree_oracle.build_key(t) for t in ("x86_64", "i386", "armv7")}
    changed = tmp_path / iree_oracle.I386_PATCH.name
    changed.write_text(iree_oracle.I386_PATCH.read_text() + "\n")
    monkeypatch.setattr(iree_oracle, "I386_PATCH", changed)
    assert iree_oracle.build_key("i386") != keys["i386"]
    assert iree_oracle.build_key("x86_64") == keys["x86_64"]
    assert iree_oracle.build_key("armv7") == keys["armv7"]


def test_arguments_and_compilers_key_the_build(monkeypatch):
    key = iree_oracle.build_key("aarch64")
    monkeypatch.setattr(iree_oracle, "CMAKE_ARGS", iree_oracle.CMAKE_ARGS + ("-DIREE_ENABLE_ASAN=ON",))
    assert iree_oracle.build_key("aarch64") != key
    monkeypatch.undo()
    monkeypatch.setattr(iree_oracle, "_version_text", lambda command: f"{command} 99.0")
    assert iree_oracle.build_key("aarch64") != key


def test_a_cross_build_is_keyed_by_the_host_tools_build(monkeypatch):
    # iree-flatcc-cli and iree-c-embed-data come from the x86_64 build: its key is in every cross key
    key = iree_oracle.build_key("riscv64")
    real = iree_oracle.build_key
    monkeypatch.setattr(iree_oracle, "build_key",
                        lambda t: "other" if t == "x86_64" else real(t))
    assert iree_oracle.build_key("riscv64") != key


def test_compiled_sources_reads_ninja_output():
    out = ("[1/2] Building C object runtime/src/iree/modules/hal/loader/CMakeFiles/"
           "iree_modules_hal_loader_loader.objects.dir/module.c.o\n"
           "[2/2] Linking CXX executable tools/iree-run-module\n")
    assert iree_oracle.compiled_sources(out) == ["runtime/src/iree/modules/hal/loader/module.c"]
