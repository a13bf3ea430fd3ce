/* app.c: the explorer's model. Loads the graph (partitioned once), the catalog and setting list;
 * predicts the what-if setting with its own, a transferred or the nearest inspector (embeddings
 * cached per body and batch, so a setting change costs one MLP head), adds the simulator's
 * estimate and the derived figures, builds the compare rows, and runs the background transfer. */
#include "app.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dp/clock.h"
#include "dp/graph_io.h"
#include "dp/json_out.h"
#include "dp/shipped.h"
#include "dp/sim.h"
#include "dp/train.h"
#include "dp/zoo.h"

const enum dp_derived app_derived_rows[APP_N_DERIVED_ROWS] = {
    DP_D_ITERATION_MS, DP_D_THROUGHPUT, DP_D_MEAN_GPU_UTIL, DP_D_MEMORY_GB,
    DP_D_NET_MB_PER_ITER, DP_D_EPOCH_S, DP_D_EPOCH_COST};
const char *const app_tab_names[APP_TAB_COUNT] = {"Predict", "Compare", "Groups", "Importance"};
const char *const app_sort_names[APP_SORT_COUNT] = {"throughput", "iteration", "cost",
                                                    "utilisation"};

#define EMB_CACHE_MAX 64
#define APP_ASSUMED_BATCH 32 /* when neither the graph nor --batch gives one */
#define SIM_CACHE_MAX 512
#define SIM_ITERATIONS 0 /* the simulator's default (20): about 1.5 ms for ResNet-50 */

const char *app_src_name(enum app_src s) {
    switch (s) {
    case APP_SRC_TRAINED: return "trained";
    case APP_SRC_TRANSFERRED: return "transferred";
    case APP_SRC_NEAREST: return "nearest (extrapolated)";
    default: return "none";
    }
}

void app_status(struct app *a, bool err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_err = err;
}

/* Copies src into dst (n bytes), truncating; NULL copies "". */
static void copy_str(char *dst, size_t n, const char *src) {
    size_t len = src ? strlen(src) : 0;
    if (n == 0) return;
    if (len >= n) len = n - 1;
    if (len) memcpy(dst, src, len);
    dst[len] = '\0';
}

/* ---- finding shipped files ---------------------------------------------------------------- */

static int cmp_str(const void *x, const void *y) {
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The file the user gave, else the shipped file rel found as every command finds it
 * (dp_shipped_path), into out; DP_ERR_NOT_FOUND naming the places tried when none is readable. */
static enum dp_status asset_or(const char *given, const char *rel, const char *flag, char *out,
                               size_t n, struct dp_error *err) {
    if (!given) return dp_shipped_path(rel, flag, out, n, err);
    copy_str(out, n, given);
    return DP_OK;
}

/* The sample graph: samples/graphs/resnet50.json when shipped, else the first JSON graph there. */
static bool find_sample_graph(char *out, size_t n) {
    char dir[512];
    if (!dp_shipped_path("samples/graphs/resnet50.json", NULL, out, n, NULL)) return true;
    if (dp_shipped_path("samples/graphs", NULL, dir, sizeof dir, NULL)) return false;
    DIR *d = opendir(dir);
    if (!d) return false;
    char *names[256];
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)) && k < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".json") && !strstr(e->d_name, "grouped"))
            if ((names[k] = strdup(e->d_name))) k++;
    }
    closedir(d);
    if (k == 0) return false;
    qsort(names, (size_t)k, sizeof *names, cmp_str);
    snprintf(out, n, "%.300s/%.200s", dir, names[0]);
    for (int i = 0; i < k; i++) free(names[i]);
    return true;
}

/* ---- features and groups ------------------------------------------------------------------ */

static enum dp_status compute_features(struct app *a, int64_t batch, struct dp_error *err) {
    struct dp_grouped *g = NULL;
    char *unknown = NULL;
    enum dp_status st = dp_features(a->graph, a->part, a->weights, batch, &g, &unknown, err);
    free(unknown);
    if (st != DP_OK) return st;
    dp_grouped_free(a->grouped);
    a->grouped = g;
    a->grouped_gen++;
    a->batch = batch;
    return DP_OK;
}

static int cmp_count_desc(const void *x, const void *y) {
    const int *p = x, *q = y;
    return (q[1] > p[1]) - (q[1] < p[1]);
}

/* Per group: op count and the two most frequent op types ("Conv2D 12, Relu 8"). */
static enum dp_status index_groups(struct app *a) {
    size_t n = dp_graph_n_nodes(a->graph);
    int ng = a->part->n_groups;
    a->group_of_node = malloc((n + 1) * sizeof *a->group_of_node);
    a->group_top = calloc((size_t)ng + 1, sizeof *a->group_top);
    a->group_ops = calloc((size_t)ng + 1, sizeof *a->group_ops);
    int *pairs = malloc(((size_t)a->part->n_ops + 1) * 2 * sizeof *pairs);
    if (!a->group_of_node || !a->group_top || !a->group_ops || !pairs) {
        free(pairs);
        return DP_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) a->group_of_node[i] = -1;
    for (int k = 0; k < a->part->n_ops; k++) {
        a->group_of_node[a->part->op_index[k]] = a->part->group[k];
        a->group_ops[a->part->group[k]]++;
    }
    for (int g = 0; g < ng; g++) {
        /* (first op index of a type, count) pairs over the group's ops: n_ops is small per group */
        int np = 0;
        for (int k = 0; k < a->part->n_ops; k++) {
            if (a->part->group[k] != g) continue;
            const char *op = dp_graph_node(a->graph, (size_t)a->part->op_index[k])->op;
            int j = 0;
            for (; j < np; j++)
                if (!strcmp(dp_graph_node(a->graph, (size_t)pairs[2 * j])->op, op)) break;
            if (j == np) {
                pairs[2 * np] = a->part->op_index[k];
                pairs[2 * np + 1] = 0;
                np++;
            }
            pairs[2 * j + 1]++;
        }
        qsort(pairs, (size_t)np, 2 * sizeof *pairs, cmp_count_desc);
        char *t = a->group_top[g];
        size_t cap = sizeof a->group_top[g], len = 0;
        t[0] = '\0';
        for (int j = 0; j < np && j < 2; j++) {
            int w = snprintf(t + len, cap - len, "%s%s %d", j ? ", " : "",
                             dp_graph_node(a->graph, (size_t)pairs[2 * j])->op, pairs[2 * j + 1]);
            if (w < 0 || (size_t)w >= cap - len) break;
            len += (size_t)w;
        }
    }
    free(pairs);
    return DP_OK;
}

int app_group_of_op(const struct app *a, int op_index) {
    if (!a->group_of_node || op_index < 0 || (size_t)op_index >= dp_graph_n_nodes(a->graph))
        return -1;
    return a->group_of_node[op_index];
}

/* ---- inspectors and embeddings ------------------------------------------------------------ */

/* Whether path was loaded already (or failed to): loading it now costs nothing. */
static bool insp_known(const struct app *a, const char *path) {
    for (int i = 0; i < a->n_insps; i++)
        if (!strcmp(a->insps[i].path, path)) return true;
    return false;
}

#define INSP_DEFERRED (-2) /* choose_inspector: the file is not loaded yet and defer_loads is on */

