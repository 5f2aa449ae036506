// Unit tests of LinkRate (linkrate.hpp) and the pure parts of the CUDA loader (cuda.hpp); the
// GPU cases run only where a device answers, and are skipped (and counted) elsewhere.
#include "prof/io/cache.hpp"
#include "prof/device/cuda.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/median.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/device/link_rate_record.hpp"
#include "prof/core/test_support.hpp"
#include "prof/device/test_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <sched.h>
#include <unistd.h>

using namespace prof;
namespace fs = std::filesystem;

namespace {

// What this machine has, decided once: a loadable runtime, and a device it can see.
enum class cuda_state { no_runtime, no_device, device };
cuda_state probe_cuda() {
    try {
        auto rt = cuda_runtime::load();
        rt->devices();
        return cuda_state::device;
    } catch (const unavailable_error& e) {
        return std::string(e.what()).rfind("cannot load the CUDA runtime", 0) == 0 ? cuda_state::no_runtime
                                                                                   : cuda_state::no_device;
    }
}
const cuda_state cuda_here = probe_cuda();

// A copier whose durations are given: the loop's arithmetic without any clock.
class scripted_copier final : public link_copier {
public:
    explicit scripted_copier(std::vector<double> d) : d_(std::move(d)) {}
    double copy_seconds() override { return d_.at(i_++); }
    std::size_t calls() const { return i_; }

private:
    std::vector<double> d_;
    std::size_t i_ = 0;
};

}  // namespace

TEST_CASE("linkrate: warm-up copies are discarded and each sample is bytes over seconds") {
    // 2 warm-ups (10 s, 10 s: a slow first call) then 1 MB in 0.5 ms, 1 ms, 0.25 ms.
    scripted_copier c({10, 10, 0.0005, 0.001, 0.00025});
    auto s = measure_samples(c, 1000000, 3, 2);
    CHECK(c.calls() == 5);
    REQUIRE(s.size() == 3);
    CHECK(s[0] == doctest::Approx(2e9));
    CHECK(s[1] == doctest::Approx(1e9));
    CHECK(s[2] == doctest::Approx(4e9));
    scripted_copier zero({0});
    CHECK_THROWS_AS(measure_samples(zero, 10, 1, 0), error);
}

TEST_CASE("linkrate: the record round-trips byte for byte, with nulls kept") {
    auto r = test::sample_link_rate();
    std::string line = write_link_rate(r);
    CHECK(line.rfind(R"({"kind":"link_rate","host":"h","device":{"name":"NVIDIA H200","uuid":"GPU-0a1b2c3d-0000-1111-2222-333344445555","pci_bus_id":"0000:1b:00.0","numa_node":0},"direction":"h2d","memory":"pinned","transfer_bytes":67108864,"bytes_per_second":51000000000,)", 0) == 0);
    CHECK(write_link_rate(parse_link_rate_text(line)) == line);
    r.device = {"host", "host", std::nullopt, std::nullopt};
    r.measured_at.reset();
    r.driver_version.reset();
    line = write_link_rate(r);
    CHECK(line.find(R"("pci_bus_id":null,"numa_node":null)") != std::string::npos);
    CHECK(line.find(R"("measured_at":null)") != std::string::npos);
    CHECK(write_link_rate(parse_link_rate_text(line)) == line);
    CHECK_THROWS_AS(parse_link_rate_text(R"({"kind":"link_rate","host":"h"})"), field_error);
    CHECK_THROWS_AS(parse_link_rate_text(R"({"kind":"query_profile"})"), field_error);
    CHECK_THROWS_AS(parse_link_rate_text("{nope"), field_error);
}

TEST_CASE("linkrate: stale when older than --max-age, never dated, badly dated or from the future") {
    auto r = test::sample_link_rate();  // measured 2026-11-29T15:00:00Z
    time_point_ns t = *parse_rfc3339("2026-11-29T15:00:00Z");
    const time_point_ns s = 1000000000;
    CHECK_FALSE(link_rate_stale(r, t + 3600 * s, 86400));
    CHECK_FALSE(link_rate_stale(r, t + 86400 * s, 86400));  // exactly the age: still fresh
    auto why = link_rate_stale(r, t + 86401 * s, 86400);
    REQUIRE(why);
    CHECK(why->find("older than --max-age") != std::string::npos);
    CHECK(link_rate_stale(r, t - 60 * s, 86400));
    r.measured_at.reset();
    CHECK(*link_rate_stale(r, t, 86400) == "never dated (no measured_at)");
    r.measured_at = "yesterday";
    CHECK(link_rate_stale(r, t, 86400));
}

