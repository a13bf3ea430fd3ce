/* test_onnx_corpus.c: the corpus of real PyTorch exports (tests/data/onnx/corpus/, written by
 * tools/make_onnx_corpus.py with Debian's python3-torch 1.13 and torchvision 0.14, weights
 * stripped to external data that is not kept). Every model named in manifest.json imports,
 * matches the framework's parameter count within 1% and the published forward cost (torchvision's
 * multiply-adds at 224x224) within 10%; the models the zoo also has cost the same forward
 * multiply-adds within 1%. Prints one line per model (the README's table). */
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

/* The zoo's models that the corpus exports too: the same forward multiply-adds. */
static const struct { const char *onnx, *zoo; int64_t input; } twins[] = {
    {"resnet18", "resnet18", 224}, {"resnet50", "resnet50", 224}, {"alexnet", "alexnet", 224},
    {"mobilenet_v2", "mobilenet_v2", 224}, {"densenet121", "densenet121", 224},
    {"gpt_decoder", "gpt2_small", 1024}, {"lstm_lm", "lstm_lm", 35},
    {"transformer", "transformer_base", 64},
};

static void check_twin(const char *name, double macs) {
    for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++) {
        if (strcmp(twins[i].onnx, name)) continue;
        struct dp_zoo_opts o;
        dp_zoo_opts_default(&o);
        o.batch = 1;
        o.input = twins[i].input;
        struct dp_graph *z = NULL;
        struct dp_error err = {0};
        CHECK(dp_zoo_build(twins[i].zoo, &o, &z, &err) == DP_OK);
        double zm = z ? forward_macs(z) : 0;
        printf("  zoo %-16s forward %.4g G multiply-adds (import %.4g G, %+.2f%%)\n",
               twins[i].zoo, zm / 1e9, macs / 1e9, 100 * (macs - zm) / zm);
        CHECK(fabs(macs - zm) <= 0.01 * zm);
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
    cJSON_ArrayForEach(m, models) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "model"));
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
        CHECK(fabs(params - want) <= 0.01 * want);
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
        check_twin(name, macs);
        dp_graph_free(g);
    }
    CHECK(count >= 25 && modes[0] > 0 && modes[1] > 0);
    cJSON_Delete(root);
    TEST_MAIN_END();
}
