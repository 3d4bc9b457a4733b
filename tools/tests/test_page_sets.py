"""The page API on a promoted set of two records (one a GPU): a word
stands alone only where both GPUs give it; where they differ the page
names each GPU's; tallies count the sizes where they differ; nvbench's
numbers sit beside the course's rows."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import fake_lesson
from coursetools.evidence import state as ev_state
from coursetools.pages import marks, page as page_api
from coursetools.pages.marks import resolve_marks, unmark as _unmark
from coursetools.pages.rows import provenance_text
from coursetools.sources.lessoninfo import LessonInfo

def unmark(text) -> str:
    """What the page shows: marks resolved, then removed."""
    return _unmark(resolve_marks(str(text)))


FAST, SLOW = [1.0] * 40, [1.2] * 40  # 'a' 20% faster than 'b' (b's time over a's is 1.2)


def _noisy(base: float, n: int = 200, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [base * (1 + rng.uniform(-0.003, 0.003)) for _ in range(n)]


def _record(uuid: str, pairs: dict[int, tuple[list[float], list[float]]], tag: str = "t") -> dict:
    rows, decisions = [], []
    for n, (sa, sb) in pairs.items():
        st = f"n={n} cold"
        for v, samples in (("a", sa), ("b", sb)):
            rows.append({"group": "s", "version": v, "elements": n, "timing": "cold", "set": st,
                         "median_ms": sorted(samples)[len(samples) // 2], "samples_ms": samples})
        decisions.append({"a": "a", "b": "b", "set": st, "word": "?", "samples": len(sa)})
    return {"results": {"rows": rows, "decisions": decisions, "settings": {}},
            "gpu": {"uuid": uuid, "name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132,
                    "driver": "580", "cuda_runtime": "13.0"},
            "toolchain": {"nvcc": "13.0"}, "git": {"commit": "0" * 40}, "tag": tag,
            "recorded_at": "2026-12-01T00:00:00Z"}


def _page(*records, info=None):
    lesson = fake_lesson(Path("/nonexistent"), info=info)
    return page_api.Page(lesson, [], ev_state.fixture(lesson, list(records)))


A = {"group": "s", "version": "a", "timing": "cold"}
B = {"group": "s", "version": "b", "timing": "cold"}


def test_one_word_where_both_gpus_agree_and_each_gpus_where_they_differ():
    same = _noisy(1.0, seed=3)
    p = _page(_record("GPU-aaaaaaaa-1", {1: (FAST, SLOW), 2: (FAST, SLOW)}),
              _record("GPU-bbbbbbbb-2", {1: (FAST, SLOW), 2: (same, _noisy(1.0, seed=4))}))
    agreed = unmark(p.compare({**A, "elements": 1}, {**B, "elements": 1}, "full"))
    assert agreed.endswith(") on GPU aaaaaaaa; faster on both GPUs")  # the estimate named as the first GPU's
    assert unmark(p.compare({**A, "elements": 1}, {**B, "elements": 1})) == "faster"
    split = unmark(p.compare({**A, "elements": 2}, {**B, "elements": 2}))
    assert split == "faster on GPU aaaaaaaa but the same on GPU bbbbbbbb"
    tally = {unmark(k): unmark(v) for k, v in p.verdicts(A, B, "elements", [1, 2]).items()}
    assert tally == {"faster": "1", "differs between GPUs": "1"}
    assert unmark(p.where_verdict(A, B, "elements", [1, 2], "differs between GPUs")) == "2"
    assert unmark(p.where_verdict(A, B, "elements", [1, 2], "faster")) == "1"
    assert unmark(p.where_verdict(A, B, "elements", [1, 2], "the same", gpu=1)) == "2"
    assert unmark(p.where_verdict(A, B, "elements", [1, 2], "faster", gpu=0)) == "1 and 2"
    assert p.where_verdict(A, B, "elements", [1, 2], "the same") == "no size"
    with pytest.raises(marks.TemplateProblem, match="takes no gpu"):
        p.where_verdict(A, B, "elements", [1, 2], "differs between GPUs", gpu=0)
    one = {unmark(k): unmark(v) for k, v in p.verdicts(A, B, "elements", [1, 2], gpu=1).items()}
    assert one == {"faster": "1", "the same": "1"}
    assert {unmark(k): unmark(v) for k, v in p.agreement().items()} == {"agree": "1", "differ": "1"}
    listed = unmark(p.disagreements())
    assert "`a` against `b` (`n=2 cold`): faster on GPU aaaaaaaa, the same on GPU bbbbbbbb" in listed
    assert "n=1 cold" not in listed
    # a list, as its documentation says: a template may loop over it
    assert [unmark(d) for d in p.disagreements()] == [
        "- `a` against `b` (`n=2 cold`): faster on GPU aaaaaaaa, the same on GPU bbbbbbbb"]


def test_a_target_is_reached_only_where_every_gpu_reaches_it():
    p = _page(_record("GPU-aaaaaaaa", {1: (FAST, SLOW)}), _record("GPU-bbbbbbbb", {1: (FAST, [1.05] * 40)}))
    mixed = unmark(p.reaches({**A, "elements": 1}, {**B, "elements": 1}, 1.1))
    assert mixed == "reaches on GPU aaaaaaaa, not on GPU bbbbbbbb,"
    assert p.reaches({**A, "elements": 1}, {**B, "elements": 1}, 1.01) == "reaches"
    assert p.reaches({**A, "elements": 1}, {**B, "elements": 1}, 1.5) == "falls short of"
    assert unmark(p.reaches_count(A, B, "elements", [1], 1.1)) == "0"
    assert unmark(p.ratio_each("median_ms", {**B, "elements": 1}, {**A, "elements": 1})) == "1.20 / 1.05"


def test_twins_count_every_gpus_pairs_and_the_provenance_names_every_gpu():
    def with_twin(uuid):
        r = _record(uuid, {1: (FAST, SLOW)}, tag=uuid[-1])
        r["results"]["rows"].append({"group": "s", "version": "a-twin", "elements": 1, "timing": "cold",
                                     "set": "n=1 cold", "median_ms": 1.0, "samples_ms": FAST})
        return r
    p = _page(with_twin("GPU-aaaaaaaa-x"), with_twin("GPU-bbbbbbbb-y"))
    assert {unmark(k): unmark(v) for k, v in p.twins().items()} == {"the same": "2"}
    text = provenance_text([with_twin("GPU-aaaaaaaa-x"), with_twin("GPU-bbbbbbbb-y")],
                           {"promoted_by": "A Reviewer", "promoted_at": "2026-12-01T00:00:00Z"})
    assert "Numbers and charts from run `x` on NVIDIA H200 GPU aaaaaaaa" in text
    assert "run `y` on NVIDIA H200 GPU bbbbbbbb" in text


def _ladder_record(uuid: str, samples: dict[str, list[float]], sets: dict[str, str] | None = None) -> dict:
    r = _record(uuid, {})
    for v, ss in samples.items():
        r["results"]["rows"].append({"group": "ladder", "version": v, "elements": 1, "timing": "cold",
                                     "set": (sets or {}).get(v, "ladder n=1 cold"), "change": f"{v}'s idea",
                                     "gbps": 1.0 / sorted(ss)[len(ss) // 2], "samples_ms": ss,
                                     "median_ms": sorted(ss)[len(ss) // 2]})
    return r


def test_a_ladders_step_is_the_rules_estimate_on_the_first_gpu_not_a_ratio_of_medians():
    from coursetools.pages.teach import speedup_text

    # v2's median is v1's, yet most of its samples are quicker: the rule's
    # Hodges-Lehmann estimate and the ratio of medians part ways.
    v1 = [1.0] * 21 + [1.2] * 20
    v2 = [0.9] * 20 + [1.0] * 21
    v3 = [0.5] * 41
    p = _page(_ladder_record("GPU-aaaaaaaa", {"v1": v1, "v2": v2, "v3": v3, "lib": [0.8] * 41}),
              _ladder_record("GPU-bbbbbbbb", {"v1": v1, "v2": [0.95] * 41, "v3": v3, "lib": [0.8] * 41}))
    table = unmark(p.ladder(["v1", "v2", "v3"], 1, references=["lib"]))
    line = {c.split("|")[1].strip(): [x.strip() for x in c.split("|")[1:-1]] for c in table.splitlines()
            if c.startswith("| `")}
    L = {"group": "ladder", "elements": 1, "timing": "cold"}
    est = p._verdicts_each({**L, "version": "v2"}, {**L, "version": "v1"})[0][1].ratio
    assert line["`v2`"][5] == speedup_text(est) and line["`v2`"][5] != speedup_text(1.0)
    assert line["`v2`"][2] == "1,000.0"  # the time column stays the median
    step3 = p._verdicts_each({**L, "version": "v3"}, {**L, "version": "v2"})[0][1].ratio
    assert line["`v3`"][5] == speedup_text(step3) == "2.0x"
    assert line["`lib`"][5] == "" and line["`lib`"][6] == "+25%"  # a reference: no step
    # The entry gives the other GPU's steps too, the text's span.
    assert "GPU bbbbbbbb: v1 1,000.0 us" in str(p._teach()["sections"]) and "v2 +5.3%" in str(p._teach()["sections"])
    # Rows timed apart: a ratio of medians, named as one.
    apart = _page(_ladder_record("GPU-aaaaaaaa", {"v1": v1, "v2": v2}, sets={"v2": "other"}))
    assert "+0.0% (medians)" in unmark(apart.ladder(["v1", "v2"], 1))


def test_a_selector_matching_several_rows_is_refused_naming_them():
    r = _record("GPU-aaaaaaaa", {1: (FAST, SLOW), 2: (FAST, SLOW)})
    p = _page(r, _record("GPU-bbbbbbbb", {1: (FAST, SLOW), 2: (FAST, SLOW)}))
    with pytest.raises(marks.TemplateProblem, match="selects 2 rows"):
        p.measured("median_ms", ".2f", group="s", version="a")
    with pytest.raises(marks.TemplateProblem, match="the set has 2 GPUs"):
        p.gpu(2)


def test_a_timeline_selector_matching_several_rows_is_refused():
    r = _record("GPU-aaaaaaaa", {1: (FAST, SLOW)})
    r["timeline"] = {"results": {"rows": [{"schedule": "v", "kernel": "v", "elements": n, "last_end_us": 1.0}
                                          for n in (1, 2)]}}
    p = _page(r)
    with pytest.raises(marks.TemplateProblem, match="selects 2 timeline rows"):
        p.timeline("last_end_us", ".1f", schedule="v", kernel="v")
    assert unmark(p.timeline("last_end_us", ".1f", schedule="v", kernel="v", elements=2)) == "1.0"


def _nvbench_state(version: str, n: int, cold_s: float, batch_s: float) -> dict:
    return {"name": f"Row={version} Elements={n}", "is_skipped": False,
            "axis_values": [{"name": "Row", "type": "string", "value": version},
                            {"name": "Elements", "type": "int64", "value": str(n)}],
            "summaries": [{"tag": "nv/cold/time/gpu/median", "data": [{"name": "value", "value": str(cold_s)}]},
                          {"tag": "nv/batch/time/gpu/mean", "data": [{"name": "value", "value": str(batch_s)}]}]}


def test_nvbench_rows_sit_beside_the_course_rows_they_are():
    r = _record("GPU-aaaaaaaa", {1: (FAST, SLOW)})
    r["results"]["rows"].append({"group": "s", "version": "a", "elements": 1, "timing": "batch", "set": "b",
                                 "median_ms": 0.5, "samples_ms": [0.5] * 5})
    r["nvbench"] = {"results": {"benchmarks": [{"name": "sum", "states": [_nvbench_state("a", 1, 1.1e-3, 0.4e-3)]}]}}
    info = LessonInfo(nvbench={"axes": {"Row": "version", "Elements": "elements"}, "rows": {"group": "s"}})
    p = _page(r, info=info)
    table = unmark(p.nvbench_table("sum"))
    assert "| `a, elements 1` | 1,000.00 | 1,100.00 | 1.10 | 500.00 | 400.00 | 0.80 |" in table
    assert unmark(p.nvbench_ratio("sum", "batch", {"Row": "a"})) == "0.80"
    with pytest.raises(marks.TemplateProblem, match="no nvbench benchmark 'other'"):
        p.nvbench_table("other")
    with pytest.raises(marks.TemplateProblem, match="no nvbench state"):
        p.nvbench_table("sum", over=[{"Row": "zzz"}])


def test_a_profiled_row_that_does_not_exist_is_named_with_the_ones_that_do():
    from coursetools.sources.lessoninfo import LessonInfo as LI
    r = _record("GPU-aaaaaaaa", {1: (FAST, SLOW)})
    r["profile"] = {"runs": [{"rows": [{"row": "ladder n=1 v1", "kernels": [{"metrics": {"m": 3}}]}]}]}
    info = LI(metrics=({"name": "m", "why": "w"},))
    p = _page(r, info=info)
    assert unmark(p.counter("ladder n=1 v1", "m", ",")) == "3"
    with pytest.raises(marks.TemplateProblem, match="no profiled row 'v1'; the profiled rows are: ladder n=1 v1"):
        p.counter("v1", "m", ",")


def test_same_results_counts_the_checks_whose_printed_result_every_gpu_shares():
    def rec(uuid, v8_sum):
        r = _record(uuid, {1: (FAST, SLOW)})
        r["results"]["checks"] = [
            {"check": "ladder n=64 v8 random", "detail": f"got {v8_sum}, want 8388482.86: relative error", "ok": True},
            {"check": "ladder n=64 v8 ones", "detail": "got 64, want 64: relative error 0", "ok": True},
            {"check": "ladder n=64 v9 random", "detail": "got 8388483, want 8388482.86; again 8388483", "ok": True},
            {"check": "ladder n=64 v9-one-wave random", "detail": "got 1, want 1", "ok": True},
            {"check": "ladder n=64 v9 same bits after timing", "detail": "8388483, then 8388483", "ok": True},
            {"check": "ladder n=64 ceiling random", "detail": "every one of the values as expected", "ok": True}]
        return r

    p = _page(rec("GPU-aaaaaaaa", 8388481), rec("GPU-bbbbbbbb", 8388483))
    assert {k: unmark(v) for k, v in p.same_results("v8").items()} == {"same": "1", "differ": "1"}
    # a version is a word of the name: v9 is not v9-one-wave; a check with no 'got' counts nowhere
    assert {k: unmark(v) for k, v in p.same_results("v9").items()} == {"same": "1", "differ": "0"}
    assert {k: unmark(v) for k, v in p.same_results("ceiling").items()} == {"same": "0", "differ": "0"}
    unverified = page_api.Page(fake_lesson(Path("/nonexistent")), [],
                               ev_state.fixture(fake_lesson(Path("/nonexistent")), [], None, "unverified"))
    assert unverified.same_results("v8")["same"] == "*(unmeasured)*"
