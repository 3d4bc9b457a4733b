// SPDX-License-Identifier: MIT
//
// Experiment (not a lesson): what moves a short cold launch? In the course's
// records of 1784110d5df1, two rows of one kernel with the same arguments
// (CUB and its twin; day 24's v10 and v9 below one tile) were called
// *faster* or *slower* by the comparison rule in up to a third of the cold
// cells under about 8 us, and in none of the batch or graph cells.
//
// The harness of those records gave every row its own Sampler (its own
// pair of CUDA events) and turned the rows' order round every round (A B C,
// C B A, ...), with one L2 flush (a memset over twice the L2, then a read
// of a second such buffer) before each cold sample. This program times ONE
// kernel as several identical rows, and changes one thing at a time:
//
//   events   own      each row its own start/stop pair (the old harness)
//            shared   one pair for every row (samples never overlap: each
//                     is synchronized before the next is enqueued)
//            shuffled a pool of one pair a row, a fresh pair drawn for
//                     each sample: does an offset follow the pair or the row?
//   order    serpentine  A B C, C B A (the old harness)
//            forward     A B C, A B C
//            random      a fresh permutation each round (seeded)
//   flush    full     memset + read (the old harness)
//            read     the read alone
//            write    the memset alone
//            none     no flush: a warm launch, one at a time
//   buffers  shared   every row reads one input
//            own      each row its own input and output
//   mix      same     every row one kernel
//            three    rows A A B B C C: three kernels of the same work and
//                     different code, so "what ran just before" can differ
//
// Each configuration times its rows for kRounds rounds, one sample of each
// row a round, and prints every sample as a CSV line:
//   config,kernel,n,round,position,row,pred,event,us
// `pred` is the row sampled just before (-1: the first sample), `event` the
// index of the start/stop pair that timed it. research/cold-order.md reads
// the output (research/experiments/cold_order_tables.py makes its tables).
//
// Build and run from the repository root:
//   cmake --build build --target cold_order && build/bin/cold_order > out.csv
// or alone:
//   nvcc -std=c++20 -O3 -arch=sm_90 -DCOURSE_MIN_CC=90 -I common \
//        -o cold_order research/experiments/cold_order.cu

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "course.cuh"

constexpr int kThreads = 256;
// Rows a set: six, as many as day 24's sweep sets time (v9, v10, CUB, its
// twin, the ceiling, the copy).
constexpr int kRows = 6;
// Rounds a configuration: 256, a look the rule makes, and enough that a
// per-row offset of one event tick (about 32 ns on 3.5 us) is resolved.
constexpr int kRounds = 256;

// Three kernels with the same work (sum n floats in one block per 4,096,
// one atomicAdd a block) and different code, so that their instructions
// and constants differ. Launch assumption: blockDim.x == kThreads.
template <int kVariant>
__global__ void sumKernel(const float* __restrict__ in, size_t n,
                          float* __restrict__ out) {
    float acc = 0.0f;
    const size_t first = blockIdx.x * static_cast<size_t>(4096) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        const size_t i = first + k * kThreads;
        if (i < n && i < (blockIdx.x + 1) * static_cast<size_t>(4096)) {
            if constexpr (kVariant == 0) {
                acc += in[i];
            } else if constexpr (kVariant == 1) {
                acc = fmaf(in[i], 1.0f, acc);
            } else {
                acc -= -in[i];
            }
        }
    }
    acc = course::blockSum<kThreads>(acc);
    if (threadIdx.x == 0) {
        atomicAdd(out, acc);
    }
}

using Kernel = void (*)(const float*, size_t, float*);
const Kernel kKernels[] = {sumKernel<0>, sumKernel<1>, sumKernel<2>};

enum class Events { Own, Shared, Shuffled };
enum class Order { Serpentine, Forward, Random };
enum class Flush { Full, Read, Write, None };

struct Config {
    const char* name;
    Events events;
    Order order;
    Flush flush;
    bool ownBuffers;
    bool mixed;
};

// The old harness first, then one change at a time, then the candidates.
const Config kConfigs[] = {
    {"old", Events::Own, Order::Serpentine, Flush::Full, false, false},
    {"shared-events", Events::Shared, Order::Serpentine, Flush::Full, false,
     false},
    {"shuffled-events", Events::Shuffled, Order::Serpentine, Flush::Full, false,
     false},
    {"forward", Events::Own, Order::Forward, Flush::Full, false, false},
    {"random", Events::Own, Order::Random, Flush::Full, false, false},
    {"flush-read", Events::Own, Order::Serpentine, Flush::Read, false, false},
    {"flush-write", Events::Own, Order::Serpentine, Flush::Write, false, false},
    {"flush-none", Events::Own, Order::Serpentine, Flush::None, false, false},
    {"own-buffers", Events::Own, Order::Serpentine, Flush::Full, true, false},
    {"mixed", Events::Own, Order::Serpentine, Flush::Full, false, true},
    {"mixed-random-shared", Events::Shared, Order::Random, Flush::Full, false,
     true},
    {"random-shared", Events::Shared, Order::Random, Flush::Full, false, false},
    {"random-shared-own-buffers", Events::Shared, Order::Random, Flush::Full,
     true, false},
    {"old-again", Events::Own, Order::Serpentine, Flush::Full, false, false},
};

