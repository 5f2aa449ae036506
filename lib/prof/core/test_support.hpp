// What every area's unit tests may use: a scratch directory removed with everything in it.
// Included by *_test.cpp only: never part of libprof.a.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace prof::test {

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

}  // namespace prof::test
