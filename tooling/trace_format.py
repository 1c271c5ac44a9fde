"""The text of a trace's events (tooling/trace.py): an instruction as IREE's execution trace writes
it (`iree_vm_bytecode_trace_disassembly`, runtime/src/iree/vm/bytecode/disassembler.c: the line
itself is made by the tracer), the VM's calls and returns, and an import call laid out byte by
byte: the buffer as the VM packed it, the shim's reading with each disagreement marked, the
results and the status. Every line fits 100 columns: a longer one (an instruction's inline
values, a ref's words with its bytes, a status message) continues on indented lines, broken at a
single space, which the continuation stands for (the JSON lines keep each line whole)."""
from __future__ import annotations

from typing import Any

__all__ = ["WIDTH", "format_event", "format_value", "fit"]

WIDTH = 100  # the columns of human output (docs/command-line.md)


def format_value(field: dict) -> str:
    """One field's value: a ref as ptr/type words, a float as Python writes it."""
    value = field.get("value")
    if field.get("kind") == "padding":
        return ""
    if value is None:
        return "(past the buffer)"
    if isinstance(value, dict):
        return f"ref ptr=0x{value['ptr']:x} type=0x{value['type']:x}"
    return repr(value)


def _row(f: dict, note: str = "") -> str:
    return (f"    +{f['offset']:<5d}{f['size']:>3d} B  {f['name']:<22s} {f['kind']:<7s} "
            f"{format_value(f):<34s} {f['bytes']}{note}\n")


def _import(e: dict) -> str:
    where = f"@{e['caller']} pc {e['pc']:08X}" if e.get("caller") is not None else "the host"
    nested = f", inside {e['nested_in']}" if e.get("nested_in") else ""
    a, s, r = e["arguments"], e["shim"], e["results"]
    lines = [f"[import] {e['import']} {e['cconv']} from {where}{nested} ({e['target']})\n"]
    spans = f", spans {a['spans']}" if a.get("spans") else ""
    lines.append(f"  arguments {a['fragment'] or 'v'}: {a['size']} B at 0x{a['address']:x}{spans}, "
                 f"as the VM packed them:\n")
    if a.get("error"):
        lines.append(f"    ({a['error']}; bytes {a['bytes']})\n")
    lines += [_row(f) for f in a["fields"]]
    if a.get("omitted"):
        lines.append(f"    ... {a['omitted']} more span element values (see the bytes)\n")
    if s["kind"] != "void":
        how = f"{s['kind']}, {s['form']}" if s["kind"] == "spanwalker" else s["kind"]
        lines.append(f"  the shim reads them through {s['struct']} ({how}):\n")
        for f in s["fields"]:
            verdict = "MISREAD" if f.get("read", True) else "MISPLACED (the size check fails first: never read)"
            note = f"  <-- {verdict}: {f['disagreement']}" if f.get("disagreement") else ""
            lines.append(_row(f, note))
        if s.get("failure"):
            lines.append(f"    the shim fails: {s['failure']}\n")
        lines.append(f"    {s.get('disagreements', 0)} field(s) of the shim where the VM did not pack them\n")
    if r["fragment"] and (r["fields"] or r.get("dropped")):
        lines.append(f"  results {r['fragment']}: {r['size']} B\n")
        if r.get("dropped"):
            lines.append(f"    ({r['dropped']})\n")
        for f in r["fields"]:
            note = "" if f["written_at"] == f["offset"] else \
                f"  <-- the shim writes it at +{f['written_at']}"
            lines.append(_row(f, note))
    st = e["status"]
    lines.append(f"  status: {st['code']}" + (f": {st['message']}" if st.get("message") else "") + "\n")
    return "".join(lines)


def fit(line: str, indent: int) -> list[str]:
    """`line` in lines of at most WIDTH columns: broken at single spaces (the last that fits; each
    break's space dropped), continuations indented by `indent` spaces; a run without such a space
    longer than a line is cut at the width."""
    out: list[str] = []
    pad = " " * indent
    while len(line) > WIDTH:
        low = indent + 1 if out else 1  # a continuation must keep more than its indent
        cut = next((p for p in range(WIDTH, low - 1, -1) if line[p] == " "
                    and line[p - 1] != " " and p + 1 < len(line) and line[p + 1] != " "), None)
        if cut is None:
            out.append(line[:WIDTH])
            line = pad + line[WIDTH:]
        else:
            out.append(line[:cut])
            line = pad + line[cut + 1:]
    out.append(line)
    return out


def format_event(e: dict) -> str:
    """The text of one event, every line within WIDTH columns."""
    text = _event_text(e)
    lines = []
    for line in text.splitlines():
        lead = len(line) - len(line.lstrip(" "))
        lines += fit(line, 8 if line.startswith("[") else lead + 6)
    return "".join(f"{line}\n" for line in lines)


def _event_text(e: dict) -> str:
    kind = e["event"]
    if kind == "instruction":
        return e["text"] + "\n"
    if kind == "import":
        return _import(e)
    if kind == "call":
        return f"[call] {'  ' * (e['depth'] - 1)}@{e['caller']} pc {e['pc']:08X} -> @{e['callee']}\n"
    if kind == "return":
        return f"[return] {'  ' * max(e['depth'] - 1, 0)}@{e['function']} pc {e['pc']:08X}\n"
    if kind == "invoke":
        return f"[invoke] @{e['function']}\n"
    if kind == "invoked":
        st: Any = e["status"]
        return f"[invoked] @{e['function']}: {st['code']}" + \
            (f": {st['message']}" if st.get("message") else "") + "\n"
    return f"[{kind}] {e}\n"
