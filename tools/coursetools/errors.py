"""One error path for every tool.

Every problem is raised as a CourseError that carries its exit code and
its lines; `cli.main` is the one place that prints them and turns them
into the exit status. Each line names the file (and where it can, the
line and column) in the form compilers use, `path:line:col: error: ...`,
and says what was expected and what fixes it.

The exit codes below (the README's table) are one table with the lessons'
programs', so that no code means two things: 0 and 1 as theirs, 64 a bad
command line as theirs (sysexits.h's EX_USAGE); 2 is their "waived" alone,
and 3 and 4 are the tools' alone.
"""

from __future__ import annotations

import dataclasses
import os
import sys

EXIT_OK = 0
EXIT_ERRORS = 1  # errors in sources, markers or templates
EXIT_USAGE = 64  # wrong usage or configuration (a bad argument, a refused output folder)
EXIT_OUT_OF_DATE = 3  # --check found a generated file out of date
EXIT_EVIDENCE = 4  # evidence is stale, tampered, unsigned or not promoted
EXIT_INTERRUPTED = 130


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" + (f":{self.col}" if self.col else "") if self.line else self.path
        return f"{where}: error: {self.message}"


class CourseError(Exception):
    """A problem the user must fix; `code` is the exit status."""

    code = EXIT_ERRORS

    def __init__(self, diagnostics):
        if isinstance(diagnostics, (str, Diagnostic)):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class SourceError(CourseError):
    code = EXIT_ERRORS


class UsageError(CourseError):
    code = EXIT_USAGE


class OutOfDateError(CourseError):
    code = EXIT_OUT_OF_DATE


class EvidenceError(CourseError):
    code = EXIT_EVIDENCE


class Interrupted(BaseException):
    """Raised by the signal handler (SIGTERM, SIGHUP), so that every
    `finally` and cleanup runs before the tool exits."""


def display_path(path: str | os.PathLike) -> str:
    """A path as the user would type it: relative to the current folder
    when it lies below it, as given otherwise."""
    p = os.fspath(path)
    try:
        rel = os.path.relpath(p)
    except ValueError:
        return p
    return p if rel.startswith("..") else rel


def escaped(value) -> str:
    """A string from a run, as the terminal is shown it: every control
    character (an ANSI escape, a carriage return, a newline) written as
    its Python escape, so nothing a file holds can move the cursor or
    rewrite a line already printed."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(value))


MAX_REPORTED = 50


def report(lines) -> None:
    """One line per problem, in the `where: error: what` form; a line that
    names no file says it comes from the course tool."""
    lines = list(lines)
    if len(lines) > MAX_REPORTED:  # a hostile file can hold a million mistakes; the first ones say enough
        hidden = len(lines) - MAX_REPORTED
        lines = lines[:MAX_REPORTED - 1] + [f"course: error: ... and {hidden} more problem(s) like these"] + lines[-1:]
    for d in lines:
        text = str(d)
        if not isinstance(d, Diagnostic) and ": error: " not in text and not text.endswith("nothing written"):
            text = f"course: error: {text}"
        print(text, file=sys.stderr)
