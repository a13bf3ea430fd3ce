/* view_lists.c: the compare tab (every GPU or every setting at the current cluster and batch,
 * sorted, the current row highlighted, marked GPUs starred) and the groups tab (the coarsened
 * graph's groups, or the ops matching a search). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "view_common.h"

static const char *src_short(const struct app_pred *p) {
    if (p->p.pending) return "...";
    if (!p->p.ok) return "sim";
    switch (p->p.from.source) {
    case DP_SOURCE_TRAINED: return "own";
    case DP_SOURCE_TRANSFERRED: return "xfer";
    case DP_SOURCE_NEAREST: return "near";
    case DP_SOURCE_SETTING_AWARE: return "SA";
    default: return "-";
    }
}

/* The compare table's columns, in the order shown; the label (a GPU or a setting id, which
 * must stay whole to be typed back) first, then as many of the others as the width takes, in
 * the order of `keep`. */
enum { C_MARK, C_LABEL, C_SRC, C_ITER, C_THRU, C_UTIL, C_MEM, C_COST, C_SIM_ITER, C_SIM_THRU,
       C_N };
static const char *const col_head[C_N] = {"", "GPU / setting", "src", "iter ms", "smp/s",
                                          "util%", "mem GB", "cost $", "sim ms", "sim smp/s"};
static const int keep[C_N] = {C_MARK, C_LABEL, C_ITER, C_THRU, C_COST, C_MEM, C_SRC, C_UTIL,
                              C_SIM_ITER, C_SIM_THRU};

/* A predicted number with its interval (when known and wanted) into buf. */
static void pred_cell(char *buf, size_t n, const struct dp_prediction *p, enum dp_derived k,
                      bool interval) {
    char v[16], hw[16];
    view_num_fit(v, sizeof v, p->d[k], 6);
    if (interval && isfinite(p->d_lo[k]) && isfinite(p->d_hi[k])) {
        view_num_fit(hw, sizeof hw, (p->d_hi[k] - p->d_lo[k]) / 2, 4);
        snprintf(buf, n, "%s%s%s", v, view_ascii() ? "+-" : "\xc2\xb1", hw);
    } else {
        snprintf(buf, n, "%s%s", v, view_derived_clamped(p, k) ? "^" : "");
    }
}

/* Row r's cells (NULL: the heading). */
static void compare_cells(const struct app *a, const struct app_row *r, bool interval,
                          char c[C_N][72]) {
    if (!r) {
        for (int k = 0; k < C_N; k++) snprintf(c[k], sizeof c[k], "%s", col_head[k]);
        return;
    }
    const struct app_pred *p = &r->p;
    bool pred = p->p.ok;
    const double *d = pred ? p->p.d : p->sim.d;
    snprintf(c[C_MARK], sizeof c[C_MARK], "%c%c", r->gpu >= 0 && a->marked[r->gpu] &&
             a->cmp_mode == APP_CMP_GPUS ? '*' : ' ', r->current ? '>' : ' ');
    snprintf(c[C_LABEL], sizeof c[C_LABEL], "%s", r->label);
    snprintf(c[C_SRC], sizeof c[C_SRC], "%s", src_short(p));
    /* The predicted iteration, throughput and footprint (the simulator's where nothing is
     * predicted); out of memory ("!") is the simulator's verdict either way. */
    if (pred) {
        pred_cell(c[C_ITER], sizeof c[C_ITER], &p->p, DP_D_ITERATION_MS, interval);
        pred_cell(c[C_THRU], sizeof c[C_THRU], &p->p, DP_D_THROUGHPUT, interval);
        pred_cell(c[C_MEM], sizeof c[C_MEM], &p->p, DP_D_MEMORY_GB, interval);
    } else {
        view_num_fit(c[C_ITER], sizeof c[C_ITER], d[DP_D_ITERATION_MS], 6);
        view_num_fit(c[C_THRU], sizeof c[C_THRU], d[DP_D_THROUGHPUT], 6);
        view_num_fit(c[C_MEM], sizeof c[C_MEM], p->sim.memory_gb, 5);
    }
    if (p->sim.oom) snprintf(c[C_MEM] + strlen(c[C_MEM]), sizeof c[C_MEM] - strlen(c[C_MEM]), "!");
    view_num_fit(c[C_UTIL], sizeof c[C_UTIL], d[DP_D_MEAN_GPU_UTIL], 5);
    view_num_fit(c[C_COST], sizeof c[C_COST], d[DP_D_EPOCH_COST], 6);
    view_num_fit(c[C_SIM_ITER], sizeof c[C_SIM_ITER], p->sim.d[DP_D_ITERATION_MS], 6);
    view_num_fit(c[C_SIM_THRU], sizeof c[C_SIM_THRU], p->sim.d[DP_D_THROUGHPUT], 6);
    if (p->p.pending)
        for (int k = C_ITER; k <= C_COST; k++) snprintf(c[k], sizeof c[k], "...");
    if (p->sim_pending) {
        if (!pred) snprintf(c[C_MEM], sizeof c[C_MEM], "...");
        snprintf(c[C_SIM_ITER], sizeof c[C_SIM_ITER], "...");
        snprintf(c[C_SIM_THRU], sizeof c[C_SIM_THRU], "...");
    }
}

