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

#include <cooperative_groups.h>
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

// The cluster sizes tried: powers of two up to 8, the largest portable
// size ("a maximum of 8 thread blocks in a cluster is supported as a
// portable cluster size", CUDA C++ Programming Guide, Thread Block
// Clusters, checked 2026-11-29), and 16, the H100/H200 non-portable
// maximum, taken only after cudaFuncAttributeNonPortableClusterSizeAllowed
// and only where cudaOccupancyMaxPotentialClusterSize agrees.
const std::vector<int> kPortable = {1, 2, 4, 8};
const std::vector<int> kClusters = {1, 2, 4, 8, 16};

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

static_assert(kBwFloats % (4 * kThreadsPerBlock) == 0,
              "each thread reads whole float4s of the bandwidth buffer");

// ---- What every group shares ----

// The ones every reduction sums, their one sum, and the partials (one per
// block of the largest padded cluster grid: the cluster-launch rows store
// one per block, padding too; the stencil's output; the bandwidth rows'
// sums), made by main's setup after the GPU gate.
course::DeviceArray<float> gOnes, gSum, gPartials;
int gSms = 0;

int firstBlocks(size_t n) {
    return static_cast<int>(course::ceilDiv(n, kElemsPerBlock));
}

// A group's rows at n elements, timed in batch and cold; the rows of
// `twins` timed twice, the same code against itself (the rule's false
// calls, measured in this very run).
course::Experiment group(const char* name, std::string label, size_t n,
                         std::vector<std::string> twins) {
    return {.group = name,
            .label = std::move(label),
            .key = "mode",
            .size = n,
            .modes = {course::TimingMode::Batch, course::TimingMode::Cold},
            .twins = std::move(twins)};
}

// A row: its name, its work, the bytes a call moves, its cluster size (0:
// none), what the rule decides it against, and what else names it.
course::Case row(std::string name, course::Work work, double bytes, int c,
                 std::vector<std::string> against = {}, course::Row more = {}) {
    return {.name = std::move(name),
            .work = std::move(work),
            .bytes = bytes,
            .fields = course::Row().integer("cluster", c).merge(more),
            .against = std::move(against)};
}

// The reductions' check: the ones add up to n exactly, in the sum
// (`stored` 0) or in the `stored` partials.
course::Check total(size_t stored, size_t n) {
    return course::totalIs(gSum, gPartials, stored, static_cast<double>(n));
}

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
            // The same shared array, seen through block r's window. When
            // r is 0, rank 0 reads its own tile through the window too.
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
// `clustered`, a row per portable cluster size; `toSum`, an atomic tail
// into the sum, else partials; `perCluster`, one result a cluster, else a
// block; `against`, the row the rule compares it with, at this row's
// cluster size where `sameSize`. The timeline build records five of them.
struct Shape {
    const char* name;
    void (*kernel)(const float*, size_t, float*);
    bool clustered, toSum, perCluster;
    const char *part, *against;
    bool sameSize;
};
// clang-format off
const Shape kShapes[] = {
    {"atomic", reduceBlock<Tail::Atomic>, false, true, false, "first", "atomics-only", false},
    {"dsm", reduceClusterDsm<Tail::Atomic>, true, true, true, "first", "atomic", false},
    {"store", reduceBlock<Tail::Store>, false, false, false, "costs", "", false},
    {"cluster-launch", reduceBlock<Tail::Store>, true, false, false, "costs", "store", false},
    {"cluster-store", reduceClusterDsm<Tail::Store>, true, false, true, "costs", "cluster-launch", true}};
// clang-format on

