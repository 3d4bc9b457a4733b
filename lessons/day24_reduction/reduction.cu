// SPDX-License-Identifier: MIT
//
// Day 24: parallel reduction, from the textbook tree to a kernel that
// keeps up with CUB at every size.
//
// Nine versions, each its own kernel, each one change from the last (the
// table kVersions below is the one place a version is declared):
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
//   v8  a grid sized to the machine, each thread striding over the
//       input's float4s; one atomicAdd per block
//   v9  the last rung: v8 with a fixed-order second pass run by the last
//       block to finish (the same bits every run); a grid of one block
//       needs no second pass
//
// Beside them, timed the same way in the same run: cub::DeviceReduce::Sum
// (what a user would call instead), a read ceiling (the fastest pure read
// of the input this lesson can write: what the memory system gives any
// reduction) and a device-to-device copy.
//
// Checks, for every row, before anything is timed:
//   exact     all-ones input with a count under 2^24: every partial and
//             total is a whole number a float holds exactly, in any order,
//             so the result must equal the count (the trick day 77 cites).
//   random    hash-generated values in [0, 1) against a float64 sum on the
//             host, relative error under kRandomTolerance.
//   same bits v9 twice on the same input.
//   xor       the read ceiling's XOR of every word, against the host's.
//
// Build:  cmake --build build --target day24_reduction
// Run:    build/bin/day24_reduction                   the ladder and the sweep
//         build/bin/day24_reduction --only v9 --size 1000003
//         build/bin/day24_reduction --quick --json day24.json
//
// Needs compute capability 7.5 or newer: the code itself needs 7.0's
// masked warp shuffles, and CUDA 13, the course's toolkit, builds for 7.5
// (Turing) and newer only.
//
// Whether this program has run on real hardware is not written here: the
// day's README shows the promoted run and its provenance, or says
// UNVERIFIED. See research/REVIEW-PROCESS.md.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include "course.cuh"

// 256 threads: a power of two for the trees, 8 warps, and what CUB's
// reduce policy uses for 4-byte types on sm_90 (research/cub-reduce.md).
constexpr int kThreadsPerBlock = 256;

// v6 to v7: 16 floats per thread per tile. Sixteen independent loads in
// flight per thread is what hides DRAM latency without a deep grid; CUB's
// sm_90 float policy holds 16 items per thread too.
constexpr int kItems = 16;
constexpr int kTileElems = kThreadsPerBlock * kItems;  // 4,096 floats

// v8, v9 and the ceiling: independent 16-byte loads per thread per trip
// through the grid-stride loop. Four keep 64 bytes per thread in flight,
// 128 KiB per SM at 8 blocks of 256: more than the ~30 KiB per SM that
// HBM3e's bandwidth x latency needs (4.8 TB/s x ~800 ns / 132 SMs).
constexpr int kUnroll = 4;

// The second pass: partials each thread loads at once. 32 x 256 covers
// 8,192 partials, v9's whole several-wave grid on a GPU of up to 200 SMs,
// in one trip to memory.
constexpr int kPartialsPerThread = 32;

// v8, v9 and the ceiling: the grid in waves of what the GPU holds at once.
// Five, as CUB's dispatch does: with more blocks than fit, the hardware
// hands the next block to whichever SM frees up first, so SMs that draw
// less bandwidth run fewer blocks and the grid ends together.
constexpr int kV9Waves = 5;

// The ladder's two sizes: 2^24 - 611 (under 2^24, so the exact check runs
// at full size; 611 = 13 x 47 leaves a ragged tail for every bounds check)
// and 2^28 (1 GiB, 18 times the H200's L2).
constexpr size_t kLadderSmall = 16777216ull - 611ull;
constexpr size_t kLadderLarge = 1ull << 28;

// The sweep: every power of two from 2^0 to 2^30 elements (4 GiB) and its
// ragged neighbour 2^k + 1, where the sizes that defeat a kernel are.
constexpr int kSweepMaxLog2 = 30;

