/* view_imp.c: glue between the explorer's app state and the importance pane of
 * view_importance.c: lazy set-up, one background thread for the slow work (the Graphviz layout
 * of a new grouped graph, tens of milliseconds; occlusion importances, one forward pass per
 * group, hundreds), the pane saying so meanwhile, re-syncing when the batch, inspector or metric
 * changes, the tab's keys and clicks, and the SVG export through dp/render.h. */
#include "imp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/clock.h"
#include "dp/compute.h" /* dp_threads */
#include "dp/render.h"
#include "keys.h"
#include "layout.h"
#include "views/view_importance.h"

/* The pane's one background thread: a Graphviz layout of a new grouped graph, or a slow
 * importance computation (occlusion: one forward pass per group). One job at a time; requests
 * made meanwhile wait (newest only) and start when it ends.
 *
 * No data race: the worker owns its copy of the grouped graph (a batch change replaces the
 * session's features and rewrites the pane's copy); everything else it reads is borrowed
 * read-only and outlives it: the inspector (the session never writes one after loading or adding
 * it, and frees them only in dp_session_free, from app_free, which calls imp_free, which joins
 * the worker, first; the UI's
 * own predictions on it only read, as the engine's occlusion threads do), the op graph and the op
 * weights (set at app_init, freed by app_free). Inputs are written before pthread_create; the
 * results are read after `done` under mu, and only after pthread_join. Graphviz keeps global
 * state, so a layout runs only here (the SVG export joins the job first). */
enum imp_kind { IMP_LAYOUT, IMP_EXPLAIN };

struct imp_job {
    pthread_mutex_t            mu;
    pthread_t                  thread;
    bool                       started; /* a thread exists that needs joining */
    bool                       done;    /* under mu */
    bool                       unread;  /* results not taken in yet (collect) */
    enum imp_kind              kind;
    /* inputs */
    struct dp_grouped         *g;       /* the worker's own copy */
    const struct dp_inspector *insp;    /* borrowed, read only (see above) */
    bool                       use_sa;  /* through sa (its inspector borrowed likewise) */
    struct dp_explain_sa       sa;
    const struct dp_model     *model;
    double                     scale[DP_N_OUTPUTS];
    const struct dp_graph     *graph;
    const struct dp_op_weights *weights;
    int                        metric;
    enum dp_explain_method     method;
    int                        n_threads; /* occlusion's worker threads */
    unsigned long              gen;     /* the view's request generation */
    /* results, owned until taken */
    struct dp_layout          *layout;
    struct dp_explain         *e;
    enum dp_status             st;
    struct dp_error            err;
    double                     t_start, ms;
};

struct imp_glue {
    struct importance_view v;
    struct dp_grouped       *g;        /* the pane's own copy of the grouped graph (it borrows it):
                                          a new batch only rewrites its features, so the Graphviz
                                          layout, which depends on the structure alone, is kept */
    long                     g_gen;
    char                     explained[1024]; /* whose prediction the view explains (source,
                                                 inspector, setting): another recomputes */
    long                     explained_gen;   /* the features it was filled for */
    const struct dp_model   *model;
    int                      metric;
    bool                     laid_out; /* the view holds the layout of g */
    bool                     stale;    /* inputs changed while the layout was pending */
    bool                     want_layout;  /* g needs a layout, not started yet */
    bool                     want_explain; /* the view requested importances ... */
    unsigned long            want_gen;     /* ... at this generation (the last one queued) */
    struct dp_layout        *layout;   /* a finished layout, until taken in */
    double                   layout_ms;
    struct imp_job           job;
};

