"""Reading and writing files as untrusted input allows.

Reading: sources are regular files inside the repository. A symbolic
link that leads outside it, a FIFO (which would block the read for ever),
a device or a folder is refused with a one-line error.

Writing: a tool writes whole folders only into folders it made itself.
Each such folder carries a stamp file; a tool refuses to write into a
folder that has no stamp unless it is empty, and never into the
repository's root or a folder of tracked sources. A folder's new content
is built beside it and swapped in, with SIGTERM and SIGINT held off for
the two renames, so an interrupted run leaves the previous output whole
and no temporary folder behind. Files get the umask's modes (0644 under
022), not the 0600 of a temporary file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

from .errors import Diagnostic, OutOfDateError, SourceError, UsageError, display_path

STAMP = ".course-owned"
STAMP_TEXT = ("This folder was made by tools/course, which may replace all of it.\n"
              "Do not keep your own files here.\n")
# The repository's folders of sources: no tool ever writes a folder into
# them (the pages and figures render writes are single named files).
PROTECTED = ("lessons", "common", "evidence", "tools", "research", "cmake", ".git")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_source(path: str | os.PathLike, root: Path) -> bytes:
    """The bytes of a regular file inside `root`, or a SourceError that
    says why not."""
    def refused(why: str) -> SourceError:
        return SourceError(Diagnostic(display_path(path), 0, 0, why))

    try:
        real = Path(path).resolve(strict=True)
    except FileNotFoundError:
        raise refused("no such file; expected a lesson source file") from None
    except (OSError, RuntimeError) as e:
        raise refused(f"cannot be resolved ({e}); expected a regular file") from None
    root = Path(root).resolve()
    if real != root and root not in real.parents:
        raise refused(f"leads outside the repository (to {real}); expected a file inside it (a symbolic link "
                      "out of the tree is refused)")
    try:
        st = os.stat(real)
    except OSError as e:
        raise refused(f"cannot be read: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise refused("is a folder; expected a lesson source file")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
        raise refused(f"is {kind}, not a regular file; expected a lesson source file")
    # O_NONBLOCK: should the file be swapped for a FIFO after the check,
    # the open returns at once and fstat refuses it.
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise refused("is not a regular file; expected a lesson source file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def write_atomic(path: Path, data: str | bytes, replace: bool = True) -> bool:
    """Writes a temporary file beside `path` (the umask's mode), then
    renames it over `path`, or (not `replace`) hard-links it there, which
    fails where the name is taken: False. No temporary file is left."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(as_bytes(data))
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            os.fsync(f.fileno())
        (os.replace if replace else os.link)(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _refuse_place(out: Path, root: Path, folder: bool, hint: str, owned: bool = False) -> None:
    """UsageError (exit 64), saying why, where a tool may not write `out`,
    a folder (or a file: never at the repository's top, where a mistyped
    -o would replace a source); `owned`: a folder that is not empty must
    have the stamp of a folder this tool made."""
    shown, out, root = display_path(out), Path(out), Path(root).resolve()

    def refuse(why: str):
        raise UsageError(f"{shown}: error: {why}; {hint}")
    if out.is_symlink():
        refuse("is a symbolic link; refusing to write through it")
    if out.exists() and not (out.is_dir() if folder else out.is_file()):
        refuse(f"exists and is not a {'folder' if folder else 'regular file'}")
    real = out.resolve()
    if real == root or real in root.parents:
        refuse("is the repository or holds it; refusing to write there")
    parts = real.relative_to(root).parts if root in real.parents else ()
    if parts and parts[0] in PROTECTED:
        refuse(f"is inside {parts[0]}/, which holds the course's sources; refusing to write there")
    if len(parts) == 1 and not folder:
        refuse("is at the repository's top; refusing to write there")
    if owned and out.is_dir() and not (out / STAMP).is_file() and any(out.iterdir()):
        refuse(f"was not made by tools/course (no {STAMP} in it) and is not empty; refusing to write into it")
    if parts and out.exists():
        try:
            git = subprocess.run(["git", "ls-files", "--", str(Path(*parts))], cwd=root, capture_output=True,
                                 text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return  # no git here: nothing it tracks
        if git.returncode == 0 and git.stdout.strip():
            refuse("holds files git tracks" if folder else "is a file git tracks")


def check_output_folder(out: Path, root: Path) -> None:
    """Raises UsageError unless a tool may write the folder `out`: one it
    made (stamped), an empty one or a new one, where no source lives."""
    _refuse_place(out, root, True, "choose an empty folder under build/ (the default)", owned=True)


def ensure_owned_folder(out: Path, root: Path) -> None:
    check_output_folder(out, root)
    Path(out).mkdir(parents=True, exist_ok=True)
    if not (Path(out) / STAMP).is_file():
        write_atomic(Path(out) / STAMP, STAMP_TEXT)


def check_output_file(out: Path, root: Path) -> None:
    _refuse_place(out, root, False, "choose a file under build/")


def check_build_folder(out: Path, root: Path) -> None:
    _refuse_place(out, root, True, "choose a build folder such as build-gpu/")


def write_changed(files: dict[Path, str], root: Path, check_hint: str = "", removed=()) -> list[Path]:
    """The generated `files` whose text on disk differs (a byte that is not
    UTF-8 counts as a difference). With `check_hint`, an OutOfDateError
    naming each and the command that writes them; otherwise each written
    and every `removed` file deleted, never through a link below `root`."""
    stale = [p for p, text in sorted(files.items())
             if not p.is_file() or p.read_text(encoding="utf-8", errors="replace") != text]
    if check_hint and stale:
        raise OutOfDateError([f"{display_path(p)}: out of date; run: {check_hint}" for p in stale])
    for p in [*stale, *removed]:
        check_no_links_between(p, root)
    for p in stale:
        write_atomic(p, files[p])
    for p in removed:
        p.unlink()
    return stale


def check_no_links_between(path: Path, top: Path) -> None:
    """Raises UsageError if any folder from `top` down to `path`'s folder
    is a symbolic link: a committed link must not carry a write elsewhere."""
    path, top = Path(path), Path(top)
    parts = path.parent.relative_to(top).parts if path.parent.is_relative_to(top) else ()
    for here in (top.joinpath(*parts[:k]) for k in range(1, len(parts) + 1)):
        if here.is_symlink():
            raise UsageError(f"{display_path(here)}: error: is a symbolic link; refusing to write through it; "
                             "expected a real folder")
    if path.is_symlink():
        raise UsageError(f"{display_path(path)}: error: is a symbolic link; refusing to replace it")


def replace_tree(final: Path, files: dict[str, str | bytes], root: Path) -> bool:
    """Makes `files` (relative name -> content) the whole content of the
    folder `final`, plus its stamp. Returns False when nothing changed."""
    final = Path(final)
    check_output_folder(final, root)
    if _same_tree(final, files):
        return False
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.new-"))
    old = None
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's is 0700; mkdir and write_bytes below take the umask's
        for name, content in {**files, STAMP: STAMP_TEXT}.items():
            p = tmp / name
            if tmp.resolve() not in p.resolve().parents:
                raise UsageError(f"{name}: error: not a plain name inside the output folder")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(as_bytes(content))
        # SIGTERM, SIGINT and SIGHUP held off for the two renames, so none lands between them
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
        try:
            if final.exists():
                old = final.with_name(f".{final.name}.old-{os.getpid()}")
                os.replace(final, old)
            os.replace(tmp, final)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if old is not None:
            shutil.rmtree(old)
        return True
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and old.exists() and not final.exists():
            os.replace(old, final)
        raise


def _same_tree(final: Path, files: dict[str, str | bytes]) -> bool:
    """True when `final` already holds exactly `files` (and the stamp): a
    rebuild of an unchanged lesson then writes nothing."""
    if not final.is_dir():
        return False
    present = {p.relative_to(final).as_posix() for p in final.rglob("*") if p.is_file()}
    return present == set(files) | {STAMP} and all((final / n).read_bytes() == as_bytes(c)
                                                   for n, c in files.items())


def as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data

