/* app_scaling.c: the scaling tab's model: the what-if setting swept over worker counts (1 .. 64)
 * and over batch sizes on its GPU, simulated in idle frames (through the session's cache), the
 * worker sweep also predicted where an inspector serves the point itself, and the largest batch
 * that fits in the GPU's memory found by bisection on the simulated footprint. */
#include "app_impl.h"

#include <stdio.h>
#include <string.h>

#include "dp/clock.h"

#define BISECT_MAX 40 /* steps: enough for any batch in [1, DP_BATCH_MAX] */

static void point_init(struct app_scale_point *p, int64_t x) {
    memset(p, 0, sizeof *p);
    p->x = x;
}

/* Fills in one point's simulation at `batch` (deferred: nothing runs unless allowed). */
static void point_simulate(struct app *a, struct app_scale_point *p, const struct dp_setting *s,
                           int64_t batch, bool defer) {
    struct dp_error err = {0};
    bool pending = false;
    if (dp_session_simulate_at(a->ss, s, batch, defer, &p->sim, &pending, &err) != DP_OK) {
        app_copy(p->note, sizeof p->note, err.msg);
        p->valid = false;
        pending = false;
    } else if (!pending && !p->sim.ok) {
        app_copy(p->note, sizeof p->note, p->sim.note);
    }
    p->sim_pending = pending;
}

/* The worker sweep's setting with w workers (the what-if cluster, its machines by default). */
static bool worker_setting(struct app *a, int64_t w, struct dp_setting *s, struct dp_error *err) {
    struct app_what what = a->what;
    what.workers = (int)w;
    what.machines = 0;
    return app_setting_of(a, &what, what.gpu, s, err);
}

/* Predicts point p (setting s) when an inspector serves this very cluster: the nearest
 * setting's would draw a copy of another point as if it were this one. With defer, an inspector
 * file not loaded yet leaves it pending. */
static void point_predict(struct app *a, struct app_scale_point *p, const struct dp_setting *s,
                          bool defer) {
    struct dp_prediction pr;
    struct dp_error err = {0};
    p->pred_pending = false;
    if (dp_session_predict(a->ss, s, defer ? DP_RESOLVE_DEFER : 0, &pr, &err) != DP_OK) return;
    p->pred_pending = pr.pending;
    if (!pr.ok) return;
    p->pred_ok = true;
    p->pred_iter = pr.d[DP_D_ITERATION_MS];
    p->pred_thru = pr.d[DP_D_THROUGHPUT];
}

static void worker_point(struct app *a, struct app_scale_point *p, int64_t w) {
    point_init(p, w);
    struct dp_setting s;
    struct dp_error err = {0};
    if (!worker_setting(a, w, &s, &err)) {
        /* the reason without the id of a setting that does not exist (ids shown are real) */
        const char *why = strstr(err.msg, ": ");
        app_copy(p->note, sizeof p->note, why && !memchr(err.msg, ' ', (size_t)(why - err.msg))
                                              ? why + 2 : err.msg);
        return;
    }
    p->valid = true;
    point_predict(a, p, &s, true);
    point_simulate(a, p, &s, dp_session_batch(a->ss), true);
}

void app_scaling_ensure(struct app *a) {
    struct app_scaling *sc = &a->scale;
    int64_t batch = dp_session_batch(a->ss);
    if (sc->n_batches > 0 && dp_setting_same_cluster(&sc->base, &a->cur) && batch == sc->batch)
        return;
    memset(sc, 0, sizeof *sc);
    sc->base = a->cur;
    sc->batch = batch;
    for (int i = 0; i < APP_SCALE_WORKERS; i++) worker_point(a, &sc->workers[i], INT64_C(1) << i);
    /* batch sizes: powers of two from 1; more are added as long as they fit (app_scaling_fill) */
    sc->n_batches = 1;
    point_init(&sc->batches[0], 1);
    sc->batches[0].valid = true;
    point_simulate(a, &sc->batches[0], &sc->base, 1, true);
}

bool app_scaling_pending(const struct app *a) {
    const struct app_scaling *sc = &a->scale;
    if (sc->n_batches == 0 || a->tab != APP_TAB_SCALING) return false;
    for (int i = 0; i < APP_SCALE_WORKERS; i++)
        if (sc->workers[i].sim_pending || sc->workers[i].pred_pending) return true;
    for (int i = 0; i < sc->n_batches; i++)
        if (sc->batches[i].sim_pending) return true;
    return !sc->fit_known;
}

