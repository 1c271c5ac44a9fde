"""The `.vmfb` archive framing (IREE's runtime/src/iree/vm/bytecode/archive.c), checked on the bytes.

A `.vmfb` is:

- optionally a ZIP local file header first (the compiler's default "polyglot zip" output, so the
  file can be opened as a zip for debugging); the module starts right after the header's name and
  extra field,
- a 4-byte little-endian size prefix, then that many bytes of FlatBuffer (schema
  runtime/src/iree/schemas/bytecode_module_def.fbs, file identifier "IREE", root
  `BytecodeModuleDef`: see `flatbuffer`),
- the external rodata region, starting at the end of the FlatBuffer rounded up to 64 bytes
  (IREE_VM_ARCHIVE_SEGMENT_ALIGNMENT) from the start of the archive; a rodata segment without
  `embedded_data` lives at `region + external_data_offset` for `external_data_length` bytes,
- optionally the zip central directory and further zip entries (ignored here).

`check_framing` runs the loader's first step (the ZIP header, at least 16 bytes, the size prefix
within the file, then flatcc's buffer header checks); a file failing it that does not even carry
IREE's identifier is no module at all (`NotAModuleError`, with `describe_content`'s guess of what
it is).
"""
from __future__ import annotations

import re

from flatbuffers import number_types as N
from flatbuffers import util as fb_util
from flatbuffers.table import Table

from .module_errors import ModuleFileError, NotAModuleError

__all__ = ["FILE_IDENTIFIER", "SEGMENT_ALIGNMENT", "ZIP_LOCAL_FILE_HEADER_SIGNATURE",
           "ZIP_LOCAL_FILE_HEADER_SIZE", "MIN_MODULE_BYTES", "check_framing",
           "describe_content", "external_rodata_offset"]

FILE_IDENTIFIER = b"IREE"
SEGMENT_ALIGNMENT = 64  # IREE_VM_ARCHIVE_SEGMENT_ALIGNMENT
ZIP_LOCAL_FILE_HEADER_SIGNATURE = b"PK\x03\x04"
ZIP_LOCAL_FILE_HEADER_SIZE = 30
MIN_MODULE_BYTES = 16  # the runtime refuses less before looking at the FlatBuffer


def _locate(data: "bytes | memoryview") -> tuple[bool, int, int]:
    """(zip header present, FlatBuffer file offset, FlatBuffer length) per the archive framing."""
    start = 0
    zipped = False
    if len(data) >= ZIP_LOCAL_FILE_HEADER_SIZE and data[:4] == ZIP_LOCAL_FILE_HEADER_SIGNATURE:
        zipped = True
        header = Table(data, 0)
        name_len = header.Get(N.Uint16Flags, 26)
        extra_len = header.Get(N.Uint16Flags, 28)
        start = ZIP_LOCAL_FILE_HEADER_SIZE + name_len + extra_len
        if start > len(data):
            raise ModuleFileError(
                f"zip local file header: archive self-reports as a zip but does not have enough "
                f"data to contain a module: name ({name_len} B) and extra field ({extra_len} B) "
                f"end at {start}, past the end of the {len(data)}-byte file", 26)
    available = len(data) - start
    if available < MIN_MODULE_BYTES:
        raise ModuleFileError(
            f"module header: FlatBuffer data is not present or less than {MIN_MODULE_BYTES} bytes "
            f"({available} byte(s) after the archive header)", start)
    length = fb_util.GetSizePrefix(data, start) & 0xFFFFFFFF
    if length > available - 4:
        raise ModuleFileError(
            f"FlatBuffer length prefix out of bounds: size prefix {length} exceeds the "
            f"{available - 4} byte(s) that follow it", start)
    fb = start + 4
    # flatcc's buffer header checks, in its order: alignment, size, identifier
    if fb & 3:
        raise ModuleFileError(
            f"FlatBuffer verification failed: runtime: buffer header not aligned (the FlatBuffer "
            f"starts at file offset {fb}, not a multiple of 4)", fb)
    if length < 8:
        raise ModuleFileError(
            f"FlatBuffer verification failed: buffer header too small (size prefix {length} "
            f"leaves no room for the root offset and file identifier)", start)
    if not fb_util.BufferHasIdentifier(data, fb, FILE_IDENTIFIER):
        got = bytes(fb_util.GetBufferIdentifier(data, fb))
        raise ModuleFileError(f"FlatBuffer verification failed: identifier mismatch (file "
                              f"identifier is {got!r}, expected {FILE_IDENTIFIER!r})", fb + 4)
    return zipped, fb, length


