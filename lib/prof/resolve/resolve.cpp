// prof-resolve's decision and loaders (see resolve.hpp for the precedence).
#include "prof/resolve/resolve.hpp"

#include "prof/io/fsutil.hpp"
#include "prof/io/http.hpp"
#include "prof/io/input.hpp"
#include "prof/io/keys.hpp"

#include <algorithm>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <map>
#include <set>
#include <unistd.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace prof {

namespace {

// Parsed object signatures by their exact text: identical text → one shared value.
using signature_texts = std::map<std::string, std::shared_ptr<const json_value>, std::less<>>;

std::string show(const std::optional<json_value>& v) { return v ? v->dump() : std::string("absent"); }

std::string show_signature(const std::optional<json_value>& v) { return v ? v->dump() : std::string("null"); }

std::string describe(const signature_difference& d, const std::string& run_id) {
    std::string key = d.key.empty() ? std::string("the signature") : fmt::format("key '{}'", d.key);
    return fmt::format("{}: run {} has {}, this run has {}", key, run_id, show(d.pinned), show(d.current));
}

// A loader's failure as text: what() already names the file or URL.
template <class F>
auto attempt(F&& f, std::string& why) -> std::optional<decltype(f())> {
    try {
        return f();
    } catch (const std::exception& e) {
        why = e.what();
    }
    return std::nullopt;
}

// The evidence stamped as reference, with this decision's warnings. Evidence without a single
// usable model (every fit failed) is still that run's answer, but the operator should know it
// sizes nothing.
compute_profile as_reference(compute_profile p, std::string source, std::vector<std::string> warnings) {
    if (p.models.empty())
        warnings.push_back(
            fmt::format("the evidence ({}, {} fit(s), {} ok): {}", source, p.n_measurements, p.n_ok, sizes_nothing_warning));
    p.provenance.basis = "reference";
    p.provenance.source = std::move(source);
    p.provenance.warnings = std::move(warnings);
    return p;
}

bool is_keyword(const std::string& source) { return source == "auto" || source == "none" || source == "baseline"; }

}  // namespace

std::vector<signature_difference> signature_differences(const json_value& pinned, const json_value& current) {
    std::vector<signature_difference> out;
    if (!pinned.is_object() || !current.is_object()) {
        if (!(pinned == current)) out.push_back({"", pinned, current});
        return out;
    }
    // Both member lists are sorted by key: a merge walk visits every key once, in order.
    auto a = pinned.obj.begin(), b = current.obj.begin();
    while (a != pinned.obj.end() || b != current.obj.end()) {
        if (b == current.obj.end() || (a != pinned.obj.end() && a->first < b->first)) {
            out.push_back({a->first, a->second, std::nullopt});
            ++a;
        } else if (a == pinned.obj.end() || b->first < a->first) {
            out.push_back({b->first, std::nullopt, b->second});
            ++b;
        } else {
            if (!(a->second == b->second)) out.push_back({a->first, a->second, b->second});
            ++a;
            ++b;
        }
    }
    return out;
}

std::vector<std::string> nearest_run_ids(const std::string& run_id, const std::vector<registry_entry>& entries,
                                         std::size_t k) {
    std::vector<std::pair<std::size_t, const std::string*>> scored;
    std::vector<std::size_t> row;
    std::set<std::string_view> seen;
    for (const auto& e : entries) {
        if (!seen.insert(e.run_id).second) continue;
        const std::string& b = e.run_id;
        row.assign(b.size() + 1, 0);
        for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (std::size_t i = 1; i <= run_id.size(); ++i) {
            std::size_t diag = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                std::size_t up = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (run_id[i - 1] == b[j - 1] ? 0 : 1)});
                diag = up;
            }
        }
        scored.emplace_back(row[b.size()], &b);
    }
    using scored_id = std::pair<std::size_t, const std::string*>;
    std::sort(scored.begin(), scored.end(), [](const scored_id& x, const scored_id& y) {
        return x.first != y.first ? x.first < y.first : *x.second > *y.second;
    });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && i < k; ++i) out.push_back(*scored[i].second);
    return out;
}

