// SPDX-License-Identifier: MIT
//
// Day 77: thread block clusters and distributed shared memory (DSMEM).
//
// One question, asked several ways: when does combining blocks' work
// inside a cluster, through each other's shared memory, beat going to
// global memory? The program takes the cost of a cluster apart, builds the
// schedules where DSMEM can pay, measures them against what a user would
// call instead (cub::DeviceHistogram), and uses DSMEM for a halo exchange.
//
//   group           rows                 what they price
//   first-and-costs atomic               one block per 512 elements, one
//                                        same-address atomicAdd per block
//                   dsm-1/2/4/8          the same blocks in clusters; rank 0
//                                        reads the others' partials through
//                                        DSMEM, one atomic per cluster
//                   store                the block reduction alone: each
//                                        block stores its partial
//                   cluster-launch-N     `store` launched in clusters of N,
//                                        no barrier: the launch's price
//                   cluster-store-N      the cluster tail with a store in
//                                        place of the atomic: launch and
//                                        both barriers
//                   atomics-only         the atomics alone, no loads
//   persistent      persistent-*         a grid sized to the machine, one
//                                        tail per block: atomic or cluster
//   histogram       histogram-*-B-D      B bins (256, 4,096, 65,536), keys
//                                        uniform or skewed (D): global
//                                        atomics, per-block private
//                                        histograms flushed with atomics or
//                                        combined in a cluster, the bins
//                                        spread over a cluster, and CUB
//   stencil         stencil-global/dsm   a 3-point stencil, halo from global
//                                        memory or from the neighbour block
//   latency         chase-*, bandwidth   how far away DSMEM is
//
// Every reduction sums all-ones input whose count is under 2^24, so every
// partial and running total is a whole number a float holds exactly, in
// any order (day 24's trick): its check is exact. Histograms are compared
// with the host's counts bin by bin; the stencil with a float64 reference;
// the chase with the index the host predicts. Nothing is timed before its
// check has run.
//
// Other builds of this file:
//   day77_cluster_reduction_no_trailing_sync
//   (-DDAY77_DROP_TRAILING_CLUSTER_SYNC)
//       the trailing cluster.sync() calls removed: the bug the page shows.
//   day77_cluster_reduction_timeline  (-DCOURSE_TIMELINE) when each block of
//       the first schedule started and ended, plainly and in clusters.
//
// Build:  cmake --build build --target day77_cluster_reduction
// Run:    build/bin/day77_cluster_reduction                  everything
//         build/bin/day77_cluster_reduction --only histogram  one group
//         build/bin/day77_cluster_reduction --size 65536 --quick
//
// Needs compute capability 9.0 (clusters and DSMEM exist on Hopper and
// newer). -arch=sm_90, not sm_90a: nothing here is architecture-specific,
// and sm_90 embeds PTX the driver compiles forward onto newer GPUs.
//
// Whether this program has run on real hardware is not written here: the
// day's README shows the promoted run and its provenance, or says
// UNVERIFIED. See research/REVIEW-PROCESS.md.

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
    const size_t n4 = n / 4;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t first =
        blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;

    float acc = 0.0f;
    for (size_t i = first; i < n4; i += stride) {
        const float4 v = in4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    // The n % 4 leftovers, at most three, go to the first threads.
    if (first < n - 4 * n4) {
        acc += in[4 * n4 + first];
    }

    __shared__ float blockTotal;
    const float total = course::blockSum<kThreadsPerBlock>(acc);
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

// Histogram keys below `bins`: uniform, or (skewed) kHotFraction of them
// in kHotBins evenly spaced bins. Launch assumption: one thread per key.
__global__ void fillKeys(unsigned int* keys, size_t n, unsigned int bins,
                         bool skewed) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i >= n) {
        return;
    }
    const unsigned int uniform =
        static_cast<unsigned int>(course::hashUnit(i, 777u) * bins) % bins;
    const unsigned int hot =
        static_cast<unsigned int>(course::hashUnit(i, 999u) * kHotBins) %
        kHotBins * (bins / kHotBins);
    keys[i] =
        (skewed && course::hashUnit(i, 555u) < kHotFraction) ? hot : uniform;
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
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreadsPerBlock;
    for (size_t i =
             blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
         i < n; i += stride) {
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
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreadsPerBlock;
    for (size_t i =
             blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
         i < n; i += stride) {
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
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreadsPerBlock;
    for (size_t i =
             blockIdx.x * static_cast<size_t>(kThreadsPerBlock) + threadIdx.x;
         i < n; i += stride) {
        atomicAdd(&out[keys[i]], 1u);
    }
}
// end snippet

// snippet: stencil-dsm
// 3-point stencil, out[i] = 0.25 in[i-1] + 0.5 in[i] + 0.25 in[i+1], with
// 0 outside [0, n). Each block owns kThreadsPerBlock outputs; its two halo
// elements are the neighbouring blocks' edge elements, which those blocks
// have already loaded into their shared memory. Inside a cluster they are
// read from there through DSMEM; at the cluster's ends, from global.
//
// Launch assumption: blockDim.x == kThreadsPerBlock, clusters of
// kStencilCluster along x, grid a multiple of the cluster size (padded
// blocks past n load zeros and store nothing).
__global__ void stencilDsm(const float* __restrict__ in, size_t n,
                           float* __restrict__ out) {
    __shared__ float tile[kThreadsPerBlock + 2];  // [0] and [last]: halo
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned int tid = threadIdx.x;
    const unsigned int rank = cluster.block_rank();
    const size_t base = blockIdx.x * static_cast<size_t>(kThreadsPerBlock);
    const size_t i = base + tid;

    tile[tid + 1] = (i < n) ? in[i] : 0.0f;

    // cluster.sync() is a barrier for every thread of every block in the
    // cluster, with release/acquire ordering: this block's own tile is
    // complete (it subsumes a __syncthreads()) and so are the neighbours'.
    cluster.sync();

    if (tid == 0) {  // left halo: the previous block's last element
        if (rank > 0) {
            tile[0] = cluster.map_shared_rank(tile, rank - 1)[kThreadsPerBlock];
        } else {
            tile[0] = (base > 0 && base - 1 < n) ? in[base - 1] : 0.0f;
        }
    } else if (tid == 1) {  // right halo: the next block's first element
        const size_t next = base + kThreadsPerBlock;
        if (rank + 1 < cluster.num_blocks()) {
            tile[kThreadsPerBlock + 1] =
                cluster.map_shared_rank(tile, rank + 1)[1];
        } else {
            tile[kThreadsPerBlock + 1] = (next < n) ? in[next] : 0.0f;
        }
    }
    __syncthreads();  // the halo slots written before any thread reads them

    if (i < n) {
        out[i] =
            0.25f * tile[tid] + 0.5f * tile[tid + 1] + 0.25f * tile[tid + 2];
    }

#ifndef DAY77_DROP_TRAILING_CLUSTER_SYNC
    // Load bearing: the neighbours may still be reading this block's tile.
    // The cuda-oxide book's version of this kernel omits it.
    cluster.sync();
#endif
}
// end snippet

// The comparison: the same tile, with both halo elements read from global
// memory (where they usually hit in L1 or L2, since the neighbouring block
// loaded them too). Launch assumption: as stencilDsm, without clusters.
__global__ void stencilGlobal(const float* __restrict__ in, size_t n,
                              float* __restrict__ out) {
    __shared__ float tile[kThreadsPerBlock + 2];
    const unsigned int tid = threadIdx.x;
    const size_t base = blockIdx.x * static_cast<size_t>(kThreadsPerBlock);
    const size_t i = base + tid;

    tile[tid + 1] = (i < n) ? in[i] : 0.0f;
    if (tid == 0) {
        tile[0] = (base > 0 && base - 1 < n) ? in[base - 1] : 0.0f;
    } else if (tid == 1) {
        const size_t next = base + kThreadsPerBlock;
        tile[kThreadsPerBlock + 1] = (next < n) ? in[next] : 0.0f;
    }
    __syncthreads();  // tile and halo complete before any thread reads

    if (i < n) {
        out[i] =
            0.25f * tile[tid] + 0.5f * tile[tid + 1] + 0.25f * tile[tid + 2];
    }
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

namespace {

using Enqueue = std::function<void(cudaStream_t)>;

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

// One row of a group, as data: its name, the cluster size it launches
// with (0: no cluster), its global atomics per launch (-1: not counted),
// the bytes it moves per launch (for GB/s), how it is checked, what it
// enqueues, and what else its JSON row says about it.
struct Mode {
    std::string name;
    int cluster;
    long long atomics;
    double bytes;
    std::function<bool()> check;
    Enqueue enqueue;
    course::Row fields;
};

// A launch of `kernel` over `blocks` blocks in clusters of `cluster`.
template <typename... KernelArgs, typename... Args>
void inClusters(void (*kernel)(KernelArgs...), int blocks, int cluster,
                cudaStream_t s, size_t smem, Args&&... args) {
    course::launch(
        kernel, blocks, kThreadsPerBlock, s,
        course::LaunchAttrs{static_cast<unsigned int>(cluster), false, smem},
        std::forward<Args>(args)...);
}

// Runs `enqueue` once on a zeroed accumulator; the sum must be n exactly.
bool checkSum(Run& r, const std::string& name, const Enqueue& enqueue) {
    CUDA_CHECK(cudaMemsetAsync(r.sum, 0, sizeof(float), r.l.stream()));
    enqueue(r.l.stream());
    const double got = course::toHost(r.sum, 1)[0];
    char detail[120];
    std::snprintf(detail, sizeof detail, "got %.9g, want %zu", got, r.n);
    return r.l.check(name, got == static_cast<double>(r.n), detail);
}

// Runs `enqueue` once over poisoned partials; the first `count` must add
// up to n exactly (an unwritten one is NaN and fails).
bool checkStored(Run& r, const std::string& name, int count,
                 const Enqueue& enqueue) {
    course::poison(r.partials, static_cast<size_t>(count), r.l.stream());
    enqueue(r.l.stream());
    double got = 0.0;
    for (float v : course::toHost(r.partials, static_cast<size_t>(count))) {
        got += v;
    }
    char detail[120];
    std::snprintf(detail, sizeof detail, "%d partials add to %.9g, want %zu",
                  count, got, r.n);
    return r.l.check(name, got == static_cast<double>(r.n), detail);
}

// Checks every mode, then (only if all passed) times them as one set in
// batch and in cold mode (course/sets.cuh: interleaved, until the rule
// decides each pair of `versus`), a JSON row per mode and mode of timing.
// `twin`: the mode timed a second time beside itself, "NAME-twin", the
// same code whose verdict against itself measures the rule's error rate.
void checkAndTime(Run& r, const char* group, const std::string& label,
                  const std::string& title, std::vector<Mode>& modes,
                  std::vector<course::Versus> versus,
                  const std::string& twin = "") {
    bool ok = true;
    for (Mode& m : modes) {
        ok &= m.check();
    }
    if (!ok || r.l.args().checkOnly) {
        return;  // never time a wrong kernel
    }
    if (r.l.args().profile) {
        for (Mode& m : modes) {
            course::profileRow(r.l, std::string(group) + " " + m.name,
                               m.enqueue);
        }
        return;
    }
    // Where the bytes come from: DRAM, except in the latency group, which
    // reads shared memory.
    const char* memory = std::string(group) == "latency" ? "shared" : "dram";
    std::vector<course::Contender> set;
    for (const Mode& m : modes) {
        for (bool again : {false, true}) {
            if (again && m.name != twin) {
                continue;
            }
            const std::string name = m.name + (again ? "-twin" : "");
            set.push_back({name,
                           course::Row()
                               .str("group", group)
                               .str("mode", name)
                               .str("memory", memory)
                               .integer("elements", static_cast<long long>(r.n))
                               .integer("global_atomics", m.atomics)
                               .integer("cluster", m.cluster)
                               .merge(m.fields),
                           m.bytes, m.enqueue});
        }
    }
    if (!twin.empty()) {
        versus.push_back({twin + "-twin", twin});
    }
    std::printf("\n%s\n", title.c_str());
    for (course::TimingMode mode :
         {course::TimingMode::Batch, course::TimingMode::Cold}) {
        course::timeSet(r.l, label, mode, set, versus);
    }
}

// Lets `kernel` use as much dynamic shared memory as a block may have
// (the H200 allows 227 KiB per block, 48 KiB without asking).
template <typename... KernelArgs>
void allowAllSharedMemory(const course::Lesson& l,
                          void (*kernel)(KernelArgs...)) {
    CUDA_CHECK(cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
        static_cast<int>(l.gpu().sharedMemPerBlockOptin)));
}

// The largest cluster `kernel` can launch with here, using `smem` bytes of
// dynamic shared memory, after opting in to the non-portable sizes.
template <typename... KernelArgs>
int maxCluster(void (*kernel)(KernelArgs...), size_t smem = 0) {
    return course::maxClusterSize(kernel, kThreadsPerBlock,
                                  kMaxNonPortableCluster, smem);
}

std::vector<int> clusterSizes(int maxCluster, int smallest = 1) {
    std::vector<int> out;
    for (int c : {1, 2, 4, kMaxPortableCluster, kMaxNonPortableCluster}) {
        if (c >= smallest && c <= maxCluster) {
            out.push_back(c);
        }
    }
    return out;
}

// The largest grid that every cluster size in `clusters` holds in a
// single wave, a multiple of the largest cluster: a cluster must fit
// inside one GPC, so large clusters strand SMs. Records what the
// occupancy API said.
template <typename... KernelArgs>
int oneWaveGrid(Run& r, void (*kernel)(KernelArgs...), const char* what,
                const std::vector<int>& clusters, size_t smem = 0) {
    int perSm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, kernel, kThreadsPerBlock, smem));
    int grid = r.l.gpu().multiProcessorCount * perSm;
    for (int c : clusters) {
        const int active = course::maxActiveClusters(
            kernel, kThreadsPerBlock,
            {static_cast<unsigned int>(c), false, smem});
        r.l.row(course::Row()
                    .str("group", "occupancy")
                    .str("mode", std::string(what) + "-clusters-of-" +
                                     std::to_string(c))
                    .integer("blocks_per_sm", perSm)
                    .integer("active_clusters", active)
                    .integer("blocks", active * c));
        grid = std::min(grid, active * c);
    }
    const int largest = clusters.empty() ? 1 : clusters.back();
    return std::max(largest, (grid / largest) * largest);
}

