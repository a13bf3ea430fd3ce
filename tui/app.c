/* app.c: the explorer's model around its what-if session (dp/session.h): opening the graph and
 * the files, the what-if setting and its changes, the prediction and the simulator's estimate
 * (deferred while the UI must answer a key first), and the JSON export. The compare rows are in
 * app_compare.c, navigation in app_ui.c, the background transfer in app_job.c. */
#include "app_impl.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/clock.h"
#include "dp/graph_io.h"
#include "dp/json_out.h"
#include "dp/shipped.h"


const enum dp_derived app_derived_rows[APP_N_DERIVED_ROWS] = {
    DP_D_ITERATION_MS, DP_D_THROUGHPUT, DP_D_MEAN_GPU_UTIL, DP_D_MEMORY_GB,
    DP_D_NET_MB_PER_ITER, DP_D_EPOCH_S, DP_D_EPOCH_COST};

void app_status(struct app *a, bool err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_err = err;
}

void app_copy(char *dst, size_t n, const char *src) {
    if (n) snprintf(dst, n, "%.*s", (int)(n - 1), src ? src : "");
}

/* ---- the sample graph ---------------------------------------------------------------------- */

static int cmp_str(const void *x, const void *y) {
    return strcmp(*(char *const *)x, *(char *const *)y);
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

/* ---- groups ------------------------------------------------------------------------------- */

static int cmp_count_desc(const void *x, const void *y) {
    const int *p = x, *q = y;
    return (q[1] > p[1]) - (q[1] < p[1]);
}

/* Per group: op count and the two most frequent op types ("Conv2D 12, Relu 8"). */
static enum dp_status index_groups(struct app *a) {
    const struct dp_graph *graph = dp_session_graph(a->ss);
    const struct dp_partition *part = dp_session_partition(a->ss);
    size_t n = dp_graph_n_nodes(graph);
    int ng = part->n_groups;
    a->group_of_node = malloc((n + 1) * sizeof *a->group_of_node);
    a->group_top = calloc((size_t)ng + 1, sizeof *a->group_top);
    a->group_ops = calloc((size_t)ng + 1, sizeof *a->group_ops);
    int *pairs = malloc(((size_t)part->n_ops + 1) * 2 * sizeof *pairs);
    if (!a->group_of_node || !a->group_top || !a->group_ops || !pairs) {
        free(pairs);
        return DP_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) a->group_of_node[i] = -1;
    for (int k = 0; k < part->n_ops; k++) {
        a->group_of_node[part->op_index[k]] = part->group[k];
        a->group_ops[part->group[k]]++;
    }
    for (int g = 0; g < ng; g++) {
        /* (first op index of a type, count) pairs over the group's ops: n_ops is small per group */
        int np = 0;
        for (int k = 0; k < part->n_ops; k++) {
            if (part->group[k] != g) continue;
            const char *op = dp_graph_node(graph, (size_t)part->op_index[k])->op;
            int j = 0;
            for (; j < np; j++)
                if (!strcmp(dp_graph_node(graph, (size_t)pairs[2 * j])->op, op)) break;
            if (j == np) {
                pairs[2 * np] = part->op_index[k];
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
                             dp_graph_node(graph, (size_t)pairs[2 * j])->op, pairs[2 * j + 1]);
            if (w < 0 || (size_t)w >= cap - len) break;
            len += (size_t)w;
        }
    }
    free(pairs);
    return DP_OK;
}

int app_group_of_op(const struct app *a, int op_index) {
    if (!a->group_of_node || op_index < 0 ||
        (size_t)op_index >= dp_graph_n_nodes(dp_session_graph(a->ss)))
        return -1;
    return a->group_of_node[op_index];
}

/* ---- predictions -------------------------------------------------------------------------- */

void app_predict_settings(struct app *a, const struct dp_setting *s, int n, bool defer_load,
                          struct app_pred *out) {
    struct dp_error err = {0};
    unsigned flags = DP_RESOLVE_NEAREST | (defer_load ? DP_RESOLVE_DEFER : 0);
    struct dp_prediction *p = calloc((size_t)n + 1, sizeof *p);
    bool batched = p && dp_session_predict_many(a->ss, s, n, flags, p, &err) == DP_OK;
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].explain = -1;
        if (batched) {
            out[i].p = p[i];
        } else if (dp_session_predict(a->ss, &s[i], flags, &out[i].p, &err) != DP_OK) {
            /* one row's failure (an unreadable inspector file) is that row's alone */
            app_copy(out[i].p.note, sizeof out[i].p.note, err.msg);
        }
        /* with defer_sims an uncached simulation waits for app_fill_pending (the key answers
         * first) */
        if (dp_session_simulate(a->ss, &s[i], a->defer_sims, &out[i].sim, &out[i].sim_pending,
                                &err) != DP_OK)
            app_copy(out[i].sim.note, sizeof out[i].sim.note, err.msg);
        else if (!out[i].sim_pending)
            dp_prediction_use_simulation(&out[i].p, &out[i].sim);
    }
    free(p);
}

