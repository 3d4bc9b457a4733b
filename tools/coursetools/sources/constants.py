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
    """A source's code without its comments and its code tokens, by text:
    a page asking for many constants lexes each file once."""
    return cpplex.without_comments(text), cpplex.code_tokens(text)


def source_constant(lesson: Lesson, name: str) -> str:
    """VALUE of `constexpr T name = VALUE;`, `const T name = VALUE;` or
    `#define name VALUE` in the lesson's sources or the shared header
    (comments not read), its tokens joined by single spaces."""
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
            if tok == name and tokens[i + 1] == "=" and {"constexpr", "const"} & set(tokens[max(0, i - 6):i]):
                end = tokens.index(";", i + 2) if ";" in tokens[i + 2:] else len(tokens)
                return " ".join(tokens[i + 2:end]).replace(" ,", ",")
    raise NoSuchConstant(f"no constant '{name}' in {lesson.target}'s sources or the shared header "
                         "(constexpr, const or #define)")


def enum_values(lesson: Lesson) -> dict[str, int]:
    """Each enumerator of the lesson's sources and the shared header as
    `Enum::Name`: its value (an enum whose values are expressions is left
    out), so a lesson names a template's instance as its source spells it."""
    root = manifest.ROOT
    out: dict[str, int] = {}
    for rel in (*lesson.sources, *manifest.header_files(root)):
        code, _ = _lexed(read_source(root / rel, root).decode("utf-8", errors="replace"))
        for m in re.finditer(r"\benum\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*)\s*(?::\s*[\w:\s]+?)?\{([^{}]*)\}", code):
            values, nxt = {}, 0
            for item in (x.strip() for x in m.group(2).split(",")):
                if not item:
                    continue
                name, _, value = (part.strip() for part in item.partition("="))
                number = integer_value(value) if value else nxt
                if number is None or not NAME_RE.match(name):
                    values = None
                    break
                values[name], nxt = number, number + 1
            for name, value in (values or {}).items():
                out[f"{m.group(1)}::{name}"] = value
    return out


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift}


def integer_value(text: str) -> int | None:
    """The value of an integer constant expression as C++ writes one
    (`16777216ull - 611ull`, `1u << 16`; names are not followed), or None.
    Evaluated on its syntax tree, never executed."""
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
