"""The shims' generated fast paths (shims.py holds the readers they are made for and decides which
one a shim uses): straight-line functions over one struct's items, compiled once per reader.

The items are those of a `struct.Struct` laid out as the C struct (shims._reader): a ref takes two
items (its ptr and type words) and becomes a `Ref`, a scalar is one item as it is. Every function
is compiled through `ireeabi.abi.generated` (readable in tracebacks, dumped with the switch).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..abi.generated import define
from .ref import Ref


def value_exprs(kinds: Sequence[str]) -> tuple[str, ...]:
    """Per value, the expression of it over the items tuple `t` (a ref as a `Ref` made without
    its Python __new__)."""
    exprs, i = [], 0
    for k in kinds:
        if k == "ref":
            exprs.append(f"_new(_Ref, (t[{i}], t[{i + 1}]))")
            i += 2
        else:
            exprs.append(f"t[{i}]")
            i += 1
    return tuple(exprs)


def _names() -> dict[str, Any]:
    return {"_Ref": Ref, "_new": tuple.__new__}


def assemble_function(kinds: Sequence[str], detail: str) -> Callable[[tuple], list]:
    """`assemble(t) -> values`: the items as the values of these kinds."""
    source = f"def assemble(t):\n    return [{', '.join(value_exprs(kinds))}]\n"
    return define(source, "shim values", detail, _names(), "assemble")


def element_function(kinds: Sequence[str], detail: str) -> Callable[[tuple], Any]:
    """`element(t) -> value`: one span element's value, its single value or a tuple of them."""
    exprs = value_exprs(kinds)
    body = exprs[0] if len(exprs) == 1 else "(" + "".join(e + ", " for e in exprs) + ")"
    return define(f"def element(t):\n    return {body}\n", "shim element", detail, _names(), "element")


def fixed_decoder(unpack_from: Callable, size: int, kinds: Sequence[str], mismatch: Callable[[], Exception],
                  detail: str) -> Callable[[memoryview, int], list]:
    """`decode(view, base) -> values` of a fixed struct: the exact size check (`mismatch()` raised
    otherwise), the unpack, the values."""
    ns = _names()
    ns.update({"_unpack_from": unpack_from, "_mismatch": mismatch})
    source = (f"def decode(view, base):\n"
              f"    if len(view) != {size}:\n"
              f"        raise _mismatch()\n"
              f"    t = _unpack_from(view, 0)\n"
              f"    return [{', '.join(value_exprs(kinds))}]\n")
    return define(source, "shim decode", detail, ns, "decode")


def pack_function(pack_into: Callable, kinds: Sequence[str],
                  detail: str) -> Callable[[Any, int, Sequence[Any]], None]:
    """`pack(buf, offset, values)`: one pack_into of the values, a ref as its two words."""
    items = []
    for i, k in enumerate(kinds):
        items += [f"v[{i}][0]", f"v[{i}][1]"] if k == "ref" else [f"v[{i}]"]
    source = f"def pack(buf, offset, v):\n    _pack_into(buf, offset, {', '.join(items)})\n"
    return define(source, "shim results", detail, {"_pack_into": pack_into}, "pack")


def on_frame_function(signature: str, deliver: Callable, void_results: bool, *,
                      unpack_from: Callable | None = None, kinds: Sequence[str] = (),
                      decode: Callable | None = None, arguments_size: int = 0) -> Callable[..., None]:
    """`call(ctx, function, buf, args_offset, args_address, results_offset)`: a shim's call on a
    caller's frame (shims.Shim.on_frame says when). With `unpack_from`, the arguments are the
    packed struct's items read in place as values of `kinds` (no length check: it passes by
    construction); else `decode` reads the `arguments_size` bytes as the spans would be read. The
    function's result goes to `deliver(heap, buf, results_offset, result)`, skipped for a None
    result when the results are void."""
    ns = _names()
    ns["_deliver"] = deliver
    if unpack_from is not None:  # the struct's values, inline
        ns["_unpack_from"] = unpack_from
        read = ["    t = _unpack_from(buf, args_offset)"]
        values = ", ".join(value_exprs(kinds))
    else:  # checked as the spans would be: a mismatch raises here, as it does there
        ns["_decode"] = decode
        read = [f"    values = _decode(buf[args_offset:args_offset + {arguments_size}], args_address)"]
        values = "*values"
    lines = ["def call(ctx, function, buf, args_offset, args_address, results_offset):", *read,
             f"    result = function(ctx{', ' + values if values else ''})"]
    if void_results:
        lines += ["    if result is None:", "        return"]
    lines.append("    _deliver(ctx.heap, buf, results_offset, result)")
    return define("\n".join(lines) + "\n", "shim on frame", signature, ns, "call")


__all__ = ["value_exprs", "assemble_function", "element_function", "fixed_decoder", "pack_function",
           "on_frame_function"]
