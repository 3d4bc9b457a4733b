"""The reviewer's hardware check, on a GPU machine, one command:

    tools/course review [--build-dir build-gpu] [-o build-gpu/review.json]

Nothing here names a lesson: every step comes from the build's manifest
and each lesson's lesson.toml.

  1. configure with the gpu-only preset and build every day (or, with
     --lesson, that day alone) and its variants (negative builds,
     timeline builds, nvbench);
  2. ctest's GPU tests of those days: every one must run and pass (a
     skip fails here);
  3. each lesson's declared sanitizer runs, with --error-exitcode;
  4. each lesson's negative builds: "fault" ones must be caught (a
     non-zero exit, or racecheck's hazards); "report" ones are run and
     what they saw is kept (their --json rows);
  5. a machine-readable summary: each step, pass or fail, the sanitizers'
     error counts, each negative build's exit code and error name, tied
     to the sources digest it ran on. `evidence record --review FILE`
     stores it in the record, and pages quote it from there.

Standard library only: the GPU machine may have nothing else.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..sources import digest as dg
from ..sources import manifest
from ..errors import UsageError, display_path
from ..fsutil import check_build_folder, check_output_file, ensure_owned_folder, write_atomic
from .strictjson import program_rows

SCHEMA = "course-review/1"


def _sh(cmd: list[str], log: Path, timeout: int = 1800) -> tuple[int, str]:
    try:
        proc = subprocess.run(cmd, cwd=manifest.ROOT, capture_output=True, timeout=timeout)
        code, text = proc.returncode, (proc.stdout + proc.stderr).decode("utf-8", errors="backslashreplace")
    except subprocess.TimeoutExpired as e:
        code = -9
        text = ((e.stdout or b"") + (e.stderr or b"")).decode("utf-8", errors="backslashreplace") + "\n(time limit)"
    except FileNotFoundError:
        code, text = 127, f"{cmd[0]}: not found"
    write_atomic(log, " ".join(cmd) + "\n" + text)  # replaces a planted link, never writes through it
    return code, text


def _sanitizer() -> str:
    return shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"


def _count_errors(text: str) -> int | None:
    m = re.search(r"(?:ERROR|RACECHECK) SUMMARY: (\d+) (?:errors|hazards)", text)
    return int(m.group(1)) if m else None


# Exits that mean the program never ran its kernels: the shell could not
# run it (126) or find it (127), or the lesson waived (2: no suitable GPU).
NOT_STARTED = (2, 126, 127)


def _started(text: str, target: str, code: int) -> bool:
    """Whether a variant got as far as its GPU work: it printed the
    lesson's opening line ("TARGET on GPU ..."), which course::Lesson
    prints only once the capability gate has passed, and its exit is not
    one that means it never ran (a signal is a fault only after that)."""
    return code not in NOT_STARTED and f"{target} on " in text


def run(build: Path, logs: Path, say=print, only: list[str] | None = None) -> dict:
    steps: list[dict] = []

    def step(name: str, ok: bool | None, **fields) -> None:
        steps.append({"step": name, "passed": ok, **fields})
        mark = "PASS" if ok else ("INFO" if ok is None else "FAIL")
        say(f"{mark}  {name}" + (f"  ({fields.get('detail')})" if fields.get("detail") else ""))

    code, text = _sh(["cmake", "--preset", "gpu-only", f"-B{build}"], logs / "configure.log")
    if code != 0:
        step("configure", False, detail=f"see {display_path(logs / 'configure.log')}")
        return _summary([], steps, build)
    lessons = manifest.load(build / "course-manifest.json")
    if only:  # --lesson: that lesson alone, built, tested and reviewed
        lessons = [manifest.find(lessons, name) for name in only]
        only = [l.target for l in lessons]
    built = [l for l in lessons if l.built]
    targets = [t for l in built for t in (l.target, *l.variants, l.timeline_target, l.nvbench_target) if t]
    what = ", ".join(only) if only else "every day"
    code = _sh(["cmake", "--build", str(build), "-j", "16", "--target", *targets], logs / "build.log")[0] if targets else 0
    step(f"build {what} and its variants", code == 0, exit_code=code)
    if code != 0:
        return _summary(lessons, steps, build)

    names = "|".join(l.target for l in built)
    code, text = _sh(["ctest", "--test-dir", str(build), "-L", "gpu", "-R", f"^({names})_gpu$",
                      "--output-on-failure"], logs / "ctest-gpu.log")
    skipped = len(re.findall(r"\*\*\*Skipped", text))
    step(f"ctest -L gpu ({what}): every GPU test ran and passed", code == 0 and skipped == 0,
         exit_code=code, skipped=skipped)

    for lesson in lessons:
        if not lesson.built:
            step(f"{lesson.target}: left out of this build", None)
            continue
        binary = str(build / "bin" / lesson.target)
        for s in lesson.info.sanitize:
            name = f"{lesson.target} {s['tool']} {' '.join(s['args'])}"
            log = logs / f"{lesson.target}-{s['tool']}-{len(steps)}.log"
            code, text = _sh([_sanitizer(), "--tool", s["tool"], "--error-exitcode", "99", binary, *s["args"]], log)
            errors = _count_errors(text)
            step(name, code == 0, tool=s["tool"], lesson=lesson.target, args=list(s["args"]),
                 exit_code=code, errors=errors)
        for k, neg in enumerate(lesson.info.negative):
            target = neg["target"]
            if target not in lesson.variants:  # lesson.toml's loader refuses this too
                step(f"{target}: not one of {lesson.target}'s declared variants", False)
                continue
            variant = str(build / "bin" / target)
            with tempfile.TemporaryDirectory() as t:
                out_json = Path(t) / "out.json"
                code, text = _sh([variant, *neg["args"], "--json", str(out_json)],
                                 logs / f"{lesson.target}-negative-{k}.log")
                rows = program_rows(out_json)
            error = re.search(r"cudaError\w+", text)
            fields = {"lesson": lesson.target, "target": target, "args": list(neg["args"]), "expect": neg["expect"],
                      "exit_code": code, "cuda_error": error and error[0], "rows": rows}
            if not _started(text, lesson.target, code):
                step(f"{target}: did not start", False, detail=f"exit {code}: the program never reached its GPU "
                     "work, so no fault of its kernels can be caught here", **fields)
            elif neg["expect"] == "report":
                step(f"{target}: reported", None, **fields)
            elif code != 0:
                step(f"{target}: the fault is caught", True, caught_by="exit code", **fields)
            else:
                log = logs / f"{lesson.target}-negative-{k}-racecheck.log"
                code2, text2 = _sh([_sanitizer(), "--tool", "racecheck", "--error-exitcode", "99",
                                    variant, *neg["args"]], log)
                step(f"{target}: the fault is caught", code2 != 0, caught_by="racecheck",
                     racecheck_hazards=_count_errors(text2), **fields)
    return _summary(lessons, steps, build)


def _summary(lessons, steps, build: Path) -> dict:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader", "-i", "0"],
                         capture_output=True, text=True) if shutil.which("nvidia-smi") else None
    return {"schema": SCHEMA,
            "ran_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "gpu": gpu.stdout.strip() if gpu is not None and gpu.returncode == 0 else None,
            "sources": {l.target: dg.sources_digest(l.digest_files(build), manifest.ROOT)["digest"] for l in lessons},
            "passed": all(s["passed"] is not False for s in steps) and bool(steps),
            "steps": steps}


def main(build: Path, output: Path, say=print, only: list[str] | None = None) -> dict:
    build = Path(build)
    check_build_folder(build, manifest.ROOT)
    check_output_file(Path(output), manifest.ROOT)
    logs = build / "review-logs"
    build.mkdir(parents=True, exist_ok=True)
    ensure_owned_folder(logs, manifest.ROOT)
    summary = run(build, logs, say, only)
    write_atomic(output, json.dumps(summary, indent=1, sort_keys=True) + "\n")
    say(f"review: {'passed' if summary['passed'] else 'FAILED'}; summary written to {display_path(output)}, "
        f"logs in {display_path(logs)}")
    if not summary["passed"]:
        raise UsageError("review: a required step failed (see above); the summary records it")
    return summary
