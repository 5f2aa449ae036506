// LinkRate record, staleness, locality and the host backend (see linkrate.hpp).
#include "prof/device/linkrate.hpp"

#include "prof/core/median.hpp"

#include "prof/core/cpus.hpp"
#include "prof/core/errors.hpp"
#include "prof/io/fsutil.hpp"
#include "prof/io/json_in.hpp"
#include "prof/io/json_out.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <sched.h>
#include <sys/mman.h>

namespace prof {

namespace od = simdjson::ondemand;

link_rate parse_link_rate_text(std::string_view text) {
    link_rate r;
    parse_object_text(text, [&](od::object& obj) { r = read_link_rate(obj); });
    return r;
}

std::string format_cached_rates(const std::vector<cached_rate_row>& rows, time_point_ns now, double max_age_s) {
    std::string out = fmt::format("{:<40} {:<16} {:<4} {:<8} {:>11} {:>13} {:>10}  {}\n", "DEVICE", "HOST", "DIR",
                                  "MEMORY", "BYTES", "RATE", "AGE", "STATE");
    for (const auto& row : rows) {
        if (!row.rate) {
            out += fmt::format("{}: unreadable ({})\n", row.path, row.problem);
            continue;
        }
        const link_rate& r = *row.rate;
        std::string age = "-";
        if (r.measured_at)
            if (auto t = parse_rfc3339(*r.measured_at)) age = human_seconds(static_cast<double>(now - *t) / 1e9);
        auto stale = link_rate_stale(r, now, max_age_s);
        out += fmt::format("{:<40} {:<16} {:<4} {:<8} {:>11} {:>11}/s {:>10}  {}\n", r.device.uuid, r.host, r.direction,
                           r.memory, human_bytes(static_cast<double>(r.transfer_bytes)), human_bytes(r.bytes_per_second),
                           age, stale ? "stale (" + *stale + ")" : "fresh");
    }
    return out;
}

std::vector<std::string> link_rate_key(const std::string& uuid, const std::string& host, const std::string& direction,
                                       const std::string& memory, std::uint64_t transfer_bytes) {
    return {uuid, host, direction, memory, std::to_string(transfer_bytes)};
}

std::vector<std::string> link_rate_record_key(std::string_view text) {
    link_rate r = parse_link_rate_text(text);
    if (r.samples.empty()) throw field_error("field 'samples': empty; a cached rate must carry its samples");
    if (r.transfer_bytes == 0) throw field_error("field 'transfer_bytes': 0");
    std::vector<double> samples = r.samples;
    double median = *prof::median(samples);
    if (!(r.bytes_per_second == median))
        throw field_error(fmt::format("field 'bytes_per_second': {} is not the median of its samples ({})",
                                      r.bytes_per_second, median));
    return link_rate_key(r.device.uuid, r.host, r.direction, r.memory, r.transfer_bytes);
}

std::optional<std::string> link_rate_stale(const link_rate& r, time_point_ns now, double max_age_s) {
    if (!r.measured_at) return "never dated (no measured_at)";
    auto t = parse_rfc3339(*r.measured_at);
    if (!t) return fmt::format("measured_at \"{}\" is not an RFC 3339 time stamp", *r.measured_at);
    double age = static_cast<double>(now - *t) / 1e9;
    if (age < 0) return fmt::format("measured_at {} is in the future", *r.measured_at);
    if (age > max_age_s)
        return fmt::format("measured {} ago, older than --max-age {}", human_seconds(age), human_seconds(max_age_s));
    return std::nullopt;
}

std::vector<int> parse_cpulist(std::string_view text) {
    std::vector<int> out;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    if (text.empty()) return out;
    auto num = [&](std::string_view s) {
        int v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0)
            throw field_error(fmt::format("malformed CPU list \"{}\"", text));
        return v;
    };
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        std::string_view part = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        std::size_t dash = part.find('-');
        if (dash == std::string_view::npos) {
            out.push_back(num(part));
        } else {
            int a = num(part.substr(0, dash)), b = num(part.substr(dash + 1));
            if (b < a || b - a > 1 << 16) throw field_error(fmt::format("malformed CPU list \"{}\"", text));
            for (int c = a; c <= b; ++c) out.push_back(c);
        }
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string normalize_pci_bus_id(std::string_view id) {
    std::string out(id);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

pci_locality read_pci_locality(const std::string& pci_bus_id, const std::string& sysfs_root) {
    pci_locality out;
    std::string dir = sysfs_root + "/bus/pci/devices/" + normalize_pci_bus_id(pci_bus_id);
    try {
        std::string n = read_file(dir + "/numa_node");
        int v = 0;
        while (!n.empty() && (n.back() == '\n' || n.back() == ' ')) n.pop_back();
        auto r = std::from_chars(n.data(), n.data() + n.size(), v);
        if (r.ec == std::errc() && v >= 0) out.numa_node = v;
    } catch (const error&) {
        // No sysfs entry (a container without /sys/bus/pci): the node stays unknown.
    }
    try {
        out.local_cpus = parse_cpulist(read_file(dir + "/local_cpulist"));
    } catch (const error&) {
    } catch (const field_error&) {
    }
    return out;
}


std::vector<int> bind_thread_to(const std::vector<int>& cpus) {
    std::vector<int> allowed = allowed_cpus();
    std::vector<int> both;
    std::set_intersection(allowed.begin(), allowed.end(), cpus.begin(), cpus.end(), std::back_inserter(both));
    if (both.empty()) return allowed;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : both)
        if (c < CPU_SETSIZE) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) return allowed;
    return allowed_cpus();
}

