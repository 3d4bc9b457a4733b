"""What each lesson says about itself in lesson.toml beside its sources:
the numbers its page may state, its screenshots, the ratios a student
compares on another GPU, what the review runs, which counters to profile,
what its machine code must contain. Checked against one schema; a mistake
is a one-line `lesson.toml:LINE: error:` naming the key and what it must
be."""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from ..errors import Diagnostic, SourceError
from ..fsutil import read_source

LESSON_FILE = "lesson.toml"

# Each key's type (a list's: list and its items'); tables are nested dicts,
# arrays of tables one-item lists, and _ROW a table of row fields.
_ARGS = (list, str)
_ROW = "row selector"
LESSON_SCHEMA: dict[str, Any] = {
    "page": {"constants": (list, (int, float)), "screenshot": bool},
    "carry_over": [{"what": str, "a": _ROW, "b": _ROW, "host_bound": [_ROW]}],
    "review": {"sanitize": [{"tool": str, "args": _ARGS, "why": str}],
               "negative": [{"target": str, "args": _ARGS, "expect": str, "why": str}]},
    "profile": {"metrics": [{"name": str, "why": str}], "runs": [{"args": _ARGS}]},
    "timeline": {"args": _ARGS},
    # A kernel (reduceV9, every instance of a template; one instance as the
    # source spells it, latencyChase<Chase::RemotePtx>; or mangled): the
    # instructions its machine code must hold, must not, and its page shows.
    "sass": [{"kernel": str, "patterns": _ARGS, "absent": _ARGS, "show": _ARGS, "why": str}],
    # The day's headline rows as nvbench benchmarks (its NVBENCH file): the
    # record's arguments, each axis as the row field it matches, the rest.
    "nvbench": {"args": _ARGS, "axes": _ROW, "rows": _ROW},
}
OPTIONAL = {"why", "host_bound", "patterns", "absent", "show"}
SANITIZERS = ("memcheck", "racecheck", "synccheck", "initcheck")
EXPECTATIONS = ("fault", "report")
# Python's regular expressions backtrack, so a [[sass]] pattern may be
# exponential on a long kernel ("(.*.*)*X"): `course sass` runs them under a
# time limit, and here they are held to a length no expectation needs.
MAX_PATTERN = 200


@dataclasses.dataclass(frozen=True)
class LessonInfo:
    constants: tuple[float, ...] = ()
    screenshot: bool = False
    carry_over: tuple[dict, ...] = ()
    sanitize: tuple[dict, ...] = ()
    negative: tuple[dict, ...] = ()
    metrics: tuple[dict, ...] = ()
    profile_runs: tuple[dict, ...] = ()
    timeline_args: tuple[str, ...] = ()
    sass: tuple[dict, ...] = ()
    nvbench: dict = dataclasses.field(default_factory=dict, compare=False)
    lines: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def line(self, path: str) -> int:
        return line_of(self.lines, path)


def _type_name(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(x.__name__ for x in t)
    return {str: "a string", bool: "true or false", int: "a whole number"}.get(t, t.__name__)


def _check(value, schema, where: str, problems: list[tuple[str, str]]) -> None:
    if schema == _ROW:  # {} selects every row
        if not isinstance(value, dict) or any(isinstance(v, bool) or not isinstance(v, (str, int))
                                              for v in value.values()):
            problems.append((where, "must be a table of row fields and their values, such as "
                                    "{ version = \"v9\" }, or {} for every row"))
    elif isinstance(schema, dict):
        if not isinstance(value, dict):
            problems.append((where, "must be a table"))
            return
        for key in value:
            if key not in schema:
                problems.append((f"{where}.{key}", f"is not a known key; expected one of: {', '.join(schema)}"))
        for key, sub in schema.items():
            if key in value:
                _check(value[key], sub, f"{where}.{key}", problems)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            problems.append((where, f"must be an array of tables ([[{where.lstrip('.')}]])"))
            return
        for i, item in enumerate(value):
            _check(item, schema[0], f"{where}[{i}]", problems)
            if isinstance(item, dict) and isinstance(schema[0], dict):
                for key in schema[0]:
                    if key not in item and key not in OPTIONAL:
                        problems.append((f"{where}[{i}]", f"needs '{key}'"))
    elif isinstance(schema, tuple) and schema[0] is list:
        if not isinstance(value, list):
            problems.append((where, "must be a list"))
            return
        for i, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, schema[1]):
                problems.append((f"{where}[{i}]", f"must be {_type_name(schema[1])}"))
    elif (isinstance(value, bool) and schema is not bool) or not isinstance(value, schema):
        problems.append((where, f"must be {_type_name(schema)}"))


