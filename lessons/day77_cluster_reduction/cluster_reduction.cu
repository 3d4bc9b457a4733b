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
#include <memory>
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

// The negative build: the trailing cluster.sync() calls left out.
#ifdef DAY77_DROP_TRAILING_CLUSTER_SYNC
constexpr bool kDropTrailingSync = true;
#else
constexpr bool kDropTrailingSync = false;
#endif

// ---- Launching: what every group shares ----

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

// A row of a group: its name, the cluster size it launches with (0: no
// clusters), its global atomics per launch (-1: not counted), the bytes a
// launch moves, its work, what else names it, what the rule decides it
// against.
course::Case row(std::string name, int cluster, long long atomics, double bytes,
                 course::Work work, course::Row fields = {},
                 std::vector<std::string> against = {}) {
    return {.name = std::move(name),
            .work = std::move(work),
            .bytes = bytes,
            .fields = course::Row()
                          .integer("global_atomics", atomics)
                          .integer("cluster", cluster)
                          .merge(fields),
            .against = std::move(against)};
}

// What the reductions share: the size, the all-ones input, the one sum and
// the partials (one per block of the largest padded cluster grid: the
// cluster-launch rows store one per block, padding too). Its check: the
// ones add up to n exactly, in the sum (`stored` 0) or the stored partials.
struct Ones {
    Ones(size_t count, cudaStream_t stream)
        : n(count),
          firstBlocks(static_cast<int>(course::ceilDiv(n, kElemsPerBlock))),
          in(n),
          sum(1),
          partials(course::roundUp(firstBlocks, kMaxNonPortableCluster)) {
        course::fill(in, n, 1.0f, stream);
    }
    course::Checked total(const course::Case& c, int stored,
                          cudaStream_t s) const {
        CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(float), s));
        course::poison(partials, static_cast<size_t>(stored), s);
        c.work(s);
        double got = stored == 0 ? course::toHost(sum, 1)[0] : 0.0;
        for (float v : course::toHost(partials, static_cast<size_t>(stored))) {
            got += v;
        }
        return course::closeTo(got, static_cast<double>(n), 0.0);
    }
    size_t n;
    int firstBlocks;  // one per kElemsPerBlock elements
    course::DeviceArray<float> in, sum, partials;
};

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
    // reading its shared memory, which the CUDA C++ Programming Guide
    // forbids ("Distributed Shared Memory"; checked 2026-11-29).
    // On the H200 the review's run of all groups built without it fails
    // with cudaErrorLaunchFailure (the page shows it); which kernel faulted
    // first, the record does not say.
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

