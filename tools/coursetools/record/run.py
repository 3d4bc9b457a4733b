"""`course evidence record`: builds the lesson's own target with the
configured build, runs that binary (and its profile and timeline steps) on
this GPU, and writes one record, evidence/records/<lesson>/<tag>.json.bz2,
never overwriting one. What ran is recorded truthfully: the sha256 of the
executable, the sources digest computed here."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from ..binaries import flags
from ..errors import EvidenceError, UsageError, display_path
from ..sources import buildfile, manifest
from ..sources.manifest import Lesson, build_dir
from . import machine
from .machine import ClockSampler, git_state
from .plausibility import impossible_rows, peak_dram_gbps
from .proof import gpu_proof_problems
from .format import COMMIT_RE, SCHEMA, record_digest, record_path, sha256_file, sources_digest, write_new_record
from .strictjson import StrictJSONError, load_json, program_rows, strict_json


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, **kw)
    except FileNotFoundError:
        raise UsageError(f"{cmd[0]}: not found; expected it on the PATH") from None


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


def _text(output: bytes) -> str:
    return output.decode("utf-8", errors="backslashreplace")


def _run_copy(binary: Path, args: list[str], tmp: Path, timeout: int = 3600, nvbench: bool = False) -> dict:
    """Copies `binary` into `tmp` (see copy_executable), hashes the copy, and
    runs it with `args` and --json: the hash is that of what ran. nvbench
    writes NaN and Infinity, kept as null, where a lesson's JSON is strict."""
    if not binary.is_file():
        raise UsageError(f"{display_path(binary)}: not built")
    exe = tmp / binary.name
    if not exe.exists():
        copy_executable(binary, exe)
    sha = sha256_file(exe)
    json_path = tmp / f"{binary.name}.results.json"
    json_path.unlink(missing_ok=True)
    started = time.monotonic()
    try:  # from the repository's root; -9: killed past `timeout` seconds
        proc = _run([str(exe), *args, "--json", str(json_path)], cwd=manifest.ROOT, timeout=timeout)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = -9, e.stdout or b"", (e.stderr or b"") + f"\n(killed after {timeout} s)".encode()
    seconds = round(time.monotonic() - started, 3)
    results, problem = None, None
    who = "nvbench" if nvbench else "the lesson"
    if not json_path.exists():
        problem = f"{who} wrote no --json output"
    elif nvbench:
        try:
            results = json.loads(json_path.read_text(encoding="utf-8"), parse_constant=lambda c: None)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
            problem = f"nvbench's --json output is not JSON: {e}"
    else:
        try:
            results = strict_json(json_path.read_bytes().decode("utf-8"))
            if not isinstance(results, dict):
                results, problem = None, "the lesson's --json output is not an object"
        except (StrictJSONError, UnicodeDecodeError) as e:
            results, problem = None, f"the lesson's --json output is not strict JSON: {e}"
    return {"sha256": sha, "exit_code": code, "duration_s": seconds, "stdout": _text(out),
            "stderr": _text(err), "results": results, "results_error": problem}


def _profile(lesson: Lesson, binary: Path, tmp: Path) -> dict:
    from . import profile as prof

    if not lesson.info.metrics or not lesson.info.profile_runs:
        return {"skipped": "the lesson declares no counters (lesson.toml [profile])"}
    ncu = prof.find_ncu()
    if ncu is None:
        return {"skipped": "ncu (Nsight Compute) not found on this machine"}
    metrics = [m["name"] for m in lesson.info.metrics]
    out = {"tool": "ncu", "version": prof.ncu_version(ncu), "metrics": list(lesson.info.metrics), "runs": []}
    exe, json_path = tmp / binary.name, tmp / "profile.json"
    for run in lesson.info.profile_runs:
        args = list(run["args"])
        cmd = prof.command(ncu, metrics, str(exe), args, str(json_path))
        json_path.unlink(missing_ok=True)  # no run reads the rows an earlier run left
        proc = subprocess.run(cmd, capture_output=True, cwd=manifest.ROOT)
        names = [r.get("profiled") for r in program_rows(json_path) if r.get("group") == "profile"]
        kernels = prof.parse_csv(_text(proc.stdout), metrics)
        shown = ["ncu", *cmd[1:cmd.index(str(exe))], lesson.run_command, *args, "--json", "FILE"]
        out["runs"].append({"command": shown, "exit_code": proc.returncode,
                            "rows": prof.assign_rows(kernels, names),
                            "stderr_tail": _text(proc.stderr)[-2000:]})
    return out


