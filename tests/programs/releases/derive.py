"""Derive the facts of IREE's releases from their wheels (run by hand; the tests read its output).

    python tests/programs/releases/derive.py RELEASES_DIR [VERSION ...]

RELEASES_DIR holds one folder per release, each the release's two wheels installed with
`pip install --no-deps --target RELEASES_DIR/V iree-base-compiler==V iree-base-runtime==V`
(`install.sh DIR 2.9.0 3.0.0 ...` beside this file; 3.7.1 has no runtime wheel, 3.7.0 stands
for it). For each release this script:

1. compiles add16.mlir (tests/programs) with the release's iree-compile for the default execution
   model with vmvx kernels, inline-static and inline-dynamic (the flags of tooling/execution_model.py's
   MODEL_FLAGS), into RELEASES_DIR/fixtures/add16_<model>_<V>.vmfb;
2. reads what the release's runtime registers as its `hal` module (its version, each export's
   cconv, from iree.runtime's VmFunction) in a child Python with the release on its path;
3. runs every release's module under every release's iree-run-module (local-sync, `add` of 1 and
   2) and records which runtimes print the sum and the first error line of the others;
4. reads each module's bytecode version and imports with ireeabi's reader (`read_module(...,
   any_version=True)`, as `ireeabi inspect` reads a module of any release).

It writes facts.json beside itself: per release the bytecode version, the hal module version, the
hal exports that differ from the newest release's, the imports of each model's module, and which
runtimes run which module. `--fixtures 3.9.0 ...` compiles those releases' vmvx module again,
stripped (FIXTURE_FLAGS: no source map, debug ops or zip framing), into this folder as
add16_vmvx_<V>.vmfb: the test fixtures checked in beside this script."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE.parent / "add16.mlir"

MODELS = {
    "vmvx": ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=vmvx"],
    "inline-static": ["--iree-execution-model=inline-static",
                      "--iree-hal-target-backends=vmvx-inline"],
    "inline-dynamic": ["--iree-execution-model=inline-dynamic", "--iree-hal-target-device=local",
                       "--iree-hal-local-target-device-backends=llvm-cpu",
                       "--iree-llvmcpu-target-cpu=generic"],
}
# The checked-in fixtures are the vmvx model's module without what only debugging reads.
FIXTURE_FLAGS = ["--iree-vm-bytecode-module-strip-source-map=true",
                 "--iree-vm-bytecode-module-strip-debug-ops=true",
                 "--iree-vm-emit-polyglot-zip=false"]
# Older compilers take the device flags under their former names.
OLD_DEVICE_FLAGS = {"vmvx": ["--iree-hal-target-backends=vmvx"],
                    "inline-dynamic": ["--iree-execution-model=inline-dynamic",
                                       "--iree-hal-target-backends=llvm-cpu",
                                       "--iree-llvmcpu-target-cpu=generic"]}

HAL_EXPORTS = """
import json, iree.runtime as rt
inst = rt.VmInstance()
m = rt.create_hal_module(inst, rt.get_device("local-sync"))
out = {}
for n in m.function_names:
    r = repr(m.lookup_function(n))
    out[n] = r[r.index("(") + 1:r.index(")")]
print(json.dumps({"version": m.version, "exports": out}))
"""


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def _env(release: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(release)
    return env


def _compile(release: Path, model: str, out: Path, extra: list[str] = []) -> str | None:
    """None when compiled, else iree-compile's first error line."""
    err = ""
    for flags in (MODELS[model], OLD_DEVICE_FLAGS.get(model)):
        if flags is None:
            continue
        r = subprocess.run([sys.executable, str(release / "bin" / "iree-compile"), str(PROGRAM),
                            *flags, *extra, "-o", str(out)], env=_env(release), capture_output=True,
                           text=True)
        if r.returncode == 0:
            return None
        err = next((x for x in r.stderr.splitlines() if "error" in x), r.stderr.strip()[:200])
        err = err.replace(str(PROGRAM), PROGRAM.name)
    return err


