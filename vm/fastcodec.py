"""Straight-line pack/unpack functions for one cconv instance, generated from `abi.codec`.

`abi.codec.codec(layout)` compiles the instance's `struct.Struct` once; its generic `pack_into` then
still walks the values in Python to flatten refs and insert span counts. Here that walk is done once,
at compile time: the generated function unpacks the value sequence into locals and makes a single
`Struct.pack_into` call with refs split into their two words and counts as constants, which is what a
hand-written struct codec does. Compiled once per (fragment, target, span counts) and cached.

Values are as in `abi.codec`: flat, in packer order; refs as (ptr, type) pairs (a `Ref` works).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

from ..abi import codec as _codec
from ..abi.cconv import FragmentLayout
from ..abi.codec import CodecError


@dataclass(frozen=True, eq=False)
class FastCodec:
    layout: FragmentLayout
    codec: _codec.Codec
    pack_into: Callable[[Any, int, Sequence[Any]], None]  # (buffer, offset, values)
    unpack: Callable[..., list]  # (buffer, offset=0) -> values

    @property
    def size(self) -> int:
        return self.layout.size

    def pack(self, values: Sequence[Any]) -> bytes:
        buf = bytearray(self.layout.size)
        self.pack_into(buf, 0, values)
        return bytes(buf)


def _fail(lay: FragmentLayout, exc: Exception, n_values: int | None) -> CodecError:
    where = f"{lay.cconv!r} on {lay.target.name}"
    if n_values is not None and n_values != len(lay.values):
        return CodecError(f"{where}: {len(lay.values)} values expected, got {n_values}")
    return CodecError(f"{where}: {exc}")


@lru_cache(maxsize=4096)
def fast_codec(lay: FragmentLayout) -> FastCodec:
    """The generated codec of an instance (compiled once per FragmentLayout, which is itself cached)."""
    c = _codec.codec(lay)
    item_expr = ["0"] * c.n_items
    out_expr: list[str] = []
    for i, (v, pos) in enumerate(zip(lay.values, c.value_positions)):
        if v.kind == "ref":
            item_expr[pos], item_expr[pos + 1] = f"v{i}[0]", f"v{i}[1]"
            out_expr.append(f"(t[{pos}], t[{pos + 1}])")
        else:
            item_expr[pos] = f"v{i}"
            out_expr.append(f"t[{pos}]")
    for cs, pos in zip(lay.counts, c.count_positions):
        item_expr[pos] = str(cs.count)
    names = [f"v{i}" for i in range(len(lay.values))]
    target = (", ".join(names) + ("," if len(names) == 1 else "")) if names else "()"
    src = (
        "def pack_into(buf, offset, values):\n"
        "    try:\n"
        f"        {target} = values\n"
        f"        _pack_into(buf, offset, {', '.join(item_expr)})\n"
        "    except (ValueError, TypeError, IndexError, _error) as e:\n"
        "        raise _fail(_lay, e, _len(values) if _has_len(values) else None) from None\n"
        "def unpack(buf, offset=0):\n"
        "    try:\n"
        "        t = _unpack_from(buf, offset)\n"
        "    except _error as e:\n"
        "        raise _fail(_lay, e, None) from None\n"
        f"    return [{', '.join(out_expr)}]\n"
    )
    import struct as _struct
    ns: dict[str, Any] = {
        "_pack_into": c.struct.pack_into, "_unpack_from": c.struct.unpack_from, "_error": _struct.error,
        "_fail": _fail, "_lay": lay, "_len": len, "_has_len": lambda x: hasattr(x, "__len__"),
    }
    exec(compile(src, f"<fastcodec {lay.cconv!r} {lay.target.name} {list(lay.spans)}>", "exec"), ns)
    return FastCodec(lay, c, ns["pack_into"], ns["unpack"])
