"""The sources digest: what ties a record to the code and the build that
produced it.

It covers everything that shapes a lesson's binary or its page:

  - the lesson's sources, the shared header and its parts, every file in
    common/ (an include folder: a common/cub/... would shadow CUB) and
    every file in the lesson's folder a compiler could include (a
    course.cuh dropped beside the .cu would shadow the shared one);
  - every file those include, followed as the compiler follows an
    #include, wherever in the repository it lies (includes.py), and every
    file of the repository the compiler itself says it opened for the
    lesson (its dependency output, where the build has one);
  - the build's definition: the lesson's CMakeLists.txt, lessons/ and the
    top CMakeLists.txt, the experiments' CMakeLists.txt (the same configure
    reads it), CMakePresets.json, cmake/CourseLesson.cmake (which defines
    how every lesson builds); and the lesson's lesson.toml, which its page
    and review read. The course's other CMake files (CourseVenv and
    CourseTools: the tools, their tests and the site; CheckArchCourse: a
    test's script) shape no lesson's binary: the recorded binary is built
    by the gpu-only preset, which reads none of them, and the course
    build's lesson targets are held to the course's own flags after every
    file has been read (the manifest is written last, and `verify` reads
    compile_commands.json). A change to the suite keeps the evidence.

Each file is read as tokens (cpplex for C++, hashlex for CMake, TOML and
JSON): comments and whitespace dropped, literals kept whole. A comment or
a formatting change keeps a record valid; any other change, down to one
character of a string, makes it stale. A file that cannot be read
unambiguously has no digest: it is an error, not a guess.
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
# part of a path, not the start of a comment.
# A directive's '#' may be spelled '%:', its digraph ([lex.digraph]).
INCLUDE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*(?:include|include_next|import)[ \t]*(?:<(?P<name>[^>\n]*)>|"(?P<q>[^"\n]*)")',
                        re.M)
# The build's own files, which every lesson's binary depends on.
# The experiments' folder is added to the same configure, so it could
# change a lesson's target as well as any other of these files.
BUILD_FILES = ("CMakeLists.txt", "CMakePresets.json", "lessons/CMakeLists.txt", "research/experiments/CMakeLists.txt",
               "cmake/CourseLesson.cmake")
# Included only where the tools are on (if(COURSE_TOOLS) in CMakeLists.txt):
# never by the gpu-only build that makes a recorded binary.
TOOLS_ONLY = ("CourseVenv", "CourseTools")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _text(data: bytes, shown: str) -> str:
    text = data.decode("utf-8", errors="surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if "\r" in text:  # the compiler ends a line there; these lexers would not
        line = text.count("\n", 0, text.index("\r")) + 1
        raise SourceError(Diagnostic(shown, line, 0, "a carriage return that does not end a line (the compiler "
                                     "reads it as a line break); the sources digest refuses it"))
    return text


def _in_comment_or_literal(text: str, offset: int) -> bool:
    for t in cpplex.tokens(text):
        if t.start <= offset < t.start + len(t.text):
            return t.kind in ("line_comment", "block_comment", "literal", "raw")
    return False


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
    # sees two: refused, as the compiler and the digest must read alike.
    for m in re.finditer(r"[^\s\\]\\\r?\n(?=\S)", text):
        if _in_comment_or_literal(text, m.start() + 1):
            continue
        line = text.count("\n", 0, m.start()) + 1
        raise SourceError(Diagnostic(shown, line, 0, "a backslash-newline joins two pieces of code into one token "
                                     "for the compiler; the sources digest refuses it: put a space before the "
                                     "backslash, or join the line"))
    return found


def tokens_of(rel: str, text: str) -> list[str]:
    """The file's tokens, by the language its name says it is in."""
    name = rel.rsplit("/", 1)[-1]
    try:
        if name == "CMakeLists.txt" or name.endswith(".cmake"):
            return hashlex.cmake_tokens(text)
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
    """SHA-256 over the file's tokens. SourceError where the file cannot
    be read as tokens unambiguously (a backslash-newline that would let
    the compiler see code this digest takes for a comment, a string that
    never closes): such a file has no digest."""
    tokens = tokens_of(shown, _text(data, shown))
    joined = "\x1f".join(tokens)
    return sha256_bytes(joined.encode("utf-8", errors="surrogateescape"))


def build_files(root: Path) -> list[str]:
    """The build definition every lesson shares, relative to `root`."""
    return [f for f in BUILD_FILES if (root / f).is_file()]


def sources_digest(files: tuple[str, ...], root: Path) -> dict:
    """Each file's token digest and one digest over the sorted (path,
    digest) pairs. A missing or unreadable file digests as 'missing'; a
    file the digest refuses is an error."""
    out = {}
    for rel in sorted(set(files)):
        try:
            data = read_source(Path(root) / rel, root)
        except SourceError:
            out[rel] = "missing"
            continue
        out[rel] = file_digest(data, rel)
    joined = "".join(f"{path}\0{h}\n" for path, h in sorted(out.items()))
    return {"method": METHOD, "digest": sha256_bytes(joined.encode()), "files": out}
