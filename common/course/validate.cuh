// SPDX-License-Identifier: MIT
//
// course/validate.cuh: checking a result element by element, and naming
// the first that is wrong.

#pragma once

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace course {

// printf into a string: a check's name or detail. The compiler checks the
// format against the arguments, as it does printf's.
inline std::string format(const char* fmt, ...)
    __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
    std::vsnprintf(out.data(), out.size() + 1, fmt, again);
    va_end(again);
    return out;
}

// What a check found: right or not, and what it saw (kept in the record).
struct Checked {
    bool ok = false;
    std::string detail;
    size_t wrong = 0;  // how many values were wrong, where it counts them
};

// A result against the float64 value it should be: equal where `tolerance`
// is 0 (a float sum of whole numbers under 2^24 is exact in any order),
// else within `tolerance` of it, relative.
inline Checked closeTo(double got, double want, double tolerance) {
    const double rel =
        want != 0.0 ? std::fabs(got - want) / std::fabs(want) : std::fabs(got);
    return {tolerance == 0.0 ? got == want : rel < tolerance,
            format("got %.9g, want %.9g: relative error %.2e (limit %.0e)", got,
                   want, rel, tolerance)};
}

// How many elements differ from `want(i)`, and the first that does.
struct Mismatch {
    size_t count = 0, first = 0;
    double got = 0.0, want = 0.0;
    std::string describe(const char* what) const {
        return count == 0
                   ? ""
                   : format("%zu wrong %s; first at %zu: got %.9g, want %.9g",
                            count, what, first, got, want);
    }
    // As a check's finding: right when nothing differs.
    Checked checked(const char* what) const {
        return {count == 0,
                count == 0 ? format("every one of the %s as expected", what)
                           : describe(what),
                count};
    }
};
template <typename T, typename WantFn, typename OkFn>
Mismatch compareAll(const std::vector<T>& got, WantFn want, OkFn ok) {
    Mismatch m;
    for (size_t i = 0; i < got.size(); ++i) {
        const double w = want(i);
        if (!ok(static_cast<double>(got[i]), w) && m.count++ == 0) {
            m.first = i;
            m.got = static_cast<double>(got[i]);
            m.want = w;
        }
    }
    return m;
}

}  // namespace course
