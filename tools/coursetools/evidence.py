"""Evidence: tagged runs on real hardware, promoted by a reviewer.

  record   runs a built lesson on this machine's GPU and writes one record,
           evidence/records/<lesson>/<tag>.json, never overwriting one.
  promote  the reviewer's gate: refuses, naming every reason, unless the
           run exited 0, every check in it passed, the record's digest
           verifies, its sources digest equals today's, it ran from a clean
           tree, and the GPU meets the lesson's minimum compute capability.
  verify   what CI runs: every promoted record still exists, still
           verifies, and still matches today's sources.

The record's digest is a SHA-256 over its canonical JSON: it catches a
hand edit, not a forger who recomputes it; the reviewer's promotion (a
commit that names the digest) and git history are what stop that.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .diagnostics import EXIT_EVIDENCE, EXIT_USAGE, CourseError
from .fsutil import create_new_atomic, write_atomic
from .manifest import ROOT, Lesson

SCHEMA = "course-evidence/1"
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
# A lesson source that still carries the seed's status comment says it has
# never run; it cannot be promoted until that sentence is replaced by the
# pointer to the page (REVIEW-PROCESS.md, "Promoting").
UNVERIFIED_SOURCE_RE = re.compile(r"^\s*//\s*UNVERIFIED:", re.MULTILINE)


def evidence_dir() -> Path:
    return Path(os.environ.get("COURSE_EVIDENCE_DIR", ROOT / "evidence"))


def record_path(lesson: Lesson, tag: str, base: Path | None = None) -> Path:
    return (base or evidence_dir()) / "records" / lesson.target / f"{tag}.json"


def promotions_path(base: Path | None = None) -> Path:
    return (base or evidence_dir()) / "promoted.json"


# ----------------------------------------------------------------------
# Digests
# ----------------------------------------------------------------------


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sources_digest(lesson: Lesson, root: Path | None = None) -> dict:
    """Each file's SHA-256 and one digest over the sorted (path, hash)
    pairs: the lesson's sources and the shared header."""
    root = root or ROOT
    files = {}
    for rel in lesson.digest_files:
        p = root / rel
        files[rel] = sha256_bytes(p.read_bytes()) if p.exists() else "missing"
    joined = "".join(f"{path}\0{h}\n" for path, h in sorted(files.items()))
    return {"digest": sha256_bytes(joined.encode()), "files": files}


def canonical(record: dict) -> bytes:
    body = {k: v for k, v in record.items() if k != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def record_digest(record: dict) -> str:
    return sha256_bytes(canonical(record))


# ----------------------------------------------------------------------
# record
# ----------------------------------------------------------------------


class ClockSampler:
    """Reads the SM and memory clocks with nvidia-smi while the lesson
    runs, so the record says what clocks the numbers were measured at."""

    QUERY = "clocks.sm,clocks.mem,temperature.gpu,power.draw"

    def __init__(self, period_s: float = 0.25):
        self.period = period_s
        self.samples: list[dict] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> dict | None:
        try:
            out = subprocess.run(
                ["nvidia-smi", f"--query-gpu={self.QUERY}", "--format=csv,noheader,nounits", "-i", "0"],
                capture_output=True,
                text=True,
                timeout=10,
            )
        except (FileNotFoundError, subprocess.TimeoutExpired) as e:
            self.error = f"nvidia-smi: {e}"
            return None
        if out.returncode != 0:
            self.error = f"nvidia-smi exited {out.returncode}: {out.stderr.strip()}"
            return None
        parts = [p.strip() for p in out.stdout.strip().split(",")]
        keys = ["sm_mhz", "mem_mhz", "temperature_c", "power_w"]
        vals = {}
        for k, p in zip(keys, parts):
            try:
                vals[k] = float(p)
            except ValueError:
                vals[k] = None
        return vals

    def _run(self) -> None:
        while not self._stop.is_set():
            v = self._read()
            if v is None:
                return
            self.samples.append(v)
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=15)

    def summary(self) -> dict:
        out: dict = {"samples": len(self.samples), "period_s": self.period}
        if self.error and not self.samples:
            out["error"] = self.error
        for key in ("sm_mhz", "mem_mhz", "temperature_c", "power_w"):
            vals = [s[key] for s in self.samples if s.get(key) is not None]
            if vals:
                out[key] = {"min": min(vals), "median": statistics.median(vals), "max": max(vals)}
        return out


def _driver_version() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _nvcc_version() -> str | None:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"release [\d.]+, V([\d.]+)", out.stdout)
    return m.group(1) if m else None


def _git_state() -> tuple[str | None, bool | None]:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    except FileNotFoundError:
        return None, None
    if head.returncode != 0 or status.returncode != 0:
        return None, None
    return head.stdout.strip(), bool(status.stdout.strip())


def _runtime_string(v: int | None) -> str | None:
    if not v:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


