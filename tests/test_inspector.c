/* test_inspector.c: the driple-inspector/1 file: round trip of the imported published model,
 * transferred files that store only what differs from their base (and find it relative to their
 * own directory), the body key, and a clear error for each corruption: bad base64, wrong data
 * length, shape mismatch, NaN weight, wrong feature count, unknown parameter, bad or absurd
 * scale, missing base, a base cycle, truncated file; output transforms (linear, log) and their
 * validation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dp/inspector.h"
#include "test.h"

static char DIRBUF[64];
#define DIR DIRBUF
/* DIR + suffix, in one of a few rotating buffers (several may be live in one call). */
static const char *P(const char *suffix) {
    static char bufs[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(bufs[k], sizeof bufs[k], "%s%s", DIRBUF, suffix);
    return bufs[k];
}

static void spit(const char *path, const char *s, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(s, 1, n, f);
    fclose(f);
}

/* Writes `text` with the first `from` replaced by `to` into DIR/bad.json; loads it and checks the
 * error holds `needle`. */
static void bad_edit(const char *text, const char *from, const char *to, const char *needle) {
    /* Parameter data come after "parameters" (training.data is a string too). */
    const char *start = !strncmp(from, "\"data\"", 6) ? strstr(text, "\"parameters\"") : text;
    const char *at = start ? strstr(start, from) : NULL;
    CHECK(at != NULL);
    if (!at) return;
    size_t n = strlen(text), a = (size_t)(at - text), fl = strlen(from), tl = strlen(to);
    char *s = malloc(n - fl + tl + 1);
    memcpy(s, text, a);
    memcpy(s + a, to, tl);
    memcpy(s + a + tl, at + fl, n - a - fl + 1);
    spit(P("/bad.json"), s, strlen(s));
    free(s);
    struct dp_inspector *insp = NULL;
    struct dp_error err = {0};
    CHECK(dp_inspector_load(P("/bad.json"), &insp, &err) != DP_OK);
    CHECK(insp == NULL);
    CHECK_CONTAINS(err.msg, P("/bad.json:"));
    CHECK_CONTAINS(err.msg, needle);
}

static bool same_params(const struct dp_model *a, const struct dp_model *b) {
    if (dp_model_n_params(a) != dp_model_n_params(b)) return false;
    for (int i = 0; i < dp_model_n_params(a); i++) {
        struct dp_param p, q;
        dp_model_param(a, i, &p);
        dp_model_param(b, i, &q);
        if (strcmp(p.name, q.name) || p.size != q.size || memcmp(p.data, q.data, p.size * sizeof(float)))
            return false;
    }
    return true;
}

int main(void) {
    struct dp_error err = {0};
    struct dp_arch a;
    dp_arch_default(&a);
    snprintf(DIRBUF, sizeof DIRBUF, "/tmp/driple-insp-XXXXXX");
    if (!mkdtemp(DIRBUF)) {
        perror("mkdtemp");
        return 1;
    }
    mkdir(P("/sub"), 0755);
    struct dp_inspector *base = NULL, *back = NULL, *tr = NULL, *tr_back = NULL;
    CHECK(dp_inspector_import_torch(REF_DIR "/driple_pretrain_gcn.pkl", &a, &base, &err) == DP_OK);
    if (!base) {
        fprintf(stderr, "%s\n", err.msg);
        TEST_MAIN_END();
    }
    CHECK(dp_inspector_set_setting(base, "V100-P1w2ho-PCIe") == DP_OK);
    dp_inspector_set_scale(base, 3, 250.0);
    dp_inspector_provenance_mut(base)->val.mape[2] = 12.5;

    /* Round trip. */
    CHECK(dp_inspector_save(base, P("/base.json"), NULL, NULL, &err) == DP_OK);
    CHECK(dp_inspector_load(P("/base.json"), &back, &err) == DP_OK);
    if (back) {
        CHECK(same_params(dp_inspector_model(base), dp_inspector_model(back)));
        CHECK(!strcmp(dp_inspector_setting(back), "V100-P1w2ho-PCIe"));
        CHECK(dp_inspector_output(back, 3)->scale == 250.0);
        CHECK(!strcmp(dp_inspector_output(back, 8)->unit, "MB/s"));
        CHECK(!strcmp(dp_inspector_provenance(back)->origin, "imported"));
        CHECK(dp_inspector_provenance(back)->val.mape[2] == 12.5);
        CHECK(isnan(dp_inspector_provenance(back)->val.mape[3]));
        CHECK(!strcmp(dp_inspector_body_key(base), dp_inspector_body_key(back)));
        /* Prediction: raw equal to the model's, metrics scaled. */
        struct dp_grouped *g = NULL;
        CHECK(dp_grouped_load_json(REF_DIR "/cases/gcn/tiny3.grouped.json", &g, &err) == DP_OK);
        if (g) {
            float raw[DP_N_OUTPUTS], raw2[DP_N_OUTPUTS];
            double met[DP_N_OUTPUTS];
            CHECK(dp_inspector_predict(back, g, raw, met, &err) == DP_OK);
            CHECK(dp_model_predict(dp_inspector_model(base), g, raw2, &err) == DP_OK);
            for (int o = 0; o < DP_N_OUTPUTS; o++) CHECK(raw[o] == raw2[o]);
            CHECK_NEAR(met[3], raw[3] * 250.0, 1e-9);
            CHECK_NEAR(met[4], raw[4], 1e-12);
            dp_grouped_free(g);
        }
    }

    /* A transferred inspector in a subdirectory: only the changed head is stored. */
    CHECK(dp_inspector_init(dp_model_clone(dp_inspector_model(base)), &tr, &err) == DP_OK);
    if (tr) {
        struct dp_model *m = dp_inspector_model_mut(tr);
        int i = dp_model_find_param(m, "graph_read_out.mlp.fully_connected.2.linear.bias");
        CHECK(i >= 0);
        struct dp_param p;
        dp_model_param(m, i, &p);
        p.data[0] += 0.5f;
        snprintf(dp_inspector_provenance_mut(tr)->origin, 16, "transfer");
        CHECK(!strcmp(dp_inspector_body_key(tr), dp_inspector_body_key(base)));
        CHECK(dp_inspector_save(tr, P("/sub/tr.json"), base, P("/base.json"), &err) == DP_OK);
        size_t n_full = 0, n_tr = 0;
        char *full = test_slurp(P("/base.json"), &n_full);
        char *trs = test_slurp(P("/sub/tr.json"), &n_tr);
        CHECK(trs && n_tr < n_full / 20);
        CHECK(trs && strstr(trs, "\"base\":\t\"../base.json\""));
        CHECK(trs && strstr(trs, "fully_connected.2.linear.bias") && !strstr(trs, "conv_layers.0.W"));
        free(full);
        free(trs);
        CHECK(dp_inspector_load(P("/sub/tr.json"), &tr_back, &err) == DP_OK);
        if (tr_back) {
            CHECK(same_params(dp_inspector_model(tr), dp_inspector_model(tr_back)));
            CHECK(!strcmp(dp_inspector_provenance(tr_back)->origin, "transfer"));
            CHECK(!strcmp(dp_inspector_provenance(tr_back)->base, "../base.json"));
            CHECK(!strcmp(dp_inspector_body_key(tr_back), dp_inspector_body_key(base)));
        }
        /* A changed body parameter changes the key. */
        i = dp_model_find_param(m, "conv_layers.1.b");
        dp_model_param(dp_inspector_model_mut(tr), i, &p);
        p.data[0] += 0.5f;
        CHECK(strcmp(dp_inspector_body_key(tr), dp_inspector_body_key(base)) != 0);
        /* A missing base is named. */
        CHECK(dp_inspector_save(tr, P("/sub/tr2.json"), base, P("/base.json"), &err) == DP_OK);
        rename(P("/base.json"), P("/base.moved"));
        dp_inspector_free(tr_back);
        tr_back = NULL;
        CHECK(dp_inspector_load(P("/sub/tr2.json"), &tr_back, &err) != DP_OK);
        CHECK_CONTAINS(err.msg, P("/sub/tr2.json:$.base: cannot load base inspector"));
        CHECK_CONTAINS(err.msg, "base.json");
        rename(P("/base.moved"), P("/base.json"));
        /* A base naming the file itself, or a pair naming each other: a cycle, said once (not
         * an error message nested until it is cut off). */
        size_t n_tr2 = 0;
        char *trs2 = test_slurp(P("/sub/tr.json"), &n_tr2);
        /* the top-level "base" (the last one; training.base only records it) */
        const char *at = NULL;
        for (const char *q = trs2; q && (q = strstr(q, "\"base\":\t\"../base.json\"")); q++) at = q;
        CHECK(at != NULL);
        if (at) {
            size_t off = (size_t)(at - trs2), fl = strlen("\"base\":\t\"../base.json\"");
            const char *names[3][2] = {{"/sub/self.json", "self.json"},
                                       {"/sub/ca.json", "cb.json"},
                                       {"/sub/cb.json", "ca.json"}};
            for (int k = 0; k < 3; k++) {
                char *t = malloc(n_tr2 + 64);
                int w = sprintf(t, "%.*s\"base\":\t\"%s\"%s", (int)off, trs2, names[k][1], at + fl);
                spit(P(names[k][0]), t, (size_t)w);
                free(t);
            }
            struct dp_inspector *x = NULL;
            CHECK(dp_inspector_load(P("/sub/self.json"), &x, &err) == DP_ERR_INVALID);
            CHECK_CONTAINS(err.msg, P("/sub/self.json:$.base: 'self.json' is this inspector or one based on it (a cycle)"));
            CHECK(dp_inspector_load(P("/sub/ca.json"), &x, &err) == DP_ERR_INVALID);
            CHECK_CONTAINS(err.msg, P("/sub/cb.json:$.base: 'ca.json' is this inspector"));
            CHECK(x == NULL);
        }
        free(trs2);
    }

    /* Corruptions of the full file. */
    size_t n = 0;
    char *text = test_slurp(P("/base.json"), &n);
    CHECK(text != NULL);
    if (text) {
        bad_edit(text, "\"data\":\t\"", "\"data\":\t\"!", "$.parameters[0].data: bad base64 at character 0");
        bad_edit(text, "\"data\":\t\"", "\"data\":\t\"AAAA", "$.parameters[0].data: 771 bytes of base64 data for 'conv_layers.0.W', expected 768");
        bad_edit(text, "[3, 64]", "[64, 3]", "$.parameters[0].shape: [64, 3] for 'conv_layers.0.W', the model has [3, 64]");
        bad_edit(text, "\"n_feat\":\t3", "\"n_feat\":\t5", "$.architecture.n_feat: 5 input features");
        /* 6 = with the cost features: then six feature statistics are needed. */
        bad_edit(text, "\"n_feat\":\t3", "\"n_feat\":\t6", "$.architecture.feat_mean: 3 values, expected 6");
        bad_edit(text, "\"conv_layers.0.b\"", "\"conv_layers.7.b\"", "$.parameters[1].name: 'conv_layers.7.b' is not a parameter");
        bad_edit(text, "\"scale\":\t250", "\"scale\":\t-1", "$.outputs[3].scale");
        bad_edit(text, "\"scale\":\t250", "\"scale\":\t1e300", "$.outputs[3].scale: 1e+300 (must be > 0 and <= 1e+12)");
        bad_edit(text, "\"format\":\t\"driple-inspector/1\"", "\"format\":\t\"driple-inspector/9\"", "$.format");
        bad_edit(text, "\"layer\":\t\"gcn\"", "\"layer\":\t\"transformer\"", "$.architecture.layer");
        bad_edit(text, "\"conv_layers.0.b\"", "\"conv_layers.0.W\"", "appears twice");
        /* Truncated. */
        spit(P("/bad.json"), text, n / 2);
        struct dp_inspector *x = NULL;
        CHECK(dp_inspector_load(P("/bad.json"), &x, &err) == DP_ERR_PARSE);
        CHECK_CONTAINS(err.msg, P("/bad.json:"));
        free(text);
    }
    /* Output transforms: a log output round-trips and maps raw values through expm1; a file
 * without the field reads as linear (older files, the imported checkpoint); bad values fail. */
    if (back) {
        CHECK(dp_inspector_output(back, 5)->transform == DP_OUT_LINEAR);
        CHECK(dp_inspector_set_transform(back, 5, DP_OUT_LOG, 1.0, 0.5, 2.0) == DP_OK);
        CHECK(dp_inspector_set_transform(back, 5, DP_OUT_LOG, 1.0, 0.5, 0.0) == DP_ERR_INVALID);
        CHECK(dp_inspector_set_transform(back, 5, DP_OUT_LOG, -1.0, 0.5, 1.0) == DP_ERR_INVALID);
        CHECK_NEAR(dp_inspector_metric(back, 5, 0.25), expm1(1.0), 1e-12);
        CHECK_NEAR(dp_inspector_target(back, 5, expm1(1.0)), 0.25, 1e-12);
        CHECK_NEAR(dp_inspector_metric_slope(back, 5, 0.25), 2.0 * exp(1.0), 1e-12);
        CHECK_NEAR(dp_inspector_metric_slope(back, 3, 0.25), 250.0, 1e-12);
        CHECK_NEAR(dp_inspector_metric(back, 3, 0.5), 125.0, 1e-12);
        CHECK(isfinite(dp_inspector_metric(back, 5, 1e30))); /* the exponent is capped */
        CHECK(dp_inspector_save(back, P("/log.json"), NULL, NULL, &err) == DP_OK);
        struct dp_inspector *lg = NULL;
        CHECK(dp_inspector_load(P("/log.json"), &lg, &err) == DP_OK);
        if (lg) {
            const struct dp_output_meta *m = dp_inspector_output(lg, 5);
            CHECK(m->transform == DP_OUT_LOG && m->offset == 0.5 && m->span == 2.0);
            CHECK(dp_inspector_output(lg, 3)->transform == DP_OUT_LINEAR);
            struct dp_grouped *g = NULL;
            CHECK(dp_grouped_load_json(REF_DIR "/cases/gcn/tiny3.grouped.json", &g, &err) == DP_OK);
            if (g) {
                float raw[DP_N_OUTPUTS];
                double met[DP_N_OUTPUTS];
                CHECK(dp_inspector_predict(lg, g, raw, met, &err) == DP_OK);
                CHECK_NEAR(met[5], expm1(0.5 + 2.0 * raw[5]), 1e-9);
                CHECK_NEAR(met[3], raw[3] * 250.0, 1e-9);
                dp_grouped_free(g);
            }
        }
        dp_inspector_free(lg);
        size_t ln = 0;
        char *lt = test_slurp(P("/log.json"), &ln);
        CHECK(lt != NULL);
        if (lt) {
            bad_edit(lt, "\"transform\":\t\"log\"", "\"transform\":\t\"sqrt\"",
                     "$.outputs[5].transform: 'sqrt' is not linear or log");
            bad_edit(lt, "\"span\":\t2", "\"span\":\t0", "$.outputs[5].span: 0 (must be > 0)");
            bad_edit(lt, "\"transform\":\t\"log\"", "\"transform\":\t7", "$.outputs[5].transform");
            bad_edit(lt, "\"offset\":\t0.5", "\"offset\":\t\"x\"", "$.outputs[5].offset");
            /* Without the fields: linear, offset 0, span 1. */
            char *at = strstr(lt, "\"transform\":\t\"log\"");
            if (at) {
                memcpy(at, "\"transfor_\"", 11);
                spit(P("/nolog.json"), lt, strlen(lt));
                CHECK(dp_inspector_load(P("/nolog.json"), &lg, &err) == DP_OK);
                if (lg) CHECK(dp_inspector_output(lg, 5)->transform == DP_OUT_LINEAR);
                dp_inspector_free(lg);
            }
            free(lt);
        }
        CHECK(dp_inspector_set_transform(back, 5, DP_OUT_LINEAR, 1.0, 0.0, 1.0) == DP_OK);
    }
    /* A NaN weight. */
    if (back) {
        struct dp_param p;
        dp_model_param(dp_inspector_model_mut(back), 2, &p);
        p.data[5] = NAN;
        CHECK(dp_inspector_save(back, P("/nan.json"), NULL, NULL, &err) == DP_OK);
        struct dp_inspector *x = NULL;
        CHECK(dp_inspector_load(P("/nan.json"), &x, &err) == DP_ERR_INVALID);
        CHECK_CONTAINS(err.msg, P("/nan.json:$.parameters[2].data[5]: NaN weight in 'conv_layers.1.W'"));
    }
    struct dp_inspector *x = NULL;
    CHECK(dp_inspector_load(P("/none.json"), &x, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, P("/none.json"));

    dp_inspector_free(tr_back);
    dp_inspector_free(tr);
    dp_inspector_free(back);
    dp_inspector_free(base);
    const char *files[] = {"/base.json",    "/sub/tr.json", "/sub/tr2.json", "/sub/self.json",
                           "/sub/ca.json",  "/sub/cb.json", "/bad.json",     "/nan.json",
                           "/log.json",     "/nolog.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) unlink(P(files[i]));
    rmdir(P("/sub"));
    rmdir(DIR);

    /* A 6 KB file declaring a 369-million-weight architecture: refused before the model is
     * allocated (it took 5 s and 1.4 GB), by the weights its data can hold. */
    struct dp_inspector *huge = NULL;
    CHECK(dp_inspector_load("tests/data/fuzz/inspector/huge_architecture.json", &huge, &err) == DP_ERR_SHAPE);
    CHECK(huge == NULL);
    CHECK_CONTAINS(err.msg, "tests/data/fuzz/inspector/huge_architecture.json:$.parameters: data for at "
                            "most 514 weights, but the architecture has 369233932");
    TEST_MAIN_END();
}
