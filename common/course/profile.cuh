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
#include "course/report.cuh"

namespace course {

// Marks where one profiled row begins: `tools/course evidence record`
// runs the lesson under ncu with --profile (and ncu's
// --profile-from-start off, so only what runs between cudaProfilerStart
// and cudaProfilerStop is profiled) and splits the kernels it saw at these
// launches. Launch assumption: <<<1, 1>>>.
static __global__ void courseProfileMarker() {}

// In --profile mode: one marker, then the row's work once.
template <typename Work>
void profileRow(Report& r, cudaStream_t stream, const std::string& name,
                Work&& work) {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaProfilerStart());
    courseProfileMarker<<<1, 1, 0, stream>>>();
    CUDA_CHECK(cudaGetLastError());
    work(stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaProfilerStop());
    r.row(Row().str("group", "profile").str("profiled", name));
}

}  // namespace course
