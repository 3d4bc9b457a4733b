"""The page API's comparative words: every one comes from the comparison
rule (evidence/verdict.py), applied to two rows' samples."""

from __future__ import annotations

from ..evidence import verdict as cmp
from .marks import TemplateProblem, mark
from .rows import UNMEASURED, _format


class PageVerdicts:
    """The page API: verdicts between rows, by the comparison rule."""

    def compare(self, a: dict, b: dict, style: str = "word") -> str:
        """The comparison rule's verdict of row `a` against row `b`, from
        their samples: 'faster', 'slower', 'the same' or 'not
        distinguishable'. style='full' adds the ratio of their medians."""
        v = self._verdict(a, b)
        if v is None:
            return UNMEASURED
        if style == "word":
            return mark(v.word)
        if style == "full":
            return mark(f"{v.word} ({v.ratio:.3f}x)")
        raise TemplateProblem(f"style '{style}' is not known; expected 'word' or 'full'")

    def reaches(self, a: dict, b: dict, target: float) -> str:
        """Whether row `a` meets a speed target against row `b`: 'reaches'
        when b's median time over a's is at least `target`, else 'falls
        short of'. A target's outcome is computed, never typed."""
        v = self._verdict(a, b)
        if v is None:
            return UNMEASURED
        return "reaches" if v.ratio >= target else "falls short of"

    def _verdict(self, a: dict, b: dict):
        if not self.verified:
            return None
        ra, rb = self._select(a), self._select(b)
        if not ra or not rb or "samples_ms" not in ra[0] or "samples_ms" not in rb[0]:
            return None
        key = (id(ra[0]), id(rb[0]))  # the rows live as long as the page
        if key not in self._verdicts:
            self._verdicts[key] = cmp.verdict(ra[0]["samples_ms"], rb[0]["samples_ms"])
        return self._verdicts[key]

    def _values_exist(self, a: dict, b: dict, over: str, values) -> None:
        """Every value a verdict helper is given must select rows on both
        sides: a count or list of typed values is not a measurement."""
        if not self.verified:
            return
        for x in values:
            if not self._select({**a, over: x}) or not self._select({**b, over: x}):
                raise TemplateProblem(f"no rows with {over}={x!r} on both sides; pass values from page.values(...)")

    @staticmethod
    def _tally(words) -> dict:
        """Words counted in the order they first appear, each count marked."""
        counts: dict[str, int] = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        return {k: mark(n) for k, n in counts.items()}

    def verdicts(self, a: dict, b: dict, over: str, values: list) -> dict:
        """How many of the rows (a + {over: x}) against (b + {over: x}), for
        each x in `values`, the rule calls each word: a sweep's summary."""
        if not self.verified:
            return {}
        self._values_exist(a, b, over, values)
        verdicts = (self._verdict({**a, over: x}, {**b, over: x}) for x in values)
        return self._tally(v.word if v else "unmeasured" for v in verdicts)

    def split_verdicts(self, a: dict, over: str, values: list) -> dict:
        """The rule applied to one row against itself: for each x in
        `values`, (a + {over: x})'s alternate samples (first, third, ...)
        against the others, counted by word. What the rule says of two
        identical kernels, at this noise: the yardstick for a sweep's
        verdicts."""
        if not self.verified:
            return {}
        self._values_exist(a, a, over, values)

        def word(x):
            samples = self._select({**a, over: x})[0].get("samples_ms", [])
            return cmp.verdict(samples[0::2], samples[1::2]).word if len(samples) >= 4 else "unmeasured"
        return self._tally(word(x) for x in values)

    def where_verdict(self, a: dict, b: dict, over: str, values: list, word: str, fmt: str = ",") -> str:
        """The values x of `over` at which the rule calls (a + {over: x})
        against (b + {over: x}) `word`, as a phrase: '65,537 and 262,145',
        or 'no size'."""
        if word not in cmp.WORDS:
            raise TemplateProblem(f"'{word}' is not one of the rule's words: {', '.join(cmp.WORDS)}")
        if not self.verified:
            return UNMEASURED
        self._values_exist(a, b, over, values)
        hits = []
        for x in values:
            v = self._verdict({**a, over: x}, {**b, over: x})
            if v and v.word == word:
                hits.append(mark(_format(x, fmt)))
        if not hits:
            return "no size"
        return hits[0] if len(hits) == 1 else ", ".join(hits[:-1]) + " and " + hits[-1]

    def versus_table(self, a: dict, b: dict, names: list, over: str = "elements",
                     timings: list = ("cold", "batch", "graph"), **where) -> str:
        """One line per value of `over`: for each timing, both medians (in
        microseconds) and the verdict of a against b. `names`: the two
        rows' column names."""
        if not self.verified:
            return f"{UNMEASURED}\n"
        head = [over] + [f"{t}: {names[0]} / {names[1]} (us), verdict" for t in timings]
        lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
        for x in self.values(over, **{**where, **a}):
            cells = [mark(f"{x:,}")]
            for t in timings:
                ra = self._select({**where, **a, over: x, "timing": t})
                rb = self._select({**where, **b, over: x, "timing": t})
                v = self._verdict({**where, **a, over: x, "timing": t}, {**where, **b, over: x, "timing": t})
                if v is None:
                    cells.append("")
                    continue
                word = v.word
                if word == cmp.UNDECIDED:
                    # Why the rule cannot decide: noise above what it allows
                    # for "the same" (the noisier row's spread, half its
                    # interquartile range over its median), or else rows
                    # too close for a clear gap (how far apart the medians are).
                    noise = max(v.a.dispersion, v.b.dispersion)
                    if noise > cmp.SAME_DISPERSION:
                        word += f" (spread ±{noise / 2:.1%})"
                    else:
                        word += f" (medians {abs(v.ratio - 1):.1%} apart)"
                cells.append(mark(f"{ra[0]['median_ms'] * 1000:.2f} / {rb[0]['median_ms'] * 1000:.2f}, {word}"))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"
