// SPDX-License-Identifier: MIT
//
// course.cuh: the one header every day of the course includes.
//
// What every lesson needs and no lesson may carry a copy of:
//
//   CUDA_CHECK(call)        check a runtime call, name what failed, exit 1.
//   course::begin()         the lesson's opening: the shared command line,
//                           --only checked against the lesson's own names,
//                           the capability gate, the size gate, the banner.
//   course::Lesson::check   one checked result: recorded, and named on
//                           stderr when wrong.
//   course::timeKernel      CUDA-event timing in three named modes (cold,
//                           batch, graph), every sample kept.
//   course::launch          cudaLaunchKernelEx with the attributes the
//                           course teaches (clusters, dependent launch).
//   course::warpSum/blockSum  the shuffle sums several days use (and
//                           warpReduce/blockReduce for any operator).
//   course::DeviceArray     a device allocation that frees itself.
//   course::fill/fillRandom inputs that are not zeros, known to the host
//                           through hashUnit without a copy back.
//   course::Report, Row     the results as JSON, so no tool ever scrapes
//                           the printed table.
//   COURSE_BLOCK_*          per-block start/wait/end stamps, compiled only
//                           into a lesson's timeline variant.
//
// Exit codes, the same for every day (cuda-samples uses 2 for "waived"):
//   0  every check passed          2  waived: no suitable GPU or driver
//   1  a wrong result, or a CUDA   64 the command line was wrong
//      call failed                    (sysexits.h's EX_USAGE)
//
// Timing modes, and when each is the right question:
//   cold   the L2 emptied before each sample (L2Flusher), then one launch
//          between two events: what the work costs when its input comes
//          from DRAM. nvbench names the same measurement "cold".
//   batch  `batch` launches back to back between two events, the mean per
//          launch one sample: what the work costs in a pipeline, where
//          launch gaps hide behind the previous launch, and where the host's
//          own launch work is part of the price.
//   graph  the same `batch` launches captured once into a CUDA graph and
//          replayed: device time without the host's per-launch work. Where
//          batch is slower than graph, the host was the bottleneck.

#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

// One statement (the do/while survives a braceless `if`); `err_` carries a
// trailing underscore so it cannot shadow a name at the call site.
#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
        cudaError_t err_ = (call);                                          \
        if (err_ != cudaSuccess) {                                          \
            std::fprintf(stderr, "CUDA error at %s:%d: %s: %s (%s)\n",      \
                         __FILE__, __LINE__, #call, cudaGetErrorName(err_), \
                         cudaGetErrorString(err_));                         \
            std::exit(EXIT_FAILURE);                                        \
        }                                                                   \
    } while (0)

namespace course {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitWaived = 2;
constexpr int kExitUsage = 64;

// ---------------------------------------------------------------------
// Device helpers every reduction shares
// ---------------------------------------------------------------------

// A warp's values combined with `op` (associative), left in every lane.
// Launch assumption: all 32 lanes of the warp call it (the full mask).
template <typename T, typename Op>
__device__ inline T warpReduce(T v, Op op) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    }
    return v;
}

// A block's values combined through shuffles: each warp combines itself,
// warp 0 combines the warp totals, always in the same order (the same bits
// every run). Launch assumption: blockDim.x == kThreads, a multiple of 32,
// at most 1,024; every thread calls it, and a second call in the same
// kernel comes after a __syncthreads() (the two would share warpTotals).
// The total is valid in thread 0 (and in all of warp 0).
template <int kThreads, typename T, typename Op>
__device__ inline T blockReduce(T v, Op op) {
    static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
    __shared__ T warpTotals[kThreads / 32];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    v = warpReduce(v, op);
    if (lane == 0) {
        warpTotals[warp] = v;
    }
    __syncthreads();  // every warp's total stored before warp 0 reads them
    v = (threadIdx.x < kThreads / 32) ? warpTotals[lane] : T{};
    return warp == 0 ? warpReduce(v, op) : T{};
}

struct Plus {
    template <typename T>
    __device__ T operator()(T a, T b) const {
        return a + b;
    }
};
__device__ inline float warpSum(float v) {
    return warpReduce(v, Plus{});
}
template <int kThreads>
__device__ inline float blockSum(float v) {
    return blockReduce<kThreads>(v, Plus{});
}

