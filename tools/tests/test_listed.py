"""A page checked before its first record: every day's program describes
its rows without a GPU (--describe), the description is the record's rows
exactly, and a template's selector that matches nothing the program
produces is named at its template line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import fake_lesson, page_repo_with, write
from coursetools.evidence import state as ev_state
from coursetools.pages import described
from coursetools.sources import manifest
from coursetools.sources.manifest import LessonInfo

REAL = manifest.load()


def _built(lesson) -> bool:
    return Path(lesson.binary).is_file()


def _stats_free(row: dict) -> tuple:
    """What names a row: its field names, and each value that is not a
    measurement (text, and the whole numbers that select it: a size, a
    count of bins). A measured number (a time, an atomics count that
    depends on the GPU's grid) is left out."""
    keep = {k: v for k, v in row.items() if isinstance(v, str) or k in described.SELECTING_NUMBERS}
    return tuple(sorted(row)), tuple(sorted(keep.items()))


@pytest.mark.parametrize("lesson", REAL, ids=[l.target for l in REAL])
def test_every_days_page_renders_against_what_its_program_describes(lesson):
    if not _built(lesson):
        pytest.skip(f"{lesson.target} is not built in this build")
    diags, said = described.check(lesson)
    assert diags == [], [str(d) for d in diags]
    assert "timed" in said


@pytest.mark.parametrize("lesson", REAL, ids=[l.target for l in REAL])
def test_a_description_runs_nothing_and_needs_no_gpu(lesson, tmp_path):
    if not _built(lesson):
        pytest.skip(f"{lesson.target} is not built in this build")
    out = tmp_path / "d.json"
    proc = subprocess.run([lesson.binary, "--describe", "--json", str(out)], capture_output=True, text=True,
                          timeout=described.DESCRIBE_SECONDS)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["described"] is True
    assert data["rows"] and all(r.get("samples", 0) == 0 for r in data["rows"] if "samples_ms" in r)
    assert all(c["ok"] and c["detail"] == "described: not run" for c in data["checks"])
    assert {d["word"] for d in data["decisions"]} <= {"described"}


@pytest.mark.parametrize("lesson", REAL, ids=[l.target for l in REAL])
def test_a_description_lists_exactly_the_rows_of_the_promoted_record_of_this_code(lesson):
    """The promise that makes the check worth having: where a record of
    today's code is promoted, the description holds the same rows (by
    name, set, size and fields), checks, settings, decisions, profiled
    rows and timeline rows."""
    if not _built(lesson):
        pytest.skip(f"{lesson.target} is not built in this build")
    st = ev_state.of(lesson)
    if not st.valid:
        pytest.skip(f"{lesson.target}'s evidence is {st.state}: no record of this code to compare with")
    got = described.describe(lesson)
    for rec in st.records:
        want = rec["results"]
        assert sorted(map(_stats_free, want["rows"])) == sorted(map(_stats_free, got["results"]["rows"]))
        assert [c["check"] for c in want["checks"]] == [c["check"] for c in got["results"]["checks"]]
        assert sorted(want["settings"]) == sorted(got["results"]["settings"])
        assert [(d["set"], d["a"], d["b"]) for d in want["decisions"]] == \
               [(d["set"], d["a"], d["b"]) for d in got["results"]["decisions"]]
        if (rec.get("profile") or {}).get("runs"):  # a timed-only record profiles nothing
            assert [[r["row"] for r in run["rows"]] for run in rec["profile"]["runs"]] == \
                   [[r["row"] for r in run["rows"]] for run in got["profile"]["runs"]]
        if (rec.get("timeline") or {}).get("results") and got["timeline"]:  # where both have timelines
            names = lambda rows: {(r.get("kernel"), r.get("schedule", r.get("version")), r.get("elements"))
                                  for r in rows}
            # A described timeline lists each launch its list names once;
            # the last name's row (for any launch past the list) says it
            # stands only if the work makes such a launch.
            sure = [r for r in got["timeline"]["results"]["rows"] if not r.get("described_if_launched")]
            maybe = [r for r in got["timeline"]["results"]["rows"] if r.get("described_if_launched")]
            recorded = names(rec["timeline"]["results"]["rows"])
            assert names(sure) <= recorded and recorded - names(sure) <= names(maybe)


# -- the check itself, on a fake lesson whose program is a script ------------

FAKE_PROGRAM = r'''
import json, sys
args = sys.argv[1:]
if "--describe" not in args:
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
                         "timing": t, "samples": 0, "median_ms": 0, "q1_ms": 0, "q3_ms": 0, "min_ms": 0,
                         "max_ms": 0, "mean_ms": 0, "spread": 0, "samples_ms": [], "gbps": 0})
report = {"lesson": "day99_fake", "described": MODE != "undescribed", "gpu": {}, "settings": {"grid": 132},
          "checks": [{"check": "sweep n=1024 v9", "ok": True, "detail": "described: not run"}],
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
    diags, said = described.check(lesson)
    assert [(d.line, "version='v8'" in d.message, "--describe" in d.message) for d in diags] == [(4, True, True)]


def test_a_field_no_row_has_and_a_size_never_run_are_named(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.measured("gbs", ",.0f", version="v9", timing="cold") }}\n')
    diags, _ = described.check(lesson)
    assert len(diags) == 1 and "no row has a field 'gbs'" in diags[0].message and diags[0].line == 3
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.compare({"version": "v9", "elements": 2048, "timing": "cold"}, '
                                       '{"version": "cub", "elements": 2048, "timing": "cold"}) }}\n')
    diags, _ = described.check(lesson)
    assert len(diags) == 1 and diags[0].line == 3 and "2048" in diags[0].message


def test_a_page_that_selects_what_the_program_makes_passes_and_words_render(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.compare({"version": "v9", "timing": "cold"}, '
                                       '{"version": "cub", "timing": "cold"}, "full") }}; '
                                       '{{ page.setting("grid") }}; {{ page.ratio("median_ms", {"version": "v9", '
                                       '"timing": "batch"}, {"version": "cub", "timing": "batch"}) }}\n')
    diags, said = described.check(lesson)
    assert diags == [] and "4 timed" in said


def test_a_chart_with_nothing_to_draw_is_a_mistake(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.plot("bars", "Bars", "gbps", "{version}", '
                                       'elements=4096, timing="cold") }}\n')
    diags, _ = described.check(lesson)
    assert len(diags) == 1 and diags[0].line == 3 and "page.plot" in diags[0].message


def test_a_counter_of_a_row_never_profiled_is_named_and_one_profiled_passes(in_tmp, monkeypatch):
    text = '# Day 99\n\n{{ page.counter("sweep n=1024 v9", "dram__bytes_read.sum") }}\n'
    lesson = fake(in_tmp, monkeypatch, text, metrics=["dram__bytes_read.sum"])
    assert described.check(lesson)[0] == []
    lesson = fake(in_tmp, monkeypatch, text.replace("v9", "v8"), metrics=["dram__bytes_read.sum"])
    diags, _ = described.check(lesson)
    assert len(diags) == 1 and "no profiled row 'sweep n=1024 v8'" in diags[0].message


@pytest.mark.parametrize("mode, words", [("fails", "exited 1: CUDA error at fake.cu:12"),
                                         ("undescribed", 'without "described": true')])
def test_a_program_that_cannot_describe_itself_is_named(in_tmp, monkeypatch, mode, words):
    lesson = fake(in_tmp, monkeypatch, "# Day 99\n", mode=mode)
    diags, said = described.check(lesson)
    assert len(diags) == 1 and words in diags[0].message and said == ""


def test_an_unbuilt_program_is_named_with_the_build_command(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, "# Day 99\n")
    Path(lesson.binary).unlink()
    diags, _ = described.check(lesson)
    assert "is not built (cmake --build --preset course)" in diags[0].message


def test_a_described_json_is_refused_by_compare_as_a_run(course, in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, "# Day 99\n")
    out = in_tmp / "mine.json"
    subprocess.run([lesson.binary, "--describe", "--json", str(out)], check=True)
    r = course("evidence", "compare", "day99_fake", str(out), str(out))
    assert r.code == 2 and "written with --describe" in r.err


def test_a_miss_names_the_field_that_leaves_no_row_and_the_nearest_value(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.measured("gbps", ",.0f", version="v8", timing="cold") }}\n')
    diags, _ = described.check(lesson)
    assert len(diags) == 1
    assert "no row has version='v8'; they have version = 'cub', 'v9'; did you mean 'v9'?" in diags[0].message


def test_a_table_that_selects_no_row_is_a_mistake(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.table([["row", "version", ""]], version="v9", elements=4096) }}\n')
    diags, _ = described.check(lesson)
    assert len(diags) == 1 and diags[0].line == 3 and "elements=4096" in diags[0].message


def test_a_chart_label_naming_a_field_no_row_has_is_a_mistake(in_tmp, monkeypatch):
    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.plot("bars", "Bars", "gbps", "{verison}", timing="cold") }}\n')
    diags, _ = described.check(lesson)
    assert len(diags) == 1 and "'{verison}', a field none of its rows has" in diags[0].message


def test_a_timeline_program_not_built_leaves_its_rows_unchecked_and_says_so(in_tmp, monkeypatch):
    """The course's build leaves the timeline programs out (check DAY builds
    its day's): a page's timeline helpers then pass, and the check says
    what it did not check."""
    import dataclasses

    lesson = fake(in_tmp, monkeypatch, '# Day 99\n\n{{ page.timeline("span_us", ".1f", schedule="v9") }}\n'
                                       '{{ page.timeline_plot("tl", "Blocks", schedule="v9") }}\n')
    lesson = dataclasses.replace(lesson, timeline_target="day99_fake_timeline")
    diags, said = described.check(lesson)
    assert diags == [] and "the timeline build's not checked (not built since the program" in said
