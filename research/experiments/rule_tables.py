"""The tables of *How often the rule is wrong* (research/rule-calibration.md),
recomputed from the committed records with the course's own rule:

    build/venv/bin/python research/experiments/rule_tables.py twins
    build/venv/bin/python research/experiments/rule_tables.py simpler
    build/venv/bin/python research/experiments/rule_tables.py sweep RECORD SECOND
    build/venv/bin/python research/experiments/rule_tables.py gpus
    build/venv/bin/python research/experiments/rule_tables.py third
    build/venv/bin/python research/experiments/rule_tables.py same FIRST SECOND
    build/venv/bin/python research/experiments/rule_tables.py bands LESSON/TAG ...
    build/venv/bin/python research/experiments/rule_tables.py pages

Prints Markdown tables; writes nothing. The note's rows are held to the
records they name (tools/tests/test_verdict.py): a record made since is
not in the note until someone writes about it, and needs no edit of it.
"""

from __future__ import annotations

import collections
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from coursetools.record.format import SUFFIX, load_record  # noqa: E402
from coursetools.rule import replication  # noqa: E402
from coursetools.rule import rows as store  # noqa: E402
from coursetools.rule import verdict as rule  # noqa: E402


def records():
    for path in sorted((ROOT / "evidence" / "records").glob(f"*/*{SUFFIX}")):
        rec = record(path.parent.name, path.name[:-len(SUFFIX)])
        if rec.get("schema") == "course-evidence/3":
            yield f"{path.parent.name}/{path.name[:-len(SUFFIX)]}", rec


def pairs(rec: dict, keep=store.is_twin_pair):
    return store.decided_pairs(rec.get("results") or {}, keep)


def head(*columns: str) -> None:
    """A Markdown table's head and rule."""
    print("| " + " | ".join(columns) + " |\n|" + " --- |" * len(columns))


def tagged(rec: dict) -> str:
    """A record as the tables name it: its tag and its GPU's UUID, short."""
    return f"{rec['tag']} ({str(rec['gpu']['uuid'])[4:12]})"


@functools.lru_cache(maxsize=None)
def record(lesson: str, tag: str) -> dict:
    """One committed record, by its lesson and tag: read once, as the
    note's test asks for the same records row after row (never changed)."""
    return load_record(ROOT / "evidence" / "records" / lesson / f"{tag}{SUFFIX}")


_PREPARED: dict = {}


def prepared(samples: list) -> rule.Prepared:
    """rule.prepare of one row's samples, once: a row is in several pairs
    and several tables. The entry holds the samples, so their id is not
    reused (and every record is kept by record() anyway)."""
    if id(samples) not in _PREPARED:
        _PREPARED[id(samples)] = (samples, rule.prepare(samples))
    return _PREPARED[id(samples)][1]


def verdict(a: list, b: list) -> rule.Verdict:
    """rule.verdict over prepared() rows."""
    return rule.verdict_of(prepared(a), prepared(b))


def word(a: list, b: list) -> str:
    """word(a, b) alone: the rule's two counts, without the
    estimate's and the interval's order statistics."""
    return rule.word_on_grid(prepared(a).grid, prepared(b).grid)


_WORDS: dict = {}


def words(rec: dict, widened: bool = False) -> dict:
    """replication.pair_words of a record from record(), computed once: the
    rule's words over a day-24 record's thousand pairs are most of a
    table's cost, and every row of a set asks for them again."""
    key = (id(rec), widened)  # the entry holds rec, so its id is not reused
    if key not in _WORDS:
        _WORDS[key] = (rec, replication.pair_words(rec["results"], widened=widened, verdict=verdict))
    return _WORDS[key][1]


def agree(a: dict, b: dict) -> replication.Agreement:
    """replication.agreement of two records, from their cached words."""
    return replication.agreement(words(a), words(b))


def twin_row(name: str, rec: dict) -> str:
    """The `twins` table's row of one record: its twin pairs' words."""
    words = collections.Counter(word(a, b) for _, a, b in pairs(rec))
    git = rec.get("git") or {}
    commit = str(git.get("commit", ""))[:7] + (" (dirty)" if git.get("dirty") else "")
    return (f"| {name} | {commit} | {sum(words.values())} | {words[rule.FASTER] + words[rule.SLOWER]} "
            f"| {words[rule.SAME]} | {words[rule.UNDECIDED]} |")


def twins() -> None:
    head("record", "commit", "twin pairs", "*faster*/*slower*", "*the same*", "*not distinguishable*")
    total = collections.Counter()
    for name, rec in records():
        row = twin_row(name, rec)
        total.update(dict(zip(("pairs", "calls"), map(int, row.split(" | ")[2:4]))))
        print(row)
    print(f"\ntotal: {total['pairs']} pairs, {total['calls']} faster or slower")


