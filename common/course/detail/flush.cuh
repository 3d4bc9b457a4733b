// SPDX-License-Identifier: MIT
//
// course/detail/flush.cuh: emptying the L2 before a cold sample.

#pragma once

#include <cstddef>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/timeline.cuh"

namespace course {

// Reads `words` 16-byte words and keeps the result observable, so the
// compiler cannot drop the loads. Launch assumption: any grid.
static __global__ void courseReadFlush(const int4* __restrict__ buf,
                                       size_t words, int* __restrict__ sink) {
    COURSE_BLOCK_BEGIN();
    int acc = 0;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < words; i += stride) {
        const int4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) {  // practically never; the store keeps the loads
        *sink = acc;
    }
    COURSE_BLOCK_END();
}

// Empties the L2 of anything the timed work could reuse: a write over a
// buffer twice the L2's size (nvbench writes one the L2's size), then a read of
// a second one. The read matters: after the write alone the L2 holds dirty
// lines, and the timed kernel would pay for writing them back as it evicts
// them, a cost that belongs to the flush.
class L2Flusher {
public:
    explicit L2Flusher(cudaStream_t stream) : stream_(stream) {
        int device = 0;
        int l2 = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        bytes_ = 2 * static_cast<size_t>(l2 > 0 ? l2 : (64 << 20));
        CUDA_CHECK(cudaMalloc(&written_, bytes_));
        CUDA_CHECK(cudaMalloc(&read_, bytes_));
        CUDA_CHECK(cudaMalloc(&sink_, sizeof(int)));
        CUDA_CHECK(cudaMemset(read_, 1, bytes_));
    }
    ~L2Flusher() {
        cudaFree(written_);
        cudaFree(read_);
        cudaFree(sink_);
    }
    L2Flusher(const L2Flusher&) = delete;
    L2Flusher& operator=(const L2Flusher&) = delete;
    void flush() {
        CUDA_CHECK(cudaMemsetAsync(written_, 0, bytes_, stream_));
        courseReadFlush<<<1024, 256, 0, stream_>>>(
            static_cast<const int4*>(read_), bytes_ / sizeof(int4), sink_);
        CUDA_CHECK(cudaGetLastError());
    }

private:
    cudaStream_t stream_;
    void* written_ = nullptr;
    void* read_ = nullptr;
    int* sink_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace course
