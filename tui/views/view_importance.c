/* view_importance.c: the explorer's importance pane: the grouped graph at its Graphviz positions
 * (scaled to the pane, panned and zoomed), each group a box (or a one-cell marker when crowded)
 * coloured by its importance for the chosen metric, edges as lines, and the selected group's op
 * types and ops beside it. State changes happen in the importance_view_* functions; draw only reads. */
#include "view_importance.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/clock.h"
#include "text.h"

/* ASCII for the pane's own ellipses and marks (set by importance_view_draw from v->ascii). */
static bool g_ascii;

#define BOX_W       14 /* cells per box, borders included */
#define BOX_H       3
#define LIST_MIN_W  30
#define LIST_MAX_W  44
#define ZOOM_MAX    32.0
#define DEFAULT_METRIC 4 /* gpu_util.active */

/* ---- state ---- */

void importance_view_init(struct importance_view *v) {
    memset(v, 0, sizeof *v);
    for (int o = 0; o < DP_N_OUTPUTS; o++) v->scale[o] = 1.0;
    v->metric = DEFAULT_METRIC;
    v->method = DP_EXPLAIN_GRAD;
    v->selected = -1;
    v->zoom = 1.0;
    v->pan_x = v->pan_y = 0.5;
    v->grad_ms = -1;
}

void importance_view_free(struct importance_view *v) {
    dp_explain_free(v->e);
    dp_layout_free(v->layout);
    v->e = NULL;
    v->layout = NULL;
}

static void keep_message(struct importance_view *v, const struct dp_error *err) {
    snprintf(v->message, sizeof v->message, "%s", err->msg);
}

enum dp_status importance_explain(const struct dp_explain_sa *sa,
                                  const struct dp_inspector *insp, const struct dp_model *model,
                                  const double *scale, const struct dp_grouped *g,
                                  const struct dp_graph *graph,
                                  const struct dp_op_weights *weights, int metric,
                                  enum dp_explain_method method, int n_threads,
                                  struct dp_explain **out, struct dp_error *err) {
    struct dp_explain *e = NULL;
    enum dp_status st =
        sa     ? dp_explain_compute_sa(sa, g, metric, &e, err)
        : insp ? dp_explain_compute_inspector(insp, g, metric, method, n_threads, &e, err)
               : dp_explain_compute(model, scale, g, metric, method, n_threads, &e, err);
    if (st != DP_OK) return st;
    /* The drill-down needs member names and the op graph; without them the pane shows groups
     * only, which is not an error. */
    if (graph && g->member_start) st = dp_explain_drill(e, g, graph, weights, err);
    *out = e;
    return st;
}

/* Whether the current (metric, method) is left to the caller's background thread. */
static bool slow(const struct importance_view *v) {
    return v->defer &&
           (v->use_sa || v->method == DP_EXPLAIN_OCCLUSION || v->grad_ms > IMPORTANCE_SYNC_MS);
}

enum dp_status importance_view_compute(struct importance_view *v, struct dp_error *err) {
    struct dp_error local = {0};
    if (!err) err = &local;
    dp_explain_free(v->e);
    v->e = NULL;
    v->gen++; /* whatever was requested before is stale now */
    v->requested = false;
    if (!v->g) return DP_OK;
    if (!v->model) { /* nothing to compute: no "computing" left over either */
        v->message[0] = '\0';
        return DP_OK;
    }
    if (slow(v)) {
        v->requested = true;
        snprintf(v->message, sizeof v->message, "computing %s importance%s (%d groups)",
                 dp_explain_method_name(v->method), v->ascii ? "..." : "\xe2\x80\xa6",
                 v->g->n_groups);
        return DP_OK;
    }
    double t0 = dp_clock_ms();
    struct dp_explain *e = NULL;
    const struct dp_inspector *in =
        v->insp && dp_inspector_model(v->insp) == v->model ? v->insp : NULL;
    enum dp_status st = importance_explain(v->use_sa ? &v->sa : NULL, in, v->model, v->scale,
                                           v->g, v->graph, v->weights, v->metric, v->method, 0,
                                           &e, err);
    v->e = e;
    if (e) {
        v->compute_ms = dp_clock_ms() - t0;
        if (v->method == DP_EXPLAIN_GRAD) v->grad_ms = v->compute_ms;
    }
    if (st != DP_OK) keep_message(v, err);
    else v->message[0] = '\0';
    return st;
}

