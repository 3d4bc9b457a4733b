"""What a lesson's code compiles to, read back from the built binary:
lesson.toml's [[sass]] names the kernels whose machine code its page
describes, the instructions that must be there, those that must not, and
those the page shows; `course sass` (a CTest test) checks them all.
cuobjdump and nvdisasm come from NVIDIA's PyPI wheels in the tools' venv
(a local toolkit may ship without them), else from a CUDA toolkit.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .. import cache
from ..errors import SourceError, UsageError, display_path
from ..sources import constants, manifest

INTERESTING = re.compile(r"SR_CgaCtaId|SR_SWINHI|PRMT|MAPA|\bLD\.E|\bLDS\b|UCGABAR|CGAERRBAR|CCTL"
                         r"|MEMBAR|REDG|ATOM|CLOCK")


def _tool(name: str) -> str:
    for prefix in (Path(sys.prefix), manifest.build_dir() / "venv"):
        for cand in sorted((prefix / "lib").glob(f"python*/site-packages/nvidia/cu*/bin/{name}")):
            return str(cand)
    found = shutil.which(name) or (f"/usr/local/cuda/bin/{name}" if os.path.exists(f"/usr/local/cuda/bin/{name}") else None)
    if not found:
        raise UsageError(f"{name} not found; the configure step installs it into build/venv (cmake --preset course), "
                         "or put the CUDA toolkit's bin/ on PATH")
    return found


def _signatures(fns: dict[str, list[str]]) -> dict[str, str]:
    """Each function of a dump by its mangled name, as its C++ signature."""
    return _demangled(tuple(sorted(fns)))


@functools.lru_cache(maxsize=8)
def _demangled(names: tuple[str, ...]) -> dict[str, str]:
    # binutils' c++filt, once for a binary's names (a name it cannot read stays)
    filt = shutil.which("c++filt")
    if not filt or not names:
        return {n: n for n in names}
    proc = subprocess.run([filt], input="\n".join(names) + "\n", capture_output=True, text=True)
    out = proc.stdout.split("\n")
    return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(names)}


def _base_name(signature: str) -> str:
    """'reduceBlock' from 'void reduceBlock<(Tail)0>(const float *, ...)'."""
    head = signature.split("(")[0] if not signature.startswith("(") else signature
    depth, name = 0, ""
    for ch in head:
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and ch not in "<>":
            name += ch
    words = name.split("::")[-1].split()  # none: a signature of no shape a compiler writes
    return words[-1] if words else ""


def _template_args(signature: str) -> list[str] | None:
    """The template arguments of a signature's function, each with its
    spaces and integer suffixes dropped ('void f<(Tail)0, 256u>(...)' gives
    ['(Tail)0', '256']), or None for a function that is no template's."""
    if "<" not in signature.split("(")[0]:  # none before the parameters (or a "(Enum)0" argument)
        return None
    depth, args, cur = 0, [], ""
    for ch in signature[signature.find("<"):]:
        depth += (ch == "<") - (ch == ">")
        if depth == 0 or (depth == 1 and ch == ","):
            args.append(cur)
            cur = ""
            if depth == 0:
                break
        elif not (depth == 1 and ch == "<"):
            cur += ch
    return [re.sub(r"\b(\d+)[uUlL]+\b", r"\1", "".join(a.split())) for a in args]


def _casts(enums: dict[str, int] | None) -> dict[str, str]:
    """Each enumerator as a demangled template argument: '(Chase)2'."""
    return {name: f"({name.split('::')[0]}){value}" for name, value in (enums or {}).items()}


def kernels_named(fns: dict[str, list[str]], kernel: str, enums: dict[str, int] | None = None) -> list[str]:
    """The functions of a binary a declaration means: its mangled name;
    every function named `kernel` in the source (each template instance);
    or one instance as the source spells it, 'latencyChase<Chase::RemotePtx>'
    (`enums`: constants.enum_values)."""
    if kernel in fns:
        return [kernel]
    signatures = _signatures(fns)
    if "<" not in kernel:
        return [m for m, sig in signatures.items() if _base_name(sig) == kernel]
    base = kernel[:kernel.index("<")].strip()
    casts = _casts(enums)
    wanted = [casts.get(a, a) for a in _template_args(kernel) or []]
    return [m for m, sig in signatures.items() if _base_name(sig) == base and _template_args(sig) == wanted]


