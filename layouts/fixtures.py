"""Golden binary fixtures: packed argument/result buffers of every native-module signature.

For each data model and each signature of hal_inline, hal_loader and the full hal module's variadic
exports, a few span-count instances are packed with deterministic, recognisable values (refs as fake
pointers `0xA0..` / types `0xB0..`) and written as `<target>/<module>.<function>.<args|results>[.spans-N-M].bin`
with a JSON sidecar naming every field, offset, size and value. `verify` re-derives every file from
the current engine and byte-compares, naming the first differing offset and the field there.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ireeabi.abi import cconv, codec, targets
from ireeabi.abi.errors import IreeAbiError

from . import hal_inline, hal_loader, hal_module

FORMAT_VERSION = 1


class FixtureError(IreeAbiError):
    """A fixture folder that cannot be read or written."""


@dataclass(frozen=True)
class Instance:
    module: str
    function: str
    cconv: str
    side: str  # "arguments" or "results"
    target: str
    spans: tuple[int, ...]

    @property
    def stem(self) -> str:
        spans = ".spans-" + "-".join(map(str, self.spans)) if self.spans else ""
        return f"{self.module}.{self.function}.{self.side}{spans}"

    def fragment(self) -> cconv.Fragment:
        sig = cconv.parse(self.cconv)
        return sig.arguments if self.side == "arguments" else sig.results


def signatures() -> list[tuple[str, str, str]]:
    """(module, function, cconv) of every signature the fixtures cover."""
    out = [(hal_inline.IREE_HAL_INLINE_MODULE_NAME, e.name, e.cconv) for e in hal_inline.EXPORTS]
    out += [(hal_loader.IREE_HAL_LOADER_MODULE_NAME, e.name, e.cconv) for e in hal_loader.EXPORTS]
    out += [(hal_module.IREE_HAL_MODULE_NAME, e.name, e.cconv) for e in hal_module.VARIADIC_EXPORTS]
    return out


def _span_instances(n_spans: int) -> list[tuple[int, ...]]:
    if n_spans == 0:
        return [()]
    typical = (4, 3, 2, 2)[:n_spans]
    return [(0,) * n_spans, (1,) * n_spans, typical]


def instances() -> Iterator[Instance]:
    for target in targets.names():
        for module, function, text in signatures():
            sig = cconv.parse(text)
            for side, frag in (("arguments", sig.arguments), ("results", sig.results)):
                if not frag.items:
                    continue
                for spans in _span_instances(len(frag.spans)):
                    yield Instance(module, function, text, side, target, spans)


def values_for(lay: cconv.FragmentLayout) -> list:
    """Deterministic values, distinct per position, recognisable in a hex dump."""
    bits = lay.target.pointer_size * 8
    out: list = []
    for i, v in enumerate(lay.values, start=1):
        if v.kind == "i32":
            out.append(0x10000000 | i)
        elif v.kind == "i64":
            out.append(0x2000000000000000 | i)
        elif v.kind in ("f32", "f64"):
            out.append(i + 0.25)
        else:  # fake, 8-aligned pointers: the low 3 type bits (the counter tag) stay 0
            out.append(((0xA0 << (bits - 8)) | (i << 4), (0xB0 << (bits - 8)) | (i << 3)))
    return out


def _field_names(frag: cconv.Fragment) -> dict[int, str]:
    """Char index -> IREE-style field name (`r0`, `i1`, `a5` for a span at item 5)."""
    names: dict[int, str] = {}
    for pos, item in enumerate(frag.items):
        if isinstance(item, cconv.Value):
            names[item.index] = f"{'r' if item.char == 'r' else 'f' if item.char in 'fF' else 'i'}{pos}"
        else:
            names[item.index] = f"a{pos}"
            for k, v in enumerate(item.values):
                names[v.index] = f"{'r' if v.char == 'r' else 'f' if v.char in 'fF' else 'i'}{k}"
    return names


def describe(inst: Instance) -> tuple[bytes, dict]:
    """The packed bytes of an instance and its sidecar description."""
    frag = inst.fragment()
    lay = cconv.layout(frag, inst.target, inst.spans)
    vals = values_for(lay)
    data = codec.codec(lay).pack(vals) if lay.packed_size <= lay.size else b""
    names = _field_names(frag)
    span_items = [i for i in frag.items if isinstance(i, cconv.Span)]
    fields = []
    ps = lay.target.pointer_size
    for c in lay.counts:
        start = span_items[c.span].index
        fields.append({"name": f"{names[start]}_count", "offset": c.offset, "size": 4, "kind": "count",
                       "value": c.count})
    for v, x in zip(lay.values, vals):
        name = names[v.index]
        if v.span is not None:
            name = f"{names[span_items[v.span].index]}[{v.element}].{name}"
        if v.kind == "ref":
            fields.append({"name": f"{name}.ptr", "offset": v.offset, "size": ps, "kind": "ref.ptr",
                           "value": x[0]})
            fields.append({"name": f"{name}.type", "offset": v.offset + ps, "size": ps, "kind": "ref.type",
                           "value": x[1]})
        else:
            fields.append({"name": name, "offset": v.offset, "size": v.size, "kind": v.kind, "value": x})
    fields.sort(key=lambda f: f["offset"])
    meta = {
        "format": FORMAT_VERSION, "module": inst.module, "function": inst.function, "cconv": inst.cconv,
        "side": inst.side, "fragment": frag.text, "target": inst.target, "spans": list(inst.spans),
        "size": lay.size, "packed_size": lay.packed_size, "fields": fields,
        "padding": [{"offset": g.offset, "size": g.size} for g in lay.gaps],
        "findings": [{"rule": f.rule, "message": f.message} for f in lay.findings],
    }
    return data, meta


def build(directory: "str | Path") -> int:
    """Write every fixture under `directory`; returns the number of instances."""
    root = Path(directory)
    n = 0
    for inst in instances():
        data, meta = describe(inst)
        folder = root / inst.target
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{inst.stem}.bin").write_bytes(data)
        (folder / f"{inst.stem}.json").write_text(_dump(meta))
        n += 1
    return n


def _dump(meta: dict) -> str:
    """JSON with one line per field row: diffs of a fixture change read like a table."""
    lines = []
    for k, v in meta.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            rows = ",\n".join("  " + json.dumps(r) for r in v)
            lines.append(f"{json.dumps(k)}: [\n{rows}\n ]")
        else:
            lines.append(f"{json.dumps(k)}: {json.dumps(v)}")
    return "{\n " + ",\n ".join(lines) + "\n}\n"


@dataclass(frozen=True)
class Mismatch:
    path: str
    offset: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f" at offset {self.offset}" if self.offset is not None else ""
        fld = f" (field {self.field})" if self.field else ""
        return f"{self.path}{where}{fld}: {self.message}"


def _field_at(fields: list[dict], offset: int) -> str | None:
    for f in fields:
        if f["offset"] <= offset < f["offset"] + f["size"]:
            return f["name"]
    return "padding"


def verify(directory: "str | Path") -> list[Mismatch]:
    """Re-derive every fixture and compare; an empty list means all match (and none is missing)."""
    root = Path(directory)
    if not root.is_dir():
        raise FixtureError(f"no fixture folder at {root}")
    out: list[Mismatch] = []
    expected = set()
    for inst in instances():
        rel = f"{inst.target}/{inst.stem}"
        expected.add(rel)
        bin_path, json_path = root / f"{rel}.bin", root / f"{rel}.json"
        if not bin_path.is_file() or not json_path.is_file():
            out.append(Mismatch(rel, None, None, "missing (run `ireeabi fixtures build`)"))
            continue
        data, meta = describe(inst)
        old = bin_path.read_bytes()
        try:
            old_meta = json.loads(json_path.read_text())
        except (OSError, ValueError) as e:
            out.append(Mismatch(rel, None, None, f"unreadable sidecar: {e}"))
            continue
        if old != data:
            first = next((i for i in range(min(len(old), len(data))) if old[i] != data[i]), min(len(old), len(data)))
            got = old[first] if first < len(old) else None
            want = data[first] if first < len(data) else None
            out.append(Mismatch(rel, first, _field_at(old_meta.get("fields", []), first),
                                f"fixture byte {got} but the engine now packs {want} "
                                f"(sizes {len(old)} / {len(data)}; now at this offset: "
                                f"{_field_at(meta['fields'], first)})"))
            continue
        if old_meta.get("fields") != meta["fields"] or old_meta.get("size") != meta["size"]:
            out.append(Mismatch(rel, None, None, "same bytes but the sidecar's field table changed"))
    for path in sorted(root.glob("*/*.bin")):
        rel = f"{path.parent.name}/{path.stem}"
        if rel not in expected:
            out.append(Mismatch(rel, None, None, "not a fixture the engine produces (stale file?)"))
    return out
