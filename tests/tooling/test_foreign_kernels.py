"""Foreign kernels (issue 29): iree-compile's llvm-cpu kernels for riscv32, riscv64, armv7, aarch64
and i686 run in the runtime's emulated CPU (hal/local/emulated_executable.py), and its wasm32
kernels under wasmtime (hal/local/wasm_executable.py), on memory laid out for that target, through
the same hal_loader / `hal` module paths as host kernels.

Oracles nobody here wrote: iree-run-module on the x86_64 build of the same program (what the
program computes), IREE's own aarch64 iree-run-module under qemu-aarch64 on the aarch64 build (what
IREE prints on that machine), and the host kernel run natively (the emulator's differential).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import e2e_corpus as corpus
from support import iree_tools as tools
from ireeabi.tooling.check_compile import KERNEL_TARGET_FLAGS
from ireeabi.base.status import IreeFaultError, StatusCode, StatusError
from ireeabi.cli import main as cli_main
from ireeabi.cli.main import main
from ireeabi.tooling.program import Program, RunOptions
from ireeabi.vm.errors import VmStatusError
from ireeabi.hal.local.emulated_cpu import InstructionBudgetExceeded
from ireeabi.hal.local.executable_library import ExecutableError
from ireeabi.layouts.executable_library import DispatchLayout

# The kernel flags per triple are the library's (tooling/check_compile.py, which says what each needs;
# docs/programs.md says why).
FOREIGN_FLAGS = {t: flags for t, flags in KERNEL_TARGET_FLAGS.items() if t != "x86_64"}
RUNNING = ("riscv32", "riscv64", "armv7", "aarch64", "wasm32")  # i386: test_i386_fails_where_inspect_predicts

# Float results that really differ by architecture, each named with its program, function and case
# (the k-th case of that function in e2e_corpus.CASES), the targets it differs on, what may differ
# and why. Every other case on every target prints exactly what iree-run-module prints for x86_64:
# no case of the corpus differs by contraction or vectorized math on these five targets, in either
# execution model (the exact comparison asserts it). A listed case must really differ on the targets
# listed (else the entry is stale), and only in what it says.
FLOAT_DIFFERENCES = {
    ("elementwise", "mul_add", 1): (
        ("riscv32", "riscv64", "armv7", "aarch64"), "NaN sign",
        "row 1 is -NaN * 1 + -NaN and inf * -1 + inf: x86 (SSE) keeps a NaN operand's sign and its "
        "default NaN for the invalid -inf + inf is negative, so it prints -NAN -NAN; RISC-V returns its "
        "canonical NaN, positive, for both, and so does ARMv7's NEON, which runs in default-NaN mode "
        "(NAN NAN); AArch64 keeps the operand's sign but its default NaN is positive (-NAN NAN: "
        "test_aarch64_prints_what_iree_prints_on_aarch64 checks that text exactly against IREE's own "
        "aarch64 build). wasm32 is not listed: wasm leaves NaN signs to the machine, and wasmtime on "
        "this x86_64 host gives x86's"),
}
NAN_SIGN = "NaN sign"


def _cases():
    seen: dict[tuple[str, str], int] = {}
    for name, fn, inputs in corpus.CASES:
        k = seen[name, fn] = seen.get((name, fn), -1) + 1
        yield name, fn, inputs, k


def _compile(name: str, model: str, arch: str | None) -> Path:
    """The program's build for `arch` (None: the host's). A program whose host build is kernel-target
    free (corpus.kernel_target_free: io_types) is that build for every arch: each arch's own is the
    same bytes (test_a_target_free_build_is_every_archs, and test_oracle_differential's premise test)."""
    host = tools.compile_mlir(corpus.E2E / f"{name}.mlir", model=model, extra_flags=corpus.F64)
    if arch is None or corpus.kernel_target_free(host):
        return host
    return tools.compile_mlir(corpus.E2E / f"{name}.mlir", model=model, extra_flags=corpus.F64 + FOREIGN_FLAGS[arch])


@pytest.mark.parametrize("model", ["inline-dynamic", "llvm-cpu"])
def test_a_target_free_build_is_every_archs(model):
    """_compile's premise on wasm32 (no ELF at all) and riscv32: the corpus's kernel-target-free
    programs (io_types) build to the same bytes for them as for the host; a program with kernels
    does not."""
    names = sorted({name for name, _, _ in corpus.CASES})
    free = [n for n in names if corpus.kernel_target_free(_compile(n, model, None))]
    assert free == ["io_types"], free
    src = corpus.E2E / "io_types.mlir"
    for arch in ("wasm32", "riscv32"):
        own = tools.compile_mlir(src, model=model, extra_flags=corpus.F64 + FOREIGN_FLAGS[arch])
        assert own.read_bytes() == _compile("io_types", model, None).read_bytes(), (model, arch)
    assert _compile("elementwise", model, "wasm32").read_bytes() != _compile("elementwise", model, None).read_bytes()


@pytest.fixture
def programs():
    """The test's Programs, opened once per (program, model, target, options) and closed when the
    test ends (each holds an emulated CPU and its memory: ~40 MiB a test, no Program is shared
    between tests)."""
    opened: dict = {}

    def get(name: str, model: str, arch: str, **kw) -> Program:
        key = (name, model, arch, tuple(sorted(kw.items())))
        if key not in opened:
            target = "x86_64" if arch == "x86_64" else arch
            opened[key] = Program(_compile(name, model, None if arch == "x86_64" else arch),
                                  RunOptions(target=target, **kw))
        return opened[key]
    yield get
    for p in opened.values():
        p.close()


def _same(expected: str, got: str, case: tuple, arch: str) -> None:
    listed = FLOAT_DIFFERENCES.get(case)
    if listed is None or arch not in listed[0]:
        assert got == expected, (case, arch)
        return
    targets, what, why = listed
    assert got != expected, f"{case} on {arch} is listed as differing ({what}: {why}) but prints what x86_64 prints"
    assert what == NAN_SIGN and got.replace("-NAN", "NAN") == expected.replace("-NAN", "NAN"), \
        f"{case} on {arch} differs in more than its {what} ({why})"


@pytest.mark.parametrize("arch", RUNNING)
def test_inline_dynamic_corpus_prints_what_iree_prints(arch, programs):
    for name, fn, inputs, k in _cases():
        expected = corpus.iree_output(_compile(name, "inline-dynamic", None), fn, tuple(inputs))
        got = corpus.ours(programs(name, "inline-dynamic", arch), fn, list(inputs))
        _same(expected, got, (name, fn, k), arch)


@pytest.mark.parametrize("arch", RUNNING)
def test_default_model_corpus_prints_what_iree_prints(arch, programs):
    """The full `hal` module's command buffers dispatch foreign kernels too: every case of the
    corpus. Time, measured on this 2-core machine while loaded: the builds dominate (12 programs
    for the host and each triple, about 1 s each, once per session); the 23 cases past each
    function's first add about 5.5 s of iree-run-module on the x86_64 build (once: its output is
    cached across targets) and under 0.1 s of ireeabi per target."""
    for name, fn, inputs, k in _cases():
        expected = corpus.iree_output(_compile(name, "llvm-cpu", None), fn, tuple(inputs))
        got = corpus.ours(programs(name, "llvm-cpu", arch), fn, list(inputs))
        _same(expected, got, (name, fn, k), arch)


# --------------------------------------------------------------------------------------------------
# IREE itself on aarch64: the aarch64 wheel's iree-run-module under qemu-aarch64.

@pytest.fixture(scope="module")
def aarch64_iree(tmp_path_factory):
    return tools.aarch64_iree_run_module()


@pytest.mark.parametrize("model", ["inline-dynamic", "llvm-cpu"])
def test_aarch64_prints_what_iree_prints_on_aarch64(model, programs, aarch64_iree):
    """Every case, each model (a qemu-aarch64 run of IREE's tool takes about 0.2 s here: some 8 s a
    model besides the builds)."""
    for name, fn, inputs, k in _cases():
        path = _compile(name, model, "aarch64")
        proc = tools.run_tool([*aarch64_iree, tools.RUN_DEVICE, f"--module={path}", f"--function={fn}",
                               *(f"--input={i}" for i in inputs)])
        if proc.returncode:  # iree-run-module refuses the input: so must ireeabi
            with pytest.raises(Exception):
                corpus.ours(programs(name, model, "aarch64"), fn, list(inputs))
            continue
        assert corpus.ours(programs(name, model, "aarch64"), fn, list(inputs)) == proc.stdout, (name, fn, k)


# --------------------------------------------------------------------------------------------------
# The emulator against the host CPU: the same x86_64 kernels natively and emulated.

# Blocks only the emulated run has (each loaded executable's image and environment, the CPU's
# stack): natively the host's loader maps the kernel library outside the heap, the C helper holds
# the environment_v0 and the kernels run on the thread's own stack. Nothing in the native run is
# missing from the emulated one. Every other block, live or freed and still remembered by the
# quarantine, comes in the same order with the same size and tag in both runs.
EMULATED_ONLY = ("ELF image", "environment_v0", "emulated CPU stack")


class _Memory:
    """A heap's blocks (live, and freed ones the quarantine remembers: stale pointers in live memory
    point there) as a differential reads them: which blocks a word may point into, at what offset."""

    def __init__(self, program: Program) -> None:
        self.heap = program.heap
        blocks = self.heap.blocks(freed=True)
        self.only = [b for b in blocks if b.tag in EMULATED_ONLY and b.end != -1]  # live ones
        self.blocks = [b for b in blocks if b.tag not in EMULATED_ONLY]
        self.keys = [(b.tag, b.size, b.end == -1) for b in self.blocks]
        wg = program.machine.view(DispatchLayout)
        self.wg_size, self.wg_align = wg.wg_size, wg.wg_align
        # Where offsets within each block count from: its start, but for a workgroup_state_v0 block the
        # struct, at the block's first wg_align-aligned address (the runtimes over-allocate and align
        # up: the struct's offset in its block depends on where the block landed).
        self.origins = np.array([self.origin(b) for b in self.blocks], dtype=np.uint64)
        self.starts = np.array([b.address for b in self.blocks], dtype=np.uint64)
        self.ends = np.array([b.address + b.size for b in self.blocks], dtype=np.uint64)

    def origin(self, block) -> int:
        return -(-block.address // self.wg_align) * self.wg_align if block.tag == "workgroup_state_v0" \
            else block.address

    def targets(self, word: int) -> set:
        """(block index, offset) of every block `word` points into or one past; and (name,) of the
        registered function it is (each heap has its own C callbacks for the runtime's functions)."""
        w = np.uint64(word)
        out: set = {(int(i), word - int(self.origins[i]))
                    for i in np.nonzero((self.starts <= w) & (w <= self.ends))[0]}
        fn = self.heap.functions.find(word)
        if fn is not None:
            out.add((fn.name,))
        return out

    def contents(self, block) -> bytes:
        """A live block's bytes, a workgroup_state_v0 block's from its struct on (the bytes before the
        struct, never written, must be zero)."""
        data = self.heap.read(block.address, block.size)
        if block.tag != "workgroup_state_v0":
            return data
        skip = self.origin(block) - block.address
        assert data[:skip] == bytes(skip) and data[skip + self.wg_size:] == bytes(block.size - skip - self.wg_size)
        return data[skip:skip + self.wg_size]


def _memory_differences(native: Program, emulated: Program) -> tuple[list[str], list[str]]:
    """(the emulated run's own blocks' tags, the differences between the two heaps' memory): both
    heaps' blocks pair up in order; every live pair holds the same bytes, except where a pointer
    sits: a word may differ only where the two words point at the same offset of paired blocks,
    or are the same registered function (the two heaps lie at different addresses)."""
    a, b = _Memory(native), _Memory(emulated)
    assert not a.only, [x.tag for x in a.only]
    if a.keys != b.keys:
        return [x.tag for x in b.only], ["the block lists differ: " + "; ".join(
            f"#{i}: {x} natively, {y} emulated" for i, (x, y) in enumerate(zip(a.keys + [None] * len(b.keys),
                                                                                  b.keys + [None] * len(a.keys)))
            if x != y)]
    word = native.machine.pointer_size
    bad: list[str] = []
    for x, y in zip(a.blocks, b.blocks):
        if x.end == -1:  # freed: its memory may already belong to another block
            continue
        p, q = a.contents(x), b.contents(y)
        if p == q:
            continue
        covered = 0
        for i in np.nonzero(np.frombuffer(p, np.uint8) != np.frombuffer(q, np.uint8))[0].tolist():
            if i < covered:
                continue
            # A pointer covering byte i: aligned first (refs in packed argument frames may not be).
            for j in sorted(range(max(0, i - word + 1), min(i, len(p) - word) + 1), key=lambda j: (j % word, -j)):
                if a.targets(int.from_bytes(p[j:j + word], "little")) & \
                        b.targets(int.from_bytes(q[j:j + word], "little")):
                    covered = j + word
                    break
            else:
                bad.append(f"{x.tag} ({x.size} B) byte {i}: {p[i:i + word].hex()} natively, "
                           f"{q[i:i + word].hex()} emulated")
                covered = i + 1
    return [x.tag for x in b.only], bad


@pytest.mark.parametrize("model", ["inline-dynamic", "llvm-cpu"])
def test_host_kernels_emulated_give_the_same_bytes(model, programs):
    """The reference switch (--emulate-kernels): the same x86_64 kernels natively and under Unicorn
    give the same results (bit for bit, NaN signs included: the emulated CPU follows SSE's NaN
    rules), the same statuses and, after every call, the same bytes in every block of the heap (see
    `_memory_differences`), over the whole corpus. The memory comparison costs under 0.1 s a model
    here (some 30-40 blocks a call, most of them equal at once)."""
    for name, fn, inputs, k in _cases():
        native = programs(name, model, "x86_64")
        emulated = programs(name, model, "x86_64", emulate_kernels=True)
        chars, _ = native.signature(fn)
        values = [corpus.parse_input(text, char) for text, char in zip(inputs, chars)]
        try:
            a = native.call_results(fn, *values)
        except VmStatusError as e:
            with pytest.raises(VmStatusError) as raised:
                emulated.call(fn, *values)
            assert str(raised.value) == str(e)
        else:
            b = emulated.call_results(fn, *values)
            assert len(a) == len(b)
            for x, y in zip(a, b):
                if isinstance(x, np.ndarray):
                    assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), (name, fn, k)
                else:
                    assert repr(x) == repr(y), (name, fn, k)
        only, bad = _memory_differences(native, emulated)
        assert bad == [], (name, fn, k)
        # One image and one environment per executable the program loaded (natively a hal.executable
        # block each), and the CPU's stack once there is one.
        loaded = sum(x.tag.startswith("hal.executable ") for x in native.heap.blocks())
        assert sorted(only) == sorted(["ELF image", "environment_v0"] * loaded
                                      + ["emulated CPU stack"] * (loaded > 0)), (name, fn, k)


def test_the_memory_differential_sees_a_byte_and_a_pointer(programs):
    """`_memory_differences` can fail: one byte changed, and a pointer to the same offset of each
    heap's own block moved by 8 bytes in one (in the scratch stack above its top, which no call reads)."""
    native = programs("elementwise", "inline-dynamic", "x86_64")
    emulated = programs("elementwise", "inline-dynamic", "x86_64", emulate_kernels=True)
    a = np.ones((3, 4), np.float32)
    native.call("mul_add", a, a)
    emulated.call("mul_add", a, a)
    assert _memory_differences(native, emulated)[1] == []
    # Heap.blocks: the heap's own blocks too, and with freed=True the call's freed buffers.
    live, remembered = native.heap.blocks(), native.heap.blocks(freed=True)
    assert {"scratch stack", "workgroup_state_v0"} <= {x.tag for x in live if x.internal}
    assert set(live) < set(remembered) and all(x.end == -1 for x in set(remembered) - set(live))
    assert [x.serial for x in remembered] == sorted(x.serial for x in remembered)
    stack = next(x for x in emulated.heap.blocks() if x.tag == "scratch stack")
    end = stack.address + stack.size
    saved = emulated.heap.read(end - 16, 16)
    native_stack = next(x for x in native.heap.blocks() if x.tag == "scratch stack")
    assert native.heap.read(native_stack.address + native_stack.size - 16, 16) == saved
    try:
        emulated.heap.write(end - 1, bytes([saved[-1] ^ 1]))
        assert _memory_differences(native, emulated)[1] == [
            f"scratch stack ({stack.size} B) byte {stack.size - 1}: {saved[-1:].hex()} natively, "
            f"{bytes([saved[-1] ^ 1]).hex()} emulated"]
        emulated.heap.write(end - 1, saved[-1:])
        # The same pointer in both (each heap's own scratch stack), then one block further on.
        native.heap.write_word(native_stack.address + native_stack.size - 16, native_stack.address + 8)
        emulated.heap.write_word(end - 16, stack.address + 8)
        assert _memory_differences(native, emulated)[1] == []
        emulated.heap.write_word(end - 16, stack.address + 16)
        assert _memory_differences(native, emulated)[1][0].startswith(f"scratch stack ({stack.size} B) byte {stack.size - 16}:")
    finally:
        emulated.heap.write(end - 16, saved)
        native.heap.write(native_stack.address + native_stack.size - 16, saved)


# --------------------------------------------------------------------------------------------------
# IREE #24827 on the targets it is about, and the data models' own hazards.

def _run_cli(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err


ADD16 = ["--function", "add", "--input=16xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "--input=16xf32=0.5"]


@pytest.mark.parametrize("arch", ["riscv32", "armv7", "wasm32"])
def test_legacy_loader_misreads_a_real_32_bit_kernel_dispatch(arch, capsys):
    """The pre-fix shim (module.c iree_vm_shim_dispatch_v) reads the constant count at
    sizeof(iree_vm_abi_rIiii_t) = 32 on these targets, where the VM packed the binding count (3),
    takes 3 constants from bytes 36..47 and the binding count from byte 48, the low half of
    bindings[0]'s offset (0); its bounds check passes and the kernel gets 0 bindings where it reads 3,
    from past the arrays IREE allocas: refused (exit 1), saying so. The fixed shim runs it."""
    path = tools.compile_mlir(Path(tools.__file__).parents[1] / "programs" / "add16.mlir",
                              model="inline-dynamic", extra_flags=FOREIGN_FLAGS[arch])
    code, out = _run_cli(["run", str(path), "--target", arch, "--legacy-loader", *ADD16], capsys)
    text = " ".join(out.split())
    assert code == 1 and "hal_loader.executable.dispatch: the pre-fix dispatch shim reads constant_count 3 at " \
        "byte 32 (sizeof(iree_vm_abi_rIiii_t), where the VM packed the binding count) and binding_count 0 " \
        "at byte 48 (where the VM packed bindings[0].i1); IREE hands kernel " \
        "add_dispatch_0_elementwise_16_f32 0 of the 3 bindings it reads: the kernel loads " \
        "binding_ptrs[0..2] from IREE's stack, past the arrays IREE allocas, and dereferences them: " \
        "IREE's own runtime faults there" in text, out
    code, out = _run_cli(["run", str(path), "--target", arch, *ADD16], capsys)
    assert code == 0 and "16xf32=1.5 2.5 3.5" in out


@pytest.mark.parametrize("arch, where", [("riscv32", "in the emulated CPU"), ("wasm32", "under wasmtime")])
def test_a_foreign_build_on_another_target_names_where_it_runs(arch, where, capsys):
    """IREE's loader refuses the other target's kernels; the error says which --target runs them
    and in what."""
    path = tools.compile_mlir(Path(tools.__file__).parents[1] / "programs" / "add16.mlir",
                              model="inline-dynamic", extra_flags=FOREIGN_FLAGS[arch])
    code, out = _run_cli(["run", str(path), "--target", "armv7", *ADD16], capsys)
    assert code != 0 and f"it runs with --target {arch} ({where})" in out, out


def test_i386_fails_where_inspect_predicts(capsys):
    """On i386 hal_inline's buffer_view.assert shim reads a struct the VM packs differently; inspect
    says so before anything runs, and the run stops at that import, as for inline-static."""
    path = tools.compile_mlir(Path(tools.__file__).parents[1] / "programs" / "add16.mlir",
                              model="inline-dynamic", extra_flags=FOREIGN_FLAGS["i386"])
    code, out = _run_cli(["inspect", str(path), "--target", "i386", "--check-imports"], capsys)
    assert "BAD hal_inline.buffer_view.assert 0rriiCID_v: resolves, but IREE's layout rules disagree on i386" \
        in out, out
    code, out = _run_cli(["run", str(path), "--target", "i386", *ADD16], capsys)
    assert code != 0 and "signature mismatch" in out and "hal_inline.buffer_view.assert" in out
    # ... and says it is the hazard inspect predicts, naming the command.
    assert "this is the layout hazard `ireeabi inspect MODULE --check-imports --target i386` predicts " \
           "for hal_inline.buffer_view.assert" in " ".join(out.split()), out


def test_i386_vmvx_module_names_the_hazard_at_start(capsys):
    """A module of the default model (vmvx kernels) fails on i386 in its initializer, before the
    call: hal.device.query.i64's result shim `iI`; the error names the hazard inspect predicts."""
    path = tools.compile_mlir(Path(tools.__file__).parents[1] / "programs" / "add16.mlir", model="vmvx")
    code, out = _run_cli(["inspect", str(path), "--target", "i386", "--check-imports"], capsys)
    assert "BAD hal.device.query.i64 0rrr_iI: resolves, but IREE's layout rules disagree on i386" in out
    code, out = _run_cli(["run", str(path), "--target", "i386", *ADD16], capsys)
    text = " ".join(out.split())
    assert code == 1 and "signature mismatch; while calling import hal.device.query.i64" in text
    assert "this is the layout hazard `ireeabi inspect MODULE --check-imports --target i386` predicts " \
           "for hal.device.query.i64 (shim-length)" in text, out


# --------------------------------------------------------------------------------------------------
# Faults and runaways end as statuses.

def test_a_runaway_budget_reaches_the_kernel():
    """`max_steps` bounds each emulated kernel call in target instructions: a budget too small for
    one workgroup of add16 ends the call cleanly."""
    path = tools.compile_mlir(Path(tools.__file__).parents[1] / "programs" / "add16.mlir",
                              model="inline-dynamic", extra_flags=FOREIGN_FLAGS["riscv32"])
    a = np.arange(16, dtype=np.float32)
    with Program(path, RunOptions(target="riscv32", max_steps=50)) as p:  # the VM's own steps stay under 50
        with pytest.raises(VmStatusError) as raised:
            p.call("add", a, a)
    assert raised.value.code.name == "DEADLINE_EXCEEDED"
    assert "more than 50 instructions" in str(raised.value) and "hal_loader.executable.dispatch" in str(raised.value)
    with Program(path, RunOptions(target="riscv32", max_steps=10**6)) as p:
        out = p.call("add", a, a)
        assert out.tobytes() == (a + a).tobytes()


def _causes(error: BaseException) -> list[BaseException]:
    chain = [error]
    while chain[-1].__cause__ is not None:
        chain.append(chain[-1].__cause__)
    return chain


def test_a_kernel_fault_keeps_its_type_on_its_way_to_the_cli(capsys, monkeypatch):
    """A kernel's fault is no status in IREE (its own runtime dies there): ireeabi refuses with an
    IreeFaultError naming the kernel, which the VM locates at the bytecode call that led there
    (function and pc) without changing its type, and that error is what the command line reports.
    An emulated kernel's own refusal (its instruction budget) is its library's ExecutableError, a
    StatusError with the StatusCode it carries, passed on as it is."""
    src = Path(tools.__file__).parents[1] / "programs" / "exp16.mlir"
    arm = tools.compile_mlir(src, model="inline-dynamic", extra_flags=FOREIGN_FLAGS["armv7"])
    reported: list[BaseException] = []
    lines = cli_main.error_lines
    monkeypatch.setattr(cli_main, "error_lines", lambda e: reported.append(e) or lines(e))
    code, out = _run_cli(["run", str(arm), "--target", "armv7", "--function", "expf", "--input=16xf32=1"], capsys)
    assert code == 1 and len(reported) == 1, out
    chain = _causes(reported[0])
    assert [type(e) for e in chain] == [IreeFaultError], chain
    fault = chain[0]
    assert "kernel expf_dispatch_0" in str(fault) and "faulted" in str(fault)
    assert fault.where is not None and fault.where.startswith("in expf at pc 0x"), fault.where
    assert f"({fault.where})" in " ".join(out.split())

    add = tools.compile_mlir(Path(tools.__file__).parents[1] / "programs" / "add16.mlir", model="inline-dynamic",
                             extra_flags=FOREIGN_FLAGS["riscv32"])
    a = np.arange(16, dtype=np.float32)
    with Program(add, RunOptions(target="riscv32", max_steps=50)) as p, pytest.raises(VmStatusError) as raised:
        p.call("add", a, a)
    chain = _causes(raised.value)
    assert [type(e) for e in chain] == [VmStatusError, InstructionBudgetExceeded], chain
    assert issubclass(InstructionBudgetExceeded, ExecutableError) and issubclass(ExecutableError, StatusError)
    assert chain[0].code == chain[1].code == StatusCode.DEADLINE_EXCEEDED


def test_armv7_exp_kernels_as_compiled_fault_cleanly(capsys):
    """iree-compile 3.13's armv7 kernels that expand exp branch (`bl`) to the end of .text and run
    into what follows it: broken as compiled. The run ends with the fault as an error (kernel,
    workgroup, address; IREE's own runtime would die there), never a signal; the riscv32 build of the same program prints what
    iree-run-module prints for x86_64."""
    src = Path(tools.__file__).parents[1] / "programs" / "exp16.mlir"
    args = ["--function", "expf", "--input=16xf32=1"]
    arm = tools.compile_mlir(src, model="inline-dynamic", extra_flags=FOREIGN_FLAGS["armv7"])
    code, out = _run_cli(["run", str(arm), "--target", "armv7", *args], capsys)
    assert code == 1 and "kernel expf_dispatch_0" in out and "faulted" in out, out
    assert "IREE's own runtime dies there" in " ".join(out.split())
    assert "the executable cannot be dispatched again" in " ".join(out.split())
    expected = tools.run_module(tools.compile_mlir(src, model="inline-dynamic"), "expf", ["16xf32=1"])
    rv32 = tools.compile_mlir(src, model="inline-dynamic", extra_flags=FOREIGN_FLAGS["riscv32"])
    code, out = _run_cli(["run", str(rv32), "--target", "riscv32", *args], capsys)
    assert code == 0 and out == expected


# --------------------------------------------------------------------------------------------------
# The emulated CPU's memory layout keeps guest stores on Unicorn's fast path.

@pytest.mark.parametrize("arch", ["aarch64", "armv7", "riscv64"])
def test_no_page_holds_both_kernel_text_and_data_the_kernel_writes(arch, programs):
    """QEMU (Unicorn 2.1's) takes a store's fast path only on a page whose TLB entry cannot execute:
    a store to a page that may hold translated code goes through its slow path (notdirty_write, a
    look for translated code on the page: half of riscv64's emulated time when the heap's window
    was mapped executable). So the pages a kernel writes (its stack, the dispatch's buffers) are
    never executable in the emulated CPU, whose TLB fill makes data pages' entries read-write
    only; its executable pages are the library's text alone. Each store of a dispatch is recorded
    (a write hook, for this call only) and its page checked against the executable regions."""
    import unicorn

    p = programs("matmul", "llvm-cpu", arch)  # the corpus's default-model build (no compile of its own)
    a, b = np.full((4, 8), 1.5, np.float32), np.full((8, 3), 2.0, np.float32)
    p.call("matmul", a, b)  # the library loaded, its text translated
    cpu = p.runtime.runners.elf.cpu()
    assert not cpu.reference and cpu._code_pages is not None  # the TLB fill, not the MMU's
    assert cpu._code_pages.data_perms & unicorn.UC_PROT_EXEC == 0
    written: set[int] = set()
    hook = cpu.uc.hook_add(unicorn.UC_HOOK_MEM_WRITE,
                           lambda uc, access, address, size, value, data: written.add(address // 4096))
    try:
        out = p.call("matmul", a, b)
    finally:
        cpu.uc.hook_del(hook)
    code = [(lo // 4096, -(-hi // 4096)) for lo, hi, perms in cpu.regions() if perms & unicorn.UC_PROT_EXEC]
    stack = range(cpu._stack // 4096, -(-(cpu._stack + cpu._stack_size) // 4096))
    assert out.tobytes() == (a @ b).tobytes()  # 8 exact products of 1.5 and 2 per element
    assert code and any(page in stack for page in written) and any(page not in stack for page in written)
    assert not [hex(page * 4096) for page in written if any(lo <= page < hi for lo, hi in code)]
