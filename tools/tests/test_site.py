"""The site's page checks and link rewriting, on made-up pages: the
browser test's judgments can fail."""

from __future__ import annotations

from coursetools.site import browser as site_browser
from coursetools.site import build as site_build
from coursetools.sources.manifest import Lesson

LESSON = Lesson(
    target="day77_x", day=77, topic="t", dir="lessons/day77_x", min_cc="9.0", sources=("lessons/day77_x/x.cu",),
    binary="", compile_command="", build_command="", run_command="", test_args=(), nvcc_flags="",
)
CODE = '<div class="language-cuda highlight"><pre><code><span class="kt">int</span></code></pre></div>'
UNVERIFIED = '<div class="admonition unverified"><p class="admonition-title">UNVERIFIED</p></div>'
VERIFIED = '<div class="admonition verified"><p>Recorded on NVIDIA H200</p></div><img src="figures/a.svg">'


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
    out = site_build._rewrite_links(text, LESSON, {"x.cu"})
    assert "](source.md#__codelineno-0-3)" in out
    assert "](../research/REVIEW-PROCESS.md)" in out
    assert "](../day24_reduction/index.md)" in out
    assert "](https://example.org/a)" in out


def test_notices_become_admonitions():
    out = site_build._admonitions("> **UNVERIFIED.** no run\n**Recorded on H200.**\n", "Recorded on H200.")
    assert '!!! unverified "UNVERIFIED: no verified output"' in out
    assert '!!! verified "Verified on real hardware"' in out


def test_only_the_renderers_provenance_line_becomes_the_verified_box():
    typed = "**Recorded on NVIDIA H200 (compute capability 9.0, 132 SMs), by hand.**\n"
    assert "!!! verified" not in site_build._admonitions(typed, None)  # the lesson is not verified
    assert "!!! verified" not in site_build._admonitions(typed, "Recorded on NVIDIA H200, really.")
