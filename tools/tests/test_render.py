"""Lesson pages: unknown snippets fail with a did-you-mean and a line,
--check exits 3 on a stale page, and no output appears without evidence."""

from __future__ import annotations

import pytest

from conftest import write
from coursetools import evidence as ev
from coursetools import manifest, render
from coursetools.manifest import Lesson

SRC = '#include "course.cuh"\n// snippet: cluster-launch\nint launch;\n// end snippet\n'


@pytest.fixture
def lesson(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    write(root / "common" / "course.cuh", "#pragma once\n")
    write(root / "lessons" / "day99_fake" / "fake.cu", SRC)
    write(root / "research" / "REVIEW-PROCESS.md", "# review\n")
    for mod in (manifest, render, ev):
        monkeypatch.setattr(mod, "ROOT", root)
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(root / "evidence"))
    return Lesson(
        target="day99_fake", day=99, topic="Fake", dir="lessons/day99_fake", min_cc="9.0",
        sources=("lessons/day99_fake/fake.cu",), binary="", compile_command="nvcc x.cu",
        build_command="cmake --build build --target day99_fake", run_command="build/bin/day99_fake",
        test_args=(), nvcc_flags="",
    )


def template(lesson, text):
    write(lesson.path / "README.md.j2", text)


def test_unknown_snippet_suggests_the_near_name(lesson):
    template(lesson, "# {{ lesson.topic }}\n\n{{ snippet('cluster-lunch') }}\n")
    files, diags = render.render_lesson(lesson)
    assert files == {}
    assert len(diags) == 1
    text = str(diags[0])
    assert text.startswith("lessons/day99_fake/README.md.j2:3:4: error: unknown snippet 'cluster-lunch'")
    assert "did you mean 'cluster-launch'?" in text


def test_page_has_snippet_commands_and_unverified_notice(lesson):
    template(lesson, "# {{ lesson.topic }}\n\n{{ snippet('cluster-launch') }}\n`{{ lesson.build_command }}`\n\n{{ page.expected_output() }}")
    files, diags = render.render_lesson(lesson)
    assert diags == []
    page = files[lesson.path / "README.md"]
    assert "[`lessons/day99_fake/fake.cu`, lines 3\u20133](fake.cu#L3-L3)" in page
    assert "cmake --build build --target day99_fake" in page
    assert "**UNVERIFIED.**" in page and "no record has been promoted" in page


def test_template_syntax_error_has_its_line(lesson):
    template(lesson, "line one\n{% if %}\n")
    _, diags = render.render_lesson(lesson)
    assert str(diags[0]).startswith("lessons/day99_fake/README.md.j2:2:1: error: template syntax")


def test_check_exits_3_when_the_page_is_stale(course, lesson, monkeypatch):

    template(lesson, "# {{ lesson.topic }}\n")
    monkeypatch.setattr(manifest, "load", lambda path=None: [lesson])
    assert course("render", "--check").code == 3
    assert course("render").code == 0
    assert course("render", "--check").code == 0
    template(lesson, "# {{ lesson.topic }} changed\n")
    r = course("render", "--check")
    assert r.code == 3 and "README.md: out of date" in r.err
