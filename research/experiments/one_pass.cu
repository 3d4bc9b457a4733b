// SPDX-License-Identifier: MIT
//
// Experiment (not a lesson): a sum that is complete when one kernel ends.
// Between 8 Ki and 4 Mi elements day 24's v9 takes 1.2 to 1.85 times the
// read ceiling's time; the ceiling is one kernel, v9 two (its second pass,
// launched programmatically, adds the block partials in a fixed order).
// This times, in the course's sets (interleaved, until the rule decides),
// the one-pass designs a CUDA engineer would try, beside v9, CUB and the
// ceiling, each design deterministic (the same grid adds in the same order):
//
//   last-block     every block stores its partial and counts itself in
//                  with one atomic; the block that counts last adds every
//                  partial in index order (the CUDA samples'
//                  threadFenceReduction, with v9's grid)
//   last-block-pdl the same, launched with programmatic dependent launch:
//                  its first statement waits for the kernel before it, and
//                  every block lets the next launch begin once its loads
//                  are done, so a call's launch overlaps the last one's end
//   last-block-acq-rel  last-block with the arrival an acquire-release
//                  atomic (cuda::atomic_ref) in place of __threadfence(),
//                  whose sequentially consistent fence (MEMBAR.SC.GPU) may
//                  cost more than the ordering needs
//   last-cluster   clusters of 8 add their partials through distributed
//                  shared memory first; one partial and one atomic per
//                  cluster, the last cluster's rank 0 adds them
//   one-wave       last-block in a grid of one wave (a persistent grid)
//   designated     no counter: each block raises a flag beside its partial;
//                  the grid's last block waits for every flag, then adds
//                  (a decoupled look-back's publish-and-wait, as CUB's scan
//                  does, for a sum: one waiter, no chain)
//
// Up to one tile (4,096 floats) every design runs v6's one-block kernel,
// as v9 does. Each is checked before it is timed: the same bits as v9 where
// the grid is v9's, exact on ones, within 1e-5 of float64 on random data,
// and the same bits on a second run.
//
// Build and run (the build's target: cmake --build build --target one_pass):
//   nvcc -std=c++20 -O3 -arch=sm_90 -DCOURSE_MIN_CC=90 -I common \
//        -o one_pass research/experiments/one_pass.cu
//   ./one_pass [--quick] [--json FILE]

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>

#include "course.cuh"

namespace cg = cooperative_groups;

// Day 24's constants, as there (lessons/day24_reduction/reduction.cu).
constexpr int kThreads = 256;
constexpr int kItems = 16;
constexpr int kTile = kThreads * kItems;
constexpr int kUnroll = 4;
constexpr int kWaves = 5;
constexpr int kCluster = 8;
constexpr int kPartialsPerThread = 32;

// Day 24's v6: one tile, sixteen loads a thread in flight, one block.
__global__ void oneTile(const float* __restrict__ in, size_t n,
                        float* __restrict__ out) {
    const unsigned int count = n < kTile ? n : kTile;
    float items[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        const unsigned int i = threadIdx.x + k * kThreads;
        items[k] = (i < count) ? in[i] : 0.0f;
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        sum += items[k];
    }
    sum = course::blockSum<kThreads>(sum);
    if (threadIdx.x == 0) {
        *out = sum;
    }
}

// Day 24's first-pass loop (gridStrideFold with +, float4).
__device__ float blockPartial(const float* __restrict__ in, size_t n) {
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
#pragma unroll
    for (int k = 1; k < kUnroll; ++k) {
        acc[0] += acc[k];
    }
    return course::blockSum<kThreads>(acc[0]);
}

// The partials `count` of them, added as v9's second pass adds them: thread
// t takes t, t + 256, ... in order, then the block's fixed tree. So a design
// with v9's grid gives v9's bits. __ldcg: from L2, never a stale L1 line of
// an earlier call's partials.
__device__ float addPartials(const float* partials, unsigned int count) {
    float sum = 0.0f;
    for (unsigned int i = threadIdx.x; i < count; i += kThreads) {
        sum += __ldcg(partials + i);
    }
    return course::blockSum<kThreads>(sum);
}

// v9's first pass and second pass, as day 24 has them.
__global__ void v9First(const float* __restrict__ in, size_t n,
                        float* __restrict__ partials, float* __restrict__ out) {
    cudaTriggerProgrammaticLaunchCompletion();
    const float acc = blockPartial(in, n);
    if (threadIdx.x == 0) {
        if (gridDim.x == 1) {
            *out = acc;
        } else {
            partials[blockIdx.x] = acc;
        }
    }
}