// The first schedule's rows and its costs taken apart, unchecked: what the
// timed group and the timeline build both launch.
std::vector<Mode> firstModes(Run& r) {
    const double bytes = static_cast<double>(r.n) * sizeof(float);
    const int blocks = r.firstBlocks;
    float* in = r.in;
    float* sum = r.sum;
    float* partials = r.partials;
    const size_t n = r.n;
    std::vector<Mode> modes = {
        {"atomic", 0, blocks, bytes, nullptr,
         [=](cudaStream_t s) {
             reduceBlock<Tail::Atomic>
                 <<<blocks, kThreadsPerBlock, 0, s>>>(in, n, sum);
         },
         course::Row().str("part", "first")},
        {"store", 0, 0, bytes, nullptr,
         [=](cudaStream_t s) {
             reduceBlock<Tail::Store>
                 <<<blocks, kThreadsPerBlock, 0, s>>>(in, n, partials);
         },
         course::Row().str("part", "costs")}};
    const int largest = maxCluster(reduceClusterDsm<Tail::Atomic>);
    for (int c : clusterSizes(std::min(largest, kMaxPortableCluster))) {
        const int padded = static_cast<int>(course::roundUp(blocks, c));
        const std::string cs = std::to_string(c);
        modes.push_back({"dsm-" + cs, c, padded / c, bytes, nullptr,
                         [=](cudaStream_t s) {
                             inClusters(reduceClusterDsm<Tail::Atomic>, padded,
                                        c, s, 0, in, n, sum);
                         },
                         course::Row().str("part", "first")});
        modes.push_back({"cluster-launch-" + cs, c, 0, bytes, nullptr,
                         [=](cudaStream_t s) {
                             inClusters(reduceBlock<Tail::Store>, padded, c, s,
                                        0, in, n, partials);
                         },
                         course::Row().str("part", "costs")});
        modes.push_back({"cluster-store-" + cs, c, 0, bytes, nullptr,
                         [=](cudaStream_t s) {
                             inClusters(reduceClusterDsm<Tail::Store>, padded,
                                        c, s, 0, in, n, partials);
                         },
                         course::Row().str("part", "costs")});
    }
    modes.push_back(
        {"atomics-only", 0, blocks, 0.0, nullptr,
         [=](cudaStream_t s) { atomicsOnly<<<blocks, 32, 0, s>>>(n, sum); },
         course::Row().str("part", "costs")});
    return modes;
}

