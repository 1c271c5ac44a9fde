"""Guard pages reach the emulated CPU: an emulated kernel running past its binding faults.

On a heap whose kernels run in the emulated CPU (`Heap.emulated_kernels`, set by the runtime's
KernelEmulator), HAL buffer storage is guarded as on the host; where no kernel runs natively the
guard pages are the emulator's only (the address space records them and tells its listeners; the
host's page tables are untouched). The CPU is a protection listener of the address space: it
learns the guard pages made before it existed, and hears of every later change.

Oracles: iree-compile's own kernels (an elementwise add of 1024 floats for riscv32, aarch64, armv7
and, emulated, the host) first run right and give numpy's sums; then one of their bindings is made
one tile (16 floats) shorter than the kernel reads or writes, which is what a corrupted binding
length does, and the dispatch must end in the status a trapped native fault gets
(`executable_library.fault_message`), naming the kernel, the access, the address and the binding,
0 bytes past its end: the first element past it. Each such run is a child process (were a guard
page host-protected behind the emulator's back, the child would die of a signal) whose heap is a
tracked heap: it exits normally only when nothing leaked.
"""
from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import re
import signal
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import unicorn.unicorn_const as uc_const

from support import iree_tools
from support import vm_ir
from ireeabi.hal.local import emulated_cpu, emulated_executable
from ireeabi.hal.local.emulated_cpu import GRAIN, EmulatedCpu
from ireeabi.base import heap as heap_module
from ireeabi.base.address_space import PAGE, AddressSpace
from ireeabi.base.heap import Heap
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS

TESTS = Path(__file__).resolve().parents[2]

ADD = """func.func @add(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = arith.addf %a, %b : tensor<1024xf32>
  return %0 : tensor<1024xf32>
}
"""
# iree-compile's flags per target (x86_64: the host's own build).
TRIPLES = {**{t: KERNEL_TARGET_FLAGS[t] for t in ("riscv32", "aarch64", "armv7")}, "x86_64": ()}


