// SPDX-License-Identifier: MIT
//
// Day 58: programmatic dependent launch (PDL), measured.
//
// A chain of K short kernels, each reading what the one before it wrote.
// Between two kernels in a stream the GPU normally drains the first grid,
// flushes its memory, and only then starts launching the second: a gap of
// a few microseconds that is invisible under a long kernel and dominant
// under a short one. PDL (compute capability 9.0) lets the second kernel
// be launched while the first is still running; the second then waits,
// inside the kernel, for the first one's results.
//
//   schedule        how each step is launched and where it waits
//   plain           an ordinary launch in one stream: the baseline
//   pdl             the dependent-launch attribute; the kernel's first
//                   statement is cudaGridDependencySynchronize()
//   pdl-prologue    the same launch; the kernel loads its coefficient table
//                   (which nothing upstream writes) before the wait; the
//                   trigger stays implicit, at the end of each block
//   pdl-early       pdl-prologue plus an explicit
//                   cudaTriggerProgrammaticLaunchCompletion() first, so its
//                   own successor may launch at once
//   graph-*         each of the four captured once into a CUDA graph and
//                   replayed; capture turns the PDL launches into
//                   programmatic edges
//
// Each step computes y[i] = x[i] + table[i % 1024], table[j] = j % 3. The
// input starts as x[i] = i % 1024, so after K steps every element is an
// exact whole number (under 2^24) and the check is exact.
//
// Other builds of this file:
//   day58_pdl_read_before_wait  (-DDAY58_READ_BEFORE_WAIT) the pdl-early
//       step reads its input BEFORE the wait: the bug this lesson exists
//       to prevent; it counts how often the result comes out wrong.
//   day58_pdl_timeline  (-DCOURSE_TIMELINE) records when each block of a
//       primary step and its secondary started, passed the wait and ended.
//
// Build:  cmake --build build --target day58_pdl
// Run:    build/bin/day58_pdl [--size N] [--only NAME] [--json FILE]
//
// Needs compute capability 9.0: griddepcontrol, the instructions behind
// the two device calls, exists from sm_90 on.
//
// Whether this program has run on real hardware is not written here: the
// day's README shows the promoted run and its provenance, or says
// UNVERIFIED. See research/REVIEW-PROCESS.md.

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "course.cuh"

// 256 threads, one element per thread: the steps are deliberately short,
// so that what is measured is the boundary between them.
constexpr int kThreads = 256;

// The coefficient table each step loads in its prologue: 4 KiB, enough
// that loading it is real work to overlap, small enough for any block.
constexpr int kTableSize = 1024;

// The default sizes: 2^12 elements is 16 blocks (a sliver of a 132-SM
// GPU: all boundary, no work); 2^18 is 1,024 blocks, under the 1,056 that
// 132 SMs hold at once (2,048 threads per SM: 8 blocks of 256), so one
// wave; 2^23 is 32,768 blocks, about 31 waves, enough DRAM work per step
// that a microsecond boundary should fade.
const size_t kSizes[] = {1u << 12, 1u << 18, 1u << 23};
const int kChainLengths[] = {4, 16, 64};

// How often the read-before-wait build repeats each check.
[[maybe_unused]] constexpr int kRaceTrials = 200;

enum class Kind { Plain, Pdl, PdlPrologue, PdlEarly };