void firstAndCosts(Run& r) {
    const int blocks = r.firstBlocks;
    std::vector<Mode> modes = firstModes(r);
    // How each is checked: the atomic tails by their sum, the stores by
    // their partials (a cluster store writes one per cluster, a cluster
    // launch one per block, padding included).
    std::vector<course::Versus> versus = {{"atomic", "atomics-only"}};
    for (Mode& m : modes) {
        const int padded =
            static_cast<int>(course::roundUp(blocks, std::max(m.cluster, 1)));
        const int count = m.name.rfind("cluster-store-", 0) == 0
                              ? padded / m.cluster
                          : m.cluster > 0 ? padded
                                          : blocks;
        m.check = m.atomics > 0
                      ? std::function<bool()>(
                            [&r, &m] { return checkSum(r, m.name, m.enqueue); })
                      : [&r, &m, count] {
                            return checkStored(r, m.name, count, m.enqueue);
                        };
        const std::string cs = std::to_string(m.cluster);
        if (m.name.rfind("dsm-", 0) == 0) {
            versus.push_back({m.name, "atomic"});
        } else if (m.name.rfind("cluster-launch-", 0) == 0) {
            versus.push_back({m.name, "store"});
        } else if (m.name.rfind("cluster-store-", 0) == 0) {
            versus.push_back({m.name, "cluster-launch-" + cs});
        }
    }
    checkAndTime(r, "first-and-costs", "first-and-costs",
                 "the first schedule (one block per 512 elements), and its "
                 "costs taken apart one piece at a time",
                 modes, versus, "atomic");
}

