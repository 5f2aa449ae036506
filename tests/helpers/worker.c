/* Ground truth worker for prof-measure --worker: reads cell lines on stdin, replies on the
   descriptor named by PROF_REPLY_FD. The cell's model_type says what to do:
   alloc300 (allocate, touch and free 300 MiB), noop, fail (ok:false), die (exit 3 mid-cell),
   kill (SIGKILL itself), hang (never reply), chatty (print to stdout, then reply),
   keep200 (allocate and touch 200 MiB and keep it: a leak), bigreply (an ok reply line
   padded to 8 MiB), closereply (close the reply descriptor, then wait for ever), closestdin
   (close stdin, reply, then wait for ever), nap (sleep 0.4 s, then reply), spin (burn 0.4 s of
   its own CPU time, then reply); a model whose name starts with alloc300, nap or spin does the
   same.
   With PROF_TEST_READY=1 it sends {"ready":true} first; with PROF_TEST_CLOSE_FIRST=1 it closes
   the reply descriptor at start and waits for ever. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void reply(int fd, const char *s) {
    size_t n = strlen(s);
    if (write(fd, s, n) != (ssize_t)n) exit(2);
}

int main(void) {
    const char *rfd = getenv("PROF_REPLY_FD");
    if (!rfd) { fprintf(stderr, "worker: PROF_REPLY_FD is not set\n"); return 64; }
    int fd = atoi(rfd);
    if (getenv("PROF_TEST_CLOSE_FIRST")) {
        close(fd);
        for (;;) pause();
    }
    if (getenv("PROF_TEST_READY")) reply(fd, "{\"ready\":true}\n");
    char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"model_type\":\"alloc300")) {
            size_t bytes = (size_t)300 << 20;
            char *p = malloc(bytes);
            memset(p, 1, bytes);
    __asm__ volatile("" : : "r"(p) : "memory"); /* keep the writes: no malloc/free elision */
            volatile char sink = p[bytes - 1];
            (void)sink;
            free(p);
            reply(fd, "{\"ok\":true}\n");
        } else if (strstr(line, "\"model_type\":\"keep200\"")) {
            size_t bytes = (size_t)200 << 20;
            char *p = malloc(bytes);
            memset(p, 1, bytes);
            __asm__ volatile("" : : "r"(p) : "memory"); /* kept: never freed */
            reply(fd, "{\"ok\":true}\n");
        } else if (strstr(line, "\"model_type\":\"fail\"")) {
            reply(fd, "{\"ok\":false,\"error\":\"ValueError: series too short\"}\n");
        } else if (strstr(line, "\"model_type\":\"die\"")) {
            fprintf(stderr, "worker: dying on purpose\n");
            exit(3);
        } else if (strstr(line, "\"model_type\":\"kill\"")) {
            raise(SIGKILL);
        } else if (strstr(line, "\"model_type\":\"hang\"")) {
            for (;;) pause();
        } else if (strstr(line, "\"model_type\":\"bigreply\"")) {
            size_t pad = (size_t)8 << 20;
            char *s = malloc(pad + 64);
            strcpy(s, "{\"ok\":true,\"pad\":\"");
            size_t at = strlen(s);
            memset(s + at, 'x', pad);
            strcpy(s + at + pad, "\"}\n");
            reply(fd, s);
            free(s);
        } else if (strstr(line, "\"model_type\":\"closereply\"")) {
            close(fd);
            for (;;) pause();
        } else if (strstr(line, "\"model_type\":\"closestdin\"")) {
            close(0); /* before the reply: the next cell's write then always meets the closed pipe */
            reply(fd, "{\"ok\":true}\n");
            for (;;) pause();
        } else if (strstr(line, "\"model_type\":\"nap")) {
            usleep(400000);
            reply(fd, "{\"ok\":true}\n");
        } else if (strstr(line, "\"model_type\":\"spin")) {
            volatile unsigned long x = 0;
            double start = thread_cpu_s();
            while (thread_cpu_s() - start < 0.4)
                for (int i = 0; i < 10000; ++i) x += i;
            reply(fd, "{\"ok\":true}\n");
        } else if (strstr(line, "\"model_type\":\"chatty\"")) {
            printf("{\"ok\":false,\"error\":\"this is stdout, not a reply\"}\n");
            fflush(stdout);
            reply(fd, "{\"ok\":true,\"extra\":1}\n");
        } else {
            reply(fd, "{\"ok\":true}\n");
        }
    }
    return 0;
}
