"""The page API's charts: drawn from the promoted record's rows into
figures/NAME.svg beside the page."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET

from ..evidence.state import LessonState
from ..errors import escaped
from . import plots
from . import claims
from .formats import number as number_format
from .marks import TemplateProblem, mark
from .numbers import as_read, typed
from .rows import UNITS


FIGURES = "figures"

FIGURE_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class PageFigures:
    """The page API: figures."""

    def _chart_words(self, *texts) -> None:
        """A chart's words (notes, legends, labels, a unit) are prose the
        prose check cannot read in the SVG: held to its rule here."""
        allowed = {float(c) for c in self._lesson.info.constants}
        for text in texts:
            # a placeholder shows as its row's value: read as nothing here,
            # so "1{x}0{x}2" is the 102 a chart without that field would show
            plain = as_read(re.sub(r"\{[a-z_]+\}", "", str(text)))
            bad = typed(plain, allowed, set())
            claim = claims.CLAIM_RE.search(claims.readable(str(text))[0])
            said = escaped(str(text)[:60])  # on one line, whatever the words hold
            if bad:
                raise TemplateProblem(f"the number {bad[0]} is typed into a chart's words ('{said}'); "
                                      "take it from the record, or list it in lesson.toml [page] constants")
            if claim:
                raise TemplateProblem(f"the claim '{escaped(claim.group(0))}' is typed into a chart's words "
                                      f"('{said}'); a chart's words name what it shows, the page's "
                                      "helpers say how rows compare")

    def _drawn(self, name: str, title: str, draw) -> str:
        """The figure `draw(page)` makes, as figures/NAME.svg, from the
        promoted record, or on a stale page from the earlier code's (and
        said to be); never a file already in figures/."""
        rel = _figure(name)
        source = self if self.verified else self._earlier
        try:
            svg = draw(source) if source is not None else None
        except TemplateProblem:
            if source is self:
                raise
            svg = None  # the earlier code's record lacks what this chart draws: no chart until a record has it
        if not svg:
            return ""
        self._figures[rel] = svg
        if source is self:
            return f"![{title}]({rel})\n"
        e = self._state.entry or {}
        return (f"![{title} (measured on the earlier code)]({rel})\n\n*Drawn from the run promoted for an earlier "
                f"version of this program (commit {mark('`' + str(e.get('commit'))[:12] + '`')}, run "
                f"{mark('`' + str(e.get('tag')) + '`')}); this version has not been run yet.*\n")

    @functools.cached_property
    def _earlier(self):
        """The page API over the earlier code's promoted record, or None."""
        if not self._state.earlier_files:
            return None
        st = LessonState(self._lesson, "promoted", [], self._state.entry, self._state.earlier_files)
        return type(self)(self._lesson, [], st)

    def picture(self, name: str, title: str) -> str:
        """A picture drawn by hand, figures/NAME.svg beside the page: shown
        on every page, as it shows an idea, not a measurement. Its words are
        held to a chart's rule (numbers from lesson.toml's constants, no
        claim words); it may hold no script, handler or link out of itself."""
        rel = _figure(name)
        path = self._lesson.path / rel
        if not path.is_file() or path.is_symlink() or path.stat().st_size > 200_000:
            raise TemplateProblem(f"{rel}: no such picture (a regular SVG file of at most 200 kB, drawn by hand)")
        text = path.read_text(encoding="utf-8", errors="replace")
        if "<!ENTITY" in text or "<!DOCTYPE" in text:
            raise TemplateProblem(f"{rel}: a picture declares no entities or doctype")
        try:
            root = ET.fromstring(text)
        except ET.ParseError as e:
            raise TemplateProblem(f"{rel}: not well-formed XML ({e})") from None
        words = [title]
        for el in root.iter():
            tag = el.tag.rsplit("}", 1)[-1]
            if tag in ("script", "foreignObject") or any(a.lower().startswith("on") for a in el.attrib):
                raise TemplateProblem(f"{rel}: a picture holds no script, handler or foreign object "
                                      f"({escaped(tag)})")
            out = [v for k, v in el.attrib.items() if k.rsplit("}", 1)[-1] == "href" and not v.startswith("#")]
            if out:
                raise TemplateProblem(f"{rel}: a picture links only inside itself ({escaped(out[0][:40])})")
            if tag in ("text", "tspan", "title", "desc") and el.text:
                words.append(el.text)
        self._chart_words(*words)
        self._pictures.add(rel)
        return f"![{title}]({rel})\n"

    def plot(self, name: str, title: str, value: str, label: str = "{mode}", note: str = "", unit: str = "",
             fmt: str = "", **where) -> str:
        """A bar per matching row: its `value` (with a unit, 'median_ms:us')
        and a whisker from the fastest to the slowest sample; `fmt` prints
        each value as the page's text does (',.0f'; pages/formats.py)."""
        self._chart_words(title, label, note, unit)
        if fmt:
            number_format(1.0, fmt, "ratio" if "%" in fmt else value.split(":")[0])  # refuses a fill, a width, a kind's misfit

        def draw(p):
            bars = []
            selected = p._select(where)
            unknown = [f for f in re.findall(r"\{([a-z_]+)\}", label) if selected and all(f not in r for r in selected)]
            if unknown:
                raise TemplateProblem(f"plot '{name}': the label names '{{{unknown[0]}}}', a field none of its rows has; "
                                      f"they have: {', '.join(sorted({k for r in selected for k in r}))}")
            for row in selected:
                v = p._field(row, value)
                if v is None:
                    continue
                lo, hi = _range(row, value.split(":")[0], UNITS.get(value.split(":")[1], 1.0) if ":" in value else 1.0)
                bars.append((_label(label, row), v, lo, hi))
            return plots.bar_chart(title, unit or value, bars, note, fmt) if bars else None
        return self._drawn(name, title, draw)

    def sweep_plot(self, name: str, title: str, series: list, over: str = "elements", value: str = "gbps",
                   marks: list = (), note: str = "", ylabel: str = "GB/s", log_y: bool = True) -> str:
        """Lines against a logarithmic `over` axis, one per series
        [legend, where]; `marks` are [x, label] vertical lines. The y axis
        is logarithmic too unless `log_y` is false (a sweep spans decades)."""
        self._chart_words(title, note, ylabel, *[s[0] for s in series], *[m[1] for m in marks])

        def draw(p):
            data = []
            for legend, where in series:
                pts = [(r[over], p._field(r, value)) for r in p._select(where)
                       if isinstance(r.get(over), (int, float)) and p._field(r, value) is not None]
                data.append((legend, pts))
            return (plots.line_chart(title, over, ylabel, data, note, [tuple(m) for m in marks], log_y)
                    if data else None)
        return self._drawn(name, title, draw)

    def timeline_plot(self, name: str, title: str, note: str = "", scale: dict | None = None, **where) -> str:
        """The timeline build's kernels matching `where`, blocks against time,
        on the time axis of the longest of the rows `scale` matches."""
        self._chart_words(title, note)

        def draw(p):
            rows = [r for r in p._timeline if all(r.get(k) == v for k, v in where.items())]
            peers = [r for r in p._timeline if all(r.get(k) == v for k, v in (scale or {}).items())] if scale else []
            span = max((r.get("span_us") or 0 for r in peers), default=None)
            return plots.timeline(title, rows, note, span) if rows else None
        return self._drawn(name, title, draw)


