"""A build's memo of pure computations: a JSON file under build/cache/
mapping a content key to a result, for work whose inputs are named by
content (a verified record's digest and a row's place in it, an
executable's hash) and whose code is named by `version` (the hash of the
module that computes it). A missing, unreadable or older file is an empty
memo: the work is done again, never trusted. Written atomically, and only
where something was added."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .fsutil import write_atomic
from .sources import manifest

SCHEMA = "course-cache/1"

# The most results a memo keeps: the oldest go first. Twenty thousand
# verdicts are a few megabytes, several promotions' worth of every page.
MAX_ITEMS = 20000


def version_of(*paths: Path) -> str:
    """What names the code of a computation: its modules' bytes."""
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()[:16]


class Memo:
    """Read on first use (the build folder as it is then), and read again
    after each save: a long-lived process sees what other processes added."""

    def __init__(self, name: str, version: str, folder: Path | None = None, max_items: int | None = None):
        self.name, self.folder, self.version = name, folder, version
        self.max_items = max_items or MAX_ITEMS
        self._added = False
        self._items: dict | None = None

    @property
    def path(self) -> Path:
        return Path(self.folder or manifest.build_dir() / "cache") / f"{self.name}.json"

    def _loaded(self) -> dict:
        if self._items is None:
            self._items = {}
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(data, dict) and data.get("schema") == SCHEMA and data.get("version") == self.version \
                        and isinstance(data.get("items"), dict):
                    self._items = data["items"]
            except (OSError, UnicodeDecodeError, ValueError, RecursionError):
                pass
        return self._items

    def get(self, key: str):
        return self._loaded().get(key)

    def put(self, key: str, value) -> None:
        self._loaded().pop(key, None)  # a key put again is the newest
        self._items[key] = value
        self._added = True
        while len(self._items) > self.max_items:
            del self._items[next(iter(self._items))]

    def save(self) -> None:
        if self._added:
            # in the order put, oldest first: what MAX_ITEMS drops first
            write_atomic(self.path, json.dumps({"schema": SCHEMA, "version": self.version, "items": self._items},
                                               separators=(",", ":")) + "\n")
            self._added = False
        self._items = None  # the next use reads the file again
