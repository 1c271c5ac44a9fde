"""Generated code can be read (abi/generated.py): a traceback through a compiled block, a loop region,
an import call site, a planned call and a shim on its frame shows the generated line; the dump
switch writes what runs; linecache holds each function's text under its code's filename."""
from __future__ import annotations

import inspect
import linecache
import re
import traceback
from pathlib import Path

import pytest

from ireeabi.abi.generated import DUMP_VARIABLE
from ireeabi.vm.bytecode import Context, NativeImports, VmStatusError, VmTrapError
from ireeabi.base.heap import Heap
from ireeabi.vm.native_module import Export, NativeModule
from ireeabi.vm.shims import CallContext
from ireeabi.base.status import StatusCode, StatusError
from test_interpreter import host


def _generated_frames(exc: BaseException) -> list[tuple[str, int, str]]:
    """(filename, line, function) of every generated frame of the tracebacks a formatted traceback
    shows (the exception's, then its cause or its unsuppressed context)."""
    out, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            name = frame.f_code.co_filename
            if name.startswith("<") and re.search(r" #\d+>$", name):
                out.append((name, lineno, frame.f_code.co_name))
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return out


def _shown_kinds(exc: BaseException, dump: Path) -> set[str]:
    """The generators whose lines the formatted traceback shows; each shown line is the line of
    the dumped text and of linecache's at that position."""
    text = "".join(traceback.format_exception(exc))
    kinds = set()
    for name, lineno, function in _generated_frames(exc):
        number = int(re.search(r" #(\d+)>$", name)[1])
        [path] = dump.glob(f"*-{number:06d}.py")
        line = path.read_text(encoding="utf-8").splitlines()[lineno - 1]
        assert linecache.getline(name, lineno).rstrip("\n") == line
        assert f'File "{name}", line {lineno}, in {function}\n    {line.strip()}\n' in text
        kinds.add(path.name.rsplit("-", 1)[0])
    return kinds


@pytest.fixture
def dump(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv(DUMP_VARIABLE, str(tmp_path))
    return tmp_path


def test_a_trap_in_a_compiled_block_shows_the_block_line(dump):
    with Context(host("divrem.mlir")) as ctx:
        with pytest.raises(VmTrapError, match="division by zero") as info:
            ctx.invoke("div_i32", 1, 0)
    assert "block" in _shown_kinds(info.value, dump)
    assert any("@0 #" in name for name, _, _ in _generated_frames(info.value))  # the block, not a region


def test_an_error_in_a_loop_region_shows_the_region_line(dump):
    with Context(host("loops.vm.mlir")) as ctx:
        with pytest.raises(VmStatusError, match="out-of-bounds") as info:
            ctx.invoke("oob", 9)
    assert "block" in _shown_kinds(info.value, dump)
    assert any("locals region" in name for name, _, _ in _generated_frames(info.value))


def test_a_failing_import_shows_the_call_site_line(dump):
    """The call site's error replaces the native status (the loop shows it without its cause: the
    planned call's and the shim's lines are the next test's)."""
    def fails(ctx: CallContext, *args: object) -> None:
        raise StatusError(StatusCode.DATA_LOSS, "refused")

    heap = Heap()
    mod = NativeModule(heap, "native", [Export("pairs", "0CiID_I", fails), Export("sum", "0iCiD_i", fails),
                                        Export("wrap", "0ri_r", fails)])
    try:
        with Context(host("variadic.vm.mlir"), NativeImports({"native": mod})) as ctx:
            with pytest.raises(VmStatusError, match="refused; while calling import native.sum") as info:
                ctx.invoke("f", 2, 3, 1)
    finally:
        mod.close()
    assert {"block", "import-call"} <= _shown_kinds(info.value, dump)


def test_a_planned_call_on_a_fixed_struct_shows_its_lines(dump, heap):
    def fails(ctx: CallContext, a: int, b: int) -> int:
        raise StatusError(StatusCode.ABORTED, f"no {a} {b}")

    mod = NativeModule(heap, "m", [Export("fails", "0ii_i", fails)])
    try:
        with pytest.raises(StatusError, match="no 1 2") as info:
            mod.planned(0)([1, 2])
    finally:
        mod.close()
    assert {"planned-call", "shim-on-frame"} <= _shown_kinds(info.value, dump)


def test_the_dumped_sources_are_what_runs(dump):
    with Context(host("loops.vm.mlir")) as ctx:
        runs = {entry[0] for fn in ctx.compile_all() for entry in fn.code if hasattr(entry[0], "is_block")}
        assert runs
        for run in runs:
            name = run.__code__.co_filename
            number = int(re.search(r" #(\d+)>$", name)[1])
            [path] = dump.glob(f"block-{number:06d}.py")
            text = path.read_text(encoding="utf-8")
            assert "".join(linecache.getlines(name)) == text == inspect.getsource(run)
            module = compile(text, name, "exec")
            assert [c for c in module.co_consts if inspect.iscode(c)] == [run.__code__]
