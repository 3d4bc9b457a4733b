"""What a record is on disk, and the one reader and writer of it.

A record is one JSON object (its fields: research/REVIEW-PROCESS.md). It
is stored compactly, as `evidence/records/<lesson>/<tag>.json.bz2`: the
object written as UTF-8 JSON with sorted keys, one row (one object of
plain values) a line, then bzip2-compressed (level 9; bzip2 writes no name
or time, so the same record always makes the same bytes). Nothing is left
out: every sample, decision and check is there, and `bzcat TAG.json.bz2`
shows it as text. The record's digest is taken over the decoded object
(canonical JSON, `canonical()`), never over the bytes on disk, so the
encoding can change without changing what a digest means. (bzip2, not
gzip: a day-24 record is 0.79 MB in it and 1.10 MB in gzip's level 9,
the course's largest records being sweeps of small decimal numbers.)

Standard library only: the GPU machine writes records with a bare python3.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import os
import re
from pathlib import Path

from ..errors import Diagnostic, EvidenceError, UsageError, display_path
from ..fsutil import create_new_atomic
from ..sources import digest as dg
from ..sources import manifest
from ..sources.manifest import Lesson

# Schema 3 adds what proves a GPU ran (the device's UUID beside the
# driver's list, clocks by device) and the host; schema 2 records stay
# readable history; schema 1 records (no samples) are held to less of its shape.
SCHEMA = "course-evidence/3"
OLD_SCHEMAS = ("course-evidence/1",)
SUFFIX = ".json.bz2"
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
TAG_FILE_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\.json\.bz2")
COMMIT_RE = re.compile(r"^[0-9a-f]{7,40}$")
# The most a record may hold decoded: the largest has been under 10 MB;
# a file that inflates past this is refused, not read into memory.
MAX_DECODED_BYTES = 256 * 2**20


def evidence_dir() -> Path:
    return Path(os.environ.get("COURSE_EVIDENCE_DIR", manifest.ROOT / "evidence"))


def check_tag(tag: str) -> None:
    if not isinstance(tag, str) or not TAG_RE.match(tag):
        raise UsageError(
            f"tag '{tag}' is not valid; expected lower-case letters, digits, '.', '_' or '-' "
            "(no '/'), starting with a letter or digit, such as h200-2026-11-30"
        )


def record_path(lesson: Lesson, tag: str, base: Path | None = None) -> Path:
    check_tag(tag)
    return (base or evidence_dir()) / "records" / lesson.target / f"{tag}{SUFFIX}"


def sources_digest(lesson: Lesson, build: Path | None = None) -> dict:
    """The lesson's sources digest as it stands today, with the compiler's
    dependency output read from `build` (by default the build the
    manifest came from)."""
    build = Path(build) if build is not None else Path(lesson.binary).parent.parent
    return dg.sources_digest(lesson.digest_files(build), manifest.ROOT)


def canonical(record: dict) -> bytes:
    body = {k: v for k, v in record.items() if k != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def record_digest(record: dict) -> str:
    return hashlib.sha256(canonical(record)).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ----------------------------------------------------------------------
# Strict JSON: what a record may hold
# ----------------------------------------------------------------------

# Deeper than any record needs.
MAX_JSON_DEPTH = 64


class StrictJSONError(ValueError):
    """JSON the evidence may not hold; `line` is where (0: unknown)."""

    def __init__(self, message: str, line: int = 0, col: int = 0):
        super().__init__(message)
        self.line, self.col = line, col


class _Duplicate(Exception):
    def __init__(self, key: str):
        self.key = key


def _reject_constant(name: str):
    raise StrictJSONError(f"holds {name}, which is not a JSON number")


def _pairs(pairs: list) -> dict:
    obj: dict = {}
    for k, v in pairs:
        if k in obj:
            raise _Duplicate(k)
        obj[k] = v
    return obj


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')
_SURROGATE = re.compile(r"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?|"
                        r"(?<!\\)(?:\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}")


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
            for k, v in x.items():
                if not _encodable(k):
                    return "a key holds a lone surrogate escape (half of a UTF-16 pair)"
                todo.append((v, depth + 1))
        elif isinstance(x, list):
            todo += [(v, depth + 1) for v in x]
        elif isinstance(x, str) and not _encodable(x):
            return "a string holds a lone surrogate escape (half of a UTF-16 pair)"
    return None


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


# A whole number in a record or a run: a size, a count, a byte total (the
# largest, a GPU's memory in bytes, has 12 digits). Beyond this, Python
# would spend quadratic time converting it, or refuse past 4,300 digits.
MAX_DIGITS = 40


class _LongNumber(Exception):
    def __init__(self, digits: int):
        self.digits = digits


def _whole(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise _LongNumber(digits)
    return int(text)


def strict_json(text: str):
    """json.loads, held to what a record may hold: no NaN or Infinity, no
    key twice in one object (JSON readers disagree on which copy wins), no
    lone surrogate escape, no nesting deeper than MAX_JSON_DEPTH.
    StrictJSONError names what is wrong and, where it can, the line."""
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_pairs, parse_int=_whole)
    except _Duplicate as e:
        raise StrictJSONError(f"holds the key {e.key!r} twice in one object", _duplicate_line(text)) from None
    except json.JSONDecodeError as e:
        raise StrictJSONError(f"is not valid JSON ({e.msg})", e.lineno, e.colno) from None
    except RecursionError:
        raise StrictJSONError(f"nests deeper than {MAX_JSON_DEPTH} levels") from None
    except _LongNumber as e:
        raise StrictJSONError(f"holds a whole number of {e.digits:,} digits; a count, size or time here has at "
                              f"most {MAX_DIGITS}") from None
    problem = _walk(data)
    if problem:
        line = _lone_surrogate_line(text) if "surrogate" in problem else 0
        raise StrictJSONError(problem, line)
    return data


def _read_regular(path: Path, what: str) -> bytes:
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


def load_json(path: Path, what: str) -> dict:
    """A JSON object from a plain JSON file (the promotions file, a review
    summary, a lesson's --json output), or EvidenceError naming the file
    and what is wrong."""
    return json_object(_read_regular(path, what), display_path(path), what)


# ----------------------------------------------------------------------
# The compact encoding
# ----------------------------------------------------------------------


def _plain(x) -> bool:
    return not isinstance(x, (dict, list))


def _leaf(x) -> bool:
    """A value written on one line: a plain value, a list of plain values,
    or an object holding only those (a row)."""
    if isinstance(x, list):
        return all(_plain(v) for v in x)
    if isinstance(x, dict):
        return all(_plain(v) or (isinstance(v, list) and all(_plain(i) for i in v)) for v in x.values())
    return True


def _lines(x, depth: int) -> str:
    one = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    if depth > 0 and _leaf(x):
        return one(x)
    pad = "\n" + " " * (depth + 1)
    if isinstance(x, dict):
        items = [one(k) + ":" + _lines(v, depth + 1) for k, v in sorted(x.items())]
    elif isinstance(x, list):
        items = [_lines(v, depth + 1) for v in x]
    else:
        return one(x)
    if not items:
        return "{}" if isinstance(x, dict) else "[]"
    open_, close = ("{", "}") if isinstance(x, dict) else ("[", "]")
    return open_ + pad + ("," + pad).join(items) + "\n" + " " * depth + close


def encode(rec: dict) -> bytes:
    """The record as stored: JSON, one row a line, bzip2-compressed the
    same way every time."""
    text = _lines(rec, 0) + "\n"
    return bz2.compress(text.encode("utf-8"), compresslevel=9)


def decode(raw: bytes, shown: str) -> dict:
    """The record a file's bytes hold, or EvidenceError: not bzip2, bytes
    after its one stream, inflating past MAX_DECODED_BYTES, or not strict
    JSON."""
    what = "a record written by tools/course evidence record (bzip2-compressed JSON)"
    z = bz2.BZ2Decompressor()
    try:
        text = z.decompress(raw, MAX_DECODED_BYTES + 1)
    except (OSError, ValueError) as e:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"is not bzip2-compressed data ({e}); expected {what}")) from None
    if len(text) > MAX_DECODED_BYTES or (not z.eof and not z.needs_input):
        raise EvidenceError(Diagnostic(shown, 0, 0, f"inflates past {MAX_DECODED_BYTES >> 20} MiB; expected {what}"))
    if not z.eof:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"ends inside its compressed data (cut short?); expected {what}"))
    if z.unused_data:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"holds bytes after its compressed data; expected {what}"))
    return json_object(text, shown, what)


# The types every record field must have (None: may be null).
RECORD_TYPES = {
    "schema": str, "lesson": str, "tag": str, "recorded_at": str, "command": list,
    "exit_code": int, "stdout": str, "stderr": str, "gpu": dict, "toolchain": dict,
    "git": dict, "sources": dict, "executable": dict, "results": (dict, type(None)),
    "digest": str,
}


def record_shape_problems(rec: dict) -> list[str]:
    problems = []
    if rec.get("schema") in OLD_SCHEMAS:
        return problems
    for key, t in RECORD_TYPES.items():
        if key not in rec:
            problems.append(f"no '{key}' field")
        elif isinstance(rec[key], bool) or not isinstance(rec[key], t):
            problems.append(f"'{key}' has the wrong type ({type(rec[key]).__name__})")
    results = rec.get("results")
    if isinstance(results, dict):
        if results.get("listed") is not None:
            problems.append("results were written with --list: a plan, not a run")
        for key in ("checks", "rows"):
            if not isinstance(results.get(key, []), list):
                problems.append(f"results.{key} is not a list")
        for i, row in enumerate(results.get("rows", []) if isinstance(results.get("rows"), list) else []):
            if not isinstance(row, dict):
                problems.append(f"results.rows[{i}] is not an object")
                break
    return problems


def load_verified_record(raw: bytes) -> dict:
    """A record whose very bytes `verify` held to every rule (their
    sha256 is the one the evidence's state covers): decoded without the
    strict reader's checks, which those bytes passed."""
    return json.loads(bz2.decompress(raw))


def load_record(path: Path) -> dict:
    """A stored record, decoded and held to a record's shape."""
    shown = display_path(path)
    rec = decode(_read_regular(path, "a record written by tools/course evidence record"), shown)
    problems = record_shape_problems(rec)
    if problems:
        raise EvidenceError([Diagnostic(shown, 0, 0, p) for p in problems])
    return rec


def write_new_record(path: Path, rec: dict) -> bool:
    """Stores `rec` at `path`, never over an existing file: False when the
    name is taken."""
    return create_new_atomic(path, encode(rec))
