"""The prose check: no number on a page that the record or the build did
not give it.

Templates are rendered with the page helpers' output marked (marks.py).
Every number the check then finds outside those marks, read as a reader
sees it, must be one of the lesson's stated constants (lesson.toml's
[page] constants), a day of the course ("day 24"), a citation's date or
part of a link's address.

As a reader sees it, everywhere the reader looks: prose, link text, image
descriptions, inline code and fenced blocks (a block typed to look like
output is still typed), tables; references decoded, compatibility forms
folded, invisible characters dropped, Markdown's escapes and emphasis
removed ("2\\.4", "2**.**4" and "2&shy;.4" all read 2.4); number words
count ("three", "twice", "a third"). Digits inside a name (sm_90, v9,
H200) are part of it; with a unit after ("37x") or a lone x before
("x37") they are numbers.

Raw HTML is refused (its attributes are text no reader sees as the check
reads it), and so is a typed box (an admonition, a collapsible block, a
callout): the site draws a page's boxes, the verified one from the
evidence alone.
"""

from __future__ import annotations

import html as html_lib
import itertools
import re

from ..errors import Diagnostic
from ..evidence import state as ev_state
from ..sources import cpplex, manifest, snippets
from ..sources.manifest import Lesson
from ..sources.snippets import FENCE_RE, fence_step
from . import claims, marks, render
from .rows import UNMEASURED
from .numbers import NUMBER_WORDS, as_read, folded, typed, unescaped

