"""How a page's teaching part reads: its sentences' length, how much of it
is about the proof rather than the lesson, and how soon a reader meets a
table or figure. `tools/course readability` prints it for every page, and
a test holds the three days to the course's targets (TARGETS).

The teaching part is the rendered page up to its evidence appendix (the
first level-2 heading that begins with "Evidence"). Prose is what is left
when code, tables, figures, headings and HTML comments are taken out;
links and emphasis read as their words."""

from __future__ import annotations

import dataclasses
import math
import re

# The targets a page's teaching part is held to: short sentences, the
# lesson before the proof (a few sentences at most about statistics,
# provenance or the GPUs' agreement), one interval a section at most, no
# percentage of 150% or more (an "x" instead), a table or figure early.
TARGETS = {"mean_words": 20, "p90_words": 30, "max_words": 50, "about_proof_share": 0.05,
           "intervals_per_section": 1, "big_percentages": 0, "words_before_first_table": 150}

# A sentence about the proof, not the lesson: the rule and its statistics,
# the records and their provenance, one GPU against another.
ABOUT_PROOF = re.compile(
    r"\b(?:intervals?|hodges|lehmann|margin|twins?|the rule\b|rule's|false[- ]calls?|samples?|percentile|"
    r"confidence|records?|promot\w*|provenance|commit|sign(?:ed|ature)|reviewer|estimates?|"
    r"not distinguishable|on both GPUs|on one GPU|the other GPU|each GPU|every GPU|GPU [0-9a-f]{8})\b", re.I)
INTERVAL = re.compile(r"\(\s*[-+]?[\d.,]+%(?:\s+(?:faster|slower))?\s+to\s+[-+]?[\d.,]+%")
PERCENT = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?%")
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*`]*[A-Z0-9`])")
WORD = re.compile(r"[A-Za-z0-9][\w'.,/+-]*")


@dataclasses.dataclass
class Reading:
    sentences: list[str]
    about_proof: list[str]
    intervals_per_section: dict[str, int]
    big_percentages: list[str]
    words_before_first_table: int
    first_table: str

    def words(self) -> list[int]:
        return [len(WORD.findall(s)) for s in self.sentences]

    def measures(self) -> dict:
        w = sorted(self.words()) or [0]
        return {"sentences": len(self.sentences), "mean_words": sum(w) / len(w),
                "p90_words": w[min(len(w) - 1, math.ceil(0.9 * len(w)) - 1)], "max_words": w[-1],
                "about_proof_share": len(self.about_proof) / max(1, len(self.sentences)),
                "intervals_per_section": max(self.intervals_per_section.values(), default=0),
                "big_percentages": len(self.big_percentages),
                "words_before_first_table": self.words_before_first_table}

    def misses(self) -> list[str]:
        m = self.measures()
        out = [f"{k} is {m[k]:.3g}, above {v}" for k, v in TARGETS.items() if m[k] > v]
        if m["max_words"] > TARGETS["max_words"]:
            out.append("longest: " + max(self.sentences, key=lambda s: len(WORD.findall(s)))[:160])
        out += [f"{name}: {n} intervals" for name, n in self.intervals_per_section.items()
                if n > TARGETS["intervals_per_section"]]
        return out


def teaching_part(page: str) -> str:
    m = re.search(r"^## Evidence", page, re.M)
    return page[:m.start()] if m else page


def _plain(text: str) -> str:
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)  # figures
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their words
    text = re.sub(r"<[^>]+>", " ", text)
    return text.replace("**", "").replace("__", "").replace("*", "")


def read(page: str) -> Reading:
    part = re.sub(r"<!--.*?-->", "", teaching_part(page), flags=re.S)
    # The renderer's notice on a page whose evidence is not valid is not
    # the author's teaching: its reasons are as long as the evidence says.
    part = re.sub(r"^> \*\*UNVERIFIED\.\*\*[^\n]*\n", "", part, flags=re.M)
    prose, before, first_table, section = [], 0, "", "(top)"
    sections: dict[str, int] = {}
    in_fence = None
    for line in part.splitlines():
        fence = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence:
            in_fence = None if in_fence and fence.group(1)[0] == in_fence[0] else (in_fence or fence.group(1))
            continue
        if in_fence:
            continue
        stripped = line.strip()
        if stripped.startswith(("|", "![")):
            first_table = first_table or stripped
            continue
        if stripped.startswith("#"):
            section = stripped.lstrip("#").strip()
            prose.append("")
            continue
        text = _plain(stripped)
        sections[section] = sections.get(section, 0) + len(INTERVAL.findall(text))
        if not first_table:
            before += len(WORD.findall(text))
        prose.append(re.sub(r"^([-*+]|\d+\.)\s+", "", text) if text else "")
    sentences = []
    for para in re.split(r"\n\s*\n|\n(?=[-*+] |\d+\. )", "\n".join(prose)):
        para = " ".join(para.split())
        sentences += [s for s in SENTENCE_END.split(para) if WORD.search(s)]
    big = [m.group(0) for s in sentences for m in PERCENT.finditer(s) if float(m.group(1).replace(",", "")) >= 150]
    return Reading(sentences, [s for s in sentences if ABOUT_PROOF.search(s)], sections, big, before, first_table)
