/* session.h: the what-if predictor that both front ends call (the explorer, and predict,
 * compare and explain on the command line), so that its logic exists once.
 *
 * A session holds the GPU catalog, the setting list and the op-type weights; one workload (a
 * graph coarsened once and its grouped features at the current batch size, or a grouped graph
 * read from a file); the inspectors loaded so far and those transferred during the session; and
 * two caches: graph embeddings per (inspector body, workload, batch) and simulations per
 * (cluster, workload, batch). For a setting it finds the inspector that serves it and says why
 * (dp_session_resolve), predicts the 12 outputs and the derived figures (dp_session_predict)
 * and simulates (dp_session_simulate). Changing the batch size recomputes the features, never
 * the grouping; inspectors that share a body share one embedding, so a setting change costs one
 * MLP head.
 *
 *     struct dp_session *ss;
 *     dp_session_open(&(struct dp_session_opts){0}, &ss, &err);
 *     dp_session_load_graph(ss, "resnet50.json", NULL, NULL, &err);
 *     dp_session_set_batch(ss, 64, &err);
 *     struct dp_prediction p;
 *     dp_session_predict(ss, &setting, DP_RESOLVE_NEAREST, &p, &err);
 *     ... p.m[DP_OUT_GPU_UTIL_ACTIVE], p.d[DP_D_THROUGHPUT], dp_pred_source_name(p.from.source) ...
 *     dp_session_free(ss);
 *
 * A session is used by one thread at a time. A background job works on a dp_transfer_plan,
 * which holds copies and pointers to what the session keeps unchanged while it lives. */
#ifndef DP_SESSION_H
#define DP_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/coarsen.h"
#include "dp/dataset.h"
#include "dp/explain.h"
#include "dp/graph.h"
#include "dp/graph_io.h"
#include "dp/grouped.h"
#include "dp/inspector.h"
#include "dp/metrics.h"
#include "dp/sa.h"
#include "dp/settings.h"
#include "dp/sim.h"
#include "dp/status.h"

struct dp_session;

/* The files a session starts from; NULL: the shipped one (dp_shipped_path). */
struct dp_session_opts {
    const char *gpus;     /* GPU catalog */
    const char *settings; /* setting list (its GPUs by their catalog names where it has them) */
    const char *weights;  /* op-type weights */
    const char *sa;       /* the setting-aware inspector (dp/sa.h); NULL: the shipped
                             assets/inspectors/setting-aware.json when it exists (none
                             otherwise); "": none */
};
/* Loads the catalog, the setting list, the weights and the setting-aware inspector (a named
 * file that fails to load fails the open; the shipped one's absence does not). New session owned
 * by the caller
 * (dp_session_free); on failure err names the file and place, *out untouched. */
enum dp_status dp_session_open(const struct dp_session_opts *o, struct dp_session **out,
                               struct dp_error *err);
/* Frees everything, inspectors included; NULL-safe. A transfer plan made from it must not be
 * running. */
void dp_session_free(struct dp_session *ss);
/* What it was opened with (borrowed; valid while the session lives). */
const struct dp_gpu_catalog *dp_session_catalog(const struct dp_session *ss);
const struct dp_settings    *dp_session_settings(const struct dp_session *ss);
const struct dp_op_weights  *dp_session_weights(const struct dp_session *ss);
/* The setting-aware inspector and its file (borrowed; NULL / "" when the session has none). */
const struct dp_sa_inspector *dp_session_sa(const struct dp_session *ss);
const char                   *dp_session_sa_path(const struct dp_session *ss);

/* ---- the workload ---- */

/* Loads the graph at path (io: import options, may be NULL) and coarsens it (co: groups and
 * seed; NULL: the defaults); dp_session_set_batch then computes its features. Replaces any
 * workload; on failure the old one stays and err names the file. */
enum dp_status dp_session_load_graph(struct dp_session *ss, const char *path,
                                     const struct dp_import_opts *io,
                                     const struct dp_coarsen_opts *co, struct dp_error *err);
