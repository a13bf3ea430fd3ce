/* view_imp.c: glue between the explorer's app state and the importance pane of
 * view_importance.c: lazy set-up, the Graphviz layout of a new grouped graph on a background
 * thread (the pane says so meanwhile; the first open would otherwise wait tens of milliseconds),
 * re-syncing when the batch, inspector or metric changes, the tab's keys and clicks, and the SVG
 * export through dp/render.h. */
#include "view_imp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_util.h" /* cmd_now_ms */
#include "dp/render.h"
#include "keys.h"
#include "view_importance.h"

/* The background layout. Graphviz keeps global state, so it runs only here while the job runs
 * (the SVG export joins the job first). */
struct imp_job {
    pthread_mutex_t    mu;
    pthread_t          thread;
    bool               started;  /* a thread exists that needs joining */
    bool               done;     /* under mu */
    struct dp_grouped *g;        /* the worker's own copy: the app may rewrite its features */
    struct dp_layout  *layout;   /* the result (NULL on failure), owned until taken */
    struct dp_error    err;
    double             t_start, ms;
};

struct imp_glue {
    struct importance_view v;
    struct dp_grouped       *g;        /* the pane's own copy of the grouped graph (it borrows it):
                                          a new batch only rewrites its features, so the Graphviz
                                          layout, which depends on the structure alone, is kept */
    long                     g_gen;
    const struct dp_model   *model;
    int                      metric;
    bool                     laid_out; /* the view holds the layout of g */
    bool                     stale;    /* inputs changed while the layout was pending */
    struct imp_job           job;
};

static void *layout_main(void *arg) {
    struct imp_job *j = arg;
    struct dp_layout *l = NULL;
    struct dp_error err = {0};
    dp_render_layout(j->g, DP_LAYOUT_AUTO, 1.0, 1.0, false, &l, &err);
    pthread_mutex_lock(&j->mu);
    j->layout = l;
    j->err = err;
    j->ms = cmd_now_ms() - j->t_start;
    j->done = true;
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Waits for the worker (if any) and frees its input; the result stays for job_take. */
static void job_join(struct imp_job *j) {
    if (!j->started) return;
    pthread_join(j->thread, NULL);
    j->started = false;
    dp_grouped_free(j->g);
    j->g = NULL;
}

static bool job_done(struct imp_job *j) {
    pthread_mutex_lock(&j->mu);
    bool done = j->done;
    pthread_mutex_unlock(&j->mu);
    return done;
}

/* Lays g out on a new thread; false when it cannot start (the caller lays out in place). */
static bool job_start(struct imp_job *j, const struct dp_grouped *g) {
    job_join(j);
    dp_layout_free(j->layout);
    j->layout = NULL;
    j->done = false;
    memset(&j->err, 0, sizeof j->err);
    if (!(j->g = dp_grouped_clone(g, false))) return false;
    j->t_start = cmd_now_ms();
    if (pthread_create(&j->thread, NULL, layout_main, j) != 0) {
        dp_grouped_free(j->g);
        j->g = NULL;
        return false;
    }
    j->started = true;
    return true;
}

static struct imp_glue *glue(struct app *a) {
    if (!a->imp) {
        struct imp_glue *s = calloc(1, sizeof *s);
        if (!s) return NULL;
        importance_view_init(&s->v);
        pthread_mutex_init(&s->job.mu, NULL);
        s->g_gen = -1;
        s->metric = -1;
        a->imp = s;
    }
    return a->imp;
}

/* The label scales the pane passes on with the model. */
static void scales(const struct dp_inspector *in, double *scale) {
    for (int k = 0; k < DP_N_OUTPUTS; k++) scale[k] = in ? dp_inspector_output(in, k)->scale : 1;
}

void imp_sync(struct app *a) {
    struct imp_glue *s = glue(a);
    if (!s) return;
    struct dp_error err = {0};
    s->v.ascii = !a->utf8;
    const struct dp_inspector *in = app_inspector(a);
    const struct dp_model *m = in ? dp_inspector_model(in) : NULL;
    double scale[DP_N_OUTPUTS];
    scales(in, scale);
    if (s->g_gen != a->grouped_gen) {
        s->g_gen = a->grouped_gen;
        s->stale = true;
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
            /* the view lets go of the old copy before it is freed */
            importance_view_set_graph(&s->v, NULL, NULL, NULL, NULL);
            dp_grouped_free(s->g);
            s->g = c;
            s->laid_out = false;
            if (job_start(&s->job, c))
                snprintf(s->v.message, sizeof s->v.message,
                         "laying out %d groups (Graphviz, in the background)...", c->n_groups);
        }
    }
    if (!s->laid_out) {
        if (s->job.started && !job_done(&s->job)) return; /* the pane says it is laying out */
        job_join(&s->job);
        struct dp_layout *l = s->job.layout;
        s->job.layout = NULL;
        s->v.insp = in;
        /* the metric chosen meanwhile is the one computed now (not one computation later) */
        if (a->metric >= 0 && a->metric < DP_N_METRICS) s->v.metric = s->metric = a->metric;
        /* without a layout from the thread (it could not start, or Graphviz failed) the view
         * lays out in place, and shows Graphviz's message if that fails too */
        if (l) importance_view_set_laid_out(&s->v, s->g, a->graph, a->weights, m, scale, l, &err);
        else importance_view_set_inputs(&s->v, s->g, a->graph, a->weights, m, scale, true, &err);
        s->laid_out = true;
        s->stale = false;
        s->model = m;
    }
    if (s->stale || m != s->model) {
        /* Graph and model go in together, so nothing is computed with a stale model. */
        s->v.insp = in;
        importance_view_set_inputs(&s->v, s->g, a->graph, a->weights, m, scale, false, &err);
        s->model = m;
        s->stale = false;
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

void imp_prepare(struct app *a) {
    struct imp_glue *s = glue(a);
    if (!s || s->g) return;
    imp_sync(a); /* the first sync only starts the layout: nothing else to do before it is in */
}

bool imp_busy(const struct app *a) {
    const struct imp_glue *s = a->imp;
    return s && !s->laid_out && s->job.started;
}

bool imp_ready(struct app *a) {
    struct imp_glue *s = a->imp;
    return s && !s->laid_out && s->job.started && job_done(&s->job);
}

double imp_layout_ms(const struct app *a) {
    const struct imp_glue *s = a->imp;
    return s && s->laid_out ? s->job.ms : -1;
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
    else if ((ch == ']' || ch == '[' || ch == 'r') && s->v.e)
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
    struct imp_glue *s = glue(a);
    if (!s) return dp_error_set(err, DP_ERR_NOMEM, "explorer: out of memory");
    job_join(&s->job); /* Graphviz runs on one thread at a time */
    imp_sync(a);
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
    job_join(&s->job);
    dp_layout_free(s->job.layout);
    pthread_mutex_destroy(&s->job.mu);
    importance_view_free(&s->v);
    dp_grouped_free(s->g);
    free(s);
    a->imp = NULL;
}
