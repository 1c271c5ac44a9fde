"""Fidelity of the native-module call path against IREE's sources (and, where it can answer, the real
runtime): which cconv strings IREE accepts, what its shims check, how native modules resolve and
reflect functions, and what the VM does with a failed call.

Paths are relative to the IREE repository (runtime/src/iree/...). Oracles: iree.runtime
(iree-base-runtime 3.13.0, a test dependency) for a real native module's lookup, and the host libc's
strncmp through cffi for iree_string_view_compare's byte rule.
"""
from __future__ import annotations

import itertools
import re
import struct

import pytest

from ireeabi.abi import cconv
from ireeabi.abi.errors import IreeAbiError
from ireeabi.base.machine import host as _host_machine
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferAccess, BufferType
from ireeabi.base.heap import Heap
from ireeabi.modules.hal.loader import DispatchShim
from ireeabi.vm.native_module import Export, Linkage, NativeModule, string_view_compare
from ireeabi.vm.ref import Ref
from ireeabi.vm.shims import (CALL_BEGIN, CALL_RESUME, SIGNATURE_MISMATCH, ByteSpan, CallContext, MarshalError,
                              Shim, shim_for)
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError

HOST_M = _host_machine()  # the data model of the default (host) heap

DISPATCH = "0rIiiiCiDCrIID_v"


def noop(ctx: CallContext, *args: object) -> None:
    return None


def is_mismatch(e: pytest.ExceptionInfo) -> bool:
    return e.value.code == StatusCode.INVALID_ARGUMENT and e.value.message == SIGNATURE_MISMATCH


def span_of(heap: Heap, data: bytes | None) -> ByteSpan:
    if data is None:
        return ByteSpan(0, 0)
    p = heap.malloc(len(data))
    heap.write(p, data)
    return ByteSpan(p, len(data))


def free_spans(heap: Heap, *spans: ByteSpan) -> None:
    for s in spans:
        if s.data:
            heap.free(s.data)


# -- cconv strings: IREE's verdict next to the parser's ------------------------------------------------

@pytest.mark.parametrize("text, status", [
    ("1rr_v", ("UNIMPLEMENTED", "unsupported cconv version 1")),
    ("rr_v", ("UNIMPLEMENTED", "unsupported cconv version r")),
    ("0rx_v", ("UNIMPLEMENTED", "unsupported cconv type 'x'")),
    ("0rCiCiDD_v", ("UNIMPLEMENTED", "unsupported cconv span type 'C'")),
    ("0riD_v", ("UNIMPLEMENTED", "unsupported cconv type 'D'")),
    ("0r_CiD", ("INVALID_ARGUMENT", "variadic argument found but segment size list is missing/underflowed")),
    ("0r_i_i", ("UNIMPLEMENTED", "unsupported cconv type '_'")),
    ("0rCx", ("UNIMPLEMENTED", "unsupported cconv span type 'x'")),
    ("0rCi_D", ("UNIMPLEMENTED", "unsupported cconv type 'D'")),  # results hold the stray 'D'
    ("0r\u00e9", ("UNIMPLEMENTED", "unsupported cconv type '\xc3'")),  # %c of the first UTF-8 byte
    # Accepted by IREE's walkers, refused by the parser (stricter on purpose): no IREE status.
    ("0rCiI_v", None), ("0rCD_v", None), ("0rv_v", None), ("0rCi", None), ("0vv_v", None),
    ("0iCvD_v", None),
])
def test_iree_verdict_on_strings_the_parser_refuses(text, status):
    """runtime/src/iree/vm/module.c: iree_vm_function_call_get_cconv_fragments (version byte, split at
    the first '_', a lone 'v' side is empty) and iree_vm_function_call_compute_cconv_fragment_size
    ('v' skipped, unknown type / span type UNIMPLEMENTED, a span runs to 'D' or the end, a span with no
    segment size list INVALID_ARGUMENT), applied as bytecode/module.c
    iree_vm_bytecode_module_resolve_import applies them (results always without segment sizes)."""
    with pytest.raises(cconv.CconvError) as e:
        cconv.parse(text)
    assert e.value.iree_status == status
    assert cconv.iree_verdict(text) == status


