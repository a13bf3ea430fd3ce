/* app_compare.c: the compare tab's rows: every GPU of the catalog at the what-if cluster, or
 * every setting of the list, each predicted and simulated (deferred in the UI), sorted, marked,
 * and made the what-if setting on Enter. */
#include "app_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"

const char *const app_sort_names[APP_SORT_COUNT] = {"throughput", "iteration", "cost",
                                                    "utilisation"};

static double row_key(const struct app_row *r, enum app_sort s, bool sim) {
    /* rows without a prediction sort on their simulated figures (they show those) */
    const double *d = r->p.p.ok && !sim ? r->p.p.d : r->p.sim.d;
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

void app_sort_rows(struct app *a) {
    g_sort = a->sort;
    g_sort_sim = a->sort_sim;
    qsort(a->rows, (size_t)a->n_rows, sizeof *a->rows, cmp_rows);
}

/* Every sync, framework and network the what-if GPU and worker count can take (options mode):
 * setting k of that list into *s; false when that combination is not a setting. */
#define OPTIONS_N (2 * 2 * DP_NET_COUNT)
static bool option_setting(const struct app *a, int k, struct dp_setting *s) {
    struct app_what w = a->what;
    w.sync = (enum dp_sync)(k / (2 * DP_NET_COUNT));
    w.framework = (enum dp_framework)(k / DP_NET_COUNT % 2);
    w.network = (enum dp_network)(k % DP_NET_COUNT);
    w.machines = 0;
    w.placement = DP_PLACE_HOMO;
    /* NVLink only where the GPU has it */
    const struct dp_gpu_catalog *cat = dp_session_catalog(a->ss);
    if (w.network == DP_NET_NVLINK && !dp_gpu_has_nvlink(&cat->gpus[w.gpu])) return false;
    struct dp_error err = {0};
    return app_setting_of(a, &w, w.gpu, s, &err);
}

void app_compare_prune(struct app *a) {
    if (!a->hide_oom) return;
    int k = 0;
    for (int i = 0; i < a->n_rows; i++)
        if (!(a->rows[i].p.sim.ok && a->rows[i].p.sim.oom)) a->rows[k++] = a->rows[i];
    a->n_rows = k;
}

static void compare_build(struct app *a) {
    const struct dp_gpu_catalog *cat = dp_session_catalog(a->ss);
    const struct dp_settings *list = dp_session_settings(a->ss);
    free(a->rows);
    a->rows = NULL;
    a->n_rows = 0;
    int n = a->cmp_mode == APP_CMP_GPUS       ? cat->n_gpus
            : a->cmp_mode == APP_CMP_SETTINGS ? list->n_settings
                                              : OPTIONS_N;
    a->rows = calloc((size_t)n + 1, sizeof *a->rows);
    struct dp_setting *ss = calloc((size_t)n + 1, sizeof *ss);
    struct app_pred *ps = calloc((size_t)n + 1, sizeof *ps);
    if (!a->rows || !ss || !ps) {
        app_status(a, true, "compare: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        struct app_row *r = &a->rows[a->n_rows];
        struct dp_setting s;
        r->setting = -1;
        if (a->cmp_mode == APP_CMP_GPUS) {
            if (a->only_marked && !a->marked[i]) continue;
            struct dp_error err = {0};
            if (!app_setting_of(a, &a->what, i, &s, &err)) continue;
            r->gpu = i;
            app_copy(r->label, sizeof r->label, cat->gpus[i].name);
        } else if (a->cmp_mode == APP_CMP_SETTINGS) {
            s = list->settings[i];
            const struct dp_gpu *g = dp_gpu_find(cat, s.gpu);
            r->gpu = g ? (int)(g - cat->gpus) : -1;
            r->setting = i;
            app_copy(r->label, sizeof r->label, s.id);
        } else {
            if (!option_setting(a, i, &s)) continue;
            r->gpu = a->what.gpu;
            app_copy(r->label, sizeof r->label, s.id);
        }
        r->current = dp_setting_same_cluster(&s, &a->cur);
        r->s = ss[a->n_rows++] = s;
    }
    /* every row in one call (one batched head); in the UI a row whose inspector file is not
     * loaded yet waits for an idle frame */
    app_predict_settings(a, ss, a->n_rows, a->defer_sims, ps);
    for (int i = 0; i < a->n_rows; i++) a->rows[i].p = ps[i];
    app_compare_prune(a);
    app_sort_rows(a);
done:
    free(ss);
    free(ps);
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
    app_sort_rows(a);
    app_status(a, false, "sorted by %s %s", a->sort_sim ? "simulated" : "predicted",
               app_sort_names[a->sort]);
}

void app_sort_source_toggle(struct app *a) {
    app_compare_ensure(a);
    a->sort_sim = !a->sort_sim;
    app_sort_rows(a);
    app_status(a, false, "sorted by %s %s", a->sort_sim ? "simulated" : "predicted",
               app_sort_names[a->sort]);
}

void app_mark_toggle(struct app *a) {
    int s = a->sel[APP_TAB_COMPARE];
    if (a->cmp_mode != APP_CMP_GPUS) {
        app_status(a, true, "Space marks GPUs in the every-GPU view (c switches to it)");
        return;
    }
    if (s < 0 || s >= a->n_rows || a->rows[s].gpu < 0) return;
    int g = a->rows[s].gpu;
    a->marked[g] = !a->marked[g];
    app_status(a, false, "%s %s", dp_session_catalog(a->ss)->gpus[g].name,
               a->marked[g] ? "marked" : "unmarked");
}

void app_hide_oom_toggle(struct app *a) {
    a->hide_oom = !a->hide_oom;
    a->sel[APP_TAB_COMPARE] = a->scroll[APP_TAB_COMPARE] = 0;
    a->rows_stale = true;
    app_compare_ensure(a);
    app_status(a, false, a->hide_oom ? "rows out of GPU memory hidden (O shows them)"
                                     : "every row, out of GPU memory or not");
}

void app_only_marked_toggle(struct app *a) {
    if (a->cmp_mode != APP_CMP_GPUS) {
        app_status(a, true, "M works on the every-GPU view (c switches to it)");
        return;
    }
    bool any = false;
    for (int i = 0; i < dp_session_catalog(a->ss)->n_gpus; i++) any |= a->marked[i];
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
    if (!app_what_of(a, &a->rows[s].s, &w)) {
        app_status(a, true, "%s: its GPU is not in the catalog", a->rows[s].s.id);
        return;
    }
    app_what_apply(a, &w);
}

void app_compare_ensure(struct app *a) {
    if (!a->rows_stale) return;
    a->rows_stale = false;
    compare_build(a);
    if (a->sel[APP_TAB_COMPARE] >= a->n_rows) a->sel[APP_TAB_COMPARE] = a->n_rows - 1;
    if (a->sel[APP_TAB_COMPARE] < 0) a->sel[APP_TAB_COMPARE] = 0;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_str(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double x) {
    if (isfinite(x)) fprintf(f, ",%.6g", x);
    else fputs(",", f);
}

enum dp_status app_export_csv(struct app *a, const char *path, struct dp_error *err) {
    app_compare_ensure(a);
    for (bool waiting = true; waiting;) { /* every row's figures, not "..." */
        waiting = false;
        for (int i = 0; i < a->n_rows; i++)
            waiting |= a->rows[i].p.sim_pending || a->rows[i].p.p.pending;
        if (waiting) app_fill_pending(a, 1e9);
    }
    struct dp_out *o = NULL;
    enum dp_status st = dp_out_open(path, &o, err);
    if (st) return st;
    FILE *f = dp_out_stream(o);
    fputs("row,id,gpu,source,iteration_ms,throughput,mean_gpu_util,epoch_s,epoch_cost,"
          "price_per_gpu_hour,memory_gb,oom,sim_iteration_ms,sim_throughput,sim_memory_gb\n", f);
    for (int i = 0; i < a->n_rows; i++) {
        const struct app_row *r = &a->rows[i];
        const struct dp_prediction *p = &r->p.p;
        const struct dp_simulation *sim = &r->p.sim;
        csv_str(f, r->label);
        fputc(',', f);
        csv_str(f, r->s.id);
        fputc(',', f);
        csv_str(f, r->s.gpu);
        fputc(',', f);
        csv_str(f, p->ok ? dp_pred_source_name(p->from.source) : "simulated only");
        const double *d = p->ok ? p->d : sim->d;
        csv_num(f, d[DP_D_ITERATION_MS]);
        csv_num(f, d[DP_D_THROUGHPUT]);
        csv_num(f, d[DP_D_MEAN_GPU_UTIL]);
        csv_num(f, d[DP_D_EPOCH_S]);
        csv_num(f, d[DP_D_EPOCH_COST]);
        csv_num(f, (p->ok ? p->facts : sim->facts).price_per_gpu_hour);
        csv_num(f, p->ok ? p->d[DP_D_MEMORY_GB] : sim->memory_gb);
        fputs(sim->ok ? (sim->oom ? ",true" : ",false") : ",", f);
        csv_num(f, sim->d[DP_D_ITERATION_MS]);
        csv_num(f, sim->d[DP_D_THROUGHPUT]);
        csv_num(f, sim->memory_gb);
        fputc('\n', f);
    }
    return dp_out_commit(o, err);
}