# A date as a citation writes it: a real one (no 0037-00-00).
DATE_RE = re.compile(r"\b(?:19|20)\d{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b")
MARKED_RE = re.compile(re.escape(marks.MARK_OPEN) + ".*?" + re.escape(marks.MARK_CLOSE), re.S)
COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_TICKS = re.compile("`+")
# CommonMark's autolink to a web address (<https://...>): its text is an
# address, not prose. Any other autolink (<name:37x>, an e-mail address)
# shows its text as written, so it is read as prose.
AUTOLINK_RE = re.compile(r"<(?:https?|ftp)://[^\s<>]*>")
HTML_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?=[\s/>]|$)|<![A-Za-z\[]|<\?")
# A link's destination (not its title, which shows as a tooltip) and a
# reference definition's label and destination (not a footnote, which
# shows, nor what follows the destination).
LINK_TARGET_RE = re.compile(r"\]\(<?[^)\s>]*>?|^ {0,3}\[[^\]^][^\]]*\]:[ \t]*<?[^\s>]+>?", re.M)
URL_RE = re.compile(r"\b(?:https?|ftp)://\S+")

# How each character of the page is read.
PROSE, CODE, GONE, JOIN = "p", "c", "g", "j"  # GONE: read as a space; JOIN: read as nothing
FENCE = "f"  # a fence line: read as a space, and it ends a sentence (a block's words are not its neighbours')
# A helper's output (MARKED) is read as one number that is always allowed,
# so a digit typed against it ("{{ m }}0") joins it into one that is not.
MARKED, MARK_SENTINEL = "m", "777777777"


def _classes(text: str) -> list[str]:
    """PROSE, CODE, GONE or JOIN for every character of the page."""
    cls = [PROSE] * len(text)

    def mark_range(a: int, b: int, kind: str) -> None:
        for i in range(a, b):
            if text[i] != "\n":
                cls[i] = kind

    def code(a: int, b: int) -> None:
        for i in range(a, b):
            if cls[i] == PROSE:
                cls[i] = CODE

    for m in MARKED_RE.finditer(text):  # helpers' output: not typed text
        mark_range(m.start(), m.end(), MARKED)
    for m in COMMENT_RE.finditer(text):  # comments show as nothing: "1<!-- -->024" reads 1024
        mark_range(m.start(), m.end(), JOIN)
    # Fenced blocks: the fence lines are syntax, the lines between are code.
    pos, fence = 0, None
    for line in text.split("\n"):
        end = pos + len(line)
        after, fence_line = fence_step(fence, line)
        if fence_line:
            mark_range(pos, end, FENCE)
        elif fence is not None:
            code(pos, end)
        fence = after
        pos = end + 1
    # Inline code: a run of n backticks to the next run of exactly n.
    i, n = 0, len(text)
    while i < n:
        if text[i] != "`" or cls[i] != PROSE or (i and text[i - 1] == "\\"):
            i += 1
            continue
        j = _TICKS.match(text, i).end()
        k, close = j, -1
        while k < n and not text.startswith("\n\n", k):  # a code span does not cross a blank line
            if text[k] == "`" and cls[k] == PROSE:
                e = _TICKS.match(text, k).end()
                if e - k == j - i:
                    close = k
                    break
                k = e
            else:
                k += 1
        if close < 0:
            i = j
            continue
        mark_range(i, j, JOIN)
        code(j, close)
        mark_range(close, close + j - i, JOIN)
        i = close + j - i
    prose_only = "".join(c if k == PROSE else " " for c, k in zip(text, cls))
    for rx in (AUTOLINK_RE, LINK_TARGET_RE, URL_RE, DATE_RE):
        for m in rx.finditer(prose_only):
            mark_range(m.start(), m.end(), GONE)
    return cls


def lines_as_read(text: str) -> list[str]:
    """Each line of the page as read: prose as it shows, code as typed,
    a helper's output as one allowed number."""
    cls = _classes(text)
    out = []
    pos = 0
    for line in text.split("\n"):
        parts = []
        for kind, run in itertools.groupby(zip(line, cls[pos:pos + len(line)]), key=lambda c: c[1]):
            chunk = "".join(c for c, _ in run)
            if kind == PROSE:  # as it shows: references, escapes, emphasis and strike-through gone
                chunk = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", unescaped(chunk))
                parts.append(re.sub(r"[*_~]", "", chunk))
            elif kind == CODE:
                parts.append(chunk)
            elif kind in (GONE, FENCE):
                parts.append(" ")
            elif kind == MARKED:
                # One sentinel a helper's output: two outputs side by side
                # ("{{ a }}{{ b }}") read as one long number no helper wrote.
                parts.append(MARK_SENTINEL * max(1, chunk.count(marks.MARK_OPEN)))
        out.append(folded("".join(parts)))
        pos += len(line) + 1
    return out


def _template_line(template: str, line: str, number: str) -> int:
    """Where in the template a typed number most likely is: the first
    template line holding the number with the most of the page line's
    words beside it; 0 when no template line holds it."""
    words = set(re.findall(r"[A-Za-z]{3,}", line))
    best, best_score = 0, -1
    for n, t in enumerate(template.split("\n"), 1):
        if number not in t and number.replace(",", "") not in t and number.lower() not in t.lower():
            continue
        score = len(words & set(re.findall(r"[A-Za-z]{3,}", t)))
        if score > best_score:
            best, best_score = n, score
    return best


# A number built by arithmetic from typed numbers: each of 64, 24 and 3
# may be a stated constant, but "64 − 24 − 3 = 37", "24/3" or "sixty-four
# minus twenty-four" hands the reader a result nobody measured. Two
# numbers (a unit may follow each), at least one typed, joined by an
# operator sign, a letter x ("64x3"), a word (plus, minus, times, ...), or:
# - a dash with a space on either side ("64 - 24"): closed up between two
#   numbers ("1–8", cuda-12-8) it is a range or a name's parts; closed up
#   between three or more ("64-24-3") it is no range, unless a date;
# - a slash between exactly two numbers ("24/3"): more ("K = 4 / 16 / 64")
#   are a list of alternatives.
# A power ("2^24") is a bound's notation, left to the number check. Read
# as the check reads the page (a helper's output is one mark) and as the
# site shows it (where "64 * 3" keeps its star); an expression may wrap
# after its operator. Two helpers' numbers ("{{ a }}–{{ b }}") are theirs.
_CARDINALS = "|".join(sorted((
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "billion dozen").split(), key=len, reverse=True))
_OPERAND = (r"(?!0[xXbB][0-9a-fA-F])(?:\d+(?:,\d{3})*(?:\.\d+)?"
            r"|(?i:(?:" + _CARDINALS + r")(?:-(?:" + _CARDINALS + r"))?)(?![A-Za-z0-9_]))"
            r"(?:[^\S\n]?(?:[munµ]?s|%|[KMGT]i?B(?:/s)?)(?![A-Za-z0-9_]))?")
# Each run of spaces is matched one way only (a long run of them costs no
# more than its length).
_GAP = r"[^\S\n]*(?:[)\]]+[^\S\n]*)?"
_AFTER = r"[^\S\n]*(?:\n[^\S\n]*)?(?:[(\[]+[^\S\n]*)?"  # it may wrap after its operator, not before (a list's "- 24")
_OPERATOR = (r"[+\u2795\u2212\u2796\u00d7\u2715\u2716\u2a2f\u00b7\u22c5\u2219\u2217*\u00f7\u2797\u2215=\u2248\u2243\u2245]"
             r"|(?<=[0-9\s])[xX\u0445\u0425](?=[^\S\n]*[0-9])"  # and the Cyrillic look-alike
             r"|(?<=\s)[-\u2010\u2012\u2013]|[-\u2010\u2012\u2013](?=\s)"
             r"|(?<=\s)(?i:plus|minus|times|multiplied by|divided by|equals)(?=\s)"
             r"|(?P<slash>[/\u2044])")
ARITHMETIC_RE = re.compile(r"(?<![A-Za-z0-9_.,])(?P<a>" + _OPERAND + r")" + _GAP + r"(?P<op>" + _OPERATOR + r")" + _AFTER
                           + r"(?P<b>" + _OPERAND + r")(?![0-9]|[^\S\n]*[/\u2044][^\S\n]*[0-9])")
_SLASH_LIST_BEFORE = re.compile(r"[0-9][^\S\n]*[/\u2044][^\S\n]*$")
_DASH_CHAIN_RE = re.compile(r"(?<![A-Za-z0-9_.,\-\u2010\u2012\u2013])\d+(?:\.\d+)?(?:[-\u2010\u2012\u2013]\d+(?:\.\d+)?){2,}(?![A-Za-z0-9_])")


def arithmetic(read: str) -> list[tuple[int, str, str]]:
    """(offset, the expression as read, its first typed operand) of each
    arithmetic expression in `read` (text as the check reads it, a
    helper's output as MARK_SENTINEL) with a typed number in it."""
    out = []
    for m in ARITHMETIC_RE.finditer(read):
        if m.group("slash") and _SLASH_LIST_BEFORE.search(read, max(0, m.start() - 80), m.start()):
            continue  # "4 / 16 / 64": a list
        typed_ops = [x for x in (m.group("a"), m.group("b"))
                     if not re.match(f"(?:{MARK_SENTINEL})+(?![0-9])", x)]  # a helper's, its unit after it
        if not typed_ops:
            continue
        end = m.end("b")
        said = " ".join(read[m.start():end].replace(MARK_SENTINEL, "{helper}").split())
        out.append((m.start(), said, typed_ops[0].strip()))
    undated = DATE_RE.sub(lambda m: " " * len(m.group(0)), read)
    for m in _DASH_CHAIN_RE.finditer(undated):
        parts = re.split(r"[-\u2010\u2012\u2013]", m.group(0))
        typed_parts = [x for x in parts if not re.fullmatch(f"(?:{MARK_SENTINEL})+", x)]
        if typed_parts:
            out.append((m.start(), m.group(0).replace(MARK_SENTINEL, "{helper}"), typed_parts[0]))
    return sorted(out)


def _arithmetic_problem(shown: str, line: int, said: str) -> Diagnostic:
    return Diagnostic(shown, line, 0, f"a number built by arithmetic from typed numbers ('{said}') is typed "
                      "into the page: the reader reads a result nobody measured; take it from the record, the "
                      "build or the source with a page helper")


# How many typed numbers a page's check names before it stops: each is
# placed in the template by a scan of it, and a page of a million typed
# numbers must end in seconds, not hours.
MAX_PROBLEMS = 100


def problems_in(text: str, allowed: set[float], days: set[int], shown: str, template: str = "") -> list[Diagnostic]:
    out = []
    allowed = set(allowed) | {float(MARK_SENTINEL)}
    read_lines = lines_as_read(text)
    for n, whole in enumerate(read_lines, 1):
        if len(out) >= MAX_PROBLEMS:
            out.append(Diagnostic(shown, 0, 0, f"more than {MAX_PROBLEMS} typed numbers; fix these first"))
            break
        for number in typed(whole, allowed, days)[:MAX_PROBLEMS]:
            out.append(Diagnostic(shown, _template_line(template, whole, number) or n, 0, (
                f"the number {number} is typed into the page ('{claims.said(whole)}'); take it "
                "from the record, the build or the source with a page helper, or list it in "
                "lesson.toml [page] constants")))
    read = "\n".join(read_lines)
    page_lines = text.split("\n")
    said_at: set[int] = set()
    for at, said, operand in arithmetic(read):
        if len(said_at) >= MAX_PROBLEMS:
            break
        n = read.count("\n", 0, at) + 1
        if n not in said_at:  # one expression a line: a chain ("64 - 24 - 3") is named once
            said_at.add(n)
            out.append(_arithmetic_problem(shown, _template_line(template, page_lines[n - 1], operand) or n, said))
    for n, line in enumerate(page_lines, 1):
        if (m := FENCE_RE.match(line)) and re.search(r"\btitle\s*=", m.group(2)):
            out.append(Diagnostic(shown, _template_line(template, line, "title") or n, 0, (
                "a code block's title shows on the site as text; write it as prose beside the "
                "block")))
    out += box_problems(text, shown, template)
    cls = _classes(text)
    prose_only = "".join(c if k == PROSE else " " for c, k in zip(text, cls))
    # Claims in words: the prose and typed code as read, a helper's output
    # as one mark; a fence line ends a sentence.
    view = [c if k in (PROSE, CODE) else "\x00" if k == MARKED else "\n" if c == "\n" or k == FENCE else " "
            for c, k in zip(text, cls)]
    for m in MARKED_RE.finditer(text):
        if text.startswith(marks.SHOWN, m.start() + 1):  # shown, not measured: no claim rests on it
            view[m.start():m.end()] = [" " if c == "\x00" else c for c in view[m.start():m.end()]]
    view = "".join(view)

    def line_of(at: int) -> int:
        n = text.count("\n", 0, at)
        word = claims.CLAIM_RE.search(view, at)
        return _template_line(template, page_lines[n], word.group(0) if word else "") or n + 1
    out += claims.claim_problems(text, view, "\x00", shown, line_of)
    for m in HTML_TAG_RE.finditer(prose_only):
        line = text.count("\n", 0, m.start()) + 1
        tline = _template_line(template, page_lines[line - 1], m.group(0)) or line
        out.append(Diagnostic(shown, tline, 0, f"raw HTML ('{text[m.start():m.start() + 40].splitlines()[0]}') in "
                              "the page; write Markdown"))
    return out


# A box: an admonition or a collapsible block (`!!!`, `???`, also in a
# quote or a list item), GitHub's callout (`> [!NOTE]`), or a tag that
# draws one or takes the site's classes: a typed box could pass for the
# site's "Verified" one. Looked for in code too, references decoded: a
# fence the check reads and the site does not ("~~~ !") shows as Markdown.
BOX_RE = re.compile(r"^[ \t>\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000\ufeff\\]*"
                    r"(?:(?:[-*+]|\d{1,9}[.)])[ \t]+[ \t>]*)*(!!!|\?\?\?|\[![A-Za-z]+\])"
                    r"|(<details|<summary)\b|<\w[^>]*\s(class)\s*=", re.I)


def box_problems(page: str, shown: str, template: str = "") -> list[Diagnostic]:
    """A box typed into the page, named at its line; a helper's output
    is the renderer's own."""
    typed_text = MARKED_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), page)
    out = []
    for n, line in enumerate(typed_text.split("\n"), 1):
        if m := BOX_RE.search(unescaped(line)):
            at = _template_line(template, line, m.group(m.lastindex)) or n
            out.append(Diagnostic(shown, at, 0, (
                f"a box typed into the page ('{line.strip()[:60]}'); the site draws a page's "
                "boxes, the verified one from the evidence alone: write it as prose")))
    return out


