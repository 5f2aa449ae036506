// alloc_device: a CUDA program with a known device footprint, for prof-measure's GPU peak check
// (scripts/gpu-check, PROF_TEST_CUDA_ALLOC). Allocates BYTES of device memory (default 256 MiB),
// writes every byte (cudaMemset, then a kernel that reads and rewrites them), holds the memory
// for HOLD_MS milliseconds (default 1500, so a poller sees it), frees it and exits 0. Any CUDA
// error is printed on stderr with exit 1.   Usage: alloc_device [BYTES [HOLD_MS]]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

__global__ void touch(unsigned char* p, size_t n) {
    size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = p[i] + 1;
}

static int check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return 0;
    std::fprintf(stderr, "alloc_device: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
}

int main(int argc, char** argv) {
    size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (size_t{256} << 20);
    long hold_ms = argc > 2 ? std::atol(argv[2]) : 1500;
    unsigned char* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    check(cudaMemset(p, 0, bytes), "cudaMemset");
    touch<<<1024, 256>>>(p, bytes);
    check(cudaGetLastError(), "touch kernel launch");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    check(cudaFree(p), "cudaFree");
    std::printf("alloc_device: held %zu bytes for %ld ms\n", bytes, hold_ms);
    return 0;
}