// The random check's bound. A float sum of k positive terms drifts like a
// random walk, about sqrt(k) x 2^-24 relative; the longest sequential
// chain of adds here is about a thousand long, so errors near 2e-6 are
// expected and 1e-5 leaves a margin of five. What it is for: garbage,
// NaN, a lost or doubled tile (1/65,536 of the sum at 2^28 is 1.5e-5).
constexpr double kRandomTolerance = 1e-5;

static_assert((kThreadsPerBlock & (kThreadsPerBlock - 1)) == 0,
              "the trees halve the stride: block size must be a power of 2");
static_assert(kItems % 4 == 0, "v7 loads the items as float4");

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
    sum = course::blockSum<kThreadsPerBlock>(sum);
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
    sum = course::blockSum<kThreadsPerBlock>(sum);
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
    const float sum = course::blockSum<kThreadsPerBlock>(
        addTileVectorized(in, n, blockIdx.x, 0.0f));
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
    }
}

// ----------------------------------------------------------------------
// v8 and v9: a grid sized to the machine
// ----------------------------------------------------------------------

// snippet: v8-grid-stride
// v8. v7 still launched one block per tile: 65,536 blocks at 1 GiB, each
// paying its start, its block reduction and its store. Here the grid is a
// few waves of what the GPU holds at once (kV9Waves x occupancy x SMs),
// and every thread strides over the input's float4s with kUnroll
// independent 16-byte loads per trip, so no thread does more than one
// float4 more than another (whole tiles per block would leave some blocks
// a tile more than others). Each block reduces once, at the end, however
// large n is, and adds its partial with one atomicAdd.
// Launch assumption: blockDim.x == kThreadsPerBlock; *sum zeroed by the
// caller; `in` 16-byte aligned.
__device__ float gridStrideSum(const float* __restrict__ in, size_t n) {
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t n4 = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreadsPerBlock;
    const size_t first =
        blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
    // The n % 4 leftover floats, at most three, go to the grid's first
    // threads, loaded before the loop so their trip overlaps its loads.
    float acc[kUnroll] = {first < n - 4 * n4 ? in[4 * n4 + first] : 0.0f};
    size_t i = first;
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
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
        sum += acc[k];
    }
    return sum;
}

__global__ void reduceV8(const float* __restrict__ in, size_t n,
                         float* __restrict__ sum) {
    const float acc = course::blockSum<kThreadsPerBlock>(gridStrideSum(in, n));
    if (threadIdx.x == 0) {
        atomicAdd(sum, acc);
    }
}
// end snippet

// snippet: v9-two-pass
// v9. The atomics land in whatever order the blocks finish, and float
// addition is not associative: v8's last bits change from run to run.
// The fix is a second pass that adds the block partials in a fixed order,
// as CUB does: finishPartials, the one-block kernel v1 to v7 use too. Its
// launch is what costs, so where the GPU and the build have programmatic
// dependent launch (day 58, compute capability 9.0) it is launched while
// the first pass still runs: every first-pass block lets it start, and it
// waits at cudaGridDependencySynchronize() until the first pass has
// finished and its partials are in memory. The same input gives the same
// bits every time; a grid of one block writes the total itself.
// Launch assumption: blockDim.x == kThreadsPerBlock; partials holds
// gridDim.x floats.
__global__ void reduceV9(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials,
                         float* __restrict__ out) {
    COURSE_BLOCK_BEGIN();  // timeline stamps: empty in the timed build
#if __CUDA_ARCH__ >= 900
    // The second pass may launch now: it takes one block's room on one
    // SM and waits, so the first pass loses almost nothing.
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    const float acc = course::blockSum<kThreadsPerBlock>(gridStrideSum(in, n));
    if (threadIdx.x == 0) {
        if (gridDim.x == 1) {
            *out = acc;  // one block: its sum is the total
        } else {
            partials[blockIdx.x] = acc;
        }
    }
    COURSE_BLOCK_END();
}
// end snippet

