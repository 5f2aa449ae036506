// The link-rate fixture of unit tests: a measured rate every field of which a test can check.
// Included by *_test.cpp only: never part of libprof.a.
#pragma once

#include "prof/core/test_support.hpp"
#include "prof/device/linkrate.hpp"

namespace prof::test {

// A host-to-device rate of a pinned 64 MiB copy on an H200 of host "h", measured
// 2026-11-29T15:00:00Z by CUDA events: three samples, their median 5.1e10 bytes/s.
inline link_rate sample_link_rate() {
    link_rate r;
    r.host = "h";
    r.device = {"NVIDIA H200", "GPU-0a1b2c3d-0000-1111-2222-333344445555", "0000:1b:00.0", 0};
    r.direction = "h2d";
    r.memory = "pinned";
    r.transfer_bytes = 67108864;
    r.samples = {5.0e10, 5.2e10, 5.1e10};
    r.bytes_per_second = 5.1e10;
    r.measured_at = "2026-11-29T15:00:00Z";
    r.method = "cuda-events";
    r.driver_version = "12.4";
    r.runtime_version = "12.4";
    r.cpus = {0, 1, 2, 3};
    return r;
}

}  // namespace prof::test
