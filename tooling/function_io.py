"""iree-run-module's value syntax: `--input` parsing, result printing and `--output` targets, byte for
byte (IREE's runtime/src/iree/tooling/function_io.c: tooling, not the VM). The text of element
types, shapes, elements and buffer views is the HAL's (`ireeabi.hal.string_util`,
`ireeabi.hal.buffer_view_util`), `.npy` files are `ireeabi.tooling.numpy_io`.

Parsing follows iree-run-module 3.13; the installed tool is the reference where the sources differ:

- each input is trimmed, then: empty is an error; `(null)` / `(ignored)` is zero or a null ref;
  `@f.npy` / `+f.npy` / `*f.npy` read one ndarray from a fresh / continued stream (`*`: every
  remaining ndarray, one argument each); `&spec` is a tensor whose hal.buffer alone is passed; a
  non-ref argument is a scalar; anything else is a tensor. The function's cconv is consumed as
  inputs are parsed ("function expected fewer input values", "expected cconv type `r`");
- a scalar is parsed per its cconv character with IREE's C helpers: `i` strtol (base 0: `0x10`,
  `010`; at most 15 characters; trailing text ignored; the long cast to int32_t wraps), `I` strtoll
  (at most 31 characters), `f` strtof and `F` strtod (at most 31 characters; trailing text ignored;
  a result that underflows to zero is refused). `i32=5` is not a scalar;
- a tensor is `[shape]x<type>=<elements>`, parsed as iree_hal_buffer_view_parse parses it
  (hal.buffer_view_util); `4xf32=@f` / `=+f` read the view's raw bytes from a file; tensors larger
  than the caller's heap (`InputFiles(max_bytes)`) are refused with a clear error.

Printing follows iree_tooling_print_variants: `result[i]: ` then `i32=%d`, `i64=%d`, `f32=%g`,
`f64=%g` for scalars (i8/i16 in lists), `(null)`, `vm.list` with one `child_list[j]: ` line per item
and a blank line after, or `hal.buffer_view` and a newline and the view as
hal.buffer_view_util.format_buffer_view prints it, at most `max_element_count` (1024,
`--output_max_element_count`) elements then `...`. `--output=` targets (`-`, empty, `@f.npy`,
`+f.npy`, `@f.bin`) are written as IREE writes them (`write_output`).
"""
from __future__ import annotations

from typing import Any, BinaryIO, NamedTuple, Sequence, TextIO, Union

import numpy as np

from ..abi.files import open_input, open_output
from ..layouts.hal_buffer import ElementType
from ..hal.buffer_view_util import (DEFAULT_MAX_ELEMENT_COUNT, MAX_SHAPE_RANK,
                                          format_buffer_view, read_buffer_view, shaped,
                                          view_size, zeroed_storage)
from ..hal.element_types import element_type_of
from ..base.string_view import atod, atof, atoi_int32, atoi_int64, c_atoi, wrap_int
from ..hal.string_util import (InputParseError, ParseFailure, element_problem, format_g,
                                     read_element_type, read_shape, trim)
from .numpy_io import OutputError, at_end, npy_header, read_into, read_npy

_HOST_SIZE_MAX = (1 << 64) - 1  # iree_host_size_t


class OpaqueResult(NamedTuple):
    """A ref result with no printer (a vm.buffer, hal.buffer...): only its type name."""

    type_name: str


class ListResult(NamedTuple):
    """A vm.list result: its items converted like results (None for empty or null slots)."""

    items: tuple


class ResultList(list):
    """A vm.list result as `Program.call` returns it: a plain Python list of its items converted
    like results (numpy arrays for buffer views, Python ints / floats for value slots, None for
    empty slots and null refs, ResultLists for nested lists). `value_types[j]` is the VM value type
    of item j (`i32`, `f32`...; None for refs), so `format_value` prints it as iree-run-module
    does; it compares equal to any list with the same items."""

    def __init__(self, items: Any = (), value_types: Sequence[str | None] | None = None) -> None:
        super().__init__(items)
        self.value_types: tuple = tuple(value_types) if value_types is not None else ()


