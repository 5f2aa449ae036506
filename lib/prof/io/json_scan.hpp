// The fast-path toolkit of the loops that read millions of small flat objects (prof-harvest's
// warehouse rows, prof-spans' trace events): a strict scanner of a subset of JSON, typed field
// scanners over it, short-text equality, a key table and a key predictor.
//
// The scanner accepts only text that is valid JSON (RFC 8259 numbers, no control characters in
// strings, balanced containers) and, where a field's value is wanted, only its plainest form (a
// string without escapes). On anything else — an escape in a wanted string, a surrogate escape
// anywhere, nesting deeper than 64, any syntax error — it declines: the method returns false,
// and the caller reads the same text with simdjson, which owns every rule and every error
// message. So the two paths cannot disagree on what a text means; this one only skips
// simdjson's per-field bookkeeping. UTF-8 is checked only with check_utf8 set (the caller has
// not validated the text first): then every byte at or above 0x80 the scanner passes is inside
// a string whose non-ASCII runs it validates (simdjson::validate_utf8), and every other byte it
// accepts is ASCII by the grammar, so a text it accepts whole is valid UTF-8. Numbers are checked for syntax, not range: a skipped 1e999 is
// accepted, as simdjson's on-demand parser accepts it when skipping.
//
// The scanner reads [p, e) and never reads outside it; the key predictor reads 32 bytes where
// the caller says they are readable (a padded line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <simdjson.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

// The scanner's small steps are forced inline: GCC at -O2 leaves ws() and number() as calls
// otherwise, in loops that run them a few times per member.
#define PROF_SCAN_INLINE [[gnu::always_inline]] inline

namespace prof {

namespace detail {
template <class W>
PROF_SCAN_INLINE W load_word(const char* p) {
    W w;
    std::memcpy(&w, p, sizeof w);
    return w;
}

// align_digits.at[n]: the byte shuffle that moves a 16-byte lane's first n bytes to its last n,
// zeros before them (a number's leading zeros: json_scanner::digit_run).
struct digit_shuffles {
    alignas(16) char at[16][16];
    constexpr digit_shuffles() : at{} {
        for (int n = 0; n < 16; ++n)
            for (int j = 0; j < 16; ++j) at[n][j] = static_cast<char>(j >= 16 - n ? j - (16 - n) : 0x80);
    }
};
inline constexpr digit_shuffles align_digits{};
}  // namespace detail

// a == b for short texts (keys, run ids, series ids, model names): whole words, the last one
// overlapping, instead of a call to memcmp or a byte loop, which the compiler otherwise emits
// even for a length known at compile time.
PROF_SCAN_INLINE bool same_text(std::string_view a, std::string_view b) {
    std::size_t n = a.size();
    if (n != b.size()) return false;
    const char* x = a.data();
    const char* y = b.data();
    if (n >= 8) {
        for (std::size_t i = 0; i + 8 <= n; i += 8)
            if (detail::load_word<std::uint64_t>(x + i) != detail::load_word<std::uint64_t>(y + i)) return false;
        return detail::load_word<std::uint64_t>(x + n - 8) == detail::load_word<std::uint64_t>(y + n - 8);
    }
    if (n >= 4)
        return detail::load_word<std::uint32_t>(x) == detail::load_word<std::uint32_t>(y) &&
               detail::load_word<std::uint32_t>(x + n - 4) == detail::load_word<std::uint32_t>(y + n - 4);
    for (std::size_t k = 0; k < n; ++k)
        if (x[k] != y[k]) return false;
    return true;
}

// key == lit for a literal: same_text with the length known at compile time.
template <std::size_t N>
PROF_SCAN_INLINE bool scan_key_is(std::string_view key, const char (&lit)[N]) {
    return key.size() == N - 1 && same_text(key, std::string_view(lit, N - 1));
}

// A key's id from a table of (name, id) pairs; `other` when no name equals it.
template <class Id, std::size_t N>
PROF_SCAN_INLINE Id key_id(std::string_view key, const std::pair<std::string_view, Id> (&table)[N], Id other) {
    for (const auto& [name, id] : table)
        if (same_text(key, name)) return id;
    return other;
}

// The one vector compare of the toolkit: whether the 32 bytes at p equal those of `pattern` at
// every position set in `mask` (bit i: byte i). p and pattern must have 32 readable bytes;
// pattern 32-byte aligned. Portable code where AVX2 is not compiled in.
PROF_SCAN_INLINE bool bytes_equal_32(const char* p, const char* pattern, std::uint32_t mask) {
#ifdef __AVX2__
    auto eq = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), _mm256_load_si256(reinterpret_cast<const __m256i*>(pattern)))));
    return (eq & mask) == mask;