__global__ void v9Second(const float* __restrict__ partials, size_t count,
                         float* __restrict__ out) {
    cudaGridDependencySynchronize();
    float sum = 0.0f;
    for (size_t first = 0; first < count;
         first += kPartialsPerThread * kThreads) {
        float p[kPartialsPerThread];
#pragma unroll
        for (int k = 0; k < kPartialsPerThread; ++k) {
            const size_t i = first + k * kThreads + threadIdx.x;
            p[k] = i < count ? partials[i] : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < kPartialsPerThread; ++k) {
            sum += p[k];
        }
    }
    sum = course::blockSum<kThreads>(sum);
    if (threadIdx.x == 0) {
        *out = sum;
    }
}

// last-block (and one-wave, and with kPdl last-block-pdl). Launch
// assumption: blockDim.x == kThreads; *arrived is 0 at launch and left 0.
template <bool kPdl>
__global__ void lastBlock(const float* __restrict__ in, size_t n,
                          float* __restrict__ partials,
                          unsigned int* __restrict__ arrived,
                          float* __restrict__ out) {
    if constexpr (kPdl) {
        // Launched programmatically: the kernel before may still run, and
        // it may have written `in`. Nothing is read before this returns.
        cudaGridDependencySynchronize();
    }
    const float acc = blockPartial(in, n);
    if constexpr (kPdl) {
        cudaTriggerProgrammaticLaunchCompletion();  // this block's loads are
                                                    // done
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        // Load bearing: this block's partial is visible device-wide before
        // its arrival is counted, so the block that counts last sees it.
        __threadfence();
        last = atomicAdd(arrived, 1u) == gridDim.x - 1;
    }
    __syncthreads();  // `last` written before any thread reads it
    if (!last) {
        return;
    }
    __threadfence();  // the last block's reads come after every arrival
    const float total = addPartials(partials, gridDim.x);
    if (threadIdx.x == 0) {
        *out = total;
        *arrived = 0;  // for the next call: stream order keeps it apart
    }
}

// last-block-acq-rel. Launch assumption: as lastBlock.
__global__ void lastBlockAcqRel(const float* __restrict__ in, size_t n,
                                float* __restrict__ partials,
                                unsigned int* __restrict__ arrived,
                                float* __restrict__ out) {
    const float acc = blockPartial(in, n);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        // Release: this block's partial before its arrival; acquire: the
        // last block's reads after every arrival (and the barrier below
        // carries that to its other threads).
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(
            *arrived);
        last = count.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) {
        return;
    }
    const float total = addPartials(partials, gridDim.x);
    if (threadIdx.x == 0) {
        *out = total;
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(*arrived)
            .store(0u, cuda::memory_order_relaxed);
    }
}

// last-cluster. Launch assumption: clusters of kCluster, a grid that is a
// multiple of it, *arrived 0 and left 0; partials holds a value per cluster.
__global__ void lastCluster(const float* __restrict__ in, size_t n,
                            float* __restrict__ partials,
                            unsigned int* __restrict__ arrived,
                            float* __restrict__ out) {
    __shared__ float mine;
    __shared__ bool last;
    cg::cluster_group cluster = cg::this_cluster();
    const float acc = blockPartial(in, n);
    if (threadIdx.x == 0) {
        mine = acc;
    }
    cluster.sync();  // every block's partial in its shared memory
    const unsigned int clusters = gridDim.x / kCluster;
    const unsigned int c = blockIdx.x / kCluster;
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        float sum = 0.0f;
        for (unsigned int r = 0; r < kCluster; ++r) {
            sum += *cluster.map_shared_rank(&mine, r);
        }
        partials[c] = sum;
        __threadfence();
        last = atomicAdd(arrived, 1u) == clusters - 1;
    }
    cluster.sync();  // no rank exits while rank 0 reads its `mine`
    if (cluster.block_rank() != 0) {
        return;
    }
    __syncthreads();
    if (!last) {
        return;
    }
    __threadfence();
    const float total = addPartials(partials, clusters);
    if (threadIdx.x == 0) {
        *out = total;
        *arrived = 0;
    }
}

// designated. Launch assumption: flags[0, gridDim.x) are 0 at launch and
// left 0; the last block (the highest index, launched last) waits.
__global__ void designated(const float* __restrict__ in, size_t n,
                           float* __restrict__ partials,
                           unsigned int* __restrict__ flags,
                           float* __restrict__ out) {
    const float acc = blockPartial(in, n);
    const unsigned int waiter = gridDim.x - 1;
    if (blockIdx.x != waiter) {
        if (threadIdx.x == 0) {
            partials[blockIdx.x] = acc;
            __threadfence();  // the partial visible before its flag
            atomicExch(flags + blockIdx.x, 1u);
        }
        return;
    }
    if (threadIdx.x == 0) {
        partials[waiter] = acc;
    }
    // Each thread waits for its share of the flags, then clears them.
    for (unsigned int i = threadIdx.x; i < waiter; i += kThreads) {
        while (atomicAdd(flags + i, 0u) == 0u) {
        }
        flags[i] = 0;
    }
    __threadfence();
    __syncthreads();  // every flag seen (and the waiter's own partial stored)
    const float total = addPartials(partials, gridDim.x);
    if (threadIdx.x == 0) {
        *out = total;
    }
}

