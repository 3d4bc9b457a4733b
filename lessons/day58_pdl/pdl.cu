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
const std::vector<size_t> kSizes = {1u << 12, 1u << 18, 1u << 23};
const std::vector<int> kChainLengths = {4, 16, 64};  // --profile: 1 step

// How often the read-before-wait build repeats each check.
constexpr int kRaceTrials = 200;
#ifdef DAY58_READ_BEFORE_WAIT
constexpr bool kReadBeforeWait = true;  // the negative build: see below
#else
constexpr bool kReadBeforeWait = false;
#endif

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

using StepKernel = void (*)(const float*, float*, const float*, size_t);
// step<> for each Kind, in the enum's order.
const StepKernel kStepKernels[] = {step<Kind::Plain>, step<Kind::Pdl>,
                                   step<Kind::PdlPrologue>,
                                   step<Kind::PdlEarly>};

// The coefficient table, table[j] = j % 3. Launch: <<<1, kTableSize>>>.
__global__ void initTable(float* table) {
    table[threadIdx.x] = static_cast<float>(threadIdx.x % 3);
}

// Launch assumption: one thread per element.
__global__ void initInput(float* x, size_t n) {
    const size_t i = course::threadIndex();
    if (i < n) {
        x[i] = static_cast<float>(i % kTableSize);
    }
}

// The chain and its launcher: K steps over two ping-pong buffers.
struct Chain {
    size_t n;
    int k;
    float* buf[2];  // step s reads buf[s % 2], writes the other
    const float* table;

