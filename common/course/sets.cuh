// SPDX-License-Identifier: MIT
//
// course/sets.cuh: rows that a page compares, timed together. A set is the
// rows of one comparison at one size in one timing mode; its samples are
// taken in rounds, one sample of every row a round, in an order that turns
// round every round (A B C, C B A, ...) so that drift and clock changes
// fall on every row alike. After each look (TimingOptions::looks) the
// comparison rule (course/detail/decide.cuh) decides each pair the set
// names; sampling stops once every pair is decided, or at the last look,
// or once the set has sampled TimingOptions::setSeconds. Every sample is
// kept, in order; the rule's words are kept as the set's decisions.

#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/detail/decide.cuh"
#include "course/detail/flush.cuh"
#include "course/detail/sampler.cuh"
#include "course/json.cuh"
#include "course/lesson.cuh"
#include "course/timing.cuh"

namespace course {

// One row of a set: its name (in the printed line and in the decisions),
// the fields that identify its JSON row, the bytes it moves per call (for
// GB/s; 0: none) and the work, enqueued on the stream it is given.
struct Contender {
    std::string name;
    Row fields;
    double bytes = 0.0;
    std::function<void(cudaStream_t)> work;
};

// A comparison the set decides: contender `a` against contender `b`.
struct Versus {
    std::string a, b;
};

struct SetResult {
    std::vector<TimingResult> times;  // in the order of the contenders
    std::vector<detail::Word> words;  // in the order of the comparisons
};

// Times `rows` together in `mode` (see above), records a JSON row for each
// (its fields, "set": the set's name, its timing and GB/s) and a decision
// for each of `wanted` whose two rows are in the set (--only may leave
// some out), and prints one line: the set, each row's median, each
// decision. A set that compares nothing takes TimingOptions::samples rounds.
inline SetResult timeSet(Lesson& l, const std::string& label, TimingMode mode,
                         const std::vector<Contender>& rows,
                         const std::vector<Versus>& wanted = {}) {
    const TimingOptions& opt = l.timing();
    const std::string set = label + " " + timingName(mode);
    auto index = [&](const std::string& name) {
        size_t i = 0;
        while (i < rows.size() && rows[i].name != name) {
            ++i;
        }
        return i;  // rows.size(): not in this set
    };
    std::vector<Versus> versus;
    for (const Versus& v : wanted) {
        if (index(v.a) < rows.size() && index(v.b) < rows.size()) {
            versus.push_back(v);
        }
    }
    std::vector<std::unique_ptr<detail::Sampler>> samplers;
    for (const Contender& c : rows) {
        samplers.emplace_back(
            new detail::Sampler(c.work, mode, opt, l.stream()));
    }
    std::unique_ptr<L2Flusher> flusher(
        mode == TimingMode::Cold ? new L2Flusher(l.stream()) : nullptr);
    const std::vector<int> looks = versus.empty() || opt.looks.empty()
                                       ? std::vector<int>{opt.samples}
                                       : opt.looks;
    std::vector<std::vector<double>> samples(rows.size());
    std::vector<detail::Word> words(versus.size(), detail::Word::Undecided);
    const auto t0 = std::chrono::steady_clock::now();
    int taken = 0;
    for (size_t look = 0; look < looks.size(); ++look) {
        for (; taken < looks[look]; ++taken) {
            for (size_t j = 0; j < rows.size(); ++j) {
                const size_t c = taken % 2 == 0 ? j : rows.size() - 1 - j;
                samples[c].push_back(samplers[c]->sample(flusher.get()));
            }
        }
        bool decided = true;
        for (size_t p = 0; p < versus.size(); ++p) {
            words[p] = detail::decide(samples[index(versus[p].a)],
                                      samples[index(versus[p].b)]);
            decided &= words[p] != detail::Word::Undecided;
        }
        const std::chrono::duration<double> spent =
            std::chrono::steady_clock::now() - t0;
        if (decided || spent.count() >= opt.setSeconds) {
            break;
        }
    }
    CUDA_CHECK(cudaGetLastError());

    SetResult out;
    std::printf("%-30s", set.c_str());
    for (size_t i = 0; i < rows.size(); ++i) {
        out.times.push_back(summarize(samples[i], mode));
        const TimingResult& t = out.times.back();
        l.row(Row()
                  .merge(rows[i].fields)
                  .str("set", set)
                  .merge(timingFields(t))
                  .num("gbps", gbps(rows[i].bytes, t.median)));
        std::printf(" %s %.2f", rows[i].name.c_str(), 1000.0 * t.median);
    }
    for (size_t p = 0; p < versus.size(); ++p) {
        l.decision(Row()
                       .str("set", set)
                       .str("a", versus[p].a)
                       .str("b", versus[p].b)
                       .str("word", detail::wordName(words[p]))
                       .integer("samples", taken));
        std::printf(" | %s vs %s: %s", versus[p].a.c_str(), versus[p].b.c_str(),
                    detail::wordName(words[p]));
    }
    std::printf(" (%d samples, us)\n", taken);
    out.words = words;
    return out;
}

// Times `work(stream)` alone in each of `modes`, a set of one row per mode:
// a JSON row each (`base` with the timing and GB/s), the results in the
// order of `modes`.
template <typename Work, typename Modes = decltype(kAllModes)>
std::vector<TimingResult> timeRow(Lesson& l, const std::string& name,
                                  const Row& base, double bytes, Work&& work,
                                  const Modes& modes = kAllModes) {
    std::vector<TimingResult> out;
    for (TimingMode mode : modes) {
        out.push_back(
            timeSet(l, name, mode, {{name, base, bytes, work}}).times[0]);
    }
    return out;
}

}  // namespace course
