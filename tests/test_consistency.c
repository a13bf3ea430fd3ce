/* test_consistency.c: every figure agrees with itself (issue 30): the burst relation
 * iteration_ms = (gpu_util.idle + gpu_util.active) / iterations_per_burst_cycle holds, with
 * bursts_span_iterations exactly when a cycle covers more than one iteration, for the prediction
 * and the simulation alike, on every setting of the default list and 200 random settings; the
 * JSON says the same; net/iter follows the setting's sync (the simulator's figure under
 * all-reduce); an explanation explains the predicted value; constants, variables and
 * bookkeeping ops carry no importance of their own; epoch sizes follow the dataset family. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/explain.h"
#include "dp/json_out.h"
#include "dp/ops.h"
#include "dp/session.h"
#include "test.h"

#define RESNET "samples/graphs/resnet50.json"
#define BERT   "samples/graphs/bert_base.json"

static int n_span; /* settings whose bursts span iterations (the case the issue found) */

/* The relation, checked on outputs m and the iteration time the same source gave, and the JSON
 * member dp_jw_bursts writes for them. */
static void check_relation(const double *m, double iteration_ms, const char *what) {
    struct dp_bursts_info b = dp_bursts_info(m, iteration_ms);
    double cycle = m[DP_OUT_GPU_UTIL_IDLE] + m[DP_OUT_GPU_UTIL_ACTIVE];
    CHECK(isfinite(b.iterations_per_cycle) && b.iterations_per_cycle > 0);
    if (!(b.iterations_per_cycle > 0)) {
        fprintf(stderr, "  %s: idle + active %g, iteration %g\n", what, cycle, iteration_ms);
        return;
    }
    CHECK_NEAR(iteration_ms, cycle / b.iterations_per_cycle, 1e-9 * iteration_ms);
    CHECK(b.span_iterations == (m[DP_OUT_GPU_UTIL_ACTIVE] > iteration_ms ||
                                cycle > iteration_ms * (1 + 1e-12)));
    n_span += b.span_iterations;
    /* the JSON says so */
    struct dp_jw *w = dp_jw_new();
    dp_jw_bursts(w, "bursts", m, iteration_ms);
    FILE *f = tmpfile();
    struct dp_error err = {0};
    char buf[512] = {0};
    CHECK(f && dp_jw_print(w, f, "tmp", &err) == DP_OK);
    if (f) {
        rewind(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    dp_jw_free(w);
    CHECK_CONTAINS(buf, b.span_iterations ? "\"bursts_span_iterations\": true"
                                          : "\"bursts_span_iterations\": false");
    CHECK_CONTAINS(buf, "iteration_ms = (gpu_util.idle + gpu_util.active) / "
                        "iterations_per_burst_cycle");
}

/* Setting s predicted and simulated: the relation for both; net/iter by its sync. Returns the
 * sources that gave figures (bit 0 prediction, bit 1 simulation). */
static int check_setting(struct dp_session *ss, const struct dp_setting *s) {
    struct dp_prediction p;
    struct dp_simulation sim;
    struct dp_error err = {0};
    bool pending;
    int got = 0;
    CHECK(dp_session_predict(ss, s, 0, &p, &err) == DP_OK);
    CHECK(dp_session_simulate(ss, s, false, &sim, &pending, &err) == DP_OK);
    if (p.ok) {
        check_relation(p.m, p.d[DP_D_ITERATION_MS], s->id);
        /* net/iter from the sync in use, for the prediction as for the simulation */
        double net = dp_sync_bytes_per_iter(s, dp_session_params(ss)) / 1e6;
        CHECK_NEAR(p.d[DP_D_NET_MB_PER_ITER], net, 1e-9 * net);
        if (sim.ok && s->sync == DP_SYNC_ALLREDUCE)
            CHECK_NEAR(sim.d[DP_D_NET_MB_PER_ITER], net, 1e-9 * net + 1e-12);
        if (sim.ok && s->sync == DP_SYNC_PS)
            CHECK(sim.d[DP_D_NET_MB_PER_ITER] <= net * (1 + 1e-9));
        got |= 1;
    }
    if (sim.ok) {
        check_relation(sim.m, sim.d[DP_D_ITERATION_MS], s->id);
        got |= 2;
    }
    return got;
}

static void test_default_list(struct dp_session *ss) {
    const struct dp_settings *list = dp_session_settings(ss);
    int n_pred = 0, n_sim = 0;
    for (int i = 0; i < list->n_settings; i++) {
        int got = check_setting(ss, &list->settings[i]);
        n_pred += got & 1;
        n_sim += (got >> 1) & 1;
    }
    printf("test_consistency: default list: %d settings, %d predicted, %d simulated\n",
           list->n_settings, n_pred, n_sim);
    CHECK(list->n_settings > 0 && n_pred == list->n_settings && n_sim > list->n_settings / 2);
}

static uint64_t rng_next(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A random setting on a catalog GPU; false when the draw is no valid setting. */
static bool random_setting(const struct dp_gpu_catalog *cat, uint64_t *rng, struct dp_setting *s) {
    memset(s, 0, sizeof *s);
    snprintf(s->gpu, sizeof s->gpu, "%s", cat->gpus[rng_next(rng) % (uint64_t)cat->n_gpus].name);
    s->sync = rng_next(rng) % 2 ? DP_SYNC_ALLREDUCE : DP_SYNC_PS;
    s->workers = 1 + (int)(rng_next(rng) % 16);
    s->ps = s->sync == DP_SYNC_PS ? 1 + (int)(rng_next(rng) % 4) : 0;
    s->network = (enum dp_network)(rng_next(rng) % DP_NET_COUNT);
    s->placement = DP_PLACE_HOMO;
    s->precision = rng_next(rng) % 2 ? DP_PREC_MIXED : DP_PREC_FP32;
    s->framework = rng_next(rng) % 2 ? DP_FW_PYTORCH : DP_FW_TENSORFLOW;
    return dp_setting_finish(s, NULL) == DP_OK;
}

static void test_random(struct dp_session *ss) {
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    int n_pred = 0, n_sim = 0, tries = 0;
    struct dp_error err = {0};
    /* a few batch sizes: the relation is no property of one */
    static const int64_t batches[] = {16, 32, 64, 128};
    while ((n_pred < 200 || n_sim < 200) && tries++ < 4000) {
        struct dp_setting s;
        if (!random_setting(dp_session_catalog(ss), &rng, &s)) continue;
        if (tries % 50 == 0) CHECK(dp_session_set_batch(ss, batches[(tries / 50) % 4], &err) == DP_OK);
        int got = check_setting(ss, &s);
        n_pred += got & 1;
        n_sim += (got >> 1) & 1;
    }
    printf("test_consistency: random: %d tries, %d predicted, %d simulated, %d spanning\n", tries,
           n_pred, n_sim, n_span);
    CHECK(n_pred >= 200 && n_sim >= 200);
    CHECK(n_span > 0); /* the case exists: bursts do merge across iterations */
}

/* A per-setting inspector's iteration is one cycle by definition. */
static void test_per_setting(struct dp_session *ss) {
    const struct dp_settings *list = dp_session_settings(ss);
    int n = 0;
    for (int i = 0; i < list->n_settings; i++) {
        struct dp_prediction p;
        struct dp_error err = {0};
        if (dp_session_predict(ss, &list->settings[i], DP_RESOLVE_PER_SETTING, &p, &err) ||
            !p.ok)
            continue;
        struct dp_bursts_info b = dp_bursts_info(p.m, p.d[DP_D_ITERATION_MS]);
        CHECK(b.iterations_per_cycle == 1.0 && !b.span_iterations);
        n++;
    }
    printf("test_consistency: %d per-setting predictions, each one cycle an iteration\n", n);
}

/* explain explains the predicted number, through the same inspector, for 5 settings; no op the
 * user cannot change carries importance of its own. */
static void test_explain(struct dp_session *ss) {
    const struct dp_settings *list = dp_session_settings(ss);
    const struct dp_graph *g = dp_session_graph(ss);
    for (int i = 0; i < list->n_settings && i < 5; i++) {
        const struct dp_setting *s = &list->settings[i];
        for (int metric = DP_OUT_GPU_UTIL_ACTIVE; metric <= DP_METRIC_ITERATION;
             metric += DP_METRIC_ITERATION - DP_OUT_GPU_UTIL_ACTIVE) {
            struct dp_prediction p, q;
            struct dp_explain *e = NULL;
            struct dp_error err = {0};
            CHECK(dp_session_predict(ss, s, 0, &q, &err) == DP_OK && q.ok);
            CHECK(dp_session_explain(ss, s, -1, 0, metric, DP_EXPLAIN_GRAD, 1, &e, &p, &err) ==
                  DP_OK);
            if (!e) continue;
            double want = metric == DP_METRIC_ITERATION ? q.d[DP_D_ITERATION_MS] : q.m[metric];
            CHECK(e->value == want && want > 0);
            CHECK(p.from.source == q.from.source && !strcmp(p.from.path, q.from.path));
            if (q.from.source == DP_SOURCE_SETTING_AWARE) CHECK(e->method == DP_EXPLAIN_OCCLUSION);
            double folded = 0, total = 0;
            for (int t = 0; t < e->n_types; t++) {
                total += e->types[t].importance;
                if (dp_op_class(e->types[t].op) == DP_OPCLASS_NONE) folded += e->types[t].importance;
            }
            /* only a constant or variable that feeds no op at all keeps its own share */
            CHECK(total > 0.99 && folded < 0.01);
            for (int k = 0; k < e->n_groups; k++)
                for (int j = 0; j < e->groups[k].n_ops; j++) {
                    const struct dp_node *nd = dp_graph_node(g, (size_t)e->groups[k].ops[j]);
                    if (dp_op_class(nd->op) == DP_OPCLASS_NONE && e->groups[k].op_share[j] > 0.05)
                        fprintf(stderr, "  unfolded: %s (%s)\n", nd->name, nd->op);
                }
            dp_explain_free(e);
        }
    }
}

/* Epoch sizes by dataset family: ImageNet's images; BERT's corpus in sequences of its length. */
static void test_epoch(struct dp_session *ss) {
    struct dp_error err = {0};
    const char *what = NULL;
    CHECK(dp_session_load_graph(ss, RESNET, NULL, NULL, &err) == DP_OK);
    CHECK(dp_session_epoch_samples(ss, &what) == 1281167.0 && strstr(what, "ImageNet"));
    CHECK(dp_session_load_graph(ss, BERT, NULL, NULL, &err) == DP_OK);
    CHECK_NEAR(dp_session_epoch_samples(ss, &what), 3.3e9 / 128, 1e-6);
    CHECK(what && strstr(what, "BERT"));
    dp_session_set_economics(ss, 1000, NAN);
    CHECK(dp_session_epoch_samples(ss, &what) == 1000 && !strcmp(what, "set by the user"));
}

int main(void) {
    struct dp_session *ss = NULL;
    struct dp_error err = {0};
    CHECK(dp_session_open(&(struct dp_session_opts){0}, &ss, &err) == DP_OK);
    if (!ss) {
        fprintf(stderr, "%s\n", err.msg);
        TEST_MAIN_END();
    }
    CHECK(dp_session_load_graph(ss, RESNET, NULL, NULL, &err) == DP_OK);
    CHECK(dp_session_set_batch(ss, 128, &err) == DP_OK);
    if (!dp_session_sa(ss))
        printf("test_consistency: no shipped setting-aware inspector: per-setting ones only\n");
    test_default_list(ss);
    test_per_setting(ss);
    test_explain(ss);
    test_random(ss);
    test_epoch(ss);
    dp_session_free(ss);
    TEST_MAIN_END();
}