void app_predict(struct app *a, const struct dp_setting *s, struct app_pred *out) {
    app_predict_settings(a, s, 1, false, out);
    /* the prediction's own inspector (none under the setting-aware one: the Importance tab
     * explains through it, dp_session_explain_sa) */
    out->explain = out->p.ok ? out->p.from.inspector : -1;
}

/* Runs s's pending simulation into p. */
static void fill_simulation(struct app *a, const struct dp_setting *s, struct app_pred *p) {
    struct dp_error err = {0};
    if (dp_session_simulate(a->ss, s, false, &p->sim, &p->sim_pending, &err) != DP_OK)
        app_copy(p->sim.note, sizeof p->sim.note, err.msg);
    else
        dp_prediction_use_simulation(&p->p, &p->sim);
    p->sim_pending = false;
}

const struct dp_inspector *app_inspector(const struct app *a) {
    return a->pred.explain >= 0 ? dp_session_inspector(a->ss, a->pred.explain) : NULL;
}

void app_refresh(struct app *a) {
    if (!a->dirty) return;
    a->dirty = false;
    app_predict(a, &a->cur, &a->pred);
    /* the compare rows cost one head (and maybe one simulation) per row: only when shown */
    a->rows_stale = true;
    if (a->tab == APP_TAB_COMPARE) app_compare_ensure(a);
}

bool app_pending(const struct app *a) {
    if (a->pred.sim_pending || app_scaling_pending(a)) return true;
    for (int i = 0; i < a->n_rows; i++)
        if (a->rows[i].p.sim_pending || a->rows[i].p.p.pending) return true;
    return a->defer_sims && dp_session_preload_left(a->ss);
}

bool app_fill_pending(struct app *a, double budget_ms) {
    double t0 = dp_clock_ms();
    bool changed = false, rows = false;
    if (a->pred.sim_pending) {
        fill_simulation(a, &a->cur, &a->pred);
        changed = true;
    }
    for (int i = 0; i < a->n_rows && dp_clock_ms() - t0 < budget_ms; i++) {
        struct app_row *r = &a->rows[i];
        if (r->p.p.pending) { /* loads the inspector file, then predicts */
            struct dp_error err = {0};
            if (dp_session_predict(a->ss, &r->s, DP_RESOLVE_NEAREST, &r->p.p, &err) != DP_OK)
                app_copy(r->p.p.note, sizeof r->p.p.note, err.msg);
            else if (r->p.sim.ok)
                dp_prediction_use_simulation(&r->p.p, &r->p.sim);
            changed = rows = true;
        }
        if (r->p.sim_pending && dp_clock_ms() - t0 < budget_ms) {
            fill_simulation(a, &r->s, &r->p);
            changed = rows = true;
        }
    }
    if (dp_clock_ms() - t0 < budget_ms) changed |= app_scaling_fill(a, budget_ms - (dp_clock_ms() - t0));
    /* nothing on screen waits: load the next inspector file ahead of its first use */
    if (!changed && a->defer_sims) dp_session_preload_next(a->ss);
    if (rows) {
        /* re-sort, keeping the selection on the same row */
        int sel = a->sel[APP_TAB_COMPARE];
        char label[DP_NAME_MAX] = "";
        if (sel >= 0 && sel < a->n_rows) app_copy(label, sizeof label, a->rows[sel].label);
        app_compare_prune(a);
        app_sort_rows(a);
        for (int i = 0; i < a->n_rows; i++)
            if (!strcmp(a->rows[i].label, label)) a->sel[APP_TAB_COMPARE] = i;
    }
    return changed;
}

