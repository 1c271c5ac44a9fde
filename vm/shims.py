"""Native function shims: how a native module reads the packed argument buffer the VM hands it.

IREE's generic shims (runtime/src/iree/vm/shims.h) cast the argument and result byte spans to the
plain C struct `iree_vm_abi_<types>_t` of each fragment after a size check, and fail with
INVALID_ARGUMENT "argument/result signature mismatch" otherwise:

- fixed struct: the span length must equal sizeof(struct) exactly;
- VLA struct (one trailing span): length >= sizeof(struct) and length == sizeof(struct) +
  count * sizeof(element), computed in iree_host_size_t arithmetic with the int32 count read from the
  buffer (so a negative count wraps and fails);
- `v`: no size check, but a NULL span still fails unless the call is a RESUME;
- results are zeroed (sizeof(struct)) before the native function runs.

On RESUME the generic shims skip the argument check altogether (a span of the wrong size reaches
the function as NULL arguments, as a NULL span does); only the results check remains.

Fragments those macros cannot express (several spans, or values after a span) are read like
hal_loader's hand-written dispatch shim: the fixed part as its C struct, then each span's int32 count
where the cursor stands and the elements at the stride of their C struct. `form="fixed"` starts the
first span at the packed size of the fixed part (IREE #24827); `form="pre-fix"` at sizeof(C struct),
with elements aligned to the C element alignment, as the code before the fix did. Unlike the C code,
every read is bounds-checked first: where IREE would read past the buffer (or, for a negative count,
size an alloca with it further on) this raises the signature mismatch instead. With void results such
a shim also checks its spans as hal_loader's does (runtime/src/iree/modules/hal/loader/module.c,
iree_vm_shim_dispatch_v): the results span must be empty (a NULL one is fine), the flags are not
consulted (no RESUME case), and a NULL argument span, which that code dereferences, is refused.

Every struct is laid out for one data model: a shim is made for a Machine (`Shim(sig, form, target)`,
the host by default) and reads packed memory of a heap of that data model.

The Python function receives typed values: ints and floats, refs as `Ref`, spans as lists (of tuples when
an element has several fields). The span it reads is first checked against the heap.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, NamedTuple, Sequence

from ..abi import cconv
from ..abi.cconv import Fragment, FragmentLayout, Value
from ..abi.errors import IreeAbiError
from ..abi.layout import StructLayout, layout_of
from ..abi.targets import Target
from . import ref as _ref
from . import shim_code
from .heap import Heap
from .machine import Machine, machine as _machine
from .ref import Ref
from .status import StatusCode, StatusError

CALL_BEGIN = 1 << 0  # IREE_VM_NATIVE_FUNCTION_CALL_BEGIN (native_module.h)
CALL_RESUME = 1 << 1  # IREE_VM_NATIVE_FUNCTION_CALL_RESUME
READER_FORMS = cconv.READER_FORMS
SIGNATURE_MISMATCH = "argument/result signature mismatch"
_CODE = {"i": "i", "I": "q", "f": "f", "F": "d"}


class MarshalError(IreeAbiError):
    """Python values that do not match a calling convention."""


class ByteSpan(NamedTuple):
    """iree_byte_span_t."""

    data: int
    length: int


@dataclass
class CallContext:
    """What a native function gets besides its arguments (IREE: stack, module, module state)."""

    heap: Heap
    module: Any = None
    state: Any = None

    def retain(self, ref: Ref) -> Ref:
        """Retain a borrowed ref (e.g. an argument) so it can be returned as a result."""
        _ref.retain_value(self.heap, ref)
        return ref


NativeFunction = Callable[..., Any]  # (ctx, *args) -> result value, tuple of results, or None


def _mismatch() -> StatusError:
    return StatusError(StatusCode.INVALID_ARGUMENT, SIGNATURE_MISMATCH)


# -- C struct readers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reader:
    """Reads the values of some fragment characters at fixed C offsets with one struct.Struct."""

    struct: struct.Struct
    kinds: tuple[str, ...]  # per value: "ref" or a scalar kind
    size: int

    def read(self, buf: Any, offset: int) -> list[Any]:
        return self.assemble(self.struct.unpack_from(buf, offset))

    @cached_property
    def assemble(self) -> Callable[[tuple], list]:
        """items -> the values: each ref's two words as a `Ref`, scalars as they are (compiled for
        these kinds)."""
        return shim_code.assemble_function(self.kinds, self.struct.format)

    @cached_property
    def element(self) -> Callable[[tuple], Any]:
        """items -> one span element's Python value: its single value, or a tuple of its values
        (refs as `Ref`), by a function compiled for these kinds."""
        return shim_code.element_function(self.kinds, self.struct.format)


def _reader(m: Machine, slots: Sequence[tuple[int, str]], size: int) -> _Reader:
    """slots: (offset, cconv char) sorted by offset; `size` pads the format to the struct size."""
    fmt, pos, kinds = ["<"], 0, []
    for off, char in slots:
        if off > pos:
            fmt.append(f"{off - pos}x")
        if char == "r":
            fmt.append(m.word_code * 2)
            pos = off + 2 * m.pointer_size
            kinds.append("ref")
        else:
            fmt.append(_CODE[char])
            pos = off + struct.calcsize("<" + _CODE[char])
            kinds.append(cconv.KINDS[char])
    if size > pos:
        fmt.append(f"{size - pos}x")
    return _Reader(struct.Struct("".join(fmt)), tuple(kinds), size)


def _c_layout(text: str, m: Machine) -> StructLayout:
    s = cconv.shim_struct(text)
    assert s is not None, text
    return layout_of(s, m.target)


@lru_cache(maxsize=None)
def _struct_reader(text: str, m: Machine) -> _Reader:
    """The values of a span-free fragment as its C struct lays them out."""
    lay = _c_layout(text, m)
    return _reader(m, [(f.offset, v.char) for f, v in zip(lay.fields, cconv.parse_fragment(text).items)],
                   lay.size)


# -- argument decoders ----------------------------------------------------------------------------------


class _Decoder:
    def decode(self, view: memoryview, base: int) -> list[Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class _Void(_Decoder):
    def decode(self, view: memoryview, base: int) -> list[Any]:
        return []


@dataclass(frozen=True)
class _Fixed(_Decoder):
    reader: _Reader

    def decode(self, view: memoryview, base: int) -> list[Any]:
        return self.fast(view, base)

    @cached_property
    def fast(self) -> Callable[[memoryview, int], list[Any]]:
        """The size check, the unpack and the values, compiled for this struct (runs per call)."""
        r = self.reader
        return shim_code.fixed_decoder(r.struct.unpack_from, r.size, r.kinds, _mismatch, r.struct.format)


@dataclass(frozen=True)
class _Vla(_Decoder):
    fixed: _Reader  # the values before the span, at C offsets
    sizeof: int
    count_offset: int
    array_offset: int
    element: _Reader  # one element, stride = its C sizeof
    mask: int  # iree_host_size_t arithmetic of the size check

    def decode(self, view: memoryview, base: int) -> list[Any]:
        n = len(view)
        if n < self.sizeof:
            raise _mismatch()
        count = struct.unpack_from("<i", view, self.count_offset)[0]
        if n != (self.sizeof + count * self.element.size) & self.mask:
            raise _mismatch()
        values = self.fixed.read(view, 0)
        if not count:
            values.append([])
            return values
        es = self.element
        element = es.element  # one element's value, compiled per element kinds
        values.append([element(t) for t in es.struct.iter_unpack(
            view[self.array_offset:self.array_offset + count * es.size])])
        return values


@dataclass(frozen=True)
class _SpanWalker(_Decoder):
    """hal_loader-style reader of several spans (see the module docstring)."""

    form: str
    prefix: _Reader | None
    start: int  # where the cursor stands after the fixed prefix
    rest: tuple  # ("value", char, reader, vm_size) | ("span", element reader, element alignment)

    def decode(self, view: memoryview, base: int) -> list[Any]:
        n = len(view)
        values: list[Any] = []
        if self.prefix is not None:
            if n < self.prefix.size:
                raise _mismatch()
            values = self.prefix.read(view, 0)
        p = self.start
        for item in self.rest:
            if item[0] == "value":
                _, reader, align, vm_size = item
                p = -(-(base + p) // align) * align - base  # align_up
                if p + reader.size > n:
                    raise _mismatch()
                values.extend(reader.read(view, p))
                p += vm_size
                continue
            _, es, ealign = item
            if p + 4 > n:
                raise _mismatch()
            count = struct.unpack_from("<i", view, p)[0]
            # The pre-fix loader aligns the element array even when empty; the packer (and so the
            # fixed reader) does not (cconv.span_reader).
            p = -(-(base + p + 4) // ealign) * ealign - base if count or self.form == "pre-fix" else p + 4
            if count < 0 or p + count * es.size > n:
                raise _mismatch()
            element, unpack_from, size = es.element, es.struct.unpack_from, es.size
            values.append([element(unpack_from(view, p + e * size)) for e in range(count)])
            p += count * es.size
        return values


def _vm_align(chars: str, m: Machine) -> int:
    """The packer's span element alignment: max(4, field alignments), each character's (size,
    alignment) as the VM packs it on `m` (i/f int32, I/F aligned to sizeof(int64_t), refs to
    alignof(iree_vm_ref_t))."""
    return max([cconv.vm_field("i", m.target)[1]] + [cconv.vm_field(c, m.target)[1] for c in chars])


@lru_cache(maxsize=None)
def _decoder(text: str, form: str, m: Machine) -> _Decoder:
    frag = cconv.parse_fragment(text)
    if not frag.items:
        return _Void()
    if not frag.has_spans:
        return _Fixed(_struct_reader(text, m))
    if cconv.shim_struct(text) is not None:
        lay = _c_layout(text, m)
        count_field, array_field = lay.fields[-2], lay.fields[-1]
        fixed = _reader(m, [(f.offset, v.char) for f, v in zip(lay.fields, frag.items[:-1])], lay.size)
        span = frag.items[-1]
        return _Vla(fixed, lay.size, count_field.offset, array_field.offset, _struct_reader(span.text, m),
                    m.word_mask)
    if form not in READER_FORMS:
        raise IreeAbiError(f"unknown reader form {form!r}; valid: {', '.join(READER_FORMS)}")
    prefix_text = frag.fixed_prefix
    prefix = _struct_reader(prefix_text, m) if prefix_text else None
    if prefix is None:
        start = 0
    elif form == "pre-fix":
        start = prefix.size
    else:
        start = cconv.vm_pack(prefix_text, m.target)[2]
    rest: list[tuple] = []
    for item in frag.items[len(prefix_text):]:
        if isinstance(item, Value):
            r = _struct_reader(item.char, m)
            rest.append(("value", r, _c_layout(item.char, m).align, cconv.vm_field(item.char, m.target)[0]))
        else:
            es = _struct_reader(item.text, m)
            ealign = _c_layout(item.text, m).align if form == "pre-fix" else _vm_align(item.text, m)
            rest.append(("span", es, ealign))
    return _SpanWalker(form, prefix, start, tuple(rest))


# -- results ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ResultWriter:
    reader: _Reader | None  # None for void results

    @property
    def size(self) -> int:
        return self.reader.size if self.reader else 0

    def write(self, view: memoryview, values: Sequence[Any]) -> None:
        if self.reader is None:
            return
        self._pack(view, 0, values)

    @cached_property
    def _pack(self) -> Callable[[Any, int, Sequence[Any]], None]:
        """pack_into of the values (a ref as its two words), compiled for the result kinds."""
        r = self.reader
        return shim_code.pack_function(r.struct.pack_into, r.kinds, r.struct.format)


@lru_cache(maxsize=None)
def _result_writer(text: str, m: Machine) -> _ResultWriter:
    frag = cconv.parse_fragment(text)
    if frag.has_spans:
        raise MarshalError(f"results fragment {text!r} has a span; results cannot")
    return _ResultWriter(_struct_reader(text, m) if frag.items else None)


_ONE_VALUE = frozenset({Ref, int, float})  # types _normalize_results takes as one result


def _normalize_results(result: Any, n: int, where: str) -> list[Any]:
    """A native function's return value as a list of `n` results (a Ref is one value, not a pair)."""
    if isinstance(result, Ref):
        values = [result]
    elif result is None:
        values = []
    elif isinstance(result, (tuple, list)):
        values = list(result)
    else:
        values = [result]
    if len(values) != n:
        raise MarshalError(f"{where}: {n} result(s) expected, the function returned {result!r}")
    return values


