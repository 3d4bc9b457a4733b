"""A lesson's CMakeLists.txt holds one course_add_lesson() call and
nothing else, so what shapes its binary is the course's build (cmake/,
digested for every lesson) plus that call's arguments (digested for the
lesson). configure refuses any other command (lessons/CMakeLists.txt);
`record`, `promote` and `verify` check the same on the tokens (hashlex).
"""

from __future__ import annotations

from ..errors import Diagnostic
from ..fsutil import read_source
from . import hashlex, manifest
from .manifest import Lesson

CALL = "course_add_lesson"


def build_file_problems(lesson: Lesson) -> list[Diagnostic]:
    rel = f"{lesson.dir}/CMakeLists.txt"
    try:
        text = read_source(manifest.ROOT / rel, manifest.ROOT).decode("utf-8", errors="replace")
    except Exception as e:  # noqa: BLE001 - missing, a link out, a FIFO: the message says which
        return [Diagnostic(rel, 0, 0, f"cannot be read ({e})")]
    try:
        tokens = hashlex.cmake_tokens_at(text)
    except hashlex.Unreadable as e:
        return [Diagnostic(rel, e.line, 0, f"{e}")]
    want = f"expected one {CALL}(...) call and nothing else (no custom commands, post-build steps, targets or flags)"
    if not tokens:
        return [Diagnostic(rel, 1, 0, f"{want}; found 'nothing' first")]
    if tokens[0][0] != CALL or len(tokens) < 2 or tokens[1][0] != "(":
        return [Diagnostic(rel, tokens[0][1], 0, f"{want}; found {tokens[0][0]!r} first")]
    for i, (tok, line) in enumerate(tokens[2:], 2):
        if tok == "(":
            return [Diagnostic(rel, line, 0, f"{want}; found a parenthesis inside its arguments")]
        if tok == ")":
            if i + 1 < len(tokens):
                return [Diagnostic(rel, tokens[i + 1][1], 0, f"{want}; found {tokens[i + 1][0]!r} after it")]
            return []
    return [Diagnostic(rel, tokens[-1][1], 0, f"{want}; its closing parenthesis is missing")]
