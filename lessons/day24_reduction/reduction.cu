// SPDX-License-Identifier: MIT
//
// Day 24: parallel reduction, from the textbook tree to a kernel measured
// against CUB at every size.
//
// Ten versions, each one change from the last, declared once in the
// table kVersions; beside them, timed the same way in the same run,
// cub::DeviceReduce::Sum (what a user would call instead) and a read
// ceiling (the fastest pure read of the input this lesson can write: what
// the memory system gives any reduction). Every row is checked before
// anything is timed (checkRow says how). Each kernel has its launcher
// beside it; the rows, their checks and main come last.
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

#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>

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

// v10's last block: it adds at most one wave of blocks' partials (1,056 on
// the H200), so 8 x 256 = 2,048 still take one trip on a GPU of up to 256
// SMs. Fewer is load bearing for speed: a kernel's registers are set by
// its heaviest path, and with 32 partials a thread this one path took
// reduceV10 from 32 registers to 38, which fits six blocks an SM, not v9's
// eight, and ran part of a one-wave grid in a second (research/one-pass.md).
constexpr int kV10PartialsPerThread = 8;

// v8, v9 and the ceiling: the grid in waves of what the GPU holds at once.
// Five, as CUB's dispatch does: with more blocks than fit, the hardware
// hands the next block to whichever SM frees up first, so SMs that draw
// less bandwidth run fewer blocks and the grid ends together.
constexpr int kV9Waves = 5;

// The ladder's two sizes: 2^24 - 611 (under 2^24, so the exact check runs
// at full size; 611 = 13 x 47 leaves a ragged tail for every bounds check)
// and 2^28 (1 GiB, 17 times the H200's 60 MiB L2). The sweep: every power
// of two from 2^0 to 2^30 elements (4 GiB) and its ragged neighbour 2^k +
// 1, where the sizes that defeat a kernel are. --quick: the sizes that
// defeat one (one element, a ragged few, one tile and one past it, a
// ragged million); --profile: one launch each where the page reads ncu.
constexpr size_t kLadderLarge = 1ull << 28;
const std::vector<size_t> kQuick = {1, 3, 4096, 4097, 1000003};
const course::Sizes kLadder = {.run = {16777216ull - 611ull, kLadderLarge},
                               .quick = kQuick,
                               .profile = {kLadderLarge}};
const course::Sizes kSweep = {.run = course::powersAndNeighbours(30),
                              .quick = kQuick,
                              .profile = {65536, 1048576, 4194304}};

// The random check's bound. A float sum of k positive terms drifts like a
// random walk, about sqrt(k) x 2^-24 relative; the longest sequential
// chain of adds here is about a thousand long, so errors near 2e-6 are
// expected and 1e-5 leaves a margin of five. What it is for: garbage,
// NaN, a lost or doubled tile (1/65,536 of the sum at 2^28 is 1.5e-5).
constexpr double kRandomTolerance = 1e-5;

static_assert(kItems % 4 == 0, "v7 loads the items as float4");

// What every launcher uses, made by main's setup after the GPU gate for
// the largest size: the input, the partials (one per block of v1 to v7, or
// of v9's grid), the result, the ceiling's XOR word, v10's arrival count (0
// between calls), CUB's scratch, and two facts of the GPU: the blocks of v9
// it holds at once, and whether the code that runs holds programmatic
// launch's wait.
course::DeviceArray<float> gIn, gPartials, gOut;
course::DeviceArray<unsigned int> gBits, gArrived;
course::DeviceArray<char> gCubTemp;
int gMachineGrid = 0;
bool gProgrammatic = false;

// v8, v9, v10 and the ceiling: `waves` times the machine's grid, but no
// more blocks than give every thread a whole trip of kUnroll float4 loads
// (a tile per block): a block for the last few leftover floats would be a
// trip of its own. Up to one tile, one block.
unsigned int gridFor(size_t n, int waves = kV9Waves) {
    return static_cast<unsigned int>(
        std::min(std::max<size_t>(n / kTileElems, 1),
                 static_cast<size_t>(gMachineGrid) * waves));
}