TEST_CASE("linkrate: the cache key is the device UUID, never its index, plus host, direction, memory, size") {
    auto k = link_rate_key("GPU-0a1b", "node 7", "h2d", "pinned", 1073741824);
    CHECK(k == std::vector<std::string>{"GPU-0a1b", "node 7", "h2d", "pinned", "1073741824"});
    test::temp_dir tmp("linkrate-test");
    const std::string& dir = tmp.path;
    profile_cache c(dir);
    CHECK(fs::path(c.path_for("link_rate", k)).filename() == "GPU-0a1b@node%207@h2d@pinned@1073741824.json");
    CHECK(c.path_for("link_rate", k) != c.path_for("link_rate", link_rate_key("GPU-0a1b", "node 7", "d2h", "pinned", 1073741824)));
}

TEST_CASE("linkrate: CPU lists and PCI locality are read the sysfs way") {
    CHECK(parse_cpulist("0-3,8,10-11\n") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
    CHECK(parse_cpulist("") == std::vector<int>{});
    CHECK_THROWS_AS(parse_cpulist("3-1"), field_error);
    CHECK_THROWS_AS(parse_cpulist("a"), field_error);
    CHECK(normalize_pci_bus_id("0000:1B:00.0") == "0000:1b:00.0");
    test::temp_dir tmp("sysfs-test");
    const std::string& root = tmp.path;
    std::string dev = root + "/bus/pci/devices/0000:1b:00.0";
    make_dirs(dev);
    write_file_atomic(dev + "/numa_node", "1\n");
    write_file_atomic(dev + "/local_cpulist", "8-11\n");
    auto loc = read_pci_locality("0000:1B:00.0", root);
    CHECK(loc.numa_node == std::optional<int>(1));
    CHECK(loc.local_cpus == std::vector<int>{8, 9, 10, 11});
    write_file_atomic(dev + "/numa_node", "-1\n");
    CHECK_FALSE(read_pci_locality("0000:1b:00.0", root).numa_node);
    CHECK_FALSE(read_pci_locality("0000:99:00.0", root).numa_node);  // no such device: unknown
}

TEST_CASE("linkrate: binding to CPUs outside the allowed set leaves the thread where it was") {
    auto before = bind_thread_to({});
    REQUIRE_FALSE(before.empty());
    CHECK(bind_thread_to({100000}) == before);
    auto one = bind_thread_to({before.front()});
    CHECK(one == std::vector<int>{before.front()});
    CHECK(bind_thread_to(before) == one);  // never widens what the thread was allowed
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : before) CPU_SET(c, &set);
    REQUIRE(sched_setaffinity(0, sizeof set, &set) == 0);  // restore for the other tests
    CHECK(bind_thread_to({}) == before);
}

TEST_CASE("linkrate: --device host measures a real host memcpy, pinned and pageable") {
    auto b = host_link_backend();
    for (const char* mem : {"pinned", "pageable"}) {
        // 1 MiB buffers: two of them pinned stay well inside a default RLIMIT_MEMLOCK.
        auto r = measure_link_rate(*b, "h", "h2d", mem, 1 << 20, 5, 2);
        CHECK(r.device.uuid == "host");
        CHECK(r.method == "host-memcpy");
        CHECK(r.samples.size() == 5);
        std::vector<double> samples = r.samples;
        CHECK(r.bytes_per_second == *median(samples));
        // A 1 MiB memcpy on any machine that runs these tests: between 100 MB/s and 1 TB/s.
        CHECK(r.bytes_per_second > 1e8);
        CHECK(r.bytes_per_second < 1e12);
        CHECK(parse_rfc3339(*r.measured_at));
        // The CPUs the copies ran on: at least one, all of them ones the thread may use.
        auto allowed = bind_thread_to({});
        REQUIRE_FALSE(r.cpus.empty());
        CHECK(std::includes(allowed.begin(), allowed.end(), r.cpus.begin(), r.cpus.end()));
        CHECK_FALSE(link_rate_stale(r, now_ns(), 60));
    }
}

TEST_CASE("cuda: UUID and version formatting, and how --device names a device") {
    const unsigned char u[16] = {0x0a, 0x1b, 0x2c, 0x3d, 0, 0, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55};
    CHECK(format_gpu_uuid(u) == "GPU-0a1b2c3d-0000-1111-2222-333344445555");
    CHECK(format_cuda_version(12040) == "12.4");
    CHECK(format_cuda_version(13000) == "13.0");
    cuda_device_info d{1, "NVIDIA H200", "GPU-0a1b2c3d-0000-1111-2222-333344445555", "0000:1b:00.0"};
    CHECK(device_matches("1", d));
    CHECK_FALSE(device_matches("0", d));
    CHECK(device_matches("GPU-0A1B2C3D-0000-1111-2222-333344445555", d));
    CHECK(device_matches("0a1b2c3d-0000-1111-2222-333344445555", d));
    CHECK_FALSE(device_matches("GPU-ffff", d));
}

