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

#include <fcntl.h>
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
    // List the checks, rows and settings a run with the other arguments
    // would make, touching no GPU: what the tools check a page's template
    // against before any record exists.
    bool describe = false;
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

// Creates a new file named `stem`.PID.K for the first K from 0 that no file
// has, with exclusive creation, so that nothing of anyone else's is ever
// opened, truncated or later removed in its place. Returns the descriptor
// (and the name in `name`), or -1 with errno set.
inline int openNew(const std::string& stem, std::string& name) {
    for (int k = 0; k < 100; ++k) {
        name = stem + "." + std::to_string(getpid()) + "." + std::to_string(k);
        const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 || errno != EEXIST) {
            return fd;
        }
    }
    return -1;
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
    std::string probe;
    const int fd = openNew(path + ".probe", probe);
    if (fd < 0) {
        return "--json '" + path +
               "' cannot be written: " + std::strerror(errno);
    }
    ::close(fd);
    std::remove(probe.c_str());  // the file openNew made, and only it
    return "";
}

// The lesson's minimum compute capability, as major * 10 + minor: CMake
// passes the MIN_CC its course_add_lesson() call declares
// (-DCOURSE_MIN_CC=90), so the program's gate, the page, the README and
// the build read one value. A copy compiled alone carries it too
// (tools/course standalone writes it at the top).
#ifndef COURSE_MIN_CC
#error \
    "COURSE_MIN_CC is not set: build the lesson with CMake, or pass -DCOURSE_MIN_CC=90 (its MIN_CC x 10)"
#endif
constexpr int kMinMajor = COURSE_MIN_CC / 10;
constexpr int kMinMinor = COURSE_MIN_CC % 10;

// The lesson's name, its CMake target, passed the same way
// (-DCOURSE_LESSON=dayNN_topic); a program built otherwise (an
// experiment) names itself in its LessonSpec.
#define COURSE_NAME_TEXT2(x) #x
#define COURSE_NAME_TEXT(x) COURSE_NAME_TEXT2(x)
#ifdef COURSE_LESSON
constexpr const char* kLessonName = COURSE_NAME_TEXT(COURSE_LESSON);
#else
constexpr const char* kLessonName = "course-program";
#endif

// What a lesson declares about itself for its opening, by name:
//   course::begin(argc, argv, {.variants = course::namesOf(kVersions),
//                              .bytesPerElement = 8.0, .about = "..."});
struct LessonSpec {
    const char* name = kLessonName;          // the CMake target
    bool clusters = false;                   // needs thread block clusters
    std::vector<std::string> variants = {};  // the names --only accepts
    // Device bytes the lesson allocates per element of --size, so a size
    // that cannot fit is refused before any allocation (0: no check).
    double bytesPerElement = 0.0;
    const char* about = "";  // one paragraph for --help: what --size means
    // The largest --size the lesson takes (its checks' limit: day 77's sums
    // of ones are exact below 2^24), refused with the other arguments.
    size_t maxSize = SIZE_MAX;
};

[[noreturn]] inline void usage(const LessonSpec& spec, const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", spec.name, why.c_str());
    std::fprintf(stderr,
                 "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
                 "[--check-only] [--json FILE] [--profile] [--describe]\n",
                 spec.name);
    std::exit(kExitUsage);
}

inline void printHelp(const LessonSpec& spec) {
    std::printf(
        "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
        "[--check-only] [--json FILE] [--profile] [--describe]\n\n%s\n\n"
        "  --size N      elements (a whole number; refused if the buffers "
        "would not fit)\n"
        "  --only NAME   one variant:",
        spec.name, spec.about);
    for (const std::string& v : spec.variants) {
        std::printf(" %s", v.c_str());
    }
    std::printf(
        "\n  --samples N   timing samples per row, 1 to %lld (default: rows "
        "compared are\n                sampled until the comparison rule "
        "decides; others 31)\n"
        "  --quick       the small run CTest and the sanitizers make\n"
        "  --check-only  check every row, time nothing (for sanitizers)\n"
        "  --json FILE   also write the results as JSON\n"
        "  --profile     check, then run each profiled row once (for ncu)\n"
        "  --describe    list the checks, rows and settings this run would "
        "make (with\n                --json: as JSON), without a GPU: "
        "nothing is run or timed\n"
        "  (--name=value is --name value)\n"
        "exit: 0 all checks passed, 1 a wrong result or CUDA error, 2 "
        "waived (no suitable GPU), 64 bad command line\n",
        kMaxSamples);
}

inline Args parseArgs(const LessonSpec& spec, int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        // --name=value is --name value.
        std::string inlined;
        bool hasInline = false;
        const size_t eq = arg.find('=');
        if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            inlined = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            hasInline = true;
        }
        auto value = [&]() -> const char* {
            if (hasInline) {
                hasInline = false;
                return inlined.c_str();
            }
            if (i + 1 >= argc) {
                usage(spec, arg + " expects a value");
            }
            return argv[++i];
        };
        unsigned long long x = 0;
        // A flag takes no value: "--quick=1" is refused, whatever the flag
        // (--help among them), before it acts.
        const bool flag = arg == "--quick" || arg == "--check-only" ||
                          arg == "--profile" || arg == "--describe" ||
                          arg == "--help" || arg == "-h";
        if (flag && hasInline) {
            usage(spec,
                  arg + " takes no value, got '" + arg + "=" + inlined + "'");
        }
        if (arg == "--size") {
            const char* v = value();
            if (!parseWhole(v, SIZE_MAX, x) || x == 0) {
                usage(spec, std::string("--size expects a whole number of "
                                        "elements above 0, got '") +
                                v + "'");
            }
            if (x > spec.maxSize) {
                usage(spec, "--size " + std::string(v) + " is above " +
                                spec.name + "'s largest, " +
                                std::to_string(spec.maxSize) + " (see --help)");
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
        } else if (arg == "--describe") {
            a.describe = true;
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
