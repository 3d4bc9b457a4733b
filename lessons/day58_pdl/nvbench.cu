// SPDX-License-Identifier: MIT
//
// Day 58's baseline and best rows timed by nvbench, NVIDIA's benchmark
// library, as a second harness: plain launches, pdl-early, and the two
// replayed from a graph, for chains of 64 steps at the lesson's three
// sizes, with the lesson's own kernels and launcher (pdl.cu, included here
// with its main renamed: nvbench brings its own). The record keeps its JSON
// beside the course's rows; the page compares the two harnesses.
//
// Build:  cmake --build build --target day58_pdl_nvbench
// Run:    build/bin/day58_pdl_nvbench --json FILE

#include "course.cuh"  // the one header (the lesson includes it too)

#define main day58_lesson_main  // the lesson's main, unused here
#include "pdl.cu"
#undef main

#include <nvbench/nvbench.cuh>

namespace {

// Every state: the chain checked once, exactly, as the lesson checks it,
// before nvbench times it.
void chainBench(nvbench::state& state) {
    const size_t n = static_cast<size_t>(state.get_int64("Elements"));
    gBuf[0].resize(n);
    gBuf[1].resize(n);
    gTable.resize(kTableSize);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    initTable<<<1, kTableSize, 0, stream>>>(gTable);
    std::string why;
    const course::Work work = course::checkedRow(
        chain(n, 64, {}), state.get_string("Schedule"), stream, why);
    if (!work) {
        state.skip(why);
    } else {
        state.add_element_count(n * 64);
        state.exec([&](nvbench::launch& launch) { work(launch.get_stream()); });
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

NVBENCH_BENCH(chainBench)
    .set_name("day58_chain")
    .add_string_axis("Schedule",
                     {"plain", "pdl-early", "graph-plain", "graph-pdl-early"})
    .add_int64_axis("Elements", {1 << 12, 1 << 18, 1 << 23});

NVBENCH_MAIN
