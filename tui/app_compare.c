/* app_compare.c: the compare tab's rows: every GPU of the catalog at the what-if cluster, or
 * every setting of the list, each predicted and simulated (deferred in the UI), sorted, marked,
 * and made the what-if setting on Enter. */
#include "app_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static void compare_build(struct app *a) {
    const struct dp_gpu_catalog *cat = dp_session_catalog(a->ss);
    const struct dp_settings *list = dp_session_settings(a->ss);
    free(a->rows);
    a->rows = NULL;
    a->n_rows = 0;
    int n = a->cmp_mode == APP_CMP_GPUS ? cat->n_gpus : list->n_settings;
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
            if (dp_setting_make(cat->gpus[i].name, a->what.workers, a->what.ps,
                                a->what.network, 0, a->what.placement, a->what.precision, &s,
                                &err) != DP_OK)
                continue;
            r->gpu = i;
            r->setting = -1;
            app_copy(r->label, sizeof r->label, cat->gpus[i].name);
        } else {
            s = list->settings[i];
            const struct dp_gpu *g = dp_gpu_find(cat, s.gpu);
            r->gpu = g ? (int)(g - cat->gpus) : -1;
            if (a->only_marked && (r->gpu < 0 || !a->marked[r->gpu])) continue;
            r->setting = i;
            app_copy(r->label, sizeof r->label, s.id);
        }
        r->current = dp_setting_same_cluster(&s, &a->cur);
        r->s = s;
        /* in the UI a row whose inspector file is not loaded yet waits for an idle frame */
        app_predict_setting(a, &s, a->defer_sims, &r->p);
        a->n_rows++;
    }
    app_sort_rows(a);
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
    if (s < 0 || s >= a->n_rows || a->rows[s].gpu < 0) return;
    int g = a->rows[s].gpu;
    a->marked[g] = !a->marked[g];
    app_status(a, false, "%s %s", dp_session_catalog(a->ss)->gpus[g].name,
               a->marked[g] ? "marked" : "unmarked");
}

void app_only_marked_toggle(struct app *a) {
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
    const struct app_row *r = &a->rows[s];
    if (r->setting >= 0) {
        const struct dp_setting *e = &dp_session_settings(a->ss)->settings[r->setting];
        w.ps = e->ps;
        w.workers = e->workers;
        w.placement = e->placement;
        w.network = e->network;
        w.precision = e->precision;
    }
    if (r->gpu >= 0) w.gpu = r->gpu;
    app_what_apply(a, &w);
}

void app_compare_ensure(struct app *a) {
    if (!a->rows_stale) return;
    a->rows_stale = false;
    compare_build(a);
    if (a->sel[APP_TAB_COMPARE] >= a->n_rows) a->sel[APP_TAB_COMPARE] = a->n_rows - 1;
    if (a->sel[APP_TAB_COMPARE] < 0) a->sel[APP_TAB_COMPARE] = 0;
}
