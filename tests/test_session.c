/* test_session.c: the what-if session (dp/session.h) both front ends call: which inspector
 * serves a setting and why (the list's own, the same cluster's, the user directory's, the
 * nearest; the messages when none), predictions (clamped at 0 and said so, derived figures by
 * dp_derive, one GNN pass per body and batch), simulations (cached per cluster and batch,
 * deferred), the workload (batch changes keep the grouping), simulated samples, a session
 * transfer (resolution, saving) and the JSON members every front end writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/json_out.h"
#include "dp/session.h"
#include "test.h"

#define GRAPH "tests/data/graph/small.json"

static char dir[256], settings_path[320], insp_path[320], neg_path[320];

/* Writes an inspector for `setting` whose outputs come out at bias (before the scales 100+o). */
static int write_inspector(const char *path, const char *setting, float bias0) {
    struct dp_arch arch;
    dp_arch_default(&arch);
    struct dp_model *m = NULL;
    struct dp_inspector *in = NULL;
    struct dp_error err = {0};
    if (dp_model_init(&arch, 7, &m, &err) != DP_OK) return -1;
    float bias[DP_N_OUTPUTS];
    int64_t shape[1] = {DP_N_OUTPUTS};
    for (int o = 0; o < DP_N_OUTPUTS; o++) bias[o] = bias0 + 0.05f * (float)o;
    if (dp_model_set_param(m, "graph_read_out.mlp.fully_connected.2.linear.bias", 1, shape, bias,
                           &err) != DP_OK ||
        dp_inspector_init(m, &in, &err) != DP_OK)
        return -1;
    for (int o = 0; o < DP_N_OUTPUTS; o++) dp_inspector_set_scale(in, o, 100.0 + o);
    dp_inspector_set_setting(in, setting);
    enum dp_status st = dp_inspector_save(in, path, NULL, NULL, &err);
    dp_inspector_free(in);
    return st == DP_OK ? 0 : -1;
}

