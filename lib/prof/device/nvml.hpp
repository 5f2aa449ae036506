// Peak GPU memory of a fit through NVML, loaded at run time (dlopen of libnvidia-ml.so.1): no
// binary links NVML, and on a machine without a driver or device every reading is "not
// measured" (null), never 0.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prof {

class nvml_reader {
public:
    // nullptr when NVML cannot be loaded or initialised or there is no device; `why` says which.
    static std::unique_ptr<nvml_reader> open(std::string* why = nullptr);
    ~nvml_reader();
    // Device memory in use by the given processes, summed over all devices (NVML's per-process
    // usedGpuMemory of compute processes). nullopt when a query failed.
    std::optional<std::uint64_t> used_bytes(const std::vector<pid_t>& pids);

private:
    struct impl;
    explicit nvml_reader(std::unique_ptr<impl> p);
    std::unique_ptr<impl> p_;
};

// Polls an nvml_reader while a fit runs and keeps the largest reading (gpu_method "nvml-poll").
struct gpu_peak_tracker {
    nvml_reader* reader = nullptr;  // null → peak stays unmeasured
    std::optional<std::uint64_t> peak;
    bool any_reading = false;
    void sample(const std::vector<pid_t>& pids);
    void reset() {
        peak.reset();
        any_reading = false;
    }
};

}  // namespace prof
