"""Shared fixtures: the tools run in-process, on files in a temporary
folder, exactly as a course author would run them from a shell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

from coursetools import cli  # noqa: E402


class Run:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def course(capsys):
    """Runs `course ARGS...` and returns its exit code, stdout, stderr."""

    def run(*args):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as e:  # argparse's own exits
            code = e.code
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def listing(path: Path) -> list[str]:
    if not path.exists():
        return []
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))
