"""What counts as a number a person typed, for the prose check and for
the words a template passes into a chart (a title, a note, a legend).

A number is digits not inside a name (sm_90, v9, float4, H200: a letter,
digit or underscore before them). Letters after them do not make a name:
"37x", "1234us" and "4800GB/s" are numbers with units, and the exponent in
"2^999" is a number too. Text is read as a reader sees it: HTML entities
decoded, Unicode compatibility forms folded (superscript and full-width
digits become digits), Markdown's emphasis underscores dropped.
"""

from __future__ import annotations

import html
import re
import unicodedata

NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_])(\d+(?:,\d{3})*(?:\.\d+)?)")
DAY_RE = re.compile(r"\b[Dd]ays? (\d+)(?:(?:,| and| or| to) (\d+))*")


def as_read(text: str) -> str:
    text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])", " ", text)


def typed(line: str, allowed: set[float], days: set[int]) -> list[str]:
    """The numbers in `line` (already read as a reader sees it) that are
    neither stated constants nor a day of the course named as one
    ("day 24", "days 58 and 77": only the digits inside that phrase)."""
    day_spans = []
    for m in DAY_RE.finditer(line):
        day_spans += [(d.start() + m.start(), d.end() + m.start()) for d in re.finditer(r"\d+", m.group(0))]
    out = []
    for m in NUMBER_RE.finditer(line):
        value = float(m.group(1).replace(",", ""))
        if value in allowed:
            continue
        if value.is_integer() and int(value) in days and (m.start(1), m.end(1)) in day_spans:
            continue
        out.append(m.group(1))
    return out
