// SPDX-License-Identifier: MIT
//
// course/lesson.cuh: a lesson's opening (course::begin), its checked
// results, its rows, its JSON report and its exit code.

#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/cli.cuh"
#include "course/gpu.cuh"
#include "course/json.cuh"
#include "course/sampling.cuh"
#include "course/timing.cuh"

namespace course {

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

}  // namespace course
