/* Ground truth for tree-wide measurement: a parent forks N children; each touches MIB MiB
   (every page written), then waits until every child has touched its memory (a pipe barrier:
   however slow page faults are, they all hold it at once) and holds it HOLD seconds more; the
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
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) { perror("forktree: pipe"); return 1; }
    for (int i = 0; i < n; ++i) {
        pid_t p = fork();
        if (p < 0) { perror("forktree: fork"); return 1; }
        if (p == 0) {
            char *m = malloc(bytes);
            if (!m) _exit(1);
            memset(m, 1, bytes);
            __asm__ volatile("" : : "r"(m) : "memory"); /* keep the writes */
            /* Touched: say so, then wait for the parent's word that every child has. */
            close(ready[0]);
            close(go[1]);
            if (write(ready[1], "t", 1) != 1) _exit(1);
            close(ready[1]);
            char c;
            if (read(go[0], &c, 1) != 1) _exit(1);
            struct timespec ts = {(time_t)hold, (long)((hold - (time_t)hold) * 1e9)};
            nanosleep(&ts, NULL);
            volatile char sink = m[bytes / 2];
            (void)sink;
            _exit(0);
        }
    }
    /* Every child's byte, or the end of the pipe once the rest have written and a dead one
       never will; then one byte of go per child. */
    close(ready[1]);
    close(go[0]);
    char buf[64];
    for (int got = 0; got < n;) {
        ssize_t r = read(ready[0], buf, sizeof buf);
        if (r <= 0) break;
        got += (int)r;
    }
    for (int i = 0; i < n; ++i)
        if (write(go[1], "g", 1) != 1) break;
    close(go[1]);
    int status, bad = 0;
    while (wait(&status) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bad = 1;
    return bad;
}
