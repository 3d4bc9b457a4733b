"""Errors in the form every compiler uses: path:line:col: error: message.

Every tool collects all of its diagnostics before it exits, so a course
author sees every problem in every file at once, and nothing is written
when there is any error.
"""

from __future__ import annotations

import dataclasses
import os
import sys

# The CLI's exit codes (DESIGN.md, "Snippets").
EXIT_OK = 0
EXIT_ERRORS = 1  # errors in sources, markers or templates
EXIT_USAGE = 2  # wrong usage or configuration
EXIT_OUT_OF_DATE = 3  # --check found a generated file out of date
EXIT_EVIDENCE = 4  # evidence stale, tampered or not promoted


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    col: int
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}"


class CourseError(Exception):
    """Raised with the diagnostics and the exit code the CLI should use."""

    def __init__(self, diagnostics: list[Diagnostic] | list[str], code: int = EXIT_ERRORS):
        self.diagnostics = list(diagnostics)
        self.code = code
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def display_path(path: str | os.PathLike) -> str:
    """A path as the user would type it: relative to the current folder
    when it lies below it, as given otherwise."""
    p = os.fspath(path)
    try:
        rel = os.path.relpath(p)
    except ValueError:
        return p
    return p if rel.startswith("..") else rel


def report(diagnostics: list, stream=None) -> None:
    stream = stream or sys.stderr
    for d in diagnostics:
        print(str(d), file=stream)
