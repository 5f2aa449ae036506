// CUDA runtime through dlopen (see cuda.hpp). The runtime's C API is stable across versions for
// the calls used here: handles are opaque pointers, errors are ints (cudaSuccess = 0), enums are
// ints whose values CUDA has never renumbered (cudaMemcpyHostToDevice = 1, DeviceToHost = 2).
#include "prof/device/cuda.hpp"

#include "prof/core/errors.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <glob.h>

namespace prof {

namespace {
using cuda_error = int;
using cuda_event = void*;
using cuda_stream = void*;
constexpr cuda_error cuda_success = 0;
constexpr int memcpy_host_to_device = 1;
constexpr int memcpy_device_to_host = 2;

void* open_first(const std::vector<std::string>& names, std::string& which, std::string& why) {
    for (const auto& n : names) {
        if (void* h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            which = n;
            return h;
        }
        const char* e = ::dlerror();
        if (why.empty() && e) why = e;
    }
    return nullptr;
}
}  // namespace

struct cuda_runtime::api {
    void* lib = nullptr;
    void* driver = nullptr;
    cuda_error (*get_device_count)(int*) = nullptr;
    cuda_error (*set_device)(int) = nullptr;
    const char* (*error_string)(cuda_error) = nullptr;
    cuda_error (*driver_get_version)(int*) = nullptr;
    cuda_error (*runtime_get_version)(int*) = nullptr;
    cuda_error (*get_pci_bus_id)(char*, int, int) = nullptr;
    cuda_error (*malloc_)(void**, std::size_t) = nullptr;
    cuda_error (*free_)(void*) = nullptr;
    cuda_error (*malloc_host)(void**, std::size_t) = nullptr;
    cuda_error (*free_host)(void*) = nullptr;
    cuda_error (*memcpy_async)(void*, const void*, std::size_t, int, cuda_stream) = nullptr;
    cuda_error (*event_create)(cuda_event*) = nullptr;
    cuda_error (*event_destroy)(cuda_event) = nullptr;
    cuda_error (*event_record)(cuda_event, cuda_stream) = nullptr;
    cuda_error (*event_synchronize)(cuda_event) = nullptr;
    cuda_error (*event_elapsed)(float*, cuda_event, cuda_event) = nullptr;
    cuda_error (*device_synchronize)() = nullptr;
    // Driver API (libcuda.so.1) for name and UUID; CUdevice is an int, CUuuid 16 bytes.
    int (*cu_init)(unsigned) = nullptr;
    int (*cu_device_get)(int*, int) = nullptr;
    int (*cu_device_get_name)(char*, int, int) = nullptr;
    int (*cu_device_get_uuid)(unsigned char*, int) = nullptr;

    void check(cuda_error e, const char* call) const {
        if (e == cuda_success) return;
        const char* s = error_string ? error_string(e) : nullptr;
        throw unavailable_error(fmt::format("{}: {} (CUDA error {}); without a usable GPU, --device host measures "
                                            "host memory instead", call, s ? s : "unknown error", e));
    }
};

std::vector<std::string> cudart_candidates() {
    if (const char* forced = std::getenv("PROF_CUDART"); forced && *forced) return {forced};
    std::vector<std::string> out{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};
    for (const char* pattern : {"/usr/local/cuda/lib64/libcudart.so*", "/usr/local/cuda-*/lib64/libcudart.so*"}) {
        glob_t g{};
        if (::glob(pattern, 0, nullptr, &g) == 0) {
            std::vector<std::string> found(g.gl_pathv, g.gl_pathv + g.gl_pathc);
            std::sort(found.rbegin(), found.rend());  // newest version first
            out.insert(out.end(), found.begin(), found.end());
        }
        ::globfree(&g);
    }
    return out;
}

std::string format_gpu_uuid(const unsigned char b[16]) {
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

std::string format_cuda_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

bool device_matches(const std::string& spec, const cuda_device_info& d) {
    if (!spec.empty() && std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); }))
        return std::to_string(d.ordinal) == spec;
    auto lower = [](std::string s) {
        for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (s.rfind("gpu-", 0) == 0) s.erase(0, 4);
        return s;
    };
    return !d.uuid.empty() && lower(spec) == lower(d.uuid);
}

