#!/usr/bin/env python3
"""Kernel and host lines of a lesson's program, counted as the course's
issue tracker counted them on 2026-12-02: comments and blank lines dropped;
kernel code is the heads and bodies of __global__ and __device__ functions
(a template line before such a head included); every other line is host.

    python3 research/experiments/line_counts.py lessons/day58_pdl/pdl.cu ...
    python3 research/experiments/line_counts.py --parts FILE

--parts also lists the host lines of each top-level declaration (a part
starts at brace depth 0 after a line that ends one: `;`, `}` or a
preprocessor line), named by its first line, so a cut can be aimed.
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


def classify(path: str) -> tuple[list[str], list[bool]]:
    lines = code_lines(open(path, encoding="utf-8").read())
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
    return lines, kernel


def count(path: str) -> tuple[int, int]:
    lines, kernel = classify(path)
    k = sum(kernel)
    return k, len(lines) - k


def parts(path: str) -> list[tuple[str, int]]:
    """Host lines per top-level declaration, in file order."""
    lines, kernel = classify(path)
    out: list[tuple[str, int]] = []
    depth, open_part = 0, False
    for line, is_kernel in zip(lines, kernel):
        if depth == 0 and not open_part:
            out.append((line.strip()[:60], 0))
            open_part = True
        if not is_kernel:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        depth += line.count("{") - line.count("}")
        end = line.rstrip()
        if depth == 0 and (end.endswith((";", "}")) or end.lstrip().startswith("#")):
            open_part = False
    return [(name, n) for name, n in out if n]


if __name__ == "__main__":
    args = sys.argv[1:]
    show_parts = "--parts" in args
    for p in [a for a in args if a != "--parts"]:
        k, h = count(p)
        print(f"{p}: {k} kernel lines, {h} host lines")
        if show_parts:
            for name, n in parts(p):
                print(f"  {n:4d}  {name}")
