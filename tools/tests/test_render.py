"""Lesson pages: unknown snippets fail with a did-you-mean and a line,
--check exits 3 on a stale page, no output appears without evidence, and
the page API refuses what does not exist."""

from __future__ import annotations

import pytest

from coursetools.evidence import state as ev_state

from conftest import fake_lesson, write, page_repo_with
from coursetools.pages import marks, page as page_api, prose, render, rows as page_rows
from coursetools.sources import manifest
from coursetools.sources.manifest import ROOT as REAL_ROOT

SRC = '#include "course.cuh"\n// snippet: cluster-launch\nint launch;\n// end snippet\n'


@pytest.fixture
def lesson(in_tmp, monkeypatch):
    return page_repo_with(in_tmp, monkeypatch, SRC, readme=True)[1]


def template(lesson, text):
    write(lesson.path / "README.md.j2", text)


def render_page(lesson):
    files, diags, _ = render.render_lesson(lesson)
    return files.get(lesson.path / "README.md"), diags


def test_unknown_snippet_suggests_the_near_name(lesson):
    template(lesson, "# {{ lesson.topic }}\n\n{{ snippet('cluster-lunch') }}\n")
    page, diags = render_page(lesson)
    assert page is None and len(diags) == 1
    text = str(diags[0])
    assert text.startswith("lessons/day99_fake/README.md.j2:3:4: error: unknown snippet 'cluster-lunch'")
    assert "did you mean 'cluster-launch'?" in text


def test_page_has_snippet_commands_and_unverified_notice_at_the_top(lesson):
    template(lesson, "# {{ lesson.topic }}\n\n{{ snippet('cluster-launch') }}\n`{{ lesson.build_command }}`\n\n"
                     "{{ page.measured('gbps') }}\n\n## Evidence\n\n{{ page.expected_output() }}")
    page, diags = render_page(lesson)
    assert diags == []
    assert "[`lessons/day99_fake/fake.cu`, lines 3\u20133](fake.cu#L3-L3)" in page
    assert "cmake --build build --target day99_fake" in page
    assert page.split("\n")[3].startswith("> **UNVERIFIED.**"), page  # right under the title
    assert "*(unmeasured)*" in page and marks.MARK_OPEN not in page


@pytest.mark.parametrize("start", ["<!-- page -->\n# Title\n", "Some words first.\n\n# Title\n", "\n\n"])
def test_the_unverified_notice_is_at_the_top_whatever_the_template_begins_with(lesson, start):
    template(lesson, start + "Body.\n")
    page, diags = render_page(lesson)
    assert diags == []
    body = page.split("\n", 1)[1]  # after the generated-by comment
    first = next(line for line in body.split("\n") if line.strip())
    assert first.startswith("> **UNVERIFIED.**") or (first == "# Title" and start.startswith("\n")), page


def test_template_syntax_error_has_its_line(lesson):
    template(lesson, "line one\n{% if %}\n")
    _, diags = render_page(lesson)
    assert str(diags[0]).startswith("lessons/day99_fake/README.md.j2:2: error: template syntax")


@pytest.mark.parametrize("text, words", [
    ("{{ 1/0 }}", "ZeroDivisionError"),
    ("{% include 'missing.md' %}", "included template 'missing.md' not found"),
    ("{{ page.plot('../../..', 't', 'gbps') }}", "figure name '../../..' is not valid"),
    ("{{ page.measured('gbps', '{0.__class__}') }}", "unmeasured"),
    ("{{ cycler.__init__.__globals__.os.popen('id').read() }}", "error"),
    ("{{ page._state }}", "error"),
    ("{{ page.state.record }}", "error"),
])
def test_templates_are_untrusted(lesson, text, words):
    template(lesson, "# T\n" + text + "\n")
    page, diags = render_page(lesson)
    out = "\n".join(map(str, diags)) + (page or "")
    assert words in out, out
    assert "uid=" not in out


def test_check_exits_3_when_the_page_is_stale(course, lesson, monkeypatch):
    monkeypatch.setattr(render, "readme_with_table", lambda lessons: None)
    template(lesson, "# {{ lesson.topic }}\n")
    assert course("render", "--check").code == 3
    r = course("render")
    assert r.code == 0 and "written" in r.out
    assert course("render", "--check").code == 0
    template(lesson, "# {{ lesson.topic }} changed\n")
    r = course("render", "--check")
    assert r.code == 3 and "README.md: out of date; run: tools/course render" in r.err


def test_the_readme_table_lists_every_lesson():
    lessons = manifest.load() if (manifest.build_dir() / "course-manifest.json").exists() else []
    if not lessons:
        pytest.skip("no configured build")
    text = (REAL_ROOT / "README.md").read_text()
    assert render.readme_table(lessons) in text, "README.md's day table is stale: run tools/course render"