def simpler() -> None:
    verdicts = [verdict(a, b) for _, rec in records() for _, a, b in pairs(rec)]
    head("margin", "twin pairs called *faster*/*slower*")
    for margin in (0.01, 0.015, 0.02, 0.025, 0.03):
        calls = sum(v.simpler_rule_calls(margin) for v in verdicts)
        print(f"| {margin * 100:g}% | {calls} of {len(verdicts):,} |")


pct = rule.signed_percent


def sweep(first: str, second: str) -> None:
    def cells(tag):
        rec = record("day24_reduction", tag)
        keep = lambda d: d["set"].startswith("sweep") and d["a"] == "v9" and d["b"] == "cub"  # noqa: E731
        return {d["set"]: verdict(a, b) for d, a, b in pairs(rec, keep)}
    one, two = cells(first), cells(second)
    head("elements", "timing", f"v9 against CUB ({first})", "word", f"{second} word")
    key = lambda s: (int(s.split("=")[1].split()[0]), s.split()[-1])  # noqa: E731
    for s in sorted(one, key=key):
        n, timing = key(s)
        v = one[s]
        print(f"| {n:,} | {timing} | {pct(v.ratio)}; interval {pct(v.low)} to {pct(v.high)} | {v.word} "
              f"| {two[s].word if s in two else '-'} |")
    same = sum(s in two and two[s].word == one[s].word for s in one)
    words = collections.Counter(v.word for v in one.values())
    print(f"\n{first}: {dict(words)}; the same word in {second}: {same} of {len(one)}")
    for timing in ("cold", "batch", "graph"):
        for tag, c in ((first, one), (second, two)):
            w = collections.Counter(v.word for s, v in c.items() if s.endswith(timing))
            print(f"  {timing} {tag}: faster {w[rule.FASTER]}, the same {w[rule.SAME]}, "
                  f"not distinguishable {w[rule.UNDECIDED]}, slower {w[rule.SLOWER]}")


def promoted_sets():
    """(lesson, records) for each current promotion of records made on more
    than one GPU, its records in the entry's order."""
    import json
    promoted = json.loads((ROOT / "evidence" / "promoted.json").read_text())
    for entry in promoted.get("promoted", {}).values():
        files = entry.get("records") or []
        if len(files) >= 2:
            yield entry["lesson"], [record(entry["lesson"], Path(f).name[:-len(SUFFIX)]) for f in files]


def gpu_rows(lesson: str, recs: list[dict]) -> list[str]:
    """The `gpus` table's rows of one set of records made on more than one
    GPU: its first record's words against each other's, pair by pair
    (twins left out), and each record's twins."""
    names = ", ".join(tagged(r) for r in recs)
    twin_calls = []
    for r in recs:
        words = collections.Counter(word(x, y) for _, x, y in pairs(r))
        twin_calls.append(f"{words[rule.FASTER] + words[rule.SLOWER]} of {sum(words.values())}")
    out = []
    for other in recs[1:]:
        a = agree(recs[0], other)
        out.append(f"| {lesson} | {names} | {a.pairs} | {len(a.agree)} | {len(a.contradict)} "
                   f"| {len(a.undecided)} | {', '.join(twin_calls)} |")
    return out


def gpus() -> None:
    head("lesson", "records (GPU)", "pairs", "one word on both", "contradicting", "one *not distinguishable*",
         "twins *faster*/*slower* (each record)")
    print("\n".join(row for lesson, recs in promoted_sets() for row in gpu_rows(lesson, recs)))
    for lesson, recs in promoted_sets():
        for other in recs[1:]:
            a = agree(recs[0], other)
            if a.contradict:
                print(f"\n{lesson}: the contradicting pairs ({recs[0]['tag']}, {other['tag']}):")
            for key, w1, w2 in a.contradict:
                print(f"- `{key[1]}` against `{key[2]}` ({key[0]}): {w1}, {w2}")


def band_rows(name: str) -> list[str]:
    """The `bands` table's rows of one record (LESSON/TAG): its same-code
    pairs (twins and declared same code) per timing and band of median
    time, the rule's calls at 2% among them, the largest shift, and the
    margin the page's words there use (rule/resolution.py)."""
    from coursetools.rule import resolution
    rec = record(*name.split("/"))
    return [f"| {name} ({str(rec['gpu']['uuid'])[4:12]}) | {t['timing']} | {t['band']} | {t['pairs']:,} "
            f"| {t['faster_or_slower']} | {t['largest_shift_pct']:.1f}% | {t['margin_pct']:.1f}% |"
            for t in resolution.tally(rec.get("results") or {})]


def bands(names: list[str]) -> None:
    head("record (GPU)", "timing", "median time", "same-code pairs", "called *faster*/*slower* at 2%",
         "largest shift", "margin the page uses")
    print("\n".join(row for name in names for row in band_rows(name)))


