/* coarsen.h: the paper's preprocessing and coarsening. Keep GPU ops, drop isolated ops, keep the
 * largest connected component, group the ops with asynchronous fluid communities (k groups,
 * seeded), then compute per-group features [sum tensor size, #ops, sum op-type weight].
 * The partition depends only on structure; features are recomputed per batch size (cheap).
 *
 * Decisions: the op graph is taken as undirected; data and control inputs both count as edges
 * (a control dependency is a real ordering edge between two GPU ops); multi-edges collapse and
 * self loops are ignored (as in Driple's own code). Fluid communities reproduce networkx's
 * asyn_fluidc(G, k, seed=S) (Pares et al. 2017) exactly: Python's MT19937 seeded as
 * random.Random(S), the same vertex order (graph order) and adjacency order (that of the graph
 * Driple's code builds, including its subgraph copy when there are several components), so a
 * seed gives the same grouping on any machine and the same groups as the published pipeline.
 * Differences: sweeps continue past max_iter while some op has no community yet (networkx
 * would leave it out), and max_iter counts as in networkx 2.x (at most max_iter + 1 sweeps). */
#ifndef DP_COARSEN_H
#define DP_COARSEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/grouped.h"

#define DP_DEFAULT_GROUPS   100
#define DP_DEFAULT_SEED     42
#define DP_DEFAULT_MAX_ITER 100 /* networkx's asyn_fluidc default */

/* --- op-type weights (assets/op_weights.json, "driple-op-weights/1") ---------------------- */

/* The table: op type -> relative frequency over a corpus of training graphs. */
struct dp_op_weights;
/* Reads a driple-op-weights/1 file ({format, source, weights: {op: w}}). New table owned by the
 * caller (free with dp_op_weights_free); on failure "<path>:<json path>: <what>". */
enum dp_status dp_op_weights_load(const char *path, struct dp_op_weights **out, struct dp_error *err);
/* The same from memory (`name` in messages). */
enum dp_status dp_op_weights_parse(const char *text, size_t len, const char *name,
                                   struct dp_op_weights **out, struct dp_error *err);
/* Loads `path`, or when it is NULL the shipped assets/op_weights.json found by dp_shipped_path
 * (shipped.h), whose DP_ERR_NOT_FOUND names the places tried. */
enum dp_status dp_op_weights_load_default(const char *path, struct dp_op_weights **out,
                                          struct dp_error *err);
/* Frees the table; NULL-safe. */
void dp_op_weights_free(struct dp_op_weights *w);
/* Weight of an op type; *known (may be NULL) is false when the type is absent (weight 0).
 * w may be NULL (every type unknown). */
double dp_op_weight(const struct dp_op_weights *w, const char *op, bool *known);
/* The table's "source" text (how it was made); "" when absent. */
const char *dp_op_weights_source(const struct dp_op_weights *w);
/* The number of op types in the table (0 for NULL). */
size_t dp_op_weights_count(const struct dp_op_weights *w);

/* Builds a table from a corpus: each type's share of all counted ops (the GPU ops of each graph;
 * every op of a graph that places none on a GPU). New table owned by the caller. */
enum dp_status dp_op_weights_build(const struct dp_graph *const *graphs, size_t n_graphs,
                                   const char *source, struct dp_op_weights **out,
                                   struct dp_error *err);
/* Writes the table as driple-op-weights/1 (types sorted by name; "-" = stdout). */
enum dp_status dp_op_weights_save(const struct dp_op_weights *w, const char *path,
                                  struct dp_error *err);

/* --- preprocessing and grouping ----------------------------------------------------------- */

/* True when no op of g names a device (a graph exported without placement). Preprocessing then
 * counts every op as a GPU op rather than finding none; a graph that places its ops, but none
 * on a GPU, is still refused. */
bool dp_graph_unplaced(const struct dp_graph *g);
/* Whether preprocessing takes op n as a GPU op, `unplaced` being dp_graph_unplaced(g). */
bool dp_graph_op_on_gpu(const struct dp_node *n, bool unplaced);

/* A grouping of a graph's kept ops. */
struct dp_partition {
    int  n_ops;       /* ops kept (GPU, non-isolated, largest component) */
    int *op_index;    /* n_ops: index of each kept op in the source graph, ascending */
    int *group;       /* n_ops: its group, in [0, n_groups) */
    int  n_groups;
    int  n_edges;     /* group adjacency: 2 x n_edges, i < j, sorted, unique */
    int *edges;
    int  n_disconnected; /* groups whose ops do not form one connected piece (reported) */
    int  iterations;     /* fluid-community sweeps run */
    bool unplaced;       /* no op named a device: every op was taken as a GPU op */
    int64_t seed;
    /* Preprocessing counts, for `graph info` and messages: GPU ops, those without any edge to
     * another GPU op (dropped), connected components among the rest. */
    int  n_gpu_ops, n_isolated, n_components;
    int64_t n_gpu_edges; /* undirected edges between GPU ops (multi-edges collapsed) */
};

struct dp_coarsen_opts {
    int     k;        /* groups wanted; k = min(k, n_ops); 0 = DP_DEFAULT_GROUPS */
    int64_t seed;     /* any value; callers start from DP_DEFAULT_SEED */
    int     max_iter; /* 0 = DP_DEFAULT_MAX_ITER */
};

/* Preprocesses and groups g (opts may be NULL: defaults). Fails (DP_ERR_INVALID) on a graph with
 * no GPU op, no edge between GPU ops, or k < 0. Returns a new partition owned by the caller
 * (free with dp_partition_free). */
enum dp_status dp_coarsen(const struct dp_graph *g, const struct dp_coarsen_opts *opts,
                          struct dp_partition **out, struct dp_error *err);
/* Frees the partition; NULL-safe. */
void dp_partition_free(struct dp_partition *p);

/* Preprocessing statistics without grouping (never fails on a graph without GPU ops); the
 * counts mean what they mean in struct dp_partition; largest_component is its op count. */
struct dp_graph_stats {
    int     n_ops, n_gpu_ops, n_isolated, n_components, largest_component;
    bool    unplaced;        /* as in struct dp_partition */
    int64_t n_gpu_edges;
    int     n_variables;     /* ops with params > 0 or a variable op type */
    double  param_count;     /* sum of params */
    double  param_bytes;     /* sum of params x dtype size (4 when the dtype is unknown) */
};
/* Fills *out; fails only when out of memory (DP_ERR_NOMEM, *out untouched). */
enum dp_status dp_graph_stats(const struct dp_graph *g, struct dp_graph_stats *out,
                              struct dp_error *err);

/* The grouped graph of partition p at batch size `batch` (0 = the graph's exported batch), with
 * member names and the cost features (per group: sum of dp_cost_node FLOPs and bytes, sum of
 * params x dtype size, 4 bytes when the dtype is unknown). w may be NULL (every weight 0). Unknown op types weigh 0; their names are
 * reported through *unknown (a comma-separated list, each type once, caller frees; NULL when
 * none; the argument may be NULL). Fails when a kept op has a batch dimension and no batch size
 * is known. New object owned by the caller. */
enum dp_status dp_features(const struct dp_graph *g, const struct dp_partition *p,
                           const struct dp_op_weights *w, int64_t batch, struct dp_grouped **out,
                           char **unknown, struct dp_error *err);

/* Convenience: dp_coarsen then dp_features (opts may be NULL). */
enum dp_status dp_graph_group(const struct dp_graph *g, const struct dp_coarsen_opts *opts,
                              const struct dp_op_weights *w, int64_t batch,
                              struct dp_grouped **out, char **unknown, struct dp_error *err);

#endif