std::unique_ptr<cuda_runtime> cuda_runtime::load() {
    auto cands = cudart_candidates();
    std::string which, why;
    void* lib = open_first(cands, which, why);
    if (!lib) {
        std::string tried;
        for (const auto& c : cands) tried += (tried.empty() ? "" : ", ") + c;
        throw unavailable_error(fmt::format("cannot load the CUDA runtime (tried {}): {}", tried, why));
    }
    std::unique_ptr<cuda_runtime> rt(new cuda_runtime());
    rt->library_ = which;
    rt->api_ = std::make_unique<api>();
    api& a = *rt->api_;
    a.lib = lib;
    auto sym = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
        if (!fn) throw unavailable_error(fmt::format("{} has no {}: not a usable CUDA runtime", which, name));
    };
    sym(a.get_device_count, "cudaGetDeviceCount");
    sym(a.set_device, "cudaSetDevice");
    sym(a.error_string, "cudaGetErrorString");
    sym(a.driver_get_version, "cudaDriverGetVersion");
    sym(a.runtime_get_version, "cudaRuntimeGetVersion");
    sym(a.get_pci_bus_id, "cudaDeviceGetPCIBusId");
    sym(a.malloc_, "cudaMalloc");
    sym(a.free_, "cudaFree");
    sym(a.malloc_host, "cudaMallocHost");
    sym(a.free_host, "cudaFreeHost");
    sym(a.memcpy_async, "cudaMemcpyAsync");
    sym(a.event_create, "cudaEventCreate");
    sym(a.event_destroy, "cudaEventDestroy");
    sym(a.event_record, "cudaEventRecord");
    sym(a.event_synchronize, "cudaEventSynchronize");
    sym(a.event_elapsed, "cudaEventElapsedTime");
    sym(a.device_synchronize, "cudaDeviceSynchronize");
    return rt;
}

cuda_runtime::~cuda_runtime() {
    // The runtime is left loaded: unloading libcudart with live contexts is not supported by
    // CUDA, and the process is about to end anyway.
}

std::vector<cuda_device_info> cuda_runtime::devices() {
    api& a = *api_;
    int n = 0;
    a.check(a.get_device_count(&n), "cudaGetDeviceCount");
    if (n <= 0) throw unavailable_error("no CUDA device (cudaGetDeviceCount found 0)");
    if (!a.driver) {
        a.driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!a.driver) throw unavailable_error(fmt::format("cannot load the CUDA driver library libcuda.so.1: {}", ::dlerror()));
        a.cu_init = reinterpret_cast<int (*)(unsigned)>(::dlsym(a.driver, "cuInit"));
        a.cu_device_get = reinterpret_cast<int (*)(int*, int)>(::dlsym(a.driver, "cuDeviceGet"));
        a.cu_device_get_name = reinterpret_cast<int (*)(char*, int, int)>(::dlsym(a.driver, "cuDeviceGetName"));
        void* uuid = ::dlsym(a.driver, "cuDeviceGetUuid_v2");
        if (!uuid) uuid = ::dlsym(a.driver, "cuDeviceGetUuid");
        a.cu_device_get_uuid = reinterpret_cast<int (*)(unsigned char*, int)>(uuid);
        if (!a.cu_init || !a.cu_device_get || !a.cu_device_get_name || !a.cu_device_get_uuid)
            throw unavailable_error("libcuda.so.1 lacks cuInit/cuDeviceGet/cuDeviceGetName/cuDeviceGetUuid");
        if (int e = a.cu_init(0); e != 0) throw unavailable_error(fmt::format("cuInit failed (CUDA driver error {})", e));
    }
    std::vector<cuda_device_info> out;
    for (int i = 0; i < n; ++i) {
        cuda_device_info d;
        d.ordinal = i;
        char bus[64] = {};
        a.check(a.get_pci_bus_id(bus, sizeof bus, i), "cudaDeviceGetPCIBusId");
        d.pci_bus_id = normalize_pci_bus_id(bus);
        int dev = 0;
        if (a.cu_device_get(&dev, i) != 0) throw unavailable_error(fmt::format("cuDeviceGet({}) failed", i));
        char name[256] = {};
        if (a.cu_device_get_name(name, sizeof name - 1, dev) == 0) d.name = name;
        unsigned char u[16] = {};
        if (a.cu_device_get_uuid(u, dev) == 0) d.uuid = format_gpu_uuid(u);
        out.push_back(d);
    }
    return out;
}

std::string cuda_runtime::driver_version() {
    int v = 0;
    api_->check(api_->driver_get_version(&v), "cudaDriverGetVersion");
    return format_cuda_version(v);
}

std::string cuda_runtime::runtime_version() {
    int v = 0;
    api_->check(api_->runtime_get_version(&v), "cudaRuntimeGetVersion");
    return format_cuda_version(v);
}

