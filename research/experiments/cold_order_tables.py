#!/usr/bin/env python3
"""The tables of research/cold-order.md, from cold_order.cu's output.

    python3 research/experiments/cold_order_tables.py research/experiments/data/cold-order-2026-12-02/*.csv.gz

For each run and configuration, at one block (1,024 floats, about 5 us
cold): how many of the 15 pairs of identical rows the course's rule calls
faster or slower, each row's median, and the mean time by the sample's
place in the run's sequence of samples, modulo 4 (the launch cycle)."""

import collections
import csv
import gzip
import itertools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from coursetools.rule.verdict import verdict  # noqa: E402


def main(paths: list[str]) -> None:
    for path in paths:
        sets = collections.defaultdict(list)
        with gzip.open(path, "rt") as f:
            for r in csv.DictReader(f):
                sets[(r["config"], int(r["n"]))].append(r)
        print(f"\n{Path(path).name}\n")
        print("| configuration | elements | same-code pairs called faster or slower | rows' medians (us) "
              "| mean us by sample mod 4 |")
        print("| --- | --- | --- | --- | --- |")
        for (config, n), rows in sets.items():
            by_row = collections.defaultdict(list)
            by_phase = collections.defaultdict(list)
            kernel = {}
            for i, r in enumerate(rows):
                by_row[int(r["row"])].append(float(r["us"]) / 1000.0)
                by_phase[i % 4].append(float(r["us"]))
                kernel[int(r["row"])] = int(r["kernel"])
            pairs = [(a, b) for a, b in itertools.combinations(sorted(by_row), 2) if kernel[a] == kernel[b]]
            calls = sum(verdict(by_row[a], by_row[b]).word in ("faster", "slower") for a, b in pairs)
            medians = " ".join(f"{1000 * statistics.median(by_row[k]):.2f}" for k in sorted(by_row))
            phases = " ".join(f"{statistics.mean(by_phase[k]):.3f}" for k in range(4))
            print(f"| {config} | {n:,} | {calls} of {len(pairs)} | {medians} | {phases} |")


if __name__ == "__main__":
    main(sys.argv[1:])
