"""The prose check: a number typed into a page fails; one a helper wrote,
a stated constant, a day, a date or a name's digits do not."""

from __future__ import annotations

import pytest

from coursetools.pages import marks, page as page_api, prose, render, rows as page_rows


def problems(text, allowed=(), days=(24, 77)):
    return [str(p) for p in prose.problems_in(text, {float(a) for a in allowed}, set(days), "t.j2")]


def test_typed_numbers_fail_and_helper_numbers_pass():
    assert problems("The kernel takes 41.3 us.")
    assert problems(f"The kernel takes {marks.mark('41.3')} us.") == []


def test_constants_days_dates_names_and_code_pass():
    text = ("Sums 16,776,605 ones. See day 77 and day 24. Checked 2026-11-29. Built for sm_90 with "
            "float4 loads on an H200, v9. `--size 65536` in code.\n```\nint x = 3;\n```\n"
            "[a link](../day77/x.md#L12-L40) and <https://arxiv.org/abs/2402.13499>")
    assert problems(text, allowed=[16776605, 65536, 3, 1]) == []


def test_numbers_in_code_and_in_words_count():
    assert problems("`--size 65536` in code.")
    assert problems("```text\nv9   41.3 us\n```\n")
    assert problems("It is three times faster.") and problems("It runs twice as fast.")
    # the number is a constant then; the claim in words still needs its helper
    assert [p for p in problems("It is three times faster.", allowed=[3]) if "the number" in p] == []
    assert [p for p in problems("It is three times faster.", allowed=[3]) if "the claim" in p]
    assert problems("A `one_header` rule, in code.") == []  # a name in code, not a word


def test_a_day_number_outside_a_day_reference_still_counts():
    assert problems("It took 77 us.", days=(77,))


def test_the_real_pages_pass():
    from coursetools.sources import manifest

    try:
        lessons = manifest.load()
    except Exception:
        return
    assert prose.check(lessons) == []


@pytest.mark.parametrize("typed", [
    "v9 is faster than CUB at every size and in every timing.",
    "v1 is an order of magnitude slower than CUB.",
    "v9 reads at well over a terabyte a second.",
    "Clusters of 4 beat global atomics.",
    "| v9 | wins everywhere |",
    "- v10 keeps pace with the ceiling",
    "v9 is **FASTER** than CUB.",
])
def test_a_claim_typed_in_words_is_refused(typed):
    found = problems(f"# Day\n\nSome text.\n\n{typed}\n")
    assert any("the claim" in p and "is typed into the page" in p for p in found), found
    assert any(p.startswith("t.j2:") for p in found)


@pytest.mark.parametrize("fine", [
    "Against v1, v2 is " + marks.MARK_OPEN + "21.5% slower (21.5% to 21.6%)" + marks.MARK_CLOSE + ".",
    "The rule says *faster* when the whole interval lies beyond the margin.",
    "A separate experiment found it slower ([the note](../../research/cub-reduce.md)).",
    "The kernel runs twice and must give the same bits.",
])
def test_a_claim_beside_its_helper_or_as_the_rules_term_passes(fine):
    assert not [p for p in problems(f"# Day\n\n{fine}\n") if "the claim" in p]


@pytest.mark.parametrize("page", [
    "# Day\n\n~~~ !\nv1 is three times slower than CUB, and v9 beats it everywhere.\n~~~\n",
    "# Day\n\n    `v1 is three times slower than CUB\nand v9 beats it everywhere.` more\n",
])
def test_text_the_site_shows_as_prose_is_read_as_prose(page):
    """A line the check's own reading might take for code, which the
    site's Markdown shows as prose: its claims and number words are found
    in the site's reading."""
    found = [str(d) for d in prose.reader_view_problems(page, set(), {24}, "t.j2", page)]
    assert any("the claim" in p for p in found) or any("reaches the site's page as prose" in p for p in found), found


def test_the_sites_reading_keeps_the_rules_terms_and_a_research_citation():
    page = ("# Day\n\nThe rule says *faster* when the interval is beyond the margin.\n\n"
            "An experiment found it slower ([the note](../../research/cub-reduce.md)).\n")
    assert prose.reader_view_problems(page, set(), {24}, "t.j2", page) == []
