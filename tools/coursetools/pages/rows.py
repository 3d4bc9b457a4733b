"""The page API's core: the lesson's state and provenance, its snippets,
and numbers from the promoted record's rows."""

from __future__ import annotations

import os
import re

from ..rule.rows import ROW_KEY_FIELDS
from ..rule import verdict as cmp
from ..evidence import state as ev_state
from ..sources import manifest, snippets
from ..sources.manifest import Lesson
from .marks import TemplateProblem, UnknownSnippet, mark, mark_block


UNMEASURED = "*(unmeasured)*"


UNVERIFIED_NOTICE = (
    "> **UNVERIFIED.** No output is shown for this program: no run on real "
    "hardware that matches today's code has been recorded and promoted "
    "({reason}). Until one is, nothing on this page is this program's output. "
    "See [the review process]({review}).\n"
)


# Time fields are stored in milliseconds and shown in microseconds: one
# unit per quantity across prose, tables and charts.
UNITS = {"us": 1000.0}


def _format(value, fmt: str) -> str:
    """A number formatted by a spec such as '.1f', ',', '.3g' (or '{:.1f}').
    Only a format spec: no field names, no attribute access."""
    m = re.fullmatch(r"\{:([^{}]*)\}", fmt)
    spec = m.group(1) if m else fmt
    # Python's spec, with the fill limited to a space or a zero: any other
    # fill character would be text typed into the page through a format.
    # Decimal notations only: a hexadecimal, binary or character form
    # would print a number the record does not hold as one a reader reads.
    # No fill or alignment: a fill character after the digits ("0<6")
    # would append digits the value does not have.
    if not re.fullmatch(r"[+\- ]?0?\d{0,2}[,_]?(?:\.\d{1,2})?[deEfFgG%]?", spec):
        raise TemplateProblem(f"format '{fmt}' is not a decimal number format such as '.1f', ',' or '.1%' "
                              "(widths and precisions of at most two digits; no x, b, c, o or n)")
    if spec.endswith("%") and isinstance(value, (int, float)) and abs(value) > 10:
        raise TemplateProblem(f"format '{fmt}' prints {value!r} as {value * 100:.0f}%: '%' is for fractions "
                              "(a spread, a share), and this value is not one")
    try:
        return format(value, spec)
    except (TypeError, ValueError) as e:
        raise TemplateProblem(f"format '{fmt}' does not fit the value {value!r}: {e}") from None


def provenance_text(record: dict, entry: dict) -> str:
    """The one line that says where a page's numbers come from. The site
    shows it as "Verified on real hardware" only where it is this exact
    line for a lesson whose evidence is valid (site/build.py)."""
    r, e = record, entry
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
                      f"{low}, memory clock {mem.get('median', 0):g} MHz during the run")
    host = r.get("host") or {}
    host_text = f", host {host['cpu_model']} ({host.get('cpu_count')} CPUs)" if host.get("cpu_model") else ""
    return (f"Recorded on {gpu['name']} (compute capability {gpu['compute_capability']}, "
            f"{gpu['sm_count']} SMs), driver {gpu['driver']}, CUDA runtime {gpu['cuda_runtime']}, "
            f"nvcc {r['toolchain']['nvcc']}{host_text}, commit `{r['git']['commit'][:12]}`, run `{r['tag']}`, "
            f"{r['recorded_at'].replace('T', ' ').replace('Z', ' UTC')}{clock_text}. "
            f"Promoted by {e['promoted_by']} (signed) on {e['promoted_at'][:10]}.")


