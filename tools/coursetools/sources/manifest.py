"""The course's lessons: what CMake declared (build/course-manifest.json),
with what each lesson says about itself (lesson.toml, lessoninfo.py).

course_add_lesson(), in the lesson's own CMakeLists.txt, is the one place
a day's target, sources, minimum compute capability and builds are
written; configure writes them to the manifest. No tool names a lesson."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

from ..errors import UsageError, display_path
from . import digest, includes
from .lessoninfo import LESSON_FILE, LessonInfo, load_lesson_info

ROOT = Path(__file__).resolve().parents[3]

HEADER = "common/course.cuh"


def header_files(root: Path | None = None) -> tuple[str, ...]:
    """course.cuh, then every .cuh file under common/course/ (sorted)."""
    root = Path(root or ROOT)
    parts = (p.relative_to(root).as_posix() for p in (root / "common" / "course").rglob("*.cuh") if p.is_file())
    return (HEADER, *sorted(parts))


TARGET_RE = re.compile(r"^day[0-9]+_[a-z0-9_]+$")


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
    nvbench_target: str = ""  # its nvbench benchmarks, where this build has nvbench
    extra_flags: tuple[str, ...] = ()  # compile flags beyond the course's (see CourseLesson.cmake)
    libraries: tuple[str, ...] = ()  # the toolkit's libraries it links (LIBRARIES)
    info: LessonInfo = LessonInfo()

    @property
    def path(self) -> Path:
        return ROOT / self.dir

    @property
    def snippet_files(self) -> list[str]:
        return [str(ROOT / s) for s in (*self.sources, *header_files(ROOT))]

    def digest_files(self, build: Path | None = None) -> tuple[str, ...]:
        """What the sources digest covers (digest.py says why), with what the
        compiler read for it in `build` (its dependency output)."""
        found = set(self.sources) | set(header_files(ROOT))
        for folder, keep in ((ROOT / "common", lambda p: True), (ROOT / self.dir, _may_be_included)):
            if folder.is_dir():
                for p in folder.rglob("*"):
                    if (p.is_file() or p.is_symlink()) and keep(p.relative_to(folder)):
                        found.add(p.relative_to(ROOT).as_posix())
        # what the compiler read is scanned as what an #include reaches is
        found = includes.followed(found | includes.compiler_read(self.dir, self.target, build, ROOT), ROOT)
        found |= set(digest.build_files(ROOT))
        found |= {f"{self.dir}/{name}" for name in ("CMakeLists.txt", LESSON_FILE) if (self.path / name).exists()}
        return tuple(sorted(found))

    @property
    def min_cc_tuple(self) -> tuple[int, int]:
        major, minor = self.min_cc.split(".")
        return int(major), int(minor)


# A lesson folder's files no compiler reads (its CMakeLists.txt and
# lesson.toml are digested as what they are, declarations).
NOT_INCLUDED = ("README.md", "README.md.j2", LESSON_FILE, "CMakeLists.txt")


def _may_be_included(rel: Path) -> bool:
    return not (rel.parts[0] == "figures" or (len(rel.parts) == 1 and rel.name in NOT_INCLUDED) or rel.suffix == ".md")


def build_dir() -> Path:
    """COURSE_BUILD_DIR, else build/, else build-student/ where only it is configured."""
    if "COURSE_BUILD_DIR" in os.environ:
        return Path(os.environ["COURSE_BUILD_DIR"])
    main, student = ROOT / "build", ROOT / "build-student"
    if not (main / "course-manifest.json").exists() and (student / "course-manifest.json").exists():
        return student
    return main


_FIELDS = {"target": str, "day": int, "topic": str, "dir": str, "min_cc": str, "sources": list,
           "binary": str, "build_command": str, "run_command": str}
# Targets a day may also build, run from build/bin by name: "" where it builds none.
_OTHER_TARGETS = ("timeline_target", "nvbench_target")
_STRING_LISTS = ("sources", "test_args", "architectures", "course_architectures", "libraries", "variants",
                 "extra_flags")


# CMake's CUDA_ARCHITECTURES entries (a build may also name "native", "all"
# or "all-major") and the toolkit's library names, as a page may show them.
ARCH_RE = re.compile(r"\d{2,3}a?(?:-real|-virtual)?")
LIBRARY_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,40}")


def arch_options(archs) -> str:
    """nvcc's options for CMake's architectures, as a student types them:
    one plain "90" is -arch=sm_90; otherwise a -gencode for each code."""
    if len(archs) == 1 and "-" not in archs[0]:
        return f"-arch=sm_{archs[0]}"
    out = []
    for a in archs:
        base, _, kind = a.partition("-")
        codes = {"real": ["sm"], "virtual": ["compute"]}.get(kind, ["sm", "compute"])
        out += [f"-gencode arch=compute_{base},code={c}_{base}" for c in codes]
    return " ".join(out)


def nvcc_flags(target: str, min_cc: str, archs) -> str:
    """cmake/CourseLesson.cmake's flags, for these architectures."""
    return (f"-std=c++20 -O3 -lineinfo {arch_options(archs)} -DCOURSE_MIN_CC={min_cc.replace('.', '')} "
            f"-DCOURSE_LESSON={target}")