// snippet: v1-interleaved-divergent
// v1. Each level, threads whose index is a multiple of 2s add the element
// s away. Correct, and slow: at each level only some lanes pass the
// modulo test (from s = 32 on, lane 0 of some warps), so those warps run
// the add for half their lanes or fewer. (The % by a power of two
// is a test of tid's low bits; this build compiles it to an AND.)
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
// on index 2st. Whole warps now go idle, down to the last (the first threads
// work) and the modulo is gone, but at stride s the active lanes touch words 2s
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
// v5. The tree's last six levels (s = 32 down to 1) ran one warp with
// barriers between levels. Shuffles move values between the lanes of a warp
// through registers: each warp sums its 32 values with five shuffles and no
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

// snippet: finish-partials
// The second pass every two-pass version shares, v1 to v9: one block adds
// `count` partials in a fixed order (thread t adds partials t, t + 256, ...
// in turn, then a shuffle tree adds the threads' sums), so the same
// partials give the same bits.
// There may be millions, so each thread issues kPerThread loads before
// adding any: the pass waits for memory once per round, not once per
// partial. `load` reads one partial; the caller says how, as only it knows
// when another block's partials became visible to it. Launch assumption:
// one block of kThreadsPerBlock, every thread calls it.
template <int kPerThread, typename Load>
__device__ float addPartialsInOrder(const float* __restrict__ partials,
                                    size_t count, Load load) {
    float sum = 0.0f;
    for (size_t first = 0; first < count;
         first += kPerThread * kThreadsPerBlock) {
        float p[kPerThread];
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
            const size_t i = first + k * kThreadsPerBlock + threadIdx.x;
            p[k] = i < count ? load(partials + i) : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
            sum += p[k];
        }
    }
    return course::blockSum<kThreadsPerBlock>(sum);
}

// Launch assumption: <<<1, kThreadsPerBlock>>>, after the first pass in the
// same stream; v9 launches it programmatically.
__global__ void finishPartials(const float* __restrict__ partials, size_t count,
                               float* __restrict__ out) {
    COURSE_BLOCK_BEGIN();
#if __CUDA_ARCH__ >= 900
    // Load bearing under programmatic launch: the first pass may still be
    // running, and its partials are visible only after this returns.
    cudaGridDependencySynchronize();
#endif
    COURSE_BLOCK_WAITED();
    // A plain load: the first pass is a kernel before this one, done and
    // visible once the wait returns (the PTX ISA's griddepcontrol.wait: its
    // memory operations "performed and made visible to the current grid"),
    // or by stream order. L2-only loads (__ldcg) here measured 0.4 to 0.5 us
    // slower a call from a graph (research/one-pass.md).
    const float sum = addPartialsInOrder<kPartialsPerThread>(
        partials, count, [](const float* p) { return *p; });
    if (threadIdx.x == 0) {
        *out = sum;
    }
    COURSE_BLOCK_END();
}
// end snippet

// v1 to v7's launcher: a block per kItemsPerThread x 256 elements, then
// the second pass.
template <void (*Kernel)(const float*, size_t, float*), int kItemsPerThread>
void twoPass(size_t n, cudaStream_t s) {
    const unsigned int blocks = static_cast<unsigned int>(
        course::ceilDiv(n, kItemsPerThread * kThreadsPerBlock));
    Kernel<<<blocks, kThreadsPerBlock, 0, s>>>(gIn, n, gPartials);
    finishPartials<<<1, kThreadsPerBlock, 0, s>>>(gPartials, blocks, gOut);
}

// ---- v8, v9 and v10: a grid sized to the machine ----

// snippet: v8-grid-stride
// v8. v7 still launched one block per tile: 65,536 blocks at 1 GiB, each
// paying its start, its block reduction and its store. Here the grid is a
// few waves of what the GPU holds at once (kV9Waves x occupancy x SMs),
// and every thread strides over the input's float4s with kUnroll
// independent 16-byte loads per trip, so no thread does more than one
// float4 more than another (whole tiles per block would leave some blocks
// a tile more than others). Each block reduces once, at the end, however
// large n is, and adds its partial with one atomicAdd.
// The loop is written once for two uses: `fold` is + for the sums (v8
// to v10) and XOR for the read ceiling below, Word4 float4 or uint4.
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

// v8 adds into *out: the check zeroes it first; timing lets it drift.
void enqueueV8(size_t n, cudaStream_t s) {
    reduceV8<<<gridFor(n), kThreadsPerBlock, 0, s>>>(gIn, n, gOut);
}

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

