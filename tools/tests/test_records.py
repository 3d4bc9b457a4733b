"""Records on disk: the compact encoding keeps everything, decodes to the
object it was given, makes the same bytes every time, and refuses what is
not a record; every record converted from the old files (pretty-printed,
then gzip) decodes to what its old file held."""

from __future__ import annotations

import bz2
import gzip
import json
import subprocess
from pathlib import Path

import pytest

from coursetools.errors import EvidenceError
from coursetools.record import format as fmt

REPO = Path(__file__).resolve().parents[2]


def sample_record() -> dict:
    rec = {
        "schema": fmt.SCHEMA, "lesson": "day99_fake", "tag": "t", "recorded_at": "2026-12-01T00:00:00Z",
        "command": ["build/bin/day99_fake", "--json", "FILE"], "exit_code": 0, "stdout": "ünïcode \u00b5s\n",
        "stderr": "", "gpu": {"name": "G", "clocks": {"readings": [{"sm_mhz": 1980.0, "t_s": 0.2}]}},
        "toolchain": {}, "git": {"commit": "abc1234", "dirty": False}, "sources": {"digest": "d", "files": {}},
        "executable": {"target": "day99_fake", "sha256": "0" * 64},
        "results": {"rows": [{"set": "s", "samples_ms": [0.001, 1e-300, 12345.678], "nested": {"a": [1, 2]}},
                             {"set": "s", "samples_ms": []}], "checks": [], "decisions": [], "empty": {}},
    }
    rec["digest"] = fmt.record_digest(rec)
    return rec


def test_the_encoding_round_trips_and_is_deterministic():
    rec = sample_record()
    raw = fmt.encode(rec)
    assert raw == fmt.encode(json.loads(json.dumps(rec)))  # the same record, the same bytes
    back = fmt.decode(raw, "t.json.bz2")
    assert back == rec and fmt.record_digest(back) == rec["digest"]
    text = bz2.decompress(raw).decode()
    assert '\n   {"samples_ms":[],"set":"s"}\n' in text  # a row, one line
    assert '\n    "samples_ms":[0.001,1e-300,12345.678],\n' in text  # a row that nests: its values a line each


@pytest.mark.parametrize("raw, words", [
    (b"{}", "is not bzip2-compressed"),
    (gzip.compress(b'{"a": 1}'), "is not bzip2-compressed"),
    (bz2.compress(b'{"a": 1}') + b"junk", "bytes after its compressed data"),
    (bz2.compress(b'{"a": 1}')[:-6], "ends inside its compressed data"),
    (bz2.compress(b"[1]"), "holds a JSON list"),
    (bz2.compress(b'{"a": NaN}'), "NaN"),
])
def test_what_is_not_a_record_is_named(raw, words):
    with pytest.raises(EvidenceError, match=words):
        fmt.decode(raw, "t.json.bz2")


def test_a_record_that_inflates_past_the_limit_is_refused_without_reading_it_all(monkeypatch):
    monkeypatch.setattr(fmt, "MAX_DECODED_BYTES", 1 << 20)
    raw = bz2.compress(b" " * (64 << 20))  # 64 MiB of spaces in a few KB
    assert len(raw) < 200_000
    with pytest.raises(EvidenceError, match="inflates past 1 MiB"):
        fmt.decode(raw, "t.json.bz2")


# The commit before the committed records were converted: where git has
# that history, every converted record must decode to what that commit's
# pretty-printed file held.
BEFORE_CONVERSION = "26ed394"


def test_every_committed_record_decodes_to_what_its_old_file_held():
    probe = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{BEFORE_CONVERSION}^{{commit}}"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"this clone has no commit {BEFORE_CONVERSION} (a shallow clone?)")
    listed = subprocess.run(["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", BEFORE_CONVERSION,
                             "evidence/records/"], capture_output=True, text=True, check=True).stdout.split()
    old_files = [p for p in listed if p.endswith(".json")]
    assert len(old_files) == 39
    for rel in old_files:
        old = json.loads(subprocess.run(["git", "-C", str(REPO), "show", f"{BEFORE_CONVERSION}:{rel}"],
                                        capture_output=True, check=True).stdout)
        new = fmt.load_record(REPO / (rel[: -len(".json")] + fmt.SUFFIX))
        assert new == old, rel
        assert fmt.canonical(new) == fmt.canonical(old), rel


