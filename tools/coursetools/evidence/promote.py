"""The promotion rules (`record_problems`) and the reviewer's gate:
`promote` refuses, naming every reason, unless every rule holds for each
record of the set; the entry is then signed with the reviewer's SSH key
and written to evidence/promoted.json under a lock."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import time
from pathlib import Path

from ..binaries import flags as buildcheck
from ..errors import EvidenceError, UsageError, display_path
from ..fsutil import write_atomic
from ..sources import buildfile, manifest
from ..sources.manifest import Lesson
from . import signing
from ..rule.compare import compare_records, format_comparison
from ..rule.resolution import disagreements
from ..record.plausibility import impossible_rows, impossible_timeline
from ..record.proof import gpu_proof_problems
from ..record.format import (COMMIT_RE, SCHEMA, evidence_dir, load_record, record_digest, record_path,
                             record_shape_problems, sources_digest)
from .store import PROMOTIONS_SCHEMA, confined_record, load_promotions, promotions_path


# A lesson source that still carries an "// UNVERIFIED:" status comment
# says it has never run; it cannot be promoted until the comment goes.
UNVERIFIED_SOURCE_RE = re.compile(r"^\s*//\s*UNVERIFIED:", re.MULTILINE)


def _cc_tuple(cc) -> tuple[int, int] | None:
    m = re.fullmatch(r"(\d+)\.(\d+)", cc) if isinstance(cc, str) else None
    return (int(m[1]), int(m[2])) if m else None


def record_problems(lesson: Lesson, rec: dict, for_promotion: bool = True) -> list[str]:
    """Every reason this record may not stand as the lesson's evidence."""
    reasons = []
    if rec.get("schema") != SCHEMA:
        reasons.append(f"schema is {rec.get('schema')!r}, expected {SCHEMA!r}: record the lesson again")
    reasons += record_shape_problems(rec)
    if rec.get("digest") != record_digest(rec):
        reasons.append("altered: the record's digest does not match its contents (edited by hand?)")
    if rec.get("lesson") != lesson.target:
        reasons.append(f"the record is for {rec.get('lesson')!r}, not {lesson.target}")
    if rec.get("exit_code") != 0:
        reasons.append(f"the run exited {rec.get('exit_code')}, not 0")
    results = rec.get("results") if isinstance(rec.get("results"), dict) else {}
    checks = results.get("checks", []) if isinstance(results.get("checks"), list) else []
    failed = [c.get("check") for c in checks if isinstance(c, dict) and c.get("ok") is not True]
    if not results:
        reasons.append("the record holds no results")
    elif failed:
        reasons.append(f"checks failed in the run: {', '.join(map(str, failed[:5]))}")
    current = sources_digest(lesson)
    recorded = rec.get("sources") if isinstance(rec.get("sources"), dict) else {}
    if recorded.get("digest") != current["digest"]:
        files = recorded.get("files") if isinstance(recorded.get("files"), dict) else {}
        changed = [f for f, h in current["files"].items() if files.get(f) != h]
        reasons.append(f"stale: the code changed since the run ({', '.join(changed) or 'file list differs'})")
    git = rec.get("git") if isinstance(rec.get("git"), dict) else {}
    if git.get("dirty") is not False:
        reasons.append("the run was made from a dirty tree (uncommitted changes); record from a clean commit")
    if not isinstance(git.get("commit"), str) or not COMMIT_RE.match(git.get("commit", "")):
        reasons.append("the record names no valid commit")
    gpu = rec.get("gpu") if isinstance(rec.get("gpu"), dict) else {}
    have = _cc_tuple(gpu.get("compute_capability"))
    if have is None:
        reasons.append("the record does not say the GPU's compute capability")
    elif have < lesson.min_cc_tuple:
        reasons.append(f"the GPU is compute capability {have[0]}.{have[1]}; {lesson.target} needs {lesson.min_cc} or newer")
    else:
        # The GPU ran machine code built for it, not code compiled on the fly
        # from an older architecture's PTX (which takes that older code path:
        # `#if __CUDA_ARCH__ >= ...` blocks fall away).
        native = {f"{have[0]}{have[1]}", f"{have[0]}{have[1]}-real", f"{have[0]}{have[1]}a-real"}
        archs = (rec.get("toolchain") or {}).get("architectures") if isinstance(rec.get("toolchain"), dict) else None
        if not isinstance(archs, list) or not native & {str(a) for a in archs}:
            reasons.append(f"the executable holds no machine code for the GPU it ran on (compute capability "
                           f"{have[0]}.{have[1]}; built for {archs}): it ran from an older architecture's PTX, "
                           "another program; build with the course's architectures")
    exe = rec.get("executable") if isinstance(rec.get("executable"), dict) else {}
    if exe.get("target") != lesson.target or not re.fullmatch(r"[0-9a-f]{64}", str(exe.get("sha256", ""))):
        reasons.append("the executable that ran was not the lesson's own build target (no target and sha256 recorded)")
    elif not str(exe.get("built_by", "")).startswith("cmake --build"):
        reasons.append("the record does not show the lesson built by its build (cmake --build)")
    reasons += gpu_proof_problems(rec)
    reasons += impossible_rows(results, gpu)
    reasons += disagreements(results)  # the program's own same-code tally, recounted
    reasons += impossible_timeline(rec)
    reasons += [str(d) for d in buildfile.build_file_problems(lesson)]
    # What this machine's build compiles the lesson with: only where it is
    # built (a build for an older GPU leaves a day out, and its evidence
    # stands on the sources digest alone).
    build = Path(lesson.binary).parent.parent
    extras = []
    if lesson.built:
        extras = (list(lesson.extra_flags) + buildcheck.compile_extras(lesson, build)
                  + buildcheck.link_extras(lesson, build) + buildcheck.launcher_problems(lesson, build))
        reasons += buildcheck.configure_problems(build)
    if extras:
        reasons.append("the lesson's timed build compiles with flags of its own "
                       f"({'; '.join(extras)[:300]}), which the sources digest cannot see; "
                       "a lesson's own target takes none (a variant carries its defines)")
    if for_promotion:
        for rel in lesson.sources:
            p = manifest.ROOT / rel
            if p.is_file() and UNVERIFIED_SOURCE_RE.search(p.read_text(encoding="utf-8", errors="replace")):
                reasons.append(f"{rel} still carries an UNVERIFIED comment; remove it, then record again")
    return reasons


