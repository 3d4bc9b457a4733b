// SPDX-License-Identifier: MIT
//
// Day 77: thread block clusters and distributed shared memory (DSMEM).
//
// One question, asked five ways. The seed of this lesson reduced 64 MiB of
// ones with one block per 512 elements and asked whether combining block
// partials inside a cluster, through DSMEM, beats one global atomic per
// block. On the H200 it did not, and this program finds out why by taking
// the cost apart, then builds the schedule where DSMEM combining can pay,
// then uses DSMEM for what it is best at, a halo exchange.
//
//   group       mode                 what it prices
//   seed        atomic               one block per 512 elements, one
//                                    same-address atomicAdd per block
//               dsm-1/2/4/8          the same blocks in clusters; rank 0
//                                    reads the others' partials through
//                                    DSMEM and issues one atomic per cluster
//   costs       store                the block reduction alone: each block
//                                    stores its partial, no atomics
//               cluster-store-1..8   the cluster launch and two
//                                    cluster.sync() calls with no atomics
//               atomics-only         the atomics alone: one atomicAdd per
//                                    block, no loads, the same count
//   persistent  persistent-atomic    a grid sized to the machine, each block
//                                    loops over the input with 16-byte
//                                    loads, then one atomic per block
//               persistent-dsm-N     the same grid in clusters of N (1, 2,
//                                    4, 8, and 16 where the GPU allows it),
//                                    one atomic per cluster
//   histogram   histogram-atomic     many global atomics per block: each
//                                    block flushes all 4,096 bins of its
//                                    private histogram with atomicAdd
//               histogram-dsm-N      the blocks of a cluster add their bins
//                                    through DSMEM first: N times fewer
//   stencil     stencil-global       3-point stencil, halo read from global
//               stencil-dsm          halo read from the neighbour block's
//                                    shared memory inside the cluster
//   latency     chase-*              dependent loads through local shared
//                                    memory, a remote block's shared memory
//                                    (two instruction paths), and L2
//               dsm-bandwidth-*      streaming reads of local vs remote
//                                    shared memory
//
// Every reduction reduces all-ones input whose count is under 2^24, so
// every partial and every running total is a whole number a float holds
// exactly, whatever order the atomics land in (day 24's trick): its check
// is an exact comparison. The histogram is compared with the host's
// counts bin by bin. The stencil is checked on random data against a
// float64 CPU reference; the latency chase against the index the host
// predicts. Nothing is timed before its check has run.
//
// Needs compute capability 9.0 (clusters and DSMEM exist on Hopper and
// every Blackwell, and on nothing older). On an older GPU or none it says
// so and exits with the course's waived code, 2, before allocating.
//
// Build (from the repository root):
//   cmake --workflow --preset course
//   cmake --build build --target day77_cluster_reduction
// Or alone, as Compiler Explorer sees the standalone file:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I common -o cluster_reduction \
//        lessons/day77_cluster_reduction/cluster_reduction.cu
// Run:
//   build/lessons/day77_cluster_reduction/day77_cluster_reduction
//   ... --size 65536 --quick        (what CTest and the sanitizers run)
//   ... --only stencil --json out.json
//
// -arch=sm_90, not sm_90a: nothing here is architecture-specific, and
// sm_90 embeds compute_90 PTX that the driver compiles forward onto newer
// GPUs; an sm_90a binary loads on Hopper alone.
//
// Whether this program has run on real hardware is not written here: the
// day's README shows the promoted run and its provenance, or says
// UNVERIFIED. See research/REVIEW-PROCESS.md.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "course.cuh"

namespace cg = cooperative_groups;

constexpr int kThreadsPerBlock = 256;  // 8 warps

// Each block of the seed's schedule consumes two elements per thread,
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

// The histogram's bins: 4,096 counters, 16 KiB of shared memory per
// block, divisible by every cluster size up to 16. Each of ~1,000 blocks
// flushes all of them, about 4 million global atomics in all.
constexpr int kBins = 4096;

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

static_assert(kThreadsPerBlock % 32 == 0,
              "block size must be a whole number of warps");
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

// The seed's baseline and the "store" cost row. One result per block.
//
// Launch assumption: plain <<<>>>, blockDim.x == kThreadsPerBlock.
template <Tail kTail>
__global__ void reduceBlock(const float* __restrict__ in, size_t n,
                            float* __restrict__ out) {
    __shared__ float tile[kThreadsPerBlock];
    reduceBlockToTile(in, n, tile);

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
}