def _nvbench(lesson: Lesson, build: Path, wanted: bool) -> dict | None:
    """The lesson's nvbench benchmarks, run after its own program on the
    same GPU with lesson.toml [nvbench] args (None where it declares none)."""
    if not (lesson.info.nvbench or lesson.nvbench_target):
        return None
    if not wanted:
        return {"skipped": "--no-nvbench"}
    if not lesson.nvbench_target:
        return {"skipped": "this build has no nvbench (cuda-bench's folder: COURSE_NVBENCH_DIR)"}
    args = list(lesson.info.nvbench.get("args", []))
    with tempfile.TemporaryDirectory() as t:
        run = _run_copy(build / "bin" / lesson.nvbench_target, args, Path(t), timeout=1800, nvbench=True)
    return {"target": lesson.nvbench_target,
            "command": [f"build/bin/{lesson.nvbench_target}", *args, "--json", "FILE"],
            **{k: run[k] for k in ("sha256", "exit_code", "duration_s", "results")},
            "stdout_tail": run["stdout"][-4000:],
            "stderr_tail": run["stderr"][-4000:],
            **({"results_error": run["results_error"]} if run["results_error"] else {})}


def record(lesson: Lesson, tag: str, commit: str | None = None, clean: bool | None = None, build: Path | None = None,
           base: Path | None = None, extra_args: list[str] | None = None, profile: bool = True, timeline: bool = True,
           review: Path | None = None, manifest_info: dict | None = None, nvbench: bool = True,
           refuse: Callable[[dict], list[str]] | None = None) -> Path:
    """Writes the lesson's record, only once it shows a GPU ran the
    program and holds nothing a device cannot do. `refuse` finds further
    faults in the run's results (one line each): the caller passes the
    rule's recount of the program's own same-code tally, since the GPU
    side imports nothing of the rule."""
    out_path = record_path(lesson, tag, base)
    if out_path.exists():
        raise UsageError(f"{display_path(out_path)}: a record for {lesson.target} with tag '{tag}' already exists; "
                         "records are never overwritten; choose a new tag")
    build = Path(build or build_dir())
    git, review_data = _checks(lesson, commit, clean, build, review)
    built_by, digest = _build_checked(lesson, build, timeline, nvbench)
    if review is not None and (review_data.get("sources") or {}).get(lesson.target) != digest["digest"]:
        raise UsageError(f"{display_path(review)}: the review ran on other sources than these ({lesson.target}); "
                         "run tools/course review again")
    started = dt.datetime.now(dt.timezone.utc)
    runs = _run_all(lesson, build, list(extra_args or []), profile, timeline, nvbench)
    rec = _assemble(lesson, tag, started, runs, git, digest, built_by, manifest_info, extra_args)
    _admit(rec, runs["main"], refuse)
    for key, value in (("results_error", runs["main"]["results_error"]), ("timeline", runs["timeline"]),
                       ("nvbench", runs["nvbench"]), ("review", review_data)):
        if value is not None:
            rec[key] = value
    rec["digest"] = record_digest(rec)
    if not write_new_record(out_path, rec):
        raise UsageError(f"{display_path(out_path)}: appeared while the run was in progress; not overwritten")
    return out_path


def _checks(lesson: Lesson, commit: str | None, clean: bool | None, build: Path,
            review: Path | None) -> tuple[dict, dict | None]:
    """What must hold before anything is built, each refusal saying why;
    the record's "git" part (git's word where the tree has history), and
    the review."""
    git_commit, git_dirty = git_state()
    if git_commit is not None:
        if commit is not None or clean is not None:
            raise UsageError("this tree has git history, so git decides the commit and whether the tree is clean; "
                             "drop --commit, --clean and --dirty")
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
    # nvcc reads these from the environment and adds them to every command:
    # flags no compile command, dependency file or digest would show.
    hidden = [v for v in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "NVCC_CCBIN") if os.environ.get(v)]
    if hidden:
        raise UsageError(f"{', '.join(hidden)} set in the environment: nvcc would build with flags the record "
                         "cannot show; unset them and record again")
    review_data = load_json(Path(review), "the summary tools/course review wrote") if review is not None else None
    steps = buildfile.build_file_problems(lesson)
    if steps:
        raise EvidenceError(["refused to record: the lesson's build definition adds what the course's does not:"]
                            + steps)
    cache = build / "CMakeCache.txt"
    if cache.is_file() and re.search(r"^COURSE_TOOLS:BOOL=(?:ON|TRUE|1|YES)$",
                                     cache.read_text(encoding="utf-8", errors="replace"), re.M | re.I):
        raise UsageError(f"{display_path(build)} is configured with the tools on, which read CMake files the "
                         "sources digest does not cover; record from a build without them: cmake --preset gpu-only, "
                         "then --build-dir build-gpu")
    return {"commit": commit, "dirty": bool(dirty), "source": source}, review_data


