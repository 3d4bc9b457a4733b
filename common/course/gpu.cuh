// SPDX-License-Identifier: MIT
//
// course/gpu.cuh: the capability gate: device 0, or a waived exit that
// says what the lesson needs and what this machine has.

#pragma once

#include <cstdio>
#include <string>

#include <cuda_runtime.h>

#include "course/check.cuh"
#include "course/cli.cuh"
#include "course/json.cuh"

namespace course {

// A kernel with nothing to do: asking the runtime for its attributes tells
// whether this build holds code the GPU can run.
static __global__ void courseProbe() {}

// The capability gate: returns device 0's properties, or exits with
// kExitWaived after one sentence saying what the lesson needs and what
// this machine has. It allocates nothing.
inline cudaDeviceProp requireGpu(const About& spec) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    auto waive = [&](const std::string& why) {
        std::fprintf(
            stderr, "%s: waived: it needs %s; %s.\n", spec.name,
            (std::string("a GPU of compute capability ") +
             std::to_string(kMinMajor) + "." + std::to_string(kMinMinor) +
             " or newer" + (spec.clusters ? " with cluster launch" : ""))
                .c_str(),
            why.c_str());
        std::exit(kExitWaived);
    };
    if (driver == 0) {
        waive("this machine has no NVIDIA driver (so no usable GPU)");
    }
    if (err == cudaErrorInsufficientDriver) {
        int runtime = 0;
        cudaRuntimeGetVersion(&runtime);
        waive("the installed driver supports CUDA " +
              std::to_string(driver / 1000) + "." +
              std::to_string(driver % 1000 / 10) + ", older than the CUDA " +
              std::to_string(runtime / 1000) + "." +
              std::to_string(runtime % 1000 / 10) +
              " runtime this program was built with");
    }
    if (err != cudaSuccess || count == 0) {
        waive(std::string("this machine has no CUDA GPU (") +
              (err != cudaSuccess ? cudaGetErrorString(err) : "no devices") +
              ")");
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const std::string has = std::string("this machine's ") + prop.name +
                            " is " + std::to_string(prop.major) + "." +
                            std::to_string(prop.minor);
    if (prop.major < kMinMajor ||
        (prop.major == kMinMajor && prop.minor < kMinMinor)) {
        waive(has);
    }
    if (spec.clusters) {
        int clusterLaunch = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&clusterLaunch,
                                          cudaDevAttrClusterLaunch, 0));
        if (clusterLaunch == 0) {
            waive(has +
                  " and reports no cluster launch (a MIG slice or a "
                  "virtualized GPU can do that)");
        }
    }
    CUDA_CHECK(cudaSetDevice(0));
    cudaFuncAttributes attrs;
    const cudaError_t image = cudaFuncGetAttributes(&attrs, courseProbe);
    if (image == cudaErrorNoKernelImageForDevice ||
        image == cudaErrorInvalidDeviceFunction) {
        cudaGetLastError();
#ifdef __CUDA_ARCH_LIST__
#define COURSE_STR2(...) #__VA_ARGS__
#define COURSE_STR(...) COURSE_STR2(__VA_ARGS__)
        const char* built = COURSE_STR(__CUDA_ARCH_LIST__);
#else
        const char* built = "unknown";
#endif
        waive(has + ", and this build holds no code for it (built for " +
              built + "); rebuild with CMAKE_CUDA_ARCHITECTURES=" +
              std::to_string(prop.major) + std::to_string(prop.minor));
    }
    CUDA_CHECK(image);
    return prop;
}

// nvidia-smi's spelling of a device's identity: GPU-8-4-4-4-12 lower-case
// hex digits of its UUID, and domain:bus:device.function of its PCI slot.
// `tools/course evidence record` matches both against what nvidia-smi
// reports during the same run: the proof that this GPU ran the program.
inline std::string uuidText(const cudaUUID_t& id) {
    std::string out = "GPU-";
    char byte[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            out += '-';
        }
        std::snprintf(
            byte, sizeof byte, "%02x",
            static_cast<unsigned int>(static_cast<unsigned char>(id.bytes[i])));
        out += byte;
    }
    return out;
}

// The GPU as the JSON report names it.
inline Row gpuRow(const cudaDeviceProp& prop, size_t totalBytes) {
    int driver = 0, runtime = 0, memClockKhz = 0, busBits = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    CUDA_CHECK(
        cudaDeviceGetAttribute(&memClockKhz, cudaDevAttrMemoryClockRate, 0));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, 0));
    char pci[32];
    std::snprintf(pci, sizeof pci, "%08X:%02X:%02X.0", prop.pciDomainID,
                  prop.pciBusID, prop.pciDeviceID);
    return Row()
        .str("name", prop.name)
        .str("uuid", uuidText(prop.uuid))
        .str("pci_bus_id", pci)
        .str("compute_capability",
             std::to_string(prop.major) + "." + std::to_string(prop.minor))
        .integer("sm_count", prop.multiProcessorCount)
        .integer("l2_bytes", prop.l2CacheSize)
        .integer("memory_bytes", static_cast<long long>(totalBytes))
        .integer("memory_clock_khz", memClockKhz)
        .integer("memory_bus_bits", busBits)
        .integer("driver_api", driver)
        .integer("runtime", runtime);
}

}  // namespace course
