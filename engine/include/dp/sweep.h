/* sweep.h: the setting-aware inspector's training data ("driple-sweep/1"): training graphs
 * (a model with an optimizer and a precision at a batch size: its grouped graph with the cost
 * features and its whole-graph profile) and rows, each one graph simulated on one setting: the
 * 12 metrics, the iteration time and the GPU memory footprint. A graph is stored once for all
 * the settings it ran on, so its embedding is computed once. Every label here is simulated.
 * dp_sweep_build makes one from the zoo and the architecture generator; dp_sweep_dataset picks
 * one setting's rows as a driple-dataset/1 for the per-setting inspectors. */
#ifndef DP_SWEEP_H
#define DP_SWEEP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/coarsen.h"
#include "dp/dataset.h"
#include "dp/grouped.h"
#include "dp/profile.h"
#include "dp/settings.h"
#include "dp/status.h"

struct dp_sweep_graph {
    char              *graph;     /* "zoo:resnet50", "generated:gen-cnn-s1-4"; owned */
    char              *model;     /* "resnet50" (its family: dp_zoo_family); owned */
    char               optimizer[16];
    enum dp_precision  precision;
    int64_t            batch;
    struct dp_grouped *grouped;   /* with the cost features; owned */
    struct dp_profile  profile;
};

struct dp_sweep_row {
    int               graph;      /* index into graphs */
    struct dp_setting setting;    /* its precision is the graph's; inspector "" */
    double            labels[DP_N_OUTPUTS]; /* Driple order */
    double            iteration_ms, memory_gb;
    bool              oom;        /* the footprint exceeds the GPU's memory (labels still set) */
};

struct dp_sweep {
    int                    n_graphs, n_rows;
    struct dp_sweep_graph *graphs;
    struct dp_sweep_row   *rows;
    struct dp_source       source; /* kind "simulated" */
};

/* Frees everything a sweep owns and zeroes it; NULL-safe. */
void dp_sweep_free(struct dp_sweep *s);

/* The batch sizes a sweep draws from: a model's default x 1/16, 1/8, 1/4, 3/8, 1/2, 3/4, 1,
 * 3/2, 2, 3, 4, 6. */
#define DP_SWEEP_BATCH_FACTORS 12

/* What dp_sweep_build makes. Graphs: every zoo model of `models` (NULL: all) with every
 * optimizer of `optimizers` (NULL: all), `zoo_batches` batch sizes drawn from the default x
 * 1/16 .. 6, and the generated architectures 0 .. n_generated - 1 of gen_seed with one drawn
 * optimizer and `gen_batches` batch sizes; each in fp32 (when `fp32`) and mixed precision (when
 * `mixed`). Rows: each graph on every setting of `fixed` of its precision (a setting list, may be
 * NULL) for which it is among the first `fixed_quota` graphs of that list entry (0: all), and on
 * `random_settings` settings drawn from the space below. Rows whose footprint exceeds the GPU
 * keep oom set. */
struct dp_sweep_opts {
    const char                  *models;
    const char                  *optimizers;
    int                          zoo_batches;     /* 12 */
    int                          n_generated;
    uint64_t                     gen_seed;        /* 1 */
    int                          gen_batches;     /* 3 */
    bool                         fp32;            /* true */
    bool                         mixed;           /* true */
    const struct dp_settings    *fixed;
    int                          fixed_quota;
    int                          random_settings; /* 8 */
    /* The space random settings come from: GPUs of the catalog the simulator can run (all when
     * gpus is NULL, else a comma list of names), 1 .. max_workers workers (log-uniform), PS or
     * all-reduce as allowed, every network (PCIe/NVLink inside one machine when the workers fit),
     * placement, TensorFlow or PyTorch as allowed. */
    const char                  *gpus;
    int                          max_workers;     /* 64 */
    bool                         allreduce;       /* draw all-reduce settings too */
    bool                         pytorch;         /* draw PyTorch settings too */
    const struct dp_gpu_catalog *catalog;         /* required */
    const struct dp_op_weights  *weights;         /* the third group feature; may be NULL */
    int                          groups;          /* coarsening k; 0 = DP_DEFAULT_GROUPS */
    uint64_t                     seed;            /* draws and the simulator's jitter */
    int                          threads;         /* 0 = 1 */
    atomic_int                  *cancel;          /* may be NULL: stops between graphs */
    void (*progress)(int done, int total, void *ud); /* graphs done, may be NULL */
    void                        *ud;
};
/* The defaults in the comments above (catalog NULL: the caller sets it). */
void dp_sweep_opts_default(struct dp_sweep_opts *o);

/* Builds a sweep (simulated) into *out (owned by the caller: dp_sweep_free). Fails on an unknown
 * model, optimizer or GPU name, neither precision asked, a GPU the simulator cannot run in `fixed`, a graph or simulation error
 * (naming the graph and setting), DP_ERR_CANCELLED when cancelled. */
enum dp_status dp_sweep_build(const struct dp_sweep_opts *o, struct dp_sweep *out,
                              struct dp_error *err);

/* Reads and writes driple-sweep/1. Rows name their setting by id, parsed against the catalog
 * (dp_setting_parse_id). Failures name "<path>:<json path>: <what>"; on failure *out is empty. */
enum dp_status dp_sweep_load(const char *path, const struct dp_gpu_catalog *cat,
                             struct dp_sweep *out, struct dp_error *err);
enum dp_status dp_sweep_parse(const char *text, size_t len, const char *name,
                              const struct dp_gpu_catalog *cat, struct dp_sweep *out,
                              struct dp_error *err);
enum dp_status dp_sweep_save(const struct dp_sweep *s, const char *path, struct dp_error *err);

/* The rows of one setting (same cluster as s, dp_setting_same_cluster) that fit its GPU, as a
 * dataset for that setting (ds initialised inside; free with dp_dataset_free), in the sweep's
 * order. max_zoo > 0 keeps only the first max_zoo rows of zoo graphs in an order spread over
 * the models (round-robin over them; within a model by batch draw, then optimizer), so that any
 * quota covers them evenly; rows of generated graphs are all kept. with_cost keeps the cost
 * features in the samples' grouped graphs. *n_oom (may be NULL) counts the setting's rows left
 * out because they do not fit. Never fails but for DP_ERR_NOMEM. */
enum dp_status dp_sweep_dataset(const struct dp_sweep *sw, const struct dp_setting *s,
                                bool with_cost, int max_zoo, struct dp_dataset *ds, int *n_oom,
                                struct dp_error *err);

#endif
