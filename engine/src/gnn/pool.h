/* pool.h: the engine's persistent thread pool (private to gnn/). A region runs a function on the
 * calling thread and on up to dp_threads() - 1 workers, which wait between regions spinning a few
 * hundred microseconds, then sleeping. Work inside a region comes in phases of items. Each thread
 * of a region has its share of a phase's items, a contiguous run, which it takes first, in order
 * (so that a thread meets the same rows phase after phase, and their data stays in its core's
 * caches); then it takes what is left of the others' shares, so that a worker the system has
 * not scheduled (a loaded machine) delays nothing: whoever runs takes the items. A phase ends
 * when its last item is done. Results must not depend on which thread did an item. A caller
 * that finds the pool busy (another thread's region, or a region calling back into the engine)
 * runs its region alone. */
#ifndef DP_GNN_POOL_H
#define DP_GNN_POOL_H

#include <stdbool.h>

#define DP_POOL_MAX 64 /* threads of a region, the caller included */

struct dp_pool_region; /* a running region (opaque) */

/* A thread's place in a region's sequence of phases (dp_pool_cursor_init before the first). */
struct dp_pool_cursor {
    int  tid, nt;
    long end;                /* the current phase's items, numbered across phases */
    long base[DP_POOL_MAX];  /* each share's first item in this phase, numbered across phases */
    long stop[DP_POOL_MAX];  /* and its end */
    int  first[DP_POOL_MAX]; /* its first item's index within the phase */
    bool holding;            /* it took an item and has not marked it done */
};

/* Sets c up for thread tid of a region of nt (the values fn was called with). */
void dp_pool_cursor_init(struct dp_pool_cursor *c, int tid, int nt);
/* Runs fn(ctx, tid, nt, r) on the caller (tid 0) and on workers (tid 1 .. nt - 1) that join
 * while the region runs, nt <= want and <= dp_threads(); returns when the caller's call has
 * returned and every worker that joined has left. want <= 1 runs fn on the caller alone. */
void dp_pool_run(int want, void (*fn)(void *ctx, int tid, int nt, struct dp_pool_region *r),
                 void *ctx);
/* Starts the next phase, of n items, for this thread: every thread of the region goes through
 * the same phases in the same order. Share t is items [t n / nt, (t + 1) n / nt). */
void dp_pool_phase(struct dp_pool_region *r, struct dp_pool_cursor *c, int n);
/* The next item of the current phase for this thread to do (marking the one it took before
 * done): its own share's next, else the next left in another's; -1 when none is left. */
int dp_pool_next(struct dp_pool_region *r, struct dp_pool_cursor *c);
/* Waits until every item of the current phase is done (the phase's writes are then visible). */
void dp_pool_phase_wait(struct dp_pool_region *r, struct dp_pool_cursor *c);

#endif