#else
    auto n = static_cast<std::size_t>(__builtin_popcount(mask));  // masks here are the low n bits
    return std::memcmp(p, pattern, n) == 0;
#endif
}

enum class scan_kind { string, number, integer, null, boolean };

struct json_scanner {
    const char* p;
    const char* e;
    // false (the fast readers): decline surrogate escapes and nesting deeper than 64, leaving
    // them to simdjson. true (a validator): accept every syntactically valid escape, nest to
    // 1024 (simdjson's own limit), so false means "not JSON".
    bool syntax_only = false;
    // true: the text's UTF-8 has not been validated; the strings' non-ASCII runs are (above).
    bool check_utf8 = false;
    // true: '\n' is not whitespace but the end of a line, where every token stops (a reader
    // that cuts its own line out of a longer text: nothing it accepts crosses a '\n').
    bool newline_ends = false;

    PROF_SCAN_INLINE void ws() {
        // Compact JSON has no whitespace between tokens: one test for that case.
        if (p < e && static_cast<unsigned char>(*p) <= ' ')
            while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || (*p == '\n' && !newline_ends))) ++p;
    }
    PROF_SCAN_INLINE bool eat(char c) {
        if (p < e && *p == c) {
            ++p;
            return true;
        }
        return false;
    }

    // A string without escapes or control characters; `out` is its contents.
    PROF_SCAN_INLINE bool string(std::string_view& out) {
        if (p >= e || *p != '"') return false;
        const char* q = p + 1;
        const char* end = plain_run(q);
        if (end < e && static_cast<unsigned char>(*end) >= 0x80 && !(end = utf8_run(end))) return false;
        if (end >= e || *end != '"') return false;
        out = std::string_view(q, static_cast<std::size_t>(end - q));
        p = end + 1;
        return true;
    }

    // Any string, escapes checked but not decoded (a \u escape of a surrogate declines: whether
    // one is acceptable is simdjson's call).
    bool skip_string() {
        if (p >= e || *p != '"') return false;
        const char* q = p + 1;
        for (;;) {
            q = plain_run(q);
            if (q < e && static_cast<unsigned char>(*q) >= 0x80 && !(q = utf8_run(q))) return false;
            if (q >= e) return false;
            if (*q == '"') break;
            if (*q != '\\' || e - q < 2) return false;  // a control character, or a cut escape
            switch (q[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': q += 2; break;
            case 'u': {
                if (e - q < 6) return false;
                unsigned v = 0;
                for (int k = 2; k < 6; ++k) {
                    int h = hex(q[k]);
                    if (h < 0) return false;
                    v = v << 4 | static_cast<unsigned>(h);
                }
                if (v >= 0xD800 && v <= 0xDFFF && !syntax_only) return false;
                q += 6;
                break;
            }
            default: return false;
            }
        }
        p = q + 1;
        return true;
    }

    // An RFC 8259 number; `integer` tells whether it had neither fraction nor exponent.
    PROF_SCAN_INLINE bool number(std::string_view& out, bool& integer) {
        const char* b = p;
        if (p < e && *p == '-') ++p;
        if (p >= e) return false;
        if (*p == '0') {
            ++p;
        } else if (*p >= '1' && *p <= '9') {
            while (p < e && *p >= '0' && *p <= '9') ++p;
        } else {
            return false;
        }
        integer = true;
        if (p < e && *p == '.') {
            integer = false;
            const char* d = ++p;
            while (p < e && *p >= '0' && *p <= '9') ++p;
            if (p == d) return false;
        }
        if (p < e && (*p == 'e' || *p == 'E')) {
            integer = false;
            ++p;
            if (p < e && (*p == '+' || *p == '-')) ++p;
            const char* d = p;
            while (p < e && *p >= '0' && *p <= '9') ++p;
            if (p == d) return false;
        }
        out = std::string_view(b, static_cast<std::size_t>(p - b));
        return true;
    }

    // A non-negative integer of 1 to 19 digits, without sign, fraction or exponent, at p: its
    // value in `out` (19 digits cannot overflow 64 bits), p past it. false, p unmoved, for
    // anything else (a sign, a leading zero before more digits, 20 digits, a '.', 'e' or 'E'
    // after the digits), which the caller then reads the general way.
    PROF_SCAN_INLINE bool uint19(std::uint64_t& out) {
        const char* q = p;
        std::uint64_t v = 0;
        digit_run(q, v, 20);
        auto n = q - p;
        if (n == 0 || n > 19 || (n > 1 && *p == '0')) return false;
        if (q < e && (*q == '.' || *q == 'e' || *q == 'E')) return false;
        out = v;
        p = q;
        return true;
    }

    // A number without exponent of at most 19 digits in all, as the integer m of its digits with
    // k of them after the point (value ±m / 10^k, exactly), p past it. false, p unmoved, for
    // anything else (the caller reads it the general way).
    PROF_SCAN_INLINE bool decimal(std::uint64_t& m, int& k, bool& neg) {
        const char* q = p;
        neg = q < e && *q == '-';
        q += neg;
        if (q >= e || static_cast<unsigned char>(*q - '0') > 9) return false;
        if (*q == '0' && q + 1 < e && static_cast<unsigned char>(q[1] - '0') <= 9) return false;
        m = 0;
        const char* i = q;
        digit_run(q, m, 20);
        auto n = q - i, f = decltype(n){0};
        if (n > 19) return false;
        if (q < e && *q == '.') {
            const char* d = ++q;
            digit_run(q, m, 20 - n);
            f = q - d;
            n += f;
            if (f == 0 || n > 19) return false;
        }
        if (q < e && (*q == 'e' || *q == 'E')) return false;
        k = static_cast<int>(f);
        p = q;
        return true;
    }

    // A number without exponent whose digits, read as an integer m with k of them after the
    // point, have m <= 2^53 and k <= 22 (at most 19 digits in all): out = ±m / 10^k. Both
    // operands are exact doubles and one IEEE division rounds once, so this is the correctly
    // rounded value of the text — what std::from_chars gives (Clinger's fast path; unit-tested
    // against from_chars). false, p unmoved, for anything else (the caller uses from_chars).
    PROF_SCAN_INLINE bool exact_decimal(double& out) {
        static constexpr double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                           1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
        const char* start = p;
        std::uint64_t m = 0;
        int k = 0;
        bool neg = false;
        if (!decimal(m, k, neg)) return false;
        if (m > (std::uint64_t{1} << 53)) {
            p = start;
            return false;
        }
        double v = static_cast<double>(m) / pow10[k];
        out = neg ? -v : v;
        return true;
    }

    // null, true or false at p (their lengths are known: compared as words, not by memcmp).
    // A string literal is taken as an array, so that no strlen runs for its length.
    template <std::size_t N>
    PROF_SCAN_INLINE bool literal(const char (&word)[N]) {
        return literal(std::string_view(word, N - 1));
    }
    PROF_SCAN_INLINE bool literal(std::string_view word) {
        std::size_t n = word.size();
        if (static_cast<std::size_t>(e - p) < n || n < 4) return false;
        std::uint32_t a, b;
        std::memcpy(&a, p, 4);
        std::memcpy(&b, word.data(), 4);
        if (a != b || (n == 5 && p[4] != word[4])) return false;
        p += n;
        return true;
    }

    // One scalar: its kind and text (a string's contents, a number's token, a literal's word).
    PROF_SCAN_INLINE bool scalar(scan_kind& k, std::string_view& text) {
        if (p >= e) return false;
        const char* b = p;
        switch (*p) {
        case '"': k = scan_kind::string; return string(text);
        case 'n': k = scan_kind::null; break;
        case 't': k = scan_kind::boolean; break;
        case 'f': k = scan_kind::boolean; break;
        default: {
            bool integer = false;
            if (!number(text, integer)) return false;
            k = integer ? scan_kind::integer : scan_kind::number;
            return true;
        }
        }
        using namespace std::string_view_literals;
        if (!literal(*p == 'n' ? "null"sv : *p == 't' ? "true"sv : "false"sv)) return false;
        text = std::string_view(b, static_cast<std::size_t>(p - b));
        return true;
    }

    // Any value, checked and skipped: containers (to the depth above), strings with escapes.
    bool skip_value(int depth = 0) {
        if (p >= e) return false;
        switch (*p) {
        case '"': return skip_string();
        case '{': return skip_container<'}'>(depth);
        case '[': return skip_container<']'>(depth);
        case 'n': return literal("null");
        case 't': return literal("true");
        case 'f': return literal("false");
        default: {
            std::string_view t;
            bool integer = false;
            return number(t, integer);
        }
        }
    }

private:
    // The rest of an object (Close '}': "key": value members) or an array (Close ']': values)
    // from its opening bracket at p, each value skipped one level deeper.
    template <char Close>
    PROF_SCAN_INLINE bool skip_container(int depth) {
        if (depth >= (syntax_only ? 1024 : 64)) return false;
        ++p;
        ws();
        if (eat(Close)) return true;
        for (;;) {
            if constexpr (Close == '}') {
                if (!skip_string()) return false;
                ws();
                if (!eat(':')) return false;
                ws();
            }
            if (!skip_value(depth + 1)) return false;
            ws();
            if (eat(Close)) return true;
            if (!eat(',')) return false;
            ws();
        }
    }

    // Appends the decimal digits at q to v (v = v * 10 + digit), at most `limit` of them, q past
    // them. A run of fewer than 16 digits with 16 bytes of text at q (nearly every number) is
    // found and converted by one vector pass: the digits moved to the end of a 16-byte lane,
    // then multiply-adds join pairs, quads and octets. Otherwise eight bytes at a time while
    // eight lie inside the text: a SWAR test finds how many of the eight are digits (a run of 1
    // to 8, no branch per digit) and a SWAR conversion adds them; the last few bytes of the
    // text one by one. More than 19 digits overflow v; callers stop at 19 and only compare
    // counts.
    PROF_SCAN_INLINE void digit_run(const char*& q, std::uint64_t& v, std::ptrdiff_t limit) const {
        static constexpr std::uint64_t pow10[16] = {1,           10,           100,           1000,
                                                    10000,       100000,       1000000,       10000000,
                                                    100000000,   1000000000,   10000000000,   100000000000,
                                                    1000000000000, 10000000000000, 100000000000000, 1000000000000000};
#ifdef __AVX2__
        if (e - q >= 16) {
            const __m128i d = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), _mm_set1_epi8('0'));
            const __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
            const unsigned other = ~static_cast<unsigned>(_mm_movemask_epi8(digit)) & 0xFFFFu;
            unsigned n = other ? static_cast<unsigned>(__builtin_ctz(other)) : 16u;
            if (static_cast<std::ptrdiff_t>(n) > limit) n = limit > 0 ? static_cast<unsigned>(limit) : 0u;
            if (n < 16) {
                const __m128i x = _mm_shuffle_epi8(d, _mm_load_si128(reinterpret_cast<const __m128i*>(detail::align_digits.at[n])));
                const __m128i pairs = _mm_maddubs_epi16(x, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1));
                const __m128i quads = _mm_madd_epi16(pairs, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
                const __m128i octets = _mm_madd_epi16(_mm_packus_epi32(quads, quads),
                                                      _mm_setr_epi16(10000, 1, 10000, 1, 0, 0, 0, 0));
                const auto high = static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_cvtsi128_si32(octets)));
                const auto low = static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_extract_epi32(octets, 1)));
                v = v * pow10[n] + (high * 100000000u + low);
                q += n;
                return;
            }
        }
