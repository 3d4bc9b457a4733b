"""Claims in words: a page may call one row faster, slower or the same as
another, or say by how much in words (twice, an order of magnitude, a
terabyte a second), only where a page helper said so: a sentence with a
comparative or magnitude word typed in it must hold a helper's output,
cite a research note (the reviewer checks the measurement there), or use
the word as the rule's term (*faster*, in emphasis, as pages define it).

What this cannot know is whether the helper in the sentence is about the
rows the words are about ("v9 is faster than CUB: {{ page.compare(a, b) }}"
passes whatever compare says): the reviewer reads each such sentence
against its helper (research/REVIEW-PROCESS.md). It refuses the claim with
nothing beside it. The word list is here and nowhere else."""

from __future__ import annotations

import re

from ..errors import Diagnostic
from ..sources import manifest

# Comparative and magnitude words, in every inflection a page would use.
# "the same" only where it compares ("is the same as"); "better", "worse"
# only before "than"; "times" is a number's (the number check has it);
# "-fold" in lower or upper case ("Sevenfold", "37-FOLD"), not a name's
# ("gridStrideFold").
CLAIM_WORDS = [
    r"fast(?:er|est)", r"slow(?:er|est)", r"quick(?:er|est)", r"speed-?ups?", r"slow-?downs?",
    r"ahead\s+of", r"behind", r"beat(?:s|en|ing)?", r"outperform\w*", r"outpac\w+", r"win(?:s|ning)?",
    r"los(?:e|es|ing)\s+to", r"order(?:s)?\s+of\s+magnitude", r"(?:tera|giga|peta|mega)bytes?",
    r"(?:twice|thrice|half)\s+as\s+(?:fast|slow|quick|long|much|many|wide|high)",
    r"(?:doubles|halves|doubled|halved)\s+(?:the\s+|its\s+)?(?:[\w'-]+\s+)?(?:speed|time|bandwidth|throughput)",
    # A factor or a share in words or in a constant's digits ("10 times as
    # fast", "10x less time", "a third of the time"): a number the page
    # states as a constant is still no speed-up anyone measured.
    r"times\s+(?:as\s+(?:fast|slow|quick|long)|less\s+time|more\s+time|the\s+(?:speed|time|throughput|bandwidth|rate))",
    r"\d[\d,]*(?:\.\d+)?\s?[x\u00d7]", r"as\s+(?:fast|slow|quick)\s+as",
    r"(?:a|one)\s+(?:half|third|quarter|fifth|tenth)\s+of\s+(?:the\s+|its\s+|[\w'`-]+\s+)?(?:time|speed|bandwidth|throughput|cost)",
    # Provenance typed by hand: only the renderer's line, from the evidence,
    # says a page was verified or where its numbers were measured.
    r"verified", r"(?:measured|tested|benchmarked|confirmed|proven|timed)\s+on\s+(?:the\s+|an?\s+|real\s+|this\s+)?"
    r"(?:H\d+\w*|GPUs?|hardware|device|machine)",
    r"(?:is|are|was|were|be)\s+the\s+same\s+as", r"(?:better|worse)\s+than", r"(?:much|far|way)\s+(?:more|less)",
    r"on\s+par", r"keeps?\s+pace", r"outrun\w*", r"surpass\w*", r"lags?\s+behind", r"trails?\s+behind",
    r"identical\s+(?:in\s+)?(?:speed|time)", r"(?:are|is)\s+identical", r"rapid\w*", r"indistinguishable",
    r"(?:several|many|a\s+few|countless)\s+times\s+(?:longer|shorter|faster|slower|more|less|the)", r"(?-i:[\w-]+(?:fold|FOLD))",
    r"schneller", r"langsamer", r"plus\s+rapide", r"plus\s+lent", r"m[aá]s\s+r[aá]pid\w*",
]
CLAIM_RE = re.compile(r"(?<![\w-])(?:" + "|".join(CLAIM_WORDS) + r")(?![\w-])", re.IGNORECASE)
# The rule's words used as its terms: in emphasis, as the pages define them.
TERM_RE = re.compile(r"(?<![*_\w])[*_](?:faster|slower|the same|not distinguishable)[*_](?![*_\w])", re.IGNORECASE)
# A sentence ends at '.', '!' or '?' and a space, at a blank line, at a
# table cell's edge and where a list item begins; a colon or a semicolon
# does not end one ("v7 against v6: {{ compare }}; the fewer loads did not
# make it quicker" is one claim with its helper).
SENTENCE_END = re.compile(r"(?<=[.!?])[*_)\]\"']*\s+|\n\s*\n|\s*\|\s*|\n(?=\s*(?:[-*+]|\d+\.)\s)")