def _held(recs: list[dict], other: dict, widened: bool = False) -> tuple[int, int, int, int]:
    """Of the words the set `recs` states alone (the same decided word on
    every record), how many `other` gives, contradicts, or leaves not
    distinguishable: (alone, held, contradicted, undecided)."""
    first, *rest = [words(r, widened=widened) for r in recs]
    alone = {k: w for k, w in first.items() if w in replication.DECIDED and all(ws.get(k) == w for ws in rest)}
    theirs = words(other, widened=widened)
    held = sum(theirs.get(k) == w for k, w in alone.items())
    undecided = sum(theirs.get(k) == rule.UNDECIDED for k in alone)
    contradicted = sum(theirs.get(k) in replication.DECIDED and theirs[k] != w for k, w in alone.items())
    return len(alone), held, contradicted, undecided


def _other_gpus(lesson: str, recs: list[dict]):
    """Every record of the set's sources digest made on a GPU the set does
    not name (never promoted)."""
    uuids = {r["gpu"]["uuid"] for r in recs}
    for path in sorted((ROOT / "evidence" / "records" / lesson).glob(f"*{SUFFIX}")):
        other = record(lesson, path.name[:-len(SUFFIX)])
        if (other.get("schema") == "course-evidence/3" and other["sources"]["digest"] == recs[0]["sources"]["digest"]
                and other["gpu"]["uuid"] not in uuids):
            yield other


def page_row(lesson: str, recs: list[dict], other: dict) -> str:
    """third_row at the margins pages use (each record at its own widened
    margins)."""
    alone, held, contradicted, undecided = _held(recs, other, widened=True)
    return (f"| {lesson} | {tagged(other)} | {', '.join(tagged(r) for r in recs)} | {alone} | {held} "
            f"| {contradicted} | {undecided} |")


def page_rows() -> list[str]:
    """The `pages` table: each promoted set's own GPUs against each other
    (a page's words on one GPU of the set, held to the other), then each
    record of its build on a GPU it does not name, at the page's margins."""
    out = []
    for lesson, recs in promoted_sets():
        out += [page_row(lesson, recs[:i] + recs[i + 1:], other) for i, other in enumerate(recs)]
        out += [page_row(lesson, recs, other) for other in _other_gpus(lesson, recs)]
    return out


def pages() -> None:
    head("lesson at the page's margins", "record (GPU)", "held to (GPU)", "decided words", "the same there",
         "contradicted", "*not distinguishable* there")
    print("\n".join(page_rows()))


def third_row(lesson: str, recs: list[dict], other: dict) -> str:
    """What a reader on a GPU beyond a set's sees: _held at the rule's own
    margin, and `other`'s pairs against each record of the set."""
    alone, held, contradicted, undecided = _held(recs, other)
    against = "; ".join(
        f"{r['tag']}: {len(a.agree)} agree, {len(a.contradict)} contradict, {len(a.undecided)} one *not distinguishable*"
        for r, a in ((r, agree(r, other)) for r in recs))
    return f"| {lesson} | {tagged(other)} | {alone} | {held} | {contradicted} | {undecided} | {against} |"


def third_rows() -> list[str]:
    """The `third` table: every record of each promoted set's sources
    digest made on a GPU the set does not name (never promoted)."""
    return [third_row(lesson, recs, other) for lesson, recs in promoted_sets() for other in _other_gpus(lesson, recs)]


def third() -> None:
    head("lesson", "record (GPU)", "words the page states alone", "the same there", "contradicted",
         "*not distinguishable* there", "pair by pair, against each record of the set")
    print("\n".join(third_rows()))


def same_rows(first: str, second: str) -> list[str]:
    """Two records of one build made one after the other on one GPU (tags
    FIRST and SECOND of every lesson that has both): their words pair by
    pair (twins left out), as `gpus` sets two GPUs side by side."""
    out = []
    for folder in sorted((ROOT / "evidence" / "records").iterdir()):
        a_path, b_path = folder / f"{first}{SUFFIX}", folder / f"{second}{SUFFIX}"
        if not (a_path.exists() and b_path.exists()):
            continue
        a, b = record(folder.name, first), record(folder.name, second)
        if a["gpu"]["uuid"] != b["gpu"]["uuid"] or a["sources"]["digest"] != b["sources"]["digest"]:
            continue  # not two runs of one build on one GPU
        both = agree(a, b)
        out.append(f"| {folder.name} | {tagged(a)}, {b['tag']} | {both.pairs} | {len(both.agree)} "
                   f"| {len(both.contradict)} | {len(both.undecided)} |")
    return out


def same(first: str, second: str) -> None:
    head("lesson", "records (GPU)", "pairs", "one word in both", "contradicting", "one *not distinguishable*")
    print("\n".join(same_rows(first, second)))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "twins":
        twins()
    elif what == "simpler":
        simpler()
    elif what == "gpus":
        gpus()
    elif what == "third":
        third()
    elif what == "sweep" and len(sys.argv) == 4:
        sweep(sys.argv[2], sys.argv[3])
    elif what == "bands" and len(sys.argv) > 2:
        bands(sys.argv[2:])
    elif what == "pages":
        pages()
    elif what == "same" and len(sys.argv) == 4:
        same(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
