"""hal_loader against IREE's C sources, export by export (load, query_support, lookup.function,
dispatch) and the library loading and verification behind them.

Expected values come from the IREE sources named in each docstring (paths under runtime/src/iree/).
The kernel libraries are built here with gcc from the catalog's C declarations: a `probe` kernel
writes what it receives (dispatch_state_v0, workgroup_state_v0, environment constants) into its
first binding, so the test reads exactly what the loader put in memory.
"""
import subprocess

import numpy as np
import pytest

from ireeabi.abi.cdecl import c_source
from ireeabi.hal.local import elf_executable as X
from ireeabi.layouts import executable_library as L
from ireeabi.vm import ref as R
from ireeabi.vm.buffer import BufferOverflowError
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError

from support.hal_programs import program

_ARCH_FORMATS = X.formats()
# The real kernels are this file's oracle: a host none of them runs on fails collection loudly.
if not _ARCH_FORMATS:
    raise RuntimeError("no kernel format runs on this host: hal_loader fidelity needs a real kernel")
SYSTEM = next((f for f in _ARCH_FORMATS if f.startswith("system-elf-")), None)
EMBEDDED = next((f for f in _ARCH_FORMATS if f.startswith("embedded-elf-")), None)

# Slots of the probe's record (uint32 each).
WS, CONSTANT_COUNT, WC, MAX_CONCURRENCY, BINDING_COUNT = 0, 3, 4, 7, 8
PROCESSOR_ID, HAS_LOCAL_MEMORY, LOCAL_MEMORY_SIZE, CALLS, WG_ID = 9, 10, 11, 12, 13
LENGTHS, PTR_OFFSETS, CONSTANTS, ENV_CONSTANTS = 16, 20, 24, 28
RECORD = 32

_BODY = r"""
static int probe(const iree_hal_executable_environment_v0_t* env,
                 const iree_hal_executable_dispatch_state_v0_t* st,
                 const iree_hal_executable_workgroup_state_v0_t* wg) {
  void* const* ptrs = st->binding_ptrs;
  uint32_t* out = (uint32_t*)ptrs[0];
  out[0] = st->workgroup_size_x; out[1] = st->workgroup_size_y; out[2] = st->workgroup_size_z;
  out[3] = st->constant_count;
  out[4] = st->workgroup_count_x; out[5] = st->workgroup_count_y; out[6] = st->workgroup_count_z;
  out[7] = st->max_concurrency; out[8] = st->binding_count;
  out[9] = wg->processor_id; out[10] = wg->local_memory != 0; out[11] = wg->local_memory_size;
  out[12] += 1;
  out[13] = wg->workgroup_id_x; out[14] = wg->workgroup_id_y; out[15] = wg->workgroup_id_z;
  for (unsigned i = 0; i < st->binding_count && i < 4; ++i) {
    out[16 + i] = (uint32_t)st->binding_lengths[i];
    out[20 + i] = (uint32_t)((const char*)ptrs[i] - (const char*)ptrs[0]);
  }
  for (unsigned i = 0; i < st->constant_count && i < 4; ++i) out[24 + i] = st->constants[i];
  out[28] = env->constants ? env->constants[0] : 0xFFFFFFFFu;
  out[29] = env->constants ? env->constants[1] : 0xFFFFFFFFu;
  return 0;
}
static int fail(const void* env, const void* st, const void* wg) { return -3; }
static const char* names[] = {NAMES 0};
static void* fns[] = {(void*)probe, (void*)fail, (void*)probe, (void*)probe};
static const char* imports[] = {IMPORTS 0};
static iree_hal_executable_dispatch_attrs_v0_t attrs[4];
static iree_hal_executable_library_header_t header;
static iree_hal_executable_library_v0_t library;
const void* iree_hal_executable_library_query(uint32_t max_version, const void* env) {
  header.version = VERSION; header.name = "fidelity";
  library.header = &header;
  library.imports.count = sizeof(imports) / sizeof(imports[0]) - 1;
  library.imports.symbols = imports;
  library.exports.count = COUNT; library.exports.ptrs = fns;
  library.exports.attrs = ATTRS; library.exports.names = NAMES_PTR;
  library.constants.count = LIB_CONSTANTS;
  SETUP
  return max_version >= 6 ? &library : 0;
}
"""

