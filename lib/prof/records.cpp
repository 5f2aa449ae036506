// Reading and writing `cell` and `fit` records (see records.hpp).
#include "prof/records.hpp"

#include "prof/keys.hpp"
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

std::string params_digest(const std::string& text) { return sha256_hex(text); }

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
