// SPDX-License-Identifier: MIT
//
// Day 77: thread block clusters and distributed shared memory (DSMEM).
//
// One question, asked several ways: when does combining blocks' work
// inside a cluster, through each other's shared memory, beat going to
// global memory? The groups, which --only takes:
//
//   first-and-costs  one same-address atomic per block, against clusters
//                    of 1 to 8 whose rank 0 reads the others' partials
//                    through DSMEM, and the cost taken apart
//   persistent       a grid sized to the machine, one tail per block
//   histogram        256 to 65,536 bins, uniform or skewed keys: global
//                    atomics, private copies (combined in a cluster), bins
//                    spread over a cluster, and CUB
//   stencil          a 3-point stencil's halo from global memory or from
//                    the neighbour block's shared memory
//   latency          how far away DSMEM is: a pointer chase, and bandwidth
//
// Every reduction sums ones, fewer than 2^24, so every partial is a whole
// number a float holds exactly, in any order (day 24's trick): its check
// is exact. Nothing is timed before its check has run.
//
// Other builds: day77_cluster_reduction_no_trailing_sync (the trailing
// cluster.sync() calls removed: the bug the page shows) and
// day77_cluster_reduction_timeline (when each block started and ended).
//
// Build:  cmake --build build --target day77_cluster_reduction
// Run:    build/bin/day77_cluster_reduction [--only histogram] [--size 65536]
//
// Needs compute capability 9.0 (clusters and DSMEM exist from Hopper on):
// -arch=sm_90, not sm_90a, as nothing here is architecture-specific and
// sm_90 embeds PTX the driver compiles forward onto newer GPUs. The day's
// README shows the promoted run of this program, or says UNVERIFIED.

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cub/device/device_histogram.cuh>

#include "course.cuh"

namespace cg = cooperative_groups;

constexpr int kThreadsPerBlock = 256;  // 8 warps

// Each block of the first schedule consumes two elements per thread,
// day 24's version 4.
constexpr int kElemsPerBlock = 2 * kThreadsPerBlock;

// Day 24's element count. 2^24 minus 611: the sum is under 2^24, so every
// partial lands on a float exactly, and 611 is 13 x 47, so no block size
// divides the count and every bounds check runs.
constexpr size_t kDefaultElems = 16777216ull - 611ull;

// 8 is the largest portable cluster size ("a maximum of 8 thread blocks in
// a cluster is supported as a portable cluster size", CUDA C++ Programming
// Guide, Thread Block Clusters, checked 2026-11-29). 16 is the H100/H200
// non-portable maximum, taken only after
// cudaFuncAttributeNonPortableClusterSizeAllowed and only when
// cudaOccupancyMaxPotentialClusterSize agrees.
constexpr int kMaxPortableCluster = 8;
constexpr int kMaxNonPortableCluster = 16;

// The histogram's bin counts: 256 (a byte's values), 4,096 (a private copy
// per block still fits easily: 16 KiB) and 65,536 (256 KiB: no single
// block's shared memory holds it, 227 KiB being the H200's most, so only
// a cluster can keep it on chip). All divide by every cluster size.
const unsigned int kBinCounts[] = {256, 4096, 65536};
// Skewed keys: this fraction of them fall in kHotBins bins spread evenly
// over the range; the rest are uniform. Contention on a few counters is
// what privatized histograms are for.
constexpr double kHotFraction = 0.9;
constexpr unsigned int kHotBins = 8;

// The stencil's cluster: 4 blocks, so three of every four block edges
// are exchanged through DSMEM and one through global memory.
constexpr int kStencilCluster = 4;

// The latency chase: 4,096 four-byte links (16 KiB, far under the 228 KiB
// of shared memory per SM) visited with a stride of 97, coprime to 4,096,
// so the chain visits every link before it repeats and no two consecutive
// loads share a 128-byte line.
constexpr int kChaseLinks = 4096;
constexpr unsigned int kChaseStride = 97;
constexpr int kChaseSteps = 8192;

// The bandwidth test's buffer: 32 KiB of floats per block, read 64 times
// (once under --quick, which the sanitizers run: they instrument every
// shared-memory access).
constexpr int kBwFloats = 8192;
constexpr int kBwReps = 64;

static_assert((kThreadsPerBlock & (kThreadsPerBlock - 1)) == 0,
              "the tree halves the stride, so the block size must be a "
              "power of two");
static_assert(kBwFloats % (4 * kThreadsPerBlock) == 0,
              "each thread reads whole float4s of the bandwidth buffer");

// How a kernel hands its result to global memory.
enum class Tail {
    Atomic,  // atomicAdd into one float
    Store,   // a plain store of each partial into an array
};

// The first schedule's baseline, and the store row. One result per block.
// Launch assumption: blockDim.x == kThreadsPerBlock; with or without clusters
// (the cluster-launch rows launch the Store form in clusters).
template <Tail kTail>
__global__ void reduceBlock(const float* __restrict__ in, size_t n,
                            float* __restrict__ out) {
    COURSE_BLOCK_BEGIN();
    __shared__ float tile[kThreadsPerBlock];
    course::reduceBlockToTile<kThreadsPerBlock>(in, n, tile);

    if constexpr (kTail == Tail::Atomic) {
        // snippet: atomic-tail
        if (threadIdx.x == 0) {
            atomicAdd(out, tile[0]);
        }
        // end snippet
    } else {
        if (threadIdx.x == 0) {
            out[blockIdx.x] = tile[0];
        }
    }
    COURSE_BLOCK_END();
}

