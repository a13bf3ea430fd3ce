/* view_lists.c: the compare tab (every GPU or every setting at the current cluster and batch,
 * sorted, the current row highlighted, marked GPUs starred) and the groups tab (the coarsened
 * graph's groups, or the ops matching a search). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_common.h"

static const char *src_short(const struct app_pred *p) {
    if (p->p.pending) return "...";
    if (!p->p.ok) return "sim";
    switch (p->p.from.source) {
    case DP_SOURCE_TRAINED: return "own";
    case DP_SOURCE_TRANSFERRED: return "xfer";
    case DP_SOURCE_NEAREST: return "near";
    default: return "-";
    }
}

void view_compare_draw(WINDOW *w, const struct app *a) {
    char buf[320], c[8][16];
    werase(w);
    int cols = getmaxx(w), rows = getmaxy(w);
    const char *by = a->sort_sim ? "sim." : "pred.";
    snprintf(buf, sizeof buf, " Compare %s at PS %d, workers %d, %s, %s, %s, batch %lld; sorted by %s %s%s",
             a->cmp_mode == APP_CMP_GPUS ? "every GPU" : "every setting", a->cur.ps,
             a->cur.workers, dp_placement_name(a->cur.placement), dp_network_name(a->cur.network),
             dp_precision_name(a->cur.precision), (long long)dp_session_batch(a->ss), by, app_sort_names[a->sort],
             a->only_marked ? "; marked only" : "");
    if (a->cmp_mode == APP_CMP_SETTINGS)
        snprintf(buf, sizeof buf, " Compare every setting of %.200s at batch %lld; sorted by %s %s%s",
                 dp_session_settings(a->ss)->path, (long long)dp_session_batch(a->ss), by, app_sort_names[a->sort],
                 a->only_marked ? "; marked only" : "");
    wattron(w, view_attr(ST_TITLE));
    view_put(w, 0, 0, cols, buf);
    wattroff(w, view_attr(ST_TITLE));
    /* columns: marks 2, label, src 4, iter 8, smp/s 9, util 6, mem 6 + OOM mark, cost 8, then
     * (wide) the simulated iteration and throughput; the label takes what the numbers leave */
    bool wide = cols >= 96;
    int lw = cols - (wide ? 70 : 60);
    if (lw > 28) lw = 28;
    if (lw < 14) lw = 14;
    snprintf(buf, sizeof buf, "   %-*s %-4s %8s %9s %6s %6s %8s  %8s%s%s", lw, "GPU / setting",
             "src", "iter ms", "smp/s", "util%", "mem GB", "cost $", "sim ms", wide ? " " : "",
             wide ? "sim smp/s" : "");
    wattron(w, view_attr(ST_HEAD));
    view_put(w, 1, 0, cols, buf);
    wattroff(w, view_attr(ST_HEAD));
    int first = a->scroll[APP_TAB_COMPARE];
    for (int i = first; i < a->n_rows && 2 + i - first < rows; i++) {
        const struct app_row *r = &a->rows[i];
        const struct app_pred *p = &r->p;
        const double *d = p->p.ok ? p->p.d : p->sim.d;
        view_num(c[0], sizeof c[0], d[DP_D_ITERATION_MS], 8);
        view_num(c[1], sizeof c[1], d[DP_D_THROUGHPUT], 9);
        view_num(c[2], sizeof c[2], d[DP_D_MEAN_GPU_UTIL], 6);
        view_num(c[3], sizeof c[3], p->sim.memory_gb, 6);
        view_num(c[4], sizeof c[4], d[DP_D_EPOCH_COST], 8);
        view_num(c[5], sizeof c[5], p->sim.d[DP_D_ITERATION_MS], 8);
        view_num(c[6], sizeof c[6], p->sim.d[DP_D_THROUGHPUT], 9);
        if (p->p.pending)
            for (int k = 0; k < 5; k++) snprintf(c[k], sizeof c[k], "%*s", k == 1 ? 9 : k == 0 || k == 4 ? 8 : 6, "...");
        if (p->sim_pending) {
            snprintf(c[5], sizeof c[5], "%8s", "...");
            snprintf(c[6], sizeof c[6], "%9s", "...");
        }
        bool marked = r->gpu >= 0 && a->marked[r->gpu];
        snprintf(buf, sizeof buf, "%c%c %-*.*s %-4s %s %s %s %s%c%s  %s%s%s", marked ? '*' : ' ',
                 r->current ? '>' : ' ', lw, lw, r->label, src_short(p), c[0], c[1], c[2], c[3],
                 p->sim.oom ? '!' : ' ', c[4], c[5], wide ? " " : "", wide ? c[6] : "");
        enum view_style st = i == a->sel[APP_TAB_COMPARE] ? ST_SEL
                             : r->current                  ? ST_HEAD
                             : !p->p.ok                      ? ST_SIM
                                                           : ST_NORMAL;
        wattron(w, view_attr(st));
        view_put(w, 2 + i - first, 0, cols, buf);
        wattroff(w, view_attr(st));
    }
    if (a->n_rows == 0) view_put(w, 2, 1, cols - 1, "no rows (M shows every GPU again)");
    wnoutrefresh(w);
}