// The sizes: one block (about 3.5 us cold: the band where the false calls
// were), 64 blocks, and 4,096 blocks (16 Mi floats, about 20 us).
const size_t kSizes[] = {1024, 262144, 16777216};

struct Pair {
    cudaEvent_t start, stop;
};

// Reads `words` int4s and keeps the result observable. Any grid.
__global__ void flushRead(const int4* __restrict__ buf, size_t words,
                          int* __restrict__ sink) {
    int acc = 0;
    for (size_t i = course::threadIndex(); i < words;
         i += course::threadCount()) {
        const int4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) {
        *sink = acc;
    }
}

int main(int argc, char** argv) {
    const unsigned seed = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 1u;
    int l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    const size_t flushBytes = 2 * static_cast<size_t>(l2);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const course::DeviceArray<char> written(flushBytes), read(flushBytes);
    const course::DeviceArray<int> sink(1);
    CUDA_CHECK(cudaMemset(read, 1, flushBytes));
    const size_t maxN = kSizes[std::size(kSizes) - 1];
    std::vector<course::DeviceArray<float>*> ins, outs;
    for (int r = 0; r < kRows; ++r) {
        ins.push_back(new course::DeviceArray<float>(maxN));
        outs.push_back(new course::DeviceArray<float>(1));
        course::fillRandom(*ins.back(), maxN, s, 0);
    }
    std::vector<Pair> pairs(kRows);
    for (Pair& p : pairs) {
        CUDA_CHECK(cudaEventCreate(&p.start));
        CUDA_CHECK(cudaEventCreate(&p.stop));
    }
    std::mt19937 rng(seed);
    std::printf("config,kernel,n,round,position,row,pred,event,us\n");
    for (const Config& c : kConfigs) {
        for (size_t n : kSizes) {
            const unsigned blocks =
                static_cast<unsigned>(course::ceilDiv(n, 4096));
            auto kernelOf = [&](int row) {
                return c.mixed ? kKernels[row / 2] : kKernels[0];
            };
            auto launchRow = [&](int row) {
                const int b = c.ownBuffers ? row : 0;
                kernelOf(row)<<<blocks, kThreads, 0, s>>>(*ins[b], n, *outs[b]);
            };
            // Warm-up: each row's kernel three times (module load, clocks).
            for (int w = 0; w < 3; ++w) {
                for (int r = 0; r < kRows; ++r) {
                    launchRow(r);
                }
            }
            CUDA_CHECK(cudaStreamSynchronize(s));
            std::vector<int> order(kRows);
            std::iota(order.begin(), order.end(), 0);
            int pred = -1;
            for (int round = 0; round < kRounds; ++round) {
                if (c.order == Order::Random) {
                    std::shuffle(order.begin(), order.end(), rng);
                } else if (c.order == Order::Serpentine) {
                    std::iota(order.begin(), order.end(), 0);
                    if (round % 2 == 1) {
                        std::reverse(order.begin(), order.end());
                    }
                }
                for (int pos = 0; pos < kRows; ++pos) {
                    const int row = order[pos];
                    const int ev = c.events == Events::Own ? row
                                   : c.events == Events::Shared
                                       ? 0
                                       : static_cast<int>(rng() % kRows);
                    if (c.flush == Flush::Full || c.flush == Flush::Write) {
                        CUDA_CHECK(cudaMemsetAsync(written, 0, flushBytes, s));
                    }
                    if (c.flush == Flush::Full || c.flush == Flush::Read) {
                        flushRead<<<1024, 256, 0, s>>>(
                            reinterpret_cast<const int4*>(read.get()),
                            flushBytes / sizeof(int4), sink);
                    }
                    CUDA_CHECK(cudaEventRecord(pairs[ev].start, s));
                    launchRow(row);
                    CUDA_CHECK(cudaEventRecord(pairs[ev].stop, s));
                    CUDA_CHECK(cudaEventSynchronize(pairs[ev].stop));
                    float ms = 0.0f;
                    CUDA_CHECK(cudaEventElapsedTime(&ms, pairs[ev].start,
                                                    pairs[ev].stop));
                    std::printf("%s,%d,%zu,%d,%d,%d,%d,%d,%.4f\n", c.name,
                                c.mixed ? row / 2 : 0, n, round, pos, row, pred,
                                ev, 1000.0 * ms);
                    pred = row;
                }
            }
        }
    }
    CUDA_CHECK(cudaGetLastError());
    for (int r = 0; r < kRows; ++r) {
        delete ins[r];
        delete outs[r];
    }
    return 0;
}
