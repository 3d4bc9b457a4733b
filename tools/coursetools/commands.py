"""What each `course` command does, one function a command, which returns
nothing and raises a CourseError for a problem; cli.py parses the command
line and maps errors to exit codes. Modules that need Jinja2 or MkDocs are imported where they
are used, so that `evidence record` and `review` run on a GPU machine with
nothing but Python's standard library."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .errors import Diagnostic, EvidenceError, OutOfDateError, SourceError, UsageError, display_path
from .fsutil import check_no_links_between, ensure_owned_folder, replace_tree, write_atomic, write_changed
from .sources import manifest


def _lessons(names=None):
    lessons = manifest.load()
    return lessons, [manifest.find(lessons, n) for n in names] if names else lessons


def cmd_snippets(args) -> None:
    from .sources import snippets

    out = Path(args.output)
    if args.files:
        if not args.lesson or len(args.lesson) != 1:
            raise UsageError("course snippets FILE...: name the lesson they belong to with one --lesson NAME")
        name = args.lesson[0]
        if not manifest.TARGET_RE.match(name):
            raise UsageError(f"--lesson '{name}' is not a lesson name; expected dayNN_topic")
        jobs = [(name, list(args.files))]
    else:
        lessons, chosen = _lessons(args.lesson)
        jobs = [(l.target, l.snippet_files) for l in chosen if l.built]
    trees, diags, pool = {}, [], []
    for name, files in jobs:
        found, d = snippets.extract(files, manifest.ROOT)
        diags += d
        pool += found
        trees[name] = snippets.artifact_tree(found, out / name, manifest.ROOT)
    if not args.files:  # names are course-wide: these lessons' against each other and every other lesson's
        others = sorted({str(manifest.ROOT / s) for l in lessons if l not in chosen or not l.built for s in l.sources})
        diags += snippets.course_wide(pool, others, manifest.ROOT)
    diags = list(dict.fromkeys(diags))  # a lesson's own duplicate, met by extract and again course-wide
    if diags:
        raise SourceError(diags + [f"{len(diags)} error(s); nothing written"])
    if args.check:
        write_changed({out / n / f: text for n, files in trees.items() for f, text in files.items()},
                      manifest.ROOT, check_hint="tools/course snippets")
        print(f"snippets: {display_path(out)} is up to date")
        return
    ensure_owned_folder(out, manifest.ROOT)
    written = [n for n, files in trees.items() if replace_tree(out / n, files, manifest.ROOT)]
    count = sum(len(f) - 1 for f in trees.values())
    print(f"snippets: {count} snippet(s) of {len(trees)} lesson(s) in {display_path(out)} "
          f"({len(written)} lesson folder(s) rewritten)")


def _render_pages(lessons, targets: list[str], check: bool):
    """render_all's pages written (with `check`, compared) and the figures
    no page uses any more removed: (files, written, stale lessons, orphans)."""
    from .pages import render

    files, stale_lessons, orphans = render.render_all(lessons, targets)
    if check and orphans:
        raise OutOfDateError([f"{display_path(p)}: a figure no page uses any more; run: tools/course render"
                              for p in orphans])
    written = write_changed(files, manifest.ROOT, removed=orphans,
                            check_hint="tools/course render (or the build: cmake --build build)" if check else "")
    return files, written, stale_lessons, orphans


def cmd_render(args) -> None:
    lessons, chosen = _lessons(args.lesson)
    files, written, stale_lessons, orphans = _render_pages(lessons, [l.target for l in chosen], args.check)
    for target, reasons in stale_lessons:
        print(f"render: {target}: its code changed since the promoted run ({'; '.join(reasons)}); "
              "the page says UNVERIFIED at the top and keeps its figures marked as the older code's. "
              "To fix: record on a GPU and promote (research/REVIEW-PROCESS.md), or revert the change.",
              file=sys.stderr)
    if args.check:
        print(f"render: {len(files)} generated file(s) up to date")
    else:
        print(f"render: {len(written)} of {len(files)} generated file(s) written"
              + (": " + ", ".join(display_path(p) for p in written) if written else " (all up to date)")
              + (f"; removed {len(orphans)} unused figure(s)" if orphans else ""))


def cmd_readability(args) -> None:
    """Each page's teaching part against pages/readability.py's targets."""
    from .pages import readability

    _, chosen = _lessons(args.lessons)
    misses = []
    for lesson in chosen:
        page = lesson.path / "README.md"
        reading = readability.read(page.read_text(encoding="utf-8") if page.is_file() else "")
        m = reading.measures()
        print(f"{lesson.target}: {m['sentences']} sentences, mean {m['mean_words']:.1f} words, 90th percentile "
              f"{m['p90_words']}, longest {m['max_words']}; {m['about_proof_share']:.0%} about the proof; "
              f"{m['intervals_per_section']} intervals in one section at most; {m['big_percentages']} "
              f"percentages of 150% or more; {m['words_before_first_table']} words before the first table or figure")
        misses += [Diagnostic(display_path(page), 0, 0, f"teaching part: {x}") for x in reading.misses()]
    if misses:
        raise SourceError(misses)


def cmd_page_api(args) -> None:
    """The page API as its code states it (so the list cannot fall behind):
    each public helper of `page` and `lesson`, its signature and docstring."""
    import inspect

    from .pages.page import LessonView, Page

    helpers = {f"{prefix}.{name}": fn for prefix, cls in (("page", Page), ("lesson", LessonView))
               for name, fn in sorted(inspect.getmembers(cls, inspect.isfunction))
               if not name.startswith("_")}
    helpers["snippet"] = Page.snippet
    if args.name:
        if args.name not in helpers:
            raise UsageError(f"no helper '{args.name}'; the helpers: {', '.join(helpers)}")
        helpers = {args.name: helpers[args.name]}
    for shown, fn in helpers.items():
        plain = inspect.signature(fn)
        params = [q.replace(annotation=inspect.Parameter.empty) for q in plain.parameters.values() if q.name != "self"]
        sig = plain.replace(parameters=params, return_annotation=inspect.Signature.empty)
        print(f"{shown}{sig}")
        doc = inspect.getdoc(fn) or ""
        text = doc if args.name else doc.split("\n\n")[0]
        print("".join(f"    {line}\n" for line in text.splitlines()), end="")
    if not args.name:
        print("\none helper whole: tools/course page-api page.plot; fields a selector may name: the rows' "
              "(build/bin/DAY --list --json F lists them)")


def cmd_prose(args) -> None:
    from .pages import prose

    lessons, chosen = _lessons(args.lesson)
    problems = prose.check(lessons, [l.target for l in chosen])
    if problems:
        raise SourceError(problems)
    print(f"prose: every number in {len(chosen)} page(s) comes from a page helper or a stated constant")


def cmd_standalone(args) -> None:
    from .sources import standalone

    out = Path(args.output)
    files = {f"{l.target}.cu": standalone.standalone_text(l) for l in manifest.load()}
    if args.check:
        write_changed({out / n: t for n, t in files.items()}, manifest.ROOT,
                      check_hint=f"tools/course standalone -o {display_path(out)}")
        print(f"standalone: {display_path(out)} is up to date")
        return
    ensure_owned_folder(out, manifest.ROOT)
    replace_tree(out, files, manifest.ROOT)
    print(f"standalone: {len(files)} single-file program(s) in {display_path(out)}")


def cmd_check(args) -> None:
    """One day, quickly: what an author runs after each edit."""
    import subprocess
    import time

    from .binaries import sass
    from .evidence import state as ev_state
    from .evidence import verify
    from .pages import prose
    from .sources import lint, snippets

    t0 = time.monotonic()
    build = manifest.build_dir()
    if manifest.TARGET_RE.match(args.lesson) and (build / "CMakeCache.txt").is_file():
        # Built before the manifest is read: after an edit of a day's
        # CMakeLists.txt, cmake --build configures again, which writes the
        # manifest afresh (a failure is reported by the build below).
        subprocess.run(["cmake", "--build", str(build), "--parallel", "2", "--target", args.lesson],
                       capture_output=True, text=True)
    lessons, (lesson,) = _lessons([args.lesson])
    said: list[str] = []
    # Its timeline build too: the page's timeline rows are checked against
    # what that program lists.
    targets = [lesson.target] + ([lesson.timeline_target] if lesson.timeline_target else [])
    proc = subprocess.run(["cmake", "--build", str(build), "--parallel", "2", "--target", *targets],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()][-15:]
        raise SourceError(tail + [f"check: {lesson.target}: the build failed (cmake --build {display_path(build)} "
                                  f"--target {' '.join(targets)})"])
    print(f"check: {lesson.target}: built")
    # Formatting first: fixing it moves the lines a snippet shows, so the
    # page is rendered again after it (ctest's `format` test checks it too).
    try:
        version, count = lint.check_format(only=[manifest.ROOT / s for s in lesson.sources])
        print(f"check: {lesson.target}: {count} source(s) formatted as the style says")
    except SourceError as e:
        said += [str(d) for d in e.diagnostics]
    except UsageError as e:
        print(f"check: {lesson.target}: formatting not checked ({e})")
    # The evidence's state as the build writes it (after a configure or an
    # edit the file is older than what it covers): an author's check of a
    # day with no record yet is not a question of stale evidence.
    covers = ev_state.fingerprint(lessons, manifest.build_dir())
    ev_state.write(verify.lesson_states(lessons), lessons, covers=covers)
    found, diags = snippets.extract(lesson.snippet_files, manifest.ROOT)
    others = sorted({str(manifest.ROOT / s) for l in lessons if l.target != lesson.target for s in l.sources})
    said += [str(d) for d in diags + snippets.course_wide(found, others, manifest.ROOT)]
    own = [s for s in found if s.path in lesson.sources]
    print(f"check: {lesson.target}: {len(own)} snippet(s) of its own, {len(found) - len(own)} from the header")
    # The page written as `tools/course render` writes it (only where it
    # renders without a problem: nothing is half-written).
    state = ev_state.of(lesson)
    try:
        _, written, _, _ = _render_pages(lessons, [lesson.target], False)
        print(f"check: {lesson.target}: page rendered ({state.state}), "
              + (f"{len(written)} file(s) written" if written else "up to date"))
    except SourceError as e:
        said += [str(d) for d in e.diagnostics if not str(d).endswith("nothing written")]
    if not state.valid:
        # No record of this code to render from: the template is checked
        # against the rows the program says it will make (--list).
        from .pages import listed

        diags, checked = listed.check(lesson)
        said += [str(d) for d in diags]
        if checked:
            print(f"check: {lesson.target}: {checked}")
    said += [str(d) for d in prose.check(lessons, [lesson.target])]
    print(f"check: {lesson.target}: prose read")
    try:
        held, skipped = sass.check_all([lesson])
        print(f"check: {lesson.target}: {held} machine-code pattern(s) of lesson.toml's [[sass]] hold"
              + (f", {skipped} for newer machine code" if skipped else ""))
    except SourceError as e:
        said += [str(d) for d in e.diagnostics]
    said = list(dict.fromkeys(said))  # a template's problem, met by the render and again by the checks after it
    if said:
        raise SourceError(said + [f"check: {lesson.target}: {len(said)} problem(s)"])
    print(f"check: {lesson.target}: all good in {time.monotonic() - t0:.0f} s; on a GPU: ctest --preset course -R "
          f"{lesson.target}; everything: ctest --preset course")


def cmd_new(args) -> None:
    from .sources import scaffold

    written = scaffold.new_lesson(args.name, args.topic, args.min_cc)
    print("new: wrote " + ", ".join(display_path(p) for p in written))
    print(f"new: configure so the build knows it (cmake --preset course), then check it alone: tools/course check "
          f"{args.name} (about a minute); the page's helpers: tools/course page-api; everything: the README's "
          "two commands")


def cmd_record(args) -> None:
    from .record import format as record_format
    from .record import run
    from .rule import resolution

    build = Path(args.build_dir) if args.build_dir else manifest.build_dir()
    lessons = manifest.load(build / "course-manifest.json")  # a bad manifest is a one-line error here
    info = json.loads((build / "course-manifest.json").read_text(encoding="utf-8"))
    lesson = manifest.find(lessons, args.lesson)
    path = run.record(lesson, args.tag, args.commit, args.clean, build=build, extra_args=args.args,
                      profile=not args.no_profile, timeline=not args.no_timeline, nvbench=not args.no_nvbench,
                      review=Path(args.review) if args.review else None, manifest_info=info,
                      refuse=resolution.disagreements)
    rec = record_format.load_record(path)
    print(f"record: wrote {display_path(path)}: exit code {rec['exit_code']}, {rec['gpu']['name']}, "
          f"executable {rec['executable']['sha256'][:12]}, sources {rec['sources']['digest'][:12]}; "
          "commit it, promoted or not")


def cmd_promote(args) -> None:
    from .evidence import promote

    _, (lesson,) = _lessons([args.lesson])
    entry = promote.promote(lesson, args.tag, args.by, Path(args.key))
    print(f"promote: {', '.join(entry['records'])} promoted for {lesson.target} as one set ({len(entry['gpus'])} "
          f"GPUs), signed by {entry['principal']} ({entry['promoted_by']}) in evidence/promoted.json; now run: "
          "cmake --build --preset course (or tools/course evidence state, then render)")


def cmd_verify(args) -> None:
    from .evidence import store, verify

    lessons = manifest.load()
    problems = verify.verify(lessons)
    if problems:
        raise EvidenceError([f"evidence: {p}" for p in problems]
                            + ["evidence: to fix: record on a GPU and promote again (research/REVIEW-PROCESS.md)"])
    promoted = store.load_promotions()["promoted"]
    records = sum(len(verify.entry_records(e)) for e in promoted.values())
    print(f"evidence: {len(promoted)} promotion(s) of {records} record(s): signatures valid, records intact, "
          "every promotion rule holds for today's sources")


def cmd_state(args) -> None:
    from .evidence import state, verify

    lessons = manifest.load()
    out = Path(args.output)
    check_no_links_between(out, manifest.ROOT) if manifest.ROOT in out.resolve().parents else None
    covers = state.fingerprint(lessons, manifest.build_dir())  # before verify reads anything
    path = state.write(verify.lesson_states(lessons), lessons, out, covers=covers)
    print(f"state: {display_path(path)}: {len(lessons)} lesson(s)")


def cmd_status(args) -> None:
    from .evidence import verify

    for lesson in manifest.load():
        st = verify.state_of(lesson)
        where = f" ({st.entry['tag']}, {st.entry.get('gpu')})" if st.entry else ""
        print(f"day {lesson.day:>3}  {lesson.target:<28} {st.state}{where}")
        for r in st.reasons if not st.valid else []:
            print(f"      {r}")


def cmd_compare(args) -> None:
    from .record import format as record_format
    from .rule import carry, compare

    _, (lesson,) = _lessons([args.lesson])
    if args.rows:
        recs = [record_format.load_record(record_format.record_path(lesson, t)) for t in (args.tag_a, args.tag_b)]
        table = compare.compare_records(*recs)
        if args.json:
            print(json.dumps({"lesson": lesson.target, "a": args.tag_a, "b": args.tag_b, "rows": table}, indent=1))
        else:
            print(compare.format_comparison(table, args.tag_a, args.tag_b))
        return
    from .evidence.sides import load_side

    left, right = load_side(lesson, args.tag_a), load_side(lesson, args.tag_b)
    blocks = carry.compare(lesson, left, right)
    if args.json:
        print(json.dumps(carry.as_json(lesson, left, right, blocks), indent=1))
    elif args.all:
        print(carry.format_carry(lesson, left, right, blocks))
    else:
        print(carry.format_summary(lesson, left, right, blocks))


def cmd_add_reviewer(args) -> None:
    from .evidence import signing
    from .record.format import evidence_dir

    line = signing.public_key_line(args.principal, Path(args.key))
    name = signing.check_name(args.name)
    path = signing.allowed_signers_path(evidence_dir())
    text = signing.parse_allowed(path) if path.exists() else ""
    new = text + (f"# {name}\n" if name else "") + line + "\n"
    try:  # the file as it would be, checked whole first
        signing.check_allowed(new, display_path(path))
    except EvidenceError as e:
        raise UsageError(str(e)) from None
    write_atomic(path, new)
    print(f"add-reviewer: {args.principal} added to {display_path(path)}; commit it")


def cmd_review(args) -> None:
    from .record import review

    review.main(Path(args.build_dir), Path(args.output or Path(args.build_dir) / "review.json"), only=args.lesson)


def cmd_lint(args) -> None:
    from .sources import lint

    diags = lint.one_header()
    if diags:
        raise SourceError(diags)
    print("lint: every lesson includes common/course.cuh and none defines CUDA_CHECK or timeKernel")


def cmd_format(args) -> None:
    from .sources import lint

    version, count = lint.check_format(fix=args.fix)
    if args.fix:
        print(f"format: {version}: {count} source(s) changed, {len(lint.format_files())} checked")
    else:
        print(f"format: {version}: {count} source(s) formatted as the style says")


def cmd_sass(args) -> None:
    from .binaries import sass

    _, chosen = _lessons(args.lesson)
    checked, skipped = sass.check_all(chosen)
    print(f"sass: {checked} declared expectation(s) hold in the built binaries of {len(chosen)} lesson(s)"
          + (f"; {skipped} name instructions newer than the machine code built (not applicable here)"
             if skipped else ""))


def cmd_site(args) -> None:
    from .site import browser, build

    if args.site_command == "build":
        build.build(Path(args.output))
    else:
        browser.browser_test(Path(args.output), Path(args.screenshots))


def cmd_serve(args) -> None:
    from .site import serve

    serve.serve(args.port, manifest.build_dir() / "site")


def cmd_bench(args) -> None:
    from .pages import bench

    bench.run(args.lessons, args.snippets)