// The first schedule and its costs taken apart, one kernel of the same
// shape a row, over the first schedule's blocks (padded to whole clusters):
// what the timed group and the timeline build both launch. `stored`
// receives each row's partials (0: it adds into the sum).
std::vector<course::Case> firstRows(const Ones& o, std::vector<int>& stored) {
    // clustered: a row per cluster size, NAME-C; toSum: an atomic tail into
    // the sum, else partials; perCluster: one result a cluster, else a
    // block; against: the row the rule compares it with, at this row's
    // cluster size where sameSize.
    const struct {
        const char* name;
        void (*kernel)(const float*, size_t, float*);
        bool clustered, toSum, perCluster;
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
    std::vector<course::Case> rows;
    const std::vector<int> sizes =
        clusterSizes(reduceClusterDsm<Tail::Atomic>, kMaxPortableCluster);
    for (const auto& sh : shapes) {
        for (int c : sh.clustered ? sizes : std::vector<int>{0}) {
            const int grid = static_cast<int>(
                course::roundUp(o.firstBlocks, std::max(c, 1)));
            const int blocks = sh.perCluster ? grid / c : grid;
            const std::string size = c ? "-" + std::to_string(c) : "";
            float* out = sh.toSum ? o.sum.get() : o.partials.get();
            rows.push_back(row(
                sh.name + size, c, sh.toSum ? blocks : 0, 4.0 * o.n,
                [&o, k = sh.kernel, grid, c, out](cudaStream_t s) {
                    inClusters(k, grid, c, s, 0, o.in.get(), o.n, out);
                },
                course::Row().str("part", sh.part),
                {*sh.against ? sh.against + (sh.sameSize ? size : "") : ""}));
            stored.push_back(sh.toSum ? 0 : blocks);
        }
    }
    rows.push_back(row(
        "atomics-only", 0, o.firstBlocks, 0.0,
        [&o](cudaStream_t s) {
            atomicsOnly<<<o.firstBlocks, 32, 0, s>>>(o.n, o.sum);
        },
        course::Row().str("part", "costs")));
    stored.push_back(0);
    return rows;
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

// The persistent rows: one grid for all, so they differ only in their tails.
std::vector<course::Case> persistentRows(const Ones& o) {
    const auto clusters =
        clusterSizes(persistentReduce<true>, kMaxNonPortableCluster);
    const int grid =
        course::oneWaveGrid(persistentReduce<true>, kThreadsPerBlock, clusters);
    std::vector<course::Case> rows;
    std::vector<int> all = {0};  // no clusters, then each size
    all.insert(all.end(), clusters.begin(), clusters.end());
    for (int c : all) {
        rows.push_back(row(
            c ? "persistent-dsm-" + std::to_string(c) : "persistent-atomic", c,
            c ? grid / c : grid, 4.0 * o.n,
            [&o, grid, c](cudaStream_t s) {
                inClusters(c ? persistentReduce<true> : persistentReduce<false>,
                           grid, c, s, 0, o.in.get(), o.n, o.sum.get());
            },
            {}, {c ? "persistent-atomic" : ""}));
    }
    return rows;
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

// One histogram case: its keys (uniform or skewed) and their true counts,
// the counters, and every way this lesson knows to count them, with CUB's.
// Every row computes the whole histogram from zero, as a user would: the
// reset is part of the work (CUB does its own). Each row is compared with
// CUB, a cluster row also with the rows it builds on.
struct Histogram {
    Histogram(size_t count, unsigned int binCount, bool skew, size_t optin)
        : n(count), bins(binCount), skewed(skew), want(bins, 0.0) {
        std::vector<unsigned int> host(n);
        for (size_t i = 0; i < n; ++i) {
            want[host[i] = key(i, bins, skewed)] += 1.0;
        }
        keys = std::make_unique<course::DeviceArray<unsigned int>>(host);
        const size_t priv = bins * sizeof(unsigned int);
        add("global", 0, n, histogramGlobal, {}, 0, {});
        if (priv <= optin) {
            add("private", 0, bins, histogramPrivate<false>, {}, priv, {});
            const auto sizes = clusterSizes(histogramPrivate<true>,
                                            kMaxNonPortableCluster, priv);
            for (int c : sizes) {  // one grid for every size
                add("private-dsm-" + std::to_string(c), c, bins,
                    histogramPrivate<true>, sizes, priv, {"private"});
            }
        }
        for (int c : clusterSizes(histogramDistributed, kMaxNonPortableCluster,
                                  priv / 2, 2)) {
            if (priv / c <= optin) {
                add("distributed-" + std::to_string(c), c, bins,
                    histogramDistributed, {c}, priv / c, {"global", "private"});
            }
        }
        addCub();
    }
    // A row of `kernel` in clusters of c (0: none), a one-wave grid that
    // fits every size in `clusters`, `perBlock` global atomics a block (a
    // cluster, in clusters) or, for "global", n in all.
    template <typename Kernel>
    void add(std::string name, int c, long long perBlock, Kernel kernel,
             std::vector<int> clusters, size_t smem,
             std::vector<std::string> against) {
        const int grid =
            course::oneWaveGrid(kernel, kThreadsPerBlock, clusters, smem);
        const long long atomics =
            name == "global" ? perBlock : perBlock * grid / std::max(c, 1);
        against.push_back("cub");
        rows.push_back(row(
            std::move(name), c, atomics, 4.0 * n,
            [this, kernel, c, grid, smem](cudaStream_t s) {
                CUDA_CHECK(cudaMemsetAsync(out, 0, bins * sizeof(unsigned), s));
                inClusters(kernel, grid, c, s, smem, keys->get(), n, bins,
                           out.get());
            },
            fields(), against));
    }
    // snippet: cub-histogram
    // What a user would call instead: CUB's even-width histogram, bins
    // [k, k + 1) for k = 0 .. bins - 1. It zeroes the counters itself.
    void addCub() {
        CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
            nullptr, cubBytes, keys->get(), out.get(),
            static_cast<int>(bins) + 1, 0u, bins, static_cast<int64_t>(n)));
        cubTemp = std::make_unique<course::DeviceArray<char>>(cubBytes);
        rows.push_back(row(
            "cub", 0, -1, 4.0 * n,
            [this](cudaStream_t s) {
                size_t bytes = cubBytes;
                CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
                    cubTemp->get(), bytes, keys->get(), out.get(),
                    static_cast<int>(bins) + 1, 0u, bins,
                    static_cast<int64_t>(n), s));
            },
            fields()));
    }
    // end snippet
    course::Row fields() const {
        return course::Row()
            .integer("bins", bins)
            .str("keys", skewed ? "skewed" : "uniform");
    }
    size_t n;
    unsigned int bins;
    bool skewed;
    std::vector<double> want;
    std::unique_ptr<course::DeviceArray<unsigned int>> keys;
    course::DeviceArray<unsigned int> out{bins};
    size_t cubBytes = 0;
    std::unique_ptr<course::DeviceArray<char>> cubTemp;
    std::vector<course::Case> rows;
};

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