// The cluster tail. Blocks in a cluster combine their partials through
// DSMEM and only rank 0 goes to global memory: one atomic per cluster, or
// (the cost row) one plain store per cluster.
//
// Launch assumption: in clusters (course::launch with clusterX), a grid
// that is a multiple of the cluster size. Both cluster.sync() calls are
// load bearing: the first makes every block's tile[0] visible before any
// remote read; the second keeps every block alive until rank 0 has
// finished reading, because a block's shared memory ceases to exist when
// the block exits.
template <Tail kTail>
__global__ void reduceClusterDsm(const float* __restrict__ in, size_t n,
                                 float* __restrict__ out) {
    COURSE_BLOCK_BEGIN();
    __shared__ float tile[kThreadsPerBlock];
    course::reduceBlockToTile<kThreadsPerBlock>(in, n, tile);

    // snippet: cluster-combine
    cg::cluster_group cluster = cg::this_cluster();

    // Every block's partial is in its own tile[0]. The barrier makes all
    // of them visible to every block of the cluster, and no block has yet
    // raced ahead into the combine.
    cluster.sync();

    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        float total = 0.0f;
        for (unsigned int r = 0; r < cluster.num_blocks(); ++r) {
            // The same shared array, seen through block r's window. Rank
            // 0's own tile comes back unchanged when r is its own rank.
            const float* remote = cluster.map_shared_rank(tile, r);
            total += remote[0];
        }
        if constexpr (kTail == Tail::Atomic) {
            atomicAdd(out, total);
        } else {
            out[blockIdx.x / cluster.num_blocks()] = total;
        }
    }

#ifndef DAY77_DROP_TRAILING_CLUSTER_SYNC
    // Without this barrier a non-zero rank may exit while rank 0 is still
    // reading its shared memory. On the H200 that is not a silent race: the
    // read of an exited block's shared memory faults, and the launch fails
    // (the page shows the review's run of the build without it).
    cluster.sync();
#endif
    // end snippet
    COURSE_BLOCK_END();
}

// The atomics alone: each block adds the number of elements it would
// have reduced, with no loads, so the total is still exactly n. Launch
// assumption: one block per kElemsPerBlock elements; one thread per block
// is enough, and 32 keeps it a whole warp.
__global__ void atomicsOnly(size_t n, float* __restrict__ sum) {
    if (threadIdx.x == 0) {
        const size_t first = blockIdx.x * static_cast<size_t>(kElemsPerBlock);
        const size_t left = n - first;
        atomicAdd(sum, static_cast<float>(
                           left < kElemsPerBlock ? left : kElemsPerBlock));
    }
}

// The persistent schedule: a grid sized to the machine, each block
// striding over the whole input with 16-byte loads, so a few thousand
// blocks do the work of 32,767 and the tail runs a few thousand times
// instead of 32,767.
//
// Launch assumption: blockDim.x == kThreadsPerBlock. With kClusterTail
// the grid is a multiple of the cluster size and the kernel is launched
// in clusters (course::launch); without it, plain <<<>>>. `in` is 16-byte
// aligned (cudaMalloc gives 256).
template <bool kClusterTail>
__global__ void persistentReduce(const float* __restrict__ in, size_t n,
                                 float* __restrict__ sum) {
    __shared__ float blockTotal;
    const float total =
        course::blockSum<kThreadsPerBlock>(course::gridStrideSum(in, n));
    if (threadIdx.x == 0) {
        blockTotal = total;
    }

    if constexpr (!kClusterTail) {
        if (threadIdx.x == 0) {
            atomicAdd(sum, total);
        }
    } else {
        // snippet: persistent-cluster-tail
        cg::cluster_group cluster = cg::this_cluster();
        // Every block's blockTotal written and visible cluster-wide.
        cluster.sync();
        if (cluster.block_rank() == 0 && threadIdx.x < 32) {
            // One lane per rank reads that rank's total through DSMEM, in
            // parallel, and a shuffle adds them: 16 ranks, one round trip.
            // Lanes past the cluster's size read rank 0 and discard it, so
            // the warp never splits before the shuffle.
            const unsigned int lane = threadIdx.x;
            const bool mine = lane < cluster.num_blocks();
            float v = *cluster.map_shared_rank(&blockTotal, mine ? lane : 0u);
            v = course::warpSum(mine ? v : 0.0f);
            if (lane == 0) {
                atomicAdd(sum, v);
            }
        }
#ifndef DAY77_DROP_TRAILING_CLUSTER_SYNC
        // No block may exit while rank 0 reads its blockTotal.
        cluster.sync();
#endif
        // end snippet
    }
}

