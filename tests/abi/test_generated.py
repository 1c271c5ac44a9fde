"""abi/generated.py, the helper every fast-path generator compiles through: unique filenames, the
text in linecache (through checkcache, gone with its namespace), the dump switch."""
from __future__ import annotations

import gc
import inspect
import linecache
import re
import traceback

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
