"""What carries over from one run of a lesson to another: the ratios each
lesson declares in its lesson.toml ([[carry_over]]), each taken inside one
run between rows timed together in one set, with the comparison rule's
word there, side by side for two runs. What `course evidence compare`
prints. A side is a record's tag, "promoted", or the path of a lesson's
own --json output (a student's run, from any GPU); nothing here needs git
or writes a file.

Only ratios inside one run are compared across runs: a row's time from
two runs says how the runs differed, not what the code does (the
measurement: research/REVIEW-PROCESS.md, "What it is not for")."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from statistics import NormalDist

from ..errors import Diagnostic, UsageError, display_path, escaped
from ..sources.manifest import Lesson
from . import resolution
from . import verdict as rule
from .rows import ROW_KEY_FIELDS, row_key, shown_key

@dataclasses.dataclass(frozen=True)
class Side:
    label: str  # what the user named: a tag, "promoted" or a path
    gpu: str
    rows: tuple  # the lesson's rows that have samples and a set
    margins: dict = dataclasses.field(default_factory=dict)  # rule/resolution.py's, of this run


# Bounds on a run a student hands in: what a lesson's --json holds, with
# room to spare. The header samples a row at most TimingOptions' last look
# (1,024 rounds) a set; the rule compares every sample of one row with
# every sample of the other, so samples are bounded to keep that quick.
MAX_ROWS = 100_000
MAX_SAMPLES = 4_096
# A time in milliseconds: from a picosecond to about eleven days. Outside
# it, a number is not a GPU's event time (and its logarithm's differences
# would lose all precision).
MIN_MS, MAX_MS = 1e-9, 1e9
_ID_FIELDS = ROW_KEY_FIELDS + ("set",)


def _field_problem(k: str, v) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        return f"'{k}' must be a string or a whole number, not {type(v).__name__}"
    if isinstance(v, int) and abs(v) >= 2 ** 63:
        return f"'{k}' is a whole number of {len(str(abs(v)))} digits; a size or a count fits in 64 bits"
    if isinstance(v, str) and len(v) > 200:
        return f"'{k}' is {len(v):,} characters long; a row's name is short"
    return None


def _rows(results: dict, shown: str) -> tuple:
    rows = results.get("rows")
    if not isinstance(rows, list):
        raise UsageError(Diagnostic(shown, 0, 0, "has no 'rows' list; expected a lesson's --json output"))
    if len(rows) > MAX_ROWS:
        raise UsageError(Diagnostic(shown, 0, 0, f"holds {len(rows):,} rows; a lesson's --json holds at most "
                                    f"{MAX_ROWS:,}"))
    out, seen = [], {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise UsageError(Diagnostic(shown, 0, 0, f"rows[{i}] is not an object; expected a lesson's --json output"))
        samples = row.get("samples_ms")
        if not isinstance(samples, list) or not samples:
            continue  # derived rows and untimed rows: nothing to compare
        bad = next(filter(None, (_field_problem(k, row[k]) for k in _ID_FIELDS if k in row)), None)
        if bad:
            raise UsageError(Diagnostic(shown, 0, 0, f"rows[{i}]: {bad}"))
        if len(samples) > MAX_SAMPLES:
            raise UsageError(Diagnostic(shown, 0, 0, f"rows[{i}] has {len(samples):,} samples; at most "
                                        f"{MAX_SAMPLES:,} a row"))
        if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and MIN_MS <= t <= MAX_MS
                   for t in samples):
            raise UsageError(Diagnostic(shown, 0, 0, f"rows[{i}] ({escaped(row.get('set'))}): samples_ms must be "
                                        f"numbers of milliseconds from {MIN_MS:g} to {MAX_MS:g}"))
        ident = (_set_of(row), row_key(row))
        if ident in seen:
            raise UsageError(Diagnostic(shown, 0, 0, f"rows[{i}] repeats rows[{seen[ident]}] (the same row of the "
                                        "same set twice); expected each row once"))
        seen[ident] = i
        out.append(row)
    return tuple(out)


def side(label: str, results: dict, shown: str) -> Side:
    """A run's side of a comparison: the lesson's timed rows of `results`
    (a record's results, or a lesson's --json output), named `label`."""
    gpu = results.get("gpu") if isinstance(results.get("gpu"), dict) else {}
    rows = _rows(results, shown)
    if not rows:
        raise UsageError(Diagnostic(shown, 0, 0, "holds no timed rows (a --check-only or --profile run?); "
                                    "expected a timed run's --json output"))
    decisions = [d for d in results.get("decisions") or [] if isinstance(d, dict)
                 and all(isinstance(d.get(k), str) for k in ("set", "a", "b"))]
    margins = resolution.margins({"rows": list(rows), "decisions": decisions})
    return Side(escaped(label), escaped(gpu.get("name") or "an unnamed GPU")[:200], rows, margins)


def _matches(row: dict, where: dict) -> bool:
    return all(row.get(k) == v for k, v in where.items())


# What places an older program's rows, timed before sets existed, at one
# size and timing of one run: their stand-in for a set.
_SET_STAND_IN = ("group", "elements", "k", "bins", "keys", "timing")


def _set_of(row: dict):
    return row["set"] if isinstance(row.get("set"), str) else tuple(row.get(k) for k in _SET_STAND_IN)


def _pairs(rows: tuple, a: dict, b: dict) -> dict:
    """{row key of the a-row: (a-row, b-row)}: every row matching `a` and the
    one row matching `b` timed in its set (linear in the rows)."""
    b_rows: dict = {}
    for row in rows:
        if _matches(row, b):
            b_rows.setdefault(_set_of(row), []).append(row)
    out = {}
    for row in rows:
        if not _matches(row, a):
            continue
        partners = [r for r in b_rows.get(_set_of(row), ())[:2] if r is not row]
        if len(partners) == 1 and len(b_rows[_set_of(row)]) <= 2:
            out[row_key(row)] = (row, partners[0])
    return out


@dataclasses.dataclass(frozen=True)
class Cell:
    ratio: float  # a's median over b's: below 1, a is quicker
    word: str

    @staticmethod
    def of(pair, margins: dict) -> "Cell":
        v = rule.verdict(pair[0]["samples_ms"], pair[1]["samples_ms"])
        v = v.at_margin(resolution.margin_for(margins, pair[0].get("timing"), v.a.median))
        return Cell(v.a.median / v.b.median, v.word)


def carried(x: Cell | None, y: Cell | None) -> str:
    """Whether a word carried over: 'yes' (the same word), 'no' (two
    different decided words), 'undecided' (one side not distinguishable),
    'missing' (a side has no such pair)."""
    if x is None or y is None:
        return "missing"
    if x.word == y.word:
        return "yes"
    if rule.UNDECIDED in (x.word, y.word):
        return "undecided"
    return "no"


def compare(lesson: Lesson, left: Side, right: Side) -> list[dict]:
    """One block per declared carry-over: its rows, both cells, the answer."""
    if not lesson.info.carry_over:
        raise UsageError(f"{lesson.target}: its lesson.toml declares no [[carry_over]] ratios to compare")
    out = []
    for c in lesson.info.carry_over:
        lp, rp = _pairs(left.rows, c["a"], c["b"]), _pairs(right.rows, c["a"], c["b"])
        cells = []
        for key in list(lp) + [k for k in rp if k not in lp]:
            x = Cell.of(lp[key], left.margins) if key in lp else None
            y = Cell.of(rp[key], right.margins) if key in rp else None
            row = (lp.get(key) or rp.get(key))[0]
            host = any(_matches(row, h) for h in c.get("host_bound", ()))
            cells.append({"row": shown_key(key), "left": x, "right": y, "carried": carried(x, y), "host_bound": host})
        out.append({"what": c["what"], "cells": cells})
    return out


def _cell_text(c: Cell | None) -> str:
    return "(no such rows)" if c is None else f"{c.ratio:.3f} {c.word}"


def _row_name(row: dict) -> str:
    """The row's identity, its mode left out where a version or schedule
    names it already (a mode is then that name's description)."""
    named = "version" in row or "schedule" in row
    return " ".join(escaped(v) for k, v in row.items() if not (named and k == "mode"))


MEANING = ("carried over: 'yes' where both runs' words (the rule's, inside each run) are the same, 'no' where they "
           "are two different decided words (faster, slower, the same), 'undecided' where one run says not "
           "distinguishable")


def _size_hint(lesson: Lesson, left: Side) -> str:
    sizes = sorted({r["elements"] for r in left.rows if isinstance(r.get("elements"), int)})
    if not sizes:
        return f"run {lesson.target} at the page's own settings"
    shown = ", ".join(f"{n:,}" for n in sizes[:6]) + (", ..." if len(sizes) > 6 else "")
    pick = next((n for n in sizes if n >= 1 << 20), sizes[-1])
    return (f"run it at a size {left.label} measured ({shown}), for example: "
            f"{display_path(lesson.binary)} --size {pick} --json my-run.json")


def format_summary(lesson: Lesson, left: Side, right: Side, blocks: list[dict], limit: int = 2) -> str:
    """At most 15 lines: the two runs, what 'carried over' means, each
    declared ratio's counts and its rows that did not carry over; the
    whole table with --all."""
    lines = [f"{lesson.target}: {left.label} ({left.gpu}) against {right.label} ({right.gpu})", MEANING + "."]
    common = 0
    for block in blocks[:4]:
        cells = [c for c in block["cells"] if not c["host_bound"]]
        both = [c for c in cells if c["carried"] != "missing"]
        common += len(both)
        tally = Counter(c["carried"] for c in cells)
        lines.append(f"{escaped(block['what'])}: {tally['yes']} of {len(both)} rows in both runs carried over, "
                     f"{tally['no']} did not, {tally['undecided']} undecided"
                     + (f" ({tally['missing']} in one run only)" if tally["missing"] else ""))
        worst = [c for c in cells if c["carried"] == "no"][:limit]
        if worst:
            lines.append("  did not: " + "; ".join(f"{_row_name(c['row'])} ({_cell_text(c['left'])} / "
                                                     f"{_cell_text(c['right'])})" for c in worst)
                         + (" ..." if tally["no"] > limit else ""))
    if len(blocks) > 4:
        lines.append(f"and {len(blocks) - 4} more ratios (--all)")
    if common == 0:
        lines.append(f"no row of {right.label} is one of {left.label}'s: {_size_hint(lesson, left)}")
    lines.append("every row: add --all; as JSON: --json")
    return "\n".join(lines[:15])


def format_carry(lesson: Lesson, left: Side, right: Side, blocks: list[dict]) -> str:
    lines = [f"{lesson.target}: what carries over from {left.label} ({left.gpu}) to {right.label} ({right.gpu})",
             f"each ratio is a's median over b's inside one run (below 1: a is quicker), with the rule's word "
             f"there ({rule.MARGIN:.0%} margin, {2 * NormalDist().cdf(rule.Z) - 1:.1%} interval)"]
    for block in blocks:
        cells = block["cells"]
        names = [_row_name(c["row"]) + (" (host-bound)" if c["host_bound"] else "") for c in cells]
        nw = max([len(n) for n in names] + [3])
        lw = max([len(_cell_text(c["left"])) for c in cells] + [len(left.label)])
        rw = max([len(_cell_text(c["right"])) for c in cells] + [len(right.label)])
        lines += ["", block["what"], f"  {'row':<{nw}}  {left.label:<{lw}}  {right.label:<{rw}}  carried over"]
        for name, c in zip(names, cells):
            lines.append(f"  {name:<{nw}}  {_cell_text(c['left']):<{lw}}  {_cell_text(c['right']):<{rw}}  "
                         f"{c['carried']}")
        device = [c for c in cells if not c["host_bound"]]
        tally = Counter(c["carried"] for c in device)
        lines.append(f"  carried over: {tally['yes']} of {len(device)} device-bound rows the same word, "
                     f"{tally['no']} a different word, {tally['undecided']} undecided on one side"
                     + (f", {tally['missing']} on one side only" if tally["missing"] else "")
                     + (f"; {len(cells) - len(device)} host-bound rows shown, not counted (they carry over "
                        "to the same host only)" if len(device) < len(cells) else ""))
    return "\n".join(lines)


def as_json(lesson: Lesson, left: Side, right: Side, blocks: list[dict]) -> dict:
    def cell(c):
        return None if c is None else {"ratio": c.ratio, "word": c.word}
    return {"lesson": lesson.target, "left": {"side": left.label, "gpu": left.gpu},
            "right": {"side": right.label, "gpu": right.gpu},
            "carry_over": [{"what": b["what"], "rows": [
                {"row": c["row"], "left": cell(c["left"]), "right": cell(c["right"]), "carried": c["carried"],
                 "host_bound": c["host_bound"]} for c in b["cells"]]} for b in blocks]}
