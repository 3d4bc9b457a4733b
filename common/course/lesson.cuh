// SPDX-License-Identifier: MIT
//
// course/lesson.cuh: a lesson's plan and the run of it. A lesson's main
// reads straight down:
//
//   course::Lesson l(argc, argv, {.text = "...", .unit = "elements"});
//   for (size_t n : l.sizes(kSizes)) l.add(experimentAt(n));   // data
//   return l.run([&] { /* allocate, fill: after the GPU gate */ });
//
// The plan is data (course/experiment.cuh), so the header applies --size,
// --quick, --profile and --only to it the same way for every day, and
// --list prints it without a GPU: run() lists before it asks for one, and
// a listing calls no row's work. Everything the rows' work needs on the
// GPU is made by the setup that run() calls after the capability gate.

#pragma once

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/cli.cuh"
#include "course/experiment.cuh"
#include "course/gpu.cuh"
#include "course/json.cuh"
#include "course/report.cuh"
#include "course/timeline.cuh"
#include "course/timing.cuh"

namespace course {

// A lesson's sizes (or the values of another axis) for each kind of run:
// what --size, --quick and --profile do to them is the header's, the same
// for every day.
struct Sizes {
    std::vector<size_t> run;           // the full run
    std::vector<size_t> quick;         // the small run CTest makes
    std::vector<size_t> profile = {};  // --profile (none: the run's)
};

class Lesson {
public:
    // Reads the command line (exits 64 on a bad one); asks nothing of a GPU.
    Lesson(int argc, char** argv, About about)
        : about_(std::move(about)),
          args_(parseArgs(about_, argc, argv)),
          report_(about_.name) {}

    const Args& args() const { return args_; }
    const About& about() const { return about_; }
    // The sizes of `s` this run takes: --size N alone, or --quick's, or
    // --profile's, or the full run's.
    std::vector<size_t> sizes(const Sizes& s) const {
        return args_.size ? std::vector<size_t>{args_.size} : pick(s);
    }
    // The same choice for a lesson's other axis (a chain's length), which
    // --size leaves as it is.
    std::vector<size_t> pick(const Sizes& s) const {
        return args_.quick                           ? s.quick
               : args_.profile && !s.profile.empty() ? s.profile
                                                     : s.run;
    }
    // The timing options, for a lesson to change before run(); --samples
    // and --quick apply on top.
    TimingOptions& timing() { return timing_; }

    // The plan, in the order it runs. The timeline build records the
    // experiments' timelines alone (course/experiment.cuh's TimelineOf).
    // A step's size, where it has one, is its rows' first field.
    void add(Experiment e) {
        e.fields = sizeField(e.size).merge(e.fields);
        steps_.emplace_back(std::move(e));
    }
    void add(Probe p) {
        p.fields = sizeField(p.size).merge(p.fields);
        steps_.emplace_back(std::move(p));
    }

    // --help and --list from the plan; otherwise the capability gate, then
    // `setup` (the GPU state the rows' work uses), then every step, then
    // `teardown` (what the setup made that does not free itself, such as a
    // library's handle, destroyed while the stream it was given still
    // exists; it runs only where the setup did), then the report. Returns
    // the exit code.
    int run(const std::function<void()>& setup = nullptr,
            const std::function<void()>& teardown = nullptr);

    // Once run() has passed the gate: for the setup and the rows' work.
    cudaStream_t stream() const { return stream_; }
    const cudaDeviceProp& gpu() const { return prop_; }
    // The largest size of any step this build runs that this GPU holds
    // (the setup's buffers are made for it).
    size_t largest() const { return largest_; }
    // Settings the lesson records (in the report; printed): ones known
    // before the GPU is; the GPU's own are About::gpuSettings.
    void setting(const Row& r) { report_.setting(r); }

private:
    using Step = std::variant<Experiment, Probe>;
    Row sizeField(size_t size) const {
        return size ? Row().integer(about_.sizeField,
                                    static_cast<long long>(size))
                    : Row();
    }
    static size_t sizeOf(const Step& s) {
        return std::visit([](const auto& x) { return x.size; }, s);
    }
    static std::string nameOf(const Step& s) {
        return std::visit([](const auto& x) { return x.group; }, s);
    }
    // Which steps this build runs: the timeline build the experiments that
    // have a timeline, every other build everything.
    static bool inThisBuild(const Step& s) {
        const auto* e = std::get_if<Experiment>(&s);
        return !kTimelineBuild || (e != nullptr && !e->timeline.rows.empty());
    }
    std::vector<std::string> names() const;
    void keepOnly(const std::string& name);
    void applyOptions();
    int list();
    void gate();
    void runSteps();

