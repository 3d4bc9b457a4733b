"""What a lesson's timed build compiles with, read from the build itself.

The sources digest reads code, not flags: a `-DDAY58_READ_BEFORE_WAIT`, an
include folder before `common/` or a forced include would change the
program a record vouches for while the digest stays the same. So `evidence
verify` reads the build's compile and link commands and names every token
that is not one of the course's own. CMake-side changes that never reach a
command are caught when the manifest is written (cmake/CourseLesson.cmake).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

from ..sources import digest, manifest
from ..sources.manifest import Lesson

ALONE = {"-forward-unknown-to-host-compiler", "-O3", "-DNDEBUG", "-lineinfo", "-std=c++20", "-c"}
PAIRS = {"-x": {"cu"}}
GENCODE_RE = re.compile(r"--generate-code=arch=compute_\d{2,3}a?,code=\[(?:compute|sm)_\d{2,3}a?(?:,(?:compute|sm)_\d{2,3}a?)*\]")


def _include_problems(rsp: Path, cuda_root: Path, root: Path) -> list[str]:
    try:
        tokens = shlex.split(rsp.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [f"{rsp}: cannot read the include list ({e})"]
    out = []
    for t in tokens:
        if t == f"-I{root / 'common'}":
            continue
        if t.startswith("-isystem="):
            folder = Path(t[len("-isystem="):])
            if folder == cuda_root / "include" or cuda_root in folder.parents:
                continue
        out.append(t)
    return out


def _commands(path: Path) -> list[dict]:
    """compile_commands.json's entries that are objects with a command
    string; a file of any other shape holds none."""
    entries = json.loads(path.read_text(encoding="utf-8"))
    return [e for e in (entries if isinstance(entries, list) else [])
            if isinstance(e, dict) and isinstance(e.get("command"), str)]


def compile_extras(lesson: Lesson, build: Path, root: Path | None = None) -> list[str]:
    """Every token of the lesson's compile commands beyond the course's own."""
    root = Path(root or manifest.ROOT)
    path = Path(build) / "compile_commands.json"
    if not path.exists():
        # A generator that writes none (Visual Studio, Xcode); CI's always
        # does, and a target left out of it is a problem below.
        return []
    try:
        entries = _commands(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        return [f"{path}: not readable JSON ({type(e).__name__})"]
    marker = f"CMakeFiles/{lesson.target}.dir/"
    mine = [e for e in entries if marker in e["command"]]
    if not mine:
        return [f"{path}: no compile command for {lesson.target}; configure again"]
    extras: list[str] = []
    sources = {str(root / s) for s in lesson.sources}
    want = {_gencode(a) for a in lesson.architectures}
    own = (f"-DCOURSE_MIN_CC={lesson.min_cc.replace('.', '')}", f"-DCOURSE_LESSON={lesson.target}")
    for entry in mine:
        try:
            tokens = shlex.split(entry["command"])
        except ValueError as e:
            extras.append(f"unreadable command ({e})")
            continue
        got = {t for t in tokens if GENCODE_RE.fullmatch(t)}
        if lesson.architectures and got != want:
            extras.append(f"architectures {sorted(got)} where the course builds {lesson.target} "
                          f"for {sorted(want)} (its CMakeLists.txt's minimum and the build's "
                          "setting)")
        compiler = Path(tokens[0])
        if compiler.name != "nvcc":
            extras.append(f"compiler {tokens[0]}")
        cuda_root = compiler.parent.parent
        directory = Path(str(entry.get("directory", "")))
        i = 1
        while i < len(tokens):
            t, nxt = tokens[i], (tokens[i + 1] if i + 1 < len(tokens) else None)
            i += 1
            if t in ALONE or GENCODE_RE.fullmatch(t) or t in own or (t in sources and t == entry.get("file")):
                continue
            if (t in PAIRS and nxt in PAIRS[t]) or (t == "-o" and nxt and nxt.startswith(marker)):
                i += 1  # and its argument
            elif t == "--options-file" and nxt:
                extras += _include_problems(directory / nxt, cuda_root, root)
                i += 1
            else:
                extras.append(t)
    return extras


def _gencode(arch: str) -> str:
    """CMake's nvcc option for one of CMAKE_CUDA_ARCHITECTURES' entries:
    "90" (SASS and PTX), "90-real" (SASS), "75-virtual" (PTX)."""
    base, _, kind = arch.partition("-")
    codes = {"real": f"sm_{base}", "virtual": f"compute_{base}"}.get(kind, f"compute_{base},sm_{base}")
    return f"--generate-code=arch=compute_{base},code=[{codes}]"


def launcher_problems(lesson: Lesson, build: Path) -> list[str]:
    """The Makefile's compile rule runs nvcc itself, with no launcher in
    front (RULE_LAUNCH_COMPILE), whose wrapping no compile command shows."""
    make = Path(build) / lesson.dir / "CMakeFiles" / f"{lesson.target}.dir" / "build.make"
    if not make.exists():
        return []
    problems = []
    for line in make.read_text(encoding="utf-8", errors="replace").splitlines():
        if " -c " in line and "&&" in line and ".cu.o" in line:
            first = (line.split("&&", 1)[1].split() or [""])[0]
            if Path(first).name != "nvcc":
                problems.append(f"{lesson.target}'s compile rule runs {first} before nvcc (a compiler launcher), "
                                "which no compile command shows")
    return problems


def _cuda_root(build: Path) -> Path:
    """The toolkit the build compiles with, from the first compile command."""
    try:
        for e in _commands(build / "compile_commands.json"):
            first = shlex.split(e["command"])[:1]
            if first and Path(first[0]).name == "nvcc":
                return Path(first[0]).parent.parent
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        pass
    return Path("/usr/local/cuda")


LIBS = {"-lcudadevrt", "-lcudart_static", "-lrt", "-lpthread", "-ldl"}
LINKERS = {"g++", "c++", "clang++", "nvcc"}


def link_extras(lesson: Lesson, build: Path, cuda_root: Path | None = None) -> list[str]:
    """Every token of the lesson's link command (link.txt and the response
    files it names) beyond the course's own."""
    link = Path(build) / lesson.dir / "CMakeFiles" / f"{lesson.target}.dir" / "link.txt"
    if not (Path(build) / "compile_commands.json").exists() or not link.exists():
        return []  # no Makefile build to read (see compile_extras)
    try:
        tokens = shlex.split(link.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [f"{link}: unreadable ({e})"]
    cuda_root = cuda_root or _cuda_root(Path(build))
    cuda_real = cuda_root.resolve()
    extras = []
    if not tokens or Path(tokens[0]).name not in LINKERS:
        extras.append(f"linker {tokens[0] if tokens else '(none)'}")

    def cuda_path(p: str) -> bool:
        q = Path(p).resolve()
        return q == cuda_real or cuda_real in q.parents or cuda_root in Path(p).parents
    i = 1
    while i < len(tokens):
        t = tokens[i]
        if t.startswith("@") and t[1:].startswith(f"CMakeFiles/{lesson.target}.dir/"):
            own = {f"CMakeFiles/{lesson.target}.dir/{Path(s).name}.o" for s in lesson.sources}
            try:
                listed = shlex.split((Path(build) / lesson.dir / t[1:]).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as e:
                listed = [f"(unreadable {t[1:]}: {e})"]
            for r in listed:  # the objects of its own sources, and no other
                if not (r in own or r in LIBS or (r.startswith("/") and cuda_path(r))):
                    extras.append(r)
        elif t == "-o" and i + 1 < len(tokens) and Path(tokens[i + 1]).name == lesson.target:
            i += 1
        elif t.startswith("-L") and cuda_path(t[2:]):
            pass
        else:
            extras.append(t)
        i += 1
    return extras


def relink_problems(lesson: Lesson, build: Path) -> list[str]:
    """The executable in bin/ must be exactly what the lesson's link step
    (link.txt), run again, produces byte for byte: a post-build step or a
    copy by hand shows here."""
    folder = Path(build) / lesson.dir
    link = folder / "CMakeFiles" / f"{lesson.target}.dir" / "link.txt"
    binary = Path(build) / "bin" / lesson.target
    if not link.is_file():
        return [f"{link}: no link command to check {binary.name} against; record from a build that CMake's "
                "Makefile generator made (the presets' default)"]
    lines = [l for l in link.read_text(encoding="utf-8", errors="replace").splitlines() if l.strip()]
    try:
        tokens = shlex.split(lines[0]) if len(lines) == 1 else []
    except ValueError:
        tokens = []
    if "-o" not in tokens or tokens.index("-o") + 1 >= len(tokens):
        return [f"{link}: not one link command with an output (-o); cannot check {binary.name}"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / lesson.target
        tokens[tokens.index("-o") + 1] = str(out)
        try:
            proc = subprocess.run(tokens, cwd=folder, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return [f"{link}: the link step could not run again ({e})"]
        if proc.returncode != 0 or not out.is_file():
            return [f"{link}: the link step failed when run again: {proc.stderr.strip()[-300:]}"]
        same = binary.is_file() and out.read_bytes() == binary.read_bytes()
    if not same:
        return [f"{binary}: not the executable the link step produces (something changed it after the link: a "
                "post-build step, a copy); build it again from a clean build folder"]
    return []


# What CMake writes into a build folder and reads back at every configure
# (the cache, what it detected, the globs it verifies): nothing else there.
GENERATED_INPUT_RE = re.compile(r"CMakeCache\.txt"
                                r"|CMakeFiles/\d+\.\d+\.\d+[^/]*/CMake(?:System|[A-Za-z]+Compiler)\.cmake"
                                r"|CMakeFiles/VerifyGlobs\.cmake|CMakeFiles/cmake\.verify_globs")
LESSON_BUILD_FILE_RE = re.compile(r"lessons/[^/]+/CMakeLists\.txt")


def configure_problems(build: Path, root: Path | None = None) -> list[str]:
    """Every file the configure step read (CMAKE_MAKEFILE_DEPENDS) must be
    CMake's own or one the sources digest covers: a CMake file read from
    anywhere else (a CTestConfig.cmake, an add_subdirectory, a
    CMAKE_PROJECT_INCLUDE) can redefine how every lesson builds while the
    digest stays the same. (A generator other than Makefiles: nothing to
    read; relink_problems refuses such a build for a record.)"""
    root = Path(root or manifest.ROOT)
    build = Path(build)
    make = build / "CMakeFiles" / "Makefile.cmake"
    if not make.is_file():
        return []
    covered = set(digest.build_files(root))
    try:
        made = make.read_text(encoding="utf-8")
        listed = re.search(r"^set\(CMAKE_MAKEFILE_DEPENDS\n(.*?)^  \)", made, re.M | re.S)
        cache = (build / "CMakeCache.txt").read_text(encoding="utf-8", errors="replace")
    except (OSError, UnicodeDecodeError) as e:
        return [f"{make}: cannot read the configure step's inputs ({e})"]
    if not listed:
        return [f"{make}: no list of the configure step's inputs (CMAKE_MAKEFILE_DEPENDS); configure again"]
    # set()'s quoted arguments, unescaped
    inputs = [re.sub(r"\\(.)", r"\1", q) for q in re.findall(r'"((?:[^"\\]|\\.)*)"', listed.group(1))]
    m = re.search(r"^CMAKE_ROOT:INTERNAL=(.*)$", cache, re.M)
    cmake_root = Path(m.group(1)).resolve() if m else None
    # The tools' own CMake files are read only where the tools are on
    # (digest.TOOLS_ONLY), a build no record is made from (record refuses
    # one): they cannot shape a recorded binary.
    if re.search(r"^COURSE_TOOLS:BOOL=(?:ON|TRUE|1|YES)$", cache, re.M | re.I):
        covered |= {f"cmake/{name}.cmake" for name in digest.TOOLS_ONLY}
    real_root, real_build = root.resolve(), build.resolve()
    problems = []
    for name in inputs:
        path = Path(name) if Path(name).is_absolute() else build / name
        real = path.resolve()
        if cmake_root is not None and (real == cmake_root or cmake_root in real.parents):
            continue
        if real_build in real.parents and GENERATED_INPUT_RE.fullmatch(real.relative_to(real_build).as_posix()):
            continue
        if real_root in real.parents and real_build not in real.parents:
            rel = real.relative_to(real_root).as_posix()
            if rel in covered or LESSON_BUILD_FILE_RE.fullmatch(rel):
                continue
            problems.append(f"{rel}: read when the build was configured but outside the sources digest (a CMake "
                            "file can change how every lesson builds); name it in the digest's build files "
                            "(tools/coursetools/sources/digest.py) or stop reading it")
            continue
        problems.append(f"{name}: read when the build was configured, and neither CMake's own nor in the "
                        "repository (a CMAKE_PROJECT_INCLUDE or a toolchain file, say); configure the course "
                        "with its presets alone")
    return problems
