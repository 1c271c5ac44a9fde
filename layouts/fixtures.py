"""Golden binary fixtures: packed argument/result buffers of every native-module signature.

For each data model and each signature of hal_inline, hal_loader and the full hal module's variadic
exports, a few span-count instances are packed with deterministic, recognisable values (refs as fake
pointers `0xA0..` / types `0xB0..`) and written as `<target>/<module>.<function>.<args|results>[.spans-N-M].bin`
with a JSON sidecar naming every field, offset, size and value. `verify` re-derives every file from
the current engine and byte-compares, naming the first differing offset and the field there.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..abi import cconv, targets
from ..abi.cconv import Fragment, codec
from ..abi.errors import IreeAbiError

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

    def fragment(self) -> Fragment:  # not cconv.Fragment: the field `cconv` hides the module here
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
    fields: list[dict[str, Any]] = []
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


def _os_reason(e: OSError) -> str:
    return e.strerror or str(e) or type(e).__name__


def build(directory: "str | Path") -> int:
    """Write every fixture under `directory`; returns the number of instances. A folder or file
    that cannot be made or written is a FixtureError naming it."""
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise FixtureError(f"cannot write fixtures under {root}: it is not a folder")
    n = 0
    for inst in instances():
        data, meta = describe(inst)
        folder = root / inst.target
        path = folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{inst.stem}.bin"
            path.write_bytes(data)
            path = folder / f"{inst.stem}.json"
            path.write_text(_dump(meta))
        except OSError as e:
            what = "make the fixture folder" if path == folder else "write fixture"
            at = f" (at {e.filename})" if e.filename not in (None, str(path)) else ""
            raise FixtureError(f"cannot {what} {path}: {_os_reason(e)}{at}") from None
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


MAX_SIDECAR_BYTES = 1 << 24  # the largest sidecar verify reads (the committed ones are < 64 KiB)


def _read_head(path: Path, limit: int) -> tuple[bytes, int]:
    """The first `limit` bytes of a file and its size."""
    with open(path, "rb") as f:
        return f.read(limit), os.fstat(f.fileno()).st_size


def _check_sidecar(path: Path, meta: object) -> dict:
    """A sidecar's JSON, checked for the keys and types verify reads (a FixtureError names the file
    and the key)."""
    def bad(key: str, problem: str) -> FixtureError:
        return FixtureError(f"malformed fixture sidecar {path}: {key} {problem}")

    def is_int(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if not isinstance(meta, dict):
        raise bad("the top level", f"is a JSON {_json_kind(meta)}, not an object")
    for key in ("size", "fields"):
        if key not in meta:
            raise bad(f"key {key!r}", "is missing")
    if not is_int(meta["size"]):
        raise bad("key 'size'", f"is a JSON {_json_kind(meta['size'])}, not an integer")
    if not isinstance(meta["fields"], list):
        raise bad("key 'fields'", f"is a JSON {_json_kind(meta['fields'])}, not a list")
    for i, f in enumerate(meta["fields"]):
        if not isinstance(f, dict):
            raise bad(f"fields[{i}]", f"is a JSON {_json_kind(f)}, not an object")
        for key, want, ok in (("name", "a string", lambda v: isinstance(v, str)),
                              ("offset", "an integer", is_int), ("size", "an integer", is_int)):
            if key not in f:
                raise bad(f"fields[{i}].{key}", "is missing")
            if not ok(f[key]):
                raise bad(f"fields[{i}].{key}", f"is a JSON {_json_kind(f[key])}, not {want}")
    return meta


def _json_kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    return {dict: "object", list: "list", str: "string", int: "integer",
            float: "number"}.get(type(v), type(v).__name__)


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
        # One byte past what the engine packs is enough to find the first difference: a huge
        # file is never read whole.
        try:
            old, old_size = _read_head(bin_path, len(data) + 1)
        except OSError as e:
            raise FixtureError(f"cannot read fixture {bin_path}: {_os_reason(e)}") from None
        try:
            text, text_size = _read_head(json_path, MAX_SIDECAR_BYTES + 1)
            if text_size > MAX_SIDECAR_BYTES:
                raise ValueError(f"{text_size} bytes, more than any sidecar "
                                 f"({MAX_SIDECAR_BYTES})")
            old_meta = json.loads(text)
        except (OSError, ValueError, RecursionError) as e:
            out.append(Mismatch(rel, None, None, f"unreadable sidecar: {e}"))
            continue
        old_meta = _check_sidecar(json_path, old_meta)
        if old != data:
            first = next((i for i in range(min(len(old), len(data))) if old[i] != data[i]), min(len(old), len(data)))
            got = old[first] if first < len(old) else None
            want = data[first] if first < len(data) else None
            out.append(Mismatch(rel, first, _field_at(old_meta["fields"], first),
                                f"fixture byte {got} but the engine now packs {want} "
                                f"(sizes {old_size} / {len(data)}; now at this offset: "
                                f"{_field_at(meta['fields'], first)})"))
            continue
        if old_meta["fields"] != meta["fields"] or old_meta["size"] != meta["size"]:
            out.append(Mismatch(rel, None, None, "same bytes but the sidecar's field table changed"))
    for path in sorted(root.glob("*/*.bin")):
        rel = f"{path.parent.name}/{path.stem}"
        if rel not in expected:
            out.append(Mismatch(rel, None, None, "not a fixture the engine produces (stale file?)"))
    return out
