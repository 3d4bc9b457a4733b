"""The page API's comparative words: every one comes from the comparison
rule (evidence/verdict.py), applied to two rows' samples, and only to two
rows that were timed together, interleaved, in one set (the header's
course::timeSet): rows timed apart drift apart, and the rule's error rate
was measured for rows timed together."""

from __future__ import annotations

import collections
import dataclasses
import functools
from pathlib import Path

from ..rule import replication, resolution
from ..rule.rows import TWIN
from ..rule import verdict as cmp
from .causes import code_span
from .marks import Lines, TemplateProblem, mark
from .rows import UNMEASURED, joined
from .formats import number as number_format
from .. import cache


# The verdicts' memo (build/cache/verdicts.json), named by the rule as this
# process loaded it (a long-lived server may outlive an edit of the file):
# a change to the rule computes every verdict again.
_MEMO = cache.Memo("verdicts", cache.version_of(Path(cmp.__file__)))


def save_memo() -> None:
    _MEMO.save()


def _verdict_to(v: cmp.Verdict) -> list:
    return [v.word, v.ratio, v.low, v.high, list(dataclasses.astuple(v.a)), list(dataclasses.astuple(v.b))]


def _verdict_from(x) -> cmp.Verdict | None:
    """A remembered verdict, or None where the entry is not one (a memo
    written by other code, or by hand): then it is computed again."""
    try:
        word, ratio, low, high, a, b = x
        if word not in cmp.WORDS or not all(isinstance(v, float) for v in (ratio, low, high)):
            return None
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (*a, *b)):
            return None
        return cmp.Verdict(word, ratio, low, high, cmp.Summary(*a), cmp.Summary(*b))
    except (TypeError, ValueError):
        return None


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


DIFFERS = "differs between GPUs"


class Tally(dict):
    """A tally of the rule's words: looked up by the plain word
    (tally.get("faster")), listed with each word marked as the helper's
    own (for word, n in tally.items()), so a page listing it types no
    comparative word of its own."""

    def items(self):
        return [(mark(k), v) for k, v in super().items()]