std::vector<double> measure_samples(link_copier& copier, std::uint64_t bytes, std::size_t samples, std::size_t warmups) {
    for (std::size_t k = 0; k < warmups; ++k) copier.copy_seconds();
    std::vector<double> out;
    out.reserve(samples);
    for (std::size_t k = 0; k < samples; ++k) {
        double s = copier.copy_seconds();
        if (!(s > 0) || !std::isfinite(s))
            throw error(exit_code::software, fmt::format("a {}-byte copy was timed at {} s: the timer cannot resolve it; "
                                                         "use a larger --bytes",
                                                         bytes, s));
        out.push_back(static_cast<double>(bytes) / s);
    }
    return out;
}

namespace {
// Notes the CPU the calling thread is on around every copy (sched_getcpu), so the record says
// where the measurement actually ran, not only where it was allowed to.
class cpu_noting_copier final : public link_copier {
public:
    explicit cpu_noting_copier(link_copier& inner) : inner_(inner) {}
    double copy_seconds() override {
        note();
        double s = inner_.copy_seconds();
        note();
        return s;
    }
    std::vector<int> cpus() const { return {seen_.begin(), seen_.end()}; }

private:
    void note() {
        int c = sched_getcpu();
        if (c >= 0 && std::find(seen_.begin(), seen_.end(), c) == seen_.end()) {
            seen_.push_back(c);
            std::sort(seen_.begin(), seen_.end());
        }
    }
    link_copier& inner_;
    std::vector<int> seen_;
};
}  // namespace

link_rate measure_link_rate(link_backend& backend, const std::string& host, const std::string& direction,
                            const std::string& memory, std::uint64_t bytes, std::size_t samples, std::size_t warmups) {
    auto inner = backend.prepare(direction, memory, bytes);
    cpu_noting_copier copier_on_cpus(*inner);
    link_copier* copier = &copier_on_cpus;
    link_rate r;
    r.host = host;
    r.device = backend.device();
    r.direction = direction;
    r.memory = memory;
    r.transfer_bytes = bytes;
    r.samples = measure_samples(*copier, bytes, samples, warmups);
    std::vector<double> rates = r.samples;
    r.bytes_per_second = *median(rates);
    r.measured_at = format_rfc3339(now_ns());
    r.method = backend.method();
    r.driver_version = backend.driver_version();
    r.runtime_version = backend.runtime_version();
    r.cpus = copier_on_cpus.cpus();
    if (r.cpus.empty()) r.cpus = backend.cpus();  // sched_getcpu unavailable: the allowed set
    return r;
}

// ---- --device host ----------------------------------------------------------------------------

namespace {

class host_buffer {
public:
    host_buffer(std::uint64_t bytes, bool pinned) : size_(bytes) {
        // Page-aligned and touched once here, outside the timed loop (no first-touch faults
        // in a sample).
        if (posix_memalign(&p_, 4096, bytes) != 0) throw unavailable_error(fmt::format("cannot allocate {} bytes of host memory", bytes));
        std::memset(p_, 1, bytes);
        if (pinned && ::mlock(p_, bytes) != 0) {
            int e = errno;
            std::free(p_);
            throw unavailable_error(fmt::format("cannot pin {} bytes of host memory (mlock: {}); raise RLIMIT_MEMLOCK "
                                                "(ulimit -l) or use --memory pageable",
                                                bytes, std::strerror(e)));
        }
        locked_ = pinned;
    }
    ~host_buffer() {
        if (locked_) ::munlock(p_, size_);
        std::free(p_);
    }
    host_buffer(const host_buffer&) = delete;
    host_buffer& operator=(const host_buffer&) = delete;
    void* data() const { return p_; }

private:
    void* p_ = nullptr;
    std::uint64_t size_;
    bool locked_ = false;
};

class host_copier final : public link_copier {
public:
    host_copier(std::uint64_t bytes, bool pinned) : src_(bytes, pinned), dst_(bytes, pinned), bytes_(bytes) {}
    double copy_seconds() override {
        auto t0 = std::chrono::steady_clock::now();
        std::memcpy(dst_.data(), src_.data(), bytes_);
        auto t1 = std::chrono::steady_clock::now();
        // Read the copy back so the compiler cannot drop it.
        sink_ += static_cast<volatile unsigned char*>(dst_.data())[bytes_ - 1];
        return std::chrono::duration<double>(t1 - t0).count();
    }

private:
    host_buffer src_, dst_;
    std::uint64_t bytes_;
    unsigned sink_ = 0;
};

class host_backend final : public link_backend {
public:
    host_backend() {
        dev_.name = "host";
        dev_.uuid = "host";
    }
    const link_device& device() const override { return dev_; }
    std::string method() const override { return "host-memcpy"; }
    std::optional<std::string> driver_version() const override { return std::nullopt; }
    std::optional<std::string> runtime_version() const override { return std::nullopt; }
    std::vector<int> cpus() const override { return allowed_cpus(); }
    std::unique_ptr<link_copier> prepare(const std::string&, const std::string& memory, std::uint64_t bytes) override {
        return std::make_unique<host_copier>(bytes, memory == "pinned");
    }

private:
    link_device dev_;
};

}  // namespace

std::unique_ptr<link_backend> host_link_backend() { return std::make_unique<host_backend>(); }

}  // namespace prof
