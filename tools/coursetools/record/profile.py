"""Counters as evidence: a lesson's kernels under Nsight Compute (ncu).

`evidence record` runs the lesson's own binary with --profile under
`ncu --profile-from-start off`: the lesson checks everything first, then
runs each profiled row once between cudaProfilerStart/Stop, after a
marker kernel (course::courseProfileMarker). The kernels ncu saw between
two markers belong to the row the lesson named in its JSON, in order.
Only the metrics the lesson declares in lesson.toml are stored, with
ncu's version and its exact arguments. Times never come from here: ncu
serializes and replays each kernel, so its durations are not the
lesson's.
"""

from __future__ import annotations

import contextlib
import csv
import re
import shutil
import subprocess
from pathlib import Path

MARKER = "courseProfileMarker"


def find_ncu() -> str | None:
    installed = [*sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu")),
                 Path("/usr/local/cuda/bin/ncu")]
    return shutil.which("ncu") or next((str(p) for p in installed if p.exists()), None)


def ncu_version(ncu: str) -> str:
    out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"Version ([\w.]+)", out.stdout)
    return m.group(1) if m else out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "unknown"


def command(ncu: str, metrics: list[str], binary: str, args: list[str], json_path: str) -> list[str]:
    return [ncu, "--clock-control", "none", "--profile-from-start", "off",
            "--metrics", ",".join(metrics), "--csv", "--page", "raw",
            binary, *args, "--json", json_path]


def _number(text: str):
    t = text.replace(",", "").strip()
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(t)
    return None


def parse_csv(text: str, metrics: list[str]) -> list[dict]:
    """Every kernel ncu reported, in launch order: name, grid, block and
    the declared metrics (numbers)."""
    rows = list(csv.reader(l for l in text.splitlines() if l.startswith('"')))
    if len(rows) < 2 or "ID" not in rows[0]:
        return []
    header = rows[0]
    col = {h: i for i, h in enumerate(header)}
    kernels = []
    for r in rows[2:]:  # rows[1] holds the units
        if len(r) != len(header):
            continue
        kernels.append({"id": _number(r[col["ID"]]), "name": r[col["Kernel Name"]],
                        "grid": r[col["Grid Size"]], "block": r[col["Block Size"]],
                        "metrics": {m: _number(r[col[m]]) for m in metrics if m in col}})
    kernels.sort(key=lambda k: k["id"] if isinstance(k["id"], int) else 0)
    return kernels


def assign_rows(kernels: list[dict], row_names: list[str]) -> list[dict]:
    """Splits the kernels at the markers: the k-th marker opens the k-th
    profiled row the lesson named."""
    out: list[dict] = []
    current = None
    for k in kernels:
        if MARKER in k["name"]:
            index = len(out)
            current = {"row": row_names[index] if index < len(row_names) else f"row {index}", "kernels": []}
            out.append(current)
        elif current is not None:
            current["kernels"].append({key: k[key] for key in ("name", "grid", "block", "metrics")})
    return out
