// SPDX-License-Identifier: MIT
//
// course/cli.cuh: the command line every day shares, and what a lesson
// declares about itself for it.

#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "course/check.cuh"

namespace course {

// The most samples a row may ask for: 10,000 of a 1 ms kernel is ten
// seconds, already past any useful precision, and the count stays far
// from int's range.
constexpr long long kMaxSamples = 10000;

struct Args {
    size_t size = 0;         // 0: the lesson's own default
    std::string json;        // empty: no JSON file
    std::string only;        // empty: every variant
    int samples = 0;         // 0: TimingOptions' default
    bool quick = false;      // the small run CTest and the sanitizers make
    bool checkOnly = false;  // check every row, time nothing (sanitizers)
    bool profile = false;    // check, then run each row once, for ncu
};

// Parses a whole number: digits only (no sign, no space, no 0x), and no
// larger than `limit`.
inline bool parseWhole(const char* v, unsigned long long limit,
                       unsigned long long& out) {
    if (v == nullptr || *v < '0' || *v > '9') {
        return false;
    }
    unsigned long long x = 0;
    for (const char* p = v; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9') {
            return false;
        }
        const unsigned long long d = static_cast<unsigned long long>(*p - '0');
        if (x > (limit - d) / 10) {
            return false;
        }
        x = x * 10 + d;
    }
    out = x;
    return true;
}

// --json FILE: a regular file or none yet, in a folder we can write, found
// out now rather than after minutes of GPU work. Returns "" or the reason.
inline std::string jsonPathProblem(const std::string& path) {
    if (path.empty()) {
        return "--json expects a file name, got an empty one";
    }
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        return "--json '" + path +
               "' exists and is not a regular file (a device, a folder or a "
               "pipe); expected a file name to write";
    }
    const std::string probe = path + ".probe." + std::to_string(getpid());
    FILE* f = std::fopen(probe.c_str(), "wb");
    if (f == nullptr) {
        return "--json '" + path +
               "' cannot be written: " + std::strerror(errno);
    }
    std::fclose(f);
    std::remove(probe.c_str());
    return "";
}

// What a lesson declares about itself for its opening.
struct LessonSpec {
    const char* name;                   // the CMake target, e.g. dayNN_topic
    int minMajor, minMinor;             // the capability gate's minimum
    bool needsClusters;                 // thread block cluster launch
    std::vector<std::string> variants;  // the names --only accepts
    // Device bytes the lesson allocates per element of --size, so a size
    // that cannot fit is refused before any allocation.
    double bytesPerElement;
    const char* about;  // one paragraph for --help: what --size means, ...
};

[[noreturn]] inline void usage(const LessonSpec& spec, const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", spec.name, why.c_str());
    std::fprintf(stderr,
                 "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
                 "[--check-only] [--json FILE] [--profile]\n",
                 spec.name);
    std::exit(kExitUsage);
}

inline void printHelp(const LessonSpec& spec) {
    std::printf(
        "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
        "[--check-only] [--json FILE] [--profile]\n\n%s\n\n"
        "  --size N      elements (a whole number; refused if the buffers "
        "would not fit)\n"
        "  --only NAME   one variant:",
        spec.name, spec.about);
    for (const std::string& v : spec.variants) {
        std::printf(" %s", v.c_str());
    }
    std::printf(
        "\n  --samples N   timing samples per row, 1 to %lld (default 31)\n"
        "  --quick       the small run CTest and the sanitizers make\n"
        "  --check-only  check every row, time nothing (for sanitizers)\n"
        "  --json FILE   also write the results as JSON\n"
        "  --profile     check, then run each profiled row once (for ncu)\n"
        "exit: 0 all checks passed, 1 a wrong result or CUDA error, 2 "
        "waived (no suitable GPU), 64 bad command line\n",
        kMaxSamples);
}

inline Args parseArgs(const LessonSpec& spec, int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                usage(spec, arg + " expects a value");
            }
            return argv[++i];
        };
        unsigned long long x = 0;
        if (arg == "--size") {
            const char* v = value();
            if (!parseWhole(v, SIZE_MAX, x) || x == 0) {
                usage(spec, std::string("--size expects a whole number of "
                                        "elements above 0, got '") +
                                v + "'");
            }
            a.size = static_cast<size_t>(x);
        } else if (arg == "--samples") {
            const char* v = value();
            if (!parseWhole(v, static_cast<unsigned long long>(kMaxSamples),
                            x) ||
                x == 0) {
                usage(spec, std::string("--samples expects a whole number "
                                        "from 1 to ") +
                                std::to_string(kMaxSamples) + ", got '" + v +
                                "'");
            }
            a.samples = static_cast<int>(x);
        } else if (arg == "--json") {
            a.json = value();
            const std::string problem = jsonPathProblem(a.json);
            if (!problem.empty()) {
                usage(spec, problem);
            }
        } else if (arg == "--only") {
            a.only = value();
            if (std::find(spec.variants.begin(), spec.variants.end(), a.only) ==
                spec.variants.end()) {
                std::string known;
                for (const std::string& v : spec.variants) {
                    known += (known.empty() ? "" : ", ") + v;
                }
                usage(spec, "--only does not know '" + a.only +
                                "'; expected one of: " + known);
            }
        } else if (arg == "--quick") {
            a.quick = true;
        } else if (arg == "--check-only") {
            a.checkOnly = true;
        } else if (arg == "--profile") {
            a.profile = true;
        } else if (arg == "--help" || arg == "-h") {
            printHelp(spec);
            std::exit(kExitOk);
        } else {
            usage(spec, "unknown argument '" + arg + "'");
        }
    }
    return a;
}

}  // namespace course
