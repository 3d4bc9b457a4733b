"""Hostile and broken input: one test per way the tools once lost data,
accepted what no reviewer made, hung, or answered with a traceback. Each
is refused with its exit code and a one-line error, and nothing is lost.
(The evidence-forging cases are in test_evidence.py.)"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TOOLS, fake_lesson, listing, write
from coursetools import evidence as ev
from coursetools import fsutil, manifest, render, snippets
from coursetools.errors import Interrupted

GOOD = "// snippet: good\nint ok;\n// end snippet\n"


@pytest.fixture
def tree(in_tmp):
    """A small repository: a lesson's sources, a page, figures, records."""
    write(in_tmp / "lessons" / "day01_x" / "a.cu", GOOD)
    write(in_tmp / "lessons" / "day01_x" / "README.md.j2", "# x\n")
    write(in_tmp / "lessons" / "day01_x" / "figures" / "f.svg", "<svg/>")
    write(in_tmp / "evidence" / "records" / "day01_x" / "t.json", "{}")
    return in_tmp


def snapshot(root: Path) -> dict:
    return {p: (root / p).read_bytes() for p in listing(root) if (root / p).is_file()}


def one_line_error(r, code):
    assert r.code == code, (r.code, r.err)
    assert "Traceback" not in r.err
    assert r.err.strip() and all(": error: " in l or l.startswith(("course:", "evidence:")) or "error(s)" in l
                                 for l in r.err.strip().splitlines()), r.err


@pytest.mark.parametrize("out", ["lessons", "evidence/records", "lessons/day01_x", ".", "common", ".."])
def test_output_into_sources_is_refused_and_nothing_is_lost(course, tree, out):
    before = snapshot(tree)
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", out)
    one_line_error(r, 2)
    assert snapshot(tree) == before


def test_output_into_a_folder_the_tool_did_not_make_is_refused(course, tree):
    write(tree / "mine" / "notes.txt", "keep me")
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "mine")
    one_line_error(r, 2)
    assert (tree / "mine" / "notes.txt").read_text() == "keep me"


def test_output_at_a_file_or_an_unwritable_place(course, tree):
    write(tree / "afile", "x")
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "afile"), 2)
    assert (tree / "afile").read_text() == "x"
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "/proc/no-such/x"), 2)


def test_the_lesson_name_never_comes_from_a_folder(course, tree, tmp_path):
    """A source reached through a link whose folder is / gives no lesson
    name; it is refused (it leads outside), and the output is untouched."""
    link = tree / "lessons" / "day01_x" / "root.cu"
    os.symlink("/etc/hostname", link)
    assert course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out").code == 0
    before = snapshot(tree / "out")
    r = course("snippets", str(link), "--lesson", "day01_x", "-o", "out")
    one_line_error(r, 1)
    assert "leads outside the repository" in r.err
    assert snapshot(tree / "out") == before
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "-o", "out"), 2)  # no --lesson given
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "--lesson", "../x", "-o", "out"), 2)


def test_a_fifo_or_a_device_is_refused_without_hanging(course, tree):
    fifo = tree / "lessons" / "day01_x" / "pipe.cu"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    r = course("snippets", str(fifo), "--lesson", "day01_x", "-o", "out")
    assert time.monotonic() - t0 < 5
    one_line_error(r, 1)
    assert "is a FIFO" in r.err


def test_files_get_the_umasks_modes(course, tree):
    old = os.umask(0o022)
    try:
        assert course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out").code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tree / "out" / "day01_x" / "good.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((tree / "out" / "day01_x").stat().st_mode) == 0o755
    mask = os.umask(0)
    os.umask(mask)
    fsutil.write_atomic(tree / "page.md", "x")
    assert stat.S_IMODE((tree / "page.md").stat().st_mode) == 0o666 & ~mask


def test_an_interrupted_write_leaves_the_old_output_and_no_temporaries(course, tree, monkeypatch):
    assert course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out").code == 0
    before = snapshot(tree / "out")
    write(tree / "lessons" / "day01_x" / "a.cu", GOOD.replace("ok", "changed"))
    calls = {"n": 0}
    real = Path.write_bytes

    def interrupted(self, data):
        calls["n"] += 1
        if calls["n"] == 2:
            raise Interrupted(15)  # what SIGTERM raises
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupted)
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out")
    assert r.code == 130 and "interrupted" in r.err
    assert snapshot(tree / "out") == before
    assert [p.name for p in (tree / "out").iterdir() if p.name.startswith(".") and p.name != fsutil.STAMP] == []


