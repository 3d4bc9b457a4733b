"""What each lesson says about itself in lesson.toml beside its sources:
the numbers its page may state, its screenshots, what the review runs,
which counters to profile, what its machine code must contain. Checked
against one schema; a mistake is a one-line error naming the key."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any

from ..errors import Diagnostic, SourceError


LESSON_FILE = "lesson.toml"


# Each key: its type, and for lists, the type of their items. Tables of
# tables are described by nested dicts.
_ARGS = (list, str)


LESSON_SCHEMA: dict[str, Any] = {
    "page": {
        "constants": (list, (int, float)),
        "screenshot": bool,
        "compare": str,
    },
    "review": {
        "sanitize": [{"tool": str, "args": _ARGS, "why": str}],
        "negative": [{"target": str, "args": _ARGS, "expect": str, "why": str}],
    },
    "profile": {
        "metrics": [{"name": str, "why": str}],
        "runs": [{"args": _ARGS}],
    },
    "timeline": {"args": _ARGS},
    "sass": [{"kernel": str, "patterns": _ARGS, "why": str}],
}


SANITIZERS = ("memcheck", "racecheck", "synccheck", "initcheck")


EXPECTATIONS = ("fault", "report")


@dataclasses.dataclass(frozen=True)
class LessonInfo:
    constants: tuple[float, ...] = ()
    screenshot: bool = False
    compare: str = ""
    sanitize: tuple[dict, ...] = ()
    negative: tuple[dict, ...] = ()
    metrics: tuple[dict, ...] = ()
    profile_runs: tuple[dict, ...] = ()
    timeline_args: tuple[str, ...] = ()
    sass: tuple[dict, ...] = ()


def _type_name(t) -> str:
    if isinstance(t, tuple) and t and t[0] is list:
        return "a list"
    if isinstance(t, tuple):
        return " or ".join(x.__name__ for x in t)
    return {str: "a string", bool: "true or false", int: "a whole number"}.get(t, t.__name__)


def _check(value, schema, where: str, problems: list[str]) -> None:
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            problems.append(f"{where} must be a table")
            return
        for key in value:
            if key not in schema:
                problems.append(f"{where}.{key} is not a known key; expected one of: {', '.join(schema)}")
        for key, sub in schema.items():
            if key in value:
                _check(value[key], sub, f"{where}.{key}", problems)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            problems.append(f"{where} must be an array of tables ([[{where.lstrip('.')}]])")
            return
        for i, item in enumerate(value):
            _check(item, schema[0], f"{where}[{i}]", problems)
            if isinstance(item, dict):
                for key in schema[0]:
                    if key not in item and key != "why":
                        problems.append(f"{where}[{i}] needs '{key}'")
    elif isinstance(schema, tuple) and schema and schema[0] is list:
        if not isinstance(value, list):
            problems.append(f"{where} must be a list")
            return
        item_type = schema[1]
        for i, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, item_type):
                problems.append(f"{where}[{i}] must be {_type_name(item_type)}")
    else:
        if isinstance(value, bool) and schema is not bool:
            problems.append(f"{where} must be {_type_name(schema)}")
        elif not isinstance(value, schema):
            problems.append(f"{where} must be {_type_name(schema)}")


def load_lesson_info(path: Path, shown: str) -> LessonInfo:
    """Reads and checks a lesson.toml; a missing file means no knowledge
    beyond the build's."""
    if not path.exists():
        return LessonInfo()
    from ..fsutil import read_source

    raw = read_source(path, path.parent)  # a regular file in the lesson's folder, not a link out of it
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SourceError(Diagnostic(shown, 0, 0, "is not UTF-8 text; expected a TOML file")) from None
    except RecursionError:
        raise SourceError(Diagnostic(shown, 0, 0, "nests too deeply; expected a flat TOML file")) from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line, col = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise SourceError(Diagnostic(shown, line, col, f"{msg}; expected TOML")) from None
    problems: list[str] = []
    _check(data, LESSON_SCHEMA, "", problems)
    for i, s in enumerate(data.get("review", {}).get("sanitize", []) or []):
        if isinstance(s, dict) and s.get("tool") not in SANITIZERS:
            problems.append(f".review.sanitize[{i}].tool must be one of: {', '.join(SANITIZERS)}")
    for i, s in enumerate(data.get("review", {}).get("negative", []) or []):
        if isinstance(s, dict) and s.get("expect") not in EXPECTATIONS:
            problems.append(f".review.negative[{i}].expect must be one of: {', '.join(EXPECTATIONS)}")
    if problems:
        raise SourceError([Diagnostic(shown, 0, 0, p.lstrip(".")) for p in problems])
    page = data.get("page", {})
    review = data.get("review", {})
    profile = data.get("profile", {})
    return LessonInfo(
        constants=tuple(page.get("constants", ())),
        screenshot=page.get("screenshot", False),
        compare=page.get("compare", ""),
        sanitize=tuple(review.get("sanitize", ())),
        negative=tuple(review.get("negative", ())),
        metrics=tuple(profile.get("metrics", ())),
        profile_runs=tuple(profile.get("runs", ())),
        timeline_args=tuple(data.get("timeline", {}).get("args", ())),
        sass=tuple(data.get("sass", ())),
    )