@contextlib.contextmanager
def promotions_lock(base: Path | None = None, timeout_s: float = 60.0):
    """An exclusive lock around a read-modify-write of promoted.json: two
    promotes at once both land, one after the other, or one fails loudly."""
    path = (base or evidence_dir()) / ".promote.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise UsageError(f"{display_path(path)}: another promote holds the lock; try again") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


# A promotion is a set: records of one build from this many GPUs or more
# (distinct device UUIDs). The same build on three H200s gave contradicting
# words in 14 to 18 of day 24's 183 sweep cells where two runs on one GPU
# gave 1 (2026-12-01): one GPU's words are that GPU's.
MIN_GPUS = 2


def _build_of(rec: dict) -> dict:
    """What makes records "of one build": the same commit, sources digest
    and toolchain. (Not the executable's hash: nvcc's output depends on
    where the tree sits on the machine that builds it, through -lineinfo's
    paths.)"""
    tc = rec.get("toolchain") or {}
    return {"commit": (rec.get("git") or {}).get("commit"), "sources": (rec.get("sources") or {}).get("digest"),
            "nvcc": tc.get("nvcc"), "flags": tc.get("flags"), "architectures": tc.get("architectures")}


def set_problems(recs: list[tuple[str, dict]]) -> list[str]:
    """Why these records may not stand together as one promotion: fewer
    GPUs than MIN_GPUS, two records of one GPU, records of other builds."""
    out = []
    seen: dict = {}
    for tag, u in ((tag, (r.get("gpu") or {}).get("uuid")) for tag, r in recs):
        if u in seen:
            out.append(f"'{tag}' and '{seen[u]}' ran on one GPU ({u}); a set takes one record a GPU")
        seen.setdefault(u, tag)
    if len(seen) < MIN_GPUS:
        out.append(f"a promotion rests on records of one build from {MIN_GPUS} GPUs or more (distinct device UUIDs); "
                   f"given {len(seen)}: record the lesson on another GPU (a fresh GPU machine is often another one) "
                   "and promote the records together, --tag A --tag B")
    first_tag, first = recs[0]
    for tag, r in recs[1:]:
        diff = [k for k, v in _build_of(r).items() if v != _build_of(first)[k]]
        if diff:
            out.append(f"'{tag}' is not of the build '{first_tag}' is ({', '.join(diff)} differ)")
    return out


