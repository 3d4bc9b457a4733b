"""Hostile and broken input: one test per way the tools once lost data,
accepted what no reviewer made, hung, or answered with a traceback. Each
is refused with its exit code and a one-line error, and nothing is lost.
(The evidence-forging cases are in test_evidence.py.)"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import packed, TOOLS, fake_lesson, listing, write, page_repo_with
from coursetools.rule import compare as ev_compare
from coursetools.record import plausibility as ev_plaus
from coursetools.evidence import promote as ev_promote
from coursetools.record import run as ev_run
from coursetools.evidence import store as ev_store
from coursetools.record import format as ev_format
from coursetools.record import strictjson
from coursetools.evidence import state as ev_state
from coursetools import fsutil
from coursetools.pages import formats as page_formats, marks, page as page_api, render, sandbox
from coursetools.sources import manifest, snippets
from coursetools.errors import Interrupted, UsageError

GOOD = "// snippet: good\nint ok;\n// end snippet\n"


@pytest.fixture
def tree(in_tmp):
    """A small repository: a lesson's sources, a page, figures, records."""
    write(in_tmp / "lessons" / "day01_x" / "a.cu", GOOD)
    write(in_tmp / "lessons" / "day01_x" / "README.md.j2", "# x\n")
    write(in_tmp / "lessons" / "day01_x" / "figures" / "f.svg", "<svg/>")
    write(in_tmp / "evidence" / "records" / "day01_x" / "t.json.bz2", packed("{}"))
    return in_tmp


def snapshot(root: Path) -> dict:
    return {p: (root / p).read_bytes() for p in listing(root) if (root / p).is_file()}


def one_line_error(r, code):
    assert r.code == code, (r.code, r.err)
    assert "Traceback" not in r.err
    assert r.err.strip() and all(": error: " in l or l.startswith(("course:", "evidence:")) or "error(s)" in l
                                 for l in r.err.strip().splitlines()), r.err


@pytest.mark.parametrize("out", ["lessons", "evidence/records", "lessons/day01_x", ".", "common", ".."])
def test_output_into_sources_is_refused_and_nothing_is_lost(course, tree, out):
    before = snapshot(tree)
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", out)
    one_line_error(r, 64)
    assert snapshot(tree) == before


def test_output_into_a_folder_the_tool_did_not_make_is_refused(course, tree):
    write(tree / "mine" / "notes.txt", "keep me")
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "mine")
    one_line_error(r, 64)
    assert (tree / "mine" / "notes.txt").read_text() == "keep me"


def test_output_at_a_file_or_an_unwritable_place(course, tree):
    write(tree / "afile", "x")
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "afile"), 64)
    assert (tree / "afile").read_text() == "x"
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "/proc/no-such/x"), 64)


def test_the_lesson_name_never_comes_from_a_folder(course, tree, tmp_path):
    """A source reached through a link whose folder is / gives no lesson
    name; it is refused (it leads outside), and the output is untouched."""
    link = tree / "lessons" / "day01_x" / "root.cu"
    os.symlink("/etc/hostname", link)
    assert course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out").code == 0
    before = snapshot(tree / "out")
    r = course("snippets", str(link), "--lesson", "day01_x", "-o", "out")
    one_line_error(r, 1)
    assert "leads outside the repository" in r.err
    assert snapshot(tree / "out") == before
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "-o", "out"), 64)  # no --lesson given
    one_line_error(course("snippets", "lessons/day01_x/a.cu", "--lesson", "../x", "-o", "out"), 64)


def test_a_fifo_or_a_device_is_refused_without_hanging(course, tree):
    fifo = tree / "lessons" / "day01_x" / "pipe.cu"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    r = course("snippets", str(fifo), "--lesson", "day01_x", "-o", "out")
    assert time.monotonic() - t0 < 120  # a FIFO opened for reading would block for ever
    one_line_error(r, 1)
    assert "is a FIFO" in r.err


def test_files_get_the_umasks_modes(course, tree):
    old = os.umask(0o022)
    try:
        assert course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out").code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tree / "out" / "day01_x" / "good.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((tree / "out" / "day01_x").stat().st_mode) == 0o755
    mask = os.umask(0)
    os.umask(mask)
    fsutil.write_atomic(tree / "page.md", "x")
    assert stat.S_IMODE((tree / "page.md").stat().st_mode) == 0o666 & ~mask


def test_an_interrupted_write_leaves_the_old_output_and_no_temporaries(course, tree, monkeypatch):
    assert course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out").code == 0
    before = snapshot(tree / "out")
    write(tree / "lessons" / "day01_x" / "a.cu", GOOD.replace("ok", "changed"))
    calls = {"n": 0}
    real = Path.write_bytes

    def interrupted(self, data):
        calls["n"] += 1
        if calls["n"] == 2:
            raise Interrupted(15)  # what SIGTERM raises
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupted)
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out")
    assert r.code == 130 and "interrupted" in r.err
    assert snapshot(tree / "out") == before
    assert [p.name for p in (tree / "out").iterdir() if p.name.startswith(".") and p.name != fsutil.STAMP] == []


