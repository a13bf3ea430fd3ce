/* pool.c: the persistent thread pool of pool.h and the thread count of dp/compute.h. Workers
 * are started on first need and live for the process. Waiting (workers between regions, every
 * thread at the end of a phase, the caller for workers still inside its region) spins on an
 * atomic for a few hundred microseconds, which covers a layer's imbalance or the gap between two
 * predictions (a wake-up from sleep costs tens of microseconds, a layer's share of them), then
 * sleeps on one condition variable; wakers broadcast only when someone sleeps.
 * All shared state is C11 atomics with sequentially consistent order, so that the joining
 * protocol (a worker counts itself in, then looks whether the region is still open; the caller
 * closes it, then waits for those counted in) can never lose a worker inside a closed region. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/compute.h"
#include "dp/status.h"

#define POOL_MAX DP_POOL_MAX
#define DEFAULT_MAX 4  /* the default never passes this: a 100-group graph's rows */
#define SPIN_WAIT 16000 /* pause instructions before sleeping (~300 us at ~20 ns each) */

struct dp_pool_region {
    struct {
        _Alignas(64) atomic_long taken; /* items taken from share t, over every phase */
    } share[POOL_MAX];
    _Alignas(64) atomic_long done;      /* items done, over every phase */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    atomic_int      sleepers;
    atomic_flag     busy;   /* a caller owns the pool */
    atomic_uint     job;    /* region generation */
    atomic_int      open;   /* the current region takes workers */
    atomic_int      inside; /* workers in the current region's function */
    atomic_int      nt;
    int             n_workers;
    void          (*fn)(void *, int, int, struct dp_pool_region *);
    void           *ctx;
    struct dp_pool_region region;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, ATOMIC_FLAG_INIT, 0, 0, 0, 0,
          0, NULL, NULL, {{{0}}, 0}};

static atomic_int threads = 0; /* 0 until first use */
/* The region generation when each worker was started: it may join every later region. */
static unsigned start_gen[POOL_MAX];

static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Waiting until a condition holds: spinning, then sleeping until a wake(). */
#define WAIT_UNTIL(cond)                                                                         \
    do {                                                                                         \
        int s_ = 0;                                                                              \
        while (!(cond) && s_++ < SPIN_WAIT) relax();                                             \
        if (cond) break;                                                                         \
        pthread_mutex_lock(&pool.mu);                                                            \
        atomic_fetch_add(&pool.sleepers, 1);                                                     \
        while (!(cond)) pthread_cond_wait(&pool.cv, &pool.mu);                                   \
        atomic_fetch_sub(&pool.sleepers, 1);                                                     \
        pthread_mutex_unlock(&pool.mu);                                                          \
    } while (0)

/* After a state change others may wait for: wakes sleepers, if any (the order of the change and
 * this load, against a sleeper's count and its re-check under the mutex, loses no wake-up). */
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
        WAIT_UNTIL(atomic_load(&pool.job) != seen);
        seen = atomic_load(&pool.job);
        atomic_fetch_add(&pool.inside, 1);
        /* still the region it was woken for, still open, and wanted */
        if (atomic_load(&pool.open) && atomic_load(&pool.job) == seen &&
            id + 1 < atomic_load(&pool.nt))
            pool.fn(pool.ctx, id + 1, atomic_load(&pool.nt), &pool.region);
        if (atomic_fetch_sub(&pool.inside, 1) == 1) wake();
    }
    return NULL;
}

void dp_pool_cursor_init(struct dp_pool_cursor *c, int tid, int nt) {
    DP_ASSERT(nt >= 1 && nt <= POOL_MAX && tid >= 0 && tid < nt);
    memset(c, 0, sizeof *c);
    c->tid = tid;
    c->nt = nt;
}

void dp_pool_phase(struct dp_pool_region *r, struct dp_pool_cursor *c, int n) {
    (void)r;
    DP_ASSERT(!c->holding && n >= 0);
    c->end += n;
    for (int t = 0; t < c->nt; t++) {
        c->first[t] = (int)((long)t * n / c->nt);
        c->base[t] = c->stop[t];
        c->stop[t] += (long)(t + 1) * n / c->nt - c->first[t];
    }
}

/* Marks the item this thread holds done; wakes the waiters when it was the phase's last. */
static void mark_done(struct dp_pool_region *r, struct dp_pool_cursor *c) {
    if (!c->holding) return;
    c->holding = false;
    if (atomic_fetch_add(&r->done, 1) + 1 == c->end) wake();
}

int dp_pool_next(struct dp_pool_region *r, struct dp_pool_cursor *c) {
    mark_done(r, c);
    for (int k = 0; k < c->nt; k++) { /* its own share, then the next ones' */
        const int t = (c->tid + k) % c->nt;
        atomic_long *taken = &r->share[t].taken;
        long v = atomic_load(taken);
        while (v < c->stop[t])
            if (atomic_compare_exchange_weak(taken, &v, v + 1)) {
                /* a phase's items are taken only after the one before has ended */
                DP_ASSERT(v >= c->base[t]);
                c->holding = true;
                return c->first[t] + (int)(v - c->base[t]);
            }
    }
    return -1;
}

void dp_pool_phase_wait(struct dp_pool_region *r, struct dp_pool_cursor *c) {
    mark_done(r, c);
    WAIT_UNTIL(atomic_load(&r->done) >= c->end);
}

void dp_pool_run(int want, void (*fn)(void *ctx, int tid, int nt, struct dp_pool_region *r),
                 void *ctx) {
    int nt = want < dp_threads() ? want : dp_threads();
    if (nt <= 1 || atomic_flag_test_and_set(&pool.busy)) {
        struct dp_pool_region alone;
        atomic_init(&alone.share[0].taken, 0);
        atomic_init(&alone.done, 0);
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
    /* no worker is inside (the last region waited for them): set the region up, open it */
    pool.fn = fn;
    pool.ctx = ctx;
    atomic_store(&pool.nt, nt);
    for (int t = 0; t < nt; t++) atomic_store(&pool.region.share[t].taken, 0);
    atomic_store(&pool.region.done, 0);
    atomic_store(&pool.open, 1);
    atomic_fetch_add(&pool.job, 1);
    wake();
    fn(ctx, 0, nt, &pool.region);
    /* close it; workers that counted themselves in before may still be finishing */
    atomic_store(&pool.open, 0);
    WAIT_UNTIL(atomic_load(&pool.inside) == 0);
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