def test_fragment_verdicts_and_non_strings():
    """A bare fragment is walked as a variadic call walks its arguments (segment sizes present):
    module.c iree_vm_function_call_compute_cconv_fragment_size. A non-string has no IREE verdict."""
    with pytest.raises(cconv.CconvError) as e:
        cconv.parse_fragment("rCxD")
    assert e.value.iree_status == ("UNIMPLEMENTED", "unsupported cconv span type 'x'")
    with pytest.raises(cconv.CconvError) as e:
        cconv.parse_fragment("rCD")  # an empty span: the walker adds the count and moves on
    assert e.value.iree_status is None
    with pytest.raises(cconv.CconvError) as e:
        cconv.parse(b"0r_v")
    assert e.value.iree_status is None


@pytest.mark.parametrize("text, args, results", [
    ("0v", "", ""), ("0v_ir", "", "ir"), ("0_", "", ""), ("0v_", "", ""),
])
def test_fragment_split_examples_of_module_h(text, args, results):
    """The examples above iree_vm_function_call_get_cconv_fragments in runtime/src/iree/vm/module.h
    (`0v` and `0v_ir`), and an empty side after the '_' (module.c: the split leaves it empty)."""
    sig = cconv.parse(text)
    assert (sig.arguments.text, sig.results.text) == (args, results)
    assert cconv.iree_verdict(text) is None


def test_everything_the_parser_accepts_iree_accepts():
    """Every string of up to 6 characters over the cconv alphabet (plus junk): when the parser accepts
    it, the IREE walk (module.c, as above) finds nothing wrong either, so the parser's verdicts differ
    from IREE's only by refusing more."""
    refused_by_parser_only = 0
    for n in range(7):
        for chars in itertools.product("0_vCDiIr", repeat=n):
            text = "".join(chars)
            try:
                cconv.parse(text)
            except cconv.CconvError as e:
                refused_by_parser_only += e.iree_status is None
                continue
            assert cconv.iree_verdict(text) is None, text
    assert refused_by_parser_only > 0  # the strict cases above are among them


# -- generic shims: the RESUME rule ------------------------------------------------------------------------

def test_resume_waives_the_argument_check(heap: Heap):
    """runtime/src/iree/vm/shims.h IREE_VM_ABI_DEFINE_SHIM: the arguments are checked_deref'd (NULL when
    the size is wrong) but the failure condition is `!((flags & RESUME) || args) || !rets`, so on RESUME
    a wrongly sized argument span reaches the target as NULL arguments; on BEGIN it is the mismatch.
    The results check stays (fixed struct: exactly sizeof)."""
    seen: list = []

    def target(ctx: CallContext, *args: object) -> int:
        seen.append(args)
        return 7

    for sig, bad in (("0iI_i", bytes(3)), ("0rCrD_i", bytes(cconv.shim_view("rCrD", HOST_M.target, [0]).sizeof + 1))):
        shim = shim_for(sig)
        rsize = cconv.shim_view("i", HOST_M.target).sizeof
        args, big = span_of(heap, bad), span_of(heap, bytes(rsize + 1))
        rets = ByteSpan(big.data, rsize)
        try:
            shim(CallContext(heap), CALL_RESUME, args, rets, target)
            assert seen[-1] == () and heap.read_i32(rets.data) == 7
            assert shim.decode_arguments(heap, CALL_RESUME, args) is None
            for call in (lambda: shim(CallContext(heap), CALL_BEGIN, args, rets, target),
                         lambda: shim.decode_arguments(heap, CALL_BEGIN, args),
                         lambda: shim(CallContext(heap), CALL_RESUME, args, big, target)):
                with pytest.raises(StatusError) as e:
                    call()
                assert is_mismatch(e)
        finally:
            free_spans(heap, args, big)
    assert len(seen) == 2


