// The three parsers of a trace event (see chrome_parse.hpp).
#include "prof/spans/chrome_parse.hpp"

#include "prof/io/json_in.hpp"

#include <cstring>

namespace prof {

namespace od = simdjson::ondemand;

// ---- simdjson on-demand ---------------------------------------------------------------------

namespace {

// On-demand: a ts or dur value.
void read_time(od::value v, time_field& out) {
    switch (v.type()) {
    case od::json_type::number: {
        std::int64_t i;
        if (v.get_int64().get(i) == simdjson::SUCCESS) return out.integer(i);
        std::string_view tok = trimmed_token(v);
        if (!json_number_value(tok)) throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);  // not JSON
        return out.number_text(tok);
    }
    case od::json_type::string: return out.string(v.get_string());
    case od::json_type::null: {
        // The word checked, as the other parsers check it: "nul" is not JSON.
        bool null = false;
        if (auto err = v.is_null().get(null); err || !null) throw simdjson::simdjson_error(err ? err : simdjson::N_ATOM_ERROR);
        return out.null();
    }
    case od::json_type::boolean: {
        bool b = false;
        if (auto err = v.get_bool().get(b)) throw simdjson::simdjson_error(err);
        return out.not_number();
    }
    default: return out.not_number();
    }
}

// A string value read in place when it holds no escape (a view into the input text, valid as
// long as the text), else unescaped by simdjson (a view into the parser's buffer, valid for the
// whole document). Either way no copy is made per event.
std::string_view string_in_place(od::value v, std::string_view tok) {
    std::string_view inner = tok.substr(1, tok.size() - 2);
    if (inner.find('\\') == std::string_view::npos) return inner;
    return v.get_string();
}

std::string_view identity(od::value v, std::string& scratch) {
    std::string_view raw = trimmed_token(v);
    if (raw.empty()) return raw;
    if (raw[0] == '"') {
        if (raw.find('\\') == std::string_view::npos) return raw;
        return identity_of_string(std::string_view(v.get_string()), scratch);
    }
    if (raw[0] == '{' || raw[0] == '[') {
        // A container (never seen in practice): the DOM reader's text for it, so both paths
        // agree — its raw text parsed by the DOM parser and minified.
        std::string_view whole;
        if (raw[0] == '{') whole = od::object(v.get_object()).raw_json();
        else whole = od::array(v.get_array()).raw_json();
        simdjson::dom::parser dom;
        simdjson::padded_string padded(whole);
        scratch = simdjson::minify(dom.parse(padded).value());
        return scratch;
    }
    if (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
        std::int64_t i;
        if (v.get_int64().get(i) == simdjson::SUCCESS) return identity_of_integer(i, scratch);
        if (auto d = json_number_value(raw)) return identity_of_double(*d, scratch);
    }
    return raw;
}

}  // namespace

// Kept out of line: inlined into the event loop, the field iterator's copies spilled through
// the stack with store-to-load forwarding stalls that cost more than the whole parse.
[[gnu::noinline]] void read_event(od::object& ev, event_fields& e, identity_scratch& scratch) {
    for (auto f : ev) {
        e.empty = false;
        // A key is compared as written when it holds no escape (the common case, no copy),
        // else unescaped: "p\u0068" is "ph", as the DOM reader and JSON itself have it.
        const char* raw = f.key().raw();
        const char* q = raw;
        while (*q != '"' && *q != '\\') ++q;
        std::string_view k = *q == '"' ? std::string_view(raw, static_cast<std::size_t>(q - raw))
                                       : std::string_view(f.unescaped_key());
        switch (trace_key_of(k)) {
        case trace_key::ph: {
            od::value pv = f.value();
            std::string_view tok = pv.raw_json_token();
            std::string_view p;
            if (tok.size() >= 3 && tok[0] == '"' && tok[2] == '"') e.phase_string(tok.substr(1, 1));
            else if (pv.get_string().get(p) == simdjson::SUCCESS) e.phase_string(p);
            else e.phase_not_string();
            break;
        }
        case trace_key::ts: read_time(f.value(), e.ts); break;
        case trace_key::dur: read_time(f.value(), e.dur); break;
        case trace_key::name: {
            od::value nv = f.value();
            std::string_view tok = trimmed_token(nv);
            if (tok.empty() || tok[0] != '"') e.name_not_string();
            else e.name_string(string_in_place(nv, tok));
            break;
        }
        case trace_key::pid: e.pid = identity(f.value(), scratch[0]); break;
        case trace_key::tid: e.tid = identity(f.value(), scratch[1]); break;
        case trace_key::cat: e.cat = identity(f.value(), scratch[2]); break;
        case trace_key::id: e.id = identity(f.value(), scratch[3]); break;
        default: break;
        }
    }
}

