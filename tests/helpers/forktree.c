/* Ground truth for tree-wide measurement: a parent forks N children; each touches MIB MiB
   (every page written) and holds it HOLD seconds, so all N hold their memory at once; the
   parent waits for them and exits 0 (1 if a child failed). The parent itself touches nothing.
   usage: forktree N MIB HOLD_SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: forktree N MIB HOLD_SECONDS\n"); return 64; }
    int n = atoi(argv[1]);
    size_t bytes = (size_t)atol(argv[2]) << 20;
    double hold = atof(argv[3]);
    for (int i = 0; i < n; ++i) {
        pid_t p = fork();
        if (p < 0) { perror("forktree: fork"); return 1; }
        if (p == 0) {
            char *m = malloc(bytes);
            if (!m) _exit(1);
            memset(m, 1, bytes);
            __asm__ volatile("" : : "r"(m) : "memory"); /* keep the writes */
            struct timespec ts = {(time_t)hold, (long)((hold - (time_t)hold) * 1e9)};
            nanosleep(&ts, NULL);
            volatile char sink = m[bytes / 2];
            (void)sink;
            _exit(0);
        }
    }
    int status, bad = 0;
    while (wait(&status) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bad = 1;
    return bad;
}