class PageVerdicts:
    """The page API: verdicts between rows by the comparison rule, on every
    record of the promoted set (one a GPU). A word stands alone only where
    every GPU gives it; elsewhere the page says which GPU gave what."""

    def compare(self, a: dict, b: dict, style: str = "word") -> str:
        """The comparison rule's verdict of row `a` against row `b`, from
        their samples: 'faster', 'slower', 'the same' or 'not
        distinguishable', where every GPU of the set says it; else each
        GPU's word ('faster on GPU 0bbaa9b9 but the same on GPU 411bc198').
        style='full' adds the estimate and interval: the first GPU's where
        all agree ('2.1% faster (1.4% to 2.8%) on GPU 0bbaa9b9; faster on
        both GPUs'), each GPU's where they differ ('2.5% slower (2.2% to
        2.7%) on GPU 0bbaa9b9 but not distinguishable (1.8% to 2.2% slower)
        on GPU 411bc198')."""
        if style not in ("word", "full"):
            raise TemplateProblem(f"style '{style}' is not known; expected 'word' or 'full'")
        vs = self._verdicts_each(a, b)
        if vs is None:
            return UNMEASURED
        agree = len({v.word for _, v in vs}) == 1
        if style == "word" and agree:
            return mark(vs[0][1].word)
        if len(vs) == 1:
            return mark(phrase(vs[0][1]))
        if agree:
            # One word on every GPU: the estimate and interval of the first,
            # the one the page's numbers come from, named as its.
            both = "both GPUs" if len(vs) == 2 else f"all {len(vs)} GPUs"
            return mark(f"{phrase(vs[0][1])} on {vs[0][0]}; {vs[0][1].word} on {both}")
        said = [f"{v.word if style == 'word' else phrase(v)} on {gpu}" for gpu, v in vs]
        return mark(" but ".join(said))

    def reaches(self, a: dict, b: dict, target: float) -> str:
        """'reaches' where the rule's estimate of b's time over a's is at least
        `target` on every GPU, 'falls short of' where on none, else which GPU
        does ('reaches on GPU A, not on GPU B,'): an outcome computed, not typed."""
        vs = self._verdicts_each(a, b)
        if vs is None:
            return UNMEASURED
        met = [gpu for gpu, v in vs if v.ratio >= target]
        if len(met) == len(vs):
            return "reaches"
        if not met:
            return "falls short of"
        missed = [gpu for gpu, v in vs if v.ratio < target]
        return mark(f"reaches on {joined(met)}, not on {joined(missed)},")

    def reaches_count(self, a: dict, b: dict, over: str, values: list, target: float) -> str:
        """At how many of `values` row (a + {over: x}) reaches `target`
        against (b + {over: x}) on every GPU of the set (see reaches)."""
        if not self.verified:
            return UNMEASURED
        self._values_exist(a, b, over, values)
        hits = 0
        for x in values:
            vs = self._verdicts_each({**a, over: x}, {**b, over: x})
            if vs is None:
                return UNMEASURED
            hits += all(v.ratio >= target for _, v in vs)
        return mark(f"{hits:,}")

    @functools.cached_property
    def _pair_words(self) -> list[tuple[str, str, str, list[str]]]:
        """(set, a, b, each GPU's word) for every pair the program decided
        but the twins, in the first record's order, where every record has it."""
        if not self.verified or not self._runs:
            return []
        per_run = [replication.pair_words((run.record or {}).get("results") or {}, widened=True,
                                          verdict=self._rule, margins=run.margins) for run in self._runs]
        return [(k[0], k[1], k[2], [w[k] for w in per_run]) for k in per_run[0]
                if all(k in w for w in per_run)]

    def agreement(self) -> dict:
        """How many of the pairs the program compares (but the twins) get one
        word on every GPU ('agree'), and how many do not ('differ')."""
        if not self.verified:
            return {"agree": UNMEASURED, "differ": UNMEASURED}
        pairs = self._pair_words
        differ = sum(len(set(ws)) > 1 for *_, ws in pairs)
        return {"agree": mark(f"{len(pairs) - differ:,}"), "differ": mark(f"{differ:,}")}

    def disagreements(self, limit: int = 8) -> Lines:
        """The pairs whose words differ between the set's GPUs, as a list of
        Markdown list items ('- pdl against plain (n=4096 K=4 batch): faster
        on GPU A, the same on GPU B'); at most `limit`, then how many more.
        Loop over it ({% for d in page.disagreements() %}), or place it
        whole for the items one a line ('none' where the GPUs agree)."""
        if not self.verified:
            return UNMEASURED
        gpus = [run.gpu for run in self._runs]
        rows = [(st, a, b, ws) for st, a, b, ws in self._pair_words if len(set(ws)) > 1]
        lines = [f"- {code_span(a)} against {code_span(b)} ({code_span(st)}): "
                 + ", ".join(f"{w} on {g}" for w, g in zip(ws, gpus)) for st, a, b, ws in rows[:limit]]
        if len(rows) > limit:
            lines.append(f"- and {len(rows) - limit:,} more")
        return Lines(mark(line) for line in lines)

    def gpus(self) -> str:
        """The set's GPUs, as the page names them ('GPU 0bbaa9b9 and GPU
        411bc198')."""
        if not self.verified or not self._runs:
            return UNMEASURED
        return mark(joined([run.gpu for run in self._runs]))

    def gpu(self, i: int = 0) -> str:
        """The set's i-th GPU ('GPU 0bbaa9b9'); the first is the one the
        page's numbers and charts come from."""
        if not self.verified or not self._runs:
            return UNMEASURED
        if not isinstance(i, int) or not 0 <= i < len(self._runs):
            raise TemplateProblem(f"gpu({i!r}): the set has {len(self._runs)} GPUs, 0 to {len(self._runs) - 1}")
        return mark(self._runs[i].gpu)

    def _rule(self, sa: list, sb: list) -> cmp.Verdict:
        """The rule's verdict on two sample lists, remembered by their ids
        (they live as long as the page, which asks for a pair many times)."""
        key = (id(sa), id(sb))
        if key not in self._verdicts:
            # Across renders, by content: a verified record's digest and the
            # rows' places in it name the samples (a fixture has no digest).
            ka, kb = self._row_keys.get(id(sa)), self._row_keys.get(id(sb))
            memo_key = f"{ka}|{kb}" if ka and kb else None
            v = _verdict_from(_MEMO.get(memo_key)) if memo_key else None
            if v is None:
                v = cmp.verdict_of(self._prepared(sa), self._prepared(sb))
                if memo_key:
                    _MEMO.put(memo_key, _verdict_to(v))
            self._verdicts[key] = v
        return self._verdicts[key]

    def _prepared(self, samples: list) -> cmp.Prepared:
        """A row's samples read once for all its verdicts."""
        if id(samples) not in self._prepared_rows:
            self._prepared_rows[id(samples)] = cmp.prepare(samples)
        return self._prepared_rows[id(samples)]

    def _verdicts_each(self, a: dict, b: dict):
        """(GPU, verdict) for each record of the set, or None where a row
        is missing from any record."""
        if not self.verified:
            return None
        out = []
        for run in self._runs:
            # Only timed rows have samples (a derived row, such as a
            # per-boundary saving, may share a timed row's fields).
            ra = [r for r in run.select(a) if "samples_ms" in r]
            rb = [r for r in run.select(b) if "samples_ms" in r]
            if not ra or not rb:
                return None
            ra, rb = self._one(a, ra), self._one(b, rb)  # more than one: names the rows it matched
            sa, sb = ra.get("set"), rb.get("set")
            if sa is not None and sb is not None and sa != sb:
                raise TemplateProblem(f"{a} and {b} were timed in different sets ({sa!r}, {sb!r}); the rule "
                                      "compares only rows timed together; compare their medians with page.ratio "
                                      "instead")
            v = self._rule(ra["samples_ms"], rb["samples_ms"])
            out.append((run.gpu, v.at_margin(resolution.margin_for(run.margins, ra.get("timing"), v.a.median))))
        return out

    def _said(self, a: dict, b: dict, over: str, gpu: int | None):
        """x -> the word for (a + {over: x}) against (b + {over: x}): the
        set's one word (DIFFERS where the GPUs differ), or the gpu-th GPU's."""
        if gpu is not None:
            self.gpu(gpu)  # refuses an index the set has not

        def said(x):
            vs = self._verdicts_each({**a, over: x}, {**b, over: x})
            if vs is None:
                return "unmeasured"
            words = {v.word for _, v in vs} if gpu is None else {vs[gpu][1].word}
            return words.pop() if len(words) == 1 else DIFFERS
        return said

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
        counts = collections.Counter(words)
        order = [w for w in cmp.WORDS if w in counts] + [w for w in counts if w not in cmp.WORDS]
        return Tally((k, mark(counts[k])) for k in order)

    def verdicts(self, a: dict, b: dict, over: str, values: list, gpu: int | None = None) -> dict:
        """How many of (a + {over: x}) against (b + {over: x}), x in `values`,
        the rule calls each word on every GPU, and at how many the GPUs differ
        ('differs between GPUs'); gpu=i: the i-th GPU's words alone."""
        if not self.verified:
            return {}
        self._values_exist(a, b, over, values)
        return self._tally(map(self._said(a, b, over, gpu), values))

    def twins(self, **where) -> dict:
        """Every NAME-twin row (NAME timed again beside itself) against NAME,
        counted by the rule's word over every GPU's records: where it says
        faster or slower it is wrong, so this is the measured false-call rate."""
        if not self.verified:
            return {}
        words = []
        for run in self._runs:
            for row in run.select(where):
                for field in ("version", "schedule", "mode"):
                    name = row.get(field)
                    if isinstance(name, str) and name.endswith(TWIN):
                        twin_of = {k: row[k] for k in ("set", "elements", "timing", "bins", "keys", "k", "group")
                                   if k in row}
                        base = run.select({**twin_of, field: name[:-len(TWIN)]})
                        if base:
                            words.append(self._rule(row["samples_ms"], base[0]["samples_ms"]).word)
        return self._tally(words)

    def where_verdict(self, a: dict, b: dict, over: str, values: list, word: str, fmt: str = ",",
                      gpu: int | None = None) -> str:
        """The values x of `over` at which the rule calls (a + {over: x})
        against (b + {over: x}) `word` on every GPU, as a phrase ('65,537 and
        262,145', or 'no size'); word='differs between GPUs': where the GPUs
        differ; gpu=i: where the i-th GPU alone says it (name it: page.gpu(i))."""
        if word not in cmp.WORDS + (DIFFERS,):
            raise TemplateProblem(f"'{word}' is not one of the rule's words: {', '.join(cmp.WORDS + (DIFFERS,))}")
        if gpu is not None and word == DIFFERS:
            raise TemplateProblem(f"'{DIFFERS}' compares the GPUs; it takes no gpu")
        if not self.verified:
            return UNMEASURED
        self._values_exist(a, b, over, values)
        said = self._said(a, b, over, gpu)
        hits = [mark(number_format(x, fmt)) for x in values if said(x) == word]
        return joined(hits) if hits else "no size"

    def versus_table(self, a: dict, b: dict, names: list, over: str = "elements",
                     timings: list = ("cold", "batch", "graph"), **where) -> str:
        """One line per value of `over`: for each timing, both medians (in
        microseconds) on the set's first GPU, the rule's word with its
        estimate and interval there, how many samples each row took, and
        every other GPU's word (in bold where it differs)."""
        if not self.verified:
            return f"{UNMEASURED}\n"
        gpus = [run.gpu for run in self._runs]
        # The GPU's name is the record's (GPU 89db674a): a helper's output,
        # marked, or the prose check reads its digits as a typed number.
        head = [over] + [f"{t}: {names[0]} / {names[1]} (us, {mark(gpus[0])}); verdict" for t in timings]
        lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
        for x in self.values(over, **{**where, **a}):
            cells = [mark(f"{x:,}")]
            for t in timings:
                vs = self._verdicts_each({**where, **a, over: x, "timing": t}, {**where, **b, over: x, "timing": t})
                if vs is None:
                    cells.append("")
                    continue
                v = vs[0][1]
                others = "".join(f"; {gpu}: " + (f"**{w.word}**" if w.word != v.word else w.word) for gpu, w in vs[1:])
                cells.append(mark(f"{v.a.median * 1000:,.2f} / {v.b.median * 1000:,.2f}; {phrase(v)}; "
                                  f"{v.a.n:,} samples{others}"))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"
