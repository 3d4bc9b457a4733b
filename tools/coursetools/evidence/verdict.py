"""The one comparison rule: two timed rows' samples to a verdict.

It is nvbench's robust comparison (python/scripts/nvbench_compare_robust.py
in NVIDIA/nvbench, its "default" preset, read 2026-11-29), applied to the
samples a record keeps:

  - each row's interval is [min, q3] around its median, the quartiles by
    rank (p (n - 1) + 50) / 100 rounded down, as nvbench computes them;
  - "faster": the row's interval lies wholly below the other's, with a
    gap of at least 0.5% (the gap relative to the smaller bound);
  - "slower": the same the other way round;
  - "the same": medians within 0.5% of each other, the intervals overlap
    by at least half of the narrower one, and neither row's relative
    interquartile range exceeds 2% (the noise is low enough to say so);
  - anything else: "not distinguishable".

Every comparative word on a page (faster, slower, the same) comes from
`verdict()`, through `page.compare()`. research/REVIEW-PROCESS.md states
the rule for reviewers.
"""

from __future__ import annotations

import dataclasses

CLEAR_GAP = 0.005
SAME_CENTER = 0.005
SAME_OVERLAP = 0.5
SAME_DISPERSION = 0.02

FASTER, SLOWER, SAME, UNDECIDED = "faster", "slower", "the same", "not distinguishable"
WORDS = (FASTER, SLOWER, SAME, UNDECIDED)


@dataclasses.dataclass(frozen=True)
class Summary:
    n: int
    min: float
    q1: float
    median: float
    q3: float
    max: float

    @property
    def dispersion(self) -> float:
        return (self.q3 - self.q1) / self.median if self.median > 0 else float("inf")


def _rank(p: int, n: int) -> int:
    return (p * (n - 1) + 50) // 100


def summarize(samples) -> Summary:
    values = sorted(float(v) for v in samples)
    if not values or any(not (v > 0) for v in values):
        raise ValueError("samples must be positive numbers, at least one")
    n = len(values)
    return Summary(n, values[0], values[_rank(25, n)], values[_rank(50, n)], values[_rank(75, n)], values[-1])


def _frac(a: float, b: float) -> float:
    return (a - b) / min(a, b)


@dataclasses.dataclass(frozen=True)
class Verdict:
    word: str  # FASTER, SLOWER, SAME or UNDECIDED: what `a` is against `b`
    ratio: float  # b's median over a's: above 1, a is quicker
    a: Summary
    b: Summary
    reason: str


def verdict(a_samples, b_samples) -> Verdict:
    """What row `a` is against row `b`, from their samples (times)."""
    a, b = summarize(a_samples), summarize(b_samples)
    ratio = b.median / a.median
    if a.q3 < b.min and _frac(b.min, a.q3) >= CLEAR_GAP:
        return Verdict(FASTER, ratio, a, b, "a's [min, q3] lies below b's with a gap of at least 0.5%")
    if b.q3 < a.min and _frac(a.min, b.q3) >= CLEAR_GAP:
        return Verdict(SLOWER, ratio, a, b, "a's [min, q3] lies above b's with a gap of at least 0.5%")
    if abs(_frac(a.median, b.median)) <= SAME_CENTER:
        lo, hi = max(a.min, b.min), min(a.q3, b.q3)
        narrower = min(a.q3 - a.min, b.q3 - b.min)
        if hi < lo:
            overlap = 0.0
        elif narrower > 0:
            overlap = (hi - lo) / narrower
        else:
            overlap = 1.0
        if overlap >= SAME_OVERLAP and max(a.dispersion, b.dispersion) <= SAME_DISPERSION:
            return Verdict(SAME, ratio, a, b, "medians within 0.5%, intervals overlapping, noise under 2%")
        return Verdict(UNDECIDED, ratio, a, b, "medians within 0.5% but the intervals or the noise do not allow 'the same'")
    return Verdict(UNDECIDED, ratio, a, b, "the intervals overlap and the medians differ by more than 0.5%")