/* ---- the what-if setting ------------------------------------------------------------------ */

bool app_what_of(const struct app *a, const struct dp_setting *s, struct app_what *w) {
    const struct dp_gpu_catalog *cat = dp_session_catalog(a->ss);
    const struct dp_gpu *g = dp_gpu_find(cat, s->gpu);
    if (!g) return false;
    w->gpu = (int)(g - cat->gpus);
    w->sync = s->sync;
    w->ps = s->ps > 0 ? s->ps : 1;
    w->workers = s->workers;
    w->placement = s->placement;
    w->network = s->network;
    /* a default machine count follows later changes of workers and PS; another one stays */
    w->machines = s->machines == dp_setting_default_machines(s->sync, s->workers, s->ps,
                                                             s->network, s->placement)
                      ? 0
                      : s->machines;
    w->precision = s->precision;
    w->framework = s->framework;
    return true;
}

bool app_setting_of(const struct app *a, const struct app_what *w, int gpu, struct dp_setting *out,
                    struct dp_error *err) {
    struct dp_setting s;
    memset(&s, 0, sizeof s);
    app_copy(s.gpu, sizeof s.gpu, dp_session_catalog(a->ss)->gpus[gpu].name);
    s.sync = w->sync;
    s.ps = w->sync == DP_SYNC_PS ? w->ps : 0;
    s.workers = w->workers;
    s.placement = w->sync == DP_SYNC_PS ? w->placement : DP_PLACE_HOMO;
    s.network = w->network;
    s.machines = w->machines;
    s.precision = w->precision;
    s.framework = w->framework;
    if (dp_setting_finish(&s, err) != DP_OK) return false;
    *out = s;
    return true;
}

static bool make_current(struct app *a, const struct app_what *w, struct dp_error *err) {
    struct dp_setting s;
    if (!app_setting_of(a, w, w->gpu, &s, err)) return false;
    a->cur = s;
    a->what = *w;
    a->dirty = true;
    return true;
}

bool app_what_apply(struct app *a, const struct app_what *w) {
    struct dp_error err = {0};
    if (!make_current(a, w, &err)) {
        app_status(a, true, "%s", err.msg);
        return false;
    }
    app_refresh(a);
    const struct dp_prediction *p = &a->pred.p;
    if (p->ok && p->from.source == DP_SOURCE_NEAREST)
        app_status(a, false, "%s: no inspector; %s's (extrapolated); t transfers one",
                   a->cur.id, p->from.setting_id);
    else
        app_status(a, false, "%s", a->cur.id);
    return true;
}

bool app_gpu_step(struct app *a, int dir) {
    int n = dp_session_catalog(a->ss)->n_gpus;
    struct app_what w = a->what;
    w.gpu = (w.gpu + dir + n) % n;
    return app_what_apply(a, &w);
}

bool app_workers_step(struct app *a, int dir) {
    struct app_what w = a->what;
    w.workers += dir;
    if (w.workers < 1 || w.workers > 64) {
        app_status(a, true, "workers must be in [1, 64]");
        return false;
    }
    return app_what_apply(a, &w);
}

bool app_ps_step(struct app *a, int dir) {
    struct app_what w = a->what;
    if (w.sync == DP_SYNC_ALLREDUCE) {
        app_status(a, true, "all-reduce has no parameter servers (a switches to parameter servers)");
        return false;
    }
    w.ps += dir;
    if (w.ps < 1 || w.ps > 64) {
        app_status(a, true, "parameter servers must be in [1, 64]");
        return false;
    }
    return app_what_apply(a, &w);
}

bool app_network_step(struct app *a, int dir) {
    struct app_what w = a->what;
    /* Skip networks the placement cannot use (hetero needs a cross-machine network). */
    for (int k = 0; k < DP_NET_COUNT; k++) {
        w.network = (enum dp_network)(((int)w.network + dir + DP_NET_COUNT) % DP_NET_COUNT);
        if (w.placement == DP_PLACE_HOMO || w.sync == DP_SYNC_ALLREDUCE ||
            !dp_network_intra(w.network))
            break;
    }
    return app_what_apply(a, &w);
}

