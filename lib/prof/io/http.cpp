// libcurl streaming GET (see http.hpp). The multi interface lets read() pull the body on
// demand: libcurl is pumped only while the local buffer is empty and is paused when the
// reader falls behind, so memory stays at about one buffer whatever the body's size.
#include "prof/io/http.hpp"

#include "prof/core/cli.hpp"
#include "prof/core/diag.hpp"
#include "prof/io/curl_api.hpp"
#include "prof/core/units.hpp"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <thread>
#include <vector>

#ifndef PROF_VERSION
#define PROF_VERSION "0.0.0"
#endif

namespace prof {

namespace {

constexpr std::size_t buffer_limit = 1u << 20;  // pause libcurl above this many unread bytes
constexpr double max_backoff_s = 30;
constexpr unsigned max_redirects = 5;

// "scheme://host:port" of an http(s) URL, lower-cased, the port made explicit (80, 443) and
// any user:password@ left out: two URLs with the same origin reach the same server.
std::string url_origin(std::string_view url) {
    auto sep = url.find("://");
    if (sep == std::string_view::npos) return std::string(url);
    std::string scheme(url.substr(0, sep));
    std::string_view rest = url.substr(sep + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (auto at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
    std::string host(authority), port;
    auto colon = authority.rfind(':');
    if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
        host = std::string(authority.substr(0, colon));
        port = std::string(authority.substr(colon + 1));
    }
    for (char& c : scheme) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    for (char& c : host) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (port.empty()) port = scheme == "https" ? "443" : "80";
    return scheme + "://" + host + ":" + port;
}

bool iequals_prefix(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char a = s[i], b = prefix[i];
        if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
        if (a != b) return false;
    }
    return true;
}

void real_sleep(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

std::string seconds_text(double s) { return s == std::floor(s) ? fmt::format("{:.0f} s", s) : fmt::format("{:.3g} s", s); }

// Connection-level failures worth another attempt: the server may be restarting or overloaded.
bool retryable_curl(CURLcode c) {
    switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

bool retryable_status(long s) { return s == 429 || (s >= 500 && s <= 599); }

class http_byte_source final : public byte_source {
public:
    http_byte_source(std::string url, http_options opt) : url_(std::move(url)), opt_(std::move(opt)) {
        name_ = redact_url(url_);
        try {
            curl();  // libcurl is loaded here, at the first URL
        } catch (const unavailable_error& e) {
            throw unavailable_error(fmt::format("{}: {}", name_, e.what()));
        }
        if (!opt_.sleep) opt_.sleep = real_sleep;
        multi_ = curl().multi_init();
        if (!multi_) throw io_error(fmt::format("{}: cannot start libcurl", name_));
        origin_ = url_origin(url_);
        set_headers(true);
        start();
    }
    ~http_byte_source() override {
        stop();
        if (headers_) curl().slist_free_all(headers_);
        if (multi_) curl().multi_cleanup(multi_);
    }

    std::size_t read(char* out, std::size_t n) override {
        for (;;) {
            if (pos_ < buf_.size()) {
                std::size_t k = std::min(n, buf_.size() - pos_);
                std::memcpy(out, buf_.data() + pos_, k);
                pos_ += k;
                delivered_ = true;
                if (pos_ == buf_.size()) {
                    buf_.clear();
                    pos_ = 0;
                    if (paused_) {
                        paused_ = false;
                        curl().easy_pause(easy_, CURLPAUSE_CONT);  // may refill buf_ at once
                    }
                }
                return k;
            }
            if (finished_) return 0;
            pump();
        }
    }
    const std::string& name() const override { return name_; }
    // The response's Content-Encoding ("" when none), known once read() has returned.
    const std::string& content_encoding() const { return content_encoding_; }

private:
    static std::string trimmed(std::string_view v) {
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
        return std::string(v);
    }

    // The request headers: the caller's (credentials) only while the request goes to the
    // origin the caller named, and Accept-Encoding.
    void set_headers(bool with_callers) {
        if (headers_) curl().slist_free_all(headers_);
        headers_ = nullptr;
        if (with_callers)
            for (const auto& h : opt_.headers) headers_ = curl().slist_append(headers_, h.c_str());
        if (opt_.accept_compressed) headers_ = curl().slist_append(headers_, "Accept-Encoding: gzip");
    }

    void start() {
        ++attempt_;
        easy_ = curl().easy_init();
        if (!easy_) throw io_error(fmt::format("{}: cannot start libcurl", name_));
        errbuf_[0] = '\0';
        status_ = 0;
        response_status_ = 0;
        headers_done_ = false;
        reason_.clear();
        retry_after_s_ = -1;
        content_encoding_.clear();
        content_length_.clear();
        length_conflict_.clear();
        buf_.clear();
        pos_ = 0;
        paused_ = false;
        curl().easy_setopt(easy_, CURLOPT_URL, target_.empty() ? url_.c_str() : target_.c_str());
        curl().easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
        curl().easy_setopt(easy_, CURLOPT_PROTOCOLS_STR, "http,https");
        curl().easy_setopt(easy_, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        // Redirects are followed here (follow_redirect), not by libcurl, which sends every
        // CURLOPT_HTTPHEADER header (an API key, a token) to whatever host a Location names and
        // drops only Authorization and Cookie.
        curl().easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 0L);
        curl().easy_setopt(easy_, CURLOPT_FAILONERROR, 1L);
        curl().easy_setopt(easy_, CURLOPT_USERAGENT, "prof/" PROF_VERSION);
        curl().easy_setopt(easy_, CURLOPT_ERRORBUFFER, errbuf_);
        curl().easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opt_.connect_timeout_s * 1000));
        if (opt_.timeout_s > 0) curl().easy_setopt(easy_, CURLOPT_TIMEOUT_MS, static_cast<long>(opt_.timeout_s * 1000));
        if (opt_.stall_timeout_s > 0) {
            curl().easy_setopt(easy_, CURLOPT_LOW_SPEED_LIMIT, std::max(1L, static_cast<long>(opt_.min_speed_bps)));
            curl().easy_setopt(easy_, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(opt_.stall_timeout_s)));
        }
        // gzip is asked for and decoded by prof's own decoder (json_in.hpp: gunzip), which
        // checks the trailer: libcurl's decoding takes a body cut at a flush point as whole.
        curl().easy_setopt(easy_, CURLOPT_HTTP_CONTENT_DECODING, 0L);
        if (headers_) curl().easy_setopt(easy_, CURLOPT_HTTPHEADER, headers_);
        curl().easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &http_byte_source::on_body);
        curl().easy_setopt(easy_, CURLOPT_WRITEDATA, this);
        curl().easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &http_byte_source::on_header);
        curl().easy_setopt(easy_, CURLOPT_HEADERDATA, this);
        curl().multi_add_handle(multi_, easy_);
    }

    void stop() {
        if (!easy_) return;
        curl().multi_remove_handle(multi_, easy_);
        curl().easy_cleanup(easy_);
        easy_ = nullptr;
    }

    static std::size_t on_body(char* data, std::size_t size, std::size_t nmemb, void* self_v) {
        auto* self = static_cast<http_byte_source*>(self_v);
        std::size_t n = size * nmemb;
        if (self->response_status_ >= 300 && self->response_status_ < 400) return n;  // a redirect's own body
        if (self->buf_.size() - self->pos_ >= buffer_limit) {
            self->paused_ = true;
            return CURL_WRITEFUNC_PAUSE;
        }
        self->buf_.append(data, n);
        return n;
    }

    static std::size_t on_header(char* data, std::size_t size, std::size_t nmemb, void* self_v) {
        auto* self = static_cast<http_byte_source*>(self_v);
        std::size_t n = size * nmemb;
        std::string_view line(data, n);
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
        if (line.empty()) {
            self->headers_done_ = true;  // the blank line that ends a header block
        } else if (iequals_prefix(line, "http/")) {  // a new response (after a 100)
            self->headers_done_ = false;
            self->response_status_ = 0;
            if (auto sp = line.find(' '); sp != std::string_view::npos && line.size() >= sp + 4)
                self->response_status_ = std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
            self->retry_after_s_ = -1;
            self->reason_.clear();
            self->content_encoding_.clear();
            self->content_length_.clear();
            auto sp = line.find(' ');
            if (sp != std::string_view::npos) {
                auto sp2 = line.find(' ', sp + 1);
                if (sp2 != std::string_view::npos) self->reason_ = std::string(line.substr(sp2 + 1));
            }
        } else if (iequals_prefix(line, "retry-after:")) {
            std::string_view v = line.substr(12);
            while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
            char* end = nullptr;
            std::string s(v);
            double d = std::strtod(s.c_str(), &end);
            if (end && *end == '\0' && !s.empty() && std::isfinite(d) && d >= 0) self->retry_after_s_ = d;
        } else if (iequals_prefix(line, "content-encoding:")) {
            std::string v = trimmed(line.substr(17));
            self->content_encoding_ += (self->content_encoding_.empty() || v.empty() ? "" : ", ") + v;
        } else if (iequals_prefix(line, "content-length:")) {
            // RFC 9110 8.6: several values (repeated headers or a list) must all be equal, or the
            // message cannot be framed; libcurl would use one of them and cut or pad the body.
            std::string_view list = line.substr(15);
            while (!list.empty()) {
                auto comma = list.find(',');
                std::string v = trimmed(list.substr(0, comma));
                list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
                if (self->content_length_.empty()) self->content_length_ = v;
                else if (v != self->content_length_) {
                    self->length_conflict_ = fmt::format("{} and {}", self->content_length_, v);
                    return 0;  // abort the transfer (CURLE_WRITE_ERROR); complete() says why
                }
            }
        }
        return n;
    }

    // Runs libcurl until there is body data for the reader or the transfer has ended.
    void pump() {
        while (!finished_ && pos_ == buf_.size()) {
            int running = 0;
            CURLMcode mc = curl().multi_perform(multi_, &running);
            if (mc != CURLM_OK) throw io_error(fmt::format("{}: libcurl: {}", name_, curl().multi_strerror(mc)));
            int left = 0;
            while (CURLMsg* msg = curl().multi_info_read(multi_, &left)) {
                if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy_) {
                    complete(msg->data.result);
                    return;
                }
            }
            if (pos_ < buf_.size()) return;
            if (paused_) continue;  // cannot happen with an empty buffer, but never block on it
            mc = curl().multi_poll(multi_, nullptr, 0, 1000, nullptr);
            if (mc != CURLM_OK) throw io_error(fmt::format("{}: libcurl: {}", name_, curl().multi_strerror(mc)));
        }
    }

    std::string status_text() const {
        return reason_.empty() ? fmt::format("HTTP {}", status_) : fmt::format("HTTP {} {}", status_, reason_);
    }

    // The transfer ended: accept it, retry it, or turn it into the documented error.
    void complete(CURLcode rc) {
        curl().easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status_);
        if (!length_conflict_.empty()) {
            stop();
            throw io_error(fmt::format("{}: the response has conflicting Content-Length headers ({}); refused", name_,
                                       length_conflict_));
        }
        curl_off_t got = 0, expected = -1;
        curl().easy_getinfo(easy_, CURLINFO_SIZE_DOWNLOAD_T, &got);
        curl().easy_getinfo(easy_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
        std::string detail = errbuf_[0] ? std::string(errbuf_) : std::string(curl().easy_strerror(rc));
        if (rc == CURLE_OK && status_ >= 300 && status_ < 400 && follow_redirect()) return;
        if (rc == CURLE_OK && status_ >= 200 && status_ < 300 && headers_done_) {
            finished_ = true;
            stop();
            return;
        }
        std::string why;
        bool retry = false;
        if (rc == CURLE_OK && status_ >= 200 && status_ < 300) {
            why = "the response was cut inside its headers";  // a status line, then the connection closed
            retry = true;
        } else if (rc == CURLE_HTTP_RETURNED_ERROR || (rc == CURLE_OK && status_ >= 300)) {
            why = status_text();
            retry = retryable_status(status_);
            if (!retry) {
                stop();
                if (status_ == 404 || status_ == 410) throw no_input_error(fmt::format("{}: {}", name_, why));
                throw unavailable_error(fmt::format("{}: {}", name_, why));
            }
        } else if (rc == CURLE_PARTIAL_FILE) {
            why = expected >= 0 ? fmt::format("transfer cut short: {} of {} bytes (Content-Length) arrived", got, expected)
                                : fmt::format("transfer cut short after {} bytes: {}", got, detail);
            retry = true;
        } else {
            why = detail;
            retry = retryable_curl(rc);
        }
        stop();
        if (delivered_) throw io_error(fmt::format("{}: {} (the body was already being read; not retried)", name_, why));
        if (!retry) throw io_error(fmt::format("{}: {}", name_, why));
        if (attempt_ > opt_.retries)
            throw temp_fail_error(fmt::format("{}: {}; gave up after {} attempt{}", name_, why, attempt_,
                                              attempt_ == 1 ? "" : "s"));
        double wait = std::min(max_backoff_s, opt_.backoff_s * std::pow(2.0, attempt_ - 1));
        if (retry_after_s_ >= 0) wait = std::min(max_backoff_s, retry_after_s_);
        note(fmt::format("{}: {}; retrying in {} (attempt {} of {})", name_, why, seconds_text(wait), attempt_ + 1,
                         opt_.retries + 1));
        opt_.sleep(wait);
        start();
    }

    // A 3xx with a Location: the request goes there (at most max_redirects times). The caller's
    // headers go along only while the scheme, host and port stay those of the URL the caller
    // gave; to another origin they are dropped (said once on stderr). False when there is no
    // Location to follow (the 3xx is then an error like any other status).
    bool follow_redirect() {
        char* location = nullptr;
        curl().easy_getinfo(easy_, CURLINFO_REDIRECT_URL, &location);
        if (!location || !*location) return false;
        std::string next = location;
        stop();
        if (++redirects_ > max_redirects)
            throw io_error(fmt::format("{}: more than {} redirects", name_, max_redirects));
        if (!is_http_url(next)) throw io_error(fmt::format("{}: redirected to a URL that is not http(s)", name_));
        bool same_origin = url_origin(next) == origin_;
        if (!same_origin && headers_sent_ && !opt_.headers.empty())
            note(fmt::format("{}: redirected to {}, another server: the --header values are not sent there", name_,
                             redact_url(next)));
        if (!same_origin) headers_sent_ = false;
        set_headers(headers_sent_);
        target_ = std::move(next);
        --attempt_;  // a redirect is not a failed attempt
        start();
        return true;
    }

    std::string url_, name_, origin_, target_;
    unsigned redirects_ = 0;
    bool headers_sent_ = true;  // the caller's headers still go with the request
    long response_status_ = 0;  // the status line of the response now arriving
    bool headers_done_ = false; // its header block has ended
    http_options opt_;
    CURLM* multi_ = nullptr;
    CURL* easy_ = nullptr;
    curl_slist* headers_ = nullptr;
    char errbuf_[CURL_ERROR_SIZE] = {};
    std::string buf_;
    std::size_t pos_ = 0;
    bool paused_ = false, finished_ = false, delivered_ = false;
    unsigned attempt_ = 0;
    long status_ = 0;
    std::string reason_;
    double retry_after_s_ = -1;
    std::string content_encoding_, content_length_, length_conflict_;
};

