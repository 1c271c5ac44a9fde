"""abi/generated.py, the helper every fast-path generator compiles through: unique filenames, the
text in linecache (through checkcache, gone with its namespace), the dump switch."""
from __future__ import annotations

import gc
import inspect
import linecache
import marshal
import os
import re
import traceback
from pathlib import Path

import pytest

from ireeabi.abi import generated
from ireeabi.abi.generated import DUMP_VARIABLE, DumpError, define

SOURCE = "def f(a, b):\n    q = a // b\n    return q + 1\n"


def test_each_text_gets_its_own_filename_and_linecache_holds_the_text(monkeypatch):
    monkeypatch.delenv(DUMP_VARIABLE, raising=False)
    f = define(SOURCE, "test kind", "one", {}, "f")
    g = define(SOURCE.replace("+ 1", "+ 2"), "test kind", "one", {}, "f")
    assert (f(7, 2), g(7, 2)) == (4, 5)
    names = f.__code__.co_filename, g.__code__.co_filename
    assert names[0] != names[1]
    for name, text in zip(names, (SOURCE, SOURCE.replace("+ 1", "+ 2"))):
        assert re.fullmatch(r"<test kind one #\d+>", name)
        assert "".join(linecache.getlines(name)) == text
    linecache.checkcache()  # a filename that is no file: linecache keeps the entry it documents
    linecache.checkcache(names[0])
    assert "".join(linecache.getlines(names[0])) == SOURCE
    assert inspect.getsource(f) == SOURCE


def test_the_same_text_is_compiled_once(monkeypatch):
    """Two namespaces from one text (and kind and detail) run the same code; the other
    namespace's globals stay its own."""
    monkeypatch.delenv(DUMP_VARIABLE, raising=False)
    compiled = []
    real = generated.compile_source
    monkeypatch.setattr(generated, "compile_source", lambda *a: compiled.append(a) or real(*a))
    text = "def f():\n    return k\n"
    f = define(text, "test kind", "shared", {"k": 1}, "f")
    g = define(text, "test kind", "shared", {"k": 2}, "f")
    h = define(text, "test kind", "other detail", {"k": 3}, "f")
    assert (f(), g(), h()) == (1, 2, 3)
    assert f.__code__ is g.__code__ and h.__code__ is not f.__code__
    assert len(compiled) == 2


def test_the_memo_is_bounded_by_source_bytes(monkeypatch):
    monkeypatch.delenv(DUMP_VARIABLE, raising=False)
    generated.clear_memo()
    texts = [SOURCE.replace("+ 1", f"+ {i}") for i in range(10, 20)]  # of one length
    monkeypatch.setattr(generated, "MEMO_BYTES", 4 * len(texts[0]))
    names = [define(text, "test kind", "bounded", {}, "f").__code__.co_filename for text in texts]
    gc.collect()
    # the namespaces are gone: the memo's four most recent texts are all that stays
    assert [n in linecache.cache for n in names] == [False] * 6 + [True] * 4
    again = define(texts[0], "test kind", "bounded", {}, "f")
    assert again.__code__.co_filename not in names  # dropped, so compiled anew
    generated.clear_memo()


def test_a_traceback_through_generated_code_shows_its_line(monkeypatch):
    monkeypatch.delenv(DUMP_VARIABLE, raising=False)
    f = define(SOURCE, "test kind", "tb", {}, "f")
    with pytest.raises(ZeroDivisionError) as info:
        f(1, 0)
    text = "".join(traceback.format_exception(info.value))
    line = SOURCE.splitlines()[1].strip()  # traceback indents the stripped line by 4
    assert f'File "{f.__code__.co_filename}", line 2, in f\n    {line}\n' in text


def test_the_entry_goes_with_the_namespace_and_the_memo(monkeypatch):
    monkeypatch.delenv(DUMP_VARIABLE, raising=False)
    namespace: dict = {}
    f = define(SOURCE, "test kind", "gone", namespace, "f")
    other = define(SOURCE, "test kind", "gone", {}, "f")  # a second user of the same code
    name = f.__code__.co_filename
    assert name in linecache.cache
    generated.clear_memo()
    del f, namespace
    gc.collect()  # the function and its globals hold each other
    assert name in linecache.cache  # `other` still runs it
    assert other(4, 2) == 3
    del other
    gc.collect()
    assert name not in linecache.cache


