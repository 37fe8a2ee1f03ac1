#define _POSIX_C_SOURCE 200809L  /* clock_gettime, sched_yield */
/* Splitting a kernel's work over threads (POSIX threads; serial where there are none).
 *
 * A kernel hands gg_parallel a function over a range of its units (samples, rows, planes, elements),
 * cut into chunks. The chunks are handed out one at a time, from a shared counter, to the calling
 * thread and to workers - 1 threads of the pool (below; threads made for the call when the pool is
 * busy), and the call returns when all its chunks are done. Handing out
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
 * (gg_team_workers), or on threads of our own where NumPy's OpenBLAS does the products on the same
 * pool (gg_set_own_split); the direct convolutions, max pooling and the scans split
 * on threads of our own when there is no team.
 *
 * Threads of our own are a pool made once (gg_pool_run): each worker waits for its next task spinning
 * for a while (gg_set_spin: 2 ms unless set), then sleeping on a condition variable. Where NumPy's
 * OpenBLAS does the products, it hands its threaded work to this same pool (gg_blas_threads, given to
 * OpenBLAS as its threading callback from Python: native._share_with_openblas), so one set of threads
 * serves both and none of them spins on a core that the other wants. Before that, OpenBLAS's own
 * threads either spun for ~0.1 s after each product, taking the core our kernels split over, or
 * were told to sleep at once, and then on a virtual machine each product paid for waking them: after
 * an idle pause the next few W1 steps took 10-25 ms instead of 3. */
#include "gg_native.h"
#ifndef _WIN32
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
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
 * threads spin between products, i.e. NumPy's OpenBLAS runs its threaded work on this library's pool
 * (blas.openblas_on_pool). */
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

static int64_t spin_ns = 2000000;  /* how long an idle worker spins before it sleeps */

#ifndef _WIN32
/* ---- the pool: workers 1..pool_size, made on first use, each with its own task slot ---- */
typedef void (*pool_fn)(void *arg, int thread);

typedef struct {
    pool_fn fn;
    void *arg;
    int64_t pending;   /* workers still running it (atomic) */
} pool_task;

typedef struct {
    pthread_t id;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pool_task *slot;   /* the task handed to this worker, NULL when idle (atomic) */
    int sleeping;      /* waiting on `wake` (atomic) */
    int index;
} pool_worker;

/* Room for OpenBLAS's jobs on a large machine (it runs one per core); native kernels use at most
 * GG_MAX_WORKERS of the workers. */
#define POOL_MAX 256
static pool_worker pool[POOL_MAX];
static int pool_size = 0;          /* workers made */
static int pool_busy = 0;          /* a task is being run (atomic): one caller at a time */
static pthread_mutex_t pool_grow_lock = PTHREAD_MUTEX_INITIALIZER;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* What a worker leaves in its slot while it runs the task it took (so the caller cannot take it back). */
#define TAKEN ((pool_task *)1)

/* Wait for a task in this worker's slot and take it: spinning for spin_ns, then sleeping until the
 * slot is filled (the caller may take a task back before the worker takes it: then wait again). */
static pool_task *next_task(pool_worker *w) {
    for (;;) {
        int64_t start = now_ns(), spin = __atomic_load_n(&spin_ns, __ATOMIC_RELAXED);
        for (unsigned i = 1;; i++) {
            pool_task *task = __atomic_load_n(&w->slot, __ATOMIC_ACQUIRE);
            if (task && task != TAKEN &&
                __atomic_compare_exchange_n(&w->slot, &task, TAKEN, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return task;
            cpu_relax();
            if ((i & 127) == 0 && now_ns() - start >= spin) break;
        }
        pthread_mutex_lock(&w->lock);
        __atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
        while (!__atomic_load_n(&w->slot, __ATOMIC_SEQ_CST))
            pthread_cond_wait(&w->wake, &w->lock);
        __atomic_store_n(&w->sleeping, 0, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&w->lock);
    }
}

static void *pool_main(void *p) {
    pool_worker *w = (pool_worker *)p;
    for (;;) {
        pool_task *task = next_task(w);
        task->fn(task->arg, w->index);
        /* the slot is emptied before the task is counted done: once pending is 0, the caller may hand
         * this worker its next task (and `task`, on the caller's stack, is gone) */
        __atomic_store_n(&w->slot, NULL, __ATOMIC_RELEASE);
        __atomic_fetch_sub(&task->pending, 1, __ATOMIC_ACQ_REL);
    }
    return NULL;
}

/* A child made by fork() has none of the workers (only the forking thread is copied): it makes its own. */
static void pool_after_fork(void) {
    pool_size = 0;
    pool_busy = 0;
    pthread_mutex_init(&pool_grow_lock, NULL);
}

/* Make workers up to `count` (kept for the life of the process); whether there are that many. */
static int pool_grow(int count) {
    static int fork_handled = 0;
    pthread_mutex_lock(&pool_grow_lock);
    if (!fork_handled) fork_handled = pthread_atfork(NULL, NULL, pool_after_fork) == 0;
    while (pool_size < count) {
        pool_worker *w = &pool[pool_size + 1];
        w->index = pool_size + 1;
        w->slot = NULL;
        w->sleeping = 0;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->wake, NULL);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&w->id, &attr, pool_main, w);
        pthread_attr_destroy(&attr);
        if (failed) break;
        __atomic_store_n(&pool_size, pool_size + 1, __ATOMIC_RELEASE);
    }
    int enough = pool_size >= count;
    pthread_mutex_unlock(&pool_grow_lock);
    return enough;
}