void view_groups_draw(WINDOW *w, const struct app *a) {
    char buf[320], ts[16], tw[16];
    werase(w);
    int cols = getmaxx(w), rows = getmaxy(w);
    int first = a->scroll[APP_TAB_GROUPS];
    if (a->search[0]) {
        snprintf(buf, sizeof buf, " Ops matching /%s: %d (kept GPU ops only)", a->search,
                 a->n_hits);
        wattron(w, view_attr(ST_TITLE));
        view_put(w, 0, 0, cols, buf);
        wattroff(w, view_attr(ST_TITLE));
        wattron(w, view_attr(ST_HEAD));
        view_put(w, 1, 0, cols, "  group  op type                  op name");
        wattroff(w, view_attr(ST_HEAD));
        for (int i = first; i < a->n_hits && 2 + i - first < rows; i++) {
            const struct dp_node *n = dp_graph_node(dp_session_graph(a->ss), (size_t)a->hits[i]);
            snprintf(buf, sizeof buf, "  %5d  %-24.24s %s", app_group_of_op(a, a->hits[i]), n->op,
                     n->name);
            enum view_style st = i == a->sel[APP_TAB_GROUPS] ? ST_SEL : ST_NORMAL;
            wattron(w, view_attr(st));
            view_put(w, 2 + i - first, 0, cols, buf);
            wattroff(w, view_attr(st));
        }
        wnoutrefresh(w);
        return;
    }
    snprintf(buf, sizeof buf,
             " %d groups of %d kept ops (partition computed once; features at batch %lld; / searches)",
             dp_session_partition(a->ss)->n_groups, dp_session_partition(a->ss)->n_ops,
             (long long)dp_session_batch(a->ss));
    wattron(w, view_attr(ST_TITLE));
    view_put(w, 0, 0, cols, buf);
    wattroff(w, view_attr(ST_TITLE));
    wattron(w, view_attr(ST_HEAD));
    view_put(w, 1, 0, cols, "  group   ops  tensor size  type weight  top op types");
    wattroff(w, view_attr(ST_HEAD));
    const struct dp_grouped *grouped = dp_session_grouped(a->ss);
    for (int g = first; g < grouped->n_groups && 2 + g - first < rows; g++) {
        const double *x = grouped->x + (size_t)g * DP_N_FEATURES;
        view_num(ts, sizeof ts, x[0], 11);
        view_num(tw, sizeof tw, x[2], 11);
        snprintf(buf, sizeof buf, "  %5d %5d  %s  %s  %s", g, a->group_ops[g], ts, tw,
                 a->group_top[g]);
        enum view_style st = g == a->sel[APP_TAB_GROUPS] ? ST_SEL : ST_NORMAL;
        wattron(w, view_attr(st));
        view_put(w, 2 + g - first, 0, cols, buf);
        wattroff(w, view_attr(st));
    }
    wnoutrefresh(w);
}
