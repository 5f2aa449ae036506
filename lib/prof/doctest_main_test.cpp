// The unit-test runner: doctest's own main over every lib/prof/*_test.cpp.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