/* Reads a grouped graph (driple-grouped/1) as the workload: its features are fixed (no batch
 * change, no simulation: there is no graph). */
enum dp_status dp_session_load_grouped(struct dp_session *ss, const char *path,
                                       struct dp_error *err);
/* The same for a grouped graph in memory (a benchmark's synthetic one); takes g (also on
 * failure), `name` for messages. */
enum dp_status dp_session_set_grouped(struct dp_session *ss, struct dp_grouped *g,
                                      const char *name, struct dp_error *err);
/* Computes the graph's features at `batch` (1 .. 2^30; 0: the graph's own, which must then be
 * known); the grouping stays. Fails for a grouped workload (DP_ERR_UNSUPPORTED) and on a bad
 * batch (naming the file); the old features then stay. */
enum dp_status dp_session_set_batch(struct dp_session *ss, int64_t batch, struct dp_error *err);
/* The workload (borrowed, NULL when none; the grouped graph changes with the batch size:
 * dp_session_features_gen counts its changes). */
const struct dp_graph     *dp_session_graph(const struct dp_session *ss);
const struct dp_partition *dp_session_partition(const struct dp_session *ss);
const struct dp_grouped   *dp_session_grouped(const struct dp_session *ss);
long                       dp_session_features_gen(const struct dp_session *ss);
int64_t                    dp_session_batch(const struct dp_session *ss); /* 0: none */
/* The graph's parameter count (the sum over its variables); NaN for a grouped file. */
double      dp_session_params(const struct dp_session *ss);
/* Op types of the graph that the weights do not know (counted 0), ", "-separated; NULL when
 * every type is known. Borrowed. */
const char *dp_session_unknown_ops(const struct dp_session *ss);

/* What the epoch figures need (dp/metrics.h): samples per epoch (NaN: the workload's family
 * default, dp_session_epoch_default; <= 0: none) and the price per GPU-hour for every setting
 * (NaN: each GPU's catalog price, which may be unknown). Both NaN until set. */
void dp_session_set_economics(struct dp_session *ss, double epoch_samples, double price);
/* Samples per epoch the epoch figures use: the one set, else the workload's dataset family
 * default: a graph whose input pipeline gives sequences of L token ids (integers, [batch, L]; or
 * a zoo model of input kind "sequence") has DP_EPOCH_TOKENS_DEFAULT / (L x its token streams)
 * sequences, any other ImageNet's DP_EPOCH_SAMPLES_DEFAULT images. *what (may be NULL) says
 * which, for people ("set by the user", "ImageNet-1k training images (default; --epoch-samples
 * sets yours)", ...; static storage). */
double dp_session_epoch_samples(const struct dp_session *ss, const char **what);
/* The price per GPU-hour that setting s's cost uses (s NULL: only a price set for all): the
 * one set with dp_session_set_economics, else the catalog's for s's GPU; NaN when none is known.
 * *source (may be NULL) gets where it comes from ("set by the user", the catalog's
 * price_source, or "no price read"; borrowed while the session lives). */
double dp_session_price(const struct dp_session *ss, const struct dp_setting *s,
                        const char **source);

/* ---- which inspector serves a setting ---- */

/* Where a prediction comes from. Another kind of inspector (one that also reads the setting)
 * becomes a value here and a step in dp_session_resolve's order; callers show the source by
 * name and never decide it themselves. */
enum dp_pred_source {
    DP_SOURCE_NONE,          /* no inspector: only the simulator */
    DP_SOURCE_TRAINED,       /* an inspector trained for this setting (a file) */
    DP_SOURCE_TRANSFERRED,   /* one transferred to this setting (a file, or this session) */
    DP_SOURCE_NEAREST,       /* the nearest setting's inspector: extrapolated */
    DP_SOURCE_SETTING_AWARE, /* the setting-aware inspector (dp/sa.h): any setting */
    DP_SOURCE_COUNT
};
/* "none", "trained", "transferred", "nearest (extrapolated)", "setting-aware". */
const char *dp_pred_source_name(enum dp_pred_source s);