// snippet: histogram-kernels
// Histograms: many global atomics per block, where combining on chip can
// pay. `out` holds `bins` counters, zeroed by the caller; every key is
// below `bins`. Launch assumption for all three: blockDim.x ==
// kThreadsPerBlock, a grid-stride loop over the keys.
//
// Private: each block counts into its own copy of all the bins in shared
// memory (bins x 4 bytes of dynamic shared memory), then flushes the
// non-zero counts with global atomics. With kCluster, the blocks of a
// cluster first add their copies through DSMEM: rank q owns slice q of the
// bins and sums it over every rank, so the cluster, not each block, issues
// the atomics.
template <bool kCluster>
__global__ void histogramPrivate(const unsigned int* __restrict__ keys,
                                 size_t n, unsigned int bins,
                                 unsigned int* __restrict__ out) {
    extern __shared__ unsigned int local[];
    for (unsigned int k = threadIdx.x; k < bins; k += kThreadsPerBlock) {
        local[k] = 0;
    }
    __syncthreads();  // every counter zeroed before any thread counts
    for (size_t i = course::threadIndex(); i < n; i += course::threadCount()) {
        atomicAdd(&local[keys[i]], 1u);
    }
    if constexpr (!kCluster) {
        __syncthreads();  // every count in before the flush reads it
        for (unsigned int k = threadIdx.x; k < bins; k += kThreadsPerBlock) {
            if (local[k] != 0) {
                atomicAdd(&out[k], local[k]);
            }
        }
    } else {
        cg::cluster_group cluster = cg::this_cluster();
        // Every block of the cluster has finished counting, and its counts
        // are visible to the others.
        cluster.sync();
        const unsigned int c = cluster.num_blocks();
        const unsigned int per = bins / c;
        const unsigned int first = cluster.block_rank() * per;
        for (unsigned int k = first + threadIdx.x; k < first + per;
             k += kThreadsPerBlock) {
            unsigned int total = 0;
            for (unsigned int q = 0; q < c; ++q) {
                total += cluster.map_shared_rank(local, q)[k];
            }
            if (total != 0) {
                atomicAdd(&out[k], total);
            }
        }
#ifndef DAY77_DROP_TRAILING_CLUSTER_SYNC
        // The other ranks are still reading this block's counts.
        cluster.sync();
#endif
    }
}

// Distributed: the bins are spread over the cluster's shared memory, each
// rank holding bins / c of them, so the cluster holds a histogram no
// single block could. Every key is counted by a shared-memory atomic in
// the rank that owns its bin, through DSMEM; then each rank flushes its
// slice once. (The CUDA C++ Programming Guide's own DSMEM example, checked
// 2026-11-29.) Launch assumption: in clusters of c, bins divisible by c,
// (bins / c) x 4 bytes of dynamic shared memory.
__global__ void histogramDistributed(const unsigned int* __restrict__ keys,
                                     size_t n, unsigned int bins,
                                     unsigned int* __restrict__ out) {
    extern __shared__ unsigned int slice[];
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned int per = bins / cluster.num_blocks();
    for (unsigned int k = threadIdx.x; k < per; k += kThreadsPerBlock) {
        slice[k] = 0;
    }
    // Every rank's slice zeroed before any block counts into it.
    cluster.sync();
    for (size_t i = course::threadIndex(); i < n; i += course::threadCount()) {
        const unsigned int key = keys[i];
        atomicAdd(cluster.map_shared_rank(slice, key / per) + key % per, 1u);
    }
    // Every count, from every rank, in before a rank flushes its slice;
    // after this barrier no block touches another's shared memory, so no
    // trailing barrier is needed.
    cluster.sync();
    const unsigned int first = cluster.block_rank() * per;
    for (unsigned int k = threadIdx.x; k < per; k += kThreadsPerBlock) {
        if (slice[k] != 0) {
            atomicAdd(&out[first + k], slice[k]);
        }
    }
}

// Global: every key is one global atomic. No shared memory, any size.
__global__ void histogramGlobal(const unsigned int* __restrict__ keys, size_t n,
                                unsigned int /*bins*/,
                                unsigned int* __restrict__ out) {
    for (size_t i = course::threadIndex(); i < n; i += course::threadCount()) {
        atomicAdd(&out[keys[i]], 1u);
    }
}
// end snippet

// snippet: stencil-dsm
// 3-point stencil, out[i] = 0.25 in[i-1] + 0.5 in[i] + 0.25 in[i+1], with
// 0 outside [0, n). Each block owns kThreadsPerBlock outputs; its two halo
// elements are the neighbouring blocks' edge elements, which those blocks
// have already loaded into their shared memory. With kDsm, inside a
// cluster they are read from there through DSMEM; at the cluster's ends,
// and without kDsm everywhere, from global memory (where they mostly hit
// in cache: the neighbour loaded them too).
//
// Launch assumption: blockDim.x == kThreadsPerBlock; with kDsm in clusters
// of kStencilCluster along x, the grid a multiple of it (padded blocks past
// n load zeros and store nothing).
template <bool kDsm>
__global__ void stencil3(const float* __restrict__ in, size_t n,
                         float* __restrict__ out) {
    __shared__ float tile[kThreadsPerBlock + 2];  // [0] and [last]: halo
    const unsigned int tid = threadIdx.x;
    const size_t base = blockIdx.x * static_cast<size_t>(kThreadsPerBlock);
    const size_t i = base + tid;
    const size_t next = base + kThreadsPerBlock;
    tile[tid + 1] = (i < n) ? in[i] : 0.0f;
    unsigned int rank = 0, ranks = 1;
    if constexpr (kDsm) {
        cg::cluster_group cluster = cg::this_cluster();
        rank = cluster.block_rank();
        ranks = cluster.num_blocks();
        // A barrier for every thread of every block in the cluster, with
        // release/acquire ordering: this block's own tile is complete (it
        // subsumes a __syncthreads()) and so are the neighbours'.
        cluster.sync();
        if (tid == 0 && rank > 0) {  // left halo: the previous block's last
            tile[0] = cluster.map_shared_rank(tile, rank - 1)[kThreadsPerBlock];
        } else if (tid == 1 && rank + 1 < ranks) {  // right: the next's first
            tile[kThreadsPerBlock + 1] =
                cluster.map_shared_rank(tile, rank + 1)[1];
        }
    }
    if (tid == 0 && rank == 0) {
        tile[0] = (base > 0 && base - 1 < n) ? in[base - 1] : 0.0f;
    } else if (tid == 1 && rank + 1 == ranks) {
        tile[kThreadsPerBlock + 1] = (next < n) ? in[next] : 0.0f;
    }
    __syncthreads();  // the halo slots written before any thread reads them

    if (i < n) {
        out[i] =
            0.25f * tile[tid] + 0.5f * tile[tid + 1] + 0.25f * tile[tid + 2];
    }
#ifndef DAY77_DROP_TRAILING_CLUSTER_SYNC
    if constexpr (kDsm) {
        // Load bearing: the neighbours may still be reading this block's
        // tile. The cluster chapter of the cuda-oxide book (NVlabs/cuda-oxide
        // on GitHub, read 2026-11-29) omits it in its version of this kernel.
        cg::this_cluster().sync();
    }
#endif
}
// end snippet

