// SPDX-License-Identifier: MIT
//
// course/deferred.cuh: a plan's reads of the GPU state, deferred to when
// it runs. A lesson's plan is declared before the GPU gate (--list needs
// no GPU), so before its setup allocates the buffers the rows' work reads:
// a row's launch, its check and its input must read those buffers when
// they run, not when they are declared, and an input costly to build is
// made when first loaded. Without these a lesson writes a lambda for
// each, only to defer the work.

#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include <cuda_runtime.h>

#include "course/clusters.cuh"
#include "course/experiment.cuh"
#include "course/memory.cuh"
#include "course/sets.cuh"

namespace course {

namespace detail {

// What a planned launch holds of one argument (`hold`, when the plan is
// declared) and what it passes to the kernel (`at`, when the work runs):
// a DeviceArray is held by its address and passed as the pointer it has
// then (it must outlive the work: a lesson's global, or one a shared_ptr
// keeps); a std::shared_ptr is held as itself, keeping what it points to
// alive, and read through when the work runs (a grid that a row's `here`
// writes, an array an input makes); anything else is copied.
template <typename T>
struct Later {
    static const T& hold(const T& v) { return v; }
    static const T& at(const T& v) { return v; }
};
template <typename T>
struct Later<DeviceArray<T>> {
    static const DeviceArray<T>* hold(const DeviceArray<T>& a) { return &a; }
    static T* at(const DeviceArray<T>* a) { return a->get(); }
};
template <typename T>
struct Later<std::shared_ptr<T>> {
    static std::shared_ptr<T> hold(std::shared_ptr<T> p) { return p; }
    static decltype(auto) at(const std::shared_ptr<T>& p) {
        return Later<T>::at(Later<T>::hold(*p));
    }
};

}  // namespace detail

// A row's work as one launchInClusters of `kernel` (`threads` a block, in
// clusters of `cluster`, 0: none, `smem` bytes of dynamic shared memory),
// its grid and arguments read as detail::Later says when the work runs.
// The launch is launchInClusters' own, so a row declared with it runs
// exactly what the lambda it replaces ran.
template <typename... KernelArgs, typename Grid, typename... Args>
Work launchWork(void (*kernel)(KernelArgs...), const Grid& grid, int threads,
                int cluster, size_t smem, const Args&... args) {
    return [kernel, threads, cluster, smem, g = detail::Later<Grid>::hold(grid),
            held = std::make_tuple(detail::Later<Args>::hold(args)...)](
               cudaStream_t s) {
        std::apply(
            [&](const auto&... a) {
                launchInClusters(kernel, detail::Later<Grid>::at(g), threads,
                                 cluster, smem, s,
                                 detail::Later<Args>::at(a)...);
            },
            held);
    };
}

// An experiment's check of work that writes `count` values into `out`:
// checkOutput, given the array rather than its pointer (totalIs's reason).
// `want` is kept by copy, so whatever it holds lives as long as the check.
template <typename T, typename Want>
Check outputIs(const DeviceArray<T>& out, size_t count, Want want,
               double tol = 0.0) {
    return [&out, count, want, tol](const Checking& at) {
        return checkOutput(at.stream, at.row.work, out.get(), count, want, tol);
    };
}

// An input named `name`: `n` floats, element i hashUnit(i) (fillRandom's,
// so a check knows every value without a copy back), in an array the
// input allocates each time it is loaded, since the plan is declared
// before the GPU gate; the rows' work reads it through the same
// shared_ptr (launchWork passes its pointer then).
inline Input randomInput(std::shared_ptr<DeviceArray<float>> in, size_t n,
                         std::string name = "") {
    return {std::move(name), [in, n](cudaStream_t s) {
                in->resize(n);
                fillRandom(*in, n, s);
            }};
}

// An input made once, when first loaded (`make`), and left in place for
// every later load: for an input the host builds at a cost (a histogram's
// keys, hashed and counted on the host) that no row's work changes. Its
// rows' checks must not write it. The flag is shared by the copies of the
// Input, as an experiment is copied (checkedRow takes it by value).
inline Input loadOnce(std::function<void()> make, std::string name = "") {
    auto made = std::make_shared<bool>(false);
    return {std::move(name), [made, make](cudaStream_t) {
                if (!*made) {
                    make();
                    *made = true;
                }
            }};
}

}  // namespace course