bool importance_view_take(struct importance_view *v, unsigned long gen, struct dp_explain *e,
                          double ms, enum dp_status st, const struct dp_error *err) {
    if (gen != v->gen || !v->g || (e && e->n_groups != v->g->n_groups)) {
        dp_explain_free(e);
        return false;
    }
    dp_explain_free(v->e);
    v->e = e;
    v->requested = false;
    if (e) {
        v->compute_ms = ms;
        if (e->method == DP_EXPLAIN_GRAD) v->grad_ms = ms;
    }
    if (st != DP_OK && err) keep_message(v, err);
    else v->message[0] = '\0';
    return true;
}

/* Drops what was computed for the old graph, borrows g and resets selection, pan and zoom. */
static void take_graph(struct importance_view *v, const struct dp_grouped *g,
                       const struct dp_graph *graph, const struct dp_op_weights *weights) {
    dp_layout_free(v->layout);
    v->layout = NULL;
    dp_explain_free(v->e);
    v->e = NULL;
    v->gen++;
    v->requested = false;
    v->g = g;
    v->graph = graph;
    v->weights = weights;
    v->selected = -1;
    v->list_scroll = 0;
    importance_view_reset(v);
    v->message[0] = '\0';
}

enum dp_status importance_view_set_graph(struct importance_view *v, const struct dp_grouped *g,
                                         const struct dp_graph *graph,
                                         const struct dp_op_weights *weights,
                                         struct dp_error *err) {
    struct dp_error local = {0};
    if (!err) err = &local;
    take_graph(v, g, graph, weights);
    if (!g) return DP_OK;
    enum dp_status st = dp_render_layout(g, DP_LAYOUT_AUTO, 1.0, 1.0, false, &v->layout, err);
    if (st != DP_OK) {
        keep_message(v, err);
        return st;
    }
    return importance_view_compute(v, err);
}

/* Same groups and edges (a new batch size recomputes features, never the grouping): the layout,
 * selection, pan and zoom stay valid. a may be NULL. */
static bool same_structure(const struct dp_grouped *a, const struct dp_grouped *b) {
    if (a == b) return true;
    if (!a || !b || a->n_groups != b->n_groups || a->n_edges != b->n_edges) return false;
    return !memcmp(a->edges, b->edges, (size_t)a->n_edges * 2 * sizeof *a->edges);
}

enum dp_status importance_view_set_inputs(struct importance_view *v, const struct dp_grouped *g,
                                          const struct dp_graph *graph,
                                          const struct dp_op_weights *weights,
                                          const struct dp_model *model, const double *scale,
                                          bool relayout, struct dp_error *err) {
    struct dp_error local = {0};
    if (!err) err = &local;
    /* Drop everything computed from the old inputs before touching the new ones. */
    dp_explain_free(v->e);
    v->e = NULL;
    v->model = model;
    for (int o = 0; o < DP_N_OUTPUTS; o++) v->scale[o] = scale ? scale[o] : 1.0;
    if (relayout || !v->layout || !same_structure(g, v->g))
        return importance_view_set_graph(v, g, graph, weights, err);
    v->g = g;
    v->graph = graph;
    v->weights = weights;
    if (v->selected >= g->n_groups) v->selected = -1;
    return importance_view_compute(v, err);
}

enum dp_status importance_view_set_laid_out(struct importance_view *v, const struct dp_grouped *g,
                                           const struct dp_graph *graph,
                                           const struct dp_op_weights *weights,
                                           const struct dp_model *model, const double *scale,
                                           struct dp_layout *layout, struct dp_error *err) {
    struct dp_error local = {0};
    if (!err) err = &local;
    v->model = model;
    for (int o = 0; o < DP_N_OUTPUTS; o++) v->scale[o] = scale ? scale[o] : 1.0;
    take_graph(v, g, graph, weights);
    if (!g || !layout || layout->n_nodes != g->n_groups) {
        dp_layout_free(layout);
        dp_error_set(err, DP_ERR_INVALID, "importance: the layout does not match the graph");
        keep_message(v, err);
        return DP_ERR_INVALID;
    }
    v->layout = layout;
    return importance_view_compute(v, err);
}

enum dp_status importance_view_set_model(struct importance_view *v, const struct dp_model *model,
                                         const double *scale, struct dp_error *err) {
    v->model = model;
    for (int o = 0; o < DP_N_OUTPUTS; o++) v->scale[o] = scale ? scale[o] : 1.0;
    return importance_view_compute(v, err);
}

enum dp_status importance_view_set_metric(struct importance_view *v, int metric,
                                          struct dp_error *err) {
    if (metric < 0 || metric >= DP_N_METRICS) metric = DEFAULT_METRIC;
    v->metric = metric;
    return importance_view_compute(v, err);
}

