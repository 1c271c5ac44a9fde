"""Errors of reading a `.vmfb` module file, shared by its three readers: the archive framing
(`archive`), the FlatBuffer verifier and checked reader (`flatbuffer`) and the loader
(`module_file`). Each carries the file offset concerned and the StatusCode IREE's loader returns
for the same problem. (They sit apart from `module_file` because the lower two readers raise them
and `module_file` imports those readers.) A message shows the names of the module escaped
(`abi.printable`): `printable` where a name enters it, and `printable_text` over the whole, so no
control character of the file reaches it raw.
"""
from __future__ import annotations

from ...abi.errors import IreeAbiError
from ...abi.printable import printable_text
from ...base.status import StatusCode

__all__ = ["ModuleFileError", "NotAModuleError"]


class ModuleFileError(IreeAbiError):
    """A malformed or truncated module file; `offset` is the file offset concerned and `code` the
    StatusCode IREE's loader returns for the same problem."""

    def __init__(self, reason: str, offset: int,
                 code: StatusCode = StatusCode.INVALID_ARGUMENT) -> None:
        self.reason = reason
        self.offset = offset
        self.code = StatusCode(code)
        super().__init__(f"{printable_text(reason)} (file offset {offset})")

    def __reduce__(self) -> tuple:
        return (type(self), (self.reason, self.offset, self.code))


class NotAModuleError(ModuleFileError):
    """The file is no `.vmfb` module at all (its archive framing fails: empty, text, another file
    format): the message starts "not a .vmfb module" and says what the bytes look like
    (`looks_like`), then the framing check that failed."""

    def __init__(self, reason: str, offset: int,
                 code: StatusCode = StatusCode.INVALID_ARGUMENT, looks_like: str = "") -> None:
        self.looks_like = looks_like
        super().__init__(reason, offset, code)

    def __reduce__(self) -> tuple:
        return (type(self), (self.reason, self.offset, self.code, self.looks_like))
