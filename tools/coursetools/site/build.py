"""The course as a static site (MkDocs with the Material theme).

Input: the generated lesson pages, their figures, the research notes, the
standalone files and the evidence states. Nothing is typed twice: each
day's page is its README.md with links rewritten for the site, and the
index is generated from the manifest and the evidence. `build` writes
build/site-src (docs + mkdocs.yml) and runs `mkdocs build --strict` (a
broken link or a missing file fails the build)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from ..errors import EXIT_OK, CourseError, SourceError, UsageError, display_path
from ..evidence import state as ev_state
from ..fsutil import ensure_owned_folder, read_source, replace_tree, write_atomic
from ..sources import manifest, snippets, standalone
from ..pages.prose import box_problems
from ..pages.rows import provenance_text
from . import explorer
from .links import front_matter, header_page


SITE_NAME = "CUDA, day by day"


# The site's assets are files beside this module (assets/): the theme's
# extra CSS, the script (folds, the browser test's layout check) and the
# MkDocs hook, each with its own comments.
ASSETS = Path(__file__).resolve().parent / "assets"


def asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


# The MkDocs configuration, as data: written out as JSON (which YAML reads
# as it is), so no name that goes into it (a research note's, a day's
# topic) can be read as a YAML tag, an anchor or a second key.
def mkdocs_config(site_dir: Path, nav: list, strict: bool = True) -> dict:
    return {
        "site_name": SITE_NAME,
        "docs_dir": "docs",
        "site_dir": str(site_dir),
        "use_directory_urls": True,
        "strict": strict,
        "theme": {"name": "material",
                  "features": ["navigation.sections", "search.highlight", "content.code.copy", "toc.integrate"],
                  "palette": {"primary": "green"}},
        "extra_css": ["course.css"],
        "extra_javascript": ["course.js"],
        "hooks": ["hooks.py"],
        # where the hook finds the course's tools (links.py), so that a plain
        # `mkdocs build -f build/site-src/mkdocs.yml` builds the site too
        "extra": {"course_tools": str(Path(__file__).resolve().parents[2])},
        "markdown_extensions": ["admonition", "pymdownx.details", "tables", {"toc": {"permalink": True}},
                                {"pymdownx.highlight": {"anchor_linenums": True}}, "pymdownx.superfences"],
        "validation": {"nav": {"omitted_files": "warn", "not_found": "warn"},
                       "links": {"not_found": "warn", "absolute_links": "warn", "unrecognized_links": "warn"}},
        "nav": nav,
    }


# A research note's file name, as it may appear on the site: letters,
# digits, dots, dashes and underscores (a name is a URL and a nav entry).
NOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.md")


def read_input(path: Path) -> str:
    """A site input's text, read through the one reader that refuses a link
    out of the repository, a FIFO or a device (fsutil.read_source)."""
    try:
        return read_source(path, manifest.ROOT).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{display_path(path)}: error: not UTF-8 text; a site input is UTF-8 Markdown or SVG") from None


def research_notes() -> list[Path]:
    notes = []
    for note in sorted((manifest.ROOT / "research").iterdir()):
        if note.name.endswith(".md"):
            if not NOTE_NAME.fullmatch(note.name):
                raise UsageError(f"{display_path(note)}: error: a research note's name is letters, digits, '.', "
                                 "'-' and '_' ending in .md (it becomes a URL and a menu entry)")
            notes.append(note)
    return notes


def _admonitions(text: str, provenance: str | None) -> str:
    """The page's UNVERIFIED notice and provenance line as admonitions the
    theme styles; everything else stays as written. The green "Verified"
    box comes only from `provenance`, the line the renderer writes for a
    lesson whose evidence is valid now (pages/rows.py), and only where the
    page holds exactly that line: a line typed to look like it is text."""
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
# code and text (a program's whole output) are long scrolls: each folds into a
# block (pymdownx.details, class "fold") that is open on a wide screen and
# closed on a narrow one (course.js closes them under FOLD_BELOW_PX), so a
# phone's reader gets the text and opens what they want. A table of more
# rows or columns than these, or a code or output block of more lines,
# folds (on a 390 px screen a table of five columns wraps each cell onto
# four lines or more).
FOLD_TABLE_ROWS = 6
FOLD_TABLE_COLUMNS = 4
FOLD_CODE_LINES = 12


def _fold_long_blocks(page: str) -> str:
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
        m = re.match(r"^(`{3,})(text|cuda)\b.*$", line)
        if m:
            j = i + 1
            while j < len(lines) and not (lines[j].startswith(m.group(1)) and not lines[j].strip("`")):
                j += 1
            n = j - i - 1
            if j < len(lines) and n > FOLD_CODE_LINES:
                # What the block is, never whose: a typed text block is not the program's output.
                title = f"Text, {n} lines" if m.group(2) == "text" else f"The code, {n} lines"
                out += ["", f'???+ fold "{title}"', ""] + ["    " + l if l else "" for l in lines[i:j + 1]] + [""]
                i = j + 1
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


# On a phone a section's first paragraph says what the section is about;
# the rest of it (its tables, code and the prose that reads them) folds
# into a block titled with the section's name, open on a wide screen, where
# its title is hidden and the page reads as written (course.css), and
# closed on a narrow one (course.js). A chart stays out of the fold: it is
# what a phone's reader scrolls for, and the layout check measures its
# labels as shown; so does raw HTML, which Markdown reads otherwise inside
# a fold. A test holds that a fold changes nothing a reader sees open. A
# rest shorter than this many lines, and of fewer characters than this
# (a long line wraps on a phone as many short ones do), stays as it is.
FOLD_SECTION_LINES = 6
FOLD_SECTION_CHARS = 600
_CHART_LINE = re.compile(r"^!\[[^\]]*\]\(figures/[^)]+\.svg\)\s*$")


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d{1,9}[.)])( |$)")
_HTML_OPEN = re.compile(r"^ {0,3}<([A-Za-z][A-Za-z0-9-]*)")


def _fence_end(lines: list[str], i: int) -> int:
    """The index after the fence that opens at lines[i] (its closing line
    included), or len(lines) where it never closes."""
    mark = _FENCE.match(lines[i]).group(1)
    i += 1
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m and m.group(1)[0] == mark[0] and len(m.group(1)) >= len(mark) and not lines[i].strip().strip(mark[0]):
            return i + 1
        i += 1
    return i


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Markdown blocks as (kind, lines), each with the blank lines after it:
    a fence to its close; a folded or admonition block with its indented
    lines; a list with every item, its indented continuations and the blank
    lines between items; an HTML block to its closing tag; a table; a
    paragraph to a blank line (a fence that opens in it, to its close)."""
    out: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        if _FENCE.match(line):
            kind, i = "code", _fence_end(lines, i)
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
                if _FENCE.match(lines[i]):
                    i = _fence_end(lines, i)
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
                i = _fence_end(lines, i) if _FENCE.match(lines[i]) else i + 1
        else:
            kind, i = "blank", i + 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        out.append((kind, lines[start:i]))
    return out