// snippet: finish-partials
// The second pass every two-pass version shares, v1 to v9: one block adds
// `count` partials in index order, so the same partials give the same bits.
// There may be millions, so each thread issues kPartialsPerThread loads
// before adding any: the pass waits for memory once per round, not once
// per partial. Launch assumption: <<<1, kThreadsPerBlock>>>, after the
// first pass in the same stream; v9 launches it programmatically.
__global__ void finishPartials(const float* __restrict__ partials, size_t count,
                               float* __restrict__ out) {
#if __CUDA_ARCH__ >= 900
    // Load bearing under programmatic launch: the first pass may still be
    // running, and its partials are visible only after this returns.
    cudaGridDependencySynchronize();
#endif
    float sum = 0.0f;
    for (size_t first = 0; first < count;
         first += kPartialsPerThread * kThreadsPerBlock) {
        float p[kPartialsPerThread];
#pragma unroll
        for (int k = 0; k < kPartialsPerThread; ++k) {
            const size_t i = first + k * kThreadsPerBlock + threadIdx.x;
            p[k] = i < count ? partials[i] : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < kPartialsPerThread; ++k) {
            sum += p[k];
        }
    }
    sum = course::blockSum<kThreadsPerBlock>(sum);
    if (threadIdx.x == 0) {
        *out = sum;
    }
}
// end snippet

// snippet: read-ceiling
// The read ceiling: every 16-byte word of the input read once, with v9's
// grid and loop shape, folded with XOR (one instruction per word, exact in
// any order) and one atomicXor per block. A reduction of floats does at
// least this much work, so its bandwidth is the most any version can
// reach. Launch assumption: blockDim.x == kThreadsPerBlock; *out zeroed.
__global__ void readCeiling(const float* __restrict__ in, size_t n,
                            unsigned int* __restrict__ out) {
    COURSE_BLOCK_BEGIN();
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    const size_t n4 = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreadsPerBlock;
    const size_t first =
        blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
    size_t i = first;
    unsigned int acc = 0;
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            v[k] = in4[i + k * stride];
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
        }
    }
    for (; i < n4; i += stride) {
        const uint4 v = in4[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (first < n - 4 * n4) {
        acc ^= reinterpret_cast<const unsigned int*>(in)[4 * n4 + first];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        acc ^= __shfl_xor_sync(0xffffffffu, acc, offset);
    }
    __shared__ unsigned int warps[kThreadsPerBlock / 32];
    if (threadIdx.x % 32 == 0) {
        warps[threadIdx.x / 32] = acc;
    }
    __syncthreads();  // every warp's XOR stored before thread 0 folds them
    if (threadIdx.x == 0) {
        unsigned int all = 0;
        for (int w = 0; w < kThreadsPerBlock / 32; ++w) {
            all ^= warps[w];
        }
        atomicXor(out, all);
    }
    COURSE_BLOCK_END();
}
// end snippet

// ----------------------------------------------------------------------
// Host side
// ----------------------------------------------------------------------

namespace {

// A 32-bit hash to a float in [0, 1), the same on host and device, so the
// host computes the float64 reference without a copy of the input.
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

// Launch assumption: any grid; a grid-stride loop covers n.
__global__ void fill(float* out, size_t n, bool ones) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < n; i += stride) {
        out[i] = ones ? 1.0f : hashUnit(i);
    }
}

struct Buffers {
    float *in = nullptr, *copy = nullptr, *partials = nullptr, *out = nullptr;
    unsigned int* xorOut = nullptr;
    void* cubTemp = nullptr;
    size_t cubTempBytes = 0;
    int machineGrid = 0;        // occupancy x SMs: what the GPU holds at once
    bool programmatic = false;  // v9's second kernel may overlap the first
};

size_t ceilDiv(size_t a, size_t b) {
    return (a + b - 1) / b;
}