pin_check check_pinned_source(const resolve_request& req, const evidence_loaders& io) {
    pin_check c;
    if (req.mode == "off" || is_keyword(req.source)) return c;
    c.run_id = req.source;
    std::string why = "no --registry given";
    std::optional<compute_profile> p;
    if (io.load_run) p = attempt([&] { return io.load_run(c.run_id); }, why);
    if (!p) {
        c.status = pin_check::state::unloadable;
        std::string listed;
        // Only a registry that answered "no such file" is asked for its index: one that is down
        // or timing out would only cost the run a second wait for the same failure.
        bool absent = why.find("HTTP 404") != std::string::npos || why.find("HTTP 410") != std::string::npos ||
                      why.find(std::strerror(ENOENT)) != std::string::npos;
        if (io.load_index && absent) {
            std::string index_why;
            if (auto index = attempt([&] { return io.load_index(); }, index_why)) {
                bool listed_there = std::any_of(index->entries.begin(), index->entries.end(),
                                                [&](const registry_entry& e) { return e.run_id == c.run_id; });
                if (!listed_there) {
                    c.missing_from_index = true;
                    c.nearest = nearest_run_ids(c.run_id, index->entries);
                    listed = c.nearest.empty()
                                 ? fmt::format("; registry {} lists no run", io.registry_name)
                                 : fmt::format("; registry {} does not list it (nearest: {})", io.registry_name,
                                               fmt::join(c.nearest, ", "));
                }
            }
        }
        c.warnings.push_back(fmt::format("pinned run '{}' could not be loaded ({}){}; that is not evidence of drift",
                                         c.run_id, why, listed));
        return c;
    }
    c.profile = std::move(p);
    const auto& theirs = c.profile->provenance.signature;
    if (!req.signature) {
        c.status = pin_check::state::unchecked;
        c.warnings.push_back(fmt::format("pinned run '{}' is used unchecked: no --signature was given, so drift "
                                         "cannot be detected; pass --signature FILE to check the pin",
                                         c.run_id));
        return c;
    }
    if (!theirs) {
        c.status = pin_check::state::unchecked;
        c.warnings.push_back(fmt::format("pinned run '{}' records no data signature, so the pin cannot be checked "
                                         "for drift; re-harvest it with a signature to check it",
                                         c.run_id));
        return c;
    }
    c.differences = signature_differences(*theirs, *req.signature);
    if (c.differences.empty()) {
        c.status = pin_check::state::matches;
        return c;
    }
    c.status = pin_check::state::drifted;
    std::vector<std::string> keys;
    for (const auto& d : c.differences) keys.push_back(describe(d, c.run_id));
    c.drift_message = fmt::format(
        "pinned run '{}' was measured on different data: its signature {} differs from this run's {} ({}); "
        "pin a run measured on this data, use --source auto, or pass --force to use it anyway",
        c.run_id, show_signature(theirs), show_signature(req.signature), fmt::join(keys, "; "));
    return c;
}

std::vector<std::string> forced_drift_warnings(const pin_check& c) {
    std::vector<std::string> out;
    for (const auto& d : c.differences)
        out.push_back(fmt::format("pinned run '{}' was measured on different data (used because of --force): {}",
                                  c.run_id, describe(d, c.run_id)));
    return out;
}

compute_profile assumed_profile(std::vector<std::string> warnings) {
    compute_profile p;
    p.provenance.basis = "assumed";
    p.provenance.source = "none";
    p.provenance.warnings = std::move(warnings);
    return p;
}