def record(
    lesson: Lesson,
    tag: str,
    commit: str | None,
    dirty: bool | None,
    binary: Path | None = None,
    base: Path | None = None,
    extra_args: list[str] | None = None,
    manifest_info: dict | None = None,
) -> Path:
    if not TAG_RE.match(tag):
        raise CourseError(
            [f"tag '{tag}' is not valid; expected lower-case letters, digits, '.', '_' or '-', such as h200-2026-11-30"],
            EXIT_USAGE,
        )
    out_path = record_path(lesson, tag, base)
    if out_path.exists():
        raise CourseError(
            [f"{out_path}: a record for {lesson.target} with tag '{tag}' already exists; records are never overwritten, choose a new tag"],
            EXIT_USAGE,
        )
    source = "argument"
    if commit is None or dirty is None:
        git_commit, git_dirty = _git_state()
        if git_commit is None:
            raise CourseError(
                [
                    "this tree has no git history (a copy sent to a GPU machine, say); pass --commit SHA "
                    "and --clean or --dirty, computed where the history is"
                ],
                EXIT_USAGE,
            )
        commit = commit if commit is not None else git_commit
        dirty = dirty if dirty is not None else git_dirty
        source = "git"
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise CourseError([f"--commit '{commit}' is not a git commit id"], EXIT_USAGE)

    exe = Path(binary or lesson.binary)
    if not exe.exists():
        raise CourseError([f"{exe}: not built; expected: {lesson.build_command}"], EXIT_USAGE)

    with tempfile.TemporaryDirectory() as tmp:
        json_path = Path(tmp) / "results.json"
        command = [str(exe), *(extra_args or []), "--json", str(json_path)]
        shown = [lesson.run_command, *(extra_args or []), "--json", "FILE"]
        started = dt.datetime.now(dt.timezone.utc)
        t0 = time.monotonic()
        with ClockSampler() as clocks:
            proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        duration = time.monotonic() - t0
        results = None
        results_error = None
        if json_path.exists():
            try:
                results = json.loads(json_path.read_text())
            except json.JSONDecodeError as e:
                results_error = f"the lesson's --json output is not JSON: {e}"
        else:
            results_error = "the lesson wrote no --json output"

    gpu_json = (results or {}).get("gpu", {})
    rec = {
        "schema": SCHEMA,
        "lesson": lesson.target,
        "tag": tag,
        "recorded_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shown,
        "exit_code": proc.returncode,
        "duration_s": round(duration, 3),
        "stdout": proc.stdout,
        "stderr": proc.stderr,
        "gpu": {
            "name": gpu_json.get("name"),
            "compute_capability": gpu_json.get("compute_capability"),
            "sm_count": gpu_json.get("sm_count"),
            "l2_bytes": gpu_json.get("l2_bytes"),
            "driver": _driver_version(),
            "cuda_runtime": _runtime_string(gpu_json.get("runtime")),
            "cuda_driver_api": _runtime_string(gpu_json.get("driver_api")),
            "clocks": clocks.summary(),
        },
        "toolchain": {
            "nvcc": _nvcc_version(),
            "nvcc_built_with": (manifest_info or {}).get("nvcc_version"),
            "flags": lesson.nvcc_flags,
        },
        "git": {"commit": commit, "dirty": bool(dirty), "source": source},
        "host": {"platform": platform.platform()},
        "sources": sources_digest(lesson),
        "results": results,
    }
    if results_error:
        rec["results_error"] = results_error
    rec["digest"] = record_digest(rec)
    text = json.dumps(rec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if not create_new_atomic(out_path, text):
        raise CourseError([f"{out_path}: appeared while the run was in progress; not overwritten"], EXIT_USAGE)
    return out_path


# ----------------------------------------------------------------------
# promote and verify
# ----------------------------------------------------------------------


def load_record(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def _cc_tuple(cc: str | None) -> tuple[int, int] | None:
    if not cc or not re.fullmatch(r"\d+\.\d+", cc):
        return None
    a, b = cc.split(".")
    return int(a), int(b)


def record_problems(lesson: Lesson, rec: dict, for_promotion: bool) -> list[str]:
    """Every reason this record may not stand as the lesson's evidence."""
    reasons = []
    if rec.get("schema") != SCHEMA:
        reasons.append(f"schema is {rec.get('schema')!r}, expected {SCHEMA!r}")
    if rec.get("digest") != record_digest(rec):
        reasons.append("altered: the record's digest does not match its contents (edited by hand?)")
    if rec.get("lesson") != lesson.target:
        reasons.append(f"the record is for {rec.get('lesson')!r}, not {lesson.target}")
    if rec.get("exit_code") != 0:
        reasons.append(f"the run exited {rec.get('exit_code')}, not 0")
    results = rec.get("results") or {}
    failed = [c.get("check") for c in results.get("checks", []) if not c.get("ok")]
    if not results:
        reasons.append("the record holds no results")
    elif failed:
        reasons.append(f"checks failed in the run: {', '.join(map(str, failed[:5]))}")
    current = sources_digest(lesson)["digest"]
    if (rec.get("sources") or {}).get("digest") != current:
        changed = [
            f
            for f, h in sources_digest(lesson)["files"].items()
            if (rec.get("sources") or {}).get("files", {}).get(f) != h
        ]
        reasons.append(f"stale: the sources changed since the run ({', '.join(changed) or 'file list differs'})")
    if for_promotion:
        git = rec.get("git") or {}
        if git.get("dirty") is not False:
            reasons.append("the run was made from a dirty tree (uncommitted changes); record from a clean commit")
        have = _cc_tuple((rec.get("gpu") or {}).get("compute_capability"))
        if have is None:
            reasons.append("the record does not say the GPU's compute capability")
        elif have < lesson.min_cc_tuple:
            reasons.append(
                f"the GPU is compute capability {have[0]}.{have[1]}; {lesson.target} needs {lesson.min_cc} or newer"
            )
        for rel in lesson.sources:
            text = (ROOT / rel).read_text(encoding="utf-8", errors="replace")
            if UNVERIFIED_SOURCE_RE.search(text):
                reasons.append(
                    f"{rel} still carries the UNVERIFIED comment; replace it with the pointer to the page "
                    "(research/REVIEW-PROCESS.md), then record again"
                )
    return reasons


def load_promotions(base: Path | None = None) -> dict:
    p = promotions_path(base)
    if not p.exists():
        return {"schema": "course-promotions/1", "promoted": {}, "history": []}
    return json.loads(p.read_text())


def promote(lesson: Lesson, tag: str, by: str, base: Path | None = None) -> dict:
    if not by.strip():
        raise CourseError(["--by needs the reviewer's name"], EXIT_USAGE)
    path = record_path(lesson, tag, base)
    if not path.exists():
        raise CourseError([f"{path}: no record for {lesson.target} with tag '{tag}'"], EXIT_EVIDENCE)
    rec = load_record(path)
    reasons = record_problems(lesson, rec, for_promotion=True)
    if reasons:
        raise CourseError([f"refused to promote {lesson.target} '{tag}': {r}" for r in reasons], EXIT_EVIDENCE)
    promotions = load_promotions(base)
    entry = {
        "lesson": lesson.target,
        "tag": tag,
        "record": path.relative_to(base or evidence_dir()).as_posix(),
        "record_digest": rec["digest"],
        "sources_digest": rec["sources"]["digest"],
        "commit": rec["git"]["commit"],
        "gpu": rec["gpu"]["name"],
        "promoted_by": by.strip(),
        "promoted_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    promotions["promoted"][lesson.target] = entry
    promotions.setdefault("history", []).append(entry)
    write_atomic(promotions_path(base), json.dumps(promotions, indent=2, sort_keys=True) + "\n")
    return entry


@dataclasses.dataclass
class State:
    lesson: Lesson
    state: str  # "promoted", "stale", "altered", "missing", "unverified"
    reasons: list[str]
    entry: dict | None
    record: dict | None

    @property
    def valid(self) -> bool:
        return self.state == "promoted"


def state_of(lesson: Lesson, base: Path | None = None) -> State:
    entry = load_promotions(base)["promoted"].get(lesson.target)
    if entry is None:
        return State(lesson, "unverified", ["no record has been promoted"], None, None)
    path = (base or evidence_dir()) / entry["record"]
    if not path.exists():
        return State(lesson, "missing", [f"the promoted record {entry['record']} is missing"], entry, None)
    try:
        rec = load_record(path)
    except json.JSONDecodeError as e:
        return State(lesson, "altered", [f"the promoted record is not valid JSON: {e}"], entry, None)
    reasons = record_problems(lesson, rec, for_promotion=False)
    if rec.get("digest") != entry.get("record_digest"):
        reasons.insert(0, "altered: the record is not the one that was promoted (its digest changed)")
    if not reasons:
        return State(lesson, "promoted", [], entry, rec)
    state = "altered" if any(r.startswith("altered") for r in reasons) else (
        "stale" if any(r.startswith("stale") for r in reasons) else "invalid"
    )
    return State(lesson, state, reasons, entry, rec)


def verify(lessons: list[Lesson], base: Path | None = None) -> list[str]:
    """Problems with promoted evidence; lessons never promoted are fine
    here (their pages say UNVERIFIED), but a promotion of an unknown
    lesson is not."""
    problems = []
    promoted = load_promotions(base)["promoted"]
    known = {l.target for l in lessons}
    for name in sorted(set(promoted) - known):
        problems.append(f"{name}: promoted, but no such lesson is declared in CMake")
    for lesson in lessons:
        if lesson.target not in promoted:
            continue
        st = state_of(lesson, base)
        for r in st.reasons:
            prefix = "" if r.startswith(("stale:", "altered:")) else f"{st.state}: "
            problems.append(f"{lesson.target}: {prefix}{r}")
    return problems
