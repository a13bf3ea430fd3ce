/* transfer.c: transfers in and out of a session (dp/session.h): planning one to a setting
 * from the nearest inspector, running it (simulated samples, then the head retrained), taking
 * the result in, and saving it where the next start finds it. */
#include "session_impl.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/clock.h"
#include "dp/files.h"
#include "dp/train.h"
#include "dp/zoo.h"

#define XFER_BATCHES 8
#define XFER_ZOO_BATCHES 3
#define XFER_MIN_SAMPLES 5
/* Small, quick zoo models that widen the transfer set beyond this graph (coarsened once each). */
static const char *const xfer_zoo[] = {"alexnet", "resnet50", "mobilenet_v2", "squeezenet",
                                       "vgg16", "lstm_lm"};

enum dp_status dp_session_plan_transfer(struct dp_session *ss, const struct dp_setting *s,
                                        struct dp_transfer_plan *out, struct dp_error *err) {
    struct dp_resolution r;
    struct dp_error why = {0};
    if (dp_session_resolve(ss, s, DP_RESOLVE_NEAREST, &r, &why) == DP_OK &&
        r.source != DP_SOURCE_NEAREST)
        return dp_error_set(err, DP_ERR_INVALID, "%s already has its own inspector", s->id);
    const struct dp_setting *near = dp_settings_nearest(ss->list, s, true);
    if (!near)
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "no inspector to transfer from (the setting list names none)");
    const struct dp_gpu *gpu = dp_gpu_find(ss->cat, s->gpu);
    if (!gpu) return dp_error_set(err, DP_ERR_NOT_FOUND, "GPU %s is not in the catalog", s->gpu);
    if (!ss->graph)
        return dp_error_set(err, DP_ERR_INVALID, "transfer: no graph to simulate (a grouped file)");
    memset(out, 0, sizeof *out);
    sess_copy(out->base_path, sizeof out->base_path, near->inspector);
    sess_copy(out->base_id, sizeof out->base_id, near->id);
    out->target = *s;
    out->gpu = *gpu;
    out->graph = ss->graph;
    out->part = ss->part;
    out->weights = ss->weights;
    out->batch = ss->batch;
    return DP_OK;
}

/* The running transfer's progress reporting. */
struct xfer_ctx {
    const struct dp_transfer_plan *p;
    void (*progress)(double, const char *, void *);
    void *ud;
};

static void say(const struct xfer_ctx *x, double frac, const char *phase) {
    if (x->progress) x->progress(frac, phase, x->ud);
}

static void on_epoch(const struct dp_train_progress *tp, void *ud) {
    const struct xfer_ctx *x = ud;
    char phase[64];
    snprintf(phase, sizeof phase, "training head, epoch %d", tp->epoch);
    say(x, 0.6 + 0.4 * (double)tp->epoch / (tp->epochs > 0 ? tp->epochs : 1), phase);
}

/* Adds one simulated sample of graph g (grouped by part) at batch b on the plan's setting; a
 * job that does not fit adds nothing. */
static enum dp_status add_sample(const struct dp_transfer_plan *p, struct dp_dataset *ds,
                                 const struct dp_graph *g, const struct dp_partition *part,
                                 const char *model, int64_t b, struct dp_error *err) {
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.batch = b;
    struct dp_sample s;
    memset(&s, 0, sizeof s);
    bool fits;
    enum dp_status st = dp_sample_simulate(g, &p->target, &p->gpu, &o,
                                           "driple simulator (explorer transfer)", &s, &fits, err);
    if (st || !fits) return st;
    if ((st = dp_features(g, part, p->weights, b, &s.grouped, NULL, err))) return st;
    s.graph = (char *)(uintptr_t)dp_graph_name(g); /* copied by dp_dataset_add_sample */
    s.model = (char *)(uintptr_t)model;
    st = dp_dataset_add_sample(ds, &s, err);
    dp_grouped_free(s.grouped);
    return st;
}

