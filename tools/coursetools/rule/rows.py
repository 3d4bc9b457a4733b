"""A record's rows as the rule reads them: which fields name a row, and
which rows are twins (the same code timed a second time beside itself)."""

from __future__ import annotations

ROW_KEY_FIELDS = ("group", "version", "schedule", "mode", "kernel", "keys", "bins", "elements", "k", "timing")
# A row's name is in one of these fields, by lesson; a twin (the same code
# timed a second time in the same set) is named NAME-twin.
ROW_NAME_FIELDS = ("version", "schedule", "mode")
TWIN = "-twin"


def is_twin_pair(decision: dict) -> bool:
    return str(decision.get("a", "")).endswith(TWIN)


def decided_pairs(results: dict, keep=is_twin_pair):
    """(decision, a's samples, b's samples) for each pair a record's sets
    decided (its `decisions`, set by set) that `keep` selects: by default
    the twin pairs."""
    by = {}
    for r in results.get("rows", []):
        name = next((r[f] for f in ROW_NAME_FIELDS if f in r), None)
        if "samples_ms" in r and "set" in r:
            by[(r["set"], name)] = r["samples_ms"]
    for d in results.get("decisions", []):
        if keep(d) and (d["set"], d["a"]) in by and (d["set"], d["b"]) in by:
            yield d, by[(d["set"], d["a"])], by[(d["set"], d["b"])]


def row_key(row: dict) -> tuple:
    """A row's identity across records: the fields that name it and, last,
    its set. The set is the lesson's own name for one comparison at one
    size in one timing, so rows that differ only in a field this list
    does not know (a 2-D lesson's rows and cols) stay apart."""
    key = tuple((k, row[k]) for k in ROW_KEY_FIELDS if k in row)
    return key + (("set", row["set"]),) if isinstance(row.get("set"), str) else key


def shown_key(key: tuple) -> dict:
    """A row key as a reader is shown it: its naming fields (the set is
    the identity's, and repeats them)."""
    return {k: v for k, v in key if k != "set"}
