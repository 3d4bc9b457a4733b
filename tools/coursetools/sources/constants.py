"""A lesson's named constants, read from its code: what a page quotes of
the program (a size, a count, a tolerance) comes from the source, so that
the page and the program cannot disagree, and a page whose evidence is
stale still says what the program sets."""

from __future__ import annotations

import ast
import functools
import operator
import re

from ..fsutil import read_source
from . import cpplex, manifest
from .manifest import Lesson

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class NoSuchConstant(LookupError):
    pass


@functools.lru_cache(maxsize=64)
def _lexed(text: str) -> tuple[str, list[str]]:
    """A source's code without its comments (a #define a comment holds is
    not the program's) and its code tokens; by text, so a page asking for
    many constants lexes each file once."""
    return cpplex.without_comments(text), cpplex.code_tokens(text)


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
        code, tokens = _lexed(text)
        m = re.search(rf"^[ \t]*#[ \t]*define[ \t]+{name}[ \t]+([^\n]+)$", code, re.M)
        if m:
            return " ".join(cpplex.code_tokens(m.group(1)))
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


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift}


def integer_value(text: str) -> int | None:
    """The value of an integer constant expression as C++ writes one
    (`16777216ull - 611ull`, `1u << 16`, `2 * kThreads` is not: names are
    not followed), or None: literals with their suffixes, + - * / % << >>,
    parentheses. Evaluated on its syntax tree, never executed."""
    if not re.fullmatch(r"[0-9a-fA-FxXuUlL+\-*/%<>() ]{1,200}", text):
        return None
    plain = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", text).replace("/", "//")
    try:
        tree = ast.parse(plain, mode="eval").body
    except SyntaxError:
        return None

    def value(node, depth=0):
        if depth > 50:
            raise ValueError("too deep")
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = value(node.operand, depth + 1)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            a, b = value(node.left, depth + 1), value(node.right, depth + 1)
            if isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= b < 128:
                raise ValueError("shift")
            return _OPS[type(node.op)](a, b)
        raise ValueError("not an integer constant expression")
    try:
        return value(tree)
    except (ValueError, ZeroDivisionError):
        return None
