/* view_imp.c: glue between the explorer's app state and the importance pane of
 * view_importance.c: lazy set-up, re-syncing when the batch, inspector or metric changes, the
 * tab's keys and clicks, and the SVG export through dp/render.h. */
#include "view_imp.h"

#include <stdlib.h>
#include <string.h>

#include "dp/render.h"
#include "keys.h"
#include "view_importance.h"

struct imp_glue {
    struct importance_view v;
    struct dp_grouped       *g;        /* the pane's own copy of the grouped graph (it borrows it):
                                          a new batch only rewrites its features, so the Graphviz
                                          layout, which depends on the structure alone, is kept */
    long                     g_gen;
    const struct dp_model   *model;
    int                      metric;
};

static struct imp_glue *glue(struct app *a) {
    if (!a->imp) {
        struct imp_glue *s = calloc(1, sizeof *s);
        if (!s) return NULL;
        importance_view_init(&s->v);
        s->g_gen = -1;
        s->metric = -1;
        a->imp = s;
    }
    return a->imp;
}

void imp_sync(struct app *a) {
    struct imp_glue *s = glue(a);
    if (!s) return;
    struct dp_error err = {0};
    s->v.ascii = !a->utf8;
    const struct dp_inspector *in = app_inspector(a);
    const struct dp_model *m = in ? dp_inspector_model(in) : NULL;
    struct dp_grouped *old = NULL;
    bool changed = m != s->model;
    if (s->g_gen != a->grouped_gen) {
        s->g_gen = a->grouped_gen;
        changed = true;
        if (s->g && s->g->n_groups == a->grouped->n_groups && s->g->n_edges == a->grouped->n_edges) {
            /* same partition, new batch: new features under the same layout */
            memcpy(s->g->x, a->grouped->x,
                   (size_t)a->grouped->n_groups * DP_N_FEATURES * sizeof *s->g->x);
            s->g->batch = a->grouped->batch;
        } else {
            struct dp_grouped *c = dp_grouped_clone(a->grouped, true);
            if (!c) {
                app_status(a, true, "importance: out of memory");
                return;
            }
            old = s->g; /* the view compares structures against it: free it after */
            s->g = c;
        }
    }
    if (changed) {
        /* Graph and model go in together, so nothing is computed with a stale model. */
        double scale[DP_N_OUTPUTS];
        for (int k = 0; k < DP_N_OUTPUTS; k++) scale[k] = in ? dp_inspector_output(in, k)->scale : 1;
        s->v.insp = in;
        importance_view_set_inputs(&s->v, s->g, a->graph, a->weights, m, scale, false, &err);
        s->model = m;
        dp_grouped_free(old);
    }
    if (a->metric != s->metric) {
        if (a->metric != s->v.metric) importance_view_set_metric(&s->v, a->metric, &err);
        s->metric = a->metric;
    }
    if (a->imp_select >= 0 && s->v.g && a->imp_select < s->v.g->n_groups) {
        importance_view_select(&s->v, a->imp_select);
        a->imp_select = -1;
    }
}

void imp_draw(WINDOW *w, const struct app *a) {
    struct imp_glue *s = a->imp;
    if (!s) {
        werase(w);
        mvwaddstr(w, 1, 1, "out of memory");
        wnoutrefresh(w);
        return;
    }
    importance_view_draw(w, &s->v);
}

int imp_key(struct app *a, int ch) {
    imp_sync(a);
    struct imp_glue *s = a->imp;
    if (!s) return -1;
    struct dp_error err = {0};
    enum dp_status st = DP_OK;
    switch (ch) {
    case 'j': case KEY_DOWN: importance_view_select_next(&s->v); break;
    case 'k': case KEY_UP: importance_view_select_prev(&s->v); break;
    case KEY_LEFT: importance_view_pan(&s->v, -IMPORTANCE_PAN_STEP, 0); break;
    case KEY_RIGHT: importance_view_pan(&s->v, IMPORTANCE_PAN_STEP, 0); break;
    case KEY_SR: importance_view_pan(&s->v, 0, -IMPORTANCE_PAN_STEP); break;
    case KEY_SF: importance_view_pan(&s->v, 0, IMPORTANCE_PAN_STEP); break;
    case 'z': importance_view_zoom(&s->v, IMPORTANCE_ZOOM_STEP); break;
    case 'Z': importance_view_zoom(&s->v, 1.0 / IMPORTANCE_ZOOM_STEP); break;
    case '0': importance_view_reset(&s->v); break;
    case KEY_NPAGE: importance_view_scroll_list(&s->v, 5); break;
    case KEY_PPAGE: importance_view_scroll_list(&s->v, -5); break;
    case ']': st = importance_view_next_metric(&s->v, +1, &err); break;
    case '[': st = importance_view_next_metric(&s->v, -1, &err); break;
    case 'r': st = importance_view_toggle_method(&s->v, &err); break;
    default: return -1;
    }
    a->metric = s->metric = s->v.metric;
    if (st != DP_OK) app_status(a, true, "%s", err.msg);
    else if (ch == ']' || ch == '[' || ch == 'r')
        app_status(a, false, "importance of %s by %s (%.1f ms)", dp_metric_name(s->v.metric),
                   dp_explain_method_name(s->v.method), s->v.compute_ms);
    return R_REDRAW;
}

int imp_mouse(struct app *a, struct rect body, int y, int x) {
    imp_sync(a);
    struct imp_glue *s = a->imp;
    if (!s || !s->v.g) return R_NONE;
    struct importance_canvas c = importance_view_canvas(&s->v, body.h, body.w);
    int py = y - body.y, px = x - body.x, best = -1, bd = 1 << 30;
    for (int i = 0; i < s->v.g->n_groups; i++) {
        int r, col;
        if (!importance_view_cell(&s->v, &c, i, &r, &col)) continue;
        int d = (r - py) * (r - py) * 4 + (col - px) * (col - px); /* cells are ~2:1 */
        if (d < bd) {
            bd = d;
            best = i;
        }
    }
    if (best >= 0 && bd <= 36) importance_view_select(&s->v, best);
    return R_REDRAW;
}

enum dp_status imp_export_svg(struct app *a, const char *path, struct dp_error *err) {
    imp_sync(a);
    struct imp_glue *s = a->imp;
    if (!s) return dp_error_set(err, DP_ERR_NOMEM, "explorer: out of memory");
    struct dp_render_opts o = {DP_LAYOUT_AUTO, NULL, 0};
    return dp_render_file(s->g ? s->g : a->grouped, s->v.e, &o, DP_RENDER_SVG, path, err);
}

int imp_help_lines(const char **lines, int max) {
    static const char *const text[] = {
        "Importance tab:",
        "  j / k        next / previous group by importance (its ops are listed)",
        "  arrows       pan (Shift-Up / Shift-Down pan vertically)",
        "  z / Z        zoom in / out;  0 resets",
        "  [ / ]        previous / next metric (the 12 outputs, iteration time)",
        "  r            method: gradient x input / occlusion",
        "  PgUp / PgDn  scroll the op list;  e exports the graph as SVG",
    };
    int n = 0;
    for (size_t i = 0; i < sizeof text / sizeof text[0] && n < max; i++) lines[n++] = text[i];
    return n;
}

void imp_free(struct app *a) {
    if (!a || !a->imp) return;
    struct imp_glue *s = a->imp;
    importance_view_free(&s->v);
    dp_grouped_free(s->g);
    free(s);
    a->imp = NULL;
}
