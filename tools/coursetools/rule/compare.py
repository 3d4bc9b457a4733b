"""Two records of a lesson, row by row, by the comparison rule: what
`course evidence compare` prints and `promote` shows before it signs."""

from __future__ import annotations

from . import verdict as cmp
from .rows import row_key, shown_key


def compare_records(a: dict, b: dict) -> list[dict]:
    """Every timed row the two records share: both medians, the ratio and
    the verdict of a against b."""
    def rows(rec):
        out = {}
        res = rec.get("results") if isinstance(rec.get("results"), dict) else {}
        for row in res.get("rows", []) or []:
            if isinstance(row, dict) and isinstance(row.get("samples_ms"), list) and row["samples_ms"]:
                out[row_key(row)] = row
        return out

    ra, rb = rows(a), rows(b)
    out = []
    for key in [k for k in ra if k in rb]:
        try:
            v = cmp.verdict(ra[key]["samples_ms"], rb[key]["samples_ms"])
        except ValueError:
            continue
        out.append({"row": shown_key(key), "a_median_ms": v.a.median, "b_median_ms": v.b.median,
                    "ratio": v.ratio, "verdict": v.word})
    return out


def format_comparison(table: list[dict], a: str, b: str) -> str:
    if not table:
        return "(no timed rows in common)"
    names = [" ".join(str(v) for v in r["row"].values()) for r in table]
    nw = max(len(n) for n in names)
    w = max(len(a), len(b), 9) + 3  # a tag's full name over each median: "NNNN.NN us"
    lines = [f"ratio: {b}'s median over {a}'s; verdict: {a} against {b} (research/REVIEW-PROCESS.md)",
             f"{'row':<{nw}} {a:>{w}} {b:>{w}} {'ratio':>7}  verdict"]
    for name, r in zip(names, table):
        lines.append(f"{name:<{nw}} {r['a_median_ms'] * 1000:>{w - 3}.2f} us {r['b_median_ms'] * 1000:>{w - 3}.2f} us "
                     f"{r['ratio']:>7.3f}  {r['verdict']}")
    return "\n".join(lines)
