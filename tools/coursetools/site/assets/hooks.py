"""MkDocs' hook: inline code (not code blocks) gets each token in a span that
never breaks, so a long command wraps only between its words; a paragraph
that is only a chart gets the class the CSS scrolls; a lesson's links are
rewritten for the site (coursetools/site/links.py). Under `course serve`
(which names the repository in COURSE_SERVE_ROOT) MkDocs' own watcher also
watches the course's sources, and before each rebuild the course renders
what changed (coursetools/site/serve.py, on_save)."""

import os
import re
import sys
from pathlib import Path

_ROOT = os.environ.get("COURSE_SERVE_ROOT")


def on_page_markdown(markdown, page, config, files):
    # A lesson's page (its front matter names its sources): links as the
    # site has them.
    sources = page.meta.get("course_sources")
    if isinstance(sources, list):
        tools = (config.get("extra") or {}).get("course_tools")
        if tools and tools not in sys.path:
            sys.path.insert(0, tools)  # the course's tools, as the configuration names them
        from coursetools.site import links

        return links.rewrite(markdown, [str(s) for s in sources])
    return markdown


def on_serve(server, config, builder):
    if _ROOT:
        from coursetools.site import serve

        for top in serve.WATCHED:
            server.watch(str(Path(_ROOT) / top))
    return server


def on_pre_build(config):
    if _ROOT:
        from coursetools.site import serve

        serve.on_save(Path(_ROOT), Path(os.environ[serve.OUT_ENV]))

_CODE = re.compile(r"<code>([^<]*)</code>")
_CHART = re.compile(r'<p>(<img alt="[^"]*" src="figures/[^"]+\.svg" />)</p>')


def _tokens(m):
    parts = re.split(r"(\s+)", m.group(1))
    # a token too long for a phone's line scrolls inside its code, whole
    long = any(len(p) > 32 for p in parts)
    return ('<code class="long">' if long else "<code>") + "".join(
        p if not p or p.isspace() else '<span class="tok">' + p + "</span>" for p in parts) + "</code>"


def on_page_content(html, **kwargs):
    html = _CHART.sub(lambda m: '<p class="chart">' + m.group(1) + "</p>", html)
    out, last = [], 0
    for pre in re.finditer(r"<pre.*?</pre>", html, re.S):  # code blocks keep their text as it is
        out.append(_CODE.sub(_tokens, html[last:pre.start()]))
        out.append(pre.group(0))
        last = pre.end()
    out.append(_CODE.sub(_tokens, html[last:]))
    return "".join(out)