def test_a_review_of_one_lesson_builds_and_runs_that_lesson_alone(tmp_path, monkeypatch):
    """`review --lesson DAY` builds that day and its variants and runs its
    GPU test alone (it built and ran every day's); a name no lesson has
    is refused before anything runs."""
    import dataclasses

    from conftest import fake_lesson
    from coursetools.errors import UsageError
    from coursetools.record import review
    from coursetools.sources import manifest

    one = dataclasses.replace(fake_lesson(tmp_path, "day31_one"), variants=("day31_one_bad",))
    two = fake_lesson(tmp_path, "day32_two")
    monkeypatch.setattr(manifest, "load", lambda path=None: [one, two])
    ran = []
    monkeypatch.setattr(review, "_sh", lambda cmd, log, timeout=0: (ran.append(cmd), (0, ""))[1])
    monkeypatch.setattr(review.dg, "sources_digest", lambda files, root: {"digest": "d"})
    summary = review.run(tmp_path / "build", tmp_path / "logs", say=lambda s: None, only=["day31_one"])
    build, ctest = ran[1], ran[2]
    assert build[-3:] == ["--target", "day31_one", "day31_one_bad"] and "day32_two" not in " ".join(build)
    assert ctest[ctest.index("-R") + 1] == "^(day31_one)_gpu$"
    assert list(summary["sources"]) == ["day31_one"] and summary["passed"]
    with pytest.raises(UsageError, match="unknown lesson 'day33_three'"):
        review.run(tmp_path / "build", tmp_path / "logs", say=lambda s: None, only=["day33_three"])


@pytest.mark.parametrize("output", ["[1, 2]", '"rows"', '{"rows": {"a": 1}}',
                                    '{"rows": [1, {"k": 2}, null]}'])
def test_a_review_keeps_only_the_row_objects_a_negative_build_wrote(tmp_path, monkeypatch, output):
    """A negative build's --json output is the program's, of any shape:
    the review keeps the objects of its 'rows' list, never a traceback."""
    import dataclasses

    from conftest import fake_lesson
    from coursetools.record import review
    from coursetools.sources import manifest
    from coursetools.sources.lessoninfo import LessonInfo

    info = LessonInfo(negative=({"target": "day31_one_bad", "args": [], "expect": "report"},))
    one = dataclasses.replace(fake_lesson(tmp_path, "day31_one", info=info), variants=("day31_one_bad",))
    monkeypatch.setattr(manifest, "load", lambda path=None: [one])

    def sh(cmd, log, timeout=0):
        if "--json" in cmd:
            Path(cmd[cmd.index("--json") + 1]).write_text(output)
        return 0, "day31_one on GPU 0"
    monkeypatch.setattr(review, "_sh", sh)
    monkeypatch.setattr(review.dg, "sources_digest", lambda files, root: {"digest": "d"})
    summary = review.run(tmp_path / "build", tmp_path / "logs", say=lambda s: None, only=["day31_one"])
    (step,) = [s for s in summary["steps"] if s["step"] == "day31_one_bad: reported"]
    assert step["rows"] == ([{"k": 2}] if "null" in output else [])


def test_program_rows_reads_none_from_a_missing_file_but_refuses_a_folder(tmp_path):
    """A program that wrote no --json output gave no rows; a folder where
    its output should be is a problem to name, not an empty run."""
    from coursetools.record.strictjson import program_rows

    assert program_rows(tmp_path / "absent.json") == []
    (tmp_path / "out.json").mkdir()
    with pytest.raises(IsADirectoryError):
        program_rows(tmp_path / "out.json")
