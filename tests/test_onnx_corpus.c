/* test_onnx_corpus.c: the corpus of real PyTorch exports (tests/data/onnx/corpus/, written by
 * tools/make_onnx_corpus.py with Debian's python3-torch 1.13 and torchvision 0.14, weights
 * stripped to external data that is not kept). Every model named in manifest.json imports,
 * matches the framework's parameter count exactly (within 1% for eval exports with batch norms
 * folded, whose scale and shift the file no longer holds) and the published forward cost (torchvision's
 * multiply-adds at 224x224) within 10%; the models the zoo also has cost the same forward
 * multiply-adds within 1% and the same training step within 2%. The test names every model (a
 * model missing from the manifest, or one it does not know, fails). Prints one line per model
 * (the README's table). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dp/clock.h"
#include "dp/cost.h"
#include "dp/onnx.h"
#include "dp/zoo.h"
#include "test.h"

#define DIR "tests/data/onnx/corpus/"

/* Multiply-adds of the forward pass per sample: convolutions and products before the loss. */
static double forward_macs(const struct dp_graph *g) {
    double f = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_node_phase(n) != DP_PHASE_FORWARD || dp_op_class(n->op) != DP_OPCLASS_MATMUL)
            continue;
        double fl, by;
        dp_cost_node(g, i, 1, &fl, &by);
        f += fl;
    }
    return f / 2;
}

/* FLOPs of the whole training step per sample (forward, gradients, optimizer). */
static double step_flops(const struct dp_graph *g) {
    double f = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        double fl, by;
        dp_cost_node(g, i, 1, &fl, &by);
        f += fl;
    }
    return f;
}

/* Every model of the corpus, by the families issue 13 names (manifest.json must list exactly
 * these, each once). */
static const char *const corpus[] = {
    "alexnet", "resnet18", "resnet50", "resnet50_eval", "resnext50_32x4d", "regnet_y_800mf",
    "regnet_y_800mf_eval", "densenet121", "densenet121_eval", "shufflenet_v2_x1_0",
    "mnasnet1_0", "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_large_eval",
    "efficientnet_b0", "convnext_tiny", "googlenet", "squeezenet1_0", "squeezenet1_1_eval",
    "vit_b_16", "vit_b_16_eval", "swin_t", "transformer", "gpt_decoder", "lstm_lm",
    "lstm_lm_eval", "gru_lm", "r3d_18", "bert_encoder_eval",
};

/* Eval exports whose batch norms PyTorch folded into the convolutions: the file holds no
 * scale and shift to give back, so their count is within 1%; every other model's is exact
 * (buffers apart, issue 31). */
static bool bn_folded(const char *name) {
    static const char *const folded[] = {"resnet50_eval", "mobilenet_v3_large_eval",
                                         "regnet_y_800mf_eval", "densenet121_eval"};
    for (size_t i = 0; i < sizeof folded / sizeof folded[0]; i++)
        if (!strcmp(name, folded[i])) return true;
    return false;
}

/* The zoo's models that the corpus exports too: the same forward multiply-adds, and the same
 * training step within 2% (the zoo's TensorFlow-style LSTM cell and optimizer ops differ a
 * little: lstm_lm +0.9%, transformer_base +0.3%). Not twins: the zoo's SqueezeNet 1.0 floors its
 * pooling where torchvision's rounds up (-4.3% forward), and its GoogLeNet is the paper's, with
 * LRN and no batch norm. */
static const struct { const char *onnx, *zoo; int64_t input; } twins[] = {
    {"resnet18", "resnet18", 224}, {"resnet50", "resnet50", 224}, {"alexnet", "alexnet", 224},
    {"mobilenet_v2", "mobilenet_v2", 224}, {"densenet121", "densenet121", 224},
    {"squeezenet1_1_eval", "squeezenet1_1", 224}, {"gpt_decoder", "gpt2_small", 1024},
    {"lstm_lm", "lstm_lm", 35}, {"transformer", "transformer_base", 64},
};

