"""What the hardware resolves: the rule's margin in each timing and band of
launch time, as each record measures it on its own same-code pairs.

A record's same-code pairs are its twins (a row timed a second time
beside itself, NAME-twin) and the pairs its program declares the same
code (its decisions' "same_code": one kernel with the same arguments, v10
and v9 where v10's dispatch runs v9's kernel). Their words at the rule's
2% margin are its false calls, tallied by timing and by band of the
median launch time (the header's bands: under 8 us, 8 to 64 us, 64 us and
over). Where a pair's estimated shift is larger than 2%, the margin of its
timing and band is widened to cover the largest such shift, rounded up to
a half percent: no pair of that record, timing and band is then called
faster or slower unless it differs by more than the same code did. The
words on a page and in `compare` use the widened margin; the tally keeps
the 2% words, the rule's error rate as calibrated.

A run of the current header also writes its own tally ("same_code" in its
results) from the words it decided while sampling, by the same arithmetic
(common/course/detail/decide.cuh); `disagreements` holds the two equal."""

from __future__ import annotations

import math

from . import rows as rule_rows
from . import verdict as cmp

BANDS_US = (8.0, 64.0)
BAND_NAMES = ("under 8 us", "8 to 64 us", "64 us and over")
STEP = 0.005  # margins widen in half percents


def band(median_ms: float) -> str:
    us = 1000.0 * median_ms
    return BAND_NAMES[sum(us >= b for b in BANDS_US)]


def is_same_code(decision: dict) -> bool:
    return bool(decision.get("same_code")) or rule_rows.is_twin_pair(decision)


def same_code(results: dict):
    """(timing, band, the 2% verdict) for each same-code pair the record's
    sets decided."""
    for d, sa, sb in rule_rows.decided_pairs(results or {}, is_same_code):
        v = cmp.verdict(sa, sb)
        yield d["set"].rsplit(" ", 1)[-1], band(v.a.median), v


def tally(results: dict) -> list[dict]:
    """Per timing and band: the same-code pairs, how many the rule called
    faster or slower at 2%, the largest estimated shift, and the margin
    the record's words there use."""
    out: dict[tuple, dict] = {}
    for timing, b, v in same_code(results):
        t = out.setdefault((timing, b), {"timing": timing, "band": b, "pairs": 0, "faster_or_slower": 0,
                                         "largest_shift_pct": 0.0})
        t["pairs"] += 1
        t["faster_or_slower"] += v.word in (cmp.FASTER, cmp.SLOWER)
        t["largest_shift_pct"] = max(t["largest_shift_pct"], cmp.percent(v.ratio))
    for t in out.values():
        wide = math.ceil(t["largest_shift_pct"] / 100 / STEP - 1e-9) * STEP
        t["margin_pct"] = 100 * max(cmp.MARGIN, wide)
    order = {n: i for i, n in enumerate(BAND_NAMES)}
    return sorted(out.values(), key=lambda t: (t["timing"], order[t["band"]]))


def margins(results: dict) -> dict[tuple, float]:
    return {(t["timing"], t["band"]): t["margin_pct"] / 100 for t in tally(results)}


def margin_for(table: dict, timing: str, median_ms: float) -> float:
    return table.get((timing, band(median_ms)), cmp.MARGIN)


def recorded(results: dict) -> dict[tuple, int] | None:
    """The run's own count of false calls per (timing, band), as its
    program wrote it; None for a record made before programs wrote one."""
    rows = (results or {}).get("same_code")
    if not isinstance(rows, list):
        return None
    return {(r.get("timing"), r.get("band")): r.get("faster_or_slower") for r in rows if isinstance(r, dict)}


def disagreements(results: dict) -> list[str]:
    """Where the program's own tally and the rule's recount of its samples
    differ (pairs or false calls, per timing and band): one line each. The
    two apply one rule to the same samples, so any difference is a fault
    of the run's output, not noise."""
    own = (results or {}).get("same_code")
    if own is None:
        return []
    if not isinstance(own, list) or not all(isinstance(r, dict) for r in own):
        return ["results.same_code is not a list of objects"]
    ours = {(t["timing"], t["band"]): (t["pairs"], t["faster_or_slower"]) for t in tally(results)}
    theirs = {(r.get("timing"), r.get("band")): (r.get("pairs"), r.get("faster_or_slower")) for r in own}
    return [f"same-code pairs, {k[0]}, {k[1]}: the program counted {theirs.get(k, (0, 0))} "
            f"(pairs, faster or slower), the rule recounts {ours.get(k, (0, 0))}"
            for k in sorted(set(ours) | set(theirs), key=str) if ours.get(k, (0, 0)) != theirs.get(k, (0, 0))]
