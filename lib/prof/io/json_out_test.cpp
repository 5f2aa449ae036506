// The JSON writer: what it writes for the values records hold.
#include "prof/io/json_out.hpp"

#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("strings written to records are valid UTF-8: invalid bytes become U+FFFD") {
    json_writer w;
    w.value(std::string_view("bad \xff x \xc3\xa9 \xed\xa0\x80"));
    CHECK(w.str() == "\"bad \xEF\xBF\xBD x \xC3\xA9 \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}
