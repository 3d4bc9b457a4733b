"""`course serve`: the site on 127.0.0.1 with live reload, rebuilt as an
author edits. It renders every page as `course render` does, writes the
site's sources, and runs MkDocs' own server over them (live.py), whose
watcher also watches WATCHED (the site's hook adds them): before each
rebuild the hook calls `on_save`, which renders the pages the changed
files can alter and rewrites the site's sources in place. A template error
is printed, and shown in a box atop the last good pages, which stay served."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from ..errors import CourseError, EvidenceError, UsageError, report
from ..evidence import state as ev_state
from ..fsutil import write_atomic, write_changed
from ..sources import manifest
from . import build as site_build

WATCHED = ("lessons", "common", "research")
# What render writes itself: a change to it renders nothing again.
GENERATED = ("README.md", "drawn-by-render.txt")
# What the files were at the last render, for the hook in MkDocs' process
# (build/, beside the site's sources, which MkDocs builds from).
SNAPSHOT = "serve-snapshot.json"
# What the hook needs from serve: the repository and the site's folder.
ROOT_ENV, OUT_ENV = "COURSE_SERVE_ROOT", "COURSE_SERVE_OUT"


def snapshot(root: Path) -> dict[str, int]:
    """Every watched file's modification time and size."""
    seen = {}
    for top in WATCHED:
        for path in (root / top).rglob("*"):
            parts = path.relative_to(root).parts
            generated = top == "lessons" and len(parts) > 2 and (parts[-1] in GENERATED or "figures" in parts)
            if path.is_file() and not generated and not any(p.startswith(".") for p in parts):
                st = path.stat()
                seen["/".join(parts)] = st.st_mtime_ns ^ (st.st_size << 1)
    return seen


def rebuild(out: Path, changed: set[str] | None = None, quiet: bool = False) -> Path | None:
    """Render the pages a change can alter and rewrite the site's sources:
    their mkdocs.yml, or None (the problems printed) where a template or a source is wrong."""
    from ..pages import render

    try:
        lessons = manifest.load()
        # The lessons a change can alter: all (None) for the shared header, none for a research note
        only = None
        if changed is not None and not any(c.startswith("common/") for c in changed):
            dirs = {"/".join(c.split("/")[:2]) for c in changed if c.startswith("lessons/")}
            only = [l.target for l in lessons if l.dir in dirs]
        try:
            states = ev_state.load(lessons)
        except EvidenceError:
            # Missing or older than the sources: written again as the build
            # writes it, in a process of its own (serve verifies nothing).
            proc = subprocess.run([sys.executable, "-m", "coursetools", "evidence", "state"], text=True,
                                  capture_output=True, cwd=manifest.ROOT, env=site_build.hook_environment())
            if proc.returncode != 0:
                said = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
                raise CourseError(said or ["evidence state failed"])
            states = ev_state.load(lessons)
        # One read of the state for the pages and the site's sources both.
        files, _, orphans = render.render_all(lessons, only, states) if only != [] else ({}, [], [])
        changed = write_changed(files, manifest.ROOT, removed=orphans)  # as `course render` writes them
        config = site_build.prepare(out, serving=True, lessons=lessons, states=states)
    except CourseError as e:
        report(e.diagnostics)
        print("serve: the last good pages stay served; fix the problem above and save again", flush=True)
        try:  # the same problems in the browser, above the last good pages
            site_build.prepare(out, serving=True, problems=[str(d) for d in e.diagnostics])
        except CourseError:
            pass  # the site's own sources are what failed: the terminal has said so
        return None
    names = ", ".join(str(p.relative_to(manifest.ROOT)) for p in changed) or "no page changed"
    if not quiet or changed:
        print(f"serve: rendered ({names})", flush=True)
    return config


def wait_for_port(port: int, server, every: float = 0.2) -> bool:
    """True once 127.0.0.1:`port` accepts a connection, False if `server`
    ends first. No time limit: a loaded machine may take minutes."""
    while server.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(every)
    return False


def on_save(root: Path, out: Path) -> None:
    """Before each of MkDocs' rebuilds: render what the changed files can alter."""
    path = manifest.build_dir() / SNAPSHOT
    try:
        before = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        before = None  # unknown: render everything
    global _warm
    now = snapshot(root)
    if before is not None and now == before:
        if not _warm:
            # MkDocs' first build, of what serve has just rendered: render once
            # more, writing nothing, so the first save finds this process warm
            # (0.7 s sooner).
            _warm = True
            rebuild(out, quiet=True)
        return
    write_atomic(path, json.dumps(now))
    try:
        rebuild(out, {k for k in before.keys() | now.keys() if before.get(k) != now.get(k)}
                if isinstance(before, dict) else None)
    except BaseException:
        # A bug or an interrupt: forget the snapshot, so the next build
        # renders everything rather than leave this change's pages unrendered.
        path.unlink(missing_ok=True)
        raise


_warm = False  # whether this process has rendered once (on_save)


def serve(port: int, out: Path) -> None:
    if not 1 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port number (1 to 65535)")
    site_build.mkdocs_binary()  # installed, or the configure step's advice
    # The files before the first render: a save made while it renders or
    # MkDocs builds is a change the hook's first look finds.
    root = manifest.ROOT
    write_atomic(manifest.build_dir() / SNAPSHOT, json.dumps(snapshot(root)))
    config = rebuild(out)
    if config is None:
        raise CourseError("serve: the pages do not render; nothing to serve")
    # MkDocs' server as `mkdocs serve --dirty` starts it (live.py): only the
    # pages that changed are rebuilt (strict and whole: `course site build`).
    cmd = [sys.executable, "-m", "coursetools.site.live", str(config), str(port)]
    env = site_build.hook_environment(**{ROOT_ENV: str(root), OUT_ENV: str(out)})
    server = subprocess.Popen(cmd, stdout=sys.stdout, stderr=sys.stderr, env=env)
    # The address once the port answers: MkDocs builds the whole site first.
    if not wait_for_port(port, server):
        raise CourseError(f"serve: MkDocs' server stopped before it answered on port {port} "
                          f"(exit {server.returncode}); its messages are above")
    print(f"serve: http://127.0.0.1:{port}/ (watching {', '.join(WATCHED)}; Ctrl-C stops)", flush=True)
    try:
        server.wait()
        raise CourseError(f"serve: MkDocs' server stopped (exit {server.returncode})")
    except KeyboardInterrupt:
        pass  # Ctrl-C: the way to stop it, exit 0
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()