# The site's Markdown, as MkDocs builds it (site/build.py's extensions):
# the check reads the page with it too, so a line its own reading takes
# for code (a fence or span the site does not open) cannot carry typed
# claims or number words to the reader.
SITE_MARKDOWN_EXTENSIONS = ["admonition", "pymdownx.details", "tables", "toc", "pymdownx.highlight",
                            "pymdownx.superfences"]
_CODE_HTML = re.compile(r"<(pre|code)\b[^>]*>.*?</\1>", re.S | re.I)
_TAG_HTML = re.compile(r"<[^>]+>")


def reader_view(page: str) -> str:
    """The page's prose as the site's Markdown engine shows it: code
    dropped, tags dropped, references decoded; a helper's output keeps
    its marks (the engine passes them through as text)."""
    import markdown

    out = markdown.markdown(page, extensions=SITE_MARKDOWN_EXTENSIONS)
    out = _CODE_HTML.sub(" ", out)
    # Emphasis as the page typed it (the rule's terms are emphasized), and a
    # link's address where it cites a research note (claims.py reads both).
    out = re.sub(r"<(em|strong)>(.*?)</\1>", lambda m: f"*{m.group(2)}*" if m.group(1) == "em" else m.group(2), out,
                 flags=re.S)
    out = re.sub(r'<a\s[^>]*href="([^"]*)"[^>]*>(.*?)</a>',
                 lambda m: f"[{m.group(2)}]({m.group(1)})" if "research/" in m.group(1) else m.group(2), out, flags=re.S)
    text = _TAG_HTML.sub(" ", re.sub(r"</(p|li|h\d|td|th|tr|div|blockquote)>", "\n\n", out))
    return html_lib.unescape(text)


