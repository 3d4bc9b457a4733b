// SPDX-License-Identifier: MIT
//
// course/profile.cuh: --profile mode, in which each profiled row runs
// once after a marker kernel, for Nsight Compute.

#pragma once

#include <string>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/json.cuh"
#include "course/lesson.cuh"

namespace course {

// Marks where one profiled row begins: `tools/course evidence record`
// runs the lesson under ncu with --profile (and ncu's
// --profile-from-start off, so only what runs between cudaProfilerStart
// and cudaProfilerStop is profiled) and splits the kernels it saw at these
// launches. Launch assumption: <<<1, 1>>>.
static __global__ void courseProfileMarker() {}

// In --profile mode: one marker, then the row's work once.
template <typename LaunchFn>
void profileRow(Lesson& l, const std::string& name, LaunchFn&& launch) {
    if (describing()) {  // listed, not run
        l.row(Row().str("group", "profile").str("profiled", name));
        return;
    }
    CUDA_CHECK(cudaStreamSynchronize(l.stream()));
    CUDA_CHECK(cudaProfilerStart());
    courseProfileMarker<<<1, 1, 0, l.stream()>>>();
    CUDA_CHECK(cudaGetLastError());
    launch(l.stream());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(l.stream()));
    CUDA_CHECK(cudaProfilerStop());
    l.row(Row().str("group", "profile").str("profiled", name));
}

}  // namespace course
