// SPDX-License-Identifier: MIT
//
// course/check.cuh: CUDA_CHECK and the exit codes every day shares.

#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

namespace course {

// Whether this run only describes itself (--describe): it lists the
// checks, rows and settings a real run would make, and nothing reaches
// the GPU. Set once by course::begin, before any other runtime call.
inline bool& describingFlag() {
    static bool on = false;
    return on;
}
inline bool describing() {
    return describingFlag();
}
// The SMs of the GPU a description is for (course::describedGpu, an
// H200), where a helper would have asked the GPU for a count.
constexpr int kDescribedSms = 132;

}  // namespace course

// One statement (the do/while survives a braceless `if`); `err_` carries a
// trailing underscore so it cannot shadow a name at the call site. Under
// --describe the call is not made at all: a lesson's allocations, copies,
// launches and queries through CUDA_CHECK become no-ops, their outputs
// left as initialised (a copy back reads zeros), so the same main that
// times on a GPU describes its rows on a machine without one.
#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
        if (::course::describing()) {                                       \
            break;                                                          \
        }                                                                   \
        cudaError_t err_ = (call);                                          \
        if (err_ != cudaSuccess) {                                          \
            std::fprintf(stderr, "CUDA error at %s:%d: %s: %s (%s)\n",      \
                         __FILE__, __LINE__, #call, cudaGetErrorName(err_), \
                         cudaGetErrorString(err_));                         \
            std::exit(EXIT_FAILURE);                                        \
        }                                                                   \
    } while (0)

namespace course {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitWaived = 2;
constexpr int kExitUsage = 64;

}  // namespace course
