"""`course new dayNN_topic`: a new day that builds, renders as UNVERIFIED
and passes every test at once. It writes the lesson's folder alone (the
program in the house shape, its CMakeLists.txt, page template and
lesson.toml); lessons/CMakeLists.txt finds it.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from . import manifest
from ..errors import UsageError, display_path
from ..fsutil import write_atomic

NAME_RE = re.compile(r"^day([1-9][0-9]{0,2})_([a-z][a-z0-9_]{0,27})$")
# What a topic may hold: one line that a page, a CMake argument and a JSON
# string all take as it is (CMake's course_add_lesson() holds it to the
# same set).
TOPIC_RE = re.compile(r"^[A-Za-z0-9 ,.:'+/&!?-]{1,100}$")
MIN_CC_RE = re.compile(r"^([0-9]{1,2})\.([0-9])$")

SOURCE = """// SPDX-License-Identifier: MIT
//
@TOPIC_COMMENT@//
// What the skeleton does, in the shape every day follows: each kernel
// with its launch assumption; then main, which declares the rows as one
// experiment a size (data: course::Experiment, each row a course::Case
// whose work is one launch, course::launchWork) and hands them to
// course::Lesson: every row checked exactly on data that is not zeros
// before anything is timed, then timed together (cold, batch, graph), so
// that the page's words come from the course's comparison rule. --list
// prints the plan without a GPU.
//
//   add      z[i] = x[i] + y[i], one element per thread
//   add-x4   the same, four elements per thread (a row to compare against)
//
// Build:  cmake --build build --target @TARGET@
// Run:    build/bin/@TARGET@
//          options: --size N, --only NAME, --json FILE, --seed N;
//          --list prints the plan without a GPU
//
// Whether this program has run on real hardware is not written here: the
// day's README shows the promoted run and its provenance, or says
// UNVERIFIED. See research/REVIEW-PROCESS.md.

#include "course.cuh"

// 256 threads: a whole number of warps, and enough blocks per SM to hide
// memory latency at every size worth timing.
constexpr int kThreads = 256;

// The sizes: 2^24 elements, 64 MiB a buffer and 192 MiB for the three, more
// than the L2 of the GPUs the course measures (the H200 reports 60 MiB), so
// cold and batch timing differ; --quick: a ragged size.
const course::Sizes kSizes = {.run = {1ull << 24}, .quick = {100003}};

// The three vectors, made by main's setup after the GPU gate.
course::DeviceArray<float> gX, gY, gZ;

// snippet: @SNIPPET@
// z[i] = x[i] + y[i]. Launch assumption: one thread per element, any
// block size; threads past n do nothing.
__global__ void add(const float* __restrict__ x, const float* __restrict__ y,
                    float* __restrict__ z, size_t n) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        z[i] = x[i] + y[i];
    }
}
// end snippet

// The same, four elements a thread, strided by the grid so that each warp's
// loads stay contiguous. Launch assumption: any grid; fewer threads than
// elements loop.
__global__ void add4(const float* __restrict__ x, const float* __restrict__ y,
                     float* __restrict__ z, size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < n; i += stride) {
        z[i] = x[i] + y[i];
    }
}

// The rows at n elements, every one a line or two of data: a new row is
// another Case. Correct first: each row runs once on random inputs into a
// poisoned z, and every element must equal the host's float sum of the
// same inputs. "add" is timed twice: against itself, the rule's false-call
// rate.
course::Experiment experiment(size_t n) {
    const int blocks = static_cast<int>(course::ceilDiv(n, kThreads));
    return {
        .group = "add",
        .label = course::format("n=%zu", n),
        .size = n,
        .cases = {{.name = "add",
                   .work = course::launchWork(add, blocks, kThreads, 0, 0, gX,
                                              gY, gZ, n),
                   .bytes = 12.0 * n},  // x and y read, z written
                  {.name = "add-x4",
                   .work = course::launchWork(add4, course::ceilDiv(blocks, 4),
                                              kThreads, 0, 0, gX, gY, gZ, n),
                   .bytes = 12.0 * n,
                   .against = {"add"}}},
        .twins = {"add"},
        .inputs = {{"random",
                    [n](cudaStream_t s) {
                        course::fillRandom(gX, n, s, 1);
                        course::fillRandom(gY, n, s, 2);
                    }}},
        .check = course::outputIs(gZ, n, [](size_t i) {
            return static_cast<double>(course::hashUnit(i, 1) +
                                       course::hashUnit(i, 2));
        })};
}

