/* test_inspector.c: the driple-inspector/1 file: round trip of the imported published model,
 * transferred files that store only what differs from their base (and find it relative to their
 * own directory), the body key, and a clear error for each corruption: bad base64, wrong data
 * length, shape mismatch, NaN weight, wrong feature count, unknown parameter, bad scale, missing
 * base, truncated file. */
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

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
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
        char *full = slurp(P("/base.json"), &n_full), *trs = slurp(P("/sub/tr.json"), &n_tr);
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
    }

    /* Corruptions of the full file. */
    size_t n = 0;
    char *text = slurp(P("/base.json"), &n);
    CHECK(text != NULL);
    if (text) {
        bad_edit(text, "\"data\":\t\"", "\"data\":\t\"!", "$.parameters[0].data: bad base64 at character 0");
        bad_edit(text, "\"data\":\t\"", "\"data\":\t\"AAAA", "$.parameters[0].data: 771 bytes of base64 data for 'conv_layers.0.W', expected 768");
        bad_edit(text, "[3, 64]", "[64, 3]", "$.parameters[0].shape: [64, 3] for 'conv_layers.0.W', the model has [3, 64]");
        bad_edit(text, "\"n_feat\":\t3", "\"n_feat\":\t5", "$.architecture.n_feat: 5 input features");
        bad_edit(text, "\"conv_layers.0.b\"", "\"conv_layers.7.b\"", "$.parameters[1].name: 'conv_layers.7.b' is not a parameter");
        bad_edit(text, "\"scale\":\t250", "\"scale\":\t-1", "$.outputs[3].scale");
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
    const char *files[] = {"/base.json", "/sub/tr.json", "/sub/tr2.json", "/bad.json", "/nan.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) unlink(P(files[i]));
    rmdir(P("/sub"));
    rmdir(DIR);
    TEST_MAIN_END();
}
