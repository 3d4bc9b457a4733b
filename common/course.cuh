// SPDX-License-Identifier: MIT
//
// course.cuh: the one header every day of the course includes. It is a
// contents list: each concept is a part under common/course/, and a lesson
// includes this file alone (a test fails if one includes a part).
//
// Exit codes, the same for every day (cuda-samples uses 2 for "waived"):
//   0  every check passed          2  waived: no suitable GPU or driver
//   1  a wrong result, or a CUDA   64 the command line was wrong
//      call failed                    (sysexits.h's EX_USAGE)

#pragma once

// CUDA_CHECK(call): check a runtime call, name what failed, exit 1.
#include "course/check.cuh"

// What a student reads beside the lessons' kernels: the warp and block
// reductions, the two-loads block kernel, launching with attributes
// (clusters, programmatic dependent launch), device memory and inputs.
#include "course/device.cuh"
#include "course/launch.cuh"
#include "course/memory.cuh"

// The harness: a lesson's plan as data (experiment.cuh: rows checked,
// then timed together; probes; timelines; deferred.cuh: launches, checks
// and inputs that read the setup's buffers only when they run) and its
// run (lesson.cuh), timing in three modes (cold, batch, graph), the report
// as JSON, variants as tables, the command line, the capability gate,
// profiling and timelines.
#include "course/cli.cuh"
#include "course/clusters.cuh"
#include "course/deferred.cuh"
#include "course/experiment.cuh"
#include "course/gpu.cuh"
#include "course/json.cuh"
#include "course/lesson.cuh"
#include "course/profile.cuh"
#include "course/report.cuh"
#include "course/sampling.cuh"
#include "course/sets.cuh"
#include "course/timeline.cuh"
#include "course/timing.cuh"
#include "course/validate.cuh"
#include "course/variants.cuh"