class StorageInput(NamedTuple):
    """An `&spec` input: iree-run-module passes only the hal.buffer of the parsed tensor."""

    array: np.ndarray


Value = Union[np.ndarray, np.generic, int, float, OpaqueResult, ListResult, list, None]


def parse_count_flag(text: str, *, long_bits: int = 64) -> int:
    """An int32 flag value such as --output_max_element_count, read as iree-run-module reads it
    (atoi, whose strtol has the target's `long_bits`-bit long: past it the value saturates; empty is
    0), then widened to iree_host_size_t: a negative count means no limit."""
    return c_atoi(text, long_bits=long_bits) & _HOST_SIZE_MAX if text else 0


# --------------------------------------------------------------------------------------------------
# Files: `@f.npy`, `+f.npy`, `*f.npy`, `4xf32=@f.bin`

# iree_io_stdio_stream_open's mode numbers as the tool prints them
_READ_MODE, _WRITE_MODE, _APPEND_MODE = 2, 5, 12


class InputFiles:
    """The streams one call's inputs read, keyed by their verbatim path: `@` rewinds an open
    stream, `+` and `*` continue where the previous input stopped."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self._streams: dict[str, BinaryIO] = {}
        self.max_bytes = max_bytes  # the largest tensor the caller can take (None: no limit)

    def open(self, path: str, append: bool) -> BinaryIO:
        f = self._streams.get(path)
        if f is not None:
            if not append:
                f.seek(0)
            return f
        try:
            f = open_input(path)  # a FIFO with no writer reads as empty, not waited on
        except OSError as e:
            raise ParseFailure(f"UNKNOWN; unable to open file `{path}` with mode {_READ_MODE}",
                               f"cannot read `{path}`: {e.strerror}") from None
        self._streams[path] = f
        return f

    def close(self) -> None:
        for f in self._streams.values():
            f.close()
        self._streams.clear()

    def __enter__(self) -> "InputFiles":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tensor_from_file(metadata: str, contents: str, files: InputFiles) -> np.ndarray:
    """`<shape>x<type>=@path` / `=+path`: the view's raw bytes from a file."""
    value = trim(metadata)
    value = value[1:] if value.startswith('"') else value
    value = value[:-1] if value.endswith('"') else value
    if not value:
        raise ParseFailure("INVALID_ARGUMENT; empty string input", "no shape or element type given")
    head = value.partition("=")[0]
    last_x = head.rfind("x")
    shape_text, type_text = (head[:last_x], head[last_x + 1:]) if last_x >= 0 else ("", head)
    if shape_text and shape_text.count("x") + 1 > MAX_SHAPE_RANK:
        raise ParseFailure("OUT_OF_RANGE", f"more than {MAX_SHAPE_RANK} dimensions")
    shape = read_shape(shape_text)
    element_type = read_element_type(type_text)
    stream = files.open(contents[1:], not contents.startswith("@"))
    count, nbytes = view_size(shape, element_type)
    out = zeroed_storage(shape, element_type, count, nbytes, files.max_bytes)
    read_into(stream, out)
    return shaped(out, shape)


# --------------------------------------------------------------------------------------------------
# Inputs

_SCALAR_DTYPES: dict[str, Any] = {"i": np.int32, "I": np.int64, "f": np.float32, "F": np.float64}
_SCALAR_NAMES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}


def _scalar(text: str, char: str, long_bits: int = 64) -> np.generic:
    if char not in _SCALAR_DTYPES:
        raise ParseFailure(f"UNIMPLEMENTED; unimplemented cconv type `{char}`",
                           f"the function takes a `{char}` argument")
    if text in ("(null)", "(ignored)"):
        return _SCALAR_DTYPES[char](0)
    name = _SCALAR_NAMES[char]
    value = (atoi_int32(text, long_bits=long_bits) if char == "i"
             else {"I": atoi_int64, "f": atof, "F": atod}[char](text))
    if value is None:
        limit = 16 if char == "i" else 32
        kind = read_element_type(name)
        raise ParseFailure(f"INVALID_ARGUMENT; parsing value `{text}` as {name}",
                           element_problem(text, kind, limit, long_bits=long_bits))
    return _SCALAR_DTYPES[char](value)


