"""Which files of the repository a lesson's compiler reads, for the
sources digest, which takes both answers:

  - followed(): every #include followed as the compiler resolves it
    ("name" beside the including file, then in common/, the one include
    folder the build adds; <name> in common/, else the toolchain's). A file
    outside the repository, or a file name made by a macro, is refused.
  - compiler_read(): every file the compiler's dependency output (.d)
    says it opened; one outside the repository and the toolchain is refused.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import cpplex
from ..errors import Diagnostic, SourceError
from ..fsutil import read_source
from .digest import INCLUDE_RE

# A directive whose file name is neither "..." nor <...>: a macro.
COMPUTED_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*(?:include|include_next|import)\b[ \t]*(?=[^<" \t\n])(\S+)', re.M)
# Where a toolchain lives; a file the compiler read from anywhere else
# outside the repository is not something a record can vouch for.
TOOLCHAIN_PREFIXES = ("/usr/", "/opt/", "/lib/", "/lib64/")


def _real(path: Path, dirs: dict[str, str]) -> Path | None:
    """path.resolve(), its folder's resolution remembered in `dirs` (a link,
    or a name such as '..', resolved whole)."""
    s = os.fspath(path)
    head, name = os.path.split(s)
    try:
        if name in ("", ".", "..") or os.path.islink(s):
            return path.resolve()
        if head not in dirs:
            # a folder that is not there (a stale depfile's) resolves whole,
            # as resolve() takes '..' after a missing part
            dirs[head] = os.path.realpath(head or ".") if os.path.isdir(head or ".") else ""
        return Path(dirs[head]) / name if dirs[head] else path.resolve()
    except (OSError, ValueError, RuntimeError):
        return None


# What reads a file without #include, which neither the digest nor the
# dependency file would name (.incbin, #embed, __has_include, whose answer
# a file's existence changes); and what makes a comment, a blank line or a
# rebuild change the program while the digest stays: where code lies
# (__LINE__, __COUNTER__, std::source_location and its builtins; only the
# header's CUDA_CHECK may print __LINE__), the time, and '##', which pastes
# a name no scan reads (CAT(__LI, NE__) is __LINE__).
UNFOLLOWED_RE = re.compile(r"\.incbin\b|^[ \t]*(?:#|%:)[ \t]*embed\b|\b__has_include(?:_next)?\b", re.M)
LINE_RE = re.compile(r"\b__(?:LINE|COUNTER|TIMESTAMP|DATE|TIME)__\b|\b__builtin_(?:LINE|COLUMN|FILE|FILE_NAME|"
                     r"FUNCTION|FUNCSIG|source_location)\b|\bsource_location\b|##|%:%:")
LINE_ALLOWED = ("common/course/check.cuh",)


def includes_of(rel: str, text: str, root: Path) -> list[str]:
    """The repository files `rel` includes (not remembered: where an
    include resolves depends on which files exist, which serve sees change)."""
    found = []
    code = cpplex.without_comments(text)
    for rx, why in ((UNFOLLOWED_RE, "reads a file the sources digest cannot follow; include it with #include"),
                    (LINE_RE, "makes the program depend on where its code lies or when it was built, which a "
                              "comment edit or a rebuild changes and the sources digest cannot see")):
        hit = rx.search(code)
        if hit and not (rx is LINE_RE and rel in LINE_ALLOWED):
            line = code.count("\n", 0, hit.start()) + 1
            raise SourceError(Diagnostic(rel, line, 0, f"{hit.group(0).strip()} {why}"))
    m = COMPUTED_RE.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise SourceError(Diagnostic(rel, line, 0, f"#include {m.group(1)}: a file name made by a macro, which the "
                                     "sources digest cannot follow; write the file's name"))
    here = (root / rel).parent
    for m in INCLUDE_RE.finditer(text):
        quoted = m.group("q") is not None
        name = m.group("q") if quoted else m.group("name")
        candidates = [Path(name)] if Path(name).is_absolute() else (
            [here / name, root / "common" / name] if quoted else [root / "common" / name])
        for cand in candidates:
            if cand.is_file():
                try:
                    inside = cand.resolve().relative_to(root.resolve()).as_posix()
                except (ValueError, OSError, RuntimeError):
                    line = text.count("\n", 0, m.start()) + 1
                    raise SourceError(Diagnostic(rel, line, 0, f"#include of {name} reaches {cand.resolve()}, outside "
                                                 "the repository: a record cannot vouch for it; keep included files "
                                                 "in the repository"))
                found.append(inside)
                break
    return found


def followed(start, root: Path) -> set[str]:
    """Every repository file reachable by #include from `start`, included;
    each read as C++, whatever its name (so is an included steps.def)."""
    root = Path(root)
    seen: set[str] = set()
    todo = list(start)
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        try:
            data = read_source(root / rel, root)
        except SourceError:
            continue  # refused or missing: the digest names it
        text = data.decode("utf-8", errors="replace")
        todo += [r for r in includes_of(rel, text, root) if r not in seen]
    return seen


def _depfile_paths(text: str) -> list[str]:
    """A Makefile-style dependency file's prerequisites, never its targets."""
    text = text.replace("\\\n", " ")
    out = []
    for line in text.split("\n"):
        m = re.match(r"\s*((?:\\ |[^\s:]|:(?!\s|$))+)\s*:(?:\s|$)", line)
        if m is not None:
            out += [p.replace("\\ ", " ") for p in re.findall(r"(?:\\ |\S)+", line[m.end():])]
    return out


def compiler_read(lesson_dir: str, target: str, build: Path | None, root: Path) -> set[str]:
    """The repository files the compiler opened when it last built `target`."""
    if build is None:
        return set()
    folder = Path(build) / lesson_dir / "CMakeFiles" / f"{target}.dir"
    if not folder.is_dir():
        return set()
    found: set[str] = set()
    real_build, real_root = _real(Path(build), {}), _real(root, {})
    dirs: dict[str, str] = {}  # a depfile names hundreds of headers in a few folders: each resolved once
    for dep in sorted(folder.rglob("*.d")):
        try:
            text = dep.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for p in _depfile_paths(text):
            named = Path(p) if Path(p).is_absolute() else (Path(build) / p)
            path = _real(named, dirs)
            if path is None or path.is_relative_to(real_build):
                continue  # the build's own output (generated, or a target a depfile names): not a source
            if path.is_relative_to(real_root):
                found.add(path.relative_to(real_root).as_posix())
            elif not str(named).startswith(TOOLCHAIN_PREFIXES):  # as the depfile names it (a toolchain may link elsewhere)
                raise SourceError(Diagnostic(str(dep), 0, 0, f"the compiler read {p} for {target}, outside the "
                                             "repository and the toolchain: a record cannot vouch for it"))
    return found
