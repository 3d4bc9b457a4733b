// SPDX-License-Identifier: MIT
//
// course/timeline.cuh: per-block start, wait and end stamps, compiled
// only into a lesson's timeline variant (-DCOURSE_TIMELINE), and the
// host side that collects and summarizes them.

#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/json.cuh"
#include "course/memory.cuh"

namespace course {

// In a kernel: COURSE_BLOCK_BEGIN() first, COURSE_BLOCK_WAITED() after a
// wait worth seeing (cudaGridDependencySynchronize, a cluster barrier),
// COURSE_BLOCK_END() last. Thread 0 reads %globaltimer (nanoseconds, the
// same clock on every SM) and %smid, and stores one stamp per block,
// tagged with %gridid so the host can tell launches apart. In every other
// build the three expand to nothing: timed code never carries them. The
// stamps' storage and the host side below exist in every build, so that a
// lesson's timeline code compiles, and is skipped, in its timed build.
namespace timeline {
struct Stamp {
    unsigned long long grid, start, waited, end;
    unsigned int smid, block;
};
__device__ Stamp* gStamps = nullptr;
__device__ unsigned int gCount = 0;
__device__ unsigned int gCapacity = 0;

__device__ inline unsigned long long now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ inline void store(unsigned long long start,
                             unsigned long long waited) {
    unsigned long long grid;
    unsigned int sm;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    const unsigned long long end = now();
    const unsigned int slot = atomicAdd(&gCount, 1u);
    if (slot < gCapacity) {
        const unsigned int block =
            blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        gStamps[slot] = {grid, start, waited ? waited : start, end, sm, block};
    }
}
}  // namespace timeline

#ifdef COURSE_TIMELINE
#define COURSE_BLOCK_BEGIN()                                 \
    const unsigned long long courseStart_ =                  \
        threadIdx.x == 0 ? ::course::timeline::now() : 0ull; \
    unsigned long long courseWaited_ = 0ull
#define COURSE_BLOCK_WAITED()                          \
    do {                                               \
        if (threadIdx.x == 0) {                        \
            courseWaited_ = ::course::timeline::now(); \
        }                                              \
    } while (0)
#define COURSE_BLOCK_END()                                          \
    do {                                                            \
        if (threadIdx.x == 0) {                                     \
            ::course::timeline::store(courseStart_, courseWaited_); \
        }                                                           \
    } while (0)
#else
#define COURSE_BLOCK_BEGIN() ((void)0)
#define COURSE_BLOCK_WAITED() ((void)0)
#define COURSE_BLOCK_END() ((void)0)
#endif

// Whether this is a lesson's timeline build (-DCOURSE_TIMELINE): it records
// where blocks spend their time, and times nothing.
#ifdef COURSE_TIMELINE
constexpr bool kTimelineBuild = true;
#else
constexpr bool kTimelineBuild = false;
#endif

namespace timeline {

// Collects the stamps of every kernel launched between reset() and read().
class Recorder {
public:
    explicit Recorder(unsigned int capacity) : capacity_(capacity) {
        CUDA_CHECK(cudaMalloc(&stamps_, sizeof(Stamp) * capacity));
        CUDA_CHECK(cudaMemcpyToSymbol(gStamps, &stamps_, sizeof stamps_));
        CUDA_CHECK(cudaMemcpyToSymbol(gCapacity, &capacity_, sizeof capacity_));
        reset();
    }
    ~Recorder() { cudaFree(stamps_); }
    void reset() {
        const unsigned int zero = 0;
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpyToSymbol(gCount, &zero, sizeof zero));
    }
    // Runs `work` twice, the first time to warm it (module load, clocks),
    // and returns the second run's stamps.
    template <typename Work>
    std::vector<std::vector<Stamp>> capture(Work&& work) {
        work();
        reset();
        work();
        return read();
    }
    // Every stamp, grouped by launch in the order the launches started.
    std::vector<std::vector<Stamp>> read() {
        CUDA_CHECK(cudaDeviceSynchronize());
        unsigned int count = 0;
        CUDA_CHECK(cudaMemcpyFromSymbol(&count, gCount, sizeof count));
        if (count > capacity_) {
            std::fprintf(stderr, "timeline: %u blocks, capacity %u\n", count,
                         capacity_);
            count = capacity_;
        }
        std::vector<Stamp> all = toHost(stamps_, count);
        std::vector<std::vector<Stamp>> grids;
        for (const Stamp& s : all) {
            auto g = std::find_if(grids.begin(), grids.end(), [&](auto& v) {
                return v.front().grid == s.grid;
            });
            if (g == grids.end()) {
                grids.push_back({s});
            } else {
                g->push_back(s);
            }
        }
        auto first = [](const std::vector<Stamp>& v) {
            unsigned long long t = ~0ull;
            for (const Stamp& s : v) {
                t = std::min(t, s.start);
            }
            return t;
        };
        std::sort(grids.begin(), grids.end(),
                  [&](auto& a, auto& b) { return first(a) < first(b); });
        return grids;
    }

private:
    Stamp* stamps_ = nullptr;
    unsigned int capacity_ = 0;
};

// The first start and the last end over some launches' blocks.
inline std::pair<unsigned long long, unsigned long long> window(
    std::initializer_list<const std::vector<Stamp>*> grids) {
    std::pair<unsigned long long, unsigned long long> w{~0ull, 0ull};
    for (const std::vector<Stamp>* g : grids) {
        for (const Stamp& s : *g) {
            w.first = std::min(w.first, s.start);
            w.second = std::max(w.second, s.end);
        }
    }
    return w;
}

// One launch's blocks as a row, times in microseconds from `t0`: when the
// first and last blocks started and ended, the median block's life and
// wait, and a curve of how many blocks were resident (started, not ended)
// and how many of those were still waiting, in `bins` steps from t0 to
// `t1`. Grids of at most 2,048 blocks also keep every block.
inline Row summarize(const std::vector<Stamp>& blocks,
                     const std::string& kernel, unsigned long long t0,
                     unsigned long long t1, int bins = 160) {
    auto us = [&](unsigned long long t) {
        return (static_cast<double>(t) - static_cast<double>(t0)) * 1e-3;
    };
    std::vector<double> starts, ends, lives, waits;
    for (const Stamp& s : blocks) {
        starts.push_back(us(s.start));
        ends.push_back(us(s.end));
        lives.push_back(us(s.end) - us(s.start));
        waits.push_back(us(s.waited) - us(s.start));
    }
    auto med = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v[v.size() / 2];
    };
    std::vector<double> resident(static_cast<size_t>(bins), 0.0);
    std::vector<double> waiting(static_cast<size_t>(bins), 0.0);
    const double span = std::max(us(t1), 1e-3);
    for (const Stamp& s : blocks) {
        for (int b = 0; b < bins; ++b) {
            const double t = span * (b + 0.5) / bins;
            if (us(s.start) <= t && t < us(s.end)) {
                resident[static_cast<size_t>(b)] += 1.0;
                if (t < us(s.waited)) {
                    waiting[static_cast<size_t>(b)] += 1.0;
                }
            }
        }
    }
    Row r;
    r.str("group", "timeline")
        .str("kernel", kernel)
        .integer("blocks", static_cast<long long>(blocks.size()))
        .num("first_start_us", *std::min_element(starts.begin(), starts.end()))
        .num("last_start_us", *std::max_element(starts.begin(), starts.end()))
        .num("first_end_us", *std::min_element(ends.begin(), ends.end()))
        .num("last_end_us", *std::max_element(ends.begin(), ends.end()))
        .num("median_block_us", med(lives))
        .num("median_wait_us", med(waits))
        .num("max_wait_us", *std::max_element(waits.begin(), waits.end()))
        .num("span_us", span)
        .nums("resident", resident)
        .nums("waiting", waiting);
    if (blocks.size() <= 2048) {
        std::vector<double> sm;
        for (const Stamp& s : blocks) {
            sm.push_back(s.smid);
        }
        r.nums("block_start_us", starts)
            .nums("block_end_us", ends)
            .nums("block_wait_us", waits)
            .nums("block_sm", sm);
    }
    return r;
}

}  // namespace timeline

}  // namespace course