# -- hal_loader's hand-written shim: its own span rules --------------------------------------------------

def dispatch_bytes(heap: Heap, constants: list[int]) -> bytes:
    """The argument bytes the VM packs for a dispatch with these constants and no binding (no ref
    retained: the executable slot is a NULL ref)."""
    from ireeabi.vm import call as C

    buf = C.pack_arguments(heap, cconv.parse(DISPATCH).arguments, [R.NULL_REF, 3, 1, 1, 1, constants, []])
    try:
        return buf.bytes()
    finally:
        C.release_arguments(buf)


@pytest.mark.parametrize("form", ["fixed", "pre-fix"])
def test_loader_shim_checks_results_and_flags_as_iree_vm_shim_dispatch_v(heap: Heap, buffers: BufferType,
                                                                          form: str):
    """runtime/src/iree/modules/hal/loader/module.c iree_vm_shim_dispatch_v (modules/hal/loader.py
    DispatchShim): the call fails with the signature mismatch when `rets_storage.data_length > 0` (a
    NULL results span is never looked at) and never consults the flags (no RESUME case); a NULL
    argument span, which it dereferences, is refused saying so (IreeFaultError). The generic `v`
    results of shims.h (iree_vm_abi_v_checked_deref) accept any length instead."""
    data = dispatch_bytes(heap, [])  # no constants, no bindings: both reader forms read it right
    got: list = []
    shim = DispatchShim(cconv.parse(DISPATCH), form, heap.machine)
    args = span_of(heap, data)
    rets8 = span_of(heap, bytes(8))

    def values(read) -> tuple:  # noqa: ANN001
        return read.values[1:] + (read.constant_count, read.binding_count)

    try:
        shim(CallContext(heap), CALL_BEGIN, args, ByteSpan(0, 0), lambda ctx, read: got.append(values(read)))
        assert got[-1] == (3, 1, 1, 1, 0, 0)
        with pytest.raises(StatusError) as e:
            shim(CallContext(heap), CALL_BEGIN, args, rets8, noop)
        assert is_mismatch(e)
        with pytest.raises(StatusError) as e:
            shim.check_results(heap, rets8)
        assert is_mismatch(e)
        shim(CallContext(heap), CALL_RESUME, args, ByteSpan(0, 0), lambda ctx, read: got.append(values(read)))
        assert got[-1] == (3, 1, 1, 1, 0, 0)  # RESUME changes nothing
        for flags in (CALL_BEGIN, CALL_RESUME):
            with pytest.raises(IreeFaultError, match="a NULL argument span: the .*dispatch shim copies "
                                                     r"sizeof\(iree_vm_abi_rIiii_t\) bytes from it"):
                shim(CallContext(heap), flags, ByteSpan(0, 0), ByteSpan(0, 0), noop)
        generic = shim_for("0rCrD_v")  # shims.h: `v` results, any length, but not NULL
        vla = bytearray(cconv.shim_view("rCrD", HOST_M.target, [0]).sizeof)
        vargs = span_of(heap, bytes(vla))
        try:
            generic(CallContext(heap), CALL_BEGIN, vargs, rets8, noop)
            with pytest.raises(StatusError) as e:
                generic(CallContext(heap), CALL_BEGIN, vargs, ByteSpan(0, 0), noop)
            assert is_mismatch(e)
        finally:
            free_spans(heap, vargs)
    finally:
        free_spans(heap, args, rets8)


