// The CUDA runtime loaded at run time (dlopen of libcudart.so.*, also under /usr/local/cuda/lib64),
// never linked: every prof binary runs on a machine without CUDA. Device name and UUID come from
// the driver API (libcuda.so.1: cuDeviceGetName, cuDeviceGetUuid), the PCI bus id from
// cudaDeviceGetPCIBusId — never through a hand-declared cudaDeviceProp, whose layout changes
// between CUDA versions. Only plain C calls with stable signatures are resolved by name.
#pragma once

#include "prof/device/linkrate.hpp"

#include <memory>
#include <string>
#include <vector>

namespace prof {

// Where libcudart is looked for, in order: $PROF_CUDART when set (one path, nothing else: how the
// tests force the no-runtime path), else the sonames libcudart.so.13, .12, .11.0 and libcudart.so
// through the dynamic loader's own search, then libcudart.so* under /usr/local/cuda/lib64 and
// /usr/local/cuda-*/lib64.
std::vector<std::string> cudart_candidates();

// A CUDA device as the runtime and driver describe it.
struct cuda_device_info {
    int ordinal = 0;
    std::string name;
    std::string uuid;        // "GPU-..." as nvidia-smi prints it
    std::string pci_bus_id;  // as cudaDeviceGetPCIBusId writes it, normalised to lower case
};

// Formats the driver's 16 UUID bytes as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string format_gpu_uuid(const unsigned char bytes[16]);
// "12040" style versions (1000 × major + 10 × minor) → "12.4".
std::string format_cuda_version(int v);
// True when `spec` names the device: its ordinal in decimal, or its UUID with or without the
// "GPU-" prefix, case-insensitively.
bool device_matches(const std::string& spec, const cuda_device_info& d);

class cuda_runtime {
public:
    // Loads the runtime. Throws unavailable_error (exit 69) naming every candidate tried and the
    // loader's own reason when none loads.
    static std::unique_ptr<cuda_runtime> load();
    ~cuda_runtime();
    cuda_runtime(const cuda_runtime&) = delete;
    cuda_runtime& operator=(const cuda_runtime&) = delete;

    const std::string& library() const { return library_; }
    // Every visible device (throws unavailable_error with the runtime's own reason, e.g.
    // "CUDA driver version is insufficient for CUDA runtime version", or "no CUDA device").
    std::vector<cuda_device_info> devices();
    std::string driver_version();
    std::string runtime_version();

    struct api;
    api& functions() { return *api_; }

private:
    cuda_runtime() = default;
    std::string library_;
    std::unique_ptr<api> api_;
};

// The CUDA backend of prof-linkrate for the device `spec` (ordinal or UUID): makes it current,
// binds the calling thread to the device's NUMA-local CPUs when sysfs names them, and times each
// copy with CUDA events (cudaEventRecord around cudaMemcpyAsync on the default stream). Pinned
// host memory comes from cudaMallocHost, pageable from an ordinary page-aligned allocation
// touched once. Throws unavailable_error (69) when the device is absent.
std::unique_ptr<link_backend> cuda_link_backend(cuda_runtime& rt, const std::string& spec);

}  // namespace prof
