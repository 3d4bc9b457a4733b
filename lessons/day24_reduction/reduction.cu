// SPDX-License-Identifier: MIT
//
// Day 24: parallel reduction, from the textbook tree to a kernel that
// keeps up with CUB on the same GPU.
//
// Nine versions, each its own kernel, each one change from the last:
//
//   v1  interleaved addressing, divergent branch (tid % (2s) == 0)
//   v2  interleaved addressing, strided index: no divergence, but bank
//       conflicts in shared memory
//   v3  sequential addressing: no divergence, no conflicts
//   v4  first add during load: two loads per thread, half the blocks
//       (the block kernel day 77 reuses, snippet "two-loads-block")
//   v5  the last levels of the tree as warp shuffles, no shared memory
//   v6  many items per thread, held in registers: 16 loads in flight
//   v7  the same 16 items as four 16-byte vector loads
//   v8  a grid sized to the machine (occupancy x SMs), each thread striding
//       over the input's float4s, four loads in flight; one atomicAdd per
//       block
//   v9  v8 with a deterministic second pass in place of the atomics (as
//       cub::DeviceReduce has), run by the last block to finish, so it
//       costs no second launch
//
// v1 to v7 write one partial per block and finish with the same second
// kernel (one block, fixed order); v8 ends in atomics; v9 is v8 with a
// fixed-order second pass inside the same launch. cub::DeviceReduce::Sum and a
// device-to-device copy are rows of the same table, timed the same way, in the
// same run.
//
// Checks, for every version, before anything is timed:
//   exact     all-ones input, count under 2^24: every partial and total is
//             a whole number a float holds exactly, in any order, so the
//             result must equal the count (the trick day 77 cites).
//   random    hash-generated values in [0, 1) against a float64 sum on the
//             host, relative error under 1e-5 (see kRandomTolerance).
//
// Build:  cmake --build build --target day24_reduction
//   or:   nvcc -std=c++17 -O3 -arch=sm_90 -I common -o reduction \
//         lessons/day24_reduction/reduction.cu
// Run:    build/lessons/day24_reduction/day24_reduction
//         ... --only 9 --size 1000000        (one version, one size)
//         ... --json day24.json
//
// Needs compute capability 7.0 or newer (warp shuffles with masks); the
// course builds it for sm_90 with the other days.
//
// Whether this program has run on real hardware is not written here: the
// day's README shows the promoted run and its provenance, or says
// UNVERIFIED. See research/REVIEW-PROCESS.md.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include "course.cuh"

// 256 threads: a power of two for the trees, 8 warps, and what CUB's
// reduce policy uses for 4-byte types on sm_90 (research/cub-reduce.md).
constexpr int kThreadsPerBlock = 256;

// v6 to v9: 16 floats per thread per tile. Sixteen independent loads in
// flight per thread is what hides DRAM latency without a deep grid; CUB's
// sm_90 float policy holds 16 items per thread too.
constexpr int kItems = 16;
constexpr int kTileElems = kThreadsPerBlock * kItems;  // 4,096 floats, 16 KiB

// The second pass: one block of 1,024 threads, so the longest sequential
// chain of adds over a million partials is 1,024 long.
constexpr int kFinishThreads = 1024;

// The two default sizes: the seed's 16,776,605 (2^24 - 611: under 2^24, so
// the exact check runs at full size, and 611 = 13 x 47 leaves a ragged
// tail for every bounds check) and 2^28 (1 GiB, 18 times the H200's L2).
constexpr size_t kSeedElems = 16777216ull - 611ull;
constexpr size_t kLargeElems = 1ull << 28;

// The random check's bound. A float sum of k positive terms drifts like a
// random walk, about sqrt(k) x 2^-24 relative; the longest sequential
// chain of adds here is about 1,024 long (the second pass over a million
// partials), so errors near 2e-6 are expected and 1e-5 leaves a margin of
// five. What it is for: garbage, NaN, a lost or doubled tile (1/65,536 of
// the sum at the largest size is 1.5e-5); the exact check catches a single
// lost element.
constexpr double kRandomTolerance = 1e-5;