bool app_placement_toggle(struct app *a) {
    struct app_what w = a->what;
    if (w.sync == DP_SYNC_ALLREDUCE) {
        app_status(a, true, "all-reduce places no parameter servers (a switches to them)");
        return false;
    }
    w.placement = w.placement == DP_PLACE_HOMO ? DP_PLACE_HETERO : DP_PLACE_HOMO;
    if (w.placement == DP_PLACE_HETERO && dp_network_intra(w.network)) {
        app_status(a, true, "hetero placement needs a cross-machine network (press n)");
        return false;
    }
    return app_what_apply(a, &w);
}

bool app_precision_toggle(struct app *a) {
    struct app_what w = a->what;
    w.precision = w.precision == DP_PREC_FP32 ? DP_PREC_MIXED : DP_PREC_FP32;
    return app_what_apply(a, &w);
}

bool app_sync_toggle(struct app *a) {
    struct app_what w = a->what;
    w.sync = w.sync == DP_SYNC_PS ? DP_SYNC_ALLREDUCE : DP_SYNC_PS;
    if (w.ps < 1) w.ps = 1;
    return app_what_apply(a, &w);
}

bool app_framework_toggle(struct app *a) {
    struct app_what w = a->what;
    w.framework = w.framework == DP_FW_TENSORFLOW ? DP_FW_PYTORCH : DP_FW_TENSORFLOW;
    return app_what_apply(a, &w);
}

bool app_batch_set(struct app *a, int64_t batch) {
    if (batch < 1 || batch > DP_BATCH_MAX) {
        app_status(a, true, "batch size must be in [1, %lld]", (long long)DP_BATCH_MAX);
        return false;
    }
    struct dp_error err = {0};
    if (dp_session_set_batch(a->ss, batch, &err) != DP_OK) {
        app_status(a, true, "%s", err.msg);
        return false;
    }
    a->dirty = true;
    app_refresh(a);
    app_status(a, false, "batch %lld", (long long)batch);
    return true;
}

bool app_batch_step(struct app *a, int dir) {
    int64_t batch = dp_session_batch(a->ss), b = dir > 0 ? batch * 2 : batch / 2;
    return app_batch_set(a, b < 1 ? 1 : b);
}

/* The economics changed: the session's epoch figures follow. */
static void economics_apply(struct app *a) {
    dp_session_set_economics(a->ss, a->dataset_size, a->price_hour);
    a->dirty = true;
    app_refresh(a);
}

bool app_dataset_set(struct app *a, double samples) {
    if (!(samples >= 1 && samples <= 1e12)) {
        app_status(a, true, "dataset size must be in [1, 1e12] samples");
        return false;
    }
    a->dataset_size = samples;
    economics_apply(a);
    return true;
}

bool app_price_set(struct app *a, double dollars) {
    if (!isnan(dollars) && !(dollars >= 0 && dollars <= 1e4)) {
        app_status(a, true, "price must be in [0, 10000] $ per GPU-hour");
        return false;
    }
    a->price_hour = dollars;
    economics_apply(a);
    return true;
}

/* ---- export ------------------------------------------------------------------------------- */

static void jw_pred(struct dp_jw *w, const struct app_pred *p) {
    dp_jw_object(w, "prediction");
    dp_jw_prediction(w, &p->p);
    dp_jw_simulation(w, "simulated", &p->sim);
    dp_jw_end(w);
}

enum dp_status app_export_json(const struct app *a, const char *path, struct dp_error *err) {
    struct dp_jw *w = dp_jw_new();
    dp_jw_str(w, "format", "driple-explore/1");
    dp_jw_str(w, "graph", dp_graph_name(dp_session_graph(a->ss)));
    dp_jw_int(w, "batch", dp_session_batch(a->ss));
    dp_jw_str(w, "setting", a->cur.id);
    dp_jw_num(w, "dataset_size", a->dataset_size);
    dp_jw_num(w, "price_per_gpu_hour", a->price_hour);
    jw_pred(w, &a->pred);
    dp_jw_array(w, "compare");
    for (int i = 0; i < a->n_rows; i++) {
        dp_jw_object(w, NULL);
        dp_jw_str(w, "label", a->rows[i].label);
        jw_pred(w, &a->rows[i].p);
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
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->job.mu, NULL);
    a->dataset_size = DP_EPOCH_SAMPLES_DEFAULT;
    a->price_hour = NAN; /* each GPU's catalog price */
    a->color = a->utf8 = true;
    a->metric = 4; /* gpu_util.active */
    a->imp_select = -1;
    a->pane_sel[APP_PANE_TABLE] = 1;

