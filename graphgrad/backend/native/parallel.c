/* Splitting a kernel's work over threads (POSIX threads; serial where there are none).
 *
 * A kernel hands gg_parallel a function over a range of its units (samples, rows, planes, elements),
 * cut into chunks. The chunks are handed out one at a time, from a shared counter, to the calling
 * thread and to workers - 1 threads made for the call (and joined before it returns). Handing out
 * chunks rather than fixed halves matters on a shared machine: when one core is slow to start a thread
 * (an idle virtual CPU can take ~100 us to wake) or is busy with another process, the other threads
 * take its chunks, and a call is never much slower than on one thread.
 *
 * Which thread runs a chunk varies from call to call, so a kernel that sums over units keeps one
 * partial sum per chunk and adds them in chunk order at the end: results do not depend on the number
 * of threads or on timing. The thread count is set from Python (native.threads(), through
 * gg_set_threads) when the library loads; ctypes releases the GIL, so the threads run C only.
 *
 * Where MKL does the products, the split runs as a parallel region of MKL's own OpenMP runtime (its
 * GOMP_parallel: GNU's libgomp, or Intel's libiomp5, which provides it too; set from Python through
 * gg_set_team). MKL's threads spin for a while after each product (KMP_BLOCKTIME, 1 ms as graphgrad sets
 * it; GOMP_SPINCOUNT, milliseconds, when PyTorch loaded libgomp first), waiting for the next region:
 * threads of our own then found the other core taken, and splitting GELU, layer norm and attention's
 * softmax (which run right after products) made a W5 step 15-20% slower, an LSTM's scan 10%. A region
 * of MKL's runtime starts on the spinning threads at once. Those kernels split only on the team
 * (gg_team_workers), or on threads of our own where NumPy's OpenBLAS does the products and its threads
 * sleep right after each (gg_set_own_split); the direct convolutions, max pooling and the scans split
 * on threads of our own when there is no team. */
#include "gg_native.h"
#ifndef _WIN32
#include <pthread.h>
#endif

static int64_t thread_count = 1;

/* How many threads gg_workers may use (1: the calling thread only; at most GG_MAX_WORKERS). */
GG_EXPORT void gg_set_threads(int64_t n) {
    thread_count = n < 1 ? 1 : n > GG_MAX_WORKERS ? GG_MAX_WORKERS : n;
}

int64_t gg_workers(int64_t work, int64_t min_work) {
    int64_t workers = min_work > 0 ? work / min_work : work;
    workers = workers < thread_count ? workers : thread_count;
    return workers < 1 ? 1 : workers;
}

/* (defined below: whether gg_parallel runs on MKL's OpenMP team) */
static int on_team(void);

/* Whether the kernels that split only on MKL's team (GELU, layer norm, attention, generated kernels)
 * may split on threads of our own: set from Python (native._join_team) where no other library's
 * threads spin between products, i.e. NumPy's OpenBLAS was told to let its threads sleep at once
 * (blas.openblas_threads_sleep). */
static int own_split = 0;

GG_EXPORT void gg_set_own_split(int64_t on) {
    own_split = on != 0;
}

int64_t gg_team_workers(int64_t work, int64_t min_work) {
    return on_team() || own_split ? gg_workers(work, min_work) : 1;
}

typedef struct {
    gg_range_fn run;
    void *task;
    int64_t n, chunk, chunks;
    int64_t next;      /* the next chunk to hand out (atomic) */
} work_queue;

typedef struct {
    work_queue *queue;
    int worker;
} worker_arg;

static void take_chunks(work_queue *q, int worker) {
    for (;;) {
        int64_t k = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED);
        if (k >= q->chunks) return;
        int64_t first = k * q->chunk, stop = first + q->chunk;
        q->run(q->task, first, stop < q->n ? stop : q->n, worker, k);
    }
}

/* GOMP_parallel of the GNU OpenMP runtime that MKL's threads belong to, when they do (PyTorch, or
 * anything else, loaded libgomp before MKL): set from Python (native._team). Those threads spin for
 * milliseconds after each product, waiting for the next parallel region; a thread of ours then finds
 * their core taken, but a region of theirs starts at once. With it, gg_parallel runs its chunks as
 * one such region (the calling thread is one of the team). */
typedef void (*team_fn)(void (*)(void *), void *, unsigned, unsigned);
static team_fn team = NULL;

GG_EXPORT void gg_set_team(int64_t gomp_parallel) {
    team = (team_fn)(intptr_t)gomp_parallel;
}

static int on_team(void) {
    return team != NULL;
}

typedef struct {
    work_queue *queue;
    int64_t joined;    /* workers that have entered (atomic): each takes the next index */
} team_arg;

static void team_main(void *p) {
    team_arg *a = (team_arg *)p;
    take_chunks(a->queue, (int)__atomic_fetch_add(&a->joined, 1, __ATOMIC_RELAXED));
}

#ifndef _WIN32
static void *worker_main(void *p) {
    worker_arg *a = (worker_arg *)p;
    take_chunks(a->queue, a->worker);
    return NULL;
}
#endif

void gg_parallel(gg_range_fn run, void *task, int64_t n, int64_t chunk, int64_t workers) {
    chunk = chunk < 1 ? 1 : chunk;
    work_queue q = {run, task, n, chunk, (n + chunk - 1) / chunk, 0};
    workers = workers < q.chunks ? workers : q.chunks;
    workers = workers < 1 ? 1 : workers > GG_MAX_WORKERS ? GG_MAX_WORKERS : workers;
    if (workers > 1 && team) {
        team_arg a = {&q, 0};
        team(team_main, &a, (unsigned)workers, 0);
        return;
    }
#ifndef _WIN32
    pthread_t ids[GG_MAX_WORKERS];
    worker_arg args[GG_MAX_WORKERS];
    int started[GG_MAX_WORKERS] = {0};
    for (int w = 1; w < workers; w++) {
        args[w] = (worker_arg){&q, w};
        started[w] = pthread_create(&ids[w], NULL, worker_main, &args[w]) == 0;  /* (none: fewer workers) */
    }
    take_chunks(&q, 0);
    for (int w = 1; w < workers; w++)
        if (started[w]) pthread_join(ids[w], NULL);
#else
    take_chunks(&q, 0);
#endif
}
