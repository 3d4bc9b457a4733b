"""The gate against forged numbers, one class of attack at a time: the
build definition, text reaching a page, review steps, resource limits,
files and JSON, the scaffolder and the programs. Each test is an attack
that got through once; each is now refused with its exit code and a
one-line error, nothing lost. (test_evidence.py and test_hostile.py hold
the older rounds.)"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from coursetools.evidence import state as ev_state

from conftest import packed, fake_lesson, write, page_repo_with
from coursetools.binaries import flags
from coursetools.record import run as ev_run
from coursetools.evidence import verify as ev_verify
from coursetools.record import review
from coursetools.pages import marks, page as page_api, prose, render
from coursetools.site import transforms
from coursetools.sources import buildfile, digest
from coursetools.sources.lessoninfo import load_lesson_info

REPO = Path(__file__).resolve().parents[2]
CMAKE = shutil.which("cmake")


def one_line(r, code):
    assert r.code == code, (r.code, r.out, r.err)
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    assert r.err.strip(), "no error line"


# ----------------------------------------------------------------------
# 1. The build definition is evidence
# ----------------------------------------------------------------------

POST_BUILD = ('course_add_lesson(day58_pdl\n  DAY 58\n  TOPIC "PDL"\n  SOURCES pdl.cu\n  MIN_CC 9.0)\n'
              "# a post-build step that swaps the binary\n"
              "add_custom_command(TARGET day58_pdl POST_BUILD COMMAND cp fake $<TARGET_FILE:day58_pdl>)\n")


@pytest.mark.skipif(CMAKE is None, reason="cmake is not installed")
def test_configure_refuses_a_custom_step_in_a_lesson_naming_its_line(tmp_path):
    lesson = write(tmp_path / "CMakeLists.txt", POST_BUILD)
    script = write(tmp_path / "check.cmake", f'include("{REPO}/cmake/CourseLesson.cmake")\n'
                                             f'course_check_lesson_file("{lesson}")\n')
    proc = subprocess.run([CMAKE, "-P", str(script)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"{lesson}:7: a lesson's CMakeLists.txt holds one course_add_lesson(...) call" in " ".join(proc.stderr.split())
    write(lesson, POST_BUILD.split("# a post")[0] + "# a comment is fine\n")
    assert subprocess.run([CMAKE, "-P", str(script)], capture_output=True).returncode == 0


def test_the_tools_refuse_the_same_step_on_the_tokens(in_tmp):
    write(in_tmp / "lessons" / "day58_pdl" / "CMakeLists.txt", POST_BUILD)
    problems = buildfile.build_file_problems(fake_lesson(in_tmp, target="day58_pdl"))
    assert len(problems) == 1 and str(problems[0]).startswith("lessons/day58_pdl/CMakeLists.txt:7: error:")


def test_the_digest_reads_the_build_and_lesson_toml_as_tokens(in_tmp):
    write(in_tmp / "common" / "course.cuh", "#pragma once\n")
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu", '#include "course.cuh"\n')
    cm = write(in_tmp / "lessons" / "day58_pdl" / "CMakeLists.txt", POST_BUILD.split("# a post")[0])
    toml = write(in_tmp / "lessons" / "day58_pdl" / "lesson.toml", "[page]\nconstants = [1, 2]  # sizes\n")
    write(in_tmp / "cmake" / "CourseLesson.cmake", "set(COURSE_CUDA_OPTIONS -O3)  # the flags\n")
    lesson = fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu")

    def d():
        return digest.sources_digest(lesson.digest_files(), in_tmp)["digest"]
    first = d()
    cm.write_text(cm.read_text().replace("MIN_CC 9.0)", "MIN_CC 9.0)   # re-indented, commented"))
    toml.write_text("# what the page may state\n[page]\nconstants = [ 1 , 2 ]\n")
    assert d() == first  # comments and layout keep a record valid
    write(in_tmp / "cmake" / "CourseLesson.cmake", "set(COURSE_CUDA_OPTIONS -O2)  # the flags\n")
    assert d() != first  # the course's build changed: every lesson is stale
    write(in_tmp / "cmake" / "CourseLesson.cmake", "set(COURSE_CUDA_OPTIONS -O3)  # the flags\n")
    assert d() == first
    toml.write_text("[page]\nconstants = [1, 2, 3]\n")
    assert d() != first


def test_the_digest_follows_an_include_anywhere_in_the_repository(in_tmp):
    write(in_tmp / "common" / "course.cuh", "#pragma once\n")
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu",
          '#include "course.cuh"\n#include "../../research/pdl_tuning.cuh"\n')
    tuning = write(in_tmp / "research" / "pdl_tuning.cuh", "constexpr int kSteps = 4;\n")
    lesson = fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu")
    files = lesson.digest_files()
    assert "research/pdl_tuning.cuh" in files
    before = digest.sources_digest(files, in_tmp)["digest"]
    tuning.write_text("constexpr int kSteps = 8;\n")
    assert digest.sources_digest(lesson.digest_files(), in_tmp)["digest"] != before


@pytest.mark.parametrize("line, words", [
    ('#include "/tmp/evil.cuh"\n', "outside the repository"),
    ('#include "../../../../../../../../../tmp/evil.cuh"\n', "outside the repository"),
    ("#define EVIL \"x.cuh\"\n#include EVIL\n", "made by a macro"),
])
def test_an_include_the_digest_cannot_vouch_for_is_refused(in_tmp, line, words):
    Path("/tmp/evil.cuh").write_text("int evil;\n")
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu", line)
    with pytest.raises(Exception) as e:
        fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu").digest_files()
    assert words in str(e.value) and "pdl.cu:" in str(e.value)


def test_the_compilers_own_dependency_output_is_digested(in_tmp):
    write(in_tmp / "lessons" / "day58_pdl" / "pdl.cu", "int x;\n")
    write(in_tmp / "research" / "hidden.h", "int hidden;\n")
    dep = in_tmp / "build" / "lessons" / "day58_pdl" / "CMakeFiles" / "day58_pdl.dir" / "pdl.cu.o.d"
    write(dep, f"pdl.cu.o : {in_tmp}/lessons/day58_pdl/pdl.cu \\\n  {in_tmp}/research/hidden.h \\\n  /usr/include/stdio.h\n")
    lesson = fake_lesson(in_tmp, target="day58_pdl", source="pdl.cu")
    assert "research/hidden.h" in lesson.digest_files(in_tmp / "build")
    write(dep, f"pdl.cu.o : /home/someone/evil.h\n")
    with pytest.raises(Exception, match="outside the repository and the toolchain"):
        lesson.digest_files(in_tmp / "build")


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_record_refuses_an_executable_the_link_step_did_not_produce(tmp_path):
    lesson = fake_lesson(tmp_path, target="day58_pdl")
    folder = tmp_path / "build" / "lessons" / "day58_pdl"
    obj = folder / "CMakeFiles" / "day58_pdl.dir" / "main.o"
    src = write(tmp_path / "main.c", "int main(void) { return 0; }\n")
    obj.parent.mkdir(parents=True)
    subprocess.run(["cc", "-c", str(src), "-o", str(obj)], check=True)
    (tmp_path / "build" / "bin").mkdir(parents=True)
    write(obj.parent / "link.txt", "cc CMakeFiles/day58_pdl.dir/main.o -o ../../bin/day58_pdl\n")
    subprocess.run(["cc", str(obj), "-o", str(tmp_path / "build" / "bin" / "day58_pdl")], check=True)
    assert flags.relink_problems(lesson, tmp_path / "build") == []
    write(tmp_path / "build" / "bin" / "day58_pdl", "#!/bin/sh\necho forged\n")  # what a POST_BUILD step did
    problems = flags.relink_problems(lesson, tmp_path / "build")
    assert problems and "not the executable the link step produces" in problems[0]


# ----------------------------------------------------------------------
# 2. One road to a page
# ----------------------------------------------------------------------

def check(text, allowed=(1,), template=""):
    return [str(p) for p in prose.problems_in(text, {float(a) for a in allowed}, {24, 58, 77}, "t.j2", template)]


@pytest.mark.parametrize("text", [
    "PDL saves 2&shy;.&shy;4 us per boundary.",
    "PDL saves 2\u200b.\u200b4 us per boundary.",
    "PDL saves 2\\.4 us per boundary.",
    "PDL saves 2**.**4 us per boundary.",
    "PDL saves 2`.`4 us.",
    "PDL saves `7.9 us` per boundary.",
    "```text\nplain  7.9 us\n```",
    "It is three times faster.",
    "It is twice as fast and saves a third.",
    "PDL saves &#55;.9 us.",
    "PDL saves &amp;#55;.9 us.",
    "![7.9 us faster](x.svg)",
    "[3.5x faster](https://example.org)",
])
def test_numbers_in_disguise_and_in_code_and_words_are_numbers(text):
    assert check(text), text


def test_raw_html_is_refused_with_its_line():
    problems = check("Fine.\n\n<h4 title=\"`\">PDL is **7.9 us faster**</h4>\n", allowed=range(0, 100),
                     template="# T\n\n<h4 title=\"`\">x</h4>\n")
    assert any("raw HTML" in p and p.startswith("t.j2:3:") for p in problems), problems


def test_a_lesson_toml_sentence_is_checked_as_prose(in_tmp, monkeypatch):
    """[[carry_over]] 'what' reaches the page beside the provenance: it is
    the author's words, checked like the template's."""
    lesson = fake_lesson(in_tmp)
    info = lesson.info.__class__(carry_over=({"what": "PDL saves 7.9 us per boundary, 3.5x faster",
                                              "a": {"x": "y"}, "b": {"x": "z"}},))
    lesson = lesson.__class__(**{**lesson.__dict__, "info": info})
    rec = {"results": {"rows": []}, "stdout": "out\n", "command": ["build/bin/x"], "tag": "t", "recorded_at": "2026-12-01T00:00:00Z",
           "gpu": {"name": "G", "compute_capability": "9.0", "sm_count": 1, "driver": "d", "cuda_runtime": "13.0"},
           "toolchain": {"nvcc": "13.0"}, "git": {"commit": "abcdef1234567"}}
    entry = {"promoted_by": "R", "principal": "r@x", "promoted_at": "2026-12-01"}
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry=entry, records=rec))
    marks.forget_marks()
    text = marks.resolve_marks(page.expected_output())
    problems = check(text)
    assert any("7.9" in p for p in problems) and any("3.5" in p for p in problems)


def test_a_helper_label_cannot_close_its_code_span(in_tmp, monkeypatch):
    lesson = fake_lesson(in_tmp)
    monkeypatch.setattr(page_api.sass if hasattr(page_api, "sass") else __import__("coursetools.binaries.sass",
                        fromlist=["x"]), "excerpt", lambda binary, kernel, n, show=None, **kw: ["LDG.E.128 R4, [R2]"])
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, [], entry=None, state="unverified"))
    marks.forget_marks()
    out = marks.resolve_marks(page.sass("_Z1kv", "k` **PDL is 7.9 us faster** `"))
    assert "**PDL is 7.9 us faster**" not in out.replace("``", "").split("`")[0::2][0]
    assert check(out), "the label's number must be seen by the prose check"


def test_a_verified_pages_machine_code_is_the_architecture_its_runs_used(in_tmp, monkeypatch):
    """On a verified page the excerpt is sm_90's where the records ran on
    an H200; a build for other GPUs (a student's sm_86) holds none, and the
    page says so instead of showing sm_86 code under the author's label
    ('the trigger (PREEXIT)', an instruction sm_86 lacks)."""
    from coursetools.binaries import sass as sass_module
    lesson = fake_lesson(in_tmp)
    rec = {"results": {"rows": []}, "stdout": "out\n", "command": ["build/bin/x"], "tag": "t",
           "recorded_at": "2026-12-01T00:00:00Z",
           "gpu": {"name": "G", "compute_capability": "9.0", "sm_count": 1, "driver": "d", "cuda_runtime": "13.0"},
           "toolchain": {"nvcc": "13.0"}, "git": {"commit": "abcdef1234567"}}
    entry = {"promoted_by": "R", "principal": "r@x", "promoted_at": "2026-12-01"}
    asked = []
    monkeypatch.setattr(sass_module, "excerpt", lambda *a, arch=None, **kw: asked.append(arch) or ["PREEXIT"])
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, entry=entry, records=rec))
    monkeypatch.setattr(sass_module, "machine_archs", lambda binary: [86])
    marks.forget_marks()
    out = marks.resolve_marks(page.sass("_Z1kv", "the trigger"))
    assert "holds no sm_90 machine code" in out and "PREEXIT" not in out and asked == []
    monkeypatch.setattr(sass_module, "machine_archs", lambda binary: [86, 90])
    out = marks.resolve_marks(page.sass("_Z1kv", "the trigger"))
    assert "PREEXIT" in out and asked == [90]


def test_only_the_renderers_provenance_becomes_the_verified_box():
    typed = "**Recorded on NVIDIA H200 (compute capability 9.0, 132 SMs), commit `abc`.**"
    assert "!!! verified" not in transforms.admonitions(typed, None)
    assert "!!! verified" not in transforms.admonitions(typed, "Recorded on something else.")


# ----------------------------------------------------------------------
# 3. Review steps confined
# ----------------------------------------------------------------------

def test_a_negative_build_must_be_a_declared_variant(tmp_path):
    toml = write(tmp_path / "lesson.toml", '[[review.negative]]\ntarget = "../../../../tmp/victim"\nargs = []\n'
                                          'expect = "fault"\n')
    with pytest.raises(Exception) as e:
        load_lesson_info(toml, "lessons/day99_fake/lesson.toml", ("day99_fake_bug",))
    assert "lessons/day99_fake/lesson.toml:2: error: review.negative[0].target" in str(e.value)


@pytest.mark.parametrize("code, text, started", [
    (127, "sh: 1: build/bin/x: not found", False),
    (126, "permission denied", False),
    (2, "day77_cluster_reduction: waived: it needs ...", False),
    (-11, "", False),
    (1, "day77_cluster_reduction on NVIDIA H200 (compute capability 9.0)\nCUDA error", True),
    (-6, "day77_cluster_reduction on NVIDIA H200 (compute capability 9.0)\n", True),
])
def test_a_fault_is_caught_only_once_the_program_started(code, text, started):
    assert review._started(text, "day77_cluster_reduction", code) is started


# ----------------------------------------------------------------------
# 4. Limits that hold
# ----------------------------------------------------------------------

@pytest.fixture
def page_repo(in_tmp, monkeypatch):
    return page_repo_with(in_tmp, monkeypatch, "int x;\n")




@pytest.mark.parametrize("pattern, words", [("(unclosed", "is not a regular expression"),
                                            ("x" * 300, "a pattern holds at most")])
def test_a_bad_sass_pattern_is_an_error_with_its_line(tmp_path, pattern, words):
    toml = write(tmp_path / "lesson.toml", f'[[sass]]\nkernel = "k"\npatterns = ["{pattern}"]\n')
    with pytest.raises(Exception) as e:
        load_lesson_info(toml, "lessons/day99_fake/lesson.toml")
    assert "lesson.toml:3: error:" in str(e.value) and words in str(e.value)


def test_a_pattern_that_backtracks_without_end_is_stopped(monkeypatch):
    from coursetools.binaries import sass
    # Two seconds of the child's CPU time stop it, however busy the machine
    # (the clock's backstop is set far away, so it is not what stops it).
    monkeypatch.setattr(sass, "PATTERN_SECONDS", 2)
    monkeypatch.setattr(sass, "WALL_SECONDS_PER_CPU_SECOND", 1000)
    t0 = time.monotonic()
    found, hung = sass._matches([("LDG", "LDG.E"), ("(.*.*.*.*.*.*.*.*.*.*)*X", "A" * 40)])
    assert time.monotonic() - t0 < 300 and found == [True] and hung == 1


# ----------------------------------------------------------------------
# 5. Files and JSON
# ----------------------------------------------------------------------

RECORD = {"results": {"rows": [{"group": "g", "version": "a", "timing": "cold", "samples_ms": [1.0, 1.1, 0.9],
                                "median_ms": 1.0, "gbps": 1.0}]},
          "gpu": {"name": "G"}, "git": {"commit": "abcdef1234567"}, "tag": "t"}


def promoted_state(lesson):
    return ev_state.fixture(lesson, RECORD, entry={"commit": "abcdef1234567", "tag": "t"})


def test_render_removes_and_replaces_only_figures_it_drew(course, page_repo, monkeypatch):
    root, lesson = page_repo
    monkeypatch.setattr(render.ev_state, "load", lambda lessons, path=None, check=True: {
        l.target: promoted_state(l) for l in lessons})
    figures = root / "lessons" / "day99_fake" / "figures"
    tmpl = root / "lessons" / "day99_fake" / "README.md.j2"
    write(tmpl, "# t\n\n{{ page.plot('fig-a', 'A', 'gbps', '{version}', group='g') }}\n")
    assert course("render").code == 0 and (figures / "fig-a.svg").exists()
    from coursetools.pages import plots
    write(figures / "mine.svg", "<svg>\n" + plots.GENERATED + "\n</svg>\n")  # an author's, even with the line
    write(tmpl, "# t\n\n{{ page.plot('fig-b', 'B', 'gbps', '{version}', group='g') }}\n")
    r = course("render")
    assert r.code == 0 and "removed 1" in r.out
    assert not (figures / "fig-a.svg").exists() and (figures / "mine.svg").exists()
    (figures / "fig-b.svg").write_text((figures / "fig-b.svg").read_text() + "<!-- edited by hand -->\n")
    one_line(course("render"), 1)  # an edited figure is not replaced
    assert "edited by hand" in (figures / "fig-b.svg").read_text()


def test_a_hand_made_figure_is_never_shown_for_a_measurement(course, page_repo):
    root, lesson = page_repo
    from coursetools.pages import plots
    write(root / "lessons" / "day99_fake" / "figures" / "fig-a.svg", "<svg>" + plots.GENERATED + "</svg>")
    write(root / "lessons" / "day99_fake" / "README.md.j2",
          "# t\n\n{{ page.plot('fig-a', 'A', 'gbps', '{version}', group='g') }}\n")
    assert course("render").code == 0
    page = (root / "lessons" / "day99_fake" / "README.md").read_text()
    assert "fig-a.svg" not in page and "earlier version" not in page


@pytest.mark.parametrize("body, words", [
    ('{"tag": "t", "tag": "u"}', "holds the key 'tag' twice"),
    ('{\n "a": 1,\n "stdout": "\\ud800"\n}', "lone surrogate"),
])
def test_evidence_json_with_a_duplicate_key_or_a_lone_surrogate_is_exit_4_with_its_line(course, page_repo, body,
                                                                                       words):
    root, _ = page_repo
    write(root / "evidence" / "records" / "day99_fake" / "t.json.bz2", packed(body))
    r = course("evidence", "verify")
    one_line(r, 4)
    assert "t.json.bz2:" in r.err and words in r.err
    r = course("evidence", "status")
    assert r.code == 0 and "day99_fake" in r.out  # status goes on past it


# ----------------------------------------------------------------------
# 6. The scaffolder and the programs (the programs' probe: course_header_test)
# ----------------------------------------------------------------------

@pytest.mark.parametrize("args", [["day32_semi", "--topic", "a;b"], ["day031_alpha"], ["day0_x"]])
def test_new_refuses_what_would_break_the_course(course, in_tmp, args):
    (in_tmp / "lessons").mkdir()
    one_line(course("new", *args), 64)
    assert list((in_tmp / "lessons").iterdir()) == []


# ----------------------------------------------------------------------
# 2 (record): a record proves a GPU ran
# ----------------------------------------------------------------------

def test_record_refuses_a_run_without_a_gpu(in_tmp, monkeypatch):
    """A script standing in for the binary on a machine with no GPU: no
    driver answers, no UUID; refused, and no record is written."""
    write(in_tmp / "lessons" / "day99_fake" / "fake.cu", "int x;\n")
    write(in_tmp / "lessons" / "day99_fake" / "CMakeLists.txt", "course_add_lesson(day99_fake DAY 99)\n")
    fake = write(in_tmp / "build" / "bin" / "day99_fake",
                 "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --json ] && out=$2; shift; done\n"
                 "echo '{\"gpu\": {\"name\": \"NVIDIA H200\", \"compute_capability\": \"9.0\"}, \"checks\": [],"
                 " \"rows\": []}' > \"$out\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no nvidia-smi
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(in_tmp / "evidence"))
    monkeypatch.setattr(ev_run, "_build", lambda build, targets: "cmake --build build")
    monkeypatch.setattr(ev_run, "git_state", lambda root=None: (None, None))
    monkeypatch.setattr(ev_run.flags, "relink_problems", lambda lesson, build: [])
    with pytest.raises(Exception) as e:
        ev_run.record(fake_lesson(in_tmp), "t", "abc1234", True, build=in_tmp / "build", timeline=False,
                      profile=False)
    assert "nothing shows that a GPU ran" in str(e.value) and "no NVIDIA driver" in str(e.value)
    assert not (in_tmp / "evidence" / "records" / "day99_fake" / "t.json.bz2").exists()


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="binutils' c++filt is not installed")
def test_a_template_instance_is_named_as_the_source_spells_it():
    """[[sass]] and page.sass take `latencyChase<Chase::RemotePtx>`: the
    enumerator resolved from the lesson's code, matched against the
    demangled instance, and a miss lists the instances there are."""
    from coursetools.binaries import sass

    fns = {"_Z12latencyChaseIL5Chase0EEvPKjPy": ["LDS R1"], "_Z12latencyChaseIL5Chase2EEvPKjPy": ["LD.E R1"],
           "_Z15sharedBandwidthILb1EEvPfi": ["LDS"], "_Z11atomicsOnlymPf": ["RED"]}
    enums = {"Chase::LocalShared": 0, "Chase::RemoteMapped": 1, "Chase::RemotePtx": 2}
    assert sass.kernels_named(fns, "latencyChase<Chase::RemotePtx>", enums) == ["_Z12latencyChaseIL5Chase2EEvPKjPy"]
    assert sass.kernels_named(fns, "latencyChase< Chase::LocalShared >", enums) == ["_Z12latencyChaseIL5Chase0EEvPKjPy"]
    assert sass.kernels_named(fns, "sharedBandwidth<true>", enums) == ["_Z15sharedBandwidthILb1EEvPfi"]
    assert len(sass.kernels_named(fns, "latencyChase", enums)) == 2
    assert sass.kernels_named(fns, "latencyChase<Chase::RemoteMapped>", enums) == []
    assert sass.instances(fns, "latencyChase", enums) == ["latencyChase<Chase::LocalShared>",
                                                          "latencyChase<Chase::RemotePtx>"]
    assert sass.spelled("atomicsOnly(unsigned long, float*)") == "atomicsOnly"
