// The `profile` record's schemas (the profile, its provenance, ModelCost with its wall_curve
// points, FamilyCost), its reader and its writer (see profile.hpp).
#include "prof/profile/profile_record.hpp"

#include "prof/core/units.hpp"
#include "prof/io/input.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace prof {
namespace od = simdjson::ondemand;


const record_schema<profile_provenance>& provenance_schema() {
    using P = profile_provenance;
    static const record_schema<P> s{"profile.provenance", "", false, {
        member<&P::basis>("basis"),
        member<&P::source>("source"),
        member<&P::run_id>("run_id"),
        member<&P::baseline_version>("baseline_version"),
        member<&P::measured_at>("measured_at").reads([](P& pv, od::value v, std::string_view path) {
            pv.measured_at = time_stamp_or_null(v, path);
            if (pv.measured_at) pv.measured_at = format_rfc3339(*parse_rfc3339(*pv.measured_at));  // in UTC, as written
            return true;
        }),
        member<&P::signature>("signature"),
        member<&P::warnings>("warnings"),
    }};
    return s;
}

const record_schema<curve_point>& curve_point_schema() {
    using C = curve_point;
    static const record_schema<C> s{"profile.models.*.wall_curve[]", "", false, {
        member<&C::n_obs>("n_obs").required(),
        member<&C::n_obs_min>("n_obs_min"),
        member<&C::n_obs_max>("n_obs_max"),
        member<&C::n_fits>("n_fits"),
        member<&C::wall_s>("wall_s").required().reads([](C& pt, od::value v, std::string_view path) {
            auto w = read_number(v, path);
            if (!w || !std::isfinite(*w) || *w <= 0) throw field_error(fmt::format("field '{}': expected a number > 0", path));
            pt.wall_s = *w;
            return true;
        }),
        member<&C::cpu_s>("cpu_s").reads([](C& pt, od::value v, std::string_view path) {
            pt.cpu_s = read_number(v, path);
            if (pt.cpu_s && !(std::isfinite(*pt.cpu_s) && *pt.cpu_s > 0)) pt.cpu_s.reset();
            return true;
        }),
        member<&C::max_process_rss_bytes>("max_process_rss_bytes").reads([](C& pt, od::value v, std::string_view path) {
            pt.max_process_rss_bytes = read_count(v, path);
            if (pt.max_process_rss_bytes == std::uint64_t{0}) pt.max_process_rss_bytes.reset();  // 0 is no evidence
            return true;
        }),
    }};
    return s;
}

const record_schema<fit_reading>& fit_reading_schema() {
    using R = fit_reading;
    static const record_schema<R> s{"profile.models.*.readings[]", "", false, {
        member<&R::n_obs>("n_obs"),
        member<&R::wall_s>("wall_s").required().reads([](R& r, od::value v, std::string_view path) {
            auto w = read_number(v, path);
            if (!w || !std::isfinite(*w) || *w <= 0) throw field_error(fmt::format("field '{}': expected a number > 0", path));
            r.wall_s = *w;
            return true;
        }),
        member<&R::cpu_s>("cpu_s").reads([](R& r, od::value v, std::string_view path) {
            r.cpu_s = read_number(v, path);
            if (r.cpu_s && !(std::isfinite(*r.cpu_s) && *r.cpu_s > 0)) r.cpu_s.reset();
            return true;
        }),
        member<&R::contended>("contended"),
    }};
    return s;
}

const record_schema<thread_cap_count>& thread_cap_schema() {
    using R = thread_cap_count;
    static const record_schema<R> s{"profile.models.*.thread_caps[]", "", false, {
        member<&R::intraop_threads>("intraop_threads"),
        member<&R::n_fits>("n_fits").required(),
    }};
    return s;
}