// snippet: pdl-step
// One step of the chain. Launch assumption: blockDim.x == kThreads; for
// every kind but Plain, launched with the dependent-launch attribute so
// the PDL calls mean something (without it they return at once).
// COURSE_BLOCK_* are the timeline build's stamps, empty otherwise.
template <Kind kKind>
__global__ void step(const float* __restrict__ x, float* __restrict__ y,
                     const float* __restrict__ table, size_t n) {
    COURSE_BLOCK_BEGIN();
    __shared__ float coeff[kTableSize];
    const size_t i = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
#ifdef DAY58_READ_BEFORE_WAIT
    float early = 0.0f;
#endif

    if constexpr (kKind == Kind::PdlEarly || kKind == Kind::PdlPrologue) {
        if constexpr (kKind == Kind::PdlEarly) {
            // Let the next step's blocks launch now. This says nothing
            // about memory: the next step still waits for this grid to
            // complete.
            cudaTriggerProgrammaticLaunchCompletion();
        }
#ifdef DAY58_READ_BEFORE_WAIT
        // THE BUG: x is the previous step's output, and it may not be
        // complete yet. Never read a predecessor's output before the wait.
        early = (i < n) ? x[i] : 0.0f;
#endif
        // Prologue: nothing here depends on the previous step.
        for (int k = threadIdx.x; k < kTableSize; k += kThreads) {
            coeff[k] = table[k];
        }
        // Wait until every prerequisite grid has completed and its memory
        // is visible; only now may x be read.
        cudaGridDependencySynchronize();
    } else {
        if constexpr (kKind == Kind::Pdl) {
            cudaGridDependencySynchronize();  // first statement: safe
        }
        for (int k = threadIdx.x; k < kTableSize; k += kThreads) {
            coeff[k] = table[k];
        }
    }
    COURSE_BLOCK_WAITED();
    __syncthreads();  // the whole table loaded before any thread reads it

    if (i < n) {
#ifdef DAY58_READ_BEFORE_WAIT
        const float in = kKind == Kind::PdlEarly ? early : x[i];
#else
        const float in = x[i];
#endif
        y[i] = in + coeff[i % kTableSize];
    }
    COURSE_BLOCK_END();
}
// end snippet

namespace {

// snippet: schedules-table
// Every schedule, one line each: a new schedule is a line here (and, for
// a new kind of step, a case in step<>).
struct Schedule {
    const char* name;
    Kind kind;
    bool graph;  // captured once into a CUDA graph, then replayed
};
const Schedule kSchedules[] = {
    {"plain", Kind::Plain, false},
    {"pdl", Kind::Pdl, false},
    {"pdl-prologue", Kind::PdlPrologue, false},
    {"pdl-early", Kind::PdlEarly, false},
    {"graph-plain", Kind::Plain, true},
    {"graph-pdl", Kind::Pdl, true},
    {"graph-pdl-prologue", Kind::PdlPrologue, true},
    {"graph-pdl-early", Kind::PdlEarly, true},
};
// end snippet

// What the rule must decide before a set stops sampling: every schedule
// against the plain launch it replaces (in a stream, or in a graph). Both
// baselines are also timed twice (kTwins): the same code against itself,
// the rule's false-call rate.
const course::Versus kVersus[] = {{"pdl", "plain"},
                                  {"pdl-prologue", "plain"},
                                  {"pdl-early", "plain"},
                                  {"graph-plain", "plain"},
                                  {"graph-pdl", "graph-plain"},
                                  {"graph-pdl-prologue", "graph-plain"},
                                  {"graph-pdl-early", "graph-plain"}};
const std::vector<std::string> kTwins = {"plain", "graph-plain"};

using StepKernel = void (*)(const float*, float*, const float*, size_t);
// step<> for each Kind, in the enum's order.
const StepKernel kStepKernels[] = {step<Kind::Plain>, step<Kind::Pdl>,
                                   step<Kind::PdlPrologue>,
                                   step<Kind::PdlEarly>};

struct Chain {
    size_t n;
    int k;
    float* buf[2];  // ping-pong: step s reads buf[s % 2], writes the other
    const float* table;

    unsigned int blocks() const {
        return static_cast<unsigned int>((n + kThreads - 1) / kThreads);
    }

    // snippet: pdl-chain
    // Enqueues the K steps. Every step but a plain one asks to be launched
    // while its predecessor still runs (course::launch, the header's one
    // cudaLaunchKernelEx call with the dependent-launch attribute).
    void enqueue(Kind kind, cudaStream_t stream) const {
        course::LaunchAttrs attrs;
        attrs.dependent = kind != Kind::Plain;
        for (int st = 0; st < k; ++st) {
            course::launch(kStepKernels[static_cast<int>(kind)], blocks(),
                           kThreads, stream, attrs, buf[st % 2],
                           buf[(st + 1) % 2], table, n);
        }
    }
    // end snippet

    // The schedule's work on a stream: its K launches, or (graph-*) the
    // same K launches captured here once into a graph, replayed.
    course::Work work(const Schedule& s, cudaStream_t stream) const {
        if (!s.graph) {
            return [this, &s](cudaStream_t st) { enqueue(s.kind, st); };
        }
        auto g = std::make_shared<course::Graph>(
            stream, [&](cudaStream_t st) { enqueue(s.kind, st); });
        return [g](cudaStream_t st) { g->launch(st); };
    }

