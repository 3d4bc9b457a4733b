"""The course as a static site (MkDocs, Material theme): gathers the
site's sources into build/site-src and runs `mkdocs build --strict` (a
broken link or a missing file fails it); what a page's Markdown becomes is
transforms.py's. Nothing is typed twice: each day's page is its README.md,
and the index comes from the manifest and the evidence."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from ..errors import CourseError, SourceError, UsageError, display_path
from ..evidence import state as ev_state
from ..fsutil import as_bytes, ensure_owned_folder, read_source, replace_tree, write_atomic
from ..sources import manifest, standalone
from ..pages.prose import box_problems
from ..pages.rows import provenance_text
from . import explorer, transforms
from .links import front_matter, header_page


SITE_NAME = "CUDA, day by day"

# The theme's extra CSS, the script (folds, the browser test's layout
# check) and the MkDocs hook, each with its own comments.
ASSETS = Path(__file__).resolve().parent / "assets"


def asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


# The MkDocs configuration, as data: written out as JSON (which YAML reads
# as it is), so no name that goes into it (a research note's, a day's
# topic) can be read as a YAML tag, an anchor or a second key.
def mkdocs_config(site_dir: Path, nav: list, strict: bool = True) -> dict:
    return {"site_name": SITE_NAME,
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
            "nav": nav}


# A research note's file name, as it may appear on the site: letters,
# digits, dots, dashes and underscores (a name is a URL and a nav entry).
NOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.md")


def read_input(path: Path) -> str:
    """A site input's text (read_source refuses a link out, a FIFO, a device)."""
    try:
        return read_source(path, manifest.ROOT).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{display_path(path)}: error: not UTF-8 text; a site input is UTF-8 Markdown or SVG") from None


def research_notes() -> list[Path]:
    notes = sorted((manifest.ROOT / "research").glob("*.md"))
    for note in notes:
        if not NOTE_NAME.fullmatch(note.name):
            raise UsageError(f"{display_path(note)}: error: a research note's name is letters, digits, '.', "
                             "'-' and '_' ending in .md (it becomes a URL and a menu entry)")
    return notes


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
    return (f"# {SITE_NAME}\n\n"
            "Each day is one CUDA program that teaches one feature and measures it on real hardware. "
            "A page shows a program's output only after a tagged run on a real GPU has been recorded "
            "and promoted ([the review process](research/REVIEW-PROCESS.md)).\n\n"
            "| day | topic | minimum compute capability | evidence |\n| --- | --- | --- | --- |\n"
            + "\n".join(rows)
            + "\n\nGenerated from the build's manifest and `evidence/promoted.json`; never typed.\n")


def explorer_flags(lesson: manifest.Lesson, st) -> tuple[str, str]:
    """A Compiler Explorer link's flags, and why: the promoted run's
    architecture where the build holds machine code for it."""
    cc = str((((st.record or {}).get("gpu") or {}).get("compute_capability") or "")) if st.valid else ""
    arch = cc.replace(".", "")
    if arch and arch in {a.split("-")[0] for a in lesson.architectures if not a.endswith("-virtual")}:
        return (manifest.nvcc_flags(lesson.target, lesson.min_cc, [arch]),
                f": sm_{arch}, the machine code the promoted run executed")
    return lesson.nvcc_flags, ": the build's own flags" + ("" if st.valid else " (no promoted run to match)")