int main(int argc, char** argv) {
    course::Lesson l(
        argc, argv,
        {.text = "Adds two vectors, checks every element, and times it.",
         .unit = "elements of each vector",
         .bytesEach = 12.0});  // x, y and z, 4 bytes each
    for (size_t n : l.sizes(kSizes)) {
        l.add(experiment(n));
    }
    return l.run([&] {
        gX.resize(l.largest());
        gY.resize(l.largest());
        gZ.resize(l.largest());
    });
}
"""

CMAKE = """course_add_lesson(@TARGET@
  DAY @DAY@
  TOPIC "@TOPIC@"
  SOURCES @FILE@
  MIN_CC @MAJOR@.@MINOR@
  TEST_ARGS --quick)
"""

TEMPLATE = """# Day {{ lesson.day }}: {{ lesson.topic }}

What this day teaches, in a paragraph: the feature, the question it
answers, and what a student should take away. (Write it; the skeleton
only adds two vectors, with one thread per element and with fewer.)

**Requirements:** compute capability {{ lesson.min_cc }} or newer.

## Build and run

```sh
{{ lesson.build_command }}
{{ lesson.run_command }}
```

Alone: `{{ lesson.compile_command }}`

## The kernel

{{ snippet("@SNIPPET@") }}
Every element is checked exactly before anything is timed. Against one
thread per element, the strided version is, cold,
**{{ page.compare({"version": "add-x4", "timing": "cold"}, {"version": "add", "timing": "cold"}, "full") }}**.

## Evidence

{{ page.expected_output() }}
"""

LESSON_TOML = """# What the tools know about this day beyond its build (see the other
# days' lesson.toml for every key).

[page]
# Numbers the page's prose may state itself; every other number comes
# from a page helper. 1 and 2: one thread per element, two vectors.
constants = [1, 2]

# What carries over to another GPU: a ratio of rows timed together.
[[carry_over]]
what = "the strided add's time over the plain add's"
a = { version = "add-x4" }
b = { version = "add" }

[[review.sanitize]]
tool = "memcheck"
args = ["--quick", "--check-only"]
why = "every access in bounds"
"""


def new_lesson(name: str, topic: str = "", min_cc: str = "7.5") -> list[Path]:
    m = NAME_RE.match(name or "")
    if not m:
        raise UsageError(f"'{name}' is not a lesson name; expected dayNN_topic: 'day', a number from 1 to 999 "
                         "without leading zeros, '_', then a lower-case letter and lower-case letters, digits and "
                         "underscores (at most 28)")
    cc = MIN_CC_RE.match(min_cc or "")
    if not cc or not ((7, 5) <= (int(cc.group(1)), int(cc.group(2))) and int(cc.group(1)) <= 12):
        raise UsageError(f"--min-cc '{min_cc}' is not a compute capability this toolkit builds for; expected "
                         "MAJOR.MINOR from 7.5 (the oldest CUDA 13 supports) to 12.x, such as 9.0")
    day, slug = int(m.group(1)), m.group(2)
    topic = topic.strip() or slug.replace("_", " ").capitalize()
    if not TOPIC_RE.match(topic):
        raise UsageError(f"--topic '{topic[:60]}' may hold letters, digits, spaces and , . : ' + / & ! ? - only "
                         "(at most 100 characters)")
    folder = manifest.ROOT / "lessons" / name
    if folder.exists():
        raise UsageError(f"{display_path(folder)}: already exists; refusing to overwrite a lesson")
    for other in sorted((manifest.ROOT / "lessons").glob("day*_*")):
        m2 = re.match(r"^day([0-9]+)_", other.name)
        if m2 and int(m2.group(1)) == day:
            raise UsageError(f"{display_path(other)}: day {day} already exists; choose another number")
    comment = "".join(f"// {line}\n" for line in textwrap.wrap(f"Day {day}: {topic} (a new lesson: replace this "
                                                              "skeleton with yours).", 74))
    # Snippet names are course-wide: the day's number makes the skeleton's its own.
    values = {"@SNIPPET@": f"day{day}-add-kernel", "@TARGET@": name, "@DAY@": str(day), "@TOPIC@": topic, "@FILE@": f"{slug}.cu",
              "@MAJOR@": cc.group(1), "@MINOR@": cc.group(2), "@TOPIC_COMMENT@": comment}
    files = {folder / f"{slug}.cu": SOURCE, folder / "CMakeLists.txt": CMAKE,
             folder / "README.md.j2": TEMPLATE, folder / "lesson.toml": LESSON_TOML}
    for path, text in files.items():
        write_atomic(path, re.sub(r"@[A-Z_]+@", lambda m: values[m.group(0)], text))
    return list(files)
