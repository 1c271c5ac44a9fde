"""The source tree as the package `ireeabi`, for tools that read it (type checkers, IDEs, import
graphs): the repository root is the package (pyproject's package-dir maps abi/ layouts/ base/ vm/
hal/ modules/ tooling/ cli/ to `ireeabi.<folder>`), and the packages import one another relatively
(`from ..abi import cconv`), which such a tool follows up to this file.

Not installed: installs see `ireeabi` as a namespace package whose other portion is ireeabi/
(`python -m ireeabi`). Nothing is defined here.
"""