void persistent(Run& r) {
    const double bytes = static_cast<double>(r.n) * sizeof(float);
    const std::vector<int> clusters =
        clusterSizes(maxCluster(persistentReduce<true>));
    // One grid for every row, so the rows differ only in their tails.
    const int grid =
        oneWaveGrid(r, persistentReduce<true>, "persistent", clusters);
    float* in = r.in;
    float* sum = r.sum;
    const size_t n = r.n;
    std::vector<Mode> modes = {
        {"persistent-atomic", 0, grid, bytes, nullptr, [=](cudaStream_t s) {
             persistentReduce<false>
                 <<<grid, kThreadsPerBlock, 0, s>>>(in, n, sum);
         }}};
    std::vector<course::Versus> versus;
    for (int c : clusters) {
        modes.push_back({"persistent-dsm-" + std::to_string(c), c, grid / c,
                         bytes, nullptr, [=](cudaStream_t s) {
                             inClusters(persistentReduce<true>, grid, c, s, 0,
                                        in, n, sum);
                         }});
        versus.push_back({modes.back().name, "persistent-atomic"});
    }
    for (Mode& m : modes) {
        m.check = [&r, &m] { return checkSum(r, m.name, m.enqueue); };
    }
    checkAndTime(r, "persistent", "persistent",
                 "persistent schedule: " + std::to_string(grid) +
                     " blocks, one wave for every cluster size",
                 modes, versus, "persistent-atomic");
}