def _fork_touches(address: int) -> int | None:
    """Read one byte at host `address` in a forked child: the signal that killed it, or None."""
    pid = os.fork()
    if pid == 0:
        faulthandler.disable()
        ctypes.string_at(address, 1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else None


# -- the address space's protection record and its listeners -------------------------------------

def test_listeners_hear_protections_in_order_and_learn_the_current_ones():
    """A listener is told an inaccessible range before the host protects it and an accessible one
    after the host unprotected it (it reads the page itself when told: in a child, since a read of a
    host-protected page kills the process); one subscribing later learns the protected ranges first;
    emulator-only ranges (host=False) are recorded and told but leave the host's pages readable."""
    code = textwrap.dedent("""
        import ctypes, json
        from ireeabi.base.address_space import PAGE, AddressSpace
        space = AddressSpace(1 << 20, pointer_size=8, host=True)
        heard = []
        def listener(offset, size, accessible):
            ctypes.string_at(space.host_address(space.base + offset), 1)  # dies if host-protected now
            heard.append([offset, size, accessible])
        space.add_protection_listener(listener)
        space.protect(2 * PAGE, PAGE, False)
        space.protect(3 * PAGE, 2 * PAGE, False, False)
        late = []
        space.add_protection_listener(lambda *a: late.append(list(a)))
        ranges = space.protected()
        space.protect(2 * PAGE, PAGE, True)
        space.remove_protection_listener(listener)
        space.protect(3 * PAGE, 2 * PAGE, True)
        print(json.dumps([heard, late, ranges, space.protected()]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    heard, late, ranges, after = json.loads(proc.stdout)
    assert heard == [[2 * PAGE, PAGE, False], [3 * PAGE, 2 * PAGE, False], [2 * PAGE, PAGE, True]]
    assert ranges == [[2 * PAGE, 3 * PAGE]]  # one run of three pages
    assert late == [[2 * PAGE, 3 * PAGE, False], [2 * PAGE, PAGE, True], [3 * PAGE, 2 * PAGE, True]]
    assert after == []


def test_host_and_emulator_only_protections():
    """host=True protects the host's page (a read kills a child by SIGSEGV); host=False does not,
    and making it accessible again unprotects only what the host protected."""
    space = AddressSpace(1 << 20, pointer_size=8, host=True)
    space.protect(PAGE, PAGE, False)
    space.protect(4 * PAGE, PAGE, False, False)
    assert space.protected() == [(PAGE, PAGE), (4 * PAGE, PAGE)]
    assert _fork_touches(space.host_address(space.base + PAGE)) == signal.SIGSEGV
    assert _fork_touches(space.host_address(space.base + 4 * PAGE)) is None
    space.protect(0, 8 * PAGE, True)
    assert space.protected() == []
    assert _fork_touches(space.host_address(space.base + PAGE)) is None


def test_which_heaps_guard_and_how():
    """HAL buffer storage is guarded where kernels run natively (host guards) or in the emulated
    CPU (emulator-only where none runs natively: a foreign heap, or the host's with emulated
    kernels); a wasm32 heap's stays ordinary (wasmtime's code needs host guards: not its buffers')."""
    assert emulated_executable.CPU_TARGETS == emulated_cpu.TARGETS
    cases = [(None, False, True, True), ("riscv32", False, True, False), (None, True, True, False),
             ("aarch64", False, True, False), ("wasm32", False, False, None)]
    for target, emulate_host, guarded, host in cases:
        heap = Heap(target=target)
        emulated_executable.KernelEmulator(heap, emulate_host=emulate_host)
        if emulate_host:
            heap.native_kernels = False  # as KernelRunners does
        with heap.guarded_allocations():
            p = heap.malloc(64, align=64)
        a = heap.allocation(p)
        assert a.guarded is guarded, target
        if guarded:
            guard = a.chunk + a.chunk_size - PAGE
            assert (guard, PAGE) in heap.space.protected()
            touched = _fork_touches(heap.space.host_address(heap.space.base + guard))
            assert touched == (signal.SIGSEGV if host else None), target
        heap.free(p)
        heap.close()


# -- the CPU's regions ---------------------------------------------------------------------------

def _unicorn_regions(cpu: EmulatedCpu) -> list[tuple[int, int, int]]:
    return sorted((lo, hi + 1, perms) for lo, hi, perms in cpu.uc.mem_regions() if cpu._lo <= lo < cpu._hi)


def _hooked(cpu: EmulatedCpu) -> list[tuple[int, int]]:
    """The ranges of the window the CPU's fault hooks cover."""
    return sorted((start, end) for start, (end, _) in cpu._guards.items())


def _no_access(cpu: EmulatedCpu) -> list[tuple[int, int]]:
    """The regions of the window that cannot be read or written."""
    rw = uc_const.UC_PROT_READ | uc_const.UC_PROT_WRITE
    return [(start, end) for start, end, perms in cpu.regions() if perms & rw != rw]


def test_guard_pages_are_regions_of_their_own_in_small_pieces():
    """A guard page deep in the window (in a region of hundreds of MiB) ends up a region of its own
    with no access, the pieces next to it at most GRAIN bytes; the CPU's record of its regions is
    Unicorn's own."""
    heap = Heap(target="riscv32", capture_stacks=False)
    cpu = EmulatedCpu(heap)
    biggest = max(cpu.regions(), key=lambda r: r[1] - r[0])
    assert biggest[1] - biggest[0] > 64 * GRAIN
    page = biggest[0] + (biggest[1] - biggest[0]) // 3 & -PAGE
    heap.space.protect(page - heap.space.base, PAGE, False, False)
    regions = cpu.regions()
    assert regions == _unicorn_regions(cpu)
    i = [r[0] for r in regions].index(page)
    assert regions[i] == (page, page + PAGE, 0)
    assert regions[i - 1][1] - regions[i - 1][0] <= GRAIN and regions[i + 1][1] - regions[i + 1][0] <= GRAIN
    # The region was halved (one sibling per halving) down to GRAIN, and that piece cut in three.
    pieces = [r for r in regions if biggest[0] <= r[0] < biggest[1]]
    assert len(pieces) <= ((biggest[1] - biggest[0]) // GRAIN).bit_length() + 3, pieces
    # Invalid accesses are hooked where they can happen only: over the regions that cannot be read
    # or written (this page, the CPU stack's guards) and outside the window, never over memory the
    # kernels read and write (a hook there keeps its stores on Unicorn's slow path).
    assert _hooked(cpu) == _no_access(cpu) and (page, page + PAGE) in _hooked(cpu)
    heap.space.protect(page - heap.space.base, PAGE, True)
    # Accessible again (read/write: heap memory is not executable), still its own region, unhooked.
    assert cpu.regions()[i] == (page, page + PAGE, uc_const.UC_PROT_READ | uc_const.UC_PROT_WRITE)
    assert _hooked(cpu) == _no_access(cpu) and (page, page + PAGE) not in _hooked(cpu)
    count = len(cpu.regions())
    heap.space.protect(page - heap.space.base, PAGE, False, False)  # again: a permission change only
    assert len(cpu.regions()) == count and cpu.regions() == _unicorn_regions(cpu)
    assert _hooked(cpu) == _no_access(cpu) and (page, page + PAGE) in _hooked(cpu)
    cpu.close()
    heap.close()


def _store_word() -> bytes:
    return struct.pack("<II", 0x00B52023, 0x00008067)  # sw a1, 0(a0); ret (riscv32)


def test_guard_pages_made_before_the_cpu_are_honoured_and_follow_free_and_reuse():
    """Emulator-only guard pages made before the CPU existed stop its stores; a freed guarded block's
    chunk keeps its guards in the pool and its reuse is guarded as before; past GUARD_POOL chunks
    of one size the rest lose their guards, in the CPU too, and ordinary blocks there are plain
    memory to it. Run in a child: a page the host protected behind the emulator's back would kill it."""
    code = textwrap.dedent(f"""
        import json, struct
        from ireeabi.hal.local.emulated_cpu import EmulatedCpu, EmulatedFault
        from ireeabi.hal.local.emulated_executable import KernelEmulator
        from ireeabi.base.heap import GUARD_POOL, tracked_heap
        out = {{}}
        with tracked_heap(target="riscv32", quarantine=0) as heap:
            KernelEmulator(heap)  # marks the heap: emulated kernels
            def guarded():
                with heap.guarded_allocations():
                    return heap.malloc(4096, align=64)
            early = guarded()
            cpu = EmulatedCpu(heap)
            store = heap.malloc(4096, align=4096)  # a page of code, made executable as a loader does
            heap.write(store, {_store_word()!r})
            cpu.protect(store, 4096, "r-x")
            def faults(address):
                try:
                    cpu.call(store, [address, 0x5A5A5A5A], max_instructions=100)
                    return None
                except EmulatedFault as e:
                    return [e.kind, e.address - address]
            front = heap.space.base + heap.allocation(early).chunk  # the chunk's first page
            out["early"] = [faults(early + 4092), faults(early + 4096), faults(front + 4092)]
            heap.free(early)
            again = guarded()
            out["reused"] = [again == early, faults(again + 4096)]
            blocks = [again] + [guarded() for _ in range(GUARD_POOL)]
            last = heap.allocation(blocks[-1]).chunk
            for b in blocks:
                heap.free(b)
            out["pooled"] = sum(size for _, size in heap.space.protected()) // 4096
            # The chunk past the pool went back as ordinary memory: a block of its size takes it,
            # former guard pages included, and it is plain memory to the CPU.
            big = heap.malloc(69632 - 64)
            out["plain"] = [heap.allocation(big).chunk == last,
                            [faults(big + i) for i in range(0, 69632 - 64, 4092)].count(None)]
            heap.free(big)
            cpu.protect(store, 4096, "rw-")
            heap.free(store)
            cpu.close()
        print(json.dumps(out))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["early"] == [None, ["write to protected memory", 0], ["write to protected memory", 0]]
    assert out["reused"] == [True, ["write to protected memory", 0]]
    # GUARD_POOL chunks keep both guard pages, as does the CPU's stack; the last chunk has none.
    assert out["pooled"] == 2 * heap_module.GUARD_POOL + 2
    assert out["plain"] == [True, len(range(0, 69632 - 64, 4092))]


def test_regions_stay_bounded_while_buffers_come_and_go():
    """Rounds of three guarded buffers allocated and freed (quarantine on): the emulator's regions
    stop growing once the pool serves the allocations (GUARD_HELD bounds the held guarded chunks),
    and no guarded chunk outlives its use in the accounting."""
    heap = Heap(target="aarch64", capture_stacks=False)
    emulated_executable.KernelEmulator(heap)
    cpu = EmulatedCpu(heap)
    counts = []
    for _ in range(120):
        with heap.guarded_allocations():
            blocks = [heap.malloc(16384, align=64) for _ in range(3)]
        for b in blocks:
            heap.free(b)
        counts.append(len(cpu.regions()))
    assert counts[-1] == counts[60]  # no new region in the last 60 rounds
    # Each guarded chunk ever made: at most two guard pages, each with a piece split off beside it.
    chunks = heap_module.GUARD_HELD + heap_module.GUARD_POOL + 3
    assert counts[-1] - counts[0] <= 4 * chunks + 8, counts  # (+ halvings of a 16 MiB region)
    cpu.close()  # frees its stack
    assert heap.live_bytes == 0 and not heap.leaks()
    heap.close()


# -- iree-compile's kernels past their bindings ---------------------------------------------------

@pytest.fixture(scope="module")
def add_source(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("emulated_guards") / "add1k.mlir"
    src.write_text(ADD)
    return src


def _dispatch_info(src: Path, arch: str) -> dict:
    flags = TRIPLES[arch]
    vmfb = iree_tools.compile_mlir(src, extra_flags=flags)
    ir = subprocess.run([iree_tools.find_tool("iree-compile"), str(src), *iree_tools.compile_flags("inline-dynamic"),
                         *flags, "--compile-to=vm"], capture_output=True, text=True, check=True).stdout
    (d,) = vm_ir.dispatches(ir, "add", [None, None])
    return {"vmfb": str(vmfb), "export": d.export_name, "workgroups": list(d.workgroups),
            "constants": d.constants, "lengths": [length for _, _, length in d.bindings]}


CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from ireeabi.modules.hal.runtime import HalRuntime
    from ireeabi.vm.bytecode import module_file as mf
    from ireeabi.base.heap import tracked_heap
    from ireeabi.base.status import IreeFaultError, StatusError
    from support.hal_session import Session

    info, target, short, emulate = json.loads(sys.argv[1])
    module = mf.read_module(info["vmfb"])
    segments = [mf.rodata_bytes(s) for s in module.rodata_segments]
    class Library:
        elf = next(s for s in segments if s[:4] == b"\\x7fELF")
        format = next(s for s in segments if s.startswith(b"embedded-elf-")).decode()
    out = {}
    with tracked_heap(target=target) as heap:
        rt = HalRuntime(heap, emulate_kernels=emulate)
        s = Session(rt)
        try:
            vmb = rt.vm_buffers
            def buffers(lengths):
                # Allocated before the executable is loaded: before the emulated CPU exists.
                out = []
                for n in lengths:
                    _, storage = s.allocate(n)
                    vmb.as_numpy(storage.ptr, np.uint8)[:] = 0
                    out.append((storage, 0, n))
                return out
            right = buffers(info["lengths"])
            lengths = list(info["lengths"])
            lengths[short] -= 64  # one tile of 16 floats short: the kernel's first access past it faults
            wrong = buffers(lengths)
            for i, value in ((0, 1.5), (1, 2.25)):
                for bindings in (right, wrong):
                    vmb.as_numpy(bindings[i][0].ptr, np.float32)[:] = np.arange(bindings[i][2] // 4) * value
            exe = s.load(Library)
            fid = s.function(exe, info["export"])
            x, y, z = info["workgroups"]
            s.call("hal_loader.executable.dispatch", exe, fid, x, y, z, info["constants"], right)
            a, b, c = (vmb.as_numpy(t[0].ptr, np.float32) for t in right)
            out["sums"] = bool(np.array_equal(c, a + b))
            try:
                s.call("hal_loader.executable.dispatch", exe, fid, x, y, z, info["constants"], wrong)
            except (StatusError, IreeFaultError) as e:
                out["status"] = [type(e).__name__, str(e)]
            try:
                s.call("hal_loader.executable.dispatch", exe, fid, x, y, z, info["constants"], right)
            except (StatusError, IreeFaultError) as e:
                out["after"] = str(e)
        finally:
            s.release_all()
            rt.close()
    print(json.dumps(out))
""")

FAULT = re.compile(r"kernel (\S+) faulted in workgroup \((\d+), (\d+), (\d+)\): (read of|write to) protected "
                   r"memory at pc 0x[0-9a-f]+ at address 0x([0-9a-f]+), (\d+) byte\(s\) past the end of "
                   r"binding (\d) \((\d+) bytes\); IREE's own runtime dies there \(nothing in it catches a "
                   r"kernel's fault\); the executable cannot be dispatched again")


@pytest.mark.parametrize("arch,short,access", [
    ("riscv32", 2, "write to"), ("riscv32", 0, "read of"),
    ("aarch64", 2, "write to"), ("aarch64", 1, "read of"),
    ("armv7", 2, "write to"),
    ("x86_64", 2, "write to"),  # the host's kernels emulated (--emulate-kernels): emulator-only guards
])
def test_a_kernel_past_its_binding_ends_in_the_status(add_source, arch, short, access):
    info = _dispatch_info(add_source, arch)
    emulate = arch == "x86_64"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps([info, arch, short, emulate])],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr  # no signal, and the tracked heap found no leak
    out = json.loads(proc.stdout)
    assert out["sums"] is True  # with whole bindings the kernel computes a + b
    code, message = out["status"]
    assert code == "IreeFaultError"  # not a status: IREE's process dies there
    m = FAULT.fullmatch(message)
    assert m, message
    export, x, y, z, kind, _, past, binding, length = m.groups()
    assert export == info["export"] and kind == access
    assert [int(x), int(y), int(z)] == [n - 1 for n in info["workgroups"]]  # the one with the tail
    assert int(past) == 0 and int(binding) == short and int(length) == info["lengths"][short] - 64
    assert "faulted" in out["after"]  # unusable from now on, as after a native fault