def _prose(kind: str, block: list[str]) -> bool:
    """A paragraph of the page's own words: not code, a fold, a list, a
    table, a chart, HTML, a heading or a snippet's source link."""
    return kind == "paragraph" and not re.match(r"^\s*(!\[|\[`)", block[0])


def _fold_sections(page: str) -> str:
    lines = page.split("\n")
    # headings are lines at the margin outside code: a fence's '## ' is code
    heading_at = []
    i = 0
    while i < len(lines):
        if _FENCE.match(lines[i]):
            i = _fence_end(lines, i)
            continue
        if re.match(r"^#{2,3} ", lines[i]):
            heading_at.append(i)
        i += 1
    if not heading_at:
        return page
    out = lines[:heading_at[0]]
    for n, h in enumerate(heading_at):
        end = heading_at[n + 1] if n + 1 < len(heading_at) else len(lines)
        out.append(lines[h])
        title = re.sub(r"[`*\\\"]", "", lines[h].lstrip("#")).strip()
        blocks = _blocks(lines[h + 1:end])
        # what stays: everything up to and with the section's first paragraph of prose
        k = next((m + 1 for m, (kind, b) in enumerate(blocks) if _prose(kind, b)), len(blocks))
        for _, b in blocks[:k]:
            out += b
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


def _fenced_code(code: str) -> str:
    """A whole file as one code block no line of it can close: the fence is
    longer than any run of backticks in the file (a comment holding a
    fence of its own stays code)."""
    code = code if code.endswith("\n") else code + "\n"
    fence = snippets.fence_for(code.split("\n"))
    return f"{fence} cuda linenums=\"1\"\n{code}{fence}\n"


def _source_page(lesson: manifest.Lesson) -> str:
    parts = [f"# Source of day {lesson.day}\n"]
    for rel in lesson.sources:
        parts.append(f"`{rel}`\n\n" + _fenced_code(read_input(manifest.ROOT / rel)))
    return "\n".join(parts)


def _header_file_page(rel: str) -> str:
    return (f"# `{rel}`\n\nPart of the shared header every day includes (`course.cuh`).\n\n"
            + _fenced_code(read_input(manifest.ROOT / rel)))


