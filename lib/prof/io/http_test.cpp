// Unit tests of the libcurl byte source against a real HTTP server on 127.0.0.1 (a thread
// with a listening socket that plays scripted raw responses, one per connection).
#include "prof/io/http.hpp"
#include "prof/io/curl_api.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace {

const std::string stall_marker = "\x01STALL";
// A reply ending in this marker is sent one byte every 100 ms (a server that drips).
const std::string drip_marker = "\x01DRIP";

// One scripted response: raw bytes written after the request has been read, then the
// connection is closed (so a body shorter than its Content-Length arrives truncated).
struct scripted_server {
    explicit scripted_server(std::vector<std::string> replies) : replies_(std::move(replies)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(::listen(fd_, 8) == 0);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~scripted_server() {
        stop_ = true;
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    std::string url(const std::string& path = "/rows.jsonl") const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }
    std::vector<std::string> requests() {
        std::lock_guard<std::mutex> g(mu_);
        return requests_;
    }

private:
    void serve() {
        std::size_t n = 0;
        while (!stop_) {
            int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            std::string req;
            char buf[4096];
            while (req.find("\r\n\r\n") == std::string::npos) {
                ssize_t r = ::read(c, buf, sizeof buf);
                if (r <= 0) break;
                req.append(buf, static_cast<std::size_t>(r));
            }
            {
                std::lock_guard<std::mutex> g(mu_);
                requests_.push_back(req);
            }
            std::string reply = replies_[std::min(n, replies_.size() - 1)];
            ++n;
            // A reply ending in the stall marker is sent without it, then the server goes quiet
            // (a hung upstream) until the client gives up or the test ends.
            bool stall = reply.size() >= stall_marker.size() &&
                         reply.compare(reply.size() - stall_marker.size(), stall_marker.size(), stall_marker) == 0;
            if (stall) reply.resize(reply.size() - stall_marker.size());
            bool drip = reply.size() >= drip_marker.size() &&
                        reply.compare(reply.size() - drip_marker.size(), drip_marker.size(), drip_marker) == 0;
            if (drip) reply.resize(reply.size() - drip_marker.size());
            std::size_t off = 0;
            while (off < reply.size()) {
                if (drip) std::this_thread::sleep_for(std::chrono::milliseconds(100));
                ssize_t w = ::send(c, reply.data() + off, drip ? 1 : reply.size() - off, MSG_NOSIGNAL);
                if (w <= 0) break;
                off += static_cast<std::size_t>(w);
            }
            if (stall) {
                // Wait for the client to hang up (read returns 0) or 3 s at most.
                timeval tv{3, 0};
                ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
                while (::read(c, buf, sizeof buf) > 0) {
                }
            }
            ::shutdown(c, SHUT_WR);
            while (::read(c, buf, sizeof buf) > 0) {
            }
            ::close(c);
        }
    }
    std::vector<std::string> replies_;
    int fd_ = -1;
    int port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::vector<std::string> requests_;
};

std::string ok_reply(const std::string& body, const std::string& extra = "") {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n" + extra + "Connection: close\r\n\r\n" + body;
}

std::string status_reply(int code, const std::string& reason, const std::string& extra = "") {
    return "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Length: 5\r\n" + extra +
           "Connection: close\r\n\r\noops\n";
}

std::string chunked(const std::string& body, bool with_end) {
    std::string out;
    for (std::size_t off = 0; off < body.size(); off += 70000) {
        std::string part = body.substr(off, 70000);
        char hex[32];
        std::snprintf(hex, sizeof hex, "%zx\r\n", part.size());
        out += hex + part + "\r\n";
    }
    if (with_end) out += "0\r\n\r\n";
    return out;
}

// gzip of `data`; with `cut`, of its first `cut` bytes ended by a sync flush instead of the
// trailer: every byte before the cut decodes, and nothing but the missing trailer marks the
// stream as unfinished.
std::string gzip(const std::string& data, std::size_t cut = std::string::npos) {
    bool whole = cut == std::string::npos;
    z_stream z{};
    REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, data.size()) + 1024, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(whole ? data.size() : cut);
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&z, whole ? Z_FINISH : Z_SYNC_FLUSH) == (whole ? Z_STREAM_END : Z_OK));
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// Rows of known content and size: line k is {"k":k,...padding}.
std::string rows(std::size_t n) {
    std::string s;
    for (std::size_t k = 0; k < n; ++k) s += "{\"k\":" + std::to_string(k) + ",\"pad\":\"" + std::string(40, 'x') + "\"}\n";
    return s;
}