def _note_exists(link: str) -> bool:
    m = re.search(r"research/([A-Za-z0-9._-]+\.md)", link)
    return bool(m) and (manifest.ROOT / "research" / m.group(1)).is_file()


# A link to a research note, with link text a reader sees: "[](x.md)" cites nothing.
RESEARCH_LINK = re.compile(r"\[(?=[^\]\n]*[A-Za-z0-9])[^\]\n]*\]\((?:\.\./)*research/[A-Za-z0-9._-]+\.md(?:#[^)]*)?\)")


# A term sentence: one that speaks of the rule's words as words (defines
# them, counts them, says what the rule calls a pair). The rule's terms in
# emphasis pass only there; "v9 is *faster* than CUB everywhere" does not.
TERM_SENTENCE = re.compile(r"\b(?:rule|rule's|word|words|calls?|called|says?|means?|twins?|false|margin|interval|aim\w*|targets?|"
                           r"tally|tallies|counts?|verdicts?)\b", re.IGNORECASE)
# Letters that look like Latin ones (Cyrillic, Greek): a word that mixes
# them with Latin letters is read as its Latin look-alike, and named.
_LOOK_ALIKE = str.maketrans("асеіјорѕхуԁһԛԝаАВЕКМНОРСТХУ οαν", "aceijopsxydhqwaABEKMHOPCTXY oav")
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff\u034f]")


def readable(text: str) -> tuple[str, list[int]]:
    """Text as a reader takes it in: invisible characters and emphasis
    marks inside a word gone, look-alike letters read as Latin; with, for
    each character kept, its offset in `text`."""
    keep = [True] * len(text)
    for m in _INVISIBLE.finditer(text):
        keep[m.start()] = False
    for m in re.finditer(r"(?<=\w)[*_]+(?=\w)", text):
        for i in range(m.start(), m.end()):
            keep[i] = False
    where = [i for i, k in enumerate(keep) if k]
    return "".join(text[i] for i in where).translate(_LOOK_ALIKE), where


def said(text: str) -> str:
    """Text as a problem quotes it: on one line, at most 90 characters."""
    text = " ".join(text.split())
    return text if len(text) <= 90 else text[:87] + "..."


def claim_problems(raw: str, prose: str, sentinel: str, shown: str, line_of) -> list[Diagnostic]:
    """`raw`: the page as typed, one character for each of `prose`'s, which
    is the page as read with code blanked and each helper's output read as
    `sentinel`. A claim word in a sentence that holds no helper output is
    a problem, named at its line (`line_of(offset)`)."""
    cited = [m.start() for m in RESEARCH_LINK.finditer(raw) if _note_exists(m.group(0))]
    prose, where = readable(prose)
    where.append(len(where) and where[-1] + 1)
    terms = [(m.start(), m.end()) for m in TERM_RE.finditer(prose)]
    out = []
    ends = list(SENTENCE_END.finditer(prose))
    for a, b in zip([0] + [m.end() for m in ends], [m.start() for m in ends] + [len(prose)]):
        text = prose[a:b]
        if sentinel in text or any(where[a] <= c < where[min(b, len(where) - 1)] for c in cited):
            continue
        for m in CLAIM_RE.finditer(text):
            at = a + m.start()
            if any(s <= at < e for s, e in terms) and TERM_SENTENCE.search(text):
                continue
            out.append(Diagnostic(shown, line_of(where[at]), 0, (
                f"the claim '{m.group(0)}' is typed into the page ('{said(text)}'); a comparison "
                "or a magnitude comes from a page helper: put the helper's output in the sentence "
                "(page.compare, page.measured, page.verdicts), or write the rule's word as its "
                "term (*faster*)")))
            break  # one problem a sentence
    return out
