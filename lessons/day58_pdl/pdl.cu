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
//   schedule          how each step is launched and where it waits
//   plain             <<<>>> in one stream: the baseline
//   pdl               cudaLaunchKernelEx + the programmatic stream
//                     serialization attribute; cudaGridDependencySynchronize()
//                     is the kernel's first statement
//   pdl-prologue      the same launch; the kernel does its prologue (loading
//                     its coefficient table, which nothing upstream writes)
//                     before the wait; the trigger stays implicit
//   pdl-early         the same launch; the kernel first calls
//                     cudaTriggerProgrammaticLaunchCompletion() (so its own
//                     successor may launch), then does the prologue that
//                     needs nothing from its predecessor (loading its
//                     coefficient table), then waits, then reads its input
//   graph-*           each of the four captured once into a CUDA graph and
//                     replayed; capture turns the PDL launches into
//                     programmatic edges
//
// Each step computes y[i] = x[i] + table[i % 1024], table[j] = j % 3. The
// input starts as x[i] = i % 1024, so after K steps every element is an
// exact whole number (under 2^24) and the check is exact: a wrong result
// names the schedule and the first wrong element.
//
// The table reports, per schedule, the median time of the whole chain and
// the time per kernel boundary (chain time / K; back-to-back chains make K
// boundaries per chain), the spread, and the saving per boundary against
// plain launches, for several K and sizes.
//
// Built with -DDAY58_READ_BEFORE_WAIT (target day58_pdl_read_before_wait,
// not built by default) the pdl-early kernel reads its input BEFORE
// cudaGridDependencySynchronize(): the bug this lesson exists to prevent.
// That build repeats the pdl-early check many times per size and reports
// how often the result was wrong.
//
// Build:  cmake --build build --target day58_pdl
//   or:   nvcc -std=c++17 -O3 -arch=sm_90 -I common -o pdl \
//         lessons/day58_pdl/pdl.cu
// Run:    build/lessons/day58_pdl/day58_pdl [--size N] [--json FILE]
//
// Needs compute capability 9.0: griddepcontrol, the instructions behind
// the two device calls, exists from sm_90 on. Older GPUs get the waived
// exit code before anything is allocated.
//
// Whether this program has run on real hardware is not written here: the
// day's README shows the promoted run and its provenance, or says
// UNVERIFIED. See research/REVIEW-PROCESS.md.

#include <cstdio>
#include <cstdlib>
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

// The chain lengths and sizes of the default run. 2^12 elements is 16
// blocks (a sliver of a 132-SM GPU: all boundary, no work); 2^18 is 1,024
// blocks (about one wave); 2^23 is 32 MiB per buffer, enough DRAM work
// per step (~15 us) that a microsecond boundary should fade.
const int kChainLengths[] = {4, 16, 64};
const size_t kSizes[] = {1u << 12, 1u << 18, 1u << 23};

#ifdef DAY58_READ_BEFORE_WAIT
// How often the read-before-wait build repeats each check.
constexpr int kRaceTrials = 200;
#endif

enum class Schedule { Plain, Pdl, PdlPrologue, PdlEarly };

const char* scheduleName(Schedule s, bool graph) {
    switch (s) {
        case Schedule::Plain:
            return graph ? "graph-plain" : "plain";
        case Schedule::Pdl:
            return graph ? "graph-pdl" : "pdl";
        case Schedule::PdlPrologue:
            return graph ? "graph-pdl-prologue" : "pdl-prologue";
        default:
            return graph ? "graph-pdl-early" : "pdl-early";
    }
}

