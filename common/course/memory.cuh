// SPDX-License-Identifier: MIT
//
// course/memory.cuh: device memory for the lessons: inputs the host
// knows without a copy back, allocations that free themselves, copies
// back and poison.

#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/device.cuh"

namespace course {

// Element i becomes `value`, or hashUnit(i, seed) where `random` is set.
// Launch assumption: any grid; a grid-stride loop covers n.
static __global__ void courseFill(float* out, size_t n, float value,
                                  bool random, uint32_t seed) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
         i < n; i += stride) {
        out[i] = random ? hashUnit(i, seed) : value;
    }
}
inline void fill(float* out, size_t n, float value, cudaStream_t stream) {
    courseFill<<<1024, 256, 0, stream>>>(out, n, value, false, 0);
    CUDA_CHECK(cudaGetLastError());
}
inline void fillRandom(float* out, size_t n, cudaStream_t stream,
                       uint32_t seed = 0) {
    courseFill<<<1024, 256, 0, stream>>>(out, n, 0.0f, true, seed);
    CUDA_CHECK(cudaGetLastError());
}

// What the host knows of fillRandom's values without a copy back: element
// i is hashUnit(i), so the float64 sum and the XOR of the words of the
// first n follow on the host. upTo(n) extends them from the last n (sizes
// ascending cost one pass over the largest), or starts again below it.
class RandomSums {
public:
    void upTo(size_t n) {
        if (n < n_) {
            *this = RandomSums();
        }
        for (; n_ < n; ++n_) {
            const float v = hashUnit(n_);
            unsigned int word;
            std::memcpy(&word, &v, sizeof word);
            sum_ += static_cast<double>(v);
            xor_ ^= word;
        }
    }
    double sum() const { return sum_; }
    unsigned int xorBits() const { return xor_; }
    // Element i of the input: 1.0f for all ones, else the random value.
    static float at(size_t i, bool ones) { return ones ? 1.0f : hashUnit(i); }

private:
    size_t n_ = 0;
    double sum_ = 0.0;
    unsigned int xor_ = 0;
};

// A device allocation of `count` T that frees itself, and converts to T*
// wherever a kernel or a runtime call wants the pointer. Made empty, it
// allocates at resize(): a lesson's buffers can be declared before the
// GPU gate and made after it.
template <typename T>
class DeviceArray {
public:
    DeviceArray() = default;
    explicit DeviceArray(size_t count) { resize(count); }
    explicit DeviceArray(const std::vector<T>& host) { assign(host); }
    // Not checked: by now every result has been checked and reported, and
    // a sticky error would have stopped the lesson at its next call. An
    // empty one frees nothing (cudaFree(nullptr) would start the runtime,
    // which a listing never does).
    ~DeviceArray() {
        if (p_ != nullptr) {
            cudaFree(p_);
        }
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    void resize(size_t count) {
        if (p_ != nullptr) {
            CUDA_CHECK(cudaFree(p_));
            p_ = nullptr;
        }
        count_ = count;
        CUDA_CHECK(cudaMalloc(&p_, std::max<size_t>(count, 1) * sizeof(T)));
    }
    // Becomes a copy of `host` (a synchronous copy: the array is ready when
    // this returns), as an input a lesson makes on the host is loaded.
    void assign(const std::vector<T>& host) {
        resize(host.size());
        CUDA_CHECK(cudaMemcpy(p_, host.data(), host.size() * sizeof(T),
                              cudaMemcpyHostToDevice));
    }
    operator T*() const { return p_; }
    T* get() const { return p_; }
    size_t size() const { return count_; }

private:
    T* p_ = nullptr;
    size_t count_ = 0;
};

// Waits for all work on the device, then copies back: the lessons enqueue
// on a created non-blocking stream, which a plain cudaMemcpy would not
// wait for.
template <typename T>
std::vector<T> toHost(const T* device, size_t count) {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> host(count);
    CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T),
                          cudaMemcpyDeviceToHost));
    return host;
}

template <typename T>
std::vector<T> toHost(const DeviceArray<T>& device, size_t count) {
    return toHost(device.get(), count);
}

// Fills with 0xff bytes: a NaN for floats, UINT_MAX for counters, so an
// element the kernel never wrote cannot pass a check.
template <typename T>
void poison(T* device, size_t count, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(device, 0xff, count * sizeof(T), stream));
}
template <typename T>
void poison(const DeviceArray<T>& device, size_t count, cudaStream_t stream) {
    poison(device.get(), count, stream);
}

}  // namespace course
