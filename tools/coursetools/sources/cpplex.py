"""A small C++ lexer for the snippet extractor and the sources digest. One
regular expression, run by finditer in C, finds every token; each
alternative is linear (a comment or literal that never closes runs to the
end in one match, not retried at every position), so a 1 MB line costs
milliseconds. A run of operator characters is one token (`+-` one, `+ -`
two): for the digest that errs the safe way.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

_LEX = re.compile(
    r"""
    (?P<space>[ \t\r\f\v]+|\\\r?\n)
  | (?P<newline>\n)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*(?s:.*?)\*/|/\*(?s:.*))
  | (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?s:.*?)\)(?P=delim)"
           |(?:u8|[uUL])?R"[^()\\\s"]{0,16}\((?s:.*))
  | (?P<literal>(?:u8|[uUL])?"(?:[^"\\\n]|\\[^\n])*"?|(?:u8|[uUL])?'(?:[^'\\\n]|\\[^\n])*'?)
  | (?P<word>[A-Za-z_$][A-Za-z0-9_$]*|\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*)
  | (?P<ops>[-+*/%^&|~!=<>?:.,;\#]+|[][{}()])
  | (?P<other>.)
    """,
    re.VERBOSE,
)

# For the snippet scanner, which needs only comments, literals and which
# lines hold code: adjacent literals or block comments as one match, and
# code in long runs (up to a slash, a quote, a newline or a letter that may
# start a literal's prefix), so a line costs a few matches, not one a token.
SCAN = re.compile(
    r"""
    (?P<newline>\n)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>(?:/\*(?s:.*?)\*/)+|/\*(?s:.*))
  | (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?s:.*?)\)(?P=delim)"
           |(?:u8|[uUL])?R"[^()\\\s"]{0,16}\((?s:.*))
  | (?P<literal>(?:(?:u8|[uUL])?"(?:[^"\\\n]|\\[^\n])*"|(?:u8|[uUL])?'(?:[^'\\\n]|\\[^\n])*')+
               |(?:u8|[uUL])?["'][^\n]*)
  | (?P<space>[ \t\r\f\v]+)
  | (?P<code>[^/"'\n \t\r\f\vRuUL][^/"'\nRuUL]*|.)
    """,
    re.VERBOSE,
)


class Token(NamedTuple):
    kind: str  # space newline line_comment block_comment raw literal word ops other
    text: str
    start: int  # offset in the text
    line: int  # 1-based line of its first character
    col: int  # 1-based column of its first character


def tokens(text: str):
    line, line_start = 1, 0
    for m in _LEX.finditer(text):
        kind = m.lastgroup
        if kind == "delim":  # a raw string reports its inner group last
            kind = "raw"
        tok, start = m.group(), m.start()
        yield Token(kind, tok, start, line, start - line_start + 1)
        if kind == "newline":
            line += 1
            line_start = start + 1
        elif kind in ("block_comment", "raw", "space", "literal") and "\n" in tok:
            line += tok.count("\n")
            line_start = start + tok.rfind("\n") + 1


class Splice(ValueError):
    """A backslash-newline where this lexer and the compiler would
    disagree on what is a comment or a literal (_splice_problem says how)."""

    def __init__(self, line: int, col: int, what: str):
        super().__init__(what)
        self.line, self.col = line, col


@functools.lru_cache(maxsize=64)  # by text: a state check reads every lesson's files again
def without_comments(text: str) -> str:
    """`text` with each comment replaced by the newlines it held."""
    return "".join(t.text if t.kind not in ("line_comment", "block_comment") else "\n" * t.text.count("\n")
                   for t in tokens(text))


def _splice_problem(kind: str, tok: str) -> str | None:
    # nvcc's preprocessor (GCC's) splices a backslash followed by spaces or
    # tabs before the newline too, so trailing blanks count as nothing.
    if kind == "line_comment" and tok.rstrip(" \t\f\v\r").endswith("\\"):
        return "a // comment ends in a backslash, which joins the next line to the comment"
    if kind == "block_comment" and re.search(r"\\[ \t\f\v]*\r?\n", tok):
        return "a block comment holds a backslash at the end of a line, which can end the comment early"
    if kind == "literal" and not _closed(tok.lstrip("uUL8")):
        return "a quoted literal does not close on its line"
    return None


def _closed(lit: str) -> bool:
    """Whether a quoted literal token ends with its own, unescaped quote."""
    backslashes = len(lit[1:-1]) - len(lit[1:-1].rstrip("\\"))
    return len(lit) >= 2 and lit[-1] == lit[0] and backslashes % 2 == 0


def code_tokens(text: str) -> list[str]:
    """The tokens the sources digest covers: comments and whitespace dropped,
    a newline token ending each directive, and a #define's name joined to a
    `(` right after it (`#define F(x)` and `#define F (x)` differ)."""
    out: list[str] = []
    append = out.append
    in_directive, at_line_start, words = False, True, 0
    define_at = -1  # where a #define's macro name ends
    for m in _LEX.finditer(text):
        kind = m.lastgroup
        if kind in ("line_comment", "block_comment", "literal"):
            problem = _splice_problem(kind, m.group())
            if problem:
                line = text.count("\n", 0, m.start()) + 1
                raise Splice(line, m.start() - text.rfind("\n", 0, m.start()), problem)
        if kind in ("space", "line_comment", "block_comment"):
            continue
        if kind == "newline":
            if in_directive:
                append("\n")
                in_directive = False
            at_line_start = True
            continue
        tok = m.group()
        # A directive begins with '#' or its digraph '%:' ([lex.digraph]).
        if at_line_start and (tok.startswith("#") or tok.startswith("%:")):
            in_directive = True
            words = 0
        at_line_start = False
        if tok == "(" and m.start() == define_at:  # right after a #define's name: one token with it
            out[-1] += "("
            continue
        append(tok)
        if in_directive:
            words += 1
            if kind == "word" and words >= 2 and out[-2] in ("define", "#define", "%:define"):
                define_at = m.end()
    if in_directive:
        append("\n")
    return out
