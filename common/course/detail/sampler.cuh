// SPDX-License-Identifier: MIT
//
// course/detail/sampler.cuh: one piece of work, ready to be sampled in
// one timing mode: its events, its graph (graph mode), its warm-up done.

#pragma once

#include <functional>
#include <memory>
#include <utility>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/detail/flush.cuh"
#include "course/launch.cuh"
#include "course/timing.cuh"

namespace course {
namespace detail {

class Sampler {
public:
    // `work(stream)` enqueues the work on `stream`. Graph mode captures
    // `batch` calls of it, so `stream` must be a created stream (the
    // legacy default stream cannot be captured) and the work capturable.
    Sampler(std::function<void(cudaStream_t)> work, TimingMode mode,
            const TimingOptions& opt, cudaStream_t stream)
        : work_(std::move(work)), mode_(mode), stream_(stream) {
        perSample_ = mode == TimingMode::Batch ? opt.batch : 1;
        launches_ = mode == TimingMode::Cold ? 1 : opt.batch;
        CUDA_CHECK(cudaEventCreate(&start_));
        CUDA_CHECK(cudaEventCreate(&stop_));
        if (mode == TimingMode::Graph) {
            graph_.reset(new Graph(stream, [&](cudaStream_t s) {
                for (int i = 0; i < opt.batch; ++i) {
                    work_(s);
                }
            }));
        }
        for (int i = 0; i < opt.warmup; ++i) {
            once();
        }
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    ~Sampler() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    // One sample, in milliseconds per launch, as the record keeps it. In
    // cold mode `flusher` empties the L2 first.
    double sample(L2Flusher* flusher) {
        if (flusher != nullptr) {
            flusher->flush();
        }
        CUDA_CHECK(cudaEventRecord(start_, stream_));
        for (int i = 0; i < perSample_; ++i) {
            once();
        }
        CUDA_CHECK(cudaEventRecord(stop_, stream_));
        CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return asKept(static_cast<double>(ms) / launches_);
    }

private:
    void once() {
        if (graph_) {
            graph_->launch(stream_);
        } else {
            work_(stream_);
        }
    }
    std::function<void(cudaStream_t)> work_;
    TimingMode mode_;
    cudaStream_t stream_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    std::unique_ptr<Graph> graph_;
    int perSample_ = 1, launches_ = 1;
};

}  // namespace detail
}  // namespace course
