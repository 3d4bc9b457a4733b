"""The one-off conversions of stored records into the compact encoding
(format.py), each proved before anything is removed:

  - pretty-printed JSON, `<tag>.json`, as records were until 2026-12-01;
  - gzip-compressed JSON, `<tag>.json.gz`, as they were for part of
    2026-12-01, until bzip2 measured a quarter smaller on the largest.

For each old file it proves, before it removes anything, that the new file
decodes to exactly the object the old file held (equal as Python objects
and as canonical JSON, so the record's digest is unchanged), and that the
digest the record states still matches it. It writes the new file first,
never over an existing one, and removes the old file only once both are
proved equal; a record that fails is left as it was and named.

    python3 -m coursetools.record.convert evidence/records   (from tools/)
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

from ..errors import CourseError, display_path
from .format import SUFFIX, canonical, decode, json_object, load_json, record_digest, write_new_record

OLD_SUFFIXES = (".json.gz", ".json")


def _old_record(old: Path) -> dict:
    if old.name.endswith(".json.gz"):
        return json_object(gzip.decompress(old.read_bytes()), display_path(old), "a gzip-compressed record")
    return load_json(old, "a record")


def convert_file(old: Path) -> dict:
    """Converts one record; returns what was proved about it."""
    rec = _old_record(old)
    stem = next(old.name[: -len(s)] for s in OLD_SUFFIXES if old.name.endswith(s))
    new = old.with_name(stem + SUFFIX)
    if new.exists():
        raise CourseError(f"{display_path(new)}: exists already; nothing converted")
    if not write_new_record(new, rec):
        raise CourseError(f"{display_path(new)}: appeared while converting; nothing converted")
    back = decode(new.read_bytes(), display_path(new))
    same = back == rec and canonical(back) == canonical(rec)
    digest_ok = rec.get("digest") == record_digest(rec)
    if not same:
        new.unlink()
        raise CourseError(f"{display_path(old)}: the compact copy does not decode to the same record; left as it was")
    old_bytes = old.read_bytes()
    old.unlink()
    return {
        "record": display_path(new),
        "old_sha256": hashlib.sha256(old_bytes).hexdigest(),
        "old_bytes": len(old_bytes),
        "new_bytes": new.stat().st_size,
        "canonical_sha256": hashlib.sha256(canonical(rec)).hexdigest(),
        "digest_matches": digest_ok,
    }


def convert_tree(records: Path) -> list[dict]:
    old = [p for s in OLD_SUFFIXES for p in Path(records).glob(f"*/*{s}")
           if not (s == ".json" and p.name.endswith(".json.gz"))]
    return [convert_file(p) for p in sorted(old)]


def main(argv: list[str]) -> int:
    done = convert_tree(Path(argv[0]))
    for d in done:
        print(f"{d['record']}: {d['old_bytes']:,} -> {d['new_bytes']:,} bytes; decoded equal to the old file; "
              f"canonical sha256 {d['canonical_sha256'][:16]}; stated digest {'matches' if d['digest_matches'] else 'DIFFERS'}")
    print(f"{len(done)} record(s): {sum(d['old_bytes'] for d in done):,} -> {sum(d['new_bytes'] for d in done):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
