/* pool.h: the engine's persistent thread pool (private to gnn/): one parallel region at a time
 * runs a function on the calling thread and up to dp_threads() - 1 workers, which wait between
 * regions spinning a few microseconds, then sleeping. Inside a region, dp_pool_barrier waits for
 * every thread of the region (spin, then sleep). A caller that finds the pool busy (another
 * thread's region, or a region calling back into the engine) runs its region on itself alone,
 * so that regions never deadlock and results never depend on the thread count's availability. */
#ifndef DP_GNN_POOL_H
#define DP_GNN_POOL_H

struct dp_pool_region; /* a running region (opaque) */

/* Runs fn(ctx, tid, nt, r) on nt threads (tid 0 .. nt-1, tid 0 the caller), nt <= want and
 * <= dp_threads(); returns when every thread has returned. want <= 1 runs fn on the caller. */
void dp_pool_run(int want, void (*fn)(void *ctx, int tid, int nt, struct dp_pool_region *r),
                 void *ctx);
/* Waits until every thread of region r has called it (the same number of times). */
void dp_pool_barrier(struct dp_pool_region *r);
/* Rows [*r0, *r1) of n for thread tid of nt (near-equal contiguous shares). */
void dp_pool_share(int n, int tid, int nt, int *r0, int *r1);

#endif
