"""The snippet extractor: `// snippet: NAME` ... `// end snippet` regions.

Markers are whole-line `//` comments in code; `// end snippet` closes the
innermost region, `// end snippet: NAME` must name it. Names (NAME_RE,
MAX_NAME; a file name, NAME.md) are unique in the course, so a page's
snippet("NAME") names one place. Regions nest; marker lines appear in no
artifact. CRLF extracts like LF; a byte-order mark is allowed, a NUL not.
What looks like a marker but is not one (`//snippet:x`, `// snipet: x`, a
marker in a `/* */` comment or after code, a bad name) is an error, never
skipped; a marker-like line inside a string literal is data.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import json
import os
import re
from pathlib import Path

from . import cpplex
from ..errors import Diagnostic, SourceError
from ..fsutil import read_source

NAME_RE = r"[a-z0-9]+(?:-[a-z0-9]+)*"
MAX_NAME = 64
# Each open region copies every line it spans, so nesting multiplies the
# output: a page's snippets need two or three levels; eight bounds the
# output at eight times the source.
MAX_DEPTH = 8
OPEN_RE = re.compile(r"^(?P<indent>[ \t]*)// snippet: (?P<name>" + NAME_RE + r")[ \t]*$")
CLOSE_RE = re.compile(r"^(?P<indent>[ \t]*)// end snippet(?:: (?P<name>" + NAME_RE + r"))?[ \t]*$")
# What a comment that may have been meant as a marker starts with, after
# its opener: an optional "end", then a word close to "snippet". Anchored
# at the comment's start, so the scan is linear.
SUSPECT_RE = re.compile(r"(?P<end>end[\s_-]*)?(?P<word>[A-Za-z]{5,9})\b\s*(?P<colon>:?)", re.IGNORECASE)
IN_BLOCK = "inside a /* */ comment"
EXPECTED = ("expected a whole-line '// snippet: NAME' or '// end snippet' "
            "(NAME: lower-case letters, digits, hyphens)")


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@dataclasses.dataclass
class Snippet:
    name: str
    path: str  # as displayed and linked: relative to the repository root
    start: int  # first content line, 1-based
    end: int  # last content line, 1-based
    open_line: int
    lines: list[str]  # dedented content, no newline characters

    @property
    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


@dataclasses.dataclass
class _Open:
    name: str
    line: int
    col: int
    content: list[tuple[int, str]]


def decode(path: str, data: bytes) -> tuple[str | None, list[Diagnostic]]:
    data = data.removeprefix(b"\xef\xbb\xbf")

    def at(i: int, message: str) -> tuple[None, list[Diagnostic]]:
        line_start = data.rfind(b"\n", 0, i) + 1
        return None, [Diagnostic(path, data.count(b"\n", 0, i) + 1, i - line_start + 1, message)]
    nul = data.find(b"\x00")
    if nul >= 0:
        return at(nul, "NUL byte in the source; expected a UTF-8 text file")
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as e:
        return at(e.start, f"source is not valid UTF-8 (byte 0x{data[e.start]:02x}); expected a UTF-8 text file")


def _dedent(path: str, content: list[tuple[int, str]], diags: list[Diagnostic]) -> list[str] | None:
    # Preprocessor lines sit at column 0 whatever the code around them does
    # (clang-format puts them there): they count for no indentation and stay.
    nonblank = [(n, s) for n, s in content if s.strip() and not s.lstrip().startswith("#")]
    if not nonblank:
        return [s for _, s in content]
    indents = [re.match(r"[ \t]*", s).group(0) for _, s in nonblank]
    width = min(len(i) for i in indents)
    first = indents[0][:width]
    for (n, _), ind in zip(nonblank, indents):
        if ind[:width] != first:
            diags.append(Diagnostic(path, n, 1,
                                    "indentation mixes tabs and spaces in the part dedent would strip; "
                                    "expected the same characters on every line of the region"))
            return None
    # A code line's blanks are `width` or more; a directive's may be fewer.
    return [s[min(width, len(s) - len(s.lstrip(" \t"))):] if s.strip() else "" for _, s in content]


def _suspect(text: str, col: int, line_text: str, misplaced: str = "") -> tuple[int, str] | None:
    """A diagnostic when comment text (after its opener) names a snippet;
    `misplaced`: where a marker cannot be (a /* */ comment, after code)."""
    m = SUSPECT_RE.match(text)
    # 'snippet' in any case; a near spelling ('snipet') when a ':' follows
    # it, as it would in a marker.
    w = m and m.group("word").lower()
    if m is None or not (w == "snippet" or (m.group("colon") and _edit_distance(w, "snippet") <= 2)):
        return None
    if misplaced:
        return col, f"snippet marker {misplaced} is not a marker; {EXPECTED}"
    rest = line_text.strip()
    word = m.group("word")
    if word != "snippet":
        return col, f"'{rest}' looks like a snippet marker but '{word}' is not 'snippet'; {EXPECTED}"
    end = m.group("end")
    if end is not None and end.strip() != "end":
        return col, f"'{rest}' is not a marker; {EXPECTED}"
    if not m.group("colon") and end is None:
        return col, f"'{rest}' is missing the ':' after 'snippet'; {EXPECTED}"
    name_part = text[m.end():].strip()
    if name_part and not re.fullmatch(NAME_RE, name_part):
        shown = name_part if len(name_part) <= 80 else name_part[:77] + "..."
        return col, f"snippet name '{shown}' is not valid; {EXPECTED}"
    return col, f"'{rest}' is not a well-formed marker; {EXPECTED}"


def _classify(text: str):
    """The lines that continue a multi-line comment or literal (with its
    kind), each line's comments, and the lines that hold code."""
    inside: dict[int, str] = {}
    comments: dict[int, list[cpplex.Token]] = {}
    code_lines: set[int] = set()
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    line, line_end = 1, (starts[1] if len(starts) > 1 else len(text) + 1)
    for m in cpplex.SCAN.finditer(text):
        kind = m.lastgroup
        if kind in ("space", "newline"):
            continue
        start = m.start()
        if start >= line_end:  # a token on a later line: find which
            line = bisect.bisect_right(starts, start)
            line_end = starts[line] if line < len(starts) else len(text) + 1
        if kind in ("line_comment", "block_comment"):
            # A line holds a few comments; past 64 (a machine-made line)
            # the rest cannot be markers anyway, since a marker is alone.
            here = comments.setdefault(line, [])
            if len(here) < 64:
                here.append(cpplex.Token(kind, m.group(), start, line, start - starts[line - 1] + 1))
            multi = kind == "block_comment"
        else:
            code_lines.add(line)
            multi = kind in ("raw", "delim", "literal")
        if multi and "\n" in m.group():
            span = m.group().count("\n")
            what = "block" if kind == "block_comment" else "literal"
            for k in range(line + 1, line + span + 1):
                inside[k] = what
    return inside, comments, code_lines


