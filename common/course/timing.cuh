// SPDX-License-Identifier: MIT
//
// course/timing.cuh: timing modes, their options and results, and the
// summary of a row's samples.
//
// Timing modes, and when each is the right question:
//   cold   the L2 emptied before each sample (L2Flusher), then one launch
//          between two events: what the work costs when its input comes
//          from DRAM. nvbench names the same measurement "cold".
//   batch  `batch` launches back to back between two events, the mean per
//          launch one sample: what the work costs in a pipeline, where
//          launch gaps hide behind the previous launch, and where the host's
//          own launch work is part of the price (so it carries over only to
//          the same host).
//   graph  the same `batch` launches captured once into a CUDA graph and
//          replayed: device time without the host's per-launch work. Where
//          batch is slower than graph, the host was the bottleneck.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "course/detail/decide.cuh"
#include "course/json.cuh"

namespace course {

enum class TimingMode { Cold, Batch, Graph };

inline const char* timingName(TimingMode mode) {
    return mode == TimingMode::Cold    ? "cold"
           : mode == TimingMode::Batch ? "batch"
                                       : "graph";
}

struct TimingOptions {
    // Samples of a row timed alone (no comparison decides when to stop):
    // enough for a stable median and quartiles on a quiet GPU, and odd, so
    // the median is one measured sample.
    int samples = 31;
    // Launches per batch or graph sample: 20 launches of a 20 us kernel
    // are 400 us between two events, far above the events' resolution
    // (about half a microsecond).
    int batch = 20;
    // Warm-up launches (and graph replays) before the first sample: the
    // first launch of a kernel pays its module load (lazy loading is the
    // default since CUDA 12.2), and the next few settle the clocks.
    int warmup = 3;
    // Rows that are compared are sampled together until the comparison
    // rule decides, looking at these counts (the rule's error rate is
    // measured for exactly these looks: tools/coursetools/evidence/
    // verdict.py). Empty: `samples` rounds, one look (--samples N).
    // Up to 1,024: 2,048 samples of day 24's 183 sweep sets, five rows
    // each, would make a record of about 17 MB.
    std::vector<int> looks = {16, 32, 64, 128, 256, 512, 1024};
    // A set of compared rows stops before a look that would take it past
    // this long: a row of 40 ms samples cannot take 1,024, and a pair whose
    // difference sits on the rule's margin never decides. Two seconds keeps
    // day 24's 189 sets, and so a day's whole record, within minutes.
    double setSeconds = 2.0;
    // The seed of the rows' order in every set (course/sets.cuh's
    // RoundOrder): drawn for each run unless --seed gives one, and kept
    // with the settings, so that a record's order can be made again. Below
    // 2^53, so that any JSON reader holds it exactly.
    unsigned long long seed = 1;
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

// A sample as the record keeps it: six significant digits (far below any
// timing's noise), and the value the comparison rule decides on is the one
// written, so the tools, reading the record, decide alike.
inline double asKept(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", ms);
    return std::strtod(buf, nullptr);
}

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

// A row's timing fields: the summary and every sample.
inline Row timingFields(const TimingResult& t) {
    return Row()
        .str("timing", t.mode)
        .integer("samples", static_cast<long long>(t.samplesMs.size()))
        .num("median_ms", t.median)
        .num("q1_ms", t.q1)
        .num("q3_ms", t.q3)
        .num("min_ms", t.min)
        .num("max_ms", t.max)
        .num("mean_ms", t.mean)
        .num("spread", t.spread())
        .nums("samples_ms", t.samplesMs);
}

// The options every set was timed with, for the record's settings.
inline Row timingSettings(const TimingOptions& o) {
    return Row()
        .integer("samples", o.samples)
        .integer("batch", o.batch)
        .integer("warmup", o.warmup)
        .integer("first_look", o.looks.empty() ? o.samples : o.looks.front())
        .integer("last_look", o.looks.empty() ? o.samples : o.looks.back())
        .num("set_seconds", o.setSeconds)
        .integer("order_seed", static_cast<long long>(o.seed))
        .num("rule_margin_pct",
             100.0 * std::expm1(detail::kRuleMargin / detail::kRuleScale))
        .num("rule_confidence_pct",
             100.0 * std::erf(detail::kRuleZ / std::sqrt(2.0)));
}

// Bytes over milliseconds, in GB/s (10^9 bytes per second).
inline double gbps(double bytes, double ms) {
    return ms > 0.0 ? bytes / (ms * 1.0e-3) / 1.0e9 : 0.0;
}

// The modes a lesson times a row in unless it says otherwise.
constexpr TimingMode kAllModes[] = {TimingMode::Cold, TimingMode::Batch,
                                    TimingMode::Graph};

}  // namespace course