course::Experiment firstAndCosts(size_t n) {
    course::Experiment e =
        group("first-and-costs", "first-and-costs", n, {"atomic", "dsm-2"});
    e.timeline = {
        .rows = {"atomic", "dsm-1", "dsm-2", "store", "cluster-launch-1"},
        .kernels = {"{row}", ""}};
    e.check = total(0, n);
    for (const Shape& sh : kShapes) {
        for (int c : sh.clustered ? kPortable : std::vector<int>{0}) {
            const int grid = static_cast<int>(
                course::roundUp(firstBlocks(n), std::max(c, 1)));
            const int blocks = sh.perCluster ? grid / c : grid;
            const std::string size = c ? "-" + std::to_string(c) : "";
            e.cases.push_back(
                row(sh.name + size,
                    course::launchWork(sh.kernel, grid, kThreadsPerBlock, c, 0,
                                       gOnes, n, sh.toSum ? gSum : gPartials),
                    4.0 * n, c,
                    {std::string(sh.against) + (sh.sameSize ? size : "")},
                    course::Row()
                        .str("part", sh.part)
                        .integer("global_atomics", sh.toSum ? blocks : 0)));
            if (!sh.toSum) {
                e.cases.back().check = total(blocks, n);
            }
        }
    }
    e.cases.push_back(row(
        "atomics-only",
        [n](cudaStream_t s) {
            atomicsOnly<<<firstBlocks(n), 32, 0, s>>>(n, gSum);
        },
        0.0, 0, {},
        course::Row()
            .str("part", "costs")
            .integer("global_atomics", firstBlocks(n))));
    return e;
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

// The persistent rows: a grid sized to the machine, one for all, so they
// differ only in their tails: global atomics, or clusters of 1 to 16.
course::Experiment persistent(size_t n) {
    course::Experiment e = group("persistent", "persistent", n,
                                 {"persistent-atomic", "persistent-dsm-8"});
    e.check = total(0, n);
    for (int c : {0, 1, 2, 4, 8, 16}) {
        const auto grid = std::make_shared<int>(0);
        e.cases.push_back(
            row(c ? "persistent-dsm-" + std::to_string(c) : "persistent-atomic",
                course::launchWork(
                    c ? persistentReduce<true> : persistentReduce<false>, grid,
                    kThreadsPerBlock, c, 0, gOnes, n, gSum),
                4.0 * n, c, {c ? "persistent-atomic" : ""}));
        // Sized by the cluster kernel for every row, the atomic one too.
        e.cases.back().here = course::inOneWave(
            persistentReduce<true>, kThreadsPerBlock, c, kClusters, 0, grid,
            course::countPerCluster("global_atomics", 1, c));
    }
    return e;
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

// One histogram's keys (uniform or skewed), their true counts, the
// counters and CUB's scratch, made when its experiment first loads them.
struct Histogram {
    void load(size_t n, unsigned int bins, bool skewed) {
        std::vector<unsigned int> host(n);
        want.assign(bins, 0.0);
        for (size_t i = 0; i < n; ++i) {
            want[host[i] = key(i, bins, skewed)] += 1.0;
        }
        keys.assign(host);
        out.resize(bins);
        CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
            nullptr, cubBytes, keys.get(), out.get(), int(bins) + 1, 0u, bins,
            int64_t(n)));
        cubTemp.resize(cubBytes);
    }
    course::DeviceArray<unsigned int> keys, out;
    course::DeviceArray<char> cubTemp;
    std::vector<double> want;
    size_t cubBytes = 0;
};