TEST_CASE("cuda: PROF_CUDART pointing nowhere is 'no runtime', with the loader's own reason") {
    ::setenv("PROF_CUDART", "/nonexistent/libcudart.so.13", 1);
    try {
        cuda_runtime::load();
        FAIL("expected the runtime to be missing");
    } catch (const unavailable_error& e) {
        CHECK(e.code() == exit_code::unavailable);
        CHECK(std::string(e.what()) ==
              "cannot load the CUDA runtime (tried /nonexistent/libcudart.so.13): /nonexistent/libcudart.so.13: cannot "
              "open shared object file: No such file or directory");
    }
    ::unsetenv("PROF_CUDART");
}

TEST_CASE("cuda: a runtime without a usable device says why, in the runtime's words" *
          doctest::skip(cuda_here != cuda_state::no_device)) {
    auto rt = cuda_runtime::load();
    try {
        rt->devices();
        FAIL("expected no device");
    } catch (const unavailable_error& e) {
        CHECK(e.code() == exit_code::unavailable);
        // e.g. "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version (CUDA error 35)"
        CHECK(std::string(e.what()).rfind("cudaGetDeviceCount: ", 0) == 0);
    }
}

TEST_CASE("cuda: pinned H2D on a real device is timed with events and lands in a plausible range" *
          doctest::skip(cuda_here != cuda_state::device)) {
    auto rt = cuda_runtime::load();
    auto b = cuda_link_backend(*rt, "0");
    CHECK(b->device().uuid.rfind("GPU-", 0) == 0);
    auto r = measure_link_rate(*b, "h", "h2d", "pinned", 64 << 20, 5, 3);
    CHECK(r.method == "cuda-events");
    CHECK(r.bytes_per_second > 1e9);    // slower than 1 GB/s is no working PCIe link
    CHECK(r.bytes_per_second < 1e12);
}

TEST_CASE("linkrate: a cached record names its own key and must agree with its own samples") {
    link_rate r = test::sample_link_rate();
    // median of {5.0e10, 5.2e10, 5.1e10} = 5.1e10 = bytes_per_second: consistent.
    CHECK(link_rate_record_key(write_link_rate(r)) ==
          std::vector<std::string>{"GPU-0a1b2c3d-0000-1111-2222-333344445555", "h", "h2d", "pinned", "67108864"});
    r.direction = "d2h";
    CHECK(link_rate_record_key(write_link_rate(r))[2] == "d2h");
    r.bytes_per_second = 9e10;  // not the median of its samples
    CHECK_THROWS_WITH_AS(link_rate_record_key(write_link_rate(r)),
                         "field 'bytes_per_second': 90000000000 is not the median of its samples (51000000000)",
                         field_error);
    r.bytes_per_second = 5.1e10;
    r.samples.clear();
    CHECK_THROWS_AS(link_rate_record_key(write_link_rate(r)), field_error);
    CHECK_THROWS_AS(link_rate_record_key(""), field_error);
}

TEST_CASE("linkrate: a cached rate that says another direction, host or size, or is corrupt, is a miss") {
    test::temp_dir tmp("linkrate-cache");
    const std::string& root = tmp.path;
    profile_cache cache(root);
    link_rate r = test::sample_link_rate();
    auto key = link_rate_key(r.device.uuid, r.host, "h2d", "pinned", 67108864);
    auto stored_as_key = [&](const link_rate& x) {
        cache.put("link_rate", key, write_link_rate(x));
        return cache.get("link_rate", key, link_rate_record_key);
    };
    CHECK(stored_as_key(r) == std::optional<std::string>(write_link_rate(r)));
    link_rate other = r;
    other.direction = "d2h";
    CHECK_FALSE(stored_as_key(other));
    other = r;
    other.host = "elsewhere";
    CHECK_FALSE(stored_as_key(other));
    other = r;
    other.transfer_bytes = 1024;
    CHECK_FALSE(stored_as_key(other));
    other = r;
    other.bytes_per_second = 1e12;  // disagrees with its own samples' median
    CHECK_FALSE(stored_as_key(other));
}

TEST_CASE("a link_rate record written and read back is the same record") {
    link_rate r;
    r.host = "h";
    r.device = {"H200", "GPU-1", "0000:1b:00.0", 1};
    r.direction = "h2d";
    r.memory = "pinned";
    r.transfer_bytes = 1 << 20;
    r.bytes_per_second = 5e10;
    r.samples = {4e10, 5e10, 6e10};
    r.method = "cuda-events";
    r.cpus = {0, 1};
    std::string text = write_link_rate(r);
    CHECK(write_link_rate(parse_link_rate_text(text)) == text);
}
