"""Catalog layouts against the numbers the fact sheet measured on IREE's real headers.

/work/shared/reference/iree-native-abi.md marks these [M]: throwaway C probes compiled against the
real headers with gcc (x86_64) and gcc -m32 (i386), and clang mirrors for the other ILP32 triples.
They were measured, not derived, so they are hard-coded here; the section is cited per table. Where
the fact sheet and the compiler oracles disagree the oracles win (see the mapping test).
"""
import pytest

from ireeabi import layouts
from ireeabi.abi import cconv
from ireeabi.layouts import executable_library as el
from ireeabi.layouts import hal_buffer, hal_inline, hal_loader

# (struct, target) -> (sizeof, {dotted field path: byte offset})
FACTS = {
    # §6.1 iree_vm_buffer_t, measured on x86_64 and i386 with the real header.
    ("iree_vm_buffer_t", "x86_64"): (48, {
        "ref_object.counter": 0, "access": 4, "data.data": 8, "data.data_length": 16,
        "allocator.self": 24, "allocator.ctl": 32, "storage_module": 40}),
    ("iree_vm_buffer_t", "i386"): (28, {
        "ref_object.counter": 0, "access": 4, "data.data": 8, "data.data_length": 12,
        "allocator.self": 16, "allocator.ctl": 20, "storage_module": 24}),
    # §4 refs and §5 allocators.
    ("iree_vm_ref_t", "x86_64"): (16, {"ptr": 0, "type": 8}),
    ("iree_vm_ref_t", "i386"): (8, {"ptr": 0, "type": 4}),
    ("iree_allocator_t", "x86_64"): (16, {"self": 0, "ctl": 8}),
    ("iree_allocator_t", "i386"): (8, {"self": 0, "ctl": 4}),
    ("iree_vm_ref_type_descriptor_t", "x86_64"): (32, {}),
    ("iree_vm_ref_type_descriptor_t", "i386"): (16, {}),
    # §2.3 the shim struct hal_loader's args union embeds.
    ("iree_vm_abi_rIiii_t", "x86_64"): (40, {"r0": 0, "i1": 16, "i2": 24, "i3": 28, "i4": 32}),
    ("iree_vm_abi_rIiii_t", "i386"): (28, {"r0": 0, "i1": 8, "i2": 16, "i3": 20, "i4": 24}),
    # §7.1 iree_hal_buffer_mapping_t (is_persistent: see test_mapping_flag_bits_share_unit).
    ("iree_hal_buffer_mapping_t", "x86_64"): (48, {
        "contents": 0, "buffer": 16, "impl.byte_offset": 24, "impl.allowed_access": 32,
        "impl.reserved": 40}),
    ("iree_hal_buffer_mapping_t", "i386"): (32, {
        "contents": 0, "buffer": 8, "impl.byte_offset": 12, "impl.allowed_access": 16,
        "impl.reserved": 24}),
    ("iree_hal_buffer_mapping_t", "riscv32"): (40, {
        "contents": 0, "buffer": 8, "impl.byte_offset": 16, "impl.allowed_access": 20,
        "impl.reserved": 32}),
    # §7.2 iree_hal_inline_storage_buffer_t (a mirror of module.c's field list).
    ("iree_hal_inline_storage_buffer_t", "x86_64"): (120, {
        "host_allocator": 0, "hal_buffer": 16, "mapping": 24, "vm_buffer": 72}),
    ("iree_hal_inline_storage_buffer_t", "riscv32"): (88, {
        "host_allocator": 0, "hal_buffer": 8, "mapping": 16, "vm_buffer": 56}),
    ("iree_hal_inline_storage_buffer_t", "i386"): (72, {
        "host_allocator": 0, "hal_buffer": 8, "mapping": 12, "vm_buffer": 44}),
    # §9.2 executable library structures: LP64 and ILP32 (identical on rv32/armv7/wasm32/i386).
    ("iree_hal_executable_library_header_t", "x86_64"): (24, {
        "version": 0, "name": 8, "features": 16, "sanitizer": 20}),
    ("iree_hal_executable_library_header_t", "i386"): (16, {
        "version": 0, "name": 4, "features": 8, "sanitizer": 12}),
    ("iree_hal_executable_library_v0_t", "x86_64"): (128, {
        "header": 0, "imports": 8, "imports.count": 8, "imports.symbols": 16, "exports": 24,
        "constants": 104, "sources": 112, "sources.count": 112, "sources.files": 120}),
    ("iree_hal_executable_library_v0_t", "i386"): (64, {
        "header": 0, "imports": 4, "imports.symbols": 8, "exports": 12, "constants": 52,
        "sources": 56, "sources.files": 60}),
    ("iree_hal_executable_import_table_v0_t", "x86_64"): (16, {"count": 0, "symbols": 8}),
    ("iree_hal_executable_import_table_v0_t", "i386"): (8, {"count": 0, "symbols": 4}),
    ("iree_hal_executable_export_table_v0_t", "x86_64"): (80, {
        "count": 0, "ptrs": 8, "attrs": 16, "params": 24, "occupancy": 32, "names": 40, "tags": 48,
        "parameter_names": 56, "source_locations": 64, "stage_locations": 72}),
    ("iree_hal_executable_export_table_v0_t", "i386"): (40, {
        "count": 0, "ptrs": 4, "attrs": 8, "params": 12, "occupancy": 16, "names": 20, "tags": 24,
        "parameter_names": 28, "source_locations": 32, "stage_locations": 36}),
    ("iree_hal_executable_source_file_table_v0_t", "x86_64"): (16, {"count": 0, "files": 8}),
    ("iree_hal_executable_source_file_table_v0_t", "i386"): (8, {"count": 0, "files": 4}),
    **{("iree_hal_executable_dispatch_attrs_v0_t", t): (64, {
        "flags": 0, "local_memory_pages": 8, "constant_count": 10, "binding_count": 11,
        "workgroup_size_x": 12, "workgroup_size_y": 16, "workgroup_size_z": 20,
        "parameter_count": 22, "reserved_1": 24}) for t in ("x86_64", "i386")},
    **{("iree_hal_executable_dispatch_parameter_v0_t", t): (8, {
        "type": 0, "size": 1, "flags": 2, "name": 4, "offset": 6}) for t in ("x86_64", "i386")},
    ("iree_hal_executable_source_location_v0_t", "x86_64"): (16, {"line": 0, "path_length": 4, "path": 8}),
    ("iree_hal_executable_source_location_v0_t", "i386"): (12, {"line": 0, "path_length": 4, "path": 8}),
    ("iree_hal_executable_stage_location_table_v0_t", "x86_64"): (24, {
        "count": 0, "names": 8, "locations": 16}),
    ("iree_hal_executable_stage_location_table_v0_t", "i386"): (12, {
        "count": 0, "names": 4, "locations": 8}),
    ("iree_hal_executable_source_file_v0_t", "x86_64"): (32, {
        "path_length": 0, "path": 8, "content_length": 16, "content": 24}),
    ("iree_hal_executable_source_file_v0_t", "i386"): (16, {
        "path_length": 0, "path": 4, "content_length": 8, "content": 12}),
    **{("iree_hal_executable_dispatch_occupancy_v0_t", t): (4, {"reserved": 0}) for t in ("x86_64", "i386")},
    # §9.3 call-time structures.
    ("iree_hal_executable_environment_v0_t", "x86_64"): (96, {
        "constants": 0, "import_thunk": 8, "import_funcs": 16, "import_contexts": 24, "processor": 32}),
    ("iree_hal_executable_environment_v0_t", "i386"): (80, {
        "constants": 0, "import_thunk": 4, "import_funcs": 8, "import_contexts": 12, "processor": 16}),
    ("iree_hal_executable_dispatch_state_v0_t", "x86_64"): (48, {
        "workgroup_size_x": 0, "workgroup_size_y": 4, "workgroup_size_z": 8, "constant_count": 10,
        "workgroup_count_x": 12, "workgroup_count_y": 16, "workgroup_count_z": 20,
        "max_concurrency": 22, "binding_count": 23, "constants": 24, "binding_ptrs": 32,
        "binding_lengths": 40}),
    ("iree_hal_executable_dispatch_state_v0_t", "i386"): (36, {
        "workgroup_size_z": 8, "constant_count": 10, "workgroup_count_z": 20, "max_concurrency": 22,
        "binding_count": 23, "constants": 24, "binding_ptrs": 28, "binding_lengths": 32}),
    ("iree_hal_executable_workgroup_state_v0_t", "x86_64"): (32, {
        "workgroup_id_x": 0, "workgroup_id_y": 4, "workgroup_id_z": 8, "reserved": 10,
        "processor_id": 12, "local_memory": 16, "local_memory_size": 24}),
    ("iree_hal_executable_workgroup_state_v0_t", "i386"): (24, {
        "workgroup_id_z": 8, "reserved": 10, "processor_id": 12, "local_memory": 16,
        "local_memory_size": 20}),
}


