"""A command run as the console script runs it, with the modules it imported recorded: the text
for `python -c RECORD_IMPORTS RECORD_FILE ARGS...`, which writes the sorted names of sys.modules
to RECORD_FILE as JSON after the command's own output, whatever its exit status."""

RECORD_IMPORTS = """
import json, sys
from ireeabi.cli.__main__ import run
try:
    status = run(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as f:
        json.dump(sorted(sys.modules), f)
sys.exit(status)
"""
