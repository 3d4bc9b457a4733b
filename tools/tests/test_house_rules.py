"""The one-header rule, on planted violations and on the real course."""

from __future__ import annotations

from conftest import write
from coursetools import lint, manifest, snippets


def tree(tmp_path, lesson_text):
    write(tmp_path / "common" / "course.cuh", "#pragma once\n")
    write(tmp_path / "lessons" / "day01_x" / "x.cu", lesson_text)
    return tmp_path


def test_a_lesson_defining_cuda_check_fails(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\n#define CUDA_CHECK(x) x\n')
    diags = lint.one_header(root)
    assert len(diags) == 1 and str(diags[0]).startswith("lessons/day01_x/x.cu:2:1: error: defines CUDA_CHECK")


def test_a_lesson_defining_time_kernel_fails(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\ntemplate <typename F>\nfloat timeKernel(F f) {\n  return 0;\n}\n')
    diags = lint.one_header(root)
    assert len(diags) == 1 and "defines a function timeKernel" in str(diags[0])


def test_calling_time_kernel_is_fine(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\nauto t = course::timeKernel([&] { go(); }, mode);\n')
    assert lint.one_header(root) == []


def test_a_lesson_without_the_header_fails(tmp_path):
    root = tree(tmp_path, "int main() {}\n")
    assert "does not include" in str(lint.one_header(root)[0])


def test_a_second_header_fails(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\n')
    write(root / "common" / "extra.cuh", "")
    assert "exactly one header" in str(lint.one_header(root)[0])


def test_the_real_course_keeps_the_rule():
    assert lint.one_header() == []


def test_day77_reuses_day24_block_kernel_verbatim():
    """Day 77 says it uses day 24's two-loads block kernel: the two
    snippets must be the same text."""
    root = manifest.ROOT
    by_lesson, diags = snippets.extract_files(snippets.lesson_sources(root), root)
    assert diags == []
    d24 = {s.name: s for s in by_lesson["day24_reduction"]}["two-loads-block"]
    d77 = {s.name: s for s in by_lesson["day77_cluster_reduction"]}["two-loads-block"]
    assert d24.lines == d77.lines