std::string read_all(prof::byte_source& src, std::size_t chunk = 65536) {
    std::string out;
    std::vector<char> buf(chunk);
    for (;;) {
        std::size_t r = src.read(buf.data(), buf.size());
        if (r == 0) return out;
        out.append(buf.data(), r);
    }
}

prof::http_options fast_options(std::vector<double>* waits = nullptr) {
    prof::http_options o;
    o.retries = 2;
    o.backoff_s = 0.5;
    o.connect_timeout_s = 5;
    o.sleep = [waits](double s) {
        if (waits) waits->push_back(s);
    };
    return o;
}

}  // namespace

TEST_CASE("http_source streams a body larger than its buffer, byte for byte") {
    std::string body = rows(100000);  // ~5.6 MB: libcurl is paused and resumed many times
    scripted_server srv({ok_reply(body)});
    auto src = prof::http_source(srv.url(), fast_options());
    CHECK(src->name() == srv.url());
    CHECK(read_all(*src, 4096) == body);
}

TEST_CASE("http_source decodes a chunked body and Content-Encoding gzip") {
    std::string body = rows(5000);
    SUBCASE("chunked") {
        scripted_server srv({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                             chunked(body, true)});
        auto src = prof::http_source(srv.url(), fast_options());
        CHECK(read_all(*src) == body);
    }
    SUBCASE("gzip") {
        scripted_server srv({ok_reply(gzip(body), "Content-Encoding: gzip\r\n")});
        auto src = prof::http_source(srv.url(), fast_options());
        CHECK(read_all(*src) == body);
        auto req = srv.requests().at(0);
        CHECK(req.find("Accept-Encoding:") != std::string::npos);
    }
}

TEST_CASE("http_source sends the configured headers and keeps their values out of messages") {
    scripted_server srv({status_reply(401, "Unauthorized")});
    auto o = fast_options();
    o.headers = {"Authorization: Bearer s3cr3t-token"};
    std::string msg;
    try {
        auto src = prof::http_source(srv.url(), o);
        read_all(*src);
    } catch (const prof::unavailable_error& e) {
        msg = e.what();
    }
    CHECK(msg == srv.url() + ": HTTP 401 Unauthorized");
    CHECK(msg.find("s3cr3t") == std::string::npos);
    CHECK(srv.requests().at(0).find("Authorization: Bearer s3cr3t-token\r\n") != std::string::npos);
}

TEST_CASE("http_source retries 503 and 429 before the first byte, with backoff and Retry-After") {
    std::string body = rows(10);
    std::vector<double> waits;
    scripted_server srv({status_reply(503, "Service Unavailable"), status_reply(429, "Too Many Requests", "Retry-After: 2\r\n"),
                         ok_reply(body)});
    auto src = prof::http_source(srv.url(), fast_options(&waits));
    CHECK(read_all(*src) == body);  // the body exactly once
    CHECK(srv.requests().size() == 3);
    // backoff 0.5 s for the first retry; the second honours Retry-After: 2
    CHECK(waits == std::vector<double>{0.5, 2.0});
}

TEST_CASE("http_source gives up with exit 75 when 5xx persists past the retries") {
    std::vector<double> waits;
    scripted_server srv({status_reply(502, "Bad Gateway")});
    try {
        auto src = prof::http_source(srv.url(), fast_options(&waits));
        read_all(*src);
        FAIL("no error");
    } catch (const prof::temp_fail_error& e) {
        CHECK(std::string(e.what()) == srv.url() + ": HTTP 502 Bad Gateway; gave up after 3 attempts");
        CHECK(e.code() == prof::exit_code::temp_fail);
    }
    CHECK(waits == std::vector<double>{0.5, 1.0});  // 0.5 s, then doubled
    CHECK(srv.requests().size() == 3);
}

