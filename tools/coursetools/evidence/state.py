"""The evidence's state: what `evidence verify` found, written once per
build to build/evidence-state.json and read by everything that shows
evidence (the pages, the site, the browser test, compare, serve).

The state says, for each lesson, whether its promotion holds today and
why not, names the promoted records, and covers what it was computed
from: the bytes of every evidence file it read and of the build's files
the promotion rules read, and each lesson's sources digest. A reader
refuses a state whose covered inputs changed since (it is older than the
evidence or the sources): the fix is the one command that writes it
again. Reading the state runs none of the verification machinery
(promote.py, signing.py, the build's flags); it only hashes files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from ..errors import Diagnostic, EvidenceError, display_path
from ..record.format import evidence_dir, load_record, load_verified_record, sha256_file, sources_digest
from ..sources import manifest
from ..sources.manifest import Lesson

SCHEMA = "course-evidence-state/1"
FILE = "evidence-state.json"
REFRESH = "tools/course evidence state (the build writes it: cmake --build --preset course)"

# Verified records already decoded in this process, by their bytes' sha256:
# a long-lived reader (serve's hook in MkDocs' process) reads each promoted
# record once, not on every save. Read-only to every reader; a promoted set
# is two records, three lessons' six.
_DECODED: dict[str, dict] = {}
MAX_DECODED = 8


def state_path() -> Path:
    return manifest.build_dir() / FILE


@dataclasses.dataclass
class LessonState:
    """A lesson's evidence as a page may use it."""

    lesson: Lesson
    state: str  # "promoted", "stale", "altered", "missing", "invalid", "unverified"
    reasons: list[str]
    entry: dict | None  # the promotion entry (signed), where there is one
    record_files: list[str]  # the promoted records, relative to evidence/
    earlier_files: list[str] = dataclasses.field(default_factory=list)  # stale, and only stale: the older code's
    _loaded: dict = dataclasses.field(default_factory=dict, repr=False)
    # The sha256 of each evidence file as verified (the state's cover,
    # checked against the files when the state was read): a record whose
    # bytes still have it is read without the strict reader's checks.
    verified_sha: dict = dataclasses.field(default_factory=dict, repr=False)

    @property
    def valid(self) -> bool:
        return self.state == "promoted"

    def _load(self, files: list[str]) -> list[dict]:
        for rel in files:
            if rel not in self._loaded:
                self._loaded[rel] = self._read(rel)
        return [self._loaded[rel] for rel in files]

    def _read(self, rel: str) -> dict:
        path = evidence_dir() / rel
        want = self.verified_sha.get(_rel(path))
        if want:
            try:
                raw = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            except OSError:
                raw = b""
            if raw and hashlib.sha256(raw).hexdigest() == want:
                if want not in _DECODED:
                    while len(_DECODED) >= MAX_DECODED:
                        del _DECODED[next(iter(_DECODED))]
                    _DECODED[want] = load_verified_record(raw)
                return _DECODED[want]
        return load_record(path)

    @property
    def records(self) -> list[dict]:
        """Every record of the promoted set (its first is the one the page
        names its numbers from), or none where the state is not valid."""
        return self._load(self.record_files) if self.valid else []

    @property
    def record(self) -> dict | None:
        return next(iter(self.records), None)

    @property
    def earlier(self) -> dict | None:
        return next(iter(self._load(self.earlier_files)), None)


def fixture(lesson: Lesson, records, entry: dict | None = None, state: str = "promoted",
            reasons: list[str] | None = None) -> LessonState:
    """A state held in memory, its records given as objects (one or a
    list): what tests render pages from, and the check of a page against
    its program's listing (pages/listed.py); no file, no verification."""
    recs = [records] if isinstance(records, dict) else list(records or [])
    names = [f"(fixture {i})" for i in range(len(recs))]
    st = LessonState(lesson, state, list(reasons or []), entry if entry is not None else {}, names)
    st._loaded.update(zip(names, recs))
    return st


