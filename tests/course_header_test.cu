// SPDX-License-Identifier: MIT
//
// Host-only unit tests of the shared header's command-line parser and JSON
// writer: no GPU and no CUDA call, so CTest runs them on any machine.
// Every failure names the input and what was expected.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include "course.cuh"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what.c_str());
        ++failures;
    }
}

void wholeNumbers() {
    unsigned long long x = 0;
    for (const char* bad : {" -1", "-1", "+5", "0x10", "", " 7", "7 ", "1e3",
                            "18446744073709551616"}) {
        expect(!course::parseWhole(bad, ~0ull, x),
               std::string("parseWhole refuses '") + bad + "'");
    }
    expect(course::parseWhole("18446744073709551615", ~0ull, x) && x == ~0ull,
           "parseWhole takes the largest 64-bit number");
    expect(!course::parseWhole("2147483648", course::kMaxSamples, x),
           "--samples above its limit is refused");
    expect(course::parseWhole("10000", course::kMaxSamples, x) && x == 10000,
           "--samples at its limit is taken");
}

void jsonStrings() {
    expect(course::jsonQuote("a\"b\\c") == "\"a\\\"b\\\\c\"",
           "quotes and "
           "backslashes");
    expect(course::jsonQuote("\n\t") == "\"\\u000a\\u0009\"", "control bytes");
    expect(course::jsonQuote("caf\xc3\xa9 \xe2\x82\xac") ==
               "\"caf\xc3\xa9 \xe2\x82\xac\"",
           "valid UTF-8 passes as it is");
    expect(course::jsonQuote("x\x80y") == "\"x\\\\x80y\"",
           "a stray continuation byte is written as \\x80");
    expect(course::jsonQuote("\xc0\x80") == "\"\\\\xc0\\\\x80\"",
           "an overlong encoding is escaped");
    expect(course::jsonQuote("\xed\xa0\x80") == "\"\\\\xed\\\\xa0\\\\x80\"",
           "a surrogate is escaped");
    expect(course::jsonQuote("\xe2\x82") == "\"\\\\xe2\\\\x82\"",
           "a truncated sequence is escaped");
    expect(course::jsonNumber(1.0 / 0.0) == "null", "infinity is null");
}

void jsonRows() {
    course::TimingResult t =
        course::summarize({3.0, 1.0, 2.0, 5.0, 4.0}, course::TimingMode::Cold);
    expect(t.median == 3.0 && t.min == 1.0 && t.max == 5.0, "summarize");
    expect(t.q1 == 2.0 && t.q3 == 4.0, "quartiles by nvbench's rank");
    const std::string j =
        course::Row().str("a", "b").merge(course::timingFields(t)).json();
    expect(j.find("\"samples_ms\": [3,1,2,5,4]") != std::string::npos,
           "every sample kept, in the order taken: " + j);
}

void jsonPaths() {
    expect(!course::jsonPathProblem("").empty(), "--json '' is refused");
    expect(!course::jsonPathProblem("/dev/full").empty(),
           "--json /dev/full (a device) is refused");
    expect(!course::jsonPathProblem("/").empty(), "--json / is refused");
    expect(!course::jsonPathProblem("/no/such/folder/x.json").empty(),
           "--json in a missing folder is refused before any GPU work");
    expect(course::jsonPathProblem("course_header_test.json").empty(),
           "--json in the current folder is accepted");
    // A file that looks like the probe is someone's: never truncated or
    // removed (the probe takes the next free name).
    const std::string theirs =
        "course_header_test.json.probe." + std::to_string(getpid()) + ".0";
    FILE* f = std::fopen(theirs.c_str(), "wb");
    std::fputs("keep me", f);
    std::fclose(f);
    expect(course::jsonPathProblem("course_header_test.json").empty(),
           "--json works beside a file named like its probe");
    f = std::fopen(theirs.c_str(), "rb");
    char buf[16] = {};
    expect(f != nullptr && std::fread(buf, 1, 7, f) == 7 &&
               std::string(buf) == "keep me",
           "a file named like the probe is left as it was");
    if (f != nullptr) {
        std::fclose(f);
    }
    std::remove(theirs.c_str());
}

void sameCodeTally() {
    // The report's "same_code": same-code decisions counted by timing and
    // band of the median launch (under 8 us, 8 to 64 us, 64 us and over).
    course::Report report("test");
    report.sameCode("cold", 0.004, true);
    report.sameCode("cold", 0.005, false);
    report.sameCode("cold", 0.5, false);
    report.sameCode("graph", 0.004, false);
    const std::string path = "course_header_test.report.json";
    std::remove(path.c_str());
    expect(report.write(path, course::Row(), false), "the report is written");
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        char buf[4096];
        size_t n = 0;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
            text.append(buf, n);
        }
        std::fclose(f);
    }
    std::remove(path.c_str());
    for (const char* row :
         {"{\"timing\": \"cold\", \"band\": \"under 8 us\", \"pairs\": 2, "
          "\"faster_or_slower\": 1}",
          "{\"timing\": \"cold\", \"band\": \"64 us and over\", \"pairs\": 1, "
          "\"faster_or_slower\": 0}",
          "{\"timing\": \"graph\", \"band\": \"under 8 us\", \"pairs\": 1, "
          "\"faster_or_slower\": 0}"}) {
        expect(text.find(row) != std::string::npos,
               std::string("the report's same_code holds ") + row + " in:\n" +
                   text);
    }
    expect(text.find("\"same_code\": [") != std::string::npos,
           "the report has a same_code list");
}