// The cluster tail. Blocks in a cluster combine their partials through
// DSMEM and only rank 0 goes to global memory: one atomic per cluster, or
// (the cost row) one plain store per cluster.
//
// Launch assumption: launched through launchInClusters() with a grid that
// is a multiple of the cluster size. Both cluster.sync() calls are load
// bearing: the first makes every block's tile[0] visible before any
// remote read; the second keeps every block alive until rank 0 has
// finished reading, because a block's shared memory ceases to exist when
// the block exits.
template <Tail kTail>
__global__ void reduceClusterDsm(const float* __restrict__ in, size_t n,
                                 float* __restrict__ out) {
    __shared__ float tile[kThreadsPerBlock];
    reduceBlockToTile(in, n, tile);

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
    // with cudaErrorLaunchFailure (research/clusters-dsmem.md has the run).
    cluster.sync();
#endif
    // end snippet
}

// The atomics alone: each block adds the number of elements it would
// have reduced, with no loads, so the total is still exactly n.
//
// Launch assumption: one block per kElemsPerBlock elements; one thread
// per block is enough, and 32 keeps it a whole warp.
__global__ void atomicsOnly(size_t n, float* __restrict__ sum) {
    if (threadIdx.x == 0) {
        const size_t first = blockIdx.x * static_cast<size_t>(kElemsPerBlock);
        const size_t left = n - first;
        atomicAdd(sum, static_cast<float>(
                           left < kElemsPerBlock ? left : kElemsPerBlock));
    }
}

// Sum of a warp's values, left in every lane.
__device__ float warpSum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
}

// Block sum through shuffles: each warp reduces itself, warp 0 reduces
// the warp sums. Launch assumption: blockDim.x == kThreadsPerBlock.
// Returns the total in thread 0.
__device__ float blockSum(float v) {
    __shared__ float warpTotals[kThreadsPerBlock / 32];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    v = warpSum(v);
    if (lane == 0) {
        warpTotals[warp] = v;
    }
    __syncthreads();  // every warp's total stored before warp 0 reads them
    v = (threadIdx.x < kThreadsPerBlock / 32) ? warpTotals[lane] : 0.0f;
    return warp == 0 ? warpSum(v) : 0.0f;
}

// The persistent schedule: a grid sized to the machine, each block
// striding over the whole input with 16-byte loads, so a few thousand
// blocks do the work of 32,767 and the tail runs a few thousand times
// instead of 32,767.
//
// Launch assumption: blockDim.x == kThreadsPerBlock. With kClusterTail
// the grid is a multiple of the cluster size and the kernel is launched
// through launchInClusters(); without it, plain <<<>>>. `in` is 16-byte
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
    const float total = blockSum(acc);
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
            v = warpSum(mine ? v : 0.0f);
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

// snippet: histogram-dsm
// A histogram: many global atomics per block, the case where combining
// inside a cluster can pay. Each block counts its share of the keys into
// a private shared-memory histogram (shared atomics), then flushes it.
//   kCluster == false: every block adds all kBins counts to global memory
//                      with atomicAdd: grid x kBins global atomics.
//   kCluster == true:  rank q of a cluster of c owns bins [q B/c, (q+1) B/c)
//                      and sums them over every rank's histogram through
//                      DSMEM before one atomicAdd per bin: c times fewer.
// Launch assumption: blockDim.x == kThreadsPerBlock; the cluster version
// through launchInClusters() with kBins divisible by the cluster size;
// every key < kBins; *bins zeroed by the caller when it wants the counts.
template <bool kCluster>
__global__ void histogram(const unsigned int* __restrict__ keys, size_t n,
                          unsigned int* __restrict__ bins) {
    __shared__ unsigned int local[kBins];
    for (int k = threadIdx.x; k < kBins; k += kThreadsPerBlock) {
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
        for (int k = threadIdx.x; k < kBins; k += kThreadsPerBlock) {
            atomicAdd(&bins[k], local[k]);
        }
    } else {
        cg::cluster_group cluster = cg::this_cluster();
        // Every block of the cluster has finished counting, and its counts
        // are visible to the others.
        cluster.sync();
        const unsigned int c = cluster.num_blocks();
        const unsigned int per = kBins / c;
        const unsigned int first = cluster.block_rank() * per;
        for (unsigned int k = first + threadIdx.x; k < first + per;
             k += kThreadsPerBlock) {
            unsigned int total = 0;
            for (unsigned int q = 0; q < c; ++q) {
                total += cluster.map_shared_rank(local, q)[k];
            }
            atomicAdd(&bins[k], total);
        }
#ifndef DAY77_DROP_TRAILING_CLUSTER_SYNC
        // The other ranks are still reading this block's counts.
        cluster.sync();
#endif
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
    // The cuda-oxide chapter's version of this kernel omits it.
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

// The cuda-oxide chapter's recommended path, in PTX: mapa turns this
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
    const float total = blockSum(acc);
    if (threadIdx.x == 0) {
        sums[blockIdx.x] = total;
    }
    cluster.sync();  // the partner may still be reading this buffer
}

// snippet: cluster-launch
// Launches `kernel` in clusters of `clusterSize` blocks along x: day 58's
// cudaLaunchKernelEx machinery with the cluster attribute in place of the
// PDL one. The grid must already be a multiple of the cluster size.
template <typename... KernelArgs, typename... Args>
void launchInClusters(void (*kernel)(KernelArgs...), int blocks, int threads,
                      int clusterSize, Args... args) {
    cudaLaunchAttribute attrs[1];
    attrs[0].id = cudaLaunchAttributeClusterDimension;
    attrs[0].val.clusterDim.x = static_cast<unsigned int>(clusterSize);
    attrs[0].val.clusterDim.y = 1;
    attrs[0].val.clusterDim.z = 1;

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned int>(blocks));
    cfg.blockDim = dim3(static_cast<unsigned int>(threads));
    cfg.dynamicSmemBytes = 0;
    cfg.stream = 0;  // the legacy default stream
    cfg.attrs = attrs;
    cfg.numAttrs = 1;

    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}