def parse_scalar(text: str, char: str, *, long_bits: int = 64) -> np.generic:
    """A primitive input for cconv character `char` (i, I, f, F), as iree-run-module parses it on a
    target whose C `long` has `long_bits` bits."""
    try:
        return _scalar(text, char, long_bits)
    except ParseFailure as f:
        raise InputParseError(text, f.reason, f.detail) from None


_CCONV_NAMES = {"i": "an i32", "I": "an i64", "f": "an f32", "F": "an f64", "r": "a ref"}


class _Cconv:
    """The argument cconv still to be consumed (None: unknown, values are guessed)."""

    def __init__(self, chars: str | None) -> None:
        self.chars = chars
        self.taken = 0  # arguments consumed so far

    def next_is_ref(self, text: str) -> bool:
        if self.chars is None:
            return "=" in text or "x" in text
        return self.chars.startswith("r")

    def take(self, expected: str | None = None) -> str | None:
        if self.chars is None:
            return expected
        if not self.chars:
            raise ParseFailure("INVALID_ARGUMENT; function expected fewer input values",
                               "more inputs than the function takes")
        char, self.chars = self.chars[0], self.chars[1:]
        self.taken += 1
        if expected is not None and char != expected:
            raise ParseFailure(f"INVALID_ARGUMENT; function signature mismatch: expected cconv "
                               f"type `{expected}` but provided type `{char}`",
                               f"a tensor was given for argument {self.taken - 1}, which is "
                               f"{_CCONV_NAMES.get(char, repr(char))}")
        return char


def _guess_scalar(text: str) -> Value:
    as_int = atoi_int64(text)
    if as_int is not None and str(as_int) == text.lstrip("+"):
        return as_int
    value = atod(text)
    if value is None:
        raise ParseFailure(f"INVALID_ARGUMENT; parsing value `{text}` as a number",
                           f"`{text}` is not a number")
    return value


def _variant(text: str, cconv: _Cconv, files: InputFiles, out: list, long_bits: int = 64) -> None:
    """iree_tooling_parse_variant_into: append the value(s) of one trimmed input to `out`."""
    if not text:
        raise ParseFailure("INVALID_ARGUMENT; no value specified for input", "the input is empty")
    if text in ("(null)", "(ignored)"):
        char = cconv.take()
        out.append(None if char in ("r", None) else _scalar(text, char, long_bits))
        return
    if text[0] in "@+*":
        path = text[1:]
        if not path.endswith(".npy"):
            raise ParseFailure("UNIMPLEMENTED; only numpy (.npy) files are supported for "
                               "metadata-less variant I/O",
                               f"`{text}` starts with `{text[0]}`: a file input, which must be an "
                               f".npy file (raw contents need a shape and type: `4xf32=@{path}`)")
        stream = files.open(path, not text.startswith("@"))
        if text[0] != "*":
            cconv.take("r")
            out.append(read_npy(stream, files.max_bytes))
            return
        while not at_end(stream):  # one argument per array left in the file
            cconv.take("r")
            out.append(read_npy(stream, files.max_bytes))
        return
    if text[0] == "&":
        cconv.take("r")
        out.append(StorageInput(_tensor(text[1:], files, long_bits)))
        return
    if not cconv.next_is_ref(text):
        char = cconv.take()
        out.append(_guess_scalar(text) if char is None else _scalar(text, char, long_bits))
        return
    cconv.take("r")
    if "=" not in text and "x" not in text:
        raise ParseFailure("INVALID_ARGUMENT; invalid tensor specification, requires at least a "
                           "shape/type (`4x2xf32=...`)",
                           f"the argument is a tensor and `{text}` has neither `=` nor `x`: give "
                           f"its shape and type, e.g. `f32=...` or `4xf32=...`")
    out.append(_tensor(text, files, long_bits))