// The stencil's rows, over a random input the host keeps a copy of: the
// halo from global memory, or from the neighbours through DSMEM.
struct Stencil {
    Stencil(size_t count, cudaStream_t stream) : n(count), in(n), out(n) {
        course::fillRandom(in, n, stream);
        host = course::toHost(in, n);
        for (bool dsm : {false, true}) {
            const int c = dsm ? kStencilCluster : 0;
            rows.push_back(
                row(dsm ? "stencil-dsm" : "stencil-global", c, 0,
                    8.0 * n,  // read in, write out
                    [this, dsm, c](cudaStream_t s) {
                        inClusters(dsm ? stencil3<true> : stencil3<false>,
                                   blocks(), c, s, 0, in.get(), n, out.get());
                    },
                    {}, {dsm ? "stencil-global" : ""}));
        }
    }
    int blocks() const {
        return static_cast<int>(course::roundUp(
            course::ceilDiv(n, kThreadsPerBlock), kStencilCluster));
    }
    double want(size_t i) const {
        return 0.25 * (i > 0 ? host[i - 1] : 0.0) + 0.5 * host[i] +
               0.25 * (i + 1 < n ? host[i + 1] : 0.0);
    }
    size_t n;
    course::DeviceArray<float> in, out;
    std::vector<float> host;
    std::vector<course::Case> rows;
};

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

// One chase: `trials` runs after a warm-up (module load, L2 fill: checked,
// not kept), each a load's cycles, or empty if a chase ended at the wrong
// link.
template <typename Chaser>
std::vector<double> chase(Chaser kernel, int trials, cudaStream_t s) {
    std::vector<unsigned int> h(kChaseLinks);
    for (int k = 0; k < kChaseLinks; ++k) {
        h[k] = (k + kChaseStride) % kChaseLinks;
    }
    const course::DeviceArray<unsigned int> links(h);
    const course::DeviceArray<unsigned long long> out(2);
    std::vector<double> cycles;
    for (int t = 0; t <= trials; ++t) {
        course::launch(kernel, 2, 32, s, {2, false, 0}, links.get(), out.get());
        const std::vector<unsigned long long> got = course::toHost(out, 2);
        if (got[1] != 1ull * kChaseSteps * kChaseStride % kChaseLinks) {
            return {};
        }
        cycles.insert(cycles.end(), t > 0 ? 1 : 0, 1.0 * got[0] / kChaseSteps);
    }
    return cycles;
}