static_assert((kThreadsPerBlock & (kThreadsPerBlock - 1)) == 0,
              "the trees halve the stride: block size must be a power of 2");
static_assert(kItems % 4 == 0, "v7 loads the items as float4");

// v8 and v9: independent 16-byte loads per thread per trip through the
// grid-stride loop. Four keep 64 bytes per thread in flight, 128 KiB per
// SM at 8 blocks of 256: more than the ~30 KiB per SM that HBM3e's
// bandwidth x latency needs (4.8 TB/s x ~800 ns / 132 SMs).
constexpr int kUnroll = 4;

// ----------------------------------------------------------------------
// Block-level pieces
// ----------------------------------------------------------------------

// Sum of a warp's values, in every lane.
__device__ float warpSum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
}

// Block sum with shuffles. Launch assumption: blockDim.x is a multiple of
// 32 and at most 1,024. The result is valid in thread 0.
__device__ float blockSum(float v) {
    __shared__ float warpTotals[32];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    v = warpSum(v);
    if (lane == 0) {
        warpTotals[warp] = v;
    }
    __syncthreads();  // all warp totals stored before warp 0 reads them
    const unsigned int warps = blockDim.x / 32;
    v = (threadIdx.x < warps) ? warpTotals[lane] : 0.0f;
    return warp == 0 ? warpSum(v) : 0.0f;
}

// ----------------------------------------------------------------------
// v1 to v5: one partial per block of 256 (v1-v3) or 512 (v4, v5) elements
// ----------------------------------------------------------------------

