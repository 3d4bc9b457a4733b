// SPDX-License-Identifier: MIT
//
// course/report.cuh: what a run found, kept in order: its checks, rows,
// decisions and settings, and the JSON file they become (--json).

#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "course/cli.cuh"
#include "course/json.cuh"

namespace course {

class Report {
public:
    explicit Report(const char* lesson) : lesson_(lesson) {}

    // Records one checked result; a failure is also said on stderr.
    bool check(const std::string& name, bool ok, const std::string& detail) {
        checks_.push_back(
            Row().str("check", name).boolean("ok", ok).str("detail", detail));
        if (!ok) {
            ++failures_;
            std::fprintf(stderr, "%s: WRONG: %s: %s\n", lesson_, name.c_str(),
                         detail.c_str());
        }
        return ok;
    }
    void row(Row r) { rows_.push_back(std::move(r)); }
    // What the comparison rule decided for a pair of rows timed together.
    void decision(Row r) { decisions_.push_back(std::move(r)); }
    // Settings are added to, in order, and printed as they come.
    void setting(const Row& r) {
        settings_.merge(r);
        std::printf("settings: %s\n", r.json().c_str());
    }
    // A decision between rows of the same code (a twin, a declared pair):
    // its timing, the median time of one launch, and whether the rule
    // called it faster or slower, which for the same code is a false call.
    // The tally, by timing and band, is the report's "same_code": every
    // record carries the run's own error rate beside its results.
    void sameCode(const char* timing, double medianMs, bool falseCall) {
        const double us = 1000.0 * medianMs;
        const int band = us < kBandsUs[0] ? 0 : us < kBandsUs[1] ? 1 : 2;
        for (Tally& t : tallies_) {
            if (t.timing == timing && t.band == band) {
                ++t.pairs;
                t.falseCalls += falseCall;
                return;
            }
        }
        tallies_.push_back({timing, band, 1, falseCall ? 1 : 0});
    }
    int failures() const { return failures_; }
    size_t rows() const { return rows_.size(); }
    size_t checks() const { return checks_.size(); }

    // The report as JSON, written to `path` through a new file of our own
    // beside it and a rename: a crash never leaves half a file where a tool
    // expects a whole one, and no file of anyone else's is touched on the
    // way. `listed`: a plan (--list), not a run. Returns whether it wrote.
    bool write(const std::string& path, const Row& gpu, bool listed) const {
        const std::string out = "{\n  \"lesson\": " + jsonQuote(lesson_) +
                                (listed ? ",\n  \"listed\": true" : "") +
                                ",\n  \"gpu\": " + gpu.json() +
                                ",\n  \"settings\": " + settings_.json() +
                                ",\n  \"checks\": " + array(checks_) +
                                ",\n  \"rows\": " + array(rows_) +
                                ",\n  \"decisions\": " + array(decisions_) +
                                ",\n  \"same_code\": " + array(sameCodeRows()) +
                                "\n}\n";
        std::string tmp;
        const int fd = openNew(path + ".tmp", tmp);
        bool ok = fd >= 0;
        size_t done = 0;
        while (ok && done < out.size()) {
            const ssize_t w = ::write(fd, out.data() + done, out.size() - done);
            ok = w > 0;
            done += ok ? static_cast<size_t>(w) : 0;
        }
        if (fd >= 0) {
            ok = (::close(fd) == 0) && ok &&
                 std::rename(tmp.c_str(), path.c_str()) == 0;
        }
        if (!ok) {
            std::fprintf(stderr, "%s: cannot write %s: %s\n", lesson_,
                         path.c_str(), std::strerror(errno));
            if (fd >= 0) {
                std::remove(tmp.c_str());  // ours: made by openNew
            }
        }
        return ok;
    }

    // The bands of a launch's duration the tally counts apart, in us: a
    // short cold launch is where the H200's own timing moves most
    // (research/cold-order.md), so under 8 us stands alone.
    static constexpr double kBandsUs[2] = {8.0, 64.0};

private:
    struct Tally {
        std::string timing;
        int band;
        long long pairs, falseCalls;
    };
    std::vector<Row> sameCodeRows() const {
        static const char* names[] = {"under 8 us", "8 to 64 us",
                                      "64 us and over"};
        std::vector<Row> out;
        for (const Tally& t : tallies_) {
            out.push_back(Row()
                              .str("timing", t.timing)
                              .str("band", names[t.band])
                              .integer("pairs", t.pairs)
                              .integer("faster_or_slower", t.falseCalls));
        }
        return out;
    }
    static std::string array(const std::vector<Row>& rows) {
        std::string out = "[";
        for (size_t i = 0; i < rows.size(); ++i) {
            out += (i ? ",\n    " : "\n    ") + rows[i].json();
        }
        return out + "\n  ]";
    }
    const char* lesson_;
    int failures_ = 0;
    std::vector<Row> checks_, rows_, decisions_;
    std::vector<Tally> tallies_;
    Row settings_;
};

}  // namespace course
