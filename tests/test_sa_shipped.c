/* test_sa_shipped.c: the shipped setting-aware inspector (assets/inspectors/setting-aware.json)
 * through the session both front ends call: every catalog GPU is predicted (source named,
 * iteration time and memory predicted, values inside their 80% interval and their physical
 * range; the same, bit for bit, from one batched call, dp_session_predict_many); over a sweep of all-reduce clusters on fast networks, more workers are never slower
 * per sample where the simulator says faster, and over batch sizes a larger batch never gives
 * a lower throughput where the simulator's rises (test_batch); the predicted
 * iteration time stays near the simulator's on these sweeps. Every label here is SIMULATED. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/sa.h"
#include "dp/session.h"
#include "test.h"

static const char *const graphs[] = {"samples/graphs/resnet50.json", "samples/graphs/bert_base.json",
                                     "samples/graphs/vgg16.json"};
#define N_GRAPHS ((int)(sizeof graphs / sizeof graphs[0]))

static double errs[4096];
static int n_errs;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static struct dp_session *open_graph(const char *graph) {
    struct dp_session *ss = NULL;
    struct dp_error err = {0};
    CHECK(dp_session_open(&(struct dp_session_opts){0}, &ss, &err) == DP_OK);
    if (!ss) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    struct dp_coarsen_opts co = {.k = 0, .seed = DP_DEFAULT_SEED};
    CHECK(dp_session_load_graph(ss, graph, NULL, &co, &err) == DP_OK);
    CHECK(dp_session_set_batch(ss, 0, &err) == DP_OK);
    CHECK(dp_session_sa(ss) != NULL);
    if (!dp_session_sa(ss)) {
        fprintf(stderr, "no shipped setting-aware inspector (assets/inspectors/setting-aware."
                "json): run make assets\n");
        dp_session_free(ss);
        return NULL;
    }
    return ss;
}

/* s predicted (setting-aware) and simulated: the predicted and simulated throughput; false when
 * the job does not fit (the simulator's footprint over the GPU's memory). */
static bool both(struct dp_session *ss, const struct dp_setting *s, double *pred, double *sim) {
    struct dp_prediction p;
    struct dp_simulation m;
    struct dp_error err = {0};
    bool pending = false;
    CHECK(dp_session_predict(ss, s, 0, &p, &err) == DP_OK);
    CHECK(dp_session_simulate(ss, s, false, &m, &pending, &err) == DP_OK);
    CHECK(p.ok && p.from.source == DP_SOURCE_SETTING_AWARE);
    if (!p.ok || !m.ok || m.oom) return false;
    *pred = p.d[DP_D_THROUGHPUT];
    *sim = m.d[DP_D_THROUGHPUT];
    if (n_errs < (int)(sizeof errs / sizeof errs[0]))
        errs[n_errs++] = 100 * fabs(p.d[DP_D_ITERATION_MS] / m.d[DP_D_ITERATION_MS] - 1);
    return isfinite(*pred) && isfinite(*sim);
}

/* Every catalog GPU on a PS and an all-reduce cluster: a prediction, named, inside its interval
 * and its physical range. */