// end snippet

// The largest cluster this kernel can launch with on this GPU, after
// opting in to the non-portable sizes.
template <typename... KernelArgs>
int maxClusterSize(void (*kernel)(KernelArgs...), int threads) {
    CUDA_CHECK(cudaFuncSetAttribute(
        kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(kMaxNonPortableCluster);
    cfg.blockDim = dim3(static_cast<unsigned int>(threads));
    int size = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&size, kernel, &cfg));
    return size;
}

static int roundUp(int x, int m) {
    return ((x + m - 1) / m) * m;
}

static std::string fmtDiff(double got, double want) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "got %.9g, want %.9g (off by %.9g elements)",
                  got, want, want - got);
    return buf;
}

namespace {

// Everything the modes share: sizes, buffers, the report.
struct Run {
    const course::Args& args;
    course::Report& report;
    cudaDeviceProp prop;
    size_t n = 0;
    int seedBlocks = 0;   // one per kElemsPerBlock elements
    float* in = nullptr;  // n ones
    float* sum = nullptr;
    float* partials = nullptr;  // one per seed block
    course::TimingOptions timing;

    float readSum() const {
        float got = 0.0f;
        CUDA_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
        return got;
    }
    void zeroSum() const { CUDA_CHECK(cudaMemset(sum, 0, sizeof(float))); }

    // Runs `launch` once on a zeroed accumulator and compares exactly.
    template <typename F>
    bool checkAtomic(const std::string& mode, F launch) {
        zeroSum();
        launch();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        const double got = readSum();
        const bool ok = got == static_cast<double>(n);
        report.check(mode, ok, ok ? "exact" : fmtDiff(got, double(n)));
        if (!ok) {
            std::fprintf(stderr, "%s: %s\n", mode.c_str(),
                         fmtDiff(got, double(n)).c_str());
        }
        return ok;
    }

    // Runs `launch` once and sums `count` stored partials on the host.
    template <typename F>
    bool checkStored(const std::string& mode, int count, F launch) {
        CUDA_CHECK(cudaMemset(partials, 0xff, sizeof(float) * seedBlocks));
        launch();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<float> h(static_cast<size_t>(count));
        CUDA_CHECK(cudaMemcpy(h.data(), partials, sizeof(float) * h.size(),
                              cudaMemcpyDeviceToHost));
        double got = 0.0;
        for (float v : h) {
            got += v;  // a NaN from the 0xff poison makes got != n
        }
        const bool ok = got == static_cast<double>(n);
        report.check(mode, ok, ok ? "exact" : fmtDiff(got, double(n)));
        if (!ok) {
            std::fprintf(stderr, "%s: %s\n", mode.c_str(),
                         fmtDiff(got, double(n)).c_str());
        }
        return ok;
    }

