"""iree-run-module's way of naming the module and the device, for `ireeabi run`.

iree-run-module takes the module as `--module=FILE` and the HAL device as `--device=URI`
(runtime/src/iree/tooling/context_util.c, device_util.c). `ireeabi run` takes the module either
that way or as its positional argument, and accepts `--device=local-sync` / `local-task` (with or
without a `://...` suffix): inline modules carry their own HAL (hal_inline, hal_loader) and need no
device; a module of the default execution model gets the one local-sync device of the full `hal`
module (modules/hal/module.py), and `local-task` names the same device (ireeabi runs single-threaded).
Any other device is an error: ireeabi emulates no other driver.
"""
from __future__ import annotations

import argparse

from .errors import CliError

LOCAL_DEVICES = ("local-sync", "local-task")


def parse_device(text: str) -> str:
    """`--device`: a local driver name (`local-sync`, `local-task`, optionally `://` + a path)."""
    driver = text.split("://", 1)[0]
    if driver not in LOCAL_DEVICES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: ireeabi emulates one single-threaded local CPU device; only "
            f"{' and '.join(LOCAL_DEVICES)} are accepted (both name it)")
    return text


def add_module_arguments(p: argparse.ArgumentParser) -> None:
    """The module (positional or `--module=FILE`) and `--device` of `run`."""
    p.add_argument("module", metavar="MODULE.vmfb", nargs="?", default=None)
    p.add_argument("--module", dest="module_flag", action="append", default=[], metavar="FILE",
                   help="the module, as iree-run-module takes it (instead of the positional form)")
    p.add_argument("--device", type=parse_device, default=None, metavar="local-sync|local-task",
                   help="iree-run-module's device: both name ireeabi's one single-threaded local "
                        "device (used by modules of the default execution model; inline modules "
                        "need none)")


def module_path(args: argparse.Namespace) -> str:
    """The one module file given, positionally or with --module."""
    given = ([args.module] if args.module is not None else []) + list(args.module_flag)
    if not given:
        raise CliError("no module given: name MODULE.vmfb, or --module=FILE as iree-run-module "
                       "takes it")
    if len(given) > 1:
        raise CliError(f"ireeabi runs one module; {len(given)} given ({', '.join(given)})")
    return given[0]


__all__ = ["LOCAL_DEVICES", "parse_device", "add_module_arguments", "module_path"]