namespace {

struct Buffers {
    explicit Buffers(size_t maxN, int machineGrid, size_t cubBytes)
        : in(maxN),
          partials(static_cast<size_t>(machineGrid) * kWaves + kCluster),
          out(1),
          counter(static_cast<size_t>(machineGrid) * kWaves + kCluster),
          cubTemp(cubBytes),
          grid(machineGrid) {
        CUDA_CHECK(
            cudaMemset(counter, 0, counter.size() * sizeof(unsigned int)));
    }
    course::DeviceArray<float> in, partials, out;
    course::DeviceArray<unsigned int> counter;  // arrivals, or the flags
    course::DeviceArray<char> cubTemp;
    int grid;  // occupancy x SMs: one wave
};

unsigned int gridFor(const Buffers& b, size_t n, int waves) {
    return static_cast<unsigned int>(std::min<size_t>(
        std::max<size_t>(n / kTile, 1), static_cast<size_t>(b.grid) * waves));
}

using Enqueue = void (*)(const Buffers&, size_t, cudaStream_t);

void v9(const Buffers& b, size_t n, cudaStream_t s) {
    if (n <= kTile) {
        oneTile<<<1, kThreads, 0, s>>>(b.in, n, b.out);
        return;
    }
    const unsigned int blocks = gridFor(b, n, kWaves);
    v9First<<<blocks, kThreads, 0, s>>>(b.in, n, b.partials, b.out);
    if (blocks > 1) {
        course::launch(v9Second, dim3(1), dim3(kThreads), s, {0, true, 0},
                       b.partials.get(), static_cast<size_t>(blocks),
                       b.out.get());
    }
}

template <int kGridWaves, bool kPdl>
void lastBlockRow(const Buffers& b, size_t n, cudaStream_t s) {
    if (n <= kTile) {
        oneTile<<<1, kThreads, 0, s>>>(b.in, n, b.out);
        return;
    }
    course::launch(lastBlock<kPdl>, dim3(gridFor(b, n, kGridWaves)),
                   dim3(kThreads), s, {0, kPdl, 0}, b.in.get(), n,
                   b.partials.get(), b.counter.get(), b.out.get());
}

void lastBlockAcqRelRow(const Buffers& b, size_t n, cudaStream_t s) {
    if (n <= kTile) {
        oneTile<<<1, kThreads, 0, s>>>(b.in, n, b.out);
        return;
    }
    lastBlockAcqRel<<<gridFor(b, n, kWaves), kThreads, 0, s>>>(
        b.in, n, b.partials, b.counter, b.out);
}

void lastClusterRow(const Buffers& b, size_t n, cudaStream_t s) {
    if (n <= kTile) {
        oneTile<<<1, kThreads, 0, s>>>(b.in, n, b.out);
        return;
    }
    const unsigned int blocks = static_cast<unsigned int>(
        course::roundUp(gridFor(b, n, kWaves), kCluster));
    course::launch(lastCluster, dim3(blocks), dim3(kThreads), s,
                   {kCluster, false, 0}, b.in.get(), n, b.partials.get(),
                   b.counter.get(), b.out.get());
}

void designatedRow(const Buffers& b, size_t n, cudaStream_t s) {
    if (n <= kTile) {
        oneTile<<<1, kThreads, 0, s>>>(b.in, n, b.out);
        return;
    }
    designated<<<gridFor(b, n, kWaves), kThreads, 0, s>>>(b.in, n, b.partials,
                                                          b.counter, b.out);
}

void cubRow(const Buffers& b, size_t n, cudaStream_t s) {
    size_t bytes = b.cubTemp.size();
    CUDA_CHECK(cub::DeviceReduce::Sum(b.cubTemp.get(), bytes, b.in.get(),
                                      b.out.get(), static_cast<int64_t>(n), s));
}

// The read ceiling as day 24 has it: v9's grid and loop, XOR, one atomic.
__global__ void ceilingKernel(const float* __restrict__ in, size_t n,
                              unsigned int* __restrict__ out) {
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    const unsigned int* w = reinterpret_cast<const unsigned int*>(in);
    const size_t n4 = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
    const size_t first =
        blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
    unsigned int acc[kUnroll] = {first < n - 4 * n4 ? w[4 * n4 + first] : 0u};
    size_t i = first;
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            v[k] = in4[i + k * stride];
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            acc[k] ^= (v[k].x ^ v[k].y) ^ (v[k].z ^ v[k].w);
        }
    }
    for (; i < n4; i += stride) {
        const uint4 v = in4[i];
        acc[0] ^= (v.x ^ v.y) ^ (v.z ^ v.w);
    }
    const auto x = [](unsigned int a, unsigned int c) { return a ^ c; };
    const unsigned int all =
        course::blockReduce<kThreads>(acc[0] ^ acc[1] ^ acc[2] ^ acc[3], x);
    if (threadIdx.x == 0) {
        atomicXor(out, all);
    }
}

