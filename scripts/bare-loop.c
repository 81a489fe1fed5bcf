/*
 * bare-loop.c - the "physical limit" reference for fsynclab's benchmark.
 *
 * N pthreads; each creates its own file in DIR (O_CREAT|O_EXCL), ftruncates it to the file
 * size (sparse, like fio's fallocate=none and fsynclab's prepare=sparse), waits on a common
 * barrier, then issues io_size/bs iterations of
 *     pwrite(bs bytes at a permuted block offset) + fsync/fdatasync (or no sync)
 * timing every iteration with clock_gettime(CLOCK_MONOTONIC). Block order is a random
 * permutation of the file's blocks, reshuffled for every pass (every block written once per
 * pass, like fio's random map). The files are removed at the end.
 *
 * Output: one line, in the format of the reference C loop:
 *   threads=1 ops=32768 sync=fsync prefill=0 wall_s=0.117 ops_per_s_wall=280076
 *   ops_per_s_busy=341904 lat_us_min=2.20 p50=2.55 p95=3.38 p99=5.32 p99.9=53.45 max=441.54
 *   mean=2.92
 * where ops = write+sync iterations over all threads, wall = first start to last end,
 * busy = sum of per-op latencies / threads, and the latencies are per write+sync iteration.
 *
 * With -e (empty) no pwrite is issued: each iteration is the sync alone, of a file with
 * nothing changed since its last sync (fsynclab's `--sync-only`); ops = syncs.
 *
 * Build: cc -O2 -pthread -o bare-loop bare-loop.c
 * Usage: bare-loop -d DIR [-t THREADS] [-s FILE_SIZE] [-i IO_SIZE] [-b BS]
 *                  [-y fsync|fdatasync|none] [-e]     (sizes accept k/m/g suffixes)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum sync_kind { SYNC_FSYNC, SYNC_FDATASYNC, SYNC_NONE };

static const char *dir;
static int nthreads = 1;
static uint64_t file_size = 64ull << 20;
static uint64_t io_size; /* 0 = file_size */
static uint64_t bs = 4096;
static enum sync_kind sync_kind = SYNC_FSYNC;
static int empty; /* -e: syncs only, nothing written */
static pthread_barrier_t barrier;

struct worker {
    int id;
    char path[4096];
    uint64_t ops;
    uint64_t start_ns, end_ns, busy_ns;
    uint32_t *lat_ns; /* one entry per op, preallocated before the timed loop */
    int err;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    case '\0': break;
    default: fprintf(stderr, "bad size: %s\n", s); exit(2);
    }
    return v;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void shuffle(uint64_t *perm, uint64_t n, uint64_t *rng)
{
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = xorshift(rng) % (i + 1);
        uint64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static void *run(void *arg)
{
    struct worker *w = arg;
    uint64_t blocks = file_size / bs;
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)w->id * 0xBF58476D1CE4E5B9ull);
    uint64_t *perm = malloc(blocks * sizeof *perm);
    void *buf = NULL;
    int fd = -1;

    w->lat_ns = malloc((w->ops ? w->ops : 1) * sizeof *w->lat_ns);
    if (!perm || !w->lat_ns || posix_memalign(&buf, 4096, bs)) {
        w->err = ENOMEM;
    } else {
        for (uint64_t i = 0; i < bs; i++)
            ((unsigned char *)buf)[i] = (unsigned char)xorshift(&rng);
        for (uint64_t i = 0; i < blocks; i++)
            perm[i] = i;
        shuffle(perm, blocks, &rng);
        /* touch the latency array so page faults do not land in the timed loop */
        memset(w->lat_ns, 0, w->ops * sizeof *w->lat_ns);
        snprintf(w->path, sizeof w->path, "%s/bare-loop.%d.%d", dir, (int)getpid(), w->id);
        fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)file_size) != 0)
            w->err = errno;
    }
    pthread_barrier_wait(&barrier);
    if (w->err)
        goto out;

    uint64_t pos = 0, busy = 0;
    uint64_t t_prev = now_ns();
    w->start_ns = t_prev;
    for (uint64_t op = 0; op < w->ops; op++) {
        if (pos == blocks) {
            pos = 0;
            shuffle(perm, blocks, &rng);
        }
        off_t off = (off_t)(perm[pos++] * bs);
        if (!empty && pwrite(fd, buf, bs, off) != (ssize_t)bs) {
            w->err = errno ? errno : EIO;
            break;
        }
        int rc = 0;
        if (sync_kind == SYNC_FSYNC)
            rc = fsync(fd);
        else if (sync_kind == SYNC_FDATASYNC)
            rc = fdatasync(fd);
        if (rc != 0) {
            w->err = errno;
            break;
        }
        uint64_t t = now_ns();
        uint64_t d = t - t_prev;
        w->lat_ns[op] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        busy += d;
        t_prev = t;
    }
    w->end_ns = t_prev;
    w->busy_ns = busy;