TEST_CASE("http_source maps 404 to a missing input (66) without retrying") {
    scripted_server srv({status_reply(404, "Not Found")});
    CHECK_THROWS_AS(read_all(*prof::http_source(srv.url(), fast_options())), prof::no_input_error);
    CHECK(srv.requests().size() == 1);
}

TEST_CASE("a body cut short after reading began is an I/O error (74), never retried") {
    std::string body = rows(100000);
    std::string reply = ok_reply(body);
    reply.resize(reply.size() - body.size() / 3);  // the connection closes early
    scripted_server srv({reply});
    auto src = prof::http_source(srv.url(), fast_options());
    try {
        read_all(*src, 4096);
        FAIL("no error");
    } catch (const prof::io_error& e) {
        std::string m = e.what();
        CHECK(m.find("transfer cut short") != std::string::npos);
        CHECK(m.find("of " + std::to_string(body.size()) + " bytes (Content-Length)") != std::string::npos);
        CHECK(e.code() == prof::exit_code::io_err);
    }
    CHECK(srv.requests().size() == 1);
}

TEST_CASE("a chunked body without its last chunk is an I/O error") {
    std::string body = rows(100000);
    scripted_server srv({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                         chunked(body, false)});
    auto src = prof::http_source(srv.url(), fast_options());
    CHECK_THROWS_AS(read_all(*src, 4096), prof::io_error);
}

TEST_CASE("a body cut before any byte arrived is retried, then fails with 75") {
    std::string body = rows(3);
    std::string reply = ok_reply(body);
    reply.resize(reply.size() - body.size());  // the headers promise a body that never comes
    scripted_server srv({reply});
    CHECK_THROWS_AS(read_all(*prof::http_source(srv.url(), fast_options())), prof::temp_fail_error);
    CHECK(srv.requests().size() == 3);
}

TEST_CASE("a refused connection is retried, then fails with 75") {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    int port = ntohs(a.sin_port);
    ::close(fd);  // nothing listens there now
    std::vector<double> waits;
    CHECK_THROWS_AS(read_all(*prof::http_source("http://127.0.0.1:" + std::to_string(port) + "/x", fast_options(&waits))),
                    prof::temp_fail_error);
    CHECK(waits.size() == 2);
}

TEST_CASE("http_get fetches a small body whole and refuses one above the limit") {
    scripted_server srv({ok_reply("{\"a\":1}\n")});
    CHECK(prof::http_get(srv.url(), fast_options()) == "{\"a\":1}\n");
    scripted_server big({ok_reply(rows(1000))});
    CHECK_THROWS_AS(prof::http_get(big.url(), fast_options(), 1000), prof::io_error);
}

TEST_CASE("redact_url drops credentials from user info and the query string") {
    CHECK(prof::redact_url("https://user:pw@example.com:8443/a/b.jsonl?token=x#f") == "https://example.com:8443/a/b.jsonl?…");
    CHECK(prof::redact_url("http://127.0.0.1:80/rows") == "http://127.0.0.1:80/rows");
    CHECK(prof::is_http_url("HTTPS://x") );
    CHECK_FALSE(prof::is_http_url("rows.jsonl"));
}

TEST_CASE("check_header accepts 'Name: value' and refuses the rest without echoing the value") {
    CHECK(prof::check_header("Authorization: Bearer abc", "--header") == "Authorization: Bearer abc");
    CHECK_THROWS_WITH_AS(prof::check_header("Bearer abc", "--header"), "--header expects 'Name: value'", prof::usage_error);
    CHECK_THROWS_AS(prof::check_header("Bad Name: v", "--header"), prof::usage_error);
}