    // Times a mode both ways and prints and records one line.
    template <typename F>
    void time(const char* group, const std::string& mode, long atomics,
              double bytes, F launch) {
        const course::TimingResult batch =
            course::timeKernel(launch, course::TimingMode::Batch, timing);
        const course::TimingResult cold =
            course::timeKernel(launch, course::TimingMode::Cold, timing);
        std::printf("%-22s %9ld %10.4f %6.1f%% %10.4f %6.1f%% %9.1f\n",
                    mode.c_str(), atomics, batch.median_ms,
                    100.0 * batch.iqr_half_rel, cold.median_ms,
                    100.0 * cold.iqr_half_rel,
                    course::gbps(bytes, cold.median_ms));
        for (const course::TimingResult* t : {&batch, &cold}) {
            report.row(course::Row()
                           .str("group", group)
                           .str("mode", mode)
                           .integer("elements", static_cast<long long>(n))
                           .integer("global_atomics", atomics)
                           .timing(*t)
                           .num("gbps", course::gbps(bytes, t->median_ms)));
        }
    }
};

void printTableHeader(const char* title) {
    std::printf("\n%s\n%-22s %9s %10s %7s %10s %7s %9s\n", title, "mode",
                "atomics", "batch ms", "spread", "cold ms", "spread",
                "cold GB/s");
}

void runSeedAndCosts(Run& r, int maxCluster) {
    const double bytes = static_cast<double>(r.n) * sizeof(float);
    const int blocks = r.seedBlocks;
    const int clusters[] = {1, 2, 4, kMaxPortableCluster};

    // Correctness first, every mode, before anything is timed.
    bool ok = r.checkAtomic("atomic", [&] {
        reduceBlock<Tail::Atomic>
            <<<blocks, kThreadsPerBlock>>>(r.in, r.n, r.sum);
    });
    for (int c : clusters) {
        if (c > maxCluster)
            continue;
        const int padded = roundUp(blocks, c);
        ok &= r.checkAtomic("dsm-" + std::to_string(c), [&] {
            launchInClusters(reduceClusterDsm<Tail::Atomic>, padded,
                             kThreadsPerBlock, c, r.in, r.n, r.sum);
        });
        ok &= r.checkStored(
            "cluster-store-" + std::to_string(c), padded / c, [&] {
                launchInClusters(reduceClusterDsm<Tail::Store>, padded,
                                 kThreadsPerBlock, c, r.in, r.n, r.partials);
            });
    }
    ok &= r.checkStored("store", blocks, [&] {
        reduceBlock<Tail::Store>
            <<<blocks, kThreadsPerBlock>>>(r.in, r.n, r.partials);
    });
    ok &= r.checkAtomic("atomics-only",
                        [&] { atomicsOnly<<<blocks, 32>>>(r.n, r.sum); });
    if (!ok)
        return;  // never time a wrong kernel

    // The timed loops accumulate into sum without resetting it: a reset
    // would sit inside the measurement. Nothing reads it afterwards.
    printTableHeader("seed schedule: one block per 512 elements");
    r.time("seed", "atomic", blocks, bytes, [&] {
        reduceBlock<Tail::Atomic>
            <<<blocks, kThreadsPerBlock>>>(r.in, r.n, r.sum);
    });
    for (int c : clusters) {
        if (c > maxCluster) {
            std::printf("%-22s skipped: this GPU's maximum is %d\n",
                        ("dsm-" + std::to_string(c)).c_str(), maxCluster);
            continue;
        }
        const int padded = roundUp(blocks, c);
        r.time("seed", "dsm-" + std::to_string(c), padded / c, bytes, [&] {
            launchInClusters(reduceClusterDsm<Tail::Atomic>, padded,
                             kThreadsPerBlock, c, r.in, r.n, r.sum);
        });
    }

    printTableHeader("costs taken apart: the same blocks, one piece at a time");
    r.time("costs", "store", 0, bytes, [&] {
        reduceBlock<Tail::Store>
            <<<blocks, kThreadsPerBlock>>>(r.in, r.n, r.partials);
    });
    for (int c : clusters) {
        if (c > maxCluster)
            continue;
        const int padded = roundUp(blocks, c);
        r.time("costs", "cluster-store-" + std::to_string(c), 0, bytes, [&] {
            launchInClusters(reduceClusterDsm<Tail::Store>, padded,
                             kThreadsPerBlock, c, r.in, r.n, r.partials);
        });
    }
    r.time("costs", "atomics-only", blocks, 0.0,
           [&] { atomicsOnly<<<blocks, 32>>>(r.n, r.sum); });
}

// The largest grid that every cluster size in `clusters` holds in a single
// wave, rounded down to a multiple of the largest cluster: a cluster must
// fit inside one GPC, so large clusters strand SMs and hold fewer blocks
// than occupancy x SMs. Prints and records what the occupancy API said.
template <typename... KernelArgs>
int oneWaveGrid(Run& r, void (*kernel)(KernelArgs...), const char* what,
                const std::vector<int>& clusters) {
    int perSm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, kernel, kThreadsPerBlock, 0));
    int grid = r.prop.multiProcessorCount * perSm;
    std::printf(
        "\nco-resident clusters of the %s kernel "
        "(cudaOccupancyMaxActiveClusters; %d blocks per SM alone):",
        what, perSm);
    for (int c : clusters) {
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = static_cast<unsigned int>(c);
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(static_cast<unsigned int>(c));
        cfg.blockDim = dim3(kThreadsPerBlock);
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int active = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&active, kernel, &cfg));
        std::printf(" %d x %d = %d blocks;", active, c, active * c);
        r.report.row(course::Row()
                         .str("group", "occupancy")
                         .str("mode", std::string(what) +
                                          "-max-active-clusters-" +
                                          std::to_string(c))
                         .integer("cluster_size", c)
                         .integer("active_clusters", active)
                         .integer("blocks", active * c));
        if (active * c < grid)
            grid = active * c;
    }
    std::printf("\n");
    return (grid / kMaxNonPortableCluster) * kMaxNonPortableCluster;
}