def spelled(signature: str, enums: dict[str, int] | None = None) -> str:
    """'latencyChase<Chase::RemotePtx>' for 'void latencyChase<(Chase)2>(...)'."""
    names = {cast: name for name, cast in _casts(enums).items()}
    args, base = _template_args(signature), _base_name(signature)
    return base if args is None else f"{base}<{', '.join(names.get(a, a) for a in args)}>"


def instances(fns: dict[str, list[str]], base: str, enums: dict[str, int] | None = None) -> list[str]:
    """Each instance of template `base` in a binary, as the source spells it."""
    return sorted({spelled(sig, enums) for sig in _signatures(fns).values()
                   if _base_name(sig) == base and _template_args(sig) is not None})


def _known(fns: dict[str, list[str]], kernel: str, enums: dict[str, int] | None) -> str:
    """'; its instances: ...' where the binary holds instances of `kernel`'s template."""
    found = instances(fns, kernel.split("<")[0].strip(), enums)
    return f"; its instances: {', '.join(found[:8])}" if found else ""


# This module as the process loaded it: what names the memo's dumps.
_VERSION = cache.version_of(Path(__file__))


def dump(binary: Path, arch: int | None = None) -> dict[str, list[str]]:
    """Each function's instructions (for sm_<arch> alone, given `arch`) by
    mangled name, remembered in build/cache/sass.json and in this process by
    the binary's sha256."""
    if not Path(binary).exists():
        raise UsageError(f"{display_path(binary)}: not built; build it first (cmake --build build)")
    key = display_path(binary) + (f"@sm_{arch}" if arch else "")
    return _dump_of(key, hashlib.sha256(Path(binary).read_bytes()).hexdigest(), Path(binary), arch)


