/* Ground truth: allocate and touch N MiB (every page written), hold it S seconds, exit 0.
   usage: alloc MIB [HOLD_SECONDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: alloc MIB [HOLD_SECONDS]\n"); return 64; }
    size_t bytes = (size_t)atol(argv[1]) << 20;
    double hold = argc > 2 ? atof(argv[2]) : 0;
    char *p = malloc(bytes);
    if (!p) { fprintf(stderr, "alloc: out of memory\n"); return 1; }
    memset(p, 1, bytes);
    __asm__ volatile("" : : "r"(p) : "memory"); /* keep the writes: no malloc/free elision */
    if (hold > 0) {
        struct timespec ts = {(time_t)hold, (long)((hold - (time_t)hold) * 1e9)};
        nanosleep(&ts, NULL);
    }
    volatile char sink = p[bytes / 2];
    (void)sink;
    free(p);
    return 0;
}