enum dp_status importance_view_next_metric(struct importance_view *v, int delta,
                                           struct dp_error *err) {
    int m = ((v->metric + delta) % DP_N_METRICS + DP_N_METRICS) % DP_N_METRICS;
    return importance_view_set_metric(v, m, err);
}

enum dp_status importance_view_toggle_method(struct importance_view *v, struct dp_error *err) {
    v->method = v->method == DP_EXPLAIN_GRAD ? DP_EXPLAIN_OCCLUSION : DP_EXPLAIN_GRAD;
    return importance_view_compute(v, err);
}

static double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

static void clamp_pan(struct importance_view *v) {
    double half = 0.5 / v->zoom;
    v->pan_x = clamp(v->pan_x, half, 1.0 - half);
    v->pan_y = clamp(v->pan_y, half, 1.0 - half);
}

static void centre_on_selection(struct importance_view *v) {
    if (v->selected < 0 || !v->layout || v->selected >= v->layout->n_nodes || v->zoom <= 1.0)
        return;
    v->pan_x = v->layout->x[v->selected];
    v->pan_y = v->layout->y[v->selected];
    clamp_pan(v);
}

void importance_view_select(struct importance_view *v, int group) {
    int n = v->g ? v->g->n_groups : 0;
    v->selected = group >= 0 && group < n ? group : -1;
    v->list_scroll = 0;
    centre_on_selection(v);
}

/* Rank of the selection in the importance order (or the group index without importances). */
static int rank_of(const struct importance_view *v, int group) {
    if (group < 0) return -1;
    return v->e ? v->e->groups[group].rank : group;
}

static int group_at_rank(const struct importance_view *v, int r) {
    return v->e ? v->e->order[r] : r;
}

void importance_view_select_next(struct importance_view *v) {
    int n = v->g ? v->g->n_groups : 0;
    if (n == 0) return;
    int r = v->selected < 0 ? 0 : (rank_of(v, v->selected) + 1) % n;
    importance_view_select(v, group_at_rank(v, r));
}

void importance_view_select_prev(struct importance_view *v) {
    int n = v->g ? v->g->n_groups : 0;
    if (n == 0) return;
    int r = v->selected < 0 ? n - 1 : (rank_of(v, v->selected) + n - 1) % n;
    importance_view_select(v, group_at_rank(v, r));
}

void importance_view_pan(struct importance_view *v, double dx, double dy) {
    v->pan_x += dx / v->zoom;
    v->pan_y += dy / v->zoom;
    clamp_pan(v);
}

void importance_view_zoom(struct importance_view *v, double factor) {
    if (!(factor > 0.0)) return;
    v->zoom = clamp(v->zoom * factor, 1.0, ZOOM_MAX);
    clamp_pan(v);
    centre_on_selection(v); /* zooming keeps the selected group in view */
}

void importance_view_toggle_edges(struct importance_view *v) { v->all_edges = !v->all_edges; }

void importance_view_reset(struct importance_view *v) {
    v->zoom = 1.0;
    v->pan_x = v->pan_y = 0.5;
}

void importance_view_scroll_list(struct importance_view *v, int delta) {
    v->list_scroll += delta;
    if (v->list_scroll < 0) v->list_scroll = 0;
}

void importance_view_scroll_sideways(struct importance_view *v, int delta) {
    v->list_hscroll += delta;
    if (v->list_hscroll < 0) v->list_hscroll = 0;
    if (v->list_hscroll > 400) v->list_hscroll = 400;
}

/* ---- geometry ---- */

/* The header's first part: the metric, its value (the Predict tab's), how the importances were
 * computed, the zoom. */
static void header_text(const struct importance_view *v, char *head, size_t n) {
    const char *method = v->e ? dp_explain_method_name(v->e->method)
                              : v->use_sa ? "occlusion" : dp_explain_method_name(v->method);
    if (v->e)
        snprintf(head, n, " importance: %s = %.4g %s  (%s, %.0f ms)  zoom %.1fx  ",
                 dp_metric_name(v->metric), v->e->value, dp_metric_unit(v->metric), method,
                 v->compute_ms, v->zoom);
    else
        snprintf(head, n, " importance: %s (%s)  zoom %.1fx  ", dp_metric_name(v->metric),
                 method, v->zoom);
}

/* Rows the header takes: one, or two when the inspector's name does not fit beside the rest
 * (it then has a row of its own, elided in the middle only where even that is short). */