/* The loaded inspector for path (loading it on first use); -1 when it fails (note says why). */
static int insp_get(struct app *a, const char *path, const char *setting, char *note, size_t n) {
    for (int i = 0; i < a->n_insps; i++)
        if (!strcmp(a->insps[i].path, path)) {
            if (!a->insps[i].insp) snprintf(note, n, "inspector %s failed to load", path);
            return a->insps[i].insp ? i : -1;
        }
    struct app_insp *grown = realloc(a->insps, ((size_t)a->n_insps + 1) * sizeof *grown);
    if (!grown) return -1;
    a->insps = grown;
    struct app_insp *e = &a->insps[a->n_insps++];
    memset(e, 0, sizeof *e);
    copy_str(e->path, sizeof e->path, path);
    copy_str(e->setting, sizeof e->setting, setting);
    struct dp_error err = {0};
    if (dp_inspector_load(path, &e->insp, &err) != DP_OK) {
        e->insp = NULL;
        copy_str(note, n, err.msg);
        return -1;
    }
    return a->n_insps - 1;
}

/* The embedding of the current grouped graph under in's body (cached per body key and batch). */
static const float *embed_get(struct app *a, const struct dp_inspector *in, int *n,
                              struct dp_error *err) {
    const char *key = dp_inspector_body_key(in);
    for (int i = 0; i < a->n_embs; i++)
        if (a->embs[i].batch == a->batch && !strcmp(a->embs[i].key, key)) {
            *n = a->embs[i].n;
            return a->embs[i].v;
        }
    const struct dp_model *m = dp_inspector_model(in);
    int size = dp_model_embed_size(m);
    float *v = malloc((size_t)size * sizeof *v);
    if (!v) {
        dp_error_set(err, DP_ERR_NOMEM, "explorer: out of memory");
        return NULL;
    }
    a->n_embed_calls++;
    if (dp_model_embed(m, a->grouped, v, err) != DP_OK) {
        free(v);
        return NULL;
    }
    if (a->n_embs == EMB_CACHE_MAX) { /* drop the oldest */
        free(a->embs[0].v);
        memmove(a->embs, a->embs + 1, (size_t)(a->n_embs - 1) * sizeof *a->embs);
        a->n_embs--;
    }
    if (!a->embs) a->embs = calloc(EMB_CACHE_MAX, sizeof *a->embs);
    if (!a->embs) {
        free(v);
        dp_error_set(err, DP_ERR_NOMEM, "explorer: out of memory");
        return NULL;
    }
    struct app_emb *e = &a->embs[a->n_embs++];
    copy_str(e->key, sizeof e->key, key);
    e->batch = a->batch;
    e->n = size;
    e->v = v;
    *n = size;
    return v;
}

static void emb_cache_clear(struct app *a) {
    for (int i = 0; i < a->n_embs; i++) free(a->embs[i].v);
    a->n_embs = 0;
}

/* Same cluster (the setting list's entry for what the user set up). */
static bool same_setting(const struct dp_setting *x, const struct dp_setting *y) {
    return !strcmp(x->gpu, y->gpu) && x->ps == y->ps && x->workers == y->workers &&
           x->placement == y->placement && x->network == y->network &&
           x->precision == y->precision;
}

/* Chooses the inspector for s: a session transfer, the list's own, or the nearest. */
static int choose_inspector(struct app *a, const struct dp_setting *s, enum app_src *src,
                            char *id, size_t idn, char *note, size_t nn) {
    for (int i = a->n_insps - 1; i >= 0; i--)
        if (a->insps[i].session && a->insps[i].insp && same_setting(&a->insps[i].target, s)) {
            *src = APP_SRC_TRANSFERRED;
            copy_str(id, idn, s->id);
            return i;
        }
    if (!a->settings) return -1;
    for (int k = 0; k < a->settings->n_settings; k++) {
        const struct dp_setting *e = &a->settings->settings[k];
        if (!same_setting(e, s) || !e->inspector[0] || access(e->inspector, R_OK) != 0) continue;
        if (a->defer_loads && !insp_known(a, e->inspector)) {
            copy_str(id, idn, e->id);
            return INSP_DEFERRED;
        }
        int i = insp_get(a, e->inspector, e->id, note, nn);
        if (i < 0) break;
        const struct dp_provenance *pv = dp_inspector_provenance(a->insps[i].insp);
        *src = !strcmp(pv->origin, "transfer") ? APP_SRC_TRANSFERRED : APP_SRC_TRAINED;
        copy_str(id, idn, e->id);
        return i;
    }
    /* not in the list (or its file is missing): one the user saved for it (settings.h) */
    char user[sizeof a->insps->path];
    if (dp_user_inspector_path(s, user, sizeof user) && access(user, R_OK) == 0) {
        copy_str(id, idn, s->id);
        if (a->defer_loads && !insp_known(a, user)) return INSP_DEFERRED;
        int i = insp_get(a, user, s->id, note, nn);
        if (i >= 0) {
            const struct dp_provenance *pv = dp_inspector_provenance(a->insps[i].insp);
            *src = !strcmp(pv->origin, "transfer") ? APP_SRC_TRANSFERRED : APP_SRC_TRAINED;
            return i;
        }
    }
    const struct dp_setting *near = dp_settings_nearest(a->settings, s, true);
    if (!near) {
        if (!note[0]) snprintf(note, nn, "no setting of the list has an inspector file");
        return -1;
    }
    *src = APP_SRC_NEAREST;
    copy_str(id, idn, near->id);
    if (a->defer_loads && !insp_known(a, near->inspector)) return INSP_DEFERRED;
    int i = insp_get(a, near->inspector, near->id, note, nn);
    if (i < 0) return -1;
    copy_str(id, idn, near->id);
    return i;
}

/* ---- simulator ---------------------------------------------------------------------------- */

static const struct app_sim *sim_find(const struct app *a, const struct dp_setting *s) {
    for (int i = 0; i < a->n_sims; i++)
        if (a->sims[i].batch == a->batch && !strcmp(a->sims[i].id, s->id) &&
            !strcmp(a->sims[i].gpu, s->gpu))
            return &a->sims[i];
    return NULL;
}

static const struct app_sim *sim_get(struct app *a, const struct dp_setting *s) {
    const struct app_sim *found = sim_find(a, s);
    if (found) return found;
    if (!a->sims) a->sims = calloc(SIM_CACHE_MAX, sizeof *a->sims);
    if (!a->sims) return NULL;
    if (a->n_sims == SIM_CACHE_MAX) a->n_sims = 0; /* start over: a cache, not a store */
    struct app_sim *e = &a->sims[a->n_sims++];
    memset(e, 0, sizeof *e);
    copy_str(e->id, sizeof e->id, s->id);
    copy_str(e->gpu, sizeof e->gpu, s->gpu);
    e->batch = a->batch;
    const struct dp_gpu *gpu = a->cat ? dp_gpu_find(a->cat, s->gpu) : NULL;
    if (!gpu) {
        snprintf(e->note, sizeof e->note, "GPU %s is not in the catalog", s->gpu);
        return e;
    }
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.batch = a->batch;
    o.iterations = SIM_ITERATIONS;
    struct dp_sim_result r;
    memset(&r, 0, sizeof r);
    struct dp_error err = {0};
    a->n_sim_calls++;
    if (dp_simulate(a->graph, s, gpu, &o, &r, &err) != DP_OK) {
        snprintf(e->note, sizeof e->note, "simulator: %.100s", err.msg);
        dp_sim_result_free(&r);
        return e;
    }
    e->ok = true;
    for (int k = 0; k < DP_N_OUTPUTS; k++) e->m[k] = r.labels[k];
    e->iter_ms = r.iteration_ms;
    e->thru = r.throughput;
    e->util = r.mean_gpu_util;
    e->mem_gb = r.memory_gb;
    e->oom = r.oom;
    e->bytes = r.bytes_per_iter / (double)(s->workers > 0 ? s->workers : 1) / 1e6;
    dp_sim_result_free(&r);
    return e;
}

/* ---- derived figures ---------------------------------------------------------------------- */

