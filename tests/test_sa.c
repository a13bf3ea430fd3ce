/* test_sa.c: the whole-graph profile (by hand on a tiny graph), sweeps (a small one built, saved,
 * read back, one setting's rows extracted; malformed files refused naming the place), and the
 * setting-aware inspector (its inputs: test_sa_inputs.c): it trains on a sweep under every split, saves and loads to the same
 * predictions, predicts any catalog GPU with an interval around the value, clamps what leaves
 * its physical range and says so, flags a graph unlike its training graphs, refuses bad
 * files (wrong body, corrupt weights) naming the place, and fine-tunes for one setting from a
 * dataset's samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/coarsen.h"
#include "dp/cost.h"
#include "dp/graph.h"
#include "dp/sa.h"
#include "dp/sim.h"
#include "dp/sweep.h"
#include "dp/train.h"
#include "dp/zoo.h"
#include "gnn/inspector_impl.h" /* dp_b64_floats: hostile sweep blobs */
#include "test.h"

/* text with its first `from` replaced by `to` (a new string), or NULL when from is not in it. */
static char *replace_once(const char *text, const char *from, const char *to) {
    const char *at = strstr(text, from);
    if (!at) return NULL;
    size_t head = (size_t)(at - text), fl = strlen(from), tl = strlen(to);
    char *out = malloc(strlen(text) - fl + tl + 1);
    if (!out) return NULL;
    memcpy(out, text, head);
    memcpy(out + head, to, tl);
    strcpy(out + head + tl, at + fl);
    return out;
}

/* A copy of the inspector file `path` with inputs renamed (from[k] to to[k]) predicts g0 on s[0]
 * otherwise than sa, on s[1] the same; saved again, it keeps the names `to`. */
static void check_legacy(const struct dp_sa_inspector *sa, const struct dp_sweep_graph *g0,
                         const char *path, const char *const *from, const char *const *to, int n,
                         const struct dp_setting *s, const struct dp_gpu *const *gp) {
    struct dp_error err = {0};
    size_t len = 0;
    char *doc = test_slurp(path, &len), q[64], r[64], body[1024], out[1024];
    for (int k = 0; k < n && doc; k++) {
        snprintf(q, sizeof q, "\"%s\"", from[k]);
        snprintf(r, sizeof r, "\"%s\"", to[k]);
        char *next = replace_once(doc, q, r);
        CHECK(next != NULL);
        free(doc);
        doc = next;
    }
    struct dp_sa_inspector *old = NULL;
    CHECK(doc && write_tmp("test_sa_legacy.json", doc) != NULL);
    CHECK(dp_sa_load(test_path("test_sa_legacy.json"), &old, &err) == DP_OK);
    struct dp_sa_graph gn, go;
    struct dp_sa_prediction pn[2], po[2];
    if (old && dp_sa_graph_init(sa, g0->grouped, NULL, &g0->profile, &gn, &err) == DP_OK &&
        dp_sa_graph_init(old, g0->grouped, NULL, &g0->profile, &go, &err) == DP_OK) {
        CHECK(dp_sa_predict(sa, &gn, s, gp, 2, pn, &err) == DP_OK);
        CHECK(dp_sa_predict(old, &go, s, gp, 2, po, &err) == DP_OK);
        CHECK(pn[0].value[DP_SA_ITERATION] != po[0].value[DP_SA_ITERATION]);
        CHECK_NEAR(pn[1].value[DP_SA_ITERATION], po[1].value[DP_SA_ITERATION],
                   1e-5 * pn[1].value[DP_SA_ITERATION]);
        dp_sa_graph_free(&gn);
        dp_sa_graph_free(&go);
        snprintf(body, sizeof body, "%s", test_path("test_sa_body.json")); /* one shared buffer */
        snprintf(out, sizeof out, "%s", test_path("test_sa_legacy2.json"));
        CHECK(dp_sa_save(old, out, body, &err) == DP_OK);
        char *again = test_slurp(out, &len);
        for (int k = 0; k < n; k++) {
            snprintf(q, sizeof q, "\"%s\"", from[k]);
            snprintf(r, sizeof r, "\"%s\"", to[k]);
            CHECK(again && strstr(again, r) && !strstr(again, q));
        }
        free(again);
    }
    dp_sa_free(old);
    free(doc);
}

static struct dp_gpu_catalog *cat;

/* A sweep of one graph of 2 groups and 1 edge, its blobs left to fill (%s %s). */
#define SWEEP_DOC "{\"format\":\"driple-sweep/1\",\"source\":{\"kind\":\"simulated\"}," \
    "\"outputs\":[\"gpu_mem_util.idle\",\"gpu_mem_util.active\"," \
    "\"gpu_mem_util.peak\",\"gpu_util.idle\",\"gpu_util.active\"," \
    "\"gpu_util.peak\",\"net_rx.idle\",\"net_rx.active\",\"net_rx.peak\"," \
    "\"net_tx.idle\",\"net_tx.active\",\"net_tx.peak\"],\"graphs\":[{\"graph\":" \
    "\"g\",\"model\":\"m\",\"optimizer\":\"sgd\",\"precision\":\"fp32\"," \
    "\"batch\":8,\"profile\":{\"flops\":[0,1,0,0,0,0,0],\"bytes\":[0,1,0,0,0,0,0]," \
    "\"winograd_flops\":0,\"params\":1,\"param_bytes\":4,\"activation_bytes\":8," \
    "\"ops\":3,\"kernels\":2,\"variables\":1},\"grouped\":{\"n_groups\":2," \
    "\"n_edges\":1,\"features\":\"%s\",\"edges\":\"%s\"}}],\"rows\":[]}"

