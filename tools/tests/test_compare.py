"""The comparison rule on synthetic samples: every verdict it can give."""

from __future__ import annotations

import pytest

from coursetools.evidence import verdict as cmp


def around(median, spread, n=31):
    """n samples evenly spread over median * (1 +- spread)."""
    return [median * (1 - spread + 2 * spread * i / (n - 1)) for i in range(n)]


def test_clearly_apart_is_faster_and_slower():
    a, b = around(100, 0.002), around(110, 0.002)
    assert cmp.verdict(a, b).word == cmp.FASTER
    assert cmp.verdict(b, a).word == cmp.SLOWER
    assert cmp.verdict(a, b).ratio == pytest.approx(1.1, rel=1e-3)


def test_a_gap_under_half_a_percent_is_neither_faster_nor_the_same():
    a = [100.0] * 31
    b = [100.3] * 31  # apart, but by only 0.3%, and not overlapping
    assert cmp.verdict(a, b).word == cmp.UNDECIDED


def test_close_medians_with_low_noise_are_the_same():
    assert cmp.verdict(around(100, 0.005), around(100.2, 0.005)).word == cmp.SAME


def test_close_medians_with_high_noise_are_not_distinguishable():
    assert cmp.verdict(around(100, 0.2), around(100.2, 0.2)).word == cmp.UNDECIDED


def test_overlap_with_medians_apart_is_not_distinguishable():
    assert cmp.verdict(around(100, 0.05), around(103, 0.05)).word == cmp.UNDECIDED


def test_quartiles_follow_nvbench():
    s = cmp.summarize(range(1, 32))  # 1..31
    assert (s.min, s.q1, s.median, s.q3, s.max) == (1, 9, 16, 24, 31)


@pytest.mark.parametrize("bad", [[], [0.0, 1.0], [-1.0], [float("nan")]])
def test_samples_must_be_positive(bad):
    with pytest.raises(ValueError):
        cmp.summarize(bad)
