/* session_sa.c: the session's setting-aware inspector (dp/sa.h): loading it, the workload as its
 * head reads it (the body's embedding from the session's cache, the profile at the current
 * batch, the OOD score: made once per features), and a prediction for any setting with its 80%
 * interval, its clamps and its OOD and out-of-memory flags. */
#include "session_impl.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/shipped.h"

#define SHIPPED_SA "assets/inspectors/setting-aware.json"

enum dp_status sess_sa_open(struct dp_session *ss, const char *path, struct dp_error *err) {
    char buf[PATH_MAX];
    ss->sa_workload = ss->sa_gen = -1;
    if (!path) { /* the shipped one, when there is one */
        if (dp_shipped_path(SHIPPED_SA, NULL, buf, sizeof buf, NULL) != DP_OK) return DP_OK;
        path = buf;
    }
    if (!path[0]) return DP_OK;
    enum dp_status st = dp_sa_load(path, &ss->sa, err);
    if (!st) sess_copy(ss->sa_path, sizeof ss->sa_path, path);
    return st;
}

void sess_sa_free(struct dp_session *ss) {
    dp_sa_graph_free(&ss->sa_graph);
    dp_sa_free(ss->sa);
    ss->sa = NULL;
}

const struct dp_sa_inspector *dp_session_sa(const struct dp_session *ss) { return ss->sa; }
const char *dp_session_sa_path(const struct dp_session *ss) { return ss->sa ? ss->sa_path : ""; }

/* The workload at the current features as the head reads it (made on first use per features);
 * NULL with p->note (or err, out of memory) when it cannot be. */
static const struct dp_sa_graph *sa_graph(struct dp_session *ss, struct dp_prediction *p,
                                          struct dp_error *err) {
    if (ss->sa_workload == ss->workload && ss->sa_gen == ss->features_gen) return &ss->sa_graph;
    struct dp_error why = {0};
    struct dp_profile prof;
    const float *emb = sess_embed(ss, dp_sa_body(ss->sa), &why);
    enum dp_status st = emb ? dp_profile_graph(ss->graph, ss->batch, &prof, &why) : why.status;
    if (!st) {
        dp_sa_graph_free(&ss->sa_graph);
        st = dp_sa_graph_init(ss->sa, ss->grouped, emb, &prof, &ss->sa_graph, &why);
    }
    if (st) {
        sess_copy(p->note, sizeof p->note, why.msg);
        if (st == DP_ERR_NOMEM) dp_error_set(err, DP_ERR_NOMEM, "%s", why.msg);
        return NULL;
    }
    ss->sa_workload = ss->workload;
    ss->sa_gen = ss->features_gen;
    return &ss->sa_graph;
}