// snippet: v9-dispatch
// v9's launches. Up to one tile, v6's kernel alone: one block, sixteen
// loads per thread in flight, and less code than reduceV9's loops, which
// measured quicker at those sizes (research/experiments/small_sum_graph.cu);
// CUB keeps a single-tile kernel too. Beyond, the second pass only where
// there are partials, programmatic where the code allows it. "v9-one-wave"
// is the same in a grid of one wave.
template <int kWaves>
void enqueueV9(size_t n, cudaStream_t s) {
    if (n <= kTileElems) {
        reduceV6<<<1, kThreadsPerBlock, 0, s>>>(gIn, n, gOut);
        return;
    }
    const unsigned int blocks = gridFor(n, kWaves);
    reduceV9<<<blocks, kThreadsPerBlock, 0, s>>>(gIn, n, gPartials, gOut);
    if (blocks > 1) {
        course::launch(finishPartials, 1, kThreadsPerBlock, s,
                       {0, gProgrammatic}, gPartials, blocks, gOut);
    }
}
// end snippet

// snippet: v10-one-pass
// v10. v9's two kernels cost two kernel boundaries a call; at sizes where
// reading the input takes a few microseconds, the second is as dear as the
// reading. Here the first pass finishes the job itself: every block stores
// its partial and counts itself in with one atomic, and the block that
// counts last, which then knows every partial is in memory, adds them all
// with the second pass's own code, in the same fixed order. The grid is
// v9's, the order of additions is v9's, so the bits are v9's, every run.
// Like v9's second pass it is launched programmatically where the code
// allows it, so one call's launch may overlap the end of the call before
// (a hypothesis: no timeline shows it).
// Launch assumption: blockDim.x == kThreadsPerBlock; a grid of at most
// v9's one wave (the dispatch below), which fits at once only while this
// kernel's registers let as many of its blocks share an SM as v9's
// (kV10PartialsPerThread). No block waits for another, so the sum is right
// however many are resident. partials holds gridDim.x floats; *arrived is
// 0 at launch, and the last block leaves it 0 for the next call.
__global__ void reduceV10(const float* __restrict__ in, size_t n,
                          float* __restrict__ partials,
                          unsigned int* __restrict__ arrived,
                          float* __restrict__ out) {
    COURSE_BLOCK_BEGIN();
#if __CUDA_ARCH__ >= 900
    // Load bearing under programmatic launch: the kernel before this one
    // may still be running (the call before, still adding, or whatever
    // wrote `in`); nothing is read or written before this returns.
    cudaGridDependencySynchronize();
#endif
    COURSE_BLOCK_WAITED();
    const float acc = course::blockSum<kThreadsPerBlock>(
        gridStrideFold<float4>(in, n, course::Plus{}));
#if __CUDA_ARCH__ >= 900
    // This block's loads are done: the next kernel may launch (it waits
    // for this whole grid, the last block's additions included).
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(*arrived);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        // Load bearing: release, so this block's partial is visible before
        // its arrival is counted; acquire, so the block that counts last
        // reads every partial after every arrival. (An acquire-release
        // atomic, not __threadfence(): that is a sequentially consistent
        // fence, slower cold and from a graph: research/one-pass.md.)
        last = count.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();  // `last`, and thread 0's acquire, for every thread
    if (last) {
        // Load bearing: __ldcg, a coherent load from L2. A plain load of a
        // const __restrict__ pointer may take the read-only path, which
        // holds only for data nothing writes while the kernel runs, and
        // the other blocks of this very grid wrote these partials.
        const float total = addPartialsInOrder<kV10PartialsPerThread>(
            partials, gridDim.x, [](const float* p) { return __ldcg(p); });
        if (threadIdx.x == 0) {
            *out = total;
            count.store(0u, cuda::memory_order_relaxed);
        }
    }
    COURSE_BLOCK_END();
}
// end snippet

// snippet: v10-dispatch
// v10's launches. Up to one tile, v6's kernel alone, as v9. A grid of one
// block, as v9 too: that block's sum is the total, which reduceV9 writes
// without v10's wait, atomic and re-read. Up to one wave of v9's blocks,
// v9's grid in one programmatic launch. Beyond, v9's two passes: there
// thousands of blocks would queue on one counter and the last block would
// read thousands of partials one round trip after the rest, we think
// (research/one-pass.md measured the one-pass kernel beyond one wave, not
// these causes apart; the one-block choice was not timed against it).
void enqueueV10(size_t n, cudaStream_t s) {
    const unsigned int blocks = gridFor(n);
    if (n <= kTileElems || blocks == 1 ||
        blocks > static_cast<unsigned int>(gMachineGrid)) {
        enqueueV9<kV9Waves>(n, s);
        return;
    }
    course::launch(reduceV10, blocks, kThreadsPerBlock, s, {0, gProgrammatic},
                   gIn, n, gPartials, gArrived, gOut);
}
// end snippet

