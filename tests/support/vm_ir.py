"""Test helper: what the compiler's own VM IR says a function passes to hal_loader dispatches.

`iree-compile --compile-to=vm` prints the VM program. For the straight-line entry functions of the
small test programs, `dispatches(ir, function, args)` evaluates the scalar ops it meets (constants,
integer arithmetic, bitcasts, truncation, selects, comparisons) with the given argument values, and
returns each `hal_loader.executable.dispatch` call's workgroup counts, push constants and binding
ranges. Unknown ops that produce scalars used by a dispatch raise, so a test cannot silently pass
with made-up numbers. `buffer_view.dim` calls are answered from `shapes`.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from . import iree_tools


@dataclass
class Dispatch:
    export_name: str
    workgroups: tuple[int, int, int]
    constants: list[int]
    bindings: list[tuple[str, int, int]]  # (SSA name of the vm.buffer, offset, length)


def vm_ir(src_path) -> str:
    return iree_tools.compile_to_vm(src_path)


_M64 = (1 << 64) - 1
_M32 = (1 << 32) - 1


def _s64(v: int) -> int:
    v &= _M64
    return v - (1 << 64) if v >> 63 else v


def _s32(v: int) -> int:
    v &= _M32
    return v - (1 << 32) if v >> 31 else v


class _Unknown:
    def __init__(self, why: str) -> None:
        self.why = why


def _func_body(ir: str, function: str) -> list[str]:
    m = re.search(r"vm\.func private @" + re.escape(function) + r"\(([^)]*)\).*?\{\n(.*?)\n    \}", ir, re.S)
    if not m:
        raise AssertionError(f"function {function} not found in the VM IR")
    return [m.group(1)] + [ln.strip() for ln in m.group(2).splitlines() if ln.strip()]


def dispatches(ir: str, function: str, args: list, shapes: dict[int, list[int]] | None = None) -> list[Dispatch]:
    """Evaluate `function`'s entry block; args are ints/floats for scalars, None for refs."""
    lines = _func_body(ir, function)
    params = re.findall(r"(%\w+): ([^,]+)", lines[0])
    env: dict[str, object] = {}
    for (name, ty), value in zip(params, args):
        env[name] = value if "ref" not in ty else ("ref", len(env))
    arg_index = {name: i for i, (name, _) in enumerate(params)}
    rodata_names: dict[str, str] = dict(re.findall(r'vm\.rodata private @(\w+) <alignment = \d+> "([^"]*)"', ir))
    out: list[Dispatch] = []

    def val(tok: str):
        v = env.get(tok)
        if v is None or isinstance(v, _Unknown):
            raise AssertionError(f"{tok} is not known to the evaluator ({getattr(v, 'why', 'undefined')})")
        return v

    for ln in lines[1:]:
        m = re.match(r"(%[\w#:]+) = vm\.const\.(i32|i64)(?:\.zero)? ?(-?\d+)?", ln)
        if m:
            env[m.group(1)] = int(m.group(3) or 0)
            continue
        m = re.match(r"(%\w+) = vm\.(add|sub|mul|div|shr|xor|and|or)\.(i32|i64)(\.s|\.u)? (%\w+), (%\w+)", ln)
        if m:
            a, b = val(m.group(5)), val(m.group(6))
            op, width = m.group(2), m.group(3)
            norm = _s64 if width == "i64" else _s32
            if op == "div":
                q = abs(a) // abs(b)
                r = q if (a >= 0) == (b >= 0) else -q
            elif op == "shr":
                mask = _M64 if width == "i64" else _M32
                r = (a & mask) >> b if m.group(4) == ".u" else a >> b
            else:
                r = {"add": a + b, "sub": a - b, "mul": a * b, "xor": a ^ b, "and": a & b, "or": a | b}[op]
            env[m.group(1)] = norm(r)
            continue
        m = re.match(r"(%\w+) = vm\.cmp\.(lt|lte|gt|gte|eq|ne)\.(i32|i64)(\.s|\.u)? (%\w+), (%\w+)", ln)
        if m:
            a, b = val(m.group(5)), val(m.group(6))
            env[m.group(1)] = int({"lt": a < b, "lte": a <= b, "gt": a > b, "gte": a >= b,
                                   "eq": a == b, "ne": a != b}[m.group(2)])
            continue
        m = re.match(r"(%\w+) = vm\.select\.(i32|i64) (%\w+), (%\w+), (%\w+)", ln)
        if m:
            env[m.group(1)] = val(m.group(4)) if val(m.group(3)) else val(m.group(5))
            continue
        m = re.match(r"(%\w+) = vm\.trunc\.i64\.i32 (%\w+)", ln)
        if m:
            env[m.group(1)] = _s32(val(m.group(2)))
            continue
        m = re.match(r"(%\w+) = vm\.bitcast\.f32\.i32 (%\w+)", ln)
        if m:
            env[m.group(1)] = struct.unpack("<i", struct.pack("<f", val(m.group(2))))[0]
            continue
        m = re.match(r"(%\w+) = vm\.call @hal_inline\.buffer_view\.dim\((%\w+), (%\w+)\)", ln)
        if m:
            which = arg_index[m.group(2)]
            env[m.group(1)] = (shapes or {})[which][val(m.group(3))]
            continue
        m = re.match(r"(%\w+) = vm\.const\.ref\.rodata @(\w+)", ln)
        if m:
            env[m.group(1)] = ("rodata", m.group(2))
            continue
        m = re.match(r"(%\w+) = vm\.call @hal_loader\.executable\.lookup\.function\((%\w+), (%\w+)\)", ln)
        if m:
            env[m.group(1)] = ("export", rodata_names[val(m.group(3))[1]])
            continue
        m = re.match(r"vm\.call\.variadic @hal_loader\.executable\.dispatch\((%\w+), (%\w+), (%\w+), (%\w+), "
                     r"(%\w+), \[(.*?)\], \[(.*?)\]\)", ln)
        if m:
            fid = val(m.group(2))
            wg = tuple(val(m.group(i)) for i in (3, 4, 5))
            consts = [_s32(val(c.strip())) for c in m.group(6).split(",") if c.strip()]
            binds = [(b, val(o), val(n)) for b, o, n in re.findall(r"\((%[\w#]+), (%\w+), (%\w+)\)", m.group(7))]
            out.append(Dispatch(fid[1], wg, consts, binds))
            continue
        m = re.match(r"(%[\w:]+) = ", ln)
        if m:  # anything else: a value the evaluator does not know
            env[m.group(1).split(":")[0]] = _Unknown(ln[:60])
    return out