namespace {

// A model's thread caps as write_profile writes them: absent under one cap; each cap once,
// each with at least one fit, sorted on read.
bool read_thread_caps(model_cost& m, od::value v, std::string_view where) {
    m.thread_caps.clear();
    if (od::json_type(v.type()) == od::json_type::null) return true;
    if (od::json_type(v.type()) != od::json_type::array)
        throw field_error(fmt::format("field '{}': expected an array of thread caps", where));
    for (auto el : v.get_array()) {
        thread_cap_count c;
        std::string at = fmt::format("{}[{}]", where, m.thread_caps.size());
        if (m.thread_caps.size() == 64) throw field_error(fmt::format("field '{}': more than 64 thread caps", where));
        od::object o = require_object(el.value(), at);
        read_record(thread_cap_schema(), o, c, at);
        if (c.n_fits == 0) throw field_error(fmt::format("field '{}.n_fits': expected at least 1 fit, found 0", at));
        m.thread_caps.push_back(c);
    }
    std::sort(m.thread_caps.begin(), m.thread_caps.end());
    for (std::size_t k = 1; k < m.thread_caps.size(); ++k)
        if (m.thread_caps[k].intraop_threads == m.thread_caps[k - 1].intraop_threads) {
            const auto& t = m.thread_caps[k].intraop_threads;
            throw field_error(fmt::format("field '{}': thread cap {} twice", where, t ? std::to_string(*t) : "none"));
        }
    return true;
}

// The readings as write_profile writes them, at most max_model_readings, sorted on read.
bool read_readings(model_cost& m, od::value v, std::string_view where) {
    m.readings.clear();
    if (od::json_type(v.type()) == od::json_type::null) return true;
    if (od::json_type(v.type()) != od::json_type::array)
        throw field_error(fmt::format("field '{}': expected an array of readings", where));
    for (auto el : v.get_array()) {
        fit_reading r;
        std::string at = fmt::format("{}[{}]", where, m.readings.size());
        if (m.readings.size() == max_model_readings)
            throw field_error(fmt::format("field '{}': more than {} readings", where, max_model_readings));
        od::object o = require_object(el.value(), at);
        read_record(fit_reading_schema(), o, r, at);
        m.readings.push_back(r);
    }
    std::sort(m.readings.begin(), m.readings.end());
    return true;
}

// A wall_curve as write_profile writes it; a point out of order, out of its own range or with
// a time that is not finite and > 0 is refused (a curve is arithmetic input, not a note).
bool read_curve(model_cost& m, od::value v, std::string_view where) {
    std::vector<curve_point>& out = m.wall_curve;
    out.clear();
    if (od::json_type(v.type()) == od::json_type::null) return true;
    if (od::json_type(v.type()) != od::json_type::array)
        throw field_error(fmt::format("field '{}': expected an array of points", where));
    for (auto el : v.get_array()) {
        curve_point pt;
        std::string at = fmt::format("{}[{}]", where, out.size());
        od::object o = require_object(el.value(), at);
        read_record(curve_point_schema(), o, pt, at);
        if (!(pt.n_obs_min <= pt.n_obs && pt.n_obs <= pt.n_obs_max) || pt.n_obs == 0)
            throw field_error(fmt::format("field '{}': expected 0 < n_obs_min <= n_obs <= n_obs_max, found {}, {}, {}", at,
                                          pt.n_obs_min, pt.n_obs, pt.n_obs_max));
        if (!out.empty() && pt.n_obs_min <= out.back().n_obs_max)
            throw field_error(fmt::format("field '{}': points must be in increasing, disjoint n_obs ranges", at));
        if (out.size() == max_curve_points)
            throw field_error(fmt::format("field '{}': more than {} points", where, max_curve_points));
        out.push_back(pt);
    }
    return true;
}

}  // namespace

const record_schema<model_cost>& model_cost_schema() {
    using M = model_cost;
    static const record_schema<M> s{"profile.models.*", "", false, {
        member<&M::model_type>("model_type").derived(),  // the map's key
        member<&M::family>("family").required(),
        member<&M::n_fits>("n_fits"),
        member<&M::n_ok>("n_ok"),
        member<&M::max_n_obs>("max_n_obs"),
        member<&M::max_process_rss_bytes>("max_process_rss_bytes"),
        member<&M::max_peak_rss_bytes>("max_peak_rss_bytes"),
        member<&M::max_peak_gpu_bytes>("max_peak_gpu_bytes"),
        member<&M::median_wall_s>("median_wall_s"),
        member<&M::median_cpu_s>("median_cpu_s"),
        member<&M::max_effective_cores>("max_effective_cores"),
        member<&M::rss_method>("rss_method").writes([](const M& m, json_writer& w, std::string_view key) {
            if (m.rss_method) w.field(key, *m.rss_method);  // absent, not null, when no fit named one
        }),
        member<&M::intraop_threads>("intraop_threads"),
        object_array<&M::thread_caps, &thread_cap_schema>("thread_caps")
            .reads(read_thread_caps)
            .writes([](const M& m, json_writer& w, std::string_view key) {
                if (m.thread_caps.empty()) return;  // absent under one cap
                w.key(key);
                w.begin_array();
                for (const auto& c : m.thread_caps) write_record(thread_cap_schema(), c, w);
                w.end_array();
            }),
        member<&M::n_oom_killed>("n_oom_killed"),
        member<&M::oom_limit_bytes>("oom_limit_bytes"),
        member<&M::n_gpu_oom>("n_gpu_oom"),
        member<&M::gpu_oom_peak_bytes>("gpu_oom_peak_bytes"),
        member<&M::n_warmup>("n_warmup"),
        member<&M::cold_start_s>("cold_start_s"),
        member<&M::n_replay>("n_replay"),
        member<&M::max_replay_rss_bytes>("max_replay_rss_bytes"),
        // Both absent, not null and 0, without a replay run beside another fit.
        member<&M::beside_slowdown>("beside_slowdown").writes([](const M& m, json_writer& w, std::string_view key) {
            if (m.beside_slowdown) w.field(key, *m.beside_slowdown);
        }),
        member<&M::n_beside>("n_beside").writes([](const M& m, json_writer& w, std::string_view key) {
            if (m.beside_slowdown) w.field(key, m.n_beside);
        }),
        member<&M::memory_basis>("memory_basis").derived(),
        object_array<&M::wall_curve, &curve_point_schema>("wall_curve").reads(read_curve),
        object_array<&M::readings, &fit_reading_schema>("readings").reads(read_readings),
    }};
    return s;
}

