// SPDX-License-Identifier: MIT
//
// course/sampling.cuh: timing a piece of work in one of the three modes,
// every sample kept.

#pragma once

#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/detail/flush.cuh"
#include "course/timing.cuh"

namespace course {

// Times `launch(stream)`, which enqueues the work on `stream`. The work
// must leave its result valid after any number of calls; correctness is
// checked before timing, never during it. Graph mode captures the calls,
// so `stream` must be a created stream (the legacy default stream cannot
// be captured) and the work must be capturable.
template <typename LaunchFn>
TimingResult timeKernel(LaunchFn&& launch, TimingMode mode,
                        const TimingOptions& opt, cudaStream_t stream) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    cudaGraphExec_t exec = nullptr;
    if (mode == TimingMode::Graph) {
        cudaGraph_t graph;
        CUDA_CHECK(
            cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < opt.batch; ++i) {
            launch(stream);
        }
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    auto once = [&] {
        if (exec != nullptr) {
            CUDA_CHECK(cudaGraphLaunch(exec, stream));
        } else {
            launch(stream);
        }
    };
    for (int i = 0; i < opt.warmup; ++i) {
        once();
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));

    std::vector<double> samples;
    L2Flusher* flusher =
        mode == TimingMode::Cold ? new L2Flusher(stream) : nullptr;
    const int perSample = mode == TimingMode::Batch ? opt.batch : 1;
    const int launchesPerSample = mode == TimingMode::Cold ? 1 : opt.batch;
    for (int s = 0; s < opt.samples; ++s) {
        if (flusher != nullptr) {
            flusher->flush();
        }
        CUDA_CHECK(cudaEventRecord(start, stream));
        for (int i = 0; i < perSample; ++i) {
            once();
        }
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(static_cast<double>(ms) / launchesPerSample);
    }
    CUDA_CHECK(cudaGetLastError());
    delete flusher;
    if (exec != nullptr) {
        CUDA_CHECK(cudaGraphExecDestroy(exec));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return summarize(std::move(samples), mode);
}

}  // namespace course