def reader_view_problems(page: str, allowed: set[float], days: set[int], shown: str, template: str) -> list[Diagnostic]:
    """Claims, numbers and number words in the prose the site shows (a
    link's address, a bare address or a definition the check's own
    reading took for syntax is text here if the site shows it as text)."""
    seen = reader_view(page)
    view = MARKED_RE.sub(lambda m: " " if m.group(0)[1:2] == marks.SHOWN else "\x00", seen)
    out = []

    def line_of(at: int) -> int:
        word = claims.CLAIM_RE.search(view, at)
        return _template_line(template, view[max(0, at - 60):at + 60], word.group(0) if word else "") or 0
    out += claims.claim_problems(view, view, "\x00", shown, line_of)
    numbers = set(allowed) | {float(MARK_SENTINEL)}
    for para in view.split("\n\n"):
        if len(out) >= MAX_PROBLEMS:
            break
        para = DATE_RE.sub(" ", para)  # a citation's date, as the check's own reading allows it
        read = folded(para.replace("\x00", MARK_SENTINEL))
        for at, said, operand in arithmetic(read)[:1]:
            out.append(_arithmetic_problem(shown, _template_line(template, para, operand) or 0, said))
        said = claims.said(para.replace("\x00", ""))
        for word in typed(read, numbers, days)[:MAX_PROBLEMS]:
            out.append(Diagnostic(shown, _template_line(template, para, word) or 0, 0,
                                  f"the number {word} reaches the site's page as prose ('{said}'); take it from "
                                  "a page helper"))
    return out


