// How busy the host was while a fit ran (CPU pressure from PSI, else /proc/stat), and the
// cgroup and NVML readers made on first use (see measure.hpp).
#include "prof/measure/measure.hpp"

#include "prof/core/units.hpp"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <map>
#include <sys/sysinfo.h>
#include <tuple>
#include <sys/wait.h>
#include <unistd.h>

namespace prof {

// ---- CPU pressure -----------------------------------------------------------------------

namespace {
std::optional<std::string> read_small_file(const char* path) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    ssize_t r;
    while ((r = ::read(fd, buf, sizeof buf)) > 0) {
        out.append(buf, static_cast<std::size_t>(r));
        if (out.size() > (1u << 20)) break;
    }
    ::close(fd);
    return out;
}
}  // namespace

std::optional<std::uint64_t> psi_some_total_us(std::string_view text) {
    if (text.substr(0, 5) != "some ") return std::nullopt;
    auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    auto pos = line.find(" total=");
    if (pos == std::string_view::npos) return std::nullopt;
    std::string_view num = line.substr(pos + 7);
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p == num.data()) return std::nullopt;
    return v;
}

std::optional<proc_stat_cpu> parse_proc_stat(std::string_view text) {
    proc_stat_cpu out;
    bool have_cpu = false, have_running = false;
    std::size_t start = 0;
    while (start < text.size()) {
        auto eol = text.find('\n', start);
        std::string_view line = text.substr(start, eol == std::string_view::npos ? std::string_view::npos : eol - start);
        start = eol == std::string_view::npos ? text.size() : eol + 1;
        auto numbers = [](std::string_view rest) {
            std::vector<std::uint64_t> v;
            const char* p = rest.data();
            const char* e = rest.data() + rest.size();
            while (p < e) {
                while (p < e && *p == ' ') ++p;
                std::uint64_t x = 0;
                auto [q, ec] = std::from_chars(p, e, x);
                if (ec != std::errc()) break;
                v.push_back(x);
                p = q;
            }
            return v;
        };
        if (line.substr(0, 4) == "cpu ") {
            // user nice system idle iowait irq softirq steal guest guest_nice (guest is in user)
            auto v = numbers(line.substr(4));
            if (v.size() < 4) return std::nullopt;
            for (std::size_t i = 0; i < v.size() && i < 8; ++i) out.total += v[i];
            out.steal = v.size() > 7 ? v[7] : 0;
            have_cpu = true;
        } else if (line.substr(0, 14) == "procs_running ") {
            auto v = numbers(line.substr(14));
            if (v.empty()) return std::nullopt;
            out.procs_running = v[0];
            have_running = true;
        }
    }
    if (!have_cpu || !have_running) return std::nullopt;
    return out;
}

cgroup_run* cgroups_on_demand::get() {
    if (!tried_) {
        tried_ = true;
        run_ = open_();
    }
    return run_.get();
}

nvml_reader* nvml_on_demand::get() {
    if (!tried_) {
        tried_ = true;
        reader_ = nvml_reader::open();
    }
    return reader_.get();
}

pressure_meter::pressure_meter() : t0_(monotonic_seconds()) {
    if (auto t = read_small_file("/proc/pressure/cpu")) psi0_ = psi_some_total_us(*t);
    if (psi0_) return;
    if (auto t = read_small_file("/proc/stat"))
        if (auto st = parse_proc_stat(*t)) {
            total0_ = st->total;
            steal0_ = st->steal;
            ++samples_;
            // procs_running counts this process reading the file.
            if (st->procs_running > allowed_cpu_count() + 1) ++busy_;
        }
}

void pressure_meter::sample() {
    if (psi0_ || !total0_) return;
    if (auto t = read_small_file("/proc/stat"))
        if (auto st = parse_proc_stat(*t)) {
            ++samples_;
            if (st->procs_running > allowed_cpu_count() + 1) ++busy_;
        }
}

void pressure_meter::finish(measured_fit& f) {
    double wall = monotonic_seconds() - t0_;
    if (psi0_) {
        auto t = read_small_file("/proc/pressure/cpu");
        auto psi1 = t ? psi_some_total_us(*t) : std::nullopt;
        if (!psi1 || *psi1 < *psi0_ || wall <= 0) return;
        f.cpu_pressure = std::min(1.0, static_cast<double>(*psi1 - *psi0_) * 1e-6 / wall);
        f.pressure_method = "psi";
        return;
    }
    if (!total0_) return;
    sample();
    auto t = read_small_file("/proc/stat");
    auto st = t ? parse_proc_stat(*t) : std::nullopt;
    double steal_share = 0;
    if (st && st->total > *total0_) steal_share = static_cast<double>(st->steal - std::min(st->steal, *steal0_)) /
                                                  static_cast<double>(st->total - *total0_);
    double busy_share = samples_ ? static_cast<double>(busy_) / static_cast<double>(samples_) : 0;
    f.cpu_pressure = std::min(1.0, std::max(steal_share, busy_share));
    f.pressure_method = "proc-stat";
}

}  // namespace prof