/* The title: the most said that fits. */
static void compare_title(const struct app *a, int cols, char *out, size_t n) {
    const struct dp_setting *s = &a->cur;
    char sort[64], flags[64], clu[2][160], path[64];
    snprintf(sort, sizeof sort, "sorted by %s %s", a->sort_sim ? "sim." : "pred.",
             app_sort_names[a->sort]);
    snprintf(flags, sizeof flags, "%s%s", a->only_marked && a->cmp_mode == APP_CMP_GPUS
                                               ? "; marked GPUs only" : "",
             a->hide_oom ? "; out of memory hidden" : "");
    bool ar = s->sync == DP_SYNC_ALLREDUCE;
    const char *fw = s->framework == DP_FW_PYTORCH ? "PyTorch" : "TensorFlow";
    if (ar)
        snprintf(clu[0], sizeof clu[0], "all-reduce, workers %d, %s, %s, %s", s->workers,
                 dp_network_name(s->network), dp_precision_name(s->precision), fw);
    else
        snprintf(clu[0], sizeof clu[0], "PS %d, workers %d, %s, %s, %s, %s", s->ps, s->workers,
                 dp_placement_name(s->placement), dp_network_name(s->network),
                 dp_precision_name(s->precision), fw);
    if (ar)
        snprintf(clu[1], sizeof clu[1], "AR w%d %s %s %s", s->workers,
                 dp_network_name(s->network), dp_precision_name(s->precision),
                 s->framework == DP_FW_PYTORCH ? "PT" : "TF");
    else
        snprintf(clu[1], sizeof clu[1], "P%d w%d %s %s %s %s", s->ps, s->workers,
                 dp_placement_name(s->placement), dp_network_name(s->network),
                 dp_precision_name(s->precision), s->framework == DP_FW_PYTORCH ? "PT" : "TF");
    const char *list = dp_session_settings(a->ss)->path;
    const char *base = strrchr(list, '/');
    text_elide(path, sizeof path, list, 40, view_ascii());
    long long b = (long long)dp_session_batch(a->ss);
    char v[3][400];
    switch (a->cmp_mode) {
    case APP_CMP_GPUS:
        snprintf(v[0], sizeof v[0], " Compare every GPU at %s, batch %lld; %s%s", clu[0], b, sort, flags);
        snprintf(v[1], sizeof v[1], " Compare every GPU: %s b%lld; %s%s", clu[1], b, sort, flags);
        snprintf(v[2], sizeof v[2], " Every GPU: %s b%lld; %s%s", clu[1], b, sort, flags);
        break;
    case APP_CMP_SETTINGS:
        snprintf(v[0], sizeof v[0], " Compare every setting of %s at batch %lld; %s%s", path, b, sort, flags);
        snprintf(v[1], sizeof v[1], " Compare every setting of %s, b%lld; %s%s", base ? base + 1 : list, b, sort, flags);
        snprintf(v[2], sizeof v[2], " Every setting: b%lld; %s%s", b, sort, flags);
        break;
    default:
        snprintf(v[0], sizeof v[0], " Compare %s with %d workers under every sync, framework and network, batch %lld; %s%s",
                 s->gpu, s->workers, b, sort, flags);
        snprintf(v[1], sizeof v[1], " Compare %s w%d: every sync, framework, network, b%lld; %s%s",
                 s->gpu, s->workers, b, sort, flags);
        snprintf(v[2], sizeof v[2], " %s w%d, every option: b%lld; %s%s", s->gpu, s->workers, b, sort, flags);
        break;
    }
    int k = 0;
    while (k < 2 && text_cols(v[k]) > cols - 1) k++;
    snprintf(out, n, "%.*s", (int)(n - 1), v[k]);
}