static int make_fixtures(void) {
    snprintf(dir, sizeof dir, "/tmp/driple_test_session_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(insp_path, sizeof insp_path, "%s/v100.json", dir);
    snprintf(neg_path, sizeof neg_path, "%s/neg.json", dir);
    snprintf(settings_path, sizeof settings_path, "%s/settings.json", dir);
    if (write_inspector(insp_path, "V100-P1w2ho-PCIe", 0.5f) ||
        write_inspector(neg_path, "A100-P1w2ho-NVLink", -50.0f))
        return -1;
    FILE *f = fopen(settings_path, "w");
    if (!f) return -1;
    /* short GPU names as a user writes them; one file missing; one setting without a file */
    fprintf(f, "{\"format\": \"driple-settings/1\", \"settings\": ["
               "{\"id\": \"V100-P1w2ho-PCIe\", \"gpu\": \"V100\", \"ps\": 1, \"workers\": 2,"
               " \"network\": \"PCIe\", \"inspector\": \"v100.json\"},"
               "{\"id\": \"V100-P1w4ho-PCIe\", \"gpu\": \"V100\", \"ps\": 1, \"workers\": 4,"
               " \"network\": \"PCIe\", \"inspector\": \"missing.json\"},"
               "{\"id\": \"A100-P1w2ho-NVLink\", \"gpu\": \"A100-40GB-SXM\", \"ps\": 1,"
               " \"workers\": 2, \"network\": \"NVLink\", \"inspector\": \"neg.json\"},"
               "{\"id\": \"H100-P1w1ho-PCIe\", \"gpu\": \"H100\", \"ps\": 1, \"workers\": 1,"
               " \"network\": \"PCIe\"}]}\n");
    return fclose(f);
}

static struct dp_session *open_session(void) {
    struct dp_session *ss = NULL;
    struct dp_session_opts o = {.settings = settings_path};
    struct dp_error err = {0};
    CHECK(dp_session_open(&o, &ss, &err) == DP_OK);
    if (!ss) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    struct dp_coarsen_opts co = {.k = 3, .seed = DP_DEFAULT_SEED};
    CHECK(dp_session_load_graph(ss, GRAPH, NULL, &co, &err) == DP_OK);
    CHECK(dp_session_set_batch(ss, 16, &err) == DP_OK);
    return ss;
}

static long embeds(const struct dp_session *ss) {
    long n;
    dp_session_counts(ss, &n, NULL);
    return n;
}

static void test_resolve(void) {
    struct dp_session *ss = open_session();
    if (!ss) return;
    const struct dp_settings *list = dp_session_settings(ss);
    struct dp_error err = {0};
    struct dp_resolution r;
    /* the list's own file; the list's short GPU names read as the catalog's */
    CHECK(!strcmp(list->settings[0].gpu, "V100-PCIe-16GB"));
    CHECK(dp_session_resolve(ss, &list->settings[0], 0, &r, &err) == DP_OK);
    CHECK(r.source == DP_SOURCE_TRAINED && r.inspector >= 0 && !r.pending);
    CHECK(!strcmp(r.setting_id, "V100-P1w2ho-PCIe") && !strcmp(r.path, insp_path));
    /* the same cluster by its options: the list's entry */
    struct dp_setting s;
    CHECK(dp_setting_make("V100-PCIe-16GB", 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    CHECK(dp_session_resolve(ss, &s, 0, &r, &err) == DP_OK && !strcmp(r.path, insp_path));
    /* a listed setting whose file is missing: the message names it; with the nearest allowed,
     * the nearest's (extrapolated) */
    setenv("DRIPLE_INSPECTORS", dir, 1);
    CHECK(dp_session_resolve(ss, &list->settings[1], 0, &r, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "missing.json does not exist");
    CHECK(r.source == DP_SOURCE_NONE && r.inspector == -1);
    CHECK(dp_session_resolve(ss, &list->settings[1], DP_RESOLVE_NEAREST, &r, &err) == DP_OK);
    CHECK(r.source == DP_SOURCE_NEAREST && !strcmp(r.setting_id, "V100-P1w2ho-PCIe"));
    /* a cluster the list lacks: the user directory's file, named by the full GPU name */
    CHECK(dp_setting_make("V100-PCIe-16GB", 8, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    CHECK(dp_session_resolve(ss, &s, 0, &r, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "V100-PCIe-16GB-P1w8ho-PCIe.json does not exist. Make one");
    char user[600];
    snprintf(user, sizeof user, "%s/V100-PCIe-16GB-P1w8ho-PCIe.json", dir);
    CHECK(write_inspector(user, "V100-P1w8ho-PCIe", 0.5f) == 0);
    CHECK(dp_session_resolve(ss, &s, 0, &r, &err) == DP_OK && !strcmp(r.path, user));
    /* deferred: a file not loaded yet is pending, and loaded once asked without the flag */
    CHECK(dp_session_resolve(ss, &list->settings[2], DP_RESOLVE_DEFER, &r, &err) == DP_OK);
    CHECK(r.pending && r.inspector == -1);
    CHECK(dp_session_preload_left(ss));
    while (dp_session_preload_next(ss)) {}
    CHECK(!dp_session_preload_left(ss));
    CHECK(dp_session_resolve(ss, &list->settings[2], DP_RESOLVE_DEFER, &r, &err) == DP_OK);
    CHECK(!r.pending && r.inspector >= 0);
    /* setting ids: the list's, else parsed; an unknown one says both */
    bool listed;
    CHECK(dp_session_find_setting(ss, "V100-P1w4ho-PCIe", &s, &listed, &err) == DP_OK && listed);
    CHECK(dp_session_find_setting(ss, "H100-P2w8ho-NVLink", &s, &listed, &err) == DP_OK && !listed);
    CHECK(s.workers == 8 && s.ps == 2);
    CHECK(dp_session_find_setting(ss, "X1", &s, &listed, &err) != DP_OK);
    CHECK_CONTAINS(err.msg, "no setting 'X1' (4 settings");
    /* a file named by the user, once */
    int i = dp_session_use_file(ss, insp_path, &err);
    CHECK(i >= 0 && dp_session_use_file(ss, insp_path, &err) == i);
    CHECK(!strcmp(dp_session_inspector_path(ss, i), insp_path));
    CHECK(dp_session_use_file(ss, "no/such.json", &err) < 0);
    CHECK_CONTAINS(err.msg, "no/such.json");
    unsetenv("DRIPLE_INSPECTORS");
    dp_session_free(ss);
}

static void test_predict(void) {
    struct dp_session *ss = open_session();
    if (!ss) return;
    const struct dp_settings *list = dp_session_settings(ss);
    struct dp_error err = {0};
    struct dp_prediction p, q;
    dp_session_set_economics(ss, 12800, 3.0);
    CHECK(dp_session_predict(ss, &list->settings[0], 0, &p, &err) == DP_OK);
    CHECK(p.ok && p.clamped == 0 && !strcmp(p.origin, "scratch"));
    CHECK(embeds(ss) == 1);
    /* the head on the inspector's own full pass */
    double metrics[DP_N_OUTPUTS];
    CHECK(dp_inspector_predict(dp_session_inspector(ss, p.from.inspector), dp_session_grouped(ss),
                               NULL, metrics, &err) == DP_OK);
    for (int o = 0; o < DP_N_OUTPUTS; o++) CHECK_NEAR(p.m[o], metrics[o], 1e-4 * (1 + fabs(metrics[o])));
    /* derived figures through dp_derive with the setting's workers and the economics */
    double iter = p.m[DP_OUT_GPU_UTIL_IDLE] + p.m[DP_OUT_GPU_UTIL_ACTIVE];
    CHECK_NEAR(p.d[DP_D_ITERATION_MS], iter, 1e-9);
    CHECK_NEAR(p.d[DP_D_THROUGHPUT], 16.0 * 2 * 1000 / iter, 1e-6 * p.d[DP_D_THROUGHPUT]);
    CHECK_NEAR(p.d[DP_D_EPOCH_COST], 12800 / p.d[DP_D_THROUGHPUT] / 3600 * 2 * 3.0, 1e-9);
    CHECK_NEAR(p.d[DP_D_NET_MB_PER_ITER], 2.0 * dp_session_params(ss) * 4 / 1e6, 1e-12);
    CHECK(isnan(p.d[DP_D_MEMORY_GB]));
    /* a second inspector with the same body: no second GNN pass */
    CHECK(dp_session_predict(ss, &list->settings[2], 0, &q, &err) == DP_OK && q.ok);
    CHECK(embeds(ss) == 1);
    /* its outputs come out below 0: read 0, and said so */
    CHECK(q.clamped != 0);
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        CHECK(q.m[o] >= 0);
        if (q.clamped & (1u << o)) CHECK(q.m[o] == 0 && q.raw[o] < 0);
    }
    /* a batch change: new features, the grouping kept, one more pass; back again: cached */
    const struct dp_partition *part = dp_session_partition(ss);
    long gen = dp_session_features_gen(ss);
    CHECK(dp_session_set_batch(ss, 32, &err) == DP_OK);
    CHECK(dp_session_partition(ss) == part && dp_session_features_gen(ss) > gen);
    CHECK(dp_session_predict(ss, &list->settings[0], 0, &q, &err) == DP_OK && embeds(ss) == 2);
    CHECK(dp_session_set_batch(ss, 16, &err) == DP_OK);
    CHECK(dp_session_predict(ss, &list->settings[0], 0, &q, &err) == DP_OK && embeds(ss) == 2);
    CHECK(q.m[0] == p.m[0]);
    /* no inspector: not a failure, a note */
    CHECK(dp_session_predict(ss, &list->settings[3], 0, &q, &err) == DP_OK);
    CHECK(!q.ok && q.from.source == DP_SOURCE_NONE && q.note[0]);
    CHECK(dp_session_set_batch(ss, -1, &err) == DP_ERR_INVALID);
    /* the JSON members */
    struct dp_jw *w = dp_jw_new();
    dp_jw_prediction(w, &p);
    const char *out = test_path("session_pred.json");
    CHECK(dp_jw_save(w, out, &err) == DP_OK);
    dp_jw_free(w);
    FILE *f = fopen(out, "r");
    char text[8192] = "";
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    CHECK_CONTAINS(text, "{\"source\": \"trained\", \"inspector\": ");
    CHECK_CONTAINS(text, "\"inspector_setting\": \"V100-P1w2ho-PCIe\", \"data\": ");
    CHECK_CONTAINS(text, "\"clamped\": [], \"derived\": {\"iteration_ms\": ");
    CHECK_CONTAINS(text, "\"workers\": 2");
    dp_session_free(ss);
}

static void test_simulate(void) {
    struct dp_session *ss = open_session();
    if (!ss) return;
    const struct dp_settings *list = dp_session_settings(ss);
    struct dp_error err = {0};
    struct dp_simulation sim;
    bool pending;
    long n0, n1;
    dp_session_counts(ss, NULL, &n0);
    CHECK(dp_session_simulate(ss, &list->settings[0], true, &sim, &pending, &err) == DP_OK);
    CHECK(pending);
    CHECK(dp_session_simulate(ss, &list->settings[0], false, &sim, &pending, &err) == DP_OK);
    CHECK(!pending && sim.ok && sim.memory_gb > 0 && sim.gpu_memory_gb == 16);
    CHECK(sim.d[DP_D_ITERATION_MS] > 0 && sim.d[DP_D_MEMORY_GB] == sim.memory_gb);
    /* the same cluster by its options: cached */
    struct dp_setting s;
    CHECK(dp_setting_make("V100-PCIe-16GB", 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    CHECK(dp_session_simulate(ss, &s, true, &sim, &pending, &err) == DP_OK && !pending && sim.ok);
    dp_session_counts(ss, NULL, &n1);
    CHECK(n1 == n0 + 1);
    /* the prediction takes the footprint */
    struct dp_prediction p;
    CHECK(dp_session_predict(ss, &s, 0, &p, &err) == DP_OK);
    dp_prediction_use_simulation(&p, &sim);
    CHECK(p.d[DP_D_MEMORY_GB] == sim.memory_gb);
    /* simulated samples: labels, the setting's marks; out of memory is no sample */
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.batch = 16;
    struct dp_sample smp;
    memset(&smp, 0, sizeof smp);
    bool fits;
    const struct dp_gpu *gpu = dp_gpu_find(dp_session_catalog(ss), s.gpu);
    CHECK(dp_sample_simulate(dp_session_graph(ss), &s, gpu, &o, "here", &smp, &fits, &err) == DP_OK);
    CHECK(fits && !strcmp(smp.source.kind, "simulated") && !strcmp(smp.source.where, "here"));
    CHECK(!strcmp(smp.job.precision, "fp32"));
    CHECK(smp.batch == 16);
    for (int k = 0; k < DP_N_OUTPUTS; k++) CHECK(smp.labels[k] == sim.m[k]); /* as simulated */
    o.batch = INT64_C(1) << 30; /* 53 GB of activations (2^28 fits since matmuls take no
                                   cuDNN workspace in the simulator) */
    CHECK(dp_sample_simulate(dp_session_graph(ss), &s, gpu, &o, "here", &smp, &fits, &err) == DP_OK);
    CHECK(!fits);
    dp_session_free(ss);
}

/* A transfer made in the session serves its cluster; saving it writes it where the next
 * session finds it. (The full background run is test_app's.) */
static void test_transfer(void) {
    struct dp_session *ss = open_session();
    if (!ss) return;
    setenv("DRIPLE_INSPECTORS", dir, 1);
    struct dp_error err = {0};
    struct dp_setting s;
    CHECK(dp_setting_make("V100-PCIe-16GB", 3, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    struct dp_transfer_plan plan;
    CHECK(dp_session_plan_transfer(ss, &s, &plan, &err) == DP_OK);
    CHECK(!strcmp(plan.base_id, "V100-P1w2ho-PCIe") && plan.batch == 16 && plan.graph);
    CHECK(dp_session_plan_transfer(ss, &dp_session_settings(ss)->settings[0], &plan, &err) ==
          DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "already has its own inspector");
    char path[600];
    bool already;
    CHECK(dp_session_save_transfer(ss, &s, path, sizeof path, &already, &err) == DP_ERR_NOT_FOUND);
    struct dp_inspector *in = NULL;
    CHECK(dp_inspector_load(insp_path, &in, &err) == DP_OK);
    int i = dp_session_add_transfer(ss, in, &s, &err);
    CHECK(i >= 0 && dp_session_unsaved(ss) == 1 && dp_session_is_unsaved(ss, i));
    struct dp_resolution r;
    CHECK(dp_session_resolve(ss, &s, 0, &r, &err) == DP_OK);
    CHECK(r.source == DP_SOURCE_TRANSFERRED && r.inspector == i);
    CHECK(dp_session_save_transfer(ss, &s, path, sizeof path, &already, &err) == DP_OK && !already);
    CHECK_CONTAINS(path, "V100-PCIe-16GB-P1w3ho-PCIe.json");
    CHECK(access(path, R_OK) == 0 && dp_session_unsaved(ss) == 0);
    CHECK(dp_session_save_transfer(ss, &s, path, sizeof path, &already, &err) == DP_OK && already);
    dp_session_free(ss);
    ss = open_session();
    if (ss) CHECK(dp_session_resolve(ss, &s, 0, &r, &err) == DP_OK && !strcmp(r.path, path));
    dp_session_free(ss);
    unsetenv("DRIPLE_INSPECTORS");
}

int main(void) {
    if (make_fixtures() != 0) {
        fprintf(stderr, "test_session: cannot make the fixtures in %s\n", dir);
        return 1;
    }
    test_resolve();
    test_predict();
    test_simulate();
    test_transfer();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "test_session: could not remove %s\n", dir);
    TEST_MAIN_END();
}