def test_a_table_column_can_come_from_the_rows_cold_twin(lesson):
    rows = [{"group": "h", "mode": m, "timing": t, "median_ms": ms}
            for m, t, ms in [("a", "batch", 0.010), ("a", "cold", 0.020), ("b", "batch", 0.030)]]
    state = ev_state.fixture(lesson, entry={}, records={"results": {"rows": rows}})
    page = page_api.Page(lesson, [], state)
    cols = [["row", "mode", ""], ["batch", "median_ms:us", ".1f"], ["cold", "median_ms:us", ".1f", {"timing": "cold"}]]
    text = page.table(cols, group="h", timing="batch")
    lines = marks.unmark(marks.resolve_marks(text)).splitlines()
    assert lines[2] == "| `a` | 10.0 | 20.0 |"  # the cold column is a's cold row, not its batch row again
    assert lines[3] == "| `b` | 30.0 |  |"  # no cold twin: an empty cell, never the batch value
    with pytest.raises(marks.TemplateProblem):
        page.table([["row", "mode", "", "cold"]], group="h")


def test_where_verdict_names_the_sizes_the_rule_gives_that_word(lesson):
    def row(v, n, ms):
        return {"group": "s", "version": v, "elements": n, "timing": "cold", "median_ms": ms,
                "samples_ms": [ms * (1 + i / 1000) for i in range(11)]}
    rows = [row("a", 1, 1.0), row("b", 1, 2.0), row("a", 2, 2.0), row("b", 2, 1.0),
            row("a", 3, 3.0), row("b", 3, 1.5)]
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records={"results": {"rows": rows}}))

    def where(word):
        text = page.where_verdict({"group": "s", "version": "a"}, {"group": "s", "version": "b"}, "elements", [1, 2, 3], word)
        return marks.unmark(marks.resolve_marks(text))
    assert where("faster") == "1"
    assert where("slower") == "2 and 3"
    assert where("the same") == "no size"
    with pytest.raises(marks.TemplateProblem):
        where("ties")


def test_the_versus_table_gives_each_word_with_its_estimate_and_interval(lesson):
    def row(v, n, samples):
        s = sorted(samples)
        return {"group": "s", "version": v, "elements": n, "timing": "cold", "median_ms": s[len(s) // 2],
                "samples_ms": samples, "set": f"s {n} cold"}
    quiet = [1.0 + i / 10000 for i in range(64)]
    noisy = [1.0 + (i % 2) * 0.2 for i in range(64)]  # half at 1.0, half at 1.2
    rows = [row("a", 1, quiet), row("b", 1, [x * 2 for x in quiet]), row("a", 2, quiet), row("b", 2, noisy),
            row("a", 3, quiet), row("b", 3, [x * 1.002 for x in quiet])]
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records={"results": {"rows": rows}}))
    text = marks.unmark(marks.resolve_marks(page.versus_table({"group": "s", "version": "a"},
                                                                {"group": "s", "version": "b"}, ["A", "B"],
                                                                timings=["cold"])))
    lines = text.splitlines()
    assert "; 100.0% faster (" in lines[2] and "64 samples" in lines[2]
    # Every number in the table is a helper's, the GPU's name in its head
    # too (a name that starts with digits read as a typed number once).
    gpu = "GPU-89db674a-747f-2f3c-436c-2000694b83a6"
    named = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records={"results": {"rows": rows},
                                                                                  "gpu": {"uuid": gpu}}))
    raw = marks.resolve_marks(named.versus_table({"group": "s", "version": "a"}, {"group": "s", "version": "b"},
                                                 ["A", "B"], timings=["cold"]))
    assert "89db674a" in marks.unmark(raw)
    assert "89db674a" not in prose.MARKED_RE.sub("", raw)
    assert "not distinguishable (" in lines[3]
    assert "the same (" in lines[4]


def test_rows_timed_in_different_sets_are_not_compared(lesson):
    rows = [{"group": "s", "version": v, "timing": "cold", "samples_ms": [1.0] * 20, "set": s}
            for v, s in (("a", "one"), ("b", "two"))]
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records={"results": {"rows": rows}}))
    with pytest.raises(marks.TemplateProblem, match="different sets"):
        page.compare({"version": "a"}, {"version": "b"})


def test_a_target_is_reached_or_missed_by_the_medians(lesson):
    def row(v, ms):
        return {"group": "s", "version": v, "elements": 1, "timing": "cold", "median_ms": ms,
                "samples_ms": [ms * (1 + i / 1000) for i in range(11)]}
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records=
                                                   {"results": {"rows": [row("a", 1.0), row("b", 1.03)]}}))
    a, b = {"group": "s", "version": "a"}, {"group": "s", "version": "b"}
    assert page.reaches(a, b, 1.02) == "reaches"
    assert page.reaches(a, b, 1.05) == "falls short of"


def test_a_review_step_can_be_picked_by_its_arguments(lesson):
    steps = [{"step": "neg: reported", "args": ["--size", "1"], "exit_code": 0},
             {"step": "neg: reported", "args": [], "exit_code": 1}]
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records=
                                                   {"results": {"rows": []}, "review": {"steps": steps}}))

    def get(**kw):
        return marks.unmark(marks.resolve_marks(page.review("neg: reported", "exit_code", **kw)))
    assert get() == "0"
    assert get(args=[]) == "1"
    assert get(args=["--size", "1"]) == "0"


