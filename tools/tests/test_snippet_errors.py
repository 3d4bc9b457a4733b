"""Every kind of bad input: its exit code (1), its line and column, the
expected form named in the message, and nothing written."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import listing, write

GOOD = "// snippet: good\nint ok;\n// end snippet\n"

CASES = {
    # name: (source text, line, col, words the message must contain)
    "unterminated": ("int a;\n  // snippet: open-one\nint b;\n", 2, 3, ["never closed", "// end snippet"]),
    "end-without-open": ("int a;\n// end snippet\n", 2, 1, ["no open region", "// snippet: NAME"]),
    "named-end-mismatch": (
        "// snippet: outer\n// snippet: inner\nint x;\n// end snippet: outer\n// end snippet\n// end snippet\n",
        4,
        1,
        ["does not match", "'inner'", "// end snippet: inner"],
    ),
    "no-space": ("//snippet:x\nint a;\n// end snippet\n", 1, 1, ["well-formed", "// snippet: NAME"]),
    "misspelled": ("// snipet: x\nint a;\n// end snippet\n", 1, 1, ["'snipet' is not 'snippet'"]),
    "capital": ("// Snippet: x\nint a;\n// end snippet\n", 1, 1, ["'Snippet' is not 'snippet'"]),
    "block-comment": ("/* snippet: x */\nint a;\n", 1, 1, ["inside a /* */ comment"]),
    "block-comment-multiline": ("/*\n * snippet: x\n */\nint a;\n", 2, 2, ["inside a /* */ comment"]),
    "name-with-space": ("// snippet: two words\nint a;\n// end snippet\n", 1, 1, ["name 'two words' is not valid", "lower-case"]),
    "name-with-capitals": ("// snippet: Loud\nint a;\n// end snippet\n", 1, 1, ["name 'Loud' is not valid"]),
    "after-code": ("int a; // snippet: x\n", 1, 8, ["after code"]),
    "empty-region": ("// snippet: empty\n\n// end snippet\n", 1, 1, ["'empty' is empty", "at least one line"]),
    "mixed-tabs-spaces": ("// snippet: mixed\n\tint a;\n    int b;\n// end snippet\n", 3, 1, ["mixes tabs and spaces"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_reports_and_writes_nothing(course, in_tmp, name):
    text, line, col, words = CASES[name]
    src = write(in_tmp / "lessons" / "day01_x" / "bad.cu", text)
    out = in_tmp / "out"
    r = course("snippets", src, "--lesson", "day01_x", "-o", out)
    assert r.code == 1, r.err
    assert f"lessons/day01_x/bad.cu:{line}:{col}: error:" in r.err, r.err
    for w in words:
        assert w in r.err, (w, r.err)
    assert listing(out) == []


def test_duplicate_names_the_other_place(course, in_tmp):
    src = write(in_tmp / "lessons" / "day01_x" / "a.cu", GOOD + "\n" + GOOD)
    r = course("snippets", src, "--lesson", "day01_x", "-o", in_tmp / "out")
    assert r.code == 1
    assert "lessons/day01_x/a.cu:5:1: error: duplicate snippet name 'good'" in r.err
    assert "also defined at lessons/day01_x/a.cu:1" in r.err
    assert listing(in_tmp / "out") == []


def test_duplicate_across_files_of_one_lesson(course, in_tmp):
    a = write(in_tmp / "lessons" / "day01_x" / "a.cu", GOOD)
    b = write(in_tmp / "lessons" / "day01_x" / "b.cu", GOOD)
    r = course("snippets", a, b, "--lesson", "day01_x", "-o", in_tmp / "out")
    assert r.code == 1
    assert "b.cu:1:1: error: duplicate snippet name 'good'" in r.err


def test_not_utf8(course, in_tmp):
    src = write(in_tmp / "lessons" / "day01_x" / "latin1.cu", b"// snippet: s\nint caf\xe9;\n// end snippet\n")
    r = course("snippets", src, "--lesson", "day01_x", "-o", in_tmp / "out")
    assert r.code == 1
    assert "latin1.cu:2:8: error: source is not valid UTF-8 (byte 0xe9)" in r.err
    assert listing(in_tmp / "out") == []


def test_missing_file(course, in_tmp):
    r = course("snippets", in_tmp / "lessons" / "nope.cu", "--lesson", "day01_x", "-o", in_tmp / "out")
    assert r.code == 1
    assert "nope.cu: error: no such file" in r.err


def test_every_error_in_every_file_before_exit(course, in_tmp):
    """Two files, three errors: all three reported, and the good file's
    artifact is not written either."""
    good = write(in_tmp / "lessons" / "day01_x" / "good.cu", GOOD)
    bad = write(in_tmp / "lessons" / "day01_x" / "bad.cu", "// end snippet\n// snipet: q\n// snippet: open\n")
    out = in_tmp / "out"
    r = course("snippets", good, bad, "--lesson", "day01_x", "-o", out)
    assert r.code == 1
    assert r.err.count(": error: ") == 3, r.err
    assert listing(out) == []


def test_bad_run_leaves_previous_artifacts_untouched(course, in_tmp):
    src = write(in_tmp / "lessons" / "day01_x" / "a.cu", GOOD)
    out = in_tmp / "out"
    assert course("snippets", src, "--lesson", "day01_x", "-o", out).code == 0
    before = {p: (out / p).read_bytes() for p in listing(out) if (out / p).is_file()}
    write(src, GOOD + "// snippet: broken\n")
    assert course("snippets", src, "--lesson", "day01_x", "-o", out).code == 1
    after = {p: (out / p).read_bytes() for p in listing(out) if (out / p).is_file()}
    assert before == after


def test_wrong_usage_is_exit_2(course, in_tmp):
    r = course("snippets", "--no-such-flag")
    assert r.code == 64


def test_a_name_another_lesson_uses_is_named_at_both_places(course, in_tmp, monkeypatch):
    """Names are course-wide: the build's `snippets --lesson` of one day
    fails on a name a day it does not extract defines (left out of this
    build, too), naming both places; so does the whole course's."""
    from conftest import fake_lesson
    from coursetools.sources import manifest

    write(in_tmp / "common" / "course.cuh", "#pragma once\n")
    one = fake_lesson(in_tmp, "day31_one", "one.cu")
    two = dataclasses.replace(fake_lesson(in_tmp, "day32_two", "two.cu"), built=False)
    write(in_tmp / one.sources[0], "int a;\n" + GOOD)
    write(in_tmp / two.sources[0], GOOD.replace("good", "other") + GOOD)
    monkeypatch.setattr(manifest, "load", lambda path=None: [one, two])
    for args in (["--lesson", "day31_one"], []):
        r = course("snippets", *args, "-o", in_tmp / "out")
        assert r.code == 1, r.err
        assert ("lessons/day31_one/one.cu:2:1: error: duplicate snippet name 'good'; also defined at "
                "lessons/day32_two/two.cu:4; snippet names are course-wide") in r.err, r.err
        assert r.err.count(": error: ") == 1 and listing(in_tmp / "out") == []
    write(in_tmp / two.sources[0], GOOD.replace("good", "other"))
    assert course("snippets", "--lesson", "day31_one", "-o", in_tmp / "out").code == 0