def collect(lessons, standalone_dir: Path, states: dict | None = None) -> dict[str, str | bytes]:
    # serve passes the states its render read, so a save reads them once
    states = states if states is not None else ev_state.load(lessons)
    files: dict[str, str | bytes] = {"docs/index.md": _index(lessons, states), "docs/course.css": asset("course.css"),
                                     "docs/course.js": asset("course.js")}
    for l in lessons:
        name = Path(l.dir).name
        page = read_input(l.path / "README.md")
        # Only the renderer's provenance line becomes the verified box: a box
        # typed into a page (one left out of this build, or edited by hand)
        # is refused as render's prose check refuses it.
        if typed := box_problems(page, display_path(l.path / "README.md")):
            raise SourceError(typed)
        st = states[l.target]
        prov = provenance_text(st.records, st.entry) if st.valid else None
        # The site's hook rewrites the links (links.py), told the snippets'
        # source files by front matter, which MkDocs takes off first.
        page = front_matter([os.path.basename(s) for s in l.sources]) + transforms.fold_sections(
            transforms.fold_long_blocks(transforms.admonitions(page, prov)))
        # a snippet's heading names its file, not the path a phone cannot fit
        page = re.sub(r"\[`lessons/[^/`]+/([^`/]+)`, lines", r"[`\1`, lines", page)
        alone = standalone_dir / f"{l.target}.cu"
        if alone.exists():
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
            files[f"docs/{name}/{l.target}.cu"] = read_input(alone)
        files[f"docs/{name}/index.md"] = page
        files[f"docs/{name}/source.md"] = "\n".join([f"# Source of day {l.day}\n"] + [
            f"`{rel}`\n\n" + transforms.fenced_code(read_input(manifest.ROOT / rel)) for rel in l.sources])
        # only the figures the page shows (render drew them from the record)
        shown = set(re.findall(r"!\[[^\]]*\]\(figures/([a-z0-9-]+\.svg)\)", page))
        for svg in sorted((l.path / "figures").glob("*.svg")):
            if svg.name in shown:
                files[f"docs/{name}/figures/{svg.name}"] = read_input(svg)
    for rel in manifest.header_files(manifest.ROOT):
        code = transforms.fenced_code(read_input(manifest.ROOT / rel))
        files[f"docs/{header_page(rel)}"] = (f"# `{rel}`\n\nPart of the shared header every day includes "
                                             f"(`course.cuh`).\n\n{code}")
    for note in research_notes():
        files[f"docs/research/{note.name}"] = read_input(note)
    return files


def prepare(out: Path, serving: bool = False, problems: list[str] | None = None, lessons=None,
            states: dict | None = None) -> Path:
    """Writes the site's sources into build/site-src, whole or (`serving`)
    only what changed, and returns the mkdocs.yml that builds them into
    `out`; `problems` (serve's) top every page."""
    lessons = lessons if lessons is not None else manifest.load()
    work = manifest.build_dir() / "site-src"
    standalone_dir = manifest.build_dir() / "standalone"
    files = collect(lessons, standalone_dir, states)
    if problems:
        box = transforms.problems_box(problems)
        for name, text in list(files.items()):
            if name.endswith(".md") and isinstance(text, str):
                # after a lesson page's front matter, which must open the file
                cut = head.end() if (head := re.match(r"---\n.*?\n---\n\n", text, re.S)) else 0
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
    if serving and work.is_dir():
        _sync(work, files)
    else:
        replace_tree(work, files, manifest.ROOT)
    return work / "mkdocs.yml"


def _sync(work: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = work / name
        data = as_bytes(content)
        if not path.is_file() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
    for path in sorted(work.rglob("*"), reverse=True):
        rel = path.relative_to(work).as_posix()
        if path.is_file() and rel not in files and not rel.startswith("."):
            path.unlink()


def hook_environment(**extra: str) -> dict:
    """MkDocs' environment: the site's hook imports the tools of this tree."""
    tools = str(Path(__file__).resolve().parents[2])
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": tools + (os.pathsep + old if old else ""), **extra}


def mkdocs_binary() -> Path:
    mkdocs = Path(sys.prefix) / "bin" / "mkdocs"
    if not mkdocs.exists():
        raise UsageError("site: mkdocs is not installed; the configure step installs it into build/venv")
    return mkdocs


def build(out: Path) -> None:
    lessons = manifest.load()
    config = prepare(out, lessons=lessons)
    ensure_owned_folder(out, manifest.ROOT)
    proc = subprocess.run([str(mkdocs_binary()), "build", "--strict", "--quiet", "-f", str(config)],
                          capture_output=True, text=True, env=hook_environment())
    if proc.returncode != 0:
        said = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
        raise CourseError([f"site: mkdocs: {line}" for line in said[-20:]]
                          + ["site: mkdocs build --strict failed (warnings are errors)"])
    print(f"site: {len(lessons)} day(s) built into {out}")
