"""research/lesson-lines.md's tables, recounted from the lessons' sources:
every host line of a day is in exactly one kind, and each kind's count is
the one the page states."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "research" / "lesson-lines.md"


def _counter():
    spec = importlib.util.spec_from_file_location(
        "line_counts", ROOT / "research" / "experiments" / "line_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tables():
    """(source, line, {kind: (declarations, count)}) for each table."""
    lines = PAGE.read_text(encoding="utf-8").split("\n")
    for n, line in enumerate(lines, 1):
        m = re.fullmatch(r"<!-- parts: (\S+) -->", line)
        if not m:
            continue
        rows = {}
        for row in lines[n + 2:]:
            if not row.startswith("|"):
                break
            kind, names, count = (c.strip() for c in row.strip("|").split("|"))
            rows[kind] = (names.split(), int(count))
        yield m.group(1), n, rows


def test_each_table_holds_every_host_line_once_and_counts_them_as_the_sources_do():
    counter = _counter()
    tables = list(_tables())
    assert len(tables) == 3, "research/lesson-lines.md should have a table per day"
    for source, line, rows in tables:
        parts = counter.parts(str(ROOT / source))
        _, host = counter.count(str(ROOT / source))
        where = f"research/lesson-lines.md:{line}"
        assert rows.pop("all")[1] == host == sum(parts.values()), where
        claimed = {}
        for kind, (names, count) in rows.items():
            mine = [p for p in parts if any(p == n or p.startswith(n + " ") for n in names)]
            for p in mine:
                assert p not in claimed, f"{where}: {p!r} is in {claimed.get(p)} and {kind}"
                claimed[p] = kind
            assert sum(parts[p] for p in mine) == count, f"{where}: {kind} counts {count}"
        assert set(claimed) == set(parts), f"{where}: unplaced {set(parts) - set(claimed)}"
