"""The evidence kept in the repository: the records under
evidence/records/ (their format: record/format.py) and the promotions
file, evidence/promoted.json, read as strict JSON of the expected shape,
or exit 4 naming the file."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import Diagnostic, EvidenceError, display_path, escaped
from ..record.format import SUFFIX, evidence_dir
from ..record.strictjson import load_json

PROMOTIONS_SCHEMA = "course-promotions/2"


def promotions_path(base: Path | None = None) -> Path:
    return (base or evidence_dir()) / "promoted.json"


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
    evidence/records/<lesson>/ (no '..', no link out). An entry signed
    before records were stored as <tag>.json.bz2 names <tag>.json or
    <tag>.json.gz: the same record (its digest is over the decoded record)."""
    base = Path(base or evidence_dir())
    wrong = f"not a record of {lesson_target} (expected records/{lesson_target}/TAG{SUFFIX})"
    if not isinstance(entry_record, str):
        raise EvidenceError(f"{entry_record!r}: {wrong}")
    entry_record = re.sub(r"\.json(?:\.gz)?\Z", SUFFIX, entry_record)
    p = (base / entry_record).resolve()
    if p.parent != (base / "records" / lesson_target).resolve() or not p.name.endswith(SUFFIX):
        raise EvidenceError(f"{escaped(entry_record)}: {wrong}")
    return p
