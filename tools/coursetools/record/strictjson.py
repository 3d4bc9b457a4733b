"""Evidence files as strict JSON: the one reader of what a record, the
promotions file, a review summary or a lesson's --json output holds, which
refuses what JSON readers disagree on (NaN, a key twice, a lone surrogate)
and names the file and line of what is wrong.

Standard library only: the GPU machine reads a lesson's output with a bare
python3.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import Diagnostic, EvidenceError, display_path


# Deeper than any record needs.
MAX_JSON_DEPTH = 64


class StrictJSONError(ValueError):
    """JSON the evidence may not hold; `line` is where (0: unknown)."""

    def __init__(self, message: str, line: int = 0, col: int = 0):
        super().__init__(message)
        self.line, self.col = line, col


def _reject_constant(name: str):
    raise StrictJSONError(f"holds {name}, which is not a JSON number")


def _pairs(pairs: list) -> dict:
    obj: dict = {}
    for k, v in pairs:
        if k in obj:  # its line is found once the parse has stopped (_duplicate_line)
            raise StrictJSONError(f"holds the key {k!r} twice in one object")
        obj[k] = v
    return obj


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')
_SURROGATE = re.compile(r"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?|"
                        r"(?<!\\)(?:\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}")
# A decoded string's surrogate code point: json.loads joins a high-then-low
# pair into one character, so any left is half of a pair.
_HALF_PAIR = re.compile("[\ud800-\udfff]")


def _duplicate_line(text: str) -> int:
    """The line of the first key that repeats in its own object (a slow
    scan, run only once a duplicate is known to be there)."""
    stack: list = []  # per open bracket: its keys (objects) or None (arrays)
    last = None
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group(0)
        if tok == "{":
            stack.append(set())
        elif tok == "[":
            stack.append(None)
        elif tok in "]}":
            if stack:
                stack.pop()
        elif tok == ":":
            if stack and isinstance(stack[-1], set) and last is not None:
                key = json.loads(last.group(0))
                if key in stack[-1]:
                    return text.count("\n", 0, last.start()) + 1
                stack[-1].add(key)
        last = m if tok.startswith('"') else None
    return 0


def _lone_surrogate_line(text: str) -> int:
    """The line of the first \\uD800-\\uDFFF escape that is not half of a
    high-then-low pair."""
    for m in _SURROGATE.finditer(text):
        if len(m.group(0).lstrip("\\")) == len("uD800"):
            return text.count("\n", 0, m.start()) + 1
    return 0


def _walk(data) -> str | None:
    """What is wrong deep inside `data`: nesting past MAX_JSON_DEPTH, or a
    string (a key or a value) holding half of a surrogate pair, which no
    UTF-8 file can hold."""
    todo = [(data, 1)]
    while todo:
        x, depth = todo.pop()
        if depth > MAX_JSON_DEPTH:
            return f"nests deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(x, dict):
            if any(_HALF_PAIR.search(k) for k in x):
                return "a key holds a lone surrogate escape (half of a UTF-16 pair)"
            todo += [(v, depth + 1) for v in x.values()]
        elif isinstance(x, list):
            todo += [(v, depth + 1) for v in x]
        elif isinstance(x, str) and _HALF_PAIR.search(x):
            return "a string holds a lone surrogate escape (half of a UTF-16 pair)"
    return None


# A whole number in a record or a run: a size, a count, a byte total (the
# largest, a GPU's memory in bytes, has 12 digits). Beyond this, Python
# would spend quadratic time converting it, or refuse past 4,300 digits.
MAX_DIGITS = 40


def _whole(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise StrictJSONError(f"holds a whole number of {digits:,} digits; a count, size or time here has at "
                              f"most {MAX_DIGITS}")
    return int(text)


def strict_json(text: str):
    """json.loads, held to what a record may hold: no NaN or Infinity, no
    key twice in one object (JSON readers disagree on which copy wins), no
    lone surrogate escape, no nesting deeper than MAX_JSON_DEPTH.
    StrictJSONError names what is wrong and, where it can, the line."""
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_pairs, parse_int=_whole)
    except StrictJSONError as e:
        raise StrictJSONError(str(e), _duplicate_line(text) if "twice" in str(e) else 0) from None
    except json.JSONDecodeError as e:
        raise StrictJSONError(f"is not valid JSON ({e.msg})", e.lineno, e.colno) from None
    except RecursionError:
        raise StrictJSONError(f"nests deeper than {MAX_JSON_DEPTH} levels") from None
    problem = _walk(data)
    if problem:
        line = _lone_surrogate_line(text) if "surrogate" in problem else 0
        raise StrictJSONError(problem, line)
    return data


def read_regular(path: Path, what: str) -> bytes:
    shown = display_path(path)
    if Path(path).exists() and (Path(path).is_symlink() or not Path(path).is_file()):
        raise EvidenceError(Diagnostic(shown, 0, 0, f"is not a regular file (a link, a FIFO, a device); expected {what}"))
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"missing; expected {what}")) from None
    except OSError as e:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"cannot be read ({e.strerror}); expected {what}")) from None


def json_object(raw: bytes, shown: str, what: str) -> dict:
    """A JSON object from UTF-8 bytes, or EvidenceError naming `shown`
    and what is wrong."""
    try:
        data = strict_json(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise EvidenceError(Diagnostic(shown, line, 0, f"is not UTF-8 ({e.reason}); expected {what}")) from None
    except StrictJSONError as e:
        raise EvidenceError(Diagnostic(shown, e.line, e.col, f"{e}; expected {what}")) from None
    if not isinstance(data, dict):
        raise EvidenceError(Diagnostic(shown, 0, 0, f"holds a JSON {type(data).__name__}, not an object; expected {what}"))
    return data


def program_rows(path: Path) -> list[dict]:
    """The row objects of a program's --json output at `path`, which may be
    of any shape (a program under a sanitizer or a fault): none where the
    file is missing, not JSON, or not an object with a 'rows' list. A path
    that cannot be read for another reason (a folder there) is an error."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, RecursionError):  # ValueError: not UTF-8, not JSON
        return []
    rows = data.get("rows") if isinstance(data, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def load_json(path: Path, what: str) -> dict:
    """A JSON object from a plain JSON file, or EvidenceError naming it."""
    return json_object(read_regular(path, what), display_path(path), what)
