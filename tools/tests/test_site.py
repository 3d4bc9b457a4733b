"""The site's page checks and link rewriting, on made-up pages: the
browser test's judgments can fail."""

from __future__ import annotations

from pathlib import Path

from coursetools.pages.prose import box_problems
from coursetools.site import browser as site_browser
from coursetools.site import build as site_build
from coursetools.site import links, transforms
from coursetools.sources.manifest import Lesson

LESSON = Lesson(
    target="day77_x", day=77, topic="t", dir="lessons/day77_x", min_cc="9.0", sources=("lessons/day77_x/x.cu",),
    binary="", compile_command="", build_command="", run_command="", test_args=(), nvcc_flags="",
)
CODE = '<div class="language-cuda highlight"><pre><code><span class="kt">int</span></code></pre></div>'
UNVERIFIED = '<div class="admonition unverified"><p class="admonition-title">UNVERIFIED</p></div>'
VERIFIED = ('<div class="admonition verified"><p>Built with nvcc 13.0. Numbers and charts from run `t` on NVIDIA H200'
            '</p></div><img src="figures/a.svg">')


def test_unverified_page_passes_only_while_unverified():
    dom = f"<h1>Day 77: t</h1>{CODE}{UNVERIFIED}"
    assert site_browser.page_problems(dom, LESSON, state_valid=False) == []
    problems = site_browser.page_problems(dom, LESSON, state_valid=True)
    assert any("no provenance" in p for p in problems) and any("no plot" in p for p in problems)


def test_verified_page_needs_title_and_code():
    assert site_browser.page_problems(f"<h1>Day 77</h1>{CODE}{VERIFIED}", LESSON, state_valid=True) == []
    problems = site_browser.page_problems(f"<h1>Day 7</h1>{VERIFIED}", LESSON, state_valid=True)
    assert any("title" in p for p in problems) and any("highlighted" in p for p in problems)
    assert any("UNVERIFIED" in p for p in site_browser.page_problems(f"<h1>Day 77</h1>{CODE}", LESSON, state_valid=False))


def test_links_are_rewritten_for_the_site():
    text = (
        "[`x.cu`, lines 3\u20135](x.cu#L3-L5) [r](../../research/REVIEW-PROCESS.md) "
        "[d](../day24_reduction/README.md) [web](https://example.org/a)"
    )
    out = links.rewrite(text, ["x.cu"])
    assert "](source.md#__codelineno-0-3)" in out
    assert "](../research/REVIEW-PROCESS.md)" in out
    assert "](../day24_reduction/index.md)" in out
    assert "](https://example.org/a)" in out


def test_notices_become_admonitions():
    out = transforms.admonitions("> **UNVERIFIED.** no run\n**Recorded on H200.**\n", "Recorded on H200.")
    assert '!!! unverified "UNVERIFIED: no verified output"' in out
    assert '!!! verified "Verified on real hardware"' in out


def test_only_the_renderers_provenance_line_becomes_the_verified_box():
    typed = "**Recorded on NVIDIA H200 (compute capability 9.0, 132 SMs), by hand.**\n"
    assert "!!! verified" not in transforms.admonitions(typed, None)  # the lesson is not verified
    assert "!!! verified" not in transforms.admonitions(typed, "Recorded on NVIDIA H200, really.")


def test_a_broken_link_or_anchor_in_the_built_site_is_named(tmp_path):
    from coursetools.site import browser
    site = tmp_path / "site"
    (site / "day1").mkdir(parents=True)
    (site / "header" / "course").mkdir(parents=True)
    (site / "header" / "course" / "index.html").write_text('<p id="__codelineno-0-3">x</p>')
    (site / "day1" / "index.html").write_text(
        '<a href="../header/course/#__codelineno-0-3">ok</a> <a href="../header/course/#__codelineno-0-9">gone</a>'
        ' <a href="../../common/course.cuh#L1">404</a> <img src="figures/a.svg"> <a href="https://godbolt.org/#x">x</a>')
    problems = browser.broken_links(site)
    assert any("#__codelineno-0-9" in p and "no #__codelineno-0-9 there" in p for p in problems)
    assert any("../../common/course.cuh#L1" in p and "no such file" in p for p in problems)
    assert any("figures/a.svg" in p for p in problems)
    assert len(problems) == 3


def test_header_links_go_to_the_headers_site_page_and_line():
    text = "[`common/course/launch.cuh`, lines 12–30](../../common/course/launch.cuh#L12-L30) and [x](a.cu#L5-L9)"
    out = links.rewrite(text, ["b.cu", "a.cu"])
    assert "(../header/course-launch.md#__codelineno-0-12)" in out
    assert "(source.md#__codelineno-1-5)" in out


