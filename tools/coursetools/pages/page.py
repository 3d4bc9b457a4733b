"""What a lesson template can call: `lesson` (LessonView) and `page`
(Page), the page API, assembled from its parts: rows.py (numbers),
verdicts.py (comparative words), teach.py (the teaching part's short
forms and the evidence appendix), causes.py (counters, timelines, the
review, SASS), figures.py (charts) and documented.py (units NVIDIA's
documentation defines)."""

from __future__ import annotations

import sys

from ..sources.constants import NoSuchConstant, integer_value, source_constant
from ..sources.manifest import Lesson
from .causes import PageCauses
from .documented import PageDocumented
from .figures import PageFigures
from .marks import TOKEN_RE, TemplateProblem, shown
from .rows import PageRows
from .formats import number as number_format
from .nvbench import PageNvbench
from .teach import PageTeach
from .verdicts import PageVerdicts


class LessonView:
    """What a template may know about its lesson."""

    def __init__(self, lesson: Lesson):
        self._lesson = lesson
        self.target, self.day = lesson.target, lesson.day
        # Facts from the build, not typed into the template: shown (their
        # numbers are the build's), and no measurement a claim may rest on.
        for k in ("build_command", "run_command", "compile_command", "min_cc"):
            setattr(self, k, shown(getattr(lesson, k)))
        self.topic = lesson.topic  # typed by the author (CMakeLists.txt): prose, checked like prose

    def constant(self, name: str, fmt: str = ",") -> str:
        """What the lesson's source sets a named constant to (`constexpr
        ... kName = VALUE;` or `#define NAME VALUE`): an integer expression
        worked out and printed with `fmt` (16777216ull - 611ull reads
        16,776,605), anything else as written there. A program's sizes and
        counts stay on its page whatever the evidence (they are code, not
        measurements)."""
        try:
            text = source_constant(self._lesson, name)
        except NoSuchConstant as e:
            raise TemplateProblem(str(e)) from None
        number = integer_value(text)
        return shown(text if number is None else number_format(number, fmt))


class Page(PageTeach, PageFigures, PageCauses, PageNvbench, PageVerdicts, PageRows, PageDocumented):
    """What a lesson template can call (the page API)."""

    def expected_output(self) -> str:
        """The program's verified output box. Where it goes is part of the
        page's contract (render.py checks it after rendering): called
        once, and placed once as it is written, at top level in the
        evidence appendix. Each call is noted here with its template line
        and what it returned."""
        out = super().expected_output()
        self.__dict__.setdefault("_expected_calls", []).append((_template_line_now(), out))
        return out


def _template_line_now() -> int:
    """The line of README.md.j2 being rendered where this helper was
    called (the innermost frame of that template's code), 0 if none."""
    frame = sys._getframe(1)
    while frame is not None:
        template = frame.f_globals.get("__jinja_template__")
        if template is not None and (template.name or "").endswith("README.md.j2"):
            return template.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return 0


def first_token(text: str) -> str:
    """The id of the first helper output in `text` ('' if none)."""
    m = TOKEN_RE.search(text)
    return m.group(1) if m else ""