static void check_twin(const char *name, const struct dp_graph *g, double macs) {
    for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++) {
        if (strcmp(twins[i].onnx, name)) continue;
        struct dp_zoo_opts o;
        dp_zoo_opts_default(&o);
        o.batch = 1;
        o.input = twins[i].input;
        struct dp_graph *z = NULL;
        struct dp_error err = {0};
        CHECK(dp_zoo_build(twins[i].zoo, &o, &z, &err) == DP_OK);
        double zm = z ? forward_macs(z) : 0, zs = z ? step_flops(z) : 0, is = step_flops(g);
        printf("  zoo %-16s forward %.4g G multiply-adds (import %.4g G, %+.2f%%), training step "
               "%.4g GFLOPs (import %.4g, %+.2f%%)\n", twins[i].zoo, zm / 1e9, macs / 1e9,
               100 * (macs - zm) / zm, zs / 1e9, is / 1e9, 100 * (is - zs) / zs);
        CHECK(fabs(macs - zm) <= 0.01 * zm);
        CHECK(fabs(is - zs) <= 0.02 * zs);
        dp_graph_free(z);
    }
}

int main(void) {
    FILE *f = fopen(DIR "manifest.json", "rb");
    static char text[1 << 16];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    cJSON *root = cJSON_Parse(text);
    CHECK(root != NULL);
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(root, "models"), *m;
    int count = 0, modes[2] = {0, 0};
    printf("%-24s %5s %13s %13s %8s %9s %9s %8s %8s\n", "model", "mode", "params", "framework",
           "diff", "GMACs", "published", "diff", "import");
    size_t n_corpus = sizeof corpus / sizeof corpus[0];
    int seen[sizeof corpus / sizeof corpus[0]] = {0};
    cJSON_ArrayForEach(m, models) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "model"));
        size_t k = 0;
        while (name && k < n_corpus && strcmp(corpus[k], name)) k++;
        if (k == n_corpus) fprintf(stderr, "%s: not in the test's list\n", name ? name : "?");
        CHECK(k < n_corpus && seen[k]++ == 0);
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "file"));
        const char *mode = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "mode"));
        const cJSON *fw = cJSON_GetObjectItemCaseSensitive(m, "params");
        const cJSON *pub = cJSON_GetObjectItemCaseSensitive(m, "published_gmacs");
        CHECK(name && file && mode && cJSON_IsNumber(fw));
        if (!name || !file || !mode || !cJSON_IsNumber(fw)) continue;
        char path[512];
        snprintf(path, sizeof path, DIR "%s", file);
        struct dp_import_notes notes;
        struct dp_import_opts o = {.notes = &notes};
        struct dp_graph *g = NULL;
        struct dp_error err = {0};
        double t0 = dp_clock_ms();
        enum dp_status st = dp_graph_import_onnx(path, &o, &g, &err);
        double ms = dp_clock_ms() - t0;
        if (st) fprintf(stderr, "%s: %s\n", name, err.msg);
        CHECK(st == DP_OK);
        if (!g) continue;
        count++;
        modes[!strcmp(mode, "eval")]++;
        double params = (double)dp_graph_param_count(g, true), want = fw->valuedouble;
        double macs = forward_macs(g), dp = 100 * (params - want) / want;
        CHECK(bn_folded(name) ? fabs(params - want) <= 0.01 * want : params == want);
        /* the gradients and the optimizer: a training graph, whichever mode was exported */
        CHECK(dp_graph_n_nodes(g) > 0 && macs > 0);
        char pubs[16] = "-", pd[16] = "-";
        if (cJSON_IsNumber(pub)) {
            double p = pub->valuedouble * 1e9;
            snprintf(pubs, sizeof pubs, "%.3f", pub->valuedouble);
            snprintf(pd, sizeof pd, "%+.1f%%", 100 * (macs - p) / p);
            CHECK(fabs(macs - p) <= 0.10 * p);
        }
        printf("%-24s %5s %13.0f %13.0f %+7.3f%% %9.3f %9s %8s %6.0f ms%s%s\n", name, mode,
               params, want, dp, macs / 1e9, pubs, pd, ms, notes.n_generic ? "  generic: " : "",
               notes.n_generic ? notes.generic_types : "");
        CHECK(ms < 5000); /* under a second on an idle machine (make bench), bounded here */
        check_twin(name, g, macs);
        dp_graph_free(g);
    }
    for (size_t k = 0; k < n_corpus; k++) {
        if (seen[k] != 1) fprintf(stderr, "%s: not in manifest.json\n", corpus[k]);
        CHECK(seen[k] == 1);
    }
    CHECK(count >= 25 && (size_t)count == n_corpus && modes[0] > 0 && modes[1] > 0);
    cJSON_Delete(root);
    TEST_MAIN_END();
}