def test_charts_labels_are_measured_at_the_width_shown(tmp_path):
    from coursetools.site import browser
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "c.svg").write_text('<svg viewBox="0 0 760 400" font-size="12"><text>a</text></svg>')
    page = tmp_path / "index.html"
    assert browser.chart_problems({"charts": [{"src": "figures/c.svg", "shown": 700}]}, page, 390) == []
    assert browser.chart_problems({"charts": [{"src": "figures/c.svg", "shown": 350}]}, page, 390)


def test_the_mkdocs_configuration_is_data_no_name_can_turn_into_yaml():
    """A research note's name goes into the menu: written as JSON (which
    YAML reads as it is), a tag such as !!python/object/apply is a string."""
    import json
    nav = [{"Research": ["research/notes: !!python/object/apply:os.system [touch X] #.md"]}]
    text = json.dumps(site_build.mkdocs_config(__import__("pathlib").Path("/x"), nav))
    import yaml
    assert yaml.safe_load(text)["nav"] == nav


def test_a_note_name_that_is_not_a_plain_file_name_is_refused(in_tmp):
    import pytest
    from coursetools.errors import UsageError
    (in_tmp / "research").mkdir()
    (in_tmp / "research" / "ok-note_2.md").write_text("# ok\n")
    assert [p.name for p in site_build.research_notes()] == ["ok-note_2.md"]
    (in_tmp / "research" / "notes: !!python%2Fobject [x] #.md").write_text("# bad\n")
    with pytest.raises(UsageError, match="a research note's name is letters, digits"):
        site_build.research_notes()


def test_a_site_input_that_links_out_or_is_a_fifo_is_refused_without_waiting(in_tmp, tmp_path_factory):
    import os
    import pytest
    from coursetools.errors import SourceError
    outside = tmp_path_factory.mktemp("outside") / "secret.md"
    outside.write_text("# secret\n")
    (in_tmp / "research").mkdir()
    (in_tmp / "research" / "linked.md").symlink_to(outside)
    with pytest.raises(SourceError):
        site_build.read_input(in_tmp / "research" / "linked.md")
    os.mkfifo(in_tmp / "research" / "pipe.md")
    with pytest.raises(SourceError):
        site_build.read_input(in_tmp / "research" / "pipe.md")


def test_a_verified_box_typed_in_any_spelling_is_found():
    for typed in ('!!! verified "Verified on real hardware"', '  ??? Verified', '???+ verified "x"',
                  '<div class="admonition verified">', "<p class='note verified'>"):
        assert [str(d) for d in box_problems("text\n" + typed + "\nmore", "p.md")] == [
            f"p.md:2: error: a box typed into the page ('{typed.strip()}'); the site draws a page's boxes, the "
            "verified one from the evidence alone: write it as prose"], typed
    assert not box_problems("The page is verified against its record.\n", "p.md")


def test_a_comment_holding_a_fence_cannot_break_the_source_page_open():
    code = ("int a;\n/*\n```\n!!! verified \"Verified on real hardware\"\n    v9 is 9 TB/s\n## Forged\n"
            "``` cuda\n*/\nint b;")
    page = transforms.fenced_code(code)
    import markdown
    html = markdown.markdown(page, extensions=["admonition", "pymdownx.superfences"])
    assert 'class="admonition' not in html and "<h2" not in html
    assert html.count("<code>") == 1 and html.rstrip().endswith("</table></div>") and ">b<" in html


def test_serves_problems_show_in_a_box_above_the_pages_as_code():
    box = transforms.problems_box(["lessons/day58_pdl/README.md.j2:12: error: <script>alert(1)</script> `x`"] * 25)
    assert box.startswith('!!! failure "The last save did not render')
    shown = [line for line in box.split("\n") if line.startswith("        ")]
    assert len(shown) == 21 and shown[-1].strip() == "... and 5 more"  # 20 problems, then a count
    assert all("<script>" in line for line in shown[:20])  # as code: MkDocs escapes it


def test_serve_waits_for_the_port_and_gives_up_when_the_server_ends():
    import socket
    import subprocess
    import sys
    from coursetools.site import serve
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert serve.wait_for_port(port, alive)
        finally:
            alive.kill()
            alive.wait()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert serve.wait_for_port(port, gone) is False


def test_a_page_too_tall_names_its_tallest_sections():
    check = {"height": 1000, "sections": [{"title": "A", "top": 0}, {"title": "B", "top": 100},
                                          {"title": "C", "top": 700}]}
    assert site_browser.tallest_sections(check) == [("B", 600), ("C", 300), ("A", 100)]
    assert site_browser.tallest_sections({"height": 5}) == []


