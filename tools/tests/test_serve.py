"""`course serve`: started on a free port over a copy of the course, it
serves the site; a comment edited in a snippet shows on the served page
within seconds; it stops cleanly."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.prefix) / "bin" / "mkdocs"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _wait_for(predicate, seconds: float) -> float | None:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.2)
    return None


@pytest.mark.skipif(not MKDOCS.exists() or shutil.which("git") is None, reason="needs MkDocs and git")
@pytest.mark.skipif(not (REPO / "build" / "course-manifest.json").exists() or not (REPO / "build" / "bin").is_dir(),
                    reason="needs a built course")
def test_serve_shows_an_edited_snippet_comment_and_stops(tmp_path):
    copy = tmp_path / "course"
    # Every file of the working tree git does not ignore, staged or not: an
    # author's new day or a new module serves before it is committed.
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, copy / rel)
    (copy / "build").mkdir()
    # the manifest names the build's paths: the copy's own, where no program is built
    manifest_text = (REPO / "build" / "course-manifest.json").read_text()
    (copy / "build" / "course-manifest.json").write_text(manifest_text.replace(str(REPO), str(copy)))
    shutil.copytree(REPO / "build" / "bin", copy / "build" / "bin")  # the SASS excerpts read the programs
    port = _free_port()
    env = {**os.environ, "COURSE_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1"}
    env.pop("COURSE_BUILD_DIR", None)
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen([str(copy / "tools" / "course"), "serve", "--port", str(port)], cwd=copy, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    page = f"http://127.0.0.1:{port}/day24_reduction/"
    try:
        up = _wait_for(lambda: proc.poll() is not None or "Each level" in _get(page), 900)
        assert up is not None and proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
        source = copy / "lessons" / "day24_reduction" / "reduction.cu"
        text = source.read_text()
        assert "// v1. Each level" in text
        source.write_text(text.replace("// v1. Each level", "// v1 (edited in the test). Each level", 1))
        took = _wait_for(lambda: "edited in the test" in _get(page), 600)
        assert took is not None, (tmp_path / "serve.log").read_text()[-3000:]
        assert "edited in the test" in (copy / "lessons" / "day24_reduction" / "README.md").read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    assert _wait_for(lambda: _get(page) == "", 120) is not None  # the server is gone with it


def test_the_live_server_polls_every_tenth_of_a_second(monkeypatch):
    """live.py swaps the server class MkDocs' serve() builds by name: the
    swap reaches serve() only while serve() looks the name up when it
    runs, which an upgrade of MkDocs could change."""
    import inspect

    from mkdocs.commands import serve

    from coursetools.site import live

    assert "LiveReloadServer(" in inspect.getsource(serve.serve)
    built = []

    def fake_serve(**kwargs):
        built.append(serve.LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root="/"))

    monkeypatch.setattr(serve, "serve", fake_serve)
    monkeypatch.setattr(serve, "LiveReloadServer", serve.LiveReloadServer)  # restored after the test
    live.main(["mkdocs.yml", "0"])
    built[0].server_close()
    assert built[0].observer.timeout == live.POLL_SECONDS


def test_serve_never_writes_a_page_through_a_linked_folder(tmp_path, monkeypatch, capsys):
    """serve renders pages as `course render` does, so a lesson folder that
    is a committed symbolic link stops the write, and the file it points
    at is untouched."""
    from coursetools.pages import render
    from coursetools.site import serve
    from coursetools.sources import manifest

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "README.md").write_text("theirs\n")
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "day99_fake").symlink_to(outside)
    page = tmp_path / "lessons" / "day99_fake" / "README.md"
    monkeypatch.setattr(manifest, "ROOT", tmp_path)
    monkeypatch.setattr(manifest, "load", lambda path=None: [])
    monkeypatch.setattr(serve.ev_state, "load", lambda lessons: {})
    monkeypatch.setattr(render, "render_all", lambda lessons, only, states: ({page: "ours\n"}, [], []))
    monkeypatch.setattr(serve.site_build, "prepare", lambda *a, **k: tmp_path / "mkdocs.yml")
    assert serve.rebuild(tmp_path / "site") is None
    assert (outside / "README.md").read_text() == "theirs\n"
    assert "is a symbolic link; refusing to write through it" in capsys.readouterr().err
