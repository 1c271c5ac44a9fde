"""IREE's releases as their modules meet this runtime: the bytecode version each release's
iree-compile emits (and its runtime loads), the version of its `hal` module, and the `hal`
exports whose signatures differ from this runtime's (IREE 3.13's). ireeabi's own: IREE's loader
only says "bytecode version mismatch" or "signature mismatch"; these facts say which releases made
the module and whose runtimes take it.

Every fact is read from the releases' wheels (iree-base-compiler / iree-base-runtime 2.9.0 to
3.13.0 on PyPI; 3.7.1 has no runtime wheel, 3.7.0 stands for it) by
tests/programs/releases/derive.py, which writes tests/programs/releases/facts.json; the tests
check this table against that file and against the modules of a few releases checked in beside it.
A release's runtime loads exactly its own compiler's bytecode version (verifier.c: the same major,
a minor no newer), so one version per release says both."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


__all__ = ["Release", "RELEASES", "RUNTIME_RELEASE", "SIGNATURE_CHANGES", "emitting", "loads",
           "resolves_hal", "hal_signature_refusal",
           "bytecode_version_refusal", "import_signature_note", "release_span"]

# The release whose runtime this one is (its bytecode version is vm.bytecode.isa's).
RUNTIME_RELEASE = "3.13.0"


@dataclass(frozen=True)
class Release:
    name: str  # as PyPI names the wheels: "3.11.0"
    bytecode_version: tuple[int, int]  # what its iree-compile emits and its runtime loads
    hal_version: int  # its `hal` native module's version (modules depend on `hal >= N`)
    # its `hal` exports whose cconv differs from this runtime's: local name -> cconv
    hal_differs: Mapping[str, str] = field(default_factory=dict)
    hal_lacks: frozenset[str] = frozenset()  # this runtime's `hal` exports it does not have

    @property
    def short(self) -> str:
        return self.name[:-2] if self.name.endswith(".0") else self.name

    def hal_cconv(self, function: str) -> str | None:
        """The cconv of its `hal` export `function` (None: it has none)."""
        if function in self.hal_lacks:
            return None
        from ..layouts import hal_module  # start-up: only where a refusal names releases

        own = next((e.cconv for e in hal_module.EXPORTS if e.name == function), None)
        return self.hal_differs.get(function, own)


_HAL_5 = {  # 2.9 to 3.3: the `hal` module before version 6
    "channel.create": "0rIirrii_r", "channel.split": "0riii_r",
    "command_buffer.copy_buffer": "0riirIrII_v",
    "command_buffer.dispatch": "0rriiiiICiDCiirIID_v",
    "command_buffer.dispatch.indirect": "0rriirIICiDCiirIID_v",
    "command_buffer.execution_barrier": "0riii_v", "command_buffer.fill_buffer": "0rrIIiii_v",
    "command_buffer.update_buffer": "0rrIrIIi_v", "device.queue.alloca": "0rIrriiiI_r",
    "device.queue.dealloca": "0rIrrr_v", "device.queue.execute": "0rIrrCrD_v",
    "device.queue.execute.indirect": "0rIrrrCrIID_v", "device.queue.read": "0rIrrrIrIIi_v",
    "device.queue.write": "0rIrrrIrIIi_v", "executable.create": "0rrrr_r",
    "fence.await": "0iCrD_i", "fence.create": "0ri_r", "fence.join": "0CrD_r"}
_LACKS_5 = frozenset({
    "allocator.select", "buffer.allocation.discard", "buffer.allocation.is_terminal",
    "buffer.allocation.preserve", "command_buffer.advise_buffer", "command_buffer.flush_buffer",
    "command_buffer.invalidate_buffer", "device.queue.barrier", "executable.lookup.function"})
_DISPATCH_I32 = {  # 3.4 to 3.11: the dispatches' entry point an i32 export ordinal
    "command_buffer.dispatch": "0rriiiiICiDCiirIID_v",
    "command_buffer.dispatch.indirect": "0rriirIICiDCiirIID_v"}
_LACKS_6 = frozenset({"command_buffer.flush_buffer", "command_buffer.invalidate_buffer",
                      "executable.lookup.function"})

RELEASES: tuple[Release, ...] = (
    *(Release(v, (15, 0), 5, _HAL_5, _LACKS_5) for v in ("2.9.0", "3.0.0", "3.1.0", "3.2.0", "3.3.0")),
    Release("3.4.0", (15, 0), 6, _DISPATCH_I32, _LACKS_6 | {"allocator.select"}),
    *(Release(v, (15, 0), 6, _DISPATCH_I32, _LACKS_6)
      for v in ("3.5.0", "3.6.0", "3.7.0", "3.8.0", "3.9.0")),
    Release("3.10.0", (16, 0), 6, _DISPATCH_I32, _LACKS_6),
    Release("3.11.0", (17, 0), 6, _DISPATCH_I32, _LACKS_6),
    Release("3.12.0", (17, 0), 7, {}, frozenset({"command_buffer.flush_buffer",
                                                 "command_buffer.invalidate_buffer"})),
    Release("3.13.0", (17, 0), 7),
)

_OWN = next(r for r in RELEASES if r.name == RUNTIME_RELEASE)

# Why a signature changed, where IREE's sources say (runtime/src/iree/modules/hal/exports.inl and
# module.c of the snapshot; the old cconvs from the wheels): (hal function, its old cconv) -> why.
SIGNATURE_CHANGES: Mapping[tuple[str, str], str] = {
    ("command_buffer.dispatch", "0rriiiiICiDCiirIID_v"):
        "the entry point is an i32 export ordinal (`i`) as IREE <= 3.11 passes it; 3.12 and later "
        "pass the i64 function id hal.executable.lookup.function returns (`I`)",
    ("command_buffer.dispatch.indirect", "0rriirIICiDCiirIID_v"):
        "the entry point is an i32 export ordinal (`i`) as IREE <= 3.11 passes it; 3.12 and later "
        "pass the i64 function id hal.executable.lookup.function returns (`I`)",
}


def release_span(releases: "list[Release] | tuple[Release, ...]") -> str:
    """`3.11`, `2.9-3.9`, or runs of consecutive releases joined by `, `."""
    names = [r.name for r in RELEASES]
    runs: list[list[Release]] = []
    for r in releases:
        if runs and names.index(r.name) == names.index(runs[-1][-1].name) + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    return ", ".join(run[0].short if len(run) == 1 else f"{run[0].short}-{run[-1].short}"
                     for run in runs)


def emitting(major: int, minor: int) -> list[Release]:
    """The releases whose iree-compile emits bytecode major.minor (and whose runtimes load it)."""
    return [r for r in RELEASES if r.bytecode_version == (major, minor)]


def loads(release: Release, major: int, minor: int) -> bool:
    """Whether `release`'s runtime loads bytecode major.minor (verifier.c's rule)."""
    return release.bytecode_version[0] == major and minor <= release.bytecode_version[1]


def resolves_hal(release: Release, hal_minimum: int | None, hal_imports: Mapping[str, str]) -> bool:
    """Whether `release`'s `hal` module satisfies a module's `hal >= hal_minimum` dependency (None:
    it has none) and exports each of its required `hal` imports (local name -> cconv) with that
    signature (context.c's checks)."""
    if hal_minimum is not None and release.hal_version < hal_minimum:
        return False
    return all(release.hal_cconv(f) == c for f, c in hal_imports.items())


def bytecode_version_refusal(major: int, minor: int, hal_minimum: int | None = None,
                             hal_imports: Mapping[str, str] | None = None) -> str:
    """Why this runtime refuses a module of bytecode major.minor, naming the releases that make it,
    the runtimes that load it and, given its `hal` dependency and required `hal` imports, those of
    them that resolve the imports too."""
    own = f"this runtime is IREE {_OWN.short}'s, {_OWN.bytecode_version[0]}.{_OWN.bytecode_version[1]}"
    made = emitting(major, minor)
    loading = [r for r in RELEASES if loads(r, major, minor)]
    if not loading:
        return (f"bytecode {major}.{minor}: no IREE release from {RELEASES[0].short} to "
                f"{RELEASES[-1].short} emits or loads it; {own}")
    text = (f"bytecode {major}.{minor}: iree-compile {release_span(made) or 'of no release'} emits "
            f"it, the runtimes of {release_span(loading)} load it")
    if hal_minimum is not None or hal_imports:
        taking = [r for r in loading if resolves_hal(r, hal_minimum, hal_imports or {})]
        text += (f", and of those {release_span(taking)} resolve its hal imports" if taking
                 else ", but none of those resolves its hal imports")
    return f"{text}; {own}"


def import_signature_note(full_name: str, cconv: str) -> str | None:
    """For an import this runtime's `hal` refuses with a signature mismatch: the releases whose
    `hal` exports that signature, the runtimes among them that take a module of this runtime's
    bytecode version, and why the signature changed where known. None when no release exports it."""
    module, _, function = full_name.partition(".")
    if module != "hal":
        return None
    rel = [r for r in RELEASES if r.hal_differs.get(function) == cconv]
    if not rel:
        return None
    takers = [r for r in rel if r.bytecode_version[0] == _OWN.bytecode_version[0]
              and r.bytecode_version[1] <= _OWN.bytecode_version[1]]
    why = SIGNATURE_CHANGES.get((function, cconv))
    text = f"{full_name} {cconv} is the signature of IREE {release_span(rel)}'s hal"
    if why:
        text += f" ({why})"
    text += (f"; of those, the runtime of {release_span(takers)} takes this module" if takers
             else "") + f"; this runtime is IREE {_OWN.short}'s"
    return text


def hal_signature_refusal(hal_imports: Mapping[str, str]) -> str | None:
    """Why this runtime's `hal` refuses a module's required `hal` imports (local name -> cconv)
    whose signatures are another release's (context.c: INTERNAL, signature mismatch), naming those
    releases; None when every import this runtime exports has the module's signature."""
    out = []
    for function, cconv in hal_imports.items():
        own = _OWN.hal_cconv(function)
        if own is None or own == cconv:
            continue
        note = import_signature_note(f"hal.{function}", cconv)
        out.append(f"hal.{function} {cconv}, this runtime's {own}" + (f": {note}" if note else ""))
    return "; ".join(out) or None