// Every FamilyCost value but median_wall_s is recomputed from the models on read.
const record_schema<family_cost>& family_cost_schema() {
    using F = family_cost;
    static const record_schema<F> s{"profile.families.*", "", false, {
        member<&F::family>("family").derived(),
        member<&F::models>("models").derived(),
        member<&F::n_fits>("n_fits").derived(),
        member<&F::n_ok>("n_ok").derived(),
        member<&F::max_process_rss_bytes>("max_process_rss_bytes").derived(),
        member<&F::max_peak_rss_bytes>("max_peak_rss_bytes").derived(),
        member<&F::max_peak_gpu_bytes>("max_peak_gpu_bytes").derived(),
        member<&F::max_effective_cores>("max_effective_cores").derived(),
        member<&F::median_wall_s>("median_wall_s"),
        member<&F::total_wall_s_per_series>("total_wall_s_per_series").derived(),
        member<&F::intraop_threads>("intraop_threads").derived(),
        member<&F::oom_floor_bytes>("oom_floor_bytes").derived(),
        member<&F::gpu_oom_floor_bytes>("gpu_oom_floor_bytes").derived(),
        member<&F::max_replay_rss_bytes>("max_replay_rss_bytes").derived(),
        member<&F::memory_basis>("memory_basis").derived(),
        member<&F::memory_margin>("memory_margin").derived(),
        member<&F::time_margin>("time_margin").derived(),
        member<&F::slot_cores>("slot_cores").derived(),
        member<&F::slot_rss_bytes>("slot_rss_bytes").derived(),
        member<&F::slot_gpu_bytes>("slot_gpu_bytes").derived(),
        member<&F::planning_wall_s_per_cell>("planning_wall_s_per_cell").derived(),
        member<&F::planning_wall_s_per_series>("planning_wall_s_per_series").derived(),
    }};
    return s;
}

namespace {

bool read_provenance(compute_profile& p, od::value v, std::string_view path) {
    profile_provenance& pv = p.provenance;
    pv = {};
    pv.basis.clear();
    pv.source.clear();
    od::object o = require_object(v, path);
    read_record(provenance_schema(), o, pv, path);
    if (pv.basis != "measured" && pv.basis != "reference" && pv.basis != "assumed")
        throw field_error(fmt::format("field 'provenance.basis': expected measured, reference or assumed, found \"{}\"", pv.basis));
    return true;
}

bool read_models(compute_profile& p, od::value v, std::string_view path) {
    read_object_map(v, path, model_cost_schema(), [&](std::string name, model_cost m) {
        m.model_type = name;
        // A non-finite or non-positive value is not usable: absent.
        for (auto* d : {&m.median_wall_s, &m.median_cpu_s, &m.max_effective_cores})
            if (*d && !(std::isfinite(**d) && **d > 0)) d->reset();
        // (max_peak_gpu_bytes 0 is kept: a measured "no device memory".)
        for (auto* b : {&m.max_process_rss_bytes, &m.max_peak_rss_bytes, &m.gpu_oom_peak_bytes, &m.max_replay_rss_bytes})
            if (*b && **b == 0) b->reset();
        // A cold start may cost nothing (0), never less, and never an infinite time.
        if (m.cold_start_s && !(std::isfinite(*m.cold_start_s) && *m.cold_start_s >= 0)) m.cold_start_s.reset();
        // A slowdown is a finite ratio above 0; anything else is not usable: absent.
        if (m.beside_slowdown && !(std::isfinite(*m.beside_slowdown) && *m.beside_slowdown > 0)) m.beside_slowdown.reset();
        p.models[name] = std::move(m);
    });
    return true;
}

bool read_families(compute_profile& p, od::value v, std::string_view path) {
    read_object_map(v, path, family_cost_schema(), [&](std::string name, family_cost f) {
        f.family = name;
        if (f.median_wall_s && !(std::isfinite(*f.median_wall_s) && *f.median_wall_s > 0)) f.median_wall_s.reset();
        p.families[name] = std::move(f);
    });
    return true;
}

}  // namespace