    // One run of `work` from a fresh input.
    void run(const course::Work& work, cudaStream_t stream) const;
};

// Launch assumption: one thread per element.
__global__ void initInput(float* x, size_t n) {
    const size_t i = course::threadIndex();
    if (i < n) {
        x[i] = static_cast<float>(i % kTableSize);
    }
}

void Chain::run(const course::Work& work, cudaStream_t stream) const {
    initInput<<<blocks(), kThreads, 0, stream>>>(buf[0], n);
    CUDA_CHECK(cudaGetLastError());
    course::poison(buf[1], n, stream);
    work(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Every element after K steps, exactly.
course::Mismatch wrongElements(const Chain& c) {
    const std::vector<float> got = course::toHost(c.buf[c.k % 2], c.n);
    return course::compareAll(
        got,
        [&](size_t i) {
            return static_cast<double>(i % kTableSize) +
                   static_cast<double>(c.k) * ((i % kTableSize) % 3);
        },
        [](double g, double w) { return g == w; });
}

// Times every selected schedule of one chain, as one set (course/sets.cuh:
// interleaved, until the comparison rule decides kVersus), and records what
// each costs per boundary, and saves against the plain launches, as rows of
// their own (group "boundary").
[[maybe_unused]] void timeChain(course::Lesson& l, const Chain& c) {
    const std::vector<const Schedule*> chosen = l.chosen(kSchedules);
    std::vector<course::Contender> set;
    for (const Schedule* s : chosen) {
        set.push_back({"schedule", s->name,
                       course::Row()
                           .str("group", "chain")
                           .integer("elements", static_cast<long long>(c.n))
                           .integer("k", c.k),
                       0.0, c.work(*s, l.stream())});
    }
    const std::string label =
        "n=" + std::to_string(c.n) + " K=" + std::to_string(c.k);
    const course::SetResult r =
        course::timeSet(l, label, course::TimingMode::Batch, set,
                        {std::begin(kVersus), std::end(kVersus)}, kTwins);
    const auto plain = std::find_if(set.begin(), set.end(), [](const auto& x) {
        return x.name == "plain";
    });
    const double plainUs =
        plain == set.end() ? 0.0 : 1000.0 * r.times[plain - set.begin()].median;
    for (size_t i = 0; i < set.size(); ++i) {
        const double us = 1000.0 * r.times[i].median;
        l.row(course::Row()
                  .str("group", "boundary")
                  .str("schedule", chosen[i]->name)
                  .integer("elements", static_cast<long long>(c.n))
                  .integer("k", c.k)
                  .num("per_boundary_us", us / c.k)
                  .num("saving_per_boundary_us",
                       plainUs > 0.0 ? (plainUs - us) / c.k : 0.0));
    }
}

// The negative build's question: how often does reading before the wait
// go wrong, launched in a stream and replayed in a graph?
[[maybe_unused]] void countRaces(course::Lesson& l, const Chain& c,
                                 int trials) {
    for (bool graph : {false, true}) {
        const Schedule& s =
            course::byName(kSchedules, graph ? "graph-pdl-early" : "pdl-early");
        const course::Work work = c.work(s, l.stream());
        int wrongRuns = 0;
        size_t wrongElems = 0;
        for (int t = 0; t < trials; ++t) {
            c.run(work, l.stream());
            const size_t bad = wrongElements(c).count;
            wrongRuns += bad != 0;
            wrongElems += bad;
        }
        std::printf("%10zu %4d %-16s %8d %8d %14zu\n", c.n, c.k, s.name, trials,
                    wrongRuns, wrongElems);
        l.row(
            course::Row()
                .str("group", "read-before-wait")
                .str("schedule", s.name)
                .integer("elements", static_cast<long long>(c.n))
                .integer("k", c.k)
                .integer("trials", trials)
                .integer("wrong_runs", wrongRuns)
                .integer("wrong_elements", static_cast<long long>(wrongElems)));
        l.check("read-before-wait " + std::string(s.name) +
                    " n=" + std::to_string(c.n) + " K=" + std::to_string(c.k),
                wrongRuns == 0,
                std::to_string(wrongRuns) + " of " + std::to_string(trials) +
                    " runs wrong");
    }
}

#ifdef COURSE_TIMELINE
// One primary step and its secondary, block by block: when each started,
// passed its wait and ended, per schedule and size.
void timelines(course::Lesson& l, const Chain& c) {
    course::timeline::Recorder rec(4u * c.blocks() + 64u);
    for (const char* name : {"plain", "pdl", "pdl-early", "graph-pdl"}) {
        const course::Work work =
            c.work(course::byName(kSchedules, name), l.stream());
        // the K steps, in start order
        const auto grids = rec.capture([&] { c.run(work, l.stream()); });
        // Steps 2 and 3 of 4: a primary and its secondary in steady state.
        const auto& primary = grids.at(1);
        const auto& secondary = grids.at(2);
        const auto [t0, t1] = course::timeline::window({&primary, &secondary});
        for (const auto& [g, kernel] : {std::pair{&primary, "primary"},
                                        std::pair{&secondary, "secondary"}}) {
            l.row(course::timeline::summarize(*g, kernel, t0, t1)
                      .str("schedule", name)
                      .integer("elements", static_cast<long long>(c.n)));
        }
        std::printf("timeline %-10s %9zu elements: %zu steps recorded\n", name,
                    c.n, grids.size());
    }
}
#endif

}  // namespace

int main(int argc, char** argv) {
    course::Lesson l = course::begin(
        argc, argv,
        {"day58_pdl", false, course::namesOf(kSchedules),
         // two ping-pong buffers of floats
         8.0,
         "Times a chain of K short dependent kernels under eight launch "
         "schedules, at three sizes and three chain lengths. --size N runs "
         "one size."});

    std::vector<size_t> sizes(std::begin(kSizes), std::end(kSizes));
    std::vector<int> lengths(std::begin(kChainLengths),
                             std::end(kChainLengths));
    if (l.args().size) {
        sizes = {l.args().size};
    } else if (l.args().quick) {
        sizes = {100003};
    }
    if (l.args().quick) {
        lengths = {4};
    }
    const size_t maxN = *std::max_element(sizes.begin(), sizes.end());

    std::vector<float> t(kTableSize);
    for (int j = 0; j < kTableSize; ++j) {
        t[j] = static_cast<float>(j % 3);
    }
    course::DeviceArray<float> buf0(maxN), buf1(maxN), table(t);
    if (!l.args().quick) {
        l.timing().batch = 10;  // ten chains a sample: 40 to 640 kernels
    }
    l.setting(course::Row().integer("threads", kThreads));

#if defined(DAY58_READ_BEFORE_WAIT)
    std::printf(
        "BUILT WITH DAY58_READ_BEFORE_WAIT: pdl-early reads its input "
        "before cudaGridDependencySynchronize()\n\n%10s %4s %-16s %8s "
        "%8s %14s\n",
        "elements", "K", "schedule", "trials", "wrong", "wrong elements");
    for (size_t n : sizes) {
        for (int k : lengths) {
            countRaces(l, Chain{n, k, {buf0, buf1}, table},
                       l.args().quick ? 3 : kRaceTrials);
        }
    }
#elif defined(COURSE_TIMELINE)
    for (size_t n : sizes) {
        timelines(l, Chain{n, 4, {buf0, buf1}, table});
    }
#else
    // Correctness first: every schedule, every size and K, exact.
    for (size_t n : sizes) {
        for (int k : lengths) {
            const Chain c{n, k, {buf0, buf1}, table};
            for (const Schedule* s : l.chosen(kSchedules)) {
                c.run(c.work(*s, l.stream()), l.stream());
                const course::Mismatch m = wrongElements(c);
                l.check(std::string(s->name) + " n=" + std::to_string(n) +
                            " K=" + std::to_string(k),
                        m.count == 0,
                        m.count == 0
                            ? "all " + std::to_string(n) + " elements exact"
                            : m.describe("elements"));
            }
        }
    }
    // Never time a wrong kernel.
    if (l.failures() == 0 && l.args().profile) {
        // One plain step per size, for ncu: how many waves, how busy.
        for (size_t n : sizes) {
            const Chain c{n, 1, {buf0, buf1}, table};
            course::profileRow(
                l, "step n=" + std::to_string(n),
                [&](cudaStream_t s) { c.enqueue(Kind::Plain, s); });
        }
    } else if (l.failures() == 0 && !l.args().checkOnly) {
        for (size_t n : sizes) {
            for (int k : lengths) {
                timeChain(l, Chain{n, k, {buf0, buf1}, table});
            }
        }
    }
#endif

    return l.finish();
}
