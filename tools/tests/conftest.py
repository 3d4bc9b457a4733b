"""Shared fixtures: the tools run in-process, on files in a temporary
folder that stands in for the repository, exactly as a course author would
run them from a shell."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

from coursetools import cli  # noqa: E402
from coursetools.sources import manifest  # noqa: E402
from coursetools.sources.manifest import Lesson, LessonInfo  # noqa: E402


class Run:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def course(capsys):
    """Runs `course ARGS...` and returns its exit code, stdout, stderr."""

    def run(*args):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as e:  # --help
            code = e.code
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """A temporary folder that is the repository root for the tools (its
    build folder too: nothing here writes into the real build)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(manifest, "ROOT", tmp_path)  # every tool reads the root from there
    monkeypatch.setenv("COURSE_BUILD_DIR", str(tmp_path / "build"))
    return tmp_path


def packed(text: str) -> bytes:
    """Text as a record file holds it: bzip2-compressed (record/format.py)."""
    import bz2
    return bz2.compress(text.encode("utf-8"))


def read_record(path: Path) -> dict:
    from coursetools.record import format as record_format
    return record_format.load_record(path)


def write_record(path: Path, rec: dict) -> None:
    """A record written over in place, as a forger with the file would."""
    from coursetools.record import format as record_format
    path.write_bytes(record_format.encode(rec))


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def listing(path: Path) -> list[str]:
    if not path.exists():
        return []
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def fake_lesson(root: Path, target="day99_fake", source="fake.cu", min_cc="9.0", info=None, binary="") -> Lesson:
    return Lesson(
        target=target, day=int(target[3:5]), topic="Fake", dir=f"lessons/{target}", min_cc=min_cc,
        sources=(f"lessons/{target}/{source}",), binary=binary or str(root / "build" / "bin" / target),
        compile_command="nvcc x.cu", build_command=f"cmake --build build --target {target}",
        run_command=f"build/bin/{target}", test_args=(), nvcc_flags="-O3 -arch=sm_90", architectures=("90",),
        info=info or LessonInfo(),
    )


@pytest.fixture(scope="session")
def reviewer_key(tmp_path_factory):
    """A reviewer's key pair made for the tests (never the course's)."""
    if not shutil.which("ssh-keygen"):
        pytest.skip("ssh-keygen is not installed")
    d = tmp_path_factory.mktemp("keys")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "reviewer"), "-C", "test"],
                   check=True)
    return d / "reviewer"


@pytest.fixture(autouse=True)
def evidence_state_as_the_build_writes_it(request, monkeypatch, tmp_path):
    """The pages, the site and compare read build/evidence-state.json,
    which the build writes before it renders (cmake/CourseTools.cmake).
    Tests run the tools without the build, so here the state is written
    afresh just before each read, as the build would have, into the test's
    own folder: never over the real build's file, which the other ctest
    tests running beside this one read (a state of a test's few lessons
    there made them fail). Tests of the state file itself (marked
    `real_state`) read it as it is."""
    if request.node.get_closest_marker("real_state"):
        return
    from coursetools.evidence import state as ev_state
    from coursetools.evidence import verify

    original = ev_state.load
    own = tmp_path / "evidence-state-of-this-test.json"

    def load(lessons, path=None, check=True):
        path = path or own
        ev_state.write(verify.lesson_states(lessons), lessons, path)
        return original(lessons, path, check)
    monkeypatch.setattr(ev_state, "load", load)


def pytest_configure(config):
    config.addinivalue_line("markers", "real_state: read the evidence state file as it is (no fresh write)")


del os


def page_repo_with(in_tmp, monkeypatch, source: str = "int x;\n", readme: bool = False):
    """A repository of one fake lesson whose page renders: the shared
    header, the lesson's source, the review process, its own evidence."""
    from coursetools.pages import render

    write(in_tmp / "common" / "course.cuh", "#pragma once\n")
    write(in_tmp / "lessons" / "day99_fake" / "fake.cu", source)
    write(in_tmp / "research" / "REVIEW-PROCESS.md", "# r\n")
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(in_tmp / "evidence"))
    monkeypatch.setenv("COURSE_BUILD_DIR", str(in_tmp / "build"))
    lesson = fake_lesson(in_tmp)
    monkeypatch.setattr(manifest, "load", lambda path=None: [lesson])
    if not readme:  # the README's day table left out, unless the test is about it
        monkeypatch.setattr(render, "readme_with_table", lambda lessons: None)
    return in_tmp, lesson
