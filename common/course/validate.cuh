// SPDX-License-Identifier: MIT
//
// course/validate.cuh: checking a result element by element, and naming
// the first that is wrong.

#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace course {

// How many elements differ from `want(i)`, and the first that does.
struct Mismatch {
    size_t count = 0, first = 0;
    double got = 0.0, want = 0.0;
    std::string describe(const char* what) const {
        char buf[200];
        if (count == 0) {
            return "";
        }
        std::snprintf(buf, sizeof buf,
                      "%zu wrong %s; first at %zu: got %.9g, want %.9g", count,
                      what, first, got, want);
        return buf;
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
