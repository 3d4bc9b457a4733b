// SPDX-License-Identifier: MIT
//
// Experiment (not a lesson): why is day 24's v9 about 80 ns slower than
// CUB per graph-replayed call from 4 to 256 elements, when at 1 to 3
// elements the two are level?
//
// At those sizes both are one block and one launch, so the difference is
// inside the kernel. v9 at n < 4 runs only its "leftover" scalar load; at
// n >= 4 it runs its float4 grid-stride loop once. This times, graph
// replayed (device time per call, no host launch work), one-block kernels
// that differ in that one thing:
//
//   empty      writes *out only: the floor of a launch
//   one-load   one guarded scalar load per thread, no loop
//   scalar     a guarded scalar loop over n, not unrolled
//   v9-loop    v9's loop: leftover scalar load, float4 loop, tail loop
//   v9-no-unroll  v9-loop with the compiler's unrolling of both loops
//              turned off (no trip count to compute before the loop)
//   v9-scalar  v9's kernel with a scalar path for n <= 4,096 ahead of it
//   tile16     one tile's 16 guarded scalar loads per thread, unrolled
//   v9-tile16  v9's kernel taking tile16 when its grid is one block
//   cub        cub::DeviceReduce::Sum
//
// Build and run from the repository root:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I common \
//        -o small_sum_graph research/experiments/small_sum_graph.cu
//   ./small_sum_graph

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include "course.cuh"

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr size_t kSmall = 4096;  // one tile of day 24

// day 24's gridStrideSum as it is
__device__ float v9Loop(const float* __restrict__ in, size_t n) {
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t n4 = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
    const size_t first =
        blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
    float acc[kUnroll] = {first < n - 4 * n4 ? in[4 * n4 + first] : 0.0f};
    size_t i = first;
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        float4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            v[k] = in4[i + k * stride];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            acc[k] += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    for (; i < n4; i += stride) {
        const float4 v = in4[i];
        acc[0] += (v.x + v.y) + (v.z + v.w);
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
        sum += acc[k];
    return sum;
}

// the same with the compiler's unrolling of both loops turned off
__device__ float v9LoopNoUnroll(const float* __restrict__ in, size_t n) {
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t n4 = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
    const size_t first =
        blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
    float acc[kUnroll] = {first < n - 4 * n4 ? in[4 * n4 + first] : 0.0f};
    size_t i = first;
#pragma unroll 1
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        float4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            v[k] = in4[i + k * stride];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            acc[k] += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
#pragma unroll 1
    for (; i < n4; i += stride) {
        const float4 v = in4[i];
        acc[0] += (v.x + v.y) + (v.z + v.w);
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
        sum += acc[k];
    return sum;
}

__global__ void empty(const float*, size_t, float* out) {
    if (threadIdx.x == 0)
        *out = 0.0f;
}

__global__ void oneLoad(const float* __restrict__ in, size_t n, float* out) {
    const float s =
        course::blockSum<kThreads>(threadIdx.x < n ? in[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0)
        *out = s;
}

__global__ void scalar(const float* __restrict__ in, size_t n, float* out) {
    float acc = 0.0f;
#pragma unroll 1
    for (size_t i = threadIdx.x; i < n; i += kThreads)
        acc += in[i];
    const float s = course::blockSum<kThreads>(acc);
    if (threadIdx.x == 0)
        *out = s;
}

template <bool kNoUnroll>
__global__ void v9loop(const float* __restrict__ in, size_t n, float* out) {
    cudaTriggerProgrammaticLaunchCompletion();
    const float s = course::blockSum<kThreads>(kNoUnroll ? v9LoopNoUnroll(in, n)
                                                         : v9Loop(in, n));
    if (threadIdx.x == 0)
        *out = s;
}

__global__ void v9scalar(const float* __restrict__ in, size_t n, float* out) {
    cudaTriggerProgrammaticLaunchCompletion();
    float acc = 0.0f;
    if (n <= kSmall) {
        for (size_t i = threadIdx.x; i < n; i += kThreads)
            acc += in[i];
    } else {
        acc = v9Loop(in, n);
    }
    const float s = course::blockSum<kThreads>(acc);
    if (threadIdx.x == 0)
        *out = s;
}

// One tile's sixteen guarded scalar loads per thread, unrolled so all are
// in flight at once (CUB's shape for a partial tile).
__device__ float tile16(const float* __restrict__ in, size_t n) {
    float v[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        const size_t i = threadIdx.x + k * kThreads;
        v[k] = i < n ? in[i] : 0.0f;
    }
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; ++k)
        acc += v[k];
    return acc;
}

__global__ void tileOnly(const float* __restrict__ in, size_t n, float* out) {
    const float s = course::blockSum<kThreads>(tile16(in, n));
    if (threadIdx.x == 0)
        *out = s;
}

__global__ void v9tile(const float* __restrict__ in, size_t n, float* out) {
    cudaTriggerProgrammaticLaunchCompletion();
    const float s = course::blockSum<kThreads>(gridDim.x == 1 ? tile16(in, n)
                                                              : v9Loop(in, n));
    if (threadIdx.x == 0)
        *out = s;
}

__global__ void fillOnes(float* p, size_t n) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * blockDim.x)
        p[i] = 1.0f;
}

