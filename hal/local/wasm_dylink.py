"""The `dylink.0` section of a wasm32 side module (the WebAssembly tool conventions' dynamic
linking): the data block and function-table slots the module needs, read with every length and
offset checked, a malformed module refused naming the byte offset of what is wrong.
"""
from __future__ import annotations

from dataclasses import dataclass

from .executable_library import ForeignKernelError
from ...base.status import StatusCode

DYLINK_SECTION = "dylink.0"
# dylink.0 subsection types (the tool conventions' WASM_DYLINK_*)
_MEM_INFO, _NEEDED, _EXPORT_INFO, _IMPORT_INFO, _RUNTIME_PATH = 1, 2, 3, 4, 5
MAX_DATA_ALIGN = 1 << 16  # a data block aligned past a wasm page is no kernel's need
MAX_TABLE_SLOTS = 1 << 16  # table slots one module may ask for (a forged count must not cost memory)


class WasmModuleError(ForeignKernelError):
    """A side module that is malformed (dylink.0 or section structure) or that wasmtime refuses."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        self.offset = offset
        super().__init__(StatusCode.INVALID_ARGUMENT, message if offset is None else f"{message} (at byte {offset})")


# -- dylink.0 ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DylinkInfo:
    """What a side module's dylink.0 section says: its data block (`memory_size` bytes aligned to
    `memory_align`) and function-table slots (`table_size`, aligned to `table_align`)."""
    memory_size: int
    memory_align: int
    table_size: int
    table_align: int
    needed: tuple[str, ...] = ()


def _leb_u32(data: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """An unsigned LEB128 of at most 32 bits at `pos`, not reaching past `end`: (value, next pos)."""
    result = shift = 0
    start = pos
    while True:
        if pos >= end:
            raise WasmModuleError(f"truncated LEB128 {what}", start)
        b = data[pos]
        pos += 1
        if shift == 28 and b & 0x70:
            raise WasmModuleError(f"LEB128 {what} does not fit in 32 bits", start)
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise WasmModuleError(f"LEB128 {what} longer than 5 bytes", start)


def _name(data: bytes, pos: int, end: int, what: str) -> tuple[str, int]:
    n, p = _leb_u32(data, pos, end, f"{what} length")
    if p + n > end:
        raise WasmModuleError(f"{what} of {n} bytes runs past its section", pos)
    try:
        return data[p:p + n].decode("utf-8"), p + n
    except UnicodeDecodeError:
        raise WasmModuleError(f"{what} is not UTF-8", p) from None


def parse_dylink(data: bytes) -> DylinkInfo:
    """The dylink.0 facts of a side module, after checking the module's header and that every
    section fits the input (refusals name the byte offset)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise WasmModuleError(f"a side module is bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) < 8 or data[:4] != b"\0asm":
        raise WasmModuleError("not a wasm module (no \\0asm magic)", 0)
    if data[4:8] != b"\1\0\0\0":
        raise WasmModuleError(f"unsupported wasm version {data[4:8].hex()}", 4)
    info = None
    pos, index = 8, 0
    while pos < len(data):
        start = pos
        sid = data[pos]
        size, body = _leb_u32(data, pos + 1, len(data), "section size")
        end = body + size
        if end > len(data):
            raise WasmModuleError(f"section {index} (id {sid}) of {size} bytes runs past the module's "
                                  f"{len(data)} bytes", start)
        if index == 0:
            name = None
            if sid == 0:
                name, p = _name(data, body, end, "custom section name")
            if name == "dylink":
                raise WasmModuleError("legacy 'dylink' section: only dylink.0 side modules are supported", start)
            if name != DYLINK_SECTION:
                raise WasmModuleError("not a side module: the first section is "
                                      f"{'custom section ' + repr(name) if sid == 0 else f'section id {sid}'}, "
                                      f"not the custom section {DYLINK_SECTION!r}", start)
            info = _parse_dylink_body(data, p, end)
        pos, index = end, index + 1
    if info is None:
        raise WasmModuleError(f"not a side module: no sections, so no {DYLINK_SECTION} section", 8)
    return info


def section_ids(data: bytes) -> tuple[int, ...]:
    """The ids of a module's sections in order (custom sections are 0), for a module `parse_dylink`
    accepted (so every section fits the input)."""
    ids, pos = [], 8
    while pos < len(data):
        size, body = _leb_u32(data, pos + 1, len(data), "section size")
        ids.append(data[pos])
        pos = body + size
    return tuple(ids)


def _parse_dylink_body(data: bytes, pos: int, end: int) -> DylinkInfo:
    mem = None
    needed: list[str] = []
    while pos < end:
        start = pos
        kind = data[pos]
        size, body = _leb_u32(data, pos + 1, end, "dylink.0 subsection size")
        sub_end = body + size
        if sub_end > end:
            raise WasmModuleError(f"dylink.0 subsection {kind} of {size} bytes runs past the section", start)
        if kind == _MEM_INFO:
            if mem is not None:
                raise WasmModuleError("dylink.0 has a second memory info subsection", start)
            p = body
            vals = []
            for what in ("memory size", "memory alignment", "table size", "table alignment"):
                v, p = _leb_u32(data, p, sub_end, f"dylink.0 {what}")
                vals.append(v)
            if p != sub_end:
                raise WasmModuleError(f"dylink.0 memory info has {sub_end - p} bytes past its four fields", p)
            mem = vals
            if vals[1] > 31 or (1 << vals[1]) > MAX_DATA_ALIGN:
                raise WasmModuleError(f"dylink.0 memory alignment 2**{vals[1]} is beyond {MAX_DATA_ALIGN}", body)
            if vals[3] > 31 or vals[2] + (1 << vals[3]) - 1 > MAX_TABLE_SLOTS:
                raise WasmModuleError(f"dylink.0 asks for {vals[2]} table slots aligned to 2**{vals[3]}, "
                                      f"more than the runtime's {MAX_TABLE_SLOTS}", body)
        elif kind == _NEEDED:
            count, p = _leb_u32(data, body, sub_end, "dylink.0 needed count")
            for _ in range(min(count, sub_end - p)):  # each name takes a byte at least
                lib, p = _name(data, p, sub_end, "dylink.0 needed library name")
                needed.append(lib)
            if len(needed) != count or p != sub_end:
                raise WasmModuleError(f"dylink.0 needed list of {count} names does not fill its subsection", body)
            if needed:
                raise WasmModuleError(f"the side module needs other libraries ({', '.join(needed)}); "
                                      "this runtime loads self-contained modules only", body)
        # export/import info and runtime paths change nothing for a self-contained module; other
        # subsection kinds are skipped, as the convention asks of loaders that do not know them.
        pos = sub_end
    m = mem or [0, 0, 0, 0]
    return DylinkInfo(m[0], 1 << m[1], m[2], 1 << m[3], tuple(needed))


__all__ = ["DylinkInfo", "WasmModuleError", "parse_dylink", "section_ids", "DYLINK_SECTION", "MAX_DATA_ALIGN", "MAX_TABLE_SLOTS"]