std::vector<int> clusterSizes(int maxCluster) {
    std::vector<int> clusters = {1, 2, 4, kMaxPortableCluster};
    if (maxCluster >= kMaxNonPortableCluster)
        clusters.push_back(16);
    return clusters;
}

void runPersistent(Run& r, int maxCluster) {
    const double bytes = static_cast<double>(r.n) * sizeof(float);
    const std::vector<int> clusters = clusterSizes(maxCluster);
    // One grid for every row, so the rows differ only in their tails.
    const int grid =
        oneWaveGrid(r, persistentReduce<true>, "persistent", clusters);

    bool ok = r.checkAtomic("persistent-atomic", [&] {
        persistentReduce<false><<<grid, kThreadsPerBlock>>>(r.in, r.n, r.sum);
    });
    for (int c : clusters) {
        ok &= r.checkAtomic("persistent-dsm-" + std::to_string(c), [&] {
            launchInClusters(persistentReduce<true>, grid, kThreadsPerBlock, c,
                             r.in, r.n, r.sum);
        });
    }
    if (!ok)
        return;

    char title[160];
    std::snprintf(title, sizeof title,
                  "persistent schedule: %d blocks, one wave for every "
                  "cluster size (see the limits above)",
                  grid);
    printTableHeader(title);
    r.time("persistent", "persistent-atomic", grid, bytes, [&] {
        persistentReduce<false><<<grid, kThreadsPerBlock>>>(r.in, r.n, r.sum);
    });
    for (int c : clusters) {
        r.time("persistent", "persistent-dsm-" + std::to_string(c), grid / c,
               bytes, [&] {
                   launchInClusters(persistentReduce<true>, grid,
                                    kThreadsPerBlock, c, r.in, r.n, r.sum);
               });
    }
    if (maxCluster < kMaxNonPortableCluster) {
        std::printf("persistent-dsm-16     skipped: this GPU's maximum is %d\n",
                    maxCluster);
    }
}

// A 32-bit hash to floats in [0, 1): random-looking, reproducible, and
// the same on host and device.
__host__ __device__ inline float hashUnit(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

__global__ void fillRandom(float* out, size_t n) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n)
        out[i] = hashUnit(static_cast<uint32_t>(i) * 2654435761u + 12345u);
}

// Keys for the histogram: the same hash as the stencil's data, as bins.
__global__ void fillKeys(unsigned int* keys, size_t n) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        keys[i] = static_cast<unsigned int>(
                      hashUnit(static_cast<uint32_t>(i) * 2654435761u + 777u) *
                      kBins) %
                  kBins;
    }
}

void runHistogram(Run& r) {
    const size_t n = r.n;
    // Opts the kernel in to clusters of 16 and asks whether it may use them.
    const std::vector<int> clusters =
        clusterSizes(maxClusterSize(histogram<true>, kThreadsPerBlock));
    unsigned int* keys = nullptr;
    unsigned int* bins = nullptr;
    CUDA_CHECK(cudaMalloc(&keys, n * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&bins, kBins * sizeof(unsigned int)));
    fillKeys<<<static_cast<unsigned int>((n + 255) / 256), 256>>>(keys, n);
    CUDA_CHECK(cudaGetLastError());
    std::vector<unsigned int> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), keys, n * sizeof(unsigned int),
                          cudaMemcpyDeviceToHost));
    std::vector<unsigned int> want(kBins, 0);
    for (unsigned int k : h)
        ++want[k];

    const int grid = oneWaveGrid(r, histogram<true>, "histogram", clusters);

    // Exact: every bin's count, compared with the host's.
    auto check = [&](const std::string& mode, auto launch) {
        CUDA_CHECK(cudaMemset(bins, 0, kBins * sizeof(unsigned int)));
        launch();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<unsigned int> got(kBins);
        CUDA_CHECK(cudaMemcpy(got.data(), bins, kBins * sizeof(unsigned int),
                              cudaMemcpyDeviceToHost));
        int bad = 0, first = -1;
        for (int k = 0; k < kBins; ++k) {
            if (got[k] != want[k] && bad++ == 0)
                first = k;
        }
        char detail[200];
        if (bad == 0) {
            std::snprintf(detail, sizeof detail, "all %d bins exact", kBins);
        } else {
            std::snprintf(detail, sizeof detail,
                          "%d wrong bins; first is bin %d: got %u, want %u",
                          bad, first, got[first], want[first]);
            std::fprintf(stderr, "%s: %s\n", mode.c_str(), detail);
        }
        r.report.check(mode, bad == 0, detail);
        return bad == 0;
    };
    bool ok = check("histogram-atomic", [&] {
        histogram<false><<<grid, kThreadsPerBlock>>>(keys, n, bins);
    });
    for (int c : clusters) {
        ok &= check("histogram-dsm-" + std::to_string(c), [&] {
            launchInClusters(histogram<true>, grid, kThreadsPerBlock, c,
                             static_cast<const unsigned int*>(keys), n, bins);
        });
    }
    if (ok) {
        char title[200];
        std::snprintf(title, sizeof title,
                      "histogram of %zu keys into %d bins: %d blocks, one "
                      "wave for every cluster size",
                      n, kBins, grid);
        const double bytes = static_cast<double>(n) * sizeof(unsigned int);
        printTableHeader(title);
        r.time("histogram", "histogram-atomic", static_cast<long>(grid) * kBins,
               bytes, [&] {
                   histogram<false><<<grid, kThreadsPerBlock>>>(keys, n, bins);
               });
        for (int c : clusters) {
            r.time("histogram", "histogram-dsm-" + std::to_string(c),
                   static_cast<long>(grid) * kBins / c, bytes, [&] {
                       launchInClusters(
                           histogram<true>, grid, kThreadsPerBlock, c,
                           static_cast<const unsigned int*>(keys), n, bins);
                   });
        }
    }
    CUDA_CHECK(cudaFree(keys));
    CUDA_CHECK(cudaFree(bins));
}

