"""What a rendered page's Markdown becomes on the site (build.py applies
these): notices as admonitions, long blocks and sections folded for a
phone, a source file as one code block, serve's box of problems."""

from __future__ import annotations

import re

from ..sources import snippets


def admonitions(text: str, provenance: str | None) -> str:
    """The page's UNVERIFIED notice and provenance line as admonitions. The
    green "Verified" box comes only from `provenance`, the line the renderer
    writes for valid evidence (pages/rows.py), once, where the page holds
    exactly that line: a line typed to look like it stays text."""
    out = []
    for line in text.split("\n"):
        if line.startswith("> **UNVERIFIED.**"):
            body = line[len("> **UNVERIFIED.**"):].strip()
            out += ['!!! unverified "UNVERIFIED: no verified output"', "", f"    {body}", ""]
        elif provenance is not None and line == f"**{provenance}**":
            out += ['!!! verified "Verified on real hardware"', "", f"    {provenance}", ""]
            provenance = None  # once
        else:
            out.append(line)
    return "\n".join(out)


# On a phone a long table wraps every cell onto lines of its own, and long
# code and output are long scrolls: each folds into a block (pymdownx.details,
# class "fold") open on a wide screen, closed on a narrow one (course.js,
# FOLD_BELOW_PX). A table of more rows or columns than these (at 390 px five
# columns wrap each cell onto four lines or more), or a block of more lines.
FOLD_TABLE_ROWS = 6
FOLD_TABLE_COLUMNS = 4
FOLD_CODE_LINES = 12


def fold_long_blocks(page: str) -> str:
    lines = page.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            rows = j - i - 2  # the header and its rule
            columns = line.strip().strip("|").count("|") + 1
            if rows > FOLD_TABLE_ROWS or columns > FOLD_TABLE_COLUMNS:
                out += ["", f'???+ fold "A table of {rows} rows"', ""] + ["    " + l for l in lines[i:j]] + [""]
                i = j
                continue
        if _opens(line):  # a block read as fold_sections reads it: a table inside is code
            j = _fence_close(lines, i)
            n, kind = j - i - 1, re.match(r"(text|cuda)\b", snippets.FENCE_RE.match(line).group(2))
            if j < len(lines) and n > FOLD_CODE_LINES and kind:
                # What the block is, never whose: a typed text block is not the program's output.
                title = f"Text, {n} lines" if kind.group(1) == "text" else f"The code, {n} lines"
                out += ["", f'???+ fold "{title}"', ""] + ["    " + l if l else "" for l in lines[i:j + 1]] + [""]
            else:
                out += lines[i:j + 1]
            i = j + 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


# On a phone a section's first paragraph says what it is about; the rest
# folds into a block titled with the section's name, open on a wide screen
# with its title hidden (course.css), closed on a narrow one (course.js). A
# chart stays out (a phone's reader scrolls for it, and the layout check
# measures its labels as shown), and so does raw HTML, which Markdown reads
# otherwise inside a fold. A rest of fewer lines and characters than these
# (a long line wraps as many short ones do) stays as it is.
FOLD_SECTION_LINES = 6
FOLD_SECTION_CHARS = 600
_CHART_LINE = re.compile(r"^!\[[^\]]*\]\(figures/[^)]+\.svg\)\s*$")

_LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d{1,9}[.)])( |$)")
_HTML_OPEN = re.compile(r"^ {0,3}<([A-Za-z][A-Za-z0-9-]*)")


def _opens(line: str) -> bool:
    return snippets.fence_step(None, line)[1]


