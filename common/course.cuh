// SPDX-License-Identifier: MIT
//
// course.cuh: the one header every day of the course includes.
//
// It holds what every lesson needs and no lesson may carry a copy of:
//
//   CUDA_CHECK(call)     check a runtime call, name what failed, exit 1.
//   course::requireGpu   the capability gate: a plain sentence and the
//                        waived exit code when this machine cannot run
//                        the lesson, before anything is allocated.
//   course::timeKernel   CUDA-event timing with a warm-up, in two named
//                        modes (batch and cold), returning the median and
//                        the spread rather than a bare mean.
//   course::Args         the command line every day shares: --size N,
//                        --json FILE, --samples N, --only NAME.
//   course::Report       the rows a lesson prints, written as JSON so no
//                        tool ever scrapes the human table.
//
// Exit codes, the same for every day (cuda-samples uses 2 for "waived"
// too, which is why it is 2 here):
//   0  every check passed
//   1  a wrong result, or a CUDA call failed
//   2  waived: no GPU, or one too old for this lesson
//   64 the command line was wrong (sysexits.h's EX_USAGE)
//
// When to use which timing mode:
//   batch  launches back to back between two events; the per-launch mean
//          of one batch is one sample. This is what a kernel costs inside
//          a pipeline where its input was just written and may still sit
//          in L2, and launch gaps are hidden behind the previous kernel.
//   cold   a write over a buffer twice the L2's size, then a read of
//          another (see L2Flusher), before each sample; then one launch
//          between two events. This is what the kernel
//          costs when its input comes from DRAM, as it does the first
//          time a large input is touched. nvbench calls the same
//          distinction "cold" and "batch" measurements.
//   Report both whenever the input is within a few times the L2's size:
//   that is where they disagree.

#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

// One statement (the do/while survives a braceless `if`), and `err_`
// carries a trailing underscore so it cannot shadow a name at the call
// site. It names the file, line, the expression as written, the error's
// enum name and its message.
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
// The capability gate
// ---------------------------------------------------------------------

struct GpuRequirement {
    int major;                // minimum compute capability, major part
    int minor;                // minimum compute capability, minor part
    bool needsClusterLaunch;  // cudaDevAttrClusterLaunch must be 1
};

// Returns the properties of device 0, or exits with kExitWaived after one
// sentence that says what the lesson needs and what this machine has. It
// allocates nothing, so a waived run leaves nothing behind.
inline cudaDeviceProp requireGpu(const char* lesson, GpuRequirement need) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        std::fprintf(
            stderr,
            "%s: waived: it needs a CUDA GPU of compute capability "
            "%d.%d or newer, and this machine has none (%s).\n",
            lesson, need.major, need.minor,
            err != cudaSuccess ? cudaGetErrorString(err) : "no devices");
        std::exit(kExitWaived);
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major < need.major ||
        (prop.major == need.major && prop.minor < need.minor)) {
        std::fprintf(stderr,
                     "%s: waived: it needs compute capability %d.%d or "
                     "newer, and this machine's %s is %d.%d.\n",
                     lesson, need.major, need.minor, prop.name, prop.major,
                     prop.minor);
        std::exit(kExitWaived);
    }
    if (need.needsClusterLaunch) {
        int clusterLaunch = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&clusterLaunch,
                                          cudaDevAttrClusterLaunch, 0));
        if (clusterLaunch == 0) {
            std::fprintf(stderr,
                         "%s: waived: it needs thread block cluster launch, "
                         "and this machine's %s reports "
                         "cudaDevAttrClusterLaunch = 0 (a MIG slice or a "
                         "virtualized GPU can do that).\n",
                         lesson, prop.name);
            std::exit(kExitWaived);
        }
    }
    CUDA_CHECK(cudaSetDevice(0));
    return prop;
}

// ---------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------

enum class TimingMode { Batch, Cold };