/* How dp_session_resolve may look. */
enum {
    DP_RESOLVE_NEAREST = 1 << 0, /* fall back to the nearest setting's inspector */
    DP_RESOLVE_DEFER = 1 << 1,   /* load no file: one not loaded yet leaves the answer pending */
    DP_RESOLVE_PER_SETTING = 1 << 2, /* skip the setting-aware inspector */
};

struct dp_resolution {
    enum dp_pred_source source;
    int            inspector;             /* dp_session_inspector index; -1 when none */
    bool           pending;               /* DP_RESOLVE_DEFER: the file waits to be loaded */
    char           setting_id[DP_NAME_MAX]; /* whom the inspector was made for (the nearest
                                              setting's id for DP_SOURCE_NEAREST) */
    char           path[512];             /* its file ("(session:<id>)" for a session transfer) */
};
/* Finds the inspector for setting s, in order: the latest one transferred to the same cluster
 * in this session; the user directory's file for s (dp_user_inspector_path: one the user made
 * for this cluster); the setting-aware inspector, when the session has one, the workload is not
 * a grouped file (it reads the graph's profile) and not DP_RESOLVE_PER_SETTING (out->inspector
 * is then -1); the file s names (a list
 * entry) when it exists; the file of the list's entry for the same cluster; with
 * DP_RESOLVE_NEAREST, the nearest list setting that has a file (dp_settings_nearest). A trained
 * or transferred file is told apart by its provenance. When none serves (or the one found fails
 * to load), DP_ERR_NOT_FOUND (or the loader's status) with a message naming the files looked
 * for and how to make one; out->source is then DP_SOURCE_NONE. */
enum dp_status dp_session_resolve(struct dp_session *ss, const struct dp_setting *s,
                                  unsigned flags, struct dp_resolution *out,
                                  struct dp_error *err);
/* Loads the inspector file at path into the session (once; later calls return the same
 * index): an inspector the user named. Its source is told by its provenance. Returns the index
 * (>= 0), or -1 with err set. */
int dp_session_use_file(struct dp_session *ss, const char *path, struct dp_error *err);
/* The loaded inspector i (borrowed; NULL when i is out of range or its file failed to load),
 * the file it came from ("(session:<id>)" for a transfer not saved yet; "" out of range), and
 * how many the session holds (loaded, failed and transferred). */
const struct dp_inspector *dp_session_inspector(const struct dp_session *ss, int i);
const char                *dp_session_inspector_path(const struct dp_session *ss, int i);
int                        dp_session_n_inspectors(const struct dp_session *ss);
/* The setting that a setting id names: the list's entry (dp_settings_find), else the id parsed
 * against the catalog (dp_setting_parse_id); *listed says which. DP_ERR_NOT_FOUND or
 * DP_ERR_INVALID naming the list and why the id does not parse. */
enum dp_status dp_session_find_setting(const struct dp_session *ss, const char *id,
                                       struct dp_setting *out, bool *listed,
                                       struct dp_error *err);

/* ---- predictions ---- */

