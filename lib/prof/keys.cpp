// Keys in file names (see keys.hpp).
#include "prof/keys.hpp"

#include "prof/errors.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <openssl/evp.h>

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

std::string sha256_hex(std::string_view data) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
        throw error(exit_code::software, "SHA-256 failed");
    std::string out;
    for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
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