static void test_every_gpu(struct dp_session *ss) {
    const struct dp_gpu_catalog *cat = dp_session_catalog(ss);
    int n_ok = 0, n = 0;
    /* the same rows in one batched call, with a GPU the catalog lacks among them */
    struct dp_setting *rows = calloc((size_t)cat->n_gpus * 2 + 1, sizeof *rows);
    struct dp_prediction *single = calloc((size_t)cat->n_gpus * 2 + 1, sizeof *single);
    struct dp_prediction *many = calloc((size_t)cat->n_gpus * 2 + 1, sizeof *many);
    CHECK(rows && single && many);
    if (!rows || !single || !many) goto done;
    for (int i = 0; i < cat->n_gpus; i++)
        for (int sync = 0; sync < 2; sync++) {
            struct dp_setting s;
            struct dp_error err = {0};
            CHECK(dp_setting_make(cat->gpus[i].name, 4, 1, sync ? DP_NET_IB_HDR : DP_NET_25GBE, 0,
                                  DP_PLACE_HOMO, DP_PREC_FP32, &s, &err) == DP_OK);
            s.sync = sync ? DP_SYNC_ALLREDUCE : DP_SYNC_PS;
            CHECK(dp_setting_finish(&s, &err) == DP_OK);
            struct dp_prediction p;
            CHECK(dp_session_predict(ss, &s, 0, &p, &err) == DP_OK);
            if (n == cat->n_gpus) { /* the stranger, predicted alone first */
                rows[n] = s;
                snprintf(rows[n].gpu, sizeof rows[n].gpu, "NoSuchGPU");
                CHECK(dp_session_predict(ss, &rows[n], 0, &single[n], &err) == DP_OK);
                CHECK(!single[n].ok && strstr(single[n].note, "not in the catalog"));
                n++;
            }
            rows[n] = s;
            single[n++] = p;
            if (!p.ok) fprintf(stderr, "%s: %s\n", s.id, p.note);
            CHECK(p.ok && p.from.source == DP_SOURCE_SETTING_AWARE && p.has_interval);
            if (!p.ok) continue;
            n_ok++;
            bool inside = true;
            for (int o = 0; o < DP_N_OUTPUTS; o++)
                inside &= p.lo[o] <= p.m[o] && p.m[o] <= p.hi[o] && p.m[o] >= 0;
            CHECK(inside);
            CHECK(p.m[DP_OUT_GPU_UTIL_PEAK] <= 100 && p.m[DP_OUT_GPU_MEM_UTIL_PEAK] <= 100);
            double line = dp_network_bandwidth_gbps(s.network) * 1e3;
            CHECK(p.m[DP_OUT_NET_RX_PEAK] <= line && p.m[DP_OUT_NET_TX_PEAK] <= line);
            CHECK(p.d[DP_D_ITERATION_MS] > 0 && isfinite(p.d[DP_D_ITERATION_MS]));
            CHECK(p.d[DP_D_MEMORY_GB] > 0 && isfinite(p.d[DP_D_MEMORY_GB]));
            CHECK(p.d_lo[DP_D_ITERATION_MS] <= p.d[DP_D_ITERATION_MS] &&
                  p.d[DP_D_ITERATION_MS] <= p.d_hi[DP_D_ITERATION_MS]);
        }
    CHECK(n_ok == 2 * cat->n_gpus);
    struct dp_error err = {0};
    CHECK(dp_session_predict_many(ss, rows, n, 0, many, &err) == DP_OK);
    int same = 0;
    for (int i = 0; i < n; i++) {
        const struct dp_prediction *a = &single[i], *b = &many[i];
        bool eq = a->ok == b->ok && a->from.source == b->from.source && !strcmp(a->note, b->note) &&
                  a->oom == b->oom && a->clamped == b->clamped;
        for (int o = 0; o < DP_N_OUTPUTS && a->ok; o++)
            eq &= a->m[o] == b->m[o] && a->lo[o] == b->lo[o] && a->hi[o] == b->hi[o];
        for (int k = 0; k < DP_N_DERIVED && a->ok; k++)
            eq &= a->d[k] == b->d[k] || (isnan(a->d[k]) && isnan(b->d[k]));
        same += eq;
    }
    CHECK(same == n && n == 2 * cat->n_gpus + 1);
done:
    free(rows);
    free(single);
    free(many);
}

/* More all-reduce workers on a fast network: never a lower predicted throughput where the
 * simulator's rises. */