// snippet: read-ceiling
// The read ceiling: every 16-byte word of the input read once, with v9's
// grid and its very loop, folded with XOR (two 3-input LOP3s a word, exact in
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

void enqueueCeiling(size_t n, cudaStream_t s) {
    readCeiling<<<gridFor(n), kThreadsPerBlock, 0, s>>>(gIn, n, gBits);
}

// What a user would call instead.
void enqueueCub(size_t n, cudaStream_t s) {
    size_t bytes = gCubTemp.size();
    CUDA_CHECK(cub::DeviceReduce::Sum(gCubTemp.get(), bytes, gIn.get(),
                                      gOut.get(), static_cast<int64_t>(n), s));
}

// ---- The rows, their checks, and main ----

// What a row's check asks for: a sum with the same bits every run, a sum
// in any order (v8's atomics), or the ceiling's XOR.
enum Check { kSameBits, kAnyOrder, kXor };

// snippet: versions-table
// Every row, in ladder order: a new version is its kernel and one line
// here. `against`: what the comparison rule decides it against (each rung
// against the one before, or the one it improves on; the last rungs against
// CUB, the ceiling and v9's one-wave self). `swept`: in the sweep too.
struct Version {
    const char* name;    // --only, the JSON's "version"
    const char* change;  // what it changes, in a few words
    void (*enqueue)(size_t, cudaStream_t);
    Check check;
    bool swept;
    std::vector<std::string> against;
};
// clang-format off
const Version kVersions[] = {
    {"v1", "interleaved, divergent", twoPass<reduceV1, 1>, kSameBits, false, {}},
    {"v2", "interleaved, strided", twoPass<reduceV2, 1>, kSameBits, false, {"v1"}},
    {"v3", "sequential", twoPass<reduceV3, 1>, kSameBits, false, {"v1"}},
    {"v4", "two loads", twoPass<reduceV4, 2>, kSameBits, false, {"v3"}},
    {"v5", "warp shuffle", twoPass<reduceV5, 2>, kSameBits, false, {"v4"}},
    {"v6", "16 items in registers", twoPass<reduceV6, kItems>, kSameBits, false, {"v5"}},
    {"v7", "float4 loads", twoPass<reduceV7, kItems>, kSameBits, false, {"v6"}},
    {"v8", "grid-stride + atomics", enqueueV8, kAnyOrder, false, {"v7"}},
    {"v9", "grid-stride + fixed 2nd pass", enqueueV9<kV9Waves>, kSameBits, true,
     {"v8", "cub", "ceiling", "v9-one-wave"}},
    {"v9-one-wave", "v9 in a grid of one wave", enqueueV9<1>, kSameBits, false, {}},
    {"v10", "one pass: the last block adds", enqueueV10, kSameBits, true, {"v9", "cub", "ceiling"}},
    {"cub", "cub::DeviceReduce::Sum", enqueueCub, kSameBits, true, {}},
    {"ceiling", "read ceiling (XOR)", enqueueCeiling, kXor, true, {"cub"}},
};
// clang-format on
// end snippet

// The host's float64 sum and XOR of the random input's first n values.
course::RandomSums gSums;

// Runs the row once at the experiment's n on the input in place and checks
// it. On n ones every partial and total is a whole number a float holds
// exactly, in any order, so a sum must equal n (the trick day 77 cites); on
// the random input it must be within kRandomTolerance of the host's float64
// sum; a deterministic one gives the same bits again (v8 adds into *out: its
// second run is not compared). The ceiling's XOR must be the host's.
course::Checked checkRow(const course::Checking& at) {
    const Version& v = course::byName(kVersions, at.row.name);
    const size_t n = at.size;
    const bool ones = at.input == "ones";
    gSums.upTo(n);
    CUDA_CHECK(cudaMemsetAsync(gOut, 0, sizeof(float), at.stream));
    CUDA_CHECK(cudaMemsetAsync(gBits, 0, sizeof(unsigned int), at.stream));
    v.enqueue(n, at.stream);
    if (v.check == kXor) {  // 1.0f's bits XORed n times, or the host's XOR
        return course::expectAll(gBits.get(), 1, [&](size_t) {
            return ones ? n % 2 * 0x3f800000u : gSums.xorBits();
        });
    }
    const float got = course::toHost(gOut.get(), 1)[0];
    v.enqueue(n, at.stream);  // a deterministic sum gives its bits again
    const float again = course::toHost(gOut.get(), 1)[0];
    course::Checked c = course::closeTo(got, ones ? n : gSums.sum(),
                                        ones ? 0.0 : kRandomTolerance);
    c.ok &= v.check != kSameBits || again == got;
    c.detail += course::format("; again %.9g", again);
    return c;
}

