// Reading and writing `cell` and `fit` records (see records.hpp).
#include "prof/records.hpp"

#include "prof/errors.hpp"
#include "prof/json_out.hpp"
#include "prof/units.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

std::map<std::string, std::string> parse_params_file(std::string_view text, const std::string& source) {
    json_value v;
    try {
        v = parse_json_text(text);
    } catch (const field_error& e) {
        throw error(exit_code::data_err, fmt::format("{}: {}", source, e.what()));
    }
    if (!v.is_object())
        throw error(exit_code::data_err, fmt::format("{}: expected a JSON object of model → params", source));
    std::map<std::string, std::string> out;
    for (const auto& [model, params] : v.obj) {
        if (params.t == json_value::type::null) continue;
        if (!params.is_object())
            throw error(exit_code::data_err, fmt::format("{}: model '{}': expected its params as an object (or null), found {}",
                                                         source, model, shown_value(params.dump())));
        out[model] = params.dump();
    }
    return out;
}

cell read_cell(od::object& obj) {
    cell c;
    bool have_ts = false, have_model = false, have_family = false;
    for (auto field : obj) {
        std::string_view k = field.unescaped_key();
        od::value v = field.value();
        if (k == "kind") check_kind(v, "cell");
        else if (k == "ts_id") { c.ts_id = require_string(v, k); have_ts = true; }
        else if (k == "model_type") { c.model_type = require_string(v, k); have_model = true; }
        else if (k == "family") {
            auto s = read_string(v, k);
            if (s) { c.family = *s; have_family = true; }
        } else if (k == "n_obs") c.n_obs = read_count(v, k);
        else if (k == "params") {
            json_value pv = read_json_value(v);
            if (pv.t == json_value::type::null) c.params.reset();
            else if (!pv.is_object()) throw field_error("field 'params': expected an object or null, found " + shown_value(pv.dump()));
            else c.params = pv.dump();
        }
    }
    if (!have_ts) missing_field("ts_id");
    if (!have_model) missing_field("model_type");
    if (!have_family) c.family = c.model_type;
    return c;
}

std::string write_cell(const cell& c) {
    json_writer w;
    w.begin_object();
    w.field("kind", "cell");
    w.field("ts_id", c.ts_id);
    w.field("model_type", c.model_type);
    w.field("family", c.family);
    w.field("n_obs", c.n_obs);
    if (c.params) {
        w.key("params");
        w.raw(*c.params);
    }
    w.end_object();
    return w.take();
}

// FIPS 180-4 SHA-256, here rather than through libcrypto: prof-measure forks every fit from a
// launcher whose footprint is prof-measure's at start, and linking libcrypto adds its
// relocated pages to it (and so to every fit's reading).
std::string params_digest(const std::string& text) {
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string msg = text;
    std::uint64_t bits = static_cast<std::uint64_t>(text.size()) * 8;
    msg.push_back(static_cast<char>(0x80));
    while (msg.size() % 64 != 56) msg.push_back('\0');
    for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bits >> (i * 8)) & 0xff));
    auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    for (std::size_t off = 0; off < msg.size(); off += 64) {
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i) {
            const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * i);
            w[i] = (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
        }
        for (int i = 16; i < 64; ++i) {
            std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
    }
    std::string out;
    for (std::uint32_t v : h) out += fmt::format("{:08x}", v);
    return out;
}