def test_sigterm_runs_the_cleanup(tmp_path):
    """A real SIGTERM: the handler turns it into a cleanup and exit 130."""
    script = (
        "import os, signal, sys, time\n"
        f"sys.path.insert(0, {str(TOOLS)!r})\n"
        "from coursetools import cli\n"
        "import coursetools.commands as c\n"
        "def slow(args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(5)\n"
        "    return 0\n"
        "c.cmd_lint = slow\n"
        "sys.exit(cli.main(['lint']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 130 and "interrupted" in proc.stderr


@pytest.mark.parametrize("line", [b"/" * 1_000_000, b"int a = b + c; " * 70_000, b'"' * 1_000_000,
                                  b"// x" * 250_000, b'R"x(' * 250_000])
def test_a_one_megabyte_line_scans_in_linear_time(line):
    # A scanner quadratic in the line length needs minutes for a megabyte;
    # a linear one needs about a third of a second alone. CPU time, not wall
    # time, and a bound of three seconds: CTest runs this beside the browser
    # test on a two-core CI machine, where one run took 1.06 s of CPU.
    data = b"int a;\n" + line + b"\nint b;\n"
    t0 = time.process_time()
    snippets.parse_source("big.cu", data)
    assert time.process_time() - t0 < 3.0


def test_nul_bytes_are_refused_and_a_bom_is_accepted():
    _, diags = snippets.parse_source("a.cu", b"int a;\n// snippet: s\nint\x00 b;\n// end snippet\n")
    assert "a.cu:3:4: error: NUL byte" in str(diags[0])
    snips, diags = snippets.parse_source("a.cu", b"\xef\xbb\xbf" + GOOD.encode())
    assert diags == [] and snips[0].name == "good"


def test_markers_inside_raw_strings_are_data():
    src = 'const char* doc = R"(\n// snippet: fake\nint not_code;\n// end snippet\n)";\n' + GOOD
    snips, diags = snippets.parse_source("a.cu", src.encode())
    assert diags == [] and [s.name for s in snips] == ["good"]


def test_a_snippet_name_too_long_for_a_file_is_an_error(course, tree):
    write(tree / "lessons" / "day01_x" / "a.cu", "// snippet: " + "a" * 300 + "\nint x;\n// end snippet\n")
    r = course("snippets", "lessons/day01_x/a.cu", "--lesson", "day01_x", "-o", "out")
    one_line_error(r, 1)
    assert "expected at most 64" in r.err


@pytest.fixture
def page_repo(in_tmp, monkeypatch):
    return page_repo_with(in_tmp, monkeypatch, GOOD)


@pytest.mark.parametrize("text", [
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ 1/0 }}",
    "{% include 'nope.md' %}",
    "{{ page.plot('../../..', 't', 'gbps') }}",
    "{{ page.state.record }}",
])
def test_a_hostile_template_is_an_error_with_its_line(course, page_repo, text):
    root, lesson = page_repo
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    r = course("render")
    one_line_error(r, 1)
    assert "README.md.j2:" in r.err
    assert not (root / "lessons" / "day99_fake" / "README.md").exists()
    assert not list(Path("/").glob("*.svg"))


@pytest.mark.parametrize("text", ["{% for c in lesson.min_cc %}{{ c }}{% endfor %}", "{{ lesson.build_command[0] }}",
                                  "{{ lesson.run_command | list }}"])
def test_a_helpers_value_cut_apart_is_named_at_its_line(course, page_repo, text):
    """A helper's value is one token: looped over, indexed or listed, the
    page would hold a broken mark found only after rendering, without a
    line; it is refused where the template does it."""
    root, _ = page_repo
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    r = course("render")
    one_line_error(r, 1)
    assert "README.md.j2:3: error: template: a page helper's value is text to place whole" in r.err, r.err


@pytest.mark.parametrize("content, words", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "holds a JSON list, not an object"),
    ('{"promoted": [], "history": []}', "expected 'promoted' (an object)"),
    ('{"promoted": {"day99_fake": {"lesson": 3}}, "history": []}', "is missing or not a string"),
])
def test_malformed_promotions_exit_4_with_one_line(course, page_repo, content, words):
    root, lesson = page_repo
    write(root / "evidence" / "promoted.json", content)
    r = course("evidence", "verify")
    one_line_error(r, 4)
    assert "promoted.json" in r.err and words in r.err


def test_a_record_that_is_a_list_exits_4(course, page_repo):
    root, lesson = page_repo
    write(root / "evidence" / "records" / "day99_fake" / "t1.json.bz2", packed("[]"))
    r = course("evidence", "compare", "day99_fake", "t1", "t1")
    one_line_error(r, 4)
    assert "t1.json" in r.err


def test_promote_with_a_path_for_a_tag_is_refused(course, page_repo, tmp_path):
    r = course("evidence", "promote", "--lesson", "day99_fake", "--tag", "../../x", "--by", "Me", "--key", "k")
    one_line_error(r, 64)
    assert "not valid" in r.err


def test_record_runs_only_the_builds_own_binary(course, page_repo):
    r = course("evidence", "record", "--lesson", "day99_fake", "--tag", "t1", "--binary", "/bin/true")
    one_line_error(r, 64)
    assert "unrecognized arguments: --binary" in r.err


def test_a_lesson_toml_error_names_its_line(page_repo):
    root, _ = page_repo
    bad = write(root / "lessons" / "day99_fake" / "lesson.toml", "[page]\nconstants = [1, 2\n")
    with pytest.raises(Exception) as e:
        manifest.load_lesson_info(bad, "lessons/day99_fake/lesson.toml")
    assert "lessons/day99_fake/lesson.toml: error: Unclosed array" in str(e.value)
    write(bad, "[page]\nconstants = [1, 2]\nscreenshot = maybe\n")
    with pytest.raises(Exception, match=r"lessons/day99_fake/lesson.toml:3:14: error: "):
        manifest.load_lesson_info(bad, "lessons/day99_fake/lesson.toml")
    write(bad, "[page]\nconstant = 3\n")
    with pytest.raises(Exception, match="page.constant is not a known key; expected one of: constants"):
        manifest.load_lesson_info(bad, "lessons/day99_fake/lesson.toml")




