"""Token streams of the build's own files, for the sources digest.

The digest reads a lesson's CMakeLists.txt, cmake/ and lesson.toml as
tokens, the way cpplex reads C++: comments and whitespace dropped,
everything else (names, arguments, strings) kept whole, so that a comment
or a re-indented line keeps a record valid and any other change makes it
stale. Where a file cannot be read unambiguously (a string or bracket
that never closes), the digest refuses it rather than guess what is a
comment.

  cmake_tokens   CMake's language: `#` comments and `#[[ ]]` bracket
                 comments dropped; quoted and bracket arguments whole
  toml_tokens    TOML: `#` comments dropped; the four string forms whole;
                 `[ ] { } = ,` separate tokens
  json_tokens    JSON: the document re-written canonically (keys sorted)
"""

from __future__ import annotations

import json
import re


class Unreadable(ValueError):
    """A file the digest cannot split into tokens unambiguously."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


_CMAKE_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_CMAKE_UNQUOTED = re.compile(r'(?:[^\s()#"\\]|\\.)+', re.S)


def cmake_tokens(text: str) -> list[str]:
    """CMake's tokens (its reference manual, cmake-language(7)): bracket
    comments `#[=[ ... ]=]`, line comments `# ...`, parentheses, quoted
    arguments (backslash escapes inside), bracket arguments and unquoted
    arguments."""
    return [tok for tok, _ in cmake_tokens_at(text)]


def _line_end(text: str, i: int) -> int:
    """Where the line that `i` is on ends (a # comment's end)."""
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def cmake_tokens_at(text: str) -> list[tuple[str, int]]:
    """cmake_tokens(), each with the line it starts on. Two arguments with
    nothing between them (`set(archs"${min}")`) are one argument to CMake's
    own parser, so they are one token here too: the same tokens mean the
    same arguments to both."""
    out: list[tuple[str, int]] = []
    ends: list[int] = []  # where each token of `out` ends
    i, n = 0, len(text)

    def emit(tok: str, start: int) -> None:
        if out and ends[-1] == start and tok not in "()" and out[-1][0] not in "()":
            out[-1] = (out[-1][0] + tok, out[-1][1])
            ends[-1] = start + len(tok)
            return
        out.append((tok, _line(text, start)))
        ends.append(start + len(tok))

    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            m = _CMAKE_BRACKET_OPEN.match(text, i + 1)
            if m:
                close = "]" + m.group(1) + "]"
                end = text.find(close, m.end())
                if end < 0:
                    raise Unreadable("a bracket comment that never closes", _line(text, i))
                i = end + len(close)
            else:
                i = _line_end(text, i)
        elif c in "()":
            emit(c, i)
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise Unreadable("a quoted argument that never closes", _line(text, i))
            emit(text[i:j + 1], i)
            i = j + 1
        elif (m := _CMAKE_BRACKET_OPEN.match(text, i)) is not None:
            close = "]" + m.group(1) + "]"
            end = text.find(close, m.end())
            if end < 0:
                raise Unreadable("a bracket argument that never closes", _line(text, i))
            emit(text[i:end + len(close)], i)
            i = end + len(close)
        else:
            m = _CMAKE_UNQUOTED.match(text, i)
            if m is None:  # a lone backslash at the very end
                raise Unreadable("a backslash with nothing after it", _line(text, i))
            emit(m.group(0), i)
            i = m.end()
    return out


_TOML_STRING = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'', re.S)
_TOML_PUNCT = re.compile(r"[\[\]{}=,]|[^\s\[\]{}=,\"'#]+")


def toml_tokens(text: str) -> list[str]:
    """TOML's tokens: strings whole (basic, literal, and both multi-line
    forms), `#` comments outside strings dropped, the punctuation apart."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            i = _line_end(text, i)
        elif c in "\"'":
            m = _TOML_STRING.match(text, i)
            if m is None:
                raise Unreadable("a string that never closes", _line(text, i))
            out.append(m.group(0))
            i = m.end()
        else:
            m = _TOML_PUNCT.match(text, i)
            out.append(m.group(0))
            i = m.end()
    return out


def json_tokens(text: str) -> list[str]:
    """A JSON document as one canonical token: its meaning, not its layout."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise Unreadable(f"not JSON ({e})", getattr(e, "lineno", 0)) from None
    return [json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)]
