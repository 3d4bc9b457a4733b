"""The sources digest: what ties a record to the code and the build that
produced it. It covers everything that shapes a lesson's binary or page:

  - the lesson's sources, the shared header and its parts, every file in
    common/ (an include folder: a common/cub/... would shadow CUB) and
    every file in the lesson's folder a compiler could include (a
    course.cuh beside the .cu would shadow the shared one);
  - every repository file those include (includes.py), and every one the
    compiler says it opened (its dependency output, where the build has one);
  - the build's definition (BUILD_FILES, the lesson's CMakeLists.txt) and
    its lesson.toml. The other CMake files (TOOLS_ONLY; CheckArchCourse)
    shape no recorded binary: the gpu-only preset that builds it reads none,
    and `verify` holds the course build's targets to the course's flags.

Each file is read as tokens (cpplex for C++, hashlex for CMake, TOML and
JSON): a comment or a formatting change keeps a record valid; any other
change, down to one character of a string, makes it stale. A file that
cannot be read unambiguously has no digest: it is an error, not a guess.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from ..errors import Diagnostic, SourceError
from ..fsutil import read_source
from . import cpplex, hashlex

METHOD = "course-tokens/2"
# An include directive's header name, <...> or "...": inside it, '/*' is
# part of a path, not a comment. '%:' is the digraph of '#' ([lex.digraph]).
INCLUDE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*(?:include|include_next|import)[ \t]*(?:<(?P<name>[^>\n]*)>|"(?P<q>[^"\n]*)")',
                        re.M)
# The build's own files, which every lesson's binary depends on (the
# experiments' folder is added to the same configure).
BUILD_FILES = ("CMakeLists.txt", "CMakePresets.json", "lessons/CMakeLists.txt", "research/experiments/CMakeLists.txt",
               "cmake/CourseLesson.cmake")
# Included only where the tools are on (if(COURSE_TOOLS) in CMakeLists.txt):
# never by the gpu-only build that makes a recorded binary.
TOOLS_ONLY = ("CourseVenv", "CourseTools")


def _text(data: bytes, shown: str) -> str:
    text = data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff").replace("\r\n", "\n")
    if "\r" in text:  # the compiler ends a line there; these lexers would not
        line = text.count("\n", 0, text.index("\r")) + 1
        raise SourceError(Diagnostic(shown, line, 0, "a carriage return that does not end a line (the compiler "
                                     "reads it as a line break); the sources digest refuses it"))
    return text


def _cpp_tokens(text: str, shown: str) -> list[str]:
    for m in INCLUDE_RE.finditer(text):
        name = m.group("name") if m.group("name") is not None else m.group("q")
        if "/*" in name or "//" in name:
            line = text.count("\n", 0, m.start()) + 1
            raise SourceError(Diagnostic(shown, line, 0, "an #include's file name holds '/*' or '//', which is a "
                                         "path to the compiler but a comment to this lexer; the sources digest "
                                         "refuses it"))
    try:
        found = cpplex.code_tokens(text)
    except cpplex.Splice as e:
        raise SourceError(Diagnostic(shown, e.line, e.col, f"{e}; the sources digest refuses it: "
                                     "remove the backslash (or close the literal)")) from None
    # A line continuation between two characters of code joins them into
    # one token for the compiler (`-\<newline>-` is `--`) where this lexer
    # sees two (a splice outside comments and literals is a space token to
    # it): refused, as the compiler and the digest must read alike.
    for t in cpplex.tokens(text):
        end = t.start + len(t.text)
        if t.kind == "space" and t.text[0] == "\\" and re.match(r"[^\s\\]", text[t.start - 1:t.start]) \
                and text[end:end + 1].strip():
            raise SourceError(Diagnostic(shown, t.line, 0, "a backslash-newline joins two pieces of "
                                         "code into one token for the compiler; the sources digest refuses "
                                         "it: put a space before the backslash, or join the line"))
    return found


def tokens_of(rel: str, text: str) -> list[str]:
    name = rel.rsplit("/", 1)[-1]
    try:
        if name == "CMakeLists.txt" or name.endswith(".cmake"):
            return [tok for tok, _ in hashlex.cmake_tokens_at(text)]
        if name.endswith(".toml"):
            return hashlex.toml_tokens(text)
        if name.endswith(".json"):
            return hashlex.json_tokens(text)
    except hashlex.Unreadable as e:
        raise SourceError(Diagnostic(rel, e.line, 0, f"{e}; the sources digest cannot tell its comments from the "
                                     "rest and refuses it")) from None
    return _cpp_tokens(text, rel)


@functools.lru_cache(maxsize=256)  # by content: a state check digests every lesson's files again
def file_digest(data: bytes, shown: str = "<source>") -> str:
    """SHA-256 over the file's tokens (SourceError: none can be read)."""
    joined = "\x1f".join(tokens_of(shown, _text(data, shown)))
    return hashlib.sha256(joined.encode("utf-8", errors="surrogateescape")).hexdigest()


def build_files(root: Path) -> list[str]:
    return [f for f in BUILD_FILES if (root / f).is_file()]


def sources_digest(files: tuple[str, ...], root: Path) -> dict:
    """Each file's token digest (a missing or unreadable one: 'missing')
    and one digest over the sorted (path, digest) pairs."""
    out = {}
    for rel in sorted(set(files)):
        try:
            data = read_source(Path(root) / rel, root)
        except SourceError:
            out[rel] = "missing"
            continue
        out[rel] = file_digest(data, rel)
    joined = "".join(f"{path}\0{h}\n" for path, h in sorted(out.items()))
    return {"method": METHOD, "digest": hashlib.sha256(joined.encode()).hexdigest(), "files": out}
