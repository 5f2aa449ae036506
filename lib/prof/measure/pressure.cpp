// How busy the host was while a fit ran (CPU pressure from PSI, else /proc/stat), and the
// cgroup and NVML readers made on first use (see measure.hpp).
#include "prof/measure/measure.hpp"

#include "prof/core/cpus.hpp"
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
        if (line.size() > 3 && line.substr(0, 3) == "cpu" && line[3] >= '0' && line[3] <= '9') {
            unsigned n = 0;
            auto [q, ec] = std::from_chars(line.data() + 3, line.data() + line.size(), n);
            if (ec != std::errc() || n > 65535) continue;
            auto v = numbers(line.substr(static_cast<std::size_t>(q - line.data())));
            if (v.size() < 4) continue;
            if (out.cpus.size() <= n) out.cpus.resize(n + 1);
            cpu_jiffies& c = out.cpus[n];
            for (std::size_t i = 0; i < v.size() && i < 8; ++i) c.total += v[i];
            for (std::size_t i : {0, 1, 2, 5, 6})
                if (i < v.size()) c.busy += v[i];
            c.steal = v.size() > 7 ? v[7] : 0;
            c.present = true;
        } else if (line.substr(0, 4) == "cpu ") {
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

namespace {
// The busy, steal and total jiffies of `set` summed; nullopt when a CPU has no line.
std::optional<cpu_jiffies> read_set_jiffies(const std::vector<int>& set) {
    auto t = read_small_file("/proc/stat");
    auto st = t ? parse_proc_stat(*t) : std::nullopt;
    if (!st) return std::nullopt;
    cpu_jiffies sum;
    for (int c : set) {
        if (c < 0 || static_cast<std::size_t>(c) >= st->cpus.size() || !st->cpus[static_cast<std::size_t>(c)].present)
            return std::nullopt;
        const cpu_jiffies& j = st->cpus[static_cast<std::size_t>(c)];
        sum.busy += j.busy, sum.steal += j.steal, sum.total += j.total;
    }
    return sum;
}
}  // namespace

void pressure_meter::bind(pid_t pid) {
    auto fit = affinity_of(pid);
    if (!fit || fit->size() >= allowed_cpu_count()) return;  // not narrower: the host-wide methods
    auto j = read_set_jiffies(*fit);
    if (!j) return;
    set_ = std::move(*fit);
    set0_ = *j;
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
    t1_ = monotonic_seconds();
    const double wall = t1_ - t0_;
    if (!set_.empty()) set1_ = read_set_jiffies(set_);
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

void pressure_meter::settle(measured_fit& f) const {
    const double wall = t1_ - t0_;
    if (set_.empty() || !set1_ || !f.cpu_s || wall <= 0) return;
    if (set1_->busy < set0_.busy || set1_->steal < set0_.steal || set1_->total < set0_.total) return;
    static const double hz = static_cast<double>(sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100);
    const double cpus = static_cast<double>(set_.size());
    // Jiffies are counted at the tick: two ticks per CPU allowed, then what is left beyond the
    // fit's own (exact) CPU time was other tasks' on the fit's CPUs.
    const double others_s = static_cast<double>(set1_->busy - set0_.busy) / hz - *f.cpu_s - 2 * cpus / hz;
    const double others = std::max(0.0, others_s) / (cpus * wall);
    const double total = static_cast<double>(set1_->total - set0_.total);
    const double steal = total > 0 ? static_cast<double>(set1_->steal - set0_.steal) / total : 0.0;
    f.cpu_pressure = std::min(1.0, std::max(others, steal));
    f.pressure_method = "cpu-set";
}

}  // namespace prof