def test_twins_are_counted_as_the_records_false_call_rate(lesson):
    def row(v, n, samples):
        return {"group": "s", "version": v, "elements": n, "timing": "cold", "set": f"s {n} cold",
                "samples_ms": samples}
    quiet = [1.0 + i / 100000 for i in range(64)]
    rows = [row("cub", 1, quiet), row("cub-twin", 1, list(reversed(quiet))),
            row("cub", 2, quiet), row("cub-twin", 2, [x * 1.05 for x in quiet])]
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records={"results": {"rows": rows}}))
    counts = {marks.unmark(marks.resolve_marks(k)): marks.unmark(marks.resolve_marks(v))
              for k, v in page.twins(group="s").items()}
    assert page.twins(group="s").get("slower")  # looked up by the plain word
    assert counts == {"slower": "1", "the same": "1"}


def test_the_page_api_is_listed_from_the_helpers_themselves(course):
    """`course page-api` reads the helpers' signatures and docstrings, so a
    helper added or changed is listed as it is."""
    from coursetools.pages.page import Page

    r = course("page-api")
    assert r.code == 0
    for name in ("measured", "compare", "plot", "table", "counter", "sass"):
        assert f"page.{name}(" in r.out
        assert (getattr(Page, name).__doc__ or "").split()[0] in r.out
    one = course("page-api", "page.plot")
    assert one.code == 0 and one.out.startswith("page.plot(name, title, value, label='{mode}'")
    bad = course("page-api", "page.plott")
    assert bad.code == 64 and "page.plot," in bad.err


def test_a_documented_unit_is_shown_with_no_record_and_an_unknown_one_is_refused(lesson):
    """page.documented gives a unit NVIDIA's documentation defines (a sector's
    bytes) as a shown fact: on a page with no evidence too, and past the
    prose check; a unit the module does not list is a template problem."""
    from coursetools.pages import documented

    template(lesson, "# T\n\nA sector is {{ page.documented('sector_bytes') }} bytes.\n")
    page, diags = render_page(lesson)
    assert diags == [] and f"A sector is {documented.UNITS['sector_bytes'][0]} bytes." in page
    assert all(source for _, source in documented.UNITS.values())  # each unit names its source
    page_obj = page_api.Page(lesson, [], ev_state.fixture(lesson, entry={}, records={"results": {"rows": []}}))
    text = marks.resolve_marks(page_obj.documented("sector_bytes"))
    assert prose.problems_in(text, set(), set(), "t.j2") == []
    template(lesson, "# T\n\n{{ page.documented('cache_line_bytes') }}\n")
    _, diags = render_page(lesson)
    assert "no documented unit 'cache_line_bytes'" in "\n".join(map(str, diags))


def test_a_snippet_name_in_two_lessons_fails_the_render_of_every_page(lesson):
    """The build extracts snippets in render alone (no build/snippets/): a
    name two lessons define names one place no more, so render names it."""
    from coursetools.errors import SourceError

    other = fake_lesson(lesson.path.parents[1], "day98_other")
    write(other.path / "fake.cu", SRC)
    template(lesson, "# Day\n")
    template(other, "# Day\n")
    with pytest.raises(SourceError, match="duplicate snippet name 'cluster-launch'"):
        render.render_all([other, lesson])
    assert render.render_all([lesson], [lesson.target])[0]  # one lesson alone renders


def test_the_rows_that_carry_over_on_the_same_host_only_are_named_as_the_lesson_declares_them():
    """The expected output's carry-over line names the rows a lesson marks
    host_bound, not every row launched into a stream."""
    from coursetools.pages.rows import host_rows
    assert host_rows([{"timing": "batch"}]) == "timing batch"
    assert host_rows([{"schedule": "plain"}, {"schedule": "pdl"}, {"schedule": "pdl-early"}]) == \
        "schedule plain, pdl or pdl-early"


@pytest.mark.parametrize("name, svg, words", [
    ("sketch\\n", "", "figure name 'sketch\\n' is not valid"),  # a trailing newline: a '$' check passes it
    ("sketch", '<a href="&#10;https://x.example/"><text>s</text></a>', "links only inside itself (\\nhttps:"),
    ("sketch", "<text>37&#10;GB/s</text>", "the number 37 is typed into a chart's words ('37\\nGB/s')"),
])
def test_a_pictures_problem_is_one_line_whatever_its_name_or_words(lesson, name, svg, words):
    """page.picture names what it refuses on one line: a name, a link or a
    word with a newline in it is quoted with the newline escaped."""
    write(lesson.path / "figures" / "sketch.svg", f'<svg xmlns="http://www.w3.org/2000/svg">{svg}</svg>\n')
    template(lesson, "# T\n\n{{ page.picture('" + name + "', 'A sketch') }}\n")
    page, diags = render_page(lesson)
    assert page is None and len(diags) == 1
    text = str(diags[0])
    assert "\n" not in text and words in text, text