def _build_checked(lesson: Lesson, build: Path, timeline: bool, nvbench: bool) -> tuple[str, dict]:
    """Builds the lesson's targets, refusing a build that read what the
    digest cannot see or a binary the link did not make: the command as
    recorded, and the sources digest."""
    targets = [lesson.target] + ([lesson.timeline_target] if timeline and lesson.timeline_target else []) + (
        [lesson.nvbench_target] if nvbench and lesson.nvbench_target else [])
    built_by = _build(build, targets)
    configured = flags.configure_problems(build)
    if configured:
        raise EvidenceError(["refused to record: the build read what the sources digest cannot see:"] + configured)
    relinked = flags.relink_problems(lesson, build)
    if relinked:
        raise EvidenceError(["refused to record: the executable is not the one the build produced:"] + relinked)
    return built_by, sources_digest(lesson, build)


def _run_all(lesson: Lesson, build: Path, extra_args: list[str], profile: bool, timeline: bool, nvbench: bool) -> dict:
    """The program's run (with the clocks sampled around it), then its
    profile, timeline and nvbench runs, each from a copy of its binary."""
    binary = build / "bin" / lesson.target
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        copy_executable(binary, tmp / binary.name)  # before the sampler's thread forks anything
        with ClockSampler() as clocks:
            run = _run_copy(binary, extra_args, tmp)
        smi_gpus = machine.gpus()
        prof = _profile(lesson, binary, tmp) if profile else {"skipped": "--no-profile"}
        tl = None
        if timeline and lesson.timeline_target:
            with tempfile.TemporaryDirectory() as t2:
                tl_run = _run_copy(build / "bin" / lesson.timeline_target, list(lesson.info.timeline_args), Path(t2))
            tl = {"target": lesson.timeline_target,
                  "command": [f"build/bin/{lesson.timeline_target}", *lesson.info.timeline_args, "--json", "FILE"],
                  **{k: tl_run[k] for k in ("sha256", "exit_code", "stdout", "stderr", "results")}}
        bench = _nvbench(lesson, build, nvbench)
    return {"main": run, "clocks": clocks, "smi_gpus": smi_gpus, "profile": prof, "timeline": tl, "nvbench": bench}


def _assemble(lesson: Lesson, tag: str, started: dt.datetime, runs: dict, git: dict, digest: dict,
              built_by: str, manifest_info: dict | None, extra_args: list[str] | None) -> dict:
    """The record of the runs: the GPU as the program and the driver report
    it, the toolchain, the executable, the host, the sources and results."""
    run, smi_gpus = runs["main"], runs["smi_gpus"]
    results = run["results"] or {}
    gpu_json = results.get("gpu") if isinstance(results.get("gpu"), dict) else {}
    uuid = gpu_json.get("uuid") if isinstance(gpu_json.get("uuid"), str) else None
    driver = next((g.get("driver") for g in smi_gpus if g.get("uuid") == uuid), None)
    gpu = {k: gpu_json.get(k) for k in ("name", "pci_bus_id", "compute_capability", "sm_count",
                                         "l2_bytes", "memory_clock_khz", "memory_bus_bits")}
    gpu.update(uuid=uuid, driver=driver, smi_gpus=smi_gpus, clocks=runs["clocks"].summary(uuid),
               cuda_runtime=machine.runtime_string(gpu_json.get("runtime")),
               cuda_driver_api=machine.runtime_string(gpu_json.get("driver_api")))
    gpu["peak_dram_gbps"] = peak_dram_gbps(gpu)
    return {"schema": SCHEMA,
            "lesson": lesson.target,
            "tag": tag,
            "recorded_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": [lesson.run_command, *(extra_args or []), "--json", "FILE"],
            "exit_code": run["exit_code"],
            "duration_s": run["duration_s"],
            "stdout": run["stdout"],
            "stderr": run["stderr"],
            "gpu": gpu,
            "toolchain": {"nvcc": machine.nvcc_version(),
                          "nvcc_built_with": (manifest_info or {}).get("nvcc_version"),
                          "flags": lesson.nvcc_flags,
                          "architectures": list(lesson.architectures)},
            "executable": {"target": lesson.target, "sha256": run["sha256"], "built_by": built_by},
            "git": git,
            "host": machine.host(),
            "sources": digest,
            "results": run["results"],
            "profile": runs["profile"]}


def _admit(rec: dict, run: dict, refuse: Callable[[dict], list[str]] | None) -> None:
    """Refuses (nothing written) a record with no proof a GPU ran it, with
    numbers no device allows, or whose results `refuse` faults."""
    refused = gpu_proof_problems(rec)
    if refused:
        said = run["stderr"].strip().splitlines()[-1:]
        raise EvidenceError(["refused to record: nothing shows that a GPU ran this program:"] + refused
                            + [f"the program said: {line[:300]}" for line in said])
    impossible = impossible_rows(run["results"], rec["gpu"]) + (refuse(run["results"]) if refuse else [])
    if impossible:
        raise EvidenceError(["refused to record: the run holds numbers no device allows:"] + impossible)
