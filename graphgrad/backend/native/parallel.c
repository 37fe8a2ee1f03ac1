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
 * Only kernels of a millisecond or more split (the direct convolutions, max pooling, an LSTM's whole
 * sequence, by batch rows). Splitting GELU, layer norm and attention's softmax (0.2-0.6 ms each in W5)
 * made the W5 step 15-20% slower in the benchmark, and the packed attention heads (per block) 3-7%:
 * they run right after MKL products, whose OpenMP threads keep spinning on the other core for a
 * millisecond (KMP_BLOCKTIME). With KMP_BLOCKTIME=0 the attention split won 7%, but that setting made
 * a W3 step 9% slower in another run (each product then wakes MKL's threads). */
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