namespace {

// Step 2: a pinned run, honoured unless its signature shows it was measured on other data.
std::optional<compute_profile> from_pin(const resolve_request& req, const evidence_loaders& io,
                                        std::vector<std::string>& warnings) {
    pin_check c = check_pinned_source(req, io);
    if (c.status == pin_check::state::unloadable && req.strict && c.missing_from_index)
        throw error(exit_code::data_err,
                    fmt::format("--strict: pinned run '{}' is not in registry {}{}; pin one of its runs, or drop "
                                "--strict to fall back",
                                c.run_id, io.registry_name,
                                c.nearest.empty() ? std::string(" (it lists no run)")
                                                  : fmt::format(" (nearest: {})", fmt::join(c.nearest, ", "))));
    // Any other pin that cannot be loaded (no --registry, a corrupt or missing run file, a
    // registry that is down) is no more usable under --strict: the operator named that run.
    if (c.status == pin_check::state::unloadable && req.strict)
        throw error(exit_code::data_err,
                    fmt::format("--strict: {}; fix the pin or the registry, or drop --strict to fall back",
                                c.warnings.back()));
    if (c.status == pin_check::state::unloadable)
        c.warnings.back() += io.load_baseline ? ", so the pin was not used: the baseline is used instead"
                                              : ", so the pin was not used";
    warnings.insert(warnings.end(), c.warnings.begin(), c.warnings.end());
    if (c.status == pin_check::state::drifted) {
        if (!req.force) throw drift_error(c.drift_message);
        auto forced = forced_drift_warnings(c);
        warnings.insert(warnings.end(), forced.begin(), forced.end());
    }
    if (c.profile) return as_reference(std::move(*c.profile), "run:" + c.run_id, std::move(warnings));
    return std::nullopt;
}

// The index entries whose signature equals `signature`, newest first: measured_at as instants
// (null oldest), ties broken by the greater run_id.
std::vector<const registry_entry*> matching_runs(const registry_index& index, const json_value& signature) {
    std::vector<const registry_entry*> matches;
    // Equality is decided once per distinct parsed signature, not once per line.
    std::map<const json_value*, bool> equal;
    for (const auto& e : index.entries) {
        auto [it, fresh] = equal.try_emplace(e.signature.get(), false);
        if (fresh) it->second = e.signature->is_object() && *e.signature == signature;
        if (it->second) matches.push_back(&e);
    }
    std::sort(matches.begin(), matches.end(), [](const registry_entry* x, const registry_entry* y) {
        if (x->measured_at != y->measured_at) return x->measured_at > y->measured_at;
        return x->run_id > y->run_id;
    });
    return matches;
}

// Step 3: the newest harvest of the same data.
std::optional<compute_profile> from_same_data(const resolve_request& req, const evidence_loaders& io,
                                              std::vector<std::string>& warnings) {
    if (!io.load_index) {
        warnings.push_back("no --registry given, so no earlier run's harvest can be reused; pass --registry "
                           "DIR|URL to search one");
        return std::nullopt;
    }
    if (!req.signature) {
        warnings.push_back(fmt::format("no --signature given, so no harvest in registry {} can match this run's "
                                       "data; pass --signature FILE to reuse one",
                                       io.registry_name));
        return std::nullopt;
    }
    std::string why;
    auto index = attempt([&] { return io.load_index(); }, why);
    if (!index) {
        warnings.push_back(
            fmt::format("registry {} could not be searched ({}); no earlier run is reused", io.registry_name, why));
        return std::nullopt;
    }
    warnings.insert(warnings.end(), index->warnings.begin(), index->warnings.end());
    const std::vector<const registry_entry*> matches = matching_runs(*index, *req.signature);
    std::set<std::string> tried;  // a run listed twice is loaded once
    for (const registry_entry* e : matches) {
        if (!tried.insert(e->run_id).second) continue;
        std::string failure;
        auto p = attempt([&] { return io.load_run(e->run_id); }, failure);
        if (!p) {
            warnings.push_back(fmt::format("run '{}' matches this run's signature but could not be "
                                           "loaded ({}); trying older runs",
                                           e->run_id, failure));
            continue;
        }
        const auto& theirs = p->provenance.signature;
        if (theirs && !(*theirs == *req.signature)) {
            warnings.push_back(fmt::format("run '{}' is indexed with this run's signature but its harvest "
                                           "records {}; skipped (the registry is inconsistent)",
                                           e->run_id, theirs->dump()));
            continue;
        }
        return as_reference(std::move(*p), "auto:" + e->run_id, std::move(warnings));
    }
    if (matches.empty())
        warnings.push_back(fmt::format("no harvest in registry {} matches this run's signature ({} "
                                       "run(s) indexed)",
                                       io.registry_name, index->entries.size()));
    return std::nullopt;
}

compute_profile resolve_chain(const resolve_request& req, const evidence_loaders& io) {
    // 1. No evidence wanted.
    if (req.mode == "off" || req.source == "none") return assumed_profile({});
    std::vector<std::string> warnings;
    // 2. A pinned run.
    if (!is_keyword(req.source))
        if (auto p = from_pin(req, io, warnings)) return std::move(*p);
    // 3. The newest harvest of the same data.
    if (req.source == "auto")
        if (auto p = from_same_data(req, io, warnings)) return std::move(*p);

    // 4. The baseline shipped with prof.
    if (io.load_baseline) {
        std::string why;
        auto b = attempt([&] { return io.load_baseline(); }, why);
        if (b) return as_reference(std::move(*b), "baseline", std::move(warnings));
        warnings.push_back(fmt::format("baseline could not be loaded ({})", why));
    } else if (req.source == "baseline") {
        warnings.push_back("--source baseline was asked for, but --baseline none leaves no baseline to use");
    }

    // 5. Nothing: the consumer sizes from its static defaults.
    warnings.push_back("no evidence found: the profile is assumed and its consumer sizes from static defaults");
    return assumed_profile(std::move(warnings));
}

}  // namespace

