"""What a lesson's code compiles to, read back from the built binary.

Each lesson declares in lesson.toml the kernels whose machine code its
page describes and the instructions that must be there ([[sass]]);
`course sass` (a CTest test) checks every declaration against the build.
cuobjdump and nvdisasm come from NVIDIA's PyPI wheels in build/venv (the
local toolkit may ship without them); a CUDA toolkit's own copies are used
when those are on PATH instead.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import SourceError, UsageError, display_path

INTERESTING = re.compile(
    r"SR_CgaCtaId|SR_SWINHI|PRMT|MAPA|\bLD\.E|\bLDS\b|UCGABAR|CGAERRBAR|CCTL|MEMBAR|REDG|ATOM|CLOCK"
)


def _tool(name: str) -> str:
    for cand in (Path(sys.prefix) / "lib").glob(f"python*/site-packages/nvidia/cu*/bin/{name}"):
        return str(cand)
    found = shutil.which(name) or (f"/usr/local/cuda/bin/{name}" if os.path.exists(f"/usr/local/cuda/bin/{name}") else None)
    if not found:
        raise UsageError(f"{name} not found; the configure step installs it into build/venv (cmake --preset course)")
    return found


@functools.lru_cache(maxsize=8)
def dump(binary: Path) -> dict[str, list[str]]:
    if not Path(binary).exists():
        raise UsageError(f"{display_path(binary)}: not built; build it first (cmake --build build)")
    env = dict(os.environ)
    env["PATH"] = str(Path(_tool("nvdisasm")).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([_tool("cuobjdump"), "--dump-sass", str(binary)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise UsageError(f"cuobjdump --dump-sass {display_path(binary)} failed: {proc.stderr.strip()}")
    functions: dict[str, list[str]] = {}
    current = None
    for line in proc.stdout.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = m.group(1)
            functions[current] = []
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(/\*.*)?$", line)
        if current and m:
            functions[current].append(m.group(2).rstrip(" ;"))
    return functions


def excerpt(binary: Path, mangled: str, max_lines: int) -> list[str]:
    fns = dump(Path(binary))
    if mangled not in fns:
        raise SourceError(f"{display_path(binary)}: no kernel {mangled} in the SASS")
    seen, out = set(), []
    # Unrolled loops repeat one load many times; each distinct
    # instruction shape once, in order.
    for l in (l for l in fns[mangled] if INTERESTING.search(l)):
        shape = re.sub(r"R\d+|UR\d+|0x[0-9a-f]+|P\d", "_", l)
        if shape not in seen:
            seen.add(shape)
            out.append(l)
    return out[:max_lines]


# How much CPU time the declared patterns of one lesson may take against
# its machine code: a real expectation takes milliseconds; a pattern that
# backtracks exponentially never ends, and is named instead. CPU time (the
# child's RLIMIT_CPU), so a busy machine never trips it; the clock's limit
# beside it only catches a child that stops without using the CPU.
PATTERN_SECONDS = 10
WALL_SECONDS_PER_CPU_SECOND = 30

_MATCHER = """
import json, re, resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
for pattern, text in json.load(sys.stdin):
    print(1 if re.search(pattern, text) else 0, flush=True)
"""


def _matches(jobs: list[tuple[str, str]]) -> tuple[list[bool], int | None]:
    """re.search for each (pattern, text), in a child process under a CPU
    time limit: the results, and the index of the job that ran out of time."""
    import json

    try:
        proc = subprocess.run([sys.executable, "-c", _MATCHER, str(PATTERN_SECONDS)], input=json.dumps(jobs),
                              capture_output=True, text=True,
                              timeout=PATTERN_SECONDS * WALL_SECONDS_PER_CPU_SECOND)
        out = proc.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        proc = None
    done = [line == "1" for line in out.split()]
    if proc is None or proc.returncode != 0 or len(done) < len(jobs):
        return done, len(done)  # killed at its CPU limit (SIGXCPU) inside job len(done)
    return done, None


def check_all(lessons) -> int:
    """Every declared expectation of every built lesson; SourceError with
    all that fail, each naming its lesson.toml line. Returns how many
    held."""
    problems, held = [], 0
    for lesson in lessons:
        if not lesson.info.sass or not lesson.built:
            continue
        fns = dump(Path(lesson.binary))
        where = f"{lesson.dir}/lesson.toml"
        jobs, names = [], []
        for i, exp in enumerate(lesson.info.sass):
            body = fns.get(exp["kernel"])
            if body is None:
                problems.append(f"{where}:{lesson.info.line(f'sass[{i}].kernel')}: error: kernel {exp['kernel']} "
                                f"not found in {display_path(lesson.binary)}")
                continue
            for k, pat in enumerate(exp["patterns"]):
                jobs.append((pat, "\n".join(body)))
                names.append((i, k, exp))
        found, hung = _matches(jobs)
        for n, (i, k, exp) in enumerate(names):
            line = lesson.info.line(f"sass[{i}].patterns")
            if hung is not None and n == hung:
                problems.append(f"{where}:{line}: error: {exp['kernel']}: pattern /{exp['patterns'][k][:60]}/ ran "
                                f"past {PATTERN_SECONDS} s (it backtracks without end); write it without nested "
                                "repeats")
                break
            if found[n]:
                held += 1
            else:
                problems.append(f"{where}:{line}: error: {exp['kernel']}: no instruction matching "
                                f"/{exp['patterns'][k]}/ ({exp.get('why', '')})")
    if problems:
        raise SourceError(problems)
    return held
