// libcurl, loaded when the first URL is read: no prof binary links it, so none pays for
// loading and relocating it and its TLS stack at start, and every binary runs where it is
// absent until a URL is asked for.
#pragma once

#ifndef CURL_DISABLE_TYPECHECK
#define CURL_DISABLE_TYPECHECK  // plain declarations: only their types are used, never linked
#endif
#include <curl/curl.h>

namespace prof {

// The libcurl functions prof uses (http.cpp), resolved with dlsym.
struct curl_api {
    decltype(&::curl_global_init) global_init = nullptr;
    decltype(&::curl_easy_init) easy_init = nullptr;
    decltype(&::curl_easy_setopt) easy_setopt = nullptr;
    decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
    decltype(&::curl_easy_pause) easy_pause = nullptr;
    decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
    decltype(&::curl_easy_strerror) easy_strerror = nullptr;
    decltype(&::curl_multi_init) multi_init = nullptr;
    decltype(&::curl_multi_add_handle) multi_add_handle = nullptr;
    decltype(&::curl_multi_remove_handle) multi_remove_handle = nullptr;
    decltype(&::curl_multi_perform) multi_perform = nullptr;
    decltype(&::curl_multi_poll) multi_poll = nullptr;
    decltype(&::curl_multi_info_read) multi_info_read = nullptr;
    decltype(&::curl_multi_strerror) multi_strerror = nullptr;
    decltype(&::curl_multi_cleanup) multi_cleanup = nullptr;
    decltype(&::curl_slist_append) slist_append = nullptr;
    decltype(&::curl_slist_free_all) slist_free_all = nullptr;
};

// The table from libcurl.so.4, loaded and curl_global_init'ed once, at the first call (thread
// safe). Throws unavailable_error (exit 69) saying how to install libcurl when it cannot be
// loaded or lacks a function (a libcurl older than 7.66, which added curl_multi_poll); a later
// call tries again.
const curl_api& curl();

// A table loaded from SONAME with dlopen (no global init): what curl() does, for tests.
curl_api load_curl_api(const char* soname);

}  // namespace prof
