// SPDX-License-Identifier: MIT
//
// course/clusters.cuh: rows whose kernels run in thread block clusters.
// Every such row makes the same launch (clusters of c along x, some
// dynamic shared memory a block) and asks the same question of the GPU
// (does this cluster size launch here, and how large is one wave), so
// they are the header's, and a lesson declares only its kernels, sizes
// and what it counts.

#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "course/experiment.cuh"
#include "course/launch.cuh"
#include "course/validate.cuh"

namespace course {

// A launch of `kernel` over `blocks` blocks of `threads` in clusters of
// `cluster` (0: without clusters), with `smem` bytes of dynamic shared
// memory a block.
template <typename... KernelArgs, typename... Args>
void launchInClusters(void (*kernel)(KernelArgs...), int blocks, int threads,
                      int cluster, size_t smem, cudaStream_t s,
                      Args&&... args) {
    launch(kernel, blocks, threads, s,
           LaunchAttrs{static_cast<unsigned int>(cluster), false, smem},
           std::forward<Args>(args)...);
}

// A Case's `here` for a row in clusters of `c` (0: none) of `kernel`, with
// `threads` a block and `smem` bytes a block: the row runs where that
// launches, in a one-wave grid shared by all of `sizes` that launch (one
// grid for all, so the rows differ in their tails alone), written to
// *grid before the row's work runs; then `known` (if any) sets what
// follows from the grid, a field such as an atomics count. A kernel given
// dynamic shared memory is first allowed all a block may opt into (past
// 48 KiB it must ask), since the occupancy API answers for what it may use.
template <typename... KernelArgs>
std::function<std::string(Case&)> inOneWave(
    void (*kernel)(KernelArgs...), int threads, int c, std::vector<int> sizes,
    size_t smem, std::shared_ptr<int> grid,
    std::function<void(Case&, int)> known = nullptr) {
    return [=](Case& r) -> std::string {
        if (smem > 0) {
            allowSharedMemory(kernel, sharedOptin());
        }
        const std::vector<int> ok =
            clusterSizes(kernel, threads, sizes, 1, sizes.back(), smem);
        if (smem > static_cast<size_t>(sharedOptin()) ||
            (c > 0 && std::find(ok.begin(), ok.end(), c) == ok.end())) {
            return format("clusters of %d, %zu bytes a block", c, smem);
        }
        *grid = oneWaveGrid(kernel, threads, ok, smem);
        if (known) {
            known(r, *grid);
        }
        return "";
    };
}

// inOneWave's `known` for a count that each cluster of the grid makes
// `each` times (each block, where `c` is 0: no clusters): the integer
// field `field`, which a listing cannot give, as the grid is known only
// on the GPU. A cluster row's global atomics are the usual such count.
inline std::function<void(Case&, int)> countPerCluster(std::string field,
                                                       long long each, int c) {
    return [=](Case& r, int grid) {
        r.fields.integer(field.c_str(), each * grid / std::max(c, 1));
    };
}

}  // namespace course