# The probe library: export 0 `probe` (2 constants, 2 bindings, attrs workgroup size 64x2x3 and 2
# local memory pages), export 1 `fail`; the library takes 2 executable constants.
PROBE_SETUP = ("attrs[0].constant_count = 2; attrs[0].binding_count = 2; attrs[0].local_memory_pages = 2; "
               "attrs[0].workgroup_size_x = 64; attrs[0].workgroup_size_y = 2; attrs[0].workgroup_size_z = 3;")
_HEADER = c_source([L.iree_hal_executable_library_header_t, L.iree_hal_executable_library_v0_t,
                    L.iree_hal_executable_environment_v0_t, L.iree_hal_executable_dispatch_state_v0_t,
                    L.iree_hal_executable_workgroup_state_v0_t, L.iree_hal_executable_dispatch_attrs_v0_t])
_BUILT: dict[str, bytes] = {}


def _c_string(raw: bytes) -> str:
    return '"' + "".join(chr(b) if (b < 0x80 and chr(b).isalnum()) or b == 0x5F else f"\\{b:03o}" for b in raw) + '"'


def library(tmp_path_factory, *, names=(b"probe", b"fail"), count=None, attrs="attrs", names_ptr="names",
            lib_constants=2, imports=(), version=6, setup=PROBE_SETUP) -> bytes:
    """A kernel library's bytes (cached by source). `names` entries may be None (a NULL name)."""
    subs = {
        "NAMES_PTR": names_ptr, "NAMES": "".join(("0" if n is None else _c_string(n)) + ", " for n in names),
        "IMPORTS": "".join(f'"{s}", ' for s in imports), "COUNT": str(len(names) if count is None else count),
        "ATTRS": attrs, "LIB_CONSTANTS": str(lib_constants), "VERSION": str(version), "SETUP": setup,
    }
    src = _BODY
    for k in sorted(subs, key=len, reverse=True):  # NAMES_PTR before NAMES
        src = src.replace(k, subs[k])
    src = _HEADER + src
    if src not in _BUILT:
        d = tmp_path_factory.mktemp("lib")
        (d / "lib.c").write_text(src)
        # sysv hash: the only symbol table IREE's ELF loader reads (DT_HASH; iree-compile links so)
        subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wl,--hash-style=sysv", "-o", str(d / "lib.so"),
                        str(d / "lib.c")],
                       check=True, capture_output=True)
        _BUILT[src] = (d / "lib.so").read_bytes()
    return _BUILT[src]


def load(session, fmt, data, constants=None):
    if constants is None:
        constants = R.NULL_REF
    elif isinstance(constants, (bytes, list)):
        raw = constants if isinstance(constants, bytes) else np.array(constants, np.uint32).tobytes()
        constants = session.bytes_buffer(raw)
    (exe,) = session.call("hal_loader.executable.load", session.bytes_buffer(fmt.encode()),
                          session.bytes_buffer(data), constants)
    return exe


def status_of(fn, *args):
    with pytest.raises(StatusError) as e:
        fn(*args)
    return e.value.status.code, e.value.status.message


@pytest.fixture
def probe(session, tmp_path_factory):
    """(executable, output storage of RECORD uint32 words) of the probe library, loaded with
    executable constants [7, 9]."""
    exe = load(session, SYSTEM, library(tmp_path_factory), [7, 9])
    _, out = session.allocate(RECORD * 4)
    return exe, out


def record(session, out):
    return session.rt.vm_buffers.as_numpy(out.ptr, np.uint32).copy()


def dispatch(session, exe, fid, wg, constants, bindings):
    session.call("hal_loader.executable.dispatch", exe, fid, *wg, constants, bindings)


# -- executable.query_support --------------------------------------------------------------------------


