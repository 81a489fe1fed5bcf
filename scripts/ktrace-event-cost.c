/* What one traced event costs the CPU (scripts/ktrace-cost.sh, EVENT_COST=1; issue 31).
 *
 * Two threads named like fsynclab's workers (fsynclab-w0, fsynclab-w1), pinned to one CPU,
 * pass a byte back and forth over two pipes: every round trip is two context switches
 * into a thread whose name matches fsynclab's sched_switch filter, so with the trace
 * instance on each switch is a recorded event (or, with a filter nothing passes, an
 * evaluated and rejected one). The process's CPU time per round trip is measured in
 * periods of PERIOD_MS, the instance's tracing_on written 1 and 0 in turn before each
 * period; one line per period: "<on> <round trips> <cpu ns>".
 *
 *   cc -O2 -pthread -o ktrace-event-cost scripts/ktrace-event-cost.c
 *   ktrace-event-cost <tracing_on file> <periods> <period ms> <cpu>
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static int cpu;

static void pin(const char *name) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); exit(1); }
    prctl(PR_SET_NAME, name);
}

static void *echo(void *arg) {
    (void)arg;
    pin("fsynclab-w1");
    char b;
    for (;;) {
        if (read(ping[0], &b, 1) != 1) return NULL;
        if (write(pong[1], &b, 1) != 1) return NULL;
    }
}

static unsigned long long ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s <tracing_on file> <periods> <period ms> <cpu>\n", argv[0]);
        return 2;
    }
    int periods = atoi(argv[2]);
    unsigned long long period_ns = strtoull(argv[3], NULL, 10) * 1000000ull;
    cpu = atoi(argv[4]);
    int on_fd = open(argv[1], O_WRONLY);
    if (on_fd < 0 || pipe(ping) || pipe(pong)) { perror("open"); return 1; }
    pin("fsynclab-w0");
    pthread_t t;
    pthread_create(&t, NULL, echo, NULL);
    char b = 0;
    for (int p = 0; p < periods; p++) {
        int on = p % 2;
        if (pwrite(on_fd, on ? "1" : "0", 1, 0) != 1) { perror("tracing_on"); return 1; }
        unsigned long long trips = 0, cpu0 = ns(CLOCK_PROCESS_CPUTIME_ID);
        unsigned long long end = ns(CLOCK_MONOTONIC) + period_ns;
        while (ns(CLOCK_MONOTONIC) < end) {
            for (int i = 0; i < 256; i++) {
                if (write(ping[1], &b, 1) != 1 || read(pong[0], &b, 1) != 1) return 1;
            }
            trips += 256;
        }
        printf("%d %llu %llu\n", on, trips, ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
        fflush(stdout);
    }
    pwrite(on_fd, "0", 1, 0);
    return 0;
}