# ----------------------------------------------------------------------
# A second round of attacks, each refused now
# ----------------------------------------------------------------------


def test_review_never_writes_over_a_source_or_builds_into_one(course, tree, monkeypatch):
    from coursetools.record import review
    monkeypatch.setattr(manifest, "ROOT", tree)
    before = snapshot(tree)
    one_line_error(course("review", "--build-dir", str(tree / "build-gpu"), "-o", "lessons/day01_x/a.cu"), 64)
    one_line_error(course("review", "--build-dir", str(tree / "build-gpu"), "-o", "README.md"), 64)
    one_line_error(course("review", "--build-dir", "lessons/day01_x", "-o", "build-gpu/review.json"), 64)
    assert snapshot(tree) == before


def test_no_write_goes_through_a_committed_link(tmp_path):
    write(tmp_path / "lessons" / "day58" / "figures" / "keep.svg", "<svg/>")
    (tmp_path / "lessons" / "day24").mkdir(parents=True)
    (tmp_path / "lessons" / "day24" / "figures").symlink_to(tmp_path / "lessons" / "day58" / "figures")
    with pytest.raises(Exception, match="is a symbolic link"):
        fsutil.check_no_links_between(tmp_path / "lessons" / "day24" / "figures" / "x.svg", tmp_path)


@pytest.mark.parametrize("args", [
    ["--principal", "claude@cuda-course,evil@example.org"],
    ["--principal", "*"],
    ["--principal", "bob@example.org", "--name", "Bob\nclaude@cuda-course namespaces=\"course-evidence\" ssh-ed25519 AAAA"],
])
def test_add_reviewer_cannot_speak_for_another_reviewer(course, page_repo, tmp_path, args):
    root, _ = page_repo
    key = tmp_path / "k"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    one_line_error(course("evidence", "add-reviewer", "--key", str(key) + ".pub", *args), 64)
    assert not (root / "evidence" / "allowed_signers").exists()


@pytest.mark.parametrize("line, words", [
    ("a@x.org,b@x.org namespaces=\"course-evidence\" ssh-ed25519 {key}", "not one plain address"),
    ("* namespaces=\"course-evidence\" ssh-ed25519 {key}", "not one plain address"),
    ("a@x.org namespaces=\"git\" ssh-ed25519 {key}", "options"),
    ("a@x.org namespaces=\"course-evidence\" ssh-ed25519 {key}\na@x.org namespaces=\"course-evidence\" ssh-ed25519 {key2}",
     "already has a key on line"),
    ("a@x.org namespaces=\"course-evidence\" ssh-ed25519 {key}\na@x.org namespaces=\"course-evidence\",valid-before=\"29991231\" ssh-ed25519 {key2}",
     "already has a key on line"),
    ("\x0c#,a@x.org namespaces=\"course-evidence\" ssh-ed25519 {key}", "control or separator"),
    ("\u2028#,a@x.org namespaces=\"course-evidence\" ssh-ed25519 {key}", "control or separator"),
    (" a@x.org namespaces=\"course-evidence\" ssh-ed25519 {key}", "leading or trailing space"),
    ("garbage", "1 fields"),
])
def test_allowed_signers_is_held_to_a_strict_shape(tmp_path, line, words):
    from coursetools.evidence import signing
    keys = []
    for name in ("k1", "k2"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True)
        keys.append((tmp_path / f"{name}.pub").read_text().split()[1])
    path = write(tmp_path / "allowed_signers", "# reviewers\n" + line.format(key=keys[0], key2=keys[1]) + "\n")
    with pytest.raises(Exception, match=words) as e:
        signing.parse_allowed(path)
    assert "allowed_signers:" in str(e.value)


@pytest.mark.parametrize("src, line", [
    (b"int a;\n// note \\\nint hidden;\n", 2),
    (b"/* a *\\\n/ int hidden; /* */\n", 1),
    (b'const char* s = "a\\\n// x"; int hidden;\n', 1),
])
def test_the_digest_refuses_a_backslash_that_hides_code_in_a_comment(src, line):
    from coursetools.sources import digest
    with pytest.raises(Exception, match=rf"a\.cu:{line}:\d+: error: .*sources digest refuses it"):
        digest.file_digest(src, "a.cu")


def test_a_define_continued_over_lines_still_digests():
    from coursetools.sources import digest
    assert digest.file_digest(b"#define F(x) \\\n  ((x) + 1)\nint a = F(1);\n", "a.cu")


@pytest.mark.parametrize("row, words", [
    ({"median_ms": float("inf")}, "not a finite number"),
    ({"min_ms": 2.0, "max_ms": 1.0, "median_ms": 1.5}, "does not hold"),
    ({"median_ms": 0.01, "samples_ms": [1.0, 1.1, 1.2]}, "not the median of its samples"),
    ({"min_ms": 0.5, "samples_ms": [1.0, 1.1, 1.2]}, "not the smallest"),
    ({"memory": "l2", "timing": "cold", "gbps": 99999.0, "median_ms": 1.0}, "what the SMs can take in"),
    ({"timing": "graph", "gbps": 1e9, "median_ms": 1.0}, "what the SMs can take in"),
    ({"gbps": -5.0, "median_ms": 1.0}, "zero or more"),
])
def test_impossible_rows_are_named(row, words):
    gpu = {"sm_count": 132, "memory_clock_khz": 3201000, "memory_bus_bits": 6016,
           "clocks": {"sm_mhz": {"max": 1980.0}}}
    problems = ev_plaus.impossible_rows({"rows": [{"group": "g", **row}]}, gpu)
    assert any(words in p for p in problems), problems