const record_schema<compute_profile>& profile_schema() {
    using P = compute_profile;
    static const record_schema<P> s{"profile", "profile", true, {
        member<&P::schema_version>("schema_version").reads([](P&, od::value v, std::string_view path) {
            auto sv = read_int(v, path);
            if (!sv || *sv != 1)
                throw field_error(fmt::format("field 'schema_version': this prof reads schema 1, found {}",
                                              sv ? std::to_string(*sv) : "null"));
            return true;
        }),
        nested<&P::provenance, &provenance_schema>("provenance").reads(read_provenance),
        member_via<&P::memory_margin, number_or<default_memory_margin>>("memory_margin"),
        member_via<&P::time_margin, number_or<default_time_margin>>("time_margin"),
        member<&P::n_measurements>("n_measurements"),
        member<&P::n_ok>("n_ok"),
        member<&P::n_failed>("n_failed").derived(),
        member<&P::n_sample_series>("n_sample_series"),
        member<&P::sample_ts_ids>("sample_ts_ids"),
        member<&P::dropped_models>("dropped_models"),
        string_map<&P::dropped_model_families>("dropped_model_families"),
        string_map<&P::first_error_by_model>("first_error_by_model"),
        member<&P::sample>("sample").typed(json_kind::object, true)
            .reads([](P& p, od::value v, std::string_view) {
                json_value x = read_json_value(v);
                if (x.t != json_value::type::null) {
                    if (!x.is_object()) throw field_error("field 'sample': expected a sample record (an object)");
                    p.sample = std::move(x);
                }
                return true;
            }),
        object_map<&P::models, &model_cost_schema>("models").reads(read_models),
        object_map<&P::families, &family_cost_schema>("families").reads(read_families),
        member<&P::harvest>("harvest").typed(json_kind::object, true)
            .reads([](P& p, od::value v, std::string_view) {
                p.harvest = read_json_value(v);
                return true;
            })
            .writes([](const P& p, json_writer& w, std::string_view key) {
                if (!p.harvest) return;  // only prof-harvest's profiles carry one
                w.key(key);
                w.raw(p.harvest->dump());
            }),
    }};
    return s;
}

void write_provenance(json_writer& w, const profile_provenance& pv) { write_record(provenance_schema(), pv, w); }

std::string write_profile(const compute_profile& p) { return write_record(profile_schema(), p); }

compute_profile read_profile(od::object& obj) {
    compute_profile p;
    read_record(profile_schema(), obj, p);
    if (!std::isfinite(p.memory_margin) || p.memory_margin < 1.0)
        throw field_error(fmt::format("field 'memory_margin': must be >= 1.0, found {}", p.memory_margin));
    if (!std::isfinite(p.time_margin) || p.time_margin < 1.0)
        throw field_error(fmt::format("field 'time_margin': must be >= 1.0, found {}", p.time_margin));
    std::sort(p.sample_ts_ids.begin(), p.sample_ts_ids.end());
    p.sample_ts_ids.erase(std::unique(p.sample_ts_ids.begin(), p.sample_ts_ids.end()), p.sample_ts_ids.end());
    // sample_ts_ids holds the first 100 of the n_sample_series distinct series: all of them
    // when there are fewer, else 100 of at least as many.
    constexpr std::uint64_t kept = 100;
    const std::uint64_t ids = p.sample_ts_ids.size();
    if (p.n_sample_series < ids || (ids < kept && p.n_sample_series != ids))
        throw field_error(fmt::format("field 'n_sample_series': {} does not agree with sample_ts_ids, which holds {} "
                                      "distinct id(s) (every series when there are fewer than {}, else the first {})",
                                      p.n_sample_series, ids, kept, kept));
    std::sort(p.dropped_models.begin(), p.dropped_models.end());
    recompute_derived(p);
    return p;
}

compute_profile parse_profile_text(std::string_view text, const std::string& source) {
    // A profile file is one JSON object, possibly pretty-printed over several lines.
    compute_profile p;
    try {
        parse_object_text(text, [&](od::object& obj) { p = read_profile(obj); });
    } catch (const field_error& e) {
        throw input_error(source, 1, e.what());
    }
    return p;
}

std::optional<compute_profile> read_one_profile(const std::string& path, std::string_view why_one) {
    std::optional<compute_profile> profile;
    for_each_record({path}, bad_line_policy(), [&](simdjson::ondemand::object& obj, const record_place&) {
        if (profile) throw field_error(fmt::format("a second record: {}", why_one));
        profile = read_profile(obj);
    });
    return profile;
}

}  // namespace prof
