"""What this machine says about itself while a lesson runs: the GPUs the
driver reports (nvidia-smi), their clocks sampled during the run, the
host's processor, the compiler, and git's word on the tree.

Standard library only: this runs on the GPU machine."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import statistics
import subprocess
import threading
import time
from pathlib import Path

from ..sources import manifest

def _smi(query: str) -> tuple[list[list[str]] | None, str | None]:
    """nvidia-smi's CSV answer, one list of fields per GPU, or (None, why)."""
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"nvidia-smi: {e}"
    if out.returncode != 0:
        return None, f"nvidia-smi exited {out.returncode}: {out.stderr.strip()[:200]}"
    rows = [[f.strip() for f in line.split(",")] for line in out.stdout.strip().splitlines() if line.strip()]
    return rows, None


def gpus() -> list[dict]:
    """Every GPU the driver reports (none where nvidia-smi does not answer)."""
    rows, _ = _smi("uuid,name,driver_version,pci.bus_id")
    keys = ("uuid", "name", "driver", "pci_bus_id")
    return [dict(zip(keys, r)) for r in rows or [] if len(r) == len(keys)]


class ClockSampler:
    """Reads every GPU's SM and memory clocks with nvidia-smi while the
    lesson runs, so the record says what clocks its numbers were measured
    at, and shows that a GPU was there to read."""

    QUERY = "uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw"
    KEYS = ("sm_mhz", "mem_mhz", "temperature_c", "power_w")

    def __init__(self, period_s: float = 0.25):
        self.period = period_s
        self.readings: list[dict] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.monotonic()

    def _read(self) -> bool:
        rows, why = _smi(self.QUERY)
        if rows is None:
            self.error = why
            return False
        t = round(time.monotonic() - self._t0, 3)
        for r in rows:
            vals: dict = {"t_s": t, "uuid": r[0]}
            for k, p in zip(self.KEYS, r[1:]):
                try:
                    vals[k] = float(p)
                except ValueError:
                    vals[k] = None
            self.readings.append(vals)
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._read():
                return
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=15)

    def summary(self, uuid: str | None) -> dict:
        """The readings of the GPU `uuid` (the one the lesson ran on)."""
        mine = [{k: v for k, v in s.items() if k != "uuid"} for s in self.readings if s.get("uuid") == uuid]
        out: dict = {"samples": len(mine), "period_s": self.period, "readings": mine}
        if self.error and not mine:
            out["error"] = self.error
        for key in self.KEYS:
            vals = [s[key] for s in mine if s.get(key) is not None]
            if vals:
                out[key] = {"min": min(vals), "median": statistics.median(vals), "max": max(vals)}
        return out


def host() -> dict:
    """The host as the OS reports it: the processor's model name and how
    many logical CPUs there are and may run this process. Batch timings
    and stream launches of small kernels time the host's launch work as
    much as the GPU's, so they carry over only to the same host."""
    model = None
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8",
                                            errors="replace") as f:
        models = (ln.split(":", 1)[1].strip() for ln in f if ln.lower().startswith("model name"))
        model = next(models, None)
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    return {"platform": platform.platform(), "cpu_model": model or platform.processor() or None,
            "cpu_count": os.cpu_count(), "cpus_usable": usable}


def nvcc_version() -> str | None:
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


def runtime_string(v) -> str | None:
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"