// v8, v9 and the ceiling: `waves` times the machine's grid, but no more
// blocks than give every thread a whole trip of kUnroll float4 loads (a
// tile per block): a block for the last few leftover floats would be a
// trip of its own. Up to one tile, one block.
unsigned int gridFor(const Buffers& b, size_t n, int waves = kV9Waves) {
    return static_cast<unsigned int>(
        std::min(std::max<size_t>(n / kTileElems, 1),
                 static_cast<size_t>(b.machineGrid) * waves));
}

// How each row is enqueued: every version, CUB, the ceiling and the copy
// take the same arguments, so the rows are one table.
using Enqueue = void (*)(const Buffers&, size_t, cudaStream_t);

template <void (*Kernel)(const float*, size_t, float*), size_t kPerBlock>
void twoPass(const Buffers& b, size_t n, cudaStream_t s) {
    const unsigned int blocks =
        static_cast<unsigned int>(ceilDiv(n, kPerBlock));
    Kernel<<<blocks, kThreadsPerBlock, 0, s>>>(b.in, n, b.partials);
    finishPartials<<<1, kThreadsPerBlock, 0, s>>>(b.partials, blocks, b.out);
}

// v8 adds into *out: the check zeroes it first; timing lets it drift.
void enqueueV8(const Buffers& b, size_t n, cudaStream_t s) {
    reduceV8<<<gridFor(b, n), kThreadsPerBlock, 0, s>>>(b.in, n, b.out);
}

// snippet: v9-dispatch
// v9's two launches: the second only where the grid has more than one
// block, and programmatic where the code allows it. kWaves is kV9Waves;
// the row "v9-one-wave" is the same code in a grid of one wave.
template <int kWaves>
void enqueueV9(const Buffers& b, size_t n, cudaStream_t s) {
    const unsigned int blocks = gridFor(b, n, kWaves);
    reduceV9<<<blocks, kThreadsPerBlock, 0, s>>>(b.in, n, b.partials, b.out);
    if (blocks > 1) {
        course::launch(finishPartials, dim3(1), dim3(kThreadsPerBlock), s,
                       course::LaunchAttrs{0, b.programmatic}, b.partials,
                       blocks, b.out);
    }
}
// end snippet

void enqueueCub(const Buffers& b, size_t n, cudaStream_t s) {
    size_t bytes = b.cubTempBytes;
    CUDA_CHECK(cub::DeviceReduce::Sum(b.cubTemp, bytes, b.in, b.out,
                                      static_cast<int64_t>(n), s));
}

void enqueueCeiling(const Buffers& b, size_t n, cudaStream_t s) {
    readCeiling<<<gridFor(b, n), kThreadsPerBlock, 0, s>>>(b.in, n, b.xorOut);
}

void enqueueCopy(const Buffers& b, size_t n, cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(b.copy, b.in, n * sizeof(float),
                               cudaMemcpyDeviceToDevice, s));
}

// What a row checks: a float sum, the ceiling's XOR, or a copy.
enum class Result { Sum, Xor, Copy };

