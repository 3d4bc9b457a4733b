"""The page API's core: the lesson's state and provenance, its snippets,
and numbers from the promoted record's rows."""

from __future__ import annotations

import functools
import os
import re

from ..rule.rows import ROW_KEY_FIELDS
from ..rule import resolution
from ..rule import verdict as cmp
from ..evidence import state as ev_state
from ..sources import manifest, snippets
from ..sources.manifest import Lesson
from .formats import number as number_format
from .marks import TemplateProblem, UnknownSnippet, mark, mark_block, shown


UNMEASURED = "*(unmeasured)*"

UNVERIFIED_NOTICE = ("> **UNVERIFIED.** No output is shown for this program: no run on real "
                     "hardware that matches today's code has been recorded and promoted "
                     "({reason}). Until one is, nothing on this page is this program's output. "
                     "See [the review process]({review}).\n")


# Time fields are stored in milliseconds and shown in microseconds: one
# unit per quantity across prose, tables and charts.
UNITS = {"us": 1000.0}


def gpu_label(record: dict | None) -> str:
    """A GPU as a page names it: 'GPU' and the first eight hex digits of
    its UUID, which tell two cards of one model apart."""
    uuid = str(((record or {}).get("gpu") or {}).get("uuid") or "")
    return "GPU " + (uuid[4:12] if uuid.startswith("GPU-") else uuid[:8] or "?")


def _one_run_text(r: dict) -> str:
    gpu = r["gpu"]
    clocks = gpu.get("clocks", {})
    sm, mem = clocks.get("sm_mhz", {}), clocks.get("mem_mhz", {})
    clock_text = ""
    if sm:
        # The median says what the timed sets ran at; the lowest reading,
        # with when it was taken, lets a reader tell a clock still rising
        # at the program's start from a run taken throttled.
        readings = [x for x in clocks.get("readings", []) if isinstance(x, dict) and "sm_mhz" in x]
        lowest = min(readings, key=lambda x: x["sm_mhz"], default=None)
        low = ""
        if sm["min"] != sm["median"]:
            at = f", {lowest['t_s']:.1f} s into the run" if lowest and "t_s" in lowest else ""
            low = f" (lowest {sm['min']:g} MHz{at})"
        clock_text = (f"; SM clock {sm['median']:g} MHz median of {clocks.get('samples', len(readings))} readings"
                      f"{low}, memory clock {mem.get('median', 0):g} MHz")
    host = r.get("host") or {}
    host_text = f", host {host['cpu_model']} ({host.get('cpu_count')} CPUs)" if host.get("cpu_model") else ""
    return (f"run `{r['tag']}` on {gpu['name']} {gpu_label(r)} (compute capability {gpu['compute_capability']}, "
            f"{gpu['sm_count']} SMs), driver {gpu['driver']}, CUDA runtime {gpu['cuda_runtime']}{host_text}, "
            f"{r['recorded_at'].replace('T', ' ').replace('Z', ' UTC')}{clock_text}")


def provenance_text(records: list[dict] | dict, entry: dict) -> str:
    """The line that says where a page's numbers come from: every record
    of the promoted set, one a GPU, the first the one the page's numbers
    and charts come from, all of them behind its words. The site shows it
    as "Verified on real hardware" only where it is this exact line for a
    lesson whose evidence is valid (site/transforms.py)."""
    recs = [records] if isinstance(records, dict) else list(records)
    first, rest = recs[0], recs[1:]
    text = (f"Built with nvcc {first['toolchain']['nvcc']} at commit `{first['git']['commit'][:12]}`. "
            f"Numbers and charts from {_one_run_text(first)}.")
    if rest:
        text += (" Every word (faster, slower, the same) is the rule's on each GPU, and says where they differ: "
                 + "; ".join(_one_run_text(r) for r in rest) + ".")
    return text + f" Promoted by {entry['promoted_by']} (signed) on {entry['promoted_at'][:10]}."


