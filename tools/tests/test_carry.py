"""`course evidence compare LESSON A B`: the ratios a lesson declares as
the ones that carry over, inside each of two runs, side by side; a side is
a tag, 'promoted' or a lesson's --json output from any GPU."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from coursetools.sources import manifest

REPO = Path(__file__).resolve().parents[2]
LESSON = "day24_reduction"


def _promoted_record() -> dict:
    from coursetools.evidence.store import confined_record
    from coursetools.record.format import load_record
    entry = json.loads((REPO / "evidence" / "promoted.json").read_text())["promoted"][LESSON]
    return load_record(confined_record(entry["record"], LESSON, REPO / "evidence"))


@pytest.fixture
def rtx4090_run(tmp_path):
    """TEST FIXTURE, not a measurement: the promoted H200 record's --json
    output (its `results`) with the device fields rewritten to an RTX 4090's,
    standing in for a student's run on another GPU."""
    results = _promoted_record()["results"]
    results["gpu"].update({"name": "NVIDIA GeForce RTX 4090 (test fixture: an H200 run's samples)",
                           "compute_capability": "8.9", "sm_count": 128, "l2_bytes": 75497472,
                           "uuid": "GPU-00000000-0000-0000-0000-000000004090", "pci_bus_id": "00000000:01:00.0"})
    results["test_fixture"] = "device fields rewritten from an H200 run; not a measurement of an RTX 4090"
    path = tmp_path / "rtx4090.json"
    path.write_text(json.dumps(results))
    return path


def _tree_state():
    evidence = sorted((p.relative_to(REPO), p.stat().st_mtime_ns) for p in (REPO / "evidence").rglob("*"))
    pages = sorted((p.relative_to(REPO), p.stat().st_mtime_ns) for p in (REPO / "lessons").rglob("*"))
    return evidence, pages


def test_a_students_run_against_the_page(course, rtx4090_run, monkeypatch):
    def no_git(cmd, *a, **k):
        if (cmd[0] if isinstance(cmd, (list, tuple)) else str(cmd).split()[0]).endswith("git"):
            raise AssertionError("compare must not need git")
        return real_run(cmd, *a, **k)
    real_run = subprocess.run
    monkeypatch.setattr(subprocess, "run", no_git)
    before = _tree_state()
    r = course("evidence", "compare", LESSON, "promoted", rtx4090_run, "--all")
    assert r.code == 0, r.err
    assert "NVIDIA H200" in r.out and "RTX 4090" in r.out
    info = manifest.find(manifest.load(), LESSON).info
    for c in info.carry_over:
        assert c["what"] in r.out
    # the same samples on both sides: every word carries over
    tallies = [line for line in r.out.splitlines() if line.strip().startswith("carried over:")]
    assert len(tallies) == len(info.carry_over)
    for line in tallies:
        n = int(line.split(" of ")[1].split()[0])
        assert line.strip().startswith(f"carried over: {n} of {n} ") and n > 0, line
    assert "(host-bound)" in r.out
    assert _tree_state() == before  # writes nothing


def test_the_json_names_both_sides_and_every_cell(course, rtx4090_run):
    r = course("evidence", "compare", LESSON, rtx4090_run, "promoted", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert "RTX 4090" in data["left"]["gpu"] and data["right"]["gpu"] == "NVIDIA H200"
    cells = [c for block in data["carry_over"] for c in block["rows"]]
    assert cells and all(c["carried"] == "yes" for c in cells)
    assert all(0 < c["left"]["ratio"] < 10 for c in cells)


@pytest.mark.parametrize("make, words", [
    (lambda d: d.write_text("{\"lesson\": \"day58_pdl\", \"rows\": []}"), "is the output of 'day58_pdl'"),
    (lambda d: d.write_text("{\"lesson\": \"day24_reduction\",\n \"rows\": [1, 2]}"), "rows[0] is not an object"),
    (lambda d: d.write_text("{\"lesson\": \"day24_reduction\",\n \"rows\": [}"), "rtx.json:2:"),
    (lambda d: d.write_text("{\"lesson\": \"day24_reduction\", \"rows\": []}"), "holds no timed rows"),
    (lambda d: d.write_text("{\"lesson\": \"day24_reduction\", \"rows\": [{\"set\": \"s\", \"samples_ms\": [0]}]}"),
     "samples_ms must be numbers of milliseconds"),
    (lambda d: None, "missing"),
    (lambda d: d.write_text("{\"lesson\": \"day24_reduction\", \"n\": " + "9" * 5000 + "}"), "5,000 digits"),
    (lambda d: d.write_text(json.dumps({"lesson": "day24_reduction", "rows": [
        {"set": "s", "group": ["x"], "samples_ms": [1.0]}]})), "'group' must be a string or a whole number"),
    (lambda d: d.write_text(json.dumps({"lesson": "day24_reduction", "rows": [
        {"set": "s", "version": "v9", "samples_ms": [1e-300]}, {"set": "s", "version": "cub", "samples_ms": [1e300]}]})),
     "samples_ms must be numbers of milliseconds"),
    (lambda d: d.write_text(json.dumps({"lesson": "day24_reduction", "rows": [
        {"set": "s", "version": "v9", "samples_ms": [1.0]}] * 4000})), "repeats rows[0]"),
])
def test_bad_runs_get_one_line_naming_the_file(course, tmp_path, make, words):
    path = tmp_path / "rtx.json"
    make(path)
    r = course("evidence", "compare", LESSON, "promoted", path)
    assert r.code == 64 and words in r.err, r.err  # a student's file is input: not the evidence's exit 4
    assert len(r.err.strip().splitlines()) == 1


def test_an_unknown_tag_is_named(course):
    r = course("evidence", "compare", LESSON, "promoted", "h200-1999-01-01")
    assert r.code == 64 and "no record of day24_reduction with tag 'h200-1999-01-01'" in r.err


def test_strings_from_a_run_reach_the_terminal_escaped(course, tmp_path):
    """An ANSI escape or a carriage return in a GPU's or a row's name
    cannot move the cursor or rewrite the 'carried over' lines."""
    promoted = _promoted_record()["results"]
    promoted["gpu"] = {"name": "RTX\x1b[2K\rcarried over: 99 of 99"}
    for row in promoted["rows"]:
        if isinstance(row.get("version"), str):
            row["version"] = row["version"] + "\x1b[1A"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(promoted))
    r = course("evidence", "compare", LESSON, "promoted", path)
    assert "\x1b" not in r.out and "\r" not in r.out, r.out[:400]
    assert "\\x1b[2K\\r" in r.out


