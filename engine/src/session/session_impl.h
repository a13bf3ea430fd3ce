/* session_impl.h: the session's state, shared by session.c (workload, resolution, predictions,
 * simulations) and transfer.c (transfers in and out of the session). Private to the engine. */
#ifndef DP_SESSION_IMPL_H
#define DP_SESSION_IMPL_H

#include "dp/session.h"

/* A loaded (or failed) inspector file, or a transfer made in this session. */
struct sess_insp {
    struct dp_inspector *insp;                /* NULL: the file failed to load */
    char                 path[512];           /* the file; "(session:<id>)" before saving */
    char                 setting_id[DP_NAME_MAX];
    bool                 session;             /* transferred in this session ... */
    struct dp_setting    target;              /* ... to this cluster */
    bool                 saved;               /* a session transfer written to `path` */
};

/* Embedding cache entry: (body key, workload, batch) -> embedding. */
struct sess_emb {
    char    key[128];
    long    workload;
    int64_t batch;
    float  *v;
};

/* Simulation cache entry: (cluster, workload, batch) -> what the simulator said. */
struct sess_sim {
    struct dp_setting s;
    long              workload;
    int64_t           batch;
    bool              ok, oom;
    double            m[DP_N_OUTPUTS];
    double            iteration_ms, throughput, mean_gpu_util, memory_gb, net_mb;
    char              note[160];
};

struct dp_session {
    struct dp_gpu_catalog *cat;
    struct dp_settings    *list;
    struct dp_op_weights  *weights;

    /* the workload */
    char                 path[512];
    struct dp_graph     *graph;     /* NULL for a grouped file */
    struct dp_partition *part;
    struct dp_grouped   *grouped;   /* features at `batch` */
    int64_t              batch;
    double               params;
    char                *unknown;   /* op types without a weight */
    long                 workload;  /* bumped by every load */
    long                 features_gen;

    double epoch_samples, price;

    struct sess_insp *insps;
    int               n_insps;
    struct sess_emb  *embs;
    int               n_embs;
    struct sess_sim  *sims;
    int               n_sims, next_sim;
    long              n_embed, n_sim;
    int               preload;      /* next list setting to preload */

    /* the setting-aware inspector (session_sa.c) and the workload as its head reads it */
    struct dp_sa_inspector *sa;
    char                    sa_path[512];
    struct dp_sa_graph      sa_graph;
    long                    sa_workload, sa_gen; /* what sa_graph was made for; -1: nothing */
};

/* Copies src into dst (n bytes), truncating; NULL copies "". */
void sess_copy(char *dst, size_t n, const char *src);
/* The index of a new inspector entry (zeroed) appended to ss->insps; -1 when out of memory. */
int sess_insp_new(struct dp_session *ss);
/* The embedding of the workload's features under in's body (cached per body, workload and
 * batch); NULL with err set when it cannot be computed. */
const float *sess_embed(struct dp_session *ss, const struct dp_inspector *in,
                        struct dp_error *err);
/* What the derived figures of setting s (NULL: workers unknown) need besides the outputs. */
void sess_facts(const struct dp_session *ss, const struct dp_setting *s, struct dp_derive_in *in);

/* ---- the setting-aware inspector (session_sa.c) ---- */
/* Loads opts' setting-aware inspector (NULL: the shipped one when it exists; "": none). */
enum dp_status sess_sa_open(struct dp_session *ss, const char *path, struct dp_error *err);
void           sess_sa_free(struct dp_session *ss);
/* Predicts the n settings s with it into p (each p->from already says setting-aware), one
 * pass of the head over them all. No prediction for a row (a GPU the head cannot read, a
 * non-finite output) is not a failure: that row's ok false and note. Fails only out of
 * memory. */
enum dp_status sess_sa_predict(struct dp_session *ss, const struct dp_setting *s, int n,
                               struct dp_prediction *p, struct dp_error *err);

#endif