// snippet: v1-interleaved-divergent
// v1. Each level, threads whose index is a multiple of 2s add the element
// s away. Correct, and slow: in every warp only some lanes pass the
// modulo test, so each warp runs the add for a few lanes while the rest
// wait, and the % is an integer division per level.
// Launch assumption: blockDim.x == kThreadsPerBlock, one element per thread.
__global__ void reduceV1(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    __shared__ float tile[kThreadsPerBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + tid;
    tile[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();  // the whole tile loaded before the tree reads it

    for (unsigned int s = 1; s < kThreadsPerBlock; s *= 2) {
        if (tid % (2 * s) == 0) {
            tile[tid] += tile[tid + s];
        }
        __syncthreads();  // this level done before the next reads it
    }
    if (tid == 0) {
        partials[blockIdx.x] = tile[0];
    }
}
// end snippet

// snippet: v2-interleaved-strided
// v2. The same additions, assigned to consecutive threads: thread t works
// on index 2st. Warps now stay whole (the first threads do all the work)
// and the modulo is gone, but at stride s the active lanes touch words 2s
// apart: from s = 16 on, a warp's 32 accesses fall into few banks and
// shared memory serializes them.
__global__ void reduceV2(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    __shared__ float tile[kThreadsPerBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + tid;
    tile[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();  // the whole tile loaded before the tree reads it

    for (unsigned int s = 1; s < kThreadsPerBlock; s *= 2) {
        const unsigned int index = 2 * s * tid;
        if (index < kThreadsPerBlock) {
            tile[index] += tile[index + s];
        }
        __syncthreads();  // this level done before the next reads it
    }
    if (tid == 0) {
        partials[blockIdx.x] = tile[0];
    }
}
// end snippet

// snippet: v3-sequential
// v3. Reverse the loop: start with the stride at half the block and halve
// it. The active threads read consecutive words, one bank each, and whole
// warps drop out together, so no warp diverges until s < 32.
__global__ void reduceV3(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    __shared__ float tile[kThreadsPerBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + tid;
    tile[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();  // the whole tile loaded before the tree reads it

    for (unsigned int s = kThreadsPerBlock / 2; s > 0; s >>= 1) {
        if (tid < s) {
            tile[tid] += tile[tid + s];
        }
        __syncthreads();  // this level done before the next reads it
    }
    if (tid == 0) {
        partials[blockIdx.x] = tile[0];
    }
}
// end snippet

// snippet: two-loads-block
// Day 24's version 4, verbatim: each thread adds two elements while
// loading, then the sequential-addressing tree halves the active threads.
//
// Launch assumption: blockDim.x == kThreadsPerBlock, a power of two. Every
// thread reaches every __syncthreads(); the guards cover loads, never
// barriers. After the call, tile[0] holds the block's partial.
__device__ void reduceBlockToTile(const float* __restrict__ in, size_t n,
                                  float* tile) {
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) * 2 + tid;

    float sum = (i < n) ? in[i] : 0.0f;
    if (i + blockDim.x < n) {
        sum += in[i + blockDim.x];
    }
    tile[tid] = sum;
    __syncthreads();  // every tile slot written before the tree reads it

    for (unsigned int s = kThreadsPerBlock / 2; s > 0; s >>= 1) {
        if (tid < s) {
            tile[tid] += tile[tid + s];
        }
        __syncthreads();  // this level's sums complete before the next
    }
}
// end snippet

// v4. Half of v3's threads sat idle after the first level; here every
// thread adds two elements on the way in, so each block covers 512
// elements and there are half as many blocks (and partials).
__global__ void reduceV4(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    __shared__ float tile[kThreadsPerBlock];
    reduceBlockToTile(in, n, tile);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = tile[0];
    }
}

// snippet: v5-warp-shuffle
// v5. The tree's last five levels ran one warp with barriers between
// levels. Shuffles move values between the lanes of a warp through
// registers: each warp sums its 32 values with five shuffles and no
// barrier, and one barrier hands the 8 warp totals to warp 0.
__global__ void reduceV5(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    const size_t i =
        blockIdx.x * static_cast<size_t>(kThreadsPerBlock) * 2 + threadIdx.x;
    float sum = (i < n) ? in[i] : 0.0f;
    if (i + kThreadsPerBlock < n) {
        sum += in[i + kThreadsPerBlock];
    }
    sum = blockSum(sum);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
    }
}
// end snippet

// ----------------------------------------------------------------------
// v6 and v7: a 4,096-element tile per block, the items in registers
// ----------------------------------------------------------------------

// snippet: v6-registers
// v6. Until now each thread had one or two loads in flight, and a block's
// whole life was one DRAM round trip. Here each thread issues kItems
// independent loads into a register array before it adds any of them, so
// 16 requests per thread are in the memory system at once. The array is
// indexed only by unrolled constants, so it stays in registers.
__global__ void reduceV6(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    const size_t base =
        blockIdx.x * static_cast<size_t>(kTileElems) + threadIdx.x;
    float items[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        const size_t i = base + static_cast<size_t>(k) * kThreadsPerBlock;
        items[k] = (i < n) ? in[i] : 0.0f;
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        sum += items[k];
    }
    sum = blockSum(sum);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
    }
}
// end snippet

// snippet: tile-vector-loads
// Adds tile `t` (kTileElems floats) into this thread's accumulator with
// four 16-byte loads per thread: thread j of the block loads float4s j,
// j + 256, j + 512 and j + 768 of the tile, so each warp instruction reads
// 512 contiguous bytes. A tile that runs past n falls back to guarded
// scalar loads. Launch assumption: blockDim.x == kThreadsPerBlock, `in` 16-byte
// aligned (cudaMalloc gives 256).
__device__ float addTileVectorized(const float* __restrict__ in, size_t n,
                                   size_t t, float acc) {
    const size_t first = t * kTileElems;
    if (first + kTileElems <= n) {
        const float4* in4 = reinterpret_cast<const float4*>(in + first);
        float4 v[kItems / 4];
#pragma unroll
        for (int k = 0; k < kItems / 4; ++k) {
            v[k] = in4[threadIdx.x + k * kThreadsPerBlock];
        }
#pragma unroll
        for (int k = 0; k < kItems / 4; ++k) {
            acc += (v[k].x + v[k].y) + (v[k].z + v[k].w);
        }
    } else {
        for (size_t i = first + threadIdx.x; i < n; i += kThreadsPerBlock) {
            acc += in[i];
        }
    }
    return acc;
}
// end snippet

// v7. v6's sixteen 4-byte loads become four 16-byte loads: a quarter of
// the load instructions for the same bytes, and each one a full 512-byte
// warp request. One tile per block, as in v6.
__global__ void reduceV7(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    const float sum = blockSum(addTileVectorized(in, n, blockIdx.x, 0.0f));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
    }
}

// ----------------------------------------------------------------------
// v8 and v9: a grid sized to the machine
// ----------------------------------------------------------------------

// snippet: v8-grid-stride
// v8. v7 still launched one block per tile: 65,536 blocks at 1 GiB, each
// paying its start, its block reduction and its store, and a machine-sized
// grid over whole tiles would leave some blocks one tile more than others
// (65,536 tiles over 1,056 blocks: 62 or 63 each, a 1.5% tail). Here the
// grid is what the GPU holds at once (occupancy x SMs), and every thread
// strides over the input's float4s with kUnroll independent 16-byte loads
// per trip, so no thread does more than one float4 more than another.
// Each block reduces once, at the end, however large n is; with about a
// thousand blocks, one atomicAdd each is cheap.
// Launch assumption: blockDim.x == kThreadsPerBlock; *sum zeroed by the
// caller; `in` 16-byte aligned.
__device__ float gridStrideSum(const float* __restrict__ in, size_t n) {
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t n4 = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreadsPerBlock;
    size_t i = blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
    float acc[kUnroll] = {};
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        float4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            v[k] = in4[i + k * stride];
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            acc[k] += (v[k].x + v[k].y) + (v[k].z + v[k].w);
        }
    }
    for (; i < n4; i += stride) {
        const float4 v = in4[i];
        acc[0] += (v.x + v.y) + (v.z + v.w);
    }
    // The n % 4 leftover floats, at most three, go to the grid's first
    // threads.
    const size_t t =
        blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
    if (t < n - 4 * n4) {
        acc[0] += in[4 * n4 + t];
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
        sum += acc[k];
    }
    return sum;
}