@pytest.mark.parametrize("name, target", sorted(FACTS))
def test_measured_layout(name, target):
    size, offsets = FACTS[(name, target)]
    lay = layouts.get(name).layout(target)
    assert lay.size == size
    assert {path: lay.offsetof(path) for path in offsets} == offsets


def test_mapping_flag_bits_share_unit():
    # §7.1 places the is_persistent/reserved_flags bits in "the next 4-byte unit" (36 on x86_64,
    # 20 on i386) and marks that [I]nferred, not measured. The compiler oracles
    # (test_catalog_oracles) put is_persistent in the upper half of the uint32 unit that starts at
    # allowed_access: byte 34 on x86_64, 18 on i386. reserved_flags (31 bits) cannot fit there and
    # starts the next unit, which is the fact sheet's number.
    for target, unit, flags in (("x86_64", 32, 36), ("i386", 16, 20)):
        lay = layouts.get("iree_hal_buffer_mapping_t").layout(target)
        impl = lay.field("impl")
        ilay = hal_buffer.iree_hal_buffer_mapping_impl_t.layout(target)
        persistent = ilay.field("is_persistent")
        assert impl.offset + persistent.offset == unit
        assert persistent.bit_offset == 16 and persistent.bits == 1
        assert impl.offset + persistent.byte_span[0] == unit + 2
        reserved = ilay.field("reserved_flags")
        assert (impl.offset + reserved.offset, reserved.bit_offset, reserved.bits) == (flags, 0, 31)


