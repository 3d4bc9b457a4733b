"""The same build's words on two GPUs (or two runs): every pair of rows
the program compares (its sets' decisions), decided by the rule on each
record's samples, and sorted by how the two words relate. A word that
holds on every GPU of a model is one both records give; a contradiction
is two decided words that differ (*faster* on one, *the same* on the
other); a pair where one or both say *not distinguishable* differs
without contradicting."""

from __future__ import annotations

import dataclasses

from . import resolution
from . import rows as store
from . import verdict as rule

DECIDED = (rule.FASTER, rule.SLOWER, rule.SAME)


def pair_words(results: dict, keep=lambda d: not store.is_twin_pair(d), widened: bool = False,
               verdict=rule.verdict, margins: dict | None = None) -> dict[tuple[str, str, str], str]:
    """(set, a, b) -> the rule's word, for each decided pair `keep` selects
    (by default every pair but the twins); `widened`: at the margins the
    record's own same-code pairs set (rule/resolution.py, or `margins`
    where the caller has them), as a page states its words, not at the
    calibrated 2%. `verdict`: the rule, or a page's remembered copy of it."""
    if widened and margins is None:
        margins = resolution.margins(results)
    out = {}
    for d, sa, sb in store.decided_pairs(results, keep):
        v = verdict(sa, sb)
        if widened:
            v = v.at_margin(resolution.margin_for(margins, d["set"].rsplit(" ", 1)[-1], v.a.median))
        out[(d["set"], d["a"], d["b"])] = v.word
    return out


@dataclasses.dataclass
class Agreement:
    agree: list = dataclasses.field(default_factory=list)
    contradict: list = dataclasses.field(default_factory=list)  # two decided words that differ
    undecided: list = dataclasses.field(default_factory=list)  # differ, one or both not distinguishable
    missing: int = 0  # pairs one record has and the other not

    @property
    def pairs(self) -> int:
        return len(self.agree) + len(self.contradict) + len(self.undecided)


def agreement(one: dict, two: dict) -> Agreement:
    """How two records' words (pair_words of each) relate, pair by pair."""
    out = Agreement(missing=len(set(one) ^ set(two)))
    for key in one:
        if key not in two:
            continue
        a, b = one[key], two[key]
        entry = (key, a, b)
        if a == b:
            out.agree.append(entry)
        elif a in DECIDED and b in DECIDED:
            out.contradict.append(entry)
        else:
            out.undecided.append(entry)
    return out
