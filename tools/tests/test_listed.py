"""A page checked before its first record: every day's program lists its
plan without a GPU (--list), the listing is the record's rows exactly, and
a template's selector that matches nothing the program produces is named
at its template line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import fake_lesson, page_repo_with, write
from coursetools.evidence import state as ev_state
from coursetools.pages import listed
from coursetools.sources import manifest
from coursetools.sources.manifest import LessonInfo

REAL = manifest.load()
# What a run adds to a listed row: its timing, its counts, what it reads off
# the GPU (a grid's atomics count), a probe's values.
TIMED = set(listed.TIMING_STATS) | set(listed.COUNTED) | {
    "samples", "samples_ms", "per_call_us", "global_atomics", "listed_values", "median_cycles", "min_cycles",
    "max_cycles", "samples_cycles"}
# The whole-number fields that say which row a row is (its size, its bins,
# its chain length, its cluster size), as against those a run measures or
# derives from the GPU (a grid's atomics count): a listing's values of
# these are the record's.
SELECTING_NUMBERS = ("elements", "bins", "k", "cluster", "calls")


def _built(lesson) -> bool:
    return Path(lesson.binary).is_file()


def _stats_free(row: dict) -> tuple:
    """What names a row: its field names, and each value that is not a
    measurement (text, and the whole numbers that select it: a size, a
    count of bins). A measured number (a time, an atomics count that
    depends on the GPU's grid) is left out."""
    keep = {k: v for k, v in row.items() if isinstance(v, str) or k in SELECTING_NUMBERS}
    return tuple(sorted(row)), tuple(sorted(keep.items()))


@pytest.mark.parametrize("lesson", REAL, ids=[l.target for l in REAL])
def test_every_days_page_renders_against_what_its_program_lists(lesson):
    if not _built(lesson):
        pytest.skip(f"{lesson.target} is not built in this build")
    diags, said = listed.check(lesson)
    assert diags == [], [str(d) for d in diags]
    assert "rows" in said


@pytest.mark.parametrize("lesson", REAL, ids=[l.target for l in REAL])
def test_a_listing_runs_nothing_and_needs_no_gpu(lesson, tmp_path):
    """A listing asks nothing of a GPU: on this machine, which has none, it
    exits 0 (a program that touched the runtime would exit 2, waived);
    under CUDA_VISIBLE_DEVICES="" the same."""
    if not _built(lesson):
        pytest.skip(f"{lesson.target} is not built in this build")
    out = tmp_path / "d.json"
    proc = subprocess.run([lesson.binary, "--list", "--json", str(out)], capture_output=True, text=True,
                          timeout=listed.LIST_SECONDS, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["listed"] is True
    assert data["rows"] and not any("samples_ms" in r for r in data["rows"])
    assert all(c["ok"] and c["detail"] == "listed, not run" for c in data["checks"])
    assert {d["word"] for d in data["decisions"]} <= {"listed"}


@pytest.mark.parametrize("lesson", REAL, ids=[l.target for l in REAL])
def test_a_listing_holds_exactly_the_rows_of_the_promoted_record_of_this_code(lesson):
    """The promise that makes the check worth having: where a record of
    today's code is promoted, the listing holds the same rows (by name,
    set, size and fields), checks, settings, decisions, profiled rows and
    timeline rows, but for the rows the record's GPU could not run (a
    cluster size, a shared-memory size), which its output names."""
    if not _built(lesson):
        pytest.skip(f"{lesson.target} is not built in this build")
    st = ev_state.of(lesson)
    if not st.valid:
        pytest.skip(f"{lesson.target}'s evidence is {st.state}: no record of this code to compare with")
    got = listed.listing(lesson)
    for rec in st.records:
        want = rec["results"]
        left_out = {tuple(m.groups()) for m in re.finditer(r"^(.*) (\S+): not run on this GPU", rec["stdout"], re.M)}
        name = lambda r: r.get("version", r.get("schedule", r.get("mode")))  # noqa: E731
        kept = lambda r: (r.get("set", "").rsplit(" ", 1)[0], name(r)) not in left_out  # noqa: E731
        ident = lambda r: _stats_free({k: v for k, v in r.items() if k not in TIMED})  # noqa: E731
        assert sorted(map(ident, want["rows"])) == sorted(map(ident, filter(kept, got["results"]["rows"])))
        # The listing leaves out the checks a run makes after timing (a
        # deterministic row's bits again): the header of 1bf03a4 lists
        # none; its next change lists them, and this exception goes.
        run_checks = [c["check"] for c in want["checks"] if not c["check"].endswith(" same bits after timing")]
        assert run_checks == [c for c in (c["check"] for c in got["results"]["checks"])
                              if not any(c.startswith(f"{s} {n}") for s, n in left_out)]
        # A run's setup may record settings of its own (day 77's threads a
        # block) that a listing of 1bf03a4 does not name: every listed one is
        # the record's.
        assert set(got["results"]["settings"]) <= set(want["settings"])
        # The same pairs (a run orders twins as its rows come, a listing of
        # 1bf03a4 as the experiment names them).
        assert sorted((d["set"], d["a"], d["b"]) for d in want["decisions"]) == \
               sorted((d["set"], d["a"], d["b"]) for d in got["results"]["decisions"]
                      if all((d["set"].rsplit(" ", 1)[0], x) not in left_out for x in (d["a"], d["b"])))
        if (rec.get("profile") or {}).get("runs"):  # a timed-only record profiles nothing
            assert [[r["row"] for r in run["rows"]] for run in rec["profile"]["runs"]] == \
                   [[r["row"] for r in run["rows"] if r["row"] not in {f"{s} {n}" for s, n in left_out}]
                    for run in got["profile"]["runs"]]
        if (rec.get("timeline") or {}).get("results") and got["timeline"]:  # where both have timelines
            names = lambda rows: {(r.get("kernel"), r.get("schedule", r.get("version")), r.get("elements"))
                                  for r in rows}
            # A listed timeline lists each launch its list names once; the
            # last name's row (for any launch past the list) says it stands
            # only if the work makes such a launch.
            sure = [r for r in got["timeline"]["results"]["rows"] if not r.get("listed_if_launched")]
            maybe = [r for r in got["timeline"]["results"]["rows"] if r.get("listed_if_launched")]
            recorded = names(rec["timeline"]["results"]["rows"])
            assert names(sure) <= recorded and recorded - names(sure) <= names(maybe)


# -- the check itself, on a fake lesson whose program is a script ------------

FAKE_PROGRAM = r'''
import json, sys
args = sys.argv[1:]
if "--list" not in args:
    sys.exit(2)
if MODE == "fails":
    print("CUDA error at fake.cu:12: cudaMalloc: no device", file=sys.stderr)
    sys.exit(1)
out = args[args.index("--json") + 1]
rows = [] if "--profile" not in args else [{"group": "profile", "profiled": "sweep n=1024 v9"}]
if "--profile" not in args:
    for v in ("v9", "cub"):
        for t in ("cold", "batch"):
            rows.append({"version": v, "group": "sweep", "elements": 1024, "set": f"sweep n=1024 {t}",
                         "timing": t})
report = {"lesson": "day99_fake", "listed": MODE != "unlisted", "gpu": {}, "settings": {"grid": "known when run"},
          "checks": [{"check": "sweep n=1024 v9", "ok": True, "detail": "listed, not run"}],
          "rows": rows, "decisions": []}
open(out, "w").write(json.dumps(report))
'''


def fake(in_tmp, monkeypatch, text: str, mode: str = "ok", metrics=()):
    program = in_tmp / "build" / "bin" / "day99_fake"
    write(program, f"#!{sys.executable}\nMODE = {mode!r}\n" + FAKE_PROGRAM)
    os.chmod(program, 0o755)
    _, lesson = page_repo_with(in_tmp, monkeypatch)
    info = LessonInfo(metrics=tuple({"name": m, "why": "w"} for m in metrics),
                      profile_runs=({"args": ["--profile"]},) if metrics else ())
    lesson = fake_lesson(in_tmp, info=info)
    write(lesson.path / "README.md.j2", text)
    return lesson


def test_a_selector_that_matches_nothing_is_named_at_its_template_line(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\nv9: {{ page.measured("gbps", ",.0f", version="v9", timing="cold") }}\n'
                                       'v8: {{ page.measured("gbps", ",.0f", version="v8", timing="cold") }}\n')
    diags, said = listed.check(lesson)
    assert [(d.line, "version='v8'" in d.message, "--list" in d.message) for d in diags] == [(4, True, True)]


def test_a_field_no_row_has_and_a_size_never_run_are_named(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.measured("gbs", ",.0f", version="v9", timing="cold") }}\n')
    diags, _ = listed.check(lesson)
    assert len(diags) == 1 and "no row has a field 'gbs'" in diags[0].message and diags[0].line == 3
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.compare({"version": "v9", "elements": 2048, "timing": "cold"}, '
                                       '{"version": "cub", "elements": 2048, "timing": "cold"}) }}\n')
    diags, _ = listed.check(lesson)
    assert len(diags) == 1 and diags[0].line == 3 and "2048" in diags[0].message


def test_a_page_that_selects_what_the_program_makes_passes_and_words_render(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.compare({"version": "v9", "timing": "cold"}, '
                                       '{"version": "cub", "timing": "cold"}, "full") }}; '
                                       '{{ page.setting("grid") }}; {{ page.ratio("median_ms", {"version": "v9", '
                                       '"timing": "batch"}, {"version": "cub", "timing": "batch"}) }}\n')
    diags, said = listed.check(lesson)
    assert diags == [] and "4 rows" in said


def test_a_chart_with_nothing_to_draw_is_a_mistake(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.plot("bars", "Bars", "gbps", "{version}", '
                                       'elements=4096, timing="cold") }}\n')
    diags, _ = listed.check(lesson)
    assert len(diags) == 1 and diags[0].line == 3 and "page.plot" in diags[0].message


def test_a_counter_of_a_row_never_profiled_is_named_and_one_profiled_passes(in_tmp, monkeypatch):
    text = '# Day 99\n\n{{ page.counter("sweep n=1024 v9", "dram__bytes_read.sum") }}\n'
    lesson = fake(in_tmp, monkeypatch, text, metrics=["dram__bytes_read.sum"])
    assert listed.check(lesson)[0] == []
    lesson = fake(in_tmp, monkeypatch, text.replace("v9", "v8"), metrics=["dram__bytes_read.sum"])
    diags, _ = listed.check(lesson)
    assert len(diags) == 1 and "no profiled row 'sweep n=1024 v8'" in diags[0].message


@pytest.mark.parametrize("mode, words", [("fails", "exited 1: CUDA error at fake.cu:12"),
                                         ("unlisted", 'without "listed": true')])
def test_a_program_that_cannot_list_its_plan_is_named(in_tmp, monkeypatch, mode, words):
    lesson = fake(in_tmp, monkeypatch, "# Day 99\n", mode=mode)
    diags, said = listed.check(lesson)
    assert len(diags) == 1 and words in diags[0].message and said == ""


def test_an_unbuilt_program_is_named_with_the_build_command(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, "# Day 99\n")
    Path(lesson.binary).unlink()
    diags, _ = listed.check(lesson)
    assert "is not built (cmake --build --preset course)" in diags[0].message


def test_a_listed_json_is_refused_by_compare_as_a_run(course, in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, "# Day 99\n")
    out = in_tmp / "mine.json"
    subprocess.run([lesson.binary, "--list", "--json", str(out)], check=True)
    r = course("evidence", "compare", "day99_fake", str(out), str(out))
    assert r.code == 64 and "written with --list" in r.err


def test_a_miss_names_the_field_that_leaves_no_row_and_the_nearest_value(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.measured("gbps", ",.0f", version="v8", timing="cold") }}\n')
    diags, _ = listed.check(lesson)
    assert len(diags) == 1
    assert "no row has version='v8'; they have version = 'cub', 'v9'; did you mean 'v9'?" in diags[0].message


def test_a_table_that_selects_no_row_is_a_mistake(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.table([["row", "version", ""]], version="v9", elements=4096) }}\n')
    diags, _ = listed.check(lesson)
    assert len(diags) == 1 and diags[0].line == 3 and "elements=4096" in diags[0].message


def test_a_chart_label_naming_a_field_no_row_has_is_a_mistake(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.plot("bars", "Bars", "gbps", "{verison}", timing="cold") }}\n')
    diags, _ = listed.check(lesson)
    assert len(diags) == 1 and "'{verison}', a field none of its rows has" in diags[0].message


def test_a_timeline_program_not_built_leaves_its_rows_unchecked_and_says_so(in_tmp, monkeypatch):
    """The course's build leaves the timeline programs out (check DAY builds
    its day's): a page's timeline helpers then pass, and the check says
    what it did not check."""
    import dataclasses

    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.timeline("span_us", ".1f", schedule="v9") }}\n'
                                       '{{ page.timeline_plot("tl", "Blocks", schedule="v9") }}\n')
    lesson = dataclasses.replace(lesson, timeline_target="day99_fake_timeline")
    diags, said = listed.check(lesson)
    assert diags == [] and "the timeline build's not checked (not built since the program" in said
