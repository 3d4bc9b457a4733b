"""The Compiler Explorer link carries the single-file program and its
flags, and decodes back to them."""

from __future__ import annotations

import pytest

from coursetools.site import explorer
from coursetools.sources import manifest, standalone


def lessons():
    try:
        return manifest.load()
    except Exception:
        return []


def test_round_trip_of_awkward_text():
    src = 'int main() { return 42 % 7; }  // "quotes" & #hash (parens) 100%\n\ttab\n'
    url = explorer.link(src, "-O3 -arch=sm_90")
    assert url.startswith("https://godbolt.org/#{") and " " not in url and "(" not in url
    assert explorer.decode(url) == (src, "-O3 -arch=sm_90", explorer.COMPILER)


@pytest.mark.parametrize("lesson", lessons(), ids=lambda l: l.target)
def test_each_lesson_link_decodes_to_its_file(lesson):
    text = standalone.standalone_text(lesson)
    source, options, _ = explorer.decode(explorer.link(text, lesson.nvcc_flags))
    assert source == text and options == lesson.nvcc_flags