static void *job_main(void *arg) {
    struct imp_job *j = arg;
    struct dp_layout *l = NULL;
    struct dp_explain *e = NULL;
    struct dp_error err = {0};
    enum dp_status st =
        j->kind == IMP_LAYOUT
            ? dp_render_layout(j->g, DP_LAYOUT_AUTO, 1.0, 1.0, false, &l, &err)
            : importance_explain(j->use_sa ? &j->sa : NULL, j->insp, j->model, j->scale, j->g, j->graph, j->weights,
                                 j->metric, j->method, j->n_threads, &e, &err);
    pthread_mutex_lock(&j->mu);
    j->layout = l;
    j->e = e;
    j->st = st;
    j->err = err;
    j->ms = dp_clock_ms() - j->t_start;
    j->done = true;
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Waits for the worker (if any) and frees its input; the results stay for collect. */
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

/* Starts the job (its inputs filled in) on its own copy of g; false when it cannot start. */
static bool job_start(struct imp_job *j, enum imp_kind kind, const struct dp_grouped *g) {
    j->kind = kind;
    j->done = false;
    j->unread = false;
    j->layout = NULL;
    j->e = NULL;
    j->st = DP_OK;
    memset(&j->err, 0, sizeof j->err);
    /* the drill-down needs the member names, the layout only the structure */
    if (!(j->g = dp_grouped_clone(g, kind == IMP_EXPLAIN))) return false;
    j->t_start = dp_clock_ms();
    if (pthread_create(&j->thread, NULL, job_main, j) != 0) {
        dp_grouped_free(j->g);
        j->g = NULL;
        return false;
    }
    j->started = true;
    j->unread = true;
    return true;
}

/* Takes a finished job in: a layout waits in s->layout for imp_sync; importances go to the view
 * when still the newest request (else they are dropped). False while a job runs. */
static bool collect(struct app *a, struct imp_glue *s) {
    struct imp_job *j = &s->job;
    if (j->started && !job_done(j)) return false;
    job_join(j);
    if (!j->unread) return true;
    j->unread = false;
    if (j->kind == IMP_LAYOUT) {
        dp_layout_free(s->layout);
        s->layout = j->layout;
        s->layout_ms = j->ms;
    } else if (importance_view_take(&s->v, j->gen, j->e, j->ms, j->st, &j->err)) {
        if (j->st != DP_OK) app_status(a, true, "%s", j->err.msg);
        else
            app_status(a, false, "importance of %s by %s (%.1f ms, in the background)",
                       dp_metric_name(j->metric),
                       dp_explain_method_name(j->e ? j->e->method : j->method), j->ms);
    }
    j->layout = NULL;
    j->e = NULL;
    return true;
}

/* The label scales the pane passes on with the model. */
static void scales(const struct dp_inspector *in, double *scale) {
    for (int k = 0; k < DP_N_OUTPUTS; k++) scale[k] = in ? dp_inspector_output(in, k)->scale : 1;
}

/* Starts what waits, once the thread is free: a layout first (the importances need it), then the
 * newest importance request. A job that cannot start is done in place. */
static void launch(struct app *a, struct imp_glue *s) {
    if (!collect(a, s)) return;
    if (s->want_layout) {
        s->want_layout = false;
        if (job_start(&s->job, IMP_LAYOUT, s->g)) return;
        /* no layout: imp_sync lays out in place */
    }
    if (!s->want_explain) return;
    s->want_explain = false;
    struct importance_view *v = &s->v;
    if (s->want_gen != v->gen || !v->g || !v->model) return; /* superseded */
    struct imp_job *j = &s->job;
    j->insp = v->insp && dp_inspector_model(v->insp) == v->model ? v->insp : NULL;
    j->use_sa = v->use_sa;
    j->sa = v->sa;
    j->model = v->model;
    memcpy(j->scale, v->scale, sizeof j->scale);
    j->graph = v->graph;
    j->weights = v->weights;
    j->metric = v->metric;
    j->method = v->method;
    j->gen = v->gen;
    /* one CPU stays with the UI; none on top of the engine's own threads (explain.h) */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    j->n_threads = dp_threads() > 1 || ncpu <= 2 ? 1 : (int)ncpu - 1;
    if (job_start(j, IMP_EXPLAIN, v->g)) return;
    /* no thread: compute here, slow as it is */
    struct dp_error err = {0};
    v->defer = false;
    importance_view_compute(v, &err);
    v->defer = true;
}

/* Queues the view's request (if it made a new one) and starts it when the thread is free. */
static void request(struct app *a, struct imp_glue *s) {
    if (s->v.requested && s->v.gen != s->want_gen) {
        s->want_explain = true;
        s->want_gen = s->v.gen;
    }
    launch(a, s);
}

static struct imp_glue *glue(struct app *a) {
    if (!a->imp) {
        struct imp_glue *s = calloc(1, sizeof *s);
        if (!s) return NULL;
        importance_view_init(&s->v);
        s->v.defer = true;
        pthread_mutex_init(&s->job.mu, NULL);
        s->g_gen = -1;
        s->metric = -1;
        s->layout_ms = -1;
        a->imp = s;
        a->imp_release = imp_free;
    }
    return a->imp;
}

/* Which prediction the pane explains: the Predict tab's, through the inspector that made it
 * (the setting-aware one for the current setting, or the per-setting file), named in full in
 * s->v.by. True when it is another than the last call's (the importances are recomputed). */
static bool explained(struct app *a, struct imp_glue *s) {
    const struct dp_prediction *p = &a->pred.p;
    bool sa = p->ok && p->from.source == DP_SOURCE_SETTING_AWARE && dp_session_sa(a->ss) &&
              dp_session_graph(a->ss);
    char key[sizeof s->explained];
    snprintf(key, sizeof key, "%d|%s|%s|%s", (int)p->from.source, p->from.path,
             p->from.setting_id, a->cur.id);
    if (!strcmp(key, s->explained) && s->explained_gen == dp_session_features_gen(a->ss))
        return false;
    snprintf(s->explained, sizeof s->explained, "%s", key);
    s->explained_gen = dp_session_features_gen(a->ss);
    struct dp_error err = {0};
    s->v.use_sa = sa && dp_session_explain_sa(a->ss, &a->cur, &s->v.sa, &err) == DP_OK;
    if (sa && !s->v.use_sa) app_status(a, true, "importance: %s", err.msg);
    if (!p->ok) s->v.by[0] = '\0';
    else if (p->from.source == DP_SOURCE_NEAREST)
        snprintf(s->v.by, sizeof s->v.by, "by %s inspector %s (made for %s)",
                 dp_pred_source_name(p->from.source), p->from.path, p->from.setting_id);
    else
        snprintf(s->v.by, sizeof s->v.by, "by %s inspector %s",
                 dp_pred_source_name(p->from.source), p->from.path);
    return true;
}

void imp_sync(struct app *a) {
    struct imp_glue *s = glue(a);
    if (!s) return;
    struct dp_error err = {0};
    s->v.ascii = !a->utf8;
    const struct dp_inspector *in = app_inspector(a);
    const struct dp_model *m = in ? dp_inspector_model(in) : NULL;
    bool changed = explained(a, s);
    if (s->v.use_sa) m = dp_inspector_model(dp_sa_body(s->v.sa.sa));
    double scale[DP_N_OUTPUTS];
    scales(in, scale);
    const struct dp_grouped *grouped = dp_session_grouped(a->ss);
    if (s->g_gen != dp_session_features_gen(a->ss)) {
        s->g_gen = dp_session_features_gen(a->ss);
        s->stale = true;
        if (s->g && s->g->n_groups == grouped->n_groups && s->g->n_edges == grouped->n_edges) {
            /* same partition, new batch: new features under the same layout (a running job
             * works on its own copy) */
            memcpy(s->g->x, grouped->x,
                   (size_t)grouped->n_groups * DP_N_FEATURES * sizeof *s->g->x);
            s->g->batch = grouped->batch;
        } else {
            struct dp_grouped *c = dp_grouped_clone(grouped, true);
            if (!c) {
                app_status(a, true, "importance: out of memory");
                return;
            }
            /* the view lets go of the old copy before it is freed */
            importance_view_set_graph(&s->v, NULL, NULL, NULL, NULL);
            dp_grouped_free(s->g);
            s->g = c;
            s->laid_out = false;
            s->want_layout = true;
            s->want_explain = false;
            dp_layout_free(s->layout);
            s->layout = NULL;
            snprintf(s->v.message, sizeof s->v.message,
                     "laying out %d groups (Graphviz, in the background)...", c->n_groups);
        }
    }
    launch(a, s);
    if (!s->laid_out) {
        /* the pane says it is laying out (a running importance job finishes first) */
        if (s->want_layout || s->job.started) return;
        struct dp_layout *l = s->layout;
        s->layout = NULL;
        s->v.insp = in;
        /* the metric chosen meanwhile is the one computed now (not one computation later) */
        if (a->metric >= 0 && a->metric < DP_N_METRICS) s->v.metric = s->metric = a->metric;
        /* without a layout from the thread (it could not start, or Graphviz failed) the view
         * lays out in place, and shows Graphviz's message if that fails too */
        if (l) importance_view_set_laid_out(&s->v, s->g, dp_session_graph(a->ss), dp_session_weights(a->ss), m, scale, l, &err);
        else importance_view_set_inputs(&s->v, s->g, dp_session_graph(a->ss), dp_session_weights(a->ss), m, scale, true, &err);
        s->laid_out = true;
        s->stale = false;
        s->model = m;
    }
    if (s->stale || m != s->model || changed) {
        /* Graph and model go in together, so nothing is computed with a stale model. */
        s->v.insp = in;
        importance_view_set_inputs(&s->v, s->g, dp_session_graph(a->ss), dp_session_weights(a->ss), m, scale, false, &err);
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
    request(a, s);
}

void imp_prepare(struct app *a) {
    struct imp_glue *s = glue(a);
    if (!s || s->g) return;
    imp_sync(a); /* the first sync only starts the layout: nothing else to do before it is in */
}

bool imp_busy(const struct app *a) {
    const struct imp_glue *s = a->imp;
    return s && (s->job.started || s->want_layout || s->want_explain || s->v.requested);
}

bool imp_ready(struct app *a) {
    struct imp_glue *s = a->imp;
    if (!s) return false;
    if (s->job.started) return job_done(&s->job);
    return s->want_layout || s->want_explain || s->v.requested; /* a sync starts it */
}

double imp_layout_ms(const struct app *a) {
    const struct imp_glue *s = a->imp;
    return s && s->laid_out ? s->layout_ms : -1;
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

/* The lines a page of the op list scrolls, in the body the view is drawn in. */
static int list_page(const struct app *a, const struct importance_view *v) {
    struct layout l = layout_compute(LINES, COLS, a);
    return importance_view_list_page(v, l.body.h, l.body.w);
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
    case KEY_NPAGE: importance_view_scroll_list(&s->v, list_page(a, &s->v)); break;
    case KEY_PPAGE: importance_view_scroll_list(&s->v, -list_page(a, &s->v)); break;
    case '>': importance_view_scroll_sideways(&s->v, 8); break;
    case '<': importance_view_scroll_sideways(&s->v, -8); break;
    case ']': st = importance_view_next_metric(&s->v, +1, &err); break;
    case '[': st = importance_view_next_metric(&s->v, -1, &err); break;
    case 'r': st = importance_view_toggle_method(&s->v, &err); break;
    default: return -1;
    }
    a->metric = s->metric = s->v.metric;
    bool asked = s->v.requested;
    request(a, s); /* a slow computation: on the thread, the pane says so meanwhile */
    if (st != DP_OK) app_status(a, true, "%s", err.msg);
    else if ((ch == ']' || ch == '[' || ch == 'r') && asked)
        app_status(a, false, "importance of %s by %s: computing in the background",
                   dp_metric_name(s->v.metric), dp_explain_method_name(s->v.method));
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
    /* Graphviz runs on one thread at a time, and the file shows the importances: wait for both */
    do {
        job_join(&s->job);
        imp_sync(a);
    } while (s->job.started);
    struct dp_render_opts o = {DP_LAYOUT_AUTO, NULL, 0};
    return dp_render_file(s->g ? s->g : dp_session_grouped(a->ss), s->v.e, &o, DP_RENDER_SVG, path, err);
}

int imp_help_lines(const char **lines, int max) {
    static const char *const text[] = {
        "Importance tab:",
        "  j / k        \tnext / previous group by importance (its ops are listed)",
        "  arrows       \tpan (Shift-Up / Shift-Down pan vertically)",
        "  z / Z        \tzoom in / out;  0 resets",
        "  [ / ]        \tprevious / next metric (the 12 outputs, iteration time)",
        "  r            \tmethod: gradient x input / occlusion (in the background)",
        "  PgUp / PgDn  \tscroll the op list;  e exports the graph as SVG",
        "  < / >        \tscroll the op list sideways: long op names whole (at the start they are "
        "elided in the middle, their distinguishing end kept)",
        "  legend       \t@ > 75% of the top group's importance, O > 50%, o > 0, . none; boxes "
        "coloured by the same levels; zoomed in, a group whose box would cover another's is a "
        "marker",
    };
    int n = 0;
    for (size_t i = 0; i < sizeof text / sizeof text[0] && n < max; i++) lines[n++] = text[i];
    return n;
}

const struct importance_view *imp_view(const struct app *a) {
    const struct imp_glue *s = a->imp;
    return s ? &s->v : NULL;
}

void imp_free(struct app *a) {
    if (!a || !a->imp) return;
    struct imp_glue *s = a->imp;
    job_join(&s->job); /* a running layout or computation ends first: it reads app state */
    dp_layout_free(s->job.layout);
    dp_explain_free(s->job.e);
    dp_layout_free(s->layout);
    pthread_mutex_destroy(&s->job.mu);
    importance_view_free(&s->v);
    dp_grouped_free(s->g);
    free(s);
    a->imp = NULL;
    a->imp_release = NULL;
}
