/* gen_trace: a large synthetic Chrome trace for the prof-spans benchmark. Writes N spans as
 * {"traceEvents":[...]}: 80% 'X' complete events and 20% 'B'/'E' pairs over 8 threads and 12
 * node names ("optimization" among them), with overlaps, nesting, neighbouring events swapped
 * (so the input is not sorted), plus an instant and a duplicated metadata event every 1000
 * spans. Deterministic for a given seed.  Usage: gen_trace N [SEED] > trace.json */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state;
static unsigned rnd(void) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(state >> 33);
}

static const char* names[] = {"optimization", "scan", "filter", "project", "hash_join", "group_by",
                              "sort", "sink", "parquet_read", "cast", "window", "collect"};

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: gen_trace N [SEED]\n");
        return 64;
    }
    long long n = atoll(argv[1]);
    state = argc > 2 ? strtoull(argv[2], 0, 10) : 42;
    long long ts[8] = {0};
    int first = 1;
    printf("{\"traceEvents\":[\n");
    char held[256];
    int have_held = 0;
    for (long long i = 0; i < n; ++i) {
        int tid = (int)(rnd() % 8);
        const char* name = names[rnd() % 12];
        long long start = ts[tid] + (rnd() % 20);
        long long dur = 1 + rnd() % 200;
        ts[tid] = start + dur - (rnd() % 3 == 0 ? dur / 2 : 0); /* some overlap on a thread */
        char buf[256];
        if (rnd() % 5 == 0) {
            /* a B/E pair written as two events */
            snprintf(buf, sizeof buf,
                     "{\"ph\":\"B\",\"pid\":1,\"tid\":%d,\"ts\":%lld,\"name\":\"%s\",\"cat\":\"q\"},\n"
                     "{\"ph\":\"E\",\"pid\":1,\"tid\":%d,\"ts\":%lld,\"cat\":\"q\"}",
                     tid, start, name, tid, start + dur);
            ts[tid] = start + dur;
        } else {
            snprintf(buf, sizeof buf, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%lld,\"dur\":%lld,\"name\":\"%s\",\"cat\":\"q\"}",
                     tid, start, dur, name);
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
        if (i % 1000 == 999)
            printf(",\n{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":%lld,\"name\":\"tick\",\"s\":\"t\"}"
                   ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"w\"}}",
                   ts[0]);
    }
    if (have_held) printf("%s%s", first ? "" : ",\n", held);
    printf("\n]}\n");
    return 0;
}