#endif
        const char* stop = e - q > limit ? q + limit : e;
        while (stop - q >= 8) {
            std::uint64_t w;
            std::memcpy(&w, q, 8);
            std::uint64_t x = w ^ 0x3030303030303030u;  // a digit byte becomes its value, 0..9
            // Bytes above 9 get their top bit set. A carry out of one byte only reaches later
            // bytes, so the first flagged byte, the one that counts, is exact.
            std::uint64_t over = ((x + 0x7676767676767676u) | x) & 0x8080808080808080u;
            unsigned n = over ? static_cast<unsigned>(__builtin_ctzll(over)) >> 3 : 8u;  // leading digits
            if (n == 0) return;
            if (n < 8) x <<= 8 * (8 - n);  // the n digits to the top: zeros before them are leading zeros
            x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFu;       // pairs (first digit lowest)
            x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFu;     // quads
            x = (x * 10000 + (x >> 32)) & 0x00000000FFFFFFFFu;   // the run's value
            v = v * pow10[n] + x;
            q += n;
            if (n < 8) return;
        }
        while (q < stop && static_cast<unsigned char>(*q - '0') <= 9) v = v * 10 + static_cast<unsigned>(*q++ - '0');
    }

    static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }
    // From q, the first '"', '\\' or control character (or e); with check_utf8 (and High),
    // also the first byte at or above 0x80.
    template <bool High = true>
    PROF_SCAN_INLINE const char* plain_run(const char* q) const {
        const bool high = High && check_utf8;
#ifdef __AVX2__
        const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'),
                      ctl_max = _mm256_set1_epi8(0x1F);
        const std::uint32_t high_mask = high ? ~0u : 0u;
        while (e - q >= 32) {
            __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
            __m256i stop = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
                                           _mm256_cmpeq_epi8(_mm256_max_epu8(v, ctl_max), ctl_max));
            auto m = static_cast<std::uint32_t>(_mm256_movemask_epi8(stop)) |
                     (static_cast<std::uint32_t>(_mm256_movemask_epi8(v)) & high_mask);
            if (m) return q + __builtin_ctz(m);
            q += 32;
        }