@pytest.mark.parametrize("text, words", [
    ('{"a": NaN}', "NaN"), ('{"a": Infinity}', "Infinity"), ("[" * 100000, "nests deeper"),
])
def test_evidence_json_is_strict(tmp_path, text, words):
    path = write(tmp_path / "r.json", text)
    with pytest.raises(Exception, match=words):
        strictjson.load_json(path, "a record")


def test_deeply_nested_promotions_are_one_line(course, page_repo):
    root, _ = page_repo
    write(root / "evidence" / "promoted.json", "[" * 100000)
    r = course("evidence", "verify")
    one_line_error(r, 4)
    assert "nests deeper" in r.err


def test_a_stray_file_in_evidence_is_named(course, page_repo):
    root, _ = page_repo
    write(root / "evidence" / "promoted.json", '{"promoted": {}, "history": []}')
    write(root / "evidence" / "records" / "day99_fake" / "sub" / "x.json", "{}")
    write(root / "evidence" / "foo.json", "{}")
    r = course("evidence", "verify")
    one_line_error(r, 4)
    assert "evidence/foo.json" in r.err and "sub/x.json" in r.err


@pytest.mark.parametrize("text", ["37x faster", "1234us", "4800GB/s", "2^999"])
def test_numbers_with_units_or_exponents_are_numbers(text):
    from coursetools.pages import prose
    assert prose.problems_in(f"# t\n\nIt ran {text}.\n", {2.0}, set(), "t.j2"), text


@pytest.mark.parametrize("text", [
    "{{ '\\ue000' }}9876 GB/s{{ '\\ue001' }}",
    "\ue0009876\ue001",
    "{{ lesson.min_cc[:-1] }}9{{ lesson.min_cc[-1] }}",
    "{{ lesson.min_cc | replace('0', '9') }}",
    "{{ lesson.min_cc | list | reverse | list }}",
])
def test_a_template_cannot_forge_a_helpers_mark(course, page_repo, text):
    root, _ = page_repo
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    r = course("render")
    if r.code == 0:  # an edit that left the token whole shows the helper's own text, nothing forged
        page = (root / "lessons" / "day99_fake" / "README.md").read_text()
        assert "9876" not in page and "\ue000" not in page
    else:
        one_line_error(r, 1)


@pytest.mark.parametrize("text, words", [
    ("{{ 'x' * (10**12) }}", "would build"),
    ("{{ 2 ** 100000 }}", "'**' with an exponent"),
    ("{{ 'x' * 1000000000000 }}", "would build"),
    ("{{ lipsum(10**7) }}", "lipsum"),
    ('{{ "%02500000000d" % 1 }}', "'%' formatting of a string"),
    ('{{ "%s" % page }}', "README.md.j2"),
    ("{{ " + "(" * 400 + "1" + ")" * 400 + " }}", "README.md.j2"),
])
def test_a_template_cannot_exhaust_memory_or_time(course, page_repo, text, words):
    root, _ = page_repo
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    t0 = time.process_time()  # CPU time: the limits count it, and a busy machine does not stretch it
    r = course("render")
    assert time.process_time() - t0 < 10
    one_line_error(r, 1)
    assert words in r.err


def test_deeply_nested_snippets_are_refused_quickly():
    src = "".join(f"// snippet: s{i}\n" for i in range(5000)) + "int x;\n" + "// end snippet\n" * 5000
    t0 = time.process_time()
    _, diags = snippets.parse_source("a.cu", src.encode())
    assert time.process_time() - t0 < 2.0
    assert "expected at most 8 nested regions" in str(diags[0])


def test_a_binary_key_file_is_a_usage_error(course, page_repo):
    one_line_error(course("evidence", "add-reviewer", "--principal", "a@x.org", "--key", "/bin/sh"), 64)


def test_a_lesson_toml_that_links_out_is_refused(page_repo, tmp_path):
    root, _ = page_repo
    outside = write(tmp_path / "elsewhere.toml", "[page]\nconstants = [1]\n")
    link = root / "lessons" / "day99_fake" / "lesson.toml"
    link.symlink_to(outside)
    with pytest.raises(Exception, match="lesson.toml"):
        manifest.load_lesson_info(link, "lessons/day99_fake/lesson.toml")


def test_extra_compile_flags_on_the_timed_build_invalidate_its_record(page_repo):
    import dataclasses
    _, lesson = page_repo
    flagged = dataclasses.replace(lesson, extra_flags=("-DDAY99_READ_BEFORE_WAIT",))
    reasons = ev_promote.record_problems(flagged, {"results": {"rows": []}}, for_promotion=False)
    assert any("flags of its own" in r and "DAY99_READ_BEFORE_WAIT" in r for r in reasons)


def test_a_format_cannot_pad_a_number_to_a_huge_width():
    with pytest.raises(marks.TemplateProblem, match="at most two digits"):
        page_formats.number(1.0, "300000000")


# ----------------------------------------------------------------------
# A third round: what the second round's re-test still got through
# ----------------------------------------------------------------------


