/* Ground truth: T threads each burn S seconds of their own CPU time (CLOCK_THREAD_CPUTIME_ID),
   so the process uses T*S CPU-seconds whatever cores it gets. usage: burn THREADS SECONDS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *spin(void *arg) {
    (void)arg;
    volatile unsigned long x = 0;
    double start = thread_cpu();
    while (thread_cpu() - start < seconds)
        for (int i = 0; i < 10000; ++i) x += i;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: burn THREADS SECONDS\n"); return 64; }
    int n = atoi(argv[1]);
    seconds = atof(argv[2]);
    pthread_t t[64];
    if (n < 1 || n > 64) return 64;
    for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, spin, NULL);
    for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
    return 0;
}
