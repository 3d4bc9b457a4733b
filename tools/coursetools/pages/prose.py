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

import re

from ..sources import manifest
from . import marks, render
from .numbers import as_read, typed
from ..errors import Diagnostic
from ..sources.manifest import Lesson

DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
MARKED_RE = re.compile(re.escape(marks.MARK_OPEN) + ".*?" + re.escape(marks.MARK_CLOSE), re.S)
# Raw HTML in a page's prose could hide text from this check (an attribute
# holding a backtick reads as code here, as markup to a browser).
HTML_TAG_RE = re.compile(r"</?(?:a|abbr|b|big|br|cite|code|del|details|dfn|div|em|font|i|img|ins|kbd|mark|p|pre|q|"
                         r"s|samp|script|small|span|strong|style|sub|summary|sup|table|td|th|tr|u|var)\b[^>]*>", re.I)


def blank_fences(text: str) -> str:
    """Fenced code blocks blanked, as CommonMark reads fences: an opener of
    three or more backticks (whose info string holds no backtick) or
    tildes, indented at most three spaces, closed by a line of the same
    character at least as long; an unclosed fence runs to the end."""
    out, fence = [], None
    for line in text.split("\n"):
        if fence is None:
            m = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
                out.append("")
                continue
            out.append(line)
        else:
            m = re.match(r"^ {0,3}(`{3,}|~{3,})[ \t]*$", line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
    return "\n".join(out)


def strip_non_prose(text: str) -> str:
    text = MARKED_RE.sub(" ", text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = blank_fences(text)
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
        for number in typed(line, allowed, days):
            snippet = line.strip()
            snippet = snippet if len(snippet) <= 90 else snippet[:87] + "..."
            out.append(Diagnostic(shown, 0, 0,
                                  f"the number {number} is typed into the prose ('{snippet}'); take it from "
                                  "the record with a page helper, or list it in lesson.toml [page] constants"))
    outside_code = re.sub(r"<!--.*?-->", " ", blank_fences(MARKED_RE.sub(" ", text)), flags=re.S)
    for m in HTML_TAG_RE.finditer(outside_code):
        out.append(Diagnostic(shown, 0, 0, f"raw HTML ('{m.group(0)[:60]}') in the page; write Markdown"))
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
        shown = (lesson.path / render.TEMPLATE).relative_to(manifest.ROOT).as_posix()
        out += problems_in(page, allowed, days, shown)
    return out