def test_a_negative_loader_count_passes_the_shims_check(heap: Heap, buffers: BufferType):
    """loader/module.c iree_vm_shim_dispatch_v reads the int32 counts without a sign check: a constant
    count of -1 moves the binding count back onto itself (-1), and the end check `array + count x
    sizeof(iree_vm_abi_rII_t) > end` passes, the product wrapping below the array. The shim hands the
    dispatch that count (whose alloca of a negative size modules/hal/loader.py refuses)."""
    data = dispatch_bytes(heap, [9])
    lay = cconv.layout(cconv.parse(DISPATCH).arguments, HOST_M.target, [1, 0])
    at = lay.counts[0].offset
    patched = bytearray(data)
    struct.pack_into("<i", patched, at, -1)
    args = span_of(heap, bytes(patched))
    got: list = []
    try:
        DispatchShim(cconv.parse(DISPATCH), "fixed", heap.machine)(
            CallContext(heap), CALL_BEGIN, args, ByteSpan(0, 0), lambda ctx, read: got.append(read))
        (read,) = got
        assert (read.constant_count, read.binding_count, read.binding_count_at) == (-1, -1, at)
    finally:
        free_spans(heap, args)


# -- results of a failed call -------------------------------------------------------------------------------

def test_a_result_write_failure_leaves_no_ref_behind(heap: Heap, buffers: BufferType):
    """A target hands back a retained ref and a bad scalar: the shim drops the ref it was given and the
    call fails. runtime/src/iree/vm/bytecode/dispatch.c iree_vm_bytecode_issue_import_call never reads
    the results of a failed call, so the reference is released exactly once (ref.c retain/release
    balance): the caller's reference survives (before the fix the buffer was destroyed under it)."""
    b = buffers.create(BufferAccess.MUTABLE, 8)
    r = Ref(b, buffers.type)

    def bad(ctx: CallContext, x: Ref) -> tuple:
        return ctx.retain(x), "x"

    mod = NativeModule(heap, "m", [Export("bad", "0r_ri", bad)])
    for call in (lambda: mod.call("bad", r), lambda: mod.planned(0)([r])):
        with pytest.raises(MarshalError, match="cannot write results"):
            call()
        assert buffers.counter(b) == 1
    rsize = cconv.layout("ri", HOST_M.target).size
    args = span_of(heap, bytes(cconv.shim_view("r", HOST_M.target).sizeof))  # a NULL ref argument
    rets = span_of(heap, b"\xaa" * rsize)
    try:
        with pytest.raises(MarshalError):
            mod.shims[0](CallContext(heap), CALL_BEGIN, args, rets, lambda ctx, x: (ctx.retain(r), "x"))
        assert heap.read(rets.data, rsize) == bytes(rsize)  # the half-written ref is not left there
        assert buffers.counter(b) == 1
    finally:
        free_spans(heap, args, rets)
    buffers.release(b)
    mod.close()


def test_failed_calls_leave_their_results_unread(heap: Heap, buffers: BufferType,
                                                 monkeypatch: pytest.MonkeyPatch):
    """A native function that wrote a ref result and then failed (as C targets can): dispatch.c
    iree_vm_bytecode_issue_import_call returns the annotated status without touching the results, so
    the reference stays where the callee put it (IREE leaks it); nothing is released on its behalf."""
    b = buffers.create(BufferAccess.MUTABLE, 8)
    r = Ref(b, buffers.type)

    def writes_then_fails(self, ctx, flags, args, rets, target):
        R.retain_value(heap, r)
        R.write_ref(heap, rets.data, r)
        raise StatusError(StatusCode.ABORTED, "late failure")

    mod = NativeModule(heap, "m", [Export("f", "0i_r", noop)])
    monkeypatch.setattr(Shim, "__call__", writes_then_fails)
    monkeypatch.setattr(Shim, "on_frame", lambda self, a, r: None)  # a custom shim: the call site hands it spans
    for call in (lambda: mod.call("f", 1), lambda: mod.planned(0)([1])):
        with pytest.raises(StatusError, match="late failure"):
            call()
    assert buffers.counter(b) == 3  # both references the callee made are still counted
    buffers.release(b)
    buffers.release(b)
    buffers.release(b)
    mod.close()


# -- statuses of failing calls ---------------------------------------------------------------------------