out:
    if (fd >= 0)
        close(fd);
    if (w->path[0])
        unlink(w->path);
    free(perm);
    free(buf);
    return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static double pct(const uint32_t *v, uint64_t n, double p)
{
    if (n == 0)
        return 0;
    uint64_t i = (uint64_t)(p / 100.0 * (double)(n - 1) + 0.5);
    return v[i] / 1000.0;
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "d:t:s:i:b:y:eh")) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 't': nthreads = atoi(optarg); break;
        case 's': file_size = parse_size(optarg); break;
        case 'i': io_size = parse_size(optarg); break;
        case 'b': bs = parse_size(optarg); break;
        case 'e': empty = 1; break;
        case 'y':
            if (!strcmp(optarg, "fsync")) sync_kind = SYNC_FSYNC;
            else if (!strcmp(optarg, "fdatasync")) sync_kind = SYNC_FDATASYNC;
            else if (!strcmp(optarg, "none")) sync_kind = SYNC_NONE;
            else { fprintf(stderr, "bad sync: %s\n", optarg); return 2; }
            break;
        default:
            fprintf(stderr, "usage: %s -d DIR [-t THREADS] [-s FILE_SIZE] [-i IO_SIZE] [-b BS] "
                            "[-y fsync|fdatasync|none] [-e]\n", argv[0]);
            return 2;
        }
    }
    if (!dir || nthreads < 1 || bs == 0 || file_size < bs) {
        fprintf(stderr, "need -d DIR, threads >= 1, file size >= bs > 0\n");
        return 2;
    }
    if (io_size == 0)
        io_size = file_size;

    struct worker *ws = calloc((size_t)nthreads, sizeof *ws);
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) {
        ws[i].id = i;
        ws[i].ops = io_size / bs;
        if (pthread_create(&tids[i], NULL, run, &ws[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);

    uint64_t total = 0, start = UINT64_MAX, end = 0, busy = 0;
    int failed = 0;
    for (int i = 0; i < nthreads; i++) {
        if (ws[i].err) {
            fprintf(stderr, "thread %d: %s (%s)\n", i, strerror(ws[i].err), ws[i].path);
            failed = 1;
            continue;
        }
        total += ws[i].ops;
        busy += ws[i].busy_ns;
        if (ws[i].start_ns < start) start = ws[i].start_ns;
        if (ws[i].end_ns > end) end = ws[i].end_ns;
    }
    if (failed)
        return 1;

    uint32_t *all = malloc((total ? total : 1) * sizeof *all);
    uint64_t k = 0;
    double sum = 0;
    for (int i = 0; i < nthreads; i++)
        for (uint64_t j = 0; j < ws[i].ops; j++) {
            all[k++] = ws[i].lat_ns[j];
            sum += ws[i].lat_ns[j];
        }
    qsort(all, total, sizeof *all, cmp_u32);

    double wall = (double)(end - start) / 1e9;
    double busy_s = (double)busy / 1e9 / nthreads;
    const char *sname = sync_kind == SYNC_FSYNC ? "fsync"
                      : sync_kind == SYNC_FDATASYNC ? "fdatasync" : "none";
    printf("threads=%d ops=%llu sync=%s%s prefill=0 wall_s=%.3f ops_per_s_wall=%.0f "
           "ops_per_s_busy=%.0f lat_us_min=%.2f p50=%.2f p95=%.2f p99=%.2f p99.9=%.2f "
           "max=%.2f mean=%.2f\n",
           nthreads, (unsigned long long)total, sname, empty ? "-empty" : "", wall, wall > 0 ? total / wall : 0,
           busy_s > 0 ? total / busy_s : 0, total ? all[0] / 1000.0 : 0,
           pct(all, total, 50), pct(all, total, 95), pct(all, total, 99),
           pct(all, total, 99.9), total ? all[total - 1] / 1000.0 : 0,
           total ? sum / total / 1000.0 : 0);
    return 0;
}