// Where the latency chase's links live.
enum class Chase {
    LocalShared,   // this block's shared memory: LDS
    RemoteMapped,  // rank 1's shared memory via map_shared_rank: MAPA + LD
    RemotePtx,     // rank 1's shared memory via mapa + ld.shared::cluster
    GlobalL2,      // global memory with ld.global.cg (L2, not L1)
};

// The cuda-oxide book's recommended path, in PTX: mapa turns this
// block's shared address into the same offset in block `rank`'s window of
// the cluster's shared address space, and ld.shared::cluster loads through
// that window with no generic-address check.
__device__ unsigned int mapaShared(const void* local, unsigned int rank) {
    const unsigned int addr =
        static_cast<unsigned int>(__cvta_generic_to_shared(local));
    unsigned int remote = 0;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote)
                 : "r"(addr), "r"(rank));
    return remote;
}

__device__ unsigned int loadSharedCluster(unsigned int clusterAddr) {
    unsigned int value = 0;
    asm volatile("ld.shared::cluster.u32 %0, [%1];"
                 : "=r"(value)
                 : "r"(clusterAddr)
                 : "memory");
    return value;
}

// snippet: latency-chase
// One thread follows kChaseSteps dependent links; each load's address is
// the previous load's value, so the loop runs at the memory's latency.
//
// Launch assumption: clusters of 2, blockDim.x == 32; rank 0's thread 0
// chases, through rank 1's links for the remote modes. `out` gets the
// cycle count and the last index reached (the host checks the index).
template <Chase kWhere>
__global__ void latencyChase(const unsigned int* __restrict__ globalLinks,
                             unsigned long long* __restrict__ out) {
    __shared__ unsigned int links[kChaseLinks];
    cg::cluster_group cluster = cg::this_cluster();
    for (int k = threadIdx.x; k < kChaseLinks; k += blockDim.x) {
        links[k] = (k + kChaseStride) % kChaseLinks;
    }
    cluster.sync();  // every block's links written before anyone chases

    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        const unsigned int* chain = links;
        if (kWhere == Chase::RemoteMapped) {
            chain = cluster.map_shared_rank(links, 1);
        }
        const unsigned int remoteBase = mapaShared(links, 1);
        unsigned int at = 0;
        const long long t0 = clock64();
        for (int s = 0; s < kChaseSteps; ++s) {
            if (kWhere == Chase::RemotePtx) {
                at = loadSharedCluster(remoteBase + 4u * at);
            } else if (kWhere == Chase::GlobalL2) {
                at = __ldcg(globalLinks + at);
            } else {
                at = chain[at];
            }
        }
        const long long t1 = clock64();
        out[0] = static_cast<unsigned long long>(t1 - t0);
        out[1] = at;
    }
    cluster.sync();  // rank 1 stays alive until the chase is done
}
// end snippet

// Streaming reads of a 32 KiB buffer, `reps` times, by every thread of
// every block, from this block's shared memory or from the partner
// block's (rank ^ 1) through DSMEM. Each block writes its sum; the values
// are small whole numbers, so the host checks the sums exactly.
//
// Launch assumption: clusters of 2, blockDim.x == kThreadsPerBlock.
template <bool kRemote>
__global__ void sharedBandwidth(float* __restrict__ sums, int reps) {
    __shared__ float4 buf[kBwFloats / 4];
    cg::cluster_group cluster = cg::this_cluster();
    for (int k = threadIdx.x; k < kBwFloats / 4; k += blockDim.x) {
        const float b = static_cast<float>(k % 4);
        buf[k] = make_float4(b, b, b, b);
    }
    cluster.sync();  // both buffers complete before either is read

    const float4* src = buf;
    if (kRemote) {
        src = cluster.map_shared_rank(buf, cluster.block_rank() ^ 1u);
    }
    float acc = 0.0f;
    for (int rep = 0; rep < reps; ++rep) {
        for (int k = threadIdx.x; k < kBwFloats / 4; k += blockDim.x) {
            const float4 v = src[k];
            acc += (v.x + v.y) + (v.z + v.w);
        }
    }
    const float total = course::blockSum<kThreadsPerBlock>(acc);
    if (threadIdx.x == 0) {
        sums[blockIdx.x] = total;
    }
    cluster.sync();  // the partner may still be reading this buffer
}

