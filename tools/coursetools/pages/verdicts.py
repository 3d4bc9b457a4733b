"""The page API's comparative words: every one comes from the comparison
rule (evidence/verdict.py), applied to two rows' samples, and only to two
rows that were timed together, interleaved, in one set (the header's
course::timeSet): rows timed apart drift apart, and the rule's error rate
was measured for rows timed together."""

from __future__ import annotations

from ..rule import rows as rule_rows
from ..rule import verdict as cmp
from .marks import TemplateProblem, mark
from .rows import UNMEASURED
from .formats import number as number_format

TWIN = rule_rows.TWIN


def _pct(r: float) -> str:
    return f"{cmp.percent(r):.1f}%"


def phrase(v: cmp.Verdict) -> str:
    """A verdict as a page states it: the word, the estimate, the 99.9%
    interval of b's time over a's: '2.1% faster (1.4% to 2.8%)', 'the same
    (0.4% faster to 0.3% slower)', 'the same (0.8% to 0.9% faster)', 'not
    distinguishable (1.2% faster to 0.9% slower)'."""
    if v.low != v.low:  # nan: too few samples for any interval
        return f"{v.word} (too few samples for an interval)"
    if v.word in (cmp.FASTER, cmp.SLOWER):
        return f"{_pct(v.ratio)} {v.word} ({_pct(v.low if v.word == cmp.FASTER else v.high)} to " \
               f"{_pct(v.high if v.word == cmp.FASTER else v.low)})"
    if v.low >= 1:  # both ends on the faster side: '(0.8% to 0.9% faster)'
        return f"{v.word} ({_pct(v.low)} to {_pct(v.high)} faster)"
    if v.high < 1:
        return f"{v.word} ({_pct(v.high)} to {_pct(v.low)} slower)"
    return f"{v.word} ({cmp.signed_percent(v.high)} to {cmp.signed_percent(v.low)})"


class PageVerdicts:
    """The page API: verdicts between rows, by the comparison rule."""

    def compare(self, a: dict, b: dict, style: str = "word") -> str:
        """The comparison rule's verdict of row `a` against row `b`, from
        their samples: 'faster', 'slower', 'the same' or 'not
        distinguishable'. style='full' adds the estimate and its interval
        ('2.1% faster (1.4% to 2.8%)')."""
        v = self._verdict(a, b)
        if v is None:
            return UNMEASURED
        if style == "word":
            return mark(v.word)
        if style == "full":
            return mark(phrase(v))
        raise TemplateProblem(f"style '{style}' is not known; expected 'word' or 'full'")

    def reaches(self, a: dict, b: dict, target: float) -> str:
        """Whether row `a` meets a speed target against row `b`: 'reaches'
        when the rule's estimate of b's time over a's is at least `target`,
        else 'falls short of'. A target's outcome is computed, never typed."""
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
        sa, sb = ra[0].get("set"), rb[0].get("set")
        if sa is not None and sb is not None and sa != sb:
            raise TemplateProblem(f"{a} and {b} were timed in different sets ({sa!r}, {sb!r}); the rule compares "
                                  "only rows timed together; compare their medians with page.ratio instead")
        key = (id(ra[0]), id(rb[0]))  # the rows live as long as the page
        if key not in self._verdicts:
            self._verdicts[key] = cmp.verdict(ra[0]["samples_ms"], rb[0]["samples_ms"])
        return self._verdicts[key]

    def _values_exist(self, a: dict, b: dict, over: str, values) -> None:
        """Every value a verdict helper is given must select rows on both
        sides: a count or list of typed values is not a measurement."""
        if len(set(map(repr, values))) != len(values):
            raise TemplateProblem(f"a value given twice in {over}'s values: each size is counted once")
        if not self.verified:
            return
        for x in values:
            if not self._select({**a, over: x}) or not self._select({**b, over: x}):
                raise TemplateProblem(f"no rows with {over}={x!r} on both sides; pass values from page.values(...)")

    @staticmethod
    def _tally(words) -> dict:
        """Words counted in the rule's order, each count marked."""
        counts: dict[str, int] = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        order = [w for w in cmp.WORDS if w in counts] + [w for w in counts if w not in cmp.WORDS]
        return {k: mark(counts[k]) for k in order}

    def verdicts(self, a: dict, b: dict, over: str, values: list) -> dict:
        """How many of the rows (a + {over: x}) against (b + {over: x}), for
        each x in `values`, the rule calls each word: a sweep's summary."""
        if not self.verified:
            return {}
        self._values_exist(a, b, over, values)
        verdicts = (self._verdict({**a, over: x}, {**b, over: x}) for x in values)
        return self._tally(v.word if v else "unmeasured" for v in verdicts)

    def twins(self, **where) -> dict:
        """The rule applied to the same code against itself: every row named
        NAME-twin (timed a second time beside NAME, in the same set) against
        NAME, counted by word. Where the rule says faster or slower here it
        is wrong: this tally is the record's measured false-call rate."""
        if not self.verified:
            return {}
        words = []
        for row in self._select(where):
            for field in ("version", "schedule", "mode"):
                name = row.get(field)
                if isinstance(name, str) and name.endswith(TWIN):
                    twin_of = {k: row[k] for k in ("set", "elements", "timing", "bins", "keys", "k", "group")
                               if k in row}
                    base = self._select({**twin_of, field: name[:-len(TWIN)]})
                    if base:
                        words.append(cmp.verdict(row["samples_ms"], base[0]["samples_ms"]).word)
        return self._tally(words)

    def twin_count(self, word: str, **where) -> str:
        """How many twin pairs (see twins()) the rule calls `word`."""
        if word not in cmp.WORDS:
            raise TemplateProblem(f"'{word}' is not one of the rule's words: {', '.join(cmp.WORDS)}")
        if not self.verified:
            return UNMEASURED
        return self.twins(**where).get(word, mark(0))

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
                hits.append(mark(number_format(x, fmt)))
        if not hits:
            return "no size"
        return hits[0] if len(hits) == 1 else ", ".join(hits[:-1]) + " and " + hits[-1]

    def versus_table(self, a: dict, b: dict, names: list, over: str = "elements",
                     timings: list = ("cold", "batch", "graph"), **where) -> str:
        """One line per value of `over`: for each timing, both medians (in
        microseconds), the rule's word with its estimate and interval, and
        how many samples each row took."""
        if not self.verified:
            return f"{UNMEASURED}\n"
        head = [over] + [f"{t}: {names[0]} / {names[1]} (us); verdict" for t in timings]
        lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
        for x in self.values(over, **{**where, **a}):
            cells = [mark(f"{x:,}")]
            for t in timings:
                v = self._verdict({**where, **a, over: x, "timing": t}, {**where, **b, over: x, "timing": t})
                if v is None:
                    cells.append("")
                    continue
                cells.append(mark(f"{v.a.median * 1000:,.2f} / {v.b.median * 1000:,.2f}; {phrase(v)}; "
                                  f"{v.a.n:,} samples"))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"
