/* coarsen.h: the paper's preprocessing and coarsening. Keep GPU ops, drop isolated ops, keep the
 * largest connected component, group the ops with asynchronous fluid communities (k groups,
 * seeded), then compute per-group features [sum tensor size, #ops, sum op-type weight].
 * The partition depends only on structure; features are recomputed per batch size (cheap). */
#ifndef DP_COARSEN_H
#define DP_COARSEN_H

#include <stdint.h>

#include "dp/graph.h"
#include "dp/grouped.h"

#define DP_DEFAULT_GROUPS 100
#define DP_DEFAULT_SEED   42

/* The op-type weight table (assets/op_weights.json, "driple-op-weights/1"). */
struct dp_op_weights;
enum dp_status dp_op_weights_load(const char *path, struct dp_op_weights **out, struct dp_error *err);
void dp_op_weights_free(struct dp_op_weights *w);
/* Weight of an op type; *known (may be NULL) is false when the type is absent (weight 0). */
double dp_op_weight(const struct dp_op_weights *w, const char *op, bool *known);

/* A grouping of a graph's kept ops. */
struct dp_partition {
    int  n_ops;       /* ops kept (GPU, non-isolated, largest component) */
    int *op_index;    /* n_ops: index of each kept op in the source graph */
    int *group;       /* n_ops: its group, in [0, n_groups) */
    int  n_groups;
    int  n_edges;     /* group adjacency: 2 x n_edges, i < j, sorted, unique */
    int *edges;
    int  n_disconnected; /* groups whose ops do not form one connected piece (reported) */
    /* Preprocessing counts, for `graph info` and messages. */
    int  n_gpu_ops, n_isolated, n_components;
};

struct dp_coarsen_opts {
    int     k;      /* groups wanted; k = min(k, n_ops); 0 = DP_DEFAULT_GROUPS */
    int64_t seed;   /* DP_DEFAULT_SEED by default */
};

/* Preprocesses and groups g. Fails (DP_ERR_INVALID) on a graph with no GPU op or with k < 1.
 * Returns a new partition owned by the caller (free with dp_partition_free). */
enum dp_status dp_coarsen(const struct dp_graph *g, const struct dp_coarsen_opts *opts,
                          struct dp_partition **out, struct dp_error *err);
void dp_partition_free(struct dp_partition *p);

/* The grouped graph of partition p at batch size `batch` (0 = the graph's exported batch), with
 * member names. Unknown op types weigh 0; their names are reported through *unknown (a
 * comma-separated list, caller frees; may be NULL). New object owned by the caller. */
enum dp_status dp_features(const struct dp_graph *g, const struct dp_partition *p,
                           const struct dp_op_weights *w, int64_t batch, struct dp_grouped **out,
                           char **unknown, struct dp_error *err);

#endif
