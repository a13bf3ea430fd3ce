/* grouped.h: the coarsened graph an inspector reads ("driple-grouped/1"): per group the three
 * features [sum of tensor sizes, number of ops, sum of op-type weights], undirected edges (i < j,
 * no self loops, no duplicates) and, optionally, each group's member op names. */
#ifndef DP_GROUPED_H
#define DP_GROUPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/status.h"

#define DP_N_FEATURES 3

struct dp_grouped {
    char    *graph;      /* name of the source graph */
    int64_t  batch;      /* batch size the features were computed for; 0 = unknown */
    int64_t  seed;       /* coarsening seed; -1 = unknown */
    int      n_groups;
    double  *x;          /* n_groups x DP_N_FEATURES, row-major */
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
/* Frees g; NULL-safe. */
void dp_grouped_free(struct dp_grouped *g);
/* A deep copy of g (features, edges, and the member names when with_members and g has them).
 * Owned by the caller; free with dp_grouped_free. NULL when out of memory. */
struct dp_grouped *dp_grouped_clone(const struct dp_grouped *g, bool with_members);

/* Reads a driple-grouped/1 file. Checks the format, feature values (finite, >= 0), edge indices
 * (in range, no self loops; duplicates and (j, i) orderings are normalised). On failure returns
 * the status with "<path>:<json path>: <what>" in err and leaves *out untouched. */
enum dp_status dp_grouped_load_json(const char *path, struct dp_grouped **out, struct dp_error *err);
/* The same from a string already in memory; `name` is used in messages. */
enum dp_status dp_grouped_parse_json(const char *text, size_t len, const char *name,
                                     struct dp_grouped **out, struct dp_error *err);
/* Writes g as driple-grouped/1 (with members when present). */
enum dp_status dp_grouped_save_json(const struct dp_grouped *g, const char *path,
                                    struct dp_error *err);

#endif