void runStencil(Run& r) {
    const size_t n = r.n;
    float* in = nullptr;
    float* out = nullptr;
    CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
    fillRandom<<<static_cast<unsigned int>((n + 255) / 256), 256>>>(in, n);
    CUDA_CHECK(cudaGetLastError());

    std::vector<float> h(n);
    CUDA_CHECK(
        cudaMemcpy(h.data(), in, n * sizeof(float), cudaMemcpyDeviceToHost));
    const int blocks =
        roundUp(static_cast<int>((n + kThreadsPerBlock - 1) / kThreadsPerBlock),
                kStencilCluster);

    // Checked against float64: |error| under 1e-6 covers float rounding of
    // three products of values in [0, 1) (each term's error is under
    // 2^-24, about 6e-8), with a wide margin, and nothing wider.
    const double tol = 1e-6;
    auto check = [&](const std::string& mode, auto launch) {
        CUDA_CHECK(cudaMemset(out, 0xff, n * sizeof(float)));  // NaN poison
        launch();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<float> got(n);
        CUDA_CHECK(cudaMemcpy(got.data(), out, n * sizeof(float),
                              cudaMemcpyDeviceToHost));
        size_t bad = 0, firstBad = 0;
        double firstWant = 0.0;
        for (size_t i = 0; i < n; ++i) {
            const double l = i > 0 ? h[i - 1] : 0.0;
            const double rr = i + 1 < n ? h[i + 1] : 0.0;
            const double want = 0.25 * l + 0.5 * h[i] + 0.25 * rr;
            if (!(std::fabs(got[i] - want) <= tol)) {
                if (bad++ == 0) {
                    firstBad = i;
                    firstWant = want;
                }
            }
        }
        char detail[200];
        if (bad == 0) {
            std::snprintf(detail, sizeof detail,
                          "all %zu outputs within %.0e of float64", n, tol);
        } else {
            std::snprintf(
                detail, sizeof detail,
                "%zu wrong outputs; first at %zu: got %.9g, want %.9g", bad,
                firstBad, got[firstBad], firstWant);
            std::fprintf(stderr, "%s: %s\n", mode.c_str(), detail);
        }
        r.report.check(mode, bad == 0, detail);
        return bad == 0;
    };
    bool ok = check("stencil-global", [&] {
        stencilGlobal<<<blocks, kThreadsPerBlock>>>(in, n, out);
    });
    ok &= check("stencil-dsm", [&] {
        launchInClusters(stencilDsm, blocks, kThreadsPerBlock, kStencilCluster,
                         static_cast<const float*>(in), n, out);
    });
    if (ok) {
        const double bytes = 2.0 * n * sizeof(float);  // read in, write out
        printTableHeader("1-D stencil, 3 points, clusters of 4 for DSMEM");
        r.time("stencil", "stencil-global", 0, bytes, [&] {
            stencilGlobal<<<blocks, kThreadsPerBlock>>>(in, n, out);
        });
        r.time("stencil", "stencil-dsm", 0, bytes, [&] {
            launchInClusters(stencilDsm, blocks, kThreadsPerBlock,
                             kStencilCluster, static_cast<const float*>(in), n,
                             out);
        });
    }
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
}