def test_the_dump_switch_writes_what_was_compiled(monkeypatch, tmp_path):
    out = tmp_path / "made" / "here"  # made on demand
    monkeypatch.setenv(DUMP_VARIABLE, str(out))
    namespace: dict = {}
    f = define(SOURCE, "test kind", "dumped", namespace, "f")
    number = re.search(r"#(\d+)>$", f.__code__.co_filename)[1]
    files = list(out.iterdir())
    assert [p.name for p in files] == [f"test-kind-{int(number):06d}.py"]
    text = files[0].read_text(encoding="utf-8")
    assert text == SOURCE
    # what ran is that text compiled under the function's filename
    module = compile(text, f.__code__.co_filename, "exec")
    assert [c for c in module.co_consts if inspect.iscode(c)] == [f.__code__]


def test_an_unwritable_dump_directory_is_named(monkeypatch, tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv(DUMP_VARIABLE, str(blocker))
    before = set(linecache.cache)
    with pytest.raises(DumpError, match=re.escape(repr(str(blocker)))):
        define(SOURCE, "test kind", "refused", {}, "f")
    assert not {n for n in set(linecache.cache) - before if n.startswith("<test kind refused")}
    assert generated.dump_directory() == blocker


# -- the disk cache: code compiled once per install, not per process --------------------------------

NESTED = "def outer(n):\n    def inner(k):\n        return [k * i for i in range(n)]\n    return inner(2)\n"


@pytest.fixture
def counted(monkeypatch):
    """The `compile()` calls generated.py makes from here on (a list of their filenames), the
    memo emptied so that a text is looked up in the disk cache again."""
    monkeypatch.delenv(DUMP_VARIABLE, raising=False)
    calls: list[str] = []
    real = generated._compile
    monkeypatch.setattr(generated, "_compile", lambda source, filename: calls.append(filename)
                        or real(source, filename))
    generated.clear_memo()
    yield calls
    generated.clear_memo()


def test_a_text_compiled_once_is_read_back_from_the_disk_cache(monkeypatch, tmp_path, counted):
    monkeypatch.setenv(generated.CACHE_VARIABLE, str(tmp_path / "code"))
    first = define(NESTED, "test kind", "disk", {}, "outer")
    assert len(counted) == 1
    key = generated.cache_key(NESTED)
    assert (tmp_path / "code" / key[:2] / key).is_file()
    generated.clear_memo()  # as a new process: nothing compiled in memory
    again = define(NESTED, "test kind", "disk", {}, "outer")
    assert len(counted) == 1  # read, not compiled
    assert again(3) == first(3) == [0, 2, 4]
    # the code read back carries this text's new filename, its nested functions' too
    name = again.__code__.co_filename
    assert name != first.__code__.co_filename and re.fullmatch(r"<test kind disk #\d+>", name)
    nested = [c for c in again.__code__.co_consts if inspect.iscode(c)]
    assert nested and all(c.co_filename == name for c in nested)
    assert inspect.getsource(again) == NESTED
    with pytest.raises(TypeError) as info:
        again("x")
    assert f'File "{name}", line 3, in inner\n' in "".join(traceback.format_exception(info.value))


def test_a_second_process_compiles_no_generated_source(tmp_path):
    """A whole `ireeabi run` of a program: the first process compiles its generated texts (blocks,
    call sites, shims, codecs) and writes them; the next one, the same command, compiles none."""
    import subprocess
    import sys

    from support import iree_tools

    vmfb = iree_tools.compile_mlir(Path(__file__).parents[1] / "programs" / "add16.mlir", tmp_path,
                                   model="inline-dynamic")
    script = (
        "import sys\n"
        "from ireeabi.abi import generated\n"
        "calls = []\n"
        "real = generated._compile\n"
        "generated._compile = lambda s, f: calls.append(f) or real(s, f)\n"
        "from ireeabi.cli.__main__ import run\n"
        "status = run(sys.argv[1:])\n"
        "print('compiled', len(calls))\n"
        "sys.exit(status)\n")
    env = {**os.environ, generated.CACHE_VARIABLE: str(tmp_path / "code")}
    env.pop(DUMP_VARIABLE, None)
    counts = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", script, "run", str(vmfb), "--function=add",
                               "--input=16xf32=1.5", "--input=16xf32=2"],
                              capture_output=True, text=True, timeout=600, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "16xf32=3.5 3.5" in proc.stdout
        counts.append(int(proc.stdout.split("compiled")[-1]))
    assert counts[0] > 20 and counts[1] == 0