// The bandwidth rows: two blocks per SM, in clusters of 2, reading their
// own buffer or the partner's `reps` times; each block's sum is `want`.
struct Bandwidth {
    Bandwidth(int sms, int r) : blocks(2 * sms), reps(r), sums(blocks) {
        for (int k = 0; k < kBwFloats / 4; ++k) {
            want += 4.0 * (k % 4) * reps;
        }
        for (bool remote : {false, true}) {
            rows.push_back(row(
                remote ? "dsm-bandwidth-remote" : "dsm-bandwidth-local", 2, 0,
                4.0 * blocks * reps * kBwFloats,
                [this, remote](cudaStream_t s) {
                    inClusters(
                        remote ? sharedBandwidth<true> : sharedBandwidth<false>,
                        blocks, 2, s, 0, sums.get(), reps);
                },
                {}, {remote ? "dsm-bandwidth-local" : ""}));
        }
    }
    int blocks, reps;
    course::DeviceArray<float> sums;
    double want = 0.0;
    std::vector<course::Case> rows;
};

// ---- The groups, their checks, and main ----

namespace {

// Checks every row of a group, then times them as one set in batch and in
// cold mode, `twin` twice (the rule's measured false-call rate).
void timeGroup(course::Lesson& l, const char* group, const std::string& label,
               size_t n, const std::vector<course::Case>& rows,
               std::function<course::Checked(const course::Case&)> check,
               const std::string& twin) {
    course::run(
        l,
        {.label = label,
         .key = "mode",
         .fields = course::Row()
                       .str("group", group)
                       .str("memory",
                            std::string(group) == "latency" ? "shared" : "dram")
                       .integer("elements", n),
         .modes = {course::TimingMode::Batch, course::TimingMode::Cold},
         .twins = {twin},
         .check = [&](const course::Case& c,
                      const std::string&) { return check(c); }},
        rows);
}

void firstAndCosts(course::Lesson& l, const Ones& o) {
    std::vector<int> stored;
    const std::vector<course::Case> rows = firstRows(o, stored);
    timeGroup(
        l, "first-and-costs", "first-and-costs", o.n, rows,
        [&](const course::Case& c) {
            return o.total(c, stored[&c - rows.data()], l.stream());
        },
        "atomic");
}

void persistent(course::Lesson& l, const Ones& o) {
    timeGroup(
        l, "persistent", "persistent", o.n, persistentRows(o),
        [&](const course::Case& c) { return o.total(c, 0, l.stream()); },
        "persistent-atomic");
}

void histograms(course::Lesson& l, const Ones& o) {
    const size_t optin = l.gpu().sharedMemPerBlockOptin;
    course::allowSharedMemory(histogramPrivate<false>, optin);
    course::allowSharedMemory(histogramPrivate<true>, optin);
    course::allowSharedMemory(histogramDistributed, optin);
    for (unsigned int bins : kBinCounts) {
        for (bool skewed : {false, true}) {
            const Histogram h(o.n, bins, skewed, optin);
            timeGroup(
                l, "histogram",
                course::format("histogram %u %s", bins,
                               skewed ? "skewed" : "uniform"),
                o.n, h.rows,
                [&](const course::Case& c) {
                    return course::checkOutput(
                        l.stream(), c.work, h.out.get(), bins,
                        [&](size_t k) { return h.want[k]; });
                },
                "cub");
        }
    }
}

// Within 1e-6 of float64: three products of values in [0, 1), each term's
// rounding under 2^-24 (about 6e-8), with a wide margin.
void stencil(course::Lesson& l, const Ones& o) {
    const Stencil st(o.n, l.stream());
    timeGroup(
        l, "stencil", "stencil", o.n, st.rows,
        [&](const course::Case& c) {
            return course::checkOutput(
                l.stream(), c.work, st.out.get(), o.n,
                [&](size_t i) { return st.want(i); }, 1e-6);
        },
        "stencil-global");
}

// How far away DSMEM is: one thread's dependent loads (cycles a load by
// clock64, checked by where the chase ends), then read bandwidth, local
// against remote (timed, checked by every block's sum).
void latency(course::Lesson& l, const Ones& o) {
    using Chaser = void (*)(const unsigned int*, unsigned long long*);
    const std::pair<const char*, Chaser> paths[] = {
        {"chase-local-smem", latencyChase<Chase::LocalShared>},
        {"chase-dsmem-mapped", latencyChase<Chase::RemoteMapped>},
        {"chase-dsmem-ptx", latencyChase<Chase::RemotePtx>},
        {"chase-l2", latencyChase<Chase::GlobalL2>}};
    for (const auto& [name, kernel] : paths) {
        const std::vector<double> cycles =
            chase(kernel, l.args().quick ? 3 : 15, l.stream());
        if (l.check(name, !cycles.empty(), "where the chase ended")) {
            const auto s = course::summarize(cycles, course::TimingMode::Batch);
            std::printf("%-22s median %.1f cycles a load\n", name, s.median);
            l.row(course::Row()
                      .str("group", "latency")
                      .str("mode", name)
                      .num("median_cycles", s.median)
                      .num("min_cycles", s.min)
                      .num("max_cycles", s.max)
                      .nums("samples_cycles", cycles));
        }
    }
    const Bandwidth bw(l.gpu().multiProcessorCount,
                       l.args().quick ? 1 : kBwReps);
    timeGroup(
        l, "latency", "latency bandwidth", o.n, bw.rows,
        [&](const course::Case& c) {
            return course::checkOutput(l.stream(), c.work, bw.sums.get(),
                                       bw.blocks,
                                       [&](size_t) { return bw.want; });
        },
        "dsm-bandwidth-local");
}

// When each block of the first schedule started and ended: plainly, in
// clusters of 1 and 2, and the store rows that separate the cluster
// launch from its barriers.
void timelines(course::Lesson& l, const Ones& o) {
    course::timeline::Recorder rec(static_cast<unsigned int>(o.firstBlocks) +
                                   64u);
    std::vector<int> stored;
    const std::vector<course::Case> rows = firstRows(o, stored);
    for (const char* name :
         {"atomic", "dsm-1", "dsm-2", "store", "cluster-launch-1"}) {
        course::timeline::record(
            l, rec, {name, ""},
            course::Row().str("schedule", name).integer("elements", o.n),
            [&] { course::byName(rows, name).work(l.stream()); });
    }
}

// The lesson's groups, in the order they run: --only takes their names.
const struct Group {
    const char* name;
    void (*run)(course::Lesson&, const Ones&);
} kGroups[] = {{"first-and-costs", firstAndCosts},
               {"persistent", persistent},
               {"histogram", histograms},
               {"stencil", stencil},
               {"latency", latency}};

}  // namespace

int main(int argc, char** argv) {
    course::Lesson l = course::begin(
        argc, argv,
        {.clusters = true,
         .variants = course::namesOf(kGroups),
         // the ones, the histogram's keys, the stencil's input and output
         .bytesPerElement = 16.0,
         .about = "Reduces ones, builds histograms and runs a stencil with and "
                  "without thread block clusters. --size N (under 2^24, so "
                  "sums stay exact) sets the element count of every group.",
         .maxSize = (1ull << 24) - 1});
    const Ones o(l.args().size ? l.args().size : kDefaultElems, l.stream());
    l.setting(course::Row()
                  .integer("elements", o.n)
                  .integer("threads_per_block", kThreadsPerBlock));
    if constexpr (kDropTrailingSync) {
        std::printf(
            "BUILT WITH DAY77_DROP_TRAILING_CLUSTER_SYNC: the trailing "
            "cluster.sync() calls are removed; expect a fault\n");
    }
    if constexpr (course::kTimelineBuild) {
        timelines(l, o);  // the timeline build records, never times
    } else {
        for (const Group* g : l.chosen(kGroups)) {
            g->run(l, o);
        }
    }
    return l.finish();
}
