"""The page API's second harness: the lesson's rows as nvbench timed them
(the record's "nvbench" part, written by the NVBENCH build of the same
sources), set beside the course's own medians. nvbench's numbers are
the library's summaries as its JSON holds them (seconds, as strings);
nothing here times anything."""

from __future__ import annotations

from .causes import code_span
from .marks import TemplateProblem, mark
from .rows import UNMEASURED

# The summaries a row takes from nvbench: its cold GPU time (the L2
# flushed before each launch, one launch between two events) and its
# batch GPU time (launches back to back, one pair of events around them
# all: nvbench reports their mean, not a median).
TAGS = {"cold": "nv/cold/time/gpu/median", "batch": "nv/batch/time/gpu/mean"}


def _summary(state: dict, tag: str) -> float | None:
    for s in state.get("summaries") or []:
        if isinstance(s, dict) and s.get("tag") == tag:
            for d in s.get("data") or []:
                if isinstance(d, dict) and d.get("name") == "value":
                    try:
                        return float(d["value"])
                    except (TypeError, ValueError):
                        return None
    return None


def _axis_values(state: dict) -> dict:
    out = {}
    for a in state.get("axis_values") or []:
        if isinstance(a, dict) and "name" in a:
            v = a.get("value")
            try:
                v = int(v) if a.get("type") == "int64" else v
            except (TypeError, ValueError):
                pass
            out[a["name"]] = v
    return out


class PageNvbench:
    """The page API: nvbench's times of the lesson's rows."""

    def _nvbench_states(self, benchmark: str) -> list[dict]:
        benches = ((self._nvbench.get("results") or {}).get("benchmarks") or []) if self._nvbench else []
        names = [b.get("name") for b in benches if isinstance(b, dict)]
        for b in benches:
            if isinstance(b, dict) and b.get("name") == benchmark:
                return [s for s in b.get("states") or [] if isinstance(s, dict) and not s.get("is_skipped")]
        if benches:
            raise TemplateProblem(f"no nvbench benchmark '{benchmark}'; the record's are: {', '.join(map(str, names))}")
        return []

    def _course_row(self, values: dict, where: dict) -> dict:
        """The course's row an nvbench state is, through lesson.toml's [nvbench]."""
        spec = self._lesson.info.nvbench or {}
        axes = dict(spec.get("axes") or {})
        return {**dict(spec.get("rows") or {}), **{axes[k]: v for k, v in values.items() if k in axes}, **where}

    def _listed_nvbench(self, over: list | None, where: dict, timings: tuple) -> None:
        """Before a record: each course row the states would sit beside is
        one the program lists (nvbench's states are known once it runs)."""
        for o in over or [{}]:
            fields = self._course_row(o, where)
            if not any(self._select({**fields, "timing": t}) for t in timings):
                raise TemplateProblem(f"no row the program lists is {fields} in {' or '.join(timings)} "
                                      "timing, for nvbench's states to sit beside")

    def nvbench_table(self, benchmark: str, over: list | None = None, **where) -> str:
        """A line per nvbench state of `benchmark` (the course's row its axes
        name, through lesson.toml's [nvbench], and `where`): the course's
        cold median beside nvbench's cold GPU median, its batch median beside
        nvbench's batch mean (us), each with nvbench's over the course's.
        `over`: the states' axis values to show ([{axis: value}]; all)."""
        if not self.verified:
            return f"{UNMEASURED}\n"
        if self._nvbench.get("listed"):
            self._listed_nvbench(over, where, ("cold", "batch"))
            return mark("| nvbench (listed: not run) |\n| --- |\n")
        axes = dict((self._lesson.info.nvbench or {}).get("axes") or {})
        states = self._nvbench_states(benchmark)
        if not states:
            return f"{UNMEASURED}\n"
        head = ("| row | course cold (us) | nvbench cold (us) | nvbench / course | course batch (us) "
                "| nvbench batch (us) | nvbench / course |\n| --- | --- | --- | --- | --- | --- | --- |\n")
        lines = []
        for state in states:
            values = _axis_values(state)
            if over is not None and not any(all(values.get(k) == v for k, v in o.items()) for o in over):
                continue
            fields = self._course_row(values, where)
            label = ", ".join(f"{axes.get(k, k)} {v:,}" if isinstance(v, int) else f"{v}"
                              for k, v in values.items() if k in axes)
            cells = [mark(code_span(label))]  # the record's axis values: marked, as every number it holds
            found = 0
            for timing, tag in TAGS.items():
                row = self._one({**fields, "timing": timing})
                ours = row.get("median_ms") if row else None
                theirs = _summary(state, tag)
                if theirs is None:
                    raise TemplateProblem(f"nvbench state '{state.get('name')}' has no '{tag}'")
                theirs_us = theirs * 1e6
                if not isinstance(ours, (int, float)) or ours <= 0:
                    # The course times this row in the other timing only
                    # (day 58's chains: batch): nvbench's time alone.
                    cells += ["", mark(f"{theirs_us:,.2f}"), ""]
                    continue
                found += 1
                ours_us = ours * 1000.0
                cells += [mark(f"{ours_us:,.2f}"), mark(f"{theirs_us:,.2f}"), mark(f"{theirs_us / ours_us:.2f}")]
            if not found:
                raise TemplateProblem(f"nvbench state '{state.get('name')}' is no course row: nothing matches "
                                      f"{fields} in cold or batch timing")
            lines.append("| " + " | ".join(cells) + " |")
        if not lines:
            raise TemplateProblem(f"no nvbench state of '{benchmark}' has the axis values {over}")
        return head + "\n".join(lines) + "\n"

    def nvbench_ratio(self, benchmark: str, timing: str, over: dict, **where) -> str:
        """nvbench's time of one state over the course's median of the row
        it is ('cold' or 'batch'): a single number for the prose."""
        if timing not in ("cold", "batch"):
            raise TemplateProblem(f"timing '{timing}' is not 'cold' or 'batch'")
        if not self.verified:
            return UNMEASURED
        if self._nvbench.get("listed"):
            self._listed_nvbench([over], where, (timing,))
            return mark("1.00")
        for state in self._nvbench_states(benchmark):
            values = _axis_values(state)
            if all(values.get(k) == v for k, v in over.items()):
                row = self._one({**self._course_row(values, where), "timing": timing})
                theirs = _summary(state, TAGS[timing])
                if row is None or theirs is None:
                    return UNMEASURED
                return mark(f"{theirs * 1e6 / (row['median_ms'] * 1000.0):.2f}")
        raise TemplateProblem(f"no nvbench state of '{benchmark}' has the axis values {over}")
