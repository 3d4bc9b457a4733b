"""The page API's teaching forms: what a student reads first, short, with
its proof one click away. Each helper here writes a short form ("5.4x
faster", a verdict's word, a ladder table) linked to an entry of the
page's evidence appendix, which holds each GPU's estimates, intervals and
medians: page.evidence_for(key, title) names the appendix subsection
("Evidence: TITLE") the entries that follow go to, page.evidence() writes
the appendix."""

from __future__ import annotations

import re

from ..hardware import peak_dram_gbps
from ..rule import resolution
from ..rule import verdict as cmp
from .formats import number as number_format
from .marks import TemplateProblem, mark
from .rows import UNMEASURED
from .verdicts import phrase

# Ratios from here up read as "5.4x"; below, as a percentage ("12%").
TIMES_FROM = 1.5


def ratio_text(r: float) -> str:
    """b's time over a's as a student reads it: '5.4x faster', '12%
    faster', '3.1% slower', '17x slower' (no decimal from 10x up)."""
    up = r if r >= 1 else 1 / r
    word = "faster" if r >= 1 else "slower"
    if up >= TIMES_FROM:
        return f"{up:.0f}x {word}" if up >= 10 else f"{up:.1f}x {word}"
    pct = (up - 1) * 100
    return f"{pct:.1f}% {word}" if pct < 10 else f"{pct:.0f}% {word}"


def range_text(ratios: list[float]) -> str:
    """Ratios of one direction on several GPUs as one short form: '22%
    faster' where they print alike, else the span, '11% to 20% faster' or
    '1.4x to 1.7x faster' (in x when either end is 1.5 or more)."""
    texts = {ratio_text(r) for r in ratios}
    if len(texts) == 1:
        return texts.pop()
    ups = sorted(r if r >= 1 else 1 / r for r in ratios)
    word = "faster" if ratios[0] >= 1 else "slower"
    if ups[-1] >= TIMES_FROM:
        # The ends as ratio_text prints them ('17x' from 10x up), so two
        # estimates that print alike read as one, never '17.5x to 17.5x'.
        lo, hi = (ratio_text(u).split()[0] if u >= TIMES_FROM else f"{u:.1f}x" for u in (ups[0], ups[-1]))
    else:
        decimals = ".1f" if 100 * (ups[-1] - 1) < 10 else ".0f"
        lo, hi = (f"{100 * (u - 1):{decimals}}%" for u in (ups[0], ups[-1]))
    return f"{hi} {word}" if lo == hi else f"{lo} to {hi} {word}"


def speedup_text(r: float) -> str:
    """A ladder's speed-up column: '5.4x', '12%', '-3%' (slower)."""
    if r >= TIMES_FROM:
        return f"{r:.0f}x" if r >= 10 else f"{r:.1f}x"
    pct = (r - 1) * 100 if r >= 1 else -(1 / r - 1) * 100
    return f"{pct:+.0f}%" if abs(pct) >= 10 else f"{pct:+.1f}%"


def _slug(title: str) -> str:
    """The anchor GitHub and MkDocs both give the heading 'Evidence: TITLE'."""
    return re.sub(r"[^a-z0-9_ -]", "", f"evidence: {title}".lower()).replace(" ", "-")


def _name(where: dict) -> str:
    return ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in where.items())


