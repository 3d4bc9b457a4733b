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


def check_all(lessons) -> int:
    """Every declared expectation of every built lesson; SourceError with
    all that fail. Returns how many held."""
    problems, held = [], 0
    for lesson in lessons:
        if not lesson.info.sass or not lesson.built:
            continue
        fns = dump(Path(lesson.binary))
        for exp in lesson.info.sass:
            body = fns.get(exp["kernel"])
            if body is None:
                problems.append(f"{lesson.dir}/lesson.toml: error: kernel {exp['kernel']} not found in {display_path(lesson.binary)}")
                continue
            text = "\n".join(body)
            for pat in exp["patterns"]:
                if re.search(pat, text):
                    held += 1
                else:
                    problems.append(f"{lesson.dir}/lesson.toml: error: {exp['kernel']}: no instruction matching "
                                    f"/{pat}/ ({exp.get('why', '')})")
    if problems:
        raise SourceError(problems)
    return held
