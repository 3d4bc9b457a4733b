"""What a lesson template can call: `lesson` (LessonView) and `page`
(Page), the page API, assembled from its parts: rows.py (numbers),
verdicts.py (comparative words), causes.py (counters, timelines, the
review, SASS) and figures.py (charts)."""

from __future__ import annotations

from ..sources.manifest import Lesson
from .causes import PageCauses
from .figures import PageFigures
from .marks import mark
from .rows import PageRows
from .verdicts import PageVerdicts


class LessonView:
    """What a template may know about its lesson."""

    def __init__(self, lesson: Lesson):
        for k in ("target", "day", "build_command", "run_command", "compile_command"):
            setattr(self, k, getattr(lesson, k))
        # Facts from the build, not typed into the template: marked for the
        # prose check like every helper's output.
        self.topic = lesson.topic  # typed by the author (CMakeLists.txt): prose, checked like prose
        self.min_cc = mark(lesson.min_cc)


class Page(PageFigures, PageCauses, PageVerdicts, PageRows):
    """What a lesson template can call (the page API)."""
