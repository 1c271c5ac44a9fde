"""ireeabi.cli: the `ireeabi` command (`main.main`; the process entry, `python -m ireeabi`, `python -m
ireeabi.cli` and the console script, is `__main__.run`).

- `main`: the parser, the commands' dispatch and error reporting;
- `interrupt`: Ctrl-C in the process: IREE's CANCELLED line and exit 1, wherever it lands;
- `cmd_layout`, `cmd_check`, `cmd_targets`, `cmd_inspect`, `cmd_run`, `cmd_fixtures`: one command each;
- `module_executables`: the executables a module makes (inspect's placement of each);
- `resolve`, `module_flags`, `describe`, `render`, `errors`: command-line text to engine objects
  (iree-run-module's `--module`/`--device` among them), what the commands show as data, plain-text
  rendering, and the command line's own errors.
"""

__all__ = ["main", "interrupt", "cmd_layout", "cmd_check", "cmd_targets", "cmd_inspect", "cmd_run", "cmd_fixtures",
           "module_executables", "resolve", "module_flags", "describe", "render", "errors"]
