"""HAL bitfields as IREE prints them in status messages (runtime/src/iree/hal/buffer.c mapping
tables, runtime/src/iree/base/bitfield.c iree_bitfield_format_inline).

The mappings are scanned in table order, combined names first; each whose bits are all still set is
printed and its bits cleared; names are joined with `|`; leftover bits follow as `%Xh`. The text is
built in a 128-byte buffer (iree_bitfield_string_temp_t): a text that does not fit with its NUL
prints as `(error)`.
"""
from __future__ import annotations

from ..layouts.hal_buffer import BufferUsage as U, MemoryType as T

MEMORY_TYPE_NAMES: tuple[tuple[int, str], ...] = (
    (int(T.HOST_LOCAL), "HOST_LOCAL"), (int(T.DEVICE_LOCAL), "DEVICE_LOCAL"),
    (int(T.OPTIMAL), "OPTIMAL"), (int(T.HOST_VISIBLE), "HOST_VISIBLE"),
    (int(T.HOST_COHERENT), "HOST_COHERENT"), (int(T.HOST_CACHED), "HOST_CACHED"),
    (int(T.DEVICE_VISIBLE), "DEVICE_VISIBLE"),
)

BUFFER_USAGE_NAMES: tuple[tuple[int, str], ...] = tuple((int(U[n]), n) for n in (
    "TRANSFER", "DISPATCH", "DISPATCH_STORAGE", "DISPATCH_IMAGE", "MAPPING",
    "TRANSFER_SOURCE", "TRANSFER_TARGET", "DISPATCH_INDIRECT_PARAMETERS", "DISPATCH_UNIFORM_READ",
    "DISPATCH_STORAGE_READ", "DISPATCH_STORAGE_WRITE", "DISPATCH_IMAGE_READ", "DISPATCH_IMAGE_WRITE",
    "SHARING_EXPORT", "SHARING_REPLICATE", "SHARING_CONCURRENT", "SHARING_IMMUTABLE",
    "MAPPING_SCOPED", "MAPPING_PERSISTENT", "MAPPING_OPTIONAL", "MAPPING_ACCESS_RANDOM",
    "MAPPING_ACCESS_SEQUENTIAL_WRITE"))

_TEMP_CAPACITY = 128  # iree_bitfield_string_temp_t.buffer


def format_bitfield(value: int, names: tuple[tuple[int, str], ...]) -> str:
    """iree_bitfield_format_inline of a uint32 `value` with a mapping table."""
    remaining = value & 0xFFFFFFFF
    parts = []
    for bits, name in names:
        if remaining & bits == bits:
            parts.append(name)
            remaining &= ~bits
    if remaining:
        parts.append(f"{remaining:X}h")
    text = "|".join(parts)
    return text if len(text) < _TEMP_CAPACITY else "(error)"


def memory_type_text(value: int) -> str:
    """iree_hal_memory_type_format."""
    return format_bitfield(value, MEMORY_TYPE_NAMES)


def buffer_usage_text(value: int) -> str:
    """iree_hal_buffer_usage_format."""
    return format_bitfield(value, BUFFER_USAGE_NAMES)


__all__ = ["MEMORY_TYPE_NAMES", "BUFFER_USAGE_NAMES", "format_bitfield", "memory_type_text",
           "buffer_usage_text"]
