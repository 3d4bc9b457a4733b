"""Token streams of the build's own files (CMake, TOML, JSON) for the
sources digest, the way cpplex reads C++: comments and whitespace dropped,
everything else kept whole, so a comment or a re-indented line keeps a
record valid and any other change makes it stale. A file that cannot be
read unambiguously (a string or bracket that never closes) is refused
rather than guessed at."""

from __future__ import annotations

import json
import re


class Unreadable(ValueError):
    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


# One match a piece (cmake-language(7)): whitespace, a bracket comment, a
# line comment, a token, or a bracket, quote or backslash that never closes.
_CMAKE = re.compile(r"""
    \s+ | \#\[(?P<c>=*)\[.*?\](?P=c)\] | (?P<comment>\#\[=*\[) | \#[^\n]*
  | (?P<tok>[()] | "(?:[^"\\]|\\.)*" | \[(?P<b>=*)\[.*?\](?P=b)\] | (?!\[=*\[)(?:[^\s()#"\\]|\\.)+)
  | (?P<quoted>") | (?P<argument>\[=*\[) | (?P<backslash>\\)
""", re.S | re.X)
_NEVER_CLOSED = {"comment": "a bracket comment that never closes",
                 "quoted": "a quoted argument that never closes",
                 "argument": "a bracket argument that never closes",
                 "backslash": "a backslash with nothing after it"}


def cmake_tokens_at(text: str) -> list[tuple[str, int]]:
    """CMake's tokens (cmake-language(7)), comments dropped, each with its
    line. Two arguments with nothing between them (`set(archs"${min}")`)
    are one to CMake's parser, so one token here too."""
    out: list[tuple[str, int]] = []
    end = -1  # where the last token of `out` ends
    line, counted = 1, 0  # the line at `counted`: counted as the walk goes, so a long file costs one pass
    for m in _CMAKE.finditer(text):
        line, counted = line + text.count("\n", counted, m.start()), m.start()
        if m.lastgroup in _NEVER_CLOSED:
            raise Unreadable(_NEVER_CLOSED[m.lastgroup], line)
        tok = m.group("tok")
        if tok is None:
            continue
        if end == m.start() and tok not in "()" and out[-1][0] not in "()":
            out[-1] = (out[-1][0] + tok, out[-1][1])
        else:
            out.append((tok, line))
        end = m.end()
    return out


_TOML_STRING = r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
_TOML = re.compile(r"\s+|#[^\n]*|(?P<tok>" + _TOML_STRING + r"""|[\[\]{}=,]|[^\s\[\]{}=,"'#]+)"""
                   r"""|(?P<open>["'])""", re.S)


def toml_tokens(text: str) -> list[str]:
    """TOML's tokens: the four string forms whole, `#` comments dropped."""
    out: list[str] = []
    for m in _TOML.finditer(text):
        if m.lastgroup == "open":
            raise Unreadable("a string that never closes", _line(text, m.start()))
        if m.group("tok") is not None:
            out.append(m.group("tok"))
    return out


def json_tokens(text: str) -> list[str]:
    """A JSON document as one canonical token: its meaning, not its layout."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise Unreadable(f"not JSON ({e})", getattr(e, "lineno", 0)) from None
    return [json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)]
