"""The prose check: no number typed into a page that the record did not
give it.

Each template is rendered with the page helpers' output marked. What is
left once the marked spans, code (fenced and inline), link targets, HTML
comments and the day table are removed is the prose a person typed; any
number in it must be one of the lesson's stated constants (lesson.toml's
[page] constants: the sizes and counts that define its experiments), a
day of the course ("day 24"), or a date (a citation's "checked
2026-11-29"). Digits inside a name (sm_90, v9, float4, H200) are part of
the name, not numbers; digits with a unit after them ("37x") are numbers.
"""

from __future__ import annotations

import html
import re
import unicodedata

from . import render
from .errors import Diagnostic
from .manifest import ROOT, Lesson

# A number is digits not inside a name (sm_90, v9, float4, H200: a letter,
# digit or underscore before them). Letters after them do not make a name:
# "37x", "1234us" and "4800GB/s" are numbers with units, and the exponent
# in "2^999" is a number too.
NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_])(\d+(?:,\d{3})*(?:\.\d+)?)")
DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
DAY_RE = re.compile(r"\b[Dd]ays? (\d+)(?:(?:,| and| or| to) (\d+))*")
MARKED_RE = re.compile(re.escape(render.MARK_OPEN) + ".*?" + re.escape(render.MARK_CLOSE), re.S)


def as_read(text: str) -> str:
    """The text as a reader sees its digits: HTML entities decoded, Unicode
    compatibility forms folded (superscript and full-width digits become
    digits), and Markdown's emphasis underscores dropped (`_37_` shows 37)."""
    text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])", " ", text)


def strip_non_prose(text: str) -> str:
    text = MARKED_RE.sub(" ", text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1\s*$", " ", text, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\]\([^)\s]*\)", "]", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = DATE_RE.sub(" ", text)
    return as_read(text)


def problems_in(text: str, allowed: set[float], days: set[int], shown: str) -> list[Diagnostic]:
    out = []
    lines = text.split("\n")
    prose = strip_non_prose(text)
    # Work line by line on the stripped text (it keeps the line breaks of
    # everything but fenced blocks, which it blanks), to name lines.
    for n, line in enumerate(prose.split("\n"), 1):
        day_refs = set()
        for m in DAY_RE.finditer(line):
            day_refs.update(int(g) for g in re.findall(r"\d+", m.group(0)))
        for m in NUMBER_RE.finditer(line):
            value = float(m.group(1).replace(",", ""))
            if value in allowed or (value.is_integer() and int(value) in days and int(value) in day_refs):
                continue
            snippet = line.strip()
            snippet = snippet if len(snippet) <= 90 else snippet[:87] + "..."
            out.append(Diagnostic(shown, 0, 0,
                                  f"the number {m.group(1)} is typed into the prose ('{snippet}'); take it from "
                                  "the record with a page helper, or list it in lesson.toml [page] constants"))
    del lines
    return out


def check(lessons: list[Lesson], only=None) -> list[Diagnostic]:
    days = {l.day for l in lessons}
    out: list[Diagnostic] = []
    for lesson in lessons:
        if only and lesson.target not in only:
            continue
        files, diags, _ = render.render_lesson(lesson, keep_marks=True)
        out += diags
        page = files.get(lesson.path / render.PAGE)
        if page is None:
            continue
        allowed = {float(c) for c in lesson.info.constants}
        shown = (lesson.path / render.TEMPLATE).relative_to(ROOT).as_posix()
        out += problems_in(page, allowed, days, shown)
    return out