@pytest.mark.parametrize("src", [
    b"int a;\n// note \\  \nint hidden;\n",         # a splice with blanks before the newline
    b"int a;\n// note \r int hidden;\n",              # a lone carriage return ends the comment
])
def test_the_digest_refuses_every_splice_the_compiler_makes(src):
    from coursetools.sources import digest
    with pytest.raises(Exception, match=r"a\.cu:2:\d*:? ?error|a\.cu:2: error"):
        digest.file_digest(src, "a.cu")


def test_a_header_dropped_beside_the_sources_is_digested(page_repo):
    root, lesson = page_repo
    before = lesson.digest_files()
    write(root / "lessons" / "day99_fake" / "course.cuh", "#define shadow 1\n")
    write(root / "common" / "cub" / "device" / "device_reduce.cuh", "#define shadow 2\n")
    write(root / "lessons" / "day99_fake" / "figures" / "f.svg", "<svg/>")
    after = lesson.digest_files()
    assert "lessons/day99_fake/course.cuh" in after and "common/cub/device/device_reduce.cuh" in after
    assert "lessons/day99_fake/figures/f.svg" not in after and set(before) < set(after)


def test_a_compile_command_with_anything_extra_is_named(page_repo, tmp_path):
    import json as _json
    from coursetools.binaries import flags as buildcheck
    root, lesson = page_repo
    build = tmp_path / "b"
    rsp = write(build / "lessons" / "day99_fake" / "CMakeFiles" / "day99_fake.dir" / "includes_CUDA.rsp",
                f"-I{root}/common -isystem=/usr/local/cuda/include\n")
    src = f"{root}/lessons/day99_fake/fake.cu"

    def command(extra):
        return (f"/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler {extra} --options-file "
                f"CMakeFiles/day99_fake.dir/includes_CUDA.rsp -O3 -DNDEBUG "
                f"--generate-code=arch=compute_90,code=[compute_90,sm_90] -O3 -lineinfo -std=c++20 -x cu -c {src} "
                f"-o CMakeFiles/day99_fake.dir/fake.cu.o")
    for extra, expect in (("", []), ("-DREAD_BEFORE_WAIT", ["-DREAD_BEFORE_WAIT"]), ("-include evil.h", ["-include", "evil.h"])):
        write(build / "compile_commands.json", _json.dumps([{"directory": str(rsp.parents[2]), "command": command(extra), "file": src}]))
        assert buildcheck.compile_extras(lesson, build, root) == expect
    write(rsp, f"-I/tmp -I{root}/common\n")
    write(build / "compile_commands.json", _json.dumps([{"directory": str(rsp.parents[2]), "command": command(""), "file": src}]))
    assert buildcheck.compile_extras(lesson, build, root) == ["-I/tmp"]


@pytest.mark.parametrize("entries", [5, None, {"command": "CMakeFiles/day99_fake.dir/"},
                                     [{"command": ["nvcc", "CMakeFiles/day99_fake.dir/fake.cu.o"]}]])
def test_compile_commands_of_another_shape_are_named_not_a_traceback(page_repo, tmp_path, entries):
    import json as _json
    from coursetools.binaries import flags as buildcheck
    root, lesson = page_repo
    write(tmp_path / "b" / "compile_commands.json", _json.dumps(entries))
    assert buildcheck.compile_extras(lesson, tmp_path / "b", root) == [
        f"{tmp_path / 'b' / 'compile_commands.json'}: no compile command for day99_fake; configure again"]
    # the link check finds the toolkit from the same file: it falls back to the usual one
    link = tmp_path / "b" / lesson.dir / "CMakeFiles" / "day99_fake.dir" / "link.txt"
    write(link, "/usr/bin/c++ -o day99_fake\n")
    assert buildcheck.link_extras(lesson, tmp_path / "b") == []


@pytest.mark.parametrize("text", [".37 faster", "_37_ faster", "&#x33;&#x37; faster", "\u00b3\u2077 faster",
                                  "\u3164" + "37 faster"])
def test_numbers_in_disguise_are_numbers(text):
    from coursetools.pages import prose
    assert prose.problems_in(f"# t\n\nIt ran {text}.\n", {2.0}, set(), "t.j2"), text


def test_a_format_cannot_type_digits_as_its_fill():
    with pytest.raises(marks.TemplateProblem):
        page_formats.number(1.0, "3>2.0f")


def test_a_manifest_with_wrong_types_is_one_line(tmp_path):
    import json as _json
    good = {"target": "day99_fake", "day": 99, "topic": "t", "dir": "lessons/day99_fake", "min_cc": "9.0",
            "sources": ["lessons/day99_fake/a.cu"], "binary": "b", "compile_command": "c",
            "build_command": "cmake --build build --target day99_fake", "run_command": "build/bin/day99_fake",
            "course_architectures": ["90-real"], "architectures": ["90-real"],
            "timeline_target": "day99_fake_timeline", "nvbench_target": "day99_fake_nvbench"}
    assert [l.target for l in manifest.load(write(tmp_path / "m.json", _json.dumps({"lessons": [good]})))] == [
        "day99_fake"]  # so each case below fails by its own field
    for bad in ({"test_args": 7}, {"sources": [5]}, {"dir": "lessons/../x"}, {"sources": ["common/x.cu"]},
                {"timeline_target": 5}, {"nvbench_target": "../../../usr/bin/x"}, {"variants": ["a b"]}):
        path = write(tmp_path / "m.json", _json.dumps({"lessons": [{**good, **bad}]}))
        with pytest.raises(Exception, match="lacks or mistypes"):
            manifest.load(path)