def _command_problems(d: dict) -> list[str]:
    """The page shows a lesson's commands as the build's own words, so
    they may hold nothing but what course_add_lesson() writes."""
    target = d["target"]
    want = {"run_command": f"build/bin/{target}", "build_command": f"cmake --build build --target {target}"}
    bad = [f"{k} (expected '{v}')" for k, v in want.items() if d.get(k) != v]
    if not re.fullmatch(r"[0-9]{1,2}\.[0-9]", d["min_cc"]):
        bad.append("min_cc (expected MAJOR.MINOR, such as 9.0)")
    if not d.get("course_architectures") or not all(ARCH_RE.fullmatch(a) for a in d["course_architectures"]) \
            or not all(ARCH_RE.fullmatch(a) or a in ("native", "all", "all-major") for a in d.get("architectures", [])):
        bad.append("course_architectures or architectures (expected CMake's, such as 75-virtual and 90-real)")
    if not all(LIBRARY_RE.fullmatch(x) for x in d.get("libraries", [])):
        bad.append("libraries (expected the toolkit's names, such as cublas)")
    return bad


def _left_out_by_architectures(min_cc: str, archs) -> bool:
    """Whether a build configured for `archs` ("86", "80;86-real") holds
    no architecture that runs a day needing `min_cc` (MAJOR.MINOR, checked)."""
    listed = [re.match(r"\d+", a.strip()) for a in str(archs or "").split(";") if a.strip()]
    need = int(min_cc.replace(".", ""))
    return bool(listed) and all(listed) and all(int(m.group(0)) < need for m in listed)


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
            others = [d.get(k, "") for k in _OTHER_TARGETS] + d.get("variants", [])
            if not all(isinstance(x, str) and (x == "" or TARGET_RE.match(x)) for x in others):
                bad.append("a timeline, nvbench or variant target (expected day<N>_<name>)")
            if not bad and not all(src.startswith(d["dir"] + "/") and ".." not in src.split("/") for src in d["sources"]):
                bad.append("sources (expected files in the lesson's folder)")
        if not bad:
            bad = _command_problems(d)
        if bad:
            raise UsageError(f"{path}: error: lesson {i} lacks or mistypes {', '.join(bad)}; configure again: "
                             "cmake --preset course")
        if not d.get("built", True) and not _left_out_by_architectures(d["min_cc"], data.get("cuda_architectures")):
            # A day may be left out of a build only by the build's own
            # architectures (one configured for an older GPU): anything else
            # would take it out of every check while its page stays.
            raise UsageError(f"{path}: error: {d['target']} is left out of this build, yet the build's "
                             f"architectures ({data.get('cuda_architectures') or 'each day its own'}) do not rule out "
                             f"compute capability {d['min_cc']}; the build files leave it out: restore them and "
                             "configure again: cmake --preset course")
        # What builds the program the evidence measured, alone: the course's
        # architectures (whatever this build chose) and the day's libraries.
        flags = nvcc_flags(d["target"], d["min_cc"], d["course_architectures"])
        libs = "".join(f" -l{x}" for x in d.get("libraries", []))  # after the sources, as a linker reads them
        command = f"nvcc {flags} -I common -o {d['target']} {' '.join(d['sources'])}{libs}"
        # The manifest's strings and lists (checked above) as they are.
        lessons.append(Lesson(
            **{k: d[k] for k, t in _FIELDS.items() if t is str},
            **{k: tuple(d.get(k, [])) for k in _STRING_LISTS if k != "course_architectures"},
            day=int(d["day"]), compile_command=command, nvcc_flags=flags, built=bool(d.get("built", True)),
            **{k: d.get(k, "") for k in _OTHER_TARGETS},
            info=load_lesson_info(ROOT / d["dir"] / LESSON_FILE, f"{d['dir']}/{LESSON_FILE}",
                                  tuple(d.get("variants", [])))))
    _refuse_stale(path, lessons)
    return sorted(lessons, key=lambda l: l.day)


def _refuse_stale(path: Path, lessons: list[Lesson]) -> None:
    """A manifest older than the build files it was made from, or lacking a
    lesson folder the tree has, is refused (only a tool run by hand meets it)."""
    if path.parent.resolve() != build_dir().resolve():
        return  # a manifest read from elsewhere (a test's, a copy) is taken as it is
    try:
        made = path.stat().st_mtime
    except OSError:
        return
    inputs = [ROOT / "CMakeLists.txt", *sorted((ROOT / "cmake").glob("*.cmake")),
              *sorted((ROOT / "lessons").glob("*/CMakeLists.txt"))]
    newer = [p for p in inputs if p.is_file() and p.stat().st_mtime > made + 1]
    if newer:
        raise UsageError(f"{display_path(path)}: error: older than {display_path(newer[0])}, which changed since "
                         "the build was configured; refresh it: cmake --preset course")
    known = {l.dir for l in lessons}
    new = [p.parent for p in inputs[1:] if p.name == "CMakeLists.txt" and p.parent.parent.name == "lessons"
           and TARGET_RE.match(p.parent.name) and f"lessons/{p.parent.name}" not in known]
    if new:
        raise UsageError(f"{display_path(path)}: error: {display_path(new[0])} is not in the build's manifest (a "
                         "new day?); configure again so the build knows it: cmake --preset course")


def find(lessons: list[Lesson], name: str) -> Lesson:
    for l in lessons:
        if name in (l.target, l.dir, Path(l.dir).name, f"day{l.day}"):
            return l
    known = ", ".join(l.target for l in lessons)
    raise UsageError(f"unknown lesson '{name}'; expected one of: {known}")