static int header_rows(const struct importance_view *v, int cols) {
    char head[256];
    header_text(v, head, sizeof head);
    return v->by[0] && text_cols(head) + text_cols(v->by) > cols - 1 ? 2 : 1;
}

struct importance_canvas importance_view_canvas(const struct importance_view *v, int rows,
                                                int cols) {
    struct importance_canvas c = {0};
    int top = header_rows(v, cols), body = rows - top; /* the header's rows */
    if (body < 1 || cols < 1) return c;
    if (cols >= 90) {
        c.list_w = clamp(cols / 3, LIST_MIN_W, LIST_MAX_W);
        c.y = top;
        c.x = 0;
        c.h = body;
        c.w = cols - c.list_w - 1;
        c.list_y = top;
        c.list_x = cols - c.list_w;
        c.list_h = body;
    } else {
        c.list_h = body >= 12 ? (body / 3 < 10 ? body / 3 : 10) : 0;
        c.y = top;
        c.x = 0;
        c.w = cols;
        c.h = body - c.list_h - (c.list_h > 0 ? 1 : 0);
        c.list_y = rows - c.list_h;
        c.list_x = 0;
        c.list_w = c.list_h > 0 ? cols : 0;
    }
    int n = v->g ? v->g->n_groups : 0;
    double area = (double)c.w * v->zoom * (double)c.h * v->zoom;
    c.boxes = n > 0 && c.w >= BOX_W + 2 && c.h >= BOX_H + 1 && area / n >= BOX_W * BOX_H * 2.5;
    return c;
}

bool importance_view_cell(const struct importance_view *v, const struct importance_canvas *c,
                          int i, int *row, int *col) {
    if (!v->layout || i < 0 || i >= v->layout->n_nodes || c->w <= 0 || c->h <= 0) return false;
    int mx = c->boxes ? BOX_W / 2 : 1, my = c->boxes ? 1 : 0;
    double uw = c->w - 2 * mx - 1, uh = c->h - 2 * my - 1;
    if (uw < 0) uw = 0;
    if (uh < 0) uh = 0;
    double px = (v->layout->x[i] - v->pan_x) * v->zoom * uw + uw / 2.0;
    double py = (v->layout->y[i] - v->pan_y) * v->zoom * uh + uh / 2.0;
    *col = c->x + mx + (int)lround(px);
    *row = c->y + my + (int)lround(py);
    return *col >= c->x && *col < c->x + c->w && *row >= c->y && *row < c->y + c->h;
}

int importance_view_level(const struct importance_view *v, int i) {
    if (!v->e || i < 0 || i >= v->e->n_groups) return 0;
    double top = v->e->groups[v->e->order[0]].importance;
    double imp = v->e->groups[i].importance;
    if (!(top > 0.0) || !(imp > 0.0)) return 0;
    double t = imp / top;
    return t > 0.75 ? 4 : t > 0.5 ? 3 : t > 0.25 ? 2 : 1;
}

/* ---- drawing ---- */

void importance_view_init_colors(void) {
    if (!has_colors()) return;
    static const short fg256[6] = {250, 186, 214, 202, 196, 67};
    static const short fg8[6] = {COLOR_WHITE, COLOR_YELLOW, COLOR_YELLOW, COLOR_RED, COLOR_RED,
                                 COLOR_BLUE};
    const short *fg = COLORS >= 256 ? fg256 : fg8;
    for (int k = 0; k < 6; k++)
        if (init_pair((short)(IMPORTANCE_PAIR_BASE + k), fg[k], -1) == ERR)
            init_pair((short)(IMPORTANCE_PAIR_BASE + k), fg[k], COLOR_BLACK);
}

static chtype level_attr(int level) {
    chtype a = has_colors() ? COLOR_PAIR(IMPORTANCE_PAIR_BASE + level) : 0;
    if (level >= 3) a |= A_BOLD;
    if (level == 0) a |= A_DIM;
    if (!has_colors() && level == 4) a |= A_REVERSE;
    return a;
}

/* Puts ch at (r, c) when inside the rectangle. */
static void put(WINDOW *w, int r, int c, const struct importance_canvas *cv, chtype ch) {
    if (r >= cv->y && r < cv->y + cv->h && c >= cv->x && c < cv->x + cv->w) mvwaddch(w, r, c, ch);
}

