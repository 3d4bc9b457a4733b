"""Lesson pages: lessons/<day>/README.md from README.md.j2 (Jinja2).

A template names snippets (never pastes code), takes the compile and run
commands from the build's manifest (never retypes them), and shows a
program's output only from a promoted record that matches today's
sources. Without one, the page carries the UNVERIFIED notice instead.
"""

from __future__ import annotations

import difflib
import os
import re
import traceback
from pathlib import Path

import jinja2

from . import evidence as ev
from . import plots, sass, snippets
from .diagnostics import CourseError, Diagnostic
from .manifest import ROOT, Lesson

TEMPLATE = "README.md.j2"
PAGE = "README.md"
FIGURES = "figures"
SNIPPET_CALL_RE = re.compile(r"""snippet\(\s*(['"])(?P<name>.*?)\1""")

UNVERIFIED_NOTICE = (
    "> **UNVERIFIED.** No output is shown for this program: no run on real "
    "hardware that matches today's sources has been recorded and promoted "
    "({reason}). Until one is, nothing on this page is this program's output. "
    "See [the review process]({review}).\n"
)


def _fmt_num(v) -> str:
    return f"{v:g}" if isinstance(v, (int, float)) else str(v)


class Page:
    """What a lesson template can call."""

    def __init__(self, lesson: Lesson, lesson_snippets: list[snippets.Snippet], state: ev.State):
        self.lesson = lesson
        self.state = state
        self.page_dir = lesson.path
        self._snippets = {s.name: s for s in lesson_snippets}
        self.figures: dict[str, str] = {}

    # -- snippets -------------------------------------------------------
    def snippet(self, name: str) -> str:
        s = self._snippets.get(name)
        if s is None:
            raise UnknownSnippet(name, sorted(self._snippets))
        link = os.path.relpath(ROOT / s.path, self.page_dir).replace(os.sep, "/")
        return snippets.render_block(s, link)

    # -- evidence -------------------------------------------------------
    @property
    def verified(self) -> bool:
        return self.state.valid

    @property
    def results(self) -> dict:
        return (self.state.record or {}).get("results") or {} if self.verified else {}

    def provenance(self) -> str:
        if not self.verified:
            return ""
        r, e = self.state.record, self.state.entry
        gpu = r["gpu"]
        clocks = gpu.get("clocks", {})
        sm = clocks.get("sm_mhz", {})
        mem = clocks.get("mem_mhz", {})
        clock_text = ""
        if sm:
            clock_text = f"; SM clock {sm['min']:g}\u2013{sm['max']:g} MHz, memory clock {mem.get('median', 0):g} MHz during the run"
        return (
            f"Recorded on {gpu['name']} (compute capability {gpu['compute_capability']}, "
            f"{gpu['sm_count']} SMs), driver {gpu['driver']}, CUDA runtime {gpu['cuda_runtime']}, "
            f"nvcc {r['toolchain']['nvcc']}, commit `{r['git']['commit'][:12]}`, tag `{r['tag']}`, "
            f"{r['recorded_at'].replace('T', ' ').replace('Z', ' UTC')}{clock_text}. "
            f"Promoted by {e['promoted_by']} on {e['promoted_at'][:10]}."
        )

    def expected_output(self) -> str:
        if not self.verified:
            review = os.path.relpath(ROOT / "research" / "REVIEW-PROCESS.md", self.page_dir)
            return UNVERIFIED_NOTICE.format(reason="; ".join(self.state.reasons), review=review)
        r = self.state.record
        out = r["stdout"].rstrip("\n") + "\n"
        fence = snippets.fence_for(out.split("\n"))
        cmd = " ".join(r["command"])
        return (
            f"**{self.provenance()}**\n\n"
            f"Command: `{cmd}`\n\n"
            f"{fence}text\n{out}{fence}\n"
        )

    def rows(self, **where) -> list[dict]:
        return [row for row in self.results.get("rows", []) if all(row.get(k) == v for k, v in where.items())]

    def row(self, **where) -> dict | None:
        found = self.rows(**where)
        return found[0] if found else None

    def value(self, field: str, **where):
        """A number from the promoted record, or None."""
        r = self.row(**where)
        return None if r is None else r.get(field)

    def measured(self, field: str, fmt: str = "{:.3g}", **where) -> str:
        """A number from the promoted record, or a plain 'unmeasured'."""
        r = self.row(**where)
        if r is None or r.get(field) is None:
            return "*(unmeasured)*"
        return fmt.format(r[field])

    def ratio(self, field: str, a: dict, b: dict, fmt: str = "{:.2f}") -> str:
        ra, rb = self.row(**a), self.row(**b)
        if not ra or not rb or not rb.get(field):
            return "*(unmeasured)*"
        return fmt.format(ra[field] / rb[field])

    def plot(self, name: str, title: str, value: str, label: str = "{mode}", note: str = "", unit: str = "", **where) -> str:
        rows = self.rows(**where)
        if not rows:
            return ""
        bars = []
        for row in rows:
            v = row.get(value)
            if v is None:
                continue
            lo, hi = _range(row, value)
            bars.append((label.format(**row), v, lo, hi))
        svg = plots.bar_chart(title, unit or value, bars, note)
        rel = f"{FIGURES}/{name}.svg"
        self.figures[rel] = svg
        return f"![{title}]({rel})\n"

    # -- instructions -----------------------------------------------------
    def sass(self, mangled: str, label: str, max_lines: int = 40) -> str:
        lines = sass.excerpt(Path(self.lesson.binary), mangled, max_lines)
        body = "\n".join(lines) + "\n"
        return f"`{label}` (`cuobjdump --dump-sass`, instructions of interest):\n\n```text\n{body}```\n"


