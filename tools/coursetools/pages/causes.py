"""The page API's causes: profiler counters, timelines, the review's
outcomes and the machine code, each from the record or the build."""

from __future__ import annotations

import re
from pathlib import Path

from ..binaries import sass
from ..sources import constants
from .formats import number as number_format
from .marks import TemplateProblem, mark, mark_block, shown
from .rows import UNMEASURED


def code_span(text: str) -> str:
    """`text` as Markdown inline code: delimited by one backtick more than
    its longest run of them, so nothing inside can end the span, on one
    line."""
    text = " ".join(str(text).split())
    ticks = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


class PageCauses:
    """The page API: counters, timelines, the review and SASS."""

    def counter(self, row: str, metric: str, fmt: str = ",.0f", kernel: int = 0, occurrence: int = 0) -> str:
        """A profiler counter of the `kernel`-th kernel of a profiled row
        (the `occurrence`-th row of that name, in profiling order)."""
        if not self.verified:
            return UNMEASURED
        names = [m["name"] for m in self._lesson.info.metrics]
        if metric not in names:
            raise TemplateProblem(f"metric '{metric}' is not declared in lesson.toml; declared: {', '.join(names)}")
        profiled = [r for run in self._profile.get("runs", []) for r in run.get("rows", [])]
        named = [r for r in profiled if r.get("row") == row]
        if 0 <= occurrence < len(named):
            r = named[occurrence]
            if r.get("listed"):  # listed, never profiled: any kernel's counter stands
                return mark(number_format(0.0, fmt, metric))
            if len(r.get("kernels", [])) <= kernel:
                return UNMEASURED
            value = r["kernels"][kernel]["metrics"].get(metric)
            return UNMEASURED if value is None else mark(number_format(value, fmt, metric))
        if not named and profiled:
            seen = dict.fromkeys(str(r.get("row")) for r in profiled)
            raise TemplateProblem(f"no profiled row '{row}'; the profiled rows are: {', '.join(seen)}")
        return UNMEASURED

    def timeline(self, field: str, fmt: str = ".1f", **where) -> str:
        """A number from the timeline build's rows (times in microseconds)."""
        if not self.verified:
            return UNMEASURED
        rows = [r for r in self._timeline if all(r.get(k) == v for k, v in where.items())]
        if len(rows) > 1:
            keys = "; ".join(", ".join(f"{k}={r[k]!r}" for k in ("schedule", "kernel", "elements", "k") if k in r)
                             for r in rows[:4])
            raise TemplateProblem(f"{where} selects {len(rows)} timeline rows ({keys}); name the fields that "
                                  "tell them apart")
        if not rows:
            return UNMEASURED
        if field not in rows[0]:
            raise TemplateProblem(f"timeline rows have no '{field}'; they have: {', '.join(sorted(rows[0]))}")
        return mark(number_format(rows[0][field], fmt))

    def review(self, step: str, field: str = "passed", fmt: str = "", args: list | None = None) -> str:
        """What the review recorded for the first step whose name contains
        `step` (and, given `args`, that ran with exactly those arguments:
        one negative build may run twice): 'passed', 'exit_code', 'errors',
        'cuda_error', ..."""
        if not self.verified:
            return UNMEASURED
        for s in self._review.get("steps", []):
            if step in s.get("step", "") and (args is None or s.get("args") == list(args)):
                if field not in s:
                    raise TemplateProblem(f"review step '{s['step']}' has no '{field}'; it has: {', '.join(sorted(s))}")
                v = s[field]
                if isinstance(v, bool):
                    return mark("passed" if v else "failed")
                return mark(number_format(v, fmt) if fmt and isinstance(v, (int, float)) else v)
        # A listing runs no review: its steps cannot be checked before one.
        return mark("passed") if self._review.get("listed") else UNMEASURED

    def review_rows(self, step: str, field: str, fmt: str = ",", **where) -> str:
        """A number from a reported negative build's own rows."""
        if not self.verified:
            return UNMEASURED
        for s in self._review.get("steps", []):
            if step in s.get("step", ""):
                for r in s.get("rows", []):
                    if all(r.get(k) == v for k, v in where.items()) and field in r:
                        return mark(number_format(r[field], fmt))
        return mark(number_format(0.0, fmt)) if self._review.get("listed") else UNMEASURED

    def sass(self, kernel: str, label: str, max_lines: int = 40) -> str:
        """The instructions of interest in a kernel's machine code, from the
        built binary, under `label` (the author's words, shown as code and
        read by the prose check). `kernel`: its name in the source, mangled,
        or an instance as the source spells it ('latencyChase<Chase::RemotePtx>');
        its lesson.toml [[sass]] `show` list picks the instructions. On a
        verified page, the machine code of the architecture its records ran;
        a build without it says so, never showing other code under the label."""
        arch = None
        if self.verified:
            arch = int(str(self._record["gpu"]["compute_capability"]).replace(".", ""))
            if arch not in sass.machine_archs(Path(self._lesson.binary)):
                return (code_span(label) + shown(f": this build holds no sm_{arch} machine code, the architecture "
                                                 "the page's runs used; build with the course's default "
                                                 "architectures to see it.") + "\n")
        show = next((list(e["show"]) for e in self._lesson.info.sass if e["kernel"] == kernel and e.get("show")), None)
        # An instance as the source spells it needs the lesson's enumerators.
        named = {"enums": constants.enum_values(self._lesson)} if "<" in kernel else {}
        lines = sass.excerpt(Path(self._lesson.binary), kernel, max_lines, show, **named, arch=arch)
        body = "\n".join(lines) + "\n"
        return (code_span(label) + shown(" (`cuobjdump --dump-sass`, instructions of interest):") + "\n\n"
                + mark_block(f"```text\n{body}```\n"))
