"""The one comparison rule: two rows' timing samples to one word, with the
estimate and interval behind it. Every comparative word on a page,
`course evidence compare` and the in-record A/A tallies come from
`verdict()`; research/REVIEW-PROCESS.md states it for reviewers, with why
its margin is 2% and its measured error rate.

  - Each sample is a time; the rule works on log times (so a difference is
    a ratio), rounded to a grid of 1e-9 so that this module and the
    header's copy of the rule (common/course/detail/decide.cuh), which
    decides when to stop sampling, compare the same whole numbers.
  - The estimate is the Hodges-Lehmann shift, its interval Moses': from
    the K-th smallest of the m x n differences log a_i - log b_j to the
    K-th largest, K = floor(mn/2 - z sqrt(mn(m+n+1)/12)), z for 99.9%
    two-sided.
  - The words, with a margin of 2%: "the same" when the whole interval
    lies within 2% either way; "faster" (a's times lower) when it lies
    wholly beyond 2% below, "slower" wholly beyond 2% above; "not
    distinguishable" otherwise.
  - Rows are sampled together until the rule decides at one of seven
    looks (16, 32, ..., 1,024 samples): at most seven tries of 0.1% each,
    so a same-code pair is called faster or slower at most 0.7% of the
    time (Bonferroni).

Standard library only; NumPy, where it is installed, makes the counting
faster and changes no result (a test holds the two paths equal).
"""

from __future__ import annotations

import bisect
import dataclasses
import math

try:  # the pinned tools have it; a GPU machine's bare python3 may not
    import numpy as _np
except ImportError:  # pragma: no cover - exercised by the test that hides NumPy
    _np = None

GRID = 1e9
# z for a two-sided 99.9% interval (statistics.NormalDist().inv_cdf(0.9995)).
Z = 3.2905267314919255
MARGIN = 0.02
MARGIN_ON_GRID = math.floor(math.log(1 + MARGIN) * GRID + 0.5)
# The looks a set of rows is decided at (the header samples up to them).
LOOKS = (16, 32, 64, 128, 256, 512, 1024)

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


def _rank(p: int, n: int) -> int:
    return (p * (n - 1) + 50) // 100


def summarize(samples) -> Summary:
    """Quartiles by rank (p (n - 1) + 50) / 100 rounded down, as the
    header computes them."""
    values = sorted(float(v) for v in samples)
    if not values or any(not (v > 0) or math.isinf(v) for v in values):
        raise ValueError("samples must be positive numbers, at least one")
    n = len(values)
    return Summary(n, values[0], values[_rank(25, n)], values[_rank(50, n)], values[_rank(75, n)], values[-1])


def grid(samples) -> list[int]:
    """Log-times on the rule's grid, in the samples' order (math.log: the
    C library's, as the header uses)."""
    return [math.floor(math.log(float(v)) * GRID + 0.5) for v in samples]


def on_grid(samples) -> list[int]:
    return sorted(grid(samples))


def count_at_most(x, y, t: int) -> int:
    """How many pairs have x_i - y_j <= t, for sorted x and y."""
    if _np is not None and not isinstance(x, list):
        return int(len(x) * len(y) - _np.searchsorted(y, x - t, side="left").sum())
    n = len(y)
    return sum(n - bisect.bisect_left(y, xi - t) for xi in x)


def kth(x, y, k: int) -> int:
    """The k-th smallest x_i - y_j (1-based), exactly, by bisection on
    whole numbers: count(lo) < k <= count(hi)."""
    lo, hi = int(x[0]) - int(y[-1]) - 1, int(x[-1]) - int(y[0])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count_at_most(x, y, mid) >= k:
            hi = mid
        else:
            lo = mid
    return hi


def kths(x, y, ks: list[int]) -> list[int]:
    """kth(x, y, k) for every k in ks: with NumPy, one bisection for all
    of them, each step counting at every k's midpoint in one call (a
    verdict needs four order statistics, and a page thousands of
    verdicts); without it, kth() for each."""
    if _np is None or isinstance(x, list):
        return [kth(x, y, k) for k in ks]
    m, n = len(x), len(y)
    want = _np.asarray(ks, dtype=_np.int64)
    lo = _np.full(len(ks), int(x[0]) - int(y[-1]) - 1, dtype=_np.int64)
    hi = _np.full(len(ks), int(x[-1]) - int(y[0]), dtype=_np.int64)
    while True:
        open_ = hi - lo > 1
        if not open_.any():
            return [int(v) for v in hi]
        mid = (lo + hi) // 2
        below = _np.searchsorted(y, (x[None, :] - mid[:, None]).ravel(), side="left")
        count = m * n - below.reshape(len(ks), m).sum(axis=1)
        enough = count >= want
        hi = _np.where(open_ & enough, mid, hi)
        lo = _np.where(open_ & ~enough, mid, lo)