/* Up to maxw glyphs of UTF-8 text s from (r, c), each clipped to the canvas. */
static void put_text(WINDOW *w, int r, int c, int maxw, const struct importance_canvas *cv,
                     const char *s, chtype attr) {
    for (int k = 0; *s && k < maxw; k++) {
        int len = (int)text_bytes(s, 1);
        if (r >= cv->y && r < cv->y + cv->h && c + k >= cv->x && c + k < cv->x + cv->w) {
            if (len == 1) {
                mvwaddch(w, r, c + k, (chtype)(unsigned char)*s | attr);
            } else {
                attr_t old_a;
                short old_p;
                wattr_get(w, &old_a, &old_p, NULL);
                wattrset(w, (int)(attr & ~A_CHARTEXT));
                mvwaddnstr(w, r, c + k, s, len);
                wattr_set(w, old_a, old_p, NULL);
            }
        }
        s += len;
    }
}

/* An edge as a line of one character chosen by its slope (cells are about twice as tall as wide). */
static void draw_edge(WINDOW *w, const struct importance_view *v, const struct importance_canvas *cv,
                      int r0, int c0, int r1, int c1) {
    int dx = c1 - c0, dy = r1 - r0;
    int adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
    chtype ch;
    double slope = adx ? 2.0 * ady / adx : 1e9;
    if (slope < 0.6) ch = v->ascii ? '-' : ACS_HLINE;
    else if (slope > 4.0) ch = v->ascii ? '|' : ACS_VLINE;
    else ch = (dx > 0) == (dy > 0) ? '\\' : '/';
    ch |= level_attr(0);
    if (has_colors()) ch = (ch & ~A_COLOR) | COLOR_PAIR(IMPORTANCE_PAIR_BASE + 5);
    int steps = adx > ady ? adx : ady;
    if (steps > 4000) steps = 4000; /* a far off-screen end point: enough steps to cross the pane */
    for (int s = 1; s < steps; s++) {
        int r = r0 + (int)lround((double)dy * s / steps);
        int c = c0 + (int)lround((double)dx * s / steps);
        put(w, r, c, cv, ch);
    }
}

/* Label text of a group: "g12 37 Conv2D" (top op type when known). */
static void group_label(const struct importance_view *v, int i, char *buf, size_t n) {
    int ops = (int)lround(v->g->x[i * DP_N_FEATURES + 1]);
    const char *type = "";
    if (v->e && v->e->groups[i].n_types > 0) type = v->e->groups[i].types[0].op;
    snprintf(buf, n, "g%d %d %s", i, ops, *type ? type : "ops");
}

/* Group i at (r, c): a labelled box, or (box false) a one-cell marker of its level. */
static void draw_node(WINDOW *w, const struct importance_view *v, const struct importance_canvas *cv,
                      int i, int r, int c, bool box) {
    int level = importance_view_level(v, i);
    chtype attr = level_attr(level);
    bool sel = i == v->selected;
    if (sel) attr |= A_REVERSE | A_BOLD;
    char full[64], label[64];
    group_label(v, i, full, sizeof full);
    text_elide(label, sizeof label, full, BOX_W - 3, v->ascii); /* a column before the border */
    if (!box) {
        static const char marks[5] = {'.', 'o', 'o', 'O', '@'};
        put(w, r, c, cv, (chtype)marks[level] | attr);
        /* Name the selected and the five most important groups. */
        if (sel || (v->e && v->e->groups[i].rank < 5)) {
            char name[16];
            snprintf(name, sizeof name, "g%d", i);
            put_text(w, r, c + 1, 8, cv, name, attr);
        }
        return;
    }
    int left = c - BOX_W / 2, right = left + BOX_W - 1;
    chtype hl = v->ascii ? '-' : ACS_HLINE, vl = v->ascii ? '|' : ACS_VLINE;
    chtype ul = v->ascii ? '+' : ACS_ULCORNER, ur = v->ascii ? '+' : ACS_URCORNER;
    chtype ll = v->ascii ? '+' : ACS_LLCORNER, lr = v->ascii ? '+' : ACS_LRCORNER;
    for (int x = left + 1; x < right; x++) {
        put(w, r - 1, x, cv, hl | attr);
        put(w, r + 1, x, cv, hl | attr);
        put(w, r, x, cv, ' ' | attr);
    }
    put(w, r - 1, left, cv, ul | attr);
    put(w, r - 1, right, cv, ur | attr);
    put(w, r + 1, left, cv, ll | attr);
    put(w, r + 1, right, cv, lr | attr);
    put(w, r, left, cv, vl | attr);
    put(w, r, right, cv, vl | attr);
    put_text(w, r, left + 1, BOX_W - 2, cv, label, attr);
}

/* Line number *line of the list pane (clipped to its width), scrolled up by `skip` lines but
 * never into the first `fixed` lines (the header that stays). */