    About about_;
    Args args_;
    Report report_;
    TimingOptions timing_;
    std::vector<Step> steps_;
    cudaDeviceProp prop_ = {};
    cudaStream_t stream_ = nullptr;
    size_t largest_ = 0;
    Row gpu_;
};

// Every name --only takes, in plan order: the groups, then each row's and
// probe's own.
inline std::vector<std::string> Lesson::names() const {
    std::vector<std::string> out;
    auto add = [&](const std::string& n) {
        if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) {
            out.push_back(n);
        }
    };
    for (const Step& s : steps_) {
        add(nameOf(s));
    }
    for (const Step& s : steps_) {
        if (const auto* e = std::get_if<Experiment>(&s)) {
            for (const Case& c : e->cases) {
                add(c.name);
            }
        } else if (const auto* p = std::get_if<Probe>(&s)) {
            add(p->label);
        }
    }
    return out;
}

// --only NAME: a group whole, or one row (or probe) wherever it is.
inline void Lesson::keepOnly(const std::string& name) {
    std::vector<Step> kept;
    for (Step& s : steps_) {
        if (nameOf(s) == name) {
            kept.push_back(std::move(s));
        } else if (auto* e = std::get_if<Experiment>(&s)) {
            std::erase_if(e->cases,
                          [&](const Case& c) { return c.name != name; });
            if (!e->cases.empty()) {
                kept.push_back(std::move(s));
            }
        } else if (auto* p = std::get_if<Probe>(&s); p && p->label == name) {
            kept.push_back(std::move(s));
        }
    }
    steps_ = std::move(kept);
}

inline void Lesson::applyOptions() {
    if (args_.samples > 0) {  // a fixed count, one look
        timing_.samples = args_.samples;
        timing_.looks = {args_.samples};
    } else if (args_.quick) {  // it checks, it does not measure
        timing_.samples = 2;
        timing_.looks = {2};
        timing_.batch = 2;
        timing_.warmup = 1;
    }
    // Any seed below 2^53 will do; a drawn one differs from run to run, so
    // that no order is favoured across runs, and is kept like a given one.
    std::random_device dev;
    timing_.seed =
        args_.seed ? args_.seed
                   : ((static_cast<unsigned long long>(dev()) << 21) ^ dev()) %
                             ((1ull << 53) - 1) +
                         1;
}

// --list: the plan's checks, rows and decisions as a run would record them
// (course/experiment.cuh's detail::list), printed and, with --json, written.
inline int Lesson::list() {
    Row gpu = Row().str("name", "listed: no GPU asked");
    Row settings = timingSettings(timing_);
    for (const GpuSetting& s : about_.gpuSettings) {
        settings.str(s.name, "known when run");
    }
    report_.setting(settings);
    for (const Step& s : steps_) {
        if (!inThisBuild(s)) {
            continue;
        }
        if (const auto* e = std::get_if<Experiment>(&s)) {
            if (kTimelineBuild) {
                detail::listTimeline(report_, *e);
            } else {
                detail::list(report_, *e, args_);
            }
        } else if (!args_.profile) {
            detail::list(report_, std::get<Probe>(s));
        }
    }
    std::printf("%s: %zu checks, %zu rows; nothing ran\n", about_.name,
                report_.checks(), report_.rows());
    return args_.json.empty() || report_.write(args_.json, gpu, true)
               ? kExitOk
               : kExitFailed;
}

