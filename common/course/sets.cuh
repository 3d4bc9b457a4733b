// SPDX-License-Identifier: MIT
//
// course/sets.cuh: rows that a page compares, timed together. A set is the
// rows of one comparison at one size in one timing mode; its samples are
// taken in rounds, one sample of every row a round, each round in a fresh
// random order (RoundOrder), so that every row takes every place in the
// round and follows every other row equally often. After each look
// (TimingOptions::looks) the comparison rule (course/detail/decide.cuh)
// decides each pair the set names; sampling stops once every pair is
// decided, or at the last look, or before a look that would take it past
// TimingOptions::setSeconds. Every sample is kept, in order; the rule's
// words are kept as the set's decisions.
//
// Why a random order: a short cold launch's time depends on its place in a
// cycle of the GPU's launches (on the H200, every fourth launch of the
// flush-and-launch sequence alike; research/cold-order.md). A fixed order
// (the course's earlier A B C, C B A) ties each row to a fixed part of that
// cycle, and two rows of the same code were then called faster or slower
// than each other in up to a third of cold cells under 8 us. A random
// order gives each row every part of it.

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
#include "course/report.cuh"
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
    int calls = 1;  // what one call of `work` holds of the lesson's unit
};

// What timeSet calls the second timing of the row it times twice.
inline std::string twinOf(const std::string& name) {
    return name + "-twin";
}

// A comparison the set decides: contender `a` against contender `b`.
struct Versus {
    std::string a, b;
};

// The order of the rows in each round of one set: a Fisher-Yates shuffle
// (from the last place down, place i swapped with draw % (i + 1)) driven by
// splitmix64 from the set's own seed, the run's seed XOR the FNV-1a hash of
// the set's name. Written out in full so that anyone given the seed a
// record keeps can make every round's order again.
class RoundOrder {
public:
    RoundOrder(unsigned long long runSeed, const std::string& set) {
        unsigned long long h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
        for (unsigned char c : set) {
            h = (h ^ c) * 0x100000001b3ull;
        }
        state_ = runSeed ^ h;
    }
    std::vector<size_t> next(size_t rows) {
        std::vector<size_t> order(rows);
        for (size_t i = 0; i < rows; ++i) {
            order[i] = i;
        }
        for (size_t i = rows; i-- > 1;) {
            std::swap(order[i], order[draw() % (i + 1)]);
        }
        return order;
    }

private:
    unsigned long long draw() {  // splitmix64
        unsigned long long z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    unsigned long long state_;
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
// as twinOf(name) with the same work and fields; their pairs, and those of
// `sameCode` (rows that run one kernel with the same arguments), are the
// same code against itself: their decisions carry "same_code", and their
// words are the rule's false-call rate measured in this very run. A set
// that compares nothing takes TimingOptions::samples rounds.
inline SetResult timeSet(Report& report, cudaStream_t stream,
                         const TimingOptions& opt, const std::string& label,
                         TimingMode mode, const std::vector<Contender>& given,
                         std::vector<Versus> wanted,
                         const std::vector<std::string>& twins,
                         const std::vector<Versus>& sameCode) {
    const std::string set = label + " " + timingName(mode);
    std::vector<Contender> rows;
    std::vector<bool> twin;  // rows[i] is a twin
    std::vector<Versus> same = sameCode;
    for (const Contender& c : given) {
        rows.push_back(c);
        twin.push_back(false);
        if (std::find(twins.begin(), twins.end(), c.name) != twins.end()) {
            rows.push_back(c);
            rows.back().name = twinOf(c.name);
            twin.push_back(true);
            same.push_back({rows.back().name, c.name});
        }
    }
    auto index = [&](const std::string& name) {
        size_t i = 0;
        while (i < rows.size() && rows[i].name != name) {
            ++i;
        }
        return i;  // rows.size(): not in this set
    };
    auto isSame = [&](const Versus& v) {
        return std::any_of(same.begin(), same.end(), [&](const Versus& s) {
            return (s.a == v.a && s.b == v.b) || (s.a == v.b && s.b == v.a);
        });
    };
    for (const Versus& s : same) {
        if (!std::any_of(wanted.begin(), wanted.end(), [&](const Versus& v) {
                return (s.a == v.a && s.b == v.b) || (s.a == v.b && s.b == v.a);
            })) {
            wanted.push_back(s);
        }
    }
    std::vector<Versus> versus;
    for (const Versus& v : wanted) {
        if (index(v.a) < rows.size() && index(v.b) < rows.size()) {
            versus.push_back(v);
        }
    }
    std::vector<std::unique_ptr<detail::Sampler>> samplers;
    for (const Contender& c : rows) {
        samplers.emplace_back(new detail::Sampler(c.work, mode, opt, stream));
    }
    std::unique_ptr<L2Flusher> flusher(
        mode == TimingMode::Cold ? new L2Flusher(stream) : nullptr);
    const std::vector<int> looks = versus.empty() || opt.looks.empty()
                                       ? std::vector<int>{opt.samples}
                                       : opt.looks;
    RoundOrder order(opt.seed, set);
    std::vector<std::vector<double>> samples(rows.size());
    std::vector<detail::Word> words(versus.size(), detail::Word::Undecided);
    const auto t0 = std::chrono::steady_clock::now();
    int taken = 0;
    for (size_t look = 0; look < looks.size(); ++look) {
        for (; taken < looks[look]; ++taken) {
            for (size_t c : order.next(rows.size())) {
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
        Row r = Row()
                    .str(rows[i].key, rows[i].name)
                    .merge(rows[i].fields)
                    .str("set", set)
                    .merge(timingFields(t))
                    .num("gbps", gbps(rows[i].bytes, t.median));
        if (rows[i].calls != 1) {
            r.integer("calls", rows[i].calls)
                .num("per_call_us", 1000.0 * t.median / rows[i].calls);
        }
        report.row(r);
        std::printf(" %s %.2f", rows[i].name.c_str(), 1000.0 * t.median);
    }
    for (size_t p = 0; p < versus.size(); ++p) {
        Row d = Row()
                    .str("set", set)
                    .str("a", versus[p].a)
                    .str("b", versus[p].b)
                    .str("word", detail::wordName(words[p]))
                    .integer("samples", taken);
        if (isSame(versus[p])) {
            d.boolean("same_code", true);
            report.sameCode(timingName(mode),
                            summarize(samples[index(versus[p].a)], mode).median,
                            words[p] == detail::Word::Faster ||
                                words[p] == detail::Word::Slower);
        }
        report.decision(d);
        std::printf(" | %s vs %s: %s", versus[p].a.c_str(), versus[p].b.c_str(),
                    detail::wordName(words[p]));
    }
    std::printf(" (%d samples, us)\n", taken);
    out.words = words;
    return out;
}

}  // namespace course