# -- the shim ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shim:
    """A native shim for one signature on one data model (`target`: a name, Target or Machine; the
    host by default): `__call__` is iree_vm_native_function_shim_t in Python."""

    signature: cconv.Signature
    form: str = "fixed"
    target: "Machine | Target | str | None" = None
    machine: Machine = field(init=False, repr=False, compare=False)
    _args: _Decoder = field(init=False, repr=False, compare=False)
    _rets: _ResultWriter = field(init=False, repr=False, compare=False)
    _n_results: int = field(init=False, repr=False, compare=False)
    _where: str = field(init=False, repr=False, compare=False)
    # The hot path's pieces, bound once: the decoder's decode, the results' size, zero bytes and
    # writer (None for void results).
    _decode: Callable[[memoryview, int], list[Any]] = field(init=False, repr=False, compare=False)
    _rsize: int = field(init=False, repr=False, compare=False)
    _rzeros: bytes = field(init=False, repr=False, compare=False)
    _write: Any = field(init=False, repr=False, compare=False)

    def __new__(cls, signature: cconv.Signature, form: str = "fixed",
                target: "Machine | Target | str | None" = None) -> "Shim":
        # A multi-span reader with void results is hal_loader's hand-written shim: its own span rules.
        if cls is Shim and _is_loader_like(signature, form, _machine(target)):
            cls = _LoaderShim
        return object.__new__(cls)

    def __post_init__(self) -> None:
        m = _machine(self.target)
        rets = _result_writer(self.signature.results.text, m)
        args = _decoder(self.signature.arguments.text, self.form, m)
        set_ = object.__setattr__
        set_(self, "machine", m)
        set_(self, "_args", args)
        set_(self, "_rets", rets)
        set_(self, "_n_results", len(self.signature.results.items))
        set_(self, "_where", f"native function {self.signature.text!r}")
        set_(self, "_decode", args.fast if isinstance(args, _Fixed) else args.decode)
        set_(self, "_rsize", rets.size)
        set_(self, "_rzeros", bytes(rets.size))
        set_(self, "_write", rets._pack if rets.reader is not None else None)

    @property
    def kind(self) -> str:
        return type(self._args).__name__.strip("_").lower()

    def decode_arguments(self, heap: Heap, flags: int, args: ByteSpan) -> list[Any] | None:
        """The typed arguments, or StatusError(INVALID_ARGUMENT, signature mismatch). None on RESUME
        without (well-sized) arguments."""
        if not args.data:
            if flags & CALL_RESUME:
                return None
            raise _mismatch()
        view = heap.view(args.data, args.length)
        try:
            return self._args.decode(view, args.data)
        except StatusError:
            if flags & CALL_RESUME:
                return None
            raise

    def check_results(self, heap: Heap, rets: ByteSpan) -> memoryview:
        """The results span as the function may write it (zeroed), after IREE's results check."""
        if not rets.data:
            raise _mismatch()
        view = heap.view(rets.data, rets.length)
        if self._write is not None and rets.length != self._rsize:
            raise _mismatch()
        view[:self._rsize] = self._rzeros
        return view

    def __call__(self, ctx: CallContext, flags: int, args: ByteSpan, rets: ByteSpan,
                 function: NativeFunction) -> None:
        """Check and decode the spans, run `function`, write its results. Failures raise StatusError.
        (decode_arguments and check_results, inlined: this runs on every call.)"""
        heap = ctx.heap
        data, length = args
        if data:
            try:
                values = self._decode(heap.view(data, length), data)
            except StatusError:
                if not flags & CALL_RESUME:
                    raise
                values = None  # IREE_VM_ABI_DEFINE_SHIM: RESUME waives the argument check
        elif flags & CALL_RESUME:
            values = None
        else:
            raise _mismatch()
        data, length = rets
        if not data:
            raise _mismatch()
        view = heap.view(data, length)
        write = self._write
        if write is not None and length != self._rsize:
            raise _mismatch()
        view[:self._rsize] = self._rzeros
        result = function(ctx, *values) if values else function(ctx)
        if write is None and result is None:  # the common void case, as _normalize_results takes it
            return
        self._deliver(heap, view, 0, result)

    def _deliver(self, heap: Heap, buf: Any, offset: int, result: Any) -> None:
        """Write the function's return value as the results struct at buf[offset:] (zeroed)."""
        if self._n_results == 1 and type(result) in _ONE_VALUE:  # a lone Ref or scalar
            out = [result]
        else:
            out = _normalize_results(result, self._n_results, self._where)
        write = self._write
        if write is None:
            return
        try:
            write(buf, offset, out)
        except (struct.error, TypeError, IndexError) as e:
            # pack_into may have written the values before the bad one: clear them, so the words of
            # the refs released below are not left in the buffer as if it still owned them.
            buf[offset:offset + self._rsize] = self._rzeros
            for v in out:  # results never reach the caller: drop the references they carried
                if isinstance(v, Ref):
                    _ref.release_value(heap, v)
            raise MarshalError(f"{self._where}: cannot write results {out!r}: {e}") from None

    def on_frame(self, arguments: FragmentLayout, results: FragmentLayout) -> "Callable[..., None] | None":
        """For a caller that packs `arguments` and sizes `results` itself in one frame it zeroed
        and owns (the VM's planned call sites): `call(ctx, function, buf, args_offset, args_address,
        results_offset)`, this shim's `__call__` on the caller's bytes: the same decode (and its
        checks), function call and results write, without re-checking spans the caller made. A
        fixed struct that is exactly the packed layout is read without its length check, which
        passes by construction. None for the hand-written span rules (`_LoaderShim`) and for
        results the writer's struct would refuse (the checked call says so)."""
        if type(self) is not Shim or (self._write is not None and results.size != self._rsize):
            return None
        decoder = self._args
        void = self._write is None
        if isinstance(decoder, _Fixed) and _agrees(arguments, decoder):  # the struct's values, inline
            return shim_code.on_frame_function(self.signature.text, self._deliver, void,
                                               unpack_from=decoder.reader.struct.unpack_from,
                                               kinds=decoder.reader.kinds)
        return shim_code.on_frame_function(self.signature.text, self._deliver, void, decode=self._decode,
                                           arguments_size=arguments.size)


