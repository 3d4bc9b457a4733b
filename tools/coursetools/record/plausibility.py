"""Numbers no device allows: what `record` refuses a run for, and what
`promote` and `verify` check again."""

from __future__ import annotations

import math

from ..hardware import peak_dram_gbps


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
    """Rows no device could have produced, one line each (the checks'
    messages say what each holds). A row's bytes come from DRAM unless its
    "memory" says otherwise."""
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
                mean = sum(ordered) / n
                if "mean_ms" in row and not (_finite(row["mean_ms"]) and abs(row["mean_ms"] - mean) <= 1e-5 * mean):
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
    return out + inconsistent_bytes(results)


# What a timing writes into a row (common/course/timing.cuh, sets.cuh):
# every other field is the lesson's, and names the work, which is the same
# in every timing of it (its bytes are fixed).
MEASURED = frozenset({"timing", "set", "samples", "samples_ms", "median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms",
                      "mean_ms", "spread", "gbps"})


def inconsistent_bytes(results: dict | None) -> list[str]:
    """A row's bandwidth is its bytes over its median time, and its bytes
    do not change with the timing mode: gbps x median_ms must agree across
    a row's timings (to the header's rounding), or one was written by hand."""
    seen: dict[tuple, tuple[float, str]] = {}
    out = []
    for i, row in enumerate((results or {}).get("rows", []) or []):
        if not isinstance(row, dict) or not (_finite(row.get("gbps")) and _finite(row.get("median_ms"))):
            continue
        if row["gbps"] <= 0:
            continue
        key = tuple(sorted((k, str(v)) for k, v in row.items() if k not in MEASURED))
        moved = row["gbps"] * row["median_ms"]
        if key in seen:
            other, where = seen[key]
            if abs(moved - other) > 1e-4 * max(moved, other):
                name = " ".join(str(v) for k, v in row.items() if k not in MEASURED)
                out.append(f"row {i} ({name}, {row.get('timing')}): its bandwidth "
                           f"and median time imply {moved * 1e6:.6g} bytes, but its {where} row {other * 1e6:.6g}")
        else:
            seen[key] = (moved, str(row.get("timing")))
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