/* What the derived figures of setting s need besides the metrics (dp_derive). */
static void facts_of(const struct app *a, const struct dp_setting *s, struct dp_derive_in *in) {
    dp_derive_in_init(in);
    in->batch = a->batch;
    in->workers = s->workers;
    in->params = (double)a->params;
    in->epoch_samples = a->dataset_size;
    in->price_per_gpu_hour = a->price_hour;
}

static void pred_apply_sim(const struct app *a, const struct dp_setting *s, struct app_pred *p,
                           const struct app_sim *sm);

void app_predict(struct app *a, const struct dp_setting *s, struct app_pred *p) {
    memset(p, 0, sizeof *p);
    p->insp = -1;
    for (int k = 0; k < DP_N_DERIVED; k++) p->d[k] = p->sim_d[k] = NAN;
    p->mem_gb = p->mem_cap_gb = NAN;
    const struct dp_gpu *gpu = a->cat ? dp_gpu_find(a->cat, s->gpu) : NULL;
    if (gpu) p->mem_cap_gb = gpu->memory_gb;

    int i = choose_inspector(a, s, &p->src, p->insp_id, sizeof p->insp_id, p->note,
                             sizeof p->note);
    if (i >= 0) {
        const struct dp_inspector *in = a->insps[i].insp;
        struct dp_error err = {0};
        int n = 0;
        const float *emb = embed_get(a, in, &n, &err);
        if (emb) {
            float raw[DP_N_OUTPUTS];
            dp_model_head(dp_inspector_model(in), emb, raw);
            /* durations, utilisations and rates cannot be negative: the head's LeakyReLU can
             * dip below 0, so metrics are clamped there (raw keeps the network's output) */
            for (int k = 0; k < DP_N_OUTPUTS; k++) {
                p->raw[k] = raw[k];
                p->m[k] = fmax(0.0, dp_inspector_metric(in, k, raw[k]));
            }
            p->ok = true;
            p->insp = i;
            copy_str(p->insp_origin, sizeof p->insp_origin, dp_inspector_provenance(in)->origin);
            struct dp_derive_in facts;
            facts_of(a, s, &facts);
            dp_derive(p->m, &facts, p->d);
        } else {
            copy_str(p->note, sizeof p->note, err.msg);
        }
    } else if (i == INSP_DEFERRED) {
        p->insp_pending = true;
    } else {
        p->src = APP_SRC_NONE;
    }

    /* with defer_sims an uncached simulation waits for app_tick (the key answers first) */
    const struct app_sim *sm = a->defer_sims ? sim_find(a, s) : sim_get(a, s);
    if (!sm) p->sim_pending = true;
    else pred_apply_sim(a, s, p, sm);
}

/* Fills the simulated half of p (and the memory footprint) from a simulation. */
static void pred_apply_sim(const struct app *a, const struct dp_setting *s, struct app_pred *p,
                           const struct app_sim *sm) {
    p->sim_pending = false;
    if (sm->ok) {
        p->sim_ok = true;
        memcpy(p->sim_m, sm->m, sizeof p->sim_m);
        struct dp_derive_in facts; /* the simulator's own figures, where it has them */
        facts_of(a, s, &facts);
        facts.direct[DP_D_ITERATION_MS] = sm->iter_ms;
        facts.direct[DP_D_THROUGHPUT] = sm->thru;
        facts.direct[DP_D_MEAN_GPU_UTIL] = sm->util;
        facts.direct[DP_D_MEMORY_GB] = sm->mem_gb;
        facts.direct[DP_D_NET_MB_PER_ITER] = sm->bytes;
        dp_derive(sm->m, &facts, p->sim_d);
        p->mem_gb = sm->mem_gb;
        p->oom = sm->oom;
        p->d[DP_D_MEMORY_GB] = sm->mem_gb; /* the footprint comes from the simulator in both columns */
    } else if (sm && !p->note[0]) {
        copy_str(p->note, sizeof p->note, sm->note);
    }
}

/* ---- the what-if setting ------------------------------------------------------------------ */

static bool make_current(struct app *a, const struct app_what *w, struct dp_error *err) {
    struct dp_setting s;
    const char *gpu = a->cat && a->cat->n_gpus ? a->cat->gpus[w->gpu].name : "unknown";
    if (dp_setting_make(gpu, w->workers, w->ps, w->network, 0, w->placement, w->precision, &s,
                        err) != DP_OK)
        return false;
    a->cur = s;
    a->what = *w;
    a->dirty = true;
    return true;
}

/* Applies a changed what-if setting; on an invalid one keeps the old and says why. */
static bool what_apply(struct app *a, const struct app_what *w) {
    struct dp_error err = {0};
    if (!make_current(a, w, &err)) {
        app_status(a, true, "%s", err.msg);
        return false;
    }
    app_refresh(a);
    if (a->pred.ok && a->pred.src == APP_SRC_NEAREST)
        app_status(a, false, "%s: no inspector; %s's (extrapolated); t transfers one",
                   a->cur.id, a->pred.insp_id);
    else
        app_status(a, false, "%s", a->cur.id);
    return true;
}

bool app_gpu_step(struct app *a, int dir) {
    if (!a->cat || a->cat->n_gpus == 0) return false;
    struct app_what w = a->what;
    w.gpu = (w.gpu + dir + a->cat->n_gpus) % a->cat->n_gpus;
    return what_apply(a, &w);
}

bool app_workers_step(struct app *a, int dir) {
    struct app_what w = a->what;
    w.workers += dir;
    if (w.workers < 1 || w.workers > 64) {
        app_status(a, true, "workers must be in [1, 64]");
        return false;
    }
    return what_apply(a, &w);
}

bool app_ps_step(struct app *a, int dir) {
    struct app_what w = a->what;
    w.ps += dir;
    if (w.ps < 1 || w.ps > 64) {
        app_status(a, true, "parameter servers must be in [1, 64]");
        return false;
    }
    return what_apply(a, &w);
}

bool app_network_step(struct app *a, int dir) {
    struct app_what w = a->what;
    /* Skip networks the placement cannot use (hetero needs a cross-machine network). */
    for (int k = 0; k < DP_NET_COUNT; k++) {
        w.network = (enum dp_network)(((int)w.network + dir + DP_NET_COUNT) % DP_NET_COUNT);
        if (w.placement == DP_PLACE_HOMO || !dp_network_intra(w.network)) break;
    }
    return what_apply(a, &w);
}

bool app_placement_toggle(struct app *a) {
    struct app_what w = a->what;
    w.placement = w.placement == DP_PLACE_HOMO ? DP_PLACE_HETERO : DP_PLACE_HOMO;
    if (w.placement == DP_PLACE_HETERO && dp_network_intra(w.network)) {
        app_status(a, true, "hetero placement needs a cross-machine network (press n)");
        return false;
    }
    return what_apply(a, &w);
}

bool app_precision_toggle(struct app *a) {
    struct app_what w = a->what;
    w.precision = w.precision == DP_PREC_FP32 ? DP_PREC_MIXED : DP_PREC_FP32;
    return what_apply(a, &w);
}

bool app_batch_set(struct app *a, int64_t batch) {
    if (batch < 1 || batch > 65536) {
        app_status(a, true, "batch size must be in [1, 65536]");
        return false;
    }
    struct dp_error err = {0};
    if (compute_features(a, batch, &err) != DP_OK) {
        app_status(a, true, "%s", err.msg);
        return false;
    }
    a->dirty = true;
    app_refresh(a);
    app_status(a, false, "batch %lld", (long long)batch);
    return true;
}

bool app_batch_step(struct app *a, int dir) {
    int64_t b = dir > 0 ? a->batch * 2 : a->batch / 2;
    return app_batch_set(a, b < 1 ? 1 : b);
}

