"""ireeabi.abi: data models, the struct layout engine and IREE calling conventions.

- `targets`: the seven C data models (`targets.get("riscv32")`; a triple or an alias works too).
- `layout`: declare a struct once (`Struct`, `Field`, `Scalar`, ...), lay it out on any target.
- `views`: ctypes and construct views of a layout, checked to agree with it.
- `cdecl`: self-contained C text of declarations; `oracles`: real compilers measuring that C.
- `cheader`: your own structs from a C header (libclang, per triple); `dwarf`: from an object's DWARF.
- `bounded`: a call in a forked child under a memory and a time bound (how `cheader` runs libclang).
- `cconv`: parse cconv strings and lay out argument/result buffers by each IREE rule; `cconv.codec`:
  precompiled `struct` and construct codecs of one cconv instance.
- `errors`: the exception classes every layer shares (`IreeAbiError` and its kinds).
- `printable`: how a name from a module is shown in a message (non-printable bytes as `\\xNN`).
- `generated`: how every fast path compiles its generated source (readable in tracebacks; dumped
  to a directory with IREEABI_DUMP_GENERATED=DIR).

Nothing here touches process memory: this layer only computes layouts and bytes.
"""

__all__ = ["targets", "layout", "views", "cdecl", "oracles", "cheader", "bounded", "dwarf", "cconv",
           "errors", "printable", "generated"]
