"""What this machine says about itself while a lesson runs: the GPU's
clocks sampled through nvidia-smi, the driver, the compiler, and git's
word on the tree."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import threading
import time
from pathlib import Path

from ..sources import manifest


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
