/*
 * uring-loop.c - the minimal io_uring reference for fsynclab's io_uring engine (issue 16).
 *
 * One thread, one existing regular file (laid out beforehand, e.g. by fio --create_only=1;
 * never opened through a link: it is overwritten at random), one ring
 * set up as fio 3.33 sets its own (COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN). For SECS
 * seconds it keeps DEPTH requests in flight, alternately a 4 KiB IORING_OP_WRITE at a random
 * block (a permutation of the file's blocks, reshuffled every pass: every block once per
 * pass, like fio's random map) and an IORING_OP_FSYNC of the whole file, the fsync queued
 * right behind its write without waiting for it: fio's `fsync=1` at iodepth > 1 and
 * fsynclab's `--sync-order unordered`. Nothing is timed per request and nothing is counted
 * but completions, so whatever fio or fsynclab do differently from this loop is theirs.
 *
 * Modes:
 *   each   every request submitted alone, io_uring_enter(fd, 1, 0, GETEVENTS), and a wait
 *          for one completion only when DEPTH are in flight: fio's pattern (strace of fio
 *          3.33, docs/PERFORMANCE.md)
 *   batch  every free slot queued, then one io_uring_enter that submits them and waits for
 *          one completion: fsynclab's pattern
 * EXTRA (optional) may contain: i (POSIX_FADV_DONTNEED first: fio's invalidate=1),
 *   r (POSIX_FADV_RANDOM: fio's fadvise_hint), s (setsid: fio's job process),
 *   c (completion queue as long as the submission queue: fio's IORING_SETUP_CQSIZE).
 *
 * Output: one line "iops=N writes=N syncs=N" (iops = writes completed / SECS).
 *
 * Build: cc -O2 -o uring-loop uring-loop.c -luring   (Debian: apt-get install liburing-dev)
 * Usage: uring-loop FILE FILE_MIB SECS DEPTH each|batch [EXTRA]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { BS = 4096, TAG_WRITE = 1, TAG_SYNC = 2 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void shuffle(long *perm, long n)
{
    for (long i = n - 1; i > 0; i--) {
        long j = lrand48() % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static int usage(const char *why)
{
    fprintf(stderr, "uring-loop: %s\nusage: uring-loop FILE FILE_MIB SECS DEPTH each|batch [EXTRA]\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 6)
        return usage("missing arguments");
    long mib = atol(argv[2]);
    double secs = atof(argv[3]);
    int depth = atoi(argv[4]);
    const char *extra = argc > 6 ? argv[6] : "";
    if (mib < 1 || secs <= 0 || depth < 1 || depth > 4096)
        return usage("FILE_MIB >= 1, SECS > 0 and 1 <= DEPTH <= 4096");
    if (strcmp(argv[5], "each") && strcmp(argv[5], "batch"))
        return usage("mode is each or batch");
    int each = strcmp(argv[5], "each") == 0;
    if (strchr(extra, 's'))
        setsid();
    /* It overwrites FILE at random: never through a link, only a regular file. */
    int fd = open(argv[1], O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        perror(argv[1]);
        return 1;
    }
    if (!S_ISREG(st.st_mode))
        return usage("FILE is not a regular file");
    long blocks = mib * (1024 * 1024 / BS);
    if (lseek(fd, 0, SEEK_END) < blocks * BS)
        return usage("FILE is shorter than FILE_MIB: lay it out first");
    if (strchr(extra, 'i') && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
        perror("posix_fadvise");
    if (strchr(extra, 'r') && posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM))
        perror("posix_fadvise");

    struct io_uring ring;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (strchr(extra, 'c')) {
        p.flags |= IORING_SETUP_CQSIZE;
        p.cq_entries = depth;
    }
    int e = io_uring_queue_init_params(depth, &ring, &p);
    if (e < 0) {
        fprintf(stderr, "io_uring_queue_init_params: %s\n", strerror(-e));
        return 1;
    }
    long *perm = malloc(blocks * sizeof *perm);
    char *buf;
    if (!perm || posix_memalign((void **)&buf, BS, (size_t)BS * depth)) {
        fprintf(stderr, "uring-loop: out of memory for %ld blocks\n", blocks);
        return 1;
    }
    memset(buf, 0xab, (size_t)BS * depth);
    for (long i = 0; i < blocks; i++)
        perm[i] = i;
    srand48(getpid() ^ (long)now());
    long next = blocks, writes = 0, syncs = 0;
    int inflight = 0, sync_due = 0, slot = 0, stop = 0;
    double end = now() + secs;
    for (;;) {
        while (!stop && inflight < depth) {
            if (!sync_due && now() >= end) {
                stop = 1;
                break;
            }
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            if (sync_due) {
                io_uring_prep_fsync(sqe, fd, 0);
                io_uring_sqe_set_data64(sqe, TAG_SYNC);
                sync_due = 0;
            } else {
                if (next == blocks) {
                    shuffle(perm, blocks);
                    next = 0;
                }
                io_uring_prep_write(sqe, fd, buf + (size_t)BS * slot, BS, perm[next++] * BS);
                io_uring_sqe_set_data64(sqe, TAG_WRITE);
                slot = (slot + 1) % depth;
                sync_due = 1;
            }
            inflight++;
            if (each && (e = io_uring_submit_and_get_events(&ring)) < 0)
                break;
        }
        if (e < 0 || inflight == 0)
            break;
        struct io_uring_cqe *cqe;
        if (!each)
            e = io_uring_submit_and_wait(&ring, 1);
        else if (inflight >= depth || stop)
            e = io_uring_wait_cqe(&ring, &cqe);
        if (e < 0 && e != -EINTR)
            break;
        unsigned head, n = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            if (cqe->res < 0) {
                fprintf(stderr, "%s failed: %s\n", cqe->user_data == TAG_WRITE ? "write" : "fsync",
                        strerror(-cqe->res));
                return 1;
            }
            if (cqe->user_data == TAG_WRITE)
                writes++;
            else
                syncs++;
            n++;
        }
        io_uring_cq_advance(&ring, n);
        inflight -= n;
    }
    if (e < 0 && e != -EINTR) {
        fprintf(stderr, "io_uring_enter: %s\n", strerror(-e));
        return 1;
    }
    printf("iops=%.0f writes=%ld syncs=%ld\n", writes / secs, writes, syncs);
    return 0;
}