__global__ void reduceV8(const float* __restrict__ in, size_t n,
                         float* __restrict__ sum) {
    const float acc = blockSum(gridStrideSum(in, n));
    if (threadIdx.x == 0) {
        atomicAdd(sum, acc);
    }
}
// end snippet

// snippet: v9-two-pass
// v9. The atomics land in whatever order the blocks finish, and float
// addition is not associative: v8's last bits change from run to run.
// The fix is a second pass that adds the block partials in a fixed order.
// CUB runs it as a second kernel; here the last block to finish runs it,
// in the same launch, so there is no second launch to pay for. Each block
// stores its partial, fences, and takes a ticket; the block that draws
// the last ticket knows every partial is stored and visible, adds them
// in index order, and resets the counter for the next launch. The same
// input gives the same bits every time.
// Launch assumption: blockDim.x == kThreadsPerBlock; one launch at a
// time uses v9BlocksDone (stream order guarantees it here).
__device__ unsigned int v9BlocksDone = 0;

__global__ void reduceV9(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials,
                         float* __restrict__ out) {
    __shared__ bool lastBlock;
    const float acc = blockSum(gridStrideSum(in, n));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        // Load bearing: the partial must be visible to every SM before
        // the ticket that announces it.
        __threadfence();
        lastBlock = atomicAdd(&v9BlocksDone, 1u) == gridDim.x - 1;
    }
    __syncthreads();  // lastBlock read by every thread; warpTotals reusable
    if (lastBlock) {
        float sum = 0.0f;
        for (unsigned int b = threadIdx.x; b < gridDim.x;
             b += kThreadsPerBlock) {
            sum += __ldcg(partials + b);  // from L2: written by other SMs
        }
        sum = blockSum(sum);
        if (threadIdx.x == 0) {
            *out = sum;
            v9BlocksDone = 0;
        }
    }
}
// end snippet

// snippet: finish-partials
// The second pass every two-pass version shares. Thread j adds partials
// j, j + 1024, ... in that order; the block sum is a fixed tree. Launch
// assumption: one block of kFinishThreads threads.
__global__ void finishPartials(const float* __restrict__ partials, size_t count,
                               float* __restrict__ out) {
    float acc = 0.0f;
    for (size_t i = threadIdx.x; i < count; i += kFinishThreads) {
        acc += partials[i];
    }
    acc = blockSum(acc);
    if (threadIdx.x == 0) {
        *out = acc;
    }
}
// end snippet

