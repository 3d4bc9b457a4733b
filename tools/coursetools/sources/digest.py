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
import re
from pathlib import Path

from . import cpplex
from ..errors import Diagnostic, SourceError
from ..fsutil import read_source

METHOD = "cpp-tokens/1"
# An include directive's header name, <...> or "...": inside it, '/*' is
# part of a path, not the start of a comment.
INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*(?:<(?P<name>[^>\n]*)>|"(?P<q>[^"\n]*)")',
                        re.M)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(data: bytes, shown: str = "<source>") -> str:
    """SHA-256 over the file's code tokens, one per line. SourceError
    where a backslash-newline would let the compiler see code this digest
    takes for a comment (cpplex.Splice): such a file has no digest."""
    text = data.decode("utf-8", errors="surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if "\r" in text:  # the compiler ends a line there; this lexer would not
        line = text.count("\n", 0, text.index("\r")) + 1
        raise SourceError(Diagnostic(shown, line, 0, "a carriage return that does not end a line (the compiler "
                                     "reads it as a line break); the sources digest refuses it"))
    for m in INCLUDE_RE.finditer(text):
        name = m.group("name") if m.group("name") is not None else m.group("q")
        if "/*" in name or "//" in name:
            line = text.count("\n", 0, m.start()) + 1
            raise SourceError(Diagnostic(shown, line, 0, "an #include's file name holds '/*' or '//', which is a "
                                         "path to the compiler but a comment to this lexer; the sources digest "
                                         "refuses it"))
    try:
        tokens = cpplex.code_tokens(text)
    except cpplex.Splice as e:
        raise SourceError(Diagnostic(shown, e.line, e.col, f"{e}; the sources digest refuses it: "
                                     "remove the backslash (or close the literal)"))
    joined = "\x1f".join(tokens)
    return sha256_bytes(joined.encode("utf-8", errors="surrogateescape"))


def sources_digest(files: tuple[str, ...], root: Path) -> dict:
    """Each file's token digest and one digest over the sorted (path,
    digest) pairs. A missing or unreadable file digests as 'missing'; a
    file the digest refuses is an error."""
    out = {}
    for rel in sorted(files):
        try:
            data = read_source(Path(root) / rel, root)
        except SourceError:
            out[rel] = "missing"
            continue
        out[rel] = file_digest(data, rel)
    joined = "".join(f"{path}\0{h}\n" for path, h in sorted(out.items()))
    return {"method": METHOD, "digest": sha256_bytes(joined.encode()), "files": out}
