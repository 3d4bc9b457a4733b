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



def _cited(text: str):
    """(line, span) of each inline code span of a Markdown text (one may
    wrap onto the next line), outside its fenced blocks (a diagram names no
    file)."""
    import re

    lines = text.split("\n")
    fence = [n for n, line in enumerate(lines) if line.startswith("```")]
    for a, b in zip(fence[::2], fence[1::2]):
        lines[a:b + 1] = [""] * (b + 1 - a)
    prose = "\n".join(lines)
    for m in re.finditer(r"`([^`]+)`", prose):
        yield prose.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split())


class _Tree:
    """The repository as a citation is looked up in it."""

    def __init__(self):
        from coursetools import cli

        self.root = root = manifest.ROOT
        tools = root / "tools" / "coursetools"
        self.py = {p: p.read_text() for p in tools.rglob("*.py")}
        self.cpp = "\n".join(p.read_text(errors="replace") for p in (root / "common").rglob("*") if p.is_file())
        self.cmake = "\n".join(p.read_text() for p in (root / "cmake").glob("*.cmake"))
        self.parser = cli.build_parser()
        # Where a path may be cited from: the root, tools/, the tools'
        # package and its packages, common/ and the header's folders,
        # evidence/, a lesson's folder.
        self.bases = [root, root / "tools", tools, *sorted(d for d in tools.iterdir() if d.is_dir()),
                      root / "common", root / "common" / "course", root / "common" / "course" / "detail",
                      root / "evidence", *sorted((root / "lessons").glob("day*"))]

    def defines(self, name: str, texts) -> bool:
        import re
        pattern = rf"^\s*(?:def|class)\s+{name}\b|^\s*{name}\s*[:=]"
        return any(re.search(pattern, t, re.M) for t in texts)


def _citation_problem(span: str, tree: _Tree) -> str | None:
    """Why a name or path research/ARCHITECTURE.md cites is not there (None
    where it is)."""
    import argparse
    import re

    words = span.split()
    if words[0] in ("cmake", "ctest", "mkdocs"):
        return None  # another program's command line
    if words[0] == "tools/course" or (len(words) > 1 and re.fullmatch(r"[a-z-]+", words[0])):
        parser = tree.parser  # a command of the CLI: each word down to its arguments names a subcommand
        for word in words[1:] if words[0] == "tools/course" else words:
            subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if not subs:
                break
            if word not in subs[0].choices:
                return f"tools/course has no command '{word}' there"
            parser = subs[0].choices[word]
        return None
    if span.startswith("-"):  # an option of the lessons' programs or the tools
        return None if span in tree.cpp or any(span in t for t in tree.py.values()) else "no such option"
    if re.fullmatch(r"\[\[?\w+\]\]?", span):  # a lesson.toml table
        from coursetools.sources.lessoninfo import LESSON_SCHEMA
        return None if span.strip("[]") in LESSON_SCHEMA else "lesson.toml has no such table"
    m = re.fullmatch(r"tools_pytest_(\w+)", span)  # a CTest test of the tools
    if m:
        return None if (tree.root / "tools" / "tests" / f"test_{m.group(1)}.py").exists() else "no such test file"
    if "/" in span or re.search(r"\.(py|cuh|cu|cmake|md|json|toml|j2|sh|txt)$", span) or span == "allowed_signers":
        if span.startswith("build/"):  # the build's output: something must write it
            name = span.rstrip("/").split("/")[-1]
            return None if name in tree.cmake or any(name in t for t in tree.py.values()) else "nothing writes it"
        pattern = ("*" if span.startswith(".") else "") + span.rstrip("/").replace("NN", "*").replace("_topic", "_*")
        return None if any(list(b.glob(pattern)) for b in tree.bases) else "no such file or folder"
    name = re.sub(r"\((\.\.\.)?\)$", "", span)  # mark(...), course_add_lesson()
    if "::" in name:  # C++: course::Lesson, Lesson::run
        return None if re.search(rf"\b{re.escape(name.split('::')[-1])}\b", tree.cpp) else "not in common/"
    if "." in name:  # a Python module's name: cli.main
        module, _, attr = name.rpartition(".")
        texts = [t for p, t in tree.py.items() if p.stem == module]
        return None if tree.defines(re.escape(attr), texts) else f"module {module} defines no {attr}"
    if "*" in name:  # a family of Python names: cmd_*
        return None if tree.defines(re.escape(name).replace(r"\*", r"\w+"), tree.py.values()) else "no such names"
    if any(p.stem == name for p in tree.py) or tree.defines(re.escape(name), tree.py.values()):
        return None  # a module, or a name defined in the tools
    if re.search(rf"\b{re.escape(name)}\b", tree.cpp):
        return None  # a name of the header's
    if re.search(rf"^\s*(?:function|macro)\({re.escape(name)}\b", tree.cmake, re.M | re.I):
        return None  # a CMake function
    return "not found in tools/, common/ or cmake/"


def test_every_name_and_path_the_architecture_cites_exists():
    """research/ARCHITECTURE.md is read first: every path it names is a
    file or folder, every command one the CLI has, every Python name one
    the tools define (`module.name` in that module), every C++ name one the
    header has and every CMake function one cmake/ defines: a rename or a
    removal that leaves the document behind fails here."""
    doc = manifest.ROOT / "research" / "ARCHITECTURE.md"
    tree = _Tree()
    problems = [f"research/ARCHITECTURE.md:{n}: `{span}`: {why}" for n, span in _cited(doc.read_text())
                for why in [_citation_problem(span, tree)] if why]
    assert problems == [], "\n".join(problems)


def test_a_command_returns_nothing_and_cli_main_alone_makes_the_exit_status(monkeypatch):
    """research/ARCHITECTURE.md: a cmd_* raises a CourseError and returns
    nothing; cli.main is the one place an exit status is made (site, serve
    and bench once returned 0 of their own)."""
    import argparse
    import inspect

    from coursetools import commands
    from coursetools.pages import bench

    cmds = {n: f for n, f in vars(commands).items() if n.startswith("cmd_")}
    assert [n for n, f in cmds.items() if inspect.signature(f).return_annotation != "None"] == []
    monkeypatch.setattr(bench, "run", lambda *a, **k: 0)
    assert commands.cmd_bench(argparse.Namespace(lessons=1, snippets=1)) is None
