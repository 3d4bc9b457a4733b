"""Writing files so that a crash never leaves half of one behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes) -> None:
    """Writes to a temporary file beside `path`, then renames it over."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def create_new_atomic(path: Path, data: str) -> bool:
    """Like write_atomic, but never replaces an existing file: the final
    step is a hard link, which fails if the name is taken. Returns False
    when `path` already exists."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(tmp)


def replace_tree(final: Path, files: dict[str, str]) -> None:
    """Writes `files` (relative name -> text) as the whole content of the
    folder `final`: built in a temporary folder beside it, then swapped in."""
    final = Path(final)
    if _same_tree(final, files):
        return
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}."))
    try:
        for name, text in files.items():
            p = tmp / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(text.encode("utf-8"))
        old = None
        if final.exists():
            old = final.with_name(f".{final.name}.old.{os.getpid()}")
            os.replace(final, old)
        os.replace(tmp, final)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _same_tree(final: Path, files: dict[str, str]) -> bool:
    """True when `final` already holds exactly `files`: a rebuild of an
    unchanged lesson then writes nothing."""
    if not final.is_dir():
        return False
    present = {p.relative_to(final).as_posix() for p in final.rglob("*") if p.is_file()}
    if present != set(files):
        return False
    return all((final / name).read_bytes() == text.encode("utf-8") for name, text in files.items())