bool app_dataset_set(struct app *a, double samples) {
    if (!(samples >= 1 && samples <= 1e12)) {
        app_status(a, true, "dataset size must be in [1, 1e12] samples");
        return false;
    }
    a->dataset_size = samples;
    a->dirty = true;
    app_refresh(a);
    return true;
}

bool app_price_set(struct app *a, double dollars) {
    if (!(dollars >= 0 && dollars <= 1e4)) {
        app_status(a, true, "price must be in [0, 10000] $ per GPU-hour");
        return false;
    }
    a->price_hour = dollars;
    a->dirty = true;
    app_refresh(a);
    return true;
}

/* ---- compare ------------------------------------------------------------------------------ */

static double row_key(const struct app_row *r, enum app_sort s, bool sim) {
    /* rows without a prediction sort on their simulated figures (they show those) */
    const double *d = r->p.ok && !sim ? r->p.d : r->p.sim_d;
    switch (s) {
    case APP_SORT_THRU: return -d[DP_D_THROUGHPUT];
    case APP_SORT_ITER: return d[DP_D_ITERATION_MS];
    case APP_SORT_COST: return d[DP_D_EPOCH_COST];
    default: return -d[DP_D_MEAN_GPU_UTIL];
    }
}

static enum app_sort g_sort; /* qsort has no context argument in C11 */
static bool g_sort_sim;

static int cmp_rows(const void *x, const void *y) {
    const struct app_row *p = x, *q = y;
    double u = row_key(p, g_sort, g_sort_sim), v = row_key(q, g_sort, g_sort_sim);
    bool nu = isnan(u), nv = isnan(v);
    if (nu != nv) return nu ? 1 : -1;
    if (!nu && u != v) return u < v ? -1 : 1;
    return strcmp(p->label, q->label);
}

static void sort_rows(struct app *a) {
    g_sort = a->sort;
    g_sort_sim = a->sort_sim;
    qsort(a->rows, (size_t)a->n_rows, sizeof *a->rows, cmp_rows);
}

static void compare_build(struct app *a) {
    free(a->rows);
    a->rows = NULL;
    a->n_rows = 0;
    int n = a->cmp_mode == APP_CMP_GPUS ? (a->cat ? a->cat->n_gpus : 0)
                                        : (a->settings ? a->settings->n_settings : 0);
    a->rows = calloc((size_t)n + 1, sizeof *a->rows);
    if (!a->rows) {
        app_status(a, true, "compare: out of memory");
        return;
    }
    for (int i = 0; i < n; i++) {
        struct app_row *r = &a->rows[a->n_rows];
        struct dp_setting s;
        if (a->cmp_mode == APP_CMP_GPUS) {
            if (a->only_marked && !a->marked[i]) continue;
            struct dp_error err = {0};
            if (dp_setting_make(a->cat->gpus[i].name, a->what.workers, a->what.ps,
                                a->what.network, 0, a->what.placement, a->what.precision, &s,
                                &err) != DP_OK)
                continue;
            r->gpu = i;
            r->setting = -1;
            copy_str(r->label, sizeof r->label, a->cat->gpus[i].name);
        } else {
            s = a->settings->settings[i];
            const struct dp_gpu *g = a->cat ? dp_gpu_find(a->cat, s.gpu) : NULL;
            r->gpu = g ? (int)(g - a->cat->gpus) : -1;
            if (a->only_marked && (r->gpu < 0 || !a->marked[r->gpu])) continue;
            r->setting = i;
            copy_str(r->label, sizeof r->label, s.id);
        }
        r->current = same_setting(&s, &a->cur);
        r->s = s;
        /* in the UI a row whose inspector file is not loaded yet waits for an idle frame */
        a->defer_loads = a->defer_sims;
        app_predict(a, &s, &r->p);
        a->defer_loads = false;
        a->n_rows++;
    }
    sort_rows(a);
}

void app_compare_mode(struct app *a, enum app_cmp_mode m) {
    a->cmp_mode = m;
    a->sel[APP_TAB_COMPARE] = a->scroll[APP_TAB_COMPARE] = 0;
    a->dirty = true;
    app_refresh(a);
}

void app_sort_next(struct app *a) {
    app_compare_ensure(a);
    a->sort = (enum app_sort)((a->sort + 1) % APP_SORT_COUNT);
    sort_rows(a);
    app_status(a, false, "sorted by %s %s", a->sort_sim ? "simulated" : "predicted",
               app_sort_names[a->sort]);
}

void app_sort_source_toggle(struct app *a) {
    app_compare_ensure(a);
    a->sort_sim = !a->sort_sim;
    sort_rows(a);
    app_status(a, false, "sorted by %s %s", a->sort_sim ? "simulated" : "predicted",
               app_sort_names[a->sort]);
}

void app_mark_toggle(struct app *a) {
    int s = a->sel[APP_TAB_COMPARE];
    if (s < 0 || s >= a->n_rows || a->rows[s].gpu < 0) return;
    int g = a->rows[s].gpu;
    a->marked[g] = !a->marked[g];
    app_status(a, false, "%s %s", a->cat->gpus[g].name, a->marked[g] ? "marked" : "unmarked");
}

void app_only_marked_toggle(struct app *a) {
    bool any = false;
    for (int i = 0; a->cat && i < a->cat->n_gpus; i++) any |= a->marked[i];
    if (!a->only_marked && !any) {
        app_status(a, true, "no GPU marked (space marks the selected row)");
        return;
    }
    a->only_marked = !a->only_marked;
    a->sel[APP_TAB_COMPARE] = a->scroll[APP_TAB_COMPARE] = 0;
    a->dirty = true;
    app_refresh(a);
    app_status(a, false, a->only_marked ? "marked GPUs only" : "every GPU");
}

void app_compare_apply(struct app *a) {
    int s = a->sel[APP_TAB_COMPARE];
    if (s < 0 || s >= a->n_rows) return;
    struct app_what w = a->what;
    const struct app_row *r = &a->rows[s];
    if (r->setting >= 0) {
        const struct dp_setting *e = &a->settings->settings[r->setting];
        w.ps = e->ps;
        w.workers = e->workers;
        w.placement = e->placement;
        w.network = e->network;
        w.precision = e->precision;
    }
    if (r->gpu >= 0) w.gpu = r->gpu;
    what_apply(a, &w);
}

void app_compare_ensure(struct app *a) {
    if (!a->rows_stale) return;
    a->rows_stale = false;
    compare_build(a);
    if (a->sel[APP_TAB_COMPARE] >= a->n_rows) a->sel[APP_TAB_COMPARE] = a->n_rows - 1;
    if (a->sel[APP_TAB_COMPARE] < 0) a->sel[APP_TAB_COMPARE] = 0;
}

void app_refresh(struct app *a) {
    if (!a->dirty) return;
    a->dirty = false;
    app_predict(a, &a->cur, &a->pred);
    /* the compare rows cost one head (and maybe one simulation) per row: only when shown */
    a->rows_stale = true;
    if (a->tab == APP_TAB_COMPARE) app_compare_ensure(a);
}

/* ---- UI state ----------------------------------------------------------------------------- */

int app_list_len(const struct app *a) {
    switch (a->tab) {
    case APP_TAB_COMPARE: return a->n_rows;
    case APP_TAB_GROUPS: return a->search[0] ? a->n_hits : (a->part ? a->part->n_groups : 0);
    case APP_TAB_PREDICT:
        return a->pane == APP_PANE_TABLE       ? DP_N_RESOURCES
               : a->pane == APP_PANE_DERIVED ? APP_N_DERIVED_ROWS
                                             : 0;
    default: return 0;
    }
}