// The histogram at one bin count and key distribution: every way this
// lesson knows, and CUB's, checked bin by bin and timed.
void histogramCase(Run& r, unsigned int bins, bool skewed, void* cubTemp,
                   size_t cubBytes) {
    const size_t n = r.n;
    const char* dist = skewed ? "skewed" : "uniform";
    course::DeviceArray<unsigned int> keyArray(n), outArray(bins);
    unsigned int* keys = keyArray;  // the lambdas below copy the pointers
    unsigned int* out = outArray;
    fillKeys<<<static_cast<unsigned int>(course::ceilDiv(n, 256)), 256, 0,
               r.l.stream()>>>(keys, n, bins, skewed);
    CUDA_CHECK(cudaGetLastError());
    std::vector<double> want(bins, 0.0);
    for (unsigned int k : course::toHost(keys, n)) {
        want[k] += 1.0;
    }
    const size_t smemOptin = r.l.gpu().sharedMemPerBlockOptin;
    const size_t privateBytes = bins * sizeof(unsigned int);
    const double bytes = static_cast<double>(n) * sizeof(unsigned int);
    const course::Row fields =
        course::Row().integer("bins", bins).str("keys", dist);

    std::vector<Mode> modes;
    // Every row computes the whole histogram from zero, as a user would:
    // the reset is part of the work (CUB does its own).
    auto add = [&](const std::string& name, int cluster, long long atomics,
                   Enqueue work) {
        modes.push_back({name, cluster, atomics, bytes, nullptr,
                         [out, bins, work](cudaStream_t s) {
                             CUDA_CHECK(cudaMemsetAsync(
                                 out, 0, bins * sizeof(unsigned int), s));
                             work(s);
                         },
                         fields});
    };
    {
        const int grid =
            oneWaveGrid(r, histogramGlobal, "histogram-global", {});
        add("global", 0, static_cast<long long>(n), [=](cudaStream_t s) {
            histogramGlobal<<<grid, kThreadsPerBlock, 0, s>>>(keys, n, bins,
                                                              out);
        });
    }
    if (privateBytes <= smemOptin) {
        const int grid = oneWaveGrid(r, histogramPrivate<false>,
                                     "histogram-private", {}, privateBytes);
        add("private", 0, static_cast<long long>(grid) * bins,
            [=](cudaStream_t s) {
                histogramPrivate<false>
                    <<<grid, kThreadsPerBlock, privateBytes, s>>>(keys, n, bins,
                                                                  out);
            });
        const std::vector<int> clusters =
            clusterSizes(maxCluster(histogramPrivate<true>, privateBytes));
        const int cgrid =
            oneWaveGrid(r, histogramPrivate<true>, "histogram-private-dsm",
                        clusters, privateBytes);
        for (int c : clusters) {
            add("private-dsm-" + std::to_string(c), c,
                static_cast<long long>(cgrid / c) * bins, [=](cudaStream_t s) {
                    inClusters(histogramPrivate<true>, cgrid, c, s,
                               privateBytes, keys, n, bins, out);
                });
        }
    }
    for (int c : clusterSizes(kMaxNonPortableCluster, 2)) {
        const size_t slice = privateBytes / c;
        if (slice > smemOptin || maxCluster(histogramDistributed, slice) < c) {
            continue;
        }
        const int grid = oneWaveGrid(r, histogramDistributed,
                                     "histogram-distributed", {c}, slice);
        add("distributed-" + std::to_string(c), c,
            static_cast<long long>(grid / c) * bins, [=](cudaStream_t s) {
                inClusters(histogramDistributed, grid, c, s, slice, keys, n,
                           bins, out);
            });
    }
    // snippet: cub-histogram
    // What a user would call instead: CUB's even-width histogram, bins
    // [k, k + 1) for k = 0 .. bins - 1. It zeroes the counters itself.
    modes.push_back({"cub", 0, -1, bytes, nullptr,
                     [=](cudaStream_t s) {
                         size_t temp = cubBytes;
                         CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
                             cubTemp, temp, keys, out,
                             static_cast<int>(bins) + 1, 0u, bins,
                             static_cast<int64_t>(n), s));
                     },
                     fields});
    // end snippet
    // Each row against CUB; each cluster row against the row it builds
    // on: a private histogram against the plain private one, a distributed
    // one against global atomics and the private one.
    std::vector<course::Versus> versus;
    for (Mode& m : modes) {
        m.check = [&r, &m, out, bins, dist, &want] {
            course::poison(out, bins, r.l.stream());
            m.enqueue(r.l.stream());
            const course::Mismatch bad = course::compareAll(
                course::toHost(out, bins), [&](size_t k) { return want[k]; },
                [](double g, double w) { return g == w; });
            return r.l.check(
                "histogram " + m.name + " " + std::to_string(bins) + " bins " +
                    dist,
                bad.count == 0,
                bad.count == 0 ? "every bin exact" : bad.describe("bins"));
        };
        if (m.name != "cub") {
            versus.push_back({m.name, "cub"});
        }
        if (m.name.rfind("private-dsm-", 0) == 0) {
            versus.push_back({m.name, "private"});
        } else if (m.name.rfind("distributed-", 0) == 0) {
            versus.push_back({m.name, "global"});
            if (privateBytes <= smemOptin) {
                versus.push_back({m.name, "private"});
            }
        }
    }
    char title[160];
    std::snprintf(title, sizeof title, "histogram of %zu %s keys into %u bins",
                  n, dist, bins);
    checkAndTime(r, "histogram",
                 "histogram " + std::to_string(bins) + " " + dist, title, modes,
                 versus, "cub");
}