def test_sigterm_runs_the_cleanup(tmp_path):
    """A real SIGTERM: the handler turns it into a cleanup and exit 130."""
    script = (
        "import os, signal, sys, time\n"
        f"sys.path.insert(0, {str(TOOLS)!r})\n"
        "from coursetools import cli\n"
        "import coursetools.cli as c\n"
        "def slow(args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(5)\n"
        "    return 0\n"
        "c.cmd_lint = slow\n"
        "sys.exit(cli.main(['lint']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 130 and "interrupted" in proc.stderr


@pytest.mark.parametrize("line", [b"/" * 1_000_000, b"int a = b + c; " * 70_000, b'"' * 1_000_000,
                                  b"// x" * 250_000, b'R"x(' * 250_000])
def test_a_one_megabyte_line_scans_in_linear_time(line):
    # A scanner quadratic in the line length needs minutes for a megabyte;
    # a linear one needs well under a second. CPU time, not wall time: CTest
    # runs this beside the other tests on a two-core CI machine.
    data = b"int a;\n" + line + b"\nint b;\n"
    t0 = time.process_time()
    snippets.parse_source("big.cu", data)
    assert time.process_time() - t0 < 1.0


def test_nul_bytes_are_refused_and_a_bom_is_accepted():
    _, diags = snippets.parse_source("a.cu", b"int a;\n// snippet: s\nint\x00 b;\n// end snippet\n")
    assert "a.cu:3:4: error: NUL byte" in str(diags[0])
    snips, diags = snippets.parse_source("a.cu", b"\xef\xbb\xbf" + GOOD.encode())
    assert diags == [] and snips[0].name == "good"


def test_markers_inside_raw_strings_are_data():
    src = 'const char* doc = R"(\n// snippet: fake\nint not_code;\n// end snippet\n)";\n' + GOOD
    snips, diags = snippets.parse_source("a.cu", src.encode())
    assert diags == [] and [s.name for s in snips] == ["good"]


def test_a_snippet_name_too_long_for_a_file_is_an_error(course, tree):
    write(tree / "lessons" / "day01_x" / "a.cu", "// snippet: " + "a" * 300 + "\nint x;\n// end snippet\n")
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out")
    one_line_error(r, 1)
    assert "expected at most 64" in r.err


@pytest.fixture
def page_repo(in_tmp, monkeypatch):
    write(in_tmp / "common" / "course.cuh", "#pragma once\n")
    write(in_tmp / "lessons" / "day99_fake" / "fake.cu", GOOD)
    write(in_tmp / "research" / "REVIEW-PROCESS.md", "# r\n")
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(in_tmp / "evidence"))
    lesson = fake_lesson(in_tmp)
    monkeypatch.setattr(manifest, "load", lambda path=None: [lesson])
    monkeypatch.setattr(render, "readme_with_table", lambda lessons: None)
    return in_tmp, lesson


@pytest.mark.parametrize("text", [
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ 1/0 }}",
    "{% include 'nope.md' %}",
    "{{ page.plot('../../..', 't', 'gbps') }}",
    "{{ page.state.record }}",
])
def test_a_hostile_template_is_an_error_with_its_line(course, page_repo, text):
    root, lesson = page_repo
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    r = course("render")
    one_line_error(r, 1)
    assert "README.md.j2:" in r.err
    assert not (root / "lessons" / "day99_fake" / "README.md").exists()
    assert not list(Path("/").glob("*.svg"))


@pytest.mark.parametrize("content, words", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "holds a JSON list, not an object"),
    ('{"promoted": [], "history": []}', "expected 'promoted' (an object)"),
    ('{"promoted": {"day99_fake": {"lesson": 3}}, "history": []}', "is missing or not a string"),
])
def test_malformed_promotions_exit_4_with_one_line(course, page_repo, content, words):
    root, lesson = page_repo
    write(root / "evidence" / "promoted.json", content)
    r = course("evidence", "verify")
    one_line_error(r, 4)
    assert "promoted.json" in r.err and words in r.err


def test_a_record_that_is_a_list_exits_4(course, page_repo):
    root, lesson = page_repo
    write(root / "evidence" / "records" / "day99_fake" / "t1.json", "[]")
    r = course("evidence", "compare", "day99_fake", "t1", "t1")
    one_line_error(r, 4)
    assert "t1.json" in r.err


def test_promote_with_a_path_for_a_tag_is_refused(course, page_repo, tmp_path):
    r = course("evidence", "promote", "--lesson", "day99_fake", "--tag", "../../x", "--by", "Me", "--key", "k")
    one_line_error(r, 2)
    assert "not valid" in r.err


def test_record_runs_only_the_builds_own_binary(course, page_repo):
    r = course("evidence", "record", "--lesson", "day99_fake", "--tag", "t1", "--binary", "/bin/true")
    one_line_error(r, 2)
    assert "unrecognized arguments: --binary" in r.err


def test_a_lesson_toml_error_names_its_line(page_repo):
    root, _ = page_repo
    bad = write(root / "lessons" / "day99_fake" / "lesson.toml", "[page]\nconstants = [1, 2\n")
    with pytest.raises(Exception) as e:
        manifest.load_lesson_info(bad, "lessons/day99_fake/lesson.toml")
    assert "lessons/day99_fake/lesson.toml: error: Unclosed array" in str(e.value)
    write(bad, "[page]\nconstants = [1, 2]\nscreenshot = maybe\n")
    with pytest.raises(Exception, match=r"lessons/day99_fake/lesson.toml:3:14: error: "):
        manifest.load_lesson_info(bad, "lessons/day99_fake/lesson.toml")
    write(bad, "[page]\nconstant = 3\n")
    with pytest.raises(Exception, match="page.constant is not a known key; expected one of: constants"):
        manifest.load_lesson_info(bad, "lessons/day99_fake/lesson.toml")


del json, ev
