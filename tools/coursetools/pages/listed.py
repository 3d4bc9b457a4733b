"""A page checked before its first record: against the plan its program
lists.

Every day's program takes --list: it prints the checks, rows, settings and
decisions a run would make, asking nothing of a GPU (course/lesson.cuh).
The program is listed as timed, under --profile and as its timeline
build; the listings become an in-memory record of two listed GPUs (every
time a placeholder, every word "the same") and the template is rendered
against it, so a helper that selects nothing the program will produce (a
misspelt version, a size it never runs) is named at its template line
long before a GPU run. Nothing rendered here is written.

What a listing does not run (the review's steps, nvbench's states, a
counter's or a probe's values, settings read off the GPU, an unbuilt
timeline) its helpers answer with placeholders.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import tempfile
from pathlib import Path

from ..errors import Diagnostic, display_path
from ..evidence import state as ev_state
from ..evidence.state import LessonState
from ..sources import manifest
from ..sources.manifest import Lesson
from . import render
from .formats import number as number_format
from .marks import TemplateProblem, mark
from .page import Page
from .rows import UNMEASURED

# How long one --list run may take: it prints data, in well under a second;
# a program that has not finished in a minute is not listing its plan.
LIST_SECONDS = 60

# What a listed timed row's sample stands in for: equal samples, so that
# every comparison is "the same" and every ratio 1; its value is never shown.
PLACEHOLDER_MS = 1.0
PLACEHOLDER_SAMPLES = 16
TIMING_STATS = ("median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms", "mean_ms", "gbps", "spread")
# What a run adds to a counted row (a negative build's race).
COUNTED = ("trials", "wrong_runs", "wrong_values")
# What a run adds to a timeline row (course/timeline.cuh's summarize).
TIMELINE_TIMES = ("blocks", "first_start_us", "last_start_us", "first_end_us", "last_end_us", "median_block_us",
                  "median_wait_us", "max_wait_us", "span_us")
TIMELINE_LISTS = ("resident", "waiting", "block_start_us", "block_end_us", "block_wait_us", "block_sm")
# A listed setting the program reads off its GPU when it runs.
KNOWN_WHEN_RUN = "known when run"


class ListFailed(Exception):
    """The program could not list its plan: why, as one line."""


def _run(binary: Path, extra: list[str], folder: Path, name: str) -> dict:
    out = folder / f"{name}.json"
    cmd = [str(binary), "--list", *extra, "--json", str(out)]
    shown = f"{display_path(binary)} --list {' '.join(extra)}".rstrip()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=LIST_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ListFailed(f"{shown} ran past {LIST_SECONDS} s") from None
    except OSError as e:
        raise ListFailed(f"{shown} cannot run ({e.strerror})") from None
    if proc.returncode != 0:
        tail = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()][-1:] or ["no output"]
        raise ListFailed(f"{shown} exited {proc.returncode}: {tail[0][:200]} (a lesson's main builds its plan "
                         "before course::Lesson::run, and reaches the GPU only in the setup and the rows' work)")
    # The author's own program's report, read to check a template and never
    # kept: plain JSON is enough (a record is read by evidence/'s reader).
    try:
        data = json.loads(out.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ListFailed(f"{shown} wrote no readable JSON report ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(data, dict):
        raise ListFailed(f"{shown} wrote JSON that is not an object")
    if data.get("listed") is not True:
        raise ListFailed(f"{shown} wrote a report without \"listed\": true (built before the header "
                         "learned --list? cmake --build --preset course)")
    data["_stdout"] = proc.stdout
    return data


def _placeholders(rows: list) -> list:
    """Rows as a page may read them: a timed row's samples and summary at
    PLACEHOLDER_MS, a counted row's counts at zero, and every other zero a
    float (the program prints 0.0 as 0, which reads as a count and refuses
    a format a measured value takes)."""
    out = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        row = {k: 0.0 if type(v) is int and v == 0 else v for k, v in row.items()}
        if row.get("group") == "timeline":
            row.update({k: PLACEHOLDER_MS for k in TIMELINE_TIMES}, **{k: [PLACEHOLDER_MS] for k in TIMELINE_LISTS})
        elif "timing" in row and "group" in row:
            row.update({k: PLACEHOLDER_MS for k in TIMING_STATS},
                       samples_ms=[PLACEHOLDER_MS] * PLACEHOLDER_SAMPLES, samples=PLACEHOLDER_SAMPLES)
            if "calls" in row:
                row["per_call_us"] = PLACEHOLDER_MS
        elif "trials" not in row and "set" not in row and row.get("group") not in ("timeline", "profile") \
                and not row.get("listed_values"):
            row.update({k: 0.0 for k in COUNTED})
        out.append(row)
    return out


def listing(lesson: Lesson) -> dict:
    """The lesson's listed runs as one record (or ListFailed)."""
    binary = Path(lesson.binary)
    if not binary.is_file():
        raise ListFailed(f"{display_path(binary)} is not built (cmake --build --preset course)")
    build = manifest.build_dir()
    build.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="list-", dir=build) as tmp:
        folder = Path(tmp)
        timed = _run(binary, [], folder, "timed")
        # Each profiling run of lesson.toml's [profile], as `evidence
        # record` makes it (its own arguments), and the timeline build.
        profiled = [_run(binary, [str(a) for a in run.get("args", [])], folder, f"profile-{i}")
                    for i, run in enumerate(lesson.info.profile_runs)] if lesson.info.metrics else []
        timeline = None
        tl_binary = binary.parent / lesson.timeline_target if lesson.timeline_target else None
        # One older than the program is an earlier build's (the course's
        # build leaves the timeline program out): not listed, as if absent.
        if tl_binary is not None and tl_binary.is_file() and tl_binary.stat().st_mtime >= binary.stat().st_mtime:
            timeline = _run(tl_binary, list(lesson.info.timeline_args), folder, "timeline")
    results = {k: timed.get(k) for k in ("lesson", "gpu", "checks", "decisions")}
    results["settings"] = {k: 0.0 if v == KNOWN_WHEN_RUN else v for k, v in (timed.get("settings") or {}).items()}
    results["rows"] = _placeholders(timed.get("rows") or [])
    profile_runs = [{"rows": [{"row": r.get("profiled"), "listed": True, "kernels": []}
                              for r in run.get("rows") or [] if isinstance(r, dict) and r.get("group") == "profile"]}
                    for run in profiled]
    return {"listed": True, "tag": "listed", "command": [display_path(binary), "--list"],
            "stdout": timed["_stdout"], "recorded_at": "listed, not run",
            "git": {"commit": "listed"}, "toolchain": {"nvcc": "(listed)"},
            "gpu": {"name": "a listed GPU", "uuid": "GPU-listed", "compute_capability": "9.0",
                    "sm_count": 132, "driver": "(none)", "cuda_runtime": "(none)"},
            "results": results,
            "profile": {"listed": True, "runs": profile_runs} if profiled else {},
            "timeline": {"results": {"rows": _placeholders((timeline or {}).get("rows") or [])}} if timeline else {},
            "review": {"listed": True, "steps": []},
            "nvbench": {"listed": True} if lesson.nvbench_target or lesson.info.nvbench else {}}


