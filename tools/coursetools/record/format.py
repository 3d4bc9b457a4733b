"""What a record is on disk, and the one reader and writer of it (its
JSON read by strictjson.py). A record is one JSON object (its fields and
encoding: research/REVIEW-PROCESS.md), stored as
`evidence/records/<lesson>/<tag>.json.bz2`: sorted keys, one row a line,
bzip2 level 9, which writes no name or time, so the same record always
makes the same bytes. Its digest is taken over the decoded object
(`canonical()`), never over the bytes on disk, so the encoding can change
without changing what a digest means.

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
from ..fsutil import write_atomic
from .strictjson import json_object, read_regular
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
        raise UsageError(f"tag '{tag}' is not valid; expected lower-case letters, digits, '.', '_' or '-' "
                         "(no '/'), starting with a letter or digit, such as h200-2026-11-30")


def record_path(lesson: Lesson, tag: str, base: Path | None = None) -> Path:
    check_tag(tag)
    return (base or evidence_dir()) / "records" / lesson.target / f"{tag}{SUFFIX}"


def sources_digest(lesson: Lesson, build: Path | None = None) -> dict:
    """The lesson's sources digest today, with the compiler's dependency
    output from `build` (by default the manifest's)."""
    build = Path(build) if build is not None else Path(lesson.binary).parent.parent
    return dg.sources_digest(lesson.digest_files(build), manifest.ROOT)


def canonical(record: dict, unsigned: str = "digest") -> bytes:
    """What a digest (or a promotion's signature) is over: the object
    without that field, keys sorted, no spaces, UTF-8."""
    body = {k: v for k, v in record.items() if k != unsigned}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def record_digest(record: dict) -> str:
    return hashlib.sha256(canonical(record)).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _plain(x) -> bool:
    return not isinstance(x, (dict, list))


def _leaf(x: dict | list) -> bool:
    """Written on one line: a list of plain values, or an object holding
    only plain values and those (a row)."""
    if isinstance(x, list):
        return all(_plain(v) for v in x)
    return all(_plain(v) or (isinstance(v, list) and _leaf(v)) for v in x.values())


def _lines(x, depth: int) -> str:
    one = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    if _plain(x) or not x or (depth > 0 and _leaf(x)):
        return one(x)
    pad = "\n" + " " * (depth + 1)
    if isinstance(x, dict):
        items, ends = [one(k) + ":" + _lines(v, depth + 1) for k, v in sorted(x.items())], "{}"
    else:
        items, ends = [_lines(v, depth + 1) for v in x], "[]"
    return ends[0] + pad + ("," + pad).join(items) + "\n" + " " * depth + ends[1]


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
RECORD_TYPES = {"schema": str, "lesson": str, "tag": str, "recorded_at": str, "command": list,
                "exit_code": int, "stdout": str, "stderr": str, "gpu": dict, "toolchain": dict,
                "git": dict, "sources": dict, "executable": dict, "results": (dict, type(None)),
                "digest": str}


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
    shown = display_path(path)
    rec = decode(read_regular(path, "a record written by tools/course evidence record"), shown)
    problems = record_shape_problems(rec)
    if problems:
        raise EvidenceError([Diagnostic(shown, 0, 0, p) for p in problems])
    return rec


def write_new_record(path: Path, rec: dict) -> bool:
    """Stores `rec` at `path`, never over an existing file: False when the
    name is taken."""
    return write_atomic(path, encode(rec), replace=False)
