// SPDX-License-Identifier: MIT
//
// Day 24's headline rows timed by nvbench, NVIDIA's benchmark library, as
// a second harness: v9, v10 and CUB at every power of two of the sweep,
// with the lesson's own kernels and launchers (reduction.cu, included here
// with its main renamed: nvbench brings its own). nvbench times each state
// cold (L2 flushed before each sample: a write over a buffer the size of
// the L2, so the timed kernel also writes back the lines that write left
// dirty, which the course's own flush avoids) and batch (launches back to
// back). The record keeps its JSON beside the course's rows; the page
// compares the two harnesses row by row.
//
// Build:  cmake --build build --target day24_reduction_nvbench
// Run:    build/bin/day24_reduction_nvbench --json FILE

#include "course.cuh"  // the one header (the lesson includes it too)

#define main day24_lesson_main  // the lesson's main, unused here
#include "reduction.cu"
#undef main

#include <nvbench/nvbench.cuh>

namespace {

// Every state at its own size, on random values (never zeros), checked
// once as the lesson checks it before nvbench times it; the buffers made
// by the lesson's own allocate(), for this size.
void sum(nvbench::state& state) {
    const size_t n = static_cast<size_t>(state.get_int64("Elements"));
    allocate(n);
    course::Experiment e = experiment("sweep", n);
    e.inputs.resize(1);
    e.inputs[0] = {"random",
                   [n](cudaStream_t s) { course::fillRandom(gIn, n, s); }};
    std::string why;
    const course::Work work =
        course::checkedRow(e, state.get_string("Row"), nullptr, why);
    if (!work) {
        state.skip(why);
        return;
    }
    state.add_element_count(n);
    state.add_global_memory_reads<float>(n);
    state.exec([&](nvbench::launch& launch) { work(launch.get_stream()); });
}

}  // namespace

NVBENCH_BENCH(sum)
    .set_name("day24_sum")
    .add_string_axis("Row", {"v9", "v10", "cub"})
    .add_int64_power_of_two_axis("Elements", nvbench::range(0, 30));

NVBENCH_MAIN
