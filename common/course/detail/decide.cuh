// SPDX-License-Identifier: MIT
//
// course/detail/decide.cuh: the comparison rule's word for two rows'
// samples, so that sampling can stop once every compared pair is decided.
// The rule itself is stated, and its error rate measured, by the tools
// (tools/coursetools/rule/verdict.py and research/REVIEW-PROCESS.md);
// this is the same arithmetic, step for step, and a test holds the two to
// the same words on the same samples.
//
// On the log of each time, rounded to a grid of 1e-9 (so that both
// implementations compare whole numbers): D_ij = log a_i - log b_j for
// every pair of samples. The Hodges-Lehmann shift is their median; the
// distribution-free (Moses) interval runs from the K-th smallest D to the
// K-th largest, K = floor(mn/2 - z sqrt(mn(m+n+1)/12)), z for a two-sided
// 99.9% interval. With a margin of 2%: "the same" when the whole interval
// lies within +-log 1.02, "faster" when it lies wholly below -log 1.02,
// "slower" wholly above +log 1.02, else "not distinguishable".

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace course {
namespace detail {

// The grid on which log-times are compared: 1e-9, far below any
// difference a timing can show, and integer, so no rounding differs.
constexpr double kRuleScale = 1e9;
// z for a two-sided 99.9% interval: the rule looks at most seven times
// (16 to 1,024 samples), 0.1% each, so a same-code pair is called faster
// or slower at most 0.7% of the time (the calibration tests measure it).
constexpr double kRuleZ = 3.2905267314919255;
// The margin, log(1.02) on the grid: "the same" means within 2% either
// way, and "faster" or "slower" more than 2%, surely. Two's the floor the
// hardware sets: on the H200 the same code timed twice side by side, two
// instances of it (two graphs, two samplers), differs by up to about 2%
// (research/REVIEW-PROCESS.md gives the tallies).
constexpr long long kRuleMargin = 19802627;

enum class Word { Faster, Slower, Same, Undecided };

inline const char* wordName(Word w) {
    return w == Word::Faster   ? "faster"
           : w == Word::Slower ? "slower"
           : w == Word::Same   ? "the same"
                               : "not distinguishable";
}

inline std::vector<long long> onGrid(const std::vector<double>& ms) {
    std::vector<long long> q;
    q.reserve(ms.size());
    for (double v : ms) {
        q.push_back(
            static_cast<long long>(std::floor(std::log(v) * kRuleScale + 0.5)));
    }
    std::sort(q.begin(), q.end());
    return q;
}

// How many pairs have x_i - y_j <= t (x, y sorted): one merge-like pass.
inline unsigned long long countAtMost(const std::vector<long long>& x,
                                      const std::vector<long long>& y,
                                      long long t) {
    unsigned long long count = 0;
    size_t j = 0;  // the first y_j with y_j >= x_i - t; it only moves on
    for (long long xi : x) {
        while (j < y.size() && y[j] < xi - t) {
            ++j;
        }
        count += y.size() - j;
    }
    return count;
}

inline long long ruleK(size_t m, size_t n) {
    const double mn = static_cast<double>(m) * static_cast<double>(n);
    return static_cast<long long>(std::floor(
        mn / 2.0 -
        kRuleZ * std::sqrt(mn * (static_cast<double>(m + n) + 1.0) / 12.0)));
}

// The word for row a against row b (times: smaller is faster).
inline Word decide(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.empty() || b.empty()) {
        return Word::Undecided;
    }
    const std::vector<long long> x = onGrid(a), y = onGrid(b);
    const long long k = ruleK(x.size(), y.size());
    if (k < 1) {
        return Word::Undecided;
    }
    const unsigned long long need =
        static_cast<unsigned long long>(x.size()) * y.size() -
        static_cast<unsigned long long>(k) + 1;  // N - K + 1
    const unsigned long long kk = static_cast<unsigned long long>(k);
    // low = D_(K), high = D_(N-K+1), by counts at the thresholds alone.
    const unsigned long long below = countAtMost(x, y, -kRuleMargin - 1);
    const unsigned long long within = countAtMost(x, y, kRuleMargin);
    if (below < kk && within >= need) {
        return Word::Same;  // low >= -margin and high <= +margin
    }
    if (below >= need) {
        return Word::Faster;  // high < -margin
    }
    if (within < kk) {
        return Word::Slower;  // low > +margin
    }
    return Word::Undecided;
}

}  // namespace detail
}  // namespace course