void ceilingRow(const Buffers& b, size_t n, cudaStream_t s) {
    ceilingKernel<<<gridFor(b, n, kWaves), kThreads, 0, s>>>(
        b.in, n, reinterpret_cast<unsigned int*>(b.partials.get()));
}

const struct Design {
    const char* name;
    Enqueue enqueue;
    bool v9Grid;  // adds in v9's order: must give v9's bits
} kDesigns[] = {
    {"v9", v9, true},
    {"last-block", lastBlockRow<kWaves, false>, true},
    {"last-block-pdl", lastBlockRow<kWaves, true>, true},
    {"last-block-acq-rel", lastBlockAcqRelRow, true},
    {"last-cluster", lastClusterRow, false},
    {"one-wave", lastBlockRow<1, false>, false},
    {"designated", designatedRow, true},
    {"cub", cubRow, false},
    {"ceiling", ceilingRow, false},
};

}  // namespace

int main(int argc, char** argv) {
    course::Lesson l(argc, argv,
                     {.name = "one_pass",
                      .text = "Times one-pass sum designs beside day 24's v9, "
                              "CUB and the read ceiling at mid sizes.",
                      .bytesEach = 4.0,
                      .clusters = true});
    std::unique_ptr<Buffers> b;  // made after the GPU gate
    double want = 0.0;           // the float64 sum of the input, and v9's
    float v9Bits = 0.0f;         // bits, at the size in place
    for (size_t n : l.sizes({.run = {8192, 8193, 65536, 262145, 1048576,
                                     4194304, 16777216, 268435456},
                             .quick = {3, 4096, 8193, 1000003}})) {
        course::Experiment e{
            .group = "one-pass",
            .label = "one-pass n=" + std::to_string(n),
            .size = n,
            .twins = {"cub"},
            .inputs = {{"random",
                        [&, n](cudaStream_t s) {
                            course::fillRandom(b->in, n, s);
                            v9(*b, n, s);
                            v9Bits = course::toHost(b->out.get(), 1)[0];
                            want = 0.0;
                            for (size_t i = 0; i < n; ++i) {
                                want += course::hashUnit(i);
                            }
                        }}},
            .check = [&](const course::Checking& at) {
                const Design& d = course::byName(kDesigns, at.row.name);
                at.row.work(at.stream);
                if (d.name == std::string("ceiling")) {
                    return course::Checked{true, "not a sum: timed only"};
                }
                const float got = course::toHost(b->out.get(), 1)[0];
                at.row.work(at.stream);
                const float again = course::toHost(b->out.get(), 1)[0];
                const double rel = std::fabs(got - want) / want;
                const bool same = !d.v9Grid || got == v9Bits;
                return course::Checked{
                    rel < 1e-5 && got == again && same,
                    course::format(
                        "got %.9g (again %.9g), float64 %.9g, v9 %.9g", got,
                        again, want, v9Bits)};
            }};
        for (const Design& d : kDesigns) {
            const bool base = d.name == std::string("v9") ||
                              d.name == std::string("cub") ||
                              d.name == std::string("ceiling");
            e.cases.push_back(
                {.name = d.name,
                 .work = [&b, &d, n](cudaStream_t s) { d.enqueue(*b, n, s); },
                 .bytes = 4.0 * n,
                 .against =
                     base ? std::vector<std::string>{}
                          : std::vector<std::string>{"v9", "cub", "ceiling"}});
        }
        l.add(std::move(e));
    }
    return l.run([&] {
        const int grid =
            course::residentBlocks(lastBlock<false>, dim3(kThreads), {});
        size_t cubBytes = 0;
        CUDA_CHECK(cub::DeviceReduce::Sum(
            nullptr, cubBytes, static_cast<const float*>(nullptr),
            static_cast<float*>(nullptr), static_cast<int64_t>(l.largest())));
        b = std::make_unique<Buffers>(l.largest(), grid, cubBytes);
    });
}