// snippet: pdl-step
// One step of the chain. Launch assumption: blockDim.x == kThreads; for
// kSchedule != Plain, launched with launchDependent() so that the PDL
// calls mean something (without the attribute they return at once).
template <Schedule kSchedule>
__global__ void step(const float* __restrict__ x, float* __restrict__ y,
                     const float* __restrict__ table, size_t n) {
    __shared__ float coeff[kTableSize];
    const size_t i = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
#ifdef DAY58_READ_BEFORE_WAIT
    float early = 0.0f;
#endif

    if constexpr (kSchedule == Schedule::PdlEarly ||
                  kSchedule == Schedule::PdlPrologue) {
        if constexpr (kSchedule == Schedule::PdlEarly) {
            // Let the next step's blocks launch now. This says nothing
            // about memory: the next step still waits for this grid to
            // complete. (pdl-prologue leaves the trigger implicit, at the
            // end of each block, to tell the two effects apart.)
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
        if constexpr (kSchedule == Schedule::Pdl) {
            cudaGridDependencySynchronize();  // first statement: safe
        }
        for (int k = threadIdx.x; k < kTableSize; k += kThreads) {
            coeff[k] = table[k];
        }
    }
    __syncthreads();  // the whole table loaded before any thread reads it

    if (i < n) {
#if defined(DAY58_READ_BEFORE_WAIT)
        const float in =
            (kSchedule != Schedule::Plain && kSchedule != Schedule::Pdl) ? early
                                                                         : x[i];
#else
        const float in = x[i];
#endif
        y[i] = in + coeff[i % kTableSize];
    }
}
// end snippet

// snippet: pdl-launch
// Launches one step so that it may start before the previous kernel in
// the stream has finished: cudaLaunchKernelEx with the programmatic stream
// serialization attribute. Day 77's cluster-launch is the same machinery
// with the cluster-dimension attribute in its place.
template <typename... KernelArgs, typename... Args>
void launchDependent(void (*kernel)(KernelArgs...), unsigned int blocks,
                     cudaStream_t stream, Args... args) {
    cudaLaunchAttribute attrs[1];
    attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[0].val.programmaticStreamSerializationAllowed = 1;

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;  // a created stream: capture needs one
    cfg.attrs = attrs;
    cfg.numAttrs = 1;

    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}
// end snippet

namespace {

struct Chain {
    size_t n;
    int k;
    float* buf[2];  // ping-pong: step s reads buf[s % 2], writes the other
    const float* table;
    cudaStream_t stream;

    unsigned int blocks() const {
        return static_cast<unsigned int>((n + kThreads - 1) / kThreads);
    }

    // Enqueues the K steps of one schedule on the stream.
    void enqueue(Schedule s) const {
        for (int st = 0; st < k; ++st) {
            const float* x = buf[st % 2];
            float* y = buf[(st + 1) % 2];
            switch (s) {
                case Schedule::Plain:
                    step<Schedule::Plain>
                        <<<blocks(), kThreads, 0, stream>>>(x, y, table, n);
                    CUDA_CHECK(cudaGetLastError());
                    break;
                case Schedule::Pdl:
                    launchDependent(step<Schedule::Pdl>, blocks(), stream, x, y,
                                    table, n);
                    break;
                case Schedule::PdlPrologue:
                    launchDependent(step<Schedule::PdlPrologue>, blocks(),
                                    stream, x, y, table, n);
                    break;
                case Schedule::PdlEarly:
                    launchDependent(step<Schedule::PdlEarly>, blocks(), stream,
                                    x, y, table, n);
                    break;
            }
        }
    }

    // The same K steps captured once into an executable graph.
    cudaGraphExec_t capture(Schedule s) const {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        enqueue(s);
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_CHECK(cudaGraphDestroy(graph));
        return exec;
    }
};

__global__ void initInput(float* x, size_t n) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n)
        x[i] = static_cast<float>(i % kTableSize);
}

// Runs one chain from a fresh input and compares every element exactly.
// Returns the number of wrong elements; `first` gets the first one.
size_t runAndCheck(const Chain& c, Schedule s, cudaGraphExec_t exec,
                   std::vector<float>& host, size_t& first, float& got,
                   float& want) {
    initInput<<<c.blocks(), kThreads, 0, c.stream>>>(c.buf[0], c.n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemsetAsync(c.buf[1], 0xff, c.n * sizeof(float), c.stream));
    if (exec != nullptr) {
        CUDA_CHECK(cudaGraphLaunch(exec, c.stream));
    } else {
        c.enqueue(s);
    }
    CUDA_CHECK(cudaStreamSynchronize(c.stream));
    CUDA_CHECK(cudaMemcpy(host.data(), c.buf[c.k % 2], c.n * sizeof(float),
                          cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < c.n; ++i) {
        const float w =
            static_cast<float>(i % kTableSize) +
            static_cast<float>(c.k) * static_cast<float>((i % kTableSize) % 3);
        if (host[i] != w) {
            if (bad++ == 0) {
                first = i;
                got = host[i];
                want = w;
            }
        }
    }
    return bad;
}

}  // namespace

