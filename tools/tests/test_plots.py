from coursetools.pages import plots


def test_scale_fits_the_largest_whisker():
    assert plots._nice_max(0.1057) == 0.2
    assert plots._nice_max(4477) == 5000
    assert plots._nice_max(29) == 50
    assert plots._nice_max(1.0) == 1.0


def test_chart_is_deterministic_and_escapes_labels():
    bars = [("a<b", 1.0, 0.9, 1.1), ("c", 2.0, 1.5, 2.5)]
    one = plots.bar_chart("t & u", "ms", bars)
    assert one == plots.bar_chart("t & u", "ms", bars)
    assert "a&lt;b" in one and "t &amp; u" in one