def test_storage_buffer_vm_buffer_word_below():
    # §7.2: the pointer-sized word below vm_buffer is mapping.impl.reserved[0] (LP64 bytes 64-71;
    # i386 its high half, bytes 40-43).
    for target, word in (("x86_64", 64), ("i386", 40)):
        lay = hal_inline.iree_hal_inline_storage_buffer_t.layout(target)
        below = lay.offsetof("vm_buffer") - lay.target.pointer_size
        assert below == word
        reserved = lay.offsetof("mapping.impl.reserved")
        assert reserved <= below < reserved + 8


def test_dispatch_args_union_is_the_shim_struct():
    # module.c copies sizeof(iree_vm_abi_rIiii_t) bytes into the union; the named members overlay
    # the shim struct's fields exactly (§2.4 "executable/function_id/workgroup_x/y/z union").
    s = hal_loader.iree_hal_loader_dispatch_args_t
    assert hal_loader.iree_vm_abi_rIiii_t is cconv.shim_struct("rIiii")
    for target in ("x86_64", "riscv32", "i386"):
        lay = s.layout(target)
        shim = cconv.shim_struct("rIiii").layout(target)
        assert lay.offsetof("constant_count") == shim.size  # §2.4 step 3: the count after sizeof
        for c_name, shim_field in zip(("executable", "function_id", "workgroup_x", "workgroup_y",
                                       "workgroup_z"), ("r0", "i1", "i2", "i3", "i4")):
            assert lay.offsetof(hal_loader.C_PATHS[c_name]) == shim.field(shim_field).offset


