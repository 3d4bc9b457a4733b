"""The one-header rule, on planted violations and on the real course."""

from __future__ import annotations

from conftest import write
from coursetools.sources import lint, manifest, snippets


def tree(tmp_path, lesson_text):
    write(tmp_path / "common" / "course.cuh", "#pragma once\n")
    write(tmp_path / "lessons" / "day01_x" / "x.cu", lesson_text)
    return tmp_path


def test_a_lesson_defining_cuda_check_fails(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\n#define CUDA_CHECK(x) x\n')
    diags = lint.one_header(root)
    assert len(diags) == 1 and str(diags[0]).startswith("lessons/day01_x/x.cu:2:1: error: defines CUDA_CHECK")


def test_a_lesson_defining_time_kernel_fails(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\ntemplate <typename F>\nfloat timeKernel(F f) {\n  return 0;\n}\n')
    diags = lint.one_header(root)
    assert len(diags) == 1 and "defines a function timeKernel" in str(diags[0])


def test_calling_time_kernel_is_fine(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\nauto t = course::timeKernel([&] { go(); }, mode);\n')
    assert lint.one_header(root) == []


def test_a_lesson_without_the_header_fails(tmp_path):
    root = tree(tmp_path, "int main() {}\n")
    assert "does not include" in str(lint.one_header(root)[0])


def test_a_second_header_fails(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\n')
    write(root / "common" / "extra.cuh", "")
    assert "the one header" in str(lint.one_header(root)[0])


def test_parts_of_the_header_are_its_own_and_lessons_do_not_include_them(tmp_path):
    root = tree(tmp_path, '#include "course.cuh"\n')
    write(root / "common" / "course" / "check.cuh", "#pragma once\n")
    assert lint.one_header(root) == []
    write(root / "common" / "course" / "notes.txt", "")
    assert "found also ['common/course/notes.txt']" in str(lint.one_header(root)[0])
    (root / "common" / "course" / "notes.txt").unlink()
    write(root / "lessons" / "day01_x" / "x.cu", '#include "course.cuh"\n#include "course/check.cuh"\n')
    assert 'x.cu:2:1: error: includes "course/check.cuh"' in str(lint.one_header(root)[0])


def test_the_real_course_keeps_the_rule():
    assert lint.one_header() == []


def test_a_snippet_is_written_in_one_place():
    """Code two days share (day 24's two-loads block kernel, which day 77
    reuses) lives once, in the shared header: snippet names are
    course-wide (`tools/course snippets` and `check` name a second place)."""
    root = manifest.ROOT
    sources = [*(root / h for h in manifest.header_files(root)), *sorted((root / "lessons").glob("day*/*.cu"))]
    found, diags = snippets.extract([str(s) for s in sources], root)
    assert [str(d) for d in diags] == []
    assert next(s for s in found if s.name == "two-loads-block").path.startswith("common/")


def test_no_tool_names_a_day():
    """Knowledge about a lesson lives with the lesson: outside the tests,
    nothing under tools/ names a day."""
    import re

    tools = manifest.ROOT / "tools"
    for path in [*tools.glob("coursetools/**/*.py"), *tools.glob("gpu/*"), tools / "course"]:
        text = path.read_text()
        hits = re.findall(r"\bday[0-9]+\w*", text)
        assert hits == [], f"{path.relative_to(manifest.ROOT)} names {hits}"


def test_no_private_key_is_committed():
    """Reviewers sign with keys that never enter the repository."""
    import subprocess

    out = subprocess.run(["git", "grep", "-lE", "BEGIN [A-Z ]*PRIVATE KEY"], cwd=manifest.ROOT,
                         capture_output=True, text=True)
    assert out.stdout.strip() == "", f"private keys committed: {out.stdout}"


def test_the_gpu_machines_commands_need_only_the_standard_library():
    """`evidence record`, `review` and `status`/`verify` run on a GPU machine
    with a bare python3: importing them (and all they import) must pull in
    no third-party package. Run in a fresh interpreter that cannot see the
    tools' virtual environment."""
    import subprocess
    import sys

    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from coursetools import cli, commands\n"
        "from coursetools.evidence import verify, promote, store\n"
        "from coursetools.record import run, review, machine, proof, plausibility\n"
        "import coursetools.rule.verdict\n"
        "std = set(sys.stdlib_module_names)\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} - std - {'coursetools', '__main__'})\n"
        "print(' '.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(manifest.ROOT / "tools")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"third-party modules imported: {proc.stdout.strip()}"


def _imports(path):
    """The coursetools modules a file imports (absolute names)."""
    import ast

    tree = ast.parse(path.read_text())
    pkg = path.relative_to(manifest.ROOT / "tools").with_suffix("").parts[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg[: len(pkg) - node.level + 1])
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                out.add(f"{mod}.{alias.name}" if mod.startswith("coursetools") else mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("coursetools")}


def test_the_packages_import_only_down_the_pipeline():
    """The evidence by job: record/ (the GPU side) imports nothing of the
    evidence store, the rule or the pages; rule/ nothing of evidence/ or
    record/ (it works on the rows it is given); pages/ and site/ read the
    evidence only through the state's reader (evidence/state.py), never
    the verification machinery."""
    tools = manifest.ROOT / "tools" / "coursetools"
    problems = []
    for path in sorted(tools.rglob("*.py")):
        part = path.relative_to(tools).parts[0]
        for m in _imports(path):
            inside = m.split(".")[1] if m.count(".") else ""
            if part == "record" and inside in ("evidence", "rule", "pages", "site"):
                problems.append(f"{path.name}: {m}")
            if part == "rule" and inside in ("evidence", "record", "pages", "site"):
                problems.append(f"{path.name}: {m}")
            if part in ("pages", "site") and inside in ("record", "evidence") \
                    and not m.startswith("coursetools.evidence.state"):
                problems.append(f"{part}/{path.name}: {m}")
    assert problems == [], problems


def test_every_file_a_comment_or_a_document_names_exists():
    """A path under tools/, common/, research/, cmake/ or lessons/ named in
    a tracked file (a comment, a note, a page) is a file that exists: a
    move leaves no reader sent to a file that is gone. Tests and records
    name made-up files on purpose and are left out."""
    import re
    import subprocess
    from pathlib import Path

    import pytest
    root = Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    named = re.compile(r"(?<![\w./-])(?:tools|common|research|cmake|lessons)/[A-Za-z0-9_./-]*[A-Za-z0-9_-]"
                       r"\.(?:py|md|cuh|cu|toml|cmake|j2|json(?:\.bz2)?|txt|ini|sh|log)(?![\w.])")
    missing = []
    for rel in files:
        if rel.startswith(("evidence/", "tools/tests/")) or rel.endswith((".svg", ".png", ".bz2", ".gz")):
            continue
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            for m in named.finditer(line):
                path = m.group(0)
                if "NN" in path or "<" in path or "*" in path:
                    continue  # a pattern, not a file
                if not (root / path).exists():
                    missing.append(f"{rel}:{n}: {path}")
    assert not missing, "named but missing:\n" + "\n".join(missing)


def test_no_module_imports_another_modules_private_name():
    """A name with a leading underscore is its module's own: another module
    that needs it needs a public name for it."""
    import ast

    tools = manifest.ROOT / "tools" / "coursetools"
    found = []
    for path in sorted(tools.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{path.relative_to(tools)}: {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == [], found


def test_every_exit_code_is_named_where_a_user_reads_it():
    """The tools' exit codes live in errors.py; `course --help` and the
    README must name each with its meaning, or a user reads a stale code
    (the help once said 2 for a bad command line after it became 64)."""
    import re
    from pathlib import Path

    from coursetools import cli, errors

    codes = {v for k, v in vars(errors).items() if k.startswith("EXIT_")}
    help_codes = {int(c) for c in re.findall(r"(\d+) (?:done|errors|--check|evidence|wrong|interrupted)", cli.__doc__)}
    assert help_codes == codes
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    said = readme[readme.index("Exit codes of `tools/course`"):]
    said = said[:said.index("\n\n")]
    for code in codes - {errors.EXIT_INTERRUPTED}:
        assert re.search(rf"[:;]\s+{code}\s", said), f"the README's exit codes of the tools lack {code}"
