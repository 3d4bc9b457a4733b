// SPDX-License-Identifier: MIT
//
// course/experiment.cuh: a lesson's rows as data, and the one road from
// them to the record. A Case is one row: its name, the work one call
// enqueues, the bytes that call moves, the fields that place it, and the
// rows the comparison rule decides it against. An Experiment is the rows
// compared at one configuration (a size, a bin count): every one checked
// first, and only if every check passed, timed together, interleaved, in
// each of its timing modes (course/sets.cuh), or run once each for the
// profiler under --profile, or, in the timeline build, some of its rows
// recorded block by block. A Probe is a measurement of the lesson's own (a
// pointer chase's cycles) with its check.
//
// Each is listed (--list) from its data alone: its rows, checks and
// comparisons are known before anything runs, and nothing in a listing
// calls a Case's work, a check or a probe, so a listing needs no GPU.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "course/json.cuh"
#include "course/launch.cuh"
#include "course/memory.cuh"
#include "course/profile.cuh"
#include "course/report.cuh"
#include "course/sets.cuh"
#include "course/timeline.cuh"
#include "course/timing.cuh"
#include "course/validate.cuh"

namespace course {

struct Case;

// What a check is given: the row, the name of the input in place ("" if
// the experiment names none), the stream to run it on, and the
// experiment's size.
struct Checking {
    const Case& row;
    const std::string& input;
    cudaStream_t stream;
    size_t size;
};
using Check = std::function<Checked(const Checking&)>;

struct Case {
    std::string name;    // the row's name, in the experiment's key field
    Work work;           // enqueues one call on the stream it is given
    double bytes = 0.0;  // bytes one call moves, for GB/s (0: none)
    Row fields = Row();  // what else places the row (a cluster size)
    std::vector<std::string> against = {};  // the rule decides it against these
    // Deterministic: after all its timed launches (the graph replays last)
    // it must still give the bits it gave before them, read by the
    // experiment's `result`. A race that only back-to-back or replayed
    // launches expose shows here.
    bool sameBits = false;
    // Captured once into a CUDA graph and replayed: device time without
    // the host's per-launch work (the graph is made when the row first
    // runs, never in a listing).
    bool replay = false;
    // Calls of the lesson's unit in one call of `work` (a chain of K
    // kernels: K); the row then also gives the time per call.
    int calls = 1;
    // Once the GPU is known (after the setup, before the row's checks):
    // sets what depends on it (a grid sized to the machine, the bytes that
    // grid moves, a field such as its atomics count) and says why this GPU
    // cannot run the row ("": it can). A listing holds every row declared.
    std::function<std::string(Case&)> here = nullptr;
    // The row's own check, where it differs from the experiment's.
    Check check = nullptr;
};

// An input an experiment's rows are checked on: its name, and what loads it.
struct Input {
    std::string name;
    std::function<void(cudaStream_t)> load;
};

// What the timeline build records of an experiment: each of `rows` once
// (after its input's load, unstamped), its blocks stamped, a row per launch
// in the order they started, named by `kernels` in that order ("{row}":
// the row's own name; the last name for any launch past the list; "": that
// launch left out). With `cold` the L2 is emptied first, and the flush's
// read kernel is the first launch (name it). Times are from the first kept
// launch's first block.
struct TimelineOf {
    std::vector<std::string> rows = {};
    std::vector<std::string> kernels = {};
    bool cold = false;
};

struct Experiment {
    std::string group;            // what --only takes for all of them
    std::string label;            // names its sets and checks: "sweep n=1024"
    const char* key = "version";  // the JSON field that holds a row's name
    size_t size = 0;              // its --size, for the fit check (0: none)
    Row fields = Row();           // fields every row carries (a size)
    std::vector<TimingMode> modes = {TimingMode::Cold, TimingMode::Batch,
                                     TimingMode::Graph};
    std::vector<Case> cases = {};
    // Rows timed twice, the second as NAME-twin, and other pairs of rows
    // that run one kernel with the same arguments: the same code against
    // itself, whose words are the rule's false-call rate in this very run.
    std::vector<std::string> twins = {};
    std::vector<Versus> sameCode = {};
    // The inputs every row is checked on, each loaded in turn (named in the
    // check); the last stays in place for the timing. None: one check on
    // whatever the setup loaded.
    std::vector<Input> inputs = {};
    // How a row is checked on an input: it runs the case's work itself, on
    // data it knows the answer for. Required: nothing is timed unchecked.
    Check check;
    // A row's result after one call, for the cases marked sameBits.
    std::function<double()> result = nullptr;
    // Above 1: how often each row goes wrong, not how fast it runs (a
    // negative build's race): every check made this many times and counted
    // into a row (trials, wrong_runs, wrong_values); nothing timed.
    int repeat = 1;
    // What the timeline build (-DCOURSE_TIMELINE) records of it, instead
    // of checking and timing it; the timed build ignores it.
    TimelineOf timeline = {};
};

// A probe's finding: its check, and the values its row holds.
struct Probed {
    Checked check;
    Row values;
};

// A probe's samples (cycles, say) as its row's values: median, least,
// most, and every sample in the order taken.
inline Row sampled(const std::string& unit, const std::vector<double>& v) {
    const TimingResult t = summarize(v, TimingMode::Batch);
    return Row()
        .num(("median_" + unit).c_str(), t.median)
        .num(("min_" + unit).c_str(), t.min)
        .num(("max_" + unit).c_str(), t.max)
        .nums(("samples_" + unit).c_str(), v);
}

// A probe's repeated trials: `once` runs one and gives its sample, or
// nothing where the trial's own check failed. The first run is a warm-up
// (module load, caches filled) and its sample is dropped; the first failed
// trial ends the probe, its check `wrong`; else the check is `right` and
// the `count` samples are the row's values, as `unit`.
inline Probed trials(int count, const std::string& unit,
                     const std::string& right, const std::string& wrong,
                     const std::function<std::optional<double>()>& once) {
    std::vector<double> samples;
    for (int t = 0; t <= count; ++t) {
        const std::optional<double> got = once();
        if (!got) {
            return {{false, wrong}};
        }
        if (t > 0) {
            samples.push_back(*got);
        }
    }
    return {{true, right}, sampled(unit, samples)};
}

// A measurement of the lesson's own, not a timing by the rule: a chase's
// cycles a load, how often a race goes wrong. Its row is `fields` (as
// listed) and then what `measure` found; its check is named `label`.
struct Probe {
    std::string group;
    std::string label;
    size_t size = 0;  // its --size, for the fit check (0: none)
    Row fields;
    std::function<Probed(cudaStream_t)> measure;
};

// The `count` values at `device` (copied back once every launch is done),
// each within `tol` of want(i): a check's finding.
template <typename T, typename Want>
Checked expectAll(const T* device, size_t count, Want&& want,
                  double tol = 0.0) {
    return compareAll(
               toHost(device, count), want,
               [tol](double g, double w) { return std::fabs(g - w) <= tol; })
        .checked("values");
}

// A check of work that writes `count` values: `work` run once over a
// poisoned `out` (an element it never writes cannot pass), each value
// within `tol` of want(i).
template <typename T, typename Want>
Checked checkOutput(cudaStream_t stream, const Work& work, T* out, size_t count,
                    Want&& want, double tol = 0.0) {
    poison(out, count, stream);
    work(stream);
    return expectAll(out, count, want, tol);
}

// A check of a reduction's work: the work run once, its total one value
// at `sum` (zeroed first) or, with `count` above 0, the `count` partials at
// `partials` (poisoned first: one never written cannot pass), added in
// float64 on the host, within `tol` of `want`. It takes the arrays, not
// their pointers, as a plan is declared before the setup allocates them.
template <typename T>
Check totalIs(const DeviceArray<T>& sum, const DeviceArray<T>& partials,
              size_t count, double want, double tol = 0.0) {
    return [&sum, &partials, count, want, tol](const Checking& at) {
        CUDA_CHECK(cudaMemsetAsync(sum.get(), 0, sizeof(T), at.stream));
        poison(partials.get(), count, at.stream);
        at.row.work(at.stream);
        double got = count == 0 ? toHost(sum.get(), 1)[0] : 0.0;
        for (T v : toHost(partials.get(), count)) {
            got += v;
        }
        return closeTo(got, want, tol);
    };
}

// The inputs a sum of n floats at `in` is checked on: all ones while n is
// under 2^24 (every partial is then a whole number a float holds, so any
// order of adding gives n exactly), then random values (fillRandom: not
// all zeros, though an element may be 0; RandomSums knows their sum), left
// in place for the timing.
inline std::vector<Input> onesThenRandom(DeviceArray<float>& in, size_t n) {
    std::vector<Input> out;
    if (n < (size_t{1} << 24)) {
        out.push_back(
            {"ones", [&in, n](cudaStream_t s) { fill(in, n, 1, s); }});
    }
    out.push_back(
        {"random", [&in, n](cudaStream_t s) { fillRandom(in, n, s); }});
    return out;
}

// Every power of two from 2^0 to 2^maxLog2 and its ragged neighbour 2^k +
// 1 (2^0 + 1 is 2^1), ascending: the sizes where a kernel's bounds and
// grid choices show.
inline std::vector<size_t> powersAndNeighbours(int maxLog2) {
    std::vector<size_t> out;
    for (int k = 0; k <= maxLog2; ++k) {
        for (size_t n : {size_t{1} << k, (size_t{1} << k) + 1}) {
            if (k > 0 || n == 1) {
                out.push_back(n);
            }
        }
    }
    return out;
}

namespace detail {
inline Checked checkOn(const Experiment& e, const Case& c, const Input& in,
                       cudaStream_t stream);
}  // namespace detail

// One row of `e` for a second harness (the lessons' nvbench benchmarks):
// readied as the course's run readies it (its `here`, its graph where it
// replays), checked on each of the experiment's inputs in turn (the last
// left in place), and its work returned; empty, with the reason in `why`,
// where this GPU cannot run it or a check failed. After the GPU gate only.
inline Work checkedRow(Experiment e, const std::string& name,
                       cudaStream_t stream, std::string& why) {
    for (Case& c : e.cases) {
        if (c.name != name) {
            continue;
        }
        why = c.here ? c.here(c) : "";
        if (!why.empty()) {
            return nullptr;
        }
        if (c.replay) {
            c.work = replayed(stream, c.work);
        }
        for (const Input& in :
             e.inputs.empty() ? std::vector<Input>{{"", nullptr}} : e.inputs) {
            const Checked got = detail::checkOn(e, c, in, stream);
            if (!got.ok) {
                why = "wrong result: " + got.detail;
                return nullptr;
            }
        }
        return c.work;
    }
    why = "no row named " + name;
    return nullptr;
}

namespace detail {

// The pairs an experiment decides: each case against the rows it names.
inline std::vector<Versus> pairsOf(const Experiment& e) {
    std::vector<Versus> out;
    for (const Case& c : e.cases) {
        for (const std::string& other : c.against) {
            out.push_back({c.name, other});
        }
    }
    return out;
}

inline std::string checkName(const Experiment& e, const Case& c,
                             const std::string& input) {
    return e.label + " " + c.name + (input.empty() ? "" : " ") + input;
}

// A listing of `e`: the checks, rows and decisions a run would record, in
// its order, with no value a run measures (twins and same-code pairs
// included, and under --profile the rows Nsight Compute would see).
inline void list(Report& r, const Experiment& e, const Args& args) {
    const std::vector<Input> inputs =
        e.inputs.empty() ? std::vector<Input>{{"", nullptr}} : e.inputs;
    for (const Case& c : e.cases) {
        for (const Input& in :
             e.repeat > 1 ? std::vector<Input>{{"", nullptr}} : inputs) {
            r.check(checkName(e, c, in.name), true, "listed, not run");
        }
    }
    if (e.repeat > 1) {
        for (const Case& c : e.cases) {
            r.row(Row()
                      .str(e.key, c.name)
                      .str("group", e.group)
                      .merge(e.fields)
                      .merge(c.fields));
        }
        return;
    }
    if (args.checkOnly) {
        return;
    }
    if (args.profile) {
        for (const Case& c : e.cases) {
            r.row(Row()
                      .str("group", "profile")
                      .str("profiled", e.label + " " + c.name));
        }
        return;
    }
    for (TimingMode mode : e.modes) {
        const std::string set = e.label + " " + timingName(mode);
        std::vector<std::string> names;
        for (const Case& c : e.cases) {
            const bool twice = std::find(e.twins.begin(), e.twins.end(),
                                         c.name) != e.twins.end();
            for (const std::string& name :
                 twice ? std::vector<std::string>{c.name, twinOf(c.name)}
                       : std::vector<std::string>{c.name}) {
                Row row = Row()
                              .str(e.key, name)
                              .str("group", e.group)
                              .merge(e.fields)
                              .merge(c.fields)
                              .str("set", set)
                              .str("timing", timingName(mode));
                if (c.calls != 1) {
                    row.integer("calls", c.calls);
                }
                r.row(row);
                names.push_back(name);
            }
        }
        auto has = [&](const std::string& n) {
            return std::find(names.begin(), names.end(), n) != names.end();
        };
        std::vector<Versus> pairs = pairsOf(e);
        for (const std::string& t : e.twins) {
            pairs.push_back({twinOf(t), t});
        }
        pairs.insert(pairs.end(), e.sameCode.begin(), e.sameCode.end());
        for (size_t p = 0; p < pairs.size(); ++p) {
            const Versus& v = pairs[p];
            const bool seen = std::any_of(
                pairs.begin(), pairs.begin() + p, [&](const Versus& w) {
                    return (w.a == v.a && w.b == v.b) ||
                           (w.a == v.b && w.b == v.a);
                });
            if (!seen && has(v.a) && has(v.b)) {
                r.decision(Row()
                               .str("set", set)
                               .str("a", v.a)
                               .str("b", v.b)
                               .str("word", "listed"));
            }
        }
    }
}

// Runs `e` (see the top): every case checked on every input, then, only if
// all passed, nothing more under --check-only; one call of each for Nsight
// Compute under --profile (named "LABEL NAME"); otherwise the cases timed
// as one set in each mode, and the sameBits cases checked again after.
// One check of `c` on `in`, a CUDA error it leaves counted as wrong.
inline Checked checkOn(const Experiment& e, const Case& c, const Input& in,
                       cudaStream_t stream) {
    if (in.load) {
        in.load(stream);
    }
    const Checking at{c, in.name, stream, e.size};
    const Checked got = c.check ? c.check(at) : e.check(at);
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess
               ? got
               : Checked{false, std::string("CUDA error ") +
                                    cudaGetErrorName(err) + ": " +
                                    cudaGetErrorString(err)};
}

// An experiment with `repeat`: each row's checks made that many times.
inline void count(Report& r, const Experiment& e,
                  const std::vector<Input>& inputs, cudaStream_t stream) {
    for (const Case& c : e.cases) {
        long long runs = 0, values = 0;
        for (int t = 0; t < e.repeat; ++t) {
            for (const Input& in : inputs) {
                const Checked got = checkOn(e, c, in, stream);
                runs += !got.ok;
                values += static_cast<long long>(got.wrong);
            }
        }
        r.check(checkName(e, c, ""), runs == 0,
                format("%lld of %d runs wrong", runs, e.repeat));
        r.row(Row()
                  .str(e.key, c.name)
                  .str("group", e.group)
                  .merge(e.fields)
                  .merge(c.fields)
                  .integer("trials", e.repeat)
                  .integer("wrong_runs", runs)
                  .integer("wrong_values", values));
    }
}

inline void run(Report& r, const Experiment& e, const Args& args,
                const TimingOptions& opt, cudaStream_t stream) {
    const std::vector<Input> inputs =
        e.inputs.empty() ? std::vector<Input>{{"", nullptr}} : e.inputs;
    if (e.repeat > 1) {
        count(r, e, inputs, stream);
        return;
    }
    bool ok = true;
    for (const Case& c : e.cases) {
        for (const Input& in : inputs) {
            const Checked got = checkOn(e, c, in, stream);
            ok &= r.check(checkName(e, c, in.name), got.ok, got.detail);
        }
    }
    if (!ok || e.cases.empty() || args.checkOnly) {
        return;  // never time a wrong kernel
    }
    if (args.profile) {
        for (const Case& c : e.cases) {
            profileRow(r, stream, e.label + " " + c.name, c.work);
        }
        return;
    }
    std::vector<Contender> set;
    std::vector<double> before(e.cases.size());
    for (size_t i = 0; i < e.cases.size(); ++i) {
        const Case& c = e.cases[i];
        set.push_back(
            {e.key, c.name,
             Row().str("group", e.group).merge(e.fields).merge(c.fields),
             c.bytes, c.work, c.calls});
        if (c.sameBits && e.result) {
            c.work(stream);
            before[i] = e.result();
        }
    }
    for (TimingMode mode : e.modes) {
        timeSet(r, stream, opt, e.label, mode, set, pairsOf(e), e.twins,
                e.sameCode);
    }
    for (size_t i = 0; i < e.cases.size(); ++i) {
        if (e.cases[i].sameBits && e.result) {
            e.cases[i].work(stream);
            const double after = e.result();
            r.check(e.label + " " + e.cases[i].name + " same bits after timing",
                    after == before[i],
                    format("%.9g, then %.9g", before[i], after));
        }
    }
}

// A probe's row as listed: its values are known only once it runs.
inline void list(Report& r, const Probe& p) {
    r.check(p.label, true, "listed, not run");
    r.row(Row()
              .str("group", p.group)
              .merge(p.fields)
              .boolean("listed_values", true));
}

inline void run(Report& r, const Probe& p, cudaStream_t stream) {
    const Probed got = p.measure(stream);
    if (r.check(p.label, got.check.ok, got.check.detail)) {
        r.row(Row().str("group", p.group).merge(p.fields).merge(got.values));
    }
}

// The timeline build's rows of `e`: one a named launch of each row it
// records. Whether the work makes a launch for the last name (the one for
// every launch past the list) is known only once it runs: a listing's row
// says so.
inline std::string launchName(const TimelineOf& t, size_t i,
                              const std::string& row) {
    const std::string& k = t.kernels[std::min(i, t.kernels.size() - 1)];
    return k == "{row}" ? row : k;
}

inline void listTimeline(Report& r, const Experiment& e) {
    for (const Case& c : e.cases) {
        if (std::find(e.timeline.rows.begin(), e.timeline.rows.end(), c.name) ==
            e.timeline.rows.end()) {
            continue;
        }
        for (size_t i = 0; i < e.timeline.kernels.size(); ++i) {
            const std::string k = launchName(e.timeline, i, c.name);
            if (!k.empty()) {
                Row row = Row().str("group", "timeline").str("kernel", k);
                row.str(e.key, c.name).merge(e.fields).merge(c.fields);
                if (i + 1 == e.timeline.kernels.size() && i > 0) {
                    row.boolean("listed_if_launched", true);
                }
                r.row(row);
            }
        }
    }
}

inline void runTimeline(Report& r, const Experiment& e, timeline::Recorder& rec,
                        L2Flusher& flusher, cudaStream_t stream) {
    for (const Case& c : e.cases) {
        if (std::find(e.timeline.rows.begin(), e.timeline.rows.end(), c.name) ==
            e.timeline.rows.end()) {
            continue;
        }
        const auto grids = rec.capture([&] {
            for (const Input& in : e.inputs) {
                in.load(stream);
            }
            if (e.timeline.cold) {
                flusher.flush();
            }
            c.work(stream);
        });
        unsigned long long t0 = ~0ull, t1 = 0;
        for (size_t i = 0; i < grids.size(); ++i) {
            if (!launchName(e.timeline, i, c.name).empty()) {
                const auto [a, b] = timeline::window({&grids[i]});
                t0 = std::min(t0, a);
                t1 = std::max(t1, b);
            }
        }
        const Row fields =
            Row().str(e.key, c.name).merge(e.fields).merge(c.fields);
        for (size_t i = 0; i < grids.size(); ++i) {
            const std::string k = launchName(e.timeline, i, c.name);
            if (!k.empty()) {
                r.row(timeline::summarize(grids[i], k, t0, t1).merge(fields));
            }
        }
        std::printf("timeline %s: %zu launches recorded\n",
                    fields.json().c_str(), grids.size());
    }
}

}  // namespace detail
}  // namespace course