std::vector<std::string> assumed_axes(const compute_profile& p) {
    std::vector<std::string> out;
    if (p.provenance.basis == "assumed") out.push_back("every axis (basis assumed: no evidence)");
    for (const auto& [name, f] : p.families) {
        std::vector<std::string> axes;
        if (!f.slot_cores) axes.push_back("cores");
        if (!f.slot_rss_bytes) axes.push_back("memory");
        if (!f.planning_wall_s_per_cell) axes.push_back("wall");
        if (!axes.empty()) out.push_back(fmt::format("family '{}' ({})", name, fmt::join(axes, ", ")));
    }
    for (const auto& m : p.dropped_models) out.push_back(fmt::format("model '{}' (dropped: no usable measurement)", m));
    return out;
}

compute_profile resolve_profile_source(const resolve_request& req, const evidence_loaders& io) {
    compute_profile p = resolve_chain(req, io);
    if (req.strict) {
        auto axes = assumed_axes(p);
        if (!axes.empty())
            throw error(exit_code::data_err,
                        fmt::format("--strict: the resolved profile (source {}) leaves a planner to assume {}{}", p.provenance.source,
                                    fmt::join(axes, "; "),
                                    p.provenance.warnings.empty() ? std::string()
                                                                  : " (" + fmt::format("{}", fmt::join(p.provenance.warnings, "; ")) + ")"));
    }
    return p;
}

// ---- loaders --------------------------------------------------------------------------------

registry_fetch directory_fetch(const std::string& dir) {
    return [dir](const std::vector<std::string>& components) {
        std::string rel;
        for (const auto& c : components) rel += (rel.empty() ? "" : "/") + c;
        // Not open_input: a registry path is a file, never stdin or a URL. O_NONBLOCK so a FIFO
        // planted in the registry cannot hang the open; anything but a regular file is refused
        // before a byte is read. A gzip file (told by its magic bytes) is inflated, as any input.
        std::string path = path_under(dir, rel);
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) throw no_input_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            throw no_input_error(fmt::format("cannot read '{}': not a regular file", path));
        }
        int flags = ::fcntl(fd, F_GETFL);
        if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        return gunzip_if_gzip(fd_source(fd, path, true));
    };
}

http_options registry_http_options() {
    http_options o;
    o.connect_timeout_s = 5;
    o.timeout_s = 30;
    o.stall_timeout_s = 10;
    o.retries = 1;
    o.backoff_s = 0.5;
    return o;
}

registry_fetch http_fetch(const std::string& base_url, http_options options) {
    std::string base = base_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return [base, options](const std::vector<std::string>& components) {
        std::string url = base;
        for (const auto& c : components) url += "/" + url_escape_name(c);
        // A gzip body is inflated whether it came with Content-Encoding gzip or as a .gz file.
        return gunzip_if_gzip(http_source(url, options));
    };
}

std::string run_file_name(const std::string& run_id) { return key_file_name({run_id}) + ".json"; }

registry_index parse_registry_index(std::string text, const std::string& source) {
    line_reader in(string_source(std::move(text), source));
    return read_registry_index(in);
}

namespace {

// One index line's fields into an entry; a field_error for a line that cannot be one (it is
// then skipped). Object signatures are parsed once per distinct text and shared.
registry_entry read_index_entry(simdjson::ondemand::object& obj, signature_texts& by_text) {
    namespace od = simdjson::ondemand;
    registry_entry e;
    bool have_id = false;
    for (auto field : obj) {
        std::string_view k = field.unescaped_key();
        od::value v = field.value();
        if (k == "run_id") {
            e.run_id = require_string(v, "run_id");
            have_id = true;
        } else if (k == "signature") {
            if (od::json_type(v.type()) == od::json_type::object) {
                od::object sig_obj = v.get_object();
                std::string_view raw = sig_obj.raw_json();
                auto it = by_text.find(raw);
                if (it == by_text.end())
                    it = by_text.emplace(std::string(raw), std::make_shared<const json_value>(parse_json_text(raw))).first;
                e.signature = it->second;
            } else {
                e.signature = std::make_shared<const json_value>(read_json_value(v));
            }
        } else if (k == "measured_at") {
            auto s = read_string(v, "measured_at");
            if (s) {
                e.measured_at = parse_rfc3339(*s);
                if (!e.measured_at)
                    throw field_error(fmt::format("field 'measured_at': expected an RFC 3339 time stamp, found \"{}\"", *s));
            }
        }
    }
    if (!have_id) missing_field("run_id");
    if (e.run_id.empty()) throw field_error("field 'run_id': empty");
    if (!e.signature) e.signature = std::make_shared<const json_value>();
    return e;
}

}  // namespace

