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


def _texts(svg: str) -> list[str]:
    import re
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_ticks_are_nice_and_never_in_scientific_notation():
    from coursetools.pages import plots
    assert plots.ticks(7300, 5) == [0, 2000, 4000, 6000, 8000]
    assert plots.ticks(165, 6) == [0, 50, 100, 150, 200]
    svg = plots.bar_chart("t", "GB/s", [("a", 12345.6, 12000.0, 13000.0), ("b", 7500.0, 7000.0, 8000.0)])
    labels = _texts(svg)
    assert "12,346" in labels and "7,500" in labels  # values as the page prints them
    assert not any("e+" in t or "e-" in t for t in labels)
    assert "5,000" in labels and "10,000" in labels and "15,000" in labels


def test_a_sweep_spanning_decades_has_a_log_axis_with_plain_labels():
    from coursetools.pages import plots
    svg = plots.line_chart("t", "elements", "GB/s", [("v9", [(1, 0.004), (2 ** 20, 900.0), (2 ** 30, 4400.0)])],
                           log_y=True)
    labels = _texts(svg)
    assert {"0.001", "0.01", "1", "1,000", "10,000"} <= set(labels)
    assert "GB/s (log scale)" in labels


def test_a_legend_only_for_what_is_drawn_and_timelines_on_one_scale():
    from coursetools.pages import plots
    k = {"kernel": "v9", "span_us": 110.0, "resident": [10, 20, 5], "waiting": [0, 0, 0], "blocks": 5000}
    svg = plots.timeline("t", [k])
    assert "v9: blocks resident" in _texts(svg) and "dashed" not in svg
    waiting = dict(k, waiting=[3, 1, 0])
    assert "v9: blocks resident (dashed: not yet at their second stamp)" in _texts(plots.timeline("t", [waiting]))
    shared = plots.timeline("t", [k], span=290.0)
    assert "300" in _texts(shared) and "300" not in _texts(svg)
    series = [("shown", [(1, 1.0), (2, 2.0)]), ("empty", [])]
    assert "empty" not in _texts(plots.line_chart("t", "x", "y", series))


def test_a_label_does_not_repeat_itself():
    from coursetools.pages.figures import _label
    assert _label("{version} {mode}", {"version": "cub", "mode": "cub::DeviceReduce::Sum"}) == "cub::DeviceReduce::Sum"
    assert _label("{version} {mode}", {"version": "ceiling", "mode": "read ceiling (XOR)"}) == "read ceiling (XOR)"
    assert _label("{version} {mode}", {"version": "v2", "mode": "interleaved"}) == "v2 interleaved"
