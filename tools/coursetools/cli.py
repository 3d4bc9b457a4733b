"""The `course` command: one entry point for authors, reviewers and CI.

Exit codes: 0 done; 1 errors in sources, markers or templates; 2 wrong
usage or configuration (a bad argument, a refused output folder); 3
--check found a generated file out of date; 4 evidence is stale, tampered,
unsigned or not promoted; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import signal
import sys
from pathlib import Path

from . import manifest
from .errors import (
    EXIT_ERRORS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CourseError,
    Diagnostic,
    EvidenceError,
    Interrupted,
    OutOfDateError,
    SourceError,
    UsageError,
    display_path,
    report,
)
from .fsutil import check_no_links_between, ensure_owned_folder, replace_tree, write_atomic

# Modules that need Jinja2 or MkDocs are imported where they are used, so
# that `evidence record` and `review` run on a GPU machine with nothing
# but Python's standard library.


class Parser(argparse.ArgumentParser):
    def error(self, message):  # wrong usage is exit 2
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _lessons(names=None):
    lessons = manifest.load()
    if not names:
        return lessons, lessons
    return lessons, [manifest.find(lessons, n) for n in names]


def _check_or_write(files: dict[Path, str], check: bool, fix_hint: str) -> list[Path]:
    """--check: OutOfDateError naming each file that differs and the
    command that fixes it; otherwise writes the changed ones."""
    stale = [p for p, text in sorted(files.items()) if not p.exists() or p.read_text(encoding="utf-8") != text]
    if check:
        if stale:
            raise OutOfDateError([f"{display_path(p)}: out of date; run: {fix_hint}" for p in stale])
        return []
    for p in stale:
        check_no_links_between(p, manifest.ROOT)
    for p in stale:
        write_atomic(p, files[p])
    return stale


# -- snippets --------------------------------------------------------------


def cmd_snippets(args) -> int:
    from . import snippets

    out = Path(args.output)
    if args.files:
        if not args.lesson or len(args.lesson) != 1:
            raise UsageError("course snippets FILE...: name the lesson they belong to with one --lesson NAME")
        name = args.lesson[0]
        if not manifest.TARGET_RE.match(name):
            raise UsageError(f"--lesson '{name}' is not a lesson name; expected dayNN_topic")
        jobs = [(name, list(args.files))]
    else:
        _, chosen = _lessons(args.lesson)
        jobs = [(l.target, [str(manifest.ROOT / s) for s in (*l.sources, *manifest.header_files(manifest.ROOT))]) for l in chosen]
    trees, diags = {}, []
    for name, files in jobs:
        found, d = snippets.extract(files, manifest.ROOT, name)
        diags += d
        index = []
        content = {}
        for s in sorted(found, key=lambda s: s.name):
            content[f"{s.name}.md"] = snippets.artifact_text(s, out / name, manifest.ROOT)
            index.append({"name": s.name, "source": s.path, "start": s.start, "end": s.end})
        content["index.json"] = json.dumps(index, indent=2) + "\n"
        trees[name] = content
    if diags:
        raise SourceError(diags + [f"{len(diags)} error(s); nothing written"])
    if args.check:
        stale = [out / n / f for n, files in trees.items() for f, text in files.items()
                 if not (out / n / f).is_file() or (out / n / f).read_text(encoding="utf-8") != text]
        if stale:
            raise OutOfDateError([f"{display_path(p)}: out of date; run: tools/course snippets" for p in stale])
        print(f"snippets: {display_path(out)} is up to date")
        return EXIT_OK
    ensure_owned_folder(out, manifest.ROOT)
    written = [n for n, files in trees.items() if replace_tree(out / n, files, manifest.ROOT)]
    count = sum(len(f) - 1 for f in trees.values())
    print(f"snippets: {count} snippet(s) of {len(trees)} lesson(s) in {display_path(out)} "
          f"({len(written)} lesson folder(s) rewritten)")
    return EXIT_OK


# -- pages -------------------------------------------------------------------


def cmd_render(args) -> int:
    from . import render

    lessons, chosen = _lessons(args.lesson)
    files, stale_lessons, orphans = render.render_all(lessons, [l.target for l in chosen])
    if args.check and orphans:
        raise OutOfDateError([f"{display_path(p)}: a figure no page uses any more; run: tools/course render"
                              for p in orphans])
    written = _check_or_write(files, args.check, "tools/course render (or the build: cmake --build build)")
    for p in orphans:
        p.unlink()
    for target, reasons in stale_lessons:
        print(
            f"render: {target}: its code changed since the promoted run ({'; '.join(reasons)}); "
            "the page says UNVERIFIED at the top and keeps its figures marked as the older code's. "
            "To fix: record on a GPU and promote (research/REVIEW-PROCESS.md), or revert the change.",
            file=sys.stderr,
        )
    if args.check:
        print(f"render: {len(files)} generated file(s) up to date")
    else:
        print(f"render: {len(written)} of {len(files)} generated file(s) written"
              + (": " + ", ".join(display_path(p) for p in written) if written else " (all up to date)")
              + (f"; removed {len(orphans)} unused figure(s)" if orphans else ""))
    return EXIT_OK


def cmd_prose(args) -> int:
    from . import prose

    lessons, chosen = _lessons(args.lesson)
    problems = prose.check(lessons, [l.target for l in chosen])
    if problems:
        raise SourceError(problems)
    print(f"prose: every number in {len(chosen)} page(s) comes from a page helper or a stated constant")
    return EXIT_OK


def cmd_standalone(args) -> int:
    from . import standalone

    lessons, _ = _lessons()
    out = Path(args.output)
    files = standalone.standalone_files(lessons)
    if args.check:
        stale = [out / n for n, t in files.items() if not (out / n).is_file() or (out / n).read_text() != t]
        if stale:
            raise OutOfDateError([f"{display_path(p)}: out of date; run: tools/course standalone -o {display_path(out)}"
                                  for p in stale])
        print(f"standalone: {display_path(out)} is up to date")
        return EXIT_OK
    ensure_owned_folder(out, manifest.ROOT)
    replace_tree(out, files, manifest.ROOT)
    print(f"standalone: {len(files)} single-file program(s) in {display_path(out)}")
    return EXIT_OK


def cmd_new(args) -> int:
    from . import scaffold

    written = scaffold.new_lesson(args.name, args.topic, args.min_cc)
    print("new: wrote " + ", ".join(display_path(p) for p in written))
    print("new: now run the README's two commands (cmake --workflow --preset course; ctest --preset course)")
    return EXIT_OK


# -- evidence ----------------------------------------------------------------


def cmd_record(args) -> int:
    from . import evidence as ev

    build = Path(args.build_dir) if args.build_dir else manifest.build_dir()
    lessons = manifest.load(build / "course-manifest.json")  # a bad manifest is a one-line error here
    info = json.loads((build / "course-manifest.json").read_text(encoding="utf-8"))
    lesson = manifest.find(lessons, args.lesson)
    path = ev.record(
        lesson, args.tag, args.commit, args.clean, build=build, extra_args=args.args,
        profile=not args.no_profile, timeline=not args.no_timeline,
        review=Path(args.review) if args.review else None, manifest_info=info,
    )
    rec = ev.load_record(path)
    print(f"record: wrote {display_path(path)}: exit code {rec['exit_code']}, {rec['gpu']['name']}, "
          f"executable {rec['executable']['sha256'][:12]}, sources {rec['sources']['digest'][:12]}; "
          "commit it, promoted or not")
    return EXIT_OK


def cmd_promote(args) -> int:
    from . import evidence as ev

    _, (lesson,) = _lessons([args.lesson])
    entry = ev.promote(lesson, args.tag, args.by, Path(args.key))
    print(f"promote: {entry['record']} promoted for {lesson.target}, signed by {entry['principal']} "
          f"({entry['promoted_by']}) in evidence/promoted.json; now run: tools/course render")
    return EXIT_OK


def cmd_verify(args) -> int:
    from . import evidence as ev

    lessons, _ = _lessons()
    problems = ev.verify(lessons)
    if problems:
        raise EvidenceError([f"evidence: {p}" for p in problems]
                            + ["evidence: to fix: record on a GPU and promote again (research/REVIEW-PROCESS.md)"])
    promoted = ev.load_promotions()["promoted"]
    print(f"evidence: {len(promoted)} promoted record(s): signatures valid, records intact, "
          "every promotion rule holds for today's sources")
    return EXIT_OK


def cmd_status(args) -> int:
    from . import evidence as ev

    for lesson in manifest.load():
        st = ev.state_of(lesson)
        where = f" ({st.entry['tag']}, {st.entry.get('gpu')})" if st.entry else ""
        print(f"day {lesson.day:>3}  {lesson.target:<28} {st.state}{where}")
        for r in st.reasons if not st.valid else []:
            print(f"      {r}")
    return EXIT_OK


def cmd_compare(args) -> int:
    from . import evidence as ev

    _, (lesson,) = _lessons([args.lesson])
    recs = [ev.load_record(ev.record_path(lesson, t)) for t in (args.tag_a, args.tag_b)]
    table = ev.compare_records(*recs)
    if args.json:
        print(json.dumps({"lesson": lesson.target, "a": args.tag_a, "b": args.tag_b, "rows": table}, indent=1))
    else:
        print(ev.format_comparison(table, args.tag_a, args.tag_b))
    return EXIT_OK


def cmd_add_reviewer(args) -> int:
    from . import evidence as ev
    from . import signing

    line = signing.public_key_line(args.principal, Path(args.key))
    name = signing.check_name(args.name)
    path = signing.allowed_signers_path(ev.evidence_dir())
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if path.exists():
        signing.parse_allowed(path)
    new = text + (f"# {name}\n" if name else "") + line + "\n"
    with tempfile.TemporaryDirectory() as tmp:  # the file as it would be, checked whole first
        trial = Path(tmp) / "allowed_signers"
        trial.write_text(new, encoding="utf-8")
        try:
            signing.parse_allowed(trial)
        except EvidenceError as e:
            raise UsageError(str(e).replace(str(trial), display_path(path)))
    write_atomic(path, new)
    print(f"add-reviewer: {args.principal} added to {display_path(path)}; commit it")
    return EXIT_OK


def cmd_review(args) -> int:
    from . import review

    review.main(Path(args.build_dir), Path(args.output or Path(args.build_dir) / "review.json"), only=args.lesson)
    return EXIT_OK


# -- house rules -------------------------------------------------------------


def cmd_lint(args) -> int:
    from . import lint

    diags = lint.one_header()
    if diags:
        raise SourceError(diags)
    print("lint: every lesson includes common/course.cuh and none defines CUDA_CHECK or timeKernel")
    return EXIT_OK


def cmd_format(args) -> int:
    from . import lint

    version, count = lint.check_format(fix=args.fix)
    print(f"format: {version}: {count} source(s) formatted" + (" (fixed)" if args.fix else ""))
    return EXIT_OK


def cmd_sass(args) -> int:
    from . import sass

    lessons, _ = _lessons()
    checked = sass.check_all(lessons)
    print(f"sass: {checked} declared expectation(s) hold in the built binaries")
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
    fmt = argparse.ArgumentDefaultsHelpFormatter
    p = Parser(prog="course", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")
    b = str(manifest.build_dir())

    s = sub.add_parser("snippets", help="extract // snippet: regions into Markdown artifacts", formatter_class=fmt,
                       description="Extracts every `// snippet: NAME` region of the lessons (or of FILES) into NAME.md.")
    s.add_argument("files", nargs="*", help="source files to extract instead of the lessons'; needs one --lesson")
    s.add_argument("--lesson", action="append", help="a lesson (repeatable); default: every lesson")
    s.add_argument("-o", "--output", default=f"{b}/snippets", help="the folder to write (a folder this tool made, or a new one)")
    s.add_argument("--check", action="store_true", help="write nothing; exit 3 if an artifact is out of date")
    s.set_defaults(func=cmd_snippets)

    s = sub.add_parser("render", help="write each lesson's README.md (and the README's day table)", formatter_class=fmt,
                       description="Renders lessons/*/README.md.j2 with the promoted evidence into README.md.")
    s.add_argument("--lesson", action="append", help="only this lesson (repeatable); default: every lesson")
    s.add_argument("--check", action="store_true", help="write nothing; exit 3 if a page is out of date")
    s.set_defaults(func=cmd_render)

    s = sub.add_parser("prose", help="every number in a page's prose comes from a page helper", formatter_class=fmt,
                       description="Renders every page and fails (exit 1) on a number typed into its prose that no "
                                   "page helper produced and that is not in its lesson.toml [page] constants.")
    s.add_argument("--lesson", action="append", help="only this lesson (repeatable); default: every lesson")
    s.set_defaults(func=cmd_prose)

    s = sub.add_parser("standalone", help="single-file copies of each day for Compiler Explorer", formatter_class=fmt)
    s.add_argument("-o", "--output", default=f"{b}/standalone", help="the folder to write")
    s.add_argument("--check", action="store_true", help="write nothing; exit 3 if a file is out of date")
    s.set_defaults(func=cmd_standalone)

    s = sub.add_parser("new", help="scaffold a new day that builds and passes every test", formatter_class=fmt)
    s.add_argument("name", help="the lesson, dayNN_topic (lower-case letters, digits, underscores)")
    s.add_argument("--topic", default="", help="one line for the day's title (default: from the name)")
    s.add_argument("--min-cc", default="7.5", help="the minimum compute capability")
    s.set_defaults(func=cmd_new)

    e = sub.add_parser("evidence", help="record, promote, verify and compare hardware runs")
    esub = e.add_subparsers(dest="evidence_command", required=True, parser_class=Parser, metavar="ACTION")
    r = esub.add_parser("record", help="build and run a lesson on this GPU and write a record", formatter_class=fmt)
    r.add_argument("--lesson", required=True, help="the lesson to run")
    r.add_argument("--tag", required=True, help="names this hardware run, e.g. h200-2026-11-30")
    r.add_argument("--commit", help="the commit the tree is; only where git has no history here")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--clean", dest="clean", action="store_true", default=None,
                   help="the tree matches --commit; only where git has no history here")
    g.add_argument("--dirty", dest="clean", action="store_false", help="the tree has uncommitted changes")
    r.add_argument("--build-dir", default=None, help=f"the configured build to build and run from (default: {b})")
    r.add_argument("--no-profile", action="store_true", help="skip the ncu step")
    r.add_argument("--no-timeline", action="store_true", help="skip the timeline build's run")
    r.add_argument("--review", help="the summary tools/course review wrote, to store with the record")
    r.add_argument("args", nargs="*", help="extra arguments for the lesson (after --)")
    r.set_defaults(func=cmd_record)
    r = esub.add_parser("promote", help="the reviewer's gate: check every rule, sign, promote", formatter_class=fmt)
    r.add_argument("--lesson", required=True, help="the lesson")
    r.add_argument("--tag", required=True, help="the record's tag")
    r.add_argument("--by", required=True, help="the reviewer's name, as it will show on the page")
    r.add_argument("--key", required=True, help="the reviewer's private SSH key (never in the repository)")
    r.set_defaults(func=cmd_promote)
    r = esub.add_parser("verify", help="exit 4 if promoted evidence is stale, altered, unsigned or missing")
    r.set_defaults(func=cmd_verify)
    r = esub.add_parser("status", help="each lesson's evidence state")
    r.set_defaults(func=cmd_status)
    r = esub.add_parser("compare", help="two records of a lesson, row by row, by the comparison rule", formatter_class=fmt)
    r.add_argument("lesson", help="the lesson")
    r.add_argument("tag_a", help="the first record's tag (the verdicts say what it is against the second)")
    r.add_argument("tag_b", help="the second record's tag")
    r.add_argument("--json", action="store_true", help="print JSON instead of a table")
    r.set_defaults(func=cmd_compare)
    r = esub.add_parser("add-reviewer", help="add a reviewer's public key to evidence/allowed_signers", formatter_class=fmt)
    r.add_argument("--principal", required=True, help="the reviewer's id in signatures, e.g. name@example.org")
    r.add_argument("--key", required=True, help="the reviewer's public key file (.pub)")
    r.add_argument("--name", default="", help="the reviewer's name, kept as a comment")
    r.set_defaults(func=cmd_add_reviewer)

    s = sub.add_parser("review", help="the hardware review on a GPU machine (sanitizers, negative builds)",
                       formatter_class=fmt)
    s.add_argument("--build-dir", default=str(manifest.ROOT / "build-gpu"), help="the gpu-only preset's build folder")
    s.add_argument("-o", "--output", default=None, help="the summary to write (default: BUILD_DIR/review.json)")
    s.add_argument("--lesson", action="append", help="only this lesson's steps (repeatable); default: every lesson")
    s.set_defaults(func=cmd_review)

    s = sub.add_parser("lint", help="the one-header rule")
    s.set_defaults(func=cmd_lint)
    s = sub.add_parser("format", help="clang-format check of every source (pinned version)", formatter_class=fmt)
    s.add_argument("--fix", action="store_true", help="rewrite the sources instead of checking them")
    s.set_defaults(func=cmd_format)
    s = sub.add_parser("sass", help="check each lesson's declared machine-code expectations")
    s.set_defaults(func=cmd_sass)

    s = sub.add_parser("site", help="the static site")
    ssub = s.add_subparsers(dest="site_command", required=True, parser_class=Parser, metavar="ACTION")
    x = ssub.add_parser("build", help="build the site with MkDocs (warnings are errors)", formatter_class=fmt)
    x.add_argument("-o", "--output", default=f"{b}/site", help="the folder to write")
    x = ssub.add_parser("test", help="open the built site in headless Chromium", formatter_class=fmt)
    x.add_argument("-o", "--output", default=f"{b}/site", help="the built site")
    x.add_argument("--screenshots", default=f"{b}/screenshots", help="where the screenshots go")
    s.set_defaults(func=cmd_site)

    s = sub.add_parser("bench", help="time extraction and rendering of a generated course", formatter_class=fmt)
    s.add_argument("--lessons", type=_count(1, 10_000), default=200, help="lessons to generate (1 to 10,000)")
    s.add_argument("--snippets", type=_count(1, 1_000), default=10, help="snippets per lesson (1 to 1,000)")
    s.set_defaults(func=cmd_bench)
    return p


def _count(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"{n} is outside {lo} to {hi:,}")
        return n
    return parse


def _interrupt(signum, frame):
    raise Interrupted(signum)


def main(argv=None) -> int:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except CourseError as e:
        report(e.diagnostics)
        return e.code
    except (Interrupted, KeyboardInterrupt):
        print("course: interrupted; earlier output left as it was", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"course: error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    except (MemoryError, RecursionError) as e:
        print(f"course: error: an input is too large or too deeply nested to process ({type(e).__name__}); "
              "nothing was written", file=sys.stderr)
        return EXIT_ERRORS
    except Exception as e:  # a bug in the tools: still one line, still exit 1, never half-written output
        print(f"course: internal error: {type(e).__name__}: {str(e)[:300]} (a bug in tools/course; "
              "please report the command that caused it); nothing was written", file=sys.stderr)
        return EXIT_ERRORS


if __name__ == "__main__":
    sys.exit(main())

del Diagnostic
