"""Every number and comparative word a page helper writes is marked while
rendering, so that the prose check can tell it from numbers typed into
the text; the marks are removed from the page."""

from __future__ import annotations

import re
import secrets


MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"
# First inside a mark: what a helper shows as it is (a snippet, a listing,
# the helper's own sentences): its numbers are the helper's, but it is no
# measurement and vouches for no claim typed beside it (prose.py).
SHOWN = "\ue002"

# A helper's output is handed to the template as a token, MARK_OPEN + an
# unguessable id + MARK_CLOSE, resolved after rendering: a template that types
# the marks or edits a helper's output (a filter, a slice) gets no number past
# the prose check, as an id no helper issued is an error, never a value.
_issued: dict[str, str] = {}

TOKEN_RE = re.compile(re.escape(MARK_OPEN) + r"([0-9a-f]{20})" + re.escape(MARK_CLOSE))


def forget_marks() -> None:
    """Forgets every helper output marked so far: a page's render starts
    with none of another page's."""
    _issued.clear()


class Marked(str):
    """A helper's value as the template holds it: one token, placed whole.
    A loop over it, an index or a slice would cut its mark (the page would
    then hold a broken one, found only after rendering, with no line), so
    each is a TemplateProblem raised where the template does it."""

    def __iter__(self):
        raise TemplateProblem("a page helper's value is text to place whole ({{ ... }}), not a list to loop over "
                              "or index; a helper that gives a list says so (tools/course page-api)")

    def __getitem__(self, _):
        self.__iter__()


class Lines(list):
    """A helper's list of marked Markdown lines: a template loops over it,
    or places it whole as the lines themselves ('none' where it is empty)."""

    def __str__(self):
        return "".join(f"{line}\n" for line in self) if self else mark("none")


def mark(text) -> str:
    token = secrets.token_hex(10)
    _issued[token] = str(text)
    return Marked(f"{MARK_OPEN}{token}{MARK_CLOSE}")


def _output(tid: str, strict: bool = True, depth: int = 0) -> str:
    """The output of the helper call `tid`, a token inside it (one helper
    quoting another) resolved in turn. A token no helper issued, or nested
    past 8 deep, is a TemplateProblem, or nothing where not `strict`."""
    if tid not in _issued or depth > 8:
        if strict:
            raise TemplateProblem("the page holds a marked value no page helper produced "
                                  "(a helper's output edited or typed by hand)")
        return ""
    return TOKEN_RE.sub(lambda inner: _output(inner.group(1), strict, depth + 1), _issued[tid])


def resolve_marks(text: str) -> str:
    """The page with every token replaced by its helper's output, between
    the marks (for the prose check); a token inside a helper's output (one
    helper quoting another) is resolved without marks of its own.
    TemplateProblem on a token no helper issued, or on a mark character
    outside a token."""
    text = str(text)  # a helper's value itself, as tests pass one, is sliced here
    def resolved(m) -> str:
        inner = _output(m.group(1)).replace(MARK_OPEN, "").replace(MARK_CLOSE, "")
        return MARK_OPEN + inner + MARK_CLOSE
    out = TOKEN_RE.sub(resolved, text)
    if any(c in TOKEN_RE.sub("", text) for c in MARK_OPEN + MARK_CLOSE + SHOWN):
        raise TemplateProblem("the page holds the reserved characters U+E000 to U+E002 outside the page "
                              "helpers' output; remove them from the template")
    return out


def placed(text: str, token: str) -> tuple[str, list[int]]:
    """The page as it will show (every helper's output in its place, no
    marks) and the offsets in it where the output `token` was placed; a
    token no helper issued shows as nothing here (resolve_marks names it)."""
    pieces = TOKEN_RE.split(text)  # the text between tokens, and each token's id
    parts, at, size = [pieces[0]], [], len(pieces[0])
    for tid, after in zip(pieces[1::2], pieces[2::2]):
        if tid == token:
            at.append(size)
        parts += [unmark(_output(tid, strict=False)), after]
        size += len(parts[-2]) + len(after)
    return "".join(parts), at


def unmark(text: str) -> str:
    return text.replace(MARK_OPEN, "").replace(MARK_CLOSE, "").replace(SHOWN, "")


def shown(text) -> str:
    return mark(SHOWN + str(text))


def mark_block(text: str) -> str:
    """Shows every line of a block (so Markdown structure survives)."""
    return "\n".join(shown(line) if line else line for line in text.split("\n"))


class TemplateProblem(Exception):
    """A mistake in a template's use of the page API."""


class UnknownSnippet(Exception):
    def __init__(self, name, known):
        self.name = name
        self.known = known