def unmeasured_marked(page: str, valid: bool) -> str:
    """A stale page's helpers write *(unmeasured)* in place of their
    output: it is theirs, so a claim beside it is not typed. Only where the
    evidence is not valid: the renderer refuses a verified page that shows
    the words, so typing them exempts nothing that can be promoted."""
    if valid:
        return page
    wrapped = marks.MARK_OPEN + UNMEASURED + marks.MARK_CLOSE
    pieces = re.split(f"({MARKED_RE.pattern})", page, flags=re.S)  # odd pieces: a helper's marks, left whole
    return "".join(p if i % 2 else p.replace(UNMEASURED, wrapped) for i, p in enumerate(pieces))


def check(lessons: list[Lesson], only=None) -> list[Diagnostic]:
    days = {l.day for l in lessons}
    out: list[Diagnostic] = []
    states = ev_state.load(lessons)
    for lesson in lessons:
        if (only and lesson.target not in only) or not lesson.built:
            continue  # a lesson left out of this build keeps its page (render_all)
        state = states[lesson.target]
        files, diags, _ = render.render_lesson(lesson, keep_marks=True, state=state)
        out += diags
        page = files.get(lesson.path / render.PAGE)
        if page is None:
            continue
        page = unmeasured_marked(page, state.valid)
        allowed = {float(c) for c in lesson.info.constants}
        template_path = lesson.path / render.TEMPLATE
        shown = template_path.relative_to(manifest.ROOT).as_posix()
        template = template_path.read_text(encoding="utf-8", errors="replace")
        found = problems_in(page, allowed, days, shown, template)
        # The site's reading too; a problem both readings find is named once.
        said = {(d.line, d.message.split("(")[0]) for d in found}
        found += [d for d in reader_view_problems(page, allowed, days, shown, template)
                  if (d.line, d.message.split("(")[0]) not in said]
        out += found
        out += snippet_comment_problems(lesson, allowed)
        out += topic_problems(lesson, allowed, days)
    return list(dict.fromkeys(out))  # a header's snippet is every lesson's: named once