# What a file that is no module looks like, from its first bytes: magic numbers of the formats a
# user may hand over by mistake, then text (MLIR source, most likely).
_MAGICS = (
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x7fELF", "an ELF object or library"),
    (b"ML\xefR", "MLIR bytecode (iree-compile's input, not its output)"),
    (b"\x89HDF", "an HDF5 file"),
    (b"PK\x03\x04", "a zip archive whose first entry is not an IREE module"),
)
_SNIFF_BYTES = 256


# What MLIR text has and prose (a README, a log) has not: an op or dialect type, a module body, an
# SSA value assigned (a word such as "module" or a "50%" alone says nothing).
_MLIR = re.compile(r"\b(?:func|util|vm|hal|flow|stream|arith|linalg)\.[a-z_]+\b|\btensor<|"
                   r"^\s*module\b[^\n]*\{|%[\w.]+(?::\d+)?\s*=", re.M)


def describe_content(data: "bytes | memoryview") -> str:
    """What bytes that are not a module look like, for an error message ("MLIR text ...")."""
    head = bytes(data[:_SNIFF_BYTES])
    if not head:
        return "an empty file"
    for magic, what in _MAGICS:
        if head.startswith(magic):
            return what
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:  # a multi-byte character cut at the end is still text
        text = head[:e.start].decode("utf-8") if e.start >= len(head) - 3 else ""
    if text and all(c.isprintable() or c in "\t\r\n" for c in text):
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        shown = first if len(first) <= 40 else first[:37] + "..."
        mlir = _MLIR.search(text) is not None
        return f"{'MLIR' if mlir else 'plain'} text (first line {shown!r})"
    return f"binary data starting {head[:8].hex(' ')}"


def _has_identifier(data: "bytes | memoryview") -> bool:
    """Whether IREE's file identifier sits where the framing puts it (after the optional zip local
    file header, the size prefix and the root offset)."""
    start = 0
    if bytes(data[:4]) == ZIP_LOCAL_FILE_HEADER_SIGNATURE and len(data) >= ZIP_LOCAL_FILE_HEADER_SIZE:
        start = (ZIP_LOCAL_FILE_HEADER_SIZE + int.from_bytes(data[26:28], "little")
                 + int.from_bytes(data[28:30], "little"))
    return bytes(data[start + 8:start + 12]) == FILE_IDENTIFIER


def check_framing(data: "bytes | memoryview") -> tuple[bool, int, int]:
    """The archive framing checks of IREE's loader (archive.c, then flatcc's buffer header):
    (zip header present, FlatBuffer file offset, FlatBuffer length). A file failing them is no
    module at all: NotAModuleError, "not a .vmfb module" with what the bytes look like."""
    try:
        return _locate(data)
    except ModuleFileError as e:
        if _has_identifier(data):  # a module whose framing is damaged (truncated, say): not "no module"
            raise
        looks = describe_content(data)
        what = "is empty" if not len(data) else f"looks like {looks}"
        raise NotAModuleError(f"not a .vmfb module: the file {what} ({e.reason})", e.offset,
                              e.code, looks) from None


def external_rodata_offset(fb: int, length: int) -> int:
    """File offset of the external rodata region: the end of the FlatBuffer at file offset `fb`
    (`length` bytes) rounded up to SEGMENT_ALIGNMENT from the start of the archive."""
    return -(-(fb + length) // SEGMENT_ALIGNMENT) * SEGMENT_ALIGNMENT
