"""Bar charts as plain SVG: one bar per row, a whisker from the fastest to
the slowest sample. Written by hand, not by a plotting library, so that
the same results give the same bytes on every machine."""

from __future__ import annotations

import math
from html import escape

BAR_H = 18
GAP = 6
LABEL_W = 250
PLOT_W = 420
RIGHT_W = 90
TOP = 44


def _nice_max(v: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above v."""
    if v <= 0:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(v))
    for step in (1, 2, 2.5, 5, 10):
        if step * mag >= v * (1 - 1e-12):
            return step * mag
    return 10 * mag


def bar_chart(title: str, unit: str, bars: list[tuple[str, float, float, float]], note: str = "") -> str:
    """bars: (label, value, low, high). Values are drawn to a shared scale
    that starts at zero, so lengths compare honestly."""
    top = _nice_max(max((b[3] for b in bars), default=1.0))
    height = TOP + len(bars) * (BAR_H + GAP) + 40
    width = LABEL_W + PLOT_W + RIGHT_W
    scale = PLOT_W / top
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" role="img">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="8" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    if note:
        out.append(f'<text x="8" y="36" fill="#555">{escape(note)}</text>')
    for k in range(5):
        x = LABEL_W + PLOT_W * k / 4
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{height - 30}" stroke="#ddd"/>')
        out.append(
            f'<text x="{x:.1f}" y="{height - 14}" text-anchor="middle" fill="#555">{top * k / 4:.4g}</text>'
        )
    out.append(
        f'<text x="{LABEL_W + PLOT_W / 2:.1f}" y="{height - 2}" text-anchor="middle" fill="#333">{escape(unit)}</text>'
    )
    for i, (label, value, low, high) in enumerate(bars):
        y = TOP + i * (BAR_H + GAP)
        w = max(value * scale, 0.5)
        out.append(
            f'<text x="{LABEL_W - 6}" y="{y + BAR_H - 5}" text-anchor="end">{escape(label)}</text>'
        )
        out.append(f'<rect x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="#4a78b5"/>')
        lx, hx = LABEL_W + low * scale, LABEL_W + high * scale
        cy = y + BAR_H / 2
        out.append(f'<line x1="{lx:.1f}" y1="{cy}" x2="{hx:.1f}" y2="{cy}" stroke="#222"/>')
        out.append(f'<line x1="{lx:.1f}" y1="{cy - 4}" x2="{lx:.1f}" y2="{cy + 4}" stroke="#222"/>')
        out.append(f'<line x1="{hx:.1f}" y1="{cy - 4}" x2="{hx:.1f}" y2="{cy + 4}" stroke="#222"/>')
        out.append(
            f'<text x="{LABEL_W + PLOT_W + 6}" y="{y + BAR_H - 5}">{value:.4g}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
