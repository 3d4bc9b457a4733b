"""The sandbox a page template runs in: Jinja2's immutable sandbox, only
the lesson's own folder to load from, and limits on time, memory and the
page's size."""

from __future__ import annotations

import contextlib
import re
import resource
import signal
import threading
from pathlib import Path

import jinja2
import jinja2.sandbox

from ..errors import SourceError
from ..fsutil import read_source
from ..sources import manifest, snippets
from .marks import TemplateProblem


class _Loader(jinja2.BaseLoader):
    """Templates only from the lesson's own folder, as regular files."""

    def __init__(self, folder: Path):
        self.folder = folder

    def get_source(self, environment, template):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", template) or template.startswith("."):
            raise jinja2.TemplateNotFound(template)
        path = self.folder / template
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        data = read_source(path, manifest.ROOT if manifest.ROOT in path.resolve().parents else self.folder)
        text, diags = snippets.decode(str(path), data)
        if text is None:
            raise SourceError(diags)
        return text, str(path), lambda: True


# A page is text for people: far below this. A template that builds more
# (a huge repeat, a runaway loop) is stopped, not allowed to fill a disk.
MAX_PAGE_CHARS = 4_000_000

# A page renders in well under a second of CPU time; a template that has used
# this much is a runaway loop. CPU time, not the clock's: a machine busy with
# other builds slows an honest render's clock time many times over.
RENDER_SECONDS = 30

# The address space a render may use: the tools need a few hundred MB; a
# template building gigabytes gets a MemoryError (one line, exit 1).
RENDER_MEMORY_BYTES = 3 * 2**30


@contextlib.contextmanager
def time_limit(seconds: int):
    """TemplateProblem when the block has used `seconds` of this process's
    CPU time (ITIMER_PROF: user and system time, as getrusage counts it;
    main thread only, where signals are delivered; elsewhere, no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise TemplateProblem(f"the template ran for more than {seconds} s of CPU time (a runaway loop?)")
    old = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = RENDER_MEMORY_BYTES if hard == resource.RLIM_INFINITY else min(RENDER_MEMORY_BYTES, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))  # a growing string meets MemoryError, not the OOM killer
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


class _PageSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox, with '*' and '**' bounded (a string
    repeated a trillion times is an error, not an out-of-memory kill) and
    '%' on strings refused ("%02500000000d" % 1 would build gigabytes; a
    page formats numbers through the page helpers)."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def call_binop(self, context, operator, left, right):
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > 64:
            raise TemplateProblem(f"'**' with an exponent of {right}: at most 64")
        if operator == "**" and isinstance(left, int) and abs(left).bit_length() * abs(right) > 4096:
            raise TemplateProblem("'**' would build a number of more than 4,096 bits")
        if operator == "%" and isinstance(left, (str, bytes)):
            raise TemplateProblem("'%' formatting of a string is not available in a page template; "
                                  "use the page helpers' formats")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * max(n, 0) > MAX_PAGE_CHARS:
                    raise TemplateProblem(f"'*' would build {len(seq) * n:,} items; a page holds at most {MAX_PAGE_CHARS:,}")
        return super().call_binop(context, operator, left, right)

    # String methods whose result can be far larger than their inputs.
    GROWING = frozenset(["ljust", "rjust", "center", "zfill", "expandtabs", "format", "format_map", "replace",
                         "join", "encode"])

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (Jinja's signature)
        if getattr(__obj, "__name__", None) in __self.GROWING and isinstance(getattr(__obj, "__self__", None), str):
            raise TemplateProblem(f"str.{__obj.__name__}() is not available in a page template; "
                                  "use the page helpers' formats")
        return super().call(__context, __obj, *args, **kwargs)


class _MemoryBytecode(jinja2.BytecodeCache):
    """Compiled templates kept in this process, by Jinja's own key (the
    template's name and a checksum of its source): serve renders the same
    template on every save, and compiling day 24's takes a fifth of a
    second. Every page's environment is made the same way, so one
    compiled template serves them all."""

    def __init__(self):
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket):
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket):
        self._code[bucket.key] = bucket.bytecode_to_string()


_BYTECODE = _MemoryBytecode()


def environment(folder: Path) -> jinja2.sandbox.ImmutableSandboxedEnvironment:
    # optimized=False: Jinja's optimizer folds constant expressions while it
    # compiles, outside the sandbox's checks and the time and memory limits;
    # without it, every expression is evaluated through call_binop above.
    env = _PageSandbox(loader=_Loader(folder), undefined=jinja2.StrictUndefined,
                       keep_trailing_newline=True, autoescape=False, optimized=False,
                       bytecode_cache=_BYTECODE)
    for name in ("lipsum", "cycler", "joiner", "namespace"):  # nothing a page needs; lipsum(10**7) never
        env.globals.pop(name, None)                          # ends, a namespace grows a string in a loop
    for name in ("replace", "center", "indent", "wordwrap", "format", "join", "urlize", "sum"):
        env.filters.pop(name, None)  # outputs far larger than their inputs; no page needs them
    return env
