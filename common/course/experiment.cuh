// SPDX-License-Identifier: MIT
//
// course/experiment.cuh: a lesson's rows as named data, and the one road
// from them to the record. A Case is one row: its name, the work one call
// enqueues, the bytes that call moves, the fields that place it, and the
// rows the comparison rule decides it against. An Experiment is the rows
// compared at one configuration (a size, a bin count): every one checked
// first, and only if every check passed, timed together, interleaved, in
// each of its timing modes (course/sets.cuh), or run once each for the
// profiler under --profile. A lesson writes its kernels, its launchers and
// a table of cases; this file does the rest the same way for every day.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "course/json.cuh"
#include "course/lesson.cuh"
#include "course/memory.cuh"
#include "course/profile.cuh"
#include "course/sets.cuh"
#include "course/timeline.cuh"
#include "course/timing.cuh"
#include "course/validate.cuh"

namespace course {

struct Case {
    std::string name;    // the row's name, in the experiment's key field
    Work work;           // enqueues one call on the stream it is given
    double bytes = 0.0;  // bytes one call moves, for GB/s (0: none)
    Row fields = Row();  // what else names the row (a mode, a cluster size)
    std::vector<std::string> against = {};  // the rule decides it against these
    // Deterministic: after all its timed launches (the graph replays last)
    // it must still give the bits it gave before them, read by the
    // experiment's `result`. A race that only back-to-back or replayed
    // launches expose shows here.
    bool sameBits = false;
};

// An input an experiment's rows are checked on: its name, and what loads it.
struct Input {
    std::string name;
    std::function<void()> load;
};

struct Experiment {
    std::string label;            // names its sets and checks: "sweep n=1024"
    const char* key = "version";  // the JSON field that holds a row's name
    Row fields = Row();           // fields every row carries (group, size)
    std::vector<TimingMode> modes = {TimingMode::Cold, TimingMode::Batch,
                                     TimingMode::Graph};
    // Rows timed twice, the second as NAME-twin: the same code against
    // itself, whose words are the rule's false-call rate in this very run.
    std::vector<std::string> twins = {};
    std::vector<Versus> versus = {};  // pairs to decide beside `against`
    // The inputs every row is checked on, each loaded in turn (named in the
    // check); the last stays in place for the timing. None: one check on
    // whatever the lesson loaded.
    std::vector<Input> inputs = {};
    // How a row is checked on an input: it runs the case's work itself, on
    // data it knows the answer for. Required: nothing is timed unchecked.
    std::function<Checked(const Case&, const std::string& input)> check;
    // A row's result after one call, for the cases marked sameBits.
    std::function<double()> result = nullptr;
};

// What an experiment did: whether every check passed, and the sets it timed
// (one per mode, in `modes` order; none under --check-only or --profile).
struct Ran {
    bool ok = true;
    std::vector<SetResult> sets;
};

// Checks every case on every input (each check named "LABEL NAME INPUT" in
// the record), then, only if
// all passed: nothing more under --check-only; one call of each for Nsight
// Compute under --profile (named "LABEL NAME"); otherwise the cases timed
// as one set in each mode, and the sameBits cases checked again after.
inline Ran run(Lesson& l, const Experiment& e, const std::vector<Case>& cases) {
    bool ok = true;
    const std::vector<Input> inputs =
        e.inputs.empty() ? std::vector<Input>{{"", nullptr}} : e.inputs;
    for (const Case& c : cases) {
        for (const Input& in : inputs) {
            const std::string name =
                e.label + " " + c.name + (in.name.empty() ? "" : " ") + in.name;
            if (describing()) {  // listed, not run: nothing to load or check
                l.check(name, true, "");
                continue;
            }
            if (in.load) {
                in.load();
            }
            Checked r = e.check(c, in.name);
            if (const cudaError_t err = cudaGetLastError();
                err != cudaSuccess) {
                r = {false, std::string("CUDA error ") + cudaGetErrorName(err) +
                                ": " + cudaGetErrorString(err)};
            }
            ok &= l.check(name, r.ok, r.detail);
        }
    }
    if (!ok || cases.empty() || l.args().checkOnly) {
        return {ok, {}};  // never time a wrong kernel
    }
    if (l.args().profile) {
        for (const Case& c : cases) {
            profileRow(l, e.label + " " + c.name, c.work);
        }
        return {ok, {}};
    }
    std::vector<Contender> set;
    std::vector<Versus> versus = e.versus;
    std::vector<double> before(cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        set.push_back(
            {e.key, c.name, Row(e.fields).merge(c.fields), c.bytes, c.work});
        for (const std::string& other : c.against) {
            versus.push_back({c.name, other});
        }
        if (c.sameBits && e.result && !describing()) {
            c.work(l.stream());
            before[i] = e.result();
        }
    }
    Ran ran;
    for (TimingMode mode : e.modes) {
        ran.sets.push_back(timeSet(l, e.label, mode, set, versus, e.twins));
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        if (cases[i].sameBits && e.result) {
            if (!describing()) {
                cases[i].work(l.stream());
            }
            const double after = describing() ? before[i] : e.result();
            ok &= l.check(
                e.label + " " + cases[i].name + " same bits after timing",
                after == before[i],
                format("%.9g, then %.9g", before[i], after));
        }
    }
    ran.ok = ok;
    return ran;
}

namespace timeline {
// The timeline build's one step: `work` run once to warm it and once
// recorded (Recorder::capture), then a row per launch in the order they
// started, named by `kernels` in that order (the last name for any launch
// past the list; "": that launch left out), each with `fields`, times from
// the first kept launch's first block to the last one's last end.
template <typename Work>
void record(Lesson& l, Recorder& rec, const std::vector<std::string>& kernels,
            const Row& fields, Work&& work) {
    if (describing()) {
        // Listed, not run: a row for each named launch, its stamps at zero.
        // Whether the work makes a launch for the last name (the one for
        // every launch past the list) is known only once it runs: that row
        // says so.
        for (size_t i = 0; i < kernels.size(); ++i) {
            if (!kernels[i].empty()) {
                Row r = summarize({Stamp{}}, kernels[i], 0, 0).merge(fields);
                if (i + 1 == kernels.size() && i > 0) {
                    r.boolean("described_if_launched", true);
                }
                l.row(r);
            }
        }
        return;
    }
    const auto grids = rec.capture(work);
    const auto name = [&](size_t i) -> const std::string& {
        return kernels[std::min(i, kernels.size() - 1)];
    };
    unsigned long long t0 = ~0ull, t1 = 0;
    for (size_t i = 0; i < grids.size(); ++i) {
        if (!name(i).empty()) {
            const auto [a, b] = window({&grids[i]});
            t0 = std::min(t0, a);
            t1 = std::max(t1, b);
        }
    }
    for (size_t i = 0; i < grids.size(); ++i) {
        if (!name(i).empty()) {
            l.row(summarize(grids[i], name(i), t0, t1).merge(fields));
        }
    }
    std::printf("timeline %s: %zu launches recorded\n", fields.json().c_str(),
                grids.size());
}
}  // namespace timeline

// A check of work that writes `count` values: `work` run once over a
// poisoned `out` (an element it never writes cannot pass), each value
// within `tol` of want(i).
template <typename T, typename Want>
Checked checkOutput(cudaStream_t stream, const Work& work, T* out, size_t count,
                    Want&& want, double tol = 0.0) {
    poison(out, count, stream);
    work(stream);
    const Mismatch bad = compareAll(
        toHost(out, count), want,
        [tol](double g, double w) { return std::fabs(g - w) <= tol; });
    return {bad.count == 0, bad.count == 0 ? "every value as expected"
                                           : bad.describe("values")};
}

// The cases of `table` (a lesson's rows as structs with a `name`) that
// --only selects, each made by `make(entry)`.
template <typename Table, typename Make>
std::vector<Case> casesOf(const Lesson& l, const Table& table, Make&& make) {
    std::vector<Case> out;
    for (const auto* entry : l.chosen(table)) {
        out.push_back(make(*entry));
    }
    return out;
}

// Every power of two from 2^0 to 2^maxLog2 and its ragged neighbour 2^k +
// 1 (2^0 + 1 is 2^1), ascending, as far as `fits` allows (said where it
// stops short): the sizes where a kernel's bounds and grid choices show.
template <typename Fits>
std::vector<size_t> powersAndNeighbours(int maxLog2, Fits&& fits) {
    std::vector<size_t> out;
    for (int k = 0; k <= maxLog2; ++k) {
        for (size_t n : {size_t{1} << k, (size_t{1} << k) + 1}) {
            if ((k > 0 || n == 1) && fits(n)) {
                out.push_back(n);
            }
        }
    }
    if (out.empty() || out.back() < (size_t{1} << maxLog2)) {
        std::printf("a sweep to 2^%d stops at %zu: this GPU holds no more\n",
                    maxLog2, out.empty() ? size_t{0} : out.back());
    }
    return out;
}

}  // namespace course
