// SPDX-License-Identifier: MIT
//
// course/launch.cuh: launching with the attributes the course teaches
// (clusters, programmatic dependent launch), and grid arithmetic.

#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime.h>

#include "course/check.cuh"

namespace course {

// snippet: launch-attributes
// What a launch may ask for beyond <<<>>>: a cluster of blocks along x
// (compute capability 9.0; the grid must be a multiple of it), and
// programmatic dependent launch, which lets this kernel start while the
// previous kernel in the stream is still running (9.0; the kernel must
// call cudaGridDependencySynchronize() before it reads that kernel's
// output).
struct LaunchAttrs {
    unsigned int clusterX = 0;  // 0: no cluster
    bool dependent = false;     // programmatic stream serialization
    size_t sharedBytes = 0;     // dynamic shared memory per block
};

template <typename... KernelArgs, typename... Args>
void launch(void (*kernel)(KernelArgs...), dim3 grid, dim3 block,
            cudaStream_t stream, LaunchAttrs a, Args&&... args) {
    cudaLaunchAttribute attrs[2];
    unsigned int count = 0;
    if (a.clusterX > 0) {
        attrs[count].id = cudaLaunchAttributeClusterDimension;
        attrs[count].val.clusterDim.x = a.clusterX;
        attrs[count].val.clusterDim.y = 1;
        attrs[count].val.clusterDim.z = 1;
        ++count;
    }
    if (a.dependent) {
        attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attrs[count].val.programmaticStreamSerializationAllowed = 1;
        ++count;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = a.sharedBytes;
    cfg.stream = stream;
    cfg.attrs = attrs;
    cfg.numAttrs = count;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}
// end snippet

inline size_t ceilDiv(size_t a, size_t b) {
    return (a + b - 1) / b;
}

}  // namespace course
