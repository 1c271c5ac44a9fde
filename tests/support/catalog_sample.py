"""A test catalog exercising every construct the layout engine supports."""
from ireeabi.abi.layout import Array, Field, FunctionPointer, Pointer, Scalar, Struct, Union

SCALARS = ["_Bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int",
           "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "float",
           "double", "long double", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
           "int64_t", "uint64_t", "intptr_t", "uintptr_t", "size_t", "ptrdiff_t"]

every_scalar = Struct("t_every_scalar", [Field(f"f{i}", Scalar(t)) for i, t in enumerate(SCALARS)]
                      + [Field("p", Pointer()), Field("fn", FunctionPointer("int", "void*, int"))])
inner = Struct("t_inner", [("a", Scalar("uint8_t")), ("b", Scalar("int64_t")), ("c", Scalar("uint16_t"))])
number = Union("t_number", [("i", Scalar("int32_t")), ("d", Scalar("double")), ("b", Array(Scalar("char"), 13))])
outer = Struct("t_outer", [
    ("tag", Scalar("uint8_t")),
    ("inner", inner),
    ("pair", Array(inner, 2)),
    ("flag", Scalar("_Bool")),
    ("num", number),
    ("ld", Scalar("long double")),
    ("shorts", Array(Scalar("int16_t"), 3)),
])
bits = Struct("t_bits", [
    ("count", Scalar("uint16_t")),
    ("is_persistent", Scalar("uint32_t"), 1),
    ("reserved", Scalar("uint32_t"), 30),
    ("mode", Scalar("uint8_t"), 3),
    ("tail", Scalar("int64_t")),
])
flex = Struct("t_flex", [("length", Scalar("int32_t")), ("small", Scalar("uint8_t")),
                         ("items", Array(Scalar("int64_t"), None))])
flex_of_structs = Struct("t_flex_structs", [("n", Scalar("int32_t")), ("rows", Array(inner, None))])
i64_after_i32 = Struct("t_i64_after_i32", [("a", Scalar("int32_t")), ("b", Scalar("int64_t"))])

ALL = [every_scalar, inner, number, outer, bits, flex, flex_of_structs, i64_after_i32]
