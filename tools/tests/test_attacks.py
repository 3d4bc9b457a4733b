"""The second attack round on the gate: each way a reviewer found to put
a number on a page, or to change what a promoted record vouches for,
without a check failing, and the check that now fails."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import fake_lesson, write
from coursetools.binaries import flags
from coursetools.errors import CourseError
from coursetools.evidence import promote, verify
from coursetools.record import plausibility, run
from coursetools.pages import formats as page_formats
from coursetools.pages.marks import TemplateProblem
from coursetools.sources import constants, digest, lessoninfo
from coursetools.sources.manifest import LessonInfo


def prose_problems(text, allowed=(1,)):
    from coursetools.pages import prose
    return [str(p) for p in prose.problems_in(text, {float(a) for a in allowed}, {24, 58, 77}, "t.j2", "")]


# -- numbers onto a page ------------------------------------------------

def test_a_define_inside_a_comment_is_not_the_programs_constant(in_tmp):
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu",
          "/*\n#define kSpeedup v9 is 37.5x faster\n*/\nconstexpr int kSpeedup = 4;\n")
    lesson = fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu")
    assert constants.source_constant(lesson, "kSpeedup") == "4"


@pytest.mark.parametrize("text", [
    "[^h200]: v9 takes 0.29 ms on the H200.",
    "[note]: v9 beats CUB by 3.7% in every timing",
    '[the table](#sweep "v9 is 37x faster than v1")',
    "<v9-took-0.29ms@h200.example>",
    "<speedup:37x>",
    "It took 0037-00-00 ms.",
    "It is twofold faster.", "A sevenfold gain.", "It costs a hundredth.", "A twelfth of the time.",
    "It runs \u2166 times faster.",          # a Roman numeral
    "It saves \u136b us.",                    # an Ethiopic digit
    "It scales as x\u2077.",                  # a superscript after a letter
])
def test_numbers_the_first_round_missed_are_numbers(text):
    assert prose_problems(text), text


def test_real_dates_and_reference_definitions_still_pass():
    assert prose_problems("Checked 2026-11-29 ([the guide][g]).\n\n[g]: https://docs.nvidia.com/x") == []


@pytest.mark.parametrize("spec, value", [("x", 64), ("b", 8), ("c", 65), ("#x", 64), ("o", 8), ("n", 3)])
def test_formats_that_print_another_number_are_refused(spec, value):
    with pytest.raises(TemplateProblem):
        page_formats.number(value, spec)


def test_percent_is_for_fractions():
    assert page_formats.number(0.031, ".1%") == "3.1%"
    with pytest.raises(TemplateProblem, match="is for fractions"):
        page_formats.number(820.64, ".0%")


def test_an_infinite_constant_is_refused_with_its_line(tmp_path):
    toml = write(tmp_path / "lesson.toml", "[page]\nconstants = [inf, 1]\n")
    with pytest.raises(CourseError, match=r"lesson.toml:2.*finite number"):
        lessoninfo.load_lesson_info(toml, "lesson.toml")


def test_a_snippet_comment_may_not_state_a_measurement(in_tmp, monkeypatch):
    from coursetools.pages import prose
    write(in_tmp / "common" / "course.cuh", "#pragma once\n")
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu",
          "// snippet: step\n// Measured on the H200: 4.73 ms at 1 GiB, 37x slower.\nint x;\n// end snippet\n")
    lesson = fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu")
    found = prose.snippet_comment_problems(lesson, {1.0})
    assert any("states a measurement" in str(f) and "pdl.cu:2" in str(f) for f in found)


# -- what a record vouches for ------------------------------------------

@pytest.mark.parametrize("code, words", [
    ('__asm__(".incbin \\"table.bin\\"");\n', ".incbin"),
    ('#if __has_include("fast.flag")\nint k = 512;\n#endif\n', "__has_include"),
    ("constexpr int kThreads = (__LINE__ & 1) ? 256 : 512;\n", "__LINE__"),
    ("#embed \"table.bin\"\n", "embed"),
])
def test_what_reads_files_or_lines_the_digest_cannot_follow_is_refused(in_tmp, code, words):
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu", code)
    with pytest.raises(CourseError, match=words):
        fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu").digest_files()


def test_a_backslash_newline_inside_a_token_is_refused():
    with pytest.raises(CourseError, match="joins two pieces of code"):
        digest.file_digest(b"int f(int x) { return -\\\n-x; }\n", "a.cu")
    with pytest.raises(CourseError, match="joins two pieces of code"):
        digest.file_digest(b"#define F\\\n(x) x\n", "a.cu")
    assert digest.file_digest(b"#define F(x) \\\n  (x)\n", "a.cu")  # a continuation after a space is fine


def test_a_run_from_older_ptx_is_not_the_gpus_program():
    rec = {"gpu": {"compute_capability": "9.0"}, "toolchain": {"architectures": ["75-virtual"]}}
    lesson = fake_lesson(__import__("pathlib").Path("/tmp"), min_cc="7.5")
    reasons = [r for r in promote.record_problems(lesson, rec, for_promotion=False) if "machine code" in r]
    assert reasons
    rec["toolchain"]["architectures"] = ["75-virtual", "90-real"]
    assert not [r for r in promote.record_problems(lesson, rec, for_promotion=False) if "machine code" in r]


def test_hidden_nvcc_flags_in_the_environment_stop_a_record(in_tmp, monkeypatch):
    monkeypatch.setenv("NVCC_APPEND_FLAGS", "-DCOURSE_TIMELINE")
    lesson = fake_lesson(in_tmp)
    monkeypatch.setattr(run, "git_state", lambda: ("a" * 40, False))
    with pytest.raises(CourseError, match="NVCC_APPEND_FLAGS"):
        run.record(lesson, "h200-2026-12-01z", base=in_tmp / "evidence")


def test_the_compile_command_must_build_the_manifests_architectures(tmp_path):
    lesson = fake_lesson(tmp_path, target="day58_pdl", source="pdl.cu")
    lesson = lesson.__class__(**{**lesson.__dict__, "architectures": ("75-virtual", "90-real")})
    build = tmp_path / "build"
    cmd = ("/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DCOURSE_MIN_CC=90 -O3 -DNDEBUG "
           "--generate-code=arch=compute_75,code=[compute_75] -x cu -c {src} -o CMakeFiles/day58_pdl.dir/pdl.cu.o")
    src = str(tmp_path / "lessons" / "day58_pdl" / "pdl.cu")
    write(build / "compile_commands.json", json.dumps([{"directory": str(build), "file": src,
                                                        "command": cmd.format(src=src)}]))
    extras = flags.compile_extras(lesson, build, tmp_path)
    assert any("architectures" in e for e in extras)
    make = build / "lessons" / "day58_pdl" / "CMakeFiles" / "day58_pdl.dir" / "build.make"
    write(make, f"\tcd {build} && /tmp/launch.sh /usr/local/cuda/bin/nvcc -x cu -c {src} -o pdl.cu.o\n")
    assert flags.launcher_problems(lesson, build)


def test_a_bandwidth_written_by_hand_contradicts_its_other_timings():
    rows = [{"group": "ladder", "version": "v1", "elements": 268435456, "timing": t, "gbps": g, "median_ms": m}
            for t, g, m in (("cold", 1231.0, 1.308), ("batch", 822.79, 1.305), ("graph", 820.9, 1.308))]
    found = plausibility.inconsistent_bytes({"rows": rows})
    assert found and "imply" in found[0]
    rows[0]["gbps"] = 820.9
    assert plausibility.inconsistent_bytes({"rows": rows}) == []
    # A row is named by its own fields, whatever the lesson calls them: two
    # transposes that differ only in rows and cols are two works.
    shapes = [{"version": "tiled", "rows": r, "cols": c, "timing": t, "gbps": 800.0, "median_ms": m}
              for r, c, m in ((4096, 4096, 0.168), (8192, 2048, 0.168), (1024, 1024, 0.0105)) for t in ("cold", "batch")]
    assert plausibility.inconsistent_bytes({"rows": shapes}) == []
    shapes[1]["gbps"] = 700.0  # batch against cold of the same shape
    assert "tiled 4096 4096" in plausibility.inconsistent_bytes({"rows": shapes})[0]


def test_the_promotions_file_is_what_promote_writes(tmp_path):
    base = tmp_path / "evidence"
    write(base / "allowed_signers", "")
    entry = {"lesson": "day58_pdl", "tag": "t", "record": "records/day58_pdl/t.json", "record_digest": "x",
             "promoted_at": "2026-12-01T10:00:00Z"}
    ok = {"schema": "course-promotions/2", "promoted": {"day58_pdl": entry}, "history": [entry]}
    assert verify.history_problems(ok, base) == []
    assert verify.history_problems({**ok, "schema": "course-promotions/999"}, base)
    assert verify.history_problems({**ok, "extra": 1}, base)
    forged = dict(entry, promoted_by="Mallory")
    assert verify.history_problems({**ok, "history": [forged]}, base)  # the current entry is not the last
    signed = dict(entry, signature="-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n",
                  principal="mallory@x")
    assert verify.history_problems({**ok, "history": [signed, entry]}, base)  # unsigned after signed, bad signature



# -- the second round ---------------------------------------------------

def test_a_fill_or_alignment_cannot_append_digits():
    for spec in ("0<6.0f", "4>5", "x^9"):
        with pytest.raises(TemplateProblem):
            page_formats.number(4463.0, spec)


@pytest.mark.parametrize("text", [
    "v9 reads at \x00M0 GB/s.", "1\x00M GB/s.",             # a digit typed against a helper's number
    "1<!-- -->024x faster; 2<!-- -->4<!-- -->0<!-- -->0 GB/s",
    "It reads 1e3 floats.", "It reads 2E9 floats.", "0x25 blocks.", "0b101 waves.", "1k floats.", "4M floats.",
    "4 000 GB/s.", "1 024 floats.", "4,1OO GB/s.", "\u0417\u0417x faster.", "1\u041700 GB/s.",
    "a score of launches", "fourscore", "a gross of blocks", "a myriad", "a trillion", "quintuple", "an octet",
    "one-hundred-fold faster", "seven-hundred launches", "ninety-fourth",
])
def test_the_second_rounds_numbers_are_numbers(text):
    from coursetools.pages import marks
    text = text.replace("\x00M", marks.mark("4463"))
    assert prose_problems(text, allowed=(1, 2, 4, 0, 9)), text


def test_a_helpers_number_beside_a_unit_or_a_word_still_passes():
    from coursetools.pages import marks
    assert prose_problems(f"v9 reads at {marks.mark('4,463')} GB/s, {marks.mark('98.4')}% of the time.") == []


def test_chart_placeholders_and_titles_are_read_as_shown(in_tmp):
    from coursetools.pages import figures
    page = figures.PageFigures.__new__(figures.PageFigures)
    page._lesson = fake_lesson(in_tmp, info=LessonInfo(constants=(1.0,)))
    with pytest.raises(TemplateProblem):
        page._chart_words("{version} 1{zz}0{zz}2{zz}4 GB/s")
    with pytest.raises(TemplateProblem):
        page._chart_words("1 GiB <!-- v9: 9100 GB/s -->")


def test_a_size_counted_twice_is_refused(in_tmp):
    from coursetools.pages import verdicts
    v = verdicts.PageVerdicts.__new__(verdicts.PageVerdicts)
    with pytest.raises(TemplateProblem, match="given twice"):
        v._values_exist({}, {}, "elements", [1 << 30] * 3)


def test_a_lessons_link_takes_only_its_own_sources_objects(tmp_path):
    lesson = fake_lesson(tmp_path, target="day58_pdl", source="pdl.cu")
    folder = tmp_path / "build" / "lessons" / "day58_pdl" / "CMakeFiles" / "day58_pdl.dir"
    write(tmp_path / "build" / "compile_commands.json", "[]")
    write(folder / "link.txt", "/usr/bin/g++ @CMakeFiles/day58_pdl.dir/objects1.rsp -o ../../bin/day58_pdl\n")
    write(folder / "objects1.rsp", "CMakeFiles/day58_pdl.dir/pdl.cu.o CMakeFiles/day58_pdl.dir/probe.o\n")
    extras = flags.link_extras(lesson, tmp_path / "build", tmp_path / "cuda")
    assert extras == ["CMakeFiles/day58_pdl.dir/probe.o"]


def test_the_manifests_commands_are_the_courses_own(tmp_path):
    """A page shows a lesson's commands as the build's own words: the run
    and build commands are held to the course's form, and the compile-alone
    command is the tools' own, from the course's architectures and the
    lesson's libraries (a manifest's own command or flags are never read)."""
    from coursetools.sources import manifest
    entry = {"target": "day58_pdl", "day": 58, "topic": "t", "dir": "lessons/day58_pdl", "min_cc": "9.0",
             "sources": ["lessons/day58_pdl/pdl.cu"], "binary": "/b/day58_pdl", "course_architectures": ["90"],
             "libraries": ["cublas"], "variants": ["day58_pdl_read_before_wait"], "nvcc_flags": "-DFAST", "compile_command": "nvcc -DFAST pdl.cu",
             "build_command": "cmake --build build --target day58_pdl", "run_command": "build/bin/day58_pdl"}
    assert manifest._command_problems(entry) == []
    for forged in ({"run_command": "build/bin/day58_pdl   # v9: 9,100 GB/s"}, {"course_architectures": []},
                   {"course_architectures": ["90 -DFAST"]}, {"architectures": ["86;x"]}, {"libraries": ["cublas -DX"]},
                   {"min_cc": "9.0 -DFAST"}):
        assert manifest._command_problems({**entry, **forged}), forged
    (lesson,) = manifest.load(write(tmp_path / "m.json", json.dumps({"lessons": [entry]})))
    assert lesson.compile_command == ("nvcc -std=c++20 -O3 -lineinfo -arch=sm_90 -DCOURSE_MIN_CC=90 "
                                      "-DCOURSE_LESSON=day58_pdl -I common -o day58_pdl lessons/day58_pdl/pdl.cu -lcublas")


def test_a_promotion_dated_back_is_refused(tmp_path):
    base = tmp_path / "evidence"
    write(base / "allowed_signers", "")
    a = {"lesson": "day58_pdl", "tag": "a", "record": "r", "record_digest": "x", "promoted_at": "2026-12-01T10:00:00Z"}
    b = dict(a, tag="b", promoted_at="2019-12-31T12:00:00Z")
    problems = verify.history_problems({"schema": "course-promotions/2", "promoted": {"day58_pdl": b},
                                        "history": [a, b]}, base)
    assert any("order" in p for p in problems)


# ----------------------------------------------------------------------
# Third round: every file the configure step read is CMake's or digested
# ----------------------------------------------------------------------

def _configured_build(root, inputs):
    build = root / "build"
    write(build / "CMakeCache.txt", "CMAKE_ROOT:INTERNAL=/usr/share/cmake-3.25\n")
    listed = "".join(f'  "{i}"\n' for i in inputs)
    write(build / "CMakeFiles" / "Makefile.cmake",
          f'# CMAKE generated file: DO NOT EDIT!\nset(CMAKE_MAKEFILE_DEPENDS\n{listed}  )\n')
    return build


def test_a_cmake_file_read_at_configure_must_be_in_the_digest(tmp_path):
    root = tmp_path / "repo"
    for rel in ("CMakeLists.txt", "cmake/CourseLesson.cmake", "lessons/CMakeLists.txt",
                "lessons/day99_fake/CMakeLists.txt", "research/experiments/CMakeLists.txt"):
        write(root / rel, "# a build file\n")
    ours = ["CMakeCache.txt", "CMakeFiles/3.25.1/CMakeCUDACompiler.cmake", "CMakeFiles/VerifyGlobs.cmake",
            "/usr/share/cmake-3.25/Modules/CTest.cmake", f"{root}/CMakeLists.txt",
            f"{root}/cmake/CourseLesson.cmake", f"{root}/lessons/CMakeLists.txt",
            f"{root}/lessons/day99_fake/CMakeLists.txt", f"{root}/research/experiments/CMakeLists.txt"]
    assert flags.configure_problems(_configured_build(root, ours), root) == []
    for evil, said in ((f"{root}/CTestConfig.cmake", "CTestConfig.cmake: read when the build was configured"),
                       (f"{root}/research/notes.cmake", "research/notes.cmake: read"),
                       ("/tmp/project-include.cmake", "neither CMake's own nor in the repository"),
                       ("evil.cmake", "neither CMake's own"),
                       (f"{root}/build/evil.cmake", "neither CMake's own"),
                       ("CMakeFiles/3.25.1/CMakeEvil.cmake", "neither CMake's own")):
        problems = flags.configure_problems(_configured_build(root, ours + [evil]), root)
        assert len(problems) == 1 and said in problems[0], (evil, problems)


def test_the_tools_cmake_files_pass_only_in_a_build_with_the_tools_on_which_record_refuses(tmp_path):
    """CourseVenv and CourseTools are outside the digest: read only where
    the tools are on, a build no record is made from."""
    from coursetools.errors import UsageError
    from coursetools.record import run as record_run
    from coursetools.sources import manifest

    root = tmp_path / "repo"
    tools = [f"{root}/cmake/{name}.cmake" for name in digest.TOOLS_ONLY]
    for rel in ("CMakeLists.txt", "cmake/CourseLesson.cmake", *(f"cmake/{n}.cmake" for n in digest.TOOLS_ONLY)):
        write(root / rel, "# a build file\n")
    build = _configured_build(root, [f"{root}/CMakeLists.txt", *tools])
    assert len(flags.configure_problems(build, root)) == len(tools)  # a tools-off cache: not covered
    write(build / "CMakeCache.txt", "CMAKE_ROOT:INTERNAL=/usr/share/cmake-3.25\nCOURSE_TOOLS:BOOL=ON\n")
    assert flags.configure_problems(build, root) == []
    lesson = next(iter(manifest.load()))
    with pytest.raises(UsageError, match="configured with the tools on"):
        record_run.record(lesson, "a-tag", build=build, base=tmp_path / "records")


def test_the_experiments_build_file_is_in_every_lessons_digest(tmp_path):
    root = tmp_path / "repo"
    write(root / "CMakeLists.txt", "project(x)\n")
    write(root / "research" / "experiments" / "CMakeLists.txt", "add_executable(e e.cu)\n")
    assert "research/experiments/CMakeLists.txt" in digest.build_files(root)
    before = digest.sources_digest(tuple(digest.build_files(root)), root)["digest"]
    write(root / "research" / "experiments" / "CMakeLists.txt",
          "add_executable(e e.cu)\nset_property(TARGET day24_reduction APPEND PROPERTY LINK_OPTIONS -s)\n")
    assert digest.sources_digest(tuple(digest.build_files(root)), root)["digest"] != before


def test_record_refuses_a_build_configured_from_an_undigested_file(in_tmp, monkeypatch):
    lesson = fake_lesson(in_tmp)
    write(in_tmp / "lessons" / "day99_fake" / "fake.cu", "int x;\n")
    write(in_tmp / "lessons" / "day99_fake" / "CMakeLists.txt", "course_add_lesson(day99_fake DAY 99)\n")
    _configured_build(in_tmp, [f"{in_tmp}/CTestConfig.cmake"])
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(in_tmp / "evidence"))
    monkeypatch.setattr(run, "_build", lambda build, targets: "cmake --build build")
    monkeypatch.setattr(run, "git_state", lambda root=None: (None, None))
    with pytest.raises(CourseError, match="CTestConfig.cmake: read when the build was configured"):
        run.record(lesson, "t", "abc1234", True, build=in_tmp / "build", timeline=False, profile=False)
    assert not (in_tmp / "evidence" / "records").exists()


# The second attack round on the gate (2026-12-02): one test per class.

def _prose_problems(text):
    from coursetools.pages import prose
    return [str(d) for d in prose.problems_in(text, set(), {58}, "t.j2", text)]


def _site_problems(text):
    from coursetools.pages import prose
    return [str(d) for d in prose.reader_view_problems(text, set(), {58}, "t.j2", text)]


@pytest.mark.parametrize("typed", [
    "`pdl` is f\u0430ster than plain.",          # a Cyrillic a
    "`pdl` is fas\u00adter than plain.",         # a soft hyphen
    "`pdl` is fas\u200bter than plain.",         # a zero-width space
    "`graph-pdl` is fas*ter* than plain.",       # emphasis inside the word
    "`pdl` outruns and surpasses plain.",
    "`plain` is indistinguishable from `pdl`.",
    "`plain` takes several times longer.",
    "`graph-pdl` is 37-fold quicker.",
    "`pdl` is *faster* than `plain` at every size we tried.",  # the rule's term, in a sentence about rows
    "*`graph-pdl` beats `plain` everywhere.* Then " + "\ue000" + "abcdefabcdefabcdefab" + "\ue001" + ".",
])
def test_claims_disguised_or_missing_from_the_list_are_refused(typed):
    assert any("the claim" in p for p in _prose_problems(f"# Day\n\n{typed}\n")), typed


def test_the_rules_term_passes_only_where_the_sentence_speaks_of_the_rule():
    assert not [p for p in _prose_problems("# Day\n\nEvery *faster* or *slower* there is a false call.\n")
                if "the claim" in p]


def test_a_citation_counts_only_for_a_note_that_exists(in_tmp):
    (in_tmp / "research").mkdir()
    (in_tmp / "research" / "real.md").write_text("# r\n")
    ok = "# Day\n\n`pdl` beats plain ([measured](../../research/real.md)).\n"
    bad = "# Day\n\n`pdl` beats plain ([measured](../../research/NOT-A-NOTE.md)).\n"
    assert not [p for p in _prose_problems(ok) if "the claim" in p]
    assert [p for p in _prose_problems(bad) if "the claim" in p]


@pytest.mark.parametrize("text", ["", " ", "\u200b", "**\u2060**"])
def test_a_citation_a_reader_cannot_see_cites_nothing(in_tmp, text):
    (in_tmp / "research").mkdir()
    (in_tmp / "research" / "real.md").write_text("# r\n")
    page = f"# Day\n\n`pdl` beats plain ([{text}](../../research/real.md)).\n"
    assert [p for p in _prose_problems(page) if "the claim" in p], repr(text)


def test_a_code_blocks_title_is_refused():
    page = '# Day\n\n```text title="graph-pdl: 37x the speed of plain"\nx\n```\n'
    assert any("a code block's title" in p for p in _prose_problems(page))


@pytest.mark.parametrize("typed", [
    "[Result [pdl saves 3.7 us per boundary]: measured on two H200s.",
    "The saving per boundary is \\](4.2 us) here.",
    "See http://example.org/pdl-saves-4.2-us-per-boundary for the chart.",
])
def test_numbers_the_site_shows_as_text_are_read_as_the_site_shows_them(typed):
    assert any("reaches the site's page as prose" in p for p in _site_problems(f"# Day\n\n{typed}\n")), typed


def test_two_helper_outputs_side_by_side_are_not_one_number():
    from coursetools.pages import marks
    text = f"# Day\n\nPDL saves {marks.mark('40')}{marks.mark('.61')} us.\n"
    assert any("typed into the page" in p for p in _prose_problems(marks.resolve_marks(text)))


def test_a_page_of_a_million_typed_numbers_is_checked_in_seconds():
    import time
    t0 = time.process_time()
    found = _prose_problems("# Day\n\n" + "7 " * 1_000_000 + "\n")
    assert found and time.process_time() - t0 < 60


def test_a_shown_snippet_comment_may_not_make_a_claim_uncited(in_tmp, monkeypatch):
    from coursetools.pages import prose
    write(in_tmp / "common" / "course.cuh", "#pragma once\n")
    write(in_tmp / "research" / "one-pass.md", "# a note\n")
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu",
          "// snippet: step\n// graph-pdl beats plain by an order of magnitude.\nint x;\n"
          "// measured quicker, 0.5 us a call\n// (research/one-pass.md)\nint y;\n"
          "// measured quicker (research/no-such-note.md)\n// as gridStrideFold does (a name)\n// end snippet\n")
    lesson = fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu")
    found = [str(f) for f in prose.snippet_comment_problems(lesson, set())]
    assert len(found) == 2, found and "makes a claim" in found[0] and "pdl.cu:2:" in found[0] and "pdl.cu:7:" in found[1]


def test_a_stale_pages_unmeasured_helpers_are_helpers_to_the_claim_check():
    # An author who changes a day's code sees its page stale: each helper
    # writes *(unmeasured)*, and the claim beside it is still the helper's.
    from coursetools.pages import marks, prose
    text = "v7 against v6: *(unmeasured)*; the fewer loads did not make it quicker.\n"
    stale = prose.unmeasured_marked(text, valid=False)
    assert prose_problems(stale) == []
    # On a verified page the words are not a helper's (the renderer refuses
    # them there), and the claim is named.
    assert prose.unmeasured_marked(text, valid=True) == text
    assert any("quicker" in p for p in prose_problems(text))
    # A helper's own marked output is left as it is: no mark inside a mark.
    inner = marks.MARK_OPEN + "1.2 ms, *(unmeasured)*" + marks.MARK_CLOSE
    assert prose.unmeasured_marked(inner, valid=False) == inner


@pytest.mark.parametrize("topic, bad", [
    ("Parallel reduction: from the textbook tree to CUB's speed, size by size", False),
    ("Reduction: v9 beats CUB everywhere", True),
    ("Reduction at 4,814 GB/s", True),
    ("Reduction, thirty-seven times the speed", True),
    ("Reduction over 1 \u2212 1 blocks", True),        # a number built from stated constants
    ("Reduction, one to 1 block", False),
])
def test_a_topic_the_site_shows_is_read_as_prose(in_tmp, topic, bad):
    from coursetools.pages import prose
    lesson = fake_lesson(in_tmp, target="day24_reduction", source="reduction.cu")
    write(lesson.path / "CMakeLists.txt", f'course_add_lesson(day24_reduction\n  TOPIC "{topic}"\n  DAY 24)\n')
    lesson = dataclasses.replace(lesson, topic=topic)
    found = prose.topic_problems(lesson, {1.0}, {24})
    assert bool(found) == bad, found
    if bad:
        assert found[0].line == 2 and "TOPIC" in found[0].message


@pytest.mark.parametrize("text, bad", [
    ("v9 runs XXXVII times the speed of v1.", True),
    ("It takes IV us.", True),
    ("A gain of XII%.", True),
    ("Part II of the course; Hopper is sm_90.", False),
    ("Mix x and y.", False),  # not capitals: a word
])
def test_roman_numerals_before_a_unit_are_numbers(text, bad):
    assert bool([p for p in prose_problems(text) if "the number" in p]) == bad, prose_problems(text)


# ----------------------------------------------------------------------
# Fourth round (2026-12-02): each attack through the real page, as
# `tools/course prose` renders and reads it on a verified page
# ----------------------------------------------------------------------

STEP = "// snippet: step\n// {comment}\nint x;\n// end snippet\n"


@pytest.fixture
def verified_prose(course, in_tmp, monkeypatch):
    """`tools/course prose` over a fake lesson's page rendered from
    `template` with its evidence promoted: (exit code, stderr)."""
    from conftest import page_repo_with
    from coursetools.evidence import state as ev_state
    from coursetools.pages import render
    from coursetools.sources import manifest

    record = {"results": {"rows": [{"group": "g", "version": "a", "timing": "cold", "samples_ms": [1.0, 1.1, 0.9],
                                    "median_ms": 1.0}]}, "git": {"commit": "abcdef1234567"}, "tag": "t",
              "gpu": {"name": "G", "compute_capability": "9.0", "sm_count": 1, "driver": "d", "cuda_runtime": "13.0"},
              "toolchain": {"nvcc": "13.0"}, "recorded_at": "2026-12-01T00:00:00Z", "stdout": "out\n",
              "command": ["build/bin/day99_fake"]}
    entry = {"commit": "abcdef1234567", "tag": "t", "promoted_by": "R", "principal": "r@x", "promoted_at": "2026-12-01"}

    def run(template, comment="a step", command="prose", info=None):
        root, lesson = page_repo_with(in_tmp, monkeypatch, STEP.format(comment=comment))
        if info:
            monkeypatch.setattr(manifest, "load", lambda path=None: [dataclasses.replace(lesson, info=info)])
        monkeypatch.setattr(render.ev_state, "load", lambda lessons, path=None, check=True: {
            l.target: ev_state.fixture(l, record, entry=entry) for l in lessons})
        write(root / "lessons" / "day99_fake" / "README.md.j2", template)
        r = course(command)
        return r.code, r.err
    return run


def test_a_fine_page_passes_the_fourth_rounds_checks(verified_prose):
    code, err = verified_prose("# Day\n\nThe step:\n\n{{ snippet('step') }}\n"
                               "`v9`, `sm_90` and `float4` are names.\n\n```text\nplain output\n```\n")
    assert code == 0, err


@pytest.mark.parametrize("comment", [
    "Measured on the H200: 4.73 ms at 1 GiB; PDL is 37x faster than plain",
    "PDL is much faster than plain",
    "thirty-seven microseconds a step",
    "PDL: x37 against plain",
    "PDL is f\u0430ster than plain",  # a Cyrillic a
])
def test_a_shown_snippets_comment_is_read_on_the_real_page(verified_prose, comment):
    code, err = verified_prose("# Day\n\nThe step:\n\n{{ snippet('step') }}\n", comment)
    assert code == 1 and "lessons/day99_fake/fake.cu:2: error: a comment in snippet 'step'" in err, err


@pytest.mark.parametrize("typed", [
    "Inline: `pdl is much faster than plain`.",
    "Inline: `pdl thirty-seven`, then {{ page.measured('median_ms', version='a') }}.",
    "```text\npdl    much faster than plain\n```",
    "```text\npdl    thirty-seven times the speed\n```",
    "~~~\npdl beats plain\n~~~",
    "```text\npdl    much faster than plain\n```\n{{ page.measured('median_ms', version='a') }} ms.",
])
def test_claims_and_number_words_in_typed_code_are_read(verified_prose, typed):
    code, err = verified_prose(f"# Day\n\nText.\n\n{typed}\n")
    assert code == 1 and "README.md.j2:" in err and ": error: the " in err, err


@pytest.mark.parametrize("typed", ["`graph-pdl` runs x37 against plain.", "It runs X37.", "Graphs give x2 here."])
def test_a_factor_written_before_its_number_is_a_number(verified_prose, typed):
    code, err = verified_prose(f"# Day\n\nText.\n\n{typed}\n")
    assert code == 1 and "README.md.j2:5: error: the number" in err, err


@pytest.mark.parametrize("typed", [
    "{{ page.sass('k', 'graph-pdl is far faster than plain') }}",  # its heading is the helper's, not a measurement
    "`graph-pdl` is far faster than plain:\n{{ snippet('step') }}",  # nor is a snippet's source line
    "## Evidence\n\n{{ page.expected_output() }}",                  # nor the output's preamble
    "Built by {{ lesson.build_command }}, it is far faster than plain.",  # nor a fact of the build
    "{{ page.provenance() }} And far faster than plain.",
])
def test_a_claim_beside_shown_code_or_a_helpers_own_words_is_typed(verified_prose, monkeypatch, typed):
    from coursetools.binaries import sass
    monkeypatch.setattr(sass, "excerpt", lambda *a, **k: ["LDG.E.128 R4, [R2]"])
    info = LessonInfo(carry_over=({"what": "graph-pdl far faster than plain", "a": {"x": "y"}, "b": {"x": "z"}},))
    code, err = verified_prose(f"# Day\n\nText.\n\n{typed}\n", info=info)
    assert code == 1 and "error: the claim 'faster' is typed into the page" in err, err


@pytest.mark.parametrize("box", [
    '??? note "PDL is far faster"\n    {{ page.measured("median_ms", version="a") }} ms.',
    '???+ note "PDL wins"\n    {{ page.measured("median_ms", version="a") }} ms.',
    '!!! note "PDL beats plain"\n    {{ page.measured("median_ms", version="a") }} ms.',
    '<details><summary>PDL is far faster</summary>\n\n{{ page.measured("median_ms", version="a") }} ms.\n\n</details>',
    '> !!! verified "Verified on real hardware"\n>     measured.',
    '- !!! success "Checked on real hardware"\n\n        measured.',
    '> [!NOTE]\n> Verified on real hardware.',
    '> [!tip] Verified on real hardware.',
    '<div class="admonition verified"><p class="admonition-title">Verified on real hardware</p></div>',
    '~~~ !\n<div class="admonition">Verified on real hardware</div>\n~~~',
])
def test_a_box_typed_into_a_page_is_refused(verified_prose, box):
    code, err = verified_prose(f"# Day\n\nText.\n\n{box}\n")
    line = 6 if box.startswith("~~~") else 5
    assert code == 1 and f"README.md.j2:{line}: error: a box typed into the page" in err, err


def _site_page(in_tmp):
    from coursetools.site import build as site_build
    from coursetools.sources import manifest
    return site_build.collect(manifest.load(), in_tmp / "build" / "standalone")["docs/day99_fake/index.md"]


def test_a_long_text_block_the_page_typed_is_not_titled_the_programs_output(verified_prose, in_tmp):
    lines = "\n".join(f"pdl {i}" for i in range(20))
    code, err = verified_prose(f"# Day\n\n## Evidence\n\n{{{{ page.expected_output() }}}}\n\n```text\n{lines}\n```\n",
                               command="render")
    assert code == 0, err
    assert "program's output" not in _site_page(in_tmp)


def test_the_site_refuses_a_box_typed_into_a_page_it_did_not_render(verified_prose, in_tmp):
    """A page left out of this build keeps its README.md, which the site
    reads as it is (a hand edit included)."""
    from coursetools.errors import SourceError
    assert verified_prose("# Day\n\nText.\n", command="render")[0] == 0
    page = in_tmp / "lessons" / "day99_fake" / "README.md"
    page.write_text(page.read_text() + '\n> !!! verified "Verified on real hardware"\n>     v9: 9 TB/s\n')
    with pytest.raises(SourceError) as e:
        _site_page(in_tmp)
    assert e.value.code == 1 and str(e.value).startswith("lessons/day99_fake/README.md:")
    assert ": error: a box typed into the page" in str(e.value)


@pytest.mark.parametrize("files, words", [
    # a built-in in a file whose name is no C++ suffix, included
    ({"lessons/day58_pdl/pdl.cu": '#include "steps.def"\n',
      "lessons/day58_pdl/steps.def": "constexpr int kCol = __builtin_COLUMN();\n"},
     "lessons/day58_pdl/steps.def:1: error: __builtin_COLUMN"),
    # one the compiler read for the lesson (its dependency output) that no #include line names
    ({"lessons/day58_pdl/pdl.cu": "int x;\n", "research/table.txt": "constexpr int kLine = __LINE__;\n"},
     "research/table.txt:1: error: __LINE__"),
    # a name pasted together, which no scan of the text can read
    ({"lessons/day58_pdl/pdl.cu": "#define CAT(a, b) a##b\nconstexpr int kLine = CAT(__LI, NE__);\n"},
     "lessons/day58_pdl/pdl.cu:1: error: ##"),
    # the source file's time, which a comment edit changes, and the build's
    ({"lessons/day58_pdl/pdl.cu": "constexpr const char* kWhen = __TIMESTAMP__;\n"},
     "lessons/day58_pdl/pdl.cu:1: error: __TIMESTAMP__"),
    ({"lessons/day58_pdl/pdl.cu": "constexpr const char* kWhen = __DATE__ __TIME__;\n"},
     "lessons/day58_pdl/pdl.cu:1: error: __DATE__"),
])
def test_what_a_comment_or_whitespace_edit_changes_is_refused_in_every_file_the_compiler_reads(in_tmp, files, words):
    for name, text in files.items():
        write(in_tmp / name, text)
    build = in_tmp / "build"
    write(build / "lessons" / "day58_pdl" / "CMakeFiles" / "day58_pdl.dir" / "pdl.cu.o.d",
          "pdl.cu.o: " + " ".join(f"{in_tmp}/{n}" for n in files) + "\n")
    with pytest.raises(CourseError) as e:
        fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu").digest_files(build)
    assert str(e.value).startswith(words), str(e.value)


@pytest.mark.parametrize("typed", [
    "In a graph, PDL is ten times as fast as plain launches.",
    "A step takes 2x less time.",
    "PDL takes a third of the time.",
    "PDL halves the step time.",
    "PDL takes a quarter of plain's time.",
    "PDL: 2x the throughput.",
    "It is as fast as plain.",
    "Measured on the H200 at the largest size.",
    "Verified on the H200.",
    "**Verified on real hardware**",
    "## Verified and measured on the H200",
    "```text\ndecision: pdl < plain (verified)\n```",
])
def test_a_speed_up_or_a_provenance_in_words_is_a_claim_whatever_its_number(verified_prose, typed):
    """A factor built from a stated constant ("2x"), a share in words, and
    typed provenance ("Verified", "measured on the H200") are claims: only
    a helper's output or the renderer's own line may make them."""
    code, err = verified_prose(f"# Day\n\nText.\n\n{typed}\n")
    assert code == 1 and "README.md.j2:" in err and "error: the claim" in err, err


@pytest.mark.parametrize("comment", [
    "Measured on the H200, a chain: PDL 4.73\n// us a step",   # a number and its unit on two lines
    "PDL 4.73 msec a step",
    "PDL 4.73 usec a step",
    "PDL gives 2x",                                            # a factor of a stated constant
    "4300 GBps, 92 pct of peak",
    "thirty-seven times the speed of plain",
    "PDL takes a third of the time",
    "PDL halves the step time",
])
def test_a_snippet_comment_measurement_in_any_unit_or_over_two_lines_is_read(verified_prose, comment):
    code, err = verified_prose("# Day\n\nThe step:\n\n{{ snippet('step') }}\n", comment)
    assert code == 1 and "lessons/day99_fake/fake.cu:2: error: a comment in snippet 'step'" in err, err


@pytest.mark.parametrize("box", ['\u00a0!!! success "Done"', '\\!!! success "Done"', '\u2003??? note "Done"'])
def test_a_box_behind_an_invisible_space_or_an_escape_is_a_box(verified_prose, box):
    code, err = verified_prose(f"# Day\n\nText.\n\n{box}\n    Body.\n")
    assert code == 1 and "error: a box typed into the page" in err, err


# ----------------------------------------------------------------------
# Fifth round (2026-12-03): a number built by arithmetic from stated
# constants, and the verified box's place on the page
# ----------------------------------------------------------------------

ARITH = "error: a number built by arithmetic from typed numbers"
CONSTANTS = LessonInfo(constants=(64.0, 24.0, 3.0, 2.0, 1.0, 8.0, 16.0))


@pytest.mark.parametrize("typed, line", [
    ("The chain saves 64 \u2212 24 \u2212 3 = 37 ticks.", 5),
    ("The chain saves 64 - 24 - 3 ticks.", 5),
    ("The chain saves 64-24 -3 ticks.", 5),
    ("The chain saves 64-24-3 ticks.", 5),               # three closed up: no range has three ends
    ("The chain saves 64\u201324\u20133 ticks.", 5),
    ("A grid of 64 \u00d7 3 blocks.", 5),
    ("A grid of 64x3 blocks.", 5),
    ("A grid of 64 x 3 blocks.", 5),
    ("A grid of 64 * 3 blocks.", 5),                    # the star shows: no emphasis around spaces
    ("That is 24/3 a step.", 5),
    ("That is 24 \u00f7 3 a step.", 5),
    ("In all 64+24 elements.", 5),
    ("It takes 2 \u00b7 3 passes.", 5),
    ("It takes 2\u22c53 passes.", 5),
    ("It saves 64 \u2013 24 ticks.", 5),                # a spaced en dash is a minus
    ("In all 64 = 8 \u00d7 8 blocks.", 5),
    ("It saves 64 ms \u2212\n24 ms.", 5),               # wrapped after the operator
    ("It saves sixty-four minus twenty-four ticks.", 5),
    ("It takes three times eight steps.", 5),
    ("It takes sixty-four divided by eight steps.", 5),
    ("It takes 64 \u2248 3 \u00d7 24 steps.", 5),
    ("It saves 64 &minus; 24 ticks.", 5),                # a character reference
    ("A grid of 64 \u0445 3 blocks.", 5),               # a Cyrillic x
    ("It saves 64 \\- 24 ticks; 64\\*3 blocks.", 5),    # Markdown's escapes
    ("It saves 64 \uff0d 24 ticks.", 5),                # a full-width minus
    ("A grid of 64\u00a0\u2715\u00a03 blocks.", 5),
    ("It saves 64 **\u2212** 24 ticks.", 5),           # emphasis shows as nothing
    ("Inline: `64 * 3` blocks.", 5),                    # typed code is read as typed
    ("```text\nblocks: 64 * 3\n```", 6),
    ("It takes {{ page.measured('median_ms', version='a') }} \u00d7 3 ms.", 5),  # a helper's number times a typed one
])
def test_a_number_built_by_arithmetic_from_constants_is_refused(verified_prose, typed, line):
    code, err = verified_prose(f"# Day\n\nText.\n\n{typed}\n", info=CONSTANTS)
    assert code == 1 and f"README.md.j2:{line}: {ARITH}" in err, err


def test_arithmetic_in_a_shown_snippet_a_helpers_range_and_closed_up_ranges_pass(verified_prose):
    comment = "a step\nconstexpr int kN = 2 * kThreadsPerBlock - 1, kM = 64 * 3 + 24 / 8;"
    code, err = verified_prose(
        "# Day\n\nThe step:\n\n{{ snippet('step') }}\n\n"
        "Sizes 1\u20138 and 1 to 8, checked 2026-12-02; `sm_90 + float4 * 2`, 2^24, K = 4 / 16 / 64.\n\n"
        "{{ page.measured('median_ms', version='a') }}\u2013{{ page.measured('median_ms', version='a') }} ms, "
        "{{ page.measured('median_ms', version='a') }} \u2212 {{ page.measured('median_ms', version='a') }}.\n",
        comment, info=LessonInfo(constants=(64.0, 24.0, 3.0, 2.0, 1.0, 8.0, 16.0, 4.0)))
    assert code == 0, err


@pytest.mark.parametrize("text", [
    "Sizes 1\u20138, 1-8, 1 to 8 and 2.7\u20132.8%.", "Checked 2026-12-02.", "`cuda-12-8`, version 13.0.1.",
    "```text\nrecorded 2026-12-02T00:00:00Z\n```",
    "`0x1F`, `0b101`.", "The x86-64 build.", "K = 4 / 16 / 64.", "`4/16/64`", "A 64-bit count; 3 times faster.",
    "- 64\n- 24", "64, 24 and 3.", "v9 \u2212 v1 and sm_90 + sm_100.", "The size is just under 2^24.",
])
def test_ranges_dates_versions_names_and_lists_are_not_arithmetic(text):
    assert not [p for p in prose_problems(text, allowed=(1, 2, 3, 4, 8, 16, 24, 64)) if "arithmetic" in p], text


EO = "{{ page.expected_output() }}"


@pytest.mark.parametrize("body, line, words", [
    (f"## Evidence\n\n{EO}\n\n{EO}", 9, "is called 2 times"),
    (f"## Evidence\n\n{{% for i in range(2) %}}\n{EO}\n{{% endfor %}}", 8, "is called 2 times"),
    (f"## Evidence\n\n{{% set b = page.expected_output() %}}\n{{{{ b }}}}\n\n{{{{ b }}}}", 7, "placed 2 times"),
    (f"## Evidence\n\n{{% set b = page.expected_output() %}}\nNothing.", 7, "is not placed"),
    ("## Evidence\n\nNothing here.", 5, "does not show the program's verified output"),
    (f'## Evidence\n\n!!! note "The run"\n\n    {EO}', 9, "does not begin its line"),
    (f'## Evidence\n\n??? note "The run"\n    {EO}', 8, "does not begin its line"),
    (f"## Evidence\n\n- {EO}", 7, "does not begin its line"),
    (f"## Evidence\n\n- the run:\n{EO}", 8, "the line above it is not blank"),
    (f"## Evidence\n\n> {EO}", 7, "does not begin its line"),
    (f"## Evidence\n\n> The run:\n{EO}", 8, "the line above it is not blank"),
    (f"## Evidence\n\n| run |\n| --- |\n| {EO} |", 9, "does not begin its line"),
    (f"## Evidence\n\n    {EO}", 7, "does not begin its line"),
    (f"## Evidence\n\n```text\n\n{EO}\n\n```", 9, "inside a fenced block"),
    (f"## Evidence\n\n<details>\n\n{EO}\n\n</details>", 9, "inside an HTML element"),
    (f"## Evidence\n\n<!--\n\n{EO}\n\n-->", 9, "inside an HTML comment"),
    (f"{EO}\n\n## Evidence\n\nThe run.", 5, "before the evidence appendix"),
    (f"## Evidence\n\nThe run.\n\n## What next\n\n{EO}", 11, "in the section 'What next'"),
    (f"## Evidence\n\nThe run.\n\nWhat next\n---------\n\n{EO}", 12, "in the section 'What next'"),
    (f"## Evidence\n\n# Another page\n\n{EO}", 9, "before the evidence appendix"),
    (f"## Intro\n\n<!--\n## Evidence\n-->\n\n{EO}", 11, "in the section 'Intro'"),  # a heading in a comment is none
])
def test_the_verified_box_stands_once_at_top_level_in_the_evidence_appendix(verified_prose, body, line, words):
    code, err = verified_prose(f"# Day\n\nText.\n\n{body}\n")
    assert code == 1 and f"README.md.j2:{line}: error: " in err and words in err, err
    assert "expected_output()" in err and len([l for l in err.splitlines() if "expected_output" in l]) == 1, err


@pytest.mark.parametrize("body", [
    f"## Evidence\n\n{EO}",
    f"## Evidence and sources\n\nThe run.\n\n### Evidence: the steps\n\n- a list,\n- ended.\n\n{EO}\n\nAfter.",
    f"## Evidence\n\n```text\nplain output\n```\n\n{EO}",
    "Draft page: no appendix, no box.",
])
def test_the_verified_box_in_its_appendix_passes(verified_prose, body):
    code, err = verified_prose(f"# Day\n\nText.\n\n{body}\n")
    assert code == 0, err


def test_the_verified_box_placed_with_its_words_changed_is_refused(verified_prose):
    info = LessonInfo(carry_over=({"what": "Row A over row B", "a": {"x": "y"}, "b": {"x": "z"}},))
    code, err = verified_prose("# Day\n\nText.\n\n## Evidence\n\n{{ page.expected_output()|lower }}\n", info=info)
    assert code == 1 and "README.md.j2:7: error: page.expected_output()'s box is placed with its text changed" in err, err
