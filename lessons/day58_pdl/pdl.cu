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

#include "course.cuh"

// 256 threads, one element per thread: the steps are deliberately short,
// so that what is measured is the boundary between them.
constexpr int kThreads = 256;

// The coefficient table each step loads in its prologue: 4 KiB, enough
// that loading it is real work to overlap, small enough for any block.
constexpr int kTableSize = 1024;

// The sizes: 2^12 elements is 16 blocks (a sliver of a 132-SM GPU: all
// boundary, no work); 2^18 is 1,024 blocks, under the 1,056 that 132 SMs
// hold at once (2,048 threads per SM: 8 blocks of 256), so one wave; 2^23
// is 32,768 blocks, about 31 waves, enough DRAM work per step that a
// microsecond boundary should fade. --quick: one ragged size.
const course::Sizes kSizes = {.run = {1u << 12, 1u << 18, 1u << 23},
                              .quick = {100003}};
// Chain lengths: --quick's one; --profile's one step, what ncu reads.
const course::Sizes kLengths = {
    .run = {4, 16, 64}, .quick = {4}, .profile = {1}};

// The negative build (CMakeLists.txt's VARIANTS) defines this to 1: its
// pdl-early step reads its input before the wait, and the lesson counts how
// often the result comes out wrong in kRaceTrials runs.
#ifndef DAY58_READ_BEFORE_WAIT
#define DAY58_READ_BEFORE_WAIT 0
#endif
constexpr int kRaceTrials = 200;

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
    float early = 0.0f;  // the negative build's premature read

    if constexpr (kKind == Kind::PdlEarly || kKind == Kind::PdlPrologue) {
        if constexpr (kKind == Kind::PdlEarly) {
            // This block lets the next step launch, once every block has.
            // It says nothing about memory: the next step still waits for
            // this grid to complete.
            cudaTriggerProgrammaticLaunchCompletion();
        }
        if constexpr (DAY58_READ_BEFORE_WAIT) {
            // THE BUG: x is the previous step's output, and it may not be
            // complete yet. Never read a predecessor's output before the
            // wait.
            early = (i < n) ? x[i] : 0.0f;
        }
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
        const bool bug = DAY58_READ_BEFORE_WAIT && kKind == Kind::PdlEarly;
        y[i] = (bug ? early : x[i]) + coeff[i % kTableSize];
    }
    COURSE_BLOCK_END();
}
// end snippet

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

// The chain's two ping-pong buffers (step s reads gBuf[s % 2]) and its
// table, made by main's setup after the GPU gate, for the largest size.
course::DeviceArray<float> gBuf[2], gTable;

// snippet: schedules-table
// Every schedule, one line each: a new schedule is a line here (and, for
// a new kind of step, a case in step<>). `against`: what the comparison
// rule decides it against, the plain launch it replaces (in a stream, or
// in a graph); both baselines are also timed twice, the same code against
// itself, the rule's false-call rate.
struct Schedule {
    const char* name;
    void (*step)(const float*, float*, const float*, size_t);  // step<Kind>
    bool graph;  // captured once into a CUDA graph, then replayed
    std::vector<std::string> against;
};
const Schedule kSchedules[] = {
    {"plain", step<Kind::Plain>, false, {}},
    {"pdl", step<Kind::Pdl>, false, {"plain"}},
    {"pdl-prologue", step<Kind::PdlPrologue>, false, {"plain"}},
    {"pdl-early", step<Kind::PdlEarly>, false, {"plain"}},
    {"graph-plain", step<Kind::Plain>, true, {"plain"}},
    {"graph-pdl", step<Kind::Pdl>, true, {"graph-plain"}},
    {"graph-pdl-prologue", step<Kind::PdlPrologue>, true, {"graph-plain"}},
    {"graph-pdl-early", step<Kind::PdlEarly>, true, {"graph-plain"}},
};
// end snippet

// snippet: pdl-chain
// K steps over n elements, as one piece of work. Every step but a plain
// one asks to be launched while its predecessor still runs (course::launch,
// the header's one cudaLaunchKernelEx call with the dependent-launch
// attribute).
course::Work chainOf(const Schedule& s, size_t n, int k) {
    course::LaunchAttrs attrs;
    attrs.dependent = s.step != step<Kind::Plain>;
    return [step = s.step, attrs, n, k](cudaStream_t stream) {
        for (int st = 0; st < k; ++st) {
            course::launch(step, course::ceilDiv(n, kThreads), kThreads, stream,
                           attrs, gBuf[st % 2], gBuf[(st + 1) % 2], gTable, n);
        }
    };
}
// end snippet

// One chain of K steps: every schedule checked exactly from a fresh input,
// then timed together (batch: chains back to back; per_call_us is a
// step's share). Under --profile, plain launches alone (for ncu); in the
// negative build, pdl-early's two schedules, each checked kRaceTrials times;
// in the timeline build, a primary step and its secondary, block by block
// (the second and third steps, in steady state): when each started, passed its
// wait and ended.
course::Experiment chain(size_t n, int k, const course::Args& args) {
    course::Experiment e{
        .group = DAY58_READ_BEFORE_WAIT ? "read-before-wait" : "chain",
        .label = course::format("n=%zu K=%d", n, k),
        .key = "schedule",
        .size = n,
        .fields = course::Row().integer("k", k),
        .modes = {course::TimingMode::Batch},
        .twins = {"plain", "graph-plain"},
        // A fresh input, x[i] = i % 1024, and a poisoned output.
        .inputs =
            {{"",
              [n](cudaStream_t s) {
                  initInput<<<course::ceilDiv(n, kThreads), kThreads, 0, s>>>(
                      gBuf[0], n);
                  course::poison(gBuf[1].get(), n, s);
              }}},
        // After K steps every element is x[i] + K table[i] exactly: whole
        // numbers under 2^24.
        .check =
            [n, k](const course::Checking& at) {
                at.row.work(at.stream);
                return course::expectAll(gBuf[k % 2].get(), n, [k](size_t i) {
                    const size_t j = i % kTableSize;  // x[i] + K table[i]
                    return static_cast<double>(j + k * (j % 3));
                });
            },
        .repeat = DAY58_READ_BEFORE_WAIT ? (args.quick ? 3 : kRaceTrials) : 1,
        .timeline = {.rows = {"plain", "pdl", "pdl-early", "graph-pdl"},
                     .kernels = {"", "primary", "secondary", ""}}};
    for (const Schedule& s : kSchedules) {
        if (args.profile
                ? s.step == step<Kind::Plain>
                : !DAY58_READ_BEFORE_WAIT || s.step == step<Kind::PdlEarly>) {
            e.cases.push_back({.name = s.name,
                               .work = chainOf(s, n, k),
                               .against = s.against,
                               .replay = s.graph,
                               .calls = k});
        }
    }
    return e;
}

int main(int argc, char** argv) {
    course::Lesson l(
        argc, argv,
        {.text = "Times a chain of K short dependent kernels, eight launch "
                 "schedules at three sizes and lengths.",
         .unit = "elements each step adds (one size for every chain)",
         .bytesEach = 8.0});  // two ping-pong buffers of floats
    l.timing().batch = 10;    // ten chains a sample: 40 to 640 kernels
    for (size_t n : l.sizes(kSizes)) {
        for (size_t k : l.pick(kLengths)) {
            l.add(chain(n, static_cast<int>(k), l.args()));
        }
    }
    return l.run([&] {
        gBuf[0].resize(l.largest());
        gBuf[1].resize(l.largest());
        gTable.resize(kTableSize);
        initTable<<<1, kTableSize, 0, l.stream()>>>(gTable);
    });
}