/* One setting's prediction at the current batch. */
struct dp_prediction {
    bool           ok;                 /* m, raw and d hold an inspector's prediction */
    bool           has_interval;       /* lo, hi, d_lo, d_hi hold an 80% interval */
    bool           pending;            /* DP_RESOLVE_DEFER and the inspector is not loaded */
    struct dp_resolution from;         /* which inspector, and why */
    char           origin[16];         /* its provenance: "scratch", "transfer", "imported",
                                          "setting-aware", "fine-tuned" */
    char           data[16];           /* the kind of data it learnt from ("simulated", ...) */
    float          raw[DP_N_OUTPUTS];  /* the network's outputs (before the label scales; NaN for
                                          the setting-aware inspector, whose outputs are
                                          ensemble means) */
    double         m[DP_N_OUTPUTS];    /* the outputs in their units, within their physical
                                          range (never below 0; setting-aware: utilisations at
                                          most 100 %, network rates at most the line rate) */
    unsigned       clamped;            /* bit o: output o came out outside its range and reads
                                          its bound; bits DP_N_OUTPUTS + 0 / 1: the setting-aware
                                          iteration_ms / memory_gb (kept above 0) */
    double         d[DP_N_DERIVED];    /* dp_derive of m (setting-aware: iteration_ms and
                                          memory_gb predicted directly; else memory: the
                                          simulator's, when known) */
    double         lo[DP_N_OUTPUTS], hi[DP_N_OUTPUTS];   /* the 80% interval of m */
    double         d_lo[DP_N_DERIVED], d_hi[DP_N_DERIVED]; /* of d, for the figures that follow
                                          from the predicted iteration time and memory (NaN for
                                          the others) */
    bool           ood;                /* the graph is unlike any the setting-aware inspector was
                                          trained on: its numbers are a guess */
    double         ood_score;          /* its distance over the threshold (> 1: ood); NaN */
    bool           oom;                /* the predicted footprint exceeds the GPU's memory */
    struct dp_derive_in facts;         /* what d was derived from besides m */
    char           note[256];          /* why there is no prediction */
};
/* Predicts setting s (resolution flags as dp_session_resolve) with the workload's features:
 * the embedding of the inspector's body is computed once per features (cached), then the head.
 * No inspector is not a failure: out->ok false, out->from.source DP_SOURCE_NONE and out->note
 * says why (so is an inspector whose prediction is not finite). Fails only without a workload
 * (DP_ERR_INVALID) or out of memory. */
enum dp_status dp_session_predict(struct dp_session *ss, const struct dp_setting *s,
                                  unsigned flags, struct dp_prediction *out,
                                  struct dp_error *err);
/* Predicts n settings (out: n predictions) as dp_session_predict predicts each, with the same
 * flags and the same results, the rows the setting-aware inspector serves in one pass of its
 * head (a Compare over hundreds of settings costs one batched head, not one per row). Fails as
 * dp_session_predict (out is then partly filled). */
enum dp_status dp_session_predict_many(struct dp_session *ss, const struct dp_setting *s, int n,
                                       unsigned flags, struct dp_prediction *out,
                                       struct dp_error *err);
/* The same with inspector i (dp_session_use_file) whatever the setting; s gives the workers
 * (NULL: unknown, so throughput and cost are per worker). */
enum dp_status dp_session_predict_with(struct dp_session *ss, int i, const struct dp_setting *s,
                                       struct dp_prediction *out, struct dp_error *err);

/* One setting's simulation at the current batch (labelled "simulated" wherever shown). */
struct dp_simulation {
    bool   ok;
    double m[DP_N_OUTPUTS];  /* the simulator's labels */
    double d[DP_N_DERIVED];  /* the simulator's own figures where it has them, then dp_derive */
    struct dp_derive_in facts; /* what d was derived from besides m */
    double memory_gb;        /* per-worker footprint */
    double gpu_memory_gb;    /* the GPU's memory (NaN: unknown) */
    bool   oom;              /* footprint > the GPU's memory */
    char   note[160];        /* why there is none */
};
/* Simulates setting s (cached per cluster and batch). With defer, an uncached one is not run:
 * *pending is set and out untouched. A setting the simulator refuses (unknown GPU figures, no
 * graph) gives out->ok false and a note, not a failure. */
enum dp_status dp_session_simulate(struct dp_session *ss, const struct dp_setting *s, bool defer,
                                   struct dp_simulation *out, bool *pending,
                                   struct dp_error *err);
/* dp_session_simulate at another batch size than the workload's (1 .. DP_BATCH_MAX, else
 * DP_ERR_INVALID), the features left as they are: a sweep over batch sizes (how far a GPU's
 * memory goes). Cached per cluster and batch as well. */