def _index(lessons, states) -> str:
    rows = []
    for l in lessons:
        st = states[l.target]
        if st.valid:
            r = st.record
            state = f"promoted: {r['gpu']['name']}, {r['recorded_at'][:10]} (tag `{r['tag']}`)"
        elif st.state == "unverified":
            state = "**unverified**: no promoted run"
        else:
            state = f"**{st.state}**: {html.escape(st.reasons[0])}"
        name = Path(l.dir).name
        rows.append(f"| {l.day} | [{l.topic}]({name}/index.md) | {l.min_cc} | {state} |")
    return (
        f"# {SITE_NAME}\n\n"
        "Each day is one CUDA program that teaches one feature and measures it on real hardware. "
        "A page shows a program's output only after a tagged run on a real GPU has been recorded "
        "and promoted ([the review process](research/REVIEW-PROCESS.md)).\n\n"
        "| day | topic | minimum compute capability | evidence |\n| --- | --- | --- | --- |\n"
        + "\n".join(rows)
        + "\n\nGenerated from the build's manifest and `evidence/promoted.json`; never typed.\n"
    )


def explorer_flags(lesson: manifest.Lesson, st) -> tuple[str, str]:
    """The flags a Compiler Explorer link compiles with, and why: the
    machine code the promoted run executed (its GPU's architecture, where
    the build holds real code for it), else the build's own flags, said."""
    flags = lesson.nvcc_flags
    cc = str((((st.record or {}).get("gpu") or {}).get("compute_capability") or "")) if st.valid else ""
    arch = cc.replace(".", "")
    real = {a.split("-")[0] for a in lesson.architectures if not a.endswith("-virtual")}
    if arch and arch in real:
        flags = manifest.nvcc_flags(lesson.target, lesson.min_cc, [arch])
        return flags, f": sm_{arch}, the machine code the promoted run executed"
    return flags, ": the build's own flags" + ("" if st.valid else " (no promoted run to match)")


def collect(lessons, standalone_dir: Path, states: dict | None = None) -> dict[str, str | bytes]:
    # each lesson's evidence, as the build verified it (serve passes the
    # states its render read, so a save reads them once)
    states = states if states is not None else ev_state.load(lessons)
    files: dict[str, str | bytes] = {"docs/index.md": _index(lessons, states), "docs/course.css": asset("course.css"),
                                     "docs/course.js": asset("course.js")}
    for l in lessons:
        name = Path(l.dir).name
        page = read_input(l.path / "README.md")
        # Only the renderer's provenance line becomes the verified box
        # (_admonitions): a box typed into a page, which a page left out of
        # this build (or edited by hand) could hold, is refused as render's
        # prose check refuses it.
        typed = box_problems(page, display_path(l.path / "README.md"))
        if typed:
            raise SourceError(typed)
        sources = [os.path.basename(s) for s in l.sources]
        st = states[l.target]
        prov = provenance_text(st.records, st.entry) if st.valid else None
        # The links are the site's hook's to rewrite, as MkDocs reads the
        # page (links.py); the page says which source files its snippets
        # name, in front matter MkDocs takes off before anything else.
        page = front_matter(sources) + _fold_sections(_fold_long_blocks(_admonitions(page, prov)))
        # a snippet's heading names its file, not the path a phone cannot fit
        page = re.sub(r"\[`lessons/[^/`]+/([^`/]+)`, lines", r"[`\1`, lines", page)
        alone = standalone_dir / f"{l.target}.cu"
        if alone.exists():
            text = read_input(alone)
            flags, why = explorer_flags(l, st)
            url = explorer.link(standalone.explorer_text(l), flags)
            page = page.replace(
                "\n## Build and run\n",
                "\n!!! note \"Compiler Explorer\"\n\n"
                f'    <a href="{html.escape(url, quote=True)}">Open this day in Compiler Explorer</a> '
                f"(the whole program in the link, compressed, the shared header's comments left out to keep it "
                f"short, with the flags `{flags}`{why}), or read the single file whole: "
                f"[{l.target}.cu]({l.target}.cu), the shared header inlined.\n\n## Build and run\n",
                1,
            )
            files[f"docs/{name}/{l.target}.cu"] = text
        files[f"docs/{name}/index.md"] = page
        files[f"docs/{name}/source.md"] = _source_page(l)
        # only the figures the page shows (render drew them from the record)
        shown = set(re.findall(r"!\[[^\]]*\]\(figures/([a-z0-9-]+\.svg)\)", page))
        for svg in sorted((l.path / "figures").glob("*.svg")):
            if svg.name in shown:
                files[f"docs/{name}/figures/{svg.name}"] = read_input(svg)
    for rel in manifest.header_files(manifest.ROOT):
        files[f"docs/{header_page(rel)}"] = _header_file_page(rel)
    for note in research_notes():
        files[f"docs/research/{note.name}"] = read_input(note)
    return files