def test_failures_are_annotated_with_the_native_function(heap: Heap):
    """runtime/src/iree/vm/native_module.c iree_vm_native_module_issue_call: a failing shim status
    (the target's, or the shim's own signature mismatch) is annotated "while invoking native function
    <module>.<function>"; the status's own code and message are unchanged (existing tests pin them)."""
    def fails(ctx: CallContext, x: int) -> None:
        raise StatusError(StatusCode.FAILED_PRECONDITION, "nope")

    # ICiD: sizeof(C struct) pads past the array start on LP64 hosts: the VM's bytes are a mismatch.
    mod = NativeModule(heap, "mod", [Export("fails", "0i_v", fails), Export("vla", "0ICiD_v", noop)])
    for call in (lambda: mod.call("fails", 1), lambda: mod.planned(0)([1])):
        with pytest.raises(StatusError) as e:
            call()
        assert (e.value.code, e.value.message) == (StatusCode.FAILED_PRECONDITION, "nope")
        assert e.value.__notes__[-1] == "while invoking native function mod.fails"
    if any(f.rule == "shim-length" for f in cconv.layout("ICiD", HOST_M.target, [1]).findings):
        with pytest.raises(StatusError) as e:
            mod.call("vla", 1, [2])
        assert is_mismatch(e) and e.value.__notes__ == ["while invoking native function mod.vla"]
    mod.close()


@pytest.mark.parametrize("target, cconv_text, args, flat, spans", [
    # the VM packs I at 8 (16 bytes), the C struct has it at 4 (12 bytes)
    ("i386", "0iI_v", [1, 2], [1, 2], ()),
    # 40 packed bytes against a 36-byte struct
    ("i386", "0rIirI_v", [Ref(0, 0), 1, 2, Ref(0, 0), 3], [Ref(0, 0), 1, 2, Ref(0, 0), 3], ()),
    # sizeof(C struct) pads past the array start on LP64
    ("x86_64", "0ICiD_v", [1, [2]], [1, 2], (1,)),
])
def test_a_struct_the_packed_buffer_is_not_is_a_mismatch_on_both_paths(target, cconv_text, args, flat, spans):
    """Where the VM's packed buffer and the shim's C struct disagree (the layout oracles measure both),
    the planned call site's shim, run on its frame, makes the shim's own length check and fails with
    the same annotated INVALID_ARGUMENT as the layered call; the target never runs."""
    heap = Heap(target=target, name="mismatch")
    ran = []
    mod = NativeModule(heap, "mod", [Export("f", cconv_text, lambda ctx, *a: ran.append(a))])
    planned = mod.planned(0, spans)
    assert planned.on_frame is not None  # the generic shim on the frame, not the spans
    seen = []
    for call in (lambda: mod.call_ordinal(0, *args), lambda: planned(flat)):
        with pytest.raises(StatusError) as e:
            call()
        seen.append((e.value.code, e.value.message, e.value.__notes__))
    assert seen[0] == seen[1] == (StatusCode.INVALID_ARGUMENT, SIGNATURE_MISMATCH,
                                  ["while invoking native function mod.f"])
    assert not ran
    mod.close()
    heap.close()


@pytest.mark.parametrize("cconv_text, code, message", [
    ("0i_i", StatusCode.UNIMPLEMENTED, "yield in imports with results not supported"),
    ("0i_v", StatusCode.DEFERRED, "later"),
])
def test_a_deferred_import(heap: Heap, cconv_text, code, message):
    """native_module.c iree_vm_native_module_issue_call returns a DEFERRED status unannotated;
    bytecode/dispatch.c iree_vm_bytecode_issue_import_call passes it on when the results span is empty
    (allocator.h iree_byte_span_is_empty: no result bytes) and otherwise replaces it with
    UNIMPLEMENTED "yield in imports with results not supported"."""
    def defers(ctx: CallContext, x: int) -> None:
        raise StatusError(StatusCode.DEFERRED, "later")

    mod = NativeModule(heap, "m", [Export("f", cconv_text, defers)])
    for call in (lambda: mod.call("f", 1), lambda: mod.planned(0)([1])):
        with pytest.raises(StatusError) as e:
            call()
        assert (e.value.code, e.value.message) == (code, message)
        assert not getattr(e.value, "__notes__", [])
    mod.close()