void runLatency(Run& r) {
    unsigned int* links = nullptr;
    unsigned long long* out = nullptr;
    std::vector<unsigned int> h(kChaseLinks);
    for (int k = 0; k < kChaseLinks; ++k) {
        h[k] = (k + kChaseStride) % kChaseLinks;
    }
    CUDA_CHECK(cudaMalloc(&links, sizeof(unsigned int) * kChaseLinks));
    CUDA_CHECK(cudaMalloc(&out, 2 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(links, h.data(), sizeof(unsigned int) * kChaseLinks,
                          cudaMemcpyHostToDevice));
    const unsigned long long wantIndex =
        (static_cast<unsigned long long>(kChaseSteps) * kChaseStride) %
        kChaseLinks;

    std::printf(
        "\nlatency: one thread, %d dependent 4-byte loads, clock64()\n"
        "%-22s %12s %12s %12s\n",
        kChaseSteps, "path", "median cyc", "min cyc", "max cyc");
    struct Path {
        const char* name;
        void (*kernel)(const unsigned int*, unsigned long long*);
    };
    const Path paths[] = {
        {"chase-local-smem", latencyChase<Chase::LocalShared>},
        {"chase-dsmem-mapped", latencyChase<Chase::RemoteMapped>},
        {"chase-dsmem-ptx", latencyChase<Chase::RemotePtx>},
        {"chase-l2", latencyChase<Chase::GlobalL2>},
    };
    const int trials = r.args.quick ? 3 : 15;
    for (const Path& p : paths) {
        std::vector<double> cyc;
        bool ok = true;
        // The first trial is a warm-up (module load, L2 fill) and is
        // checked but not kept.
        for (int t = 0; t <= trials; ++t) {
            CUDA_CHECK(cudaMemset(out, 0, 2 * sizeof(unsigned long long)));
            launchInClusters(p.kernel, 2, 32, 2,
                             static_cast<const unsigned int*>(links), out);
            CUDA_CHECK(cudaDeviceSynchronize());
            unsigned long long h2[2];
            CUDA_CHECK(cudaMemcpy(h2, out, sizeof h2, cudaMemcpyDeviceToHost));
            if (h2[1] != wantIndex) {
                ok = false;
                std::fprintf(stderr,
                             "%s: chase ended at link %llu, want %llu\n",
                             p.name, h2[1], wantIndex);
                break;
            }
            if (t > 0)
                cyc.push_back(static_cast<double>(h2[0]) / kChaseSteps);
        }
        r.report.check(p.name, ok,
                       ok ? "chase ended at the predicted link"
                          : "chase ended at the wrong link");
        if (!ok)
            continue;
        // summarize() treats the values as milliseconds; here they are
        // cycles per load, and the JSON names them so.
        const course::TimingResult s =
            course::summarize(cyc, course::TimingMode::Batch);
        std::printf("%-22s %12.1f %12.1f %12.1f\n", p.name, s.median_ms,
                    s.min_ms, s.max_ms);
        r.report.row(course::Row()
                         .str("group", "latency")
                         .str("mode", p.name)
                         .integer("samples", s.samples)
                         .num("median_cycles", s.median_ms)
                         .num("min_cycles", s.min_ms)
                         .num("max_cycles", s.max_ms));
    }

    // Bandwidth: two blocks per SM, in clusters of 2.
    const int blocks = roundUp(2 * r.prop.multiProcessorCount, 2);
    float* sums = nullptr;
    CUDA_CHECK(cudaMalloc(&sums, sizeof(float) * blocks));
    // Each float4 slot k holds four copies of k % 4; a block reads the
    // whole buffer `reps` times.
    double perPass = 0.0;
    for (int k = 0; k < kBwFloats / 4; ++k)
        perPass += 4.0 * (k % 4);
    const int reps = r.args.quick ? 1 : kBwReps;
    const double want = perPass * reps;
    const double bytes =
        static_cast<double>(blocks) * reps * kBwFloats * sizeof(float);
    std::printf(
        "\nshared-memory read bandwidth: %d blocks in clusters of 2, "
        "each reading 32 KiB %d times\n%-22s %12s %12s %10s\n",
        blocks, reps, "path", "median ms", "spread", "GB/s");
    struct Bw {
        const char* name;
        void (*kernel)(float*, int);
    };
    const Bw bws[] = {{"dsm-bandwidth-local", sharedBandwidth<false>},
                      {"dsm-bandwidth-remote", sharedBandwidth<true>}};
    for (const Bw& b : bws) {
        CUDA_CHECK(cudaMemset(sums, 0, sizeof(float) * blocks));
        launchInClusters(b.kernel, blocks, kThreadsPerBlock, 2, sums, reps);
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<float> hs(static_cast<size_t>(blocks));
        CUDA_CHECK(cudaMemcpy(hs.data(), sums, sizeof(float) * blocks,
                              cudaMemcpyDeviceToHost));
        int bad = 0;
        for (float v : hs)
            bad += (static_cast<double>(v) != want);
        r.report.check(b.name, bad == 0,
                       bad == 0 ? "every block's sum exact"
                                : std::to_string(bad) + " blocks summed wrong");
        if (bad != 0) {
            std::fprintf(stderr, "%s: %d blocks summed wrong\n", b.name, bad);
            continue;
        }
        const course::TimingResult t = course::timeKernel(
            [&] {
                launchInClusters(b.kernel, blocks, kThreadsPerBlock, 2, sums,
                                 reps);
            },
            course::TimingMode::Batch, r.timing);
        std::printf("%-22s %12.4f %11.1f%% %10.1f\n", b.name, t.median_ms,
                    100.0 * t.iqr_half_rel, course::gbps(bytes, t.median_ms));
        r.report.row(course::Row()
                         .str("group", "latency")
                         .str("mode", b.name)
                         .timing(t)
                         .num("gbps", course::gbps(bytes, t.median_ms)));
    }
    CUDA_CHECK(cudaFree(sums));
    CUDA_CHECK(cudaFree(links));
    CUDA_CHECK(cudaFree(out));
}

}  // namespace

