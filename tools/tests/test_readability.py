"""A page teaches first: its teaching part (before the evidence appendix)
is held to the course's reading targets, and the measure itself is held
to what it claims to count."""

from __future__ import annotations

import pytest

from coursetools.pages import readability
from coursetools.sources import manifest

REAL = manifest.load()


@pytest.mark.parametrize("lesson", REAL, ids=[l.target for l in REAL])
def test_every_pages_teaching_part_meets_the_reading_targets(lesson):
    reading = readability.read((lesson.path / "README.md").read_text(encoding="utf-8"))
    assert reading.misses() == []


def test_day24s_first_table_is_its_ladder():
    day24 = next(l for l in REAL if l.target == "day24_reduction")
    first = readability.read((day24.path / "README.md").read_text(encoding="utf-8")).first_table
    assert first.startswith("| version | what it changes |")


def test_the_measure_counts_sentences_words_and_what_they_are_about():
    page = ("# Day 1\n\nSum the array fast. Each block adds its tile.\n\n"
            "```cuda\nint never_counted = 1; // a long long long comment. Not prose.\n```\n\n"
            "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n"
            "The rule's interval is (1.2% to 3.4%) here, and (2.0% to 2.5% faster) there.\n\n"
            "- It is 160% slower.\n\n## Evidence\n\nThe interval (1% to 2%) is not read.\n")
    r = readability.read(page)
    assert r.sentences == ["Sum the array fast.", "Each block adds its tile.",
                           "The rule's interval is (1.2% to 3.4%) here, and (2.0% to 2.5% faster) there.",
                           "It is 160% slower."]
    m = r.measures()
    assert m["words_before_first_table"] == 9 and m["max_words"] == 14
    assert m["intervals_per_section"] == 2 and r.big_percentages == ["160%"]
    assert r.about_proof == ["The rule's interval is (1.2% to 3.4%) here, and (2.0% to 2.5% faster) there."]
    assert any("intervals" in x for x in r.misses()) and any("big_percentages" in x for x in r.misses())


def test_links_and_emphasis_read_as_their_words_and_a_figure_ends_the_opening():
    r = readability.read("Read [**the ladder**](#evidence-x) first.\n\n![A chart](figures/a.svg)\n\nMore words here.\n")
    assert r.sentences == ["Read the ladder first.", "More words here."]
    assert r.words_before_first_table == 4 and r.first_table.startswith("![A chart]")


def test_a_ratio_reads_as_x_from_one_and_a_half_and_as_a_span_where_gpus_differ():
    from coursetools.pages.teach import range_text, ratio_text, speedup_text

    assert ratio_text(5.43) == "5.4x faster" and ratio_text(1 / 17.04) == "17x slower"
    assert ratio_text(1.12) == "12% faster" and ratio_text(1 / 1.031) == "3.1% slower"
    assert range_text([1.2, 1.106]) == "11% to 20% faster"
    assert range_text([1.4, 1.7]) == "1.4x to 1.7x faster" and range_text([1.22, 1.2201]) == "22% faster"
    # Ends print as a single ratio does; never "17.5x to 17.5x slower".
    assert range_text([1 / 17.52, 1 / 17.48]) == "17x to 18x slower" and range_text([12.1, 12.3]) == "12x faster"
    assert speedup_text(1.9) == "1.9x" and speedup_text(1 / 1.22) == "-22%" and speedup_text(1.028) == "+2.8%"
