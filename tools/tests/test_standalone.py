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
def test_standalone_snippets_equal_the_lesson(lesson):
    text = standalone.standalone_text(lesson)
    assert "#include \"course" not in text  # course.cuh and every part inlined
    alone, d1 = snippets.parse_source("standalone.cu", text.encode())
    orig, d2 = snippets.extract([str(manifest.ROOT / s) for s in (*lesson.sources, *manifest.header_files())],
                                manifest.ROOT, lesson.target)
    assert d1 == [] and d2 == []
    assert {s.name: s.lines for s in alone} == {s.name: s.lines for s in orig}


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_standalone_files_compile_alone(tmp_path):
    procs = []
    for lesson in lessons():
        text = standalone.standalone_text(lesson)
        src = tmp_path / f"{lesson.target}.cu"
        src.write_text(text)  # no common/ beside it: it must stand alone
        cmd = [NVCC, *lesson.nvcc_flags.split(), "-c", str(src), "-o", str(tmp_path / f"{lesson.target}.o")]
        procs.append((lesson.target, subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, cwd=tmp_path)))
    for name, p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"{name}: {err}"