def _figure(name: str) -> str:
    if not FIGURE_RE.fullmatch(name):  # fullmatch: '$' alone passes a name that ends in a newline
        raise TemplateProblem(f"figure name '{escaped(name)}' is not valid; expected lower-case letters, "
                              "digits and hyphens")
    return f"{FIGURES}/{name}.svg"


def _label(label: str, row: dict) -> str:
    """The label with the row's fields in it, less a field another holds
    ('cub cub::DeviceReduce::Sum' reads 'cub::DeviceReduce::Sum')."""
    values = [str(row.get(f, "")) for f in re.findall(r"\{([a-z_]+)\}", label)]

    def sub(m):
        v = str(row.get(m.group(1), ""))
        held = any(v and v != o and v.lower() in o.lower() for o in values)
        return "" if held else v
    return " ".join(re.sub(r"\{([a-z_]+)\}", sub, label).split())


def _range(row: dict, base: str, scale: float) -> tuple[float, float]:
    v = row[base] * scale
    if base == "gbps" and row.get("min_ms") and row.get("max_ms") and row.get("median_ms"):
        return v * row["median_ms"] / row["max_ms"], v * row["median_ms"] / row["min_ms"]
    if base.endswith("_us") and row.get("k") and row.get("min_ms") is not None:
        return 1000 * row["min_ms"] / row["k"], 1000 * row["max_ms"] / row["k"]
    if base.startswith("median_"):
        rest = base[len("median_"):]
        if f"min_{rest}" in row:
            return row[f"min_{rest}"] * scale, row[f"max_{rest}"] * scale
    return v, v