// snippet: two-loads-block
// Day 24's version 4, the block kernel day 77 reuses: each thread adds two
// elements while loading, then the sequential-addressing tree halves the
// active threads.
//
// Launch assumption: blockDim.x == kThreads, a power of two. Every thread
// reaches every __syncthreads(); the guards cover loads, never barriers.
// After the call, tile[0] holds the block's partial.
template <int kThreads>
__device__ void reduceBlockToTile(const float* __restrict__ in, size_t n,
                                  float* tile) {
    static_assert((kThreads & (kThreads - 1)) == 0, "the tree halves");
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * static_cast<size_t>(kThreads) * 2 + tid;

    float sum = (i < n) ? in[i] : 0.0f;
    if (i + kThreads < n) {
        sum += in[i + kThreads];
    }
    tile[tid] = sum;
    __syncthreads();  // every tile slot written before the tree reads it

    for (unsigned int s = kThreads / 2; s > 0; s >>= 1) {
        if (tid < s) {
            tile[tid] += tile[tid + s];
        }
        __syncthreads();  // this level's sums complete before the next
    }
}
// end snippet

// A 32-bit hash of (i, seed) to a float in [0, 1), the same on host and
// device: inputs that are not zeros, reproducible, and known to the host
// without a copy back.
__host__ __device__ inline float hashUnit(uint64_t i, uint32_t seed = 0) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^
                 static_cast<uint32_t>(i >> 32) ^ (0x9e3779b9u + seed);
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

// Element i becomes `value`, or hashUnit(i, seed) where `random` is set.
// Launch assumption: any grid; a grid-stride loop covers n.
static __global__ void courseFill(float* out, size_t n, float value,
                                  bool random, uint32_t seed) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < n; i += stride) {
        out[i] = random ? hashUnit(i, seed) : value;
    }
}
inline void fill(float* out, size_t n, float value, cudaStream_t stream) {
    courseFill<<<1024, 256, 0, stream>>>(out, n, value, false, 0);
    CUDA_CHECK(cudaGetLastError());
}
inline void fillRandom(float* out, size_t n, cudaStream_t stream,
                       uint32_t seed = 0) {
    courseFill<<<1024, 256, 0, stream>>>(out, n, 0.0f, true, seed);
    CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------
// Launching with attributes
// ---------------------------------------------------------------------

// snippet: launch-attributes
// What a launch may ask for beyond <<<>>>: a cluster of blocks along x
// (compute capability 9.0; the grid must be a multiple of it), and
// programmatic dependent launch, which lets this kernel start while the
// previous kernel in the stream is still running (9.0; the kernel must
// call cudaGridDependencySynchronize() before it reads that kernel's
// output).
struct LaunchAttrs {
    unsigned int clusterX = 0;  // 0: no cluster
    bool dependent = false;     // programmatic stream serialization
    size_t sharedBytes = 0;     // dynamic shared memory per block
};

template <typename... KernelArgs, typename... Args>
void launch(void (*kernel)(KernelArgs...), dim3 grid, dim3 block,
            cudaStream_t stream, LaunchAttrs a, Args&&... args) {
    cudaLaunchAttribute attrs[2];
    unsigned int count = 0;
    if (a.clusterX > 0) {
        attrs[count].id = cudaLaunchAttributeClusterDimension;
        attrs[count].val.clusterDim.x = a.clusterX;
        attrs[count].val.clusterDim.y = 1;
        attrs[count].val.clusterDim.z = 1;
        ++count;
    }
    if (a.dependent) {
        attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attrs[count].val.programmaticStreamSerializationAllowed = 1;
        ++count;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = a.sharedBytes;
    cfg.stream = stream;
    cfg.attrs = attrs;
    cfg.numAttrs = count;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}
// end snippet

// ---------------------------------------------------------------------
// Per-block timelines (the timeline variant only)
// ---------------------------------------------------------------------

// In a kernel: COURSE_BLOCK_BEGIN() first, COURSE_BLOCK_WAITED() after a
// wait worth seeing (cudaGridDependencySynchronize, a cluster barrier),
// COURSE_BLOCK_END() last. Thread 0 reads %globaltimer (nanoseconds, the
// same clock on every SM) and %smid, and stores one stamp per block,
// tagged with %gridid so the host can tell launches apart. In every other
// build the three expand to nothing: timed code never carries them.
#ifdef COURSE_TIMELINE
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

// ---------------------------------------------------------------------
// Results as JSON
// ---------------------------------------------------------------------

// A JSON string literal. Invalid UTF-8 (a kernel name, a path, a message
// from the driver) is written as the visible text \xNN, never as a raw
// byte a JSON reader would reject.
inline std::string jsonQuote(const std::string& s) {
    std::string out = "\"";
    const size_t n = s.size();
    for (size_t i = 0; i < n;) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            ++i;
            continue;
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        // A valid sequence: a lead byte, then its continuation bytes, not
        // overlong, not a surrogate, at most U+10FFFF.
        int len = c >= 0xf0 && c <= 0xf4   ? 4
                  : c >= 0xe0              ? 3
                  : c >= 0xc2 && c <= 0xdf ? 2
                                           : 0;
        bool ok = len > 0 && i + len <= n;
        for (int k = 1; ok && k < len; ++k) {
            ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
        }
        if (ok && len >= 3) {
            const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
            ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0) &&
                 !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
        }
        if (ok) {
            out.append(s, i, static_cast<size_t>(len));
            i += static_cast<size_t>(len);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
            out += buf;
            ++i;
        }
    }
    return out + "\"";
}