enum dp_status dp_session_simulate_at(struct dp_session *ss, const struct dp_setting *s,
                                      int64_t batch, bool defer, struct dp_simulation *out,
                                      bool *pending, struct dp_error *err);
/* Takes the simulation's figures the prediction shares: the memory footprint, when the prediction
 * has none of its own (a per-setting inspector does not predict it). */
void dp_prediction_use_simulation(struct dp_prediction *p, const struct dp_simulation *sim);

/* ---- explanations (dp/explain.h) ---- */
/* Metric `metric` (dp_metric_name: the 12 outputs, or DP_METRIC_ITERATION, the prediction's
 * iteration_ms) of prediction p, as every front end prints it; NaN without a prediction. */
double dp_prediction_metric(const struct dp_prediction *p, int metric);
/* Which groups drive the number dp_session_predict gives for setting s (flags as there; i >= 0:
 * dp_session_predict_with inspector i instead, s may then be NULL): predicts into *pred, then
 * explains that prediction through the inspector that made it: the setting-aware inspector by
 * occlusion (dp_explain_compute_sa: method is ignored, e->method says occlusion), a per-setting
 * one by method (dp_explain_compute_inspector); drilled down to the ops when the workload is a
 * graph. e->value is dp_prediction_metric(pred, metric). A new result owned by the caller in
 * *out; DP_ERR_INVALID on a bad metric, DP_ERR_NOT_FOUND (pred->note) when no inspector serves
 * s, the explainer's errors prefixed with the workload's file. */
enum dp_status dp_session_explain(struct dp_session *ss, const struct dp_setting *s, int i,
                                  unsigned flags, int metric, enum dp_explain_method method,
                                  int n_threads, struct dp_explain **out,
                                  struct dp_prediction *pred, struct dp_error *err);
/* What dp_explain_compute_sa needs for setting s (a background thread's copy: out borrows the
 * session's setting-aware inspector, which must outlive it). DP_ERR_INVALID without one or
 * without a graph; DP_ERR_NOT_FOUND when s's GPU is not in the catalog. */
enum dp_status dp_session_explain_sa(struct dp_session *ss, const struct dp_setting *s,
                                     struct dp_explain_sa *out, struct dp_error *err);

/* ---- as JSON (dp/json_out.h), the same in every front end's output ---- */
struct dp_jw;
/* The prediction's members, added to w's current object: "source", "inspector" (its file; null
 * when none), "inspector_setting", "data", "metrics", "raw", "clamped" (the names of the outputs
 * that came out of their range), "derived" (with its facts: dp_jw_derived), "interval" ({"level":
 * 0.8, "metrics": like metrics with [lo, hi] pairs, "derived": {key: [lo, hi]} for the figures
 * that have one}; null without one), "ood", "ood_score" and "oom"; null members where there is
 * no prediction. */
void dp_jw_prediction(struct dp_jw *w, const struct dp_prediction *p);
/* Member key: {"metrics", "derived", "memory_gb", "oom"}, or null when sim holds none. */
void dp_jw_simulation(struct dp_jw *w, const char *key, const struct dp_simulation *sim);

/* Work done so far (for tests and benchmarks): GNN passes (embedding cache misses) and
 * simulations run. */
void dp_session_counts(const struct dp_session *ss, long *n_embed, long *n_sim);
/* Loads the next list setting's inspector file that was not tried yet (idle-time preloading);
 * false when every file was tried. dp_session_preload_left says whether one is left. */
bool dp_session_preload_next(struct dp_session *ss);
bool dp_session_preload_left(const struct dp_session *ss);

/* ---- transfers ---- */

/* Everything a background transfer to one setting needs, made by dp_session_plan_transfer:
 * copies, and pointers to the session's graph, partition and weights (which stay unchanged
 * while the session lives: load no other workload while a plan runs). */
