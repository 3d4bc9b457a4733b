// SPDX-License-Identifier: MIT
//
// course/lesson.cuh: a lesson's opening (course::begin), its checked
// results, its rows and decisions, its JSON report and its exit code.

#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <unistd.h>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/cli.cuh"
#include "course/gpu.cuh"
#include "course/json.cuh"
#include "course/timing.cuh"

namespace course {

// What begin() hands a lesson: its command line, the GPU, a created stream
// (graph timing needs one), the timing options, and the report it fills.
class Lesson {
public:
    const LessonSpec& spec() const { return spec_; }
    const Args& args() const { return args_; }
    const cudaDeviceProp& gpu() const { return prop_; }
    cudaStream_t stream() const { return stream_; }
    TimingOptions& timing() { return timing_; }

    bool wants(const std::string& variant) const {
        return args_.only.empty() || args_.only == variant;
    }
    // The entries of a variant table (course/variants.cuh) that --only
    // selects and `keep` keeps, in table order.
    template <typename Table, typename Keep>
    auto chosen(const Table& table, Keep&& keep) const {
        std::vector<std::decay_t<decltype(*std::begin(table))> const*> out;
        for (const auto& entry : table) {
            if (wants(entry.name) && keep(entry)) {
                out.push_back(&entry);
            }
        }
        return out;
    }
    template <typename Table>
    auto chosen(const Table& table) const {
        return chosen(table, [](const auto&) { return true; });
    }
    // Whether n elements' buffers fit in the GPU's free memory.
    bool fits(size_t n) const { return n <= largest_; }

    // Records one checked result; a failure is also said on stderr.
    bool check(const std::string& name, bool ok, const std::string& detail);
    void row(Row r) { rows_.push_back(std::move(r)); }
    // What the comparison rule decided for a pair of rows timed together.
    void decision(Row r) { decisions_.push_back(std::move(r)); }
    // The lesson's own settings, also printed; finish() adds the timing
    // options.
    void setting(Row r) {
        settings_ = std::move(r);
        std::printf("settings: %s\n", settings_.json().c_str());
    }
    int failures() const { return failures_; }
    // Writes --json (atomically), says whether every check passed, and
    // returns the exit code.
    int finish();

private:
    friend Lesson begin(int argc, char** argv, const LessonSpec& spec);
    LessonSpec spec_;
    Args args_;
    cudaDeviceProp prop_ = {};
    cudaStream_t stream_ = nullptr;
    TimingOptions timing_;
    size_t largest_ = 0;
    int failures_ = 0;
    std::vector<Row> checks_, rows_, decisions_;
    Row gpu_, settings_;
};

// The opening every lesson shares. Exits 64 on a bad command line, 2 when
// this machine cannot run the lesson, before anything is allocated.
inline Lesson begin(int argc, char** argv, const LessonSpec& spec) {
    Lesson l;
    l.spec_ = spec;
    l.args_ = parseArgs(spec, argc, argv);
    describingFlag() = l.args_.describe;
    l.prop_ = describing() ? describedGpu() : requireGpu(spec);

    size_t freeBytes = l.prop_.totalGlobalMem, totalBytes = freeBytes;
    CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    // Nine tenths of what is free: the runtime, CUB's temporary storage
    // and the cold flush's two buffers need the rest.
    const double usable = 0.9 * static_cast<double>(freeBytes);
    l.largest_ = spec.bytesPerElement > 0.0
                     ? static_cast<size_t>(usable / spec.bytesPerElement)
                     : SIZE_MAX;
    const size_t size = l.args_.size;
    if (size != 0 && !l.fits(size)) {
        usage(spec, "--size " + std::to_string(size) + " needs " +
                        std::to_string(static_cast<double>(size) *
                                       spec.bytesPerElement / 1073741824.0) +
                        " GiB of GPU memory and " + l.prop_.name + " has " +
                        std::to_string(freeBytes / 1073741824.0) +
                        " GiB free; the largest size that fits is " +
                        std::to_string(l.largest_));
    }
    CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream_, cudaStreamNonBlocking));
    if (l.args_.samples > 0) {
        // A fixed count, one look: what --samples asks for.
        l.timing_.samples = l.args_.samples;
        l.timing_.looks = {l.args_.samples};
    } else if (l.args_.quick) {
        // It checks, it does not measure: as few launches as possible.
        l.timing_.samples = 2;
        l.timing_.looks = {2};
        l.timing_.batch = 2;
        l.timing_.warmup = 1;
    }
    l.gpu_ = gpuRow(l.prop_, totalBytes);
    if (describing()) {
        std::printf(
            "%s, described: the checks, rows and settings a run on "
            "an H200 would make; nothing runs, nothing is timed\n",
            spec.name);
        return l;
    }
    std::printf("%s on %s (compute capability %d.%d, %d SMs, %d MiB L2)\n",
                spec.name, l.prop_.name, l.prop_.major, l.prop_.minor,
                l.prop_.multiProcessorCount, l.prop_.l2CacheSize >> 20);
    return l;
}