// snippet: versions-table
// Every row of the tables, in ladder order. A new version is its kernel
// and one line here.
struct Version {
    const char* name;   // --only, the JSON's "version"
    const char* label;  // the printed table
    Enqueue enqueue;
    Result result;
    bool deterministic;  // must give the same bits twice
};
const Version kVersions[] = {
    {"v1", "interleaved, divergent", twoPass<reduceV1, kThreadsPerBlock>,
     Result::Sum, true},
    {"v2", "interleaved, strided", twoPass<reduceV2, kThreadsPerBlock>,
     Result::Sum, true},
    {"v3", "sequential", twoPass<reduceV3, kThreadsPerBlock>, Result::Sum,
     true},
    {"v4", "two loads", twoPass<reduceV4, 2 * kThreadsPerBlock>, Result::Sum,
     true},
    {"v5", "warp shuffle", twoPass<reduceV5, 2 * kThreadsPerBlock>, Result::Sum,
     true},
    {"v6", "16 items in registers", twoPass<reduceV6, kTileElems>, Result::Sum,
     true},
    {"v7", "float4 loads", twoPass<reduceV7, kTileElems>, Result::Sum, true},
    {"v8", "grid-stride + atomics", enqueueV8, Result::Sum, false},
    {"v9", "grid-stride + fixed 2nd pass", enqueueV9<kV9Waves>, Result::Sum,
     true},
    {"v9-one-wave", "v9 in a grid of one wave", enqueueV9<1>, Result::Sum,
     true},
    {"cub", "cub::DeviceReduce::Sum", enqueueCub, Result::Sum, true},
    {"ceiling", "read ceiling (XOR)", enqueueCeiling, Result::Xor, true},
    {"copy", "cudaMemcpy device to device", enqueueCopy, Result::Copy, true},
};
// The rows the size sweep times: the last rung, what a user would call
// instead, and the two ceilings.
const char* const kSweepRows[] = {"v9", "cub", "ceiling", "copy"};
// end snippet

const Version& version(const std::string& name) {
    for (const Version& v : kVersions) {
        if (name == v.name) {
            return v;
        }
    }
    std::abort();  // a name not in the table is a bug in this file
}

// What the host knows about the random input: its float64 sum and the XOR
// of its words, extended as the sizes grow.
struct Expected {
    double sum = 0.0;
    unsigned int xorBits = 0;
    size_t upTo = 0;
    void extendTo(size_t n) {
        for (; upTo < n; ++upTo) {
            const float v = hashUnit(upTo);
            unsigned int bits;
            std::memcpy(&bits, &v, sizeof bits);
            sum += static_cast<double>(v);
            xorBits ^= bits;
        }
    }
};

// Runs one row once on the current input and checks it; `exact` says the
// input is n ones. Returns whether the check passed.
bool checkRow(course::Lesson& l, const Buffers& b, const Version& v, size_t n,
              bool exact, const Expected& want) {
    CUDA_CHECK(cudaMemsetAsync(b.out, 0, sizeof(float), l.stream));
    CUDA_CHECK(cudaMemsetAsync(b.xorOut, 0, sizeof(unsigned int), l.stream));
    course::poison(b.copy, std::min<size_t>(n, 1), l.stream);
    v.enqueue(b, n, l.stream);
    CUDA_CHECK(cudaGetLastError());
    const std::string at = " n=" + std::to_string(n);
    const std::string name = v.name + std::string(exact ? " exact" : " random");
    char detail[200];
    if (v.result == Result::Xor) {
        const unsigned int got = course::toHost(b.xorOut, 1)[0];
        const unsigned int ones = 0x3f800000u;  // the bits of 1.0f
        const unsigned int expect =
            exact ? ((n % 2) ? ones : 0u) : want.xorBits;
        std::snprintf(detail, sizeof detail,
                      "XOR of all words: got %08x, want %08x", got, expect);
        return l.check(name + at, got == expect, detail);
    }
    if (v.result == Result::Copy) {
        const float first = course::toHost(b.copy, 1)[0];
        const float last = course::toHost(b.copy + n - 1, 1)[0];
        const bool ok = first == (exact ? 1.0f : hashUnit(0)) &&
                        last == (exact ? 1.0f : hashUnit(n - 1));
        std::snprintf(detail, sizeof detail,
                      "first and last element copied: %.9g, %.9g", first, last);
        return l.check(name + at, ok, detail);
    }
    const float got = course::toHost(b.out, 1)[0];
    const double rel = std::fabs(got - want.sum) / want.sum;
    if (exact) {
        std::snprintf(detail, sizeof detail, "%zu ones: got %.9g (off by %.9g)",
                      n, got, static_cast<double>(n) - got);
    } else {
        std::snprintf(detail, sizeof detail,
                      "random [0,1): got %.9g, float64 %.9g, relative error "
                      "%.2e (limit %.0e)",
                      got, want.sum, rel, kRandomTolerance);
    }
    if (!l.check(name + at,
                 exact ? got == static_cast<double>(n) : rel < kRandomTolerance,
                 detail)) {
        return false;
    }
    if (exact || !v.deterministic) {
        return true;
    }
    v.enqueue(b, n, l.stream);
    const float again = course::toHost(b.out, 1)[0];
    std::snprintf(detail, sizeof detail, "two runs: %.9g then %.9g", got,
                  again);
    return l.check(v.name + std::string(" same bits") + at, again == got,
                   detail);
}

