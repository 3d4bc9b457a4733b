"""What the cluster code compiles to, read back from the built binary.

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

from .diagnostics import EXIT_USAGE, CourseError

INTERESTING = re.compile(
    r"SR_CgaCtaId|SR_SWINHI|PRMT|MAPA|\bLD\.E|\bLDS\b|UCGABAR|CGAERRBAR|CCTL|MEMBAR|REDG|ATOM|CLOCK"
)

# What day 77 claims its DSMEM code compiles to on sm_90, checked by
# `course sass --check`: (mangled kernel name, required patterns, why).
DAY77_EXPECTATIONS = [
    (
        "_Z16reduceClusterDsmIL4Tail0EEvPKfmPf",
        [r"S2U?R\s+\S+,\s*SR_CgaCtaId", r"PRMT", r"SR_SWINHI", r"\bLD\.E\b", r"UCGABAR_ARV", r"UCGABAR_WAIT"],
        "map_shared_rank: the rank spliced into a shared-window address, a generic load, cluster barriers",
    ),
    (
        "_Z12latencyChaseIL5Chase2EEvPKjPy",
        [r"UPRMT|PRMT", r"SR_SWINHI", r"\bLD\.E\b"],
        "mapa + ld.shared::cluster in PTX: the same window address and generic load",
    ),
    (
        "_Z12latencyChaseIL5Chase0EEvPKjPy",
        [r"\bLDS\b"],
        "local shared memory: LDS",
    ),
]


def _tool(name: str) -> str:
    venv_bin = Path(sys.prefix) / "lib"
    for cand in venv_bin.glob(f"python*/site-packages/nvidia/cu*/bin/{name}"):
        return str(cand)
    found = shutil.which(name) or (f"/usr/local/cuda/bin/{name}" if os.path.exists(f"/usr/local/cuda/bin/{name}") else None)
    if not found:
        raise CourseError([f"{name} not found; the configure step installs it into build/venv"], EXIT_USAGE)
    return found


@functools.lru_cache(maxsize=8)
def dump(binary: Path) -> dict[str, list[str]]:
    if not Path(binary).exists():
        raise CourseError([f"{binary}: not built; build it first (cmake --build build)"], EXIT_USAGE)
    cuobjdump = _tool("cuobjdump")
    env = dict(os.environ)
    env["PATH"] = str(Path(_tool("nvdisasm")).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([cuobjdump, "--dump-sass", str(binary)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise CourseError([f"cuobjdump --dump-sass {binary} failed: {proc.stderr.strip()}"], EXIT_USAGE)
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
        raise CourseError([f"{binary}: no kernel {mangled} in the SASS"], EXIT_USAGE)
    lines = [l for l in fns[mangled] if INTERESTING.search(l)]
    # Unrolled loops repeat one load many times; show each distinct
    # instruction shape once, in order.
    seen, out = set(), []
    for l in lines:
        shape = re.sub(r"R\d+|UR\d+|0x[0-9a-f]+|P\d", "_", l)
        if shape in seen:
            continue
        seen.add(shape)
        out.append(l)
    return out[:max_lines]


def check(binary: Path) -> list[str]:
    fns = dump(Path(binary))
    problems = []
    for mangled, patterns, why in DAY77_EXPECTATIONS:
        body = fns.get(mangled)
        if body is None:
            problems.append(f"{mangled}: kernel not found in {binary}")
            continue
        text = "\n".join(body)
        for pat in patterns:
            if not re.search(pat, text):
                problems.append(f"{mangled}: no instruction matching /{pat}/ ({why})")
    return problems