namespace {

// Everything the groups share: the lesson, the size, the all-ones input.
struct Run {
    Run(course::Lesson& lesson, size_t count)
        : l(lesson),
          n(count),
          firstBlocks(static_cast<int>(course::ceilDiv(n, kElemsPerBlock))),
          in(n),
          sum(1),
          // one per block of the largest padded cluster grid (the
          // cluster-launch rows store one per block, padding included)
          partials(course::roundUp(firstBlocks, kMaxNonPortableCluster)) {
        course::fill(in, n, 1.0f, l.stream());
    }
    course::Lesson& l;
    size_t n;
    int firstBlocks;  // one per kElemsPerBlock elements
    course::DeviceArray<float> in, sum, partials;  // in: n ones
};

// Histogram key i, below `bins`: uniform, or (skewed) kHotFraction of the
// keys in kHotBins evenly spaced bins.
unsigned int key(size_t i, unsigned int bins, bool skewed) {
    const unsigned int uniform =
        static_cast<unsigned int>(course::hashUnit(i, 777u) * bins) % bins;
    const unsigned int hot =
        static_cast<unsigned int>(course::hashUnit(i, 999u) * kHotBins) %
        kHotBins * (bins / kHotBins);
    return skewed && course::hashUnit(i, 555u) < kHotFraction ? hot : uniform;
}

// One row of a group, as data: its name, the cluster size it launches
// with (0: no clusters), its global atomics per launch (-1: not counted),
// the bytes it moves per launch (for GB/s), what it enqueues, what else
// its JSON row says, (the reductions) how many partials it stores (0: it
// adds into one sum), and the rows the rule compares it against.
struct Mode {
    std::string name;
    int cluster;
    long long atomics;
    double bytes;
    course::Work enqueue;
    course::Row fields = course::Row();
    int stored = 0;
    std::vector<std::string> against = {};
};

// A launch of `kernel` over `blocks` blocks in clusters of `cluster` (0:
// without clusters), with `smem` bytes of dynamic shared memory a block.
template <typename... KernelArgs, typename... Args>
void inClusters(void (*kernel)(KernelArgs...), int blocks, int cluster,
                cudaStream_t s, size_t smem, Args&&... args) {
    course::launch(
        kernel, blocks, kThreadsPerBlock, s,
        course::LaunchAttrs{static_cast<unsigned int>(cluster), false, smem},
        std::forward<Args>(args)...);
}

// The reductions' check: the ones must add up to n exactly, in *sum (an
// atomic tail) or in the `stored` partials (an unwritten one is NaN).
bool checkTotal(Run& r, const Mode& m) {
    if (m.stored == 0) {
        CUDA_CHECK(cudaMemsetAsync(r.sum, 0, sizeof(float), r.l.stream()));
    } else {
        course::poison(r.partials, static_cast<size_t>(m.stored), r.l.stream());
    }
    m.enqueue(r.l.stream());
    double got = 0.0;
    for (float v : course::toHost(r.partials, static_cast<size_t>(m.stored))) {
        got += v;
    }
    got = m.stored == 0 ? course::toHost(r.sum, 1)[0] : got;
    return r.l.check(m.name, got == static_cast<double>(r.n),
                     course::format("%d partials (0: the sum) give %.9g, "
                                    "want %zu",
                                    m.stored, got, r.n));
}

// The other groups' check: `m` run once over a poisoned `out` of `count`
// values, each within `tol` of want(i).
template <typename T, typename Want>
bool checkValues(Run& r, const std::string& name, const Mode& m, T* out,
                 size_t count, Want want, double tol = 0.0) {
    course::poison(out, count, r.l.stream());
    m.enqueue(r.l.stream());
    const course::Mismatch bad = course::compareAll(
        course::toHost(out, count), want,
        [tol](double g, double w) { return std::fabs(g - w) <= tol; });
    return r.l.check(
        name, bad.count == 0,
        bad.count == 0 ? "every value as expected" : bad.describe("values"));
}

// Checks every mode, then (only if all passed) times them as one set in
// batch and in cold mode (course/sets.cuh: interleaved, until the rule
// decides each mode against each of its `against`; `twin` timed twice, the
// rule's measured false-call rate), a JSON row per mode and timing.
void checkAndTime(Run& r, const char* group, const std::string& label,
                  const std::vector<Mode>& modes,
                  const std::function<bool(const Mode&)>& check,
                  const std::string& twin) {
    bool ok = true;
    for (const Mode& m : modes) {
        ok &= check(m);
    }
    if (!ok || r.l.args().checkOnly) {
        return;  // never time a wrong kernel
    }
    if (r.l.args().profile) {
        for (const Mode& m : modes) {
            course::profileRow(r.l, std::string(group) + " " + m.name,
                               m.enqueue);
        }
        return;
    }
    // Where the bytes come from: the latency group reads shared memory.
    const char* memory = std::string(group) == "latency" ? "shared" : "dram";
    std::vector<course::Contender> set;
    std::vector<course::Versus> versus;
    for (const Mode& m : modes) {
        for (const std::string& other : m.against) {
            versus.push_back({m.name, other});
        }
        set.push_back({"mode", m.name,
                       course::Row()
                           .str("group", group)
                           .str("memory", memory)
                           .integer("elements", static_cast<long long>(r.n))
                           .integer("global_atomics", m.atomics)
                           .integer("cluster", m.cluster)
                           .merge(m.fields),
                       m.bytes, m.enqueue});
    }
    for (course::TimingMode mode :
         {course::TimingMode::Batch, course::TimingMode::Cold}) {
        course::timeSet(r.l, label, mode, set, versus, {twin});
    }
}

// The cluster sizes this lesson tries that `kernel` launches with here,
// from `smallest` up to `limit`: the powers of two up to the portable 8,
// and 16 where the GPU allows it.
template <typename... KernelArgs>
std::vector<int> clusterSizes(void (*kernel)(KernelArgs...), int limit,
                              size_t smem = 0, int smallest = 1) {
    return course::clusterSizes(
        kernel, kThreadsPerBlock,
        {1, 2, 4, kMaxPortableCluster, kMaxNonPortableCluster}, smallest, limit,
        smem);
}

// The first schedule and its costs taken apart, one kernel of the same
// shape a row, over the first schedule's blocks (padded to whole clusters):
// what the timed group and the timeline build both launch.
std::vector<Mode> firstModes(Run& r) {
    using Kernel = void (*)(const float*, size_t, float*);
    // toSum: an atomic tail into *sum, else partials; either one a
    // cluster (perCluster) or one a block; against: the row the rule compares
    // it with ("": none), at this row's cluster size where sameSize.
    const struct {
        const char* name;
        Kernel kernel;
        bool clustered;  // one row per cluster size, NAME-C
        bool toSum, perCluster;
        const char *part, *against;
        bool sameSize;
    } shapes[] = {{"atomic", reduceBlock<Tail::Atomic>, false, true, false,
                   "first", "atomics-only", false},
                  {"dsm", reduceClusterDsm<Tail::Atomic>, true, true, true,
                   "first", "atomic", false},
                  {"store", reduceBlock<Tail::Store>, false, false, false,
                   "costs", "", false},
                  {"cluster-launch", reduceBlock<Tail::Store>, true, false,
                   false, "costs", "store", false},
                  {"cluster-store", reduceClusterDsm<Tail::Store>, true, false,
                   true, "costs", "cluster-launch", true}};
    const double bytes = static_cast<double>(r.n) * sizeof(float);
    const size_t n = r.n;
    const float* in = r.in;
    std::vector<Mode> modes;
    for (const auto& shape : shapes) {
        for (int c : shape.clustered
                         ? clusterSizes(reduceClusterDsm<Tail::Atomic>,
                                        kMaxPortableCluster)
                         : std::vector<int>{0}) {
            const int grid = static_cast<int>(
                course::roundUp(r.firstBlocks, std::max(c, 1)));
            const int blocks = shape.perCluster ? grid / c : grid;
            float* out = shape.toSum ? r.sum.get() : r.partials.get();
            const Kernel k = shape.kernel;
            const std::string size = c ? "-" + std::to_string(c) : "";
            const std::string against =
                *shape.against ? shape.against + (shape.sameSize ? size : "")
                               : "";
            modes.push_back({shape.name + size, c, shape.toSum ? blocks : 0,
                             bytes,
                             [=](cudaStream_t s) {
                                 inClusters(k, grid, c, s, 0, in, n, out);
                             },
                             course::Row().str("part", shape.part),
                             shape.toSum ? 0 : blocks});
            if (!against.empty()) {
                modes.back().against = {against};
            }
        }
    }
    const int blocks = r.firstBlocks;
    float* sum = r.sum;
    const auto alone = [=](cudaStream_t s) {
        atomicsOnly<<<blocks, 32, 0, s>>>(n, sum);
    };
    modes.push_back({"atomics-only", 0, blocks, 0.0, alone,
                     course::Row().str("part", "costs")});
    return modes;
}

void firstAndCosts(Run& r) {
    checkAndTime(
        r, "first-and-costs", "first-and-costs", firstModes(r),
        [&r](const Mode& m) { return checkTotal(r, m); }, "atomic");
}

void persistent(Run& r) {
    const std::vector<int> clusters =
        clusterSizes(persistentReduce<true>, kMaxNonPortableCluster);
    // One grid for every row, so the rows differ only in their tails.
    const int grid =
        course::oneWaveGrid(persistentReduce<true>, kThreadsPerBlock, clusters);
    const double bytes = static_cast<double>(r.n) * sizeof(float);
    const float* in = r.in;
    float* sum = r.sum;
    const size_t n = r.n;
    std::vector<Mode> modes = {
        {"persistent-atomic", 0, grid, bytes, [=](cudaStream_t s) {
             inClusters(persistentReduce<false>, grid, 0, s, 0, in, n, sum);
         }}};
    for (int c : clusters) {
        modes.push_back({"persistent-dsm-" + std::to_string(c), c, grid / c,
                         bytes, [=](cudaStream_t s) {
                             inClusters(persistentReduce<true>, grid, c, s, 0,
                                        in, n, sum);
                         }});
        modes.back().against = {"persistent-atomic"};
    }
    checkAndTime(
        r, "persistent", "persistent", modes,
        [&r](const Mode& m) { return checkTotal(r, m); }, "persistent-atomic");
}

// The histogram at one bin count and key distribution: every way this
// lesson knows, and CUB's, checked bin by bin and timed.
void histogramCase(Run& r, unsigned int bins, bool skewed) {
    const size_t n = r.n;
    const char* dist = skewed ? "skewed" : "uniform";
    std::vector<unsigned int> hostKeys(n);
    std::vector<double> want(bins, 0.0);
    for (size_t i = 0; i < n; ++i) {
        hostKeys[i] = key(i, bins, skewed);
        want[hostKeys[i]] += 1.0;
    }
    course::DeviceArray<unsigned int> keyArray(hostKeys), outArray(bins);
    const unsigned int* keys = keyArray;  // the lambdas below copy pointers
    unsigned int* out = outArray;
    const size_t optin = r.l.gpu().sharedMemPerBlockOptin;
    const size_t privateBytes = bins * sizeof(unsigned int);
    std::vector<Mode> modes;
    // Every row computes the whole histogram from zero, as a user would:
    // the reset is part of the work (CUB does its own). Each row is
    // compared with CUB, a cluster row also with the rows it builds on.
    auto add = [&](const std::string& name, int c, long long atomics,
                   auto kernel, int grid, size_t smem,
                   std::vector<std::string> against) {
        against.push_back("cub");
        modes.push_back(
            {name, c, atomics, static_cast<double>(n) * sizeof(unsigned int),
             [=](cudaStream_t s) {
                 CUDA_CHECK(
                     cudaMemsetAsync(out, 0, bins * sizeof(unsigned int), s));
                 inClusters(kernel, grid, c, s, smem, keys, n, bins, out);
             },
             course::Row().integer("bins", bins).str("keys", dist), 0,
             against});
    };
    add("global", 0, static_cast<long long>(n), histogramGlobal,
        course::oneWaveGrid(histogramGlobal, kThreadsPerBlock, {}), 0, {});
    if (privateBytes <= optin) {
        const int grid = course::oneWaveGrid(
            histogramPrivate<false>, kThreadsPerBlock, {}, privateBytes);
        add("private", 0, static_cast<long long>(grid) * bins,
            histogramPrivate<false>, grid, privateBytes, {});
        const std::vector<int> clusters = clusterSizes(
            histogramPrivate<true>, kMaxNonPortableCluster, privateBytes);
        const int cgrid = course::oneWaveGrid(
            histogramPrivate<true>, kThreadsPerBlock, clusters, privateBytes);
        for (int c : clusters) {
            add("private-dsm-" + std::to_string(c), c,
                static_cast<long long>(cgrid / c) * bins,
                histogramPrivate<true>, cgrid, privateBytes, {"private"});
        }
    }
    for (int c : clusterSizes(histogramDistributed, kMaxNonPortableCluster,
                              privateBytes / 2, 2)) {
        const size_t slice = privateBytes / c;
        if (slice <= optin) {
            const int grid = course::oneWaveGrid(histogramDistributed,
                                                 kThreadsPerBlock, {c}, slice);
            add("distributed-" + std::to_string(c), c,
                static_cast<long long>(grid / c) * bins, histogramDistributed,
                grid, slice, {"global", "private"});
        }
    }
    // snippet: cub-histogram
    // What a user would call instead: CUB's even-width histogram, bins
    // [k, k + 1) for k = 0 .. bins - 1. It zeroes the counters itself.
    size_t cubBytes = 0;
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
        nullptr, cubBytes, keys, out, static_cast<int>(bins) + 1, 0u, bins,
        static_cast<int64_t>(n)));
    course::DeviceArray<char> cubArray(cubBytes);
    void* cubTemp = cubArray;
    const auto cub = [=](cudaStream_t s) {
        size_t bytes = cubBytes;
        CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
            cubTemp, bytes, keys, out, static_cast<int>(bins) + 1, 0u, bins,
            static_cast<int64_t>(n), s));
    };
    modes.push_back({"cub", 0, -1,
                     static_cast<double>(n) * sizeof(unsigned int), cub,
                     course::Row().integer("bins", bins).str("keys", dist)});
    // end snippet
    const std::string label = "histogram " + std::to_string(bins) + " " + dist;
    checkAndTime(
        r, "histogram", label, modes,
        [&](const Mode& m) {
            return checkValues(r, label + " " + m.name, m, out, bins,
                               [&](size_t k) { return want[k]; });
        },
        "cub");
}