class PageRows:
    """The page API: state, snippets and numbers from rows."""

    def __init__(self, lesson: Lesson, lesson_snippets: list[snippets.Snippet], state: ev_state.LessonState):
        self._lesson = lesson
        self._state = state
        self._snippets = {s.name: s for s in lesson_snippets}
        self._figures: dict[str, str] = {}
        rec = state.record if state.valid else None
        self._rows = [r for r in ((rec or {}).get("results") or {}).get("rows", []) if isinstance(r, dict)]
        self._settings = ((rec or {}).get("results") or {}).get("settings") or {}
        self._timeline = [r for r in (((rec or {}).get("timeline") or {}).get("results") or {}).get("rows", [])
                          if isinstance(r, dict)]
        self._profile = (rec or {}).get("profile") or {}
        self._review = (rec or {}).get("review") or {}
        self._record = rec
        # The rows never change while a page renders, and a sweep's template
        # asks for the same rows and verdicts many times: both are remembered
        # (a page of 61 sizes x 3 timings otherwise takes tens of seconds).
        self._known_fields: dict[str, set] = {}
        for row in self._rows:
            for k, v in row.items():
                self._known_fields.setdefault(k, set()).add(v if not isinstance(v, list) else None)
        self._selected: dict[tuple, list[dict]] = {}
        self._verdicts: dict[tuple, cmp.Verdict] = {}

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
        return mark(provenance_text(self._record, self._state.entry))

    def expected_output(self) -> str:
        review = os.path.relpath(manifest.ROOT / "research" / "REVIEW-PROCESS.md", self._lesson.path)
        if not self.verified:
            return mark(UNVERIFIED_NOTICE.format(reason="; ".join(self._state.reasons), review=review))
        r = self._record
        out = r["stdout"].rstrip("\n") + "\n"
        fence = snippets.fence_for(out.split("\n"))
        cmd = " ".join(r["command"])
        # What carries over is the author's words (lesson.toml): prose, checked as prose.
        other = "; ".join(c["what"] + (mark(" (its rows whose times include the host's launch work: on the same host only)") if c.get("host_bound")
                                       else "") for c in self._lesson.info.carry_over) or "the ratios between rows"
        student = f"tools/course evidence compare {self._lesson.target} promoted your-run.json"
        return (mark(f"**{self.provenance()}**\n\nOn another GPU every time here will differ, and even two runs "
                     "on this one move times by a few percent. What may carry over is a ratio of rows timed "
                     "together in one run: ") + other + mark(
                     f". Whether it does was not measured here (one GPU): set your own run beside this page's, "
                     f"with `--json your-run.json` and then `{student}`, which prints both runs' ratios and "
                     f"words and which carried over.\n\nCommand: `{cmd}`\n\n{fence}text\n{out}{fence}\n"))

    # -- rows -----------------------------------------------------------
    def _select(self, where: dict) -> list[dict]:
        known = self._known_fields
        if self._rows:
            for k in where:
                if k not in known:
                    raise TemplateProblem(f"no row has a field '{k}'; the rows' fields are: {', '.join(sorted(known))}")
        key = tuple(sorted(where.items()))
        try:
            return self._selected[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable value: select without remembering
            return [row for row in self._rows if all(row.get(k) == v for k, v in where.items())]
        rows = self._selected[key] = [row for row in self._rows if all(row.get(k) == v for k, v in where.items())]
        return rows

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
        if not self.verified:
            return UNMEASURED
        rows = self._select(where)
        if not rows:
            return UNMEASURED
        value = self._field(rows[0], field)
        if value is None:
            return UNMEASURED
        return mark(_format(value, fmt))

    def setting(self, field: str, fmt: str = ",") -> str:
        """A setting the program reported (its grid, its thread count)."""
        if not self.verified:
            return UNMEASURED
        if field not in self._settings:
            raise TemplateProblem(f"no setting '{field}'; the settings are: {', '.join(sorted(self._settings))}")
        return mark(_format(self._settings[field], fmt))

    def ratio(self, field: str, a: dict, b: dict, fmt: str = ".2f") -> str:
        """a's `field` over b's."""
        if not self.verified:
            return UNMEASURED
        ra, rb = self._select(a), self._select(b)
        if not ra or not rb:
            return UNMEASURED
        va, vb = self._field(ra[0], field), self._field(rb[0], field)
        if not isinstance(va, (int, float)) or not isinstance(vb, (int, float)) or vb == 0:
            return UNMEASURED
        return mark(_format(va / vb, fmt))

    def table(self, columns: list, **where) -> str:
        """A Markdown table of the rows matching `where`: columns are
        [header, field, format] (field may carry a unit, 'median_ms:us').
        A fourth element, a mapping such as {"timing": "cold"}, takes that
        column from the row that is this one with those fields changed
        (its cold twin), left empty where the record has none."""
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
                if value is None:
                    cells.append("")
                elif isinstance(value, str):
                    cells.append(f"`{value}`")
                else:
                    cells.append(mark(_format(value, fmt)))
            body.append("| " + " | ".join(cells) + " |")
        return head + "\n".join(body) + "\n"

    def values(self, field: str, **where) -> list:
        """The distinct values of a row field (for loops over sizes)."""
        if not self.verified:
            return []
        return sorted({r[field] for r in self._select(where) if field in r}, key=lambda v: (str(type(v)), v))
