/* Ground truth: T threads each burn S seconds of their own CPU time (CLOCK_THREAD_CPUTIME_ID),
   so the process uses T*S CPU-seconds whatever cores it gets. With CPU_FILE, the kernel's own
   count of the whole process (CLOCK_PROCESS_CPUTIME_ID: the sum_exec_runtime of every thread,
   live and joined, from its fork) is written there, in seconds, as the last thing before exit:
   the same scheduler counter a cgroup's cpu.stat usage_usec adds up.
   usage: burn THREADS SECONDS [CPU_FILE] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *spin(void *arg) {
    (void)arg;
    volatile unsigned long x = 0;
    double start = clock_s(CLOCK_THREAD_CPUTIME_ID);
    while (clock_s(CLOCK_THREAD_CPUTIME_ID) - start < seconds)
        for (int i = 0; i < 10000; ++i) x += i;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) { fprintf(stderr, "usage: burn THREADS SECONDS [CPU_FILE]\n"); return 64; }
    int n = atoi(argv[1]);
    seconds = atof(argv[2]);
    pthread_t t[64];
    if (n < 1 || n > 64) return 64;
    double at_main = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    FILE *out = NULL;
    if (argc == 4 && !(out = fopen(argv[3], "w"))) { perror(argv[3]); return 73; }
    for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, spin, NULL);
    for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
    if (out) {
        /* Buffered output first, the clock last: only exit's own teardown follows it. */
        setvbuf(out, NULL, _IONBF, 0);
        if (fprintf(out, "%.9f %.9f\n", at_main, clock_s(CLOCK_PROCESS_CPUTIME_ID)) < 0 || fclose(out) != 0) return 74;
    }
    return 0;
}