class Run:
    """One record's rows, as the page API selects them (remembered: a
    sweep's template asks for the same rows many times)."""

    def __init__(self, rec: dict | None):
        self.record = rec
        self.rows = [r for r in ((rec or {}).get("results") or {}).get("rows", []) if isinstance(r, dict)]
        self.gpu = gpu_label(rec)
        self.known_fields = {k for row in self.rows for k in row}
        self.selected: dict[tuple, list[dict]] = {}
        self._index: dict[str, dict] = {}

    @functools.cached_property
    def margins(self) -> dict:
        """The rule's margin in each timing and band of launch time, as this
        record's same-code pairs resolve it (rule/resolution.py)."""
        return resolution.margins((self.record or {}).get("results") or {})

    def select(self, where: dict) -> list[dict]:
        unknown = [k for k in where if k not in self.known_fields]
        if self.rows and unknown:
            raise TemplateProblem(f"no row has a field '{unknown[0]}'; the rows' fields are: "
                                  f"{', '.join(sorted(self.known_fields))}")
        try:
            key = tuple(sorted(where.items()))
            hash(key)
        except TypeError:  # an unhashable value: select without remembering
            return [row for row in self.rows if all(row.get(k) == v for k, v in where.items())]
        if key not in self.selected:
            self.selected[key] = self._matching(where)
        return self.selected[key]

    def _matching(self, where: dict) -> list[dict]:
        """The rows with every field of `where`, in the record's order,
        through one index per field (a sweep's template selects thousands
        of times)."""
        picked = set(range(len(self.rows)))
        for k, v in where.items():
            if k not in self._index:
                index = self._index[k] = {}
                for i, row in enumerate(self.rows):
                    try:
                        index.setdefault(row.get(k), []).append(i)
                    except TypeError:  # an unhashable value: never equal to a selector's scalar
                        pass
            picked &= set(self._index[k].get(v, ()))  # v is hashable: select() hashed every value
            if not picked:
                return []
        return [self.rows[i] for i in sorted(picked)]


def host_rows(selectors: list[dict]) -> str:
    """The rows a carry-over's `host_bound` selectors name, in words:
    [{"timing": "batch"}] -> 'timing batch'; several values of one field
    -> 'schedule plain, pdl or pdl-early'."""
    by: dict[str, list[str]] = {}
    for sel in selectors:
        for k, v in sel.items():
            by.setdefault(str(k), []).append(str(v))
    return "; ".join(f"{k} {joined(vs, 'or')}" for k, vs in by.items())