def sha256_of(path: Path) -> str | None:
    try:
        return sha256_file(path)
    except OSError:
        return None


def covered_files(build: Path) -> list[Path]:
    """The files a state is computed from besides the sources: every
    evidence file, and the build's files the promotion rules read."""
    base = evidence_dir()
    out = [p for p in sorted(base.rglob("*")) if p.is_file() and p.name != ".promote.lock"] if base.is_dir() else []
    out += [build / name for name in ("course-manifest.json", "compile_commands.json", "CMakeCache.txt")]
    return out


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(manifest.ROOT.resolve()).as_posix()
    except ValueError:
        return str(path)


def fingerprint(lessons: list[Lesson], build: Path) -> dict:
    return {"files": {_rel(p): sha256_of(p) for p in covered_files(build)},
            "sources": {l.target: sources_digest(l, build)["digest"] for l in lessons}}


def load(lessons: list[Lesson], path: Path | None = None, check: bool = True) -> dict[str, LessonState]:
    """Every lesson's state from the state file; EvidenceError (exit 4)
    naming the command that writes it where the file is missing or
    malformed, or (with `check`) older than what it covers."""
    path = Path(path or state_path())
    shown = display_path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"missing: the evidence's state is written by {REFRESH}")) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise EvidenceError(Diagnostic(shown, 0, 0, f"unreadable ({type(e).__name__}); write it again: {REFRESH}")) from None
    covers = data.get("covers", {}) if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("lessons"), dict) \
            or not isinstance(covers, dict) or not all(isinstance(covers.get(k, {}), dict) for k in ("files", "sources")):
        raise EvidenceError(Diagnostic(shown, 0, 0, f"not an evidence state of {SCHEMA}; write it again: {REFRESH}"))
    verified: dict = {}
    if check:
        now = fingerprint(lessons, manifest.build_dir())
        files_then, sources_then = covers.get("files", {}), covers.get("sources", {})
        changed = sorted(k for k in now["files"].keys() | files_then.keys() if now["files"].get(k) != files_then.get(k))
        changed += sorted(f"{t} (its sources)" for t, d in now["sources"].items() if sources_then.get(t) != d)
        if changed:
            raise EvidenceError(Diagnostic(shown, 0, 0, f"older than what it covers ({', '.join(changed[:4])}"
                                           f"{' and more' if len(changed) > 4 else ''} changed since); "
                                           f"write it again: {REFRESH}"))
        verified = {k: v for k, v in now["files"].items() if v}
    out = {}
    for lesson in lessons:
        d = data["lessons"].get(lesson.target)
        if not isinstance(d, dict):
            out[lesson.target] = LessonState(lesson, "unverified", ["not in the evidence's state"], None, [])
            continue
        out[lesson.target] = LessonState(lesson, str(d.get("state")), list(d.get("reasons") or []), d.get("entry"),
                                         list(d.get("records") or []), list(d.get("earlier") or []),
                                         verified_sha=verified)
    return out


def of(lesson: Lesson, path: Path | None = None) -> LessonState:
    """One lesson's state (the whole file is checked)."""
    return load([lesson], path)[lesson.target]


def write(states: list[LessonState], lessons: list[Lesson], path: Path | None = None,
          covers: dict | None = None) -> Path:
    """Writes the state, unless the files changed since `covers` was taken
    (before verify read them): it never vouches for bytes verify did not read."""
    from ..fsutil import write_atomic

    path = Path(path or state_path())
    now = fingerprint(lessons, manifest.build_dir())
    if covers is not None and covers != now:
        raise EvidenceError(Diagnostic(display_path(path), 0, 0, "the evidence or the sources changed while they "
                                       f"were verified; write it again: {REFRESH}"))
    found = {s.lesson.target: {"state": s.state, "reasons": s.reasons, "entry": s.entry,
                               "records": s.record_files, "earlier": s.earlier_files}
             for s in states}
    write_atomic(path, json.dumps({"schema": SCHEMA, "covers": now, "lessons": found}, indent=1,
                                  sort_keys=True) + "\n")
    return path