#endif
        while (q < e) {
            unsigned char c = static_cast<unsigned char>(*q);
            if (c == '"' || c == '\\' || c < 0x20 || (high && c >= 0x80)) return q;
            ++q;
        }
        return q;
    }
    // At q, a byte at or above 0x80 inside a string: the run of string bytes from q to the next
    // '"', '\\' or control character (or e), checked to be valid UTF-8 (a multi-byte sequence
    // holds no ASCII byte, so none is cut at either end); its end, or nullptr when it is not
    // valid UTF-8.
    const char* utf8_run(const char* q) const {
        const char* end = plain_run<false>(q);
        return simdjson::validate_utf8(q, static_cast<std::size_t>(end - q)) ? end : nullptr;
    }
};

// The value of a string that spells a non-finite number the way exporters write one (pandas,
// Spark and PostgreSQL: NaN, Infinity, inf, ...): NaN or ±infinity; nullopt for any other
// string. Every reader of numbers takes these words as the number, and a count as absent.
inline std::optional<double> nonfinite_word(std::string_view s) {
    if (s.size() < 3 || s.size() > 9) return std::nullopt;
    if (s == "NaN" || s == "nan" || s == "NAN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity" || s == "inf" || s == "+Infinity" || s == "Inf") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity" || s == "-inf" || s == "-Inf") return -std::numeric_limits<double>::infinity();
    return std::nullopt;
}

