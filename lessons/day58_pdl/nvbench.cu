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

// Every state: the chain checked once, exactly, before nvbench times it.
void chain(nvbench::state& state) {
    const size_t n = static_cast<size_t>(state.get_int64("Elements"));
    const Schedule& s =
        course::byName(kSchedules, state.get_string("Schedule"));
    const course::DeviceArray<float> buf0(n), buf1(n), table(kTableSize);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    initTable<<<1, kTableSize, 0, stream>>>(table);
    const Chain c{n, 64, {buf0, buf1}, table};
    const course::Work work = workOf(c, s, stream);
    if (c.wrongAfter(work, stream) != 0) {
        state.skip("wrong result: " + c.wrong().describe("elements"));
    } else {
        state.add_element_count(n * c.k);
        state.exec([&](nvbench::launch& launch) { work(launch.get_stream()); });
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

NVBENCH_BENCH(chain)
    .set_name("day58_chain")
    .add_string_axis("Schedule",
                     {"plain", "pdl-early", "graph-plain", "graph-pdl-early"})
    .add_int64_axis("Elements", {1 << 12, 1 << 18, 1 << 23});

NVBENCH_MAIN
