/*
 * sysbench-loop.c - the sysbench fileio rndwr event sequence with nothing else around it.
 *
 * The lock-free reference for fsynclab's sysbench mode: THREADS pthreads share ONE file
 * (one descriptor) and draw events from one atomic ticket k: k % (FREQ + 1) < FREQ is a
 * pwrite of BS bytes at a uniformly random block (splitmix64 of k), else an fsync of the
 * file; every thread fsyncs the file once more when it finishes (sysbench
 * --file-fsync-end). The file is created, filled and fsynced before the threads start and
 * removed at the end. No timing per event, no histogram, no statistics: the wall time of
 * the event loop only. sysbench draws the same sequence under a global mutex instead;
 * -m does the same (one global pthread mutex held to draw each event and again to count
 * each completed write, as sysbench's fileio.c does), to show what that pacing changes.
 *
 * Output: one line
 *   events=10000 writes=8334 fsyncs=1670 wall_s=1.2345 events_per_s=8100.4
 *
 * Build: cc -O2 -pthread -o sysbench-loop sysbench-loop.c
 * Usage: sysbench-loop -f FILE [-n EVENTS] [-t THREADS] [-e FREQ] [-s SIZE_MIB] [-b BS] [-m]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fd;
static long events = 10000, freq = 5, nthreads = 4, bs = 4096;
static long long file_size = 128LL << 20;
static long fill_chunk = 1 << 20;
static atomic_long ticket, writes, fsyncs;
static pthread_barrier_t start;
static int use_mutex;
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static long locked_writes;

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void *worker(void *arg)
{
    long blocks = file_size / bs, w = 0, f = 0;
    char *buf = aligned_alloc(4096, bs);
    if (!buf)
        die("aligned_alloc");
    for (long i = 0; i < bs; i++)
        buf[i] = (char)mix((uint64_t)(intptr_t)arg * 7919 + i);
    pthread_barrier_wait(&start);
    for (;;) {
        long k;
        if (use_mutex) {
            pthread_mutex_lock(&big_lock);
            k = atomic_load_explicit(&ticket, memory_order_relaxed);
            atomic_store_explicit(&ticket, k + 1, memory_order_relaxed);
            pthread_mutex_unlock(&big_lock);
        } else {
            k = atomic_fetch_add(&ticket, 1);
        }
        if (k >= events)
            break;
        if (k % (freq + 1) < freq) {
            memcpy(buf, &k, sizeof k);
            if (pwrite(fd, buf, bs, (long long)(mix(k) % blocks) * bs) != bs)
                die("pwrite");
            w++;
            if (use_mutex) {
                pthread_mutex_lock(&big_lock);
                locked_writes++;
                pthread_mutex_unlock(&big_lock);
            }
        } else {
            if (fsync(fd))
                die("fsync");
            f++;
        }
    }
    if (fsync(fd)) /* end fsync, not an event */
        die("fsync");
    atomic_fetch_add(&writes, w);
    atomic_fetch_add(&fsyncs, f + 1);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "f:n:t:e:s:b:c:m")) != -1) {
        switch (opt) {
        case 'f': path = optarg; break;
        case 'n': events = atol(optarg); break;
        case 't': nthreads = atol(optarg); break;
        case 'e': freq = atol(optarg); break;
        case 's': file_size = atoll(optarg) << 20; break;
        case 'b': bs = atol(optarg); break;
        case 'c': fill_chunk = atol(optarg) << 10; break;
        case 'm': use_mutex = 1; break;
        default:
            fprintf(stderr, "usage: %s -f FILE [-n EVENTS] [-t THREADS] [-e FREQ] [-s MIB] [-b BS] [-c FILL_KIB] [-m]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!path || events < 1 || nthreads < 1 || nthreads > 1024 || freq < 1 || bs < 512 ||
        file_size < bs || fill_chunk < 4096 || file_size % fill_chunk) {
        fprintf(stderr, "%s: need -f FILE and positive sizes (see the header)\n", argv[0]);
        return 2;
    }
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die(path);
    char *chunk = calloc(1, fill_chunk);
    if (!chunk)
        die("calloc");
    for (long long off = 0; off < file_size; off += fill_chunk) {
        for (long i = 0; i + 8 <= fill_chunk; i += 8) {
            uint64_t v = mix((uint64_t)(off + i));
            memcpy(chunk + i, &v, 8);
        }
        if (pwrite(fd, chunk, fill_chunk, off) != fill_chunk)
            die("fill");
    }
    if (fsync(fd))
        die("fsync after fill");
    free(chunk);

    pthread_t *tids = calloc(nthreads, sizeof *tids);
    pthread_barrier_init(&start, NULL, nthreads + 1);
    for (long i = 0; i < nthreads; i++)
        if (pthread_create(&tids[i], NULL, worker, (void *)i))
            die("pthread_create");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pthread_barrier_wait(&start);
    for (long i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double wall = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    long done = atomic_load(&writes) + atomic_load(&fsyncs) - nthreads;
    printf("events=%ld writes=%ld fsyncs=%ld wall_s=%.4f events_per_s=%.1f\n", done,
           atomic_load(&writes), atomic_load(&fsyncs), wall, done / wall);
    close(fd);
    unlink(path);
    return 0;
}
