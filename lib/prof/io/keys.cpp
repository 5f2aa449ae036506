// Keys in file names (see keys.hpp).
#include "prof/io/keys.hpp"

#include "prof/core/errors.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <cstdint>

namespace prof {

namespace {
bool plain(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}
int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}
}  // namespace

std::string percent_encode(std::string_view component) {
    std::string out;
    out.reserve(component.size());
    for (unsigned char c : component) {
        if (plain(c)) out.push_back(static_cast<char>(c));
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::string percent_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out.push_back(s[i]);
            continue;
        }
        int hi = i + 1 < s.size() ? hexval(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? hexval(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) throw field_error(fmt::format("malformed percent escape in '{}'", s));
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

// FIPS 180-4 SHA-256, here rather than through libcrypto: prof-measure forks every fit from a
// launcher whose footprint is the program's own at start, and a linked libcrypto is loaded and
// relocated by every binary at start (and so shows in every fit's reading).
std::string sha256_hex(std::string_view text) {
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string msg(text);
    std::uint64_t bits = static_cast<std::uint64_t>(text.size()) * 8;
    msg.push_back(static_cast<char>(0x80));
    while (msg.size() % 64 != 56) msg.push_back('\0');
    for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bits >> (i * 8)) & 0xff));
    auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    for (std::size_t off = 0; off < msg.size(); off += 64) {
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i) {
            const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * i);
            w[i] = (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
        }
        for (int i = 16; i < 64; ++i) {
            std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
    }
    std::string out;
    for (std::uint32_t v : h) out += fmt::format("{:08x}", v);
    return out;
}

std::string key_file_name(const std::vector<std::string>& components) {
    std::string name;
    for (std::size_t i = 0; i < components.size(); ++i) {
        if (i) name.push_back('@');
        name += percent_encode(components[i]);
    }
    if (name.size() > 200) name = name.substr(0, 150) + "~" + sha256_hex(name);
    return name;
}

std::string path_under(const std::string& root, const std::string& name) {
    namespace fs = std::filesystem;
    fs::path r = fs::path(root).lexically_normal();
    fs::path p = (r / name).lexically_normal();
    auto rel = p.lexically_relative(r);
    if (name.empty() || rel.empty() || *rel.begin() == ".." || rel == ".")
        throw cant_create_error(fmt::format("refusing path '{}': it resolves outside '{}'", p.string(), root));
    return p.string();
}

std::string url_escape_name(std::string_view name) {
    std::string out;
    for (char c : name) {
        if (c == '%') out += "%25";
        else out.push_back(c);
    }
    return out;
}

}  // namespace prof