def topic_problems(lesson: Lesson, allowed: set[float], days: set[int]) -> list[Diagnostic]:
    """The day's TOPIC (its CMakeLists.txt) is prose the site shows in its
    navigation and on the course's first page, beside no helper: a claim
    or a measured number typed there is refused as in a page."""
    topic = lesson.topic
    claim = claims.CLAIM_RE.search(claims.readable(topic)[0])
    numbers = typed(as_read(topic), allowed, days)
    built = arithmetic(as_read(topic))
    if not claim and not numbers and not built:
        return []
    cmake = lesson.path / "CMakeLists.txt"
    try:
        text = cmake.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    line = next((n for n, l in enumerate(text.split("\n"), 1) if "TOPIC" in l), 0)
    what = f"the claim '{claim.group(0)}'" if claim else f"the number {numbers[0]}" if numbers else \
        f"a number built by arithmetic ('{built[0][1]}')"
    return [Diagnostic(cmake.relative_to(manifest.ROOT).as_posix(), line, 0,
                       f"{what} is typed into the day's TOPIC ('{topic[:60]}'), which the site shows beside no "
                       "page helper; a topic names what the day teaches, its page says how rows compare (a number the "
                       "day is built on, such as its count of versions, may be listed in lesson.toml's [page] "
                       "constants)")]


