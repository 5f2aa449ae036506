// What every area's unit tests may use: a scratch directory removed with everything in it, and
// a race that swaps two directories while writes run.
// Included by *_test.cpp only: never part of libprof.a.
#pragma once

#include "prof/core/errors.hpp"

#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

namespace prof::test {

// Whether AddressSanitizer is compiled in: its shadow memory and its quarantine of freed
// blocks count in a process's resident set, so bounds on memory that a plain build keeps are
// looser or skipped there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized_build = true;
#else
constexpr bool sanitized_build = false;
#endif

// A fresh directory /tmp/prof-WHAT.XXXXXX, removed with everything in it when the object goes
// out of scope, also when a REQUIRE ends the test early.
class temp_dir {
public:
    explicit temp_dir(const std::string& what = "test") : path("/tmp/prof-" + what + ".XXXXXX") {
        if (!::mkdtemp(path.data())) throw std::runtime_error("mkdtemp " + path + ": " + std::strerror(errno));
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    std::string path;
};

// How a run of writes under swap_while ended: each either wrote or was refused (73).
struct swap_tally {
    int written = 0;
    int refused = 0;
};

// Runs write(i) for i in [0, tries) while another thread exchanges the directories a and b
// atomically (renameat2 RENAME_EXCHANGE) every 100 µs, so that a writer which checks a path and
// opens it again meets the other directory between the two. Counts the writes that returned and
// those refused with cant_create_error; any other error ends the race and propagates.
template <class Write>
swap_tally swap_while(const std::string& a, const std::string& b, int tries, Write write) {
    std::atomic<bool> stop{false};
    std::thread swapper([&] {
        while (!stop) {
            ::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), 2 /* RENAME_EXCHANGE */);
            std::this_thread::sleep_for(std::chrono::microseconds(100));  // both states last
        }
    });
    swap_tally t;
    try {
        for (int i = 0; i < tries; ++i) {
            try {
                write(i);
                ++t.written;
            } catch (const cant_create_error&) {
                ++t.refused;
            }
        }
    } catch (...) {
        stop = true;
        swapper.join();
        throw;
    }
    stop = true;
    swapper.join();
    return t;
}

}  // namespace prof::test
