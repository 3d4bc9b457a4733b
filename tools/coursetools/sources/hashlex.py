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


_CMAKE_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_CMAKE_UNQUOTED = re.compile(r'(?:[^\s()#"\\]|\\.)+', re.S)


def cmake_tokens(text: str) -> list[str]:
    """CMake's tokens (cmake-language(7)), comments dropped."""
    return [tok for tok, _ in cmake_tokens_at(text)]


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _bracket_end(text: str, i: int, m: re.Match, what: str) -> int:
    """Where the bracket comment or argument at `i` (`m` its opening) ends."""
    close = "]" + m.group(1) + "]"
    end = text.find(close, m.end())
    if end < 0:
        raise Unreadable(f"a bracket {what} that never closes", _line(text, i))
    return end + len(close)


def cmake_tokens_at(text: str) -> list[tuple[str, int]]:
    """cmake_tokens(), each with its line. Two arguments with nothing
    between them (`set(archs"${min}")`) are one to CMake's parser, so one
    token here too."""
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
            i = _bracket_end(text, i, m, "comment") if m else _line_end(text, i)
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
            end = _bracket_end(text, i, m, "argument")
            emit(text[i:end], i)
            i = end
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
    """TOML's tokens: the four string forms whole, `#` comments dropped."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            i = _line_end(text, i)
        else:  # _TOML_PUNCT matches whatever else comes
            m = (_TOML_STRING if c in "\"'" else _TOML_PUNCT).match(text, i)
            if m is None:
                raise Unreadable("a string that never closes", _line(text, i))
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