inline std::string jsonNumber(double v) {
    if (!std::isfinite(v)) {
        return "null";
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

struct TimingResult;

// One row: ordered keys, written in the order they were added, so the JSON
// reads like the printed table.
class Row {
public:
    Row& num(const char* key, double v) { return raw(key, jsonNumber(v)); }
    Row& integer(const char* key, long long v) {
        return raw(key, std::to_string(v));
    }
    Row& str(const char* key, const std::string& v) {
        return raw(key, jsonQuote(v));
    }
    Row& boolean(const char* key, bool v) {
        return raw(key, v ? "true" : "false");
    }
    Row& nums(const char* key, const std::vector<double>& v) {
        std::string out = "[";
        for (size_t i = 0; i < v.size(); ++i) {
            out += (i ? "," : "") + jsonNumber(v[i]);
        }
        return raw(key, out + "]");
    }
    inline Row& timing(const TimingResult& t);
    std::string json() const {
        std::string out = "{";
        for (size_t i = 0; i < fields_.size(); ++i) {
            out += (i ? ", " : "") + jsonQuote(fields_[i].first) + ": " +
                   fields_[i].second;
        }
        return out + "}";
    }

private:
    Row& raw(const char* key, std::string v) {
        fields_.emplace_back(key, std::move(v));
        return *this;
    }
    std::vector<std::pair<std::string, std::string>> fields_;
};

// ---------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------

enum class TimingMode { Cold, Batch, Graph };

inline const char* timingName(TimingMode mode) {
    return mode == TimingMode::Cold    ? "cold"
           : mode == TimingMode::Batch ? "batch"
                                       : "graph";
}

struct TimingOptions {
    // 31 samples: enough for a stable median and quartiles on a quiet GPU,
    // and odd, so the median is one measured sample.
    int samples = 31;
    // Launches per batch or graph sample: 20 launches of a 20 us kernel
    // are 400 us between two events, far above the events' resolution
    // (about half a microsecond).
    int batch = 20;
    // Warm-up launches (and graph replays) before the first sample: the
    // first launch of a kernel pays its module load (lazy loading is the
    // default since CUDA 12.2), and the next few settle the clocks.
    int warmup = 3;
};

struct TimingResult {
    const char* mode = "batch";
    std::vector<double> samplesMs;  // every sample, in the order taken
    double median = 0.0, q1 = 0.0, q3 = 0.0, min = 0.0, max = 0.0, mean = 0.0;
    // (q3 - q1) / 2 relative to the median: the table's "spread" column.
    double spread() const {
        return median > 0.0 ? 0.5 * (q3 - q1) / median : 0.0;
    }
};

// Quartiles by rank (p (n - 1) + 50) / 100 rounded down, nvbench's rule, so
// the tools compute the same numbers from the stored samples.
inline TimingResult summarize(std::vector<double> ms, TimingMode mode) {
    TimingResult r;
    r.mode = timingName(mode);
    r.samplesMs = ms;
    if (ms.empty()) {
        return r;
    }
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    auto at = [&](size_t p) { return ms[(p * (n - 1) + 50) / 100]; };
    r.median = at(50);
    r.q1 = at(25);
    r.q3 = at(75);
    r.min = ms.front();
    r.max = ms.back();
    double total = 0.0;
    for (double v : ms) {
        total += v;
    }
    r.mean = total / static_cast<double>(n);
    return r;
}

Row& Row::timing(const TimingResult& t) {
    str("timing", t.mode);
    integer("samples", static_cast<long long>(t.samplesMs.size()));
    num("median_ms", t.median);
    num("q1_ms", t.q1);
    num("q3_ms", t.q3);
    num("min_ms", t.min);
    num("max_ms", t.max);
    num("mean_ms", t.mean);
    num("spread", t.spread());
    return nums("samples_ms", t.samplesMs);
}

// Reads `words` 16-byte words and keeps the result observable, so the
// compiler cannot drop the loads. Launch assumption: any grid.
static __global__ void courseReadFlush(const int4* __restrict__ buf,
                                       size_t words, int* __restrict__ sink) {
    COURSE_BLOCK_BEGIN();
    int acc = 0;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < words; i += stride) {
        const int4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) {  // practically never; the store keeps the loads
        *sink = acc;
    }
    COURSE_BLOCK_END();
}

// Empties the L2 of anything the timed work could reuse: a write over a
// buffer twice the L2's size (what nvbench does), then a read of a second
// one. The read matters: after the write alone the L2 holds dirty lines,
// and the timed kernel would pay for writing them back as it evicts them,
// a cost that belongs to the flush.
class L2Flusher {
public:
    explicit L2Flusher(cudaStream_t stream) : stream_(stream) {
        int device = 0;
        int l2 = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        bytes_ = 2 * static_cast<size_t>(l2 > 0 ? l2 : (64 << 20));
        CUDA_CHECK(cudaMalloc(&written_, bytes_));
        CUDA_CHECK(cudaMalloc(&read_, bytes_));
        CUDA_CHECK(cudaMalloc(&sink_, sizeof(int)));
        CUDA_CHECK(cudaMemset(read_, 1, bytes_));
    }
    ~L2Flusher() {
        cudaFree(written_);
        cudaFree(read_);
        cudaFree(sink_);
    }
    L2Flusher(const L2Flusher&) = delete;
    L2Flusher& operator=(const L2Flusher&) = delete;
    void flush() {
        CUDA_CHECK(cudaMemsetAsync(written_, 0, bytes_, stream_));
        courseReadFlush<<<1024, 256, 0, stream_>>>(
            static_cast<const int4*>(read_), bytes_ / sizeof(int4), sink_);
        CUDA_CHECK(cudaGetLastError());
    }

private:
    cudaStream_t stream_;
    void* written_ = nullptr;
    void* read_ = nullptr;
    int* sink_ = nullptr;
    size_t bytes_ = 0;
};

// Times `launch(stream)`, which enqueues the work on `stream`. The work
// must leave its result valid after any number of calls; correctness is
// checked before timing, never during it. Graph mode captures the calls,
// so `stream` must be a created stream (the legacy default stream cannot
// be captured) and the work must be capturable.
template <typename LaunchFn>
TimingResult timeKernel(LaunchFn&& launch, TimingMode mode,
                        const TimingOptions& opt, cudaStream_t stream) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    cudaGraphExec_t exec = nullptr;
    if (mode == TimingMode::Graph) {
        cudaGraph_t graph;
        CUDA_CHECK(
            cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < opt.batch; ++i) {
            launch(stream);
        }
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    auto once = [&] {
        if (exec != nullptr) {
            CUDA_CHECK(cudaGraphLaunch(exec, stream));
        } else {
            launch(stream);
        }
    };
    for (int i = 0; i < opt.warmup; ++i) {
        once();
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));

    std::vector<double> samples;
    L2Flusher* flusher =
        mode == TimingMode::Cold ? new L2Flusher(stream) : nullptr;
    const int perSample = mode == TimingMode::Batch ? opt.batch : 1;
    const int launchesPerSample = mode == TimingMode::Cold ? 1 : opt.batch;
    for (int s = 0; s < opt.samples; ++s) {
        if (flusher != nullptr) {
            flusher->flush();
        }
        CUDA_CHECK(cudaEventRecord(start, stream));
        for (int i = 0; i < perSample; ++i) {
            once();
        }
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(static_cast<double>(ms) / launchesPerSample);
    }
    CUDA_CHECK(cudaGetLastError());
    delete flusher;
    if (exec != nullptr) {
        CUDA_CHECK(cudaGraphExecDestroy(exec));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return summarize(std::move(samples), mode);
}

// Bytes over milliseconds, in GB/s (10^9 bytes per second).
inline double gbps(double bytes, double ms) {
    return ms > 0.0 ? bytes / (ms * 1.0e-3) / 1.0e9 : 0.0;
}

// The modes a lesson times a row in unless it says otherwise.
constexpr TimingMode kAllModes[] = {TimingMode::Cold, TimingMode::Batch,
                                    TimingMode::Graph};

// ---------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------

// A device allocation of `count` T that frees itself, and converts to T*
// wherever a kernel or a runtime call wants the pointer.
template <typename T>
class DeviceArray {
public:
    explicit DeviceArray(size_t count) : count_(count) {
        CUDA_CHECK(cudaMalloc(&p_, std::max<size_t>(count, 1) * sizeof(T)));
    }
    // Not checked: by now every result has been checked and reported, and
    // a sticky error would have stopped the lesson at its next call.
    ~DeviceArray() { cudaFree(p_); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    operator T*() const { return p_; }
    T* get() const { return p_; }
    size_t size() const { return count_; }

private:
    T* p_ = nullptr;
    size_t count_ = 0;
};

// Waits for all work on the device, then copies back: the lessons enqueue
// on a created non-blocking stream, which a plain cudaMemcpy would not
// wait for.
template <typename T>
std::vector<T> toHost(const T* device, size_t count) {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> host(count);
    CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T),
                          cudaMemcpyDeviceToHost));
    return host;
}

