"""The browser test: serve the built site on loopback, open each day in
headless Chromium, check what a student must see, and screenshot the
pages that ask for it."""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from ..errors import CourseError, UsageError, display_path
from ..evidence import state as ev_state
from ..fsutil import ensure_owned_folder
from ..sources import manifest, standalone
from . import explorer


def find_chromium() -> str | None:
    names = ("chromium", "chromium-browser", "google-chrome", "chrome")
    return next(filter(None, map(shutil.which, names)), None)


def ensure_chromium() -> str | None:
    """Chromium, else Debian's package installed as the README says, else None."""
    found = find_chromium()
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print("site test: installing Debian's chromium (apt-get)", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, check=False, capture_output=True)
    return find_chromium()


# How long one Chromium call may take (a page takes a few seconds; this is
# for a busy machine): longer is a problem the test names.
CHROMIUM_SECONDS = 600


def _chromium(binary: str, *args: str, timeout: int = CHROMIUM_SECONDS,
              budget_ms: int = 3000) -> subprocess.CompletedProcess:
    # Every host but the test server's is unknown: the test never waits on
    # the network (offline, a web font took a second to fail, every page),
    # and reads the pages as an offline reader does.
    base = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--hide-scrollbars", f"--virtual-time-budget={budget_ms}",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
    try:
        return subprocess.run(base + list(args), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(base + list(args), -1, "", f"Chromium did not finish in {timeout} s")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if not self.path.startswith(("/__frame?", "/__pages?")):
            return super().do_GET()
        q = parse_qs(urlsplit(self.path).query)
        frame = FRAME if self.path.startswith("/__frame?") else PAGES
        body = frame.format(u=html.escape(q["u"][0], quote=True), w=int(q["w"][0]), h=int(q["h"][0]),
                            urls=json.dumps(q["u"]).replace("</", "<\\/")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def page_problems(dom: str, lesson: manifest.Lesson, state_valid: bool) -> list[str]:
    problems = []
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
    title = re.sub(r"<[^>]+>", "", h1.group(1)).strip() if h1 else ""
    if f"Day {lesson.day}" not in title:
        problems.append(f"title: expected 'Day {lesson.day}' in the page's h1, found {title!r}")
    block = r'class="language-cuda highlight"|class="highlight"[^>]*>\s*<pre'
    if not re.search(block, dom) or not re.search(r'<span class="(k|kt|nf|n)">', dom):
        problems.append("no highlighted CUDA code block")
    unverified = 'class="admonition unverified"' in dom
    verified = 'class="admonition verified"' in dom and "Numbers and charts from run" in dom
    plot = re.search(r'<img[^>]+src="figures/[^"]+\.svg"', dom)
    if state_valid:
        if not verified:
            problems.append("the evidence is promoted, but the page shows no provenance")
        if not plot:
            problems.append("the evidence is promoted, but the page shows no plot")
    elif not unverified:
        problems.append("no promoted evidence, but the page does not show the UNVERIFIED notice")
    return problems


HREF_RE = re.compile(r'(?:href|src)="([^"]+)"')
ID_RE = re.compile(r'\bid="([^"]+)"')


def broken_links(site: Path) -> list[str]:
    """Every link and image inside the built site that lands nowhere: a
    missing file or a missing #anchor. External links are not followed."""
    @functools.lru_cache(maxsize=None)
    def anchors(page: Path) -> set[str]:
        text = page.read_text(encoding="utf-8", errors="replace") if page.suffix == ".html" else ""
        return set(ID_RE.findall(text))

    problems = []
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        for raw in sorted(set(HREF_RE.findall(text))):
            target = html.unescape(raw)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                continue  # another site: not ours to check
            path, _, anchor = target.partition("#")
            path = path.split("?")[0]
            dest = page if not path else (site / path.lstrip("/") if path.startswith("/") else page.parent / path)
            dest = dest.resolve()
            if dest.is_dir():
                dest = dest / "index.html"
            where = page.relative_to(site).as_posix()
            if not dest.exists():
                problems.append(f"{where}: broken link {target} (no such file)")
            elif anchor and dest.suffix == ".html" and anchor not in anchors(dest):
                problems.append(f"{where}: broken link {target} (no #{anchor} there)")
    return problems


def chart_problems(check: dict, page: Path, width: int) -> list[str]:
    """Each chart's smallest label at this window width: at least 11 px."""
    problems = []
    for chart in check.get("charts", []):
        svg = (page.parent / chart["src"]).resolve()
        if not svg.exists():
            continue  # broken_links names it
        text = svg.read_text(encoding="utf-8")
        box = re.search(r'viewBox="0 0 ([\d.]+) ', text)
        sizes = [float(v) for v in re.findall(r'font-size="([\d.]+)"', text)]
        if not box or not sizes or not chart["shown"]:
            continue
        smallest = min(sizes) * chart["shown"] / float(box.group(1))
        if smallest < 11:
            problems.append(f"at {width} px the chart {chart['src']} shows labels of {smallest:.1f} px (under 11)")
    return problems


def link_problems(dom: str, url: str, lesson: manifest.Lesson) -> list[str]:
    """Snippet links to source lines (each lands on its line: broken_links
    checks every anchor of the site); the Compiler Explorer links hold."""
    problems = []
    if not re.search(r'href="source/#__codelineno-0-\d+"', dom):
        problems.append("no snippet links to its source lines")
    if f'href="{lesson.target}.cu"' not in dom:
        problems.append("no link to the Compiler Explorer file")
    else:
        alone = urllib.request.urlopen(url + f"{lesson.target}.cu", timeout=30).read().decode()
        if '#include "course' in alone:
            problems.append("the Compiler Explorer file still includes course.cuh")
        m = re.search(r'href="(https://godbolt\.org/#[^"]+)"', dom)
        if not m:
            problems.append("no Open in Compiler Explorer link")
        else:
            link = html.unescape(m.group(1))
            if explorer.decode(link)[0] != standalone.explorer_text(lesson):
                problems.append("the Compiler Explorer link does not carry the single-file program (the site was "
                                "built from older sources; run: cmake --build --preset course)")
            if len(link) > explorer.MAX_LINK:
                problems.append(f"the Compiler Explorer link is {len(link):,} characters (at most {explorer.MAX_LINK:,})")
    return problems


# A phone (390 px, an iPhone 12 to 15's CSS width) and a laptop.
WIDTHS = (390, 1280)
# Chromium's windows are at least 500 px wide: a narrower width is the page
# in a frame that wide inside a 500 px window (the test server's /__frame).
MIN_WINDOW = 500
MAX_SHOT_PX = 16000
# A page a reader on a phone can get through, its long blocks and each
# section after its first paragraph folded (site/transforms.py): day 24
# measured 13,316 px, day 77 7,624 px and day 58 7,303 px at 390 px
# (2026-12-02; 22,891, 17,592 and 12,325 px without the section folds).
MAX_PHONE_PAGE_PX = 15000
# The page up to its evidence appendix (the first "Evidence..." section) is
# shorter still: a lesson, not an audit (day 24's was 13,316 px before).
MAX_PHONE_TEACHING_PX = 7000


def teaching_height(check: dict) -> int:
    """Where the evidence appendix begins (else the page's height)."""
    tops = [float(s.get("top", 0)) for s in check.get("sections") or []
            if isinstance(s, dict) and str(s.get("title", "")).startswith("Evidence")]
    return int(min(tops)) if tops else int(check.get("height", 0))


def tallest_sections(check: dict) -> list[tuple[str, int]]:
    """The page's sections (h2 and h3) by height, tallest first."""
    secs = [(str(s.get("title", "")), float(s.get("top", 0))) for s in check.get("sections") or []
            if isinstance(s, dict)]
    ends = [top for _, top in secs[1:]] + [float(check.get("height", 0))]
    return sorted(((t, int(end - top)) for (t, top), end in zip(secs, ends)), key=lambda x: -x[1])


# Every day's page in turn in one frame of the width asked for: the page's
# layout check (course.js, #course-check) posts what it measured, kept with
# the frame's DOM as the page's scripts left it; at the end all go into
# #course-pages. One Chromium run a width, however many days there are.
PAGES = """<!doctype html><html><body style="margin:0">
<iframe id="f" width="{w}" height="{h}" style="border:0;display:block"></iframe>
<script>var urls = {urls}, out = [], f = document.getElementById("f");
function next() {{
  if (out.length < urls.length) {{ f.src = urls[out.length] + "#course-check"; return; }}
  var p = document.createElement("pre"); p.id = "course-pages"; p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
}}
window.addEventListener("message", function (e) {{
  out.push({{check: JSON.parse(e.data), dom: f.contentDocument.documentElement.outerHTML}});
  next();
}});
next();</script></body></html>"""


# One page in a frame of the width asked for, to screenshot it.
FRAME = """<!doctype html><html><body style="margin:0">
<iframe src="{u}" width="{w}" height="{h}" style="border:0;display:block"></iframe></body></html>"""


def pages_checked(chromium: str, base: str, urls: list[str], width: int) -> dict[str, dict]:
    """{url: {"check": the layout check, "dom": the DOM}} of every page at
    `width` (PAGES); a page missing here did not finish its check."""
    address = f"{base}/__pages?" + urlencode({"w": width, "h": 1000}) + "&" + urlencode([("u", u) for u in urls])
    # Virtual time runs while no page loads: a budget a page (each takes tens
    # of virtual ms; this is for a slow machine).
    done = _chromium(chromium, f"--window-size={max(width, MIN_WINDOW)},1000", "--dump-dom", address,
                     budget_ms=3000 * len(urls))
    m = re.search(r'<pre id="course-pages">(.*?)</pre>', done.stdout, re.S)
    return dict(zip(urls, json.loads(html.unescape(m.group(1))))) if m else {}


def layout_problems(check: dict, page: Path, width: int) -> list[str]:
    """At one width: nothing cut off (a box that scrolls is not), the page
    no wider than the window nor taller than a phone's reader gets through."""
    problems = [f"cut off at {width} px: {c}" for c in check["cut"]]
    if check["width"] > width:
        problems.append(f"the page is {check['width']} px wide at a {width} px window")
    if width < 500 and int(check["height"]) > MAX_PHONE_PAGE_PX:
        tallest = ", ".join(f"{t} ({h:,} px)" for t, h in tallest_sections(check)[:3])
        problems.append(f"the page is {int(check['height']):,} px tall at {width} px (at most "
                        f"{MAX_PHONE_PAGE_PX:,}: fold its long tables and outputs; tallest: {tallest})")
    if width < 500 and teaching_height(check) > MAX_PHONE_TEACHING_PX:
        problems.append(f"the teaching part (before the evidence appendix) is {teaching_height(check):,} px tall "
                        f"at {width} px (at most {MAX_PHONE_TEACHING_PX:,}: move proof into the appendix, shorten "
                        "the steps)")
    return problems + chart_problems(check, page, width)


def _screenshots(chromium: str, base: str, lesson, shots: Path, heights: dict[int, int]) -> list[str]:
    """At each width, a screenshot of the top of the page and one of all of it."""
    name = Path(lesson.dir).name
    url = f"{base}/{name}/"
    problems = []
    ensure_owned_folder(shots, manifest.ROOT)
    for width, page_height in heights.items():
        # Chromium fails on very tall captures (seen at 35,258 px), and a page
        # that tall has a problem the layout check names.
        suffix = "" if width == 1280 else f"-{width}"
        for shot, tall in ((shots / f"{name}{suffix}.png", 2400 if width > 400 else 1800),
                           (shots / f"{name}{suffix}-full.png", min(page_height + 40, MAX_SHOT_PX))):
            # narrower than Chromium's windows: the page in a frame that wide (the test server's /__frame)
            window = f"--window-size={max(width, MIN_WINDOW)},{tall}"
            framed = f"{base}/__frame?w={width}&h={tall}&u={quote(url, safe='')}"
            done = _chromium(chromium, f"--screenshot={shot}", window, url if width >= MIN_WINDOW else framed)
            if shot.exists() and shot.stat().st_size > 10_000:
                print(f"site test: day {lesson.day}: screenshot {display_path(shot)} ({width} x {tall} CSS px)")
            else:
                why = (done.stderr or "").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
                problems.append(f"no screenshot at {display_path(shot)} ({why[0][:200]})")
    return problems


def browser_test(site: Path, shots: Path) -> None:
    lessons = manifest.load()
    if not (site / "index.html").exists():
        raise UsageError(f"site test: {site}/index.html missing; build first (cmake --build build)")
    chromium = ensure_chromium()
    if chromium is None:
        raise UsageError("site test: no Chromium found and it could not be installed (apt-get install chromium, "
                         "as root)")
    problems = [f"site test: {p}" for p in broken_links(site)]
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        index = _chromium(chromium, "--dump-dom", f"{base}/").stdout
        for l in lessons:
            if f"Day {l.day}" not in index and l.topic not in html.unescape(index):
                problems.append(f"site test: index page does not list day {l.day}")
        states = ev_state.load(lessons)
        urls = [f"/{Path(l.dir).name}/" for l in lessons]
        checked = {w: pages_checked(chromium, base, urls, w) for w in WIDTHS}
        for l, url in zip(lessons, urls):
            found, heights = [], {}
            for width in WIDTHS:
                if url not in checked[width]:
                    found.append(f"at {width} px the layout check did not run (no #course-check result)")
                    continue
                check = checked[width][url]["check"]
                heights[width] = int(check["height"])
                found += layout_problems(check, site / url.strip("/") / "index.html", width)
            if url in checked[WIDTHS[-1]]:  # what a student's laptop shows, after the page's scripts
                dom = checked[WIDTHS[-1]][url]["dom"]
                found += page_problems(dom, l, states[l.target].valid) + link_problems(dom, base + url, l)
            if l.info.screenshot and len(heights) == len(WIDTHS):
                found += _screenshots(chromium, base, l, shots, heights)
            problems += [f"site test: day {l.day} ({base + url}): {p}" for p in found]
            if not found:
                print(f"site test: day {l.day}: title, highlighted code, "
                      + ("plot and provenance" if states[l.target].valid else "UNVERIFIED notice")
                      + ", snippet links to source lines, Compiler Explorer link and file, layout at "
                      + " and ".join(f"{w} px" for w in WIDTHS))
    finally:
        server.shutdown()
    if problems:
        raise CourseError(problems + [f"site test: {len(problems)} problem(s)"])
    print(f"site test: {len(lessons)} day page(s), every internal link, at {' and '.join(map(str, WIDTHS))} px, "
          f"checked in {os.path.basename(chromium)}")