def _tensor(text: str, files: InputFiles, long_bits: int = 64) -> np.ndarray:
    eq = text.find("=")  # no partition: a long list of elements is not copied
    if eq >= 0 and text.startswith(("@", "+"), eq + 1):
        return _tensor_from_file(text[:eq], text[eq + 1:], files)
    return read_buffer_view(text, files.max_bytes, long_bits=long_bits)


def parse_inputs(specs: Sequence[str], cconv: str | None = None,
                 files: InputFiles | None = None, *, long_bits: int = 64) -> list[Value]:
    """Every `--input` of one call, as iree-run-module parses them against the function's argument
    cconv (`"rrf"`; None: guess tensors from `=`/`x`); `*f.npy` may give several values, so the
    result can be longer than `specs`, and shorter than the cconv (the call then fails).
    `long_bits` is the width of the target's C `long`, which IREE's strtol / strtoul parse i32 and
    narrower integers with (64 on LP64, 32 on ILP32: `4294967295` as an i32 is out of range there)."""
    own = files is None
    streams = files if files is not None else InputFiles()
    state = _Cconv(cconv)
    values: list[Value] = []
    try:
        for spec in specs:
            text = trim(spec)
            try:
                _variant(text, state, streams, values, long_bits)
            except ParseFailure as f:
                err = InputParseError(text, f.reason, f.detail)
                err.element = f.element
                raise err from None
    finally:
        if own:
            streams.close()
    return values


def parse_input(text: str, cconv_char: str | None = None) -> Value:
    """One `--input` value. With the function's cconv character (`i`, `I`, `f`, `F`, `r`) it is
    parsed exactly as iree-run-module does; without, a spec with `=` or `x` is a tensor and
    anything else a scalar (a Python int if it reads as one, else a float)."""
    values = parse_inputs([text], cconv_char)
    if len(values) != 1:  # `*f.npy` with no or several arrays
        raise InputParseError(trim(text), "INVALID_ARGUMENT; expected one value",
                              f"`{trim(text)}` gave {len(values)}")
    return values[0]


# --------------------------------------------------------------------------------------------------
# Printing


def list_item(value_type: str, bits: int) -> np.generic:
    """A vm.list value slot (its type name and raw bits) as the numpy scalar that prints it."""
    if value_type in ("f32", "f64"):
        width = 4 if value_type == "f32" else 8
        return np.frombuffer(bits.to_bytes(width, "little"),
                             dtype=np.float32 if width == 4 else np.float64)[0]
    width = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}[value_type]
    return np.dtype(f"int{width}").type(wrap_int(bits, width, True))


_LIST_VALUE_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
                     "f32": np.float32, "f64": np.float64}


def format_value(value: Value, max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT, *,
                 canonical_nan: bool = False) -> str:
    """One result as iree_tooling_format_variant prints it (without `result[i]: `); `canonical_nan`:
    on a target whose float -> double promotion makes an f32 NaN positive (riscv: every f32 the
    tool prints is promoted), f32 NaNs print without their sign."""
    if value is None:
        return "(null)"
    if isinstance(value, OpaqueResult):
        return f"{value.type_name}\n(no printer)"
    if isinstance(value, list):  # a ResultList (or any list): typed by its value_types
        types = tuple(getattr(value, "value_types", ()))
        types += (None,) * (len(value) - len(types))
        value = ListResult(tuple(_LIST_VALUE_TYPES[t](v) if t in _LIST_VALUE_TYPES else v
                                 for v, t in zip(value, types)))
    if isinstance(value, ListResult):
        return "vm.list\n" + "".join(f"child_list[{i}]: {format_value(v, max_element_count, canonical_nan=canonical_nan)}\n"
                                     for i, v in enumerate(value.items))
    if isinstance(value, np.ndarray):
        return "hal.buffer_view\n" + format_buffer_view(value, max_element_count, canonical_nan=canonical_nan)
    if isinstance(value, (bool, np.bool_)):
        return f"i32={int(value)}"
    if isinstance(value, np.integer):
        return f"i{8 * value.dtype.itemsize}={int(value)}"
    if isinstance(value, np.floating):
        promoted = canonical_nan and value.dtype.itemsize < 8  # f64 values are printed as they are
        return f"f{8 * value.dtype.itemsize}={format_g(float(value), False, canonical_nan=promoted)}"
    if isinstance(value, int):
        return f"i64={value}"
    if isinstance(value, float):
        return f"f64={format_g(value, False)}"
    raise TypeError(f"no iree-run-module format for a {type(value).__name__}")


