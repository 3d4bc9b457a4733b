"""Evidence: tagged runs on real hardware, promoted by a reviewer.

  record   builds the lesson's own target with the configured build, runs
           that binary (and its profile and timeline steps) on this GPU,
           and writes one record, evidence/records/<lesson>/<tag>.json,
           never overwriting one. What ran is recorded truthfully: the
           sha256 of the executable, the sources digest computed here.
  promote  the reviewer's gate: refuses, naming every reason, unless every
           rule below holds; the entry is signed with the reviewer's SSH
           key and written to evidence/promoted.json under a lock.
  verify   what CI runs: every promoted entry's signature verifies against
           evidence/allowed_signers, its record is the one signed, and
           every promotion rule still holds today.
  compare  two records of a lesson, row by row, by the comparison rule.

The rules a promoted record must meet (promote checks them; verify
re-applies them): the run exited 0 and every check passed; the record's
digest verifies and it is well formed (schema course-evidence/2); its
sources digest equals today's; git said the tree was clean; the GPU meets
the lesson's minimum; the executable was the lesson's own build target;
no row is faster than the device allows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fcntl
import hashlib
import json
import math
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

from . import manifest
from . import buildcheck
from . import compare as cmp
from . import digest as dg
from . import signing
from .errors import Diagnostic, EvidenceError, UsageError, display_path
from .fsutil import create_new_atomic, write_atomic
from .manifest import Lesson, build_dir

SCHEMA = "course-evidence/2"
OLD_SCHEMAS = ("course-evidence/1",)
PROMOTIONS_SCHEMA = "course-promotions/2"
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
TAG_FILE_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\.json")
COMMIT_RE = re.compile(r"^[0-9a-f]{7,40}$")
# A lesson source that still carries an "// UNVERIFIED:" status comment
# says it has never run; it cannot be promoted until the comment goes.
UNVERIFIED_SOURCE_RE = re.compile(r"^\s*//\s*UNVERIFIED:", re.MULTILINE)


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


# ----------------------------------------------------------------------
# Reading evidence files: JSON of the expected shape, or exit 4
# ----------------------------------------------------------------------

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


# ----------------------------------------------------------------------
# record
# ----------------------------------------------------------------------


class ClockSampler:
    """Reads the SM and memory clocks with nvidia-smi while the lesson
    runs, so the record says what clocks its numbers were measured at."""

    QUERY = "clocks.sm,clocks.mem,temperature.gpu,power.draw"
    KEYS = ("sm_mhz", "mem_mhz", "temperature_c", "power_w")

    def __init__(self, period_s: float = 0.25):
        self.period = period_s
        self.samples: list[dict] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.monotonic()

    def _read(self) -> dict | None:
        try:
            out = subprocess.run(
                ["nvidia-smi", f"--query-gpu={self.QUERY}", "--format=csv,noheader,nounits", "-i", "0"],
                capture_output=True, text=True, timeout=10,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            self.error = f"nvidia-smi: {e}"
            return None
        if out.returncode != 0:
            self.error = f"nvidia-smi exited {out.returncode}: {out.stderr.strip()}"
            return None
        vals: dict = {"t_s": round(time.monotonic() - self._t0, 3)}
        for k, p in zip(self.KEYS, out.stdout.strip().split(",")):
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
        out: dict = {"samples": len(self.samples), "period_s": self.period, "readings": self.samples}
        if self.error and not self.samples:
            out["error"] = self.error
        for key in self.KEYS:
            vals = [s[key] for s in self.samples if s.get(key) is not None]
            if vals:
                out[key] = {"min": min(vals), "median": statistics.median(vals), "max": max(vals)}
        return out


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, **kw)
    except FileNotFoundError:
        raise UsageError(f"{cmd[0]}: not found; expected it on the PATH") from None


def _driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _nvcc_version() -> str | None:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"release [\d.]+, V([\d.]+)", out.stdout)
    return m.group(1) if m else None


def git_state(root: Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) as git reports them, or (None, None) where the tree
    has no history (a copy sent to a GPU machine, say)."""
    root = root or manifest.ROOT
    try:
        head = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=root, capture_output=True, text=True)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                capture_output=True, text=True)
    except OSError:
        return None, None
    if head.returncode != 0 or status.returncode != 0:
        return None, None
    return head.stdout.strip(), bool(status.stdout.strip())


