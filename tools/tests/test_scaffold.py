"""`course new`: a lesson in the house shape, formatted, refusing to
overwrite or to reuse a day."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursetools.sources import lint, manifest, scaffold


@pytest.fixture
def root(in_tmp, monkeypatch):
    monkeypatch.setattr(manifest, "ROOT", in_tmp)
    (in_tmp / "lessons").mkdir()
    return in_tmp


def test_new_writes_a_lesson(course, root):
    r = course("new", "day30_vector_add")
    assert r.code == 0, r.err
    folder = root / "lessons" / "day30_vector_add"
    assert sorted(p.name for p in folder.iterdir()) == ["CMakeLists.txt", "README.md.j2", "lesson.toml", "vector_add.cu"]
    cmake = (folder / "CMakeLists.txt").read_text()
    assert "course_add_lesson(day30_vector_add" in cmake and "DAY 30" in cmake and 'TOPIC "Vector add"' in cmake
    source = (folder / "vector_add.cu").read_text()
    # Its name comes from CMake (COURSE_LESSON), as its minimum GPU does: the
    # program does not repeat it.
    assert "build/bin/day30_vector_add" in source and '"day30_vector_add"' not in source


def test_days_from_the_skeleton_share_no_snippet_name(course, root):
    """Snippet names are course-wide: a second day from the skeleton (even
    of the same topic) takes none of the first's, and its page names its own."""
    from coursetools.sources import snippets
    for name in ("day30_vector_add", "day31_vector_add"):
        assert course("new", name).code == 0
    found, diags = snippets.extract(sorted(str(p) for p in (root / "lessons").glob("day*/*.cu")), root)
    assert diags == [] and sorted(s.name for s in found) == ["day30-add-kernel", "day31-add-kernel"]
    assert 'snippet("day31-add-kernel")' in (root / "lessons" / "day31_vector_add" / "README.md.j2").read_text()


@pytest.mark.parametrize("args, words", [
    (["Day30"], "not a lesson name"),
    (["day30_"], "not a lesson name"),
    (["day30_x", "--min-cc", "nine"], "not a compute capability"),
    (["day30_x", "--topic", 'a "quoted" topic'], "may hold letters, digits"),
    (["day32_semi", "--topic", "a;b"], "may hold letters, digits"),
    (["day031_alpha"], "without leading zeros"),
    (["day0_zero"], "without leading zeros"),
])
def test_bad_names_are_refused(course, root, args, words):
    r = course("new", *args)
    assert r.code == 64 and words in r.err


def test_an_existing_lesson_or_day_is_never_overwritten(course, root):
    assert course("new", "day30_vector_add").code == 0
    before = (root / "lessons" / "day30_vector_add" / "vector_add.cu").read_text()
    assert course("new", "day30_vector_add").code == 64
    r = course("new", "day30_other")
    assert r.code == 64 and "day 30 already exists" in r.err
    (root / "lessons" / "day031_alpha").mkdir()  # a folder made by hand, with a leading zero
    r = course("new", "day31_beta")
    assert r.code == 64 and "day 31 already exists" in r.err
    assert (root / "lessons" / "day30_vector_add" / "vector_add.cu").read_text() == before