// How a text measures against the JSON grammar (the scanner in validator mode: syntax, not
// range, so 1e400 passes): exactly one value with whitespace around it, or one value and then
// something else, and where the scanner stopped (0-based: the first byte it refused, the first
// byte after the value, or the text's size).
struct json_syntax {
    bool one_value = false;
    bool trailing = false;
    std::size_t stop = 0;
};
inline json_syntax check_json_syntax(std::string_view text) {
    json_scanner s{text.data(), text.data() + text.size()};
    s.syntax_only = true;
    s.ws();
    json_syntax c;
    if (s.skip_value()) {
        s.ws();
        c.one_value = s.p == s.e;
        c.trailing = !c.one_value;
    }
    c.stop = static_cast<std::size_t>(s.p - text.data());
    return c;
}

// ---- typed field scanners ---------------------------------------------------------------
// Each reads one value at s.p in the forms its field takes, the common form first; false
// declines (the caller re-reads the text with simdjson, which gives the value or the error).

// A count: a plain or quoted run of digits that fits 64 bits; null → nullopt.
inline bool count_of_scalar(scan_kind k, std::string_view t, std::optional<std::uint64_t>& out) {
    if (k == scan_kind::null) {
        out.reset();
        return true;
    }
    if (k == scan_kind::string && nonfinite_word(t)) {
        out.reset();
        return true;
    }
    if ((k != scan_kind::integer && k != scan_kind::string) || t.empty() || t[0] < '0' || t[0] > '9') return false;
    std::uint64_t u = 0;
    auto r = std::from_chars(t.data(), t.data() + t.size(), u);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return false;
    out = u;
    return true;
}

