"""ireeabi.cli: the `ireeabi` command (`main.main`; the process entry, `python -m ireeabi`, `python -m
ireeabi.cli` and the console script, is `__main__.run`).

- `main`: the parser built from the commands, and their dispatch;
- `cmd_layout`, `cmd_check`, `cmd_targets`, `cmd_list`, `cmd_fixtures`, `cmd_inspect`, `cmd_run`,
  `cmd_test`: one command each, its parser (`add_parser`) and its run (`command`);
- `loading`: what the commands load from their arguments (module files, targets, native modules,
  structs of one's own) and the options several share;
- `output`: the output stream and each failure's one message;
- `interrupt`: Ctrl-C in the process: IREE's CANCELLED line and exit 1, wherever it lands;
- `module_executables`: the executables a module makes (inspect's placement of each);
- `resolve`, `describe`, `render`, `picture`, `errors`: structs, cconvs and span counts from the
  command line's text, what the commands show as data, plain-text rendering, SVG pictures, and the
  command line's own errors.
"""

__all__ = ["main", "cmd_layout", "cmd_check", "cmd_targets", "cmd_list", "cmd_fixtures", "cmd_inspect",
           "cmd_run", "cmd_test", "loading", "output", "interrupt", "module_executables", "resolve",
           "describe", "render", "picture", "errors"]
