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
    assert url.startswith("https://godbolt.org/#{") and " " not in url and "(" not in url and "+" not in url
    assert explorer.decode(url) == (src, "-O3 -arch=sm_90", explorer.COMPILER)


def test_lzstring_matches_the_library_compiler_explorer_uses():
    """Vectors from lz-string 1.4's compressToBase64 (the JavaScript
    library), and round trips through characters outside ASCII and the BMP."""
    from coursetools.site import lzstring
    assert lzstring.compress_to_base64("Hello, world") == "BIUwNmD2A0AEDukBOYAmQ==="
    assert lzstring.compress_to_base64("") == "Q==="
    for text in ["aaaaaaaaaaaaaaaaaaaaab", "集群编程 – cluster \U0001F600 end", "x" * 5000 + "y\n" * 3000]:
        assert lzstring.decompress_from_base64(lzstring.compress_to_base64(text)) == text


@pytest.mark.parametrize("lesson", lessons(), ids=lambda l: l.target)
def test_each_lesson_link_is_short_and_decodes_to_its_file(lesson):
    text = standalone.explorer_text(lesson)
    url = explorer.link(text, lesson.nvcc_flags)
    assert len(url) < explorer.MAX_LINK, f"{len(url):,} characters"
    source, options, _ = explorer.decode(url)
    assert source == text and options == lesson.nvcc_flags
    # the lesson's own code whole; only the inlined header lost its comments
    whole = standalone.standalone_text(lesson)
    head = whole.index("// ---- begin common/course.cuh")
    assert text.startswith(whole[:head]) and text.endswith(whole[whole.index("// ---- end common/course.cuh"):])


@pytest.mark.parametrize("lesson", lessons(), ids=lambda l: l.target)
def test_the_linked_program_is_the_standalone_file_less_comments(lesson):
    """Same code tokens as the file that compiles alone (tested there), so
    the shortened copy compiles to the same program."""
    from coursetools.sources import cpplex
    assert cpplex.code_tokens(standalone.explorer_text(lesson)) == cpplex.code_tokens(standalone.standalone_text(lesson))
