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


def test_the_link_compiles_the_machine_code_the_promoted_run_executed(tmp_path):
    """Day 24 builds PTX for 7.5 and machine code for 9.0; its promoted run
    ran on a 9.0 GPU, so the link compiles for sm_90, and says so."""
    from conftest import fake_lesson
    from coursetools.evidence import state as ev_state
    from coursetools.site import build as site_build
    import dataclasses
    built = manifest.nvcc_flags("day24_x", "7.5", ["75-virtual", "90-real"])
    assert "-gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90" in built
    lesson = dataclasses.replace(fake_lesson(tmp_path, "day24_x", min_cc="7.5"), nvcc_flags=built,
                                 architectures=("75-virtual", "90-real"))
    promoted = ev_state.fixture(lesson, {"gpu": {"compute_capability": "9.0"}})
    flags, why = site_build.explorer_flags(lesson, promoted)
    assert flags == built.replace(built[built.index("-gencode"):built.index(" -DCOURSE")], "-arch=sm_90")
    assert "promoted run executed" in why
    unverified = ev_state.fixture(lesson, [], None, "unverified")
    assert site_build.explorer_flags(lesson, unverified)[0] == built
    on_86 = ev_state.fixture(lesson, {"gpu": {"compute_capability": "8.6"}})  # no machine code for 8.6 built
    assert site_build.explorer_flags(lesson, on_86)[0] == built