void view_compare_draw(WINDOW *w, const struct app *a) {
    char buf[1024], c[C_N][72];
    werase(w);
    int cols = getmaxx(w), rows = getmaxy(w);
    compare_title(a, cols, buf, sizeof buf);
    wattron(w, view_attr(ST_TITLE));
    view_put(w, 0, 0, cols, buf);
    wattroff(w, view_attr(ST_TITLE));
    /* column widths: the widest cell of each column, over the heading and every row */
    bool interval = false;
    for (int i = 0; i < a->n_rows; i++)
        interval |= a->rows[i].p.p.ok && isfinite(a->rows[i].p.p.d_lo[DP_D_ITERATION_MS]);
    int width[C_N] = {0};
    for (int i = -1; i < a->n_rows; i++) {
        compare_cells(a, i < 0 ? NULL : &a->rows[i], interval, c);
        for (int k = 0; k < C_N; k++)
            if (text_cols(c[k]) > width[k]) width[k] = text_cols(c[k]);
    }
    /* as many columns as fit, in priority order, a column kept free at the right */
    bool shown[C_N] = {false};
    int used = 0;
    for (int j = 0; j < C_N; j++) {
        int k = keep[j], need = width[k] + (k == C_MARK ? 0 : 1);
        if (k <= C_LABEL || used + need <= cols - 1) {
            shown[k] = true;
            used += need;
        }
    }
    int h = a->hscroll[APP_TAB_COMPARE];
    for (int i = -1; i < a->n_rows; i++) {
        int first = a->scroll[APP_TAB_COMPARE];
        if (i >= 0 && (i < first || 2 + i - first >= rows)) continue;
        compare_cells(a, i < 0 ? NULL : &a->rows[i], interval, c);
        int x = 0;
        for (int k = 0; k < C_N; k++) {
            if (!shown[k]) continue;
            /* text left-aligned (label, source), numbers right-aligned */
            bool left = k == C_LABEL || k == C_SRC || k == C_MARK;
            x += snprintf(buf + x, sizeof buf - (size_t)x, "%s%*s%s", k == C_MARK ? "" : " ",
                          left ? 0 : width[k] - text_cols(c[k]), "", c[k]);
            if (left) x += snprintf(buf + x, sizeof buf - (size_t)x, "%*s",
                                    width[k] - text_cols(c[k]), "");
            if (x >= (int)sizeof buf) break;
        }
        const char *line = buf + text_bytes(buf, h);
        if (i < 0) {
            wattron(w, view_attr(ST_HEAD));
            view_put(w, 1, 0, cols, line);
            wattroff(w, view_attr(ST_HEAD));
            continue;
        }
        const struct app_row *r = &a->rows[i];
        enum view_style st = i == a->sel[APP_TAB_COMPARE] ? ST_SEL
                             : r->current                  ? ST_HEAD
                             : !r->p.p.ok                  ? ST_SIM
                                                           : ST_NORMAL;
        wattron(w, view_attr(st));
        view_put(w, 2 + i - first, 0, cols, line);
        wattroff(w, view_attr(st));
    }
    if (a->n_rows == 0)
        view_put(w, 2, 1, cols - 1, a->only_marked ? "no rows (M shows every GPU again)"
                                    : a->hide_oom ? "no rows fit in memory (O shows them)"
                                                  : "no rows");
    wnoutrefresh(w);
}

/* A list line: shifted left by h columns when scrolled sideways (the start marked), else as
 * it is (long text ends in an ellipsis: view_put). */
static void list_put(WINDOW *w, int y, int cols, int h, const char *line, enum view_style st) {
    char buf[1024];
    if (h > 0) snprintf(buf, sizeof buf, "%s%s", view_ascii() ? "<" : "\xe2\x80\xb9",
                        line + text_bytes(line, h));
    else snprintf(buf, sizeof buf, "%s", line);
    wattron(w, view_attr(st));
    view_put(w, y, 0, cols - 1, buf);
    wattroff(w, view_attr(st));
}

void view_groups_draw(WINDOW *w, const struct app *a) {
    char buf[1024], ts[16], tw[16];
    werase(w);
    int cols = getmaxx(w), rows = getmaxy(w);
    int first = a->scroll[APP_TAB_GROUPS], h = a->hscroll[APP_TAB_GROUPS];
    if (a->search[0]) {
        snprintf(buf, sizeof buf, " Ops matching /%s: %d (kept GPU ops only; Esc clears)",
                 a->search, a->n_hits);
        wattron(w, view_attr(ST_TITLE));
        view_put(w, 0, 0, cols, buf);
        wattroff(w, view_attr(ST_TITLE));
        wattron(w, view_attr(ST_HEAD));
        view_put(w, 1, 0, cols, "  group  op type                  op name (Left/Right: whole names)");
        wattroff(w, view_attr(ST_HEAD));
        for (int i = first; i < a->n_hits && 2 + i - first < rows; i++) {
            const struct dp_node *n = dp_graph_node(dp_session_graph(a->ss), (size_t)a->hits[i]);
            char type[64], name[512];
            text_elide(type, sizeof type, n->op, 24, view_ascii());
            /* the name fits by eliding its middle (its tail tells ops apart); scrolled sideways
             * it shows whole */
            if (h == 0) text_elide(name, sizeof name, n->name, cols - 1 - 34, view_ascii());
            else snprintf(name, sizeof name, "%s", n->name);
            snprintf(buf, sizeof buf, "  %5d  %-*s %s", app_group_of_op(a, a->hits[i]),
                     24 + (int)strlen(type) - text_cols(type), type, name);
            list_put(w, 2 + i - first, cols, h, buf,
                     i == a->sel[APP_TAB_GROUPS] ? ST_SEL : ST_NORMAL);
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
        list_put(w, 2 + g - first, cols, h, buf, g == a->sel[APP_TAB_GROUPS] ? ST_SEL : ST_NORMAL);
    }
    wnoutrefresh(w);
}