class PageTeach:
    """The page API: the teaching part's short forms and the appendix."""

    def _teach(self) -> dict:
        if not hasattr(self, "_evidence"):
            self._evidence = {"key": None, "sections": {}}
        return self._evidence

    def evidence_for(self, key: str, title: str) -> str:
        """Where the entries of what follows go: the appendix's subsection
        'Evidence: TITLE' (letters, digits, spaces, '-' and '_'), until the
        next evidence_for. Writes nothing."""
        if not re.fullmatch(r"[A-Za-z0-9 _-]{1,60}", title):
            raise TemplateProblem(f"evidence title {title!r}: letters, digits, spaces, '-' and '_' only")
        t = self._teach()
        t["key"] = key
        t["sections"].setdefault(key, {"title": title, "entries": []})
        return ""

    def _entry(self, text: str) -> str:
        """Files `text` under the current subsection; returns its anchor."""
        t = self._teach()
        if t["key"] is None:
            self.evidence_for("page", "the page")
        section = t["sections"][t["key"]]
        if text not in section["entries"]:
            section["entries"].append(text)
        return _slug(section["title"])

    def vs(self, a: dict, b: dict) -> str:
        """Row `a` against row `b` by the rule on every GPU of the set, short:
        '5.4x faster', '12% faster' or their span ('11% to 20% faster') where
        every GPU says faster (or slower); 'the same', 'not distinguishable',
        or each GPU's word where they differ; linked to its entry (each
        GPU's estimate and 99.9% interval)."""
        vs = self._verdicts_each(a, b)
        if vs is None:
            return UNMEASURED
        words = [v.word for _, v in vs]
        if len(set(words)) == 1:
            first = vs[0][1]
            short = range_text([v.ratio for _, v in vs]) if first.word in (cmp.FASTER, cmp.SLOWER) else first.word
        else:
            short = ", ".join(f"{w} on {g}" for (g, _), w in zip(vs, words))
        anchor = self._entry(f"{_name(a)} against {_name(b)}: " + "; ".join(f"{phrase(v)} on {g}" for g, v in vs))
        return mark(f"[{short}](#{anchor})")

    def num(self, field: str, fmt: str = ".3g", **where) -> str:
        """page.measured's number (the first GPU's), linked to its entry,
        which gives every GPU's value."""
        first = self.measured(field, fmt, **where)
        if first == UNMEASURED:
            return first
        each = []
        for run in self._runs:
            rows = run.select(where)
            value = self._field(rows[0], field) if len(rows) == 1 else None
            each.append(f"{number_format(value, fmt, field)} on {run.gpu}" if value is not None else
                        f"none on {run.gpu}")
        anchor = self._entry(f"{field} of {_name(where)}: " + "; ".join(each))
        return mark(f"[{first}](#{anchor})")

    def peak_gbps(self, fmt: str = ",.0f") -> str:
        """The first GPU's theoretical DRAM bandwidth in GB/s: two transfers
        a memory clock over the bus width, as its record reports them."""
        peak = peak_dram_gbps((self._record or {}).get("results", {}).get("gpu") or {}) if self.verified else None
        return mark(number_format(peak, fmt, "gbps")) if peak else UNMEASURED

    def ladder(self, versions: list, elements: int, timing: str = "cold", key: str = "version",
               references: list = ()) -> str:
        """A ladder in Mark Harris's form: a line per row of `versions` (its
        `key`) at `elements` in `timing`, with its "change" field, median
        time (us), GB/s, share of the DRAM's peak, and speed-up over the line
        before ("step") and over the first. A speed-up is the rule's estimate
        on the first GPU, as page.vs gives it (a ratio of medians can lie
        outside the words' span); rows timed apart get a ratio of medians,
        marked '(medians)'. `references` (a library, a ceiling) get no step.
        Its entry gives every GPU's medians and steps."""
        if not self.verified:
            return f"{UNMEASURED}\n"
        gpu = (self._record.get("results") or {}).get("gpu") or {}
        peak = peak_dram_gbps(gpu)
        versions = list(versions) + [v for v in references if v not in versions]
        wheres = [{"group": "ladder", key: v, "elements": elements, "timing": timing} for v in versions]
        rows = []
        for v, where in zip(versions, wheres):
            r = self._one(where)
            if r is None:
                raise TemplateProblem(f"ladder: no row {key}={v!r} at {elements:,} elements, {timing}")
            rows.append(r)
        head = ["version", "what it changes", "time (us)", "GB/s", "% of DRAM peak", "step", f"vs {versions[0]}"]
        lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        steps: list[list[str]] = [[] for _ in self._runs]  # each GPU's steps, for the entry
        prev = 0
        for i, (v, r) in enumerate(zip(versions, rows)):
            step = cumulative = ""
            if i:
                cumulative = self._ladder_ratio(wheres[i], wheres[0], rows[i], rows[0])
                if v not in references:
                    step = self._ladder_ratio(wheres[i], wheres[prev], rows[i], rows[prev])
                    for k, ratio in enumerate(self._ladder_ratios(wheres[i], wheres[prev])):
                        steps[k].append(f"{v} {speedup_text(ratio)}")
            cells = [f"`{v}`", str(r.get("change", "")), f"{1000 * r['median_ms']:,.1f}", f"{r.get('gbps', 0):,.0f}",
                     f"{100 * r['gbps'] / peak:.0f}%" if peak and r.get("gbps") else "", step, cumulative]
            lines.append("| " + " | ".join(mark(c) if i else c for i, c in enumerate(cells)) + " |")
            if v not in references:
                prev = i
        each = []
        for k, run in enumerate(self._runs):
            meds = [run.select(w) for w in wheres]
            text = f"{run.gpu}: " + ", ".join(f"{v} {1000 * m[0]['median_ms']:,.1f} us" for v, m in
                                              zip(versions, meds) if m)
            if steps[k]:
                text += "; steps (the rule's estimates): " + ", ".join(steps[k])
            each.append(text)
        anchor = self._entry(f"the ladder at {elements:,} elements, {timing}, median times: " + "; ".join(each))
        return "\n".join(lines) + "\n\n" + mark(f"[Each GPU's times]({'#' + anchor}).") + "\n"

    def _ladder_ratios(self, a: dict, b: dict) -> list[float]:
        """Each GPU's rule estimate, where the rows were timed together."""
        try:
            vs = self._verdicts_each(a, b)
        except TemplateProblem:
            return []  # timed in different sets: the rule does not compare them
        return [v.ratio for _, v in vs] if vs else []

    def _ladder_ratio(self, a: dict, b: dict, ra: dict, rb: dict) -> str:
        """A speed-up cell: the first GPU's estimate, else a ratio of medians."""
        ratios = self._ladder_ratios(a, b)
        if ratios:
            return speedup_text(ratios[0])
        return f"{speedup_text(rb['median_ms'] / ra['median_ms'])} (medians)"

    def same_code(self) -> str:
        """The same code against itself on each GPU, per timing and band of
        launch time (rule/resolution.py): the same-code pairs, how many the
        rule called faster or slower at 2% (its measured error rate, beside
        the program's own count where it wrote one), the largest shift, and
        the margin the page's words there use."""
        if not self.verified:
            return f"{UNMEASURED}\n"
        lines = ["| GPU | timing | median time | same-code pairs | called faster or slower | largest shift | "
                 "margin used |", "|" + " --- |" * 7]
        for run in self._runs:
            results = (run.record or {}).get("results") or {}
            own = resolution.recorded(results)  # the program's own count, where it wrote one
            for t in resolution.tally(results):
                called = f"{t['faster_or_slower']:,}"
                if own is not None:
                    called += f" (the run's own count: {own.get((t['timing'], t['band']), 0):,})"
                lines.append(f"| {run.gpu} | {t['timing']} | {t['band']} | {t['pairs']:,} | "
                             f"{called} | {t['largest_shift_pct']:.1f}% | {t['margin_pct']:.1f}% |")
        return mark("\n".join(lines) + "\n")

    def evidence(self) -> str:
        """The appendix's entries, a subsection each ('### Evidence: TITLE')
        in the order the teaching part first named them."""
        out = []
        for section in self._teach()["sections"].values():
            if section["entries"]:
                # A line of prose first: on a phone the site shows it and
                # folds the list behind it (site/transforms.py).
                out.append(f"### Evidence: {section['title']}\n\nEach GPU's numbers behind the words above.\n")
                out += [f"- {e}" for e in section["entries"]]
                out.append("")
        return mark("\n".join(out) + "\n") if out else ""
