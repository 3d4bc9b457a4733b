// SPDX-License-Identifier: MIT
//
// course/sampling.cuh: timing one piece of work in one of the three modes,
// a fixed number of samples, every sample kept. Rows that are compared
// with each other are timed together instead (course/sets.cuh).

#pragma once

#include <memory>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/detail/flush.cuh"
#include "course/detail/sampler.cuh"
#include "course/timing.cuh"

namespace course {

// Times `launch(stream)`, which enqueues the work on `stream`, for
// opt.samples samples. The work must leave its result valid after any
// number of calls; correctness is checked before timing, never during it.
// Graph mode captures the calls, so `stream` must be a created stream and
// the work capturable.
template <typename LaunchFn>
TimingResult timeKernel(LaunchFn&& launch, TimingMode mode,
                        const TimingOptions& opt, cudaStream_t stream) {
    detail::Sampler sampler(launch, mode, opt, stream);
    std::unique_ptr<L2Flusher> flusher(
        mode == TimingMode::Cold ? new L2Flusher(stream) : nullptr);
    std::vector<double> samples;
    for (int s = 0; s < opt.samples; ++s) {
        samples.push_back(sampler.sample(flusher.get()));
    }
    CUDA_CHECK(cudaGetLastError());
    return summarize(std::move(samples), mode);
}

}  // namespace course
