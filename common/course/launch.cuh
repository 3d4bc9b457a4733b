// SPDX-License-Identifier: MIT
//
// course/launch.cuh: launching with the attributes the course teaches
// (clusters, programmatic dependent launch), asking the occupancy API
// about clusters, CUDA graphs, and grid arithmetic.

#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

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

// The cudaLaunchConfig_t those attributes make (it points into itself, so
// it is neither copied nor moved).
struct LaunchConfig {
    LaunchConfig(dim3 grid, dim3 block, cudaStream_t stream, LaunchAttrs a) {
        if (a.clusterX > 0) {
            attrs[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
            attrs[cfg.numAttrs].val.clusterDim = {a.clusterX, 1, 1};
            ++cfg.numAttrs;
        }
        if (a.dependent) {
            attrs[cfg.numAttrs].id =
                cudaLaunchAttributeProgrammaticStreamSerialization;
            attrs[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
            ++cfg.numAttrs;
        }
        cfg.gridDim = grid;
        cfg.blockDim = block;
        cfg.dynamicSmemBytes = a.sharedBytes;
        cfg.stream = stream;
        cfg.attrs = attrs;
    }
    LaunchConfig(const LaunchConfig&) = delete;
    LaunchConfig& operator=(const LaunchConfig&) = delete;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attrs[2];
};

template <typename... KernelArgs, typename... Args>
void launch(void (*kernel)(KernelArgs...), dim3 grid, dim3 block,
            cudaStream_t stream, LaunchAttrs a, Args&&... args) {
    LaunchConfig c(grid, block, stream, a);
    CUDA_CHECK(cudaLaunchKernelEx(&c.cfg, kernel, std::forward<Args>(args)...));
}
// end snippet

// How many clusters of a.clusterX blocks of `block` threads (with
// a.sharedBytes each) of `kernel` the GPU holds at once.
template <typename... KernelArgs>
int maxActiveClusters(void (*kernel)(KernelArgs...), dim3 block,
                      LaunchAttrs a) {
    LaunchConfig c(dim3(a.clusterX), block, nullptr, a);
    int active = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&active, kernel, &c.cfg));
    return active;
}

// The largest cluster `kernel` can launch with here (`block` threads and
// `sharedBytes` of dynamic shared memory per block), after it is allowed
// the non-portable sizes: a grid of `limit` blocks is what is asked about.
template <typename... KernelArgs>
int maxClusterSize(void (*kernel)(KernelArgs...), dim3 block,
                   unsigned int limit, size_t sharedBytes = 0) {
    CUDA_CHECK(cudaFuncSetAttribute(
        kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    LaunchConfig c(dim3(limit), block, nullptr, {0, false, sharedBytes});
    int size = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&size, kernel, &c.cfg));
    return size;
}

// Of the cluster sizes `tried` (ascending), those from `smallest` to
// `limit` that `kernel` can launch with here (`block` threads and
// `sharedBytes` a block), the non-portable ones allowed.
template <typename... KernelArgs>
std::vector<int> clusterSizes(void (*kernel)(KernelArgs...), dim3 block,
                              const std::vector<int>& tried, int smallest,
                              int limit, size_t sharedBytes = 0) {
    const int largest =
        std::min(limit, maxClusterSize(kernel, block,
                                       static_cast<unsigned int>(tried.back()),
                                       sharedBytes));
    std::vector<int> out;
    for (int c : tried) {
        if (c >= smallest && c <= largest) {
            out.push_back(c);
        }
    }
    return out;
}

// The PTX architecture `kernel` was compiled for (90: compute_90), which
// is what CUB's PtxVersion() asks: a build for older GPUs, run on a newer
// one from its PTX, holds none of the newer architectures' code, so a
// launch that relies on that code (a programmatic wait) must ask this,
// not the GPU's compute capability.
template <typename... KernelArgs>
int ptxVersion(void (*kernel)(KernelArgs...)) {
    cudaFuncAttributes f = {};
    CUDA_CHECK(cudaFuncGetAttributes(&f, kernel));
    return f.ptxVersion;
}

// The shared memory a block may opt into on the current GPU (the H200:
// 227 KiB, CUDA's table of limits for 9.0).
inline int sharedOptin() {
    int device = 0, bytes = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(
        &bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    return bytes;
}

// Lets `kernel` take `bytes` of dynamic shared memory per block: beyond
// 48 KiB a kernel must ask (the H200 gives a block up to 227 KiB).
template <typename... KernelArgs>
void allowSharedMemory(void (*kernel)(KernelArgs...), size_t bytes) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
}

// How many blocks of `block` threads (with a.sharedBytes each) of `kernel`
// the GPU holds at once, in clusters of a.clusterX (0: no clusters): one
// wave of the grid.
template <typename... KernelArgs>
int residentBlocks(void (*kernel)(KernelArgs...), dim3 block, LaunchAttrs a) {
    if (a.clusterX > 0) {
        return maxActiveClusters(kernel, block, a) *
               static_cast<int>(a.clusterX);
    }
    int device = 0, perSm = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, kernel, static_cast<int>(block.x * block.y * block.z),
        a.sharedBytes));
    return perSm * sms;
}

// The largest grid of `kernel` (blocks of `block` threads, `smem` bytes of
// dynamic shared memory each) that the GPU holds in one wave without
// clusters and in clusters of every size in `clusters` (ascending), a
// multiple of the largest: a cluster must fit inside one GPC, so large
// clusters strand SMs, and one grid for all lets the rows differ in their
// tails alone.
template <typename... KernelArgs>
int oneWaveGrid(void (*kernel)(KernelArgs...), dim3 block,
                const std::vector<int>& clusters, size_t smem = 0) {
    int grid = residentBlocks(kernel, block, {0, false, smem});
    for (int c : clusters) {
        grid = std::min(
            grid, residentBlocks(kernel, block,
                                 {static_cast<unsigned int>(c), false, smem}));
    }
    const int largest = clusters.empty() ? 1 : clusters.back();
    return std::max(largest, grid / largest * largest);
}

// Some work on a stream captured once into an executable graph, replayed
// with launch(), freed with the object. The work must be capturable (no
// synchronization, no legacy default stream).
class Graph {
public:
    template <typename Enqueue>
    Graph(cudaStream_t stream, Enqueue&& enqueue) {
        cudaGraph_t graph;
        CUDA_CHECK(
            cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        enqueue(stream);
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    ~Graph() {
        if (exec_ != nullptr) {  // not after a move
            cudaGraphExecDestroy(exec_);
        }
    }
    Graph(Graph&& other) noexcept : exec_(other.exec_) {
        other.exec_ = nullptr;
    }
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    void launch(cudaStream_t stream) const {
        CUDA_CHECK(cudaGraphLaunch(exec_, stream));
    }

private:
    cudaGraphExec_t exec_ = nullptr;
};

// `enqueue`'s work captured here once into a graph, as work that replays it
// (a graph-replayed row of a set: the same launches, none of the host's
// per-launch work).
template <typename Enqueue>
std::function<void(cudaStream_t)> replayed(cudaStream_t stream,
                                           Enqueue&& enqueue) {
    auto g = std::make_shared<Graph>(stream, std::forward<Enqueue>(enqueue));
    return [g](cudaStream_t s) { g->launch(s); };
}

inline size_t ceilDiv(size_t a, size_t b) {
    return (a + b - 1) / b;
}

// `x` rounded up to a multiple of `m`.
inline size_t roundUp(size_t x, size_t m) {
    return ceilDiv(x, m) * m;
}

}  // namespace course