def test_query_support_is_a_prefix_test(session):
    """loaders/embedded_elf_loader.c iree_hal_embedded_elf_loader_query_support and
    loaders/system_library_loader.c iree_hal_system_library_loader_query_support: the format must
    start with "embedded-elf-" / "system-elf-" and IREE_ARCH; anything may follow. modules/hal/loader/
    module.c executable_query_support: the format ref goes through iree_vm_buffer_check_deref."""
    def q(fmt):
        return session.call("hal_loader.executable.query_support", session.bytes_buffer(fmt))[0]

    for fmt in _ARCH_FORMATS:
        assert q(fmt.encode()) == 1
        assert q(fmt.encode() + b"-with-suffix") == 1
        assert q(fmt.encode()[:-1]) == 0
    code, _ = status_of(session.call, "hal_loader.executable.query_support", R.NULL_REF)
    assert code == StatusCode.INVALID_ARGUMENT


def test_load_accepts_a_suffixed_format(session):
    """module.c iree_hal_loader_module_try_load tries every loader whose query_support accepts the
    format, and the embedded ELF loader accepts it by prefix (embedded_elf_loader.c)."""
    prog = program("add16")
    exe = load(session, prog.format + "-v2", prog.elf)
    assert session.function(exe, prog.dispatches("add", [None, None])[0].export_name) == 0


# -- executable.load ---------------------------------------------------------------------------------


def test_unsupported_format_reports_no_loader(session):
    """module.c iree_hal_loader_module_try_load: with no loader whose query_support accepts the format,
    NOT_FOUND "no executable loader registered for the given executable format '%.*s'"."""
    prog = program("add16")
    other = "embedded-elf-arm_64" if not prog.format.endswith("arm_64") else "embedded-elf-x86_64"
    assert status_of(load, session, other, prog.elf) == (
        StatusCode.NOT_FOUND, f"no executable loader registered for the given executable format '{other}'")


def test_loader_not_found_moves_on_to_the_no_loader_status(session, tmp_path_factory):
    """module.c iree_hal_loader_module_try_load: a loader's NOT_FOUND or CANCELLED means "try the next
    one"; none left, the format's NOT_FOUND. The system loader's NOT_FOUND comes from dlopen failing and
    from a missing query symbol (base/internal/dynamic_library_posix.c load_from_file,
    lookup_symbol)."""
    no_query = tmp_path_factory.mktemp("noquery")
    (no_query / "lib.c").write_text("int nothing(void) { return 0; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(no_query / "lib.so"), str(no_query / "lib.c")],
                   check=True, capture_output=True)
    expected = (StatusCode.NOT_FOUND, f"no executable loader registered for the given executable format '{SYSTEM}'")
    assert status_of(load, session, SYSTEM, (no_query / "lib.so").read_bytes()) == expected
    assert status_of(load, session, SYSTEM, b"not an ELF at all") == expected
    assert status_of(load, session, SYSTEM, b"") == expected


def test_embedded_loader_refuses_bad_elf_and_elf_imports(session, tmp_path_factory):
    """elf/elf_module.c iree_elf_module_verify_ehdr: data that is no ELF for this machine is
    FAILED_PRECONDITION; iree_elf_module_verify_no_imports: any undefined dynamic symbol is
    UNAVAILABLE. Neither is NOT_FOUND/CANCELLED, so module.c's try_load returns it as is."""
    assert status_of(load, session, EMBEDDED, b"")[0] == StatusCode.FAILED_PRECONDITION
    assert status_of(load, session, EMBEDDED, b"\x7fELF" + bytes(60))[0] == StatusCode.FAILED_PRECONDITION
    # gcc links a shared library against libc: its dynamic symbols include undefined ones.
    code, message = status_of(load, session, EMBEDDED, library(tmp_path_factory), [7, 9])
    assert code == StatusCode.UNAVAILABLE and "imports one or more symbols" in message