// ---- simdjson DOM ----------------------------------------------------------------------------

namespace {

// DOM: a ts or dur value. The DOM keeps a number with a fraction only as a double.
void read_time(simdjson::dom::element v, time_field& out) {
    switch (v.type()) {
    case simdjson::dom::element_type::INT64: return out.integer(std::int64_t(v));
    case simdjson::dom::element_type::UINT64: return out.too_large();
    case simdjson::dom::element_type::DOUBLE: return out.double_only(double(v));
    case simdjson::dom::element_type::STRING: return out.string(std::string_view(v));
    case simdjson::dom::element_type::NULL_VALUE: return out.null();
    default: return out.not_number();
    }
}

// A DOM value's identity text (chrome_events.hpp), as identity() gives it on demand.
std::string_view dom_token(simdjson::dom::element v, std::string& scratch) {
    std::string_view s;
    if (v.get_string().get(s) == simdjson::SUCCESS) return identity_of_string(s, scratch);
    std::int64_t i;
    if (v.get_int64().get(i) == simdjson::SUCCESS) return identity_of_integer(i, scratch);
    double d;
    if (v.get_double().get(d) == simdjson::SUCCESS) return identity_of_double(d, scratch);
    scratch = simdjson::minify(v);
    return scratch;
}

}  // namespace

void read_event(simdjson::dom::object ev, event_fields& e, identity_scratch& scratch) {
    // Identity fields are kept as elements and turned into text only when the phase needs them
    // (pid/tid for B/E, cat/id for async events): most events are 'X' and never need them.
    simdjson::dom::element ids[4];
    bool has[4] = {};
    auto keep = [&](int k, simdjson::dom::element v) { ids[k] = v, has[k] = true; };
    for (auto [k, v] : ev) {
        e.empty = false;
        switch (trace_key_of(k)) {
        case trace_key::ph: {
            std::string_view p;
            if (v.get_string().get(p) == simdjson::SUCCESS) e.phase_string(p);
            else e.phase_not_string();
            break;
        }
        case trace_key::ts: read_time(v, e.ts); break;
        case trace_key::dur: read_time(v, e.dur); break;
        case trace_key::name: {
            std::string_view n;
            if (v.get_string().get(n) == simdjson::SUCCESS) e.name_string(n);
            else e.name_not_string();
            break;
        }
        case trace_key::pid: keep(0, v); break;
        case trace_key::tid: keep(1, v); break;
        case trace_key::cat: keep(2, v); break;
        case trace_key::id: keep(3, v); break;
        default: break;
        }
    }
    std::string_view* field[4] = {&e.pid, &e.tid, &e.cat, &e.id};
    const int from = e.wants_thread() ? 0 : e.wants_async_id() ? 2 : 4;
    for (int k = from; k < from + 2 && k < 4; ++k)
        if (has[k]) *field[k] = dom_token(ids[k], scratch[k]);
}