# -- names: iree_string_view_compare -----------------------------------------------------------------------

def test_string_view_compare_is_strncmp_then_length():
    """runtime/src/iree/base/string_view.c iree_string_view_compare: equal sizes of 0 compare equal, a
    zero common size orders by size, otherwise strncmp over the common size decides and equal prefixes
    order by size. strncmp is the host libc's (cffi): it stops at a NUL both sides share."""
    from cffi import FFI

    ffi = FFI()
    ffi.cdef("int strncmp(const char *, const char *, size_t);")
    libc = ffi.dlopen(None)

    def oracle(lhs: bytes, rhs: bytes) -> int:
        n = min(len(lhs), len(rhs))
        if n == 0:
            return (len(lhs) > len(rhs)) - (len(lhs) < len(rhs))
        c = libc.strncmp(lhs, rhs, n)
        if c:
            return 1 if c > 0 else -1
        return (len(lhs) > len(rhs)) - (len(lhs) < len(rhs))

    words = [b"", b"a", b"a\0", b"a\0x", b"a\0y", b"a\0yz", b"ab", b"\0", b"\0\0", b"\xff", b"a\xff", b"b"]
    for x in words:
        for y in words:
            assert string_view_compare(x, y) == oracle(x, y), (x, y)
    assert string_view_compare(b"a\0x", b"a\0y") == 0  # the case a plain bytes order gets wrong


# -- lookup and reflection: a real native module as the oracle -----------------------------------------

def _status_of(error_text: str) -> tuple[str, str]:
    m = re.search(r"([A-Z_]+); (.*)$", error_text)
    assert m, error_text
    return m.group(1), m.group(2)


def test_lookup_matches_a_real_native_module(heap: Heap):
    """iree.runtime's `hal` module is created by iree_vm_native_module_create: its export names (in
    ordinal order), the ordinal each lookup finds, the linkage the found function carries (EXPORT even
    for an EXPORT_OPTIONAL lookup) and the status of an import/internal lookup are the real runtime's.
    A model module with the same names agrees on all of them."""
    import iree.runtime as rt
    from iree.runtime import _binding as B

    real = rt.create_hal_module(rt.VmInstance(), rt.get_device("local-sync"))
    names = list(real.function_names)
    mod = NativeModule(heap, "hal", [Export(n, "0v_v", noop) for n in names])  # refuses a bad order
    for name in names:
        want = real.lookup_function(name)
        assert mod.lookup(name) == want.ordinal
        for linkage in (Linkage.EXPORT, Linkage.EXPORT_OPTIONAL):
            theirs = real.lookup_function(name, B.Linkage(int(linkage)))
            ours = mod.lookup_function(name, linkage)
            assert (ours.ordinal, int(ours.linkage)) == (theirs.ordinal, int(theirs.linkage))
    for missing in ("", "buffer", "buffer_view.zzz", names[-1] + "x"):
        assert real.lookup_function(missing) is None
        with pytest.raises(StatusError) as e:
            mod.lookup(missing)
        assert e.value.code == StatusCode.NOT_FOUND
    for linkage in (Linkage.INTERNAL, Linkage.IMPORT, Linkage.IMPORT_OPTIONAL):
        with pytest.raises(Exception) as theirs:
            real.lookup_function(names[0], B.Linkage(int(linkage)))
        with pytest.raises(StatusError) as ours:
            mod.lookup_function(names[0], linkage)
        assert (ours.value.code.name, ours.value.message) == _status_of(str(theirs.value))
    mod.close()