// Seconds: a number (or a string holding an RFC 8259 number) within double range; null → nullopt.
inline bool seconds_of_scalar(scan_kind k, std::string_view t, std::optional<double>& out) {
    if (k == scan_kind::null) {
        out.reset();
        return true;
    }
    if (k == scan_kind::string) {
        if (auto w = nonfinite_word(t)) {
            out = *w;
            return true;
        }
        json_scanner inner{t.data(), t.data() + t.size()};
        std::string_view tok;
        bool integer = false;
        if (!inner.number(tok, integer) || inner.p != inner.e) return false;
    } else if (k != scan_kind::number && k != scan_kind::integer) {
        return false;
    }
    double d = 0;
    auto r = std::from_chars(t.data(), t.data() + t.size(), d);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size() || !std::isfinite(d)) return false;
    out = d;
    return true;
}

// A number by the scanner's exact reader `Fast` (uint19, exact_decimal), else by `OfScalar`
// (count_of_scalar, seconds_of_scalar) over the scalar's text.
template <auto Fast, auto OfScalar, class T>
PROF_SCAN_INLINE bool scan_number_as(json_scanner& s, std::optional<T>& out) {
    T v;
    if ((s.*Fast)(v)) {
        out = v;
        return true;
    }
    scan_kind k;
    std::string_view t;
    return s.scalar(k, t) && OfScalar(k, t, out);
}

// A count (json_scanner::uint19, plain or between quotes — the quoted form is what
// count_of_scalar reads from those digits — null, else count_of_scalar).
PROF_SCAN_INLINE bool scan_count(json_scanner& s, std::optional<std::uint64_t>& out) {
    if (s.p < s.e && *s.p == '"') {
        json_scanner digits{s.p + 1, s.e};
        std::uint64_t v;
        if (digits.uint19(v) && digits.p < s.e && *digits.p == '"') {
            out = v;
            s.p = digits.p + 1;
            return true;
        }
    }
    if (s.p < s.e && *s.p == 'n') {  // null, before the digits are looked for
        out.reset();
        return s.literal("null");
    }
    return scan_number_as<&json_scanner::uint19, count_of_scalar>(s, out);
}