int main(int argc, char** argv) {
    const char* kName = "day77_cluster_reduction";
    const course::Args args = course::Args::parse(
        kName, argc, argv,
        "--only takes a group: seed-and-costs, persistent, histogram, "
        "stencil, latency\n");
    const char* groups[] = {"seed-and-costs", "persistent", "histogram",
                            "stencil", "latency"};
    if (!args.only.empty() &&
        std::none_of(std::begin(groups), std::end(groups),
                     [&](const char* g) { return args.only == g; })) {
        args.usage(("--only does not know '" + args.only + "'").c_str(),
                   "groups: seed-and-costs, persistent, histogram, stencil, "
                   "latency\n");
    }
    const cudaDeviceProp prop = course::requireGpu(kName, {9, 0, true});

    course::Report report(kName);
    report.gpu(prop);
    Run r{args, report, prop};
    r.n = args.size ? args.size : kDefaultElems;
    r.timing = args.timing();
    if (r.n >= (1ull << 24)) {
        std::fprintf(stderr,
                     "%s: --size must be under 2^24 = 16777216: above it a "
                     "float cannot hold every running total exactly and the "
                     "exact check would be meaningless\n",
                     kName);
        return course::kExitUsage;
    }
    r.seedBlocks =
        static_cast<int>((r.n + kElemsPerBlock - 1) / kElemsPerBlock);

    const int maxSeed =
        maxClusterSize(reduceClusterDsm<Tail::Atomic>, kThreadsPerBlock);
    const int maxPersistent =
        maxClusterSize(persistentReduce<true>, kThreadsPerBlock);
    std::printf("GPU: %s (compute capability %d.%d), %d SMs, %d MiB L2\n",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                prop.l2CacheSize >> 20);
    std::printf(
        "largest cluster (cudaOccupancyMaxPotentialClusterSize, "
        "non-portable sizes allowed): seed kernel %d, persistent "
        "kernel %d\n",
        maxSeed, maxPersistent);
    std::printf("%zu elements (%.1f MiB), all 1.0f; %d seed blocks\n", r.n,
                r.n * 4.0 / (1024.0 * 1024.0), r.seedBlocks);
#ifdef DAY77_DROP_TRAILING_CLUSTER_SYNC
    std::printf(
        "BUILT WITH DAY77_DROP_TRAILING_CLUSTER_SYNC: the trailing "
        "cluster.sync() calls are removed; expect a fault\n");
#endif
    report.setting(course::Row()
                       .integer("elements", static_cast<long long>(r.n))
                       .integer("threads_per_block", kThreadsPerBlock)
                       .integer("max_cluster_seed", maxSeed)
                       .integer("max_cluster_persistent", maxPersistent)
                       .integer("samples", r.timing.samples)
                       .integer("batch", r.timing.batch));

    CUDA_CHECK(cudaMalloc(&r.in, r.n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&r.sum, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&r.partials, sizeof(float) * r.seedBlocks));
    {
        const std::vector<float> ones(r.n, 1.0f);
        CUDA_CHECK(cudaMemcpy(r.in, ones.data(), r.n * sizeof(float),
                              cudaMemcpyHostToDevice));
    }

    if (args.wants("seed-and-costs"))
        runSeedAndCosts(r, maxSeed);
    if (args.wants("persistent"))
        runPersistent(r, maxPersistent);
    if (args.wants("histogram"))
        runHistogram(r);
    if (args.wants("stencil"))
        runStencil(r);
    if (args.wants("latency"))
        runLatency(r);

    CUDA_CHECK(cudaFree(r.in));
    CUDA_CHECK(cudaFree(r.sum));
    CUDA_CHECK(cudaFree(r.partials));

    if (!report.write(args.json))
        return course::kExitFailed;
    if (report.failures() != 0) {
        std::fprintf(stderr, "%s: %d check(s) failed\n", kName,
                     report.failures());
        return course::kExitFailed;
    }
    std::printf("\nall %s checks passed\n", kName);
    return course::kExitOk;
}