// Checks `rows` at every size, sizes ascending: exact on ones where the
// sum fits a float exactly, against float64 on random data everywhere.
bool checkAll(course::Lesson& l, const Buffers& b,
              const std::vector<size_t>& sizes,
              const std::vector<const Version*>& rows) {
    bool ok = true;
    Expected want;
    for (size_t n : sizes) {
        if (n < (1ull << 24)) {
            fill<<<1024, 256, 0, l.stream>>>(b.in, n, true);
            for (const Version* v : rows) {
                ok &= checkRow(l, b, *v, n, true, want);
            }
        }
        fill<<<1024, 256, 0, l.stream>>>(b.in, n, false);
        want.extendTo(n);
        for (const Version* v : rows) {
            ok &= checkRow(l, b, *v, n, false, want);
        }
    }
    return ok;
}

// Bytes a row moves at size n: the input read once, and the copy writes it
// once more.
double bytesMoved(const Version& v, size_t n) {
    return (v.result == Result::Copy ? 2.0 : 1.0) * sizeof(float) * n;
}

// Times one row at size n in the three modes, records them, and returns
// the medians in microseconds (cold, batch, graph).
std::vector<double> timeRow(course::Lesson& l, const Buffers& b,
                            const char* group, const Version& v, size_t n) {
    // A deterministic sum must still give the checked bits after all its
    // timed launches, the graph replays last: a race that only back-to-back
    // or replayed launches expose would show here.
    const bool recheck = v.result == Result::Sum && v.deterministic;
    float before = 0.0f;
    if (recheck) {
        v.enqueue(b, n, l.stream);
        before = course::toHost(b.out, 1)[0];
    }
    std::vector<double> us;
    for (course::TimingMode mode :
         {course::TimingMode::Cold, course::TimingMode::Batch,
          course::TimingMode::Graph}) {
        const course::TimingResult t =
            course::timeKernel([&](cudaStream_t s) { v.enqueue(b, n, s); },
                               mode, l.timing, l.stream);
        l.row(course::Row()
                  .str("group", group)
                  .str("version", v.name)
                  .str("mode", v.label)
                  .integer("elements", static_cast<long long>(n))
                  .timing(t)
                  .num("gbps", course::gbps(bytesMoved(v, n), t.median)));
        us.push_back(1000.0 * t.median);
    }
    if (recheck) {
        const float after = course::toHost(b.out, 1)[0];
        char detail[120];
        std::snprintf(detail, sizeof detail,
                      "before timing %.9g, after the graph replays %.9g",
                      before, after);
        l.check(v.name + std::string(" same bits after timing n=") +
                    std::to_string(n),
                after == before, detail);
    }
    return us;
}