def _agrees(layout: FragmentLayout, part: _Fixed) -> bool:
    """Whether the packed `layout` is byte for byte the C struct `part` reads."""
    reader = part.reader
    c = _c_layout(layout.fragment.text, _machine(layout.target))
    return (layout.size == reader.size == c.size and len(layout.values) == len(c.fields)
            and all(v.offset == f.offset for v, f in zip(layout.values, c.fields)))


def _is_loader_like(signature: Any, form: str, m: Machine) -> bool:
    if not isinstance(signature, cconv.Signature) or signature.results.items:
        return False
    return isinstance(_decoder(signature.arguments.text, form, m), _SpanWalker)


class _LoaderShim(Shim):
    """The span rules of hal_loader's iree_vm_shim_dispatch_v (runtime/src/iree/modules/hal/loader/
    module.c) for a multi-span reader with void results: a non-empty results span is the signature
    mismatch, a NULL one is fine (never touched), and the flags are not looked at."""

    def decode_arguments(self, heap: Heap, flags: int, args: ByteSpan) -> list[Any] | None:
        if not args.data:  # the C code dereferences it (undefined behaviour): refused instead
            raise _mismatch()
        return self._args.decode(heap.view(args.data, args.length), args.data)

    def check_results(self, heap: Heap, rets: ByteSpan) -> memoryview:
        if rets.length != 0:  # rets_storage.data_length > 0 (an unsigned size)
            raise _mismatch()
        return memoryview(b"")

    def __call__(self, ctx: CallContext, flags: int, args: ByteSpan, rets: ByteSpan,
                 function: NativeFunction) -> None:
        data, length = args
        if not data:
            raise _mismatch()
        values = self._decode(ctx.heap.view(data, length), data)
        if rets[1] != 0:
            raise _mismatch()
        result = function(ctx, *values)
        if result is not None:
            _normalize_results(result, 0, self._where)  # MarshalError unless an empty sequence


def shim_for(signature_text: str, form: str = "fixed", target: "Machine | Target | str | None" = None) -> Shim:
    """The (cached) shim of a whole cconv signature such as `0rIiiiCiDCrIID_v` on a data model (the
    host by default)."""
    return _shim_for(signature_text, form, _machine(target))


@lru_cache(maxsize=1024)
def _shim_for(signature_text: str, form: str, m: Machine) -> Shim:
    return Shim(cconv.parse(signature_text), form, m)


def describe(fragment: "Fragment | str") -> str:
    """Which shim reads `fragment`: void, fixed, vla, or spanwalker (the same on every data model)."""
    return type(_decoder(cconv.as_fragment(fragment).text, "fixed", _machine(None))).__name__.strip("_").lower()


__all__ = ["ByteSpan", "CallContext", "MarshalError", "Shim", "shim_for", "CALL_BEGIN", "CALL_RESUME",
           "SIGNATURE_MISMATCH", "describe"]