def test_constants_buffer_handling(session, tmp_path_factory):
    """module.c iree_hal_loader_module_executable_load: constants are used only when the ref is a
    vm.buffer (iree_vm_buffer_isa: a null ref or another type means none), must be whole uint32s
    (INVALID_ARGUMENT), and executable_library_util.c iree_hal_executable_library_verify wants
    exactly the library's count (FAILED_PRECONDITION "executable requires %u constants but caller
    provided %zu; must match")."""
    data = library(tmp_path_factory)
    hal_buffer, _ = session.allocate(8)
    for constants in (None, hal_buffer, b""):
        assert status_of(load, session, SYSTEM, data, constants) == (
            StatusCode.FAILED_PRECONDITION, "executable requires 2 constants but caller provided 0; must match")
    assert status_of(load, session, SYSTEM, data, [1])[1].endswith("caller provided 1; must match")
    code, message = status_of(load, session, SYSTEM, data, bytes(6))
    assert code == StatusCode.INVALID_ARGUMENT
    assert message.startswith("constant buffer data must contain 4-byte elements but data length is 6")
    # Argument order: the data ref is checked before the constants.
    code, message = status_of(session.call, "hal_loader.executable.load", session.bytes_buffer(SYSTEM.encode()),
                              R.NULL_REF, session.bytes_buffer(bytes(6)))
    assert code == StatusCode.INVALID_ARGUMENT and "null" in message


def test_executable_constants_reach_the_kernel(session, probe):
    """loaders/system_library_loader.c iree_hal_system_executable_create copies the constants and
    points environment.constants at the copy."""
    exe, out = probe
    dispatch(session, exe, 0, (1, 1, 1), [0, 0], [(out, 0, RECORD * 4), (out, 0, 4)])
    assert list(record(session, out)[ENV_CONSTANTS:ENV_CONSTANTS + 2]) == [7, 9]


@pytest.mark.parametrize("variant, expected", [
    (dict(count=0, attrs="0", names_ptr="0", names=()),
     (StatusCode.FAILED_PRECONDITION, "executable exports must provide dispatch attributes")),
    (dict(names_ptr="0"), (StatusCode.FAILED_PRECONDITION, "executable exports must provide function names")),
    (dict(names=(b"",), setup="attrs[0].constant_count = 65;"),
     (StatusCode.OUT_OF_RANGE, "dispatch requiring 65 constants exceeds limit of 64")),
    (dict(names=(b"",), setup="attrs[0].binding_count = 65;"),
     (StatusCode.OUT_OF_RANGE, "dispatch requiring 65 bindings exceeds limit of 64")),
    (dict(names=(b"probe", b"")), (StatusCode.FAILED_PRECONDITION, "executable export 1 missing function name")),
    (dict(names=(None, b"fail")), (StatusCode.FAILED_PRECONDITION, "executable export 0 missing function name")),
    (dict(attrs="0", lib_constants=1),
     (StatusCode.FAILED_PRECONDITION, "executable requires 1 constants but caller provided 2; must match")),
])
def test_library_verification_order_and_codes(session, tmp_path_factory, variant, expected):
    """executable_library_util.c iree_hal_executable_library_verify, in its order: constant count,
    attrs present (even with no exports), names present when there are exports, then per export the
    constant limit, the binding limit (IREE_HAL_EXECUTABLE_MAX_*_COUNT = 64) and a non-empty name."""
    assert status_of(load, session, SYSTEM, library(tmp_path_factory, **variant), [7, 9]) == expected


def test_required_import_without_provider(session, tmp_path_factory):
    """executable_loader.c iree_hal_executable_import_provider_try_resolve with a NULL provider:
    UNAVAILABLE when any import is required (optional '?' ones are left NULL). Imports resolve before
    verification (system_library_loader.c iree_hal_system_executable_create), so the constant
    mismatch here is not what is reported."""
    data = library(tmp_path_factory, imports=("needed_fn",), lib_constants=5)
    assert status_of(load, session, SYSTEM, data, [7, 9]) == (
        StatusCode.UNAVAILABLE, "no import provider registered for resolving required executable imports")
    load(session, SYSTEM, library(tmp_path_factory, imports=("?maybe_fn",)), [7, 9])


def test_header_version_is_not_checked(session, tmp_path_factory):
    """Neither embedded_elf_loader.c nor system_library_loader.c (query_library) compares
    header->version with the runtime's: the query function negotiated it."""
    load(session, SYSTEM, library(tmp_path_factory, version=7), [7, 9])