// ----------------------------------------------------------------------
// Host side
// ----------------------------------------------------------------------

namespace {

// A 32-bit hash to a float in [0, 1), the same on host and device, so the
// host can compute the float64 reference without a copy of the input.
__host__ __device__ inline float hashUnit(uint64_t i) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^
                 static_cast<uint32_t>(i >> 32) ^ 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

__global__ void fill(float* out, size_t n, bool ones) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < n; i += stride) {
        out[i] = ones ? 1.0f : hashUnit(i);
    }
}

double hostRandomSum(size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) {
        s += static_cast<double>(hashUnit(i));
    }
    return s;
}

struct Buffers {
    float* in = nullptr;
    float* copy = nullptr;  // the copy row's destination
    float* partials = nullptr;
    float* out = nullptr;
    void* cubTemp = nullptr;
    size_t cubTempBytes = 0;
};

const char* const kVersionNames[] = {
    "",
    "v1 interleaved, divergent",
    "v2 interleaved, strided",
    "v3 sequential",
    "v4 two loads",
    "v5 warp shuffle",
    "v6 16 items in registers",
    "v7 float4 loads",
    "v8 grid-stride + atomics",
    "v9 grid-stride + 2nd pass",
};
constexpr int kVersions = 9;

struct Launcher {
    size_t n;
    int machineGrid;  // occupancy x SMs, for v8 and v9
    Buffers& b;

    size_t blocksFor(int v) const {
        switch (v) {
            case 1:
            case 2:
            case 3:
                return (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
            case 4:
            case 5:
                return (n + 2 * kThreadsPerBlock - 1) / (2 * kThreadsPerBlock);
            case 6:
            case 7:
                return (n + kTileElems - 1) / kTileElems;
            default: {
                // No more blocks than there are float4s to give out.
                const size_t n4 = (n + 3) / 4;
                const size_t most =
                    (n4 + kThreadsPerBlock - 1) / kThreadsPerBlock;
                return most < static_cast<size_t>(machineGrid)
                           ? most
                           : static_cast<size_t>(machineGrid);
            }
        }
    }

    // Enqueues version v; its result lands in *b.out. v8 adds into
    // *b.out, so the caller zeroes it when it wants the value.
    void operator()(int v) const {
        const unsigned int blocks = static_cast<unsigned int>(blocksFor(v));
        switch (v) {
            case 1:
                reduceV1<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials);
                break;
            case 2:
                reduceV2<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials);
                break;
            case 3:
                reduceV3<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials);
                break;
            case 4:
                reduceV4<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials);
                break;
            case 5:
                reduceV5<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials);
                break;
            case 6:
                reduceV6<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials);
                break;
            case 7:
                reduceV7<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials);
                break;
            case 8:
                reduceV8<<<blocks, kThreadsPerBlock>>>(b.in, n, b.out);
                break;
            case 9:
                reduceV9<<<blocks, kThreadsPerBlock>>>(b.in, n, b.partials,
                                                       b.out);
                break;
        }
        if (v < 8) {
            finishPartials<<<1, kFinishThreads>>>(b.partials, blocks, b.out);
        }
    }

    void cub() const {
        size_t bytes = b.cubTempBytes;
        CUDA_CHECK(cub::DeviceReduce::Sum(b.cubTemp, bytes, b.in, b.out,
                                          static_cast<int64_t>(n)));
    }
};

