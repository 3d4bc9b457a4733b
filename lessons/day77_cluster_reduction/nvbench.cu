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

// The lesson's setup, for nvbench's GPU.
void setup() {
    gSms = 0;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&gSms, cudaDevAttrMultiProcessorCount, device));
    gOnes.resize(kDefaultElems);
    gSum.resize(1);
    gPartials.resize(kDefaultElems);
    course::fill(gOnes, kDefaultElems, 1.0f, nullptr);
}

// Each state's row, checked once as the lesson checks it before nvbench
// times it: the reductions sum n ones exactly, the histogram matches the
// host's counts.
void timeRow(nvbench::state& state, const course::Experiment& e) {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::string why;
    const course::Work work =
        course::checkedRow(e, state.get_string("Mode"), stream, why);
    if (!work) {
        state.skip(why);
    } else {
        state.add_element_count(kDefaultElems);
        state.exec([&](nvbench::launch& launch) { work(launch.get_stream()); });
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
}

void reductions(nvbench::state& state) {
    setup();
    course::Experiment e = firstAndCosts(kDefaultElems);
    const course::Experiment p = persistent(kDefaultElems);
    e.cases.insert(e.cases.end(), p.cases.begin(), p.cases.end());
    state.add_global_memory_reads<float>(kDefaultElems);
    timeRow(state, e);
}

void histogramBench(nvbench::state& state) {
    setup();
    timeRow(state, histogram(kDefaultElems, 4096, false));
}

}  // namespace

NVBENCH_BENCH(reductions)
    .set_name("day77_reductions")
    .add_string_axis("Mode", {"atomic", "dsm-2", "persistent-atomic"});
NVBENCH_BENCH(histogramBench)
    .set_name("day77_histogram_4096_uniform")
    .add_string_axis("Mode", {"global", "private", "cub"});

NVBENCH_MAIN
