"""IREE VM calling conventions: parsing and byte layout, one function per IREE rule.

A cconv string (`0rIiiiCiDCrIID_v`) describes the packed argument and result buffers that cross the
VM/native boundary. IREE lays these buffers out in several independent places; each is modelled here
by its own function so that disagreements can be named:

- `vm_size`  — runtime/src/iree/vm/module.c, iree_vm_function_call_compute_cconv_fragment_size: the
  bytes the VM allocates (offsets from 0, spans aligned even when empty, trailing padding).
- `vm_pack`  — runtime/src/iree/vm/bytecode/dispatch.c, the import-argument packer and external
  enter/leave: where each value and span count is written (absolute-address alignment, every span
  element field re-aligned, no trailing padding, empty spans not aligned).
- `shim_struct` / `shim_view` — runtime/src/iree/vm/shims.h, IREE_VM_ABI_FIXED_STRUCT /
  IREE_VM_ABI_VLA_STRUCT: the plain C struct a native shim declares, laid out by the target's C ABI,
  and the length it insists on.
- `span_reader` — a hand-written reader of several spans that copies the fixed C struct and walks
  the tails itself, as hal_loader's dispatch shim does (pre-fix: starting at sizeof of the fixed
  struct; fixed: at the packed size of the fixed part).

One file per side of the boundary: `syntax` (the text, and IREE's own verdict on it), `vm_packing`
(rules a and b), `shim_structs` (rule c and the hand-written readers), `findings` (`layout()` and
the comparisons); and `codec`, the byte codecs of one instance that the runtime packs and reads
with.

`layout()` runs the first three for one instance (fragment, target, span counts) and reports every
disagreement as a `Finding`. A difference that only moves the allocation's unused tail (the VM sizes
empty spans and trailing padding the packer never writes) is not a finding: no byte changes meaning.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_face import lazy_face

if TYPE_CHECKING:  # what the face offers, for readers and type checkers; loaded on first use below
    from .findings import (MAX_VALUE_FINDINGS, Finding, FragmentLayout, compare_reader, layout, read_by,
                           struct_findings)
    from .shim_structs import READER_FORMS, ReaderView, ShimView, shim_struct, shim_view, span_reader
    from .syntax import (KINDS, MAX_SPAN_COUNT, SPAN_END, SPAN_START, SPLIT, VERSION, VOID, CconvError,
                         Fragment, Item, Signature, Span, SpanCountError, SpanSyntaxError, UnknownTypeError,
                         Value, VersionError, as_fragment, iree_verdict, parse, parse_fragment)
    from .vm_packing import (IREE_VM_REF_T, IREE_VM_SIZE_T, CountSlot, Gap, Gaps, Offsets, ValueSlot,
                             ValueSlots, vm_field, vm_pack, vm_size)

# Each name the face re-exports -> its submodule (PEP 562): importing the face loads nothing, so a
# command that only reads the cconv text (`syntax`) never imports the layout rules.
_SUBMODULES = {
    "findings": ("MAX_VALUE_FINDINGS", "Finding", "FragmentLayout", "compare_reader", "layout", "read_by",
                 "struct_findings"),
    "shim_structs": ("READER_FORMS", "ReaderView", "ShimView", "shim_struct", "shim_view", "span_reader"),
    "syntax": ("KINDS", "MAX_SPAN_COUNT", "SPAN_END", "SPAN_START", "SPLIT", "VERSION", "VOID", "CconvError",
               "Fragment", "Item", "Signature", "Span", "SpanCountError", "SpanSyntaxError",
               "UnknownTypeError", "Value", "VersionError", "as_fragment", "iree_verdict", "parse",
               "parse_fragment"),
    "vm_packing": ("IREE_VM_REF_T", "IREE_VM_SIZE_T", "CountSlot", "Gap", "Gaps", "Offsets", "ValueSlot",
                   "ValueSlots", "vm_field", "vm_pack", "vm_size"),
}
__getattr__, __dir__ = lazy_face(__name__, globals(), _SUBMODULES, submodules=_SUBMODULES)


def clear_caches() -> None:
    """Forget the instance layouts and per-target tables the rules have cached (for measuring a
    first layout, or after changing a rule under test). Parsed fragments and shim structs stay:
    each is the one declaration of its text, which the catalog shares by identity."""
    from . import findings, shim_structs, vm_packing

    findings.layout_cache_clear()
    vm_packing.target_tables_cache_clear()
    shim_structs.reader_cache_clear()


__all__ = ["VERSION", "KINDS", "SPAN_START", "SPAN_END", "VOID", "SPLIT", "MAX_SPAN_COUNT",
           "MAX_VALUE_FINDINGS", "IREE_VM_REF_T", "IREE_VM_SIZE_T",
           "CconvError", "UnknownTypeError", "SpanSyntaxError", "VersionError", "SpanCountError",
           "Value", "Span", "Item", "Fragment", "Signature", "parse", "parse_fragment", "iree_verdict",
           "as_fragment", "vm_field", "vm_size", "vm_pack", "ValueSlot", "CountSlot", "Gap",
           "ValueSlots", "Gaps", "Offsets", "shim_struct", "ShimView", "shim_view", "ReaderView",
           "READER_FORMS", "span_reader", "Finding", "FragmentLayout", "layout", "read_by",
           "struct_findings", "compare_reader", "clear_caches"]
