"""The `course` command: one entry point for authors, reviewers and CI.

Exit codes: 0 done; 1 errors in sources, markers or templates; 3 --check
found a generated file out of date; 4 evidence is stale, tampered,
unsigned or not promoted; 64 wrong usage or configuration (a bad
argument, a refused output folder); 130 interrupted.
"""

from __future__ import annotations

import argparse
import signal
import sys

from . import commands as c
from .errors import (EXIT_ERRORS, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, CourseError, Interrupted,
                     UsageError, report)
from .sources import manifest


class Parser(argparse.ArgumentParser):
    """A parser whose wrong usage is exit 64 through the one error path, and
    whose subcommands describe themselves in their own --help (their
    one-line help, where no longer description is given)."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")

    def add_subparsers(self, **kw):
        action = super().add_subparsers(**kw)
        add = action.add_parser

        def add_parser(name, **kwargs):
            kwargs.setdefault("formatter_class", HelpFormatter)
            if "description" not in kwargs and "help" in kwargs:
                kwargs["description"] = kwargs["help"][:1].upper() + kwargs["help"][1:] + "."
            return add(name, **kwargs)
        action.add_parser = add_parser
        return action


class HelpFormatter(argparse.HelpFormatter):
    """Each option's default, said once: only where there is one to say (not
    for a flag, a required option, an unset one, or where the help already
    says it)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if ("default" in text or action.default in (None, False, True, [], "", argparse.SUPPRESS)
                or action.required or not action.option_strings):
            return text
        return f"{text} (default: {action.default})"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="course", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")
    b = str(manifest.build_dir())

    s = sub.add_parser("snippets", help="extract // snippet: regions into Markdown artifacts",
                       description="Extracts every `// snippet: NAME` region of the lessons (or of FILES) into NAME.md.")
    s.add_argument("files", nargs="*", help="source files to extract instead of the lessons'; needs one --lesson")
    s.add_argument("--lesson", action="append", help="a lesson (repeatable); default: every lesson")
    s.add_argument("-o", "--output", default=f"{b}/snippets", help="the folder to write (a folder this tool made, or a new one)")
    s.add_argument("--check", action="store_true", help="write nothing; exit 3 if an artifact is out of date")

    s = sub.add_parser("render", help="write each lesson's README.md (and the README's day table)",
                       description="Renders lessons/*/README.md.j2 with the promoted evidence into README.md.")
    s.add_argument("--lesson", action="append", help="only this lesson (repeatable); default: every lesson")
    s.add_argument("--check", action="store_true", help="write nothing; exit 3 if a page is out of date")

    s = sub.add_parser("prose", help="every number in a page's prose comes from a page helper",
                       description="Renders every page and fails (exit 1) on a number typed into its prose that no "
                                   "page helper produced and that is not in its lesson.toml [page] constants.")
    s.add_argument("--lesson", action="append", help="only this lesson (repeatable); default: every lesson")

    s = sub.add_parser("standalone", help="single-file copies of each day for Compiler Explorer")
    s.add_argument("-o", "--output", default=f"{b}/standalone", help="the folder to write")
    s.add_argument("--check", action="store_true", help="write nothing; exit 3 if a file is out of date")

    s = sub.add_parser("check", help="an author's fast check of one day: build it, then its snippets, page, prose "
                       "and machine code",
                       description="Builds the day's program (cmake --build on the course's build), then checks, for "
                                   "that day alone: its snippets extract, its page renders from its template and is "
                                   "up to date, its prose passes, its [[sass]] expectations hold. Every problem is "
                                   "named at once; exit 1 if any. The GPU tests are ctest's: the last line says how.")
    s.add_argument("lesson", help="the lesson: its folder's name under lessons/")

    s = sub.add_parser("page-api", help="every helper a page template can call, with its arguments")
    s.add_argument("name", nargs="?", help="one helper, in full (page.plot, lesson.constant)")

    s = sub.add_parser("readability", help="how each page's teaching part reads, against the course's targets",
                       description="For each lesson's rendered page, up to its evidence appendix: sentences' mean, "
                                   "90th percentile and longest length in words, the share of sentences about the "
                                   "proof (statistics, provenance, the GPUs' agreement), intervals a section, "
                                   "percentages of 150% or more, prose words before the first table or figure. "
                                   "Exit 1 when a page misses a target.")
    s.add_argument("lessons", nargs="*", help="lessons (default: every lesson)")

    s = sub.add_parser("new", help="scaffold a new day that builds and passes every test")
    s.add_argument("name", help="the lesson, dayNN_topic (lower-case letters, digits, underscores)")
    s.add_argument("--topic", default="", help="one line for the day's title (default: from the name)")
    s.add_argument("--min-cc", default="7.5", help="the minimum compute capability")

    e = sub.add_parser("evidence", help="record, promote, verify and compare hardware runs")
    esub = e.add_subparsers(dest="evidence_command", required=True, parser_class=Parser, metavar="ACTION")
    r = esub.add_parser("record", help="build and run a lesson on this GPU and write a record")
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
    r.add_argument("--no-nvbench", action="store_true", help="skip the nvbench benchmarks' run")
    r.add_argument("--review", help="the summary tools/course review wrote, to store with the record")
    r.add_argument("args", nargs="*", help="extra arguments for the lesson (after --)")
    r = esub.add_parser("promote", help="the reviewer's gate: check every rule, sign, promote a set of records",
                        description="Promotes records of one build made on two GPUs or more (distinct device UUIDs) "
                                    "as one set, after checking every promotion rule on each: --tag A --tag B. The "
                                    "first tag is the record the page takes its numbers from; its words are the "
                                    "words every record of the set gives.")
    r.add_argument("--lesson", required=True, help="the lesson")
    r.add_argument("--tag", required=True, action="append", help="a record's tag (repeat it: one record a GPU)")
    r.add_argument("--by", required=True, help="the reviewer's name, as it will show on the page")
    r.add_argument("--key", required=True, help="the reviewer's private SSH key (never in the repository)")
    esub.add_parser("verify",
                    help="exit 4 if promoted evidence is stale, altered, unsigned or missing")
    r = esub.add_parser("state", help="verify every promotion once and write the state the pages read",
                        description="Verifies every lesson's promotion (as verify does) and writes what it found to "
                                    "one file, which render, site, serve, compare and the browser test read. Exits 0 "
                                    "whatever it finds (a page without valid evidence says UNVERIFIED); verify is "
                                    "the check that fails.")
    r.add_argument("-o", "--output", default=f"{b}/evidence-state.json", help="the state file to write")
    esub.add_parser("status", help="each lesson's evidence state")
    r = esub.add_parser(
        "compare",
        help="what carries over between two runs: the lesson's declared ratios, each run's word beside the other's",
        description="Compares two runs of a lesson: for each ratio the lesson's page names as the one to compare "
                    "(its lesson.toml [[carry_over]]), the ratio and the comparison rule's word inside each run, "
                    "and whether the word carried over ('yes': the same word in both runs; 'no': two different decided "
                    "words; 'undecided': one run says not distinguishable). It prints a summary first; --all "
                    "prints every row. Each side is a record's tag, 'promoted' (the record the "
                    "page shows), or the path of the lesson's own --json output from any GPU, yours included. "
                    "Needs no git, writes nothing.")
    r.add_argument("lesson", help="the lesson: its folder's name under lessons/")
    r.add_argument("tag_a", metavar="A", help="a tag, 'promoted', or a --json file")
    r.add_argument("tag_b", metavar="B", help="a tag, 'promoted', or a --json file")
    r.add_argument("--rows", action="store_true",
                   help="instead: every timed row of two records, its time in each, by the rule (two runs: "
                        "says how the runs differed, not what the code does)")
    r.add_argument("--all", action="store_true",
                   help="every row of every declared ratio, not the summary (at most 15 lines) it prints first")
    r.add_argument("--json", action="store_true", help="print JSON instead of a table")
    r = esub.add_parser("add-reviewer", help="add a reviewer's public key to evidence/allowed_signers")
    r.add_argument("--principal", required=True, help="the reviewer's id in signatures, e.g. name@example.org")
    r.add_argument("--key", required=True, help="the reviewer's public key file (.pub)")
    r.add_argument("--name", default="", help="the reviewer's name, kept as a comment")

    s = sub.add_parser("serve", help="the site on 127.0.0.1, re-rendered as you edit, with live reload",
                       description="Renders every page, serves the site on 127.0.0.1 with MkDocs' server (live "
                                   "reload), and watches lessons/, common/ and research/: a saved change renders "
                                   "the pages again and the browser reloads. Ctrl-C stops it.")
    s.add_argument("--port", type=int, default=8000, help="the port on 127.0.0.1")

    s = sub.add_parser("review", help="the hardware review on a GPU machine (sanitizers, negative builds)")
    s.add_argument("--build-dir", default=str(manifest.ROOT / "build-gpu"), help="the gpu-only preset's build folder")
    s.add_argument("-o", "--output", default=None, help="the summary to write (default: BUILD_DIR/review.json)")
    s.add_argument("--lesson", action="append", help="only this lesson's steps (repeatable); default: every lesson")

    sub.add_parser("lint", help="the one-header rule")
    s = sub.add_parser("format", help="clang-format check of every source (pinned version)")
    s.add_argument("--fix", action="store_true", help="rewrite the sources instead of checking them")
    s = sub.add_parser("sass", help="check each lesson's declared machine-code expectations")
    s.add_argument("lesson", nargs="*", help="only these lessons (dayNN_topic); every lesson if none")

    s = sub.add_parser("site", help="the static site")
    ssub = s.add_subparsers(dest="site_command", required=True, parser_class=Parser, metavar="ACTION")
    x = ssub.add_parser("build", help="build the site with MkDocs (warnings are errors)")
    x.add_argument("-o", "--output", default=f"{b}/site", help="the folder to write")
    x = ssub.add_parser("test", help="open the built site in headless Chromium")
    x.add_argument("-o", "--output", default=f"{b}/site", help="the built site")
    x.add_argument("--screenshots", default=f"{b}/screenshots", help="where the screenshots go")

    s = sub.add_parser("bench", help="time extraction and rendering of a generated course")
    s.add_argument("--lessons", type=_count(1, 10_000), default=200, help="lessons to generate (1 to 10,000)")
    s.add_argument("--snippets", type=_count(1, 1_000), default=10, help="snippets per lesson (1 to 1,000)")
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
        command = args.evidence_command if args.command == "evidence" else args.command
        getattr(c, "cmd_" + command.replace("-", "_"))(args)  # `site build` and `site test` are cmd_site's
        return EXIT_OK
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