void equalsForm() {
    const course::About about{.name = "test", .bytesEach = 4.0};
    const char* argv[] = {"test",     "--size=1024", "--samples=5",
                          "--only=b", "--quick",     "--seed=7"};
    const course::Args a =
        course::parseArgs(about, 6, const_cast<char**>(argv));
    expect(a.size == 1024 && a.samples == 5 && a.only == "b" && a.quick &&
               a.seed == 7,
           "--name=value reads as --name value");
}

// The order of a set's rows each round: every row once a round, and, over
// many rounds, every row in every place about equally often (the harness's
// cure for a fixed order's tie to the GPU's launch cycle).
void roundOrder() {
    course::RoundOrder order(12345, "a set");
    constexpr size_t kRows = 6, kRounds = 6000;
    size_t at[kRows][kRows] = {};
    for (size_t r = 0; r < kRounds; ++r) {
        const std::vector<size_t> o = order.next(kRows);
        bool seen[kRows] = {};
        for (size_t p = 0; p < kRows; ++p) {
            seen[o[p]] = true;
            ++at[o[p]][p];
        }
        for (bool s : seen) {
            expect(s, "every row once a round");
        }
    }
    for (size_t row = 0; row < kRows; ++row) {
        for (size_t p = 0; p < kRows; ++p) {
            // 1,000 expected; 5 sigma of a binomial(6000, 1/6) is about 144.
            expect(at[row][p] > 856 && at[row][p] < 1144,
                   "row " + std::to_string(row) + " at place " +
                       std::to_string(p) + ": " + std::to_string(at[row][p]) +
                       " of 6,000 rounds");
        }
    }
    course::RoundOrder again(12345, "a set");
    course::RoundOrder other(12345, "another set");
    expect(again.next(kRows) == course::RoundOrder(12345, "a set").next(kRows),
           "one seed and set name give one order");
    expect(other.next(kRows) != again.next(kRows) ||
               other.next(kRows) != again.next(kRows),
           "two sets' orders differ");
}

// A plan's parts that need no GPU: a sum's inputs by size, and a GPU
// setting read from the variable the setup leaves it in.
void planParts() {
    course::DeviceArray<float> in;  // never allocated: nothing here runs
    const auto names = [&](size_t n) {
        std::string out;
        for (const course::Input& i : course::onesThenRandom(in, n)) {
            out += i.name + " ";
        }
        return out;
    };
    expect(names((1u << 24) - 1) == "ones random ", "ones below 2^24");
    expect(names(1u << 24) == "random ", "no ones from 2^24: inexact");
    int grid = 0;
    bool on = false;
    const course::GpuSetting a("grid", &grid), b("on", &on);
    grid = 132;
    on = true;
    expect(a.value() == 132 && b.value() == 1, "settings read when asked");
}

// A plan's reads deferred to when it runs (course/deferred.cuh): an
// array by its address, a shared_ptr by what it holds then, anything else
// copied; an input made at its first load alone; and a cluster row's
// count known from its grid (clusters.cuh).
// Declaring a launch calls nothing on a GPU, so all of it runs here.
void deferredReads() {
    const auto grid = std::make_shared<int>(0);
    const auto heldGrid =
        course::detail::Later<std::shared_ptr<int>>::hold(grid);
    *grid = 132;
    expect(course::detail::Later<std::shared_ptr<int>>::at(heldGrid) == 132,
           "a shared_ptr grid is read when the work runs, not when declared");
    const course::DeviceArray<float> array;
    const auto heldArray =
        course::detail::Later<course::DeviceArray<float>>::hold(array);
    expect(heldArray == &array &&
               course::detail::Later<course::DeviceArray<float>>::at(
                   heldArray) == array.get(),
           "an array is held by its address and passed as its pointer");
    size_t n = 5;
    const size_t heldN = course::detail::Later<size_t>::hold(n);
    n = 6;
    expect(heldN == 5, "a plain argument is copied when declared");
    expect(course::launchWork(course::courseFill, grid, 256, 0, 0, array, n,
                              1.0f, false, 0u) != nullptr,
           "a launch is declared before its array exists, with no GPU call");
    int made = 0;
    const course::Input once = course::loadOnce([&made] { ++made; });
    const course::Input copy = once;  // as an experiment is copied
    once.load(nullptr);
    copy.load(nullptr);
    once.load(nullptr);
    expect(made == 1, "an input made at its first load only, by any copy: " +
                          std::to_string(made) + " times");
    course::Case row{.name = "r"};
    course::countPerCluster("atomics", 3, 4)(row, 64);
    course::countPerCluster("blocks", 1, 0)(row, 10);
    expect(row.fields.json() == "{\"atomics\": 48, \"blocks\": 10}",
           "a count per cluster of the grid (per block without clusters): " +
               row.fields.json());
}

// --decide: reads "a1,a2,...;b1,b2,..." lines and prints the comparison
// rule's word for each (the tools' test holds it to theirs).
int decideLines() {
    char line[1 << 16];
    while (std::fgets(line, sizeof line, stdin) != nullptr) {
        std::vector<double> side[2];
        int k = 0;
        for (char* p = line; *p != '\0' && *p != '\n';) {
            if (*p == ';') {
                k = 1;
                ++p;
                continue;
            }
            if (*p == ',') {
                ++p;
                continue;
            }
            char* end = nullptr;
            side[k].push_back(std::strtod(p, &end));
            p = end;
        }
        std::printf("%s\n", course::detail::wordName(
                                course::detail::decide(side[0], side[1])));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::string(argv[1]) == "--decide") {
        return decideLines();
    }
    wholeNumbers();
    jsonStrings();
    jsonRows();
    jsonPaths();
    sameCodeTally();
    equalsForm();
    roundOrder();
    planParts();
    deferredReads();
    if (failures != 0) {
        std::fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    std::printf("course.cuh: parser and JSON writer tests passed\n");
    return 0;
}