void app_tab_set(struct app *a, enum app_tab t) {
    a->tab = t;
    a->help = false;
    if (t == APP_TAB_COMPARE) app_compare_ensure(a);
}

void app_pane_next(struct app *a, int dir) {
    if (a->tab != APP_TAB_PREDICT) {
        app_tab_set(a, (enum app_tab)((a->tab + dir + APP_TAB_COUNT) % APP_TAB_COUNT));
        return;
    }
    a->pane = (enum app_pane)((a->pane + dir + APP_PANE_COUNT) % APP_PANE_COUNT);
}

void app_select(struct app *a, int row) {
    int n = app_list_len(a);
    if (row >= n) row = n - 1;
    if (row < 0) row = 0;
    if (a->tab == APP_TAB_PREDICT) {
        a->pane_sel[a->pane] = row;
        if (a->pane == APP_PANE_TABLE) {
            /* the importance metric follows the selected resource (its active time) */
            a->metric = row * 3 + 1;
        } else if (a->pane == APP_PANE_DERIVED) {
            const struct dp_derived_info *f = &dp_derived_figures[app_derived_rows[row]];
            app_status(a, false, "%s = %s (%s)", f->label, f->formula, f->note);
        }
        return;
    }
    a->sel[a->tab] = row;
}

void app_move(struct app *a, int delta) {
    int cur = a->tab == APP_TAB_PREDICT ? a->pane_sel[a->pane] : a->sel[a->tab];
    app_select(a, cur + delta);
}

void app_scroll_fit(struct app *a, int page) {
    if (page < 1) page = 1;
    a->page = page;
    int t = a->tab, s = a->sel[t];
    if (s < a->scroll[t]) a->scroll[t] = s;
    if (s >= a->scroll[t] + page) a->scroll[t] = s - page + 1;
    int n = app_list_len(a);
    if (a->scroll[t] > n - page) a->scroll[t] = n - page;
    if (a->scroll[t] < 0) a->scroll[t] = 0;
}

void app_search_set(struct app *a, const char *s) {
    copy_str(a->search, sizeof a->search, s);
    a->n_hits = 0;
    a->sel[APP_TAB_GROUPS] = a->scroll[APP_TAB_GROUPS] = 0;
    if (!s || !*s) return;
    size_t n = dp_graph_n_nodes(a->graph);
    free(a->hits);
    a->hits = malloc((n + 1) * sizeof *a->hits);
    if (!a->hits) {
        app_status(a, true, "search: out of memory");
        return;
    }
    size_t ls = strlen(s);
    for (size_t i = 0; i < n; i++) {
        if (a->group_of_node[i] < 0) continue;
        const struct dp_node *nd = dp_graph_node(a->graph, i);
        bool hit = false;
        for (const char *h = nd->name; *h && !hit; h++) hit = !strncasecmp(h, s, ls);
        for (const char *h = nd->op; *h && !hit; h++) hit = !strncasecmp(h, s, ls);
        if (hit) a->hits[a->n_hits++] = (int)i;
    }
    app_status(a, a->n_hits == 0, "/%s: %d ops match", s, a->n_hits);
}

const struct dp_inspector *app_inspector(const struct app *a) {
    if (!a->pred.ok || a->pred.insp < 0 || a->pred.insp >= a->n_insps) return NULL;
    return a->insps[a->pred.insp].insp;
}

/* ---- export ------------------------------------------------------------------------------- */

static void jw_pred(struct dp_jw *w, const struct app *a, const struct dp_setting *s,
                    const struct app_pred *p) {
    struct dp_derive_in facts;
    facts_of(a, s, &facts);
    dp_jw_object(w, "prediction");
    dp_jw_str(w, "source", p->ok ? app_src_name(p->src) : "none");
    dp_jw_str(w, "inspector_setting", p->insp_id);
    if (p->ok) {
        dp_jw_outputs(w, "metrics", p->m);
        dp_jw_array(w, "raw");
        for (int k = 0; k < DP_N_OUTPUTS; k++) dp_jw_float(w, NULL, p->raw[k]);
        dp_jw_end(w);
        dp_jw_derived(w, "derived", p->d, &facts);
    } else {
        dp_jw_null(w, "metrics");
        dp_jw_null(w, "raw");
        dp_jw_null(w, "derived");
    }
    if (p->sim_ok) {
        dp_jw_object(w, "simulated");
        dp_jw_outputs(w, "metrics", p->sim_m);
        dp_jw_derived(w, "derived", p->sim_d, &facts);
        dp_jw_bool(w, "oom", p->oom);
        dp_jw_end(w);
    } else {
        dp_jw_null(w, "simulated");
    }
    dp_jw_end(w);
}

enum dp_status app_export_json(const struct app *a, const char *path, struct dp_error *err) {
    struct dp_jw *w = dp_jw_new();
    dp_jw_str(w, "format", "driple-explore/1");
    dp_jw_str(w, "graph", dp_graph_name(a->graph));
    dp_jw_int(w, "batch", a->batch);
    dp_jw_str(w, "setting", a->cur.id);
    dp_jw_num(w, "dataset_size", a->dataset_size);
    dp_jw_num(w, "price_per_gpu_hour", a->price_hour);
    jw_pred(w, a, &a->cur, &a->pred);
    dp_jw_array(w, "compare");
    for (int i = 0; i < a->n_rows; i++) {
        dp_jw_object(w, NULL);
        dp_jw_str(w, "label", a->rows[i].label);
        jw_pred(w, a, &a->rows[i].s, &a->rows[i].p);
        dp_jw_end(w);
    }
    dp_jw_end(w);
    dp_jw_formulas(w, "formulas");
    enum dp_status st = dp_jw_save(w, path, err);
    dp_jw_free(w);
    return st;
}

/* ---- init / free -------------------------------------------------------------------------- */

