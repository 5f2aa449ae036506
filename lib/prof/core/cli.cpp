// Shared command-line behaviour (see cli.hpp).
#include "prof/core/cli.hpp"

#include "prof/core/limits.hpp"

#include <malloc.h>

#include "prof/core/diag.hpp"
#include "prof/core/errors.hpp"
#include "prof/core/units.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <new>
#include <unistd.h>

#ifndef PROF_VERSION
#define PROF_VERSION "0.0.0"
#endif

namespace prof::cli {

namespace {
// A size limit every tool takes (--max-line, --max-document): at least 1 byte, set as parsed.
void add_size_limit(CLI::App& app, const std::string& name, void (*set)(std::size_t), const std::string& default_text,
                    const std::string& help) {
    app.add_option_function<std::string>(
           name, [name, set](const std::string& text) {
               std::uint64_t n = parse_size(text, name);
               if (n == 0) throw usage_error(name + " must be at least 1 byte");
               set(static_cast<std::size_t>(n));
           },
           help)
        ->type_name("SIZE")
        ->default_str(default_text);
}
}  // namespace

void configure(CLI::App& app, const std::string& example, const std::string& records) {
    add_size_limit(app, "--max-line", set_max_line_bytes, "256MiB",
                   "Refuse an input line longer than SIZE bytes (exit 65), before holding it whole");
    add_size_limit(app, "--max-document", set_max_document_bytes, "4GiB",
                   "Refuse a document read whole (a trace, a profile, a run file) larger than SIZE bytes (exit 65)");
    app.set_version_flag("--version", fmt::format("{} (prof) {}", app.get_name(), PROF_VERSION),
                         "Print the version and exit");
    std::string footer = "Example:\n  " + example + "\n\nRecords: " + records +
                         "\nExit status: 0 ok, 64 usage, 65 bad input, 66 missing input, 74 I/O error; this "
                         "program's others are under EXIT STATUS in its manual.\nManual: man " +
                         app.get_name() + " (installed), man -l man/" + app.get_name() + ".1 (in a checkout)\n";
    app.footer(footer);
}

void parse(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(app.help().c_str(), stdout);
        throw exit_request{0};
    } catch (const CLI::CallForAllHelp&) {
        std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
        throw exit_request{0};
    } catch (const CLI::CallForVersion&) {
        std::fputs((app.version() + "\n").c_str(), stdout);
        throw exit_request{0};
    } catch (const CLI::ParseError& e) {
        std::string what = e.what();
        if (!what.empty() && (what[0] >= 'A' && what[0] <= 'Z') && what.size() > 1 && !(what[1] >= 'A' && what[1] <= 'Z'))
            what[0] = static_cast<char>(what[0] - 'A' + 'a');
        throw usage_error(what);
    }
}

namespace {
int close_stdout() {
    // A write error can surface only at the final flush (samtools' checked fclose(stdout)).
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        if (errno == EPIPE) return 0;
        note(fmt::format("write error: {}", std::strerror(errno)));
        return static_cast<int>(exit_code::io_err);
    }
    if (std::fclose(stdout) != 0) {
        if (errno == EPIPE) return 0;
        note(fmt::format("write error: {}", std::strerror(errno)));
        return static_cast<int>(exit_code::io_err);
    }
    return 0;
}
}  // namespace

namespace {
int run_body(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body) {
    int rc = 0;
    try {
        rc = body(argc, argv);
    } catch (const exit_request& e) {
        rc = e.code;
    } catch (const broken_pipe&) {
        return 0;
    } catch (const usage_error& e) {
        note(e.what());
        write_stderr(fmt::format("Try '{} --help' for more information.\n", name));
        return static_cast<int>(exit_code::usage);
    } catch (const error& e) {
        note(e.what());
        return static_cast<int>(e.code());
    } catch (const std::bad_alloc&) {
        note("out of memory");
        return static_cast<int>(exit_code::software);
    } catch (const std::exception& e) {
        note(fmt::format("internal error: {}", e.what()));
        return static_cast<int>(exit_code::software);
    }
    int crc = close_stdout();
    return crc != 0 && rc == 0 ? crc : rc;
}
}  // namespace

int run_tool(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body) {
    set_program_name(name);
    // A closed standard descriptor would be handed to the next pipe or file we open, and records
    // would flow into it. Hold each closed one with /dev/null opened the wrong way round, so a
    // read of a closed stdin and a write to a closed stdout fail (EBADF) as they should.
    for (int fd = 0; fd <= 2; ++fd)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) open("/dev/null", fd == 1 ? O_RDONLY : O_WRONLY);
    // The diagnostics never throw; building a message can (out of memory while formatting it),
    // and that must not end in std::terminate: the program then exits 70.
    try {
        return run_body(name, argc, argv, body);
    } catch (...) {
        return static_cast<int>(exit_code::software);
    }
}

