/* pool.c: the persistent thread pool of pool.h and the thread count of dp/compute.h. Workers
 * are started on first need and live for the process. Waiting (workers between regions, the
 * caller for its workers, every thread at a barrier) spins on an atomic for tens of
 * microseconds, which covers a layer's imbalance or the gap between two predictions, then
 * sleeps on one condition variable; wakers broadcast only when someone sleeps. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "dp/compute.h"

#define POOL_MAX 64           /* threads of a region, the caller included */
#define DEFAULT_MAX 4         /* the default never passes this: a 100-group graph's rows */
#define SPIN_WAIT 4000        /* pause instructions before sleeping (~100 us) */

struct dp_pool_region {
    int          nt;
    atomic_int   count;  /* arrivals at the current barrier */
    atomic_uint  phase;  /* barriers completed */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    atomic_int      sleepers;
    atomic_flag     busy;     /* a caller owns the pool */
    atomic_uint     job;      /* region generation: workers run each once */
    atomic_int      left;     /* workers yet to finish the current region */
    int             n_workers;
    void          (*fn)(void *, int, int, struct dp_pool_region *);
    void           *ctx;
    atomic_int      nt;
    struct dp_pool_region region;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, ATOMIC_FLAG_INIT, 0, 0, 0,
          NULL, NULL, 0, {1, 0, 0}};

static atomic_int threads = 0; /* 0 until first use */
/* The region generation when each worker was started: it runs every later region. */
static unsigned start_gen[POOL_MAX];

static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Waits until *a != old (spinning, then sleeping). */
static void wait_change(atomic_uint *a, unsigned old) {
    for (int s = 0; s < SPIN_WAIT; s++) {
        if (atomic_load(a) != old) return;
        relax();
    }
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add(&pool.sleepers, 1);
    while (atomic_load(a) == old) pthread_cond_wait(&pool.cv, &pool.mu);
    atomic_fetch_sub(&pool.sleepers, 1);
    pthread_mutex_unlock(&pool.mu);
}

/* Waits until *a == 0. */
static void wait_zero(atomic_int *a) {
    for (int s = 0; s < SPIN_WAIT; s++) {
        if (atomic_load(a) == 0) return;
        relax();
    }
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add(&pool.sleepers, 1);
    while (atomic_load(a) != 0) pthread_cond_wait(&pool.cv, &pool.mu);
    atomic_fetch_sub(&pool.sleepers, 1);
    pthread_mutex_unlock(&pool.mu);
}

/* After a state change others may wait for: wakes sleepers, if any (the seq_cst order of the
 * change and this load, against a sleeper's increment and its re-check, loses no wake-up). */
static void wake(void) {
    if (atomic_load(&pool.sleepers) == 0) return;
    pthread_mutex_lock(&pool.mu);
    pthread_cond_broadcast(&pool.cv);
    pthread_mutex_unlock(&pool.mu);
}

static void *worker(void *arg) {
    const int id = (int)(intptr_t)arg; /* tid id + 1 */
    unsigned seen = start_gen[id];
    for (;;) {
        wait_change(&pool.job, seen);
        seen = atomic_load(&pool.job);
        const int nt = atomic_load(&pool.nt);
        if (id + 1 < nt) pool.fn(pool.ctx, id + 1, nt, &pool.region);
        if (atomic_fetch_sub(&pool.left, 1) == 1) wake();
    }
    return NULL;
}

void dp_pool_barrier(struct dp_pool_region *r) {
    if (r->nt <= 1) return;
    const unsigned ph = atomic_load(&r->phase);
    if (atomic_fetch_add(&r->count, 1) == r->nt - 1) {
        atomic_store(&r->count, 0);
        atomic_fetch_add(&r->phase, 1);
        wake();
    } else {
        wait_change(&r->phase, ph);
    }
}

void dp_pool_share(int n, int tid, int nt, int *r0, int *r1) {
    *r0 = (int)((long)n * tid / nt);
    *r1 = (int)((long)n * (tid + 1) / nt);
}

void dp_pool_run(int want, void (*fn)(void *ctx, int tid, int nt, struct dp_pool_region *r),
                 void *ctx) {
    int nt = want < dp_threads() ? want : dp_threads();
    if (nt <= 1 || atomic_flag_test_and_set(&pool.busy)) {
        struct dp_pool_region alone = {1, 0, 0};
        fn(ctx, 0, 1, &alone);
        return;
    }
    /* start missing workers (only the pool's owner gets here); fewer if the system refuses */
    while (pool.n_workers < nt - 1 && pool.n_workers < POOL_MAX - 1) {
        pthread_t t;
        pthread_attr_t at;
        start_gen[pool.n_workers] = atomic_load(&pool.job);
        bool ok = !pthread_attr_init(&at);
        ok = ok && !pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        ok = ok && !pthread_create(&t, &at, worker, (void *)(intptr_t)pool.n_workers);
        pthread_attr_destroy(&at);
        if (!ok) break;
        pool.n_workers++;
    }
    if (nt > pool.n_workers + 1) nt = pool.n_workers + 1;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.region.nt = nt;
    atomic_store(&pool.region.count, 0);
    atomic_store(&pool.nt, nt);
    atomic_store(&pool.left, pool.n_workers); /* every worker acknowledges every region */
    atomic_fetch_add(&pool.job, 1);
    wake();
    fn(ctx, 0, nt, &pool.region);
    wait_zero(&pool.left);
    atomic_flag_clear(&pool.busy);
}

int dp_threads(void) {
    int n = atomic_load(&threads);
    if (n > 0) return n;
    const char *e = getenv("DRIPLE_THREADS");
    char *end = NULL;
    long v = e ? strtol(e, &end, 10) : 0;
    if (e && end != e && !*end && v >= 1) {
        n = v > POOL_MAX ? POOL_MAX : (int)v;
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus < 1 ? 1 : cpus > DEFAULT_MAX ? DEFAULT_MAX : (int)cpus;
    }
    atomic_store(&threads, n);
    return n;
}

int dp_threads_set(int n) {
    if (n >= 1) atomic_store(&threads, n > POOL_MAX ? POOL_MAX : n);
    return dp_threads();
}
