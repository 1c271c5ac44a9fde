"""`python -m ireeabi`: the `ireeabi` command.

ireeabi is a namespace package (pyproject's package-dir maps each subpackage to its folder); this
folder is its one other portion, holding only this module, so that editable and wheel installs both
find `ireeabi.__main__`. The process entry itself (Ctrl-C included) is `ireeabi.cli.__main__.run`.
"""
import sys

from ireeabi.cli.__main__ import run

if __name__ == "__main__":
    sys.exit(run())
