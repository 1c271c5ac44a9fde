"""Generator of the binary dispatch fixtures (tests/fixtures/dispatch_<target>.bin + .json).

hal_loader's `executable.dispatch` (`0rIiiiCiDCrIID_v`) with 4 constants and 3 bindings, packed with
each target's codec (pointer words of the target's width). Refs are recognisable fake pointers, so the
bytes are the same on every run and host. The JSON sidecar names every field with its offset, size and
value, plus the padding. Regenerate with `python tests/support/vm_fixture_gen.py --write`.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ireeabi.abi import cconv, targets
from ireeabi.abi.cconv import codec

SIGNATURE = "0rIiiiCiDCrIID_v"
FRAGMENT = cconv.parse(SIGNATURE).arguments
N_CONSTANTS, N_BINDINGS = 4, 3
SPANS = (N_CONSTANTS, N_BINDINGS)
TARGETS = ("x86_64", "riscv32")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _fake(pointer_size: int, high: int, low: int) -> int:
    """A recognisable pointer-sized word: `high` in the upper half, `low` in the lower."""
    half = 4 * pointer_size
    return (high << half) | low if pointer_size == 8 else (high << 16) | low


def named_values(target_name: str) -> list[tuple[str, Any]]:
    """(name, value) for every value, in packer order; refs as (ptr, type) pairs."""
    p = targets.get(target_name).pointer_size
    buffer_type = _fake(p, 0x7E9E, 0xB000)  # "vm.buffer" descriptor, counter tag 0
    executable_type = _fake(p, 0x7E9E, 0xE000)
    out: list[tuple[str, Any]] = [
        ("executable", (_fake(p, 0x5EED, 0x1000), executable_type)),
        ("function_id", 0x0123456789ABCDEF),
        ("workgroup_x", 0x11), ("workgroup_y", 0x22), ("workgroup_z", 0x33),
    ]
    out += [(f"constants[{k}]", 0x0C000000 + k) for k in range(N_CONSTANTS)]
    for k in range(N_BINDINGS):
        out += [(f"bindings[{k}].buffer", (_fake(p, 0x5EED, 0x2000 + 0x1000 * k), buffer_type)),
                (f"bindings[{k}].offset", 0x0FF5E700 + k),
                (f"bindings[{k}].length", 0x1E900 + k)]
    return out


COUNT_NAMES = ("constant_count", "binding_count")


def build(target_name: str) -> tuple[bytes, dict]:
    lay = cconv.layout(FRAGMENT, target_name, SPANS)
    values = named_values(target_name)
    data = codec.codec(lay).pack([v for _, v in values])
    fields: list[dict] = []
    for (name, value), slot in zip(values, lay.values):
        shown = {"ptr": hex(value[0]), "type": hex(value[1])} if slot.kind == "ref" else value
        fields.append({"name": name, "kind": slot.kind, "offset": slot.offset, "size": slot.size, "value": shown})
    for c in lay.counts:
        fields.append({"name": COUNT_NAMES[c.span], "kind": "count", "offset": c.offset, "size": c.size,
                       "value": c.count})
    fields.sort(key=lambda f: f["offset"])
    sidecar = {
        "signature": SIGNATURE, "fragment": FRAGMENT.text, "target": target_name, "spans": list(SPANS),
        "pointer_size": lay.target.pointer_size, "size": lay.size, "packed_size": lay.packed_size,
        "sha256": hashlib.sha256(data).hexdigest(), "fields": fields,
        "padding": [{"offset": g.offset, "size": g.size} for g in lay.gaps],
    }
    return data, sidecar


def paths(target_name: str) -> tuple[Path, Path]:
    return FIXTURES / f"dispatch_{target_name}.bin", FIXTURES / f"dispatch_{target_name}.json"


def render(sidecar: dict) -> str:
    return json.dumps(sidecar, indent=2) + "\n"


def write_all() -> None:
    FIXTURES.mkdir(exist_ok=True)
    for t in TARGETS:
        data, sidecar = build(t)
        bin_path, json_path = paths(t)
        bin_path.write_bytes(data)
        json_path.write_text(render(sidecar))
        print(f"wrote {bin_path} ({len(data)} B) and {json_path}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/support/vm_fixture_gen.py --write")
    write_all()