def state_of(lesson: Lesson, record: dict) -> LessonState:
    """Two listed GPUs of one record, as a promoted set in memory: a page
    naming each GPU of its set renders as it will with two."""
    other = dict(record, gpu=dict(record["gpu"], uuid="GPU-listed-2"))
    entry = {"promoted_by": "(listed)", "promoted_at": "listed", "commit": "listed", "tag": "listed"}
    return ev_state.fixture(lesson, [record, other], entry)


class ListedPage(Page):
    """The page API over a listing: a helper that finds nothing, or a chart
    with nothing to draw, raises at the template line that called it; a
    probe's row answers any field with a placeholder."""

    CHARTS = ("plot", "sweep_plot", "timeline_plot")

    def __getattribute__(self, name):
        attr = super().__getattribute__(name)
        if name.startswith("_") or not callable(attr):
            return attr

        def checked(*args, **kwargs):
            out = attr(*args, **kwargs)
            values = out.values() if isinstance(out, dict) else [out]
            empty_chart = name in ListedPage.CHARTS and out == ""
            empty_table = name == "table" and isinstance(out, str) and \
                sum(line.startswith("|") for line in out.splitlines()) <= 2  # its head alone
            if empty_chart or empty_table or any(isinstance(v, str) and UNMEASURED in v for v in values):
                shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
                raise TemplateProblem(f"page.{name}({shown[:300]}) finds nothing among the rows the program "
                                      f"lists (--list){self._why_nothing(args, kwargs)}")
            return out

        return checked

    def _why_nothing(self, args: tuple, kwargs: dict) -> str:
        """The first selector field that leaves no row, with the values the
        rows have there and the nearest."""
        rows = self._rows
        known = {k for row in rows for k in row}
        selectors = [a for a in args if isinstance(a, dict)] + [{k: v for k, v in kwargs.items() if k in known}]
        for where in selectors:
            left, named = rows, []
            for k, v in where.items():
                narrowed = [r for r in left if r.get(k) == v]
                if not narrowed:
                    have = sorted({r[k] for r in left if k in r and not isinstance(r[k], list)}, key=str)
                    if not have:
                        return f": no row{' with ' + ', '.join(named) if named else ''} has a field '{k}'"
                    near = difflib.get_close_matches(str(v), [str(h) for h in have], n=1, cutoff=0.5)
                    listed = ", ".join(map(repr, have[:12])) + (", ..." if len(have) > 12 else "")
                    return (f": no row{' with ' + ', '.join(named) if named else ''} has {k}={v!r}; "
                            f"they have {k} = {listed}" + (f"; did you mean {near[0]!r}?" if near else ""))
                left, named = narrowed, named + [f"{k}={v!r}"]
        return ": a name, size or field it never produces"

    def _field(self, row: dict, field: str):
        if row.get("listed_values") and field.split(":", 1)[0] not in row:
            return 0.0  # a probe's value: known once it runs
        return super()._field(row, field)

    def peak_gbps(self, fmt: str = ",.0f") -> str:
        return mark(number_format(0.0, fmt))  # the GPU's report: known once it runs

    def _timeline_unbuilt(self) -> bool:
        """No timeline program listed (the course's build leaves it out)."""
        return bool(self._lesson.timeline_target) and not (self._record or {}).get("timeline")

    def timeline(self, field: str, fmt: str = ".1f", **where) -> str:
        if self._timeline_unbuilt():
            return mark(number_format(0.0, fmt))
        return super().timeline(field, fmt, **where)

    def timeline_plot(self, name: str, title: str, note: str = "", scale: dict | None = None, **where) -> str:
        if self._timeline_unbuilt():
            return "\n"  # nothing to draw, and nothing to hold it to
        return super().timeline_plot(name, title, note, scale, **where)

    def sweep_plot(self, name: str, title: str, series: list, *args, **kwargs) -> str:
        for legend, where in series:
            if not self._select(where):
                raise TemplateProblem(f"sweep_plot '{name}': series '{legend}' ({where}) selects no row the "
                                      "program lists (--list)")
        return super().sweep_plot(name, title, series, *args, **kwargs)


def check(lesson: Lesson) -> tuple[list[Diagnostic], str]:
    """The template rendered against the program's listing: its problems,
    and a line saying what was checked."""
    shown = f"{lesson.dir}/{render.TEMPLATE}"
    try:
        record = listing(lesson)
    except ListFailed as e:
        return [Diagnostic(shown, 0, 0, f"not checked against the program's rows: {e}")], ""
    _, diags, _ = render.render_lesson(lesson, state=state_of(lesson, record), page_class=ListedPage)
    rows = record["results"]["rows"]
    profiled = sum(len(run["rows"]) for run in (record["profile"] or {}).get("runs", []))
    timeline = (f"{len(record['timeline']['results']['rows'])} from the timeline build" if record["timeline"]
                else f"the timeline build's not checked (not built since the program: cmake --build "
                     f"{display_path(manifest.build_dir())} --target {lesson.timeline_target})" if lesson.timeline_target
                else "no timeline build")
    return diags, (f"template checked against the rows the program lists (--list): {len(rows):,} rows, "
                   f"{profiled} profiled, {timeline}")