# -- executable.lookup.function ------------------------------------------------------------------------


def test_lookup_is_an_exact_byte_match(session, tmp_path_factory):
    """executable_library_util.c iree_hal_executable_library_lookup_export_by_name: a linear search with
    iree_string_view_equal (same size, same bytes), the first match wins; otherwise NOT_FOUND "export
    '%.*s' not found in library"."""
    exe = load(session, SYSTEM, library(tmp_path_factory, names=(b"probe", b"k\xff", b"probe", b"k\xef\xbf\xbd"),
                                        setup=""), [7, 9])

    def lookup(raw):
        return session.call("hal_loader.executable.lookup.function", exe, session.bytes_buffer(raw))[0]

    assert lookup(b"probe") == 0 and lookup(b"k\xff") == 1 and lookup(b"k\xef\xbf\xbd") == 3
    for raw in (b"prob", b"probe\0", b"probex", b"", b"k\xfe"):
        code, message = status_of(lookup, raw)
        assert code == StatusCode.NOT_FOUND and message.endswith("not found in library")
    assert status_of(lookup, b"prob")[1] == "export 'prob' not found in library"


def test_lookup_without_names_table(session, tmp_path_factory):
    """executable_library_util.c iree_hal_executable_library_lookup_export_by_name: no names table ->
    UNAVAILABLE "function names not available in library" (verification allows that only without
    exports); a names table with no entry matching -> NOT_FOUND."""
    def lookup(exe):
        return session.call("hal_loader.executable.lookup.function", exe, session.bytes_buffer(b"probe"))

    bare = load(session, SYSTEM, library(tmp_path_factory, names=(), names_ptr="0"), [7, 9])
    assert status_of(lookup, bare) == (StatusCode.UNAVAILABLE, "function names not available in library")
    empty = load(session, SYSTEM, library(tmp_path_factory, names=()), [7, 9])
    assert status_of(lookup, empty) == (StatusCode.NOT_FOUND, "export 'probe' not found in library")


def test_lookup_checks_the_executable_first(session, probe):
    """module.c executable_lookup_function: iree_hal_executable_check_deref(r0) before
    iree_vm_buffer_check_deref(r1)."""
    _, out = probe
    code, message = status_of(session.call, "hal_loader.executable.lookup.function", out, R.NULL_REF)
    assert code == StatusCode.INVALID_ARGUMENT and "type mismatch" in message


# -- executable.dispatch ---------------------------------------------------------------------------------


def test_dispatch_state_fields(session, probe):
    """module.c iree_hal_loader_module_executable_dispatch: workgroup size 1x1x1 whatever the export's
    attrs say, constant_count and binding_count as passed, the workgroup counts as passed,
    max_concurrency 1, processor id 0 and empty local memory (whatever local_memory_pages says);
    each binding's pointer and length from iree_vm_buffer_map_ro(offset, length) - a zero-length
    binding at the buffer's end included. local_executable.c issue_dispatch_inline: z outer, x inner."""
    exe, out = probe
    dispatch(session, exe, 0, (3, 2, 1), [11, 12, 13], [(out, 0, RECORD * 4), (out, RECORD * 4, 0), (out, 8, 16)])
    r = record(session, out)
    assert list(r[WS:WS + 3]) == [1, 1, 1]
    assert r[CONSTANT_COUNT] == 3 and list(r[CONSTANTS:CONSTANTS + 3]) == [11, 12, 13]
    assert list(r[WC:WC + 3]) == [3, 2, 1] and r[CALLS] == 6 and list(r[WG_ID:WG_ID + 3]) == [2, 1, 0]
    assert r[MAX_CONCURRENCY] == 1 and r[BINDING_COUNT] == 3
    assert r[PROCESSOR_ID] == 0 and r[HAS_LOCAL_MEMORY] == 0 and r[LOCAL_MEMORY_SIZE] == 0
    assert list(r[LENGTHS:LENGTHS + 3]) == [RECORD * 4, 0, 16]
    assert list(r[PTR_OFFSETS:PTR_OFFSETS + 3]) == [0, RECORD * 4, 8]