/* The next batch point, one bisection step, or the end of the batch sweep: what the points
 * simulated so far call for. True when something was simulated. */
static bool batch_step(struct app *a) {
    struct app_scaling *sc = &a->scale;
    struct app_scale_point *last = &sc->batches[sc->n_batches - 1];
    if (last->sim_pending) return false;
    bool fits = last->valid && last->sim.ok && !last->sim.oom;
    if (!last->valid || (!last->sim.ok && sc->oom == 0 && sc->fits == 0)) {
        sc->fit_known = true;
        snprintf(sc->fit_note, sizeof sc->fit_note, "largest batch that fits: unknown (%s)",
                 last->note[0] ? last->note : "no simulation");
        return false;
    }
    if (sc->oom == 0) { /* still doubling */
        if (fits) sc->fits = last->x;
        else sc->oom = last->x;
        /* one point past the first out of memory shows the wall; stop at the limit too */
        bool more = sc->n_batches < APP_SCALE_BATCHES && last->x * 2 <= DP_BATCH_MAX &&
                    (sc->oom == 0 || last->x == sc->oom);
        if (more) {
            struct app_scale_point *p = &sc->batches[sc->n_batches++];
            point_init(p, last->x * 2);
            p->valid = true;
            point_simulate(a, p, &sc->base, p->x, false);
            return true;
        }
        if (sc->oom == 0) {
            sc->fit_known = true;
            snprintf(sc->fit_note, sizeof sc->fit_note,
                     "every batch up to %lld fits (simulated footprint)", (long long)last->x);
            return false;
        }
    }
    /* bisection on the simulated footprint between fits and oom */
    for (int k = 0; k < BISECT_MAX && sc->fits + 1 < sc->oom; k++) {
        int64_t mid = sc->fits + (sc->oom - sc->fits) / 2;
        struct dp_simulation sim;
        bool pending;
        struct dp_error err = {0};
        if (dp_session_simulate_at(a->ss, &sc->base, mid, false, &sim, &pending, &err) != DP_OK ||
            !sim.ok) {
            sc->fit_known = true;
            snprintf(sc->fit_note, sizeof sc->fit_note, "largest batch that fits: unknown (%.100s)",
                     err.msg[0] ? err.msg : sim.note);
            return true;
        }
        if (sim.oom) sc->oom = mid;
        else sc->fits = mid;
        return true; /* one step per call: the frame stays short */
    }
    sc->fit_known = true;
    if (sc->fits == 0)
        snprintf(sc->fit_note, sizeof sc->fit_note,
                 "not even batch 1 fits in the GPU's memory (simulated footprint)");
    else
        snprintf(sc->fit_note, sizeof sc->fit_note,
                 "largest batch that fits: %lld (%lld does not; simulated footprint)",
                 (long long)sc->fits, (long long)sc->oom);
    return false;
}

bool app_scaling_fill(struct app *a, double budget_ms) {
    struct app_scaling *sc = &a->scale;
    if (!app_scaling_pending(a)) return false;
    double t0 = dp_clock_ms();
    bool ran = false;
    for (int i = 0; i < APP_SCALE_WORKERS && dp_clock_ms() - t0 < budget_ms; i++) {
        struct app_scale_point *p = &sc->workers[i];
        if (!p->sim_pending && !p->pred_pending) continue;
        struct dp_setting s;
        struct dp_error err = {0};
        if (!worker_setting(a, p->x, &s, &err)) {
            p->sim_pending = p->pred_pending = false;
            continue;
        }
        if (p->pred_pending) point_predict(a, p, &s, false);
        if (p->sim_pending) point_simulate(a, p, &s, dp_session_batch(a->ss), false);
        ran = true;
    }
    for (int i = 0; i < sc->n_batches && dp_clock_ms() - t0 < budget_ms; i++) {
        struct app_scale_point *p = &sc->batches[i];
        if (!p->sim_pending) continue;
        point_simulate(a, p, &sc->base, p->x, false);
        ran = true;
    }
    while (!sc->fit_known && dp_clock_ms() - t0 < budget_ms && batch_step(a)) ran = true;
    return ran;
}
