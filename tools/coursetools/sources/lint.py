"""House rules no compiler checks: every lesson includes common/course.cuh
(none of its parts), none defines CUDA_CHECK or timeKernel itself, common/
holds the header and nothing else; and the pinned clang-format agrees with
every source."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import Diagnostic, SourceError, UsageError
from . import manifest

# A directive's '#' may be spelled '%:', its digraph.
OWN_MACRO_RE = re.compile(r"^[ \t]*(?:#|%:)[ \t]*define[ \t]+(CUDA_CHECK|timeKernel)\b", re.MULTILINE)
PART_INCLUDE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*include[ \t]*[<"](course/[^>"]*)[>"]', re.MULTILINE)
OWN_FUNCTION_RE = re.compile(r"\btimeKernel\s*\([^;{}()]*(\([^;{}()]*\)[^;{}()]*)*\)\s*(const\s*)?\{")


def one_header(root: Path | None = None) -> list[Diagnostic]:
    root = Path(root or manifest.ROOT)
    diags = []
    others = sorted(p.relative_to(root).as_posix() for p in (root / "common").rglob("*")
                    if p.is_file() and p.relative_to(root).as_posix() not in manifest.header_files(root))
    if not (root / manifest.HEADER).is_file() or others:
        diags.append(Diagnostic("common", 0, 0, "expected the one header, common/course.cuh, and its parts "
                                f"(common/course/*.cuh) only; found also {others}"))
    for path in sorted(p for ext in ("cu", "cuh", "h", "hpp", "cpp")
                       for p in (root / "lessons").rglob(f"*.{ext}")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for rx, what in ((OWN_MACRO_RE, "defines"), (OWN_FUNCTION_RE, "defines a function")):
            for m in rx.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                name = m.group(1) if rx is OWN_MACRO_RE else "timeKernel"
                diags.append(Diagnostic(rel, line, 1, f"{what} {name} itself; it must come from common/course.cuh"))
        if path.suffix == ".cu" and '#include "course.cuh"' not in text:
            diags.append(Diagnostic(rel, 1, 1, 'does not include "course.cuh", the one shared header'))
        for m in PART_INCLUDE_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            diags.append(Diagnostic(rel, line, 1, f'includes "{m.group(1)}", a part of the shared header; '
                                    'include "course.cuh" alone'))
    return diags


def clang_format_binary() -> str | None:
    venv = Path(sys.prefix) / "bin" / "clang-format"
    return str(venv) if venv.exists() else shutil.which("clang-format")


def format_files(root: Path | None = None) -> list[Path]:
    root = Path(root or manifest.ROOT)
    return sorted(list((root / "common").rglob("*.cuh"))
                  + list((root / "lessons").rglob("*.cu"))
                  + list((root / "research" / "experiments").glob("*.cu")))


def check_format(root: Path | None = None, fix: bool = False, only: list[Path] | None = None) -> tuple[str, int]:
    """The pinned clang-format's version and the number of files checked
    (every source, or `only`; with `fix`, the number it changed); SourceError
    naming each place that differs."""
    root = Path(root or manifest.ROOT)
    binary = clang_format_binary()
    if binary is None:
        raise UsageError("clang-format not found; the configure step installs the pinned wheel into build/venv "
                         "(cmake --preset course)")
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    files = [str(p) for p in (only if only is not None else format_files(root))]
    if fix:
        before = {f: Path(f).read_bytes() for f in files}
        subprocess.run([binary, "-i", "--style=file", *files], check=True)
        return version, sum(Path(f).read_bytes() != data for f, data in before.items())
    proc = subprocess.run([binary, "--dry-run", "--Werror", "--style=file", *files], capture_output=True, text=True)
    if proc.returncode != 0:
        problems = [l for l in proc.stderr.splitlines() if ": error:" in l] or [proc.stderr.strip()]
        raise SourceError(problems + [f"{version}: sources are not formatted; run: tools/course format --fix"])
    return version, len(files)
