"""The full HAL's dispatch shims (layouts/hal_module_dispatch.py): their args structs against the
compilers, and their span reader against the VM's packer, per data model.

Facts from IREE's runtime/src/iree/modules/hal/module.c: iree_hal_module_command_buffer_dispatch_shim
and iree_hal_module_command_buffer_dispatch_indirect_shim copy sizeof(iree_vm_abi_rrIiiiI_t)
(rrIirII) bytes into the params member of their args struct, read the constant count at that
sizeof, the constants right after it, the binding count right after the last constant, align the
binding array to alignof(iree_vm_abi_iirII_t) and walk it with stride sizeof(iree_vm_abi_iirII_t).
"""
import itertools

import pytest

from ireeabi import layouts
from ireeabi.abi import cconv, oracles, targets
from ireeabi.abi.layout import align_up
from ireeabi.layouts import hal_module_dispatch as H

STRUCTS = H.STRUCTS + [H.iree_vm_abi_iirII_t]
ILP32_8 = ("riscv32", "armv7", "wasm32")  # 4-byte pointers, 8-aligned int64 members
LP64 = ("x86_64", "aarch64", "riscv64")

# (target, export) -> (sizeof of the fixed part's C struct, where the VM packs the first count):
# the VM aligns an i64 to 8 on every target, i386's C ABI aligns an int64 member to 4.
EXPECTED = {
    **{(t, "command_buffer.dispatch"): (64, 64) for t in LP64},
    **{(t, "command_buffer.dispatch.indirect"): (80, 80) for t in LP64},
    **{(t, "command_buffer.dispatch"): (48, 48) for t in ILP32_8},
    **{(t, "command_buffer.dispatch.indirect"): (56, 56) for t in ILP32_8},
    ("i386", "command_buffer.dispatch"): (44, 48),
    ("i386", "command_buffer.dispatch.indirect"): (52, 56),
}


def test_expected_covers_every_target_and_shim():
    assert set(EXPECTED) == {(t, s.export) for t in targets.names() for s in H.SHIMS}


@pytest.mark.parametrize("name", targets.names())
def test_structs_match_libclang(name):
    t = targets.get(name)
    assert oracles.disagreements(STRUCTS, oracles.measure_libclang(STRUCTS, t), t) == {}


def test_structs_match_host_compiler_and_gcc_m32():
    host = targets.get(oracles.host_target_name())
    assert oracles.disagreements(STRUCTS, oracles.measure_host_cc(STRUCTS), host) == {}
    i386 = targets.get("i386")
    assert oracles.disagreements(STRUCTS, oracles.measure_gcc_m32(STRUCTS), i386) == {}


def test_catalog_knows_them():
    for s in H.STRUCTS:
        assert layouts.get(s.name) is s
        assert layouts.module_of(s.name) == "hal_module_dispatch"
    assert layouts.module_of("iree_hal_module_command_buffer_dispatch_args_named_t") == "hal_module_dispatch"


@pytest.mark.parametrize("name", targets.names())
def test_named_members_overlay_params(name):
    """module.c's anonymous struct and `params` are one union: each named member (the workgroup
    count array as its three elements) must sit on the params field of the same value, measured by
    libclang."""
    t = targets.get(name)
    for s in H.SHIMS:
        m = oracles.measure_libclang([s.args], t)[s.args.name]
        named = [p for p in m.bit_offsets if p.startswith("anon.named.") and p.count(".") == 2]
        params = [p for p in m.bit_offsets if p.startswith("anon.params.") and p.count(".") == 2]
        offsets = []
        for p in named:
            if p.endswith("workgroup_count"):
                offsets += [m.bit_offsets[p] + 32 * k for k in range(3)]
            else:
                offsets.append(m.bit_offsets[p])
        assert offsets == [m.bit_offsets[p] for p in params], (s.export, name)


@pytest.mark.parametrize("name", targets.names())
def test_sizeof_and_packed_per_target(name):
    """sizeof from libclang, the first count's offset from the VM's packer; the site's state follows
    (live exactly where they differ, which is i386 only)."""
    t = targets.get(name)
    for s in H.SHIMS:
        measured = oracles.measure_libclang([s.params], t)[s.params.name].size
        site = H.sizeof_site(s, t)
        assert (site.sizeof, site.packed) == (measured, site.packed) == EXPECTED[name, s.export]
        assert site.instances == 16
        assert site.state == ("live" if name == "i386" else "latent")
        assert site.misread == (16 if name == "i386" else 0)
        assert bool(site.findings) == (name == "i386")
        # the loader's fix would not cure i386: the C struct puts the flags i64 at 36, the VM at 40
        assert site.packed_start_misread == (16 if name == "i386" else 0)