def test_workgroup_count_casts(session, probe):
    """module.c: the i32 workgroup counts are stored as uint32 x/y and uint16 z in dispatch_state_v0,
    and local_executable.c issue_dispatch_inline loops over those fields: a zero count makes no call
    and is OK."""
    exe, out = probe
    bindings = [(out, 0, RECORD * 4), (out, 0, 4)]
    dispatch(session, exe, 0, (-1, 0, 1), [0, 0], bindings)
    assert record(session, out)[CALLS] == 0
    state = session.rt.loader._states[(2, 2, False)].state  # the dispatch_state_v0 the kernel would get
    assert (state.workgroup_count_x, state.workgroup_count_y, state.workgroup_count_z) == (0xFFFFFFFF, 0, 1)
    dispatch(session, exe, 0, (1, 1, 65536 + 2), [0, 0], bindings)
    r = record(session, out)
    assert r[WC + 2] == 2 and r[CALLS] == 2 and r[WG_ID + 2] == 1


def test_dispatch_error_order(session, probe):
    """module.c iree_hal_loader_module_executable_dispatch, in order: executable check_deref
    (INVALID_ARGUMENT), function id in range (OUT_OF_RANGE "function id %llu out of range (count: %zu)"),
    more than 32 bindings (RESOURCE_EXHAUSTED), then per binding in order: check_deref
    (INVALID_ARGUMENT) and map_ro (OUT_OF_RANGE). No kernel call on any of them."""
    exe, out = probe
    good = (out, 0, RECORD * 4)

    def code(*args):
        return status_of(session.call, "hal_loader.executable.dispatch", *args)[0]

    assert code(out, 7, 1, 1, 1, [0, 0], [(R.NULL_REF, 0, 0)] * 33) == StatusCode.INVALID_ARGUMENT
    assert status_of(session.call, "hal_loader.executable.dispatch", exe, -1, 1, 1, 1, [], [good] * 33) == (
        StatusCode.OUT_OF_RANGE, "function id 18446744073709551615 out of range (count: 2)")
    assert code(exe, 0, 1, 1, 1, [], [(R.NULL_REF, 0, 0)] * 33) == StatusCode.RESOURCE_EXHAUSTED
    assert code(exe, 0, 1, 1, 1, [0, 0], [(out, 1, RECORD * 4), (R.NULL_REF, 0, 0)]) == StatusCode.OUT_OF_RANGE
    assert code(exe, 0, 1, 1, 1, [0, 0], [good, (R.NULL_REF, 0, 0)]) == StatusCode.INVALID_ARGUMENT
    assert code(exe, 0, 1, 1, 1, [0, 0], [good, (out, RECORD * 4 + 1, 0)]) == StatusCode.OUT_OF_RANGE
    assert record(session, out)[CALLS] == 0


def test_a_null_vm_buffer_binding_is_where_iree_faults(session, probe):
    """A binding ref {NULL, vm.buffer}: vm/buffer.c's check_deref passes it (it tests the type
    word only) and module.c maps it with iree_vm_buffer_map_ro, which reads the NULL handle's data
    span untested: IREE's own runtime faults there. Refused saying so, not with a status IREE does
    not return; the kernel is never called."""
    exe, out = probe
    null_buffer = R.Ref(0, session.rt.vm_buffers.type)
    with pytest.raises(IreeFaultError, match=r"a NULL vm.buffer .* passes check_deref\): IREE's vm/buffer.c "
                                             r"reads through it untested .* its own runtime faults there"):
        dispatch(session, exe, 0, (1, 1, 1), [0, 0], [(out, 0, RECORD * 4), (null_buffer, 0, 4)])
    assert record(session, out)[CALLS] == 0