int main(int argc, char** argv) {
    const char* kName = "day58_pdl";
    const course::Args args = course::Args::parse(
        kName, argc, argv,
        "--only takes a schedule: plain, pdl, pdl-prologue, pdl-early, "
        "graph-plain, graph-pdl, graph-pdl-prologue, graph-pdl-early\n");
    const Schedule schedules[] = {Schedule::Plain, Schedule::Pdl,
                                  Schedule::PdlPrologue, Schedule::PdlEarly};
    if (!args.only.empty()) {
        bool known = false;
        for (Schedule s : schedules)
            for (bool g : {false, true})
                known |= args.only == scheduleName(s, g);
        if (!known) {
            args.usage(("--only does not know '" + args.only + "'").c_str(),
                       nullptr);
        }
    }
    const cudaDeviceProp prop = course::requireGpu(kName, {9, 0, false});

    std::vector<size_t> sizes;
    std::vector<int> lengths;
    if (args.size) {
        sizes.push_back(args.size);
    } else if (args.quick) {
        sizes.push_back(100003);
    } else {
        sizes.assign(std::begin(kSizes), std::end(kSizes));
    }
    if (args.quick) {
        lengths.push_back(4);
    } else {
        lengths.assign(std::begin(kChainLengths), std::end(kChainLengths));
    }
    size_t maxN = 0;
    for (size_t s : sizes)
        maxN = s > maxN ? s : maxN;

    course::Report report(kName);
    report.gpu(prop);
    course::TimingOptions timing = args.timing();
    if (!args.quick)
        timing.batch = 10;  // ten chains a sample: 40-640 kernels
    report.setting(course::Row()
                       .integer("threads", kThreads)
                       .integer("samples", timing.samples)
                       .integer("chains_per_sample", timing.batch)
#ifdef DAY58_READ_BEFORE_WAIT
                       .boolean("read_before_wait", true)
#else
                       .boolean("read_before_wait", false)
#endif
    );
    std::printf("GPU: %s (compute capability %d.%d), %d SMs\n", prop.name,
                prop.major, prop.minor, prop.multiProcessorCount);

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float* buf0 = nullptr;
    float* buf1 = nullptr;
    float* table = nullptr;
    CUDA_CHECK(cudaMalloc(&buf0, maxN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&buf1, maxN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&table, kTableSize * sizeof(float)));
    {
        std::vector<float> t(kTableSize);
        for (int j = 0; j < kTableSize; ++j)
            t[j] = static_cast<float>(j % 3);
        CUDA_CHECK(cudaMemcpy(table, t.data(), sizeof(float) * kTableSize,
                              cudaMemcpyHostToDevice));
    }
    std::vector<float> host(maxN);

#ifdef DAY58_READ_BEFORE_WAIT
    // The negative build: how often does reading before the wait go wrong?
    std::printf(
        "BUILT WITH DAY58_READ_BEFORE_WAIT: pdl-early reads its input "
        "before cudaGridDependencySynchronize()\n\n%10s %4s %8s %8s "
        "%14s\n",
        "elements", "K", "trials", "wrong", "wrong elements");
    int wrongRuns = 0;
    for (size_t n : sizes) {
        for (int k : lengths) {
            const Chain c{n, k, {buf0, buf1}, table, stream};
            for (bool graph : {false, true}) {
                cudaGraphExec_t exec =
                    graph ? c.capture(Schedule::PdlEarly) : nullptr;
                int wrong = 0;
                size_t wrongElems = 0;
                for (int t = 0; t < kRaceTrials; ++t) {
                    size_t first = 0;
                    float got = 0, want = 0;
                    const size_t bad = runAndCheck(c, Schedule::PdlEarly, exec,
                                                   host, first, got, want);
                    wrong += bad != 0;
                    wrongElems += bad;
                }
                if (exec)
                    CUDA_CHECK(cudaGraphExecDestroy(exec));
                std::printf("%10zu %4d %8d %8d %14zu  %s\n", n, k, kRaceTrials,
                            wrong, wrongElems,
                            scheduleName(Schedule::PdlEarly, graph));
                report.row(course::Row()
                               .str("schedule",
                                    scheduleName(Schedule::PdlEarly, graph))
                               .integer("elements", static_cast<long long>(n))
                               .integer("k", k)
                               .integer("trials", kRaceTrials)
                               .integer("wrong_runs", wrong)
                               .integer("wrong_elements",
                                        static_cast<long long>(wrongElems)));
                wrongRuns += wrong;
            }
        }
    }
    std::printf("\nread-before-wait: %d wrong runs in total\n", wrongRuns);
    const int exitCode = wrongRuns ? course::kExitFailed : course::kExitOk;
#else
    // Correctness first: every schedule, every size and K, exact.
    int failures = 0;
    for (size_t n : sizes) {
        for (int k : lengths) {
            const Chain c{n, k, {buf0, buf1}, table, stream};
            for (Schedule s : schedules) {
                for (bool graph : {false, true}) {
                    const std::string name = scheduleName(s, graph);
                    if (!args.wants(name.c_str()))
                        continue;
                    cudaGraphExec_t exec = graph ? c.capture(s) : nullptr;
                    size_t first = 0;
                    float got = 0, want = 0;
                    const size_t bad =
                        runAndCheck(c, s, exec, host, first, got, want);
                    if (exec)
                        CUDA_CHECK(cudaGraphExecDestroy(exec));
                    char detail[200];
                    if (bad == 0) {
                        std::snprintf(detail, sizeof detail,
                                      "all %zu elements exact", n);
                    } else {
                        std::snprintf(detail, sizeof detail,
                                      "%zu wrong elements; first at %zu: got "
                                      "%.9g, want %.9g",
                                      bad, first, got, want);
                        std::fprintf(stderr, "%s (n=%zu, K=%d): %s\n",
                                     name.c_str(), n, k, detail);
                        ++failures;
                    }
                    report.check(name + " n=" + std::to_string(n) +
                                     " K=" + std::to_string(k),
                                 bad == 0, detail);
                }
            }
        }
    }
    const int exitCode = failures ? course::kExitFailed : course::kExitOk;
    if (failures != 0) {
        std::fprintf(stderr, "%s: %d check(s) failed; nothing was timed\n",
                     kName, failures);
        lengths.clear();  // skip the timing, fall through to the cleanup
    } else {
        std::printf("every schedule checked exactly at every size and K\n");
    }

    for (size_t n : sizes) {
        for (int k : lengths) {
            const Chain c{n, k, {buf0, buf1}, table, stream};
            std::printf("\n%zu elements (%u blocks), K = %d steps\n", n,
                        c.blocks(), k);
            std::printf("%-16s %11s %7s %13s %15s\n", "schedule", "chain us",
                        "spread", "per boundary", "saving/boundary");
            double plainUs = 0.0;
            for (bool graph : {false, true}) {
                for (Schedule s : schedules) {
                    const std::string name = scheduleName(s, graph);
                    if (!args.wants(name.c_str()))
                        continue;
                    cudaGraphExec_t exec = graph ? c.capture(s) : nullptr;
                    const course::TimingResult t = course::timeKernel(
                        [&] {
                            if (exec) {
                                CUDA_CHECK(cudaGraphLaunch(exec, stream));
                            } else {
                                c.enqueue(s);
                            }
                        },
                        course::TimingMode::Batch, timing, stream);
                    if (exec)
                        CUDA_CHECK(cudaGraphExecDestroy(exec));
                    const double us = 1000.0 * t.median_ms;
                    if (s == Schedule::Plain && !graph)
                        plainUs = us;
                    const double saving =
                        plainUs > 0.0 ? (plainUs - us) / k : 0.0;
                    std::printf("%-16s %11.2f %6.1f%% %10.3f us %12.3f us\n",
                                name.c_str(), us, 100.0 * t.iqr_half_rel,
                                us / k, saving);
                    report.row(
                        course::Row()
                            .str("schedule", name)
                            .str("mode", name)
                            .integer("elements", static_cast<long long>(n))
                            .integer("k", k)
                            .timing(t)
                            .num("per_boundary_us", us / k)
                            .num("saving_per_boundary_us", saving));
                }
            }
        }
    }
#endif

    CUDA_CHECK(cudaFree(buf0));
    CUDA_CHECK(cudaFree(buf1));
    CUDA_CHECK(cudaFree(table));
    CUDA_CHECK(cudaStreamDestroy(stream));
    if (!report.write(args.json))
        return course::kExitFailed;
    if (exitCode == course::kExitOk) {
        std::printf("\nall %s checks passed\n", kName);
    }
    return exitCode;
}