enum dp_status app_init(struct app *a, const struct app_opts *o, struct dp_error *err) {
    enum dp_status st;
    char path[512];
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->job.mu, NULL);
    a->dataset_size = 1281167; /* ImageNet-1k training images */
    a->price_hour = 2.0;
    a->color = a->utf8 = true;
    a->metric = 4; /* gpu_util.active */
    a->imp_select = -1;
    a->pane_sel[APP_PANE_TABLE] = 1;

    if (o->graph) copy_str(a->graph_path, sizeof a->graph_path, o->graph);
    else if (!find_sample_graph(a->graph_path, sizeof a->graph_path))
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "samples/graphs: no sample graph found (give a GRAPH)");
    struct dp_import_opts io = {.exported_batch = o->exported_batch};
    if ((st = dp_graph_load(a->graph_path, &io, &a->graph, err)) != DP_OK) return st;
    for (size_t i = 0; i < dp_graph_n_nodes(a->graph); i++)
        a->params += dp_graph_node(a->graph, i)->params;

    if ((st = asset_or(o->weights, "assets/op_weights.json", "--op-weights", path, sizeof path, err)))
        return st;
    if ((st = dp_op_weights_load(path, &a->weights, err)) != DP_OK) return st;

    struct dp_coarsen_opts co = {.k = 0, .seed = DP_DEFAULT_SEED};
    if ((st = dp_coarsen(a->graph, &co, &a->part, err)) != DP_OK) {
        dp_error_prefix(err, a->graph_path);
        return st;
    }
    if ((st = index_groups(a)) != DP_OK) return dp_error_set(err, st, "explorer: out of memory");
    int64_t batch = o->batch > 0 ? o->batch : dp_graph_batch(a->graph);
    bool batch_assumed = batch <= 0;
    if ((st = compute_features(a, batch_assumed ? APP_ASSUMED_BATCH : batch, err)) != DP_OK)
        return st;

    if ((st = asset_or(o->gpus, "assets/gpus.json", "--gpus", path, sizeof path, err))) return st;
    if ((st = dp_gpu_catalog_load(path, &a->cat, err)) != DP_OK) return st;
    if (a->cat->n_gpus == 0) return dp_error_set(err, DP_ERR_INVALID, "%s: no GPU in the catalog", path);
    a->marked = calloc((size_t)a->cat->n_gpus, sizeof *a->marked);
    if (!a->marked) return dp_error_set(err, DP_ERR_NOMEM, "explorer: out of memory");

    if ((st = asset_or(o->settings, "assets/settings/default.json", "--settings", a->settings_path,
                       sizeof a->settings_path, err)))
        return st;
    if ((st = dp_settings_load(a->settings_path, a->cat, &a->settings, err)) != DP_OK) return st;

    /* Start from the list's first setting (or the catalog's first GPU, 1 PS, 2 workers). */
    struct app_what w = {0, 1, 2, DP_PLACE_HOMO, DP_NET_PCIE, DP_PREC_FP32};
    if (a->settings->n_settings > 0) {
        const struct dp_setting *s0 = &a->settings->settings[0];
        const struct dp_gpu *g = dp_gpu_find(a->cat, s0->gpu);
        w.gpu = g ? (int)(g - a->cat->gpus) : 0;
        w.ps = s0->ps;
        w.workers = s0->workers;
        w.placement = s0->placement;
        w.network = s0->network;
        w.precision = s0->precision;
    }
    if (!make_current(a, &w, err)) return err ? err->status : DP_ERR_INVALID;
    app_refresh(a);
    int n_files = 0;
    for (int k = 0; k < a->settings->n_settings; k++)
        n_files += a->settings->settings[k].inspector[0] &&
                   access(a->settings->settings[k].inspector, R_OK) == 0;
    /* an assumed batch size is said, not hidden: every number depends on it */
    char note[80] = "";
    if (batch_assumed)
        snprintf(note, sizeof note, "; the graph gives no batch size: %d assumed (+/- to change)",
                 APP_ASSUMED_BATCH);
    app_status(a, batch_assumed, "%s: %d of %zu ops in %d groups; %d GPUs, %d settings, %d with an "
               "inspector file%s", dp_graph_name(a->graph), a->part->n_ops,
               dp_graph_n_nodes(a->graph), a->part->n_groups, a->cat->n_gpus,
               a->settings->n_settings, n_files, note);
    return DP_OK;
}

void app_free(struct app *a) {
    if (!a) return;
    if (a->imp_release) a->imp_release(a);
    app_transfer_cancel(a);
    if (a->job.started) pthread_join(a->job.thread, NULL);
    a->job.started = false;
    dp_inspector_free(a->job.result);
    free(a->job.work);
    pthread_mutex_destroy(&a->job.mu);
    emb_cache_clear(a);
    free(a->embs);
    for (int i = 0; i < a->n_insps; i++) dp_inspector_free(a->insps[i].insp);
    free(a->insps);
    free(a->sims);
    free(a->rows);
    free(a->marked);
    free(a->hits);
    free(a->group_of_node);
    free(a->group_top);
    free(a->group_ops);
    dp_settings_free(a->settings);
    dp_gpu_catalog_free(a->cat);
    dp_grouped_free(a->grouped);
    dp_partition_free(a->part);
    dp_op_weights_free(a->weights);
    dp_graph_free(a->graph);
    memset(a, 0, sizeof *a);
}

/* ---- background transfer ------------------------------------------------------------------ */

/* What the worker needs; the graph, partition and weights are borrowed (immutable while the app
 * lives; app_free joins the worker first). */
struct xfer_work {
    char                        base_path[512];
    char                        base_id[DP_NAME_MAX];
    struct dp_setting           target;
    struct dp_gpu               gpu;
    const struct dp_graph      *graph;
    const struct dp_partition  *part;
    const struct dp_op_weights *weights;
    int64_t                     batch;
};

#define XFER_BATCHES 8
#define XFER_ZOO_BATCHES 3
/* Small, quick zoo models that widen the transfer set beyond this graph (coarsened once each). */
static const char *const xfer_zoo[] = {"alexnet", "resnet50", "mobilenet_v2", "squeezenet",
                                       "vgg16", "lstm_lm"};

static void job_set(struct app_job *j, double progress, const char *phase) {
    pthread_mutex_lock(&j->mu);
    j->progress = progress;
    copy_str(j->phase, sizeof j->phase, phase);
    pthread_mutex_unlock(&j->mu);
}

static void job_end(struct app_job *j, enum app_job_state st, struct dp_inspector *res,
                    const char *msg) {
    pthread_mutex_lock(&j->mu);
    j->state = st;
    j->result = res;
    j->progress = st == APP_JOB_DONE ? 1.0 : j->progress;
    copy_str(j->msg, sizeof j->msg, msg);
    snprintf(j->phase, sizeof j->phase, "%s",
             st == APP_JOB_DONE ? "done" : st == APP_JOB_CANCELLED ? "cancelled" : "failed");
    pthread_mutex_unlock(&j->mu);
}

/* Adds one simulated sample (graph g grouped by p at batch b on the target setting); an
 * out-of-memory batch cannot run and adds nothing. */
static enum dp_status xfer_sample(struct xfer_work *w, struct dp_dataset *ds,
                                  const struct dp_graph *g, const struct dp_partition *p,
                                  const char *model, int64_t b, struct dp_error *err) {
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.batch = b;
    struct dp_sim_result r;
    memset(&r, 0, sizeof r);
    enum dp_status st = dp_simulate(g, &w->target, &w->gpu, &o, &r, err);
    if (st != DP_OK) {
        dp_sim_result_free(&r);
        return st;
    }
    struct dp_sample s;
    memset(&s, 0, sizeof s);
    bool fine = !r.oom;
    for (int q = 0; q < DP_N_OUTPUTS; q++) {
        s.labels[q] = r.labels[q];
        fine = fine && isfinite(r.labels[q]);
    }
    dp_sim_result_free(&r);
    if (!fine) return DP_OK;
    if ((st = dp_features(g, p, w->weights, b, &s.grouped, NULL, err)) != DP_OK) return st;
    s.graph = (char *)(uintptr_t)dp_graph_name(g); /* copied by dp_dataset_add_sample */
    s.model = (char *)(uintptr_t)model;
    s.batch = b;
    copy_str(s.job.precision, sizeof s.job.precision, dp_precision_name(w->target.precision));
    copy_str(s.job.gpu, sizeof s.job.gpu, w->target.gpu);
    copy_str(s.source.kind, sizeof s.source.kind, "simulated");
    copy_str(s.source.where, sizeof s.source.where, "driple simulator (explorer transfer)");
    st = dp_dataset_add_sample(ds, &s, err);
    dp_grouped_free(s.grouped);
    return st;
}

static void xfer_progress(const struct dp_train_progress *p, void *ud) {
    struct app_job *j = ud;
    char phase[64];
    snprintf(phase, sizeof phase, "training head, epoch %d", p->epoch);
    job_set(j, 0.6 + 0.4 * (double)p->epoch / (p->epochs > 0 ? p->epochs : 1), phase);
}

/* The published transfer (dp_transfer, head only): simulated labels for the target setting on
 * this graph at XFER_BATCHES batch sizes and on a few zoo models, then the base's MLP head
 * retrained on the frozen body's embeddings. */