void histograms(Run& r) {
    size_t cubBytes = 0;
    for (unsigned int bins : kBinCounts) {
        size_t bytes = 0;
        CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
            nullptr, bytes, static_cast<const unsigned int*>(nullptr),
            static_cast<unsigned int*>(nullptr), static_cast<int>(bins) + 1, 0u,
            bins, static_cast<int64_t>(r.n)));
        cubBytes = std::max(cubBytes, bytes);
    }
    course::DeviceArray<char> cubTemp(cubBytes);
    allowAllSharedMemory(r.l, histogramPrivate<false>);
    allowAllSharedMemory(r.l, histogramPrivate<true>);
    allowAllSharedMemory(r.l, histogramDistributed);
    for (unsigned int bins : kBinCounts) {
        for (bool skewed : {false, true}) {
            histogramCase(r, bins, skewed, cubTemp, cubBytes);
        }
    }
}

void stencil(Run& r) {
    const size_t n = r.n;
    course::DeviceArray<float> inArray(n), outArray(n);
    float* in = inArray;  // the lambdas below copy the pointers
    float* out = outArray;
    course::fillRandom(in, n, r.l.stream());
    const std::vector<float> h = course::toHost(in, n);
    const int blocks = static_cast<int>(
        course::roundUp(course::ceilDiv(n, kThreadsPerBlock), kStencilCluster));
    // Checked against float64: |error| under 1e-6 covers float rounding of
    // three products of values in [0, 1) (each term's error is under
    // 2^-24, about 6e-8), with a wide margin, and nothing wider.
    const double tol = 1e-6;
    const double bytes = 2.0 * n * sizeof(float);  // read in, write out
    std::vector<Mode> modes = {
        {"stencil-global", 0, 0, bytes, nullptr,
         [=](cudaStream_t s) {
             stencilGlobal<<<blocks, kThreadsPerBlock, 0, s>>>(in, n, out);
         }},
        {"stencil-dsm", kStencilCluster, 0, bytes, nullptr,
         [=](cudaStream_t s) {
             inClusters(stencilDsm, blocks, kStencilCluster, s, 0,
                        static_cast<const float*>(in), n, out);
         }}};
    for (Mode& m : modes) {
        m.check = [&r, &m, &h, out, n, tol] {
            course::poison(out, n, r.l.stream());
            m.enqueue(r.l.stream());
            const course::Mismatch bad = course::compareAll(
                course::toHost(out, n),
                [&](size_t i) {
                    const double left = i > 0 ? h[i - 1] : 0.0;
                    const double right = i + 1 < n ? h[i + 1] : 0.0;
                    return 0.25 * left + 0.5 * h[i] + 0.25 * right;
                },
                [tol](double g, double w) { return std::fabs(g - w) <= tol; });
            return r.l.check(m.name, bad.count == 0,
                             bad.count == 0
                                 ? "every output within 1e-6 of float64"
                                 : bad.describe("outputs"));
        };
    }
    checkAndTime(r, "stencil", "stencil",
                 "1-D stencil, 3 points, clusters of 4 for DSMEM", modes,
                 {{"stencil-dsm", "stencil-global"}}, "stencil-global");
}