def format_results(results: Sequence[Value],
                   max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT, *, canonical_nan: bool = False) -> str:
    """What iree-run-module prints for a call's results (after its `EXEC @function` line): one
    `result[i]: ...` entry per result, each ending in a newline. Numpy scalars carry their width
    (np.int32 -> i32, np.float64 -> f64); plain Python ints print as i64 and floats as f64."""
    return "".join(f"result[{i}]: {format_value(v, max_element_count, canonical_nan=canonical_nan)}\n"
                   for i, v in enumerate(results))


# --------------------------------------------------------------------------------------------------
# --output targets


def _as_view(value: Value) -> tuple[bytes, int, list[int]]:
    """(contents, element type, shape) of a result as iree-run-module wraps it for a file."""
    if value is None:
        return b"", int(ElementType.INT_8), [0]
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value).tobytes(), element_type_of(value.dtype), \
            list(value.shape)
    if isinstance(value, (bool, np.bool_)):
        return np.int32(value).tobytes(), int(ElementType.INT_32), []
    if isinstance(value, (np.integer, np.floating)):
        return value.tobytes(), element_type_of(value.dtype), []
    if isinstance(value, int):
        return np.int64(value).tobytes(), int(ElementType.INT_64), []
    if isinstance(value, float):
        return np.float64(value).tobytes(), int(ElementType.FLOAT_64), []
    if isinstance(value, OpaqueResult) and value.type_name in ("hal.buffer", "vm.buffer"):
        raise OutputError(f"UNIMPLEMENTED; ireeabi keeps no contents of a {value.type_name} "
                          f"result, so it cannot write one to a file")
    raise OutputError("INVALID_ARGUMENT; unsupported output source type; expected: !hal.buffer, "
                      "!hal.buffer_view, !vm.buffer")


def write_output(value: Value, spec: str, stdout: TextIO,
                 max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT, *, canonical_nan: bool = False) -> None:
    """One `--output=` target: empty ignores the result, `-` prints it (without `result[i]: `),
    `@path` / `+path` write (overwrite / append) an .npy array or, for any other name, the raw
    contents. Raises OutputError with iree-run-module's text."""
    if not spec:
        return
    if spec == "-":
        stdout.write(format_value(value, max_element_count, canonical_nan=canonical_nan) + "\n")
        return
    if spec[0] not in "@+":
        raise OutputError(f"UNIMPLEMENTED; unsupported output mode specification '{spec}'")
    path = spec[1:]
    mode = _WRITE_MODE if spec[0] == "@" else _APPEND_MODE
    try:
        f = open_output(path, text=False, append=spec[0] == "+")  # (a FIFO with no reader: refused)
    except OSError as e:
        raise OutputError(f"UNKNOWN; unable to open file `{path}` with mode {mode} "
                          f"({e.strerror})") from None
    with f:
        data, element_type, shape = _as_view(value)
        if path.endswith(".npy"):
            f.write(npy_header(element_type, shape))
        f.write(data)


__all__ = ["OpaqueResult", "ListResult", "ResultList", "StorageInput", "Value", "InputFiles",
           "parse_input", "parse_inputs", "parse_scalar", "parse_count_flag", "write_output",
           "format_value", "format_results", "list_item"]
