/* Ground truth for a fit bound by memory bandwidth: allocates MIB MiB (far past the last-level
   cache) and adds 1 to every 8-byte word PASSES times, so nearly all of its time waits on
   memory, not on its core. Two of them side by side share the memory bus and the shared cache
   the way two such model fits would.
   usage: stream MIB PASSES */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: stream MIB PASSES\n"); return 64; }
    size_t n = ((size_t)atol(argv[1]) << 20) / sizeof(long);
    int passes = atoi(argv[2]);
    long *a = malloc(n * sizeof(long));
    if (!a) { fprintf(stderr, "stream: out of memory\n"); return 1; }
    memset(a, 0, n * sizeof(long));
    for (int p = 0; p < passes; p++)
        for (size_t i = 0; i < n; i++) a[i] += 1;
    __asm__ volatile("" : : "r"(a) : "memory"); /* keep the writes */
    long sum = 0;
    for (size_t i = 0; i < n; i += 4096) sum += a[i];
    free(a);
    return sum == (long)passes * (long)((n + 4095) / 4096) ? 0 : 1;
}
