// SPDX-License-Identifier: MIT
//
// course/check.cuh: CUDA_CHECK and the exit codes every day shares.

#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

// One statement (the do/while survives a braceless `if`); `err_` carries a
// trailing underscore so it cannot shadow a name at the call site.
#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
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
