// HTTP(S) input through libcurl: a URL streamed as a byte_source (headers, timeouts, retries
// before the first body byte, Content-Encoding gzip, truncation detection) and small bodies
// fetched whole. Shared by prof-harvest (warehouse exports) and prof-resolve (a registry).
#pragma once

#include "prof/core/errors.hpp"
#include "prof/io/json_in.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace prof {

namespace cli {
struct http_flags;
}

// A remote source still failing after every retry (exit 75, EX_TEMPFAIL).
struct temp_fail_error : error {
    explicit temp_fail_error(const std::string& m) : error(exit_code::temp_fail, m) {}
};

struct http_options {
    // Extra request headers, each "Name: value" (credentials such as "Authorization: Bearer
    // …"). Header values never appear in any message this module produces.
    std::vector<std::string> headers;
    double connect_timeout_s = 10;  // TCP + TLS connect, per attempt
    double timeout_s = 0;           // whole transfer, per attempt; 0 = no limit
    // A transfer that moves fewer than min_speed_bps bytes per second for this long is abandoned
    // (a stalled server, or one that drips a byte at a time); 0 = never.
    double stall_timeout_s = 60;
    std::uint64_t min_speed_bps = 1;
    // Retries after the first attempt, with exponential backoff (backoff_s, 2×, 4×, … capped
    // at 30 s; a Retry-After of seconds is honoured up to the same cap). A retry happens only
    // while no byte of the body has been handed to the reader, so no row is read twice.
    unsigned retries = 3;
    double backoff_s = 1.0;
    // Ask for Content-Encoding gzip (Accept-Encoding: gzip). Whatever this says, a gzip body is
    // decoded as it streams by prof's own decoder (gunzip: trailer checked), and any other
    // encoding is refused.
    bool accept_compressed = true;
    // How to wait between attempts (injected by tests; default: a real sleep).
    std::function<void(double seconds)> sleep;
};

// The options the HTTP flags of a program give (core/cli.hpp): each header checked
// (check_header), --header-from-env read from the environment (an unset variable is a
// usage_error), durations and the speed parsed (usage_error naming the flag).
http_options http_options_from(const cli::http_flags& f);

// True for "http://…" and "https://…" (case-insensitive scheme).
bool is_http_url(std::string_view text);

// The URL as diagnostics may print it: user:password@ removed and a query string shown as
// "?…", so a credential carried in the URL never reaches a message.
std::string redact_url(std::string_view url);

// Parses a --header value "Name: value"; throws usage_error (naming `flag`, never the value)
// when there is no ':' or the name is empty or holds a space or control character.
std::string check_header(std::string_view header, std::string_view flag);

// GETs `url` and streams its body. Redirects (at most 5) are followed to http(s) URLs only; the
// headers in `options` go along only while the scheme, host and port stay those of `url`
// (credentials never reach another server; a note on stderr says they were dropped). Nothing is buffered beyond about 1 MiB: libcurl is paused
// while the reader has not caught up. The response status is checked before the first byte:
//   2xx → the body; 429, 5xx, a refused/reset connection or a connect timeout → retried with
//   backoff, then temp_fail_error (75) when retries run out; 404/410 → no_input_error (66);
//   any other status → unavailable_error (69).
// After the first body byte has been handed out, a failure is final: a body shorter than its
// Content-Length, a chunked body without its last chunk, a gzip body without its trailer (cut
// at a flush point) or corrupt, a reset or a timeout → io_error (74). A response whose
// Content-Length headers disagree, or whose Content-Encoding is neither identity nor gzip, is
// refused with io_error (74) before any byte is read, and so, after its retries, is a 2xx
// response cut inside its headers (a status line, then the connection closed). Messages name
// the redacted URL and what happened.
std::unique_ptr<byte_source> http_source(const std::string& url, const http_options& options);

// GETs a small body whole (a registry index, a profile): the same statuses, retries and
// errors; a body above max_bytes is refused with io_error.
std::string http_get(const std::string& url, const http_options& options, std::size_t max_bytes = 64u << 20);

}  // namespace prof