def rule_k(m: int, n: int) -> int:
    mn = float(m) * float(n)
    return math.floor(mn / 2.0 - Z * math.sqrt(mn * (m + n + 1.0) / 12.0))


def word_on_grid(x, y) -> str:
    """The rule's word from sorted grid values, by counts at the
    thresholds alone (what the header computes)."""
    m, n = len(x), len(y)
    k = rule_k(m, n)
    if k < 1:
        return UNDECIDED
    need = m * n - k + 1
    below = count_at_most(x, y, -MARGIN_ON_GRID - 1)  # differences under -margin
    within = count_at_most(x, y, MARGIN_ON_GRID)  # differences up to +margin
    if below < k and within >= need:
        return SAME  # low >= -margin and high <= +margin
    if below >= need:
        return FASTER  # high < -margin
    if within < k:
        return SLOWER  # low > +margin
    return UNDECIDED


def percent(ratio: float) -> float:
    """A difference as the pages state it, from b's time over a's: how
    much longer the slower row takes, in percent of the quicker one's time,
    on either side ('a is 40% slower' means a takes 1.4 times b's time, as
    '40% faster' means b takes 1.4 times a's). Symmetric as the rule's log
    margin is: 2% either way is the margin."""
    return (ratio - 1.0) * 100.0 if ratio >= 1.0 else (1.0 / ratio - 1.0) * 100.0


def signed_percent(ratio: float) -> str:
    """'2.1% faster' or '2.1% slower', from b's time over a's."""
    return f"{percent(ratio):.1f}% {'faster' if ratio >= 1.0 else 'slower'}"


@dataclasses.dataclass(frozen=True)
class Verdict:
    word: str  # FASTER, SLOWER, SAME or UNDECIDED: what `a` is against `b`
    ratio: float  # the Hodges-Lehmann estimate of b's time over a's: above 1, a is quicker
    low: float  # the interval of that ratio, 99.9% (nan where too few samples)
    high: float
    a: Summary
    b: Summary

    def at_margin(self, margin: float) -> "Verdict":
        """The same verdict under a wider margin (rule/resolution.py: where
        the hardware resolves less than the rule's 2%): its interval's ends
        read back onto the rule's grid and held to that margin as
        word_on_grid holds them to MARGIN, so at MARGIN the word is this
        one."""
        if margin == MARGIN or self.low != self.low:  # nan: no interval, no other word
            return self
        m = math.floor(math.log(1 + margin) * GRID + 0.5)
        lo = round(-math.log(self.high) * GRID)  # D_(K): log a - log b
        hi = round(-math.log(self.low) * GRID)  # D_(N-K+1)
        word = SAME if lo >= -m and hi <= m else FASTER if hi < -m else SLOWER if lo > m else UNDECIDED
        return dataclasses.replace(self, word=word)

    def simpler_rule_calls(self, margin: float = MARGIN) -> bool:
        """Whether the rule the course does not use, the two one-sided
        tests alone (different whenever the interval is clear of zero and
        not wholly within the margin), would call this pair faster or
        slower: kept to measure why the course asks for more."""
        within = 1 / (1 + margin) <= self.low and self.high <= 1 + margin
        return (self.low > 1 or self.high < 1) and not within


@dataclasses.dataclass(frozen=True)
class Prepared:
    """One row's samples as the rule reads them: their summary and their
    sorted grid values, computed once for a row compared many times."""
    summary: Summary
    grid: object  # sorted grid values: a NumPy array where NumPy is installed, else a list


def prepare(samples) -> Prepared:
    g = on_grid(samples)
    return Prepared(summarize(samples), _np.asarray(g, dtype=_np.int64) if _np is not None else g)


def verdict(a_samples, b_samples) -> Verdict:
    """What row `a` is against row `b`, from their samples (times)."""
    return verdict_of(prepare(a_samples), prepare(b_samples))


def verdict_of(pa: Prepared, pb: Prepared) -> Verdict:
    a, b = pa.summary, pb.summary
    x, y = pa.grid, pb.grid
    m, n = len(x), len(y)
    total = m * n
    k = rule_k(m, n)
    wanted = [(total + 1) // 2, total // 2 + 1] + ([total - k + 1, k] if k >= 1 else [])
    d = kths(x, y, wanted)
    mid = (d[0] + d[1]) / 2.0
    if k < 1:
        low = high = float("nan")
    else:
        # The interval of log a - log b is [D_(K), D_(N-K+1)]; b over a is its negation.
        low, high = math.exp(-d[2] / GRID), math.exp(-d[3] / GRID)
    return Verdict(word_on_grid(x, y), math.exp(-mid / GRID), low, high, a, b)
