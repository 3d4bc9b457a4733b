"""The snippet extractor: `// snippet: NAME` ... `// end snippet` regions.

Rules (DESIGN.md, "Snippets"; issue 3):
  - markers are whole-line `//` comments; `// snippet: NAME` opens,
    `// end snippet` closes the innermost region, `// end snippet: NAME`
    closes it and must name it;
  - names are lower-case letters, digits and single hyphens;
  - regions nest, and marker lines never appear in any artifact;
  - names are unique within a lesson;
  - CRLF sources extract exactly like LF ones.

Everything that looks like a marker but is not one (`//snippet:x`,
`// snipet: x`, `// Snippet: x`, a marker in a `/* */` comment or after
code, a bad name) is an error, never skipped silently.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from pathlib import Path

from .diagnostics import Diagnostic, display_path

NAME_RE = r"[a-z0-9]+(?:-[a-z0-9]+)*"
OPEN_RE = re.compile(r"^(?P<indent>[ \t]*)// snippet: (?P<name>" + NAME_RE + r")[ \t]*$")
CLOSE_RE = re.compile(r"^(?P<indent>[ \t]*)// end snippet(?:: (?P<name>" + NAME_RE + r"))?[ \t]*$")

# Anything that might have been meant as a marker: a comment opener, an
# optional "end", then a word close to "snippet" (any case, any spacing).
SUSPECT_RE = re.compile(
    r"(?P<opener>//+|/\*+|^\s*\*)\s*(?P<end>end[\s_-]*)?(?P<word>[A-Za-z]{5,9})\b\s*:?",
    re.IGNORECASE,
)


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _looks_like_snippet(word: str, colon: bool) -> bool:
    """'snippet' in any case always counts; a near spelling ('snipet',
    'snippit') counts when a ':' follows it, as it would in a marker."""
    w = word.lower()
    return w == "snippet" or (colon and _edit_distance(w, "snippet") <= 2)


@dataclasses.dataclass
class Snippet:
    name: str
    path: str  # as displayed / linked: relative to the repository root
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


def _decode(path: str, data: bytes) -> tuple[str | None, list[Diagnostic]]:
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as e:
        before = data[: e.start]
        line = before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        return None, [
            Diagnostic(
                path,
                line,
                col,
                f"source is not valid UTF-8 (byte 0x{data[e.start]:02x}); expected a UTF-8 text file",
            )
        ]


def _dedent(path: str, content: list[tuple[int, str]], diags: list[Diagnostic]) -> list[str]:
    # Preprocessor lines sit at column 0 whatever the code around them
    # does (clang-format puts them there), so they do not count towards
    # the common indentation; they stay where they are.
    nonblank = [(n, s) for n, s in content if s.strip() and not s.lstrip().startswith("#")]
    if not nonblank:
        return [s for _, s in content]
    indents = [re.match(r"[ \t]*", s).group(0) for _, s in nonblank]
    width = min(len(i) for i in indents)
    stripped = {i[:width] for i in indents}
    if len(stripped) > 1:
        # The common width is shared, but its characters are not: some
        # lines indent with tabs where others use spaces.
        first = indents[0][:width]
        for (n, s), ind in zip(nonblank, indents):
            if ind[:width] != first:
                diags.append(
                    Diagnostic(
                        path,
                        n,
                        1,
                        "indentation mixes tabs and spaces in the part dedent would strip; "
                        "expected the same characters on every line of the region",
                    )
                )
                break
        return [s for _, s in content]
    return [_strip_indent(s, width) for _, s in content]


def _strip_indent(line: str, width: int) -> str:
    if not line.strip():
        return ""
    if line.lstrip().startswith("#"):
        return line[min(width, len(line) - len(line.lstrip(" \t"))):]
    return line[width:]


def parse_source(path: str, data: bytes) -> tuple[list[Snippet], list[Diagnostic]]:
    """Parses one source file. `path` is how diagnostics and artifacts name it."""
    text, diags = _decode(path, data)
    if text is None:
        return [], diags
    # CRLF and LF alike: split on either, keep no line endings.
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in raw_lines]

    snippets: list[Snippet] = []
    stack: list[_Open] = []
    in_block_comment = False

    for n, line in enumerate(lines, 1):
        was_in_block = in_block_comment
        in_block_comment = _block_comment_state(line, in_block_comment)

        marker = "// " in line or "//s" in line or "//e" in line
        m_open = OPEN_RE.match(line) if marker else None
        m_close = CLOSE_RE.match(line) if marker and not m_open else None
        if not was_in_block and m_open:
            stack.append(_Open(m_open.group("name"), n, len(m_open.group("indent")) + 1, []))
            continue
        if not was_in_block and m_close:
            col = len(m_close.group("indent")) + 1
            name = m_close.group("name")
            if not stack:
                diags.append(
                    Diagnostic(path, n, col, "'// end snippet' with no open region; expected a '// snippet: NAME' above it")
                )
                continue
            top = stack[-1]
            if name is not None and name != top.name:
                diags.append(
                    Diagnostic(
                        path,
                        n,
                        col,
                        f"'// end snippet: {name}' does not match the innermost open region "
                        f"'{top.name}' (opened at line {top.line}); expected '// end snippet: {top.name}'",
                    )
                )
                continue
            stack.pop()
            _finish(path, top, n, snippets, diags)
            continue

        problem = _near_miss(line, was_in_block)
        if problem is not None:
            col, message = problem
            diags.append(Diagnostic(path, n, col, message))
            continue

        for region in stack:
            region.content.append((n, line))

    for region in stack:
        diags.append(
            Diagnostic(
                path,
                region.line,
                region.col,
                f"snippet '{region.name}' is never closed; expected '// end snippet' before the end of the file",
            )
        )
    return snippets, diags


def _finish(path: str, region: _Open, end_line: int, out: list[Snippet], diags: list[Diagnostic]) -> None:
    if not any(s.strip() for _, s in region.content):
        diags.append(
            Diagnostic(
                path,
                region.line,
                region.col,
                f"snippet '{region.name}' is empty; expected at least one line of code between its markers",
            )
        )
        return
    before = len(diags)
    lines = _dedent(path, region.content, diags)
    if len(diags) != before:
        return
    # Leading and trailing blank lines carry nothing into a page.
    content = list(zip([n for n, _ in region.content], lines))
    while content and not content[0][1].strip():
        content.pop(0)
    while content and not content[-1][1].strip():
        content.pop()
    out.append(
        Snippet(
            name=region.name,
            path=path,
            start=content[0][0],
            end=content[-1][0],
            open_line=region.line,
            lines=[s for _, s in content],
        )
    )


def _block_comment_state(line: str, inside: bool) -> bool:
    """Whether a /* */ comment is open after this line (strings are rare
    enough in marker-bearing lines that a plain scan serves)."""
    if not inside and "/*" not in line:
        return False
    i = 0
    while i < len(line):
        if inside:
            j = line.find("*/", i)
            if j < 0:
                return True
            inside = False
            i = j + 2
        else:
            j_line = line.find("//", i)
            j_block = line.find("/*", i)
            if j_block < 0 or (0 <= j_line < j_block):
                return False
            inside = True
            i = j_block + 2
    return inside


def _near_miss(line: str, in_block: bool) -> tuple[int, str] | None:
    # A word within two edits of "snippet" keeps one of "sn", "ip", "pet"
    # intact (three pieces, two edits): lines without any cannot match.
    low = line.lower()
    if "sn" not in low and "ip" not in low and "pet" not in low:
        return None
    expected = "expected a whole-line '// snippet: NAME' or '// end snippet' (NAME: lower-case letters, digits, hyphens)"
    for m in SUSPECT_RE.finditer(line):
        if not _looks_like_snippet(m.group("word"), m.group(0).rstrip().endswith(":")):
            continue
        raw = m.group("opener")
        col = m.start("opener") + (len(raw) - len(raw.lstrip())) + 1
        opener = m.group("opener").strip()
        if in_block or opener.startswith("/*") or opener == "*":
            return col, f"snippet marker inside a /* */ comment is not a marker; {expected}"
        if line[: m.start()].strip():
            return col, f"snippet marker after code on the same line is not a marker; {expected}"
        # A whole-line // comment that names a snippet but is malformed.
        rest = line[m.start():].strip()
        if m.group("word") != "snippet":
            return col, f"'{rest}' looks like a snippet marker but '{m.group('word')}' is not 'snippet'; {expected}"
        if not m.group(0).rstrip().endswith(":") and m.group("end") is None:
            return col, f"'{rest}' is missing the ':' after 'snippet'; {expected}"
        name_part = line[m.end():].strip()
        if m.group("end") is not None and m.group("end").strip() != "end":
            return col, f"'{rest}' is not a marker; {expected}"
        if name_part and not re.fullmatch(NAME_RE, name_part):
            return col, f"snippet name '{name_part}' is not valid; {expected}"
        return col, f"'{rest}' is not a well-formed marker; {expected}"
    return None


def extract_files(paths: list[str], root: str | os.PathLike) -> tuple[dict[str, list[Snippet]], list[Diagnostic]]:
    """Parses every file; groups snippets by lesson (the file's folder) and
    reports duplicates within a lesson. Paths in diagnostics and artifacts
    are relative to `root` (the repository root)."""
    root = Path(root).resolve()
    by_lesson: dict[str, list[Snippet]] = {}
    diags: list[Diagnostic] = []
    for p in paths:
        full = Path(p).resolve()
        shown = _rel(full, root)
        try:
            data = full.read_bytes()
        except FileNotFoundError:
            diags.append(Diagnostic(display_path(p), 0, 0, "no such file; expected a lesson source file"))
            continue
        except IsADirectoryError:
            diags.append(Diagnostic(display_path(p), 0, 0, "is a folder; expected a lesson source file"))
            continue
        found, errs = parse_source(shown, data)
        diags.extend(errs)
        lesson = full.parent.name
        by_lesson.setdefault(lesson, []).extend(found)
    for lesson, snips in by_lesson.items():
        seen: dict[str, Snippet] = {}
        for s in snips:
            if s.name in seen:
                first = seen[s.name]
                diags.append(
                    Diagnostic(
                        s.path,
                        s.open_line,
                        1,
                        f"duplicate snippet name '{s.name}' in lesson {lesson}; first defined at "
                        f"{first.path}:{first.open_line}; expected names unique within a lesson",
                    )
                )
            else:
                seen[s.name] = s
    return by_lesson, diags


def _rel(full: Path, root: Path) -> str:
    try:
        return full.relative_to(root).as_posix()
    except ValueError:
        return display_path(full)


def fence_for(lines: list[str]) -> str:
    """A backtick fence longer than any run of backticks in the content."""
    longest = 0
    for line in lines:
        for run in re.findall(r"`+", line):
            longest = max(longest, len(run))
    return "`" * max(3, longest + 1)


def render_block(snippet: Snippet, link_target: str) -> str:
    """The Markdown for one snippet: a source reference a viewer follows,
    then a fenced cuda block."""
    fence = fence_for(snippet.lines)
    return (
        f"[`{snippet.path}`, lines {snippet.start}\u2013{snippet.end}]"
        f"({link_target}#L{snippet.start}-L{snippet.end})\n\n"
        f"{fence}cuda\n{snippet.text}{fence}\n"
    )


@functools.lru_cache(maxsize=4096)
def _link(source: str, artifact_dir: str) -> str:
    return os.path.relpath(source, artifact_dir).replace(os.sep, "/")


def artifact_text(snippet: Snippet, artifact_dir: Path, root: Path) -> str:
    link = _link(os.path.abspath(root / snippet.path), os.path.abspath(artifact_dir))
    header = f"<!-- generated by tools/course snippets from {snippet.path}; do not edit -->\n"
    return header + render_block(snippet, link)


def lesson_sources(root: Path) -> list[str]:
    return sorted(str(p) for p in (root / "lessons").glob("day*/*.cu"))