TEST_CASE("gunzip_if_gzip decompresses gzip members by their magic and passes other bytes through") {
    std::string body = rows(20000);
    std::string two = gzip(body.substr(0, 1000)) + gzip(body.substr(1000));  // concatenated members
    CHECK(read_all(*prof::gunzip_if_gzip(prof::string_source(two, "x.gz")), 777) == body);
    CHECK(read_all(*prof::gunzip_if_gzip(prof::string_source(body, "x"))) == body);
    CHECK(read_all(*prof::gunzip_if_gzip(prof::string_source("", "x"))) == "");
    std::string cut = gzip(body);
    cut.resize(cut.size() / 2);
    CHECK_THROWS_WITH_AS(read_all(*prof::gunzip_if_gzip(prof::string_source(cut, "x.gz"))), "x.gz: gzip stream cut short",
                         prof::io_error);
}

TEST_CASE("a .gz body served without Content-Encoding is decompressed by its magic") {
    std::string body = rows(3000);
    scripted_server srv({ok_reply(gzip(body))});
    CHECK(read_all(*prof::gunzip_if_gzip(prof::http_source(srv.url("/export.jsonl.gz"), fast_options()))) == body);
}

TEST_CASE("the overall timeout retries a server that never answers, then fails with 75") {
    scripted_server srv({stall_marker});
    auto o = fast_options();
    o.retries = 1;
    o.timeout_s = 0.3;
    try {
        read_all(*prof::http_source(srv.url(), o));
        FAIL("no error");
    } catch (const prof::temp_fail_error& e) {
        CHECK(std::string(e.what()).find("gave up after 2 attempts") != std::string::npos);
    }
    CHECK(srv.requests().size() == 2);
}

