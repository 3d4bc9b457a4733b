"""A benchmark, not a test: extract and render a generated course of N
lessons with M snippets each, and report how long each stage took.

    tools/course bench --lessons 200 --snippets 10
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import jinja2
import jinja2.sandbox

from ..sources import snippets
from ..fsutil import ensure_owned_folder, replace_tree, write_atomic
from ..sources.manifest import build_dir


def generate(root: Path, lessons: int, per_lesson: int) -> list[str]:
    paths = []
    for d in range(lessons):
        lines = ['#include "course.cuh"', ""]
        for s in range(per_lesson):
            lines += [f"// snippet: part-{s}", f"__global__ void k{s}(float* x) {{"]
            lines += [f"    x[threadIdx.x] += {s}.0f;  // line {k}" for k in range(12)]
            lines += ["}", "// end snippet", ""]
        p = root / "lessons" / f"day{d:03d}_gen" / "gen.cu"
        p.parent.mkdir(parents=True)
        p.write_text("\n".join(lines))
        tmpl = "# Day {{ day }}\n\n" + "".join(f"{{{{ snippet('part-{s}') }}}}\n" for s in range(per_lesson))
        (p.parent / "README.md.j2").write_text(tmpl)
        paths.append(str(p))
    return paths


def once(root: Path, paths: list[str], cached: bool) -> dict[str, float]:
    t = {}
    t0 = time.perf_counter()
    by_lesson = {}
    for p in paths:
        found, diags = snippets.extract([p], root)
        assert not diags
        by_lesson[Path(p).parent.name] = found
    t["extract"] = time.perf_counter() - t0
    out = root / "build" / "snippets"
    t0 = time.perf_counter()
    trees = {lesson: {f"{s.name}.md": snippets.artifact_text(s, out / lesson, root) for s in snips}
             for lesson, snips in by_lesson.items()}
    t["artifacts"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ensure_owned_folder(out, root)
    for lesson, files in trees.items():
        replace_tree(out / lesson, files, root)
    t["write"] = time.perf_counter() - t0
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(root / "lessons")),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=jinja2.FileSystemBytecodeCache(str(root / "build" / "jinja")) if cached else None,
    )
    t0 = time.perf_counter()
    pages = {}
    for lesson, snips in by_lesson.items():
        table = {s.name: s for s in snips}
        pages[lesson] = env.get_template(f"{lesson}/README.md.j2").render(
            day=lesson, snippet=lambda n: snippets.render_block(table[n], os.path.basename(table[n].path))
        )
    t["render"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for lesson, page in pages.items():
        write_atomic(root / "lessons" / lesson / "README.md", page)
    t["write pages"] = time.perf_counter() - t0
    return t


def run(lessons: int, per_lesson: int, repeats: int = 5) -> int:
    for cached, label in ((False, "every template compiled"), (True, "Jinja bytecode cache warm")):
        # In the build folder, where a real build writes its artifacts.
        build_dir().mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=build_dir(), prefix="bench-") as tmp:
            root = Path(tmp)
            (root / "build" / "jinja").mkdir(parents=True)
            paths = generate(root, lessons, per_lesson)
            runs = []
            for _ in range(repeats):
                shutil.rmtree(root / "build" / "snippets", ignore_errors=True)
                runs.append(once(root, paths, cached))
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        compute = med["extract"] + med["artifacts"] + med["render"]
        io = med["write"] + med["write pages"]
        parts = ", ".join(f"{k} {v * 1000:.0f}" for k, v in med.items())
        print(f"{lessons} lessons x {per_lesson} snippets ({label}), median of {repeats}, ms: {parts}; "
              f"extraction and rendering {compute * 1000:.0f} ms, file writes {io * 1000:.0f} ms")
    count = lessons * per_lesson
    with tempfile.TemporaryDirectory(dir=build_dir(), prefix="bench-") as tmp:
        t0 = time.perf_counter()
        for i in range(count):
            with open(os.path.join(tmp, f"f{i}.md"), "wb") as f:
                f.write(b"x" * 300)
        floor = time.perf_counter() - t0
    print(f"for scale: creating {count} small files with plain open/write here takes {floor * 1000:.0f} ms")
    return 0