template <typename T>
std::vector<T> toHost(const DeviceArray<T>& device, size_t count) {
    return toHost(device.get(), count);
}

// Fills with 0xff bytes: a NaN for floats, UINT_MAX for counters, so an
// element the kernel never wrote cannot pass a check.
template <typename T>
void poison(T* device, size_t count, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(device, 0xff, count * sizeof(T), stream));
}
template <typename T>
void poison(const DeviceArray<T>& device, size_t count, cudaStream_t stream) {
    poison(device.get(), count, stream);
}

// How many elements differ from `want(i)`, and the first that does.
struct Mismatch {
    size_t count = 0, first = 0;
    double got = 0.0, want = 0.0;
    std::string describe(const char* what) const {
        char buf[200];
        if (count == 0) {
            return "";
        }
        std::snprintf(buf, sizeof buf,
                      "%zu wrong %s; first at %zu: got %.9g, want %.9g", count,
                      what, first, got, want);
        return buf;
    }
};
template <typename T, typename WantFn, typename OkFn>
Mismatch compareAll(const std::vector<T>& got, WantFn want, OkFn ok) {
    Mismatch m;
    for (size_t i = 0; i < got.size(); ++i) {
        const double w = want(i);
        if (!ok(static_cast<double>(got[i]), w) && m.count++ == 0) {
            m.first = i;
            m.got = static_cast<double>(got[i]);
            m.want = w;
        }
    }
    return m;
}