TEST_CASE("a server dripping a byte every 100 ms is cut off below the minimum speed") {
    // Before, only a transfer moving no byte at all for the stall time was abandoned: 10 bytes a
    // second held the reader for ever.
    std::string body = rows(1000);
    scripted_server srv({ok_reply(body) + drip_marker});
    auto o = fast_options();
    o.retries = 0;
    o.stall_timeout_s = 1;
    o.min_speed_bps = 100;
    auto t0 = std::chrono::steady_clock::now();
    // Cut while the headers still drip in (75: nothing was read, no retry left); 10 s at the least
    // before, for the headers alone.
    CHECK_THROWS_WITH_AS(read_all(*prof::http_source(srv.url(), o), 4096),
                         doctest::Contains("Operation too slow. Less than 100 bytes/sec"), prof::error);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("a response cut inside its headers is an error, never an empty body") {
    // A status line, then the connection closed: libcurl reports success with no body.
    scripted_server srv({"HTTP/1.1 200 OK\r\n"});
    try {
        read_all(*prof::http_source(srv.url(), fast_options()));
        FAIL("no error");
    } catch (const prof::temp_fail_error& e) {
        CHECK(std::string(e.what()) == srv.url() + ": the response was cut inside its headers; gave up after 3 attempts");
    }
}

TEST_CASE("headers go along a redirect to the same server and never to another one") {
    std::string body = rows(10);
    scripted_server other({ok_reply(body)});
    scripted_server srv({"HTTP/1.1 302 Found\r\nLocation: /moved.jsonl\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmove",
                         "HTTP/1.1 302 Found\r\nLocation: " + other.url() + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"});
    auto o = fast_options();
    o.headers = {"X-Api-Key: s3cr3t-key", "Authorization: Bearer s3cr3t-token"};
    CHECK(read_all(*prof::http_source(srv.url(), o)) == body);  // the redirects' own bodies are not rows
    REQUIRE(srv.requests().size() == 2);
    CHECK(srv.requests()[1].find("GET /moved.jsonl") == 0);
    CHECK(srv.requests()[1].find("X-Api-Key: s3cr3t-key\r\n") != std::string::npos);
    REQUIRE(other.requests().size() == 1);
    CHECK(other.requests()[0].find("s3cr3t") == std::string::npos);
}

TEST_CASE("a body that stalls after reading began times out as an I/O error (74)") {
    std::string body = rows(100000);
    std::string reply = ok_reply(body);
    reply.resize(reply.size() - body.size() / 2);
    scripted_server srv({reply + stall_marker});
    auto o = fast_options();
    o.stall_timeout_s = 1;  // no byte for 1 s
    CHECK_THROWS_AS(read_all(*prof::http_source(srv.url(), o), 4096), prof::io_error);
    CHECK(srv.requests().size() == 1);
}

TEST_CASE("a gzip body cut at a flush point is an I/O error (74), with or without Content-Length") {
    std::string body = rows(20000);
    std::string cut = gzip(body, body.size() / 2);
    SUBCASE("Content-Length matching the cut body") {
        scripted_server srv({ok_reply(cut, "Content-Encoding: gzip\r\n")});
        auto src = prof::http_source(srv.url(), fast_options());
        CHECK_THROWS_WITH_AS(read_all(*src), (srv.url() + ": gzip stream cut short").c_str(), prof::io_error);
    }
    SUBCASE("a complete chunked body") {
        scripted_server srv({"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nConnection: "
                             "close\r\n\r\n" + chunked(cut, true)});
        auto src = prof::http_source(srv.url(), fast_options());
        CHECK_THROWS_WITH_AS(read_all(*src), (srv.url() + ": gzip stream cut short").c_str(), prof::io_error);
    }
    SUBCASE("http_get too") {
        scripted_server srv({ok_reply(cut, "Content-Encoding: gzip\r\n")});
        CHECK_THROWS_AS(prof::http_get(srv.url(), fast_options()), prof::io_error);
    }
}

TEST_CASE("disagreeing Content-Length headers are refused before any byte is read") {
    std::string body = rows(100);
    scripted_server srv({"HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                         "\r\nContent-Length: 10\r\nConnection: close\r\n\r\n" + body});
    auto src = prof::http_source(srv.url(), fast_options());
    CHECK_THROWS_WITH_AS(read_all(*src),
                         (srv.url() + ": the response has conflicting Content-Length headers (" +
                          std::to_string(body.size()) + " and 10); refused")
                             .c_str(),
                         prof::io_error);
    // The same value twice, or as a list, frames the message the same way: accepted.
    std::string n = std::to_string(body.size());
    scripted_server same({"HTTP/1.1 200 OK\r\nContent-Length: " + n + "\r\nContent-Length: " + n + ", " + n +
                          "\r\nConnection: close\r\n\r\n" + body});
    CHECK(read_all(*prof::http_source(same.url(), fast_options())) == body);
}

TEST_CASE("a Content-Encoding other than gzip is refused, never passed on as rows") {
    scripted_server srv({ok_reply("xxxx", "Content-Encoding: br\r\n")});
    auto src = prof::http_source(srv.url(), fast_options());
    CHECK_THROWS_WITH_AS(read_all(*src), (srv.url() + ": unsupported Content-Encoding 'br' (prof asks for gzip only)").c_str(),
                         prof::io_error);
}

TEST_CASE("a libcurl that cannot be loaded is exit 69 with how to install it, never a crash") {
    try {
        prof::load_curl_api("libprof-test-no-such-curl.so.4");
        FAIL("loaded a library that does not exist");
    } catch (const prof::unavailable_error& e) {
        CHECK(e.code() == prof::exit_code::unavailable);
        CHECK(std::string(e.what()).rfind("URLs need libcurl (Debian: apt-get install libcurl4), which cannot be loaded: "
                                          "libprof-test-no-such-curl.so.4: cannot open shared object file", 0) == 0);
    }
}

TEST_CASE("the libcurl table resolves every function prof uses from libcurl.so.4") {
    prof::curl_api a = prof::load_curl_api("libcurl.so.4");
    for (const void* f : {(const void*)a.global_init, (const void*)a.easy_init, (const void*)a.easy_setopt,
                          (const void*)a.easy_getinfo, (const void*)a.easy_pause, (const void*)a.easy_cleanup,
                          (const void*)a.easy_strerror, (const void*)a.multi_init, (const void*)a.multi_add_handle,
                          (const void*)a.multi_remove_handle, (const void*)a.multi_perform, (const void*)a.multi_poll,
                          (const void*)a.multi_info_read, (const void*)a.multi_strerror, (const void*)a.multi_cleanup,
                          (const void*)a.slist_append, (const void*)a.slist_free_all})
        CHECK(f != nullptr);
}
