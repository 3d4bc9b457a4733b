"""The build's memo (coursetools/cache.py) and what reads through it: a
memo only ever saves work, it never changes a result."""

from __future__ import annotations

import json
import math
import random

import pytest

from coursetools import cache
from coursetools.pages import verdicts
from coursetools.rule import verdict as cmp


def test_a_memo_keeps_what_was_put_and_forgets_a_bad_or_older_file(tmp_path):
    m = cache.Memo("t", "v1", tmp_path)
    assert m.get("k") is None
    m.put("k", [1, 2.5, "x"])
    m.save()
    assert cache.Memo("t", "v1", tmp_path).get("k") == [1, 2.5, "x"]
    assert cache.Memo("t", "v2", tmp_path).get("k") is None  # other code: computed again
    (tmp_path / "t.json").write_text("{not json")
    assert cache.Memo("t", "v1", tmp_path).get("k") is None  # unreadable: empty, never an error
    (tmp_path / "t.json").write_text(json.dumps({"schema": cache.SCHEMA, "version": "v1", "items": []}))
    assert cache.Memo("t", "v1", tmp_path).get("k") is None


def test_a_memo_drops_its_oldest_past_its_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ITEMS", 3)
    m = cache.Memo("t", "v", tmp_path)
    for k in "abcd":
        m.put(k, k)
    m.put("b", "b")  # put again: the newest
    m.put("e", "e")
    assert [m.get(k) for k in "abcde"] == [None, "b", None, "d", "e"]


def test_a_remembered_verdict_is_the_verdict():
    rng = random.Random(3)
    for _ in range(50):
        m, n = rng.choice([1, 3, 16, 64]), rng.choice([1, 5, 16, 64])
        a = [rng.lognormvariate(0, 0.02) for _ in range(m)]
        b = [rng.lognormvariate(rng.choice([0, 0.03]), 0.02) for _ in range(n)]
        v = cmp.verdict(a, b)
        back = verdicts._verdict_from(json.loads(json.dumps(verdicts._verdict_to(v))))
        assert (back.word, back.a, back.b, back.ratio) == (v.word, v.a, v.b, v.ratio)
        for x, y in ((back.low, v.low), (back.high, v.high)):
            assert x == y or (math.isnan(x) and math.isnan(y))  # too few samples: no interval


def test_prepared_rows_give_the_same_verdict():
    rng = random.Random(4)
    a = [rng.uniform(1, 1.1) for _ in range(40)]
    b = [rng.uniform(1.02, 1.12) for _ in range(33)]
    assert cmp.verdict_of(cmp.prepare(a), cmp.prepare(b)) == cmp.verdict(a, b)
    with pytest.raises(ValueError):
        cmp.prepare([])


def test_a_record_is_read_without_the_strict_checks_only_while_its_bytes_are_those_verified(tmp_path, monkeypatch):
    import bz2
    import hashlib

    from coursetools.errors import EvidenceError
    from coursetools.evidence import state as ev_state
    from conftest import fake_lesson

    monkeypatch.setenv("COURSE_EVIDENCE_DIR", str(tmp_path))
    path = tmp_path / "records" / "r.json.bz2"
    path.parent.mkdir()
    # Valid JSON the strict reader refuses (a key twice): read as verified
    # only while the bytes are those whose sha256 the state covers.
    raw = bz2.compress(b'{"a": 1, "a": 2}')
    path.write_bytes(raw)
    st = ev_state.LessonState(fake_lesson(tmp_path), "promoted", [], {}, ["records/r.json.bz2"],
                              verified_sha={ev_state._rel(path): hashlib.sha256(raw).hexdigest()})
    assert st.records == [{"a": 2}]
    path.write_bytes(bz2.compress(b'{"a": 3, "a": 4}'))
    st = ev_state.LessonState(st.lesson, "promoted", [], {}, ["records/r.json.bz2"],
                              verified_sha={ev_state._rel(path): hashlib.sha256(raw).hexdigest()})
    with pytest.raises(EvidenceError, match="twice"):
        st.records  # other bytes: the strict reader, which refuses them


def test_a_memo_entry_that_is_not_a_verdict_is_computed_again():
    good = verdicts._verdict_to(cmp.verdict([1.0, 1.1] * 10, [1.2, 1.3] * 10))
    assert verdicts._verdict_from(good) is not None
    for bad in (None, [], "x", good[:5], ["fastest"] + good[1:], [good[0], "1.0"] + good[2:],
                good[:4] + [[1, 2], good[5]], good[:4] + [good[4], ["a"] * 6]):
        assert verdicts._verdict_from(bad) is None


def test_the_state_is_not_written_for_files_that_changed_while_they_were_verified(tmp_path, monkeypatch):
    from coursetools.errors import EvidenceError
    from coursetools.evidence import state as ev_state

    calls = iter([{"files": {"a": "1"}, "sources": {}}, {"files": {"a": "2"}, "sources": {}}])
    monkeypatch.setattr(ev_state, "fingerprint", lambda lessons, build: next(calls))
    covers = ev_state.fingerprint([], tmp_path)  # before verify
    with pytest.raises(EvidenceError):
        ev_state.write([], [], tmp_path / "state.json", covers=covers)  # after: another record
    assert not (tmp_path / "state.json").exists()