// The capability gate, the fit of each planned size, the stream.
inline void Lesson::gate() {
    prop_ = requireGpu(about_);
    size_t freeBytes = 0, totalBytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    // Nine tenths of what is free: the runtime, a library's temporary
    // storage and the cold flush's two buffers need the rest.
    const double usable = 0.9 * static_cast<double>(freeBytes);
    const auto fits = [&](size_t n) {
        return static_cast<double>(n) * about_.bytesEach <= usable;
    };
    if (args_.size != 0 && !fits(args_.size)) {
        usage(about_, "--size " + std::to_string(args_.size) +
                          " does not fit in the " +
                          std::to_string(freeBytes >> 20) + " MiB free on " +
                          prop_.name);
    }
    std::erase_if(steps_, [&](const Step& s) {
        if (!fits(sizeOf(s))) {
            std::printf("%s: left out, %zu %s do not fit on this GPU\n",
                        nameOf(s).c_str(), sizeOf(s), about_.unit);
            return true;
        }
        return false;
    });
    for (const Step& s : steps_) {
        if (inThisBuild(s)) {
            largest_ = std::max(largest_, sizeOf(s));
        }
    }
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    gpu_ = gpuRow(prop_, totalBytes);
    std::printf("%s on %s (compute capability %d.%d, %d SMs, %d MiB L2)\n",
                about_.name, prop_.name, prop_.major, prop_.minor,
                prop_.multiProcessorCount, prop_.l2CacheSize >> 20);
}

inline void Lesson::runSteps() {
    // The timeline build's stamps: room for the largest grid the course
    // stamps (day 58's four steps of 32,768 blocks) and more.
    std::unique_ptr<timeline::Recorder> rec(
        kTimelineBuild ? new timeline::Recorder(1u << 18) : nullptr);
    std::unique_ptr<L2Flusher> flusher(kTimelineBuild ? new L2Flusher(stream_)
                                                      : nullptr);
    for (Step& s : steps_) {
        if (!inThisBuild(s)) {
            continue;
        }
        if (auto* e = std::get_if<Experiment>(&s)) {
            std::erase_if(e->cases, [&](Case& c) {
                const std::string why = c.here ? c.here(c) : "";
                if (!why.empty()) {
                    std::printf("%s %s: not run on this GPU: %s\n",
                                e->label.c_str(), c.name.c_str(), why.c_str());
                }
                return !why.empty();
            });
            for (Case& c : e->cases) {
                if (c.replay) {
                    c.work = replayed(stream_, c.work);
                    c.replay = false;
                }
            }
            if (kTimelineBuild) {
                detail::runTimeline(report_, *e, *rec, *flusher, stream_);
            } else {
                detail::run(report_, *e, args_, timing_, stream_);
            }
        } else if (!args_.profile) {
            detail::run(report_, std::get<Probe>(s), stream_);
        }
    }
}

inline int Lesson::run(const std::function<void()>& setup,
                       const std::function<void()>& teardown) {
    const std::vector<std::string> known = names();
    if (args_.help) {
        printHelp(about_, known);
        return kExitOk;
    }
    if (!args_.only.empty()) {
        if (std::find(known.begin(), known.end(), args_.only) == known.end()) {
            std::string all;
            for (const std::string& v : known) {
                all += (all.empty() ? "" : ", ") + v;
            }
            usage(about_, "--only does not know '" + args_.only +
                              "'; expected one of: " + all);
        }
        keepOnly(args_.only);
    }
    applyOptions();
    if (args_.list) {
        return list();
    }
    gate();
    if (setup) {
        setup();
    }
    if (!about_.gpuSettings.empty()) {
        Row found;
        for (const GpuSetting& s : about_.gpuSettings) {
            found.integer(s.name, s.value());
        }
        report_.setting(found);
    }
    runSteps();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (teardown) {
        teardown();
    }
    CUDA_CHECK(cudaStreamDestroy(stream_));
    report_.setting(timingSettings(timing_));
    if (!args_.json.empty() && !report_.write(args_.json, gpu_, false)) {
        return kExitFailed;
    }
    if (report_.failures() != 0) {
        std::fprintf(stderr, "%s: %d check(s) failed%s\n", about_.name,
                     report_.failures(),
                     report_.rows() == 0 ? "; nothing was timed" : "");
        return kExitFailed;
    }
    std::printf("\nall %s checks passed\n", about_.name);
    return kExitOk;
}

}  // namespace course