// Every way this lesson knows to count a histogram, with CUB's. Every row
// computes the whole histogram from zero, as a user would: the reset is
// part of the work (CUB does its own). Each row is compared with CUB, a
// cluster row also with the rows it builds on; a row whose copy of the
// bins does not fit a block's shared memory is left out where it does not.
course::Experiment histogram(size_t n, unsigned int bins, bool skewed) {
    const auto h = std::make_shared<Histogram>();
    const char* keys = skewed ? "skewed" : "uniform";
    course::Experiment e =
        group("histogram", course::format("histogram %u %s", bins, keys), n,
              {"cub", "global"});
    e.fields = course::Row().integer("bins", bins).str("keys", keys);
    e.inputs = {course::loadOnce([=] { h->load(n, bins, skewed); })};
    e.check =
        course::outputIs(h->out, bins, [h](size_t k) { return h->want[k]; });
    const size_t priv = bins * sizeof(unsigned int);
    const auto add = [&](std::string name, auto kernel, int c, size_t smem,
                         std::vector<int> sizes,
                         std::vector<std::string> against) {
        const auto grid = std::make_shared<int>(0);
        e.cases.push_back(row(
            std::move(name),
            [=](cudaStream_t s) {
                CUDA_CHECK(
                    cudaMemsetAsync(h->out, 0, bins * sizeof(unsigned int), s));
                course::launchInClusters(kernel, *grid, kThreadsPerBlock, c,
                                         smem, s, h->keys.get(), n, bins,
                                         h->out.get());
            },
            4.0 * n, c, against));
        e.cases.back().here = course::inOneWave(
            kernel, kThreadsPerBlock, c, sizes, smem, grid,
            course::countPerCluster("global_atomics", c || smem ? bins : 0, c));
    };
    add("global", histogramGlobal, 0, 0, {1}, {"cub"});
    add("private", histogramPrivate<false>, 0, priv, {1}, {"cub"});
    for (int c : kClusters) {
        add(course::format("private-dsm-%d", c), histogramPrivate<true>, c,
            priv, kClusters, {"private", "cub"});
    }
    for (int c : kClusters) {
        if (c >= 2) {
            add(course::format("distributed-%d", c), histogramDistributed, c,
                priv / c, {c}, {"global", "private", "cub"});
        }
    }
    // snippet: cub-histogram
    // What a user would call instead: CUB's even-width histogram, bins
    // [k, k + 1) for k = 0 .. bins - 1. It zeroes the counters itself.
    e.cases.push_back(row(
        "cub",
        [=](cudaStream_t s) {
            size_t bytes = h->cubBytes;
            CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
                h->cubTemp.get(), bytes, h->keys.get(), h->out.get(),
                int(bins) + 1, 0u, bins, int64_t(n), s));
        },
        4.0 * n, 0));
    // end snippet
    return e;
}

// snippet: stencil-dsm
// 3-point stencil, out[i] = 0.25 in[i-1] + 0.5 in[i] + 0.25 in[i+1], with
// 0 outside [0, n). Each block owns kThreadsPerBlock outputs; its two halo
// elements are the neighbouring blocks' edge elements, which those blocks
// also load into their shared memory. With kDsm, inside a
// cluster they are read from there through DSMEM; at the cluster's ends,
// and without kDsm everywhere, from global memory (where they may hit in
// cache: the neighbour loaded them too).
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

// The stencil's rows, over a random input whose values the host knows
// without a copy back (course::fillRandom's element i is hashUnit(i)): the
// halo from global memory, or from the neighbours through DSMEM. Within
// 1e-6 of float64: three products of values in [0, 1), each term's
// rounding under 2^-24 (about 6e-8), with a wide margin.
course::Experiment stencil(size_t n) {
    const auto in = std::make_shared<course::DeviceArray<float>>();
    const int blocks = static_cast<int>(
        course::roundUp(course::ceilDiv(n, kThreadsPerBlock), kStencilCluster));
    course::Experiment e =
        group("stencil", "stencil", n, {"stencil-global", "stencil-dsm"});
    e.inputs = {course::randomInput(in, n)};
    const auto x = [n](size_t i) {  // 0 outside [0, n)
        return i < n ? static_cast<double>(course::hashUnit(i)) : 0.0;
    };
    e.check = course::outputIs(
        gPartials, n,
        [x](size_t i) {
            return 0.25 * x(i - 1) + 0.5 * x(i) + 0.25 * x(i + 1);
        },
        1e-6);
    for (bool dsm : {false, true}) {
        const int c = dsm ? kStencilCluster : 0;
        e.cases.push_back(row(
            dsm ? "stencil-dsm" : "stencil-global",
            course::launchWork(dsm ? stencil3<true> : stencil3<false>, blocks,
                               kThreadsPerBlock, c, 0, in, n, gPartials),
            8.0 * n, c, {dsm ? "stencil-global" : ""}));  // read in, write out
    }
    return e;
}

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

// Where each chase's links live, by name.
using Chaser = void (*)(const unsigned int*, unsigned long long*);
const std::pair<const char*, Chaser> kChases[] = {
    {"chase-local-smem", latencyChase<Chase::LocalShared>},
    {"chase-dsmem-mapped", latencyChase<Chase::RemoteMapped>},
    {"chase-dsmem-ptx", latencyChase<Chase::RemotePtx>},
    {"chase-l2", latencyChase<Chase::GlobalL2>}};