def test_dispatch_needs_the_declared_counts(session, probe):
    """Not checked by IREE's hal_loader (module.c hands the kernel any counts, and its kernel reads
    past them; only hal/local/inline_command_buffer.c compares them). Fewer constants than declared:
    module.c's dispatch_state.constants points into the argument buffer, so the kernel reads the
    buffer's next words: run as IREE runs it, the state pointing there (on x86_64 the packed buffer
    has the constant count at 36 and one constant at 40, so the kernel's constants[1] is the binding
    count at 44). Fewer bindings: the kernel reads binding pointers from past the arrays module.c
    allocas: refused with an error that says so (not a status: IREE returns none), after every
    check IREE makes. More of either run, as in IREE."""
    exe, out = probe
    good = [(out, 0, RECORD * 4), (out, 0, 4)]
    dispatch(session, exe, 0, (1, 1, 1), [5], good)
    r = record(session, out)
    assert r[CALLS] == 1 and r[CONSTANT_COUNT] == 1 and r[CONSTANTS] == 5 and r[BINDING_COUNT] == 2
    heap = session.rt.vm_buffers.heap
    state = session.rt.loader._states[(1, 2, True)]
    pointer = state.state.constants  # into the argument buffer, not the state's block
    assert not state.address <= pointer < state.address + 256, hex(pointer)
    assert heap.read(pointer - 4, 12) == (1).to_bytes(4, "little") + (5).to_bytes(4, "little") + \
        (2).to_bytes(4, "little")  # the count, constants[0], and the binding count the kernel reads next
    with pytest.raises(IreeFaultError) as e:
        dispatch(session, exe, 0, (1, 1, 1), [5, 6], good[:1])
    assert "IREE hands kernel probe 1 of the 2 bindings it reads: the kernel loads binding_ptrs[1] from " \
           "IREE's stack, past the arrays IREE allocas, and dereferences them" in str(e.value), str(e.value)
    assert status_of(dispatch, session, exe, 0, (1, 1, 1), [5], [good[0], (out, 0, RECORD * 4 + 4)])[0] == \
        StatusCode.OUT_OF_RANGE  # IREE's map_ro check comes first
    assert record(session, out)[CALLS] == 1
    dispatch(session, exe, 0, (1, 1, 1), [5, 6, 7, 8], good + [good[1]])
    r = record(session, out)
    assert r[CALLS] == 2 and r[CONSTANT_COUNT] == 4 and r[BINDING_COUNT] == 3


def test_wrapped_binding_range_never_reaches_the_kernel(session, probe):
    """vm/buffer.c iree_vm_buffer_map_ro checks offset + length > data_length without overflow care:
    an offset of -8 (cast to iree_host_size_t by module.c iree_hal_cast_host_size) plus 16 wraps to
    8 and passes, giving the kernel a pointer before the data. ireeabi raises BufferOverflowError
    instead, before the kernel runs."""
    exe, out = probe
    with pytest.raises(BufferOverflowError):
        dispatch(session, exe, 0, (1, 1, 1), [0, 0], [(out, 0, RECORD * 4), (out, -8, 16)])
    assert record(session, out)[CALLS] == 0


def test_kernel_failure_status(session, probe):
    """loaders/system_library_loader.c issue_call: a non-zero return is INTERNAL "executable entry point
    returned catastrophic error %d" (signed)."""
    exe, _ = probe
    assert status_of(dispatch, session, exe, 1, (1, 1, 1), [], []) == (
        StatusCode.INTERNAL, "executable entry point returned catastrophic error -3")


def test_dispatch_and_lookup_leave_reference_counts(session, probe):
    """module.c: dispatch and lookup only check_deref their refs (no retain, no release); the VM's
    argument buffer holds and drops the references around the call."""
    exe, out = probe
    heap = session.rt.heap
    before = heap.read_i32(exe.ptr), heap.read_i32(out.ptr)
    dispatch(session, exe, 0, (1, 1, 1), [0, 0], [(out, 0, RECORD * 4), (out, 0, 4)])
    status_of(dispatch, session, exe, 0, (1, 1, 1), [0, 0], [(out, 0, RECORD * 4), (out, 1, RECORD * 4)])
    session.function(exe, "probe")
    assert (heap.read_i32(exe.ptr), heap.read_i32(out.ptr)) == before