void emit_line(const std::string& line) {
    errno = 0;
    bool ok = std::fwrite(line.data(), 1, line.size(), stdout) == line.size() && std::fputc('\n', stdout) != EOF &&
              std::fflush(stdout) == 0;
    if (!ok) {
        if (errno == EPIPE) throw broken_pipe{};
        throw io_error(fmt::format("write error on standard output: {}", std::strerror(errno ? errno : EIO)));
    }
}

namespace {
std::uint64_t parse_count(const std::string& name, const std::string& text) {
    std::uint64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || r.ec != std::errc() ||
        r.ptr != text.data() + text.size())
        throw CLI::ValidationError(name, "expected a non-negative integer up to 18446744073709551615, got '" + text + "'");
    return v;
}
}  // namespace

CLI::Option* add_count_option(CLI::App& app, const std::string& name, std::uint64_t& var, const std::string& desc) {
    return app
        .add_option_function<std::string>(
            name, [&var, name](const std::string& text) { var = parse_count(name, text); }, desc)
        ->type_name("UINT")
        ->default_str(std::to_string(var));
}

CLI::Option* add_count_option(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& var,
                              const std::string& desc) {
    return app
        .add_option_function<std::string>(
            name, [&var, name](const std::string& text) { var = parse_count(name, text); }, desc)
        ->type_name("UINT");
}

CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& var, const std::string& desc,
                               const std::vector<std::string>& choices) {
    return app.add_option(name, var, desc)->capture_default_str()->check(CLI::IsMember(choices));
}

CLI::Option* add_host_option(CLI::App& app, std::optional<std::string>& host) {
    return app.add_option("--host", host, "Host identity for the records (default: $PROF_HOST, else the hostname)");
}

CLI::Option* add_quiet_flag(CLI::App& app, bool& quiet) {
    return app.add_flag("--quiet,-q", quiet, "No progress display and no summary line on stderr");
}

CLI::Option* add_max_bad_lines_option(CLI::App& app, std::uint64_t& n, const std::string& lines) {
    return add_count_option(app, "--max-bad-lines", n, "Skip up to N malformed " + lines + " (counted on stderr)");
}


void add_http_options(CLI::App& app, http_flags& f) {
    // allow_extra_args(false): each --header takes one value, so a URL after it stays an input.
    app.add_option("--header", f.headers, "HTTP request header 'Name: value' (repeatable)")->allow_extra_args(false);
    app.add_option("--header-from-env", f.headers_from_env,
                   "NAME=VAR: HTTP header NAME with the value of environment variable VAR (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--connect-timeout", f.connect_timeout, "HTTP connect timeout per attempt")->capture_default_str();
    app.add_option("--timeout", f.timeout, "HTTP whole-transfer timeout per attempt (0 = none)")->capture_default_str();
    app.add_option("--stall-timeout", f.stall_timeout, "Abandon an HTTP transfer slower than --min-speed this long (0 = never)")
        ->capture_default_str();
    app.add_option("--min-speed", f.min_speed, "Bytes per second below which a transfer counts as stalled")
        ->capture_default_str();
    app.add_option("--retries", f.retries, "HTTP retries before the first body byte (429, 5xx, resets)")
        ->capture_default_str()
        ->check(CLI::Range(0u, 100u));
    app.add_option("--retry-backoff", f.retry_backoff, "First retry delay; doubled each retry, at most 30 s")
        ->capture_default_str();
}

bool show_progress(bool quiet) { return !quiet && ::isatty(2); }

progress_meter::~progress_meter() {
    if (shown_) fmt::print(stderr, "\r\033[K");
}

std::function<void(std::uint64_t, std::uint64_t)> progress_meter::callback() {
    if (!show_) return nullptr;
    return [this](std::uint64_t lines, std::uint64_t bytes) { update(lines, bytes); };
}

void progress_meter::update(std::uint64_t lines, std::uint64_t bytes) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    double s = std::chrono::duration<double>(now - t0_).count();
    fmt::print(stderr, "\r{}: {} lines, {} ({}/s)   ", program_name(), lines, human_bytes(double(bytes)),
               human_bytes(bytes / std::max(s, 1e-9)));
    shown_ = true;
}

std::vector<std::string> inputs_or_stdin(const std::vector<std::string>& files) {
    if (files.empty()) return {"-"};
    std::vector<named_input> named;
    for (std::size_t k = 0; k < files.size(); ++k) named.push_back({fmt::format("input {}", k + 1), files[k]});
    check_one_stdin(named);
    return files;
}

void check_one_stdin(const std::vector<named_input>& inputs) {
    const named_input* first = nullptr;
    for (const auto& in : inputs) {
        if (in.spec != "-") continue;
        if (first)
            throw usage_error(fmt::format("{} and {} both read stdin ('-'): name a file for one of them", first->what,
                                          in.what));
        first = &in;
    }
}

void prefer_heap_reuse() {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace prof::cli