# A measurement as a comment would state one: a number with a unit of
# time, bandwidth or speed-up, or a factor written before it ("x37").
_WORD_NUMBERS = "|".join(sorted((w for w in NUMBER_WORDS if len(w) > 2), key=len, reverse=True))
MEASURED_RE = re.compile(
    r"(?<![A-Za-z0-9_.])(\d[\d,]*(?:\.\d+)?|(?i:" + _WORD_NUMBERS + r"))[\s-]*"
    r"(?:ms\b|m?secs?\b|milli-?seconds?|us\b|usecs?\b|µs|micro-?seconds?|ns\b|nsecs?\b|nano-?seconds?|seconds?\b|(?<=[0-9])s\b|(?<=[0-9] )s\b|"
    r"[KMGT]i?B/s|[KMGT]i?Bps\b|[KMGT]i?B (?:a|per) second|bytes (?:a|per) second|x\b|×|%|per ?cent|pct\b|"
    r"times (?:faster|slower|quicker|as fast|more|less|the))|(?<![A-Za-z0-9_])[x×]\s?(\d[\d,]*(?:\.\d+)?)", re.I)
# A speed-up states a measurement whatever its number: "10x" is no less a
# claim where 10 is one of the lesson's constants.
FACTOR_RE = re.compile(r"(?:x\b|×|times \w+(?: \w+)?)$|^[x×](?=\d)", re.I)
# A comment's own markers, read as the space they are to its reader, so a
# number and its unit on two lines of one comment paragraph read as one.
COMMENT_MARKS = re.compile(r"(?m)(^[ \t]*(?://+|/\*+|\*+(?!/))|\*+/)")


def _comments(code: str):
    """(line, text) of each comment as its reader reads it: a block
    comment, or a run of comments on consecutive lines as one paragraph
    (a paragraph cites its note once, often at its end)."""
    out: list[list] = []
    for t in cpplex.tokens(code):
        if t.kind in ("line_comment", "block_comment"):
            if out and out[-1][2] == t.line - 1:
                out[-1][1] += "\n" + t.text
            else:
                out.append([t.line, t.text, 0])
            out[-1][2] = t.line + t.text.count("\n")
    return [(line, text) for line, text, _ in out]


def snippet_comment_problems(lesson: Lesson, allowed: set[float]) -> list[Diagnostic]:
    """A snippet is shown as written, and a comment edit keeps the
    evidence: so a comment in any of the lesson's snippets (a page's marks
    hide which lines are a snippet's) states a measurement or a comparison
    only beside the file of research/ that measured it, or with a number
    that is one of the lesson's stated constants."""
    found, _ = snippets.extract(lesson.snippet_files, manifest.ROOT)
    out = []
    for sn in found:
        for first, text in _comments(sn.text):
            if _cites(text):
                continue
            said, where = claims.readable(text)
            claim = claims.CLAIM_RE.search(said)
            plain = COMMENT_MARKS.sub(lambda m: " " * len(m.group(0)), text)
            measured = [m for m in MEASURED_RE.finditer(plain)
                        if FACTOR_RE.search(m.group(0).strip()) or not _allowed(m.group(1) or m.group(2), allowed)]
            for at, what in ([(where[claim.start()], f"makes a claim ('{claim.group(0)}')")] if claim else []) + \
                    [(m.start(), f"states a measurement ('{m.group(0)}')") for m in measured]:
                line = sn.start + first - 1 + text.count("\n", 0, at)
                out.append(Diagnostic(sn.path, line, 0, f"a comment in snippet '{sn.name}' {what}; a comment edit "
                                      "keeps the evidence, so a shown comment states a measurement or a comparison "
                                      "only beside the file of research/ that measured it (its note or experiment)"))
    return out


def _cites(text: str) -> bool:
    folder = (manifest.ROOT / "research").resolve()
    return any((folder / m.group(1)).is_file() and folder in (folder / m.group(1)).resolve().parents
               for m in re.finditer(r"\bresearch/([\w./-]*\w)", text))


def _allowed(number: str, allowed: set[float]) -> bool:
    raw = number.replace(",", "")
    # MEASURED_RE's words are NUMBER_WORDS' keys
    values = (float(raw),) if raw[0].isdigit() else NUMBER_WORDS[raw.lower()]
    return any(abs(v - a) <= 1e-9 * max(1.0, abs(a)) for v in values for a in allowed)