def promote(lesson: Lesson, tags, by: str, key: Path, base: Path | None = None, say=print) -> dict:
    """Promotes the records `tags` (one build, each on its own GPU) as one
    set, the first the one the page's numbers come from."""
    by = (by or "").strip()
    if not by or len(by) > 100 or any(c in by for c in "\n\r\t"):
        raise UsageError("--by needs the reviewer's name (one line, at most 100 characters)")
    if len(set(tags)) != len(tags):
        raise UsageError(f"a tag given twice: {', '.join(tags)}")
    recs, paths, reasons = [], [], []
    for tag in tags:
        path = record_path(lesson, tag, base)
        if not path.exists():
            raise EvidenceError(f"{display_path(path)}: no record for {lesson.target} with tag '{tag}'")
        rec = load_record(path)
        reasons += [f"'{tag}': {r}" for r in record_problems(lesson, rec, for_promotion=True)]
        recs.append((tag, rec))
        paths.append(path)
    reasons += set_problems(recs)
    if reasons:
        raise EvidenceError([f"refused to promote {lesson.target}: {r}" for r in reasons])
    allowed = signing.allowed_signers_path(base or evidence_dir())
    rec = recs[0][1]
    with promotions_lock(base):
        promotions = load_promotions(base)
        current = promotions["promoted"].get(lesson.target)
        if current and current.get("record"):
            with contextlib.suppress(EvidenceError):
                old = load_record(confined_record(current["record"], lesson.target, base))
                table = compare_records(rec, old)
                say(f"compared with the record promoted now ({current.get('tag')}): read this before you go on")
                say(format_comparison(table, tags[0], current.get("tag", "?")))
        rel = [p.relative_to(base or evidence_dir()).as_posix() for p in paths]
        entry = {"lesson": lesson.target,
                 "tag": tags[0],
                 "tags": tags,
                 "record": rel[0],
                 "records": rel,
                 "record_digest": rec["digest"],
                 "record_digests": [r["digest"] for _, r in recs],
                 "sources_digest": rec["sources"]["digest"],
                 "executable_sha256": rec["executable"]["sha256"],
                 "executables": [r["executable"]["sha256"] for _, r in recs],
                 "commit": rec["git"]["commit"],
                 "gpu": rec["gpu"]["name"],
                 "gpus": [r["gpu"]["uuid"] for _, r in recs],
                 "promoted_by": by,
                 "promoted_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        signature = signing.sign(entry, key)
        principal = signing.principal_of(signature, allowed)
        if principal is None:
            raise EvidenceError(f"{display_path(key)}: this key is not a reviewer's key in {display_path(allowed)}; "
                                "add the reviewer first (research/REVIEW-PROCESS.md, 'Reviewers and their keys')")
        entry["principal"] = principal
        entry["signature"] = signing.sign(entry, key)
        problem = signing.verify(entry, allowed)
        if problem:
            raise EvidenceError(f"the new signature does not verify: {problem}")
        promotions["schema"] = PROMOTIONS_SCHEMA
        promotions["promoted"][lesson.target] = entry
        promotions.setdefault("history", []).append(entry)
        write_atomic(promotions_path(base), json.dumps(promotions, indent=2, sort_keys=True) + "\n")
    return entry