float runOnce(const Launcher& run, int v) {
    CUDA_CHECK(cudaMemset(run.b.out, 0, sizeof(float)));
    if (v == 0) {
        run.cub();
    } else {
        run(v);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    float got = 0.0f;
    CUDA_CHECK(cudaMemcpy(&got, run.b.out, sizeof got, cudaMemcpyDeviceToHost));
    return got;
}

std::string rowName(int v) {
    return v == 0 ? "cub::DeviceReduce::Sum" : kVersionNames[v];
}

// Checks every selected version (v = 0 is CUB) on both inputs. Returns
// the number of failures; each names the version, the input and the error.
int checkAll(course::Report& report, Launcher run, const std::vector<int>& vs,
             size_t n) {
    int failures = 0;
    char detail[256];
    // Exact: all ones, at most 2^24 - 611 of them.
    const size_t exactN = n < kSeedElems ? n : kSeedElems;
    fill<<<1024, 256>>>(run.b.in, exactN, true);
    CUDA_CHECK(cudaGetLastError());
    Launcher exactRun = run;
    exactRun.n = exactN;
    for (int v : vs) {
        const float got = runOnce(exactRun, v);
        const bool ok = static_cast<double>(got) == static_cast<double>(exactN);
        std::snprintf(detail, sizeof detail,
                      "%zu ones: got %.9g, want %zu (off by %.9g)", exactN, got,
                      exactN, static_cast<double>(exactN) - got);
        report.check(rowName(v) + " exact n=" + std::to_string(n), ok, detail);
        if (!ok) {
            std::fprintf(stderr, "%s: exact check failed: %s\n",
                         rowName(v).c_str(), detail);
            ++failures;
        }
    }
    // Random: the full size, against float64.
    fill<<<1024, 256>>>(run.b.in, n, false);
    CUDA_CHECK(cudaGetLastError());
    const double want = hostRandomSum(n);
    for (int v : vs) {
        const float got = runOnce(run, v);
        const double rel = std::fabs(got - want) / want;
        const bool ok = rel < kRandomTolerance;
        std::snprintf(detail, sizeof detail,
                      "random [0,1): got %.9g, float64 %.9g, relative error "
                      "%.2e (limit %.0e)",
                      got, want, rel, kRandomTolerance);
        std::string name = rowName(v) + " random n=" + std::to_string(n);
        if (ok && v == 9) {
            // The claim v9 exists for: the same bits, run after run.
            const float again = runOnce(run, v);
            if (again != got) {
                std::snprintf(detail, sizeof detail,
                              "two runs differ: %.9g then %.9g", got, again);
            }
            report.check(rowName(v) + " deterministic n=" + std::to_string(n),
                         again == got,
                         again == got ? "two runs bit-identical" : detail);
            if (again != got) {
                std::fprintf(stderr, "%s: %s\n", rowName(v).c_str(), detail);
                ++failures;
            }
        }
        report.check(name, ok, detail);
        if (!ok) {
            std::fprintf(stderr, "%s: random check failed: %s\n",
                         rowName(v).c_str(), detail);
            ++failures;
        }
    }
    return failures;
}

}  // namespace

