"""The prose check: a number typed into a page fails; one a helper wrote,
a stated constant, a day, a date or a name's digits do not."""

from __future__ import annotations

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
    assert problems("It is three times faster.", allowed=[3]) == []
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