static void *xfer_main(void *arg) {
    struct app_job *j = arg;
    struct xfer_work *w = j->work;
    struct dp_error err = {0};
    struct dp_inspector *base = NULL, *out = NULL;
    struct dp_dataset ds;
    struct dp_graph *zg = NULL;
    struct dp_partition *zp = NULL;
    char msg[256];
    enum app_job_state end = APP_JOB_FAILED;
    double t_start = dp_clock_ms();
    dp_dataset_init(&ds, w->target.id);

    if (dp_inspector_load(w->base_path, &base, &err) != DP_OK) goto done;
    /* batch sizes around the explorer's: b/8 .. 16 b, doubling */
    int64_t b = w->batch / 8 > 0 ? w->batch / 8 : 1;
    for (int k = 0; k < XFER_BATCHES; k++, b *= 2) {
        if (j->cancel) goto cancelled;
        job_set(j, 0.3 * k / XFER_BATCHES, "simulating this graph");
        if (xfer_sample(w, &ds, w->graph, w->part, dp_graph_name(w->graph), b, &err) != DP_OK)
            goto done;
    }
    int nz = (int)(sizeof xfer_zoo / sizeof xfer_zoo[0]);
    for (int z = 0; z < nz; z++) {
        if (j->cancel) goto cancelled;
        job_set(j, 0.3 + 0.3 * z / nz, "simulating zoo models");
        struct dp_zoo_opts zo;
        dp_zoo_opts_default(&zo);
        zo.precision = w->target.precision;
        struct dp_coarsen_opts co = {.k = 0, .seed = DP_DEFAULT_SEED};
        struct dp_error zerr = {0};
        /* a model the zoo cannot build or group is skipped: the set is only wider with it */
        if (dp_zoo_build(xfer_zoo[z], &zo, &zg, &zerr) != DP_OK) continue;
        if (dp_coarsen(zg, &co, &zp, &zerr) == DP_OK) {
            int64_t zb = dp_graph_batch(zg) > 0 ? dp_graph_batch(zg) : 32;
            for (int k = 0; k < XFER_ZOO_BATCHES; k++, zb *= 2)
                if (xfer_sample(w, &ds, zg, zp, xfer_zoo[z], zb / 2, &err) != DP_OK) goto done;
        }
        dp_partition_free(zp);
        dp_graph_free(zg);
        zp = NULL;
        zg = NULL;
    }
    if (ds.n_samples < 5) {
        dp_error_set(&err, DP_ERR_INVALID, "only %d samples fit in memory on %s", ds.n_samples,
                     w->target.id);
        goto done;
    }
    job_set(j, 0.6, "embedding (body frozen)");
    struct dp_train_opts o;
    dp_train_opts_recipe(&o, DP_RECIPE_DRIPLE_C); /* as the shipped inspectors were made */
    o.target = DP_TARGET_BASE;
    o.mode = DP_TRAIN_HEAD;
    o.cancel = &j->cancel;
    o.progress = xfer_progress;
    o.ud = j;
    struct dp_train_result res;
    memset(&res, 0, sizeof res);
    if (dp_transfer(base, &ds, &o, &out, &res, &err) != DP_OK) goto done;
    bool cancelled = res.cancelled;
    if (cancelled) {
        dp_train_result_free(&res);
        goto cancelled;
    }
    /* the base's file, for the provenance (dp_transfer names the base's setting) */
    copy_str(dp_inspector_provenance_mut(out)->base,
             sizeof dp_inspector_provenance_mut(out)->base, w->base_path);
    snprintf(msg, sizeof msg,
             "transferred %s -> %s in %.1f s; f saves it (%d simulated samples; head only: %d "
             "epochs, %.1f s, best val loss %.3g)", w->base_id, w->target.id,
             (dp_clock_ms() - t_start) / 1e3, ds.n_samples, res.epochs_run, res.seconds,
             res.best_val_loss);
    dp_train_result_free(&res);
    end = APP_JOB_DONE;
    goto done;
cancelled:
    end = APP_JOB_CANCELLED;
    snprintf(msg, sizeof msg, "transfer to %s cancelled", w->target.id);
done:
    if (end == APP_JOB_FAILED) snprintf(msg, sizeof msg, "transfer failed: %.200s", err.msg);
    if (end != APP_JOB_DONE) {
        dp_inspector_free(out);
        out = NULL;
    }
    dp_partition_free(zp);
    dp_graph_free(zg);
    dp_dataset_free(&ds);
    dp_inspector_free(base);
    job_end(j, end, out, msg);
    return NULL;
}

bool app_transfer_start(struct app *a) {
    enum app_job_state st;
    app_tick(a); /* a finished job's inspector is taken in before anything else */
    pthread_mutex_lock(&a->job.mu);
    st = a->job.state;
    pthread_mutex_unlock(&a->job.mu);
    if (st == APP_JOB_RUNNING) {
        app_status(a, true, "a transfer is already running (x cancels it)");
        return false;
    }
    if (a->pred.ok && a->pred.src != APP_SRC_NEAREST) {
        app_status(a, true, "%s already has its own inspector", a->cur.id);
        return false;
    }
    const struct dp_setting *near = dp_settings_nearest(a->settings, &a->cur, true);
    if (!near) {
        app_status(a, true, "no inspector to transfer from (the setting list names none)");
        return false;
    }
    const struct dp_gpu *gpu = dp_gpu_find(a->cat, a->cur.gpu);
    if (!gpu) return false;
    if (a->job.started) pthread_join(a->job.thread, NULL);
    a->job.started = false;
    dp_inspector_free(a->job.result);
    a->job.result = NULL;
    struct xfer_work *w = calloc(1, sizeof *w);
    if (!w) return false;
    copy_str(w->base_path, sizeof w->base_path, near->inspector);
    copy_str(w->base_id, sizeof w->base_id, near->id);
    w->target = a->cur;
    w->gpu = *gpu;
    w->graph = a->graph;
    w->part = a->part;
    w->weights = a->weights;
    w->batch = a->batch;
    free(a->job.work);
    a->job.work = w;
    a->job.cancel = 0;
    a->job.state = APP_JOB_RUNNING;
    a->job.progress = 0;
    copy_str(a->job.phase, sizeof a->job.phase, "starting");
    copy_str(a->job.target, sizeof a->job.target, a->cur.id);
    if (pthread_create(&a->job.thread, NULL, xfer_main, &a->job) != 0) {
        a->job.state = APP_JOB_FAILED;
        copy_str(a->job.phase, sizeof a->job.phase, "failed");
        app_status(a, true, "transfer: cannot start a thread");
        return false;
    }
    a->job.started = true;
    app_status(a, false, "transferring %s -> %s in the background (simulated data; x cancels)",
               near->id, a->cur.id);
    return true;
}

void app_transfer_cancel(struct app *a) {
    pthread_mutex_lock(&a->job.mu);
    bool running = a->job.state == APP_JOB_RUNNING;
    pthread_mutex_unlock(&a->job.mu);
    if (!running) return;
    a->job.cancel = 1;
    app_status(a, false, "cancelling the transfer");
}

/* ---- keeping a transfer ------------------------------------------------------------------- */

/* Creates the directories above the file `path` (mkdir -p); false with err set on failure. */
static bool make_parent_dirs(const char *path, struct dp_error *err) {
    char d[PATH_MAX];
    copy_str(d, sizeof d, path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) return true;
    *slash = '\0';
    for (char *p = d + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(d, 0777) != 0 && errno != EEXIST) {
            dp_error_set(err, DP_ERR_IO, "%s: cannot create the directory: %s", d, strerror(errno));
            return false;
        }
        *p = c;
        if (!c) return true;
    }
}

/* Writes session transfer e (whole, not as a difference to its base: the file must outlive the
 * base's location) where dp_inspector_save_path says; then e names that file. */
