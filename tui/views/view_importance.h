/* view_importance.h: the explorer's importance pane. State (struct importance_view: the grouped
 * graph's Graphviz layout, the importances of one metric, selection, pan and zoom) is changed only
 * by the functions below and holds no curses objects; importance_view_draw draws it into a
 * window (nodes as boxes coloured by importance, edges as lines, the selected group's ops).
 *
 * Glue for the explorer (app.c / keys.c):
 *   init once (and importance_view_init_colors after start_color); importance_view_set_inputs
 *   whenever the grouped graph or the inspector may have changed (one computation; the layout is
 *   kept across batch changes); key actions call select_next/prev, pan, zoom, next_metric,
 *   toggle_method, toggle_edges, reset, scroll_list; importance_view_draw each frame. */
#ifndef DRIPLE_VIEW_IMPORTANCE_H
#define DRIPLE_VIEW_IMPORTANCE_H

#include <curses.h>
#include <stdbool.h>

#include "dp/explain.h"
#include "dp/render.h"

struct importance_view {
    /* borrowed (must outlive the view; set through the functions below) */
    const struct dp_grouped     *g;
    const struct dp_graph       *graph;   /* may be NULL: no op drill-down */
    const struct dp_op_weights  *weights; /* may be NULL */
    const struct dp_model       *model;   /* may be NULL: no importances */
    /* When set (the explorer), importances and the value are in the metric's own unit through
     * dp_explain_compute_inspector; else model and scale are used as they are (tests). */
    const struct dp_inspector   *insp;
    double                       scale[DP_N_OUTPUTS];
    /* When use_sa (the explorer, a setting the setting-aware inspector predicts): importances
     * through it for sa's setting (dp_explain_compute_sa; model is then its body's), so the
     * value is the Predict tab's. */
    bool                         use_sa;
    struct dp_explain_sa         sa;
    /* owned */
    struct dp_layout            *layout;  /* unit layout: positions in [0, 1] x [0, 1] */
    struct dp_explain           *e;       /* importances of `metric` (NULL until computed) */
    int                          metric;  /* 0..DP_N_METRICS-1 */
    enum dp_explain_method       method;
    int                          selected; /* group index, -1 = none */
    double                       zoom;    /* 1 = the whole graph fits the pane; 1..32 */
    double                       pan_x, pan_y; /* unit-layout point at the pane's centre */
    int                          list_scroll;  /* first line of the op list */
    int                          list_hscroll; /* columns its long op names are scrolled left
                                                  by; 0: names elided in the middle to fit */
    bool                         ascii;   /* ASCII instead of box-drawing characters */
    bool                         all_edges; /* crowded graphs (markers, or > 40 edges): every
                                               edge, not only those of the selection and the
                                               five top groups */
    double                       compute_ms;   /* time of the last importance computation */
    char                         message[512]; /* last error ("" = none), shown in the pane */
    char                         by[640]; /* the inspector explained, by its full name
                                             (elided in the middle where the header is short) */
    /* Background computation (the explorer, tui/imp.c). With `defer` set, a computation
     * judged slow (occlusion, or grad once one took over IMPORTANCE_SYNC_MS) is not run by
     * importance_view_compute: it clears e, sets `requested` and says "computing ..."; the
     * caller computes it elsewhere (importance_explain) and hands it back with
     * importance_view_take. `gen` counts computations and requests: a result made for an
     * older gen is stale and never shown. */
    bool                         defer;
    bool                         requested;    /* until the result for `gen` is taken */
    unsigned long                gen;
    double                       grad_ms;      /* the last grad computation, -1 before */
};

/* Key steps: the fraction of the pane one pan moves, the factor one zoom step applies. */
#define IMPORTANCE_PAN_STEP  0.15
#define IMPORTANCE_ZOOM_STEP 1.5
/* Slower computations than this go to the background when the view defers (docs/design.md: a key
 * answers within 50 ms, the frame included). */
#define IMPORTANCE_SYNC_MS   20.0

/* Empty state: metric gpu_util.active, method grad, no graph. */
void importance_view_init(struct importance_view *v);
/* Frees the owned layout and importances (not the borrowed inputs). */
void importance_view_free(struct importance_view *v);

/* Borrows g (and graph and weights for the drill-down), lays it out with Graphviz, resets
 * selection, pan and zoom, and recomputes the importances when a model is set. On failure the
 * message is kept in v->message and returned in err; the view then draws the message. */
enum dp_status importance_view_set_graph(struct importance_view *v, const struct dp_grouped *g,
                                         const struct dp_graph *graph,
                                         const struct dp_op_weights *weights,
                                         struct dp_error *err);
/* Borrows the inspector's model and copies its label scales (scale may be NULL = all 1), then
 * recomputes the importances for the current metric. model may be NULL (importances cleared). */
enum dp_status importance_view_set_model(struct importance_view *v, const struct dp_model *model,
                                         const double *scale, struct dp_error *err);
/* Both at once, computing once: use this when the graph and the model may change together (a
 * freed old model or graph is never touched: nothing is computed before both are replaced).
 * The layout (and selection, pan, zoom) is kept when g has the same groups and edges as the
 * current graph (a new batch size); relayout forces a new layout. */
enum dp_status importance_view_set_inputs(struct importance_view *v, const struct dp_grouped *g,
                                          const struct dp_graph *graph,
                                          const struct dp_op_weights *weights,
                                          const struct dp_model *model, const double *scale,
                                          bool relayout, struct dp_error *err);
