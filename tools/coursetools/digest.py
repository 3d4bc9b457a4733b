"""The sources digest: what ties a record to the code that ran.

It is taken over each file's C++ token stream (cpplex.code_tokens):
comments and whitespace dropped, literals kept whole. A comment or a
formatting change keeps a record valid, and the page's snippets simply
update; any change of code, down to one character of a string, makes the
record stale. The digest covers the lesson's sources and the shared
header.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from . import cpplex
from .errors import SourceError
from .fsutil import read_source

METHOD = "cpp-tokens/1"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(data: bytes) -> str:
    """SHA-256 over the file's code tokens, one per line."""
    text = data.decode("utf-8", errors="surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    joined = "\x1f".join(cpplex.code_tokens(text.replace("\r\n", "\n")))
    return sha256_bytes(joined.encode("utf-8", errors="surrogateescape"))


def sources_digest(files: tuple[str, ...], root: Path) -> dict:
    """Each file's token digest and one digest over the sorted (path,
    digest) pairs. A missing or unreadable file digests as 'missing'."""
    out = {}
    for rel in sorted(files):
        try:
            out[rel] = file_digest(read_source(Path(root) / rel, root))
        except SourceError:
            out[rel] = "missing"
    joined = "".join(f"{path}\0{h}\n" for path, h in sorted(out.items()))
    return {"method": METHOD, "digest": sha256_bytes(joined.encode()), "files": out}
