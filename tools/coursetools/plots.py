"""Charts as plain SVG, written by hand rather than by a plotting library,
so that the same results give the same bytes on every machine.

  bar_chart     one bar per row, a whisker from the fastest to the slowest
                sample, on a scale that starts at zero;
  line_chart    series against a logarithmic x axis (the size sweeps);
  timeline      blocks of each kernel against time (resident, and of those
                still waiting), one colour per kernel, or one bar per block
                for small grids.
"""

from __future__ import annotations

import math
from html import escape

BAR_H = 18
GAP = 6
LABEL_W = 250
PLOT_W = 420
RIGHT_W = 90
TOP = 44
COLOURS = ("#4a78b5", "#d9822b", "#3a9a5b", "#b5484a", "#7a5cb0", "#8a6d3b")


def _nice_max(v: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above v."""
    if v <= 0:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(v))
    for step in (1, 2, 2.5, 5, 10):
        if step * mag >= v * (1 - 1e-12):
            return step * mag
    return 10 * mag


def _head(width: int, height: int, title: str, note: str) -> list[str]:
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" role="img">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="8" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    if note:
        out.append(f'<text x="8" y="36" fill="#555">{escape(note)}</text>')
    return out


def bar_chart(title: str, unit: str, bars: list[tuple[str, float, float, float]], note: str = "") -> str:
    """bars: (label, value, low, high). Values share a scale that starts at
    zero, so lengths compare honestly."""
    top = _nice_max(max((b[3] for b in bars), default=1.0))
    height = TOP + len(bars) * (BAR_H + GAP) + 40
    width = LABEL_W + PLOT_W + RIGHT_W
    scale = PLOT_W / top
    out = _head(width, height, title, note)
    for k in range(5):
        x = LABEL_W + PLOT_W * k / 4
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{height - 30}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{height - 14}" text-anchor="middle" fill="#555">{top * k / 4:.4g}</text>')
    out.append(f'<text x="{LABEL_W + PLOT_W / 2:.1f}" y="{height - 2}" text-anchor="middle" fill="#333">{escape(unit)}</text>')
    for i, (label, value, low, high) in enumerate(bars):
        y = TOP + i * (BAR_H + GAP)
        w = max(value * scale, 0.5)
        out.append(f'<text x="{LABEL_W - 6}" y="{y + BAR_H - 5}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{COLOURS[0]}"/>')
        lx, hx = LABEL_W + low * scale, LABEL_W + high * scale
        cy = y + BAR_H / 2
        out.append(f'<line x1="{lx:.1f}" y1="{cy}" x2="{hx:.1f}" y2="{cy}" stroke="#222"/>')
        out.append(f'<line x1="{lx:.1f}" y1="{cy - 4}" x2="{lx:.1f}" y2="{cy + 4}" stroke="#222"/>')
        out.append(f'<line x1="{hx:.1f}" y1="{cy - 4}" x2="{hx:.1f}" y2="{cy + 4}" stroke="#222"/>')
        out.append(f'<text x="{LABEL_W + PLOT_W + 6}" y="{y + BAR_H - 5}">{value:.4g}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def line_chart(title: str, xlabel: str, ylabel: str, series: list[tuple[str, list[tuple[float, float]]]],
               note: str = "", marks: list[tuple[float, str]] = ()) -> str:
    """series: (name, [(x, y), ...]) with x > 0 on a log-2 axis, y on a
    linear axis from zero. `marks`: vertical lines at x with a label."""
    width, height = 760, 420
    left, right, top, bottom = 70, 170, 50, 50
    pw, ph = width - left - right, height - top - bottom
    xs = [x for _, pts in series for x, _ in pts if x > 0]
    ys = [y for _, pts in series for _, y in pts]
    if not xs:
        return ""
    x0, x1 = math.log2(min(xs)), math.log2(max(xs))
    x1 = x1 if x1 > x0 else x0 + 1
    ytop = _nice_max(max(ys, default=1.0))

    def px(x):
        return left + pw * (math.log2(x) - x0) / (x1 - x0)

    def py(y):
        return top + ph * (1 - y / ytop)

    out = _head(width, height, title, note)
    for k in range(5):
        y = ytop * k / 4
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + pw}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end" fill="#555">{y:.4g}</text>')
    step = max(1, round((x1 - x0) / 8))
    for e in range(math.ceil(x0), math.floor(x1) + 1, step):
        x = px(2.0 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle" fill="#555">2^{e}</text>')
    for x, label in marks:
        if x > 0 and x0 <= math.log2(x) <= x1:
            out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + ph}" stroke="#999" stroke-dasharray="4,3"/>')
            out.append(f'<text x="{px(x) + 3:.1f}" y="{top + 12}" fill="#555" font-size="11">{escape(label)}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle" fill="#333">{escape(xlabel)}</text>')
    out.append(f'<text x="14" y="{top + ph / 2:.1f}" text-anchor="middle" fill="#333" '
               f'transform="rotate(-90 14 {top + ph / 2:.1f})">{escape(ylabel)}</text>')
    for i, (name, pts) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        pts = sorted(p for p in pts if p[0] > 0)
        path = " ".join(f"{'M' if j == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for j, (x, y) in enumerate(pts))
        out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.6"/>')
        ly = top + 14 + 18 * i
        out.append(f'<line x1="{left + pw + 12}" y1="{ly - 4}" x2="{left + pw + 32}" y2="{ly - 4}" stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text x="{left + pw + 38}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def timeline(title: str, kernels: list[dict], note: str = "") -> str:
    """kernels: the timeline rows of one experiment (course::timeline::
    summarize), all on one time axis. Grids that kept every block are drawn
    block by block (a bar per block, its waiting part lighter); larger ones
    as curves of resident and waiting blocks."""
    width = 760
    left, right, top = 110, 30, 50
    pw = width - left - right
    span = max((k.get("span_us") or 0 for k in kernels), default=1.0) or 1.0
    per_block = all("block_start_us" in k and k.get("blocks", 0) <= 64 for k in kernels)
    if per_block:
        rows = sum(k.get("blocks", 0) for k in kernels)
        ph = max(60, 7 * rows)
    else:
        ph = 220
    height = top + ph + 50

    def px(t):
        return left + pw * t / span

    out = _head(width, height, title, note)
    for k in range(6):
        t = span * k / 5
        out.append(f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{px(t):.1f}" y="{top + ph + 16}" text-anchor="middle" fill="#555">{t:.3g}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle" fill="#333">microseconds</text>')
    if per_block:
        y = top
        for i, k in enumerate(kernels):
            colour = COLOURS[i % len(COLOURS)]
            out.append(f'<text x="{left - 6}" y="{y + 10}" text-anchor="end">{escape(str(k.get("kernel")))}</text>')
            waits = k.get("block_wait_us") or []
            for j, (s, e) in enumerate(zip(k["block_start_us"], k["block_end_us"])):
                out.append(f'<rect x="{px(s):.1f}" y="{y}" width="{max(px(e) - px(s), 0.8):.1f}" height="5" fill="{colour}"/>')
                if j < len(waits) and waits[j] > 0:
                    out.append(f'<rect x="{px(s):.1f}" y="{y}" width="{max(px(s + waits[j]) - px(s), 0.5):.1f}" '
                               f'height="5" fill="#ffffff" fill-opacity="0.55"/>')
                y += 7
    else:
        peak = max((max(k.get("resident") or [0]) for k in kernels), default=1) or 1
        ytop = _nice_max(peak)
        for k in range(5):
            v = ytop * k / 4
            yy = top + ph * (1 - v / ytop)
            out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + pw}" y2="{yy:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end" fill="#555">{v:.4g}</text>')
        for i, k in enumerate(kernels):
            colour = COLOURS[i % len(COLOURS)]
            for key, dash in (("resident", ""), ("waiting", ' stroke-dasharray="4,3"')):
                vals = k.get(key) or []
                if not vals or (key == "waiting" and not any(vals)):
                    continue
                n = len(vals)
                path = " ".join(
                    f"{'M' if j == 0 else 'L'}{px(span * (j + 0.5) / n):.1f},{top + ph * (1 - v / ytop):.1f}"
                    for j, v in enumerate(vals)
                )
                out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.6"{dash}/>')
            out.append(f'<text x="{left + 8}" y="{top + 14 + 16 * i}" fill="{colour}">'
                       f'{escape(str(k.get("kernel")))}: blocks resident (dashed: still waiting)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
