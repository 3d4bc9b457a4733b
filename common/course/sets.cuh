// SPDX-License-Identifier: MIT
//
// course/sets.cuh: rows that a page compares, timed together. A set is the
// rows of one comparison at one size in one timing mode; its samples are
// taken in rounds, one sample of every row a round, in an order that turns
// round every round (A B C, C B A, ...) so that drift and clock changes
// fall on every row alike. After each look (TimingOptions::looks) the
// comparison rule (course/detail/decide.cuh) decides each pair the set
// names; sampling stops once every pair is decided, or at the last look,
// or before a look that would take it past TimingOptions::setSeconds. Every
// sample is kept, in order; the rule's words are kept as the set's decisions.

#pragma once

#include <algorithm>
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

// Some work enqueued on the stream it is given: what a set times.
using Work = std::function<void(cudaStream_t)>;

// One row of a set: the field that names it in its JSON row and its name
// there (also in the printed line and the decisions), the other fields that
// identify it, the bytes it moves per call (for GB/s; 0: none) and the
// work, enqueued on the stream it is given.
struct Contender {
    const char* key;
    std::string name;
    Row fields;
    double bytes = 0.0;
    Work work;
};

// What timeSet calls the second timing of the row it times twice.
inline std::string twinOf(const std::string& name) {
    return name + "-twin";
}

// A comparison the set decides: contender `a` against contender `b`.
struct Versus {
    std::string a, b;
};

struct SetResult {
    std::vector<TimingResult> times;  // in the order given, twins left out
    std::vector<detail::Word> words;  // in the order of the comparisons
};

// Times `given` together in `mode` (see above), records a JSON row for
// each (its name and fields, "set": the set's name, its timing and GB/s)
// and a decision for each of `wanted` whose two rows are in the set
// (--only may leave some out), and prints one line: the set, each row's
// median, each decision. `twins` name rows to time twice, the second time
// as twinOf(name) with the same work and fields: the same code against
// itself, whose decision is the rule's false-call rate measured in this
// very run. A set that compares nothing takes TimingOptions::samples rounds.
inline SetResult timeSet(Lesson& l, const std::string& label, TimingMode mode,
                         const std::vector<Contender>& given,
                         std::vector<Versus> wanted = {},
                         const std::vector<std::string>& twins = {}) {
    const TimingOptions& opt = l.timing();
    const std::string set = label + " " + timingName(mode);
    std::vector<Contender> rows;
    std::vector<bool> twin;  // rows[i] is a twin
    for (const Contender& c : given) {
        rows.push_back(c);
        twin.push_back(false);
        if (std::find(twins.begin(), twins.end(), c.name) != twins.end()) {
            rows.push_back(c);
            rows.back().name = twinOf(c.name);
            twin.push_back(true);
            wanted.push_back({rows.back().name, c.name});
        }
    }
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
    std::unique_ptr<L2Flusher> flusher;
    // Described, the set takes no sample: its rows and pairs are listed
    // with empty samples, and each pair with the word "described".
    const std::vector<int> looks = describing() ? std::vector<int>{}
                                   : versus.empty() || opt.looks.empty()
                                       ? std::vector<int>{opt.samples}
                                       : opt.looks;
    if (!looks.empty()) {
        for (const Contender& c : rows) {
            samplers.emplace_back(
                new detail::Sampler(c.work, mode, opt, l.stream()));
        }
        flusher.reset(mode == TimingMode::Cold ? new L2Flusher(l.stream())
                                               : nullptr);
    }
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
        // Stop before a look that would take the set past setSeconds, at
        // the pace its rounds have kept so far.
        const std::chrono::duration<double> spent =
            std::chrono::steady_clock::now() - t0;
        if (decided || look + 1 == looks.size() ||
            spent.count() / taken * looks[look + 1] > opt.setSeconds) {
            break;
        }
    }
    CUDA_CHECK(cudaGetLastError());

    SetResult out;
    std::printf("%-30s", set.c_str());
    for (size_t i = 0; i < rows.size(); ++i) {
        const TimingResult t = summarize(samples[i], mode);
        if (!twin[i]) {
            out.times.push_back(t);
        }
        l.row(Row()
                  .str(rows[i].key, rows[i].name)
                  .merge(rows[i].fields)
                  .str("set", set)
                  .merge(timingFields(t))
                  .num("gbps", gbps(rows[i].bytes, t.median)));
        if (describing()) {
            std::printf(" %s", rows[i].name.c_str());
        } else {
            std::printf(" %s %.2f", rows[i].name.c_str(), 1000.0 * t.median);
        }
    }
    // Described, a pair has no word: nothing was timed.
    const auto word = [&](size_t p) {
        return describing() ? "described" : detail::wordName(words[p]);
    };
    for (size_t p = 0; p < versus.size(); ++p) {
        l.decision(Row()
                       .str("set", set)
                       .str("a", versus[p].a)
                       .str("b", versus[p].b)
                       .str("word", word(p))
                       .integer("samples", taken));
        std::printf(" | %s vs %s: %s", versus[p].a.c_str(), versus[p].b.c_str(),
                    word(p));
    }
    std::printf(describing() ? "\n" : " (%d samples, us)\n", taken);
    out.words = words;
    return out;
}

}  // namespace course