static struct dp_inspector *small_body(uint64_t seed) {
    struct dp_arch a;
    dp_arch_default(&a);
    a.hidden = 8;
    a.rule = DP_RULE_FIXED;
    a.n_layers = 1;
    a.set2set_steps = 2;
    a.feat = DP_FEAT_LOG;
    struct dp_model *m = NULL;
    struct dp_inspector *in = NULL;
    struct dp_error err = {0};
    if (dp_model_init(&a, seed, &m, &err) || dp_inspector_init(m, &in, &err))
        fprintf(stderr, "body: %s\n", err.msg);
    return in;
}

static void sweep_opts(struct dp_sweep_opts *o) {
    dp_sweep_opts_default(o);
    o->models = "alexnet,squeezenet,squeezenet1_1,lstm_lm_small,bert_tiny";
    o->zoo_batches = 2;
    o->n_generated = 6;
    o->gen_batches = 1;
    o->random_settings = 4;
    o->max_workers = 8;
    o->catalog = cat;
    o->seed = 3;
    o->threads = 2;
}

static void test_sweep(struct dp_sweep *sw) {
    struct dp_sweep_opts o;
    sweep_opts(&o);
    struct dp_settings *list = NULL;
    struct dp_error err = {0};
    CHECK(dp_settings_load_default(NULL, cat, &list, &err) == DP_OK);
    o.fixed = list;
    o.fixed_quota = 2;
    CHECK(dp_sweep_build(&o, sw, &err) == DP_OK);
    if (err.status) fprintf(stderr, "sweep: %s\n", err.msg);
    /* 5 zoo models x 3 optimizers x 2 batches + 6 generated x 1, each in fp32 and mixed. */
    CHECK(sw->n_graphs == (5 * 3 * 2 + 6) * 2);
    CHECK(sw->n_rows > sw->n_graphs * 4 && !strcmp(sw->source.kind, "simulated"));
    int gen = 0, fixed_base = 0;
    for (int i = 0; i < sw->n_graphs; i++) {
        const struct dp_sweep_graph *g = &sw->graphs[i];
        CHECK(g->grouped && g->grouped->cost && g->grouped->batch == g->batch);
        CHECK(g->profile.batch == g->batch && g->profile.flops[DP_OPCLASS_MATMUL] > 0);
        gen += !strncmp(g->graph, "generated:gen-", 14);
    }
    CHECK(gen == 12);
    const struct dp_setting *base = dp_settings_find(list, "V100-P1w2ho-PCIe");
    for (int r = 0; r < sw->n_rows; r++) {
        const struct dp_sweep_row *row = &sw->rows[r];
        CHECK(row->iteration_ms > 0 && row->memory_gb > 0);
        CHECK(row->setting.precision == sw->graphs[row->graph].precision);
        CHECK(row->setting.workers <= 8 || dp_settings_find(list, row->setting.id));
        fixed_base += base && dp_setting_same_cluster(&row->setting, base);
    }
    /* Every fp32 zoo graph and the first 2 generated fp32 ones on the base setting. */
    CHECK(fixed_base == 5 * 3 * 2 + 2);
    /* Another thread count: the same sweep. */
    struct dp_sweep one;
    o.threads = 1;
    CHECK(dp_sweep_build(&o, &one, &err) == DP_OK);
    CHECK(one.n_rows == sw->n_rows && one.n_graphs == sw->n_graphs);
    bool same = one.n_rows == sw->n_rows;
    for (int r = 0; same && r < sw->n_rows; r++)
        same = one.rows[r].iteration_ms == sw->rows[r].iteration_ms &&
               !strcmp(one.rows[r].setting.id, sw->rows[r].setting.id);
    CHECK(same);
    dp_sweep_free(&one);
    /* Saved and read back. */
    const char *path = test_path("test_sa_sweep.json");
    CHECK(dp_sweep_save(sw, path, &err) == DP_OK);
    struct dp_sweep back;
    CHECK(dp_sweep_load(path, cat, &back, &err) == DP_OK);
    CHECK(back.n_graphs == sw->n_graphs && back.n_rows == sw->n_rows);
    if (back.n_rows == sw->n_rows) {
        CHECK(!strcmp(back.rows[7].setting.id, sw->rows[7].setting.id));
        CHECK_NEAR(back.rows[7].iteration_ms, sw->rows[7].iteration_ms, 1e-9 * sw->rows[7].iteration_ms);
        CHECK_NEAR(back.graphs[3].profile.activation_bytes, sw->graphs[3].profile.activation_bytes, 1);
        CHECK(sw->graphs[3].profile.bw_grad_mid > 0);
        CHECK_NEAR(back.graphs[3].profile.bw_grad_mid, sw->graphs[3].profile.bw_grad_mid, 1e-12);
        CHECK_NEAR(back.graphs[3].profile.fw_param_mid, sw->graphs[3].profile.fw_param_mid, 1e-12);
        /* The builder's graphs are in fp16 under mixed precision, and read back so. */
        bool f16 = true;
        for (int i = 0; i < sw->n_graphs; i++)
            f16 = f16 && sw->graphs[i].profile.f16 == (sw->graphs[i].precision == DP_PREC_MIXED) &&
                  back.graphs[i].profile.f16 == sw->graphs[i].profile.f16;
        CHECK(f16);
        CHECK(back.graphs[3].grouped->n_groups == sw->graphs[3].grouped->n_groups);
    }
    dp_sweep_free(&back);
    /* One setting's rows as a dataset. */
    struct dp_dataset ds;
    CHECK(dp_sweep_dataset(sw, base, false, 0, &ds, NULL, &err) == DP_OK);
    CHECK(ds.n_samples >= 20 && ds.n_samples <= 32 && !strcmp(ds.setting, "V100-P1w2ho-PCIe"));
    CHECK(ds.n_samples > 0 && !ds.samples[0].grouped->cost && ds.samples[0].labels[4] > 0);
    int all = ds.n_samples, n_oom = -1;
    dp_dataset_free(&ds);
    /* A zoo quota: the first 5 zoo rows spread over the models (one of each of the 5 models,
     * the first batch draw of the first optimizer), every generated row still kept. */
    CHECK(dp_sweep_dataset(sw, base, false, 5, &ds, &n_oom, &err) == DP_OK);
    int zoo = 0, gen_rows = 0;
    bool distinct = true;
    for (int i = 0; i < ds.n_samples; i++) {
        if (strncmp(ds.samples[i].graph, "zoo:", 4)) {
            gen_rows++;
            continue;
        }
        for (int k = 0; k < i; k++)
            distinct = distinct && strcmp(ds.samples[k].model, ds.samples[i].model) != 0;
        zoo++;
    }
    CHECK(zoo == 5 && distinct && gen_rows == 2 && ds.n_samples == 7);
    CHECK(n_oom >= 0 && all + n_oom == fixed_base);
    dp_dataset_free(&ds);
    /* Errors: an unknown model, a GPU not in the catalog, a malformed file. */
    struct dp_sweep bad;
    o.models = "alexnet,resnet9000";
    CHECK(dp_sweep_build(&o, &bad, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "resnet9000");
    sweep_opts(&o);
    o.gpus = "V100-PCIe-16GB,NoSuchGPU";
    CHECK(dp_sweep_build(&o, &bad, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "NoSuchGPU");
    sweep_opts(&o);
    o.optimizers = "sgd,rmsprop";
    CHECK(dp_sweep_build(&o, &bad, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "unknown optimizer 'rmsprop'");
    o.optimizers = "adam";
    o.fp32 = o.mixed = false;
    CHECK(dp_sweep_build(&o, &bad, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "no precision");
    /* One optimizer, mixed precision only: 5 models x 2 batches + 6 generated, all adam. */
    o.fp32 = false;
    o.mixed = true;
    o.random_settings = 1;
    struct dp_sweep one_opt;
    CHECK(dp_sweep_build(&o, &one_opt, &err) == DP_OK);
    CHECK(one_opt.n_graphs == 5 * 2 + 6);
    bool adam_mixed = true;
    for (int i = 0; i < one_opt.n_graphs; i++)
        adam_mixed = adam_mixed && !strcmp(one_opt.graphs[i].optimizer, "adam") &&
                     one_opt.graphs[i].precision == DP_PREC_MIXED;
    CHECK(adam_mixed);
    dp_sweep_free(&one_opt);
    static const struct { const char *text, *want; } files[] = {
        {"{\"format\":\"driple-sweep/1\",\"source\":{\"kind\":\"guessed\"},\"outputs\":[],"
         "\"graphs\":[],\"rows\":[]}", "$.source.kind"},
        {"{\"format\":\"driple-sweep/2\"}", "format"},
        {"{\"format\":\"driple-sweep/1\",\"source\":{\"kind\":\"simulated\"},\"outputs\":[],"
         "\"graphs\":[],\"rows\":[]}", "$.outputs"},
    };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        CHECK(dp_sweep_parse(files[k].text, strlen(files[k].text), "bad.json", cat, &bad, &err) != DP_OK);
        CHECK_CONTAINS(err.msg, "bad.json");
        CHECK_CONTAINS(err.msg, files[k].want);
    }
    /* A graph whose blobs are bad: an edge out of range, a negative feature, not base64. */
    float feat[12] = {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, edges[2] = {0, 5};
    char *fb = dp_b64_floats(feat, 12), *eb = dp_b64_floats(edges, 2);
    feat[3] = -1;
    char *nb = dp_b64_floats(feat, 12);
    struct { const char *f, *e, *want; } blobs[] = {
        {fb, eb, "edge 0 (0, 5)"}, {nb, eb, "group 0 feature 3"}, {"!!!!", eb, "$.graphs[0].grouped.features"}};
    for (size_t k = 0; fb && eb && nb && k < sizeof blobs / sizeof blobs[0]; k++) {
        char doc[4096];
        snprintf(doc, sizeof doc, SWEEP_DOC, blobs[k].f, blobs[k].e);
        CHECK(dp_sweep_parse(doc, strlen(doc), "blob.json", cat, &bad, &err) != DP_OK);
        CHECK_CONTAINS(err.msg, blobs[k].want);
    }
    edges[1] = 1; /* and a good one */
    free(eb);
    eb = dp_b64_floats(edges, 2);
    if (fb && eb) {
        char doc[4096];
        snprintf(doc, sizeof doc, SWEEP_DOC, fb, eb);
        CHECK(dp_sweep_parse(doc, strlen(doc), "ok.json", cat, &bad, &err) == DP_OK);
        CHECK(bad.n_graphs == 1 && bad.graphs[0].grouped->n_edges == 1);
        CHECK(bad.n_graphs == 1 && !bad.graphs[0].profile.f16); /* no "f16", fp32: false */
        CHECK(bad.n_graphs == 1 && bad.graphs[0].profile.bw_grad_mid == 0); /* nor shares: 0 */
        dp_sweep_free(&bad);
        /* "f16" given: read; not a boolean: refused naming the place. */
        char *at = strstr(doc, "\"variables\":1}");
        if (at) {
            char edited[4200];
            int head = (int)(at - doc) + 13; /* before the object's "}" */
            snprintf(edited, sizeof edited, "%.*s,\"f16\":true%s", head, doc, doc + head);
            CHECK(dp_sweep_parse(edited, strlen(edited), "f16.json", cat, &bad, &err) == DP_OK);
            CHECK(bad.n_graphs == 1 && bad.graphs[0].profile.f16);
            dp_sweep_free(&bad);
            snprintf(edited, sizeof edited, "%.*s,\"f16\":3%s", head, doc, doc + head);
            CHECK(dp_sweep_parse(edited, strlen(edited), "f16.json", cat, &bad, &err) == DP_ERR_INVALID);
            CHECK_CONTAINS(err.msg, "f16.json:$.graphs[0].profile.f16");
            /* The placement shares given: read; outside 0-1 (the fused bytes below 0) or not a
             * number: refused naming the place. */
            snprintf(edited, sizeof edited, "%.*s,\"bw_grad_mid\":0.25%s", head, doc, doc + head);
            CHECK(dp_sweep_parse(edited, strlen(edited), "at.json", cat, &bad, &err) == DP_OK);
            CHECK(bad.n_graphs == 1 && bad.graphs[0].profile.bw_grad_mid == 0.25);
            dp_sweep_free(&bad);
            const char *wrong[] = {",\"bw_grad_mid\":1.5", ",\"fw_param_head\":-0.1",
                                   ",\"bw_grad_tail\":\"x\"", ",\"fused_bytes\":-1"};
            const char *where[] = {"at.json:$.graphs[0].profile.bw_grad_mid",
                                   "at.json:$.graphs[0].profile.fw_param_head",
                                   "at.json:$.graphs[0].profile.bw_grad_tail",
                                   "at.json:$.graphs[0].profile.fused_bytes"};
            for (int k = 0; k < 4; k++) {
                snprintf(edited, sizeof edited, "%.*s%s%s", head, doc, wrong[k], doc + head);
                CHECK(dp_sweep_parse(edited, strlen(edited), "at.json", cat, &bad, &err) ==
                      DP_ERR_INVALID);
                CHECK_CONTAINS(err.msg, where[k]);
            }
        }
    }
    free(fb);
    free(eb);
    free(nb);
    /* A row naming an unknown setting or graph. */
    char *text = NULL;
    FILE *f = fopen(path, "rb");
    long n = 0;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
        (text = malloc((size_t)n + 64)) && fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
        char *row = strstr(text, "\"rows\":[[");
        char *edited = malloc((size_t)n + 64);
        if (row && edited) { /* the first row's graph index -> 99999 */
            row += 9;
            int head = (int)(row - text);
            snprintf(edited, (size_t)n + 64, "%.*s99999%s", head, text, row + strcspn(row, ","));
            CHECK(dp_sweep_parse(edited, strlen(edited), "rows.json", cat, &bad, &err) ==
                  DP_ERR_INVALID);
            CHECK_CONTAINS(err.msg, "rows.json:$.rows[0][0]");
        }
        free(edited);
    }
    if (f) fclose(f);
    free(text);
    dp_settings_free(list);
}

static void small_train_opts(struct dp_sa_train_opts *o) {
    dp_sa_train_opts_default(o);
    o->arch = (struct dp_sa_arch){16, 8, 3};
    o->epochs = 30;
    o->patience = 0;
    o->batch = 32;
    o->lr = 0.01f;
}

/* The trainer's loss: the reported loss is the plain MSE whatever the weights; an output of
 * weight 0 leaves its last-layer parameters where they were while the others move; one pair
 * (the batch-pair term) moves only its predicted iteration difference toward its targets'. */
static void test_loss(void) {
    struct dp_sa_inspector *sa = NULL;
    struct dp_error err = {0};
    struct dp_sa_arch a = {8, 4, 1};
    CHECK(dp_sa_init(small_body(3), &a, 5, &sa, &err) == DP_OK);
    if (!sa) return;
    int nin = dp_sa_input_size(sa), B = 4, h1 = a.hidden1, h2 = a.hidden2;
    float *x = malloc((size_t)B * nin * sizeof *x), tg[4 * DP_SA_N_OUT];
    size_t nw = dp_sa_member_size(sa);
    float *before = malloc(nw * sizeof *before);
    CHECK(x && before);
    if (!x || !before) goto done;
    for (int i = 0; i < B * nin; i++) x[i] = (float)((i * 37 % 11) - 5) / 5.0f;
    for (int i = 0; i < B * DP_SA_N_OUT; i++) tg[i] = (i % 3 == 0) ? NAN : 3.0f + (float)(i % 5);
    struct dp_sa_loss loss = {.huber = 0.1};
    for (int o = 0; o < DP_SA_N_OUT; o++) loss.weight[o] = o == 1 ? 0 : 2;
    struct dp_sa_trainer *plain = NULL, *robust = NULL, *pair = NULL;
    float lp = -1, lr = -2;
    CHECK(dp_sa_trainer_init(sa, 0, 0.01f, 0, NULL, &plain, &err) == DP_OK);
    CHECK(dp_sa_trainer_init(sa, 0, 0.01f, 0, &loss, &robust, &err) == DP_OK);
    if (plain && robust) {
        CHECK(dp_sa_trainer_step(plain, x, tg, B, 0, false, &lp, &err) == DP_OK);
        memcpy(before, dp_sa_member(sa, 0), nw * sizeof *before);
        CHECK(dp_sa_trainer_step(robust, x, tg, B, 0, true, &lr, &err) == DP_OK);
        CHECK(lp > 0 && fabsf(lp - lr) < 1e-6f * lp);
        const float *w = dp_sa_member(sa, 0);
        size_t w3 = (size_t)nin * h1 + h1 + (size_t)h1 * h2 + h2, b3 = w3 + (size_t)h2 * DP_SA_N_OUT;
        bool still = w[b3 + 1] == before[b3 + 1], moved = w[b3 + 2] != before[b3 + 2];
        for (int j = 0; j < h2; j++) {
            size_t k = w3 + (size_t)j * DP_SA_N_OUT + 1;
            still = still && w[k] == before[k];
        }
        CHECK(still && moved);
    }
    struct dp_sa_loss pl = {.huber = 0.1, .pair[DP_SA_ITERATION] = 1};
    float y[2 * DP_SA_N_OUT], *yi = y + DP_SA_ITERATION;
    for (int i = 0; i < nin; i++) x[nin + i] = -x[i];
    for (int i = 0; i < 2 * DP_SA_N_OUT; i++) tg[i] = i == DP_SA_N_OUT + DP_SA_ITERATION;
    dp_sa_head(sa, 0, x, 2, y, NULL);
    float gap0 = fabsf(yi[DP_SA_N_OUT] - yi[0] - 1);
    memcpy(before, dp_sa_member(sa, 0), nw * sizeof *before);
    CHECK(dp_sa_trainer_init(sa, 0, 0.01f, 0, &pl, &pair, &err) == DP_OK);
    for (int k = 0; pair && k < 30; k++)
        CHECK(dp_sa_trainer_step(pair, x, tg, 2, 1, true, &lr, &err) == DP_OK);
    dp_sa_head(sa, 0, x, 2, y, NULL);
    CHECK(lr == 0 && gap0 > 0.1f && fabsf(yi[DP_SA_N_OUT] - yi[0] - 1) < 0.5f * gap0);
    const float *w = dp_sa_member(sa, 0);
    size_t w3 = (size_t)nin * h1 + h1 + (size_t)h1 * h2 + h2, b3 = w3 + (size_t)h2 * DP_SA_N_OUT;
    bool still = true;
    for (int o = 0; o < DP_SA_N_OUT; o++)
        for (int j = -1; j < h2; j++) { /* j -1: the bias */
            size_t k = j < 0 ? b3 + o : w3 + (size_t)j * DP_SA_N_OUT + o;
            still = still && (w[k] == before[k] || (j >= 0 && o == DP_SA_ITERATION));
        }
    CHECK(still);
    dp_sa_trainer_free(plain);
    dp_sa_trainer_free(robust);
    dp_sa_trainer_free(pair);
done:
    free(x);
    free(before);
    dp_sa_free(sa);
}

static void test_train_predict(const struct dp_sweep *sw) {
    struct dp_sa_train_opts o;
    small_train_opts(&o);
    struct dp_sa_inspector *sa = NULL;
    struct dp_error err = {0};
    CHECK(dp_sa_train(sw, cat, small_body(1), &o, &sa, &err) == DP_OK);
    if (!sa) { fprintf(stderr, "train: %s\n", err.msg); return; }
    const struct dp_sa_provenance *p = dp_sa_provenance(sa);
    CHECK(p->n_evals == 1 && !strcmp(p->evals[0].name, "random") && p->n_test > 0);
    CHECK(!strcmp(p->data, "simulated") && p->n_graphs == sw->n_graphs);
    for (int o2 = 0; o2 < DP_SA_N_OUT; o2++)
        CHECK(p->evals[0].coverage[o2] >= 0 && p->evals[0].coverage[o2] <= 100);
    printf("sa: random split iteration MAPE %.1f%%, memory %.1f%%, coverage %.0f%%\n",
           p->evals[0].mape[DP_SA_ITERATION], p->evals[0].mape[DP_SA_MEMORY],
           p->evals[0].coverage[DP_SA_ITERATION]);
    /* A training graph on every catalog GPU the head can read: intervals around the values. */
    const struct dp_sweep_graph *g0 = &sw->graphs[0];
    struct dp_sa_graph g;
    CHECK(dp_sa_graph_init(sa, g0->grouped, NULL, &g0->profile, &g, &err) == DP_OK);
    CHECK(!(g.ood_score > 1));
    int n = 0;
    struct dp_setting s[64];
    const struct dp_gpu *gpus[64];
    for (int i = 0; i < cat->n_gpus && n < 64; i++) {
        const struct dp_gpu *gpu = &cat->gpus[i];
        if (!(gpu->fp32_tflops > 0 && gpu->memory_gb > 0 && gpu->bandwidth_gbps > 0)) continue;
        if (dp_setting_make(gpu->name, 4, 1, DP_NET_10GBE, 0, DP_PLACE_HOMO, g0->precision, &s[n],
                            &err) == DP_OK)
            gpus[n++] = gpu;
    }
    CHECK(n >= 20);
    struct dp_sa_prediction pr[64];
    CHECK(dp_sa_predict(sa, &g, s, gpus, n, pr, &err) == DP_OK);
    bool inside = true, differ = false;
    for (int i = 0; i < n; i++)
        for (int o2 = 0; o2 < DP_SA_N_OUT; o2++) {
            inside &= pr[i].lo[o2] <= pr[i].value[o2] && pr[i].value[o2] <= pr[i].hi[o2];
            inside &= pr[i].value[o2] >= 0 && isfinite(pr[i].value[o2]);
            differ |= i && pr[i].value[DP_SA_ITERATION] != pr[0].value[DP_SA_ITERATION];
        }
    CHECK(inside && differ);
    for (int i = 0; i < n; i++) { /* physical ranges */
        CHECK(pr[i].value[2] <= 100 && pr[i].value[5] <= 100);
        CHECK(pr[i].value[8] <= 1250 && pr[i].value[11] <= 1250); /* 10GbE: 1.25 GB/s */
    }
    /* One at a time gives what the batch gave. */
    struct dp_sa_prediction one;
    CHECK(dp_sa_predict(sa, &g, &s[3], &gpus[3], 1, &one, &err) == DP_OK);
    CHECK_NEAR(one.value[DP_SA_ITERATION], pr[3].value[DP_SA_ITERATION], 1e-6 * pr[3].value[DP_SA_ITERATION]);
    /* Saved with its body and read back: the same predictions. */
    const char *body_path = test_path("test_sa_body.json");
    const char *path = test_path("test_sa.json");
    CHECK(dp_inspector_save(dp_sa_body(sa), body_path, NULL, NULL, &err) == DP_OK);
    CHECK(dp_sa_save(sa, path, body_path, &err) == DP_OK);
    struct dp_sa_inspector *back = NULL;
    CHECK(dp_sa_load(path, &back, &err) == DP_OK);
    if (back) {
        struct dp_sa_graph gb;
        struct dp_sa_prediction pb;
        CHECK(dp_sa_graph_init(back, g0->grouped, NULL, &g0->profile, &gb, &err) == DP_OK);
        CHECK(dp_sa_predict(back, &gb, &s[3], &gpus[3], 1, &pb, &err) == DP_OK);
        for (int o2 = 0; o2 < DP_SA_N_OUT; o2++) {
            CHECK_NEAR(pb.value[o2], one.value[o2], 1e-5 * (1 + one.value[o2]));
            CHECK_NEAR(pb.hi[o2], one.hi[o2], 1e-5 * (1 + one.hi[o2]));
        }
        CHECK_NEAR(gb.ood_score, g.ood_score, 1e-6);
        CHECK(dp_sa_provenance(back)->n_evals == 1);
        dp_sa_graph_free(&gb);
        dp_sa_free(back);
    }
    /* Files from before TF32 (input "matmul_ms": fp32 products at the FP32 rate) and from before
     * the GPU's own link ("params_over_network_ms", ...: the network's nominal rate) read their
     * inputs as they did: otherwise than the same head on an Ampere GPU in fp32 / an A100 over
     * NVLink, the same on a V100 / over 10GbE (a NIC either way); saved again, they keep their
     * names. */
    const struct dp_gpu *amp[2] = {dp_gpu_find(cat, "A100-40GB-SXM"), dp_gpu_find(cat, "V100-SXM2-16GB")};
    const struct dp_gpu *lg[2] = {amp[0], amp[0]};
    struct dp_setting as[2], ls[2];
    if (amp[0] && amp[1] &&
        dp_setting_make(amp[0]->name, 4, 1, DP_NET_10GBE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &as[0], &err) == DP_OK &&
        dp_setting_make(amp[1]->name, 4, 1, DP_NET_10GBE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &as[1], &err) == DP_OK &&
        dp_setting_make(amp[0]->name, 2, 1, DP_NET_NVLINK, 0, DP_PLACE_HOMO, DP_PREC_FP32, &ls[0], &err) == DP_OK) {
        const char *mm_new[1] = {"matmul_rate_ms"}, *mm_old[1] = {"matmul_ms"};
        check_legacy(sa, g0, path, mm_new, mm_old, 1, as, amp);
        ls[1] = as[0];
        check_legacy(sa, g0, path, dp_sa_cross_names + 3, dp_sa_cross_legacy_names + 3, 3, ls, lg);
    }
    /* Clamping: an output pushed past its range reads its bound and says so. */
    double q[DP_SA_N_OUT], s0[DP_SA_N_OUT];
    dp_sa_calibration(sa, q, s0);
    int nin = dp_sa_input_size(sa);
    double *im = calloc((size_t)nin, sizeof *im), *is = malloc((size_t)nin * sizeof *is);
    double om[DP_SA_N_OUT], os[DP_SA_N_OUT];
    for (int k = 0; k < nin; k++) is[k] = 1;
    for (int o2 = 0; o2 < DP_SA_N_OUT; o2++) {
        om[o2] = log1p(5e6); /* every output about 5e6 in its unit */
        os[o2] = 1e-9;
    }
    dp_sa_set_norm(sa, im, is, om, os);
    struct dp_sa_prediction c;
    CHECK(dp_sa_predict(sa, &g, &s[0], &gpus[0], 1, &c, &err) == DP_OK);
    CHECK(c.value[2] == 100 && c.clamped[2] && c.value[5] == 100 && c.clamped[5]);
    CHECK(c.value[8] == 1250 && c.clamped[8] && c.value[11] == 1250 && c.clamped[11]);
    CHECK(!c.clamped[0] && c.value[0] > 1e6 && c.oom);
    free(im);
    free(is);
    /* A graph far from every training graph is out of distribution. */
    struct dp_sa_graph far = g;
    struct dp_profile huge = g0->profile;
    for (int k = 0; k < DP_OPCLASS_COUNT; k++) huge.flops[k] *= 1e9;
    huge.params *= 1e6;
    far.emb = NULL;
    CHECK(dp_sa_graph_init(sa, g0->grouped, g.emb, &huge, &far, &err) == DP_OK);
    CHECK(far.ood_score > 1);
    dp_sa_graph_free(&far);
    dp_sa_graph_free(&g);
    dp_sa_free(sa);
    /* Bad files: another body, corrupt weights, no body file. */
    struct dp_inspector *other = small_body(99);
    const char *other_path = test_path("test_sa_other_body.json");
    CHECK(dp_inspector_save(other, other_path, NULL, NULL, &err) == DP_OK);
    dp_inspector_free(other);
    char *text = NULL;
    FILE *f = fopen(path, "rb");
    long len = 0;
    if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
        (text = malloc((size_t)len + 1)) && fread(text, 1, (size_t)len, f) == (size_t)len) {
        text[len] = '\0';
        char *body = strstr(text, "test_sa_body.json");
        if (body) {
            memcpy(body, "test_sa_xxxx", 12); /* test_sa_xxxx.json: missing */
            CHECK(write_tmp("test_sa_bad1.json", text) != NULL);
            CHECK(dp_sa_load(test_path("test_sa_bad1.json"), &back, &err) != DP_OK);
            CHECK_CONTAINS(err.msg, "test_sa_xxxx.json");
            memcpy(body, "test_sa_body", 12);
        }
        char *w = strstr(text, "\"weights\":\"");
        if (w) {
            w[11] = '!';
            CHECK(write_tmp("test_sa_bad2.json", text) != NULL);
            CHECK(dp_sa_load(test_path("test_sa_bad2.json"), &back, &err) == DP_ERR_PARSE);
            CHECK_CONTAINS(err.msg, "$.weights");
        }
    }
    if (f) fclose(f);
    free(text);
}

/* Hold-outs: whole GPUs, whole networks, whole families; the held-out names are recorded, a
 * hold-out without names or rows fails naming why. */
static void test_splits(const struct dp_sweep *sw) {
    struct dp_sa_train_opts o;
    small_train_opts(&o);
    o.epochs = 3;
    struct dp_sa_inspector *sa = NULL;
    struct dp_error err = {0};
    o.split = DP_SA_SPLIT_FAMILIES;
    CHECK(dp_sa_train(sw, cat, small_body(2), &o, &sa, &err) == DP_OK);
    if (sa) {
        CHECK(!strcmp(dp_sa_provenance(sa)->evals[0].name, "families"));
        CHECK(strlen(dp_sa_provenance(sa)->evals[0].held) > 2);
        dp_sa_free(sa);
        sa = NULL;
    }
    /* The GPUs the sweep drew rows for: hold out the first row's. */
    o.split = DP_SA_SPLIT_GPUS;
    o.test_held = sw->rows[sw->n_rows - 1].setting.gpu;
    CHECK(dp_sa_train(sw, cat, small_body(2), &o, &sa, &err) == DP_OK);
    if (sa) {
        CHECK(!strcmp(dp_sa_provenance(sa)->evals[0].held, o.test_held));
        CHECK(dp_sa_provenance(sa)->n_test > 0);
        dp_sa_free(sa);
        sa = NULL;
    }
    o.split = DP_SA_SPLIT_NETWORKS;
    o.test_held = "PCIe";
    CHECK(dp_sa_train(sw, cat, small_body(2), &o, &sa, &err) == DP_OK);
    dp_sa_free(sa);
    sa = NULL;
    o.test_held = NULL;
    CHECK(dp_sa_train(sw, cat, small_body(2), &o, &sa, &err) == DP_ERR_INVALID && !sa);
    CHECK_CONTAINS(err.msg, "names to test on");
    o.split = DP_SA_SPLIT_GPUS;
    o.test_held = "NoSuchGPU";
    CHECK(dp_sa_train(sw, cat, small_body(2), &o, &sa, &err) == DP_ERR_INVALID && !sa);
    CHECK_CONTAINS(err.msg, "NoSuchGPU");
    enum dp_sa_split k;
    CHECK(dp_sa_split_parse("networks", &k) && k == DP_SA_SPLIT_NETWORKS && !dp_sa_split_parse("models", &k));
    struct dp_sa_arch bad = {0, 8, 2};
    CHECK(dp_sa_arch_check(&bad, &err) == DP_ERR_INVALID);
}

/* Fine-tuning for one setting from its samples (dp_sa_tune): the training loss falls, the
 * provenance says which setting and samples, the file round-trips to the same predictions, a
 * label a sample lacks is left out, and a dataset of another setting, an empty one, one without
 * profiles or without the features the body reads is refused with the inspector untouched. */
static void test_tune(const struct dp_sweep *sw) {
    struct dp_sa_train_opts o;
    small_train_opts(&o);
    o.epochs = 5;
    struct dp_sa_inspector *sa = NULL;
    struct dp_error err = {0};
    CHECK(dp_sa_train(sw, cat, small_body(4), &o, &sa, &err) == DP_OK);
    if (!sa) return;
    const char *id = "V100-P1w2ho-PCIe";
    struct dp_setting s;
    struct dp_dataset ds, other;
    dp_dataset_init(&other, NULL);
    CHECK(dp_setting_parse_id(id, cat, &s, &err) == DP_OK);
    CHECK(dp_sweep_dataset(sw, &s, false, 0, &ds, NULL, &err) == DP_OK);
    CHECK(ds.n_samples >= 6);
    const struct dp_gpu *gpu = dp_gpu_find(cat, s.gpu);
    const struct dp_sweep_graph *g0 = &sw->graphs[0];
    struct dp_sa_graph g;
    struct dp_sa_prediction before, after, back_p;
    CHECK(dp_sa_graph_init(sa, g0->grouped, NULL, &g0->profile, &g, &err) == DP_OK);
    CHECK(dp_sa_predict(sa, &g, &s, &gpu, 1, &before, &err) == DP_OK);
    struct dp_sa_tune_opts to;
    dp_sa_tune_opts_default(&to);
    to.epochs = 40;
    struct dp_sa_tune_result res;
    /* Refused, the inspector untouched: another setting, an empty dataset, no profile. */
    CHECK(dp_sa_tune(sa, &ds, cat, "A100-P1w2ho-NVLink", &to, &res, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "is for setting 'V100-P1w2ho-PCIe', not 'A100-P1w2ho-NVLink'");
    dp_dataset_init(&other, id);
    CHECK(dp_sa_tune(sa, &other, cat, NULL, &to, &res, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "no samples");
    CHECK(dp_dataset_merge(&other, &ds, &err) == DP_OK);
    other.samples[2].has_profile = false;
    CHECK(dp_sa_tune(sa, &other, cat, id, &to, &res, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "sample 2");
    CHECK_CONTAINS(err.msg, "no profile");
    dp_dataset_free(&other);
    dp_dataset_init(&other, "");
    CHECK(dp_sa_tune(sa, &other, cat, NULL, &to, &res, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "names no setting");
    /* A body that reads the cost features, samples without them. */
    struct dp_inspector *body6 = small_body(5);
    struct dp_sa_inspector *sa6 = NULL;
    struct dp_arch a6 = *dp_model_arch(dp_inspector_model(body6));
    dp_inspector_free(body6);
    a6.n_feat = DP_N_FEATURES_MAX;
    struct dp_model *m6 = NULL;
    CHECK(dp_model_init(&a6, 5, &m6, &err) == DP_OK && dp_inspector_init(m6, &body6, &err) == DP_OK);
    CHECK(dp_sa_init(body6, dp_sa_arch(sa), 1, &sa6, &err) == DP_OK);
    CHECK(sa6 && dp_sa_tune(sa6, &ds, cat, id, &to, &res, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "sample 0");
    CHECK_CONTAINS(err.msg, "no cost features");
    dp_sa_free(sa6);
    CHECK(dp_sa_predict(sa, &g, &s, &gpu, 1, &after, &err) == DP_OK);
    CHECK(after.value[DP_SA_ITERATION] == before.value[DP_SA_ITERATION]);
    CHECK(!dp_sa_provenance(sa)->tuned.setting[0]);
    /* Fine-tuned: the training loss falls; the provenance names the setting and the samples. */
    CHECK(dp_sa_tune(sa, &ds, cat, id, &to, &res, &err) == DP_OK);
    CHECK(res.train_loss_after < res.train_loss_before);
    const struct dp_sa_tuning *tu = &dp_sa_provenance(sa)->tuned;
    CHECK(!strcmp(tu->setting, id) && !strcmp(tu->data, "simulated"));
    CHECK(tu->n_train + tu->n_val == ds.n_samples && tu->n_val >= 1 && tu->epochs >= 1);
    CHECK(tu->before.n_rows == tu->n_val && tu->after.n_rows == tu->n_val);
    CHECK(isfinite(tu->after.mape[DP_SA_ITERATION]));
    printf("sa tune: training loss %.4f -> %.4f; validation iteration MAPE %.1f%% -> %.1f%%\n",
           res.train_loss_before, res.train_loss_after, tu->before.mape[DP_SA_ITERATION],
           tu->after.mape[DP_SA_ITERATION]);
    CHECK(dp_sa_predict(sa, &g, &s, &gpu, 1, &after, &err) == DP_OK);
    CHECK(after.value[DP_SA_ITERATION] != before.value[DP_SA_ITERATION]);
    struct dp_sa_eval ev;
    CHECK(dp_sa_evaluate(sa, &ds, cat, NULL, &ev, &err) == DP_OK);
    CHECK(ev.n_rows == ds.n_samples && !strcmp(ev.held, id) && isfinite(ev.mape[DP_SA_MEMORY]));
    /* The file round-trips: the tuning and the predictions. */
    const char *body_path = test_path("test_sa_tune_body.json");
    const char *path = test_path("test_sa_tune.json");
    CHECK(dp_inspector_save(dp_sa_body(sa), body_path, NULL, NULL, &err) == DP_OK);
    CHECK(dp_sa_save(sa, path, body_path, &err) == DP_OK);
    struct dp_sa_inspector *back = NULL;
    CHECK(dp_sa_load(path, &back, &err) == DP_OK && dp_sa_file(path) && !dp_sa_file(body_path));
    if (back) {
        const struct dp_sa_tuning *bt = &dp_sa_provenance(back)->tuned;
        CHECK(!strcmp(bt->setting, id) && bt->n_train == tu->n_train && bt->n_val == tu->n_val);
        CHECK_NEAR(bt->after.mape[DP_SA_ITERATION], tu->after.mape[DP_SA_ITERATION], 1e-9);
        CHECK(strstr(dp_sa_body_path(back), "test_sa_tune_body.json") != NULL);
        struct dp_sa_graph gb;
        CHECK(dp_sa_graph_init(back, g0->grouped, NULL, &g0->profile, &gb, &err) == DP_OK);
        CHECK(dp_sa_predict(back, &gb, &s, &gpu, 1, &back_p, &err) == DP_OK);
        CHECK_NEAR(back_p.value[DP_SA_ITERATION], after.value[DP_SA_ITERATION],
                   1e-5 * after.value[DP_SA_ITERATION]);
        CHECK_NEAR(back_p.hi[DP_SA_ITERATION], after.hi[DP_SA_ITERATION],
                   1e-5 * after.hi[DP_SA_ITERATION]);
        dp_sa_graph_free(&gb);
        dp_sa_free(back);
        back = NULL;
    }
    /* A tuning record that is not one is refused naming the place. */
    char *text = test_slurp(path, NULL);
    char *at = text ? strstr(text, "\"tuned\":{\"setting\":\"") : NULL;
    CHECK(at != NULL);
    if (at) {
        char *end = strchr(at + 20, '"');
        memmove(at + 20, end, strlen(end) + 1); /* "setting":"" */
        CHECK(write_tmp("test_sa_tune_bad1.json", text) != NULL);
        CHECK(dp_sa_load(test_path("test_sa_tune_bad1.json"), &back, &err) == DP_ERR_INVALID);
        CHECK(!back);
        CHECK_CONTAINS(err.msg, "$.provenance.tuned.setting: empty");
        char *b4 = strstr(text, "\"before\":{");
        if (b4) b4[1] = 'B';
        CHECK(b4 && write_tmp("test_sa_tune_bad2.json", text) != NULL);
        CHECK(dp_sa_load(test_path("test_sa_tune_bad2.json"), &back, &err) != DP_OK && !back);
        CHECK_CONTAINS(err.msg, "$.provenance.tuned");
    }
    free(text);
    /* Measured samples may lack labels (a network-only trace; no iteration or memory): they
     * are left out of the loss, which stays finite and falls. */
    for (int i = 0; i < ds.n_samples; i++) {
        for (int k = 0; k < DP_N_STATS; k++) ds.samples[i].labels[k] = NAN;
        ds.samples[i].iteration_ms = 0;
        ds.samples[i].memory_gb = 0;
    }
    CHECK(dp_sa_tune(sa, &ds, cat, id, &to, &res, &err) == DP_OK);
    CHECK(isfinite(res.train_loss_after) && res.train_loss_after <= res.train_loss_before);
    CHECK(isnan(dp_sa_provenance(sa)->tuned.after.mape[0]));
    CHECK(isnan(dp_sa_provenance(sa)->tuned.after.mape[DP_SA_MEMORY]));
    dp_sa_graph_free(&g);
    dp_dataset_free(&other);
    dp_dataset_free(&ds);
    dp_sa_free(sa);
}

int main(void) {
    struct dp_error err = {0};
    if (dp_gpu_catalog_load_default(NULL, &cat, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_loss();
    struct dp_sweep sw;
    memset(&sw, 0, sizeof sw);
    test_sweep(&sw);
    if (sw.n_rows) {
        test_train_predict(&sw);
        test_splits(&sw);
        test_tune(&sw);
    }
    dp_sweep_free(&sw);
    dp_gpu_catalog_free(cat);
    TEST_MAIN_END();
}
