// The `cell` and `fit` records' schemas, and their readers and writers (see records.hpp).
#include "prof/records/fit_record.hpp"

#include "prof/core/units.hpp"

#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;

namespace {
// family: a null family is not given, so it defaults to model_type.
template <class T>
bool read_family(T& r, od::value v, std::string_view path) {
    auto s = read_string(v, path);
    if (s) r.family = *s;
    return s.has_value();
}
// A cell or fit without a family says so: its fits do not vote on their model's family.
template <class T>
void family_of_model(T& r) {
    r.family = r.model_type;
    r.family_named = false;
}
}  // namespace

const record_schema<cell>& cell_schema() {
    static const record_schema<cell> s{"cell", "cell", false, {
        member<&cell::ts_id>("ts_id").required(),
        member<&cell::model_type>("model_type").required(),
        member<&cell::family>("family").reads(read_family<cell>).defaults(family_of_model<cell>),
        member<&cell::n_obs>("n_obs"),
        member<&cell::params>("params").typed(json_kind::object, true)
            .reads([](cell& c, od::value v, std::string_view) {
                json_value pv = read_json_value(v);
                if (pv.t == json_value::type::null) c.params.reset();
                else if (!pv.is_object()) throw field_error("field 'params': expected an object or null, found " + shown_value(pv.dump()));
                else c.params = pv.dump();
                return true;
            })
            .writes([](const cell& c, json_writer& w, std::string_view key) {
                if (!c.params) return;  // absent rather than null: a cell without params
                w.key(key);
                w.raw(*c.params);
            }),
    }};
    return s;
}

const record_schema<measured_fit>& fit_schema() {
    using F = measured_fit;
    static const record_schema<F> s{"fit", "fit", false, {
        member<&F::ts_id>("ts_id").required(),
        member<&F::model_type>("model_type").required(),
        member<&F::family>("family")
            .typed(json_kind::string, true)
            .reads(read_family<F>)
            .defaults(family_of_model<F>)
            .writes([](const F& f, json_writer& w, std::string_view key) {
                // A cell without a family gives a fit without one, not one named after the model.
                if (f.family_named) w.field(key, f.family);
                else w.null_field(key);
            }),
        member<&F::n_obs>("n_obs"),
        member<&F::params_digest>("params_digest"),
        member<&F::ok>("ok").required().reads([](F& f, od::value v, std::string_view) {
            auto b = read_bool(v, "ok");
            if (!b) throw field_error("field 'ok': expected true or false, found null");
            f.ok = *b;
            return true;
        }),
        member<&F::error>("error"),
        member<&F::exit_code>("exit_code"),
        member<&F::signal>("signal"),
        member<&F::memory_limit_bytes>("memory_limit_bytes"),
        member<&F::oom_killed>("oom_killed"),
        member<&F::wall_s>("wall_s"),
        member<&F::cpu_s>("cpu_s"),
        computed<F>("effective_cores", json_kind::number, true, [](const F& f, json_writer& w, std::string_view key) {
            w.field(key, effective_cores(f.wall_s, f.cpu_s));
        }),
        member<&F::process_rss_bytes>("process_rss_bytes"),
        member<&F::peak_rss_bytes>("peak_rss_bytes"),
        member<&F::cgroup_peak_bytes>("cgroup_peak_bytes"),
        member<&F::page_cache_bytes>("page_cache_bytes"),
        member<&F::peak_gpu_bytes>("peak_gpu_bytes"),
        member<&F::gpu_method>("gpu_method"),
        member<&F::intraop_threads>("intraop_threads"),
        member<&F::host_cpu_count>("host_cpu_count"),
        member<&F::host>("host"),
        member<&F::rss_peak_reset>("rss_peak_reset"),
        member<&F::rss_method>("rss_method"),
        member<&F::cpu_pressure>("cpu_pressure").reads([](F& f, od::value v, std::string_view) {
            f.cpu_pressure = read_number(v, "cpu_pressure");
            if (f.cpu_pressure && !std::isfinite(*f.cpu_pressure)) f.cpu_pressure.reset();  // not usable
            if (f.cpu_pressure && !(*f.cpu_pressure >= 0 && *f.cpu_pressure <= 1))
                throw field_error(fmt::format("field 'cpu_pressure': expected a share from 0 to 1, found {}",
                                              format_double(*f.cpu_pressure)));
            return true;
        }),
        member<&F::pressure_method>("pressure_method"),
        member_via<&F::measured_at, time_stamp_or_null>("measured_at"),
        member<&F::phase>("phase").reads([](F& f, od::value v, std::string_view) {
            auto p = read_string(v, "phase");  // null or absent: a fit of the sample
            f.phase = p.value_or(std::string(fit_phase_sample));
            if (f.phase != fit_phase_sample && f.phase != fit_phase_warmup && f.phase != fit_phase_replay &&
                f.phase != fit_phase_superseded)
                throw field_error(fmt::format("field 'phase': expected sample, warmup, replay or superseded, found {}",
                                              shown_value("\"" + f.phase + "\"")));
            return true;
        }),
        member<&F::cold>("cold"),
        member<&F::worker_peak_bytes>("worker_peak_bytes"),
        member<&F::worker_max_n_obs>("worker_max_n_obs").writes([](const F& f, json_writer& w, std::string_view key) {
            if (f.worker_max_n_obs) w.field(key, *f.worker_max_n_obs);  // absent, not null, in process mode
        }),
        member<&F::concurrent_fits>("concurrent_fits").writes([](const F& f, json_writer& w, std::string_view key) {
            if (f.concurrent_fits) w.field(key, *f.concurrent_fits);  // absent, not null, under --jobs 1
        }),
        member<&F::attempts>("attempts").writes([](const F& f, json_writer& w, std::string_view key) {
            if (f.attempts) w.field(key, *f.attempts);  // absent, not null, for a cell measured once
        }),
    }};
    return s;
}

cell read_cell(od::object& obj) { return read_record(cell_schema(), obj); }

std::string write_cell(const cell& c) { return write_record(cell_schema(), c); }

measured_fit read_fit(od::object& obj) { return read_record(fit_schema(), obj); }

std::string write_fit(const measured_fit& f) { return write_record(fit_schema(), f); }

}  // namespace prof