def parse_source(path: str, data: bytes) -> tuple[list[Snippet], list[Diagnostic]]:
    """One source file's snippets; `path` names it in diagnostics and artifacts."""
    text, diags = decode(path, data)
    if text is None:
        return [], diags
    text = text.replace("\r\n", "\n")
    lines = [ln.removesuffix("\r") for ln in text.removesuffix("\n").split("\n")]
    inside, comments, code_lines = _classify(text)

    snippets: list[Snippet] = []
    stack: list[_Open] = []
    for n, line in enumerate(lines, 1):
        problem = None
        if n in inside:
            if inside[n] == "block":
                stripped = line.lstrip(" \t")
                body = stripped.lstrip("*").lstrip() if stripped.startswith("*") else stripped
                problem = _suspect(body, len(line) - len(stripped) + 1, line, IN_BLOCK)
        else:
            line_comments = comments.get(n, [])
            whole_line = (n not in code_lines and len(line_comments) == 1 and line_comments[0].kind == "line_comment")
            if whole_line and (m_open := OPEN_RE.match(line)):
                name = m_open.group("name")
                col = len(m_open.group("indent")) + 1
                if len(name) > MAX_NAME:
                    diags.append(Diagnostic(path, n, col, f"snippet name is {len(name)} characters "
                                            f"long; expected at most {MAX_NAME}"))
                elif len(stack) >= MAX_DEPTH:
                    diags.append(Diagnostic(path, n, col, f"snippet '{name}' would be region "
                                            f"{len(stack) + 1} open at once; expected at most "
                                            f"{MAX_DEPTH} nested regions"))
                else:
                    stack.append(_Open(name, n, col, []))
                continue
            if whole_line and (m_close := CLOSE_RE.match(line)):
                _close(path, n, m_close, stack, snippets, diags)
                continue
            for tok in line_comments:
                if tok.kind == "line_comment":
                    misplaced = "" if whole_line else "after code on the same line"
                    body = tok.text.lstrip("/").lstrip()
                else:
                    misplaced = IN_BLOCK
                    body = tok.text.split("\n", 1)[0][2:].lstrip("*").lstrip()
                problem = _suspect(body, tok.col, line, misplaced)
                if problem:
                    break
        if problem is not None:
            diags.append(Diagnostic(path, n, problem[0], problem[1]))
            continue
        for region in stack:
            region.content.append((n, line))

    for region in stack:
        diags.append(Diagnostic(path, region.line, region.col, f"snippet '{region.name}' is never "
                                "closed; expected '// end snippet' before the end of the file"))
    return snippets, diags