def test_a_section_folds_after_its_first_paragraph_of_prose_and_keeps_its_charts():
    page = "\n".join([
        "# Day", "", "Intro.", "", "### Step one", "", "[`a.cu`, lines 1–3](a.cu#L1-L3)", "",
        '???+ fold "The code, 20 lines"', "", "    ```cuda", "    x", "    ```", "",
        "The first words of the step.", "", "| a | b |", "| --- | --- |", "| 1 | 2 |", "",
        "More words", "over", "several", "lines", "here.", "", "![A chart](figures/c.svg)", "",
        "Short.", "", "## Next", "", "Text.", ""])
    out = transforms.fold_sections(page)
    before, _, after = out.partition('???+ more "More of Step one"')
    assert "The first words of the step." in before and '???+ fold "The code' in before  # kept, in order
    folded, _, rest = after.partition("![A chart](figures/c.svg)")
    assert "    | a | b |" in folded and "    More words" in folded  # the rest, indented into the fold
    assert "Short." in rest and "More of Short" not in rest  # too short to fold
    assert "## Next" in out and 'More of Next' not in out


def _shown(page: str) -> str:
    """The HTML a page makes, without the folds' own tags and titles, in
    one line: what a reader sees once every fold is open."""
    import re

    import markdown

    html = markdown.markdown(page, extensions=["admonition", "pymdownx.details", "tables", "toc",
                                               "pymdownx.highlight", "pymdownx.superfences"])
    html = re.sub(r"<summary>.*?</summary>|</?details[^>]*>", "", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r">\s+<", "><", html)).strip()


def test_folding_a_section_changes_nothing_a_reader_sees_once_it_is_open():
    long = "\n".join(f"Words of line {i}." for i in range(8))
    tricky = [
        "Run it:\n```bash\nmake\n\nmake test\n```",
        "\n\n".join(f"{i}. item {i}" for i in range(1, 10)),
        "- item\n\n    a continuation\n\n    ```\n    code\n    ```\n\n- another",
        "<details>\n<summary>x</summary>\n\ninside\n\n</details>",
        "A line\n\n| a | b |\n| --- | --- |\n" + "\n".join(f"| {i} | {i} |" for i in range(8)),
        "![A chart](figures/c.svg)",
    ]
    for body in tricky:
        page = "# Day\n\nIntro.\n\n```bash\n## not a heading\n```\n\n## Section\n\nFirst words.\n\n" + body + \
               "\n\n" + long + "\n\n## Next\n\nText.\n"
        folded = transforms.fold_sections(page)
        assert '???+ more "More of Section"' in folded, body
        assert "More of not a heading" not in folded
        assert _shown(folded) == _shown(page), body
        both = transforms.fold_sections(transforms.fold_long_blocks(page))
        assert _shown(both) == _shown(transforms.fold_long_blocks(page)), body


def test_a_phones_teaching_part_ends_where_the_evidence_appendix_begins():
    from coursetools.site import browser

    check = {"cut": [], "charts": [], "width": 390, "height": 12000,
             "sections": [{"title": "The ladder", "top": 100}, {"title": "Evidence", "top": 7500},
                          {"title": "Evidence: v1", "top": 9000}]}
    assert browser.teaching_height(check) == 7500
    said = browser.layout_problems(check, Path("p.md"), 390)
    assert any("the teaching part (before the evidence appendix) is 7,500 px tall" in p for p in said)
    check["sections"][1]["top"] = 6900
    assert browser.layout_problems(check, Path("p.md"), 390) == []
    # no appendix: the whole page teaches, and 12,000 px is too tall for that
    assert any("12,000 px tall" in p for p in browser.layout_problems(dict(check, sections=[]), Path("p.md"), 390))


def test_a_fence_is_read_alike_where_blocks_fold_and_where_sections_fold():
    """fold_long_blocks once read fences by a rule of its own (backticks
    at the margin): a table inside a short text block folded as a table,
    a ~~~ block never folded, and a ```text shown inside a longer fence
    folded inside it. fold_sections reads them with snippets.fence_step."""
    table = "| a | b |\n| --- | --- |\n" + "\n".join(f"| {i} | {i} |" for i in range(8))
    long = "\n".join(f"line {i}" for i in range(13))
    for fence in ("```", "````", "~~~", "  ~~~~"):
        short = f"{fence}text\n{table}\n{fence.strip()}\n"
        assert transforms.fold_long_blocks(short) == short, fence  # code, not a table
        folded = transforms.fold_long_blocks(f"{fence}text\n{long}\n{fence.strip()}\n")
        assert '???+ fold "Text, 13 lines"' in folded, fence
        assert _shown(folded) == _shown(f"{fence}text\n{long}\n{fence.strip()}\n"), fence
    shown = f"````markdown\n```text\n{long}\n```\n````\n"
    assert transforms.fold_long_blocks(shown) == shown