/* importance_view_set_inputs with a layout made elsewhere (the explorer runs Graphviz, tens of
 * milliseconds, on a background thread): takes ownership of layout (freed on failure too), which
 * must have g's n_groups nodes (else DP_ERR_INVALID, kept in v->message); resets selection, pan
 * and zoom, then computes the importances. */
enum dp_status importance_view_set_laid_out(struct importance_view *v, const struct dp_grouped *g,
                                           const struct dp_graph *graph,
                                           const struct dp_op_weights *weights,
                                           const struct dp_model *model, const double *scale,
                                           struct dp_layout *layout, struct dp_error *err);
/* Recomputes the importances (metric, method) and the drill-down; with v->defer, a slow
 * computation is only requested (see the struct). */
enum dp_status importance_view_compute(struct importance_view *v, struct dp_error *err);
/* What importance_view_compute runs, as a function of its arguments alone (all borrowed, read
 * only), so that a worker thread can run it on its own copy of g: the importances of metric
 * through the setting-aware inspector when sa is set (occlusion), else by method under insp (in the metric's unit; NULL: model with scale, which may be NULL = all 1),
 * drilled down to graph's ops when graph is set and g has members; n_threads as
 * dp_explain_compute takes it (occlusion; 0 = automatic). Returns a new result owned
 * by the caller in *out; a failed drill-down keeps *out (groups only) and returns its error. */
enum dp_status importance_explain(const struct dp_explain_sa *sa,
                                  const struct dp_inspector *insp, const struct dp_model *model,
                                  const double *scale, const struct dp_grouped *g,
                                  const struct dp_graph *graph,
                                  const struct dp_op_weights *weights, int metric,
                                  enum dp_explain_method method, int n_threads,
                                  struct dp_explain **out, struct dp_error *err);
/* Hands back the result of the request made at generation gen (v->gen then), computed in ms:
 * takes ownership of e (may be NULL when st failed; err then says why). Shown when gen is still
 * v->gen; else freed, because a newer request or computation superseded it, and false returned. */
bool importance_view_take(struct importance_view *v, unsigned long gen, struct dp_explain *e,
                          double ms, enum dp_status st, const struct dp_error *err);

/* Metric and method (each recomputes). delta = +1 / -1 cycles through the 13 metrics. */
enum dp_status importance_view_set_metric(struct importance_view *v, int metric,
                                          struct dp_error *err);
enum dp_status importance_view_next_metric(struct importance_view *v, int delta,
                                           struct dp_error *err);
enum dp_status importance_view_toggle_method(struct importance_view *v, struct dp_error *err);

/* Selection walks the importance ranking: next = the next less important group (from none: the
 * most important); prev the other way. When zoomed in, the view centres on the selection. */
void importance_view_select_next(struct importance_view *v);
void importance_view_select_prev(struct importance_view *v);
void importance_view_select(struct importance_view *v, int group); /* -1 = none */
/* Pans by dx, dy pane fractions (IMPORTANCE_PAN_STEP per key); clamped to the layout. */
void importance_view_pan(struct importance_view *v, double dx, double dy);
/* Multiplies the zoom (IMPORTANCE_ZOOM_STEP or its inverse per key), clamped to [1, 32], and
 * centres on the selected group when there is one. */
void importance_view_zoom(struct importance_view *v, double factor);
/* Crowded graphs draw only the edges of the selection and the top five groups; this toggles
 * all edges. */
void importance_view_toggle_edges(struct importance_view *v);
/* Zoom 1, centred. */
void importance_view_reset(struct importance_view *v);
/* Scrolls the selected group's op list by delta lines (clamped at 0). */
void importance_view_scroll_list(struct importance_view *v, int delta);
/* Scrolls the op list's lines sideways by delta columns (clamped to [0, 400]): long op names
 * are elided in the middle at 0, shown whole from their start when scrolled. */
void importance_view_scroll_sideways(struct importance_view *v, int delta);

/* Geometry (pure; used by the draw call and by tests): the canvas part of a rows x cols pane,
 * and the cell of group i's centre in it (relative to the pane). false when i is off-canvas. */
struct importance_canvas {
    int y, x, h, w;       /* canvas rectangle inside the pane */
    int list_y, list_x, list_h, list_w; /* the op list */
    bool boxes;           /* room for labelled boxes (otherwise one-cell markers) */
};
struct importance_canvas importance_view_canvas(const struct importance_view *v, int rows,
                                                int cols);
/* The lines a page of the op list scrolls in a rows x cols pane: those below the lines that
 * stay (a selected group's heading), at least 1, so paging reaches every line. */
int importance_view_list_page(const struct importance_view *v, int rows, int cols);
bool importance_view_cell(const struct importance_view *v, const struct importance_canvas *c,
                          int i, int *row, int *col);
/* Importance level 0..4 of group i relative to the most important group (0: none or unknown). */
int importance_view_level(const struct importance_view *v, int i);

/* Colour pairs IMPORTANCE_PAIR_BASE .. +5 for the 5 levels and edges; call once after
 * start_color() (a no-op without colours). */
#define IMPORTANCE_PAIR_BASE 40
void importance_view_init_colors(void);

/* Draws the pane into w (its whole size), then wnoutrefresh(w). Reads v only. */
void importance_view_draw(WINDOW *w, const struct importance_view *v);

#endif
