// NVML through dlopen (see nvml.hpp). Only the few calls needed are resolved by name; the one
// struct used (nvmlProcessInfo_t: pid, usedGpuMemory, gpuInstanceId, computeInstanceId) has had
// this layout since the _v2 process queries (NVML 11.x).
#include "prof/device/nvml.hpp"

#include <algorithm>
#include <dlfcn.h>
#include <fmt/format.h>

namespace prof {

namespace {
using nvml_return = int;
using nvml_device = void*;
struct nvml_process_info {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};
constexpr nvml_return NVML_SUCCESS = 0;
constexpr nvml_return NVML_ERROR_INSUFFICIENT_SIZE = 7;
}  // namespace

struct nvml_reader::impl {
    void* lib = nullptr;
    nvml_return (*shutdown)() = nullptr;
    nvml_return (*get_procs)(nvml_device, unsigned int*, nvml_process_info*) = nullptr;
    std::vector<nvml_device> devices;
    ~impl() {
        if (shutdown) shutdown();
        if (lib) dlclose(lib);
    }
};

nvml_reader::nvml_reader(std::unique_ptr<impl> p) : p_(std::move(p)) {}
nvml_reader::~nvml_reader() = default;

std::unique_ptr<nvml_reader> nvml_reader::open(std::string* why) {
    auto fail = [&](std::string msg) -> std::unique_ptr<nvml_reader> {
        if (why) *why = std::move(msg);
        return nullptr;
    };
    auto p = std::make_unique<impl>();
    p->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!p->lib) p->lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
    if (!p->lib) return fail("NVML not found (libnvidia-ml.so.1): no NVIDIA driver on this machine");
    auto sym = [&](const char* name) { return dlsym(p->lib, name); };
    auto init = reinterpret_cast<nvml_return (*)()>(sym("nvmlInit_v2"));
    auto count = reinterpret_cast<nvml_return (*)(unsigned int*)>(sym("nvmlDeviceGetCount_v2"));
    auto handle = reinterpret_cast<nvml_return (*)(unsigned int, nvml_device*)>(sym("nvmlDeviceGetHandleByIndex_v2"));
    p->get_procs = reinterpret_cast<decltype(p->get_procs)>(sym("nvmlDeviceGetComputeRunningProcesses_v3"));
    if (!p->get_procs) p->get_procs = reinterpret_cast<decltype(p->get_procs)>(sym("nvmlDeviceGetComputeRunningProcesses_v2"));
    auto shutdown = reinterpret_cast<nvml_return (*)()>(sym("nvmlShutdown"));
    if (!init || !count || !handle || !p->get_procs || !shutdown) return fail("NVML lacks the per-process queries");
    if (nvml_return r = init(); r != NVML_SUCCESS) return fail(fmt::format("nvmlInit failed (NVML error {})", r));
    p->shutdown = shutdown;
    unsigned int n = 0;
    if (count(&n) != NVML_SUCCESS || n == 0) return fail("NVML sees no device");
    for (unsigned int i = 0; i < n; ++i) {
        nvml_device d = nullptr;
        if (handle(i, &d) == NVML_SUCCESS) p->devices.push_back(d);
    }
    if (p->devices.empty()) return fail("NVML sees no usable device");
    return std::unique_ptr<nvml_reader>(new nvml_reader(std::move(p)));
}

std::optional<std::uint64_t> nvml_reader::used_bytes(const std::vector<pid_t>& pids) {
    std::uint64_t total = 0;
    for (nvml_device d : p_->devices) {
        std::vector<nvml_process_info> info(64);
        unsigned int n = static_cast<unsigned int>(info.size());
        nvml_return r = p_->get_procs(d, &n, info.data());
        if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
            info.resize(n + 16);
            n = static_cast<unsigned int>(info.size());
            r = p_->get_procs(d, &n, info.data());
        }
        if (r != NVML_SUCCESS) return std::nullopt;
        for (unsigned int i = 0; i < n; ++i)
            if (std::find(pids.begin(), pids.end(), static_cast<pid_t>(info[i].pid)) != pids.end())
                total += info[i].used_gpu_memory;
    }
    return total;
}

void gpu_peak_tracker::sample(const std::vector<pid_t>& pids) {
    if (!reader) return;
    auto v = reader->used_bytes(pids);
    if (!v) return;
    any_reading = true;
    if (!peak || *v > *peak) peak = v;
}

}  // namespace prof