    unsigned int blocks() const {
        return static_cast<unsigned int>(course::ceilDiv(n, kThreads));
    }
    // What places a row of this chain in the record.
    course::Row at(const char* group) const {
        return course::Row()
            .str("group", group)
            .integer("elements", n)
            .integer("k", k);
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

    // A fresh input, x[i] = i % 1024, and a poisoned output.
    void reset(cudaStream_t stream) const {
        initInput<<<blocks(), kThreads, 0, stream>>>(buf[0], n);
        course::poison(buf[1], n, stream);
    }

    // `work` (the K steps) from a fresh input: how many elements are not
    // exactly x[i] + K table[i] after it.
    size_t wrongAfter(const course::Work& work, cudaStream_t stream) const {
        run(work, stream);
        return wrong().count;
    }
    void run(const course::Work& work, cudaStream_t stream) const {
        reset(stream);
        work(stream);
    }
    course::Mismatch wrong() const {
        return course::compareAll(
            course::toHost(buf[k % 2], n),
            [&](size_t i) {
                const size_t j = i % kTableSize;
                return static_cast<double>(j) + k * static_cast<double>(j % 3);
            },
            [](double g, double w) { return g == w; });
    }
};

// ---- The schedules, their checks, and main ----

namespace {

// snippet: schedules-table
// Every schedule, one line each: a new schedule is a line here (and, for
// a new kind of step, a case in step<>). `against`: what the comparison
// rule decides it against, the plain launch it replaces (in a stream, or
// in a graph); both baselines are also timed twice, the same code against
// itself, the rule's false-call rate.
struct Schedule {
    const char* name;
    Kind kind;
    bool graph;  // captured once into a CUDA graph, then replayed
    const char* against;
};
const Schedule kSchedules[] = {
    {"plain", Kind::Plain, false, ""},
    {"pdl", Kind::Pdl, false, "plain"},
    {"pdl-prologue", Kind::PdlPrologue, false, "plain"},
    {"pdl-early", Kind::PdlEarly, false, "plain"},
    {"graph-plain", Kind::Plain, true, "plain"},
    {"graph-pdl", Kind::Pdl, true, "graph-plain"},
    {"graph-pdl-prologue", Kind::PdlPrologue, true, "graph-plain"},
    {"graph-pdl-early", Kind::PdlEarly, true, "graph-plain"},
};
// end snippet

// A schedule's work: its K launches, or the same replayed from a graph.
course::Work workOf(const Chain& c, const Schedule& s, cudaStream_t stream) {
    const auto k = [&c, &s](cudaStream_t st) { c.enqueue(s.kind, st); };
    return s.graph ? course::replayed(stream, k) : course::Work(k);
}

// One chain: every schedule checked exactly, then timed together (batch:
// chains back to back), and what each costs per boundary and saves against
// plain launches, as rows of their own (group "boundary").
void timeChain(course::Lesson& l, const Chain& c) {
    const auto chosen = l.chosen(kSchedules, [&](const Schedule& s) {
        return !l.args().profile || s.kind == Kind::Plain;  // ncu: plain alone
    });
    std::vector<course::Case> cases;
    for (const Schedule* s : chosen) {
        cases.push_back({.name = s->name,
                         .work = workOf(c, *s, l.stream()),
                         .against = {s->against}});
    }
    const course::Ran ran = course::run(
        l,
        {.label = course::format("n=%zu K=%d", c.n, c.k),
         .key = "schedule",
         .fields = c.at("chain"),
         .modes = {course::TimingMode::Batch},
         .twins = {"plain", "graph-plain"},
         .check =
             [&](const course::Case& cs, const std::string&) {
                 return course::Checked{c.wrongAfter(cs.work, l.stream()) == 0,
                                        c.wrong().describe("elements")};
             }},
        cases);
    // Savings only where the set holds the plain launches (its first row).
    const bool plain = !chosen.empty() && chosen[0] == &kSchedules[0];
    for (size_t i = 0; i < (ran.sets.empty() ? 0 : chosen.size()); ++i) {
        const double us = 1000.0 * ran.sets[0].times[i].median,
                     plainUs = 1000.0 * ran.sets[0].times[0].median;
        l.row(c.at("boundary")
                  .str("schedule", chosen[i]->name)
                  .num("per_boundary_us", us / c.k)
                  .num("saving_per_boundary_us",
                       plain ? (plainUs - us) / c.k : 0.0));
    }
}

// The negative build's question: how often does reading before the wait
// go wrong, launched in a stream and replayed in a graph?
void countRaces(course::Lesson& l, const Chain& c, int trials) {
    for (const char* name : {"pdl-early", "graph-pdl-early"}) {
        const auto w = workOf(c, course::byName(kSchedules, name), l.stream());
        long long wrongRuns = 0, wrongElems = 0;
        for (int t = 0; t < trials; ++t) {
            const size_t bad = c.wrongAfter(w, l.stream());
            wrongRuns += bad != 0;
            wrongElems += bad;
        }
        l.row(c.at("read-before-wait")
                  .str("schedule", name)
                  .integer("trials", trials)
                  .integer("wrong_runs", wrongRuns)
                  .integer("wrong_elements", wrongElems));
        l.check(
            course::format("read-before-wait %s n=%zu K=%d", name, c.n, c.k),
            wrongRuns == 0,
            course::format("%lld of %d runs wrong", wrongRuns, trials));
    }
}

// One primary step and its secondary, block by block: when each started,
// passed its wait and ended; steps 2 and 3 of 4, in steady state.
void timelines(course::Lesson& l, const Chain& c) {
    course::timeline::Recorder rec(4u * c.blocks() + 64u);
    for (const char* name : {"plain", "pdl", "pdl-early", "graph-pdl"}) {
        const course::Work work =
            workOf(c, course::byName(kSchedules, name), l.stream());
        course::timeline::record(
            l, rec, {"", "primary", "secondary", ""},
            course::Row().str("schedule", name).integer("elements", c.n),
            [&] { c.run(work, l.stream()); });
    }
}

}  // namespace

int main(int argc, char** argv) {
    course::Lesson l = course::begin(
        argc, argv,
        {.variants = course::namesOf(kSchedules),
         .bytesPerElement = 8.0,  // two ping-pong buffers of floats
         .about = "Times a chain of K short dependent kernels, eight launch "
                  "schedules at three sizes and lengths; --size N: one size."});
    const std::vector<size_t> sizes =
        l.args().size    ? std::vector<size_t>{l.args().size}
        : l.args().quick ? std::vector<size_t>{100003}
                         : kSizes;
    const std::vector<int> lengths =
        l.args().quick || kReadBeforeWait || course::kTimelineBuild
            ? std::vector<int>{4}
            : (l.args().profile ? std::vector<int>{1} : kChainLengths);
    const size_t maxN = *std::max_element(sizes.begin(), sizes.end());
    const course::DeviceArray<float> buf0(maxN), buf1(maxN), table(kTableSize);
    course::launch(initTable, dim3(1), dim3(kTableSize), l.stream(), {},
                   table.get());
    // Ten chains a sample (40 to 640 kernels); two under --quick.
    l.timing().batch = l.args().quick ? 2 : 10;
    for (size_t n : sizes) {
        for (int k : lengths) {
            const Chain c{n, k, {buf0, buf1}, table};
            if (kReadBeforeWait) {
                countRaces(l, c, l.args().quick ? 3 : kRaceTrials);
            } else if (course::kTimelineBuild) {
                timelines(l, c);
            } else {
                timeChain(l, c);
            }
        }
    }
    return l.finish();
}