int main(int argc, char** argv) {
    // Optional: graph launches per sample (day 24 uses 20) and the bytes
    // allocated for the input (day 24 allocates its largest size, 4 GiB).
    const int batch = argc > 1 ? std::atoi(argv[1]) : 100;
    const size_t allocBytes =
        argc > 2 ? std::strtoull(argv[2], nullptr, 10) : kSmall * sizeof(float);
    // And the stream: "nonblocking" as the lessons' (cudaStreamNonBlocking).
    const bool nonBlocking = argc > 3 && std::string(argv[3]) == "nonblocking";
    float *in, *out;
    CUDA_CHECK(cudaMalloc(&in, std::max(allocBytes, kSmall * sizeof(float))));
    CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
    fillOnes<<<16, 256>>>(in, kSmall);
    CUDA_CHECK(cudaDeviceSynchronize());  // before any other stream reads it
    size_t cubBytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cubBytes, in, out,
                                      static_cast<int64_t>(kSmall)));
    void* cubTemp;
    CUDA_CHECK(cudaMalloc(&cubTemp, cubBytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(
        &s, nonBlocking ? cudaStreamNonBlocking : cudaStreamDefault));
    course::TimingOptions opt;
    opt.samples = 51;
    opt.batch = batch;
    using K = void (*)(const float*, size_t, float*);
    struct V {
        const char* name;
        K k;
    };
    const V vs[] = {{"empty", empty},
                    {"one-load", oneLoad},
                    {"scalar", scalar},
                    {"v9-loop", v9loop<false>},
                    {"v9-no-unroll", v9loop<true>},
                    {"v9-scalar", v9scalar},
                    {"tile16", tileOnly},
                    {"v9-tile16", v9tile},
                    {"cub", nullptr}};
    std::printf(
        "graph-replayed us per call (median [q1, q3]), batch of %d, input "
        "allocation %zu bytes, %s stream\n",
        opt.batch, allocBytes, nonBlocking ? "non-blocking" : "default");
    std::printf("%8s", "n");
    for (const V& v : vs)
        std::printf(" %22s", v.name);
    std::printf("\n");
    for (size_t n : {1, 3, 4, 8, 64, 256, 512, 1024, 2048, 4096}) {
        std::printf("%8zu", n);
        for (const V& v : vs) {
            // check first: the sum of n ones is n (on the stream, which
            // need not wait for the legacy default stream, nor it for us)
            CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), s));
            auto go = [&](cudaStream_t st) {
                if (v.k) {
                    v.k<<<1, kThreads, 0, st>>>(in, n, out);
                } else {
                    size_t b = cubBytes;
                    CUDA_CHECK(cub::DeviceReduce::Sum(
                        cubTemp, b, in, out, static_cast<int64_t>(n), st));
                }
            };
            go(s);
            CUDA_CHECK(cudaStreamSynchronize(s));
            float got = 0;
            CUDA_CHECK(
                cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
            const bool ok =
                v.k == empty ? got == 0.0f : got == static_cast<float>(n);
            const course::TimingResult t =
                course::timeKernel(go, course::TimingMode::Graph, opt, s);
            std::printf(" %6.3f [%5.3f,%5.3f]%s", 1000 * t.median, 1000 * t.q1,
                        1000 * t.q3, ok ? "" : "!");
        }
        std::printf("\n");
    }
    return 0;
}