// ---------------------------------------------------------------------
// Variants as tables
// ---------------------------------------------------------------------

// A lesson's variants (versions, schedules, groups) are one table of
// structs with a `name`. What --only accepts is their names...
template <typename Table>
std::vector<std::string> namesOf(const Table& table) {
    std::vector<std::string> names;
    for (const auto& entry : table) {
        names.push_back(entry.name);
    }
    return names;
}

// ...and a name is looked up in the table it came from: one not there is
// a bug in the lesson, not an input error.
template <typename Table>
const auto& byName(const Table& table, const std::string& name) {
    for (const auto& entry : table) {
        if (name == entry.name) {
            return entry;
        }
    }
    std::fprintf(stderr, "no variant named '%s' in the lesson's table\n",
                 name.c_str());
    std::abort();
}

inline size_t ceilDiv(size_t a, size_t b) {
    return (a + b - 1) / b;
}

// ---------------------------------------------------------------------
// The command line every day shares
// ---------------------------------------------------------------------

// The most samples a row may ask for: 10,000 of a 1 ms kernel is ten
// seconds, already past any useful precision, and the count stays far
// from int's range.
constexpr long long kMaxSamples = 10000;

struct Args {
    size_t size = 0;         // 0: the lesson's own default
    std::string json;        // empty: no JSON file
    std::string only;        // empty: every variant
    int samples = 0;         // 0: TimingOptions' default
    bool quick = false;      // the small run CTest and the sanitizers make
    bool checkOnly = false;  // check every row, time nothing (sanitizers)
    bool profile = false;    // check, then run each row once, for ncu
};

// Parses a whole number: digits only (no sign, no space, no 0x), and no
// larger than `limit`.
inline bool parseWhole(const char* v, unsigned long long limit,
                       unsigned long long& out) {
    if (v == nullptr || *v < '0' || *v > '9') {
        return false;
    }
    unsigned long long x = 0;
    for (const char* p = v; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9') {
            return false;
        }
        const unsigned long long d = static_cast<unsigned long long>(*p - '0');
        if (x > (limit - d) / 10) {
            return false;
        }
        x = x * 10 + d;
    }
    out = x;
    return true;
}

// --json FILE: a regular file or none yet, in a folder we can write, found
// out now rather than after minutes of GPU work. Returns "" or the reason.
inline std::string jsonPathProblem(const std::string& path) {
    if (path.empty()) {
        return "--json expects a file name, got an empty one";
    }
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        return "--json '" + path +
               "' exists and is not a regular file (a device, a folder or a "
               "pipe); expected a file name to write";
    }
    const std::string probe = path + ".probe." + std::to_string(getpid());
    FILE* f = std::fopen(probe.c_str(), "wb");
    if (f == nullptr) {
        return "--json '" + path +
               "' cannot be written: " + std::strerror(errno);
    }
    std::fclose(f);
    std::remove(probe.c_str());
    return "";
}

// What a lesson declares about itself for its opening.
struct LessonSpec {
    const char* name;                   // the CMake target, e.g. dayNN_topic
    int minMajor, minMinor;             // the capability gate's minimum
    bool needsClusters;                 // thread block cluster launch
    std::vector<std::string> variants;  // the names --only accepts
    // Device bytes the lesson allocates per element of --size, so a size
    // that cannot fit is refused before any allocation.
    double bytesPerElement;
    const char* about;  // one paragraph for --help: what --size means, ...
};