void histograms(Run& r) {
    const size_t optin = r.l.gpu().sharedMemPerBlockOptin;
    course::allowSharedMemory(histogramPrivate<false>, optin);
    course::allowSharedMemory(histogramPrivate<true>, optin);
    course::allowSharedMemory(histogramDistributed, optin);
    for (unsigned int bins : kBinCounts) {
        for (bool skewed : {false, true}) {
            histogramCase(r, bins, skewed);
        }
    }
}

void stencil(Run& r) {
    const size_t n = r.n;
    course::DeviceArray<float> inArray(n), outArray(n);
    const float* in = inArray;  // the lambdas below copy the pointers
    float* out = outArray;
    course::fillRandom(inArray, n, r.l.stream());
    const std::vector<float> h = course::toHost(inArray, n);
    const int blocks = static_cast<int>(
        course::roundUp(course::ceilDiv(n, kThreadsPerBlock), kStencilCluster));
    const double bytes = 2.0 * n * sizeof(float);  // read in, write out
    std::vector<Mode> modes = {
        {"stencil-global", 0, 0, bytes,
         [=](cudaStream_t s) {
             inClusters(stencil3<false>, blocks, 0, s, 0, in, n, out);
         }},
        {"stencil-dsm", kStencilCluster, 0, bytes, [=](cudaStream_t s) {
             inClusters(stencil3<true>, blocks, kStencilCluster, s, 0, in, n,
                        out);
         }}};
    modes[1].against = {"stencil-global"};
    // Within 1e-6 of float64: three products of values in [0, 1), each
    // term's rounding under 2^-24 (about 6e-8), with a wide margin.
    checkAndTime(
        r, "stencil", "stencil", modes,
        [&](const Mode& m) {
            return checkValues(
                r, m.name, m, out, n,
                [&](size_t i) {
                    return 0.25 * (i > 0 ? h[i - 1] : 0.0) + 0.5 * h[i] +
                           0.25 * (i + 1 < n ? h[i + 1] : 0.0);
                },
                1e-6);
        },
        "stencil-global");
}

