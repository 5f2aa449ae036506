// SHA-256 against FIPS 180-2's known answers; key components and file names.
#include "prof/io/keys.hpp"

#include "prof/core/errors.hpp"

#include <string>
#include <doctest/doctest.h>

using namespace prof;

TEST_CASE("sha256_hex gives FIPS 180-2's known answers, over block and padding boundaries") {
    // FIPS 180-2, appendix B: one block, two blocks, one million 'a'.
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex(std::string(1000000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // The empty message, and lengths around the padding's edges (55 bytes fit one block with
    // the length; 56 need a second; 64 is one whole block), each from coreutils' sha256sum.
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    CHECK(sha256_hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    CHECK(sha256_hex(std::string(63, 'a')) == "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
    CHECK(sha256_hex(std::string(64, 'a')) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
    CHECK(sha256_hex(std::string(65, 'a')) == "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0");
}

TEST_CASE("key components are percent-encoded so no key names a path, and keys never collide") {
    CHECK(percent_encode("..") == "%2E%2E");
    CHECK(percent_encode("a/b c") == "a%2Fb%20c");
    CHECK(percent_encode("é") == "%C3%A9");
    CHECK(key_file_name({"a@b", "c"}) == "a%40b@c");
    CHECK(key_file_name({"a", "b@c"}) != key_file_name({"a@b", "c"}));
    CHECK(percent_decode(percent_encode("x/../y z")) == "x/../y z");
    std::string long_name = key_file_name({std::string(300, 'k')});
    CHECK(long_name.size() == 150 + 1 + 64);
    CHECK(long_name != key_file_name({std::string(301, 'k')}));
    CHECK_THROWS_AS(path_under("/tmp/root", "../etc"), error);
    CHECK(path_under("/tmp/root", "x%2F..") == "/tmp/root/x%2F..");
}
