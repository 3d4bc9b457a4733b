// SPDX-License-Identifier: MIT
//
// Day 24: parallel reduction, from the textbook tree to a kernel measured
// against CUB at every size.
//
// Nine versions, each one change from the last, declared once in the
// table kVersions; beside them, timed the same way in the same run,
// cub::DeviceReduce::Sum (what a user would call instead), a read ceiling
// (the fastest pure read of the input this lesson can write: what the
// memory system gives any reduction) and a device-to-device copy. Every
// row is checked before anything is timed (checkRow says how).
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

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
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
// s away. Correct, and slow: at each level only some lanes pass the
// modulo test (from s = 32 on, lane 0 of some warps), so those warps run
// the add for a few lanes while the rest wait, and the % is an integer
// division per level.
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
// apart, so they share banks from the first level on: two lanes a bank at
// s = 1, four at s = 2, eight from s = 4 to 16 (fewer lanes are active by
// then), and shared memory serializes each bank's accesses.
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

// v4. Half of v3's threads sat idle after the first level; here every
// thread adds two elements on the way in, so each block covers 512
// elements and there are half as many blocks (and partials). The block
// code is in the shared header, because day 77 reuses it.
__global__ void reduceV4(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    __shared__ float tile[kThreadsPerBlock];
    course::reduceBlockToTile<kThreadsPerBlock>(in, n, tile);
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

// ---- v6 and v7: a 4,096-element tile per block, the items in registers ----

// snippet: v6-registers
// v6. Until now each thread had one or two loads in flight, and a block's
// whole life was one DRAM round trip. Here each thread issues kItems
// independent loads into a register array before it adds any of them, so
// 16 requests per thread are in the memory system at once. The array is
// indexed only by unrolled constants, so it stays in registers; indices
// count from the tile's start in 32 bits, so no 64-bit sums delay the
// loads (research/cub-reduce.md, "The smallest sizes").
__global__ void reduceV6(const float* __restrict__ in, size_t n,
                         float* __restrict__ partials) {
    const size_t first = blockIdx.x * static_cast<size_t>(kTileElems);
    const float* tile = in + first;
    const unsigned int count = n - first < kTileElems ? n - first : kTileElems;
    float items[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        const unsigned int i = threadIdx.x + k * kThreadsPerBlock;
        items[k] = (i < count) ? tile[i] : 0.0f;
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

// ---- v8 and v9: a grid sized to the machine ----

// snippet: v8-grid-stride
// v8. v7 still launched one block per tile: 65,536 blocks at 1 GiB, each
// paying its start, its block reduction and its store. Here the grid is a
// few waves of what the GPU holds at once (kV9Waves x occupancy x SMs),
// and every thread strides over the input's float4s with kUnroll
// independent 16-byte loads per trip, so no thread does more than one
// float4 more than another (whole tiles per block would leave some blocks
// a tile more than others). Each block reduces once, at the end, however
// large n is, and adds its partial with one atomicAdd.
// The loop is written once for two uses: `fold` is + for the sums (v8,
// v9) and XOR for the read ceiling below, Word4 float4 or uint4.
// Launch assumption: blockDim.x == kThreadsPerBlock; `in` 16-byte aligned.
template <typename Word4, typename T, typename Fold>
__device__ T gridStrideFold(const T* __restrict__ in, size_t n, Fold fold) {
    const Word4* in4 = reinterpret_cast<const Word4*>(in);
    const size_t n4 = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreadsPerBlock;
    const size_t first =
        blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
    const auto fold4 = [&](const Word4& v) {
        return fold(fold(v.x, v.y), fold(v.z, v.w));
    };
    // The n % 4 leftover words, at most three, go to the grid's first
    // threads, loaded before the loop so their trip overlaps its loads.
    T acc[kUnroll] = {first < n - 4 * n4 ? in[4 * n4 + first] : T{}};
    size_t i = first;
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        Word4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            v[k] = in4[i + k * stride];
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            acc[k] = fold(acc[k], fold4(v[k]));
        }
    }
    for (; i < n4; i += stride) {
        acc[0] = fold(acc[0], fold4(in4[i]));
    }
#pragma unroll
    for (int k = 1; k < kUnroll; ++k) {
        acc[0] = fold(acc[0], acc[k]);
    }
    return acc[0];
}

// Launch assumption: as gridStrideFold; *sum zeroed by the caller.
__global__ void reduceV8(const float* __restrict__ in, size_t n,
                         float* __restrict__ sum) {
    const float acc = course::blockSum<kThreadsPerBlock>(
        gridStrideFold<float4>(in, n, course::Plus{}));
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
    // The second pass may launch now: while it waits it holds one
    // block's room on one SM.
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    const float acc = course::blockSum<kThreadsPerBlock>(
        gridStrideFold<float4>(in, n, course::Plus{}));
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
// grid and its very loop, folded with XOR (one instruction per word, exact in
// any order) and one atomicXor per block: where DRAM time dominates, what
// a kernel that only reads achieves with v9's launch. Not a bound at small
// sizes, where v9 runs a different, one-block kernel. Launch assumption:
// blockDim.x == kThreadsPerBlock; *out zeroed.
__global__ void readCeiling(const float* __restrict__ in, size_t n,
                            unsigned int* __restrict__ out) {
    COURSE_BLOCK_BEGIN();
    const auto xor2 = [](unsigned int a, unsigned int b) { return a ^ b; };
    const unsigned int acc = course::blockReduce<kThreadsPerBlock>(
        gridStrideFold<uint4>(reinterpret_cast<const unsigned int*>(in), n,
                              xor2),
        xor2);
    if (threadIdx.x == 0) {
        atomicXor(out, acc);
    }
    COURSE_BLOCK_END();
}
// end snippet

// ---- Host side ----

namespace {

struct Buffers {
    // Partials: one per block of v1 to v7, or one per block of v9's grid.
    Buffers(size_t maxN, int grid, size_t cubBytes)
        : in(maxN),
          copy(maxN),
          partials(std::max(course::ceilDiv(maxN, kThreadsPerBlock),
                            static_cast<size_t>(grid) * kV9Waves)),
          out(1),
          xorOut(1),
          cubTemp(cubBytes),
          machineGrid(grid) {}
    course::DeviceArray<float> in, copy, partials, out;
    course::DeviceArray<unsigned int> xorOut;
    course::DeviceArray<char> cubTemp;
    int machineGrid;            // occupancy x SMs: what the GPU holds at once
    bool programmatic = false;  // v9's second kernel may overlap the first
};

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

// v1 to v7: a block per kItemsPerThread x 256 elements, then finishPartials.
template <void (*Kernel)(const float*, size_t, float*), int kItemsPerThread>
void twoPass(const Buffers& b, size_t n, cudaStream_t s) {
    const unsigned int blocks = static_cast<unsigned int>(
        course::ceilDiv(n, kItemsPerThread * kThreadsPerBlock));
    Kernel<<<blocks, kThreadsPerBlock, 0, s>>>(b.in, n, b.partials);
    finishPartials<<<1, kThreadsPerBlock, 0, s>>>(b.partials, blocks, b.out);
}

// v8 adds into *out: the check zeroes it first; timing lets it drift.
void enqueueV8(const Buffers& b, size_t n, cudaStream_t s) {
    reduceV8<<<gridFor(b, n), kThreadsPerBlock, 0, s>>>(b.in, n, b.out);
}

// snippet: v9-dispatch
// v9's launches. Up to one tile, v6's kernel alone: one block, sixteen
// loads per thread in flight, and less code than reduceV9's loops, which
// measured quicker at those sizes (research/experiments/small_sum_graph.cu);
// CUB keeps a single-tile kernel too. Beyond, the second pass only where
// there are partials, programmatic where the code allows it. "v9-one-wave"
// is the same in a grid of one wave.
template <int kWaves>
void enqueueV9(const Buffers& b, size_t n, cudaStream_t s) {
    if (n <= kTileElems) {
        reduceV6<<<1, kThreadsPerBlock, 0, s>>>(b.in, n, b.out);
        return;
    }
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
    size_t bytes = b.cubTemp.size();
    CUDA_CHECK(cub::DeviceReduce::Sum(b.cubTemp.get(), bytes, b.in.get(),
                                      b.out.get(), static_cast<int64_t>(n), s));
}

void enqueueCeiling(const Buffers& b, size_t n, cudaStream_t s) {
    readCeiling<<<gridFor(b, n), kThreadsPerBlock, 0, s>>>(b.in, n, b.xorOut);
}

void enqueueCopy(const Buffers& b, size_t n, cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(b.copy, b.in, n * sizeof(float),
                               cudaMemcpyDeviceToDevice, s));
}

// What a row's check asks for: a sum with the same bits every run, a sum
// in any order (v8's atomics), the ceiling's XOR, or a copy.
enum Check { kSameBits, kAnyOrder, kXor, kCopy };

// snippet: versions-table
// Every row of the tables, in ladder order. A new version is its kernel
// and one line here.
struct Version {
    const char* name;   // --only, the JSON's "version"
    const char* label;  // the JSON's "mode"
    Enqueue enqueue;
    Check check;
};
const Version kVersions[] = {
    {"v1", "interleaved, divergent", twoPass<reduceV1, 1>, kSameBits},
    {"v2", "interleaved, strided", twoPass<reduceV2, 1>, kSameBits},
    {"v3", "sequential", twoPass<reduceV3, 1>, kSameBits},
    {"v4", "two loads", twoPass<reduceV4, 2>, kSameBits},
    {"v5", "warp shuffle", twoPass<reduceV5, 2>, kSameBits},
    {"v6", "16 items in registers", twoPass<reduceV6, kItems>, kSameBits},
    {"v7", "float4 loads", twoPass<reduceV7, kItems>, kSameBits},
    {"v8", "grid-stride + atomics", enqueueV8, kAnyOrder},
    {"v9", "grid-stride + fixed 2nd pass", enqueueV9<kV9Waves>, kSameBits},
    {"v9-one-wave", "v9 in a grid of one wave", enqueueV9<1>, kSameBits},
    {"cub", "cub::DeviceReduce::Sum", enqueueCub, kSameBits},
    {"ceiling", "read ceiling (XOR)", enqueueCeiling, kXor},
    {"copy", "cudaMemcpy device to device", enqueueCopy, kCopy},
};
// The sweep's rows: the last rung, what a user would call, both ceilings.
const char* const kSweepRows[] = {"v9", "cub", "ceiling", "copy"};
// What the rule must decide before a set stops sampling: each rung against
// the one before (or the one it improves on), the last rung against CUB,
// the ceilings and its one-wave self. Every set also times CUB twice
// (kTwin): the same code against itself, the rule's false-call rate.
const course::Versus kLadderVersus[] = {
    {"v2", "v1"},      {"v3", "v1"},          {"v4", "v3"},
    {"v5", "v4"},      {"v6", "v5"},          {"v7", "v6"},
    {"v8", "v7"},      {"v9", "v8"},          {"v9", "cub"},
    {"v9", "ceiling"}, {"v9", "v9-one-wave"}, {"ceiling", "cub"}};
const course::Versus kSweepVersus[] = {{"v9", "cub"}};
const char* const kTwin = "cub";
// end snippet

// The input the checks run on: n ones (`exact`), or the random values, whose
// float64 sum and XOR of words grow with the sizes (checked ascending).
struct Expected {
    bool exact = false;
    size_t n = 0, upTo = 0;
    double randomSum = 0.0;
    unsigned int randomXor = 0;
    void load(float* in, size_t count, bool ones, cudaStream_t s) {
        exact = ones;
        n = count;
        if (ones) {
            course::fill(in, n, 1.0f, s);
            return;
        }
        course::fillRandom(in, n, s);
        for (; upTo < n; ++upTo) {
            const float v = course::hashUnit(upTo);
            unsigned int bits;
            std::memcpy(&bits, &v, sizeof bits);
            randomSum += static_cast<double>(v);
            randomXor ^= bits;
        }
    }
    double sum() const { return exact ? static_cast<double>(n) : randomSum; }
    unsigned int xorBits() const {  // 0x3f800000: the bits of 1.0f
        return exact ? (n % 2) * 0x3f800000u : randomXor;
    }
    float at(size_t i) const { return exact ? 1.0f : course::hashUnit(i); }
};

// Runs one row once and checks it. On n ones (`exact`, n under 2^24) every
// partial and total is a whole number a float holds exactly, in any order,
// so a sum must equal n (the trick day 77 cites). On the random input a
// sum must be within kRandomTolerance of the host's float64 sum, and a
// deterministic one must give the same bits twice. The ceiling's XOR must
// equal the host's; the copy's first and last elements must arrive.
bool checkRow(course::Lesson& l, const Buffers& b, const Version& v,
              const Expected& want) {
    const size_t n = want.n;
    CUDA_CHECK(cudaMemsetAsync(b.out, 0, sizeof(float), l.stream()));
    CUDA_CHECK(cudaMemsetAsync(b.xorOut, 0, sizeof(unsigned int), l.stream()));
    course::poison(b.copy, n, l.stream());  // a short copy leaves NaN
    v.enqueue(b, n, l.stream());
    CUDA_CHECK(cudaGetLastError());
    const std::string name = course::format("%s %s n=%zu", v.name,
                                            want.exact ? "exact" : "random", n);
    std::string detail;
    bool ok = false;
    if (v.check == kXor) {
        const unsigned int got = course::toHost(b.xorOut, 1)[0];
        detail = course::format("XOR of all words: got %08x, want %08x", got,
                                want.xorBits());
        ok = got == want.xorBits();
    } else if (v.check == kCopy) {
        const float first = course::toHost(b.copy.get(), 1)[0];
        const float last = course::toHost(b.copy + n - 1, 1)[0];
        ok = first == want.at(0) && last == want.at(n - 1);
        detail = course::format("first and last element copied: %.9g, %.9g",
                                first, last);
    } else {
        const float got = course::toHost(b.out, 1)[0];
        const double rel = std::fabs(got - want.sum()) / want.sum();
        detail = course::format(
            "got %.9g, want %.9g: relative error %.2e (limit %.0e)", got,
            want.sum(), rel, want.exact ? 0.0 : kRandomTolerance);
        ok = want.exact ? got == want.sum() : rel < kRandomTolerance;
        if (ok && !want.exact && v.check == kSameBits) {
            l.check(name, ok, detail);
            v.enqueue(b, n, l.stream());
            const float again = course::toHost(b.out, 1)[0];
            return l.check(
                course::format("%s same bits n=%zu", v.name, n), again == got,
                course::format("two runs: %.9g then %.9g", got, again));
        }
    }
    return l.check(name, ok, detail);
}

// Checks `rows` at every size, sizes ascending: exact on ones where the
// sum fits a float exactly, against float64 on random data everywhere.
bool checkAll(course::Lesson& l, const Buffers& b,
              const std::set<size_t>& sizes,
              const std::vector<const Version*>& rows) {
    bool ok = true;
    Expected want;
    for (size_t n : sizes) {
        for (bool ones : {true, false}) {
            if (!ones || n < (1ull << 24)) {
                want.load(b.in, n, ones, l.stream());
                for (const Version* v : rows) {
                    ok &= checkRow(l, b, *v, want);
                }
            }
        }
    }
    return ok;
}

// Bytes a row moves: the input read once; the copy also writes it once.
double bytesMoved(const Version& v, size_t n) {
    return (v.check == kCopy ? 2.0 : 1.0) * sizeof(float) * n;
}

// Times the rows at each size, in each mode, as one set (course/sets.cuh:
// interleaved, until the comparison rule decides every pair in `versus`
// whose rows are both selected). A deterministic sum must still give its
// checked bits after all its timed launches, the graph replays last: a race
// that only back-to-back or replayed launches expose would show here.
[[maybe_unused]] void timeSets(course::Lesson& l, const Buffers& b,
                               const char* group,
                               const std::vector<size_t>& sizes,
                               const std::vector<const Version*>& rows,
                               const std::vector<course::Versus>& versus) {
    std::printf("\n%s: median us per call; the rule's word for each pair\n",
                group);
    for (size_t n : sizes) {
        course::fillRandom(b.in, n, l.stream());  // never zeros
        std::vector<float> before;
        std::vector<course::Contender> set;
        for (const Version* v : rows) {
            v->enqueue(b, n, l.stream());
            before.push_back(course::toHost(b.out, 1)[0]);
            set.push_back({"version", v->name,
                           course::Row()
                               .str("group", group)
                               .str("mode", v->label)
                               .integer("elements", static_cast<long long>(n)),
                           bytesMoved(*v, n), [&b, v, n](cudaStream_t s) {
                               v->enqueue(b, n, s);
                           }});
        }
        const std::string label =
            std::string(group) + " n=" + std::to_string(n);
        for (course::TimingMode mode : course::kAllModes) {
            course::timeSet(l, label, mode, set, versus, {kTwin});
        }
        for (size_t i = 0; i < rows.size(); ++i) {
            if (rows[i]->check != kSameBits) {
                continue;
            }
            rows[i]->enqueue(b, n, l.stream());
            const float after = course::toHost(b.out, 1)[0];
            l.check(course::format("%s same bits after timing n=%zu",
                                   rows[i]->name, n),
                    after == before[i],
                    course::format("%.9g, then %.9g", before[i], after));
        }
    }
}

#ifdef COURSE_TIMELINE
// Where a cold 1 GiB launch spends its time: the flush's last blocks,
// then the row's first-pass blocks (v9 in its waves, in one wave, and the
// ceiling), first start to last end.
void timelines(course::Lesson& l, const Buffers& b) {
    const size_t n = kLadderLarge;
    course::fillRandom(b.in, n, l.stream());
    course::timeline::Recorder rec(1u << 16);
    course::L2Flusher flusher(l.stream());
    for (const char* name : {"v9", "v9-one-wave", "ceiling"}) {
        // The flush's read, then the row's: one window spans both.
        const auto grids = rec.capture([&] {
            flusher.flush();
            course::byName(kVersions, name).enqueue(b, n, l.stream());
        });
        const auto [t0, t1] =
            course::timeline::window({&grids.front(), &grids.back()});
        for (size_t i = 0; i < grids.size(); ++i) {
            const char* kernel = i + 1 < grids.size() ? "flush-read" : name;
            l.row(course::timeline::summarize(grids[i], kernel, t0, t1)
                      .str("schedule", name)
                      .integer("elements", static_cast<long long>(n)));
        }
        std::printf("timeline %s: %zu launches recorded\n", name, grids.size());
    }
}
#endif

}  // namespace

int main(int argc, char** argv) {
    course::Lesson l = course::begin(
        argc, argv,
        {"day24_reduction", false, course::namesOf(kVersions),
         // the input and the copy's destination, 4 bytes each, plus v1's
         // partials (one per 256 elements)
         8.0 + 4.0 / kThreadsPerBlock,
         "Sums floats with nine versions of a reduction, CUB, a read ceiling "
         "and a copy: the ladder at two sizes, then the last rung, CUB and "
         "the ceilings at every power of two and its neighbour. --size N "
         "runs both at N alone."});

    std::vector<size_t> ladderSizes = {kLadderSmall, kLadderLarge};
    std::vector<size_t> sweepSizes;
    if (l.args().size) {
        ladderSizes = sweepSizes = {l.args().size};
    } else if (l.args().quick) {
        ladderSizes = {1000003};  // a prime: ragged everywhere
        sweepSizes = {1, 3, kTileElems, kTileElems + 1, 1000003};
    } else {
        for (int k = 0; k <= kSweepMaxLog2; ++k) {
            for (size_t n : {1ull << k, (1ull << k) + 1}) {
                if ((k > 0 || n == 1) && l.fits(n)) {  // 2^0 + 1 is 2^1
                    sweepSizes.push_back(n);
                }
            }
        }
        if (sweepSizes.back() < (1ull << kSweepMaxLog2)) {
            std::printf("the sweep stops at %zu: this GPU holds no more\n",
                        sweepSizes.back());
        }
    }
    const std::vector<const Version*> ladderRows = l.chosen(kVersions);
    std::vector<const Version*> sweepRows;
    for (const char* name : kSweepRows) {
        if (l.wants(name)) {
            sweepRows.push_back(&course::byName(kVersions, name));
        }
    }
    // Every size, each once, ascending.
    std::set<size_t> sizes(ladderSizes.begin(), ladderSizes.end());
    sizes.insert(sweepSizes.begin(), sweepSizes.end());
    const size_t maxN = *sizes.rbegin();

    const int machineGrid =
        course::residentBlocks(reduceV9, dim3(kThreadsPerBlock), {});
    size_t cubBytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(
        nullptr, cubBytes, static_cast<const float*>(nullptr),
        static_cast<float*>(nullptr), static_cast<int64_t>(maxN)));
    Buffers b(maxN, machineGrid, cubBytes);
    // Programmatic only where the code that runs holds the wait: the second
    // pass compiled for 9.0 or newer (its PTX architecture, which is how
    // CUB's PtxVersion() asks). A build for older GPUs, run on a newer one
    // from its PTX, has no wait in it and must not overlap the first pass.
    cudaFuncAttributes finish = {};
    CUDA_CHECK(cudaFuncGetAttributes(&finish, finishPartials));
    b.programmatic = finish.ptxVersion >= 90;
    l.setting(course::Row()
                  .integer("threads", kThreadsPerBlock)
                  .integer("items_per_thread", kItems)
                  .integer("machine_grid", b.machineGrid)
                  .integer("v9_waves", kV9Waves)
                  .integer("programmatic", b.programmatic));

    // Correctness first: every selected row at every size, both inputs.
    if (!checkAll(l, b, sizes, ladderRows)) {
        return l.finish();  // never time a wrong kernel
    }

#ifdef COURSE_TIMELINE
    timelines(l, b);
#else
    if (l.args().profile) {
        // One launch of each row at the largest ladder size, for ncu.
        course::fillRandom(b.in, ladderSizes.back(), l.stream());
        for (const Version* v : ladderRows) {
            course::profileRow(l, v->name, [&](cudaStream_t s) {
                v->enqueue(b, ladderSizes.back(), s);
            });
        }
    } else if (!l.args().checkOnly) {
        timeSets(l, b, "ladder", ladderSizes, ladderRows,
                 {std::begin(kLadderVersus), std::end(kLadderVersus)});
        timeSets(l, b, "sweep", sweepSizes, sweepRows,
                 {std::begin(kSweepVersus), std::end(kSweepVersus)});
    }
#endif
    return l.finish();
}