// An HTTP body decoded by its Content-Encoding: identity passes through, gzip goes through
// prof's decoder, anything else (never asked for) is refused. The encoding is known once the
// first read has returned, so that read is taken here and put back in front of the stream.
class decoded_http_source final : public byte_source {
public:
    explicit decoded_http_source(std::unique_ptr<http_byte_source> raw) : raw_(raw.get()), owned_(std::move(raw)) {}
    std::size_t read(char* out, std::size_t n) override {
        if (!chain_) {
            std::string first(64 * 1024, '\0');
            first.resize(raw_->read(first.data(), first.size()));
            std::string enc = raw_->content_encoding();
            for (char& c : enc) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            auto rest = prefixed_source(std::move(first), std::move(owned_));
            if (enc.empty() || enc == "identity") chain_ = std::move(rest);
            else if (enc == "gzip" || enc == "x-gzip") chain_ = gunzip(std::move(rest));
            else throw io_error(fmt::format("{}: unsupported Content-Encoding '{}' (prof asks for gzip only)", name(), enc));
        }
        return chain_->read(out, n);
    }
    const std::string& name() const override { return raw_->name(); }

private:
    http_byte_source* raw_;
    std::unique_ptr<http_byte_source> owned_;
    std::unique_ptr<byte_source> chain_;
};

}  // namespace