measured_fit read_fit(od::object& obj) {
    measured_fit f;
    bool have_ts = false, have_model = false, have_ok = false, have_family = false;
    for (auto field : obj) {
        std::string_view k = field.unescaped_key();
        od::value v = field.value();
        if (k == "kind") check_kind(v, "fit");
        else if (k == "ts_id") { f.ts_id = require_string(v, k); have_ts = true; }
        else if (k == "model_type") { f.model_type = require_string(v, k); have_model = true; }
        else if (k == "family") {
            auto s = read_string(v, k);
            if (s) { f.family = *s; have_family = true; }
        }
        else if (k == "n_obs") f.n_obs = read_count(v, k);
        else if (k == "params_digest") f.params_digest = read_string(v, k);
        else if (k == "ok") {
            auto b = read_bool(v, k);
            if (!b) throw field_error("field 'ok': expected true or false, found null");
            f.ok = *b;
            have_ok = true;
        }
        else if (k == "error") f.error = read_string(v, k);
        else if (k == "exit_code") f.exit_code = read_int(v, k);
        else if (k == "signal") f.signal = read_string(v, k);
        else if (k == "memory_limit_bytes") f.memory_limit_bytes = read_count(v, k);
        else if (k == "oom_killed") f.oom_killed = read_bool(v, k);
        else if (k == "wall_s") f.wall_s = read_number(v, k);
        else if (k == "cpu_s") f.cpu_s = read_number(v, k);
        else if (k == "process_rss_bytes") f.process_rss_bytes = read_count(v, k);
        else if (k == "peak_rss_bytes") f.peak_rss_bytes = read_count(v, k);
        else if (k == "cgroup_peak_bytes") f.cgroup_peak_bytes = read_count(v, k);
        else if (k == "page_cache_bytes") f.page_cache_bytes = read_count(v, k);
        else if (k == "peak_gpu_bytes") f.peak_gpu_bytes = read_count(v, k);
        else if (k == "gpu_method") f.gpu_method = read_string(v, k);
        else if (k == "intraop_threads") f.intraop_threads = read_count(v, k);
        else if (k == "host_cpu_count") f.host_cpu_count = read_count(v, k);
        else if (k == "host") f.host = read_string(v, k);
        else if (k == "rss_peak_reset") f.rss_peak_reset = read_bool(v, k);
        else if (k == "rss_method") f.rss_method = read_string(v, k);
        else if (k == "cpu_pressure") {
            f.cpu_pressure = read_number(v, k);
            if (f.cpu_pressure && !std::isfinite(*f.cpu_pressure)) f.cpu_pressure.reset();  // not usable
            if (f.cpu_pressure && !(*f.cpu_pressure >= 0 && *f.cpu_pressure <= 1))
                throw field_error(fmt::format("field 'cpu_pressure': expected a share from 0 to 1, found {}",
                                              format_double(*f.cpu_pressure)));
        }
        else if (k == "pressure_method") f.pressure_method = read_string(v, k);
        else if (k == "measured_at") {
            f.measured_at = read_string(v, k);
            if (f.measured_at && !parse_rfc3339(*f.measured_at))
                throw field_error(fmt::format("field 'measured_at': expected an RFC 3339 time stamp, found \"{}\"",
                                              *f.measured_at));
        }
        // effective_cores and unknown fields are ignored: derived values are recomputed.
    }
    if (!have_ts) missing_field("ts_id");
    if (!have_model) missing_field("model_type");
    if (!have_ok) missing_field("ok");
    if (!have_family) f.family = f.model_type;
    return f;
}

std::string write_fit(const measured_fit& f) {
    json_writer w;
    w.begin_object();
    w.field("kind", "fit");
    w.field("ts_id", f.ts_id);
    w.field("model_type", f.model_type);
    w.field("family", f.family);
    w.field("n_obs", f.n_obs);
    w.field("params_digest", f.params_digest);
    w.field("ok", f.ok);
    w.field("error", f.error);
    w.field("exit_code", f.exit_code);
    w.field("signal", f.signal);
    w.field("memory_limit_bytes", f.memory_limit_bytes);
    w.field("oom_killed", f.oom_killed);
    w.field("wall_s", f.wall_s);
    w.field("cpu_s", f.cpu_s);
    w.field("effective_cores", effective_cores(f.wall_s, f.cpu_s));
    w.field("process_rss_bytes", f.process_rss_bytes);
    w.field("peak_rss_bytes", f.peak_rss_bytes);
    w.field("cgroup_peak_bytes", f.cgroup_peak_bytes);
    w.field("page_cache_bytes", f.page_cache_bytes);
    w.field("peak_gpu_bytes", f.peak_gpu_bytes);
    w.field("gpu_method", f.gpu_method);
    w.field("intraop_threads", f.intraop_threads);
    w.field("host_cpu_count", f.host_cpu_count);
    w.field("host", f.host);
    w.field("rss_peak_reset", f.rss_peak_reset);
    w.field("rss_method", f.rss_method);
    w.field("cpu_pressure", f.cpu_pressure);
    w.field("pressure_method", f.pressure_method);
    w.field("measured_at", f.measured_at);
    w.end_object();
    return w.take();
}

}  // namespace prof
