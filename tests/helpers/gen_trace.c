/* gen_trace: a large synthetic Chrome trace for the prof-spans benchmark. Writes N spans as
 * {"traceEvents":[...]}: 80% 'X' complete events and 20% 'B'/'E' pairs over 8 threads and 12
 * node names ("optimization" among them), with overlaps, nesting, neighbouring events swapped
 * (so the input is not sorted), plus an instant and a duplicated metadata event every 1000
 * spans. Deterministic for a given seed.
 * With MODE "mixed", times are written as real tools write them and the trace holds the defects
 * a reader tolerates: ts and dur with three decimals (PyTorch/Kineto style, some as quoted
 * numbers), every 997th span an 'E' named differently from its 'B', and every 1000 spans an
 * 'X' without dur, an event of an undefined phase, an empty {} and a metadata event with
 * "ts": null.  Usage: gen_trace N [SEED [MODE]] > trace.json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long state;
static unsigned rnd(void) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(state >> 33);
}

static const char* names[] = {"optimization", "scan", "filter", "project", "hash_join", "group_by",
                              "sort", "sink", "parquet_read", "cast", "window", "collect"};

/* A time in nanoseconds written as microseconds: whole, or with three decimals. */
static void micros(char* out, size_t n, long long ns, int mixed, int quoted) {
    if (!mixed)
        snprintf(out, n, "%lld", ns / 1000);
    else
        snprintf(out, n, quoted ? "\"%lld.%03lld\"" : "%lld.%03lld", ns / 1000, ns % 1000);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: gen_trace N [SEED [MODE]]\n");
        return 64;
    }
    long long n = atoll(argv[1]);
    state = argc > 2 ? strtoull(argv[2], 0, 10) : 42;
    int mixed = argc > 3 && strcmp(argv[3], "mixed") == 0;
    if (argc > 3 && !mixed) {
        fprintf(stderr, "gen_trace: MODE is \"mixed\" or absent\n");
        return 64;
    }
    long long ts[8] = {0}; /* ns */
    int first = 1;
    printf("{\"traceEvents\":[\n");
    char held[320];
    int have_held = 0;
    for (long long i = 0; i < n; ++i) {
        int tid = (int)(rnd() % 8);
        const char* name = names[rnd() % 12];
        /* whole microseconds, or (mixed) any nanosecond */
        long long start = ts[tid] + (mixed ? (long long)(rnd() % 20000) : 1000LL * (rnd() % 20));
        long long dur = mixed ? 1 + (long long)(rnd() % 200000) : 1000LL * (1 + rnd() % 200);
        ts[tid] = start + dur - (rnd() % 3 == 0 ? (mixed ? dur / 2 : 1000 * (dur / 2000)) : 0); /* some overlap */
        char buf[320], a[40], b[40];
        int quoted = mixed && rnd() % 50 == 0;
        micros(a, sizeof a, start, mixed, quoted);
        if (rnd() % 5 == 0) {
            /* a B/E pair written as two events; in mixed mode every 997th E names another node */
            micros(b, sizeof b, start + dur, mixed, quoted);
            char end_name[40] = "";
            if (mixed && i % 997 == 0) snprintf(end_name, sizeof end_name, ",\"name\":\"%s\"", names[(rnd() % 11 + 1 + (name - names[0])) % 12]);
            snprintf(buf, sizeof buf,
                     "{\"ph\":\"B\",\"pid\":1,\"tid\":%d,\"ts\":%s,\"name\":\"%s\",\"cat\":\"q\"},\n"
                     "{\"ph\":\"E\",\"pid\":1,\"tid\":%d,\"ts\":%s,\"cat\":\"q\"%s}",
                     tid, a, name, tid, b, end_name);
            ts[tid] = start + dur;
        } else {
            micros(b, sizeof b, dur, mixed, quoted);
            snprintf(buf, sizeof buf, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%s,\"dur\":%s,\"name\":\"%s\",\"cat\":\"q\"}",
                     tid, a, b, name);
        }
        /* swap neighbours now and then: events in any order */
        if (!have_held && rnd() % 4 == 0) {
            snprintf(held, sizeof held, "%s", buf);
            have_held = 1;
            continue;
        }
        printf("%s%s", first ? "" : ",\n", buf);
        first = 0;
        if (have_held) {
            printf(",\n%s", held);
            have_held = 0;
        }
        if (i % 1000 == 999) {
            micros(a, sizeof a, ts[0], mixed, 0);
            printf(",\n{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":%s,\"name\":\"tick\",\"s\":\"t\"}"
                   ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"w\"}}",
                   a);
            if (mixed)
                printf(",\n{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":%s,\"name\":\"scan\"}"
                       ",\n{\"ph\":\"XXX\",\"pid\":1,\"tid\":3,\"ts\":%s,\"dur\":5,\"name\":\"scan\"}"
                       ",\n{}"
                       ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":3,\"ts\":null,\"name\":\"thread_name\",\"args\":{\"name\":\"m\"}}",
                       a, a);
        }
    }
    if (have_held) printf("%s%s", first ? "" : ",\n", held);
    printf("\n]}\n");
    return 0;
}