bool is_http_url(std::string_view text) { return iequals_prefix(text, "http://") || iequals_prefix(text, "https://"); }

std::string redact_url(std::string_view url) {
    std::string_view rest = url;
    std::string scheme;
    auto sep = url.find("://");
    if (sep != std::string_view::npos) {
        scheme = std::string(url.substr(0, sep + 3));
        rest = url.substr(sep + 3);
    }
    auto slash = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    auto at = authority.rfind('@');
    if (at != std::string_view::npos) authority = authority.substr(at + 1);
    auto frag = path.find('#');
    if (frag != std::string_view::npos) path = path.substr(0, frag);
    std::string out = scheme + std::string(authority);
    auto q = path.find('?');
    if (q != std::string_view::npos) return out + std::string(path.substr(0, q)) + "?…";
    return out + std::string(path);
}

std::string check_header(std::string_view header, std::string_view flag) {
    auto colon = header.find(':');
    if (colon == std::string_view::npos || colon == 0)
        throw usage_error(fmt::format("{} expects 'Name: value'", flag));
    for (char c : header.substr(0, colon)) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 32 || u == 127) throw usage_error(fmt::format("{}: the header name holds a space or control character", flag));
    }
    for (char c : header.substr(colon + 1)) {
        auto u = static_cast<unsigned char>(c);
        if (u == '\r' || u == '\n' || u == 0) throw usage_error(fmt::format("{}: the header value holds a line break", flag));
    }
    return std::string(header);
}