def problems_box(problems: list[str]) -> str:
    """A red box, at the top of a served page, that holds the problems of
    the last save (serve shows them in the browser as well as the
    terminal). Each line is shown as code: escaped, never read as
    Markdown or HTML, whatever a diagnostic quotes."""
    lines = [" ".join(str(p).split())[:300] for p in problems[:20]]
    more = len(problems) - len(lines)
    body = "\n".join(f"        {line}" for line in lines + ([f"... and {more} more"] if more > 0 else []))
    return ('!!! failure "The last save did not render: these pages are the last good ones"\n\n'
            "    Fix the problem and save again; the terminal that runs `tools/course serve` says the same.\n\n"
            f"{body}\n\n")


def prepare(out: Path, work: Path | None = None, in_place: bool = False, serving: bool = False,
            problems: list[str] | None = None, lessons=None, states: dict | None = None) -> Path:
    """Writes the site's sources (docs/, mkdocs.yml, hooks.py) into `work`
    (build/site-src) and returns the mkdocs.yml that builds them into
    `out`. The folder is replaced whole, or (`in_place`, for a server that
    watches it) only its changed files are written and its gone ones
    removed. `problems` (serve's, after a save that does not render):
    shown in a box at the top of every page."""
    lessons = lessons if lessons is not None else manifest.load()
    work = work or manifest.build_dir() / "site-src"
    standalone_dir = manifest.build_dir() / "standalone"
    files = collect(lessons, standalone_dir, states)
    if problems:
        box = problems_box(problems)
        for name, text in list(files.items()):
            if name.endswith(".md") and isinstance(text, str):
                # after a lesson page's front matter, which must open the file
                head = re.match(r"---\n.*?\n---\n\n", text, re.S) if text.startswith("---\n") else None
                cut = head.end() if head else 0
                files[name] = text[:cut] + box + text[cut:]
    files["hooks.py"] = asset("hooks.py")
    nav: list = [{"Course": "index.md"}]
    for l in lessons:
        name = Path(l.dir).name
        nav.append({f"Day {l.day}: {l.topic}": [{"Lesson": f"{name}/index.md"}, {"Source": f"{name}/source.md"}]})
    nav.append({"Shared header": [{rel[len("common/"):]: header_page(rel)} for rel in manifest.header_files(manifest.ROOT)]})
    nav.append({"Research": [f"research/{note.name}" for note in research_notes()]})
    # a preview rebuilds only what changed, which MkDocs warns of; strict is for the real build
    config = mkdocs_config(out.resolve(), nav, strict=not serving)
    files["mkdocs.yml"] = ("# Generated by tools/course site build (tools/coursetools/site/build.py): "
                           "the configuration as JSON, which YAML reads as it is.\n"
                           + json.dumps(config, indent=1, ensure_ascii=True) + "\n")
    ensure_owned_folder(work, manifest.ROOT)
    if in_place and work.is_dir():
        _sync(work, files)
    else:
        replace_tree(work, {k: v for k, v in files.items()}, manifest.ROOT)
    return work / "mkdocs.yml"


def _sync(work: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = work / name
        data = content.encode("utf-8") if isinstance(content, str) else content
        if not path.is_file() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, content)
    for path in sorted(work.rglob("*"), reverse=True):
        rel = path.relative_to(work).as_posix()
        if path.is_file() and rel not in files and not rel.startswith("."):
            path.unlink()


def hook_environment(**extra: str) -> dict:
    """MkDocs' environment: the site's hook imports the course's tools
    (links.py), from this very tree."""
    tools = str(Path(__file__).resolve().parents[2])
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": tools + (os.pathsep + old if old else ""), **extra}


def mkdocs_binary() -> Path:
    mkdocs = Path(sys.prefix) / "bin" / "mkdocs"
    if not mkdocs.exists():
        raise UsageError("site: mkdocs is not installed; the configure step installs it into build/venv")
    return mkdocs


def build(out: Path) -> int:
    config = prepare(out)
    lessons = manifest.load()
    ensure_owned_folder(out, manifest.ROOT)
    proc = subprocess.run([str(mkdocs_binary()), "build", "--strict", "--quiet", "-f", str(config)],
                          capture_output=True, text=True, env=hook_environment())
    if proc.returncode != 0:
        said = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
        raise CourseError([f"site: mkdocs: {line}" for line in said[-20:]]
                          + ["site: mkdocs build --strict failed (warnings are errors)"])
    print(f"site: {len(lessons)} day(s) built into {out}")
    return EXIT_OK
