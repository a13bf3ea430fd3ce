/* grouped.h: the coarsened graph an inspector reads ("driple-grouped/1"): per group the three
 * features [sum of tensor sizes, number of ops, sum of op-type weights], optionally three cost
 * features [sum of FLOPs, sum of bytes moved, sum of parameter bytes] (per training step, at the
 * graph's batch size; fields "flops", "bytes", "param_bytes"), undirected edges (i < j, no self
 * loops, no duplicates) and, optionally, each group's member op names. */
#ifndef DP_GROUPED_H
#define DP_GROUPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/status.h"

#define DP_N_FEATURES 3      /* the published features, always present */
#define DP_N_COST_FEATURES 3 /* the optional cost features */
#define DP_N_FEATURES_MAX (DP_N_FEATURES + DP_N_COST_FEATURES)

struct dp_grouped {
    char    *graph;      /* name of the source graph */
    int64_t  batch;      /* batch size the features were computed for; 0 = unknown */
    int64_t  seed;       /* coarsening seed; -1 = unknown */
    int      n_groups;
    double  *x;          /* n_groups x DP_N_FEATURES, row-major */
    double  *cost;       /* n_groups x DP_N_COST_FEATURES, row-major; NULL when absent */
    int      n_edges;
    int     *edges;      /* 2 x n_edges: edges[2e] < edges[2e+1] */
    /* Members, optional (member_start == NULL when absent): group g holds
     * members[member_start[g] .. member_start[g+1]-1]. */
    int     *member_start;
    char   **members;
};

/* A grouped graph with n_groups zeroed feature rows and room for n_edges edges (n_edges set);
 * no members. Owned by the caller; free with dp_grouped_free. NULL when out of memory. */
struct dp_grouped *dp_grouped_init(const char *graph, int n_groups, int n_edges);
/* Gives g zeroed cost features when it has none (kept when it has). false when out of memory. */
bool dp_grouped_add_cost(struct dp_grouped *g);
/* Drops g's cost features (NULL-safe on g->cost). */
void dp_grouped_drop_cost(struct dp_grouped *g);
/* Feature f of group i: f < DP_N_FEATURES the published ones, then the cost features (0 when g
 * has none). f must be in [0, DP_N_FEATURES_MAX), i in [0, n_groups). */
static inline double dp_grouped_feat(const struct dp_grouped *g, int i, int f) {
    if (f < DP_N_FEATURES) return g->x[(size_t)i * DP_N_FEATURES + f];
    return g->cost ? g->cost[(size_t)i * DP_N_COST_FEATURES + (f - DP_N_FEATURES)] : 0.0;
}
/* Frees g; NULL-safe. */
void dp_grouped_free(struct dp_grouped *g);
/* A deep copy of g (features with the cost features when present, edges, and the member names when with_members and g has them).
 * Owned by the caller; free with dp_grouped_free. NULL when out of memory. */
struct dp_grouped *dp_grouped_clone(const struct dp_grouped *g, bool with_members);

/* Reads a driple-grouped/1 file. The cost features are read when the groups have them (all or
 * none; a file without them loads with g->cost NULL). Checks the format, feature values (finite,
 * >= 0), edge indices
 * (in range, no self loops; duplicates and (j, i) orderings are normalised). On failure returns
 * the status with "<path>:<json path>: <what>" in err and leaves *out untouched. */
enum dp_status dp_grouped_load_json(const char *path, struct dp_grouped **out, struct dp_error *err);
/* The same from a string already in memory; `name` is used in messages. */
enum dp_status dp_grouped_parse_json(const char *text, size_t len, const char *name,
                                     struct dp_grouped **out, struct dp_error *err);
/* Writes g as driple-grouped/1 (with cost features and members when present). */
enum dp_status dp_grouped_save_json(const struct dp_grouped *g, const char *path,
                                    struct dp_error *err);

#endif