def _runtime_string(v) -> str | None:
    if not isinstance(v, int) or v <= 0:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


def peak_dram_gbps(gpu: dict) -> float | None:
    """The device's theoretical DRAM bandwidth: two transfers per memory
    clock over the bus width (what cudaDeviceProp documents)."""
    khz, bits = gpu.get("memory_clock_khz"), gpu.get("memory_bus_bits")
    if not isinstance(khz, (int, float)) or not isinstance(bits, (int, float)) or khz <= 0 or bits <= 0:
        return None
    return 2.0 * khz * 1e3 * (bits / 8) / 1e9


# Per SM and clock, the most bytes any memory path delivers (shared memory
# and L1: 128 bytes, 32 banks of 4); no row, from any memory, beats it.
ON_CHIP_BYTES_PER_CLOCK_PER_SM = 128
# When a record holds no sampled SM clock: above any GPU's boost clock.
FALLBACK_SM_MHZ = 3000.0


def peak_on_chip_gbps(gpu: dict) -> float | None:
    sms = gpu.get("sm_count")
    clocks = gpu.get("clocks") if isinstance(gpu.get("clocks"), dict) else {}
    sm = clocks.get("sm_mhz") if isinstance(clocks.get("sm_mhz"), dict) else {}
    mhz = sm.get("max") if isinstance(sm.get("max"), (int, float)) and sm.get("max") > 0 else FALLBACK_SM_MHZ
    if not isinstance(sms, int) or sms <= 0:
        return None
    return sms * ON_CHIP_BYTES_PER_CLOCK_PER_SM * mhz * 1e6 / 1e9


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def impossible_rows(results: dict | None, gpu: dict) -> list[str]:
    """Rows no device could have produced: a number that is not finite, a
    time of zero or less, statistics that contradict the row's own samples
    (min <= q1 <= median <= q3 <= max, each from samples_ms), a negative
    bandwidth, a cold-timed bandwidth whose bytes came from DRAM (every
    row's, unless it says "memory" is something else) above the DRAM's
    peak, or any bandwidth above what the SMs can take in at all."""
    out = []
    peak = peak_dram_gbps(gpu)
    on_chip = peak_on_chip_gbps(gpu)
    for i, row in enumerate((results or {}).get("rows", []) or []):
        if not isinstance(row, dict):
            continue
        name = " ".join(str(row[k]) for k in ("group", "version", "schedule", "mode", "elements", "timing") if k in row)
        bad = [k for k, v in row.items() if isinstance(v, float) and not math.isfinite(v)]
        if bad:
            out.append(f"row {i} ({name}): {', '.join(bad)} not a finite number")
            continue
        for key in ("median_ms", "min_ms", "max_ms", "q1_ms", "q3_ms", "mean_ms"):
            v = row.get(key)
            if key in row and not (_finite(v) and v > 0):
                out.append(f"row {i} ({name}): {key} is {v}; a time must be a number above zero")
        samples = row.get("samples_ms")
        if isinstance(samples, list):
            if not samples or any(not (_finite(s) and s > 0) for s in samples):
                out.append(f"row {i} ({name}): a sample is zero, negative or not a number")
            else:
                ordered = sorted(samples)
                n = len(ordered)
                lo_mid, hi_mid = ordered[(n - 1) // 2], ordered[n // 2]
                def near(a, b):
                    return _finite(a) and abs(a - b) <= 1e-6 * max(abs(b), 1e-12)
                if "min_ms" in row and not near(row["min_ms"], ordered[0]):
                    out.append(f"row {i} ({name}): min_ms is not the smallest of its samples")
                if "max_ms" in row and not near(row["max_ms"], ordered[-1]):
                    out.append(f"row {i} ({name}): max_ms is not the largest of its samples")
                m = row.get("median_ms")
                if "median_ms" in row and not (_finite(m) and lo_mid * (1 - 1e-6) <= m <= hi_mid * (1 + 1e-6)):
                    out.append(f"row {i} ({name}): median_ms is not the median of its samples")
                if "samples" in row and row["samples"] != n:
                    out.append(f"row {i} ({name}): samples says {row['samples']} but samples_ms holds {n}")
                if "mean_ms" in row and not near(row["mean_ms"], sum(ordered) / n) \
                        and abs(row["mean_ms"] - sum(ordered) / n) > 1e-5 * (sum(ordered) / n):
                    out.append(f"row {i} ({name}): mean_ms is not the mean of its samples")
        order = [row.get(k) for k in ("min_ms", "q1_ms", "median_ms", "q3_ms", "max_ms") if _finite(row.get(k))]
        if any(a > b * (1 + 1e-9) for a, b in zip(order, order[1:])):
            out.append(f"row {i} ({name}): min <= q1 <= median <= q3 <= max does not hold")
        g = row.get("gbps")
        if "gbps" in row and not (_finite(g) and g >= 0):  # zero: a row that moves no bytes (atomics only)
            out.append(f"row {i} ({name}): gbps is {g}; a bandwidth must be a number, zero or more")
            continue
        dram = row.get("memory", "dram") == "dram"
        # Bytes beyond what the L2 holds come from DRAM in any timing: a
        # row that reads them can beat the DRAM's peak only by what the L2
        # kept from the launch before.
        l2 = gpu.get("l2_bytes") if _finite(gpu.get("l2_bytes")) else None
        m = row.get("median_ms")
        moved = g * 1e9 * m * 1e-3 if _finite(g) and _finite(m) else 0.0
        if peak and dram and row.get("timing") == "cold" and _finite(g) and g > peak:
            out.append(f"row {i} ({name}): {g:.0f} GB/s from DRAM is above the device's theoretical {peak:.0f} GB/s")
        elif peak and dram and l2 and moved > 2 * l2 and g > peak * moved / (moved - l2):
            out.append(f"row {i} ({name}): {g:.0f} GB/s over {moved / 2**20:.0f} MiB, more than the L2 holds, "
                       f"is above what the DRAM ({peak:.0f} GB/s) and the L2 together allow")
        elif on_chip and _finite(g) and g > on_chip:
            out.append(f"row {i} ({name}): {g:.0f} GB/s is above what the SMs can take in "
                       f"({on_chip:.0f} GB/s: {ON_CHIP_BYTES_PER_CLOCK_PER_SM} bytes per clock per SM)")
    return out


def impossible_timeline(rec: dict) -> list[str]:
    """Timeline rows' times and counts: finite numbers, none below zero."""
    tl = rec.get("timeline") if isinstance(rec.get("timeline"), dict) else {}
    res = tl.get("results") if isinstance(tl.get("results"), dict) else {}
    out = []
    for i, row in enumerate(res.get("rows", []) if isinstance(res.get("rows"), list) else []):
        if not isinstance(row, dict):
            continue
        bad = [k for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
               and not (math.isfinite(v) and v >= 0)]
        if bad:
            out.append(f"timeline row {i}: {', '.join(bad)} not a finite number of zero or more")
    return out


def _build(build: Path, targets: list[str]) -> str:
    cmd = ["cmake", "--build", str(build), "--target", *targets]
    proc = _run(cmd, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise UsageError(f"the build failed ({' '.join(cmd)}); fix it, then record again:\n{tail}")
    return " ".join(["cmake", "--build", display_path(build), "--target", *targets])


def copy_executable(src: Path, dst: Path) -> None:
    """Copies an executable so that no process of ours ever holds it open
    for writing. A child forked by any thread (the clock sampler starting
    nvidia-smi) inherits every descriptor open at that moment and keeps it
    until it execs; if one of them writes to the copy, exec of the copy
    fails with 'Text file busy' (ETXTBSY). So the copy is written by a
    separate `cp` process, whose descriptors none of our children share."""
    proc = subprocess.run(["cp", "--", str(src), str(dst)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"{display_path(src)}: cannot be copied to {display_path(dst)}: {proc.stderr.strip()}")
    os.chmod(dst, 0o700)


def _run_copy(binary: Path, args: list[str], tmp: Path, wrapper: list[str] | None = None,
              timeout: int = 3600) -> dict:
    """Copies `binary` to `tmp`, hashes the copy, runs it with `args` and
    --json, and returns what happened. The copy is what runs, so the hash
    is exactly the executable that produced the output."""
    if not binary.is_file():
        raise UsageError(f"{display_path(binary)}: not built")
    exe = tmp / binary.name
    copy_executable(binary, exe)
    sha = sha256_file(exe)
    json_path = tmp / f"{binary.name}.results.json"
    with contextlib.suppress(FileNotFoundError):
        json_path.unlink()
    cmd = [*(wrapper or []), str(exe), *args, "--json", str(json_path)]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, cwd=manifest.ROOT, timeout=timeout)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = -9, e.stdout or b"", (e.stderr or b"") + b"\n(killed after the time limit)"
    results, problem = None, None
    if json_path.exists():
        try:
            results = json.loads(json_path.read_text(encoding="utf-8"))
            if not isinstance(results, dict):
                results, problem = None, "the lesson's --json output is not an object"
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            problem = f"the lesson's --json output is not JSON: {e}"
    else:
        problem = "the lesson wrote no --json output"
    return {
        "sha256": sha,
        "exit_code": code,
        "duration_s": round(time.monotonic() - started, 3),
        "stdout": out.decode("utf-8", errors="backslashreplace"),
        "stderr": err.decode("utf-8", errors="backslashreplace"),
        "results": results,
        "results_error": problem,
    }


def _profile(lesson: Lesson, binary: Path, tmp: Path) -> dict:
    from . import profile as prof

    if not lesson.info.metrics or not lesson.info.profile_runs:
        return {"skipped": "the lesson declares no counters (lesson.toml [profile])"}
    ncu = prof.find_ncu()
    if ncu is None:
        return {"skipped": "ncu (Nsight Compute) not found on this machine"}
    metrics = [m["name"] for m in lesson.info.metrics]
    out = {"tool": "ncu", "version": prof.ncu_version(ncu), "metrics": list(lesson.info.metrics), "runs": []}
    for run in lesson.info.profile_runs:
        args = list(run["args"])
        exe = tmp / binary.name
        json_path = tmp / "profile.json"
        cmd = prof.command(ncu, metrics, str(exe), args, str(json_path))
        proc = subprocess.run(cmd, capture_output=True, cwd=manifest.ROOT)
        text = proc.stdout.decode("utf-8", errors="backslashreplace")
        names = []
        if json_path.exists():
            with contextlib.suppress(json.JSONDecodeError, UnicodeDecodeError):
                res = json.loads(json_path.read_text())
                names = [r.get("profiled") for r in res.get("rows", []) if r.get("group") == "profile"]
        kernels = prof.parse_csv(text, metrics)
        shown = ["ncu", *cmd[1:cmd.index(str(exe))], lesson.run_command, *args, "--json", "FILE"]
        out["runs"].append({
            "command": shown,
            "exit_code": proc.returncode,
            "rows": prof.assign_rows(kernels, names),
            "stderr_tail": proc.stderr.decode("utf-8", errors="backslashreplace")[-2000:],
        })
    return out


def record(
    lesson: Lesson,
    tag: str,
    commit: str | None = None,
    clean: bool | None = None,
    build: Path | None = None,
    base: Path | None = None,
    extra_args: list[str] | None = None,
    profile: bool = True,
    timeline: bool = True,
    review: Path | None = None,
    manifest_info: dict | None = None,
) -> Path:
    out_path = record_path(lesson, tag, base)
    if out_path.exists():
        raise UsageError(
            f"{display_path(out_path)}: a record for {lesson.target} with tag '{tag}' already exists; "
            "records are never overwritten; choose a new tag"
        )
    git_commit, git_dirty = git_state()
    if git_commit is not None:
        if commit is not None or clean is not None:
            raise UsageError(
                "this tree has git history, so git decides the commit and whether the tree is clean; "
                "drop --commit, --clean and --dirty"
            )
        commit, dirty, source = git_commit, git_dirty, "git"
    else:
        if commit is None or clean is None:
            raise UsageError(
                "this tree has no git history (a copy sent to a GPU machine, say); pass --commit SHA "
                "and --clean or --dirty, computed where the history is (git rev-parse HEAD; git status --porcelain)"
            )
        dirty, source = not clean, "argument"
    if not COMMIT_RE.match(commit):
        raise UsageError(f"--commit '{commit}' is not a git commit id (7 to 40 lower-case hex digits)")
    if not lesson.built:
        raise UsageError(f"{lesson.target} is left out of this build (its architectures); configure for its GPU")
    if review is not None:
        review_data = load_json(Path(review), "the summary tools/course review wrote")
    build = Path(build or build_dir())
    targets = [lesson.target] + ([lesson.timeline_target] if timeline and lesson.timeline_target else [])
    built_by = _build(build, targets)
    digest = sources_digest(lesson)
    if review is not None and (review_data.get("sources") or {}).get(lesson.target) != digest["digest"]:
        raise UsageError(
            f"{display_path(review)}: the review ran on other sources than these ({lesson.target}); "
            "run tools/course review again"
        )

    binary = build / "bin" / lesson.target
    started = dt.datetime.now(dt.timezone.utc)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        with ClockSampler() as clocks:
            run = _run_copy(binary, list(extra_args or []), tmp)
        gpu_json = (run["results"] or {}).get("gpu", {}) if isinstance((run["results"] or {}).get("gpu"), dict) else {}
        prof = _profile(lesson, binary, tmp) if profile else {"skipped": "--no-profile"}
        tl = None
        if timeline and lesson.timeline_target:
            with tempfile.TemporaryDirectory() as t2:
                tl_run = _run_copy(build / "bin" / lesson.timeline_target, list(lesson.info.timeline_args), Path(t2))
            tl = {
                "target": lesson.timeline_target,
                "command": [f"build/bin/{lesson.timeline_target}", *lesson.info.timeline_args, "--json", "FILE"],
                **{k: tl_run[k] for k in ("sha256", "exit_code", "stdout", "stderr", "results")},
            }

    gpu = {
        "name": gpu_json.get("name"),
        "compute_capability": gpu_json.get("compute_capability"),
        "sm_count": gpu_json.get("sm_count"),
        "l2_bytes": gpu_json.get("l2_bytes"),
        "memory_clock_khz": gpu_json.get("memory_clock_khz"),
        "memory_bus_bits": gpu_json.get("memory_bus_bits"),
        "driver": _driver_version(),
        "cuda_runtime": _runtime_string(gpu_json.get("runtime")),
        "cuda_driver_api": _runtime_string(gpu_json.get("driver_api")),
        "clocks": clocks.summary(),
    }
    gpu["peak_dram_gbps"] = peak_dram_gbps(gpu)
    impossible = impossible_rows(run["results"], gpu)
    if impossible:
        raise EvidenceError(["refused to record: the run holds numbers no device allows:"] + impossible)
    rec = {
        "schema": SCHEMA,
        "lesson": lesson.target,
        "tag": tag,
        "recorded_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": [lesson.run_command, *(extra_args or []), "--json", "FILE"],
        "exit_code": run["exit_code"],
        "duration_s": run["duration_s"],
        "stdout": run["stdout"],
        "stderr": run["stderr"],
        "gpu": gpu,
        "toolchain": {
            "nvcc": _nvcc_version(),
            "nvcc_built_with": (manifest_info or {}).get("nvcc_version"),
            "flags": lesson.nvcc_flags,
            "architectures": list(lesson.architectures),
        },
        "executable": {"target": lesson.target, "sha256": run["sha256"], "built_by": built_by},
        "git": {"commit": commit, "dirty": bool(dirty), "source": source},
        "host": {"platform": platform.platform()},
        "sources": digest,
        "results": run["results"],
        "profile": prof,
    }
    if run["results_error"]:
        rec["results_error"] = run["results_error"]
    if tl is not None:
        rec["timeline"] = tl
    if review is not None:
        rec["review"] = review_data
    rec["digest"] = record_digest(rec)
    text = json.dumps(rec, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if not create_new_atomic(out_path, text):
        raise UsageError(f"{display_path(out_path)}: appeared while the run was in progress; not overwritten")
    return out_path


# ----------------------------------------------------------------------
# The promotion rules
# ----------------------------------------------------------------------


def _cc_tuple(cc) -> tuple[int, int] | None:
    if not isinstance(cc, str) or not re.fullmatch(r"\d+\.\d+", cc):
        return None
    a, b = cc.split(".")
    return int(a), int(b)


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
    exe = rec.get("executable") if isinstance(rec.get("executable"), dict) else {}
    if exe.get("target") != lesson.target or not re.fullmatch(r"[0-9a-f]{64}", str(exe.get("sha256", ""))):
        reasons.append("the executable that ran was not the lesson's own build target (no target and sha256 recorded)")
    elif not str(exe.get("built_by", "")).startswith("cmake --build"):
        reasons.append("the record does not show the lesson built by its build (cmake --build)")
    reasons += impossible_rows(results, gpu)
    reasons += impossible_timeline(rec)
    build = Path(lesson.binary).parent.parent
    extras = list(lesson.extra_flags) + buildcheck.compile_extras(lesson, build) + buildcheck.link_extras(lesson, build)
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


# ----------------------------------------------------------------------
# promote
# ----------------------------------------------------------------------


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


def confined_record(entry_record: str, lesson_target: str, base: Path | None = None) -> Path:
    """The record file an entry names, which must lie in
    evidence/records/<lesson>/ (no '..', no link out)."""
    base = Path(base or evidence_dir())
    folder = (base / "records" / lesson_target).resolve()
    p = (base / entry_record).resolve()
    if p.parent != folder or p.suffix != ".json":
        raise EvidenceError(f"{entry_record}: not a record of {lesson_target} (expected records/{lesson_target}/TAG.json)")
    return p


def compare_records(a: dict, b: dict) -> list[dict]:
    """Every timed row the two records share: both medians, the ratio and
    the verdict of a against b."""
    def rows(rec):
        out = {}
        res = rec.get("results") if isinstance(rec.get("results"), dict) else {}
        for row in res.get("rows", []) or []:
            if isinstance(row, dict) and isinstance(row.get("samples_ms"), list) and row["samples_ms"]:
                out[row_key(row)] = row
        return out

    ra, rb = rows(a), rows(b)
    out = []
    for key in [k for k in ra if k in rb]:
        try:
            v = cmp.verdict(ra[key]["samples_ms"], rb[key]["samples_ms"])
        except ValueError:
            continue
        out.append({"row": dict(key), "a_median_ms": v.a.median, "b_median_ms": v.b.median,
                    "ratio": v.ratio, "verdict": v.word})
    return out


ROW_KEY_FIELDS = ("group", "version", "schedule", "mode", "kernel", "keys", "bins", "elements", "k", "timing")


def row_key(row: dict) -> tuple:
    return tuple((k, row[k]) for k in ROW_KEY_FIELDS if k in row)


def promote(lesson: Lesson, tag: str, by: str, key: Path, base: Path | None = None,
            say=print) -> dict:
    by = (by or "").strip()
    if not by or len(by) > 100 or any(c in by for c in "\n\r\t"):
        raise UsageError("--by needs the reviewer's name (one line, at most 100 characters)")
    path = record_path(lesson, tag, base)
    if not path.exists():
        raise EvidenceError(f"{display_path(path)}: no record for {lesson.target} with tag '{tag}'")
    rec = load_record(path)
    reasons = record_problems(lesson, rec, for_promotion=True)
    if reasons:
        raise EvidenceError([f"refused to promote {lesson.target} '{tag}': {r}" for r in reasons])
    allowed = signing.allowed_signers_path(base or evidence_dir())
    with promotions_lock(base):
        promotions = load_promotions(base)
        current = promotions["promoted"].get(lesson.target)
        if current and current.get("record"):
            with contextlib.suppress(EvidenceError):
                old = load_record(confined_record(current["record"], lesson.target, base))
                table = compare_records(rec, old)
                say(f"compared with the record promoted now ({current.get('tag')}): read this before you go on")
                say(format_comparison(table, tag, current.get("tag", "?")))
        entry = {
            "lesson": lesson.target,
            "tag": tag,
            "record": path.relative_to(base or evidence_dir()).as_posix(),
            "record_digest": rec["digest"],
            "sources_digest": rec["sources"]["digest"],
            "executable_sha256": rec["executable"]["sha256"],
            "commit": rec["git"]["commit"],
            "gpu": rec["gpu"]["name"],
            "promoted_by": by,
            "promoted_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        signature = signing.sign(entry, key)
        principal = signing.principal_of(signature, allowed)
        if principal is None:
            raise EvidenceError(
                f"{display_path(key)}: this key is not a reviewer's key in {display_path(allowed)}; "
                "add the reviewer first (research/REVIEW-PROCESS.md, 'Reviewers and their keys')"
            )
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


def format_comparison(table: list[dict], a: str, b: str) -> str:
    if not table:
        return "(no timed rows in common)"
    names = [" ".join(str(v) for v in r["row"].values()) for r in table]
    nw = max(len(n) for n in names)
    w = max(len(a), len(b), 9) + 3  # a tag's full name over each median: "NNNN.NN us"
    lines = [f"ratio: {b}'s median over {a}'s; verdict: {a} against {b} (research/REVIEW-PROCESS.md)",
             f"{'row':<{nw}} {a:>{w}} {b:>{w}} {'ratio':>7}  verdict"]
    for name, r in zip(names, table):
        lines.append(f"{name:<{nw}} {r['a_median_ms'] * 1000:>{w - 3}.2f} us {r['b_median_ms'] * 1000:>{w - 3}.2f} us "
                     f"{r['ratio']:>7.3f}  {r['verdict']}")
    return "\n".join(lines)


# ----------------------------------------------------------------------
# verify and state
# ----------------------------------------------------------------------


@dataclasses.dataclass
class State:
    lesson: Lesson
    state: str  # "promoted", "stale", "altered", "missing", "invalid", "unverified"
    reasons: list[str]
    entry: dict | None
    record: dict | None  # only when the state is "promoted"

    @property
    def valid(self) -> bool:
        return self.state == "promoted"


def state_of(lesson: Lesson, base: Path | None = None) -> State:
    """The lesson's evidence as a page may use it: the record only when
    every rule holds, the signature included."""
    try:
        promotions = load_promotions(base)
    except EvidenceError as e:
        return State(lesson, "invalid", [str(d) for d in e.diagnostics], None, None)
    entry = promotions["promoted"].get(lesson.target)
    if entry is None:
        return State(lesson, "unverified", ["no record has been promoted"], None, None)
    try:
        path = confined_record(entry["record"], lesson.target, base)
    except EvidenceError as e:
        return State(lesson, "invalid", [str(d) for d in e.diagnostics], entry, None)
    if not path.exists():
        return State(lesson, "missing", [f"the promoted record {entry['record']} is missing"], entry, None)
    try:
        rec = load_record(path)
    except EvidenceError as e:
        return State(lesson, "altered", ["altered: " + "; ".join(str(d) for d in e.diagnostics)], entry, None)
    reasons = record_problems(lesson, rec, for_promotion=False)
    if rec.get("digest") != entry.get("record_digest"):
        reasons.insert(0, "altered: the record is not the one that was promoted (its digest changed)")
    problem = signing.verify(entry, signing.allowed_signers_path(base or evidence_dir()))
    if problem:
        reasons.insert(0, f"unsigned or forged: {problem}")
    for key, value in (("sources_digest", rec.get("sources", {}).get("digest")),
                       ("executable_sha256", rec.get("executable", {}).get("sha256")),
                       ("tag", rec.get("tag"))):
        if entry.get(key) != value:
            reasons.append(f"altered: the promotion's {key} does not match the record")
    if not reasons:
        return State(lesson, "promoted", [], entry, rec)
    state = next((s for s, p in (("altered", "altered"), ("invalid", "unsigned"), ("stale", "stale"))
                  if any(r.startswith(p) for r in reasons)), "invalid")
    return State(lesson, state, reasons, entry, None)


def verify(lessons: list[Lesson], base: Path | None = None) -> list[str]:
    """Problems with the evidence: every promoted entry re-checked, and
    every record file well formed. Lessons never promoted are fine here
    (their pages say UNVERIFIED)."""
    problems = []
    base = Path(base or evidence_dir())
    try:
        promoted = load_promotions(base)["promoted"]
    except EvidenceError as e:
        return [str(d) for d in e.diagnostics]
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
    for p in sorted((base / "records").glob("*/*.json")):
        try:
            rec = load_record(p)
        except EvidenceError as e:
            problems += [str(d) for d in e.diagnostics]
            continue
        if rec.get("lesson") != p.parent.name:
            problems.append(f"{display_path(p)}: error: a record of {rec.get('lesson')!r} filed under "
                            f"records/{p.parent.name}/; expected records/<its lesson>/<tag>.json")
        if p.parent.name not in known:
            problems.append(f"{display_path(p)}: error: records/{p.parent.name}/ is no declared lesson's folder")
    problems += stray_files(base)
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
            out.append(f"{display_path(p)}: error: not something evidence/ holds; expected records/<lesson>/<tag>.json, "
                       "promoted.json or allowed_signers (regular files)")
    return out


