// Shared command-line behaviour (see cli.hpp).
#include "prof/cli.hpp"

#include "prof/diag.hpp"
#include "prof/errors.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <new>

#ifndef PROF_VERSION
#define PROF_VERSION "0.0.0"
#endif

namespace prof::cli {

void configure(CLI::App& app, const std::string& example, const std::string& records) {
    app.set_version_flag("--version", fmt::format("{} (prof) {}", app.get_name(), PROF_VERSION),
                         "Print the version and exit");
    std::string footer = "Example:\n  " + example + "\n\nRecords: " + records +
                         "\nExit status: 0 ok, 64 usage, 65 bad input, 66 missing input, 74 I/O error "
                         "(see prof(7)).\nManual: man " +
                         app.get_name() + "\n";
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
        fmt::print(stderr, "{}: write error: {}\n", program_name(), std::strerror(errno));
        return static_cast<int>(exit_code::io_err);
    }
    if (std::fclose(stdout) != 0) {
        if (errno == EPIPE) return 0;
        fmt::print(stderr, "{}: write error: {}\n", program_name(), std::strerror(errno));
        return static_cast<int>(exit_code::io_err);
    }
    return 0;
}
}  // namespace

int run_tool(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body) {
    set_program_name(name);
    int rc = 0;
    try {
        rc = body(argc, argv);
    } catch (const exit_request& e) {
        rc = e.code;
    } catch (const broken_pipe&) {
        return 0;
    } catch (const usage_error& e) {
        std::fflush(stdout);
        fmt::print(stderr, "{}: {}\nTry '{} --help' for more information.\n", name, e.what(), name);
        return static_cast<int>(exit_code::usage);
    } catch (const error& e) {
        std::fflush(stdout);
        fmt::print(stderr, "{}: {}\n", name, e.what());
        return static_cast<int>(e.code());
    } catch (const std::bad_alloc&) {
        std::fflush(stdout);
        fmt::print(stderr, "{}: out of memory\n", name);
        return static_cast<int>(exit_code::software);
    } catch (const std::exception& e) {
        std::fflush(stdout);
        fmt::print(stderr, "{}: internal error: {}\n", name, e.what());
        return static_cast<int>(exit_code::software);
    }
    int crc = close_stdout();
    return crc != 0 && rc == 0 ? crc : rc;
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

std::vector<std::string> inputs_or_stdin(const std::vector<std::string>& files) {
    if (files.empty()) return {"-"};
    return files;
}

}  // namespace prof::cli