@pytest.mark.parametrize("text, words", [
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "ran for more than"),
    ("{{ ((((10**64)**64)**64)**64)**64 }}", "more than 4,096 bits"),
    ("{{ 'x'.ljust(600000000) }}", "not available"),
    ("{{ ('x' * 1000) | replace('x', 'yyyy') }}", "replace"),
])
def test_a_template_cannot_run_away(course, page_repo, monkeypatch, text, words):
    root, _ = page_repo
    monkeypatch.setattr(render, "RENDER_SECONDS", 2)
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    t0 = time.process_time()  # CPU time: the limits count it, and a busy machine does not stretch it
    r = course("render")
    assert time.process_time() - t0 < 15
    one_line_error(r, 1)
    assert words in r.err


def test_a_fifo_where_a_record_belongs_is_refused_without_hanging(course, page_repo):
    root, _ = page_repo
    write(root / "evidence" / "promoted.json", '{"promoted": {}, "history": []}')
    folder = root / "evidence" / "records" / "day99_fake"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "f.json.bz2")
    r = course("evidence", "verify")
    one_line_error(r, 4)
    assert "not a regular file" in r.err


def test_records_must_sit_in_their_own_lessons_folder(course, page_repo):
    root, _ = page_repo
    write(root / "evidence" / "promoted.json", '{"schema": "course-promotions/2", "promoted": {}, "history": []}')
    assert course("evidence", "verify").code == 0  # so the stray folder below is what fails
    write(root / "evidence" / "records" / "day12_gone" / "t.json.bz2", packed("{}"))
    r = course("evidence", "verify")
    assert r.code == 4 and "records/day12_gone/ is no declared lesson's folder" in r.err, r.err


def test_review_logs_replace_a_planted_link_instead_of_writing_through_it(tmp_path, monkeypatch):
    from coursetools.record import review
    monkeypatch.setattr(manifest, "ROOT", tmp_path)
    victim = write(tmp_path / "lessons" / "day01_x" / "a.cu", GOOD)
    logs = tmp_path / "build-x" / "review-logs"
    logs.mkdir(parents=True)
    (logs / "configure.log").symlink_to(victim)
    review._sh(["true"], logs / "configure.log")
    assert victim.read_text() == GOOD and not (logs / "configure.log").is_symlink()