def _run(release: Path, module: Path) -> str | None:
    """None when the release's iree-run-module prints the sum, else its first error line."""
    tool = next((release / "iree" / d / "iree-run-module"
                 for d in ("_runtime_libs", "runtime") if (release / "iree" / d / "iree-run-module").exists()),
                None)
    if tool is None:
        return "no iree-run-module in the wheel"
    r = subprocess.run([str(tool), f"--module={module}", "--device=local-sync", "--function=add",
                        "--input=16xf32=1", "--input=16xf32=2"], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 0 and "16xf32=3 3 3" in r.stdout:
        return None
    text = (r.stderr + r.stdout).strip().splitlines()
    line = next((x.strip() for x in text if "mismatch" in x or "error" in x.lower() or ";" in x),
                text[0] if text else f"exit {r.returncode}")
    # the status and its message, without the source location and the callers' annotations
    line = re.sub(r"^\S+:\d+: ", "", line)
    return re.split(r"; (?:loading|resolving|creating) ", line)[0]


def _dumps(facts: dict) -> str:
    """Indented JSON with each list of names on one line."""
    text = json.dumps(facts, indent=1, sort_keys=True)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",\n")) + "]",
                  text) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("releases", type=Path)
    ap.add_argument("versions", nargs="*")
    ap.add_argument("--fixtures", nargs="*", default=[],
                    help="compile these releases' stripped vmvx modules into this folder")
    a = ap.parse_args()

    from ireeabi.vm.bytecode.module_file import read_module

    versions = a.versions or sorted((p.name for p in a.releases.iterdir()
                                     if (p / ".done").exists()), key=_version_key)
    versions.sort(key=_version_key)
    out_dir = a.releases / "fixtures"
    out_dir.mkdir(exist_ok=True)
    facts: dict = {"program": "add16.mlir", "models": MODELS, "releases": {}}
    modules: dict[tuple[str, str], Path] = {}
    for v in versions:
        rel = a.releases / v
        entry: dict = {"modules": {}}
        for model in MODELS:
            path = out_dir / f"add16_{model}_{v}.vmfb"
            err = None if path.exists() else _compile(rel, model, path)
            if err is not None:
                entry["modules"][model] = {"compiles": False, "error": err}
                continue
            m = read_module(path, any_version=True)
            modules[(v, model)] = path
            entry["modules"][model] = {
                "compiles": True, "bytes": path.stat().st_size,
                "bytecode_version": f"{m.bytecode_version_major}.{m.bytecode_version_minor}",
                "dependencies": {d.name: d.minimum_version for d in m.dependencies},
                "imports": {f.full_name: f.cconv for f in m.imported_functions}}
        r = subprocess.run([sys.executable, "-c", HAL_EXPORTS], env=_env(rel), capture_output=True,
                           text=True)
        entry["hal"] = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr[-300:]}
        facts["releases"][v] = entry
        print(v, {k: x.get("bytecode_version", x.get("error")) for k, x in entry["modules"].items()},
              flush=True)
    newest = facts["releases"][versions[-1]]["hal"].get("exports", {})
    for v in versions:
        hal = facts["releases"][v]["hal"]
        if "exports" in hal:
            ex = hal.pop("exports")
            hal["differs_from_newest"] = {n: c for n, c in ex.items() if newest.get(n) != c}
            hal["missing_from_newest"] = sorted(n for n in ex if n not in newest)
            hal["newest_only"] = sorted(n for n in newest if n not in ex)
    for (v, model), path in modules.items():
        runs = {}
        for rv in versions:
            runs[rv] = _run(a.releases / rv, path)
        refuse: dict[str, list[str]] = {}
        for rv, e in runs.items():
            if e is not None:
                refuse.setdefault(e, []).append(rv)
        facts["releases"][v]["modules"][model]["runtimes"] = {
            "run": [rv for rv, e in runs.items() if e is None], "refuse": refuse}
    (HERE / "facts.json").write_text(_dumps(facts))
    for v in a.fixtures:
        err = _compile(a.releases / v, "vmvx", HERE / f"add16_vmvx_{v}.vmfb", FIXTURE_FLAGS)
        if err:
            print(v, "fixture:", err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