// The ladder: a table per size, a line per row. The sweep: a line per
// size. Times are medians in microseconds; the page computes the ratios.
[[maybe_unused]] void timeAll(course::Lesson& l, const Buffers& b,
                              const char* group,
                              const std::vector<size_t>& sizes,
                              const std::vector<const Version*>& rows) {
    const bool ladder = std::string(group) == "ladder";
    if (!ladder) {
        std::printf("\nsize sweep: median us per call (cold|batch|graph)\n%12s",
                    "elements");
        for (const Version* v : rows) {
            std::printf(" %26s", v->name);
        }
    }
    for (size_t n : sizes) {
        fill<<<1024, 256, 0, l.stream>>>(b.in, n, false);  // never zeros
        if (ladder) {
            std::printf(
                "\n%zu elements (%.1f MiB): median us per call\n"
                "%-11s %-28s %9s %9s %9s %9s\n",
                n, n * 4.0 / 1048576.0, "version", "", "cold", "batch", "graph",
                "GB/s cold");
        } else {
            std::printf("\n%12zu", n);
        }
        for (const Version* v : rows) {
            const std::vector<double> us = timeRow(l, b, group, *v, n);
            if (ladder) {
                std::printf("%-11s %-28s %9.2f %9.2f %9.2f %9.1f\n", v->name,
                            v->label, us[0], us[1], us[2],
                            course::gbps(bytesMoved(*v, n), us[0] / 1000.0));
            } else {
                std::printf(" %8.2f|%8.2f|%8.2f", us[0], us[1], us[2]);
            }
        }
    }
    std::printf("\n");
}