void latency(Run& r) {
    course::DeviceArray<unsigned int> links(kChaseLinks);
    course::DeviceArray<unsigned long long> out(2);
    std::vector<unsigned int> h(kChaseLinks);
    for (int k = 0; k < kChaseLinks; ++k) {
        h[k] = (k + kChaseStride) % kChaseLinks;
    }
    CUDA_CHECK(cudaMemcpy(links, h.data(), sizeof(unsigned int) * kChaseLinks,
                          cudaMemcpyHostToDevice));
    const unsigned long long wantIndex =
        (static_cast<unsigned long long>(kChaseSteps) * kChaseStride) %
        kChaseLinks;
    const course::LaunchAttrs pair{2, false, 0};

    std::printf("\nlatency: one thread, %d dependent 4-byte loads, clock64()\n",
                kChaseSteps);
    const std::pair<const char*,
                    void (*)(const unsigned int*, unsigned long long*)>
        paths[] = {{"chase-local-smem", latencyChase<Chase::LocalShared>},
                   {"chase-dsmem-mapped", latencyChase<Chase::RemoteMapped>},
                   {"chase-dsmem-ptx", latencyChase<Chase::RemotePtx>},
                   {"chase-l2", latencyChase<Chase::GlobalL2>}};
    const int trials = r.l.args().quick ? 3 : 15;
    for (const auto& [name, kernel] : paths) {
        std::vector<double> cyc;
        bool ok = true;
        // The first trial is a warm-up (module load, L2 fill): checked,
        // not kept.
        for (int t = 0; t <= trials && ok; ++t) {
            course::launch(kernel, 2, 32, r.l.stream(), pair,
                           static_cast<const unsigned int*>(links), out);
            const std::vector<unsigned long long> got = course::toHost(out, 2);
            ok = got[1] == wantIndex;
            if (t > 0) {
                cyc.push_back(static_cast<double>(got[0]) / kChaseSteps);
            }
        }
        r.l.check(name, ok,
                  ok ? "chase ended at the predicted link"
                     : "chase ended at the wrong link");
        if (!ok) {
            continue;
        }
        // summarize() works on any positive samples; here they are cycles
        // per load, and the JSON names them so.
        const course::TimingResult s =
            course::summarize(cyc, course::TimingMode::Batch);
        std::printf("%-22s median %.1f cycles (%.1f to %.1f)\n", name, s.median,
                    s.min, s.max);
        r.l.row(course::Row()
                    .str("group", "latency")
                    .str("mode", name)
                    .integer("samples", static_cast<long long>(cyc.size()))
                    .num("median_cycles", s.median)
                    .num("min_cycles", s.min)
                    .num("max_cycles", s.max)
                    .nums("samples_cycles", cyc));
    }

    // Bandwidth: two blocks per SM, in clusters of 2; each float4 slot k
    // holds four copies of k % 4, read `reps` times.
    const int blocks =
        static_cast<int>(course::roundUp(2 * r.l.gpu().multiProcessorCount, 2));
    const int reps = r.l.args().quick ? 1 : kBwReps;
    course::DeviceArray<float> sumArray(blocks);
    float* sums = sumArray;  // the lambdas below copy the pointer
    double perPass = 0.0;
    for (int k = 0; k < kBwFloats / 4; ++k) {
        perPass += 4.0 * (k % 4);
    }
    const double bytes =
        static_cast<double>(blocks) * reps * kBwFloats * sizeof(float);
    std::vector<Mode> modes;
    for (bool remote : {false, true}) {
        auto kernel = remote ? sharedBandwidth<true> : sharedBandwidth<false>;
        modes.push_back(
            {remote ? "dsm-bandwidth-remote" : "dsm-bandwidth-local", 2, 0,
             bytes, nullptr, [=](cudaStream_t s) {
                 inClusters(kernel, blocks, 2, s, 0, sums, reps);
             }});
    }
    for (Mode& m : modes) {
        m.check = [&r, &m, sums, blocks, want = perPass * reps] {
            m.enqueue(r.l.stream());
            const course::Mismatch bad = course::compareAll(
                course::toHost(sums, blocks), [want](size_t) { return want; },
                [](double g, double w) { return g == w; });
            return r.l.check(m.name, bad.count == 0,
                             bad.count == 0 ? "every block's sum exact"
                                            : bad.describe("block sums"));
        };
    }
    checkAndTime(r, "latency", "latency",
                 "shared-memory read bandwidth: " + std::to_string(blocks) +
                     " blocks in clusters of 2, each reading 32 KiB " +
                     std::to_string(reps) + " times",
                 modes, {{"dsm-bandwidth-remote", "dsm-bandwidth-local"}});
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
                  .integer("threads_per_block", kThreadsPerBlock)
                  .integer("samples", l.timing().samples)
                  .integer("batch", l.timing().batch));
    std::printf("%zu elements (%.1f MiB), all 1.0f; %d blocks of 512\n", r.n,
                r.n * 4.0 / 1048576.0, r.firstBlocks);
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