def _range(row: dict, value: str) -> tuple[float, float]:
    v = row[value]
    if value == "gbps" and row.get("min_ms") and row.get("max_ms") and row.get("median_ms"):
        return v * row["median_ms"] / row["max_ms"], v * row["median_ms"] / row["min_ms"]
    if value.endswith("_us") and row.get("k") and row.get("min_ms") is not None:
        return 1000 * row["min_ms"] / row["k"], 1000 * row["max_ms"] / row["k"]
    if value.startswith("median_"):
        base = value[len("median_"):]
        if f"min_{base}" in row:
            return row[f"min_{base}"], row[f"max_{base}"]
    return v, v


class UnknownSnippet(Exception):
    def __init__(self, name, known):
        self.name = name
        self.known = known


def _template_line(exc: BaseException, template_path: Path) -> int:
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == template_path.resolve():
            line = frame.lineno or 0
    return line


def _did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; known snippets: {', '.join(known) or 'none'}"


def render_lesson(lesson: Lesson) -> tuple[dict[Path, str], list[Diagnostic]]:
    template_path = lesson.path / TEMPLATE
    shown = template_path.relative_to(ROOT).as_posix()
    if not template_path.exists():
        return {}, [Diagnostic(shown, 0, 0, f"no page template; expected {TEMPLATE} in {lesson.dir}")]
    by_lesson, diags = snippets.extract_files([str(ROOT / s) for s in lesson.sources], ROOT)
    found = [s for group in by_lesson.values() for s in group]
    known = sorted(s.name for s in found)
    text = template_path.read_text(encoding="utf-8")
    for m in SNIPPET_CALL_RE.finditer(text):
        name = m.group("name")
        if name not in known:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            diags.append(Diagnostic(shown, line, col, f"unknown snippet '{name}'{_did_you_mean(name, known)}"))
    if diags:
        return {}, diags

    page = Page(lesson, found, ev.state_of(lesson))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(lesson.path)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    try:
        tmpl = env.get_template(TEMPLATE)
        out = tmpl.render(page=page, lesson=lesson, snippet=page.snippet)
    except jinja2.TemplateSyntaxError as e:
        return {}, [Diagnostic(shown, e.lineno or 0, 1, f"template syntax: {e.message}")]
    except UnknownSnippet as e:
        return {}, [Diagnostic(shown, _template_line(e, template_path), 1, f"unknown snippet '{e.name}'{_did_you_mean(e.name, e.known)}")]
    except (jinja2.UndefinedError, KeyError, TypeError, ValueError) as e:
        return {}, [Diagnostic(shown, _template_line(e, template_path), 1, f"template: {e}")]
    except CourseError as e:
        return {}, [Diagnostic(shown, _template_line(e, template_path), 1, str(d)) for d in e.diagnostics]
    header = f"<!-- generated by tools/course render from {shown}; edit that file, not this one -->\n"
    files = {lesson.path / PAGE: header + out}
    for rel, svg in sorted(page.figures.items()):
        files[lesson.path / rel] = svg
    return files, []


def render_all(lessons, only=None) -> tuple[dict[Path, str], list[Diagnostic]]:
    files: dict[Path, str] = {}
    diags: list[Diagnostic] = []
    for lesson in lessons:
        if only and lesson.target not in only:
            continue
        f, d = render_lesson(lesson)
        files.update(f)
        diags.extend(d)
    return files, diags


def stale_figures(lessons, files: dict[Path, str], only=None) -> list[Path]:
    """Figures on disk that the current render no longer produces."""
    out = []
    for lesson in lessons:
        if only and lesson.target not in only:
            continue
        for p in sorted((lesson.path / FIGURES).glob("*.svg")):
            if p not in files:
                out.append(p)
    return out