#ifdef COURSE_TIMELINE
// Where a cold 1 GiB launch spends its time: the flush's last blocks,
// then the row's first-pass blocks (v9 in its waves, in one wave, and the
// ceiling), first start to last end.
void timelines(course::Lesson& l, const Buffers& b) {
    const size_t n = kLadderLarge;
    fill<<<1024, 256, 0, l.stream>>>(b.in, n, false);
    course::timeline::Recorder rec(1u << 16);
    course::L2Flusher flusher(l.stream);
    for (const char* name : {"v9", "v9-one-wave", "ceiling"}) {
        const Version& v = version(name);
        v.enqueue(b, n, l.stream);  // warm: module load, clocks
        flusher.flush();
        CUDA_CHECK(cudaStreamSynchronize(l.stream));
        rec.reset();
        flusher.flush();
        v.enqueue(b, n, l.stream);
        const auto grids = rec.read();  // the flush's read, then the row's
        unsigned long long t0 = ~0ull, t1 = 0;
        for (const auto& g : grids) {
            for (const auto& s : g) {
                t0 = std::min(t0, s.start);
                t1 = std::max(t1, s.end);
            }
        }
        for (size_t i = 0; i < grids.size(); ++i) {
            const bool row = i + 1 == grids.size();
            l.row(course::timeline::summarize(grids[i],
                                              row ? name : "flush-read", t0, t1)
                      .str("schedule", name)
                      .integer("elements", static_cast<long long>(n)));
        }
        std::printf("timeline %s: %zu launches recorded\n", name, grids.size());
    }
}
#endif

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> names;
    for (const Version& v : kVersions) {
        names.push_back(v.name);
    }
    course::Lesson l = course::begin(
        argc, argv,
        {"day24_reduction", 7, 0, false, names,
         // the input and the copy's destination, 4 bytes each, plus v1's
         // partials (one per 256 elements)
         8.0 + 4.0 / kThreadsPerBlock,
         "Sums floats with nine versions of a reduction, CUB, a read ceiling "
         "and a copy: the ladder at two sizes, then the last rung, CUB and "
         "the ceilings at every power of two and its neighbour. --size N "
         "runs both at N alone."});

    std::vector<size_t> ladderSizes, sweepSizes;
    if (l.args.size) {
        ladderSizes = sweepSizes = {l.args.size};
    } else if (l.args.quick) {
        ladderSizes = {1000003};  // a prime: ragged everywhere
        sweepSizes = {1, 3, kTileElems, kTileElems + 1, 1000003};
    } else {
        ladderSizes = {kLadderSmall, kLadderLarge};
        for (int k = 0; k <= kSweepMaxLog2; ++k) {
            for (size_t n : {1ull << k, (1ull << k) + 1}) {
                if ((k > 0 || n == 1) && l.fits(n)) {  // 2^0 + 1 is 2^1
                    sweepSizes.push_back(n);
                }
            }
        }
        if (sweepSizes.back() < (1ull << kSweepMaxLog2)) {
            std::printf(
                "this GPU's memory holds %zu elements: the sweep "
                "stops at %zu\n",
                l.largestFitting(), sweepSizes.back());
        }
    }
    std::vector<const Version*> ladderRows, sweepRows;
    for (const Version& v : kVersions) {
        if (l.wants(v.name)) {
            ladderRows.push_back(&v);
        }
    }
    for (const char* name : kSweepRows) {
        if (l.wants(name)) {
            sweepRows.push_back(&version(name));
        }
    }
    std::vector<size_t> sizes = ladderSizes;  // every size, each once
    sizes.insert(sizes.end(), sweepSizes.begin(), sweepSizes.end());
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    const size_t maxN = sizes.back();

    Buffers b;
    int perSm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, reduceV9, kThreadsPerBlock, 0));
    b.machineGrid = perSm * l.prop.multiProcessorCount;
    // Programmatic only where the code that runs holds the wait: the second
    // pass compiled for 9.0 or newer (its PTX architecture, which is how CUB's
    // PtxVersion() asks). A build for older GPUs, run on a newer one from
    // its PTX, has no wait in it and must not overlap the first pass.
    cudaFuncAttributes finish = {};
    CUDA_CHECK(cudaFuncGetAttributes(&finish, finishPartials));
    b.programmatic = finish.ptxVersion >= 90;
    const size_t maxPartials =
        std::max(ceilDiv(maxN, kThreadsPerBlock),
                 static_cast<size_t>(b.machineGrid) * kV9Waves);
    CUDA_CHECK(cudaMalloc(&b.in, maxN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.copy, maxN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.partials, maxPartials * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.out, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b.xorOut, sizeof(unsigned int)));
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, b.cubTempBytes, b.in, b.out,
                                      static_cast<int64_t>(maxN)));
    CUDA_CHECK(cudaMalloc(&b.cubTemp, b.cubTempBytes));
    l.setting(course::Row()
                  .integer("threads", kThreadsPerBlock)
                  .integer("items_per_thread", kItems)
                  .integer("machine_grid", b.machineGrid)
                  .integer("v9_waves", kV9Waves)
                  .integer("programmatic", b.programmatic)
                  .integer("samples", l.timing.samples)
                  .integer("batch", l.timing.batch));
    std::printf("v8/v9/ceiling grid: %d blocks per SM x %d SMs x %d waves\n",
                perSm, l.prop.multiProcessorCount, kV9Waves);

    // Correctness first: every selected row at every size, both inputs.
    if (!checkAll(l, b, sizes, ladderRows)) {
        std::fprintf(stderr, "day24_reduction: nothing was timed\n");
        return l.finish();
    }
    std::printf(
        "every row checked at every size: exact on ones below 2^24, "
        "within %.0e of float64 on random data, v9 bit-identical "
        "twice\n",
        kRandomTolerance);

#ifdef COURSE_TIMELINE
    timelines(l, b);
#else
    if (l.args.profile) {
        // One launch of each row at the largest ladder size, for ncu.
        fill<<<1024, 256, 0, l.stream>>>(b.in, ladderSizes.back(), false);
        for (const Version* v : ladderRows) {
            course::profileRow(l, v->name, [&](cudaStream_t s) {
                v->enqueue(b, ladderSizes.back(), s);
            });
        }
    } else if (!l.args.checkOnly) {
        timeAll(l, b, "ladder", ladderSizes, ladderRows);
        timeAll(l, b, "sweep", sweepSizes, sweepRows);
    }
#endif

    for (void* p : {static_cast<void*>(b.in), static_cast<void*>(b.copy),
                    static_cast<void*>(b.partials), static_cast<void*>(b.out),
                    static_cast<void*>(b.xorOut), b.cubTemp}) {
        CUDA_CHECK(cudaFree(p));
    }
    return l.finish();
}
