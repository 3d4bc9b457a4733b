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
#include <functional>
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
    size_t size = 0;         // 0: the lesson's own sizes
    std::string json;        // empty: no JSON file
    std::string only;        // empty: every row and group
    int samples = 0;         // 0: TimingOptions' default
    bool quick = false;      // the small run CTest and the sanitizers make
    bool checkOnly = false;  // check every row, time nothing (sanitizers)
    bool profile = false;    // check, then run each row once, for ncu
    bool list = false;       // print the plan from the lesson's data; no GPU
    bool help = false;
    // The seed of the rows' order in every set (0: one drawn for this run;
    // the record keeps it either way, so any run's order can be made again).
    unsigned long long seed = 0;
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
// experiment) names itself in its About.
#define COURSE_NAME_TEXT2(x) #x
#define COURSE_NAME_TEXT(x) COURSE_NAME_TEXT2(x)
#ifdef COURSE_LESSON
constexpr const char* kLessonName = COURSE_NAME_TEXT(COURSE_LESSON);
#else
constexpr const char* kLessonName = "course-program";
#endif

// One of a lesson's GPU settings: its name, and the variable its setup
// sets (an int or a bool, recorded as a whole number).
struct GpuSetting {
    GpuSetting(const char* n, const int* v)
        : name(n), value([v] { return *v; }) {}
    GpuSetting(const char* n, const bool* v)
        : name(n), value([v] { return *v ? 1 : 0; }) {}
    const char* name;
    std::function<long long()> value;
};

// What a lesson says about itself, by name:
//   course::Lesson l(argc, argv, {.text = "...", .unit = "elements", ...});
struct About {
    const char* name = kLessonName;  // the CMake target
    const char* text = "";           // one paragraph for --help
    const char* unit = "elements";   // what --size N counts, for --help
    // The field that holds a step's size in each of its rows.
    const char* sizeField = "elements";
    // Device bytes the lesson allocates per unit of --size: a size that
    // cannot fit is refused before the GPU is asked (see kMaxDeviceBytes),
    // and a planned size this GPU cannot hold is left out, said so.
    double bytesEach = 0.0;
    size_t maxSize = SIZE_MAX;  // the largest --size its checks allow
    bool clusters = false;      // needs thread block clusters
    // The settings the lesson's setup finds on the GPU it runs on (a grid
    // sized to the machine): listed by name, known only when run, and
    // recorded from where the setup left them once it returns.
    std::vector<GpuSetting> gpuSettings = {};
};

// More device memory than any GPU of 2026 has (the H200: 141 GB, the
// B200: 180 GB): a --size whose buffers need more is refused at once, on a
// machine with or without a GPU, rather than after the capability gate.
constexpr double kMaxDeviceBytes = 256.0 * (1ull << 30);

// The largest --size: the lesson's own limit, or what kMaxDeviceBytes holds.
inline size_t largestSize(const About& about) {
    return about.bytesEach > 0.0
               ? std::min(about.maxSize, static_cast<size_t>(kMaxDeviceBytes /
                                                             about.bytesEach))
               : about.maxSize;
}

[[noreturn]] inline void usage(const About& about, const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", about.name, why.c_str());
    std::fprintf(stderr,
                 "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
                 "[--check-only] [--json FILE] [--profile] [--list] "
                 "[--seed N]\n",
                 about.name);
    std::exit(kExitUsage);
}

// --help: what each option does here, --size in this lesson's own unit,
// and the names --only takes (the lesson's rows and groups).
inline void printHelp(const About& about,
                      const std::vector<std::string>& names) {
    std::printf(
        "usage: %s [--size N] [--only NAME] [--samples N] [--quick] "
        "[--check-only] [--json FILE] [--profile] [--list] [--seed N]\n\n"
        "%s\n\n  --size N      %s (a whole number; one size instead of the "
        "lesson's own)\n  --only NAME   one row or group:",
        about.name, about.text, about.unit);
    for (const std::string& v : names) {
        std::printf(" %s", v.c_str());
    }
    std::printf(
        "\n  --samples N   timing samples per row, 1 to %lld (default: rows "
        "compared are\n                sampled until the comparison rule "
        "decides; others 31)\n"
        "  --quick       the small run CTest and the sanitizers make\n"
        "  --check-only  check every row, time nothing (for sanitizers)\n"
        "  --json FILE   also write the results as JSON\n"
        "  --profile     check, then run each row once (for ncu)\n"
        "  --list        print the checks, rows and comparisons a run with "
        "these options\n                would make (with --json: as JSON); "
        "needs no GPU, runs nothing\n"
        "  --seed N      the seed of the rows' order in each set (default: "
        "drawn, and kept\n                in the results)\n"
        "  (--name=value is --name value)\n"
        "exit: 0 all checks passed, 1 a wrong result or CUDA error, 2 "
        "waived (no suitable GPU), 64 bad command line\n",
        kMaxSamples);
}

inline Args parseArgs(const About& about, int argc, char** argv) {
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
                usage(about, arg + " expects a value");
            }
            return argv[++i];
        };
        unsigned long long x = 0;
        // A flag takes no value: "--quick=1" is refused, whatever the flag
        // (--help among them), before it acts.
        const bool flag = arg == "--quick" || arg == "--check-only" ||
                          arg == "--profile" || arg == "--list" ||
                          arg == "--help" || arg == "-h";
        if (flag && hasInline) {
            usage(about,
                  arg + " takes no value, got '" + arg + "=" + inlined + "'");
        }
        if (arg == "--size") {
            const char* v = value();
            if (!parseWhole(v, SIZE_MAX, x) || x == 0) {
                usage(about, std::string("--size expects a whole number of ") +
                                 about.unit + " above 0, got '" + v + "'");
            }
            if (x > largestSize(about)) {
                usage(about, "--size " + std::string(v) + " is above " +
                                 about.name + "'s largest, " +
                                 std::to_string(largestSize(about)) +
                                 " (see --help)");
            }
            a.size = static_cast<size_t>(x);
        } else if (arg == "--samples") {
            const char* v = value();
            if (!parseWhole(v, static_cast<unsigned long long>(kMaxSamples),
                            x) ||
                x == 0) {
                usage(about, std::string("--samples expects a whole number "
                                         "from 1 to ") +
                                 std::to_string(kMaxSamples) + ", got '" + v +
                                 "'");
            }
            a.samples = static_cast<int>(x);
        } else if (arg == "--seed") {
            const char* v = value();
            if (!parseWhole(v, (1ull << 53) - 1, x) || x == 0) {
                usage(about, std::string("--seed expects a whole number from "
                                         "1 to 2^53 - 1, got '") +
                                 v + "'");
            }
            a.seed = x;
        } else if (arg == "--json") {
            a.json = value();
            const std::string problem = jsonPathProblem(a.json);
            if (!problem.empty()) {
                usage(about, problem);
            }
        } else if (arg == "--only") {
            a.only = value();  // checked against the plan's names
        } else if (arg == "--quick") {
            a.quick = true;
        } else if (arg == "--check-only") {
            a.checkOnly = true;
        } else if (arg == "--profile") {
            a.profile = true;
        } else if (arg == "--list") {
            a.list = true;
        } else if (arg == "--help" || arg == "-h") {
            a.help = true;
        } else {
            usage(about, "unknown argument '" + arg + "'");
        }
    }
    return a;
}

}  // namespace course