http_options http_options_from(const cli::http_flags& f) {
    http_options o;
    for (const auto& h : f.headers) o.headers.push_back(check_header(h, "--header"));
    for (const auto& spec : f.headers_from_env) {
        auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            throw usage_error("--header-from-env expects NAME=VARIABLE");
        std::string var = spec.substr(eq + 1);
        const char* val = std::getenv(var.c_str());
        if (!val)
            throw usage_error(fmt::format(
                "--header-from-env: environment variable {} is not set (a shell variable must be exported)", var));
        o.headers.push_back(check_header(spec.substr(0, eq) + ": " + val, "--header-from-env " + spec.substr(0, eq)));
    }
    o.connect_timeout_s = parse_duration(f.connect_timeout, "--connect-timeout");
    o.timeout_s = parse_duration(f.timeout, "--timeout");
    o.stall_timeout_s = parse_duration(f.stall_timeout, "--stall-timeout");
    o.min_speed_bps = parse_size(f.min_speed, "--min-speed");
    if (o.min_speed_bps == 0) throw usage_error("--min-speed must be at least 1 byte per second (--stall-timeout 0 turns the check off)");
    o.backoff_s = parse_duration(f.retry_backoff, "--retry-backoff");
    o.retries = f.retries;
    return o;
}

std::unique_ptr<byte_source> http_source(const std::string& url, const http_options& options) {
    return std::make_unique<decoded_http_source>(std::make_unique<http_byte_source>(url, options));
}

std::string http_get(const std::string& url, const http_options& options, std::size_t max_bytes) {
    decoded_http_source src(std::make_unique<http_byte_source>(url, options));
    std::string out;
    char buf[65536];
    for (;;) {
        std::size_t r = src.read(buf, sizeof buf);
        if (r == 0) break;
        if (out.size() + r > max_bytes)
            throw io_error(fmt::format("{}: body is larger than {} bytes", src.name(), max_bytes));
        out.append(buf, r);
    }
    return out;
}

}  // namespace prof