static void test_workers(struct dp_session *ss, const char *graph) {
    static const char *const gpus[] = {"V100-SXM2-32GB", "A100-40GB-SXM", "H100-SXM"};
    static const enum dp_network nets[] = {DP_NET_IB_HDR, DP_NET_100GBE, DP_NET_NVLINK};
    int pairs = 0, bad = 0;
    for (size_t gi = 0; gi < sizeof gpus / sizeof gpus[0]; gi++)
        for (size_t ni = 0; ni < sizeof nets / sizeof nets[0]; ni++) {
            double prev_p = NAN, prev_s = NAN;
            int prev_w = 0;
            for (int w = 1; w <= (nets[ni] == DP_NET_NVLINK ? 8 : 64); w *= 2) {
                struct dp_setting s;
                struct dp_error err = {0};
                memset(&s, 0, sizeof s);
                snprintf(s.gpu, sizeof s.gpu, "%s", gpus[gi]);
                s.sync = DP_SYNC_ALLREDUCE;
                s.workers = w;
                s.network = nets[ni];
                s.framework = DP_FW_PYTORCH;
                CHECK(dp_setting_finish(&s, &err) == DP_OK);
                double p, m;
                if (!both(ss, &s, &p, &m)) continue;
                if (prev_w && m > prev_s) {
                    pairs++;
                    if (p < prev_p) {
                        bad++;
                        fprintf(stderr, "%s %s: %d -> %d workers: simulated %.1f -> %.1f "
                                "samples/s, predicted %.1f -> %.1f\n", graph, s.id, prev_w, w,
                                prev_s, m, prev_p, p);
                    }
                }
                prev_p = p;
                prev_s = m;
                prev_w = w;
            }
        }
    CHECK(pairs >= 20);
    CHECK(bad == 0);
}

/* A larger batch: never a lower predicted throughput where the simulator's rises (issue 12's
 * target; the inspector of 2026-12-02 05:45 dipped on 3 of these 49 doublings, by up to 6.4%,
 * where the simulator gained under 7%: the loss's batch-pair term, notes/accuracy.md
 * experiments N, took them away). */
static int batch_pairs, batch_dips;
static void test_batch(struct dp_session *ss, const char *graph) {
    static const char *const ids[] = {"V100-P1w2ho-PCIe", "A100-P1w2ho-NVLink",
                                      "H100-P2w8he-IB-HDR-mixed"};
    int pairs = 0, bad = 0;
    struct dp_error err = {0};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        struct dp_setting s;
        bool listed = false;
        CHECK(dp_session_find_setting(ss, ids[k], &s, &listed, &err) == DP_OK && listed);
        double prev_p = NAN, prev_s = NAN;
        int64_t prev_b = 0;
        for (int64_t b = 8; b <= 1024; b *= 2) {
            CHECK(dp_session_set_batch(ss, b, &err) == DP_OK);
            double p, m;
            if (!both(ss, &s, &p, &m)) break;
            if (prev_b && m > prev_s) {
                pairs++;
                batch_pairs++;
                batch_dips += p < prev_p;
                if (p < prev_p) {
                    bad++;
                    fprintf(stderr, "%s %s: batch %lld -> %lld: simulated %.1f -> %.1f "
                            "samples/s, predicted %.1f -> %.1f\n", graph, ids[k],
                            (long long)prev_b, (long long)b, prev_s, m, prev_p, p);
                }
            }
            prev_p = p;
            prev_s = m;
            prev_b = b;
        }
    }
    CHECK(pairs >= 6);
    CHECK(bad == 0);
}

int main(void) {
    for (int i = 0; i < N_GRAPHS; i++) {
        struct dp_session *ss = open_graph(graphs[i]);
        if (!ss) continue;
        if (i == 0) test_every_gpu(ss);
        test_workers(ss, graphs[i]);
        test_batch(ss, graphs[i]);
        dp_session_free(ss);
    }
    printf("setting-aware (shipped): batch doubled where the simulator's throughput rises: %d "
           "pairs, %d predicted lower\n", batch_pairs, batch_dips);
    /* The predicted iteration time against the simulator's over every case above. */
    CHECK(n_errs > 100);
    if (n_errs) {
        qsort(errs, (size_t)n_errs, sizeof *errs, cmp_double);
        double med = errs[n_errs / 2], p90 = errs[(int)(0.9 * n_errs)];
        printf("setting-aware (shipped) against the simulator: %d cases, iteration_ms error "
               "median %.1f%%, p90 %.1f%%, worst %.1f%%\n", n_errs, med, p90, errs[n_errs - 1]);
        CHECK(med < 20);
    }
    TEST_MAIN_END();
}