def key_lines(text: str) -> dict[str, int]:
    """The line of each table header and key of a TOML file by dotted path
    ('review.negative[1].target'), as far as a line scan can tell."""
    lines: dict[str, int] = {}
    counts: dict[str, int] = {}
    table = ""
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        m = re.match(r"^\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]", line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), -1) + 1
            table = f"{m.group(1)}[{counts[m.group(1)]}]"
            lines.setdefault(table, n)
            continue
        m = re.match(r"^\[\s*([A-Za-z0-9_.-]+)\s*\]", line)
        if m:
            table = m.group(1)
            lines.setdefault(table, n)
            continue
        m = re.match(r"^([A-Za-z0-9_-]+)\s*=", line)
        if m:
            lines.setdefault(f"{table}.{m.group(1)}" if table else m.group(1), n)
    return lines


def line_of(lines: dict[str, int], path: str) -> int:
    """The line of `path`, or of the nearest enclosing key or table."""
    path = path.lstrip(".")
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return 0


def _more_problems(data: dict, variants: tuple[str, ...] | None, problems: list[tuple[str, str]]) -> None:
    """What the schema cannot say, of `data` that has passed it."""
    review = data.get("review", {})
    for i, c in enumerate(data.get("page", {}).get("constants", [])):
        if isinstance(c, float) and not math.isfinite(c):
            problems.append((f"page.constants[{i}]", f"is {c}; a constant is a finite number (inf would match "
                             "every number the page states)"))
    for i, s in enumerate(review.get("sanitize", [])):
        if s["tool"] not in SANITIZERS:
            problems.append((f"review.sanitize[{i}].tool", f"must be one of: {', '.join(SANITIZERS)}"))
    for i, s in enumerate(review.get("negative", [])):
        if s["expect"] not in EXPECTATIONS:
            problems.append((f"review.negative[{i}].expect", f"must be one of: {', '.join(EXPECTATIONS)}"))
        if variants is not None and s["target"] not in variants:
            problems.append((f"review.negative[{i}].target", f"'{s['target']}' is not one of the lesson's variants "
                             f"(its CMakeLists.txt's VARIANTS): {', '.join(variants) or 'none'}"))
    for i, s in enumerate(data.get("sass", [])):
        if not any(s.get(k) for k in ("patterns", "absent", "show")):
            problems.append((f"sass[{i}]", "needs 'patterns', 'absent' or 'show': what to check or show"))
        for key, k, pat in [(key, k, pat) for key in ("patterns", "absent", "show")
                            for k, pat in enumerate(s.get(key, []))]:
            where = f"sass[{i}].{key}[{k}]"
            if len(pat) > MAX_PATTERN:
                problems.append((where, f"is {len(pat)} characters; a pattern holds at most {MAX_PATTERN}"))
                continue
            try:
                re.compile(pat)
            except re.error as e:
                problems.append((where, f"'{pat[:60]}' is not a regular expression ({e})"))


def load_lesson_info(path: Path, shown: str, variants: tuple[str, ...] | None = None) -> LessonInfo:
    """A lesson.toml, checked (none: nothing beyond the build's). `variants`:
    the lesson's extra builds, the only targets a negative review step runs."""
    if not path.exists():
        return LessonInfo()
    raw = read_source(path, path.parent)  # a regular file in the lesson's folder, not a link out of it
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise SourceError(Diagnostic(shown, line, 0, "is not UTF-8 text; expected a TOML file")) from None
    except RecursionError:
        raise SourceError(Diagnostic(shown, 0, 0, "nests too deeply; expected a flat TOML file")) from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line, col = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise SourceError(Diagnostic(shown, line, col, f"{msg}; expected TOML")) from None
    lines = key_lines(text)
    problems: list[tuple[str, str]] = []
    _check(data, LESSON_SCHEMA, "", problems)
    if not problems:
        _more_problems(data, variants, problems)
    if problems:
        raise SourceError([Diagnostic(shown, line_of(lines, p), 0, f"{p.lstrip('.')} {msg}") for p, msg in problems])
    page, review, profile = (data.get(table, {}) for table in ("page", "review", "profile"))
    return LessonInfo(constants=tuple(page.get("constants", ())),
                      screenshot=page.get("screenshot", False),
                      carry_over=tuple(data.get("carry_over", ())),
                      sanitize=tuple(review.get("sanitize", ())),
                      negative=tuple(review.get("negative", ())),
                      metrics=tuple(profile.get("metrics", ())),
                      profile_runs=tuple(profile.get("runs", ())),
                      timeline_args=tuple(data.get("timeline", {}).get("args", ())),
                      sass=tuple(data.get("sass", ())),
                      nvbench=dict(data.get("nvbench", {})),
                      lines=lines)