struct dp_transfer_plan {
    char                        base_path[512];
    char                        base_id[DP_NAME_MAX];
    struct dp_setting           target;
    struct dp_gpu               gpu;
    const struct dp_graph      *graph;
    const struct dp_partition  *part;
    const struct dp_op_weights *weights;
    int64_t                     batch;
};
/* Plans transferring the nearest setting's inspector to s. DP_ERR_INVALID when s has an
 * inspector of its own (trained or transferred) or there is no graph; DP_ERR_NOT_FOUND when no
 * setting has an inspector file or s's GPU is not in the catalog. */
enum dp_status dp_session_plan_transfer(struct dp_session *ss, const struct dp_setting *s,
                                        struct dp_transfer_plan *out, struct dp_error *err);

struct dp_transfer_report {
    int    n_samples;     /* simulated samples */
    int    epochs;        /* head epochs run */
    double train_s;       /* head training */
    double total_s;       /* everything */
    double best_val_loss;
    bool   cancelled;
};
/* Runs a plan (any thread: it touches only the plan and what it points to): simulated samples
 * of the graph at 8 batch sizes around the plan's and of a few small zoo models (dp_sample_
 * simulate), then the base's MLP head retrained on its frozen body's embeddings (dp_transfer,
 * head only, recipe driple-c). progress (may be NULL) hears the fraction done and the phase;
 * cancel (may be NULL) is polled. A new inspector owned by the caller in *out, its provenance
 * naming the base's file; DP_ERR_CANCELLED when cancelled. */
enum dp_status dp_transfer_run(const struct dp_transfer_plan *p, atomic_int *cancel,
                               void (*progress)(double frac, const char *phase, void *ud),
                               void *ud, struct dp_inspector **out,
                               struct dp_transfer_report *rep, struct dp_error *err);
/* Takes a transferred inspector into the session (owned by it from now on) as s's; it serves
 * s's cluster from now on. Returns its index, or -1 (insp freed) when out of memory. */
int dp_session_add_transfer(struct dp_session *ss, struct dp_inspector *insp,
                            const struct dp_setting *s, struct dp_error *err);
/* Saves the latest session transfer to s's cluster, whole and atomically (dp_inspector_save),
 * where dp_inspector_save_path puts it (the list's path when that file does not exist yet,
 * else the user directory, created when missing); its base becomes an absolute path. *path
 * (n bytes) gets where. *already: it was saved before (nothing written). DP_ERR_NOT_FOUND when
 * s has no session transfer; DP_ERR_IO when there is nowhere to save it (no user directory);
 * the writer's status otherwise. */
enum dp_status dp_session_save_transfer(struct dp_session *ss, const struct dp_setting *s,
                                        char *path, size_t n, bool *already,
                                        struct dp_error *err);
/* Saves every unsaved session transfer; stops at the first failure. *n_saved: how many. */
enum dp_status dp_session_save_all(struct dp_session *ss, int *n_saved, struct dp_error *err);
/* Session transfers not saved yet; whether inspector i is one. */
int  dp_session_unsaved(const struct dp_session *ss);
bool dp_session_is_unsaved(const struct dp_session *ss, int i);

/* ---- simulated samples (the explorer's transfer, dataset build) ---- */

/* Marks out as a simulated sample of setting s: its job's precision and GPU, and its source
 * (kind "simulated", where: `where`). */
void dp_sample_mark_simulated(struct dp_sample *out, const struct dp_setting *s,
                              const char *where);
/* Simulates graph g on setting s (GPU gpu) with o (its batch) and fills, in out: the labels
 * (Driple order), the iteration time, the memory footprint and batch, then marks it (dp_sample_mark_simulated); the rest of out is
 * untouched. *fits: false when the job does not fit in the GPU's memory or a label is not
 * finite: such a job is no sample. */
enum dp_status dp_sample_simulate(const struct dp_graph *g, const struct dp_setting *s,
                                  const struct dp_gpu *gpu, const struct dp_sim_opts *o,
                                  const char *where, struct dp_sample *out, bool *fits,
                                  struct dp_error *err);

#endif