enum dp_status dp_transfer_run(const struct dp_transfer_plan *p, atomic_int *cancel,
                               void (*progress)(double frac, const char *phase, void *ud),
                               void *ud, struct dp_inspector **out,
                               struct dp_transfer_report *rep, struct dp_error *err) {
    struct xfer_ctx x = {p, progress, ud};
    struct dp_inspector *base = NULL;
    struct dp_dataset ds;
    struct dp_graph *zg = NULL;
    struct dp_partition *zp = NULL;
    double t_start = dp_clock_ms();
    enum dp_status st;
    *out = NULL;
    memset(rep, 0, sizeof *rep);
    dp_dataset_init(&ds, p->target.id);
    if ((st = dp_inspector_load(p->base_path, &base, err))) goto done;
    /* batch sizes around the plan's: b/8 .. 16 b, doubling */
    int64_t b = p->batch / 8 > 0 ? p->batch / 8 : 1;
    for (int k = 0; k < XFER_BATCHES; k++, b *= 2) {
        if (cancel && *cancel) goto cancelled;
        say(&x, 0.3 * k / XFER_BATCHES, "simulating this graph");
        if ((st = add_sample(p, &ds, p->graph, p->part, dp_graph_name(p->graph), b, err)))
            goto done;
    }
    int nz = (int)(sizeof xfer_zoo / sizeof xfer_zoo[0]);
    for (int z = 0; z < nz; z++) {
        if (cancel && *cancel) goto cancelled;
        say(&x, 0.3 + 0.3 * z / nz, "simulating zoo models");
        struct dp_zoo_opts zo;
        dp_zoo_opts_default(&zo);
        zo.precision = p->target.precision;
        struct dp_coarsen_opts co = {.k = 0, .seed = DP_DEFAULT_SEED};
        struct dp_error zerr = {0};
        /* a model the zoo cannot build or group is skipped: the set is only wider with it */
        if (dp_zoo_build(xfer_zoo[z], &zo, &zg, &zerr) != DP_OK) continue;
        if (dp_coarsen(zg, &co, &zp, &zerr) == DP_OK) {
            int64_t zb = dp_graph_batch(zg) > 0 ? dp_graph_batch(zg) : 32;
            for (int k = 0; k < XFER_ZOO_BATCHES; k++, zb *= 2)
                if ((st = add_sample(p, &ds, zg, zp, xfer_zoo[z], zb / 2, err))) goto done;
        }
        dp_partition_free(zp);
        dp_graph_free(zg);
        zp = NULL;
        zg = NULL;
    }
    rep->n_samples = ds.n_samples;
    if (ds.n_samples < XFER_MIN_SAMPLES) {
        st = dp_error_set(err, DP_ERR_INVALID, "only %d samples fit in memory on %s",
                          ds.n_samples, p->target.id);
        goto done;
    }
    say(&x, 0.6, "embedding (body frozen)");
    struct dp_train_opts o;
    dp_train_opts_recipe(&o, DP_RECIPE_DRIPLE_C); /* as the shipped inspectors were made */
    o.target = DP_TARGET_BASE;
    o.mode = DP_TRAIN_HEAD;
    o.cancel = cancel;
    o.progress = on_epoch;
    o.ud = &x;
    struct dp_train_result res;
    memset(&res, 0, sizeof res);
    if ((st = dp_transfer(base, &ds, &o, out, &res, err))) goto done;
    rep->epochs = res.epochs_run;
    rep->train_s = res.seconds;
    rep->best_val_loss = res.best_val_loss;
    bool cancelled = res.cancelled;
    dp_train_result_free(&res);
    if (cancelled) {
        dp_inspector_free(*out);
        *out = NULL;
        goto cancelled;
    }
    /* the base's file, for the provenance (dp_transfer names the base's setting) */
    struct dp_provenance *pv = dp_inspector_provenance_mut(*out);
    sess_copy(pv->base, sizeof pv->base, p->base_path);
    goto done;
cancelled:
    rep->cancelled = true;
    st = dp_error_set(err, DP_ERR_CANCELLED, "transfer to %s cancelled", p->target.id);
done:
    rep->total_s = (dp_clock_ms() - t_start) / 1e3;
    dp_partition_free(zp);
    dp_graph_free(zg);
    dp_dataset_free(&ds);
    dp_inspector_free(base);
    return st;
}

