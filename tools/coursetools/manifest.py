"""The course's lessons: what CMake declared (build/course-manifest.json)
and what each lesson says about itself (lesson.toml beside its sources).

course_add_lesson(), in the lesson's own CMakeLists.txt, is the one place
a day's target, sources, minimum compute capability and builds are
written; configure writes them to the manifest. lesson.toml holds what
the tools need and the build does not: the numbers its page may state,
its screenshots, what the review runs, which counters to profile, what
its machine code must contain. No tool names a lesson.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from .errors import Diagnostic, SourceError, UsageError

ROOT = Path(__file__).resolve().parents[2]
HEADER = "common/course.cuh"
# The header's parts: course.cuh includes them; a lesson includes only it.
HEADER_PARTS = "common/course"


def header_files(root: Path | None = None) -> tuple[str, ...]:
    """The shared header as the tools read it: course.cuh, then every part
    under common/course/ (sorted), each relative to the repository root."""
    root = Path(root or ROOT)
    parts = sorted(p.relative_to(root).as_posix() for p in (root / HEADER_PARTS).rglob("*.cuh") if p.is_file())
    return (HEADER, *parts)
LESSON_FILE = "lesson.toml"
TARGET_RE = re.compile(r"^day[0-9]+_[a-z0-9_]+$")


# ----------------------------------------------------------------------
# lesson.toml
# ----------------------------------------------------------------------

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
    from .fsutil import read_source

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


# ----------------------------------------------------------------------
# The build's manifest
# ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Lesson:
    target: str
    day: int
    topic: str
    dir: str  # relative to the repository root
    min_cc: str
    sources: tuple[str, ...]  # relative to the repository root
    binary: str
    compile_command: str
    build_command: str
    run_command: str
    test_args: tuple[str, ...] = ()
    nvcc_flags: str = ""
    built: bool = True
    architectures: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    timeline_target: str = ""
    extra_flags: tuple[str, ...] = ()  # compile flags beyond the course's (see CourseLesson.cmake)
    info: LessonInfo = LessonInfo()

    @property
    def path(self) -> Path:
        return ROOT / self.dir

    @property
    def digest_files(self) -> tuple[str, ...]:
        """What the sources digest covers: the lesson's sources, the shared
        header, and every other file the compiler could include from the
        repository: all of common/ (an include folder: a common/cub/...
        would shadow CUB) and every file in the lesson's folder but its
        page, its figures and its declarations (a course.cuh dropped beside
        the .cu would shadow the shared one)."""
        found = set(self.sources) | {HEADER}
        root = ROOT
        for folder, keep in ((root / "common", lambda p: True), (root / self.dir, _may_be_included)):
            if folder.is_dir():
                for p in folder.rglob("*"):
                    if (p.is_file() or p.is_symlink()) and keep(p.relative_to(folder)):
                        found.add(p.relative_to(root).as_posix())
        return tuple(sorted(found))

    @property
    def min_cc_tuple(self) -> tuple[int, int]:
        major, minor = self.min_cc.split(".")
        return int(major), int(minor)

    def variant_binary(self, target: str) -> Path:
        return Path(self.binary).with_name(target)


# A lesson folder's files that no compiler reads: the page and its
# template, the charts, the declarations, notes.
NOT_INCLUDED = ("README.md", "README.md.j2", LESSON_FILE, "CMakeLists.txt")


def _may_be_included(rel: Path) -> bool:
    return not (rel.parts[0] == "figures" or (len(rel.parts) == 1 and rel.name in NOT_INCLUDED)
                or rel.suffix == ".md")


def build_dir() -> Path:
    return Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build"))


_FIELDS = {
    "target": str, "day": int, "topic": str, "dir": str, "min_cc": str, "sources": list,
    "binary": str, "compile_command": str, "build_command": str, "run_command": str,
}


_STRING_LISTS = ("sources", "test_args", "architectures", "variants", "extra_flags")


def load(path: Path | None = None) -> list[Lesson]:
    path = Path(path or build_dir() / "course-manifest.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: error: no course manifest; configure first: cmake --preset course") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: error: is a folder, not the course manifest; configure: cmake --preset course") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise UsageError(f"{path}: error: not a JSON manifest ({e}); configure again: cmake --preset course") from None
    if not isinstance(data, dict) or not isinstance(data.get("lessons"), list):
        raise UsageError(f"{path}: error: expected an object with a 'lessons' list; configure again: cmake --preset course")
    lessons = []
    for i, d in enumerate(data["lessons"]):
        bad = [k for k, t in _FIELDS.items() if not isinstance(d.get(k) if isinstance(d, dict) else None, t)]
        if not bad:
            bad = [k for k in _STRING_LISTS if not (isinstance(d.get(k, []), list)
                                                      and all(isinstance(x, str) for x in d.get(k, [])))]
            if not TARGET_RE.match(d["target"]) or d["dir"] != f"lessons/{d['target']}":
                bad.append("target or dir (expected lessons/<target>)")
            if not bad and not all(src.startswith(d["dir"] + "/") and ".." not in src.split("/") for src in d["sources"]):
                bad.append("sources (expected files in the lesson's folder)")
        if bad:
            raise UsageError(f"{path}: error: lesson {i} lacks or mistypes {', '.join(bad)}; configure again: "
                             "cmake --preset course")
        info_path = ROOT / d["dir"] / LESSON_FILE
        lessons.append(
            Lesson(
                target=d["target"], day=int(d["day"]), topic=d["topic"], dir=d["dir"],
                min_cc=d["min_cc"], sources=tuple(d["sources"]), binary=d["binary"],
                compile_command=d["compile_command"], build_command=d["build_command"],
                run_command=d["run_command"], test_args=tuple(d.get("test_args", [])),
                nvcc_flags=d.get("nvcc_flags", ""), built=bool(d.get("built", True)),
                architectures=tuple(d.get("architectures", [])),
                variants=tuple(d.get("variants", [])), timeline_target=d.get("timeline_target", ""),
                extra_flags=tuple(str(f) for f in d.get("extra_flags", []) if isinstance(d.get("extra_flags"), list)),
                info=load_lesson_info(info_path, f"{d['dir']}/{LESSON_FILE}"),
            )
        )
    return sorted(lessons, key=lambda l: l.day)


def find(lessons: list[Lesson], name: str) -> Lesson:
    for l in lessons:
        if name in (l.target, l.dir, Path(l.dir).name, f"day{l.day}"):
            return l
    known = ", ".join(l.target for l in lessons)
    raise UsageError(f"unknown lesson '{name}'; expected one of: {known}")