def test_a_build_folder_that_git_tracks_is_refused(tmp_path):
    write(tmp_path / ".ci" / "run", "#!/bin/sh\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    with pytest.raises(Exception, match="holds files git tracks"):
        fsutil.check_build_folder(tmp_path / ".ci", tmp_path)


@pytest.mark.parametrize("row, words", [
    ({"samples": 5, "samples_ms": [1.0, 1.1, 1.2], "median_ms": 1.1}, "samples says 5"),
    ({"mean_ms": 9.0, "samples_ms": [1.0, 1.1, 1.2], "median_ms": 1.1}, "not the mean"),
    ({"timing": "graph", "gbps": 30000.0, "median_ms": 100.0}, "the DRAM"),
])
def test_more_impossible_rows_are_named(row, words):
    gpu = {"sm_count": 132, "memory_clock_khz": 3201000, "memory_bus_bits": 6016, "l2_bytes": 62914560,
           "clocks": {"sm_mhz": {"max": 1980.0}}}
    problems = ev_plaus.impossible_rows({"rows": [{"group": "g", **row}]}, gpu)
    assert any(words in p for p in problems), problems


def test_timeline_rows_must_be_finite_and_not_negative():
    rec = {"timeline": {"results": {"rows": [{"kernel": "k", "first_start_us": -5.0, "last_end_us": float("inf")}]}}}
    assert "first_start_us, last_end_us" in ev_plaus.impossible_timeline(rec)[0]


# ----------------------------------------------------------------------
# A fourth round
# ----------------------------------------------------------------------


def test_a_comment_opener_inside_an_include_name_is_refused():
    from coursetools.sources import digest
    src = b"#include <cuda_runtime/*/../../x*/.h>\nint a;\n"
    with pytest.raises(Exception, match=r"a\.cu:1: error: an #include's file name"):
        digest.file_digest(src, "a.cu")
    assert digest.file_digest(b"#include <cub/cub.cuh>  // DeviceReduce\nint a;\n", "a.cu")


def test_a_link_command_with_anything_extra_is_named(page_repo, tmp_path):
    from coursetools.binaries import flags as buildcheck
    root, lesson = page_repo
    build = tmp_path / "b"
    write(build / "compile_commands.json", "[]")
    d = build / lesson.dir / "CMakeFiles" / f"{lesson.target}.dir"
    write(d / "objects1", f"CMakeFiles/{lesson.target}.dir/fake.cu.o\n")
    write(d / "linkLibs.rsp", " /usr/local/cuda/lib/libcudart.so -lcudadevrt -lcudart_static -lrt -lpthread -ldl \n")
    base = (f"/usr/bin/g++ @CMakeFiles/{lesson.target}.dir/objects1 -o ../../bin/{lesson.target} "
            f"@CMakeFiles/{lesson.target}.dir/linkLibs.rsp -L\"/usr/local/cuda/targets/x86_64-linux/lib\"")
    write(d / "link.txt", base + "\n")
    assert buildcheck.link_extras(lesson, build, Path("/usr/local/cuda")) == []
    write(d / "link.txt", base + " -Wl,--wrap=cudaMemcpy -L/tmp/evil\n")
    assert buildcheck.link_extras(lesson, build, Path("/usr/local/cuda")) == ["-Wl,--wrap=cudaMemcpy", "-L/tmp/evil"]


@pytest.mark.parametrize("page", [
    "# t\n\n```x`\nPDL is 37 times faster.\n```\n",                 # not a fence to CommonMark: prose
    "# t\n\nIt saves 77 us (days 24 and 77).\n",                    # a day number is a day only inside "day(s) N"
    '# t\n\n<span title="`">37</span><span title="`"></span>\n',   # raw HTML
])
def test_more_disguises_are_caught(page):
    from coursetools.pages import prose
    assert prose.problems_in(page, {2.0}, {24, 77}, "t.j2"), page


@pytest.mark.parametrize("text, words", [
    ("{{ page.plot('f', 't', 'gbps', note='PDL is 37x faster') }}", "typed into a chart"),
    ("{{ ([[1]] * 400000) | sum(start=[]) | length }}", "sum"),
    ("{% set ns = namespace(s='x') %}", "namespace"),
])
def test_charts_and_sandbox_hold_the_same_rules(course, page_repo, text, words):
    root, _ = page_repo
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    t0 = time.process_time()  # CPU time: the limits count it, and a busy machine does not stretch it
    r = course("render")
    assert time.process_time() - t0 < 15
    one_line_error(r, 1)
    assert words in r.err


def test_a_string_grown_past_the_memory_cap_is_one_line(course, page_repo, monkeypatch):
    root, _ = page_repo
    monkeypatch.setattr(sandbox, "RENDER_MEMORY_BYTES", 2 * 2**30)
    text = "{% set s = 'x' * 4000000 %}" + "".join("{% set s = s ~ s %}" for _ in range(12)) + "{{ s | length }}"
    write(root / "lessons" / "day99_fake" / "README.md.j2", "# t\n\n" + text + "\n")
    r = course("render")
    one_line_error(r, 1)
    assert not (root / "lessons" / "day99_fake" / "README.md").exists()


def test_verdict_counts_come_only_from_rows_the_record_holds(lesson_rows_page=None):
    from conftest import fake_lesson as _fake
    lesson = _fake(Path("/nonexistent"))
    rows = [{"group": "s", "version": v, "elements": 1, "timing": "cold", "median_ms": 1.0,
             "samples_ms": [1.0, 1.0, 1.0]} for v in ("a", "b")]
    page = page_api.Page(lesson, [], ev_state.fixture(lesson, {"results": {"rows": rows}}))
    assert page.verdicts({"group": "s", "version": "a"}, {"group": "s", "version": "b"}, "elements", [1])
    with pytest.raises(marks.TemplateProblem, match="no rows with elements=37"):
        page.verdicts({"group": "s", "version": "a"}, {"group": "s", "version": "b"}, "elements", range(37, 38))
    unverified = page_api.Page(lesson, [], ev_state.fixture(lesson, [], None, "unverified"))
    assert unverified.verdicts({}, {}, "elements", range(37)) == {}


def test_a_day_left_out_only_by_the_build_files_is_refused(tmp_path):
    """A day may be left out of a build only by the build's architectures
    (one configured for an older GPU): a manifest that leaves day 77 out
    of a build for every day's own architectures would take its page out
    of every check."""
    import json as _json
    real = _json.loads((manifest.build_dir() / "course-manifest.json").read_text())
    day77 = next(d for d in real["lessons"] if d["target"] == "day77_cluster_reduction")
    for archs, ok in (("", False), ("90", False), ("86", True), ("80;86-real", True), ("86;90", False)):
        data = {**real, "cuda_architectures": archs, "lessons": [{**day77, "built": False}]}
        path = tmp_path / "m.json"
        path.write_text(_json.dumps(data))
        if ok:
            assert not manifest.load(path)[0].built
        else:
            with pytest.raises(UsageError, match="is left out of this build, yet the build's architectures"):
                manifest.load(path)


def test_an_expectation_naming_a_newer_instruction_applies_only_to_machine_code_that_can_hold_it():
    from coursetools.binaries import sass
    assert sass.needs_arch("ACQBULK") == 90 and sass.needs_arch("LDG\\.E\\.128") == 0
    assert sass.needs_arch("PREEXIT|LDG") == 90


def test_a_function_whose_signature_has_an_odd_shape_is_no_kernel_not_a_traceback(monkeypatch, tmp_path):
    """A binary's function demangled to an unexpected shape (empty, only a
    template, ending in '::') matches no kernel: the one-line error, never
    an IndexError."""
    from coursetools.binaries import sass
    from coursetools.errors import SourceError
    odd = {"_Zodd1": "", "_Zodd2": "<int>", "_Zodd3": "void ns::", "_Zodd4": "void ns::(int)", "_Zodd5": " "}
    monkeypatch.setattr(sass, "_demangled", lambda names: {n: odd[n] for n in names})
    fns = {name: ["LDS R1"] for name in odd}
    assert sass.kernels_named(fns, "reduce") == [] and sass.instances(fns, "reduce") == []
    monkeypatch.setattr(sass, "dump", lambda binary, arch=None: fns)
    with pytest.raises(SourceError, match="no kernel reduce<int> in the SASS") as e:
        sass.excerpt(tmp_path / "day99_fake", "reduce<int>", 8)
    assert "\n" not in str(e.value)


def test_a_manifest_older_than_a_lessons_build_file_or_missing_a_day_names_the_command(in_tmp):
    import json as _json
    import os
    import time
    (in_tmp / "build").mkdir()
    (in_tmp / "lessons" / "day31_new").mkdir(parents=True)
    cm = in_tmp / "lessons" / "day31_new" / "CMakeLists.txt"
    cm.write_text("course_add_lesson(day31_new)\n")
    path = in_tmp / "build" / "course-manifest.json"
    path.write_text(_json.dumps({"lessons": []}))
    with pytest.raises(UsageError, match="lessons/day31_new is not in the build's manifest.*cmake --preset course"):
        manifest.load()
    later = time.time() + 60
    os.utime(cm, (later, later))
    with pytest.raises(UsageError, match="older than lessons/day31_new/CMakeLists.txt.*cmake --preset course"):
        manifest.load()


def test_a_promotion_naming_a_record_by_a_number_exits_4_with_one_line(course, tmp_path, monkeypatch):
    """A set's "records" entry that is not a path is named, not a crash."""
    import json
    import shutil
    evidence = tmp_path / "evidence"
    shutil.copytree(TOOLS.parent / "evidence", evidence)
    promoted = json.loads((evidence / "promoted.json").read_text())
    lesson = sorted(promoted["promoted"])[0]
    promoted["promoted"][lesson]["records"][-1] = 3
    (evidence / "promoted.json").write_text(json.dumps(promoted))
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(evidence))
    r = course("evidence", "verify")
    one_line_error(r, 4)
    assert f"3: not a record of {lesson}" in r.err, r.err



