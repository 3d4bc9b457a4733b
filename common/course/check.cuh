// SPDX-License-Identifier: MIT
//
// course/check.cuh: CUDA_CHECK, its twin for the toolkit's libraries, and
// the exit codes every day shares.

#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

// CUDA_CHECK(call): a runtime call that must succeed. On an error it names
// the call, where it was made and what went wrong, and exits 1. One
// statement (the do/while survives a braceless `if`); `err_` carries a
// trailing underscore so it cannot shadow a name at the call site.
#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
        const cudaError_t err_ = (call);                                    \
        if (err_ != cudaSuccess) {                                          \
            std::fprintf(stderr, "CUDA error at %s:%d: %s: %s (%s)\n",      \
                         __FILE__, __LINE__, #call, cudaGetErrorName(err_), \
                         cudaGetErrorString(err_));                         \
            std::exit(EXIT_FAILURE);                                        \
        }                                                                   \
    } while (0)

// CUDA_LIB_CHECK(call): a call into one of the toolkit's libraries that
// must succeed. cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSOLVER, cuSPARSE and
// NVRTC each return their own status type, and in every one of them 0 is
// success; the library's own header names the other values.
#define CUDA_LIB_CHECK(call)                                                \
    do {                                                                    \
        const long long status_ = static_cast<long long>(call);             \
        if (status_ != 0) {                                                 \
            std::fprintf(stderr, "CUDA library error at %s:%d: %s: %lld\n", \
                         __FILE__, __LINE__, #call, status_);               \
            std::exit(EXIT_FAILURE);                                        \
        }                                                                   \
    } while (0)

namespace course {

// The exit codes, the same for every day: 2 is cuda-samples' "waived", 64
// sysexits.h's EX_USAGE. The course's tools use 64 for a bad command line
// too, and never 2, so one code never means two things.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitWaived = 2;
constexpr int kExitUsage = 64;

}  // namespace course