// Seconds (json_scanner::exact_decimal, else seconds_of_scalar).
PROF_SCAN_INLINE bool scan_seconds(json_scanner& s, std::optional<double>& out) {
    return scan_number_as<&json_scanner::exact_decimal, seconds_of_scalar>(s, out);
}

// A string, or null (nullopt).
PROF_SCAN_INLINE bool scan_text(json_scanner& s, std::optional<std::string_view>& out) {
    std::string_view t;
    if (s.p < s.e && *s.p == '"') {
        if (!s.string(t)) return false;
        out.emplace(t);  // not `out = t`, which GCC leaves as a call
        return true;
    }
    out.reset();
    return s.literal("null");
}

// An identifier: a string, or an integer kept as its text.
PROF_SCAN_INLINE bool scan_id(json_scanner& s, std::string_view& out) {
    if (s.p < s.e && *s.p == '"') return s.string(out);
    scan_kind k;
    return s.scalar(k, out) && k == scan_kind::integer;
}

// Whether an optional id is set: any value but null and "" (a non-Nullable String column's
// "none").
PROF_SCAN_INLINE bool scan_set(json_scanner& s, bool& out) {
    out = false;
    if (s.literal("null")) return true;
    scan_kind k;
    std::string_view t;
    if (!s.scalar(k, t)) return false;
    out = !(k == scan_kind::string && t.empty());
    return true;
}

// ---- the key predictor ---------------------------------------------------------------------
// Objects written by one exporter repeat their keys in one order, so the predictor remembers
// each member's `"key":` bytes from the last object (with the whitespace before them, so
// `, "key": value` objects are predicted as well as compact ones) and the id the caller gave
// the key, and recognises the next object's member with one bytes_equal_32, scanning and
// looking up the key only where the bytes differ.
class key_predictor {
    struct member_bytes;

public:
    static constexpr std::size_t max_members = 32;

    // The i-th member's key at s.p (s.p at the whitespace after '{' or ','), then its ':' and
    // the whitespace after: s.p moves to the value and `id` is the key's id — predicted, or
    // id_of(key) for a key scanned here (and remembered for the next object). false: no
    // member key here (s.p unspecified). `readable_end`: bytes before it may be loaded (the
    // end of a padded line's padding).
    template <class IdOf>
    PROF_SCAN_INLINE bool member(std::size_t i, json_scanner& s, const char* readable_end, IdOf id_of, std::uint8_t& id) {
        if (predicted(i, s, readable_end, id)) return true;
        const char* start = s.p;
        s.ws();
        return scan_key(i, start, s, id_of, id);
    }

