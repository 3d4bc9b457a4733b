// SPDX-License-Identifier: MIT
//
// course/device.cuh: device code that is course content: the warp and
// block reductions several days use, day 24's two-loads block kernel
// (day 77 reuses it), and the hash that makes inputs that are not zeros.

#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace course {

// snippet: warp-shuffle-reduce
// A warp's values combined with `op` (associative), left in every lane.
// Launch assumption: all 32 lanes of the warp call it (the full mask).
template <typename T, typename Op>
__device__ inline T warpReduce(T v, Op op) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    }
    return v;
}

// A block's values combined through shuffles: each warp combines itself,
// warp 0 combines the warp totals, always in the same order (the same bits
// every run). Launch assumption: blockDim.x == kThreads, a multiple of 32,
// at most 1,024; every thread calls it, and a second call in the same
// kernel comes after a __syncthreads() (the two would share warpTotals).
// The total is valid in thread 0 (and in all of warp 0).
template <int kThreads, typename T, typename Op>
__device__ inline T blockReduce(T v, Op op) {
    static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
    __shared__ T warpTotals[kThreads / 32];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    v = warpReduce(v, op);
    if (lane == 0) {
        warpTotals[warp] = v;
    }
    __syncthreads();  // every warp's total stored before warp 0 reads them
    v = (threadIdx.x < kThreads / 32) ? warpTotals[lane] : T{};
    return warp == 0 ? warpReduce(v, op) : T{};
}

struct Plus {
    template <typename T>
    __device__ T operator()(T a, T b) const {
        return a + b;
    }
};
__device__ inline float warpSum(float v) {
    return warpReduce(v, Plus{});
}
template <int kThreads>
__device__ inline float blockSum(float v) {
    return blockReduce<kThreads>(v, Plus{});
}
// end snippet

// snippet: two-loads-block
// Day 24's version 4, the block kernel day 77 reuses: each thread adds two
// elements while loading, then the sequential-addressing tree halves the
// active threads.
//
// Launch assumption: blockDim.x == kThreads, a power of two. Every thread
// reaches every __syncthreads(); the guards cover loads, never barriers.
// After the call, tile[0] holds the block's partial.
template <int kThreads>
__device__ void reduceBlockToTile(const float* __restrict__ in, size_t n,
                                  float* tile) {
    static_assert((kThreads & (kThreads - 1)) == 0, "the tree halves");
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * static_cast<size_t>(kThreads) * 2 + tid;

    float sum = (i < n) ? in[i] : 0.0f;
    if (i + kThreads < n) {
        sum += in[i + kThreads];
    }
    tile[tid] = sum;
    __syncthreads();  // every tile slot written before the tree reads it

    for (unsigned int s = kThreads / 2; s > 0; s >>= 1) {
        if (tid < s) {
            tile[tid] += tile[tid + s];
        }
        __syncthreads();  // this level's sums complete before the next
    }
}
// end snippet

// A grid-stride loop's start and stride along x: this thread's index in
// the grid, and the grid's thread count.
__device__ inline size_t threadIndex() {
    return blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
}
__device__ inline size_t threadCount() {
    return static_cast<size_t>(gridDim.x) * blockDim.x;
}

// This thread's share of the sum of in[0, n), read as 16-byte float4s in a
// grid-stride loop; the n % 4 leftovers, at most three, go to the grid's
// first threads. Launch assumption: any grid; `in` 16-byte aligned
// (cudaMalloc gives 256).
__device__ inline float gridStrideSum(const float* __restrict__ in, size_t n) {
    const size_t n4 = n / 4;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t first = threadIndex();
    float acc = first < n - 4 * n4 ? in[4 * n4 + first] : 0.0f;
    for (size_t i = first; i < n4; i += threadCount()) {
        const float4 v = in4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    return acc;
}

// A 32-bit hash of (i, seed) to a float in [0, 1), the same on host and
// device: inputs that are not zeros, reproducible, and known to the host
// without a copy back.
__host__ __device__ inline float hashUnit(uint64_t i, uint32_t seed = 0) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^
                 static_cast<uint32_t>(i >> 32) ^ (0x9e3779b9u + seed);
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

}  // namespace course