def _close(path, n, m_close, stack, snippets, diags) -> None:
    col = len(m_close.group("indent")) + 1
    name = m_close.group("name")
    if not stack:
        diags.append(Diagnostic(path, n, col, "'// end snippet' with no open region; expected a '// snippet: NAME' above it"))
        return
    top = stack[-1]
    if name is not None and name != top.name:
        diags.append(Diagnostic(path, n, col,
                                f"'// end snippet: {name}' does not match the innermost open region "
                                f"'{top.name}' (opened at line {top.line}); expected '// end snippet: {top.name}'"))
        return
    stack.pop()
    if not any(s.strip() for _, s in top.content):
        diags.append(Diagnostic(path, top.line, top.col, f"snippet '{top.name}' is empty; "
                                "expected at least one line of code between its markers"))
        return
    lines = _dedent(path, top.content, diags)
    if lines is None:
        return
    # Leading and trailing blank lines carry nothing into a page.
    kept = [k for k, s in enumerate(lines) if s.strip()]
    first, last = kept[0], kept[-1]
    snippets.append(Snippet(name=top.name, path=path, start=top.content[first][0], end=top.content[last][0],
                            open_line=top.line, lines=lines[first:last + 1]))


def extract(paths: list[str], root: Path) -> tuple[list[Snippet], list[Diagnostic]]:
    """One lesson's files (inside `root`, which names them) parsed, and their duplicates."""
    root = Path(root).resolve()
    found: list[Snippet] = []
    diags: list[Diagnostic] = []
    for p in paths:
        try:
            data = read_source(p, root)
        except SourceError as e:
            diags.extend(e.diagnostics)
            continue
        snips, errs = parse_source(Path(p).resolve().relative_to(root).as_posix(), data)
        diags.extend(errs)
        found.extend(snips)
    diags += duplicates(found)
    return found, diags


def duplicates(found: list[Snippet]) -> list[Diagnostic]:
    """Each name defined in a second place, named there with the first. The
    same region met twice (the header's, in every lesson's list) is one."""
    first: dict[str, Snippet] = {}
    out = []
    for s in found:
        f = first.setdefault(s.name, s)
        if (f.path, f.open_line) != (s.path, s.open_line):
            out.append(Diagnostic(s.path, s.open_line, 1, f"duplicate snippet name '{s.name}'; also defined at "
                                  f"{f.path}:{f.open_line}; snippet names are course-wide: rename one"))
    return out


def course_wide(found: list[Snippet], others: list[str], root: Path) -> list[Diagnostic]:
    """`found`'s names against the rest of the course's sources, each parsed
    only where it holds one of their markers; a clash is named at `found`'s."""
    markers = [f"// snippet: {s.name}".encode() for s in found]
    pool = []
    for p in others:
        try:
            data = read_source(p, root)
        except SourceError:
            continue  # a lesson's own extraction names it
        if any(m in data for m in markers):
            pool += parse_source(Path(p).resolve().relative_to(Path(root).resolve()).as_posix(), data)[0]
    return duplicates(pool + list(found))


# A Markdown fence line: up to 3 spaces, 3 or more backticks or tildes,
# then its info string.
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def fence_step(fence: str | None, line: str) -> tuple[str | None, bool]:
    """Reading a page a line at a time: the fence open after `line` (None
    outside a block), given the one open before it, and whether `line`
    opens or closes a block. A backtick fence's info string holds no
    backtick; a closing fence is of the opening's character, at least as
    long, with nothing after it."""
    m = FENCE_RE.match(line)
    if fence is None:
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            return m.group(1), True
        return None, False
    if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
        return None, True
    return fence, False


def fence_for(lines: list[str]) -> str:
    """A backtick fence longer than any run of backticks in the content."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def render_block(snippet: Snippet, link_target: str) -> str:
    """A snippet's source link, then its fenced cuda block."""
    fence = fence_for(snippet.lines)
    return (f"[`{snippet.path}`, lines {snippet.start}\u2013{snippet.end}]"
            f"({link_target}#L{snippet.start}-L{snippet.end})\n\n"
            f"{fence}cuda\n{snippet.text}{fence}\n")


@functools.lru_cache(maxsize=4096)
def _link(source: str, artifact_dir: str) -> str:
    return os.path.relpath(source, artifact_dir).replace(os.sep, "/")


def artifact_text(snippet: Snippet, artifact_dir: Path, root: Path) -> str:
    link = _link(os.path.abspath(root / snippet.path), os.path.abspath(artifact_dir))
    header = f"<!-- generated by tools/course snippets from {snippet.path}; do not edit -->\n"
    return header + render_block(snippet, link)


def artifact_tree(found: list[Snippet], artifact_dir: Path, root: Path) -> dict[str, str]:
    """One lesson's snippet artifacts: NAME.md a snippet, and index.json."""
    content, index = {}, []
    for s in sorted(found, key=lambda s: s.name):
        content[f"{s.name}.md"] = artifact_text(s, artifact_dir, root)
        index.append({"name": s.name, "source": s.path, "start": s.start, "end": s.end})
    content["index.json"] = json.dumps(index, indent=2) + "\n"
    return content