def test_a_promotion_naming_a_record_with_a_newline_is_one_line(course, tmp_path, monkeypatch):
    """A set's record name holding a newline or an escape cannot forge a
    second line of the error: it is shown with its escapes."""
    import json
    import shutil
    evidence = tmp_path / "evidence"
    shutil.copytree(TOOLS.parent / "evidence", evidence)
    promoted = json.loads((evidence / "promoted.json").read_text())
    lesson = sorted(promoted["promoted"])[0]
    promoted["promoted"][lesson]["records"][-1] = "x\ncourse: error: forged\x1b[2K.json.bz2"
    (evidence / "promoted.json").write_text(json.dumps(promoted))
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(evidence))
    r = course("evidence", "verify")
    one_line_error(r, 4)
    assert "x\\ncourse: error: forged\\x1b[2K" in r.err, r.err

def test_add_reviewer_names_an_allowed_signers_file_that_is_not_utf8(course, page_repo, tmp_path):
    root, _ = page_repo
    write(root / "evidence" / "allowed_signers", b"\xff\xfe not text\n")
    key = tmp_path / "k"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    r = course("evidence", "add-reviewer", "--principal", "bob@example.org", "--key", str(key) + ".pub")
    one_line_error(r, 4)
    assert "is not UTF-8 text" in r.err


def test_a_row_whose_mean_is_text_is_named_not_a_crash():
    from coursetools.record.plausibility import impossible_rows
    rows = {"rows": [{"group": "g", "samples_ms": [1.0, 2.0], "mean_ms": "1.5"}]}
    found = impossible_rows(rows, {})
    assert any("mean_ms is 1.5" in f for f in found) and any("not the mean" in f for f in found), found


@pytest.mark.real_state
@pytest.mark.parametrize("covers", ['[1]', '{"files": [], "sources": {}}', '{"files": {}, "sources": 3}'])
def test_an_evidence_state_whose_covers_is_not_an_object_exits_4_with_one_line(tmp_path, covers):
    from coursetools.errors import EvidenceError
    from coursetools.evidence import state
    path = write(tmp_path / "evidence-state.json", '{"schema": "%s", "covers": %s, "lessons": {}}' % (state.SCHEMA, covers))
    with pytest.raises(EvidenceError, match="not an evidence state"):
        state.load([], path)


@pytest.mark.parametrize("written", ['[1, 2]', '{"rows": 3}', '{"rows": [1, {"group": "profile", "profiled": "a b"}]}'])
def test_a_profile_run_reads_whatever_json_the_program_wrote_without_a_crash(tmp_path, monkeypatch, written):
    """The program writes profile.json: any shape gives the rows it names
    (here at most "a b"), never a crash, and no run reads an earlier run's."""
    from coursetools.record import profile as prof
    from coursetools.record import run as ev_run
    from types import SimpleNamespace
    seen = []
    monkeypatch.setattr(prof, "find_ncu", lambda: "ncu")
    monkeypatch.setattr(prof, "ncu_version", lambda ncu: "x")
    monkeypatch.setattr(prof, "command", lambda ncu, metrics, exe, args, out: ["ncu", exe, *args])
    monkeypatch.setattr(prof, "parse_csv", lambda text, metrics: [])
    monkeypatch.setattr(prof, "assign_rows", lambda kernels, names: seen.append(names) or [])

    def fake_run(cmd, **kw):
        if len(seen) == 0:
            (tmp_path / "profile.json").write_text(written)
        return SimpleNamespace(returncode=0, stdout=b"", stderr=b"")
    monkeypatch.setattr(ev_run.subprocess, "run", fake_run)
    info = SimpleNamespace(metrics=[{"name": "m"}], profile_runs=[{"args": ["--profile"]}, {"args": ["--profile"]}])
    lesson = SimpleNamespace(info=info, run_command="build/bin/x")
    ev_run._profile(lesson, tmp_path / "x", tmp_path)
    assert seen[0] in ([], ["a b"]) and seen[1] == [], seen