inline const char* timingName(TimingMode mode) {
    return mode == TimingMode::Batch ? "batch" : "cold";
}

struct TimingOptions {
    // 31 samples: enough that the median is stable to a few percent on a
    // quiet GPU, and odd, so the median is one measured sample.
    int samples = 31;
    // Launches per batch sample. 20 launches of a 20 us kernel are 400 us
    // between two events, far above the events' ~1 us resolution.
    int batch = 20;
    // Warm-up launches before the first sample. The first launch of each
    // kernel pays its own module load (lazy loading is the default since
    // CUDA 12.2 on Linux), and the next few settle the clocks.
    int warmup = 3;
};

struct TimingResult {
    const char* mode = "batch";
    int samples = 0;
    double median_ms = 0.0;
    double min_ms = 0.0;
    double max_ms = 0.0;
    double mean_ms = 0.0;
    // Half the distance between the 25th and 75th percentiles, relative
    // to the median: the table's "spread" column.
    double iqr_half_rel = 0.0;
};

inline TimingResult summarize(std::vector<double> ms, TimingMode mode) {
    TimingResult r;
    r.mode = timingName(mode);
    r.samples = static_cast<int>(ms.size());
    if (ms.empty()) {
        return r;
    }
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    r.median_ms = (n % 2 == 1) ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    r.min_ms = ms.front();
    r.max_ms = ms.back();
    double total = 0.0;
    for (double v : ms) {
        total += v;
    }
    r.mean_ms = total / static_cast<double>(n);
    const double q1 = ms[n / 4];
    const double q3 = ms[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1];
    r.iqr_half_rel = r.median_ms > 0.0 ? 0.5 * (q3 - q1) / r.median_ms : 0.0;
    return r;
}

// Reads `words` 16-byte words and keeps the result observable, so the
// compiler cannot drop the loads. Used by the cold flush below.
static __global__ void courseReadFlush(const int4* __restrict__ buf,
                                       size_t words, int* __restrict__ sink) {
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
}

// Empties the L2 of anything the timed work could reuse. First a write
// over a buffer twice the L2's size (what nvbench does), then a read of a
// second buffer of the same size. The read matters: after the write alone
// the L2 is full of dirty lines, and the timed kernel would pay for
// writing them back to DRAM as it evicts them, a cost that belongs to the
// flush, not to the kernel (on the H200 that is up to 60 MiB of writes
// inside the measurement). After the read, the L2 holds clean lines only.
struct L2Flusher {
    void* written = nullptr;
    void* read = nullptr;
    int* sink = nullptr;
    size_t bytes = 0;
    L2Flusher() {
        int device = 0;
        int l2 = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        bytes = 2 * static_cast<size_t>(l2 > 0 ? l2 : (64 << 20));
        CUDA_CHECK(cudaMalloc(&written, bytes));
        CUDA_CHECK(cudaMalloc(&read, bytes));
        CUDA_CHECK(cudaMalloc(&sink, sizeof(int)));
        CUDA_CHECK(cudaMemset(read, 1, bytes));
    }
    ~L2Flusher() {
        cudaFree(written);
        cudaFree(read);
        cudaFree(sink);
    }
    L2Flusher(const L2Flusher&) = delete;
    L2Flusher& operator=(const L2Flusher&) = delete;
    void flush(cudaStream_t stream) {
        CUDA_CHECK(cudaMemsetAsync(written, 0, bytes, stream));
        courseReadFlush<<<1024, 256, 0, stream>>>(
            static_cast<const int4*>(read), bytes / sizeof(int4), sink);
        CUDA_CHECK(cudaGetLastError());
    }
};

