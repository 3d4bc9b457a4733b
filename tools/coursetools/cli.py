"""The `course` command: one entry point for authors, reviewers and CI.

Exit codes: 0 done; 1 errors in sources, markers or templates; 2 wrong
usage or configuration; 3 --check found a generated file out of date;
4 evidence is stale, tampered or not promoted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import evidence as ev
from . import manifest

# The other modules (Jinja2, MkDocs) are imported where they are used, so
# that `course evidence record` runs on a GPU machine with nothing but the
# standard library.
from .diagnostics import (
    EXIT_ERRORS,
    EXIT_EVIDENCE,
    EXIT_OK,
    EXIT_OUT_OF_DATE,
    EXIT_USAGE,
    CourseError,
    display_path,
    report,
)
from .fsutil import replace_tree, write_atomic
from .manifest import ROOT


class Parser(argparse.ArgumentParser):
    def error(self, message):  # wrong usage is exit 2, as the design says
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _check_or_write(files: dict[Path, str], check: bool, remove: list[Path] = ()) -> int:
    """--check: exit 3 naming each file that differs; otherwise write the
    changed ones (each atomically) and remove the orphans."""
    stale = [p for p, text in sorted(files.items()) if not p.exists() or p.read_text(encoding="utf-8") != text]
    stale += list(remove)
    if check:
        for p in stale:
            print(f"{display_path(p)}: out of date; run: tools/course render (or the build)", file=sys.stderr)
        return EXIT_OUT_OF_DATE if stale else EXIT_OK
    for p in stale:
        if p in files:
            write_atomic(p, files[p])
        else:
            p.unlink()
    return EXIT_OK


# -- snippets --------------------------------------------------------------


def source_root(paths: list[str]) -> Path:
    """Paths in artifacts are relative to the repository the sources are
    in: this checkout, or the current folder for sources elsewhere."""
    for p in paths:
        try:
            Path(p).resolve().relative_to(ROOT)
        except ValueError:
            return Path.cwd()
    return ROOT


def snippet_artifacts(paths: list[str], out: Path) -> tuple[dict[str, dict[str, str]], list]:
    from . import snippets

    root = source_root(paths)
    by_lesson, diags = snippets.extract_files(paths, root)
    trees: dict[str, dict[str, str]] = {}
    for lesson, snips in sorted(by_lesson.items()):
        files = {}
        index = []
        for s in sorted(snips, key=lambda s: s.name):
            files[f"{s.name}.md"] = snippets.artifact_text(s, out / lesson, root)
            index.append({"name": s.name, "source": s.path, "start": s.start, "end": s.end})
        files["index.json"] = json.dumps(index, indent=2) + "\n"
        trees[lesson] = files
    return trees, diags


def cmd_snippets(args) -> int:
    from . import snippets

    paths = args.files or snippets.lesson_sources(ROOT)
    out = Path(args.output)
    trees, diags = snippet_artifacts(paths, out)
    if diags:
        report(diags)
        print(f"{len(diags)} error(s); nothing written", file=sys.stderr)
        return EXIT_ERRORS
    if args.check:
        stale = []
        for lesson, files in trees.items():
            for name, text in files.items():
                p = out / lesson / name
                if not p.exists() or p.read_text(encoding="utf-8") != text:
                    stale.append(p)
        for p in stale:
            print(f"{display_path(p)}: out of date", file=sys.stderr)
        return EXIT_OUT_OF_DATE if stale else EXIT_OK
    for lesson, files in trees.items():
        replace_tree(out / lesson, files)
    count = sum(len(f) - 1 for f in trees.values())
    print(f"{count} snippet(s) from {len(trees)} lesson(s) written to {display_path(out)}")
    return EXIT_OK


# -- pages -------------------------------------------------------------------


def cmd_render(args) -> int:
    from . import render

    lessons = manifest.load()
    only = [manifest.find(lessons, l).target for l in args.lesson] if args.lesson else None
    files, diags = render.render_all(lessons, only)
    if diags:
        report(diags)
        print(f"{len(diags)} error(s); nothing written", file=sys.stderr)
        return EXIT_ERRORS
    return _check_or_write(files, args.check, render.stale_figures(lessons, files, only))


def cmd_standalone(args) -> int:
    from . import standalone

    lessons = manifest.load()
    files, diags = standalone.standalone_files(lessons, Path(args.output))
    if diags:
        report(diags)
        return EXIT_ERRORS
    return _check_or_write(files, args.check)


# -- evidence ----------------------------------------------------------------


def cmd_record(args) -> int:
    lessons = manifest.load()
    lesson = manifest.find(lessons, args.lesson)
    dirty = None if args.clean is None else (not args.clean)
    info = json.loads((manifest.build_dir() / "course-manifest.json").read_text())
    path = ev.record(
        lesson,
        args.tag,
        args.commit,
        dirty,
        binary=Path(args.binary) if args.binary else None,
        extra_args=args.args,
        manifest_info=info,
    )
    rec = ev.load_record(path)
    print(f"recorded {display_path(path)}: exit code {rec['exit_code']}, {rec['gpu']['name']}, sources {rec['sources']['digest'][:12]}")
    return EXIT_OK


def cmd_promote(args) -> int:
    lessons = manifest.load()
    lesson = manifest.find(lessons, args.lesson)
    entry = ev.promote(lesson, args.tag, args.by)
    print(f"promoted {entry['record']} for {lesson.target} (by {entry['promoted_by']}); now run: tools/course render")
    return EXIT_OK


def cmd_verify(args) -> int:
    lessons = manifest.load()
    problems = ev.verify(lessons)
    for p in problems:
        print(f"evidence: {p}", file=sys.stderr)
    if problems:
        return EXIT_EVIDENCE
    promoted = ev.load_promotions()["promoted"]
    print(f"evidence: {len(promoted)} promoted record(s) verified against today's sources")
    return EXIT_OK


def cmd_status(args) -> int:
    for lesson in manifest.load():
        st = ev.state_of(lesson)
        where = f" ({st.entry['tag']}, {st.entry['gpu']})" if st.entry else ""
        print(f"day {lesson.day:>3}  {lesson.target:<28} {st.state}{where}")
        for r in st.reasons if not st.valid else []:
            print(f"      {r}")
    return EXIT_OK


# -- house rules -------------------------------------------------------------


def cmd_lint(args) -> int:
    from . import lint

    diags = lint.one_header()
    if diags:
        report(diags)
        return EXIT_ERRORS
    print("one header: every lesson includes common/course.cuh and none defines CUDA_CHECK or timeKernel")
    return EXIT_OK


def cmd_format(args) -> int:
    from . import lint

    problems, version = lint.check_format(fix=args.fix)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"{version}: sources are not formatted; run: tools/course format --fix", file=sys.stderr)
        return EXIT_ERRORS
    print(f"{version}: every source formatted" + (" (fixed)" if args.fix else ""))
    return EXIT_OK


def cmd_sass(args) -> int:
    from . import sass

    lessons = manifest.load()
    lesson = manifest.find(lessons, "day77_cluster_reduction")
    binary = Path(args.binary or lesson.binary)
    problems = sass.check(binary)
    for p in problems:
        print(f"sass: {p}", file=sys.stderr)
    if problems:
        return EXIT_ERRORS
    print(f"sass: {display_path(binary)} holds the cluster instructions day 77 describes")
    return EXIT_OK


def cmd_site(args) -> int:
    from . import site

    if args.site_command == "build":
        return site.build(Path(args.output))
    return site.browser_test(Path(args.output), Path(args.screenshots))


def cmd_bench(args) -> int:
    from . import bench

    return bench.run(args.lessons, args.snippets)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="course", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    s = sub.add_parser("snippets", help="extract // snippet: regions into Markdown artifacts")
    s.add_argument("files", nargs="*", help="source files (default: every lesson's .cu)")
    s.add_argument("-o", "--output", default=str(manifest.build_dir() / "snippets"))
    s.add_argument("--check", action="store_true", help="exit 3 if an artifact is out of date")
    s.set_defaults(func=cmd_snippets)

    s = sub.add_parser("render", help="generate each lesson's README.md from README.md.j2")
    s.add_argument("--lesson", action="append", help="only this lesson (repeatable)")
    s.add_argument("--check", action="store_true", help="exit 3 if a page is out of date")
    s.set_defaults(func=cmd_render)

    s = sub.add_parser("standalone", help="single-file copies for Compiler Explorer")
    s.add_argument("-o", "--output", default=str(manifest.build_dir() / "standalone"))
    s.add_argument("--check", action="store_true")
    s.set_defaults(func=cmd_standalone)

    e = sub.add_parser("evidence", help="record, promote and verify hardware runs")
    esub = e.add_subparsers(dest="evidence_command", required=True, parser_class=Parser)
    r = esub.add_parser("record", help="run a built lesson on this GPU and write a record")
    r.add_argument("--lesson", required=True)
    r.add_argument("--tag", required=True, help="names this hardware run, e.g. h200-2026-11-30")
    r.add_argument("--commit", help="the commit the tree is (required where .git has no history)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--clean", dest="clean", action="store_true", default=None, help="the tree matches --commit")
    g.add_argument("--dirty", dest="clean", action="store_false", help="the tree has uncommitted changes")
    r.add_argument("--binary", help="the built program (default: from the manifest)")
    r.add_argument("args", nargs="*", help="extra arguments for the lesson (after --)")
    r.set_defaults(func=cmd_record)
    r = esub.add_parser("promote", help="the reviewer's gate")
    r.add_argument("--lesson", required=True)
    r.add_argument("--tag", required=True)
    r.add_argument("--by", required=True, help="the reviewer's name")
    r.set_defaults(func=cmd_promote)
    r = esub.add_parser("verify", help="exit 4 if promoted evidence is stale, altered or missing")
    r.set_defaults(func=cmd_verify)
    r = esub.add_parser("status", help="each lesson's evidence state")
    r.set_defaults(func=cmd_status)

    s = sub.add_parser("lint", help="the one-header rule")
    s.set_defaults(func=cmd_lint)
    s = sub.add_parser("format", help="clang-format check (pinned version)")
    s.add_argument("--fix", action="store_true")
    s.set_defaults(func=cmd_format)
    s = sub.add_parser("sass", help="check day 77's cluster instructions in its binary")
    s.add_argument("--binary")
    s.set_defaults(func=cmd_sass)

    s = sub.add_parser("site", help="the static site")
    ssub = s.add_subparsers(dest="site_command", required=True, parser_class=Parser)
    b = ssub.add_parser("build")
    b.add_argument("-o", "--output", default=str(manifest.build_dir() / "site"))
    b = ssub.add_parser("test", help="open the built site in headless Chromium")
    b.add_argument("-o", "--output", default=str(manifest.build_dir() / "site"))
    b.add_argument("--screenshots", default=str(manifest.build_dir() / "screenshots"))
    s.set_defaults(func=cmd_site)

    s = sub.add_parser("bench", help="time extraction and rendering of a generated course")
    s.add_argument("--lessons", type=int, default=200)
    s.add_argument("--snippets", type=int, default=10)
    s.set_defaults(func=cmd_bench)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CourseError as e:
        report(e.diagnostics)
        return e.code


if __name__ == "__main__":
    sys.exit(main())