// How far away DSMEM is: one thread's dependent loads (cycles a load by
// clock64, checked by where the chase ends), then read bandwidth, local
// against remote (timed, checked by every block's sum).
void latency(Run& r) {
    course::DeviceArray<unsigned long long> out(2);
    std::vector<unsigned int> h(kChaseLinks);
    for (int k = 0; k < kChaseLinks; ++k) {
        h[k] = (k + kChaseStride) % kChaseLinks;
    }
    const course::DeviceArray<unsigned int> links(h);
    const unsigned long long end =
        (static_cast<unsigned long long>(kChaseSteps) * kChaseStride) %
        kChaseLinks;
    using Chaser = void (*)(const unsigned int*, unsigned long long*);
    const std::pair<const char*, Chaser> paths[] = {
        {"chase-local-smem", latencyChase<Chase::LocalShared>},
        {"chase-dsmem-mapped", latencyChase<Chase::RemoteMapped>},
        {"chase-dsmem-ptx", latencyChase<Chase::RemotePtx>},
        {"chase-l2", latencyChase<Chase::GlobalL2>}};
    for (const auto& [name, kernel] : paths) {
        std::vector<double> cycles;
        bool ok = true;
        // Trial 0 is a warm-up (module load, L2 fill): checked, not kept.
        for (int t = 0; t <= (r.l.args().quick ? 3 : 15) && ok; ++t) {
            course::launch(kernel, 2, 32, r.l.stream(), {2, false, 0},
                           static_cast<const unsigned int*>(links), out);
            const std::vector<unsigned long long> got = course::toHost(out, 2);
            ok = got[1] == end;
            cycles.insert(cycles.end(), t > 0 ? 1 : 0,
                          static_cast<double>(got[0]) / kChaseSteps);
        }
        if (r.l.check(name, ok,
                      ok ? "ended at the predicted link"
                         : "ended at the wrong link")) {
            const auto s = course::summarize(cycles, course::TimingMode::Batch);
            std::printf("%-22s median %.1f cycles a load\n", name, s.median);
            r.l.row(course::Row()
                        .str("group", "latency")
                        .str("mode", name)
                        .num("median_cycles", s.median)
                        .num("min_cycles", s.min)
                        .num("max_cycles", s.max)
                        .nums("samples_cycles", cycles));
        }
    }
    // Bandwidth: two blocks per SM, in clusters of 2; each float4 slot k
    // holds four copies of k % 4, read `reps` times.
    const int blocks =
        static_cast<int>(course::roundUp(2 * r.l.gpu().multiProcessorCount, 2));
    const int reps = r.l.args().quick ? 1 : kBwReps;
    course::DeviceArray<float> sumArray(blocks);
    float* sums = sumArray;  // the lambdas below copy the pointer
    double want = 0.0;
    for (int k = 0; k < kBwFloats / 4; ++k) {
        want += 4.0 * (k % 4) * reps;
    }
    const double bytes = 4.0 * blocks * reps * kBwFloats;
    std::vector<Mode> modes;
    for (bool remote : {false, true}) {
        auto kernel = remote ? sharedBandwidth<true> : sharedBandwidth<false>;
        modes.push_back(
            {remote ? "dsm-bandwidth-remote" : "dsm-bandwidth-local", 2, 0,
             bytes, [=](cudaStream_t s) {
                 inClusters(kernel, blocks, 2, s, 0, sums, reps);
             }});
    }
    modes[1].against = {"dsm-bandwidth-local"};
    checkAndTime(
        r, "latency", "latency bandwidth", modes,
        [&](const Mode& m) {
            return checkValues(r, m.name, m, sums, blocks,
                               [want](size_t) { return want; });
        },
        "dsm-bandwidth-local");
}

