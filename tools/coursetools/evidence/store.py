"""Where evidence lives and how it is read: records, named by lesson and
tag, and the promotions file; every file read as strict JSON of the
expected shape, or exit 4 naming the file."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from ..errors import Diagnostic, EvidenceError, UsageError, display_path
from ..sources import digest as dg
from ..sources import manifest
from ..sources.manifest import Lesson


SCHEMA = "course-evidence/2"


OLD_SCHEMAS = ("course-evidence/1",)


PROMOTIONS_SCHEMA = "course-promotions/2"


TAG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


TAG_FILE_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\.json")


COMMIT_RE = re.compile(r"^[0-9a-f]{7,40}$")


def evidence_dir() -> Path:
    return Path(os.environ.get("COURSE_EVIDENCE_DIR", manifest.ROOT / "evidence"))


def record_path(lesson: Lesson, tag: str, base: Path | None = None) -> Path:
    check_tag(tag)
    return (base or evidence_dir()) / "records" / lesson.target / f"{tag}.json"


def promotions_path(base: Path | None = None) -> Path:
    return (base or evidence_dir()) / "promoted.json"


def check_tag(tag: str) -> None:
    if not isinstance(tag, str) or not TAG_RE.match(tag):
        raise UsageError(
            f"tag '{tag}' is not valid; expected lower-case letters, digits, '.', '_' or '-' "
            "(no '/'), starting with a letter or digit, such as h200-2026-11-30"
        )


def sources_digest(lesson: Lesson, root: Path | None = None) -> dict:
    return dg.sources_digest(lesson.digest_files, root or manifest.ROOT)


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


# The types every schema-2 record field must have (None: may be null).
RECORD_TYPES = {
    "schema": str, "lesson": str, "tag": str, "recorded_at": str, "command": list,
    "exit_code": int, "stdout": str, "stderr": str, "gpu": dict, "toolchain": dict,
    "git": dict, "sources": dict, "executable": dict, "results": (dict, type(None)),
    "digest": str,
}


# Deeper than any record needs; Python's own parser would otherwise die
# with a RecursionError on '[' * 100000.
MAX_JSON_DEPTH = 64


def _reject_constant(name: str):
    raise ValueError(f"holds {name}, which is not a JSON number")


def strict_json(text: str):
    """json.loads without NaN or Infinity, and without nesting deeper than
    MAX_JSON_DEPTH (ValueError naming what is wrong)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:  # brackets outside strings: the nesting, in one pass
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"nests deeper than {MAX_JSON_DEPTH} levels")
        elif ch in "]}":
            depth -= 1
    return json.loads(text, parse_constant=_reject_constant)


def load_json(path: Path, what: str) -> dict:
    """A JSON object from `path`, or EvidenceError naming the file and
    what is wrong."""
    shown = display_path(path)
    if Path(path).exists() and (Path(path).is_symlink() or not Path(path).is_file()):
        raise EvidenceError(Diagnostic(shown, 0, 0, f"is not a regular file (a link, a FIFO, a device); expected {what}"))
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"missing; expected {what}")) from None
    except OSError as e:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"cannot be read ({e.strerror}); expected {what}")) from None
    try:
        data = strict_json(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"is not UTF-8 ({e.reason}); expected {what}")) from None
    except json.JSONDecodeError as e:
        raise EvidenceError(Diagnostic(shown, e.lineno, e.colno, f"is not valid JSON ({e.msg}); expected {what}")) from None
    except ValueError as e:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"{e}; expected {what}")) from None
    if not isinstance(data, dict):
        raise EvidenceError(Diagnostic(shown, 0, 0, f"holds a JSON {type(data).__name__}, not an object; expected {what}"))
    return data


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
        for key in ("checks", "rows"):
            if not isinstance(results.get(key, []), list):
                problems.append(f"results.{key} is not a list")
        for i, row in enumerate(results.get("rows", []) if isinstance(results.get("rows"), list) else []):
            if not isinstance(row, dict):
                problems.append(f"results.rows[{i}] is not an object")
                break
    return problems


def load_record(path: Path) -> dict:
    rec = load_json(path, "a record written by tools/course evidence record")
    problems = record_shape_problems(rec)
    if problems:
        raise EvidenceError([Diagnostic(display_path(path), 0, 0, p) for p in problems])
    return rec


def load_promotions(base: Path | None = None) -> dict:
    p = promotions_path(base)
    if not p.exists():
        return {"schema": PROMOTIONS_SCHEMA, "promoted": {}, "history": []}
    data = load_json(p, "the promotions file evidence/promoted.json")
    shown = display_path(p)
    if not isinstance(data.get("promoted"), dict) or not isinstance(data.get("history", []), list):
        raise EvidenceError(Diagnostic(shown, 0, 0, "expected 'promoted' (an object) and 'history' (a list)"))
    for name, entry in data["promoted"].items():
        if not isinstance(entry, dict):
            raise EvidenceError(Diagnostic(shown, 0, 0, f"promoted.{name} is not an object"))
        for key in ("lesson", "tag", "record", "record_digest"):
            if not isinstance(entry.get(key), str):
                raise EvidenceError(Diagnostic(shown, 0, 0, f"promoted.{name}.{key} is missing or not a string"))
    return data


def confined_record(entry_record: str, lesson_target: str, base: Path | None = None) -> Path:
    """The record file an entry names, which must lie in
    evidence/records/<lesson>/ (no '..', no link out)."""
    base = Path(base or evidence_dir())
    folder = (base / "records" / lesson_target).resolve()
    p = (base / entry_record).resolve()
    if p.parent != folder or p.suffix != ".json":
        raise EvidenceError(f"{entry_record}: not a record of {lesson_target} (expected records/{lesson_target}/TAG.json)")
    return p


ROW_KEY_FIELDS = ("group", "version", "schedule", "mode", "kernel", "keys", "bins", "elements", "k", "timing")


def row_key(row: dict) -> tuple:
    return tuple((k, row[k]) for k in ROW_KEY_FIELDS if k in row)