static void list_line(WINDOW *w, const struct importance_canvas *cv, int *line, int skip,
                      int fixed, chtype attr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* The row of the list's line number `line` in the pane, or -1 when scrolled out of view (the
 * first `fixed` lines stay; the rest move up by `skip`). */
static int list_row(const struct importance_canvas *cv, int line, int skip, int fixed) {
    int k = line >= fixed ? line - skip : line;
    return k < fixed || k >= cv->list_h ? -1 : k;
}

static void list_line(WINDOW *w, const struct importance_canvas *cv, int *line, int skip,
                      int fixed, chtype attr, const char *fmt, ...) {
    int k = list_row(cv, (*line)++, skip, fixed);
    if (k < 0) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    wattron(w, attr);
    /* a line too long ends in an ellipsis, never cut without a mark */
    int room = cv->list_w - 1;
    if (text_cols(buf) > room) {
        buf[text_bytes(buf, room - 1)] = '\0';
        strcat(buf, g_ascii ? "~" : "\xe2\x80\xa6");
    }
    mvwaddstr(w, cv->list_y + k, cv->list_x, buf);
    wattroff(w, attr);
}

/* Where op j's name first differs from another op of group gr whose name is elided alike at
 * `room` columns (ResNet's shortcut, conv1 and conv2 kernels' initialisers differ in a middle
 * part only), so that part stays; SIZE_MAX when no other op's name looks the same. */
static size_t op_keep(const struct importance_view *v, const struct dp_explain_group *gr, int j,
                      int room) {
    const char *name = dp_graph_node(v->graph, (size_t)gr->ops[j])->name;
    char mine[300], other[300];
    if (!text_elide(mine, sizeof mine, name, room, g_ascii)) return SIZE_MAX;
    for (int k = 0; k < gr->n_ops; k++) {
        const char *o = dp_graph_node(v->graph, (size_t)gr->ops[k])->name;
        if (k == j || !strcmp(o, name)) continue;
        text_elide(other, sizeof other, o, room, g_ascii);
        if (strcmp(mine, other)) continue;
        size_t d = 0;
        while (name[d] == o[d]) d++;
        return d;
    }
    return SIZE_MAX;
}

/* An op's line of the list (op j of group gr): its share, then its name and type. At
 * list_hscroll 0 the name is elided in the middle (the distinguishing tail stays: eight ops of
 * one block differ only there; so does a middle part where another op would look the same);
 * scrolled, the line shows whole from that column. */
static void op_line(WINDOW *w, const struct importance_view *v, const struct importance_canvas *cv,
                    int *line, int skip, int fixed, const struct dp_explain_group *gr, int j) {
    const struct dp_node *nd = dp_graph_node(v->graph, (size_t)gr->ops[j]);
    const char *name = nd->name, *op = nd->op;
    double share = gr->op_share[j];
    char full[512], fitted[300];
    int pre = 8; /* " 100.0% " */
    /* the op's type beside its name where the pane has room (the op types are listed above) */
    bool typed = cv->list_w - 1 - pre - (int)strlen(op) - 3 >= 28;
    int room = cv->list_w - 1 - pre - (typed ? (int)strlen(op) + 3 : 0);
    if (v->list_hscroll > 0) {
        snprintf(full, sizeof full, "%s (%s)", name, op);
        int h = v->list_hscroll < text_cols(full) ? v->list_hscroll : text_cols(full);
        list_line(w, cv, line, skip, fixed, 0, " %5.1f%% %s%s", 100.0 * share,
                  g_ascii ? "<" : "\xe2\x80\xb9", full + text_bytes(full, h));
        return;
    }
    if (list_row(cv, *line, skip, fixed) < 0) { /* out of view: no names to compare */
        (*line)++;
        return;
    }
    room = room > 8 ? room : 8;
    text_elide_keep(fitted, sizeof fitted, name, op_keep(v, gr, j, room), room, g_ascii);
    list_line(w, cv, line, skip, fixed, 0, " %5.1f%% %s%s%s%s", 100.0 * share, fitted,
              typed ? " (" : "", typed ? op : "", typed ? ")" : "");
}

/* The list's first lines that stay when it scrolls: a selected group's heading and, with
 * importances, its rank and effect; none for the whole graph's list. */
static int list_fixed(const struct importance_view *v) {
    return v->selected >= 0 && v->g ? (v->e ? 3 : 1) : 0;
}

int importance_view_list_page(const struct importance_view *v, int rows, int cols) {
    int page = importance_view_canvas(v, rows, cols).list_h - list_fixed(v);
    return page > 1 ? page : 1;
}

