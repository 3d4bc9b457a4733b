"""The evidence gate: records, promotion refused for each failing
condition, and verify catching every kind of tampering."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import write
from coursetools import evidence as ev
from coursetools import fsutil
from coursetools.diagnostics import CourseError
from coursetools.manifest import Lesson

FAKE = r'''#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--json") + 1]
print("mode      median ms\nseed         0.0615")
ok = os.environ.get("FAKE_CHECK", "1") == "1"
res = {"lesson": "day99_fake",
       "gpu": {"name": "Fake H200", "compute_capability": os.environ.get("FAKE_CC", "9.0"),
               "sm_count": 132, "runtime": 13000, "driver_api": 13000},
       "checks": [{"check": "sum", "ok": ok, "detail": "exact" if ok else "off by 3"}],
       "rows": [{"mode": "seed", "median_ms": 0.0615, "gbps": 1080.4}]}
open(out, "w").write(json.dumps(res))
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
'''


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    write(root / "common" / "course.cuh", "#pragma once\n")
    write(root / "lessons" / "day99_fake" / "fake.cu", '#include "course.cuh"\nint main() {}\n')
    binary = write(root / "build" / "bin" / "day99_fake", FAKE)
    binary.chmod(binary.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(ev, "ROOT", root)
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(root / "evidence"))
    for k in ("FAKE_EXIT", "FAKE_CC", "FAKE_CHECK"):
        monkeypatch.delenv(k, raising=False)
    lesson = Lesson(
        target="day99_fake", day=99, topic="fake", dir="lessons/day99_fake", min_cc="9.0",
        sources=("lessons/day99_fake/fake.cu",), binary=str(binary), compile_command="",
        build_command="cmake --build build --target day99_fake", run_command="build/bin/day99_fake",
        test_args=(), nvcc_flags="-O3 -arch=sm_90",
    )
    return root, lesson


def record(lesson, tag="t1", commit="abc1234", dirty=False):
    return ev.record(lesson, tag, commit, dirty)


def test_record_holds_every_field_and_verifies(repo):
    root, lesson = repo
    path = record(lesson)
    rec = json.loads(path.read_text())
    for key in ("schema", "lesson", "tag", "recorded_at", "command", "exit_code", "stdout", "stderr",
                "gpu", "toolchain", "git", "sources", "results", "digest"):
        assert key in rec, key
    for key in ("name", "compute_capability", "sm_count", "driver", "cuda_runtime", "clocks"):
        assert key in rec["gpu"], key
    assert rec["git"] == {"commit": "abc1234", "dirty": False, "source": "argument"}
    assert set(rec["sources"]["files"]) == {"common/course.cuh", "lessons/day99_fake/fake.cu"}
    assert rec["digest"] == ev.record_digest(rec)
    assert ev.record_problems(lesson, rec, for_promotion=True) == []


def test_a_record_is_never_overwritten(repo):
    _, lesson = repo
    record(lesson)
    with pytest.raises(CourseError, match="already exists"):
        record(lesson)


def test_record_without_history_needs_the_commit(repo, monkeypatch):
    _, lesson = repo
    monkeypatch.setattr(ev, "_git_state", lambda: (None, None))
    with pytest.raises(CourseError, match="pass --commit"):
        ev.record(lesson, "t2", None, None)


def test_record_rejects_bad_tags(repo):
    _, lesson = repo
    with pytest.raises(CourseError, match="not valid"):
        record(lesson, tag="Bad Tag")


@pytest.mark.parametrize(
    "setup, reason",
    [
        (lambda env, root: env.setenv("FAKE_EXIT", "1"), "exited 1"),
        (lambda env, root: env.setenv("FAKE_CHECK", "0"), "checks failed"),
        (lambda env, root: env.setenv("FAKE_CC", "8.0"), "compute capability 8.0"),
        (None, "dirty tree"),
        (lambda env, root: None, "stale"),
        (lambda env, root: None, "altered"),
        (lambda env, root: None, "UNVERIFIED comment"),
    ],
    ids=["exit-code", "failed-check", "old-gpu", "dirty", "stale", "altered", "unverified-source"],
)
def test_promotion_refused(repo, monkeypatch, setup, reason):
    root, lesson = repo
    if setup:
        setup(monkeypatch, root)
    path = record(lesson, dirty=(reason == "dirty tree"))
    if reason == "stale":
        write(root / "lessons" / "day99_fake" / "fake.cu", '#include "course.cuh"\nint main() { return 1; }\n')
    if reason == "altered":
        rec = json.loads(path.read_text())
        rec["stdout"] = rec["stdout"].replace("0.0615", "0.0415")
        path.write_text(json.dumps(rec))
    if reason == "UNVERIFIED comment":
        src = root / "lessons" / "day99_fake" / "fake.cu"
        # A source that still says it never ran is also stale: both reasons.
        write(src, "// UNVERIFIED: not yet run\n" + src.read_text())
    with pytest.raises(CourseError) as e:
        ev.promote(lesson, "t1", "Reviewer")
    assert e.value.code == 4
    assert any(reason in str(d) for d in e.value.diagnostics), e.value.diagnostics
    assert not ev.promotions_path().exists()


def test_promotion_names_every_reason_at_once(repo, monkeypatch):
    root, lesson = repo
    monkeypatch.setenv("FAKE_EXIT", "3")
    monkeypatch.setenv("FAKE_CC", "7.5")
    record(lesson, dirty=True)
    with pytest.raises(CourseError) as e:
        ev.promote(lesson, "t1", "Reviewer")
    text = "\n".join(map(str, e.value.diagnostics))
    for reason in ("exited 3", "dirty tree", "compute capability 7.5"):
        assert reason in text


def promoted(repo):
    root, lesson = repo
    record(lesson)
    entry = ev.promote(lesson, "t1", "Reviewer")
    assert entry["promoted_by"] == "Reviewer"
    assert ev.verify([lesson]) == []
    return root, lesson, root / "evidence" / entry["record"]


def test_verify_catches_edited_stdout(repo):
    root, lesson, path = promoted(repo)
    rec = json.loads(path.read_text())
    rec["stdout"] += "a faster number\n"
    path.write_text(json.dumps(rec))
    problems = ev.verify([lesson])
    assert problems and "day99_fake: altered" in problems[0]


def test_verify_catches_edited_result(repo):
    root, lesson, path = promoted(repo)
    rec = json.loads(path.read_text())
    rec["results"]["rows"][0]["gbps"] = 9999.0
    path.write_text(json.dumps(rec))
    assert any("altered" in p for p in ev.verify([lesson]))


def test_verify_catches_a_record_swapped_with_a_recomputed_digest(repo):
    root, lesson, path = promoted(repo)
    rec = json.loads(path.read_text())
    rec["results"]["rows"][0]["gbps"] = 9999.0
    rec["digest"] = ev.record_digest(rec)  # a forger recomputes the digest
    path.write_text(json.dumps(rec))
    assert any("not the one that was promoted" in p for p in ev.verify([lesson]))


def test_verify_catches_a_source_edited_after_promotion(repo):
    root, lesson, path = promoted(repo)
    src = root / "lessons" / "day99_fake" / "fake.cu"
    src.write_text(src.read_text() + " ")
    problems = ev.verify([lesson])
    assert problems and "day99_fake: stale" in problems[0] and "fake.cu" in problems[0]
    assert ev.state_of(lesson).state == "stale"


def test_verify_catches_a_deleted_record(repo):
    root, lesson, path = promoted(repo)
    path.unlink()
    problems = ev.verify([lesson])
    assert problems and "day99_fake: missing" in problems[0]


def test_a_crash_half_way_leaves_no_file(tmp_path, monkeypatch):
    target = tmp_path / "evidence" / "records" / "x" / "t.json"

    def crash(fd):
        raise OSError("power cut")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError):
        fsutil.create_new_atomic(target, "{}")
    with pytest.raises(OSError):
        fsutil.write_atomic(tmp_path / "promoted.json", "{}")
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []
