"""The same `hal` module calls on IREE's real module (iree.runtime 3.13, a local-sync device) and on
ireeabi's (modules/hal/module.py), side by side, for the full-HAL fidelity tests.

Both sides take Python values: ints, `Str(...)` for a vm.buffer holding text or bytes, `None` for a
null ref, and the handles of refs an earlier call returned (`Handle`, looked up per side). Each call
gives either its results (ints; a ref as ("ref", type name)) or the failure as (status code name,
message without IREE's source location and annotations). The real runtime's iree_vm_invoke cannot
pass variadic spans, so only fixed-signature exports are compared this way; variadic ones are
checked in the programs iree-compile emits (tests/tooling/test_default_model.py) and against module.c.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ireeabi.abi.errors import IreeAbiError
from ireeabi.modules.hal.runtime import HalRuntime
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess
from ireeabi.vm.ref import Ref
from ireeabi.base.status import StatusError


@dataclass(frozen=True)
class Str:
    """A vm.buffer argument with these bytes (text is UTF-8 encoded), its data aligned to
    `alignment` (0: the default) and mutable or not."""

    data: "str | bytes"
    alignment: int = 0
    mutable: bool = True

    @property
    def bytes(self) -> bytes:
        return self.data.encode() if isinstance(self.data, str) else self.data


@dataclass(frozen=True)
class Handle:
    """A ref an earlier call returned: `call` index and result position."""

    index: int
    position: int = 0


_STATUS = re.compile(r"([A-Z_]+); (.*?)(?:; while invoking native function .*)?$", re.S)


def real_status(text: str) -> tuple[str, str]:
    """(code, message) of the real runtime's error text."""
    first = text.split("\n")[0]
    m = _STATUS.search(first)
    assert m, text
    return m.group(1), m.group(2).rstrip("; ").strip()


class RealHal:
    """IREE's `hal` module on a local-sync device (iree.runtime)."""

    def __init__(self) -> None:
        import iree.runtime as rt
        from iree.runtime import _binding as B
        self.B = B
        self.instance = rt.VmInstance()
        self.device = rt.get_device("local-sync")
        self.module = rt.create_hal_module(self.instance, self.device)
        self.context = B.VmContext(self.instance, [self.module])
        self.results: list[list] = []
        self.lists: list = []  # every argument/result list stays alive: its refs borrow from it

    def _arg(self, a: Any, args: Any) -> None:
        B = self.B
        if isinstance(a, bool) or isinstance(a, int):
            args.push_int(int(a))
        elif isinstance(a, Str):
            data = a.bytes
            buf = B.VmBuffer(len(data), alignment=a.alignment, mutable=True)
            if data:
                memoryview(buf)[:] = data
            if not a.mutable:  # a read-only buffer with the same bytes
                ro = B.VmBuffer(len(data), alignment=a.alignment, mutable=False)
                self.lists.append(buf)
                buf = ro
            self.lists.append(buf)
            args.push_ref(buf.ref)
        elif isinstance(a, Handle):
            args.push_ref(self.results[a.index][a.position])
        else:  # (the binding cannot push a null ref)
            raise TypeError(a)

    def call(self, name: str, args: tuple, nres: int) -> Any:
        B = self.B
        f = self.module.lookup_function(name)
        a = B.VmVariantList(len(args))
        for x in args:
            self._arg(x, a)
        r = B.VmVariantList(max(nres, 1))
        self.lists += [a, r]
        try:
            self.context.invoke(f, a, r)
        except Exception as e:  # the binding raises ValueError with the status text
            self.results.append([])
            return real_status(str(e))
        out, kept = [], []
        for i in range(r.size):
            v = r.get_variant(i)
            if isinstance(v, int):
                out.append(v)
                kept.append(None)
            else:
                try:
                    ref = r.get_as_ref(i)
                except ValueError:  # a null ref
                    kept.append(None)
                    out.append(("ref", "null"))
                    continue
                kept.append(ref)
                out.append(("ref", _real_type(ref)))
        self.results.append(kept)
        return out


def _real_type(ref: Any) -> str:
    m = re.search(r"<VmRef ([\w.]+) at", repr(ref))
    return m.group(1) if m else repr(ref)


class OurHal:
    """ireeabi's `hal` module on a HalRuntime(full_hal=True) of `heap`."""

    def __init__(self, heap: Any) -> None:
        self.rt = HalRuntime(heap, full_hal=True)
        self.heap = heap
        self.results: list[list] = []
        self.held: list[Ref] = []

    def _arg(self, a: Any) -> Any:
        if isinstance(a, bool) or isinstance(a, int):
            return int(a)
        if isinstance(a, Str):
            vmb = self.rt.vm_buffers
            data = a.bytes
            b = vmb.create(BufferAccess.MUTABLE | BufferAccess.ORIGIN_HOST, len(data), a.alignment)
            if data:
                vmb.write_elements(b, 0, data, 1)
            ref = Ref(b, vmb.type)
            self.held.append(ref)
            if not a.mutable:
                ro = vmb.create(BufferAccess.ORIGIN_HOST, len(data), a.alignment)
                ref = Ref(ro, vmb.type)
                self.held.append(ref)
            return ref
        if isinstance(a, Handle):
            return self.results[a.index][a.position]
        if a is None:
            return R.NULL_REF
        raise TypeError(a)

    def call(self, name: str, args: tuple, nres: int) -> Any:
        values = [self._arg(x) for x in args]
        try:
            out = self.rt.call(f"hal.{name}", *values)
        except StatusError as e:
            self.results.append([])
            return e.code.name, e.message
        except IreeAbiError as e:  # ireeabi's refusal where IREE would overrun memory
            self.results.append([])
            return "REFUSED", f"{type(e).__name__}: {e}"
        kept, shown = [], []
        for v in out:
            if isinstance(v, Ref):
                if v.type == R.TYPE_NULL or not v.ptr:
                    kept.append(R.NULL_REF)
                    shown.append(("ref", "null"))
                    continue
                self.held.append(v)
                kept.append(v)
                shown.append(("ref", R.type_name(self.heap, v.type)))
            else:
                kept.append(None)
                shown.append(v)
        self.results.append(kept)
        return shown

    def close(self) -> None:
        for ref in reversed(self.held):
            R.release_value(self.heap, ref)
        self.held = []
        self.rt.close()


class Both:
    """Runs each call on both modules; `calls` records (name, real outcome, our outcome)."""

    def __init__(self, heap: Any) -> None:
        self.real = RealHal()
        self.ours = OurHal(heap)
        self.calls: list[tuple[str, Any, Any]] = []

    def __call__(self, name: str, *args: Any, nres: int = 1) -> Handle:
        real = self.real.call(name, args, nres)
        ours = self.ours.call(name, args, nres)
        self.calls.append((name, args, real, ours))
        return Handle(len(self.calls) - 1)

    def mismatches(self) -> list:
        return [(n, a, r, o) for n, a, r, o in self.calls if _normal(r) != _normal(o)]

    def close(self) -> None:
        self.ours.close()


def _normal(outcome: Any) -> Any:
    if isinstance(outcome, list):  # a null ref result prints as 0 on the real side
        return [("ref", "null") if v == ("ref", "null") or v is None else v for v in outcome]
    return outcome


__all__ = ["Str", "Handle", "RealHal", "OurHal", "Both", "real_status"]