def test_executable_library_constants():
    # §9.1 / §9.2: versions, query symbol, sanitizer kinds, limits, page size, param types, flags.
    assert el.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST == el.IREE_HAL_EXECUTABLE_LIBRARY_VERSION_0_6 == 6
    assert el.IREE_HAL_EXECUTABLE_LIBRARY_EXPORT_NAME == "iree_hal_executable_library_query"
    assert [(k.name, k.value) for k in el.SanitizerKind] == [
        ("NONE", 0), ("ADDRESS", 1), ("MEMORY", 2), ("THREAD", 3), ("UNDEFINED", 4)]
    assert (el.IREE_HAL_EXECUTABLE_MAX_CONSTANT_COUNT, el.IREE_HAL_EXECUTABLE_MAX_BINDING_COUNT) == (64, 64)
    assert el.IREE_HAL_EXECUTABLE_WORKGROUP_LOCAL_MEMORY_PAGE_SIZE == 4096
    assert [(p.name, p.value) for p in el.DispatchParamTypeV0] == [
        ("CONSTANT", 0), ("BINDING", 1), ("BUFFER_PTR", 2)]
    assert (el.DispatchFlagV0.SEQUENTIAL, el.DispatchFlagV0.WORKGROUP_SIZE_DYNAMIC) == (1, 2)
    assert el.DISPATCH_PARAMETER_UNNAMED == 0xFFFF


@pytest.mark.parametrize("element_type, numerical, bits", [
    # §7.3 examples.
    (0x21000020, hal_buffer.NumericalType.FLOAT_IEEE, 32),
    (0x10000020, hal_buffer.NumericalType.INTEGER, 32),
    (0x11000020, hal_buffer.NumericalType.INTEGER_SIGNED, 32),
    (0x12000008, hal_buffer.NumericalType.INTEGER_UNSIGNED, 8),
    (0x13000008, hal_buffer.NumericalType.BOOLEAN, 8),
    (0x00000008, hal_buffer.NumericalType.UNKNOWN, 8),
    (0x22000010, hal_buffer.NumericalType.FLOAT_BRAIN, 16),
    (0x23000040, hal_buffer.NumericalType.FLOAT_COMPLEX, 64),
])
def test_element_type_encoding(element_type, numerical, bits):
    assert hal_buffer.iree_hal_make_element_type(numerical, bits) == element_type
    assert hal_buffer.decode_element_type(element_type) == (numerical, bits)


def test_element_type_enum_and_helpers():
    et = hal_buffer.ElementType
    assert (et.FLOAT_32, et.INT_32, et.SINT_32, et.UINT_8, et.BOOL_8, et.OPAQUE_8, et.BFLOAT_16,
            et.COMPLEX_FLOAT_64) == (0x21000020, 0x10000020, 0x11000020, 0x12000008, 0x13000008,
                                     0x00000008, 0x22000010, 0x23000040)
    assert hal_buffer.iree_hal_element_numerical_type_is_integer(et.BOOL_8)
    assert not hal_buffer.iree_hal_element_numerical_type_is_boolean(et.SINT_32)
    assert hal_buffer.iree_hal_element_numerical_type_is_float(et.FLOAT_8_E4M3_FN)
    assert hal_buffer.iree_hal_element_numerical_type_is_opaque(et.OPAQUE_64)
    # §7.3: byte_length = ceil(prod(dims) * bit_count / 8).
    assert hal_buffer.iree_hal_element_packed_byte_count(et.INT_4, 3) == 2
    assert hal_buffer.iree_hal_element_dense_byte_count(et.INT_4) == 1
    assert hal_buffer.decode_element_type(0x7F000010) == (0x7F, 16)  # unknown numerical type
    with pytest.raises(hal_buffer.ElementTypeError):
        hal_buffer.iree_hal_make_element_type(hal_buffer.NumericalType.INTEGER, 256)
    with pytest.raises(hal_buffer.ElementTypeError):
        hal_buffer.iree_hal_element_bit_count(1 << 32)
    assert [(e.name, e.value) for e in hal_buffer.EncodingType] == [("OPAQUE", 0), ("DENSE_ROW_MAJOR", 1)]


def test_buffer_view_allocation():
    # §7.3: { ref_count, host_allocator, buffer, element_type u32, encoding_type u32, byte_length,
    # shape_rank, shape[rank] } in one allocation of sizeof + rank device-size dims.
    lay = hal_buffer.iree_hal_buffer_view_t.layout("x86_64")
    assert [f.name for f in lay.fields] == ["ref_count", "host_allocator", "buffer", "element_type",
                                            "encoding_type", "byte_length", "shape_rank", "shape"]
    assert lay.flexible is not None and lay.flexible.offset == lay.size
    for target in ("x86_64", "i386"):
        t_lay = hal_buffer.iree_hal_buffer_view_t.layout(target)
        dim = t_lay.target.pointer_size  # iree_device_size_t = pointer width (§3)
        assert hal_buffer.buffer_view_allocation_size(target, 3) == t_lay.size + 3 * dim
    assert hal_buffer.iree_hal_whole_buffer("i386") == 0xFFFFFFFF
    assert hal_buffer.iree_hal_whole_buffer("x86_64") == (1 << 64) - 1


