"""The committed golden fixtures match the engine, and verify catches a changed rule."""
import shutil
from pathlib import Path

import pytest

from ireeabi.abi import cconv, layout
from ireeabi.layouts import fixtures

FIXTURES = Path(__file__).parents[1] / "fixtures" / "signatures"


def test_committed_fixtures_verify():
    assert fixtures.verify(FIXTURES) == []


def test_fixture_names_every_byte():
    for inst in list(fixtures.instances())[:60]:
        data, meta = fixtures.describe(inst)
        covered = sorted([(f["offset"], f["size"]) for f in meta["fields"]] +
                         [(p["offset"], p["size"]) for p in meta["padding"]])
        pos = 0
        for off, size in covered:
            assert off == pos, (inst.stem, off, pos)
            pos += size
        assert pos == meta["size"] == len(data)


def _clear_caches():
    # Every cache that holds layouts, so no later test meets a layout from the patched rules, or one
    # no longer identical to what cconv.layout returns (vm.call's plans keep their layout).
    from ireeabi.vm import call
    call._PLANS.clear()
    cconv.clear_caches()
    layout.layout_of.cache_clear()
    from ireeabi.abi.cconv import codec
    codec.codec.cache_clear()


def test_verify_fails_when_a_rule_changes(monkeypatch):
    # Pretend the VM aligned i64 values to 4 (the i386 C rule) instead of sizeof(int64_t) = 8.
    real = cconv.vm_packing._vm_fields.__wrapped__

    def changed(target):
        table = dict(real(target))
        table["I"] = (8, 4)
        return table

    _clear_caches()
    monkeypatch.setattr(cconv.vm_packing, "_vm_fields", changed)
    try:
        bad = fixtures.verify(FIXTURES)
    finally:
        monkeypatch.undo()
        _clear_caches()
    assert bad
    hit = [m for m in bad if m.path == "x86_64/hal_inline.buffer.allocate.arguments"]
    assert hit and hit[0].offset == 4 and hit[0].field == "padding"
    assert "offset 4" in str(hit[0])


def test_verify_names_the_field_of_a_flipped_byte(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "f")
    target = tmp_path / "f" / "riscv32" / "hal_loader.executable.dispatch.arguments.spans-4-3.bin"
    data = bytearray(target.read_bytes())
    data[28] ^= 0xFF  # the constants span count on ILP32
    target.write_bytes(bytes(data))
    (m,) = fixtures.verify(tmp_path / "f")
    assert m.offset == 28 and m.field == "a5_count"


def test_missing_and_stale_files(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "f")
    (tmp_path / "f" / "i386" / "hal_loader.executable.load.arguments.bin").unlink()
    (tmp_path / "f" / "i386" / "extra.bin").write_bytes(b"x")
    msgs = [str(m) for m in fixtures.verify(tmp_path / "f")]
    assert any("missing" in m for m in msgs) and any("stale" in m for m in msgs)


def test_no_folder():
    with pytest.raises(fixtures.FixtureError):
        fixtures.verify("/nonexistent/ireeabi")


def test_cli_build_then_verify(tmp_path, capsys):
    from ireeabi.cli.main import main

    assert main(["fixtures", "build", str(tmp_path / "out")]) == 0
    assert main(["fixtures", "verify", str(tmp_path / "out")]) == 0
    victim = tmp_path / "out" / "x86_64" / "hal_loader.executable.dispatch.arguments.spans-4-3.bin"
    data = bytearray(victim.read_bytes())
    data[36] ^= 1
    victim.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["fixtures", "verify", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "offset 36" in out and "a5_count" in out
    assert main(["fixtures", "verify", str(tmp_path / "missing")]) == 2