class Report;

// What begin() hands a lesson: the parsed command line, the GPU, a created
// stream (graph timing needs one), the timing options and the report.
class Lesson {
public:
    LessonSpec spec;
    Args args;
    cudaDeviceProp prop = {};
    cudaStream_t stream = nullptr;
    TimingOptions timing;

    bool wants(const std::string& variant) const {
        return args.only.empty() || args.only == variant;
    }
    // The largest element count whose buffers fit in free device memory.
    size_t largestFitting() const { return largest_; }
    bool fits(size_t n) const { return n <= largest_; }

    // Records one checked result; a failure is also said on stderr.
    bool check(const std::string& name, bool ok, const std::string& detail);
    void row(Row r);
    void setting(Row r);
    int failures() const { return failures_; }
    // Writes --json (atomically), says whether every check passed, and
    // returns the exit code.
    int finish();

    size_t largest_ = 0;
    int failures_ = 0;
    std::vector<Row> checks_, rows_;
    Row gpu_, settings_;
};

[[noreturn]] inline void usage(const LessonSpec& spec, const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", spec.name, why.c_str());
    std::fprintf(stderr,
                 "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
                 "[--check-only] [--json FILE] [--profile]\n",
                 spec.name);
    std::exit(kExitUsage);
}

inline void printHelp(const LessonSpec& spec) {
    std::printf(
        "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
        "[--check-only] [--json FILE] [--profile]\n\n%s\n\n"
        "  --size N      elements (a whole number; refused if the buffers "
        "would not fit)\n"
        "  --only NAME   one variant:",
        spec.name, spec.about);
    for (const std::string& v : spec.variants) {
        std::printf(" %s", v.c_str());
    }
    std::printf(
        "\n  --samples N   timing samples per row, 1 to %lld (default 31)\n"
        "  --quick       the small run CTest and the sanitizers make\n"
        "  --check-only  check every row, time nothing (for sanitizers)\n"
        "  --json FILE   also write the results as JSON\n"
        "  --profile     check, then run each profiled row once (for ncu)\n"
        "exit: 0 all checks passed, 1 a wrong result or CUDA error, 2 "
        "waived (no suitable GPU), 64 bad command line\n",
        kMaxSamples);
}

inline Args parseArgs(const LessonSpec& spec, int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                usage(spec, arg + " expects a value");
            }
            return argv[++i];
        };
        unsigned long long x = 0;
        if (arg == "--size") {
            const char* v = value();
            if (!parseWhole(v, SIZE_MAX, x) || x == 0) {
                usage(spec, std::string("--size expects a whole number of "
                                        "elements above 0, got '") +
                                v + "'");
            }
            a.size = static_cast<size_t>(x);
        } else if (arg == "--samples") {
            const char* v = value();
            if (!parseWhole(v, static_cast<unsigned long long>(kMaxSamples),
                            x) ||
                x == 0) {
                usage(spec, std::string("--samples expects a whole number "
                                        "from 1 to ") +
                                std::to_string(kMaxSamples) + ", got '" + v +
                                "'");
            }
            a.samples = static_cast<int>(x);
        } else if (arg == "--json") {
            a.json = value();
            const std::string problem = jsonPathProblem(a.json);
            if (!problem.empty()) {
                usage(spec, problem);
            }
        } else if (arg == "--only") {
            a.only = value();
            if (std::find(spec.variants.begin(), spec.variants.end(), a.only) ==
                spec.variants.end()) {
                std::string known;
                for (const std::string& v : spec.variants) {
                    known += (known.empty() ? "" : ", ") + v;
                }
                usage(spec, "--only does not know '" + a.only +
                                "'; expected one of: " + known);
            }
        } else if (arg == "--quick") {
            a.quick = true;
        } else if (arg == "--check-only") {
            a.checkOnly = true;
        } else if (arg == "--profile") {
            a.profile = true;
        } else if (arg == "--help" || arg == "-h") {
            printHelp(spec);
            std::exit(kExitOk);
        } else {
            usage(spec, "unknown argument '" + arg + "'");
        }
    }
    return a;
}

// A kernel with nothing to do: asking the runtime for its attributes tells
// whether this build holds code the GPU can run.
static __global__ void courseProbe() {}