def test_optional_lookup_miss_and_name_inputs(heap: Heap):
    """native_module.c iree_vm_native_module_lookup_function: a miss under EXPORT_OPTIONAL is a bare
    NOT_FOUND (iree_status_from_code: no message), under EXPORT the "no function ... exported by
    module ..." message. Names are string views: bytes are looked up as they are; other inputs are a
    clear error rather than a crash."""
    mod = NativeModule(heap, "m", [Export("a", "0v_v", noop), Export("b", "0i_v", noop)])
    with pytest.raises(StatusError) as e:
        mod.lookup_function("c", Linkage.EXPORT_OPTIONAL)
    assert (e.value.code, e.value.message) == (StatusCode.NOT_FOUND, "")
    with pytest.raises(StatusError) as e:
        mod.lookup_function("c")
    assert (e.value.code, e.value.message) == (StatusCode.NOT_FOUND, "no function `c` exported by module `m`")
    assert mod.lookup(b"b") == 1 and mod.lookup_function(b"a").ordinal == 0
    for bad in (None, 3, ["a"], "\ud800"):
        with pytest.raises(IreeAbiError, match="function name"):
            mod.lookup(bad)
    mod.close()


def test_get_function_and_attrs_statuses(heap: Heap):
    """native_module.c: iree_vm_native_module_get_function (export ordinal past the table:
    INVALID_ARGUMENT "export ordinal out of range (0 < N < COUNT)"; import linkages go to the import
    table, empty here: "import ordinal out of range (0 < N < 0)"; any other linkage UNIMPLEMENTED
    "native modules do not support internal function queries"; a found export carries linkage EXPORT
    and its calling convention), iree_vm_native_module_get_function_attr (linkage first: "only exported
    functions can be queried", then "function ordinal out of range", then a bare OUT_OF_RANGE for the
    index), iree_vm_native_module_get_module_attr and iree_vm_native_module_signature."""
    mod = NativeModule(heap, "m", [Export("a", "0v_v", noop, attrs=(("iree.abi", "x"),)),
                                   Export("b", "0iI_r", noop)], version=3, attrs=[("k", "v")])
    fn, name, cc = mod.get_function(1, Linkage.EXPORT_OPTIONAL)
    assert (fn.module, fn.linkage, fn.ordinal, name, cc) == (mod, Linkage.EXPORT, 1, "b", "0iI_r")
    cases = [
        (lambda: mod.get_function(2), StatusCode.INVALID_ARGUMENT, "export ordinal out of range (0 < 2 < 2)"),
        (lambda: mod.get_function(0, Linkage.IMPORT), StatusCode.INVALID_ARGUMENT,
         "import ordinal out of range (0 < 0 < 0)"),
        (lambda: mod.get_function(0, Linkage.INTERNAL), StatusCode.UNIMPLEMENTED,
         "native modules do not support internal function queries"),
        (lambda: mod.get_function_attr(9, 0, Linkage.IMPORT), StatusCode.INVALID_ARGUMENT,
         "only exported functions can be queried"),
        (lambda: mod.get_function_attr(2, 0), StatusCode.INVALID_ARGUMENT,
         "function ordinal out of range (0 < 2 < 2)"),
        (lambda: mod.get_function_attr(1, 0), StatusCode.OUT_OF_RANGE, ""),
        (lambda: mod.get_module_attr(1), StatusCode.OUT_OF_RANGE, ""),
    ]
    for call, code, message in cases:
        with pytest.raises(StatusError) as e:
            call()
        assert (e.value.code, e.value.message) == (code, message)
    assert mod.get_function_attr(0, 0) == ("iree.abi", "x")
    assert mod.get_module_attr(0) == ("k", "v")
    sig = mod.signature()
    assert (sig.version, sig.attr_count, sig.import_function_count, sig.export_function_count,
            sig.internal_function_count) == (3, 1, 0, 2, 0)
    for bad in ("1", None, 1.0):
        with pytest.raises(IreeAbiError, match="must be an int"):
            mod.get_function(bad)
    with pytest.raises(IreeAbiError, match="string pairs"):
        Export("c", "0v_v", noop, attrs=(("k", 1),))
    mod.close()
