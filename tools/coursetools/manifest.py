"""The course's lessons as CMake declared them (build/course-manifest.json).

CMake's course_add_lesson() is the one place a day's target, sources,
minimum compute capability and commands are written; configure writes
them to the manifest and every tool reads them from there.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from .diagnostics import EXIT_USAGE, CourseError

ROOT = Path(__file__).resolve().parents[2]
HEADER = "common/course.cuh"


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
    test_args: tuple[str, ...]
    nvcc_flags: str

    @property
    def path(self) -> Path:
        return ROOT / self.dir

    @property
    def digest_files(self) -> tuple[str, ...]:
        """What the sources digest covers: the lesson's sources and the
        one shared header."""
        return tuple(sorted(set(self.sources) | {HEADER}))

    @property
    def min_cc_tuple(self) -> tuple[int, int]:
        major, minor = self.min_cc.split(".")
        return int(major), int(minor)


def build_dir() -> Path:
    return Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build"))


def load(path: Path | None = None) -> list[Lesson]:
    path = path or build_dir() / "course-manifest.json"
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise CourseError(
            [f"{path}: no course manifest; configure first: cmake --preset course"], EXIT_USAGE
        ) from None
    except json.JSONDecodeError as e:
        raise CourseError([f"{path}:{e.lineno}:{e.colno}: error: {e.msg}"], EXIT_USAGE) from None
    lessons = []
    for d in data["lessons"]:
        lessons.append(
            Lesson(
                target=d["target"],
                day=int(d["day"]),
                topic=d["topic"],
                dir=d["dir"],
                min_cc=d["min_cc"],
                sources=tuple(d["sources"]),
                binary=d["binary"],
                compile_command=d["compile_command"],
                build_command=d["build_command"],
                run_command=d["run_command"],
                test_args=tuple(d.get("test_args", [])),
                nvcc_flags=d.get("nvcc_flags", ""),
            )
        )
    return sorted(lessons, key=lambda l: l.day)


def find(lessons: list[Lesson], name: str) -> Lesson:
    for l in lessons:
        if name in (l.target, l.dir, Path(l.dir).name, f"day{l.day}"):
            return l
    known = ", ".join(l.target for l in lessons)
    raise CourseError([f"unknown lesson '{name}'; expected one of: {known}"], EXIT_USAGE)