    if (o->graph) app_copy(a->graph_path, sizeof a->graph_path, o->graph);
    else if (!find_sample_graph(a->graph_path, sizeof a->graph_path))
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "samples/graphs: no sample graph found (give a GRAPH)");
    struct dp_session_opts so = {.gpus = o->gpus, .settings = o->settings, .weights = o->weights,
                                 .sa = o->sa};
    if ((st = dp_session_open(&so, &a->ss, err)) != DP_OK) return st;
    dp_session_set_economics(a->ss, a->dataset_size, a->price_hour);
    struct dp_import_opts io = {.exported_batch = o->exported_batch};
    struct dp_coarsen_opts co = {.k = 0, .seed = DP_DEFAULT_SEED};
    if ((st = dp_session_load_graph(a->ss, a->graph_path, &io, &co, err)) != DP_OK) return st;
    a->dataset_size = dp_session_epoch_samples(a->ss, NULL); /* the graph's family default */
    const struct dp_graph *graph = dp_session_graph(a->ss);
    const struct dp_partition *part = dp_session_partition(a->ss);
    if ((st = index_groups(a)) != DP_OK) return dp_error_set(err, st, "explorer: out of memory");
    int64_t batch = o->batch > 0 ? o->batch : dp_graph_batch(graph);
    bool batch_assumed = batch <= 0;
    if ((st = dp_session_set_batch(a->ss, batch_assumed ? DP_IMPORT_ASSUMED_BATCH : batch, err)))
        return st;

    const struct dp_gpu_catalog *cat = dp_session_catalog(a->ss);
    const struct dp_settings *list = dp_session_settings(a->ss);
    if (cat->n_gpus == 0) return dp_error_set(err, DP_ERR_INVALID, "%s: no GPU in the catalog", cat->path);
    a->marked = calloc((size_t)cat->n_gpus, sizeof *a->marked);
    if (!a->marked) return dp_error_set(err, DP_ERR_NOMEM, "explorer: out of memory");

    /* Start from the list's first setting (or the catalog's first GPU, 1 PS, 2 workers). */
    /* Start at the setting asked for (an id: the list's, else parsed), else the list's first
     * (or the catalog's first GPU, 1 PS, 2 workers over PCIe). */
    struct app_what w = {.ps = 1, .workers = 2, .network = DP_NET_PCIE};
    struct dp_setting s0;
    bool listed;
    if (o->setting) {
        if ((st = dp_session_find_setting(a->ss, o->setting, &s0, &listed, err)) != DP_OK) return st;
        app_what_of(a, &s0, &w);
    } else if (list->n_settings > 0) {
        app_what_of(a, &list->settings[0], &w);
    }
    if (!make_current(a, &w, err)) return err ? err->status : DP_ERR_INVALID;
    app_refresh(a);
    int n_files = 0;
    for (int k = 0; k < list->n_settings; k++)
        n_files += list->settings[k].inspector[0] && access(list->settings[k].inspector, R_OK) == 0;
    /* an assumed batch size is said, not hidden: every number depends on it */
    char note[80] = "";
    if (batch_assumed)
        snprintf(note, sizeof note, "; the graph gives no batch size: %d assumed (+/- to change)",
                 DP_IMPORT_ASSUMED_BATCH);
    app_status(a, batch_assumed, "%s: %d of %zu ops in %d groups; %d GPUs, %d settings, %d with an "
               "inspector file%s", dp_graph_name(graph), part->n_ops, dp_graph_n_nodes(graph),
               part->n_groups, cat->n_gpus, list->n_settings, n_files, note);
    return DP_OK;
}

void app_free(struct app *a) {
    if (!a) return;
    if (a->imp_release) a->imp_release(a);
    app_job_stop(a);
    free(a->rows);
    free(a->marked);
    free(a->hits);
    free(a->group_of_node);
    free(a->group_top);
    free(a->group_ops);
    dp_session_free(a->ss);
    memset(a, 0, sizeof *a);
}