registry_index read_registry_index(line_reader& in) {
    const std::string& source = in.source_name();
    registry_index out;
    // A badly damaged index must not bury the output in warnings: the first ten lines are named,
    // the rest counted. Every bad line is skipped (the budget is unlimited): an index is shared
    // evidence, and one bad line must not hide the runs on the others.
    constexpr std::size_t max_line_warnings = 10;
    std::size_t bad = 0;
    bad_line_policy policy(std::numeric_limits<std::size_t>::max());
    policy.collect = [&](const record_place& at, const std::string& what) {
        if (++bad <= max_line_warnings)
            out.warnings.push_back(fmt::format("{}:{}: {} (line skipped)", at.source, at.line, what));
    };
    signature_texts by_text;
    for_each_record(in, policy, [&](simdjson::ondemand::object& obj, const record_place&) {
        out.entries.push_back(read_index_entry(obj, by_text));
    });
    if (bad > max_line_warnings)
        out.warnings.push_back(fmt::format("{}: {} more malformed line(s) skipped", source, bad - max_line_warnings));
    return out;
}

evidence_loaders registry_loaders(registry_fetch fetch, std::string registry_name) {
    evidence_loaders io;
    io.registry_name = registry_name;
    io.load_run = [fetch, registry_name](const std::string& run_id) {
        std::string name = run_file_name(run_id);
        compute_profile p = parse_profile_text(read_all(*fetch({"runs", name})), registry_name + "/runs/" + name);
        if (p.provenance.run_id && *p.provenance.run_id != run_id)
            throw input_error(registry_name + "/runs/" + name, 1,
                              fmt::format("the file is the harvest of run '{}', not '{}'", *p.provenance.run_id, run_id));
        p.provenance.run_id = run_id;
        return p;
    };
    io.load_index = [fetch, registry_name]() {
        line_reader in(fetch({"index.jsonl"}));
        return read_registry_index(in);
    };
    return io;
}

compute_profile load_baseline_file(const std::string& path) {
    const http_options http = registry_http_options();
    const std::string source = is_http_url(path) ? redact_url(path) : path;
    compute_profile p = parse_profile_text(read_all(*open_input(path, &http)), source);
    if (!p.provenance.baseline_version || p.provenance.baseline_version->empty())
        throw input_error(source, 1, "field 'provenance.baseline_version': missing; a baseline must carry its version");
    return p;
}

std::vector<std::string> baseline_candidates(const std::string& exe_path) {
    namespace fs = std::filesystem;
    fs::path dir = fs::path(exe_path).parent_path();
    return {(dir / ".." / "share" / "prof" / "baseline.json").lexically_normal().string(),
            (dir / ".." / ".." / "share" / "prof" / "baseline.json").lexically_normal().string()};
}

std::function<compute_profile()> installed_baseline_loader(const std::string& exe_path) {
    auto candidates = baseline_candidates(exe_path);
    return [candidates] {
        for (const auto& c : candidates) {
            std::error_code ec;
            if (std::filesystem::exists(c, ec)) return load_baseline_file(c);
        }
        throw no_input_error(fmt::format("no baseline is installed: looked for {}; pass --baseline FILE, or "
                                         "--baseline none to do without",
                                         fmt::join(candidates, " and ")));
    };
}

json_value read_signature_file(const std::string& path) {
    const http_options http = registry_http_options();
    whole_input in;
    // This run's own input that cannot be read is 66, a read error (a directory, a
    // closed stdin) included, not only a missing file.
    try {
        in = read_whole_input(path, &http);
    } catch (const io_error& e) {
        throw no_input_error(e.what());
    }
    return parse_json_object_file(in.text, in.name, "--signature");
}

}  // namespace prof