inline bool Lesson::check(const std::string& name, bool ok,
                          const std::string& detail) {
    if (describing()) {
        // Nothing ran, so there is nothing to judge: the check is listed
        // and passes, so the lesson goes on to the rows it guards.
        checks_.push_back(Row()
                              .str("check", name)
                              .boolean("ok", true)
                              .str("detail", "described: not run"));
        return true;
    }
    checks_.push_back(
        Row().str("check", name).boolean("ok", ok).str("detail", detail));
    if (!ok) {
        ++failures_;
        std::fprintf(stderr, "%s: WRONG: %s: %s\n", spec_.name, name.c_str(),
                     detail.c_str());
    }
    return ok;
}

inline std::string jsonArray(const std::vector<Row>& rows) {
    std::string out = "[";
    for (size_t i = 0; i < rows.size(); ++i) {
        out += (i ? ",\n    " : "\n    ") + rows[i].json();
    }
    return out + "\n  ]";
}

inline int Lesson::finish() {
    if (stream_ != nullptr) {
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        CUDA_CHECK(cudaStreamDestroy(stream_));
        stream_ = nullptr;
    }
    if (!args_.json.empty()) {
        const std::string out =
            "{\n  \"lesson\": " + jsonQuote(spec_.name) +
            (describing() ? ",\n  \"described\": true" : "") +
            ",\n  \"gpu\": " + gpu_.json() + ",\n  \"settings\": " +
            Row(settings_).merge(timingSettings(timing_)).json() +
            ",\n  \"checks\": " + jsonArray(checks_) +
            ",\n  \"rows\": " + jsonArray(rows_) +
            ",\n  \"decisions\": " + jsonArray(decisions_) + "\n}\n";
        // A new file of our own beside FILE, then a rename: a crash never
        // leaves half a file where a tool expects a whole one, and no file
        // of anyone else's is touched on the way.
        std::string tmp;
        const int fd = openNew(args_.json + ".tmp", tmp);
        bool ok = fd >= 0;
        if (ok) {
            size_t done = 0;
            while (ok && done < out.size()) {
                const ssize_t w =
                    ::write(fd, out.data() + done, out.size() - done);
                ok = w > 0;
                done += ok ? static_cast<size_t>(w) : 0;
            }
            ok = (::close(fd) == 0) && ok &&
                 std::rename(tmp.c_str(), args_.json.c_str()) == 0;
        }
        if (!ok) {
            std::fprintf(stderr, "%s: cannot write %s: %s\n", spec_.name,
                         args_.json.c_str(), std::strerror(errno));
            if (fd >= 0) {
                std::remove(tmp.c_str());  // ours: made by openNew
            }
            return kExitFailed;
        }
    }
    if (failures_ != 0) {
        std::fprintf(stderr, "%s: %d check(s) failed%s\n", spec_.name,
                     failures_, rows_.empty() ? "; nothing was timed" : "");
        return kExitFailed;
    }
    if (describing()) {
        std::printf("\n%s described: %zu checks, %zu rows; nothing ran\n",
                    spec_.name, checks_.size(), rows_.size());
        return kExitOk;
    }
    std::printf("\nall %s checks passed\n", spec_.name);
    return kExitOk;
}

}  // namespace course