def test_compare_is_linear_in_its_input(course, tmp_path):
    """Twenty thousand distinct timed rows in one set: read and compared
    in well under the time a quadratic pass would take."""
    import time
    rows = [{"set": "s", "version": f"r{i}", "group": "sweep", "elements": 1, "timing": "cold",
             "samples_ms": [1.0, 1.0, 1.0]} for i in range(20_000)]
    rows += [{"set": "s", "version": v, "group": "sweep", "elements": 1, "timing": "cold",
              "samples_ms": [1.0, 1.1, 1.0]} for v in ("v9", "cub")]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"lesson": "day24_reduction", "rows": rows}))
    t0 = time.process_time()
    r = course("evidence", "compare", LESSON, "promoted", path)
    assert r.code == 0, r.err
    assert time.process_time() - t0 < 20


def test_the_summary_comes_first_in_at_most_fifteen_lines(course, rtx4090_run):
    r = course("evidence", "compare", LESSON, "promoted", rtx4090_run)
    lines = r.out.strip().split("\n")
    assert r.code == 0 and len(lines) <= 15, r.out
    assert "'yes' where both runs' words" in r.out and "--all" in lines[-1]
    full = course("evidence", "compare", LESSON, "promoted", rtx4090_run, "--all")
    assert len(full.out.strip().split("\n")) > 15


def test_a_run_with_no_row_in_common_is_told_which_sizes_to_run(course, tmp_path):
    results = _promoted_record()["results"]
    results["rows"] = [dict(r, elements=1000003) for r in results["rows"] if r.get("elements") == 1048576]
    path = tmp_path / "odd-size.json"
    path.write_text(json.dumps(results))
    r = course("evidence", "compare", LESSON, "promoted", path)
    assert r.code == 0 and "no row of" in r.out and "--size 1048576" in r.out, r.out


def test_an_empty_selector_takes_every_row(tmp_path):
    """`[[carry_over]] a = {}`: every row of a set against the set's b-row
    (an author's "every row"; it was refused as an empty table)."""
    from conftest import fake_lesson
    from coursetools.rule import carry
    from coursetools.sources.lessoninfo import load_lesson_info

    toml = tmp_path / "lesson.toml"
    toml.write_text('[[carry_over]]\nwhat = "each against the base"\na = {}\nb = { version = "base" }\n')
    lesson = fake_lesson(tmp_path, info=load_lesson_info(toml, "lesson.toml"))
    rows = [{"set": f"n={n} cold", "version": v, "elements": n, "samples_ms": [t] * 20}
            for n in (1, 2) for v, t in (("base", 1.0), ("x", 0.5), ("y", 2.0))]
    run = carry.side("run", {"rows": rows}, "run.json")
    (block,) = carry.compare(lesson, run, run)
    assert sorted((c["row"]["version"], c["row"]["elements"]) for c in block["cells"]) == [
        ("x", 1), ("x", 2), ("y", 1), ("y", 2)]
    assert {c["left"].word for c in block["cells"]} == {"faster", "slower"}


def test_rows_that_differ_only_in_fields_the_rule_does_not_name_stay_apart():
    """A 2-D lesson's rows differ in `rows` and `cols`, fields the rule's
    naming list does not hold: their sets keep them apart, so compare
    matches each to its own and shows it by its naming fields."""
    from coursetools.rule.compare import compare_records

    def rec():
        return {"results": {"rows": [
            {"group": "t", "version": "v1", "timing": "cold", "rows": r, "cols": c, "set": f"t {r}x{c} cold",
             "samples_ms": [m] * 20} for r, c, m in ((1024, 1024, 1.0), (2048, 512, 2.0))]}}
    table = compare_records(rec(), rec())
    assert sorted(t["a_median_ms"] for t in table) == [1.0, 2.0]
    assert all(t["row"] == {"group": "t", "version": "v1", "timing": "cold"} for t in table)