/* Row p (setting s) from the head's prediction sp. */
static void sa_fill(const struct dp_session *ss, const struct dp_setting *s,
                    const struct dp_sa_prediction *sp, struct dp_prediction *p) {
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        p->raw[o] = NAN;
        p->m[o] = sp->value[o];
        p->lo[o] = sp->lo[o];
        p->hi[o] = sp->hi[o];
    }
    for (int o = 0; o < DP_SA_N_OUT; o++)
        if (sp->clamped[o]) p->clamped |= 1u << o;
    /* A file fine-tuned for a setting (driple transfer --from SA.json) says so; its labels are
     * mixed when the tuning samples were of another kind than the sweep's. */
    const struct dp_sa_provenance *prov = dp_sa_provenance(ss->sa);
    bool tuned = prov->tuned.setting[0] != '\0';
    sess_copy(p->origin, sizeof p->origin, tuned ? "fine-tuned" : "setting-aware");
    sess_copy(p->data, sizeof p->data,
              !tuned || !strcmp(prov->tuned.data, prov->data) ? prov->data : "mixed");
    /* The derived figures from the predicted iteration time and memory, and their interval:
     * the same formulas at the interval's two ends (each figure falls or rises with them). */
    sess_facts(ss, s, &p->facts);
    struct dp_derive_in a = p->facts, b = p->facts;
    p->facts.direct[DP_D_ITERATION_MS] = sp->value[DP_SA_ITERATION];
    p->facts.direct[DP_D_MEMORY_GB] = sp->value[DP_SA_MEMORY];
    a.direct[DP_D_ITERATION_MS] = sp->lo[DP_SA_ITERATION];
    a.direct[DP_D_MEMORY_GB] = sp->lo[DP_SA_MEMORY];
    b.direct[DP_D_ITERATION_MS] = sp->hi[DP_SA_ITERATION];
    b.direct[DP_D_MEMORY_GB] = sp->hi[DP_SA_MEMORY];
    double da[DP_N_DERIVED], db[DP_N_DERIVED];
    dp_derive(p->m, &p->facts, p->d);
    dp_derive(p->m, &a, da);
    dp_derive(p->m, &b, db);
    for (int k = 0; k < DP_N_DERIVED; k++)
        if (isfinite(da[k]) && isfinite(db[k]) && da[k] != db[k]) {
            p->d_lo[k] = fmin(da[k], db[k]);
            p->d_hi[k] = fmax(da[k], db[k]);
        }
    p->has_interval = true;
    p->ood = sp->ood;
    p->ood_score = sp->ood_score;
    p->oom = sp->oom;
    p->ok = true;
}

enum dp_status sess_sa_predict(struct dp_session *ss, const struct dp_setting *s, int n,
                               struct dp_prediction *p, struct dp_error *err) {
    struct dp_error why = {0};
    const struct dp_sa_graph *g = sa_graph(ss, p, &why);
    if (!g) {
        for (int i = 1; i < n; i++) sess_copy(p[i].note, sizeof p[i].note, p->note);
        return why.status == DP_ERR_NOMEM ? dp_error_set(err, DP_ERR_NOMEM, "%s", why.msg)
                                          : DP_OK;
    }
    /* the rows on catalog GPUs, gathered for one pass of the head */
    struct dp_setting *rs = malloc((size_t)n * sizeof *rs);
    const struct dp_gpu **gpus = malloc((size_t)n * sizeof *gpus);
    struct dp_sa_prediction *sp = malloc((size_t)n * sizeof *sp);
    int *row = malloc((size_t)n * sizeof *row), k = 0;
    enum dp_status st = DP_OK;
    if (!rs || !gpus || !sp || !row) {
        st = dp_error_set(err, DP_ERR_NOMEM, "session: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const struct dp_gpu *gpu = dp_gpu_find(ss->cat, s[i].gpu);
        if (!gpu) {
            snprintf(p[i].note, sizeof p[i].note, "GPU %.60s is not in the catalog", s[i].gpu);
            continue;
        }
        rs[k] = s[i];
        gpus[k] = gpu;
        row[k++] = i;
    }
    if (dp_sa_predict(ss->sa, g, rs, gpus, k, sp, &why) == DP_OK) {
        for (int j = 0; j < k; j++) sa_fill(ss, &s[row[j]], &sp[j], &p[row[j]]);
        goto done;
    }
    if (why.status == DP_ERR_NOMEM) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s", why.msg);
        goto done;
    }
    /* a row the head cannot predict (a GPU without the figures it reads, a non-finite output)
     * stopped the pass: row by row, each with its own note */
    for (int j = 0; j < k; j++) {
        struct dp_prediction *pj = &p[row[j]];
        if (dp_sa_predict(ss->sa, g, &rs[j], &gpus[j], 1, &sp[j], &why) == DP_OK) {
            sa_fill(ss, &s[row[j]], &sp[j], pj);
        } else if (why.status == DP_ERR_NOMEM) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s", why.msg);
            goto done;
        } else {
            sess_copy(pj->note, sizeof pj->note, why.msg);
        }
    }
done:
    free(rs);
    free(gpus);
    free(sp);
    free(row);
    return st;
}
