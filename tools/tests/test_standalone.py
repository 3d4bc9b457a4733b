"""The Compiler Explorer files compile alone, and their snippet regions
are the lesson's, character for character."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from coursetools import manifest, snippets, standalone

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


def lessons():
    try:
        return manifest.load()
    except Exception:  # no build folder: nothing to check here
        return []


@pytest.mark.parametrize("lesson", lessons(), ids=lambda l: l.target)
def test_standalone_snippets_equal_the_lesson(lesson):
    text, diags = standalone.standalone_text(lesson)
    assert diags == []
    assert '#include "course.cuh"' not in text
    alone, d1 = snippets.parse_source("standalone.cu", text.encode())
    orig, d2 = snippets.parse_source(lesson.sources[0], (manifest.ROOT / lesson.sources[0]).read_bytes())
    assert d1 == [] and d2 == []
    assert {s.name: s.lines for s in alone} == {s.name: s.lines for s in orig}


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_standalone_files_compile_alone(tmp_path):
    procs = []
    for lesson in lessons():
        text, _ = standalone.standalone_text(lesson)
        src = tmp_path / f"{lesson.target}.cu"
        src.write_text(text)  # no common/ beside it: it must stand alone
        cmd = [NVCC, "-std=c++17", "-O1", "-arch=sm_90", "-c", str(src), "-o", str(tmp_path / f"{lesson.target}.o")]
        procs.append((lesson.target, subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, cwd=tmp_path)))
    for name, p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"{name}: {err}"