int main(int argc, char** argv) {
    const char* kName = "day24_reduction";
    const course::Args args = course::Args::parse(
        kName, argc, argv,
        "--only takes a version, 1 to 9, or cub\n"
        "--size N runs one size instead of the two defaults\n");
    std::vector<int> versions;
    if (args.only.empty()) {
        for (int v = 1; v <= kVersions; ++v)
            versions.push_back(v);
    } else if (args.only == "cub") {
    } else if (args.only.size() == 1 && args.only[0] >= '1' &&
               args.only[0] <= '9') {
        versions.push_back(args.only[0] - '0');
    } else {
        args.usage(("--only does not know '" + args.only + "'").c_str(),
                   "versions: 1 to 9, or cub\n");
    }
    versions.push_back(0);  // CUB: every table's reference row

    const cudaDeviceProp prop = course::requireGpu(kName, {7, 0, false});

    std::vector<size_t> sizes;
    if (args.size) {
        sizes.push_back(args.size);
    } else if (args.quick) {
        sizes.push_back(1000003);  // a prime: ragged everywhere
    } else {
        sizes = {kSeedElems, kLargeElems};
    }
    size_t maxN = 0;
    for (size_t s : sizes)
        maxN = s > maxN ? s : maxN;

    int perSm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, reduceV9, kThreadsPerBlock, 0));
    const int machineGrid = perSm * prop.multiProcessorCount;

    course::Report report(kName);
    report.gpu(prop);
    course::TimingOptions timing = args.timing();
    report.setting(course::Row()
                       .integer("threads", kThreadsPerBlock)
                       .integer("items_per_thread", kItems)
                       .integer("machine_grid", machineGrid)
                       .integer("samples", timing.samples)
                       .integer("batch", timing.batch));
    std::printf("GPU: %s (compute capability %d.%d), %d SMs, %d MiB L2\n",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                prop.l2CacheSize >> 20);
    std::printf("v8/v9 grid: %d blocks per SM x %d SMs = %d blocks of %d\n",
                perSm, prop.multiProcessorCount, machineGrid, kThreadsPerBlock);

    Buffers b;
    CUDA_CHECK(cudaMalloc(&b.in, maxN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.copy, maxN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(
        &b.partials,
        ((maxN + kThreadsPerBlock - 1) / kThreadsPerBlock) * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.out, sizeof(float)));
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, b.cubTempBytes, b.in, b.out,
                                      static_cast<int64_t>(maxN)));
    CUDA_CHECK(cudaMalloc(&b.cubTemp, b.cubTempBytes));

    int failures = 0;
    for (size_t n : sizes) {
        Launcher run{n, machineGrid, b};
        failures += checkAll(report, run, versions, n);
    }
    if (failures != 0) {
        std::fprintf(stderr, "%s: %d check(s) failed; nothing was timed\n",
                     kName, failures);
        report.write(args.json);
        return course::kExitFailed;
    }
    std::printf(
        "every version checked: exact on all-ones, and within %.0e "
        "of float64 on random data\n",
        kRandomTolerance);

    for (size_t n : sizes) {
        // Timing runs on random data, never zeros.
        fill<<<1024, 256>>>(b.in, n, false);
        CUDA_CHECK(cudaGetLastError());
        Launcher run{n, machineGrid, b};
        const double bytes = static_cast<double>(n) * sizeof(float);
        for (course::TimingMode mode :
             {course::TimingMode::Cold, course::TimingMode::Batch}) {
            const course::TimingResult copy = course::timeKernel(
                [&] {
                    CUDA_CHECK(cudaMemcpyAsync(b.copy, b.in, n * sizeof(float),
                                               cudaMemcpyDeviceToDevice));
                },
                mode, timing);
            const double copyGbps = course::gbps(2.0 * bytes, copy.median_ms);
            const course::TimingResult cub =
                course::timeKernel([&] { run.cub(); }, mode, timing);

            std::printf(
                "\n%zu elements (%.0f MiB), %s timing, %d samples; "
                "copy moves %.1f GB/s (read + write)\n",
                n, bytes / (1024.0 * 1024.0), course::timingName(mode),
                timing.samples, copyGbps);
            std::printf("%-28s %10s %7s %9s %7s %7s\n", "version", "median ms",
                        "spread", "GB/s", "% copy", "vs CUB");
            report.row(course::Row()
                           .str("version", "copy")
                           .str("mode", "cudaMemcpy device to device")
                           .integer("elements", static_cast<long long>(n))
                           .timing(copy)
                           .num("gbps", copyGbps));
            for (int v : versions) {
                const course::TimingResult t =
                    v == 0 ? cub
                           : course::timeKernel([&] { run(v); }, mode, timing);
                const double g = course::gbps(bytes, t.median_ms);
                std::printf("%-28s %10.4f %6.1f%% %9.1f %6.1f%% %7.2f\n",
                            rowName(v).c_str(), t.median_ms,
                            100.0 * t.iqr_half_rel, g, 100.0 * g / copyGbps,
                            cub.median_ms / t.median_ms);
                report.row(course::Row()
                               .str("version",
                                    v == 0 ? "cub" : "v" + std::to_string(v))
                               .str("mode", rowName(v))
                               .integer("elements", static_cast<long long>(n))
                               .timing(t)
                               .num("gbps", g)
                               .num("percent_of_copy", 100.0 * g / copyGbps)
                               .num("vs_cub", cub.median_ms / t.median_ms));
            }
        }
    }

    CUDA_CHECK(cudaFree(b.in));
    CUDA_CHECK(cudaFree(b.copy));
    CUDA_CHECK(cudaFree(b.partials));
    CUDA_CHECK(cudaFree(b.out));
    CUDA_CHECK(cudaFree(b.cubTemp));
    if (!report.write(args.json))
        return course::kExitFailed;
    std::printf("\nall %s checks passed\n", kName);
    return course::kExitOk;
}