#ifdef COURSE_TIMELINE
// When each block of the first schedule started and ended: plainly, in
// clusters of 1 and 2, and the store rows that separate the cluster
// launch from its barriers.
void timelines(Run& r) {
    course::timeline::Recorder rec(static_cast<unsigned int>(r.firstBlocks) +
                                   64u);
    const std::vector<Mode> modes = firstModes(r);
    for (const char* name :
         {"atomic", "dsm-1", "dsm-2", "store", "cluster-launch-1"}) {
        const Mode& m = course::byName(modes, name);
        const auto grids = rec.capture([&] { m.enqueue(r.l.stream()); });
        const auto [t0, t1] = course::timeline::window({&grids.at(0)});
        r.l.row(course::timeline::summarize(grids.at(0), name, t0, t1)
                    .str("schedule", name)
                    .integer("elements", static_cast<long long>(r.n)));
        std::printf("timeline %s: %zu blocks\n", name, grids.at(0).size());
    }
}
#endif

// The lesson's groups, in the order they run: --only takes their names.
const struct Group {
    const char* name;
    void (*run)(Run&);
} kGroups[] = {{"first-and-costs", firstAndCosts},
               {"persistent", persistent},
               {"histogram", histograms},
               {"stencil", stencil},
               {"latency", latency}};

}  // namespace

int main(int argc, char** argv) {
    course::Lesson l = course::begin(
        argc, argv,
        {"day77_cluster_reduction", true, course::namesOf(kGroups),
         // the ones, the histogram's keys, the stencil's input and output
         16.0,
         "Reduces ones, builds histograms and runs a stencil with and without "
         "thread block clusters. --size N (under 2^24, so sums stay exact) "
         "sets the element count of every group."});
    const size_t n = l.args().size ? l.args().size : kDefaultElems;
    if (n >= (1ull << 24)) {
        course::usage(l.spec(),
                      "--size must be under 2^24 = 16777216: above it a "
                      "float cannot hold every running total exactly");
    }
    Run r(l, n);
    l.setting(course::Row()
                  .integer("elements", static_cast<long long>(r.n))
                  .integer("threads_per_block", kThreadsPerBlock));
#ifdef DAY77_DROP_TRAILING_CLUSTER_SYNC
    std::printf(
        "BUILT WITH DAY77_DROP_TRAILING_CLUSTER_SYNC: the trailing "
        "cluster.sync() calls are removed; expect a fault\n");
#endif

#ifdef COURSE_TIMELINE
    timelines(r);
    const bool timed = false;  // the timeline build records, never times
#else
    const bool timed = true;
#endif
    for (const Group& g : kGroups) {
        if (timed && l.wants(g.name)) {
            g.run(r);
        }
    }
    return l.finish();
}
