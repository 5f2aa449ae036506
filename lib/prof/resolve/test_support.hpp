// The registry fixtures of unit tests: the loaders of a registry directory.
// Included by *_test.cpp only: never part of libprof.a.
#pragma once

#include "prof/core/test_support.hpp"
#include "prof/profile/test_support.hpp"
#include "prof/resolve/resolve.hpp"
#include <string>

namespace prof::test {

// The loaders prof-resolve uses for the registry directory `dir` (named by its path).
inline evidence_loaders directory_registry(const std::string& dir) {
    return registry_loaders(directory_fetch(dir), dir);
}

}  // namespace prof::test