static enum dp_status save_entry(struct app *a, struct app_insp *e, struct dp_error *err) {
    char path[sizeof e->path], base[PATH_MAX];
    if (!dp_inspector_save_path(a->settings, &e->target, path, sizeof path))
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "%s: nowhere to save its inspector (set DRIPLE_INSPECTORS or HOME)",
                            e->target.id);
    if (!make_parent_dirs(path, err)) return DP_ERR_IO;
    /* the base's file as the provenance names it, made absolute: relative to the working
     * directory it would mean nothing next to the saved file */
    struct dp_provenance *pv = dp_inspector_provenance_mut(e->insp);
    if (pv->base[0] && pv->base[0] != '/' && realpath(pv->base, base) &&
        strlen(base) < sizeof pv->base)
        copy_str(pv->base, sizeof pv->base, base);
    enum dp_status st = dp_inspector_save(e->insp, path, NULL, NULL, err);
    if (st != DP_OK) return st;
    e->saved = true;
    copy_str(e->path, sizeof e->path, path);
    return DP_OK;
}

/* path with $HOME written "~" (a status line is short), into buf (n bytes). */
static void home_short(const char *path, char *buf, size_t n) {
    const char *home = getenv("HOME");
    size_t len = home ? strlen(home) : 0;
    if (len > 1 && !strncmp(path, home, len) && path[len] == '/')
        snprintf(buf, n, "~%s", path + len);
    else
        copy_str(buf, n, path);
}

/* The latest session transfer to s, or NULL. */
static struct app_insp *session_for(struct app *a, const struct dp_setting *s) {
    for (int i = a->n_insps - 1; i >= 0; i--)
        if (a->insps[i].session && a->insps[i].insp && same_setting(&a->insps[i].target, s))
            return &a->insps[i];
    return NULL;
}

bool app_transfer_save(struct app *a) {
    app_tick(a); /* a transfer that just finished counts */
    struct app_insp *e = session_for(a, &a->cur);
    if (!e) {
        app_status(a, true, "no inspector was transferred to %s in this session (t transfers one)",
                   a->cur.id);
        return false;
    }
    if (e->saved) {
        char shown[sizeof e->path];
        home_short(e->path, shown, sizeof shown);
        app_status(a, false, "saved already: %s", shown);
        return true;
    }
    struct dp_error err = {0};
    if (save_entry(a, e, &err) != DP_OK) {
        app_status(a, true, "not saved: %s", err.msg);
        return false;
    }
    char shown[sizeof e->path];
    home_short(e->path, shown, sizeof shown);
    app_status(a, false, "saved to %s (%s, transferred on %s data)", shown, a->cur.id,
               dp_inspector_provenance(e->insp)->data);
    return true;
}

bool app_transfer_save_all(struct app *a) {
    int n = 0;
    for (int i = 0; i < a->n_insps; i++) {
        struct app_insp *e = &a->insps[i];
        if (!e->session || !e->insp || e->saved) continue;
        struct dp_error err = {0};
        if (save_entry(a, e, &err) != DP_OK) {
            app_status(a, true, "not saved: %s", err.msg);
            return false;
        }
        n++;
    }
    app_status(a, false, "saved %d transferred inspector%s", n, n == 1 ? "" : "s");
    return true;
}

int app_unsaved(const struct app *a) {
    int n = 0;
    for (int i = 0; i < a->n_insps; i++)
        n += a->insps[i].session && a->insps[i].insp && !a->insps[i].saved;
    return n;
}

bool app_pred_unsaved(const struct app *a) {
    if (!a->pred.ok || a->pred.insp < 0 || a->pred.insp >= a->n_insps) return false;
    const struct app_insp *e = &a->insps[a->pred.insp];
    return e->session && !e->saved;
}

/* The next setting whose inspector file is not loaded yet (idle preloading), or -1. */
static int preload_next(const struct app *a) {
    if (!a->defer_sims || !a->settings) return -1;
    for (int k = a->preload; k < a->settings->n_settings; k++) {
        const struct dp_setting *e = &a->settings->settings[k];
        if (e->inspector[0] && !insp_known(a, e->inspector) && access(e->inspector, R_OK) == 0)
            return k;
    }
    return -1;
}

bool app_pending(const struct app *a) {
    if (a->pred.sim_pending) return true;
    for (int i = 0; i < a->n_rows; i++)
        if (a->rows[i].p.sim_pending || a->rows[i].p.insp_pending) return true;
    return preload_next(a) >= 0;
}

bool app_fill_pending(struct app *a, double budget_ms) {
    double t0 = dp_clock_ms();
    bool changed = false, rows = false;
    if (a->pred.sim_pending) {
        pred_apply_sim(a, &a->cur, &a->pred, sim_get(a, &a->cur));
        changed = true;
    }
    for (int i = 0; i < a->n_rows && dp_clock_ms() - t0 < budget_ms; i++) {
        struct app_row *r = &a->rows[i];
        if (r->p.insp_pending) { /* loads the inspector file, then predicts */
            app_predict(a, &r->s, &r->p);
            changed = rows = true;
        }
        if (r->p.sim_pending && dp_clock_ms() - t0 < budget_ms) {
            pred_apply_sim(a, &r->s, &r->p, sim_get(a, &r->s));
            changed = rows = true;
        }
    }
    /* nothing on screen waits: load the next inspector file ahead of its first use */
    if (!changed) {
        int k = preload_next(a);
        if (k >= 0) {
            char note[160] = "";
            const struct dp_setting *e = &a->settings->settings[k];
            insp_get(a, e->inspector, e->id, note, sizeof note);
            a->preload = k + 1;
        } else if (a->settings) {
            a->preload = a->settings->n_settings;
        }
    }
    if (rows) {
        /* re-sort, keeping the selection on the same row */
        int sel = a->sel[APP_TAB_COMPARE];
        char label[DP_NAME_MAX] = "";
        if (sel >= 0 && sel < a->n_rows) copy_str(label, sizeof label, a->rows[sel].label);
        sort_rows(a);
        for (int i = 0; i < a->n_rows; i++)
            if (!strcmp(a->rows[i].label, label)) a->sel[APP_TAB_COMPARE] = i;
    }
    return changed;
}

bool app_tick(struct app *a) {
    pthread_mutex_lock(&a->job.mu);
    enum app_job_state st = a->job.state;
    struct dp_inspector *res = a->job.result;
    char msg[256];
    copy_str(msg, sizeof msg, a->job.msg);
    bool running = st == APP_JOB_RUNNING;
    a->job.result = NULL;
    pthread_mutex_unlock(&a->job.mu);
    if (running) return true; /* the progress bar moves */
    if (!a->job.started) return false;
    pthread_join(a->job.thread, NULL);
    a->job.started = false;
    if (res) {
        struct app_insp *grown = realloc(a->insps, ((size_t)a->n_insps + 1) * sizeof *grown);
        if (!grown) {
            dp_inspector_free(res);
            app_status(a, true, "transfer: out of memory");
            return true;
        }
        a->insps = grown;
        struct app_insp *e = &a->insps[a->n_insps++];
        memset(e, 0, sizeof *e);
        e->insp = res;
        e->session = true;
        e->target = ((const struct xfer_work *)a->job.work)->target;
        copy_str(e->setting, sizeof e->setting, a->job.target);
        snprintf(e->path, sizeof e->path, "(session:%s)", a->job.target);
        a->dirty = true;
        app_refresh(a);
    }
    app_status(a, st != APP_JOB_DONE, "%s", msg);
    return true;
}

void app_job_snapshot(struct app *a, enum app_job_state *st, double *progress, char *phase,
                      size_t n) {
    pthread_mutex_lock(&a->job.mu);
    *st = a->job.state;
    *progress = a->job.progress;
    copy_str(phase, n, a->job.phase);
    pthread_mutex_unlock(&a->job.mu);
}