def test_a_folder_that_cannot_be_written_only_costs_the_compile(monkeypatch, tmp_path, counted):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv(generated.CACHE_VARIABLE, str(blocker / "code"))  # no folder can be made there
    assert define(SOURCE, "test kind", "unwritable", {}, "f")(7, 2) == 4
    generated.clear_memo()
    assert define(SOURCE, "test kind", "unwritable", {}, "f")(7, 2) == 4
    assert len(counted) == 2
    monkeypatch.setenv(generated.CACHE_VARIABLE, "")  # set but empty: no disk cache
    assert generated.cache_directory() is None
    generated.clear_memo()
    assert define(SOURCE, "test kind", "off", {}, "f")(7, 2) == 4
    assert len(counted) == 3


def test_a_damaged_or_foreign_file_is_compiled_again_and_replaced(monkeypatch, tmp_path, counted):
    monkeypatch.setenv(generated.CACHE_VARIABLE, str(tmp_path))
    define(SOURCE, "test kind", "damaged", {}, "f")
    key = generated.cache_key(SOURCE)
    path = tmp_path / key[:2] / key
    whole = path.read_bytes()
    for damaged in (whole[:len(whole) // 2], b"\x00" * 4 + whole[4:], whole[:20] + b"\xff" + whole[21:],
                    whole[:36] + b"\xff\xff\xff"):
        path.write_bytes(damaged)
        generated.clear_memo()
        calls = len(counted)
        assert define(SOURCE, "test kind", "damaged", {}, "f")(7, 2) == 4
        assert len(counted) == calls + 1  # not trusted: compiled again
        written = path.read_bytes()  # and written whole again (under this text's own filename)
        assert written[:36] == whole[:36]
        assert marshal.loads(written[36:]).co_code == marshal.loads(whole[36:]).co_code


def test_the_disk_cache_is_bounded(monkeypatch, tmp_path, counted):
    monkeypatch.setenv(generated.CACHE_VARIABLE, str(tmp_path))
    texts = [SOURCE.replace("+ 1", f"+ {i}") for i in range(100, 140)]
    size = len(generated.cache_key(texts[0])) // 2 + 4 + len(
        marshal.dumps(compile(texts[0], "<x>", "exec", flags=generated.COMPILE_FLAGS,
                                            dont_inherit=True)))
    monkeypatch.setattr(generated, "CACHE_BYTES", 10 * size)
    monkeypatch.setattr(generated, "PRUNE_EVERY", 1)
    for text in texts:
        define(text, "test kind", "bounded disk", {}, "f")
        total = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
        assert total <= 10 * size
    newest = generated.cache_key(texts[-1])
    assert (tmp_path / newest[:2] / newest).is_file()  # the oldest went first
    assert not list(tmp_path.rglob("*.tmp"))


def test_the_dump_switch_bypasses_the_disk_cache(monkeypatch, tmp_path, counted):
    monkeypatch.setenv(generated.CACHE_VARIABLE, str(tmp_path / "code"))
    monkeypatch.setenv(DUMP_VARIABLE, str(tmp_path / "dump"))
    define(SOURCE, "test kind", "dump and disk", {}, "f")
    define(SOURCE, "test kind", "dump and disk", {}, "f")
    assert len(counted) == 2 and len(list((tmp_path / "dump").iterdir())) == 2
    assert not (tmp_path / "code").exists()


def test_a_file_past_the_entry_bound_is_not_read_whole(monkeypatch, tmp_path, counted):
    """A cache file bigger than any code the cache writes is not one of its own: it is not read (its
    size says so), and the text is compiled."""
    monkeypatch.setenv(generated.CACHE_VARIABLE, str(tmp_path))
    define(SOURCE, "test kind", "too big", {}, "f")
    key = generated.cache_key(SOURCE)
    path = tmp_path / key[:2] / key
    whole = path.read_bytes()
    monkeypatch.setattr(generated, "MAX_ENTRY_BYTES", len(whole) - 1)
    reads: list[int] = []
    real_open = open

    class Counted:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def read(self, n=-1):
            reads.append(n)
            return self.f.read(n)

        def fileno(self):
            return self.f.fileno()

    monkeypatch.setattr(generated, "open", lambda p, mode="r": Counted(real_open(p, mode)), raising=False)
    generated.clear_memo()
    assert define(SOURCE, "test kind", "too big", {}, "f")(7, 2) == 4
    assert len(counted) == 2 and reads == []
