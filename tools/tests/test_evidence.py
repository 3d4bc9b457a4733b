"""The evidence gate: records, promotion refused for each failing rule,
signatures, and verify catching every kind of tampering."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from conftest import packed, read_record, write_record, fake_lesson, write
from coursetools.rule import compare as ev_compare
from coursetools.record import plausibility as ev_plaus
from coursetools.evidence import promote as ev_promote
from coursetools.record import run as ev_run
from coursetools.evidence import store as ev_store
from coursetools.record import format as ev_format
from coursetools.evidence import verify as ev_verify
from coursetools import fsutil
from coursetools.evidence import signing
from coursetools.sources import manifest
from coursetools.errors import EvidenceError, UsageError

FAKE = r'''#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--json") + 1]
print("mode      median us\nseed         61.5")
ok = os.environ.get("FAKE_CHECK", "1") == "1"
gbps = float(os.environ.get("FAKE_GBPS", "1080.4"))
res = {"lesson": "day99_fake",
       "gpu": {"name": "Fake H200", "compute_capability": os.environ.get("FAKE_CC", "9.0"),
               "uuid": os.environ.get("FAKE_UUID", "GPU-01234567-89ab-cdef-0123-456789abcdef"),
               "sm_count": 132, "runtime": 13000, "driver_api": 13000,
               "memory_clock_khz": 3201000, "memory_bus_bits": 6144},
       "checks": [{"check": "sum", "ok": ok, "detail": "exact" if ok else "off by 3"}],
       "rows": [{"mode": "seed", "timing": "cold", "median_ms": 0.0615, "min_ms": 0.06,
                 "samples_ms": [0.0615, 0.06, 0.062], "gbps": gbps}]}
open(out, "w").write(json.dumps(res))
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
'''


# A test fixture standing in for NVIDIA's nvidia-smi: it reports one GPU,
# the one FAKE says it ran on, and that GPU's clocks, in nvidia-smi's CSV.
FAKE_SMI = r'''#!/usr/bin/env python3
import os, sys
query = next(a for a in sys.argv if a.startswith("--query-gpu=")).split("=", 1)[1]
uuid = os.environ.get("FAKE_SMI_UUID", "GPU-01234567-89ab-cdef-0123-456789abcdef")
answers = {"uuid,name,driver_version,pci.bus_id": f"{uuid}, Fake H200, 580.159.04, 00000000:00:1E.0",
           "uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw": f"{uuid}, 1980, 3201, 41, 250.5"}
print(answers[query])
'''


@pytest.fixture
def repo(tmp_path, monkeypatch, reviewer_key):
    root = tmp_path / "repo"
    write(root / "common" / "course.cuh", "#pragma once\n")
    write(root / "lessons" / "day99_fake" / "fake.cu", '#include "course.cuh"\nint main() {}\n')
    write(root / "lessons" / "day99_fake" / "CMakeLists.txt",
          'course_add_lesson(day99_fake\n  DAY 99\n  TOPIC "Fake"\n  SOURCES fake.cu\n  MIN_CC 9.0)\n')
    binary = write(root / "build" / "bin" / "day99_fake", FAKE)
    binary.chmod(binary.stat().st_mode | stat.S_IEXEC)
    smi = write(tmp_path / "fake-bin" / "nvidia-smi", FAKE_SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{smi.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(manifest, "ROOT", root)
    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(root / "evidence"))
    monkeypatch.setattr(ev_run, "_build", lambda build, targets: "cmake --build build --target " + " ".join(targets))
    monkeypatch.setattr(ev_run, "git_state", lambda root=None: (None, None))
    # The relink check needs a real link step; test_relink_check_refuses_a_swapped_binary covers it.
    monkeypatch.setattr(ev_run.flags, "relink_problems", lambda lesson, build: [])
    for k in ("FAKE_EXIT", "FAKE_CC", "FAKE_CHECK", "FAKE_GBPS", "FAKE_UUID", "FAKE_SMI_UUID"):
        monkeypatch.delenv(k, raising=False)
    pub = reviewer_key.with_suffix(".pub")
    write(root / "evidence" / "allowed_signers", signing.public_key_line("tester@example.org", pub) + "\n")
    return root, fake_lesson(root)


def record(root, lesson, tag="t1", commit="abc1234", clean=True):
    return ev_run.record(lesson, tag, commit, clean, build=root / "build", timeline=False, profile=False)


# A second fake GPU: a promotion is a set of records of one build from two
# GPUs or more.
OTHER_GPU = "GPU-fedcba98-7654-3210-fedc-ba9876543210"


def record_on_two_gpus(root, lesson, monkeypatch, tags=("t1", "t2")):
    first = record(root, lesson, tags[0])
    monkeypatch.setenv("FAKE_UUID", OTHER_GPU)
    monkeypatch.setenv("FAKE_SMI_UUID", OTHER_GPU)
    second = record(root, lesson, tags[1])
    monkeypatch.delenv("FAKE_UUID")
    monkeypatch.delenv("FAKE_SMI_UUID")
    return first, second


def promote(lesson, key, tags=("t1", "t2")):
    return ev_promote.promote(lesson, list(tags), "A Reviewer", key, say=lambda *a: None)


def test_record_holds_every_field_and_verifies(repo):
    root, lesson = repo
    rec = read_record(record(root, lesson))
    for key in ("schema", "lesson", "tag", "recorded_at", "command", "exit_code", "stdout", "stderr",
                "gpu", "toolchain", "git", "sources", "results", "executable", "digest"):
        assert key in rec, key
    assert rec["schema"] == ev_format.SCHEMA
    assert rec["git"] == {"commit": "abc1234", "dirty": False, "source": "argument"}
    assert rec["executable"]["target"] == "day99_fake" and len(rec["executable"]["sha256"]) == 64
    assert rec["executable"]["sha256"] == ev_format.sha256_file(root / "build" / "bin" / "day99_fake")
    assert rec["sources"]["method"] == "course-tokens/2"
    assert set(rec["sources"]["files"]) == {"common/course.cuh", "lessons/day99_fake/fake.cu",
                                            "lessons/day99_fake/CMakeLists.txt"}
    assert rec["gpu"]["uuid"] == "GPU-01234567-89ab-cdef-0123-456789abcdef"
    assert rec["gpu"]["driver"] == "580.159.04" and rec["gpu"]["clocks"]["samples"] >= 1
    assert rec["host"]["cpu_count"] >= 1
    assert rec["gpu"]["peak_dram_gbps"] > 4000
    assert rec["digest"] == ev_format.record_digest(rec)
    assert ev_promote.record_problems(lesson, rec) == []


def test_a_record_is_never_overwritten(repo):
    root, lesson = repo
    record(root, lesson)
    with pytest.raises(UsageError, match="never overwritten"):
        record(root, lesson)


def test_without_history_the_commit_is_needed_and_with_history_git_decides(repo, monkeypatch):
    root, lesson = repo
    with pytest.raises(UsageError, match="pass --commit"):
        ev_run.record(lesson, "t2", None, None, build=root / "build", timeline=False, profile=False)
    monkeypatch.setattr(ev_run, "git_state", lambda root=None: ("a" * 40, True))
    with pytest.raises(UsageError, match="git decides"):
        ev_run.record(lesson, "t3", "abc1234", True, build=root / "build", timeline=False, profile=False)
    rec = read_record(ev_run.record(lesson, "t4", None, None, build=root / "build", timeline=False,
                               profile=False))
    assert rec["git"] == {"commit": "a" * 40, "dirty": True, "source": "git"}


@pytest.mark.parametrize("tag", ["Bad Tag", "../../x", "a/b", "", ".hidden", "x" * 70])
def test_bad_tags_are_refused(repo, tag):
    root, lesson = repo
    with pytest.raises(UsageError, match="not valid"):
        record(root, lesson, tag=tag)


def test_impossible_numbers_are_not_recorded(repo, monkeypatch):
    root, lesson = repo
    monkeypatch.setenv("FAKE_GBPS", "99999")
    with pytest.raises(EvidenceError, match="above the device's theoretical"):
        record(root, lesson)
    assert not (root / "evidence" / "records" / "day99_fake" / "t1.json.bz2").exists()


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
        (lambda env, root: None, "not the lesson's own build target"),
        (lambda env, root: None, "the program counted"),
    ],
    ids=["exit-code", "failed-check", "old-gpu", "dirty", "stale", "altered", "unverified-source", "other-binary",
         "own-tally-not-the-rules"],
)
def test_promotion_refused(repo, monkeypatch, reviewer_key, setup, reason):
    root, lesson = repo
    if setup:
        setup(monkeypatch, root)
    path = record(root, lesson, clean=(reason != "dirty tree"))
    src = root / "lessons" / "day99_fake" / "fake.cu"
    if reason == "stale":
        write(src, '#include "course.cuh"\nint main() { return 1; }\n')
    if reason in ("altered", "not the lesson's own build target", "the program counted"):
        rec = read_record(path)
        if reason == "altered":
            rec["stdout"] = rec["stdout"].replace("61.5", "41.5")
        elif reason == "the program counted":  # a tally the rule's recount of the samples does not give
            rec["results"]["same_code"] = [{"timing": "cold", "band": "under 8 us", "pairs": 3,
                                            "faster_or_slower": 2}]
            rec["digest"] = ev_format.record_digest(rec)
        else:
            rec["executable"]["target"] = "day98_other"
            rec["digest"] = ev_format.record_digest(rec)
        write_record(path, rec)
    if reason == "UNVERIFIED comment":
        write(src, "// UNVERIFIED: not yet run\n" + src.read_text())
    with pytest.raises(EvidenceError) as e:
        promote(lesson, reviewer_key, ("t1",))
    assert e.value.code == 4
    assert any(reason in str(d) for d in e.value.diagnostics), e.value.diagnostics
    assert not ev_store.promotions_path().exists()


def promoted(repo, key, monkeypatch):
    root, lesson = repo
    record_on_two_gpus(root, lesson, monkeypatch)
    entry = promote(lesson, key)
    assert entry["principal"] == "tester@example.org"
    assert ev_verify.verify([lesson]) == []
    return root, lesson, root / "evidence" / entry["record"]


def test_a_comment_edit_keeps_the_evidence(repo, reviewer_key, monkeypatch):
    root, lesson, _ = promoted(repo, reviewer_key, monkeypatch)
    src = root / "lessons" / "day99_fake" / "fake.cu"
    src.write_text("// a typo fixed in a comment\n" + src.read_text().replace("int main", "int   main"))
    assert ev_verify.verify([lesson]) == []


def test_verify_catches_edited_stdout(repo, reviewer_key, monkeypatch):
    root, lesson, path = promoted(repo, reviewer_key, monkeypatch)
    rec = read_record(path)
    rec["stdout"] += "a faster number\n"
    write_record(path, rec)
    assert any("altered" in p for p in ev_verify.verify([lesson]))


def test_verify_catches_a_record_and_its_digests_recomputed_together(repo, reviewer_key, monkeypatch):
    root, lesson, path = promoted(repo, reviewer_key, monkeypatch)
    rec = read_record(path)
    rec["results"]["rows"][0]["gbps"] = 2000.0
    rec["digest"] = ev_format.record_digest(rec)  # the forger recomputes the record's digest
    write_record(path, rec)
    promotions = json.loads(ev_store.promotions_path().read_text())
    promotions["promoted"]["day99_fake"]["record_digest"] = rec["digest"]  # and the promotion's
    ev_store.promotions_path().write_text(json.dumps(promotions))
    problems = ev_verify.verify([lesson])
    assert any("signature does not verify" in p for p in problems), problems


def test_verify_catches_a_promotion_entry_edited_by_hand(repo, reviewer_key, monkeypatch):
    root, lesson, _ = promoted(repo, reviewer_key, monkeypatch)
    promotions = json.loads(ev_store.promotions_path().read_text())
    promotions["promoted"]["day99_fake"]["promoted_by"] = "Somebody Else"
    ev_store.promotions_path().write_text(json.dumps(promotions))
    assert any("signature does not verify" in p for p in ev_verify.verify([lesson]))


def test_verify_catches_an_unsigned_promotion(repo, reviewer_key, monkeypatch):
    root, lesson, _ = promoted(repo, reviewer_key, monkeypatch)
    promotions = json.loads(ev_store.promotions_path().read_text())
    del promotions["promoted"]["day99_fake"]["signature"]
    ev_store.promotions_path().write_text(json.dumps(promotions))
    assert any("unsigned" in p for p in ev_verify.verify([lesson]))


def test_verify_catches_a_key_nobody_added(repo, reviewer_key, tmp_path, monkeypatch):
    root, lesson, _ = promoted(repo, reviewer_key, monkeypatch)
    (root / "evidence" / "allowed_signers").write_text("# no reviewers\n")
    assert any("signature does not verify" in p for p in ev_verify.verify([lesson]))


def test_verify_reapplies_the_rules_to_a_record_written_in_by_hand(repo, reviewer_key, monkeypatch):
    """A failed run's record named in promoted.json (and even signed) does
    not pass verify: every promotion rule is applied again."""
    root, lesson, _ = promoted(repo, reviewer_key, monkeypatch)
    monkeypatch.setenv("FAKE_EXIT", "1")
    bad = record(root, lesson, tag="t9")
    promotions = json.loads(ev_store.promotions_path().read_text())
    entry = promotions["promoted"]["day99_fake"]
    rec = read_record(bad)
    entry.update(tag="t9", record="records/day99_fake/t9.json", record_digest=rec["digest"],
                 executable_sha256=rec["executable"]["sha256"])
    entry["tags"][0], entry["records"][0] = "t9", "records/day99_fake/t9.json"
    entry["record_digests"][0], entry["executables"][0] = rec["digest"], rec["executable"]["sha256"]
    entry["signature"] = signing.sign(entry, reviewer_key)
    ev_store.promotions_path().write_text(json.dumps(promotions))
    assert any("exited 1" in p for p in ev_verify.verify([lesson]))


def test_verify_catches_a_source_edited_after_promotion(repo, reviewer_key, monkeypatch):
    root, lesson, _ = promoted(repo, reviewer_key, monkeypatch)
    src = root / "lessons" / "day99_fake" / "fake.cu"
    src.write_text(src.read_text().replace("{}", "{ return 0; }"))
    problems = ev_verify.verify([lesson])
    assert problems and "stale" in problems[0] and "fake.cu" in problems[0]


def test_verify_catches_a_deleted_record(repo, reviewer_key, monkeypatch):
    root, lesson, path = promoted(repo, reviewer_key, monkeypatch)
    path.unlink()
    assert any("missing" in p for p in ev_verify.verify([lesson]))


def test_two_promotes_at_once_both_land(repo, reviewer_key, monkeypatch):
    root, lesson = repo
    other = fake_lesson(root, target="day98_other", source="other.cu")
    write(root / "lessons" / "day98_other" / "other.cu", "int x;\n")
    write(root / "lessons" / "day98_other" / "CMakeLists.txt", "course_add_lesson(day98_other DAY 98)\n")
    binary = write(root / "build" / "bin" / "day98_other", FAKE)
    binary.chmod(0o755)
    import _pytest.monkeypatch
    mp = _pytest.monkeypatch.MonkeyPatch()
    record_on_two_gpus(root, lesson, mp)
    record_on_two_gpus(root, other, mp)
    mp.undo()
    errors = []

    def go(l):
        try:
            promote(l, reviewer_key)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    for _ in range(5):
        threads = [threading.Thread(target=go, args=(l,)) for l in (lesson, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        promoted_now = json.loads(ev_store.promotions_path().read_text())["promoted"]
        assert set(promoted_now) == {"day99_fake", "day98_other"}
    assert not errors


def test_malformed_evidence_files_are_named(repo, reviewer_key, monkeypatch):
    root, lesson, path = promoted(repo, reviewer_key, monkeypatch)
    path.write_bytes(packed("[1, 2, 3]"))
    problems = ev_verify.verify([lesson])
    assert any("holds a JSON list, not an object" in p for p in problems), problems
    ev_store.promotions_path().write_text("{not json")
    with pytest.raises(EvidenceError, match="promoted.json:1:2: error: is not valid JSON"):
        ev_store.load_promotions()


def test_compare_gives_a_verdict_for_every_shared_row(repo):
    root, lesson = repo
    a = read_record(record(root, lesson, tag="a"))
    b = read_record(record(root, lesson, tag="b"))
    table = ev_compare.compare_records(a, b)
    assert len(table) == 1 and table[0]["verdict"] in ("faster", "slower", "the same", "not distinguishable")


def test_a_crash_half_way_leaves_no_file(tmp_path, monkeypatch):
    target = tmp_path / "evidence" / "records" / "x" / "t.json"

    def crash(fd):
        raise OSError("power cut")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError):
        fsutil.write_atomic(target, "{}", replace=False)
    with pytest.raises(OSError):
        fsutil.write_atomic(tmp_path / "promoted.json", "{}")
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []


def test_the_copied_executable_runs_while_other_threads_fork(repo):
    """The record step runs a copy of the binary while a thread starts
    nvidia-smi. A child forked while the copy was open for writing keeps
    that descriptor until it execs, and exec of the copy then fails with
    'Text file busy'. Here a thread forks children that linger without
    exec'ing for the whole run: no descriptor of ours may be theirs."""
    root, lesson = repo
    stop = threading.Event()

    def fork_forever():
        children = []
        while not stop.is_set():
            pid = os.fork()
            if pid == 0:  # the child: hold every inherited descriptor a while
                stop.wait(0.1)
                os._exit(0)
            children.append(pid)
            children = [c for c in children if os.waitpid(c, os.WNOHANG)[0] == 0]
            if len(children) > 50:
                stop.wait(0.002)
        for c in children:
            os.waitpid(c, 0)

    threads = [threading.Thread(target=fork_forever, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for i in range(20):
            with __import__("tempfile").TemporaryDirectory() as tmp:
                run = ev_run._run_copy(root / "build" / "bin" / "day99_fake", [], __import__("pathlib").Path(tmp))
                assert run["exit_code"] == 0, run["stderr"]
    finally:
        stop.set()
        for t in threads:
            t.join()


def test_a_promotion_rests_on_two_gpus_of_one_build(repo, reviewer_key, monkeypatch):
    """One GPU's words are that GPU's: a set needs records of one build
    from two GPUs or more, one record a GPU."""
    root, lesson = repo
    record(root, lesson, "t1")
    record(root, lesson, "t2")  # the same GPU again
    with pytest.raises(EvidenceError) as e:
        promote(lesson, reviewer_key, ("t1",))
    assert "from 2 GPUs or more" in str(e.value) and e.value.code == 4
    with pytest.raises(EvidenceError) as e:
        promote(lesson, reviewer_key, ("t1", "t2"))
    assert "ran on one GPU" in str(e.value)
    monkeypatch.setenv("FAKE_UUID", OTHER_GPU)
    monkeypatch.setenv("FAKE_SMI_UUID", OTHER_GPU)
    record(root, lesson, "t3", commit="def5678")  # another build
    with pytest.raises(EvidenceError) as e:
        promote(lesson, reviewer_key, ("t1", "t3"))
    assert "is not of the build" in str(e.value) and "commit" in str(e.value)
    record(root, lesson, "t4")
    entry = promote(lesson, reviewer_key, ("t1", "t4"))
    assert entry["tags"] == ["t1", "t4"] and len(set(entry["gpus"])) == 2
    assert ev_verify.verify([lesson]) == []


def test_verify_checks_every_record_of_the_set(repo, reviewer_key, monkeypatch):
    root, lesson, _ = promoted(repo, reviewer_key, monkeypatch)
    second = root / "evidence" / "records" / "day99_fake" / "t2.json.bz2"
    rec = read_record(second)
    rec["stdout"] = rec["stdout"].replace("61.5", "41.5")
    write_record(second, rec)
    assert any("t2" in p and "altered" in p for p in ev_verify.verify([lesson]))


def test_a_promotion_of_one_record_no_longer_stands(repo, reviewer_key, monkeypatch):
    """An entry of one record (as promote wrote them before sets) is
    refused by verify as the current promotion, though signed."""
    root, lesson = repo
    record(root, lesson)
    entry = {"lesson": lesson.target, "tag": "t1", "record": "records/day99_fake/t1.json.bz2",
             "record_digest": read_record(root / "evidence" / "records" / "day99_fake" / "t1.json.bz2")["digest"]}
    rec = read_record(root / "evidence" / "records" / "day99_fake" / "t1.json.bz2")
    entry.update(sources_digest=rec["sources"]["digest"], executable_sha256=rec["executable"]["sha256"],
                 promoted_by="A Reviewer", promoted_at="2026-12-01T00:00:00Z", principal="tester@example.org")
    entry["signature"] = signing.sign(entry, reviewer_key)
    ev_store.promotions_path().write_text(json.dumps({"schema": "course-promotions/2", "promoted": {
        lesson.target: entry}, "history": [entry]}))
    assert any("from 2 GPUs or more" in p for p in ev_verify.verify([lesson]))


def test_a_student_without_openssh_compares_and_is_told_the_signature_was_not_checked(course, repo, monkeypatch,
                                                                                       reviewer_key, tmp_path):
    """The student's road: a build without the tools (no state file) and a
    machine with CUDA and Python but no OpenSSH. compare checks every rule
    but the reviewer's signature, says so, and exits 0 (it exited 4:
    'ssh-keygen not found')."""
    import dataclasses
    from coursetools.sources.lessoninfo import LessonInfo
    root, lesson = repo
    first, _ = record_on_two_gpus(root, lesson, monkeypatch)
    promote(lesson, reviewer_key)
    lesson = dataclasses.replace(lesson, info=LessonInfo(carry_over=({"what": "w", "a": {}, "b": {"mode": "seed"}},)))
    monkeypatch.setattr(manifest, "load", lambda path=None: [lesson])
    monkeypatch.setenv("COURSE_BUILD_DIR", str(tmp_path / "build-student"))  # no evidence state there
    mine = write(tmp_path / "my-run.json", json.dumps(read_record(first)["results"]))
    r = course("evidence", "compare", "day99_fake", "promoted", mine)
    assert r.code == 0 and "not checked" not in r.out, r.err
    (tmp_path / "bare-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bare-bin"))  # CUDA and Python only: no ssh-keygen
    r = course("evidence", "compare", "day99_fake", "promoted", mine)
    assert r.code == 0, r.err
    assert "promoted t1 [its reviewer's signature not checked: ssh-keygen is not installed]" in r.out.splitlines()[0]
