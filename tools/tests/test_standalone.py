"""The Compiler Explorer files compile alone, and their snippet regions
are the lesson's, character for character."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from coursetools.sources import manifest, snippets, standalone

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


def lessons():
    try:
        return manifest.load()
    except Exception:  # no build folder: nothing to check here
        return []


@pytest.mark.parametrize("lesson", lessons(), ids=lambda l: l.target)
def test_a_standalone_file_is_its_source_with_the_header_inlined(lesson):
    """Each day's file: the day's source as it is, the shared header
    inlined where it includes it, and the snippet regions the lesson's,
    character for character."""
    text = standalone.standalone_text(lesson)
    assert "#include \"course" not in text  # course.cuh and every part inlined
    src = (manifest.ROOT / lesson.sources[0]).read_text()
    head, _, rest = src.partition('#include "course.cuh"\n')
    body = text.split("\n", 2)[2]  # after the two lines that say what the file is and how it compiles
    assert body.startswith(head) and body.endswith(rest) and f"// ---- end {standalone.HEADER}\n" + rest in body
    alone, d1 = snippets.parse_source("standalone.cu", text.encode())
    orig, d2 = snippets.extract([str(manifest.ROOT / s) for s in (*lesson.sources, *manifest.header_files())],
                                manifest.ROOT)
    assert d1 == [] and d2 == []
    assert {s.name: s.lines for s in alone} == {s.name: s.lines for s in orig}


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_a_standalone_file_compiles_alone(tmp_path):
    """Every day's file is its own source around the same inlined header
    (the test above), and each day's source compiles with that header in
    the build: so one day's file compiling with no common/ beside it shows
    the inlining sound for all. The smallest built day's, so that the
    suite's cost does not grow with the days."""
    built = [l for l in lessons() if l.built]
    if not built:
        pytest.skip("no day is built here")
    lesson = min(built, key=lambda l: (manifest.ROOT / l.sources[0]).stat().st_size)
    src = tmp_path / f"{lesson.target}.cu"
    src.write_text(standalone.standalone_text(lesson))  # no common/ beside it: it must stand alone
    proc = subprocess.run([NVCC, *lesson.nvcc_flags.split(), "-c", str(src), "-o", str(tmp_path / "alone.o")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, f"{lesson.target}: {proc.stderr}"


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_the_pages_compile_alone_command_builds_the_courses_architectures_and_links_the_libraries(tmp_path):
    """The page's "Alone:" command is the program the evidence measured:
    the course's architectures (PTX for the minimum, machine code for the
    reference GPU), whatever this build chose, and the day's LIBRARIES
    linked (a cuBLAS day's command once failed with an undefined
    cublasSgeam)."""
    import json
    entry = {"target": "day30_t", "day": 30, "topic": "t", "dir": "lessons/day30_t", "min_cc": "7.5",
             "sources": ["lessons/day30_t/t.cu"], "binary": "b", "architectures": ["86"],
             "course_architectures": ["75-virtual", "90-real"], "libraries": ["cublas"],
             "build_command": "cmake --build build --target day30_t", "run_command": "build/bin/day30_t"}
    (tmp_path / "common").mkdir()
    (tmp_path / "lessons" / "day30_t").mkdir(parents=True)
    (tmp_path / "lessons" / "day30_t" / "t.cu").write_text(
        "#include <cublas_v2.h>\n__global__ void k() {}\n"
        "int main() { cublasHandle_t h; k<<<1, 1>>>(); return cublasCreate(&h) == CUBLAS_STATUS_SUCCESS ? 0 : 1; }\n")
    (tmp_path / "m.json").write_text(json.dumps({"lessons": [entry]}))
    (lesson,) = manifest.load(tmp_path / "m.json")
    cmd = lesson.compile_command.split()
    assert "arch=compute_75,code=compute_75" in cmd and "arch=compute_90,code=sm_90" in cmd and "-lcublas" in cmd
    proc = subprocess.run([NVCC, *cmd[1:]], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    from coursetools.binaries import sass
    assert sass.machine_archs(tmp_path / "day30_t") == [90]  # the reference GPU's machine code, not this build's 86