@functools.lru_cache(maxsize=8)
def _dump_of(key: str, sha: str, binary: Path, arch: int | None = None) -> dict[str, list[str]]:
    # A few binaries' worth (a lesson's dump with CUB in it is half a megabyte).
    memo = cache.Memo("sass", _VERSION, max_items=16)
    saved = memo.get(key)  # [sha256, functions]: the binary last read at this path
    if isinstance(saved, list) and len(saved) == 2 and saved[0] == sha and isinstance(saved[1], dict) \
            and all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in saved[1].values()):
        return saved[1]  # else not a dump (a memo written by other code, or by hand): read again
    env = dict(os.environ)
    env["PATH"] = str(Path(_tool("nvdisasm")).parent) + os.pathsep + env.get("PATH", "")
    only = ["--gpu-architecture", f"sm_{arch}"] if arch else []
    proc = subprocess.run([_tool("cuobjdump"), "--dump-sass", *only, str(binary)], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        raise UsageError(f"cuobjdump --dump-sass {display_path(binary)} failed: {proc.stderr.strip()}")
    functions: dict[str, list[str]] = {}
    current = None
    for line in proc.stdout.splitlines():
        if m := re.search(r"Function : (\S+)", line):
            current = m.group(1)
            functions[current] = []
        elif current and (m := re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(/\*.*)?$", line)):
            functions[current].append(m.group(2).rstrip(" ;"))
    memo.put(key, [sha, functions])
    memo.save()
    return functions


def excerpt(binary: Path, kernel: str, max_lines: int, show: list[str] | None = None,
            enums: dict[str, int] | None = None, arch: int | None = None) -> list[str]:
    """A kernel's instructions matching `show` (else INTERESTING), each shape once."""
    fns = dump(Path(binary), arch)
    found = kernels_named(fns, kernel, enums)
    if not found:
        raise SourceError(f"{display_path(binary)}: no kernel {kernel} in the SASS{_known(fns, kernel, enums)}")
    wanted = re.compile("|".join(f"(?:{p})" for p in show)) if show else INTERESTING
    # The first instruction of each shape: unrolled loops repeat one load many times.
    shapes: dict[str, str] = {}
    for l in (l for l in fns[found[0]] if wanted.search(l)):
        shapes.setdefault(re.sub(r"R\d+|UR\d+|0x[0-9a-f]+|P\d", "_", l), l)
    return list(shapes.values())[:max_lines]


# The CPU time one lesson's patterns may take: a real expectation takes
# milliseconds; one that backtracks exponentially never ends, and is named.
# CPU time (RLIMIT_CPU), so a busy machine never trips it; the clock's limit
# only catches a child that stops without using the CPU.
PATTERN_SECONDS = 10
WALL_SECONDS_PER_CPU_SECOND = 30

_MATCHER = """
import json, re, resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
for pattern, text in json.load(sys.stdin):
    print(1 if re.search(pattern, text) else 0, flush=True)
"""


def _matches(jobs: list[tuple[str, str]]) -> tuple[list[bool], int | None]:
    """re.search for each (pattern, text) in a child under a CPU time limit:
    the results, and the index of the job that ran out of time."""
    try:
        proc = subprocess.run([sys.executable, "-c", _MATCHER, str(PATTERN_SECONDS)], input=json.dumps(jobs),
                              capture_output=True, text=True,
                              timeout=PATTERN_SECONDS * WALL_SECONDS_PER_CPU_SECOND)
        out = proc.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        proc = None
    done = [line == "1" for line in out.split()]
    # killed at its CPU limit (SIGXCPU) inside job len(done)
    return done, len(done) if proc is None or proc.returncode != 0 or len(done) < len(jobs) else None


# Instructions only machine code for 9.0 and newer holds (programmatic
# dependent launch's ACQBULK and PREEXIT; the cluster's UCGABAR, CGAERRBAR,
# MAPA): a build for an older GPU (the course's 8.6 build) compiles the code
# out (#if __CUDA_ARCH__ >= 900), so an expectation naming one applies only
# to machine code that can hold it. nvcc 13.0: day 24's sm_90 code holds
# ACQBULK and PREEXIT, its sm_86 code neither (2026-12-01).
SINCE_ARCH = {"ACQBULK": 90, "PREEXIT": 90, "UCGABAR": 90, "CGAERRBAR": 90, "MAPA": 90}


def machine_archs(binary: Path) -> list[int]:
    """The architectures (86, 90) a binary holds machine code for."""
    env = dict(os.environ, LC_ALL="C")
    proc = subprocess.run([_tool("cuobjdump"), "--list-elf", str(binary)], capture_output=True, text=True, env=env)
    return sorted({int(a) for a in re.findall(r"\bsm_(\d+)", proc.stdout)})


def needs_arch(pattern: str) -> int:
    """The newest architecture an instruction the pattern names needs (0: any)."""
    return max((arch for name, arch in SINCE_ARCH.items() if name in pattern), default=0)


def check_all(lessons) -> tuple[int, int]:
    """How many [[sass]] expectations of the built lessons held, and how many
    name an instruction newer than the machine code; SourceError with all
    that fail, at their lesson.toml lines."""
    problems, held, skipped = [], 0, 0
    for lesson in lessons:
        if not lesson.info.sass or not lesson.built:
            continue
        fns = dump(Path(lesson.binary))
        newest = max(machine_archs(Path(lesson.binary)), default=0)
        where = f"{lesson.dir}/lesson.toml"
        jobs = []  # (pattern, function, expectation, key, its place): each pattern on each function it names
        enums = constants.enum_values(lesson)
        for i, exp in enumerate(lesson.info.sass):
            found = kernels_named(fns, exp["kernel"], enums)
            if not found:
                problems.append(f"{where}:{lesson.info.line(f'sass[{i}].kernel')}: error: kernel {exp['kernel']} "
                                f"not found in {display_path(lesson.binary)} (a name in the source, such as "
                                "reduceV9, an instance as the source spells it, such as "
                                f"latencyChase<Chase::RemotePtx>, or a mangled name){_known(fns, exp['kernel'], enums)}")
                continue
            for key in ("patterns", "absent"):
                at = f"{where}:{lesson.info.line(f'sass[{i}].{key}')}"
                for pat in exp.get(key, []):
                    if key == "patterns" and needs_arch(pat) > newest:
                        skipped += 1  # this machine code cannot hold the instruction
                        continue
                    jobs += [(pat, fn, exp, key, at) for fn in found]
        hits, hung = _matches([(pat, "\n".join(fns[fn])) for pat, fn, *_ in jobs])
        signatures = _signatures(fns) if jobs else {}
        for n, (pat, fn, exp, key, at) in enumerate(jobs):
            label = exp["kernel"] if fn == exp["kernel"] else \
                f"{exp['kernel']} ({spelled(signatures[fn], enums)}, {fn})"
            if n == hung:
                problems.append(f"{at}: error: {label}: pattern /{pat[:60]}/ ran past {PATTERN_SECONDS} s of "
                                "CPU time (it backtracks without end); write it without nested repeats")
                break
            if hits[n] == (key == "patterns"):
                held += 1
            else:
                what = f"no instruction matching /{pat}/" if key == "patterns" else \
                    f"an instruction matches /{pat}/, which must be absent"
                problems.append(f"{at}: error: {label}: {what} ({exp.get('why', '')})")
    if problems:
        raise SourceError(problems)
    return held, skipped
