#!/usr/bin/env python3
"""Kernel and host lines of a lesson's program, counted as the course's
issue tracker counted them on 2026-12-02: comments and blank lines dropped;
kernel code is the heads and bodies of __global__ and __device__ functions
(a template line before such a head included); every other line is host.

    python3 research/experiments/line_counts.py lessons/day58_pdl/pdl.cu ...
    python3 research/experiments/line_counts.py --parts FILE ...   # host lines by declaration
"""

import re
import sys

HEAD = re.compile(r"\b__(global|device)__\b")


def code_lines(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for line in text.splitlines():
        line = re.sub(r"//.*", "", line) if '"' not in line else re.sub(r"^\s*//.*", "", line)
        if line.strip():
            out.append(line)
    return out


def kernel_flags(lines: list[str]) -> list[bool]:
    """Which of the code lines are kernel code."""
    kernel = [False] * len(lines)
    i = 0
    while i < len(lines):
        if HEAD.search(lines[i]) and not lines[i].rstrip().endswith(";"):
            start = i - 1 if i > 0 and lines[i - 1].lstrip().startswith("template") else i
            depth, seen, j = 0, False, i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                seen |= "{" in lines[j]
                if seen and depth <= 0:
                    break
                if not seen and lines[j].rstrip().endswith(";"):
                    break  # a declaration, not a definition
                j += 1
            if seen:
                for k in range(start, j + 1):
                    kernel[k] = True
            i = j + 1
        else:
            i += 1
    return kernel


def count(path: str) -> tuple[int, int]:
    kernel = kernel_flags(code_lines(open(path, encoding="utf-8").read()))
    k = sum(kernel)
    return k, len(kernel) - k


# The name a top-level declaration gives (a function, a struct or enum, a
# constant or global); an #include or another directive is named by itself.
NAME = re.compile(r"(?:struct|enum(?: class)?)\s+(\w+)|(\w+)\s*(?:\[\]\s*)?(?:=|\(|\{|;|,)")


def parts(path: str) -> dict[str, int]:
    """Host lines by the top-level declaration they belong to, in file order."""
    lines = code_lines(open(path, encoding="utf-8").read())
    out: dict[str, int] = {}
    depth = paren = held = 0  # held: a template line, counted with what it heads
    name = ""
    for line, kernel in zip(lines, kernel_flags(lines)):
        text = line.strip()
        top = depth == 0 and paren == 0 and not kernel
        if top and text.startswith("template"):
            held += 1
            continue
        if top:
            if text.startswith("#"):
                name = text.split()[0] + " " + text.split()[1] if " " in text else text
            else:
                m = NAME.search(text)
                name = (m.group(1) or m.group(2)) if m else text
        if not kernel:
            out[name] = out.get(name, 0) + 1 + held
            held = 0
        depth += line.count("{") - line.count("}")
        paren += line.count("(") - line.count(")")
    return out


if __name__ == "__main__":
    if not sys.argv[1:] or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    by_part = sys.argv[1:2] == ["--parts"]
    for p in sys.argv[1 + by_part:]:
        k, h = count(p)
        print(f"{p}: {k} kernel lines, {h} host lines")
        if by_part:
            for name, n in parts(p).items():
                print(f"  {n:4d}  {name}")