def _module_c_walk(s, t, counts):
    """The shim's walk as module.c writes it, with every size from libclang (not the engine): the
    constant count at sizeof(params), constants after it, the binding count after them, bindings
    aligned to alignof(iirII) (the buffer base is 16-aligned), stride sizeof(iirII)."""
    m = oracles.measure_libclang([s.params, s.element], t)
    params, elem = m[s.params.name], m[s.element.name]
    n_const, n_bind = counts
    fixed = [params.bit_offsets[f.name] // 8 for f in s.params.fields]
    count0 = params.size
    constants = [count0 + 4 + 4 * k for k in range(n_const)]
    count1 = count0 + 4 + 4 * n_const
    base = align_up(count1 + 4, elem.align)
    fields = [elem.bit_offsets[f.name] // 8 for f in s.element.fields]
    bindings = [base + e * elem.size + f for e in range(n_bind) for f in fields]
    return (count0, count1), fixed + constants + bindings, base + n_bind * elem.size


@pytest.mark.parametrize("name", targets.names())
def test_reader_is_module_c_walk(name):
    t = targets.get(name)
    for s in H.SHIMS:
        for counts in itertools.product(range(4), repeat=2):
            r = H.reader(s, t, counts)
            count_reads, reads, end = _module_c_walk(s, t, counts)
            assert r.count_reads == count_reads and list(r.reads) == reads and r.end == end, (s, counts)
            assert r.name == H.READER_NAME


@pytest.mark.parametrize("name", targets.names())
def test_latent_means_every_value_where_the_packer_puts_it(name):
    """Against the packer (cconv.vm_pack, IREE's bytecode dispatch.c rules): on a latent target the
    walk reads every count and value where the VM wrote it; on i386 it reads the first count 4
    bytes early, inside the last i64 of the fixed part."""
    t = targets.get(name)
    for s in H.SHIMS:
        frag = cconv.parse(s.cconv).arguments
        for counts in itertools.product(range(4), repeat=2):
            values, count_slots, _ = cconv.vm_pack(frag, t, counts)
            count_reads, reads, _ = _module_c_walk(s, t, counts)
            if name == "i386":
                assert count_reads[0] == count_slots[0].offset - 4
                assert cconv.compare_reader(cconv.layout(frag, t, counts), H.reader(s, t, counts))
            else:
                assert list(count_reads) == [c.offset for c in count_slots]
                assert reads == [v.offset for v in values]


def test_i386_reads_the_count_inside_flags():
    """docs/data-models.md: on i386 the shim reads the constant count inside the flags i64 the VM packed."""
    for s, at, flags in ((H.SHIMS[0], 44, (40, 8)), (H.SHIMS[1], 52, (48, 8))):
        values, _, _ = cconv.vm_pack(s.fixed_prefix, "i386")
        assert (values[-1].offset, values[-1].size) == flags  # flags: the last value of the fixed part
        assert H.reader(s, "i386", (0, 0)).count_reads[0] == at
        assert flags[0] < at < flags[0] + flags[1]


def test_live_finding_names_the_bytes():
    site = H.sizeof_site(H.shim("hal.command_buffer.dispatch"), "i386")
    assert site.findings[0].rule == "reader-sizeof"
    assert "reads span 0's count at 44, the VM packs it at 48" in site.findings[0].message
    assert site.findings[0].offset == 48
    assert site.summary() == ("live sizeof site on i386: sizeof(iree_vm_abi_rrIiiiI_t) 44 != packed "
                              "fixed part 48; the shim misreads 16 of 16 instances (a packed-size start, "
                              "#24827's hal_loader fix, would still misread 16)")
    d = site.as_dict()
    assert (d["state"], d["sizeof"], d["packed"], d["struct"]) == ("live", 44, 48, "iree_vm_abi_rrIiiiI_t")


def test_shim_lookup():
    assert H.shim("command_buffer.dispatch.indirect").cconv == H.DISPATCH_INDIRECT_CCONV
    assert H.shim_for_cconv("0rrIiiiICiDCiirIID_v") == [H.SHIMS[0]]
    assert H.shim_for_cconv("rrIirIICiDCiirIID") == [H.SHIMS[1]]
    assert H.shim_for_cconv("0rIiiiCiDCrIID_v") == []
    assert H.shim_for_cconv("0rr(") == []  # malformed: no shim (the parser names the error)
    with pytest.raises(layouts.UnknownNameError) as e:
        H.shim("command_buffer.dispatch2")
    assert "command_buffer.dispatch" in e.value.closest


def test_c_paths_resolve():
    """Every C member spelling maps to a path libclang measures at the same offset."""
    for args in H.STRUCTS:
        m = oracles.measure_libclang([args], targets.get("x86_64"))[args.name]
        lay = args.layout("x86_64")
        for c_name, path in H.C_PATHS[args.name].items():
            assert lay.offsetof(path) * 8 == m.bit_offsets[path], c_name


def test_a_shim_without_the_trailing_i64_would_be_live():
    """The check catches the day a full-HAL dispatch stops being latent: the same shim with the fixed
    part `rrIiii` (no flags i64) has 4 bytes of tail padding where int64 members are 8-aligned
    (sizeof 56 vs packed 52 on x86_64, libclang's sizeof). On i386 the sizes agree (36) and it is
    live all the same: the shim aligns the binding array to alignof(iirII) = 4, the VM to 8, so the
    instances whose binding count ends 4 bytes off an 8-byte boundary are misread (6 of 16)."""
    params = cconv.shim_struct("rrIiii")
    s = H.DispatchShim("command_buffer.dispatch", "0rrIiiiCiDCiirIID_v", H.SHIMS[0].args, params,
                       H.iree_vm_abi_iirII_t, "iree_hal_module_command_buffer_dispatch_shim")
    for name in targets.names():
        t = targets.get(name)
        site = H.sizeof_site(s, t)
        assert site.sizeof == oracles.measure_libclang([params], t)[params.name].size
        assert site.state == "live" and site.packed_start_misread == 0, name
        assert site.sizes_agree == (name == "i386")
        assert site.misread == (6 if name == "i386" else 16)
    x86 = H.sizeof_site(s, "x86_64")
    assert (x86.sizeof, x86.packed) == (56, 52)
