// Shared by the fuzz targets: what an input may legitimately do (throw one of prof's typed
// errors, which a program turns into its documented exit code) and what is a finding (any other
// exception, which a program would report as an internal error, or a disagreement between two
// readers of the same text): a finding aborts, so libFuzzer and the replay driver both see it.
#pragma once

#include "prof/core/errors.hpp"

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace prof::fuzz {

[[noreturn]] inline void finding(std::string_view what) {
    std::fprintf(stderr, "FUZZ FINDING: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
}

// Runs fn; a prof::error (and, where the reader documents it, a field_error) is an accepted
// outcome, reported as its message. Returns "" when fn completed.
template <class F>
std::string outcome(F&& fn, bool field_errors_ok = false) {
    try {
        fn();
        return {};
    } catch (const prof::error& e) {
        return std::string("error ") + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
    } catch (const prof::field_error& e) {
        if (!field_errors_ok) finding(std::string("field_error escaped: ") + e.what());
        return std::string("field_error: ") + e.what();
    } catch (const simdjson::simdjson_error& e) {
        finding(std::string("simdjson_error escaped: ") + e.what());
    } catch (const std::exception& e) {
        finding(std::string("exception escaped: ") + e.what());
    }
}

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The input copied with simdjson's padding after it (the in-place readers need it).
inline std::string padded_copy(std::string_view text) {
    std::string s(text);
    s.append(simdjson::SIMDJSON_PADDING, '\0');
    return s;
}

}  // namespace prof::fuzz
