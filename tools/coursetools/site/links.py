"""A lesson page's links as the site has them, rewritten as MkDocs reads
the page (assets/hooks.py), so the site's Markdown sources are the pages
as the repository has them. Standard library only: MkDocs imports it."""

from __future__ import annotations

import json
import re

# The front matter key that names a lesson page's source files, whose order
# numbers the source page's code blocks.
SOURCES_KEY = "course_sources"

LINK_RE = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def front_matter(sources: list[str]) -> str:
    """A lesson's site page's front matter (JSON, which YAML reads as is)."""
    return f"---\n{SOURCES_KEY}: {json.dumps(list(sources))}\n---\n\n"


def header_page(rel: str) -> str:
    """common/course/launch.cuh -> header/course-launch.md."""
    return "header/" + rel[len("common/"):].replace("/", "-").removesuffix(".cuh") + ".md"


def rewrite(text: str, sources: list[str]) -> str:
    """A snippet's source lines to that line of the lesson's source page or
    the header's page (pymdownx's anchors, one numbering per code block), a
    research note or another day to its page on the site."""
    def fix(m: re.Match) -> str:
        target = m.group("target")
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return m.group(0)
        path, _, anchor = target.partition("#")
        line = re.match(r"L(\d+)", anchor)
        if path in sources:  # a snippet's source link: to the source page, that line
            block = sources.index(path)
            return f"](source.md#__codelineno-{block}-{line.group(1)})" if line else "](source.md)"
        if path.startswith("../../common/"):
            page = "../" + header_page(path[len("../../"):])
            return f"]({page}#__codelineno-0-{line.group(1)})" if line else f"]({page})"
        if path.startswith("../../research/"):
            path = "../research/" + path[len("../../research/"):]
        elif re.match(r"^\.\./day\d+[^/]*/README\.md$", path):
            path = path.replace("README.md", "index.md")
        return f"]({path}{'#' + anchor if anchor else ''})"

    return LINK_RE.sub(fix, text)
