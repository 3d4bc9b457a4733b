"""A lesson's named constants, read from its code: what a page quotes of
the program (a size, a count, a tolerance) comes from the source, so that
the page and the program cannot disagree, and a page whose evidence is
stale still says what the program sets."""

from __future__ import annotations

import re

from ..fsutil import read_source
from . import cpplex, manifest
from .manifest import Lesson

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class NoSuchConstant(LookupError):
    pass


def source_constant(lesson: Lesson, name: str) -> str:
    """The text of `name`'s initializer in the lesson's sources or the
    shared header: `constexpr T name = VALUE;`, `const T name = VALUE;` or
    `#define name VALUE`. Comments are not read; VALUE is returned with
    its tokens joined by single spaces."""
    if not NAME_RE.match(name):
        raise NoSuchConstant(f"'{name}' is not a C++ name")
    root = manifest.ROOT
    for rel in (*lesson.sources, *manifest.header_files(root)):
        text = read_source(root / rel, root).decode("utf-8", errors="replace")
        m = re.search(rf"^[ \t]*#[ \t]*define[ \t]+{name}[ \t]+([^\n]+)$", text, re.M)
        if m:
            return " ".join(cpplex.code_tokens(m.group(1)))
        tokens = cpplex.code_tokens(text)
        for i, tok in enumerate(tokens[:-1]):
            if tok == name and tokens[i + 1] == "=" and ("constexpr" in tokens[max(0, i - 6):i]
                                                        or "const" in tokens[max(0, i - 6):i]):
                end = i + 2
                while end < len(tokens) and tokens[end] != ";":
                    end += 1
                value = " ".join(tokens[i + 2:end])
                return value.replace(" ,", ",")
    raise NoSuchConstant(f"no constant '{name}' in {lesson.target}'s sources or the shared header "
                         "(constexpr, const or #define)")
