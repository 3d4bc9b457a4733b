// SPDX-License-Identifier: MIT
//
// Day 77's baselines and best rows timed by nvbench, NVIDIA's benchmark
// library, as a second harness: the first schedule's one atomic a block,
// its clusters of 2 through DSMEM and the persistent grid; the 4,096-bin
// uniform histogram by global atomics, private copies and CUB; with the
// lesson's own kernels and launchers (cluster_reduction.cu, included here
// with its main renamed: nvbench brings its own). The record keeps its
// JSON beside the course's rows; the page compares the two harnesses.
//
// Build:  cmake --build build --target day77_cluster_reduction_nvbench
// Run:    build/bin/day77_cluster_reduction_nvbench --json FILE

#include "course.cuh"  // the one header (the lesson includes it too)

#define main day77_lesson_main  // the lesson's main, unused here
#include "cluster_reduction.cu"
#undef main

#include <nvbench/nvbench.cuh>

namespace {

// Each state's row, checked once before nvbench times it: the reductions
// sum n ones exactly, the histogram matches the host's counts.
void reductions(nvbench::state& state) {
    const std::string mode = state.get_string("Mode");
    const Ones o(kDefaultElems, nullptr);
    std::vector<int> stored;
    std::vector<course::Case> rows = firstRows(o, stored);
    const std::vector<course::Case> more = persistentRows(o);
    rows.insert(rows.end(), more.begin(), more.end());
    stored.resize(rows.size(), 0);
    const course::Case& c = course::byName(rows, mode);
    const course::Checked ok = o.total(c, stored[&c - rows.data()], nullptr);
    if (!ok.ok) {
        state.skip("wrong result: " + ok.detail);
        return;
    }
    state.add_element_count(o.n);
    state.add_global_memory_reads<float>(o.n);
    state.exec([&](nvbench::launch& launch) { c.work(launch.get_stream()); });
}

void histogram(nvbench::state& state) {
    int device = 0, optin = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(
        &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    course::allowSharedMemory(histogramPrivate<false>, optin);
    const Histogram h(kDefaultElems, 4096, false, optin);
    const course::Case& c = course::byName(h.rows, state.get_string("Mode"));
    const course::Checked ok =
        course::checkOutput(nullptr, c.work, h.out.get(), h.bins,
                            [&](size_t k) { return h.want[k]; });
    if (!ok.ok) {
        state.skip("wrong result: " + ok.detail);
        return;
    }
    state.add_element_count(h.n);
    state.exec([&](nvbench::launch& launch) { c.work(launch.get_stream()); });
}

}  // namespace

NVBENCH_BENCH(reductions)
    .set_name("day77_reductions")
    .add_string_axis("Mode", {"atomic", "dsm-2", "persistent-atomic"});
NVBENCH_BENCH(histogram)
    .set_name("day77_histogram_4096_uniform")
    .add_string_axis("Mode", {"global", "private", "cub"});

NVBENCH_MAIN