int dp_session_add_transfer(struct dp_session *ss, struct dp_inspector *insp,
                            const struct dp_setting *s, struct dp_error *err) {
    int i = sess_insp_new(ss);
    if (i < 0) {
        dp_inspector_free(insp);
        dp_error_set(err, DP_ERR_NOMEM, "transfer: out of memory");
        return -1;
    }
    struct sess_insp *e = &ss->insps[i];
    e->insp = insp;
    e->session = true;
    e->target = *s;
    sess_copy(e->setting_id, sizeof e->setting_id, s->id);
    snprintf(e->path, sizeof e->path, "(session:%.60s)", s->id);
    return i;
}

/* Creates the directories above the file `path`; DP_ERR_IO naming the one that cannot be made. */
static enum dp_status make_parent_dirs(const char *path, struct dp_error *err) {
    char d[PATH_MAX];
    sess_copy(d, sizeof d, path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) return DP_OK;
    *slash = '\0';
    return dp_mkdir_p(d, err);
}

/* Writes session transfer e (whole, not as a difference to its base: the file must outlive the
 * base's location) where dp_inspector_save_path says; then e names that file. */
static enum dp_status save_entry(struct dp_session *ss, struct sess_insp *e,
                                 struct dp_error *err) {
    char path[sizeof e->path], base[PATH_MAX];
    if (!dp_inspector_save_path(ss->list, &e->target, path, sizeof path))
        return dp_error_set(err, DP_ERR_IO,
                            "%s: nowhere to save its inspector (set DRIPLE_INSPECTORS or HOME)",
                            e->target.id);
    enum dp_status st = make_parent_dirs(path, err);
    if (st) return st;
    /* the base's file as the provenance names it, made absolute: relative to the working
     * directory it would mean nothing next to the saved file */
    struct dp_provenance *pv = dp_inspector_provenance_mut(e->insp);
    if (pv->base[0] && pv->base[0] != '/' && realpath(pv->base, base) &&
        strlen(base) < sizeof pv->base)
        sess_copy(pv->base, sizeof pv->base, base);
    if ((st = dp_inspector_save(e->insp, path, NULL, NULL, err))) return st;
    e->saved = true;
    sess_copy(e->path, sizeof e->path, path);
    return DP_OK;
}

enum dp_status dp_session_save_transfer(struct dp_session *ss, const struct dp_setting *s,
                                        char *path, size_t n, bool *already,
                                        struct dp_error *err) {
    *already = false;
    for (int i = ss->n_insps - 1; i >= 0; i--) {
        struct sess_insp *e = &ss->insps[i];
        if (!e->session || !dp_setting_same_cluster(&e->target, s)) continue;
        *already = e->saved;
        enum dp_status st = e->saved ? DP_OK : save_entry(ss, e, err);
        if (!st) sess_copy(path, n, e->path);
        return st;
    }
    return dp_error_set(err, DP_ERR_NOT_FOUND,
                        "no inspector was transferred to %s in this session", s->id);
}

enum dp_status dp_session_save_all(struct dp_session *ss, int *n_saved, struct dp_error *err) {
    *n_saved = 0;
    for (int i = 0; i < ss->n_insps; i++) {
        struct sess_insp *e = &ss->insps[i];
        if (!e->session || e->saved) continue;
        enum dp_status st = save_entry(ss, e, err);
        if (st) return st;
        (*n_saved)++;
    }
    return DP_OK;
}

int dp_session_unsaved(const struct dp_session *ss) {
    int n = 0;
    for (int i = 0; i < ss->n_insps; i++) n += ss->insps[i].session && !ss->insps[i].saved;
    return n;
}

bool dp_session_is_unsaved(const struct dp_session *ss, int i) {
    return i >= 0 && i < ss->n_insps && ss->insps[i].session && !ss->insps[i].saved;
}