static void draw_list(WINDOW *w, const struct importance_view *v, const struct importance_canvas *cv) {
    if (cv->list_h <= 0 || cv->list_w <= 0) return;
    int line = 0, skip = v->list_scroll;
    const struct dp_explain *e = v->e;
    const char *unit = dp_metric_unit(v->metric);
    if (v->selected >= 0 && v->g) {
        int i = v->selected, fixed = list_fixed(v);
        int ops = (int)lround(v->g->x[i * DP_N_FEATURES + 1]);
        list_line(w, cv, &line, 0, 0, A_BOLD, "group g%d  (%d ops)", i, ops);
        if (e) {
            const struct dp_explain_group *gr = &e->groups[i];
            list_line(w, cv, &line, 0, 0, 0, "rank %d/%d  importance %.1f%%", gr->rank + 1,
                      e->n_groups, 100.0 * gr->importance);
            list_line(w, cv, &line, 0, 0, 0, "effect %+.4g %s", gr->attribution, unit);
            if (gr->n_types > 0) list_line(w, cv, &line, skip, fixed, A_BOLD, "op types");
            for (int t = 0; t < gr->n_types; t++)
                list_line(w, cv, &line, skip, fixed, 0, " %5.1f%% %3d %s",
                          100.0 * gr->types[t].importance, gr->types[t].n_ops, gr->types[t].op);
            if (gr->n_ops > 0 && v->graph)
                list_line(w, cv, &line, skip, fixed, A_BOLD, "ops (share of group)");
            for (int j = 0; j < gr->n_ops && v->graph; j++)
                op_line(w, v, cv, &line, skip, fixed, gr, j);
        }
        if (v->g->member_start && (!e || e->groups[i].n_ops == 0)) {
            list_line(w, cv, &line, skip, fixed, A_BOLD, "members");
            for (int j = v->g->member_start[i]; j < v->g->member_start[i + 1]; j++)
                list_line(w, cv, &line, skip, fixed, 0, " %s", v->g->members[j]);
        }
        return;
    }
    if (!e) {
        list_line(w, cv, &line, 0, 0, 0, "%s",
                  v->requested ? v->message
                  : v->model   ? "no importances"
                               : "no inspector: importance needs one");
        return;
    }
    /* what the marks and colours say */
    list_line(w, cv, &line, skip, 0, A_BOLD, "legend (share of the top group's importance)");
    list_line(w, cv, &line, skip, 0, 0, " @ > 75%%  O > 50%%  o > 0  . none");
    list_line(w, cv, &line, skip, 0, 0, " boxes: the same levels in colour, brightest highest");
    if (e->n_types > 0) {
        list_line(w, cv, &line, skip, 0, A_BOLD, "op types (share of %s)",
                  dp_metric_name(v->metric));
        for (int t = 0; t < e->n_types && t < 12; t++)
            list_line(w, cv, &line, skip, 0, 0, " %5.1f%% %4d %s", 100.0 * e->types[t].importance,
                      e->types[t].n_ops, e->types[t].op);
    }
    list_line(w, cv, &line, skip, 0, A_BOLD, "top groups");
    for (int r = 0; r < e->n_groups; r++) {
        int i = e->order[r];
        char label[64];
        group_label(v, i, label, sizeof label);
        list_line(w, cv, &line, skip, 0, level_attr(importance_view_level(v, i)), " %5.1f%% %s",
                  100.0 * e->groups[i].importance, label);
    }
}

/* s at (y, x) in at most width columns (one left free), an ellipsis where it is cut. */
static void line_fit(WINDOW *w, int y, int x, int width, const char *s, chtype attr) {
    char buf[600];
    snprintf(buf, sizeof buf, "%s", s);
    if (width < 2) return;
    if (text_cols(buf) > width - 1) {
        buf[text_bytes(buf, width - 2)] = '\0';
        strcat(buf, g_ascii ? "~" : "\xe2\x80\xa6");
    }
    wattron(w, attr);
    mvwaddstr(w, y, x, buf);
    wattroff(w, attr);
}

/* Header: header_text, then the inspector explained by its full name. */
static void draw_header(WINDOW *w, const struct importance_view *v, int cols) {
    char head[256], by[640], line[900];
    header_text(v, head, sizeof head);
    if (header_rows(v, cols) == 1) {
        snprintf(line, sizeof line, "%s%s", head, v->by);
        line_fit(w, 0, 0, cols, line, A_BOLD);
        return;
    }
    line_fit(w, 0, 0, cols, head, A_BOLD);
    text_elide(by, sizeof by, v->by, cols - 2, v->ascii);
    line_fit(w, 1, 1, cols - 1, by, 0);
}