// Times `launch` (a callable that enqueues the work on `stream`). The
// callable must leave its result valid after any number of calls; the
// caller checks correctness before timing and not during it.
template <typename LaunchFn>
TimingResult timeKernel(LaunchFn&& launch, TimingMode mode,
                        TimingOptions opt = {}, cudaStream_t stream = 0) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    // Warm up this kernel, not just the first kernel in the program.
    for (int i = 0; i < opt.warmup; ++i) {
        launch();
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));

    std::vector<double> samples;
    samples.reserve(static_cast<size_t>(opt.samples));
    if (mode == TimingMode::Batch) {
        for (int s = 0; s < opt.samples; ++s) {
            CUDA_CHECK(cudaEventRecord(start, stream));
            for (int i = 0; i < opt.batch; ++i) {
                launch();
            }
            CUDA_CHECK(cudaEventRecord(stop, stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            samples.push_back(static_cast<double>(ms) / opt.batch);
        }
    } else {
        L2Flusher flusher;
        for (int s = 0; s < opt.samples; ++s) {
            flusher.flush(stream);
            CUDA_CHECK(cudaEventRecord(start, stream));
            launch();
            CUDA_CHECK(cudaEventRecord(stop, stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            samples.push_back(static_cast<double>(ms));
        }
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return summarize(std::move(samples), mode);
}

// Bytes over milliseconds, in GB/s (10^9 bytes per second).
inline double gbps(double bytes, double ms) {
    return ms > 0.0 ? bytes / (ms * 1.0e-3) / 1.0e9 : 0.0;
}

// ---------------------------------------------------------------------
// The command line every day shares
// ---------------------------------------------------------------------

struct Args {
    const char* lesson = "";
    size_t size = 0;     // 0: the lesson's own default
    std::string json;    // empty: no JSON file
    std::string only;    // empty: every mode
    int samples = 0;     // 0: TimingOptions' default
    bool quick = false;  // --quick: the small run CTest uses

    [[noreturn]] void usage(const char* problem, const char* extra) const {
        std::fprintf(stderr,
                     "%s: %s\nusage: %s [--size N] [--json FILE] "
                     "[--samples N] [--only NAME] [--quick]\n%s",
                     lesson, problem, lesson, extra ? extra : "");
        std::exit(kExitUsage);
    }

    static size_t parseCount(const Args& a, const char* flag, const char* v) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long x = std::strtoull(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0' || x == 0 || v[0] == '-') {
            std::string msg = std::string(flag) +
                              " expects a positive whole number, got '" + v +
                              "'";
            a.usage(msg.c_str(), nullptr);
        }
        return static_cast<size_t>(x);
    }

    // Parses argv; `extra` is appended to the usage text (the lesson's
    // mode names, for --only).
    static Args parse(const char* lesson, int argc, char** argv,
                      const char* extra = nullptr) {
        Args a;
        a.lesson = lesson;
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> const char* {
                if (i + 1 >= argc) {
                    a.usage((arg + " expects a value").c_str(), extra);
                }
                return argv[++i];
            };
            if (arg == "--size") {
                a.size = parseCount(a, "--size", value());
            } else if (arg == "--json") {
                a.json = value();
            } else if (arg == "--only") {
                a.only = value();
            } else if (arg == "--samples") {
                a.samples =
                    static_cast<int>(parseCount(a, "--samples", value()));
            } else if (arg == "--quick") {
                a.quick = true;
            } else if (arg == "--help" || arg == "-h") {
                std::printf(
                    "usage: %s [--size N] [--json FILE] [--samples N] "
                    "[--only NAME] [--quick]\n%s",
                    lesson, extra ? extra : "");
                std::exit(kExitOk);
            } else {
                a.usage(("unknown argument '" + arg + "'").c_str(), extra);
            }
        }
        return a;
    }

    bool wants(const char* name) const { return only.empty() || only == name; }

    TimingOptions timing() const {
        TimingOptions t;
        if (samples > 0) {
            t.samples = samples;
        } else if (quick) {
            // CTest's and the sanitizers' run: it checks, it does not
            // measure, so every timing loop runs as few launches as it can.
            t.samples = 2;
            t.batch = 2;
            t.warmup = 1;
        }
        return t;
    }
};

// ---------------------------------------------------------------------
// Results as JSON
// ---------------------------------------------------------------------

// One table row: ordered keys with number or string values, written in
// the order they were added so the JSON reads like the printed table.
class Row {
public:
    Row& num(const char* key, double v) {
        char buf[64];
        if (std::isfinite(v)) {
            std::snprintf(buf, sizeof buf, "%.9g", v);
        } else {
            std::snprintf(buf, sizeof buf, "null");
        }
        fields_.emplace_back(key, buf);
        return *this;
    }
    Row& integer(const char* key, long long v) {
        fields_.emplace_back(key, std::to_string(v));
        return *this;
    }
    Row& str(const char* key, const std::string& v) {
        fields_.emplace_back(key, quote(v));
        return *this;
    }
    Row& boolean(const char* key, bool v) {
        fields_.emplace_back(key, v ? "true" : "false");
        return *this;
    }
    Row& timing(const TimingResult& t) {
        str("timing", t.mode);
        integer("samples", t.samples);
        num("median_ms", t.median_ms);
        num("min_ms", t.min_ms);
        num("max_ms", t.max_ms);
        num("mean_ms", t.mean_ms);
        num("spread", t.iqr_half_rel);
        return *this;
    }
    std::string json() const {
        std::string out = "{";
        for (size_t i = 0; i < fields_.size(); ++i) {
            out += (i ? ", " : "") + quote(fields_[i].first) + ": " +
                   fields_[i].second;
        }
        return out + "}";
    }
    static std::string quote(const std::string& s) {
        std::string out = "\"";
        for (char c : s) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
        return out + "\"";
    }

private:
    std::vector<std::pair<std::string, std::string>> fields_;
};

// What a lesson writes with --json: the GPU it ran on, its checks, its
// rows. Written to FILE.tmp and renamed, so a crash never leaves a half
// file where a tool expects a whole one.
class Report {
public:
    explicit Report(const char* lesson) : lesson_(lesson) {}

    void gpu(const cudaDeviceProp& p) {
        gpu_.str("name", p.name)
            .str("compute_capability",
                 std::to_string(p.major) + "." + std::to_string(p.minor))
            .integer("sm_count", p.multiProcessorCount)
            .integer("l2_bytes", p.l2CacheSize);
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        gpu_.integer("driver_api", driver).integer("runtime", runtime);
    }
    void setting(Row r) { settings_ = std::move(r); }
    void check(const std::string& name, bool ok, const std::string& detail) {
        checks_.push_back(
            Row().str("check", name).boolean("ok", ok).str("detail", detail));
        if (!ok) {
            ++failures_;
        }
    }
    void row(Row r) { rows_.push_back(std::move(r)); }
    int failures() const { return failures_; }

    // Returns false (after saying why) when the file cannot be written.
    bool write(const std::string& path) const {
        if (path.empty()) {
            return true;
        }
        std::string out = "{\n  \"lesson\": " + Row::quote(lesson_) +
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
        const std::string tmp = path + ".tmp";
        FILE* f = std::fopen(tmp.c_str(), "wb");
        if (f == nullptr) {
            std::fprintf(stderr, "%s: cannot write %s: %s\n", lesson_.c_str(),
                         tmp.c_str(), std::strerror(errno));
            return false;
        }
        const bool wrote =
            std::fwrite(out.data(), 1, out.size(), f) == out.size();
        const bool closed = std::fclose(f) == 0;
        if (!wrote || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
            std::fprintf(stderr, "%s: cannot write %s\n", lesson_.c_str(),
                         path.c_str());
            std::remove(tmp.c_str());
            return false;
        }
        return true;
    }

private:
    std::string lesson_;
    Row gpu_;
    Row settings_;
    std::vector<Row> checks_;
    std::vector<Row> rows_;
    int failures_ = 0;
};

}  // namespace course