// The capability gate: returns device 0's properties, or exits with
// kExitWaived after one sentence saying what the lesson needs and what
// this machine has. It allocates nothing.
inline cudaDeviceProp requireGpu(const LessonSpec& spec) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    auto waive = [&](const std::string& why) {
        std::fprintf(stderr, "%s: waived: it needs %s; %s.\n", spec.name,
                     (std::string("a GPU of compute capability ") +
                      std::to_string(spec.minMajor) + "." +
                      std::to_string(spec.minMinor) + " or newer" +
                      (spec.needsClusters ? " with cluster launch" : ""))
                         .c_str(),
                     why.c_str());
        std::exit(kExitWaived);
    };
    if (driver == 0) {
        waive("this machine has no NVIDIA driver (so no usable GPU)");
    }
    if (err == cudaErrorInsufficientDriver) {
        int runtime = 0;
        cudaRuntimeGetVersion(&runtime);
        waive("the installed driver supports CUDA " +
              std::to_string(driver / 1000) + "." +
              std::to_string(driver % 1000 / 10) + ", older than the CUDA " +
              std::to_string(runtime / 1000) + "." +
              std::to_string(runtime % 1000 / 10) +
              " runtime this program was built with");
    }
    if (err != cudaSuccess || count == 0) {
        waive(std::string("this machine has no CUDA GPU (") +
              (err != cudaSuccess ? cudaGetErrorString(err) : "no devices") +
              ")");
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const std::string has = std::string("this machine's ") + prop.name +
                            " is " + std::to_string(prop.major) + "." +
                            std::to_string(prop.minor);
    if (prop.major < spec.minMajor ||
        (prop.major == spec.minMajor && prop.minor < spec.minMinor)) {
        waive(has);
    }
    if (spec.needsClusters) {
        int clusterLaunch = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&clusterLaunch,
                                          cudaDevAttrClusterLaunch, 0));
        if (clusterLaunch == 0) {
            waive(has +
                  " and reports no cluster launch (a MIG slice or a "
                  "virtualized GPU can do that)");
        }
    }
    CUDA_CHECK(cudaSetDevice(0));
    cudaFuncAttributes attrs;
    const cudaError_t image = cudaFuncGetAttributes(&attrs, courseProbe);
    if (image == cudaErrorNoKernelImageForDevice ||
        image == cudaErrorInvalidDeviceFunction) {
        cudaGetLastError();
#ifdef __CUDA_ARCH_LIST__
#define COURSE_STR2(...) #__VA_ARGS__
#define COURSE_STR(...) COURSE_STR2(__VA_ARGS__)
        const char* built = COURSE_STR(__CUDA_ARCH_LIST__);
#else
        const char* built = "unknown";
#endif
        waive(has + ", and this build holds no code for it (built for " +
              built + "); rebuild with CMAKE_CUDA_ARCHITECTURES=" +
              std::to_string(prop.major) + std::to_string(prop.minor));
    }
    CUDA_CHECK(image);
    return prop;
}

// The opening every lesson shares. Exits 64 on a bad command line, 2 when
// this machine cannot run the lesson, before anything is allocated.
inline Lesson begin(int argc, char** argv, const LessonSpec& spec) {
    Lesson l;
    l.spec = spec;
    l.args = parseArgs(spec, argc, argv);
    l.prop = requireGpu(spec);

    size_t freeBytes = 0, totalBytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    // Nine tenths of what is free: the runtime, CUB's temporary storage
    // and the cold flush's two buffers need the rest.
    const double usable = 0.9 * static_cast<double>(freeBytes);
    l.largest_ = spec.bytesPerElement > 0.0
                     ? static_cast<size_t>(usable / spec.bytesPerElement)
                     : SIZE_MAX;
    if (l.args.size != 0 && !l.fits(l.args.size)) {
        usage(spec, "--size " + std::to_string(l.args.size) + " needs " +
                        std::to_string(static_cast<double>(l.args.size) *
                                       spec.bytesPerElement / 1073741824.0) +
                        " GiB of GPU memory and " + l.prop.name + " has " +
                        std::to_string(freeBytes / 1073741824.0) +
                        " GiB free; the largest size that fits is " +
                        std::to_string(l.largest_));
    }
    CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    if (l.args.samples > 0) {
        l.timing.samples = l.args.samples;
    } else if (l.args.quick) {
        // It checks, it does not measure: as few launches as possible.
        l.timing.samples = 2;
        l.timing.batch = 2;
        l.timing.warmup = 1;
    }

    int driver = 0, runtime = 0, memClockKhz = 0, busBits = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    CUDA_CHECK(
        cudaDeviceGetAttribute(&memClockKhz, cudaDevAttrMemoryClockRate, 0));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, 0));
    l.gpu_.str("name", l.prop.name)
        .str("compute_capability",
             std::to_string(l.prop.major) + "." + std::to_string(l.prop.minor))
        .integer("sm_count", l.prop.multiProcessorCount)
        .integer("l2_bytes", l.prop.l2CacheSize)
        .integer("memory_bytes", static_cast<long long>(totalBytes))
        .integer("memory_clock_khz", memClockKhz)
        .integer("memory_bus_bits", busBits)
        .integer("driver_api", driver)
        .integer("runtime", runtime);
    std::printf("%s on %s (compute capability %d.%d, %d SMs, %d MiB L2)\n",
                spec.name, l.prop.name, l.prop.major, l.prop.minor,
                l.prop.multiProcessorCount, l.prop.l2CacheSize >> 20);
    return l;
}