/* Run fn(arg, t) for t = 0 .. team - 1 at the same time, t = 0 on the calling thread, the others on
 * the pool's workers; return when all have. With `optional`, fn(arg, 0) does all the work that a
 * worker has not started (chunks from a shared counter): the tasks that no worker has taken when it
 * returns are taken back rather than waited for (a sleeping worker can take long to wake). 0 (nothing
 * run) when the pool is busy with another caller's task (another Python thread, or a task started
 * from inside a task) or cannot make the workers: the caller then runs the work another way. */
static int gg_pool_run(pool_fn fn, void *arg, int team, int optional) {
    if (team < 2 || team > POOL_MAX) return 0;
    int idle = 0;
    if (!__atomic_compare_exchange_n(&pool_busy, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
    if (__atomic_load_n(&pool_size, __ATOMIC_ACQUIRE) < team - 1 && !pool_grow(team - 1)) {
        __atomic_store_n(&pool_busy, 0, __ATOMIC_RELEASE);
        return 0;
    }
    pool_task task = {fn, arg, team - 1};
    for (int t = 1; t < team; t++) {
        pool_worker *w = &pool[t];
        __atomic_store_n(&w->slot, &task, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST)) {
            pthread_mutex_lock(&w->lock);
            pthread_cond_signal(&w->wake);
            pthread_mutex_unlock(&w->lock);
        }
    }
    fn(arg, 0);
    for (int t = 1; optional && t < team; t++) {
        pool_task *mine = &task;
        if (__atomic_compare_exchange_n(&pool[t].slot, &mine, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            __atomic_fetch_sub(&task.pending, 1, __ATOMIC_ACQ_REL);
    }
    /* wait for the workers: spin briefly, then yield (a worker whose core was taken needs it back) */
    for (unsigned i = 0; __atomic_load_n(&task.pending, __ATOMIC_ACQUIRE) > 0; i++) {
        if (i < 4096) cpu_relax();
        else sched_yield();
    }
    __atomic_store_n(&pool_busy, 0, __ATOMIC_RELEASE);
    return 1;
}

static void chunks_on_pool(void *arg, int thread) {
    take_chunks((work_queue *)arg, thread);
}

/* ---- OpenBLAS's threading callback (openblas_set_threads_callback_function): run its `numjobs`
 * jobs at the same time, job t as dojob(t, its data, dojob_data). They must run at the same time (a
 * threaded product's jobs wait for each other's packed panels), so when the pool cannot take them
 * each job gets a thread made for the call. ---- */
typedef void (*blas_dojob)(int thread, void *jobdata, int dojob_data);

typedef struct {
    blas_dojob dojob;
    char *data;
    size_t size;
    int dojob_data;
} blas_jobs;

static void blas_job(void *arg, int thread) {
    blas_jobs *jobs = (blas_jobs *)arg;
    jobs->dojob(thread, jobs->data + (size_t)thread * jobs->size, jobs->dojob_data);
}

typedef struct {
    blas_jobs *jobs;
    int thread;
} blas_thread_arg;

static void *blas_thread_main(void *p) {
    blas_thread_arg *a = (blas_thread_arg *)p;
    blas_job(a->jobs, a->thread);
    return NULL;
}

static void gg_blas_threads(int sync, blas_dojob dojob, int numjobs, size_t size, void *data, int dojob_data) {
    (void)sync;  /* (OpenBLAS calls it for its synchronous exec_blas only) */
    blas_jobs jobs = {dojob, (char *)data, size, dojob_data};
    if (numjobs < 1) return;
    if (numjobs == 1) { blas_job(&jobs, 0); return; }
    if (gg_pool_run(blas_job, &jobs, numjobs, 0)) return;
    pthread_t *ids = (pthread_t *)malloc(sizeof(pthread_t) * (size_t)numjobs);
    blas_thread_arg *args = (blas_thread_arg *)malloc(sizeof(blas_thread_arg) * (size_t)numjobs);
    for (int t = 1; t < numjobs; t++) {
        args[t] = (blas_thread_arg){&jobs, t};
        while (pthread_create(&ids[t], NULL, blas_thread_main, &args[t]) != 0) sched_yield();
    }
    blas_job(&jobs, 0);
    for (int t = 1; t < numjobs; t++) pthread_join(ids[t], NULL);
    free(ids);
    free(args);
}

#endif

/* How long (microseconds) an idle worker of the pool spins, waiting for its next task, before it
 * sleeps (0: sleep at once). Spinning keeps the worker's core awake between the products and kernels
 * of one training step; sleeping after that leaves the core to other processes between steps. */
GG_EXPORT void gg_set_spin(int64_t microseconds) {
    __atomic_store_n(&spin_ns, (microseconds < 0 ? 0 : microseconds) * 1000, __ATOMIC_RELAXED);
}

/* The address of gg_blas_threads, for Python to hand to OpenBLAS: out[0] (0 where there is no pool). */
GG_EXPORT void gg_blas_threads_address(int64_t *out) {
#ifndef _WIN32
    out[0] = (int64_t)(intptr_t)&gg_blas_threads;
#else
    out[0] = 0;
#endif
}

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
    if (workers > 1 && gg_pool_run(chunks_on_pool, &q, (int)workers, 1)) return;
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