@pytest.mark.skipif(lint.clang_format_binary() is None, reason="clang-format is not installed")
@pytest.mark.parametrize("name", ["day30_vector_add", "day101_a_much_longer_topic_nam"])
def test_the_new_program_is_formatted(course, root, name):
    assert course("new", name, "--topic", "A topic long enough to wrap its comment line onto a second one").code == 0
    src = next((root / "lessons" / name).glob("*.cu"))
    style = Path(__file__).resolve().parents[2] / ".clang-format"
    proc = subprocess.run([lint.clang_format_binary(), f"--style=file:{style}", "--dry-run", "--Werror", str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_the_new_program_compiles_against_the_course_header_and_keeps_the_one_header_rule(course, root,
                                                                                         monkeypatch):
    """The skeleton is the first lesson a new author reads: it must build
    as written, on the real header, and pass the one-header lint; and its
    page must select only rows its program lists (--list, which needs no
    GPU)."""
    from conftest import fake_lesson
    from coursetools.pages import listed, render
    from coursetools.sources.lessoninfo import load_lesson_info

    assert course("new", "day30_vector_add").code == 0
    real = Path(__file__).resolve().parents[2]
    shutil.copytree(real / "common", root / "common")
    assert lint.one_header(root) == []
    src = root / "lessons" / "day30_vector_add" / "vector_add.cu"
    binary = root / "build" / "bin" / "day30_vector_add"
    binary.parent.mkdir(parents=True)
    proc = subprocess.run(["nvcc", "-std=c++20", "-arch=sm_90", "-DCOURSE_MIN_CC=90", "-DCOURSE_LESSON=day30_vector_add",
                           "-Werror", "all-warnings",
                           f"-I{root / 'common'}", str(src), "-o", str(binary)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (root / "research").mkdir()
    (root / "research" / "REVIEW-PROCESS.md").write_text("# r\n")
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(root / "evidence"))
    folder = root / "lessons" / "day30_vector_add"
    info = load_lesson_info(folder / "lesson.toml", "lessons/day30_vector_add/lesson.toml")
    lesson = fake_lesson(root, target="day30_vector_add", source="vector_add.cu", info=info, binary=str(binary))
    monkeypatch.setattr(manifest, "load", lambda path=None: [lesson])
    diags, said = listed.check(lesson)
    assert diags == [] and "rows" in said, [str(d) for d in diags]
    # and a misspelt row name in it is named at its line
    page = folder / render.TEMPLATE
    text = page.read_text()
    assert '"add"' in text
    page.write_text(text.replace('"add"', '"ad"', 1))
    diags, _ = listed.check(lesson)
    assert len(diags) == 1 and "--list" in diags[0].message and diags[0].line > 0


def test_the_new_page_passes_the_prose_check(course, root, monkeypatch):
    """Every test at once includes the prose check of its page."""
    from conftest import fake_lesson
    from coursetools.pages import prose, render
    from coursetools.sources.lessoninfo import load_lesson_info

    assert course("new", "day30_vector_add").code == 0
    shutil.copytree(Path(__file__).resolve().parents[2] / "common", root / "common")
    (root / "research").mkdir()
    (root / "research" / "REVIEW-PROCESS.md").write_text("# r\n")
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(root / "evidence"))
    folder = root / "lessons" / "day30_vector_add"
    info = load_lesson_info(folder / "lesson.toml", "lessons/day30_vector_add/lesson.toml")
    lesson = fake_lesson(root, target="day30_vector_add", source="vector_add.cu", info=info)
    monkeypatch.setattr(manifest, "load", lambda path=None: [lesson])
    monkeypatch.setattr(render, "readme_with_table", lambda lessons: None)
    assert [str(p) for p in prose.check([lesson])] == []


del sys


def test_an_authors_check_of_one_day_runs_every_check_of_that_day(course):
    # A day this build makes (one configured for an older GPU leaves some out).
    built = [l for l in manifest.load() if l.built]
    if not built:
        pytest.skip("this build makes no day")
    r = course("check", built[0].target)
    assert r.code == 0, r.err
    for step in ("built", "snippet(s)", "page rendered", "prose read", "machine-code pattern(s)",
                 f"ctest --preset course -R {built[0].target}"):
        assert step in r.out, r.out
    bad = course("check", "day99_nonexistent")
    assert bad.code == 64 and "day99_nonexistent" in bad.err


@pytest.mark.skipif(lint.clang_format_binary() is None, reason="clang-format is not installed")
def test_one_days_format_check_names_only_that_day_and_the_fix(tmp_path):
    """`course check DAY` runs the format check on the day's sources alone,
    so an author learns of it before ctest's `format` test."""
    import shutil as sh
    from coursetools.errors import SourceError
    sh.copy(Path(__file__).resolve().parents[2] / ".clang-format", tmp_path / ".clang-format")
    good, bad = tmp_path / "good.cu", tmp_path / "bad.cu"
    good.write_text("int main() {\n    return 0;\n}\n")
    bad.write_text("int   main( ){return 0 ;}\n")
    version, count = lint.check_format(tmp_path, only=[good])
    assert count == 1 and version
    with pytest.raises(SourceError) as e:
        lint.check_format(tmp_path, only=[good, bad])
    said = [str(d) for d in e.value.diagnostics]
    assert any("bad.cu" in d for d in said) and not any("good.cu" in d for d in said)
    assert said[-1].endswith("run: tools/course format --fix")
