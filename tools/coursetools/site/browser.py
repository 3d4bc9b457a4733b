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
import sys
import threading
from pathlib import Path

from ..errors import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, display_path
from ..evidence import verify as ev_verify
from ..fsutil import ensure_owned_folder
from ..sources import manifest
from . import explorer


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def ensure_chromium() -> str | None:
    """Finds Chromium, or installs Debian's package the way the README's
    setup says (apt-get, as root), or returns None."""
    found = find_chromium()
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print("site test: installing Debian's chromium (apt-get)", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, check=False, capture_output=True)
    return find_chromium()


def _chromium(binary: str, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    base = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--hide-scrollbars", "--virtual-time-budget=3000"]
    return subprocess.run(base + list(args), capture_output=True, text=True, timeout=timeout)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def page_problems(dom: str, lesson: manifest.Lesson, state_valid: bool) -> list[str]:
    problems = []
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
    title = re.sub(r"<[^>]+>", "", h1.group(1)).strip() if h1 else ""
    if f"Day {lesson.day}" not in title:
        problems.append(f"title: expected 'Day {lesson.day}' in the page's h1, found {title!r}")
    if not re.search(r'class="language-cuda highlight"|class="highlight"[^>]*>\s*<pre', dom) or not re.search(
        r'<span class="(k|kt|nf|n)">', dom
    ):
        problems.append("no highlighted CUDA code block")
    unverified = 'class="admonition unverified"' in dom
    verified = 'class="admonition verified"' in dom and "Recorded on" in dom
    plot = re.search(r'<img[^>]+src="figures/[^"]+\.svg"', dom)
    if state_valid:
        if not verified:
            problems.append("the evidence is promoted, but the page shows no provenance")
        if not plot:
            problems.append("the evidence is promoted, but the page shows no plot")
    elif not unverified:
        problems.append("no promoted evidence, but the page does not show the UNVERIFIED notice")
    return problems


def link_problems(dom: str, url: str, lesson: manifest.Lesson) -> list[str]:
    """Every snippet's link lands on an existing line of the source page,
    and the page links its Compiler Explorer file."""
    import urllib.request

    problems = []
    lines = sorted({int(n) for n in re.findall(r'href="source/#__codelineno-0-(\d+)"', dom)})
    if not lines:
        problems.append("no snippet links to its source lines")
    else:
        source = urllib.request.urlopen(url + "source/", timeout=30).read().decode()
        missing = [n for n in lines if f'id="__codelineno-0-{n}"' not in source]
        if missing:
            problems.append(f"snippet links to source lines that do not exist: {missing[:5]}")
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
            source, _, _ = explorer.decode(html.unescape(m.group(1)))
            if source != alone:
                problems.append("the Compiler Explorer link does not carry the single-file program")
    return problems


def _layout_and_screenshots(chromium: str, base: str, lesson, shots: Path) -> int:
    """At 1280 px: nothing cut off (code, tables, figures); for lessons
    that ask for it in lesson.toml, a screenshot of the top of the page
    and one of all of it."""
    url = f"{base}/{Path(lesson.dir).name}/"
    dom = _chromium(chromium, "--window-size=1280,1000", "--dump-dom", url + "#course-check").stdout
    m = re.search(r'<pre id="course-check">(.*?)</pre>', dom, re.S)
    if not m:
        print(f"site test: day {lesson.day}: the layout check did not run (no #course-check result)", file=sys.stderr)
        return 1
    check = json.loads(html.unescape(m.group(1)))
    problems = [f"cut off at 1280 px: {c}" for c in check["cut"]]
    if check["width"] > 1280:
        problems.append(f"the page is {check['width']} px wide at a 1280 px window")
    for p in problems:
        print(f"site test: day {lesson.day} ({url}): {p}", file=sys.stderr)
    if not lesson.info.screenshot:
        return len(problems)
    ensure_owned_folder(shots, manifest.ROOT)
    name = Path(lesson.dir).name
    height = min(int(check["height"]) + 40, 60000)
    for shot, size in ((shots / f"{name}.png", "1280,2400"), (shots / f"{name}-full.png", f"1280,{height}")):
        _chromium(chromium, f"--screenshot={shot}", f"--window-size={size}", url)
        if shot.exists() and shot.stat().st_size > 10_000:
            print(f"site test: day {lesson.day}: screenshot {display_path(shot)} ({size.replace(',', ' x ')} px)")
        else:
            print(f"site test: day {lesson.day}: no screenshot at {display_path(shot)}", file=sys.stderr)
            problems.append("screenshot")
    return len(problems)


def browser_test(site: Path, shots: Path) -> int:
    lessons = manifest.load()
    if not (site / "index.html").exists():
        print(f"site test: {site}/index.html missing; build first (cmake --build build)", file=sys.stderr)
        return EXIT_USAGE
    chromium = ensure_chromium()
    if chromium is None:
        print("site test: no Chromium found and it could not be installed (apt-get install chromium, as root)",
              file=sys.stderr)
        return EXIT_USAGE
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    failures = 0
    try:
        index = _chromium(chromium, "--dump-dom", f"{base}/").stdout
        for l in lessons:
            if f"Day {l.day}" not in index and l.topic not in html.unescape(index):
                print(f"site test: index page does not list day {l.day}", file=sys.stderr)
                failures += 1
        for l in lessons:
            name = Path(l.dir).name
            url = f"{base}/{name}/"
            dom = _chromium(chromium, "--dump-dom", url).stdout
            problems = page_problems(dom, l, ev_verify.state_of(l).valid)
            problems += link_problems(dom, url, l)
            for p in problems:
                print(f"site test: day {l.day} ({url}): {p}", file=sys.stderr)
            failures += len(problems)
            if not problems:
                print(f"site test: day {l.day}: title, highlighted code, "
                      + ("plot and provenance" if ev_verify.state_of(l).valid else "UNVERIFIED notice")
                      + ", snippet links to source lines, Compiler Explorer link and file")
        for l in lessons:
            failures += _layout_and_screenshots(chromium, base, l, shots)
    finally:
        server.shutdown()
    if failures:
        print(f"site test: {failures} problem(s)", file=sys.stderr)
        return EXIT_ERRORS
    print(f"site test: {len(lessons)} day page(s) checked in {os.path.basename(chromium)}")
    return EXIT_OK