// One chase: `trials` runs after a warm-up (module load, L2 fill), each a
// load's cycles; checked by where every chase ended.
course::Probe chase(const char* name, Chaser kernel, int trials) {
    return {.group = "latency",
            .label = name,
            .fields = course::Row().str("mode", name),
            .measure = [=](cudaStream_t s) {
                std::vector<unsigned int> h(kChaseLinks);
                for (int k = 0; k < kChaseLinks; ++k) {
                    h[k] = (k + kChaseStride) % kChaseLinks;
                }
                const course::DeviceArray<unsigned int> links(h);
                const course::DeviceArray<unsigned long long> out(2);
                return course::trials(
                    trials, "cycles", "every chase ended at its link",
                    "a chase ended at a wrong link",
                    [&]() -> std::optional<double> {
                        course::launch(kernel, 2, 32, s, {2, false, 0},
                                       links.get(), out.get());
                        const auto got = course::toHost(out.get(), 2);
                        if (got[1] !=
                            1ull * kChaseSteps * kChaseStride % kChaseLinks) {
                            return std::nullopt;
                        }
                        return 1.0 * got[0] / kChaseSteps;
                    });
            }};
}

// The bandwidth rows: two blocks per SM, in clusters of 2, reading their
// own buffer or the partner's `reps` times; each block's sum is `want`.
course::Experiment bandwidth(int reps) {
    // float4 k holds k % 4 four times: 0 + 4 + 8 + 12 = 24 every 16 floats.
    const double want = 24.0 * (kBwFloats / 16) * reps;
    course::Experiment e =
        group("latency", "latency bandwidth", 0,
              {"dsm-bandwidth-local", "dsm-bandwidth-remote"});
    e.fields = course::Row().str("memory", "shared");  // not DRAM's bytes
    e.check = [want](const course::Checking& at) {
        return course::checkOutput(at.stream, at.row.work, gPartials.get(),
                                   2 * gSms, [&](size_t) { return want; });
    };
    for (bool remote : {false, true}) {
        e.cases.push_back(row(
            remote ? "dsm-bandwidth-remote" : "dsm-bandwidth-local",
            [remote, reps](cudaStream_t s) {
                course::launchInClusters(
                    remote ? sharedBandwidth<true> : sharedBandwidth<false>,
                    2 * gSms, kThreadsPerBlock, 2, 0, s, gPartials.get(), reps);
            },
            0.0, 2, {remote ? "dsm-bandwidth-local" : ""}));
        e.cases.back().here = [reps](course::Case& r) {
            r.bytes = 4.0 * 2 * gSms * reps * kBwFloats;
            return std::string();
        };
    }
    return e;
}

int main(int argc, char** argv) {
    course::Lesson l(
        argc, argv,
        {.text = "Reduces ones, builds histograms and runs a stencil with and "
                 "without thread block clusters.",
         .unit = "elements of every group (under 2^24, so sums stay exact)",
         // the ones, the keys, the stencil's input and output
         .bytesEach = 16.0,
         .maxSize = (1ull << 24) - 1,
         .clusters = true});
    for (size_t n :
         l.sizes({.run = {kDefaultElems}, .quick = {kDefaultElems}})) {
        l.add(firstAndCosts(n));
        l.add(persistent(n));
        for (unsigned int bins : kBinCounts) {
            l.add(histogram(n, bins, false));
            l.add(histogram(n, bins, true));
        }
        l.add(stencil(n));
    }
    for (const auto& [name, kernel] : kChases) {
        l.add(chase(name, kernel, l.args().quick ? 3 : 15));
    }
    l.add(bandwidth(l.args().quick ? 1 : kBwReps));
    return l.run([&] {
        const size_t n = l.largest();
        gSms = l.gpu().multiProcessorCount;
        gOnes.resize(n);
        gSum.resize(1);
        gPartials.resize(std::max<size_t>(
            {n, course::roundUp(firstBlocks(n), 16), 2u * gSms}));
        course::fill(gOnes, n, 1.0f, l.stream());
        l.setting(course::Row().integer("threads_per_block", kThreadsPerBlock));
    });
}
