// SPDX-License-Identifier: MIT
//
// Experiment (not a lesson): does programmatic dependent launch order two
// kernels on every kind of stream?
//
// Day 24's first v9 launched its one-block second pass with the PDL
// attribute on the legacy default stream, the first pass triggering at its
// top and the second pass waiting (cudaGridDependencySynchronize) before
// it read anything. The exact check caught it wrong once, at 2^28
// elements, on the H200 (record h200-2026-11-29 of day 24). Day 58, on a
// created stream, never saw a wrong result with the wait in place. This
// program repeats the v9 pattern many times on three kinds of stream and
// counts wrong sums.
//
//   producer   every thread writes 1.0f to its element of `partials`,
//              after calling the trigger first (as v9 did)
//   consumer   one block, launched with the PDL attribute, waits first,
//              then sums `partials` in a fixed order into *out
//
// The sum must equal the element count exactly (whole numbers under
// 2^24). Build and run from the repository root:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I common \
//        -o pdl_stream_kinds research/experiments/pdl_stream_kinds.cu
//   ./pdl_stream_kinds

#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "course.cuh"

constexpr int kThreads = 256;
constexpr int kTrials = 300;

__global__ void producer(float* partials, size_t n) {
    cudaTriggerProgrammaticLaunchCompletion();
    const size_t i = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
    if (i < n) {
        // A little work before the store, so the store is late.
        float v = 0.0f;
        for (int k = 0; k < 64; ++k)
            v += 1.0f / 64.0f;
        partials[i] = v;
    }
}

// v9's shape exactly: a grid of one full wave (occupancy x SMs), each
// thread striding over the input, one partial per block stored at the
// very end, after a block-wide reduction.
__global__ void producerOneWave(const float* __restrict__ in, size_t n,
                                float* __restrict__ partials) {
    cudaTriggerProgrammaticLaunchCompletion();
    __shared__ float warpTotals[kThreads / 32];
    float acc = 0.0f;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
    for (size_t i = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
         i < n; i += stride) {
        acc += in[i];
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0)
        warpTotals[threadIdx.x / 32] = acc;
    __syncthreads();  // every warp's total stored before thread 0 adds them
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < kThreads / 32; ++w)
            t += warpTotals[w];
        partials[blockIdx.x] = t;
    }
}

__global__ void consumer(const float* partials, size_t n, float* out) {
    cudaGridDependencySynchronize();
    __shared__ float warpTotals[32];
    float acc = 0.0f;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        acc += partials[i];
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0)
        warpTotals[threadIdx.x / 32] = acc;
    __syncthreads();  // the warp totals stored before warp 0 adds them
    if (threadIdx.x < 32) {
        acc = threadIdx.x < blockDim.x / 32 ? warpTotals[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1)
            acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (threadIdx.x == 0)
            *out = acc;
    }
}

// Launches the consumer with the PDL attribute behind whatever the stream
// ran last, and returns the sum it wrote.
float consumeDependent(cudaStream_t stream, const float* partials, size_t count,
                       float* out) {
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(1024);
    cfg.stream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, consumer, partials, count, out));
    float got = 0.0f;
    CUDA_CHECK(
        cudaMemcpyAsync(&got, out, sizeof got, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return got;
}

int main() {
    const cudaDeviceProp prop = course::requireGpu(
        {.name = "pdl_stream_kinds", .text = "an experiment"});
    std::printf("GPU: %s\n", prop.name);
    cudaStream_t created;
    CUDA_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
    struct Kind {
        const char* name;
        cudaStream_t stream;
    };
    const Kind kinds[] = {{"created non-blocking stream", created},
                          {"legacy default stream (0)", 0},
                          {"per-thread default stream", cudaStreamPerThread}};
    const size_t sizes[] = {1u << 16, 1u << 20, (1u << 24) - 611};
    float* partials = nullptr;
    float* out = nullptr;
    CUDA_CHECK(cudaMalloc(&partials, sizeof(float) * sizes[2]));
    CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
    std::printf("%-30s %10s %7s %7s\n", "stream", "elements", "trials",
                "wrong");
    int totalWrong = 0;
    for (const Kind& k : kinds) {
        for (size_t n : sizes) {
            int wrong = 0;
            for (int t = 0; t < kTrials; ++t) {
                CUDA_CHECK(
                    cudaMemsetAsync(partials, 0, sizeof(float) * n, k.stream));
                CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), k.stream));
                producer<<<static_cast<unsigned int>((n + kThreads - 1) /
                                                     kThreads),
                           kThreads, 0, k.stream>>>(partials, n);
                CUDA_CHECK(cudaGetLastError());
                const float got = consumeDependent(k.stream, partials, n, out);
                wrong += (static_cast<double>(got) != static_cast<double>(n));
            }
            std::printf("%-30s %10zu %7d %7d\n", k.name, n, kTrials, wrong);
            totalWrong += wrong;
        }
    }
    CUDA_CHECK(cudaFree(partials));
    CUDA_CHECK(cudaFree(out));
    // The one-wave shape: 2^28 ones reduced by occupancy x SMs blocks.
    int perSm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, producerOneWave, kThreads, 0));
    const int grid = perSm * prop.multiProcessorCount;
    const size_t big = 1u << 28;
    float* ones = nullptr;
    CUDA_CHECK(cudaMalloc(&ones, sizeof(float) * big));
    CUDA_CHECK(cudaMalloc(&partials, sizeof(float) * grid));
    CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
    {
        std::vector<float> h(big, 1.0f);
        CUDA_CHECK(cudaMemcpy(ones, h.data(), sizeof(float) * big,
                              cudaMemcpyHostToDevice));
    }
    const size_t counts[] = {(1u << 24) - 611, big};
    std::printf("\none-wave producer (%d blocks), 1-block consumer:\n", grid);
    for (const Kind& k : kinds) {
        for (size_t n : counts) {
            int wrong = 0;
            for (int t = 0; t < kTrials; ++t) {
                CUDA_CHECK(cudaMemsetAsync(partials, 0, sizeof(float) * grid,
                                           k.stream));
                producerOneWave<<<grid, kThreads, 0, k.stream>>>(ones, n,
                                                                 partials);
                CUDA_CHECK(cudaGetLastError());
                const float got = consumeDependent(
                    k.stream, partials, static_cast<size_t>(grid), out);
                wrong += (static_cast<double>(got) != static_cast<double>(n));
            }
            std::printf("%-30s %10zu %7d %7d\n", k.name, n, kTrials, wrong);
            totalWrong += wrong;
        }
    }
    CUDA_CHECK(cudaFree(ones));
    CUDA_CHECK(cudaFree(partials));
    CUDA_CHECK(cudaFree(out));
    std::printf("wrong sums in total: %d\n", totalWrong);
    CUDA_CHECK(cudaStreamDestroy(created));
    return totalWrong ? 1 : 0;
}