/* The selection and the five most important groups: their edges are always drawn. */
static bool key_group(const struct importance_view *v, int i) {
    return i == v->selected || (v->e && v->e->groups[i].rank < 5);
}

void importance_view_draw(WINDOW *w, const struct importance_view *v) {
    int rows, cols;
    getmaxyx(w, rows, cols);
    g_ascii = v->ascii;
    werase(w);
    if (rows < 1 || cols < 1) {
        wnoutrefresh(w);
        return;
    }
    /* Header: the metric, its value and how the importances were computed. */
    draw_header(w, v, cols);
    if (!v->g || !v->layout) {
        line_fit(w, rows > 2 ? 2 : 0, 1, cols - 1, v->message[0] ? v->message : "no graph", 0);
        wnoutrefresh(w);
        return;
    }
    struct importance_canvas cv = importance_view_canvas(v, rows, cols);
    if (cv.w <= 0 || cv.h <= 0) {
        wnoutrefresh(w);
        return;
    }
    int n = v->g->n_groups;
    /* Edges first, nodes over them. Off-canvas end points still give the line's direction. A
     * crowded graph (markers, or over 40 edges) shows only the key groups' edges unless asked. */
    bool crowded = !v->all_edges && (!cv.boxes || v->g->n_edges > 40);
    for (int k = 0; k < v->g->n_edges; k++) {
        int a = v->g->edges[2 * k], b = v->g->edges[2 * k + 1], ra, ca, rb, cb;
        bool ia = importance_view_cell(v, &cv, a, &ra, &ca);
        bool ib = importance_view_cell(v, &cv, b, &rb, &cb);
        if (!(ia || ib)) continue;
        if (crowded && !key_group(v, a) && !key_group(v, b)) continue;
        draw_edge(w, v, &cv, ra, ca, rb, cb);
    }
    /* Which groups get a box: the selection, then the most important first, each unless its
     * box would overlap one placed already (it is then a one-cell marker: zoomed in, boxes
     * never cover each other). */
    signed char *box = calloc((size_t)n + 1, 1);
    int *placed = calloc((size_t)n + 1, 2 * sizeof *placed), np = 0;
    for (int k = -1; box && placed && k < n; k++) {
        int i = k < 0 ? v->selected : v->e ? v->e->order[k] : k, row, col;
        if (i < 0 || (k >= 0 && i == v->selected)) continue;
        bool on = importance_view_cell(v, &cv, i, &row, &col);
        box[i] = on || (row >= cv.y - 1 && row <= cv.y + cv.h && col >= cv.x - BOX_W &&
                        col < cv.x + cv.w + BOX_W) ? 1 : 0; /* visible, whole or in part */
        if (!box[i] || !cv.boxes) continue;
        for (int j = 0; j < np && box[i] == 1; j++)
            if (abs(row - placed[2 * j]) < BOX_H && abs(col - placed[2 * j + 1]) < BOX_W)
                box[i] = 2; /* a marker: it would overlap */
        if (box[i] == 1) {
            placed[2 * np] = row;
            placed[2 * np + 1] = col;
            np++;
        }
    }
    /* markers under boxes, least important first so that the important end up on top, the
     * selection last */
    for (int pass = 0; box && placed && pass < 2; pass++)
        for (int r = n - 1; r >= -1; r--) {
            int i = r < 0 ? v->selected : v->e ? v->e->order[r] : r, row, col;
            if (i < 0 || (r >= 0 && i == v->selected) || !box[i]) continue;
            bool as_box = cv.boxes && box[i] == 1;
            if (as_box != (pass == 1)) continue;
            importance_view_cell(v, &cv, i, &row, &col);
            draw_node(w, v, &cv, i, row, col, as_box);
        }
    free(box);
    free(placed);
    /* The separator and the list. */
    if (cv.list_w > 0 && cv.list_x > 0) {
        for (int r = cv.list_y; r < cv.list_y + cv.list_h; r++)
            mvwaddch(w, r, cv.list_x - 1, v->ascii ? '|' : ACS_VLINE);
    } else if (cv.list_h > 0 && cv.list_y > 0) {
        for (int c = 0; c < cols; c++) mvwaddch(w, cv.list_y - 1, c, v->ascii ? '-' : ACS_HLINE);
    }
    draw_list(w, v, &cv);
    if (v->message[0]) line_fit(w, rows - 1, 0, cols, v->message, A_BOLD);
    wnoutrefresh(w);
}
