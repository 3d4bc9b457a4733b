"""What CI runs: every promoted entry's signature verifies against
evidence/allowed_signers, its record is the one signed, and every
promotion rule still holds today; nothing else lies in evidence/."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from ..errors import EvidenceError, display_path
from ..sources.manifest import Lesson
from . import signing
from .promote import record_problems, set_problems
from .state import LessonState
from ..record.format import SUFFIX, TAG_FILE_RE, evidence_dir, load_record
from .store import PROMOTIONS_SCHEMA, confined_record, load_promotions


def entry_records(entry: dict) -> list[tuple[str, str | None, str | None, str | None]]:
    """(record, its digest, its executable's sha256, its tag) for each
    record a promotion names: a set's lists, or an older entry's one."""
    if isinstance(entry.get("records"), list):
        n = len(entry["records"])
        col = lambda k: entry.get(k) if isinstance(entry.get(k), list) and len(entry[k]) == n else [None] * n  # noqa: E731
        return list(zip(entry["records"], col("record_digests"), col("executables"), col("tags")))
    return [(entry.get("record"), entry.get("record_digest"), entry.get("executable_sha256"), entry.get("tag"))]


def _tagged(reason: str, tag: str) -> str:
    """A reason with the record's tag after its kind ('stale: TAG: ...'),
    so that a set's reasons say which record each is about."""
    kind = next((k for k in ("stale: ", "altered: ") if reason.startswith(k)), "")
    return kind + tag + reason[len(kind):]


def state_of(lesson: Lesson, base: Path | None = None, signature: bool = True) -> LessonState:
    """The lesson's evidence as a page may use it: the records only when
    every rule holds for every record of the set, the set's own rules (one
    build, on MIN_GPUS GPUs or more) and (unless `signature` is False, for
    a reader without OpenSSH who is told so) the signature included. Where
    being stale is all that is wrong (the records intact, their promotion
    signed), the records are the earlier code's, which a page may draw its
    figures from, saying so."""
    try:
        promotions = load_promotions(base)
    except EvidenceError as e:
        return LessonState(lesson, "invalid", [str(d) for d in e.diagnostics], None, [])
    entry = promotions["promoted"].get(lesson.target)
    if entry is None:
        return LessonState(lesson, "unverified", ["no record has been promoted"], None, [])
    base_dir = Path(base or evidence_dir())
    reasons: list[str] = []
    recs: list[tuple[str, dict]] = []
    files: list[str] = []
    for name, digest, exe, tag in entry_records(entry):
        try:
            path = confined_record(name, lesson.target, base)
        except EvidenceError as e:
            return LessonState(lesson, "invalid", [str(d) for d in e.diagnostics], entry, [])
        if not path.exists():
            return LessonState(lesson, "missing", [f"the promoted record {name} is missing"], entry, [])
        try:
            rec = load_record(path)
        except EvidenceError as e:
            return LessonState(lesson, "altered", ["altered: " + "; ".join(str(d) for d in e.diagnostics)], entry, [])
        shown = f"{rec.get('tag')}: " if len(entry_records(entry)) > 1 else ""
        reasons += [_tagged(r, shown) for r in record_problems(lesson, rec, for_promotion=False)]
        if rec.get("digest") != digest:
            reasons.insert(0, f"altered: {shown}the record is not the one that was promoted (its digest changed)")
        for key, want, value in (("sources_digest", entry.get("sources_digest"), rec.get("sources", {}).get("digest")),
                                 ("executable", exe, rec.get("executable", {}).get("sha256")),
                                 ("tag", tag, rec.get("tag"))):
            if want != value:
                reasons.append(f"altered: {shown}the promotion's {key} does not match the record")
        recs.append((str(rec.get("tag")), rec))
        files.append(path.relative_to(base_dir.resolve()).as_posix())
    problem = signing.verify(entry, signing.allowed_signers_path(base_dir)) if signature else None
    if problem:
        reasons.insert(0, f"unsigned or forged: {problem}")
    reasons += [f"invalid: {p}" for p in set_problems(recs)]
    state = next((s for s, p in (("altered", "altered"), ("invalid", "unsigned"), ("invalid", "invalid"),
                                 ("stale", "stale"))
                  if any(r.startswith(p) for r in reasons)), "invalid") if reasons else "promoted"
    earlier = bool(reasons) and all(r.startswith("stale") for r in reasons)
    st = LessonState(lesson, state, reasons, entry, files if not reasons else [], files if earlier else [])
    st._loaded.update(zip(files, (r for _, r in recs)))  # read once, here
    return st


def lesson_states(lessons: list[Lesson], base: Path | None = None) -> list[LessonState]:
    return [state_of(lesson, base) for lesson in lessons]


def verify(lessons: list[Lesson], base: Path | None = None) -> list[str]:
    """Problems with the evidence: every promoted entry re-checked, every
    record well formed (a lesson never promoted is UNVERIFIED, not a problem)."""
    base = Path(base or evidence_dir())
    try:
        promotions = load_promotions(base)
    except EvidenceError as e:
        return [str(d) for d in e.diagnostics]
    promoted, problems = promotions["promoted"], history_problems(promotions, base)
    known = {l.target for l in lessons}
    for name in sorted(set(promoted) - known):
        problems.append(f"{name}: promoted, but no such lesson is declared in CMake")
    for lesson in lessons:
        if lesson.target not in promoted:
            continue
        st = state_of(lesson, base)
        where = f" (evidence/{st.entry['record']})" if st.entry and isinstance(st.entry.get("record"), str) else ""
        for r in st.reasons:
            problems.append(f"{lesson.target}{where}: {r}")
        rec = st.record or st.earlier
        if rec and st.entry and str(st.entry.get("promoted_at", "")) < str(rec.get("recorded_at", "")):
            problems.append(f"{lesson.target}{where}: promoted at {st.entry.get('promoted_at')}, before the run "
                            f"was recorded ({rec.get('recorded_at')})")
    for p in sorted((base / "records").glob(f"*/*{SUFFIX}")):
        if p.parent.name not in known:  # named whatever the file holds
            problems.append(f"{display_path(p)}: error: records/{p.parent.name}/ is no declared lesson's folder")
        try:
            rec = load_record(p)
        except EvidenceError as e:
            problems += [str(d) for d in e.diagnostics]
            continue
        if rec.get("lesson") != p.parent.name:
            problems.append(f"{display_path(p)}: error: a record of {rec.get('lesson')!r} filed under "
                            f"records/{p.parent.name}/; expected records/<its lesson>/<tag>.json.bz2")
    problems += stray_files(base)
    return problems


def history_problems(promotions: dict, base: Path) -> list[str]:
    """The promotions file as promote writes it: its schema, no key of its
    own, and a history that is the audit trail: every signed entry's
    signature valid, unsigned ones only from before the course signed its
    promotions, and each lesson's current entry its last."""
    shown = "evidence/promoted.json"
    problems = []
    if promotions.get("schema") != PROMOTIONS_SCHEMA:
        problems.append(f"{shown}: schema is {promotions.get('schema')!r}, expected {PROMOTIONS_SCHEMA!r}")
    extra = sorted(set(promotions) - {"schema", "promoted", "history"})
    if extra:
        problems.append(f"{shown}: keys promote never writes: {', '.join(map(str, extra))}")
    history = promotions.get("history", [])
    signers = signing.allowed_signers_path(base)
    # Dates in order and none ahead of now: a retired key's signature cannot
    # be made to look older than its retirement by a date written back.
    dates = [e.get("promoted_at") for e in history if isinstance(e, dict)]
    if any(not isinstance(d, str) for d in dates):
        problems.append(f"{shown}: a history entry has no promoted_at")
    elif dates != sorted(dates):
        problems.append(f"{shown}: the history is not in the order of its promoted_at dates")
    elif dates and dates[-1] > dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"):
        problems.append(f"{shown}: a promotion dated {dates[-1]}, after now")
    signed_since = None
    last: dict[str, dict] = {}
    for i, entry in enumerate(history):
        if not isinstance(entry, dict) or not isinstance(entry.get("lesson"), str):
            problems.append(f"{shown}: history[{i}] is not a promotion entry")
            continue
        if entry.get("signature"):
            signed_since = signed_since or i
            problem = signing.verify(entry, signers)
            if problem:
                problems.append(f"{shown}: history[{i}] ({entry['lesson']}, {entry.get('tag')}): {problem}")
        elif signed_since is not None:
            problems.append(f"{shown}: history[{i}] ({entry['lesson']}, {entry.get('tag')}) is unsigned, after "
                            "signed promotions began: every promotion since is signed")
        last[entry["lesson"]] = entry
    for name, entry in promotions.get("promoted", {}).items():
        if last.get(name) != entry:
            problems.append(f"{shown}: promoted.{name} is not the last promotion of {name} in the history")
    return problems


EVIDENCE_FILES = ("allowed_signers", "promoted.json", ".promote.lock")


def stray_files(base: Path) -> list[str]:
    """Anything under evidence/ that is not a record where records live,
    promoted.json or allowed_signers: a stray file is either a mistake or
    something meant to be read as evidence that nothing checks."""
    out = []
    for p in sorted(base.rglob("*")):
        rel = p.relative_to(base).parts
        if p.is_dir() and not p.is_symlink() and (rel == ("records",) or (len(rel) == 2 and rel[0] == "records")):
            continue
        ok = (len(rel) == 1 and rel[0] in EVIDENCE_FILES) or (
            len(rel) == 3 and rel[0] == "records" and TAG_FILE_RE.fullmatch(rel[2]) is not None)
        if not ok or p.is_symlink() or not p.is_file():
            out.append(f"{display_path(p)}: error: not something evidence/ holds; expected records/<lesson>/<tag>.json.bz2, "
                       "promoted.json or allowed_signers (regular files)")
    return out