def joined(parts: list[str], word: str = "and") -> str:
    """'a', 'a and b', 'a, b and c' (or `word` in place of 'and')."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" {word} " + parts[-1]


class PageRows:
    """The page API: state, snippets and numbers from rows."""

    def __init__(self, lesson: Lesson, lesson_snippets: list[snippets.Snippet], state: ev_state.LessonState):
        self._lesson = lesson
        self._state = state
        self._snippets = {s.name: s for s in lesson_snippets}
        self._figures: dict[str, str] = {}
        self._pictures: set[str] = set()  # hand-drawn pictures page.picture vouched for
        # One run a record of the promoted set: the first is the one the
        # page's numbers come from; the words come from all (verdicts.py).
        self._runs = [Run(r) for r in (state.records if state.valid else [])]
        rec = state.record if state.valid else None
        main = self._runs[0] if self._runs else Run(None)
        self._rows = main.rows
        self._settings = ((rec or {}).get("results") or {}).get("settings") or {}
        self._timeline = [r for r in (((rec or {}).get("timeline") or {}).get("results") or {}).get("rows", [])
                          if isinstance(r, dict)]
        self._profile = (rec or {}).get("profile") or {}
        self._review = (rec or {}).get("review") or {}
        self._nvbench = (rec or {}).get("nvbench") or {}
        self._record = rec
        self._known_fields = main.known_fields
        self._verdicts: dict[tuple, cmp.Verdict] = {}
        self._prepared_rows: dict[int, cmp.Prepared] = {}
        # A timed row's samples by content, for the verdicts' memo: its record's
        # digest (over the decoded record, which verify checked) and its place.
        self._row_keys = {id(r["samples_ms"]): f"{digest}:{i}" for run in self._runs
                          if isinstance(digest := (run.record or {}).get("digest"), str) and digest
                          for i, r in enumerate(run.rows) if isinstance(r.get("samples_ms"), list)}

    # -- snippets -------------------------------------------------------
    def snippet(self, name: str) -> str:
        s = self._snippets.get(name)
        if s is None:
            raise UnknownSnippet(name, sorted(self._snippets))
        link = os.path.relpath(manifest.ROOT / s.path, self._lesson.path).replace(os.sep, "/")
        return mark_block(snippets.render_block(s, link))

    # -- state ----------------------------------------------------------
    @property
    def verified(self) -> bool:
        return self._state.valid

    def provenance(self) -> str:
        if not self.verified:
            return ""
        return shown(provenance_text(self._state.records, self._state.entry))

    def expected_output(self) -> str:
        review = os.path.relpath(manifest.ROOT / "research" / "REVIEW-PROCESS.md", self._lesson.path)
        if not self.verified:
            return shown(UNVERIFIED_NOTICE.format(reason="; ".join(self._state.reasons), review=review))
        r = self._record
        out = r["stdout"].rstrip("\n") + "\n"
        fence = snippets.fence_for(out.split("\n"))
        cmd = " ".join(r["command"])
        # What carries over is the author's words (lesson.toml): prose, checked as prose.
        # The helper's own words are shown, not measured: no claim in the author's rests on them.
        other = "; ".join(c["what"] + (shown(f" (its rows of {host_rows(c['host_bound'])} may include the host's "
                                             "launch work, so they carry over on the same host only)") if c.get("host_bound")
                                       else "") for c in self._lesson.info.carry_over) or "the ratios between rows"
        student = f"tools/course evidence compare {self._lesson.target} promoted your-run.json"
        return (shown(f"**{self.provenance()}**\n\nOn another GPU, or in another run on this one, every time "
                     "here will differ. What may carry over is a ratio of rows timed "
                     "together in one run: ") + other + shown(
                     (f". Between this page's {len(self._runs)} GPUs of one model, every word above was "
                      "computed on each, and where they differ the page says so. " if len(self._runs) > 1 else
                      ". Whether it does was not measured here (one GPU). ") +
                     f"Set your own run beside this page's, "
                     f"with `--json your-run.json` and then `{student}`, which prints both runs' ratios and "
                     f"words and which carried over.\n\nCommand: `{cmd}`\n\n{fence}text\n{out}{fence}\n"))

    # -- checks ---------------------------------------------------------
    def same_results(self, version: str) -> dict:
        """How many of row `version`'s checks that print a result ('got
        8388483, ...') print the same one on every GPU ('same'), and how many do
        not ('differ'): 9 significant digits tell any two floats apart."""
        if not self.verified:
            return {"same": UNMEASURED, "differ": UNMEASURED}
        per_run = []
        for run in self._runs:
            got = {}
            for c in ((run.record or {}).get("results") or {}).get("checks") or []:
                name = str(c.get("check", "")) if isinstance(c, dict) else ""
                m = re.match(r"got (\S+?)(?:[,;]|$)", str(c.get("detail", ""))) if name else None
                if m and version in name.split():
                    got[name] = m.group(1)
            per_run.append(got)
        common = set.intersection(*(set(g) for g in per_run)) if per_run else set()
        same = sum(len({g[k] for g in per_run}) == 1 for k in common)
        return {"same": mark(f"{same:,}"), "differ": mark(f"{len(common) - same:,}")}

    # -- rows -----------------------------------------------------------
    def _select(self, where: dict) -> list[dict]:
        return (self._runs[0] if self._runs else Run(None)).select(where)

    def _one(self, where: dict, rows: list[dict] | None = None) -> dict | None:
        """The one row `where` selects (None where there is none): more than
        one is the template's mistake, named with the rows it matched."""
        rows = self._select(where) if rows is None else rows
        if len(rows) > 1:
            keys = "; ".join(", ".join(f"{k}={r[k]!r}" for k in ROW_KEY_FIELDS + ("set",) if k in r) for r in rows[:4])
            raise TemplateProblem(f"{where} selects {len(rows)} rows ({keys}{'; ...' if len(rows) > 4 else ''}); "
                                  "name the fields that tell them apart")
        return rows[0] if rows else None

    def _field(self, row: dict, field: str):
        base, unit = (field.rsplit(":", 1) + [""])[:2] if ":" in field else (field, "")
        if base not in row:
            if self._rows and all(base not in r for r in self._rows):
                raise TemplateProblem(f"no row has a field '{base}'; the rows' fields are: {', '.join(sorted(self._known_fields))}")
            return None
        value = row[base]
        if unit:
            if unit not in UNITS:
                raise TemplateProblem(f"unit '{unit}' is not known; expected one of: {', '.join(UNITS)}")
            value = value * UNITS[unit] if isinstance(value, (int, float)) else value
        return value

    def measured(self, field: str, fmt: str = ".3g", **where) -> str:
        """One number from the promoted record's row matching `where`.
        `field` may carry a unit: 'median_ms:us' shows microseconds."""
        row = self._one(where) if self.verified else None
        value = None if row is None else self._field(row, field)
        return UNMEASURED if value is None else mark(number_format(value, fmt, field))

    def setting(self, field: str, fmt: str = ",") -> str:
        """A setting the program reported (its grid, its thread count)."""
        if not self.verified:
            return UNMEASURED
        if field not in self._settings:
            raise TemplateProblem(f"no setting '{field}'; the settings are: {', '.join(sorted(self._settings))}")
        return mark(number_format(self._settings[field], fmt, field))

    def _ratios(self, field: str, a: dict, b: dict, fmt: str, runs: list) -> str:
        """a's `field` over b's in each of `runs`, joined by ' / '."""
        if not self.verified or not runs:
            return UNMEASURED
        out = []
        for run in runs:
            ra, rb = self._one(a, run.select(a)), self._one(b, run.select(b))
            va = self._field(ra, field) if ra else None
            vb = self._field(rb, field) if rb else None
            if not isinstance(va, (int, float)) or not isinstance(vb, (int, float)) or vb == 0:
                return UNMEASURED
            out.append(number_format(va / vb, fmt, "ratio"))
        return mark(" / ".join(out))

    def ratio(self, field: str, a: dict, b: dict, fmt: str = ".2f") -> str:
        """a's `field` over b's."""
        return self._ratios(field, a, b, fmt, self._runs[:1])

    def ratio_each(self, field: str, a: dict, b: dict, fmt: str = ".2f") -> str:
        """a's `field` over b's on each GPU of the set, in the set's order
        ('1.31 / 1.34'); page.gpus() names the order."""
        return self._ratios(field, a, b, fmt, self._runs)

    def table(self, columns: list, **where) -> str:
        """A Markdown table of the rows matching `where`, a column each
        [header, field, format] (a field may carry a unit, 'median_ms:us'); a
        fourth element, {"timing": "cold"} say, takes the column from the row
        with those fields changed (empty where there is none)."""
        if not self.verified:
            return f"{UNMEASURED}\n"
        for c in columns:
            if not isinstance(c, (list, tuple)) or len(c) not in (3, 4) or (len(c) == 4 and not isinstance(c[3], dict)):
                raise TemplateProblem("a table column is [header, field, format] or [header, field, format, {field: value}]")
        rows = self._select(where)
        head = "| " + " | ".join(c[0] for c in columns) + " |\n| " + " | ".join("---" for _ in columns) + " |\n"
        body = []
        for row in rows:
            cells = []
            for column in columns:
                _, field, fmt = column[:3]
                source = row
                if len(column) == 4:
                    key = {k: row[k] for k in ROW_KEY_FIELDS if k in row}
                    twins = self._select({**key, **column[3]})
                    source = twins[0] if twins else None
                value = None if source is None else self._field(source, field)
                cells.append("" if value is None else f"`{value}`" if isinstance(value, str)
                             else mark(number_format(value, fmt, field)))
            body.append("| " + " | ".join(cells) + " |")
        return head + "\n".join(body) + "\n"

    def values(self, field: str, **where) -> list:
        """The distinct values of a row field (for loops over sizes)."""
        if not self.verified:
            return []
        return sorted({r[field] for r in self._select(where) if field in r}, key=lambda v: (str(type(v)), v))