inline bool Lesson::check(const std::string& name, bool ok,
                          const std::string& detail) {
    checks_.push_back(
        Row().str("check", name).boolean("ok", ok).str("detail", detail));
    if (!ok) {
        ++failures_;
        std::fprintf(stderr, "%s: WRONG: %s: %s\n", spec.name, name.c_str(),
                     detail.c_str());
    }
    return ok;
}

inline void Lesson::row(Row r) {
    rows_.push_back(std::move(r));
}
inline void Lesson::setting(Row r) {
    settings_ = std::move(r);
}

inline int Lesson::finish() {
    if (stream != nullptr) {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaStreamDestroy(stream));
        stream = nullptr;
    }
    if (!args.json.empty()) {
        std::string out = "{\n  \"lesson\": " + jsonQuote(spec.name) +
                          ",\n  \"gpu\": " + gpu_.json() +
                          ",\n  \"settings\": " + settings_.json() +
                          ",\n  \"checks\": [";
        for (size_t i = 0; i < checks_.size(); ++i) {
            out += (i ? ",\n    " : "\n    ") + checks_[i].json();
        }
        out += "\n  ],\n  \"rows\": [";
        for (size_t i = 0; i < rows_.size(); ++i) {
            out += (i ? ",\n    " : "\n    ") + rows_[i].json();
        }
        out += "\n  ]\n}\n";
        // FILE.tmp then a rename: a crash never leaves half a file where a
        // tool expects a whole one.
        const std::string tmp = args.json + ".tmp";
        FILE* f = std::fopen(tmp.c_str(), "wb");
        const bool ok =
            f != nullptr &&
            std::fwrite(out.data(), 1, out.size(), f) == out.size() &&
            std::fclose(f) == 0 &&
            std::rename(tmp.c_str(), args.json.c_str()) == 0;
        if (!ok) {
            std::fprintf(stderr, "%s: cannot write %s: %s\n", spec.name,
                         args.json.c_str(), std::strerror(errno));
            std::remove(tmp.c_str());
            return kExitFailed;
        }
    }
    if (failures_ != 0) {
        std::fprintf(stderr, "%s: %d check(s) failed\n", spec.name, failures_);
        return kExitFailed;
    }
    std::printf("\nall %s checks passed\n", spec.name);
    return kExitOk;
}

// ---------------------------------------------------------------------
// Timing a row
// ---------------------------------------------------------------------

// Times `work(stream)` in each of `modes`, records a row per mode (`base`
// with the timing and the GB/s that `bytes` per call make), and returns
// the results in the order of `modes`.
template <typename Work, typename Modes = decltype(kAllModes)>
std::vector<TimingResult> timeRow(Lesson& l, const Row& base, double bytes,
                                  Work&& work, const Modes& modes = kAllModes) {
    std::vector<TimingResult> out;
    for (TimingMode mode : modes) {
        out.push_back(timeKernel(work, mode, l.timing, l.stream));
        Row row = base;
        l.row(
            row.timing(out.back()).num("gbps", gbps(bytes, out.back().median)));
    }
    return out;
}

// ---------------------------------------------------------------------
// Profile mode and timelines, host side
// ---------------------------------------------------------------------

// Marks where one profiled row begins: `tools/course evidence record`
// runs the lesson under ncu with --profile (and ncu's
// --profile-from-start off, so only what runs between cudaProfilerStart
// and cudaProfilerStop is profiled) and splits the kernels it saw at these
// launches. Launch assumption: <<<1, 1>>>.
static __global__ void courseProfileMarker() {}

// In --profile mode: one marker, then the row's work once.
template <typename LaunchFn>
void profileRow(Lesson& l, const std::string& name, LaunchFn&& launch) {
    CUDA_CHECK(cudaStreamSynchronize(l.stream));
    CUDA_CHECK(cudaProfilerStart());
    courseProfileMarker<<<1, 1, 0, l.stream>>>();
    CUDA_CHECK(cudaGetLastError());
    launch(l.stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(l.stream));
    CUDA_CHECK(cudaProfilerStop());
    l.row(Row().str("group", "profile").str("profiled", name));
}

#ifdef COURSE_TIMELINE
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
#endif

}  // namespace course