    // What follows a member's value: the next member's key, or the object's end.
    enum class step { member, end, fail };
    // Where a reader stands in the remembered members: the one its next key is compared with.
    // A pointer walked along them, so that a predicted member costs no index arithmetic.
    class cursor {
        friend class key_predictor;
        const member_bytes* at_ = nullptr;
    };
    // The cursor at member i (the member after the first of an object read with next_member: 1).
    cursor at(std::size_t i) const {
        cursor c;
        c.at_ = &shape_[i < max_members ? i : max_members];
        return c;
    }
    // The form of member() that also predicts the delimiter: s.p right after the value of the
    // member before the cursor's. Where the bytes from there through the cursor's member's
    // `"key":` are the last object's, one bytes_equal_32 takes the ',' and the key alike: s.p
    // moves to the value (the whitespace before it skipped), `id` is the key's id, and the step
    // is `member`. Otherwise they are scanned: `end` at the '}' (s.p past it), `member` for a ','
    // and a key (id_of(key), remembered from the value's end for the next object), `fail` for
    // anything else. The cursor moves to the next member after a `member` step.
    template <class IdOf>
    PROF_SCAN_INLINE step next_member(cursor& c, json_scanner& s, const char* readable_end, IdOf id_of,
                                      std::uint8_t& id) {
        const member_bytes* m = c.at_;
        // The sentinel past the last remembered member is never learned (key_length 0), so a
        // predicted member is never the sentinel and the one after it is inside shape_.
        if (s.e - s.p > 32) [[likely]] {
            if (m->key_length && bytes_equal_32(s.p, m->bytes, m->key_mask)) {
                s.p += m->key_length;  // still before s.e: the byte there is the text's
                id = m->id;
                c.at_ = m + 1;
                if (static_cast<unsigned char>(*s.p) <= ' ') s.ws();
                return step::member;
            }
        } else if (matches(*m, s, readable_end)) {
            s.p += m->key_length;
            id = m->id;
            c.at_ = m + 1;
            s.ws();
            return step::member;
        }
        const char* start = s.p;
        s.ws();
        if (s.eat('}')) return step::end;
        if (!s.eat(',')) return step::fail;
        s.ws();
        auto i = static_cast<std::size_t>(m - shape_);
        c = at(i + 1);
        return scan_key(i, start, s, id_of, id) ? step::member : step::fail;
    }

private:
    struct alignas(32) member_bytes {
        char bytes[32] = {};
        std::uint32_t key_mask = 0;   // the low `key_length` bits
        std::uint8_t key_length = 0;  // 0: longer than 32 bytes, not predicted
        std::uint8_t id = 0;
    };
    // Whether m's remembered bytes are those at s.p. 32 bytes left in the text (nearly always)
    // cover the load and the key alike.
    PROF_SCAN_INLINE static bool matches(const member_bytes& m, const json_scanner& s, const char* readable_end) {
        return m.key_length && (s.e - s.p >= 32 || (readable_end - s.p >= 32 && m.key_length <= s.e - s.p)) &&
               bytes_equal_32(s.p, m.bytes, m.key_mask);
    }
    // Whether member i's remembered bytes are those at s.p: then s.p moves past them and the
    // whitespace after, and `id` is the remembered key's.
    PROF_SCAN_INLINE bool predicted(std::size_t i, json_scanner& s, const char* readable_end, std::uint8_t& id) const {
        // shape_[max_members] is never learned: a member past the last remembered is not predicted.
        const member_bytes& m = shape_[i < max_members ? i : max_members];
        if (!matches(m, s, readable_end)) return false;
        s.p += m.key_length;
        id = m.id;
        s.ws();
        return true;
    }
    // The key at s.p, its ':' and the whitespace after, remembered as member i's from `start`.
    template <class IdOf>
    PROF_SCAN_INLINE bool scan_key(std::size_t i, const char* start, json_scanner& s, IdOf id_of, std::uint8_t& id) {
        std::string_view key;
        if (!s.string(key)) return false;
        s.ws();
        if (!s.eat(':')) return false;
        id = id_of(key);
        learn(i, start, s.p, id);
        s.ws();
        return true;
    }
    void learn(std::size_t i, const char* begin, const char* end, std::uint8_t id) {
        if (i >= max_members) return;
        member_bytes& m = shape_[i];
        auto n = static_cast<std::size_t>(end - begin);
        // Bytes holding a '\n' are not remembered: a reader that cuts its own lines
        // (json_scanner::newline_ends) must never match a member across one.
        bool fits = n <= sizeof m.bytes && !std::memchr(begin, '\n', n);
        m.key_length = fits ? static_cast<std::uint8_t>(n) : 0;
        m.key_mask = m.key_length == 32 ? ~0u : (1u << m.key_length) - 1;
        if (m.key_length) std::memcpy(m.bytes, begin, n);
        m.id = id;
    }
    member_bytes shape_[max_members + 1]{};  // key_length 0: not learned (or not predictable)
};

}  // namespace prof

#undef PROF_SCAN_INLINE
