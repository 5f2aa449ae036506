// libcurl loaded at the first URL (see curl_api.hpp).
#include "prof/io/curl_api.hpp"

#include "prof/core/errors.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

namespace prof {

namespace {

constexpr const char* install_hint = "URLs need libcurl (Debian: apt-get install libcurl4)";

template <class F>
void resolve(void* lib, const char* soname, const char* symbol, F& out) {
    out = reinterpret_cast<F>(::dlsym(lib, symbol));
    if (!out) throw unavailable_error(fmt::format("{}: {} has no {} (libcurl 7.66 or newer is needed)", install_hint, soname, symbol));
}

}  // namespace

curl_api load_curl_api(const char* soname) {
    void* lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = ::dlerror();
        throw unavailable_error(fmt::format("{}, which cannot be loaded: {}", install_hint, why ? why : soname));
    }
    curl_api a;
    resolve(lib, soname, "curl_global_init", a.global_init);
    resolve(lib, soname, "curl_easy_init", a.easy_init);
    resolve(lib, soname, "curl_easy_setopt", a.easy_setopt);
    resolve(lib, soname, "curl_easy_getinfo", a.easy_getinfo);
    resolve(lib, soname, "curl_easy_pause", a.easy_pause);
    resolve(lib, soname, "curl_easy_cleanup", a.easy_cleanup);
    resolve(lib, soname, "curl_easy_strerror", a.easy_strerror);
    resolve(lib, soname, "curl_multi_init", a.multi_init);
    resolve(lib, soname, "curl_multi_add_handle", a.multi_add_handle);
    resolve(lib, soname, "curl_multi_remove_handle", a.multi_remove_handle);
    resolve(lib, soname, "curl_multi_perform", a.multi_perform);
    resolve(lib, soname, "curl_multi_poll", a.multi_poll);
    resolve(lib, soname, "curl_multi_info_read", a.multi_info_read);
    resolve(lib, soname, "curl_multi_strerror", a.multi_strerror);
    resolve(lib, soname, "curl_multi_cleanup", a.multi_cleanup);
    resolve(lib, soname, "curl_slist_append", a.slist_append);
    resolve(lib, soname, "curl_slist_free_all", a.slist_free_all);
    return a;  // the library stays loaded for the rest of the process
}

const curl_api& curl() {
    // A throwing initialiser leaves the static uninitialised: the next call tries again.
    static const curl_api api = [] {
        curl_api a = load_curl_api("libcurl.so.4");
        a.global_init(CURL_GLOBAL_DEFAULT);
        return a;
    }();
    return api;
}

}  // namespace prof