// One experiment: the versions of `group` at n, each checked on the inputs
// of onesThenRandom, then timed together in every mode.
// v10 runs v9's very kernel below two tiles, and above 2,048 tiles (past
// one wave on any GPU of under 256 SMs): there the two are a second
// same-code pair. The timeline build records, each after an L2 flush, v9's
// two kernels and v10's one where v9's second pass costs most (65,536 and
// 1 Mi elements) and where v10's last block adds the most partials (4 Mi),
// and at 1 GiB v9 in its waves, in one wave, and the ceiling.
course::Experiment experiment(const char* group, size_t n) {
    const bool sweep = group == std::string("sweep");
    course::Experiment e{
        .group = group,
        .label = course::format("%s n=%zu", group, n),
        .size = n,
        .twins = {"cub"},
        .inputs = course::onesThenRandom(gIn, n),
        .check = checkRow,
        .result = [] { return course::toHost(gOut.get(), 1)[0]; },
        .timeline = {.kernels = {"flush-read", "{row}", "second-pass"},
                     .cold = true}};
    if (n < 2 * kTileElems || n / kTileElems > 2048) {
        e.sameCode = {{"v10", "v9"}};
    }
    if (!sweep && n == kLadderLarge) {
        e.timeline.rows = {"v9", "v9-one-wave", "ceiling"};
    } else if (sweep && (n == 65536 || n == 1048576 || n == 4194304)) {
        e.timeline.rows = {"v9", "v10"};
    }
    for (const Version& v : kVersions) {
        if (!sweep || v.swept) {
            e.cases.push_back(
                {.name = v.name,
                 .work = [&v, n](cudaStream_t s) { v.enqueue(n, s); },
                 .bytes = sizeof(float) * static_cast<double>(n),
                 .fields = course::Row().str("change", v.change),
                 .against = v.against,
                 .sameBits = v.check == kSameBits});
        }
    }
    return e;
}

// The buffers every launcher uses, for n elements, and the two facts of
// the GPU they depend on. Programmatic launch only where the code that runs
// holds the wait: the second pass compiled for 9.0 or newer (its PTX
// architecture, as CUB's PtxVersion() asks). A build for older GPUs, run on
// a newer one from its PTX, has no wait in it and must not overlap.
void allocate(size_t n) {
    gProgrammatic = course::ptxVersion(finishPartials) >= 90;
    gMachineGrid = course::residentBlocks(reduceV9, kThreadsPerBlock, {});
    size_t cubBytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cubBytes, gIn.get(), gOut.get(),
                                      static_cast<int64_t>(n)));
    gCubTemp.resize(cubBytes);
    gIn.resize(n);
    gPartials.resize(std::max(course::ceilDiv(n, kThreadsPerBlock),
                              static_cast<size_t>(gMachineGrid) * kV9Waves));
    gOut.resize(1);
    gBits.resize(1);
    gArrived.assign({0u});
}

int main(int argc, char** argv) {
    course::Lesson l(
        argc, argv,
        {.text = "Sums floats with ten versions of a reduction, CUB and a "
                 "read ceiling: the ladder at two sizes, then the last rungs, "
                 "CUB and the ceiling at every power of two and its "
                 "neighbour.",
         .unit = "elements to sum (one size for the ladder and the sweep)",
         .bytesEach = 4.0 + 4.0 / kThreadsPerBlock,  // input, v1's partials
         .gpuSettings = {{"machine_grid", &gMachineGrid},
                         {"programmatic", &gProgrammatic}}});
    for (size_t n : l.sizes(kLadder)) {
        l.add(experiment("ladder", n));
    }
    for (size_t n : l.sizes(kSweep)) {
        l.add(experiment("sweep", n));
    }
    return l.run([&] { allocate(l.largest()); });
}