def _fence_close(lines: list[str], i: int) -> int:
    """The index of the line that closes the fence opening at lines[i] (or len(lines))."""
    fence = snippets.fence_step(None, lines[i])[0]
    return next((j for j in range(i + 1, len(lines)) if snippets.fence_step(fence, lines[j])[1]), len(lines))


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Markdown blocks as (kind, lines), each with the blank lines after it
    (a list with its items' continuations and the blanks between them; a
    paragraph to a blank line, a fence that opens in it to its close)."""
    out: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        if _opens(line):
            kind, i = "code", _fence_close(lines, i) + 1
        elif re.match(r"^(\?\?\?\+?|!!!) ", line):
            kind, i = "fold", i + 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                i += 1
        elif _LIST_ITEM.match(line):
            kind, i = "list", i + 1
            while i < len(lines):
                if lines[i].strip() and not (lines[i][0] in " \t" or _LIST_ITEM.match(lines[i])):
                    if not lines[i - 1].strip():
                        break  # a line at the margin after a blank one: the list has ended
                if _opens(lines[i]):
                    i = _fence_close(lines, i) + 1
                    continue
                i += 1
        elif _HTML_OPEN.match(line):
            tag = _HTML_OPEN.match(line).group(1).lower()
            kind, i = "html", i + 1
            depth = line.lower().count(f"<{tag}") - line.lower().count(f"</{tag}>")
            while i < len(lines) and depth > 0:
                depth += lines[i].lower().count(f"<{tag}") - lines[i].lower().count(f"</{tag}>")
                i += 1
            while i < len(lines) and lines[i].strip():
                i += 1
        elif line.lstrip().startswith("|"):
            kind = "table"
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                i += 1
        elif line.strip():
            kind = "heading" if re.match(r"^#{1,6} ", line) else "paragraph"
            i += 1
            while kind == "paragraph" and i < len(lines) and lines[i].strip():
                i = _fence_close(lines, i) + 1 if _opens(lines[i]) else i + 1
        else:
            kind, i = "blank", i + 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        out.append((kind, lines[start:i]))
    return out


def _prose(kind: str, block: list[str]) -> bool:
    """A paragraph of the page's own words, not a chart or a snippet's link."""
    return kind == "paragraph" and not re.match(r"^\s*(!\[|\[`)", block[0])


def fold_sections(page: str) -> str:
    lines = page.split("\n")
    # headings are lines at the margin outside code: a fence's '## ' is code
    heading_at, fence = [], None
    for i, line in enumerate(lines):
        fence, fence_line = snippets.fence_step(fence, line)
        if fence is None and not fence_line and re.match(r"^#{2,3} ", line):
            heading_at.append(i)
    if not heading_at:
        return page
    out = lines[:heading_at[0]]
    for h, end in zip(heading_at, heading_at[1:] + [len(lines)]):
        out.append(lines[h])
        title = re.sub(r"[`*\\\"]", "", lines[h].lstrip("#")).strip()
        blocks = _blocks(lines[h + 1:end])
        # what stays: everything up to and with the section's first paragraph of prose
        k = next((m + 1 for m, (kind, b) in enumerate(blocks) if _prose(kind, b)), len(blocks))
        out += [l for _, b in blocks[:k] for l in b]
        run: list[str] = []

        def flush():
            if sum(1 for l in run if l.strip()) >= FOLD_SECTION_LINES or sum(map(len, run)) >= FOLD_SECTION_CHARS:
                out.extend(["", f'???+ more "More of {title}"', ""] + ["    " + l if l.strip() else "" for l in run] + [""])
            else:
                out.extend(run)
            run.clear()

        for kind, b in blocks[k:]:
            # a chart, and raw HTML (which Markdown reads otherwise inside a fold), stay out
            if kind == "html" or (kind == "paragraph" and any(_CHART_LINE.match(l) for l in b)):
                flush()
                out.extend(b)
            else:
                run.extend(b)
        flush()
    return "\n".join(out)


def fenced_code(code: str) -> str:
    """A whole file as one code block."""
    code = code if code.endswith("\n") else code + "\n"
    fence = snippets.fence_for(code.split("\n"))
    return f"{fence} cuda linenums=\"1\"\n{code}{fence}\n"


def problems_box(problems: list[str]) -> str:
    """A red box atop a served page with the last save's problems, as code."""
    lines = [" ".join(str(p).split())[:300] for p in problems[:20]]
    more = len(problems) - len(lines)
    body = "\n".join(f"        {line}" for line in lines + ([f"... and {more} more"] if more > 0 else []))
    return ('!!! failure "The last save did not render: these pages are the last good ones"\n\n'
            "    Fix the problem and save again; the terminal that runs `tools/course serve` says the same.\n\n"
            f"{body}\n\n")