namespace {

class cuda_copier final : public link_copier {
public:
    cuda_copier(cuda_runtime::api& a, bool h2d, bool pinned, std::uint64_t bytes) : a_(a), h2d_(h2d), pinned_(pinned), bytes_(bytes) {
        try {
            a_.check(a_.malloc_(&device_, bytes), "cudaMalloc");
            if (pinned) {
                a_.check(a_.malloc_host(&host_, bytes), "cudaMallocHost");
            } else if (posix_memalign(&host_, 4096, bytes) != 0) {
                host_ = nullptr;
                throw unavailable_error(fmt::format("cannot allocate {} bytes of host memory", bytes));
            }
            std::memset(host_, 1, bytes);  // touched once here, on the bound (NUMA-local) CPUs
            a_.check(a_.event_create(&start_), "cudaEventCreate");
            a_.check(a_.event_create(&stop_), "cudaEventCreate");
        } catch (...) {
            release();
            throw;
        }
    }
    ~cuda_copier() override { release(); }
    double copy_seconds() override {
        void* dst = h2d_ ? device_ : host_;
        const void* src = h2d_ ? host_ : device_;
        a_.check(a_.event_record(start_, nullptr), "cudaEventRecord");
        a_.check(a_.memcpy_async(dst, src, bytes_, h2d_ ? memcpy_host_to_device : memcpy_device_to_host, nullptr),
                 "cudaMemcpyAsync");
        a_.check(a_.event_record(stop_, nullptr), "cudaEventRecord");
        a_.check(a_.event_synchronize(stop_), "cudaEventSynchronize");
        float ms = 0;
        a_.check(a_.event_elapsed(&ms, start_, stop_), "cudaEventElapsedTime");
        return static_cast<double>(ms) / 1e3;
    }

private:
    void release() {
        if (start_) a_.event_destroy(start_), start_ = nullptr;
        if (stop_) a_.event_destroy(stop_), stop_ = nullptr;
        if (device_) a_.free_(device_), device_ = nullptr;
        if (host_) {
            if (pinned_) a_.free_host(host_);
            else std::free(host_);
            host_ = nullptr;
        }
    }
    cuda_runtime::api& a_;
    bool h2d_, pinned_;
    std::uint64_t bytes_;
    void* device_ = nullptr;
    void* host_ = nullptr;
    cuda_event start_ = nullptr, stop_ = nullptr;
};

class cuda_backend final : public link_backend {
public:
    cuda_backend(cuda_runtime& rt, const cuda_device_info& d) : rt_(rt) {
        auto& a = rt.functions();
        pci_locality loc = read_pci_locality(d.pci_bus_id);
        // Bind before the context and the host buffers exist, so pinned pages and the driver's
        // staging buffers land on the device's node (from another node every copy also crosses
        // the link between sockets, and the rate read is not the device's).
        cpus_ = bind_thread_to(loc.local_cpus);
        a.check(a.set_device(d.ordinal), "cudaSetDevice");
        a.check(a.free_(nullptr), "cudaFree(0) (context creation)");
        dev_.name = d.name;
        dev_.uuid = d.uuid;
        dev_.pci_bus_id = d.pci_bus_id;
        dev_.numa_node = loc.numa_node;
        driver_ = rt.driver_version();
        runtime_ = rt.runtime_version();
    }
    const link_device& device() const override { return dev_; }
    std::string method() const override { return "cuda-events"; }
    std::optional<std::string> driver_version() const override { return driver_; }
    std::optional<std::string> runtime_version() const override { return runtime_; }
    std::vector<int> cpus() const override { return cpus_; }
    std::unique_ptr<link_copier> prepare(const std::string& direction, const std::string& memory, std::uint64_t bytes) override {
        return std::make_unique<cuda_copier>(rt_.functions(), direction == "h2d", memory == "pinned", bytes);
    }

private:
    cuda_runtime& rt_;
    link_device dev_;
    std::string driver_, runtime_;
    std::vector<int> cpus_;
};

}  // namespace

std::unique_ptr<link_backend> cuda_link_backend(cuda_runtime& rt, const std::string& spec) {
    auto devs = rt.devices();
    for (const auto& d : devs)
        if (device_matches(spec, d)) return std::make_unique<cuda_backend>(rt, d);
    std::string have;
    for (const auto& d : devs) have += fmt::format("{}{} {} ({})", have.empty() ? "" : ", ", d.ordinal, d.uuid, d.name);
    throw unavailable_error(fmt::format("no CUDA device matches '{}' (devices: {})", spec, have));
}

}  // namespace prof