def test_memory_and_mapping_bits():
    # Values read from runtime/src/iree/hal/buffer.h; §7.2 maps SCOPED with access ANY.
    assert hal_buffer.MappingMode.SCOPED == 1 and hal_buffer.MappingMode.PERSISTENT == 2
    ma = hal_buffer.MemoryAccess
    assert (ma.READ, ma.WRITE, ma.DISCARD, ma.ANY, ma.ALL) == (1, 2, 4, 32, 7)


def test_module_export_tables():
    # §7.3 (hal_inline, version 0) and §8 (hal_loader, version 1): exports.inl order and cconvs.
    assert hal_inline.IREE_HAL_INLINE_MODULE_VERSION_LATEST == 0
    assert hal_loader.IREE_HAL_LOADER_MODULE_VERSION_LATEST == 1
    assert [(e.name, e.cconv) for e in hal_loader.EXPORTS] == [
        ("executable.dispatch", "0rIiiiCiDCrIID_v"), ("executable.load", "0rrr_r"),
        ("executable.lookup.function", "0rr_I"), ("executable.query_support", "0r_i")]
    inline = {e.name: e.cconv for e in hal_inline.EXPORTS}
    assert list(inline)[:3] == ["buffer.allocate", "buffer.allocate.initialized", "buffer.length"]
    assert len(inline) == 15
    # §10: the nine imports iree-compile 3.13.0 emitted all match exports.inl.
    imports = [
        (hal_inline, "buffer.allocate", "0iI_rr"), (hal_inline, "buffer.storage", "0r_r"),
        (hal_inline, "buffer_view.create", "0rIIiiCID_r"),
        (hal_inline, "buffer_view.assert", "0rriiCID_v"), (hal_inline, "buffer_view.buffer", "0r_r"),
        (hal_loader, "executable.query_support", "0r_i"), (hal_loader, "executable.load", "0rrr_r"),
        (hal_loader, "executable.dispatch", "0rIiiiCiDCrIID_v"),
        (hal_loader, "executable.lookup.function", "0rr_I")]
    for module, name, cc in imports:
        assert module.export(name).cconv == cc
    for e in hal_inline.EXPORTS + hal_loader.EXPORTS:
        cconv.parse(e.cconv)  # every published cconv is well formed
    with pytest.raises(layouts.UnknownNameError):
        hal_loader.export("executable.dispatch2")


def test_registry_knows_every_module():
    assert layouts.module_of("iree_hal_executable_dispatch_state_v0_t") == "executable_library"
    assert layouts.module_of("iree_hal_loader_dispatch_args_t") == "hal_loader"
    assert layouts.module_of("iree_vm_abi_rIiii_t") == "cconv"
    with pytest.raises(layouts.UnknownNameError):
        layouts.module_of("iree_hal_nothing_t")


def test_catalog_views_agree_on_every_target():
    # Not a fact-sheet number: the ctypes and construct views other layers use must describe the
    # same bytes as the engine for every new declaration (views.views raises LayoutError otherwise),
    # and a pattern built through construct must parse back through ctypes' offsets.
    from ireeabi.abi import targets, views
    for s in layouts.all_structs():
        for t in targets.names():
            v = views.views(s, t)
            assert v.size == s.layout(t).size
    state = el.iree_hal_executable_dispatch_state_v0_t
    values = {f.name: i + 1 for i, f in enumerate(state.fields)}
    for t in ("x86_64", "riscv32", "i386"):
        data = views.build(state, t, values)
        lay = state.layout(t)
        cc = lay.field("constant_count")
        assert int.from_bytes(data[cc.offset:cc.offset + cc.size], "little") == values["constant_count"]
        assert views.parse(state, t, data) == values