namespace {

// ---- the in-place scanner -------------------------------------------------------------------

// The scanner (json_scan.hpp). Identity fields keep their JSON text, which for the forms
// accepted here is their identity text: a string with its quotes, an integer's digits, a
// literal's word.
[[gnu::always_inline]] inline bool scan_time(json_scanner& s, time_field& out) {
    // An integer (json_scanner::uint19 after an optional '-'); a number with a fraction or
    // exponent from its token (json_scanner::number); a string without escapes holding a JSON
    // number; null. Anything else declines.
    json_scanner digits = s;
    bool neg = digits.eat('-');
    std::uint64_t u;
    if (digits.uint19(u)) {
        s.p = digits.p;
        out.micros(u, neg);
        return true;
    }
    if (s.p >= s.e) return false;
    // A fraction of at most 19 digits in all, the common form (PyTorch writes 198093488368.463):
    // its digits m with k after the point are m x 10^(3 - k) ns, or for k > 3 rounded half away
    // from zero at the first digit dropped, as micros_token_to_ns reads it.
    std::uint64_t m;
    int k;
    if (digits = s; digits.decimal(m, k, neg)) {
        static constexpr std::uint64_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                                  1000000000, 10000000000, 100000000000, 1000000000000,
                                                  10000000000000, 100000000000000, 1000000000000000,
                                                  10000000000000000, 100000000000000000, 1000000000000000000,
                                                  10000000000000000000u};
        std::uint64_t ns;
        bool over = false;
        if (k <= 3) over = __builtin_mul_overflow(m, pow10[3 - k], &ns);
        else ns = m / pow10[k - 3] + (m / pow10[k - 4] % 10 >= 5);
        s.p = digits.p;
        out.nanoseconds(ns, neg, over);
        return true;
    }
    std::string_view t;
    bool integer = false;
    if (*s.p == '"') {
        if (!s.string(t)) return false;
        out.string(t);
        return true;
    }
    if (*s.p == 'n') {
        if (!s.literal("null")) return false;
        out.null();
        return true;
    }
    if ((*s.p != '-' && (*s.p < '0' || *s.p > '9')) || !s.number(t, integer)) return false;
    out.number_text(t);
    return true;
}

bool scan_identity(json_scanner& s, std::string_view& out) {
    const char* b = s.p;
    // The common form first: a non-negative integer of at most 18 digits (an int64, whose
    // decimal text is the DOM path's text for it).
    json_scanner digits = s;
    std::uint64_t u;
    if (digits.uint19(u) && digits.p - b <= 18) {
        s.p = digits.p;
        out = std::string_view(b, static_cast<std::size_t>(s.p - b));
        return true;
    }
    scan_kind k;
    std::string_view t;
    if (!s.scalar(k, t)) return false;
    if (k == scan_kind::number || (k == scan_kind::integer && (t == "-0" || t.size() > 18))) return false;
    out = std::string_view(b, static_cast<std::size_t>(s.p - b));
    return true;
}

// A string value without escapes (the scanner declines any other).
[[gnu::always_inline]] inline bool scan_string(json_scanner& s, std::string_view& out) { return s.p < s.e && *s.p == '"' && s.string(out); }

}  // namespace

bool scan_event(json_scanner& s, event_fields& e, key_predictor& keys, const char* readable_end) {
    std::string_view text;
    if (!s.eat('{')) return false;
    json_scanner peek = s;
    peek.ws();
    if (peek.eat('}')) {
        s = peek;
        return true;
    }
    e.empty = false;
    auto id_of = [](std::string_view k) { return static_cast<std::uint8_t>(trace_key_of(k)); };
    for (std::size_t i = 0;; ++i) {
        std::uint8_t id;
        if (!keys.member(i, s, readable_end, id_of, id)) return false;
        const auto key = static_cast<trace_key>(id);
        bool ok;
        switch (key) {
        case trace_key::ph: {
            // A one-character string: its quote, one printable ASCII character, its quote. Any
            // other string without escapes ("XXX", "") is a phase the format does not define.
            if (s.e - s.p >= 3 && s.p[0] == '"' && s.p[2] == '"' && s.p[1] >= 0x20 && s.p[1] < 0x7F && s.p[1] != '\\' &&
                s.p[1] != '"') {
                e.phase_string(std::string_view(s.p + 1, 1));
                s.p += 3;
                ok = true;
            } else if ((ok = scan_string(s, text))) {
                e.phase_string(text);
            }
            break;
        }
        case trace_key::ts: ok = scan_time(s, e.ts); break;
        case trace_key::dur: ok = scan_time(s, e.dur); break;
        case trace_key::name:
            if ((ok = scan_string(s, text))) e.name_string(text);
            break;
        case trace_key::pid: ok = scan_identity(s, e.pid); break;
        case trace_key::tid: ok = scan_identity(s, e.tid); break;
        case trace_key::cat: ok = scan_identity(s, e.cat); break;
        case trace_key::id: ok = scan_identity(s, e.id); break;
        default: ok = s.skip_value(); break;
        }
        if (!ok) return false;
        s.ws();
        if (s.eat('}')) return true;
        if (!s.eat(',')) return false;
    }
}

}  // namespace prof
