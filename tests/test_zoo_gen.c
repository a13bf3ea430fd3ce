/* test_zoo_gen.c: the architecture generator: every drawn architecture builds into a valid
 * training graph that coarsens; the same seed and index give the same graph, other seeds other
 * ones; each graph's trainable parameter count equals the closed form, which itself matches
 * hand counts; the corpus covers every kind, block kind and transformer variant; names parse
 * back and malformed ones are refused; layout and precision options do not change the count. */
#include <stdio.h>
#include <string.h>

#include "dp/coarsen.h"
#include "dp/cost.h"
#include "dp/zoo_gen.h"
#include "graph_check.h"
#include "test.h"

static struct dp_graph *build(const struct dp_gen_arch *a, const struct dp_zoo_opts *o) {
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    if (dp_gen_build(a, o, &g, &err)) fprintf(stderr, "%s: %s\n", a->name, err.msg);
    return g;
}

/* The checks every training graph passes (those of test_zoo.c's zoo models). */
static bool valid(const struct dp_graph *g) {
    struct graph_check c = graph_check(g);
    bool ok = c.unshaped == 0 && c.bad_inputs == 0 && c.uncosted == 0 && c.cpu_iter == 1 &&
              dp_graph_find(g, "train_op") >= 0 && dp_cost_total_flops(g, 0) > 0;
    struct dp_partition *p = NULL;
    struct dp_error err = {0};
    ok = ok && dp_coarsen(g, NULL, &p, &err) == DP_OK && p->n_groups >= 1;
    if (!ok) fprintf(stderr, "%s: unshaped %zu, bad inputs %zu, uncosted %zu, cpu iterators %zu, "
                     "coarsen '%s'\n", dp_graph_name(g), c.unshaped, c.bad_inputs, c.uncosted,
                     c.cpu_iter, err.msg);
    dp_partition_free(p);
    return ok;
}

static bool same_graph(const struct dp_graph *a, const struct dp_graph *b) {
    if (dp_graph_n_nodes(a) != dp_graph_n_nodes(b)) return false;
    for (size_t i = 0; i < dp_graph_n_nodes(a); i++) {
        const struct dp_node *x = dp_graph_node(a, i), *y = dp_graph_node(b, i);
        if (strcmp(x->name, y->name) || strcmp(x->op, y->op) || x->n_dims != y->n_dims ||
            x->n_inputs != y->n_inputs || x->flops != y->flops || x->params != y->params)
            return false;
        for (int d = 0; d < x->n_dims; d++)
            if (x->dims[d] != y->dims[d]) return false;
        for (int j = 0; j < x->n_inputs; j++)
            if (x->inputs[j] != y->inputs[j]) return false;
    }
    return true;
}

/* The corpus of seed 1: valid graphs whose parameters equal the closed form, covering the
 * space (every kind, block kind, variant and option of the description). */
static void test_corpus(void) {
    int kinds[DP_GEN_KIND_COUNT] = {0}, blocks[DP_GEN_BLOCK_COUNT] = {0}, variants[5] = {0};
    int se = 0, gru = 0, lstm = 0, rnn_cls = 0, lm = 0, mlm = 0, cls = 0, pre = 0, post = 0;
    int shifted = 0;
    int folded = 0, flat = 0;
    int n_bad = 0, n_mismatch = 0;
    const int n = 240;
    for (int i = 0; i < n; i++) {
        struct dp_gen_arch a;
        dp_gen_sample(1, i, -1, &a);
        kinds[a.kind]++;
        folded += a.kind == DP_GEN_CNN && a.u.cnn.folded;
        flat += a.kind == DP_GEN_CNN && a.u.cnn.flat_pool > 0;
        if (a.kind == DP_GEN_CNN && a.u.cnn.flat_pool > 0) /* VGG's input to its fc6 at most */
            CHECK(a.u.cnn.flat_side >= 1 && a.u.cnn.flat_side <= 7 && a.u.cnn.head_width >= 1024);
        if (a.kind == DP_GEN_CNN)
            for (int s = 0; s < a.u.cnn.n_stages; s++) {
                blocks[a.u.cnn.stage[s].block]++;
                se += a.u.cnn.stage[s].se;
            }
        if (a.kind == DP_GEN_TRANSFORMER) {
            variants[a.u.tf.variant]++;
            mlm += a.u.tf.variant == DP_GEN_ENCODER && !a.u.tf.classes;
            cls += a.u.tf.variant == DP_GEN_ENCODER && a.u.tf.classes;
            pre += a.u.tf.pre_norm;
            post += !a.u.tf.pre_norm;
            /* Swin-like: whole windows on every stage's map, the last one window */
            if (a.u.tf.variant == DP_GEN_SWIN) {
                const struct dp_gen_transformer *t = &a.u.tf;
                CHECK(t->seq == ((int64_t)t->window * t->patch << (t->stages - 1)));
                shifted += t->seq / t->patch > t->window;
            }
        }
        if (a.kind == DP_GEN_RNN) {
            gru += a.u.rnn.gru;
            lstm += !a.u.rnn.gru;
            rnn_cls += a.u.rnn.classes > 0;
            lm += !a.u.rnn.classes;
        }
        struct dp_graph *g = build(&a, NULL);
        if (!g || !valid(g)) {
            n_bad++;
            dp_graph_free(g);
            continue;
        }
        int64_t have = dp_graph_param_count(g, true), want = dp_gen_params(&a);
        if (have != want) {
            char d[512];
            dp_gen_describe(&a, d, sizeof d);
            fprintf(stderr, "%s: %lld parameters, closed form %lld: %s\n", a.name,
                    (long long)have, (long long)want, d);
            n_mismatch++;
        }
        CHECK(!strcmp(dp_graph_name(g), a.name));
        CHECK(dp_graph_batch(g) == a.batch);
        dp_graph_free(g);
    }
    CHECK(n_bad == 0);
    CHECK(n_mismatch == 0);
    /* About 45 / 25 / 10 / 10 / 10 percent. */
    CHECK(kinds[DP_GEN_CNN] > 0.35 * n && kinds[DP_GEN_CNN] < 0.55 * n);
    CHECK(kinds[DP_GEN_TRANSFORMER] > 0.15 * n && kinds[DP_GEN_TRANSFORMER] < 0.35 * n);
    for (int k = DP_GEN_RNN; k < DP_GEN_KIND_COUNT; k++) CHECK(kinds[k] > 0.04 * n);
    for (int k = 0; k < DP_GEN_BLOCK_COUNT; k++) {
        if (!blocks[k]) fprintf(stderr, "no %s stage\n", dp_gen_block_name((enum dp_gen_block)k));
        CHECK(blocks[k] > 0);
    }
    for (int v = 0; v < 5; v++) CHECK(variants[v] > 0);
    CHECK(shifted > 0);
    CHECK(se > 0 && gru > 0 && lstm > 0 && rnn_cls > 0 && lm > 0 && mlm > 0 && cls > 0);
    CHECK(pre > 0 && post > 0);
    CHECK(folded > 0.1 * kinds[DP_GEN_CNN] && folded < 0.35 * kinds[DP_GEN_CNN]); /* 20% */
    CHECK(flat > 0.1 * kinds[DP_GEN_CNN] && flat < 0.35 * kinds[DP_GEN_CNN]);     /* 20% */
}

/* Forcing a kind gives that kind, and the description drawn for it is that of the corpus where
 * the corpus drew the same kind. */
static void test_forced_kind(void) {
    for (int k = 0; k < DP_GEN_KIND_COUNT; k++)
        for (int i = 0; i < 12; i++) {
            struct dp_gen_arch a, any;
            dp_gen_sample(7, i, k, &a);
            dp_gen_sample(7, i, -1, &any);
            CHECK(a.kind == (enum dp_gen_kind)k);
            if (any.kind == a.kind) CHECK(!memcmp(&a, &any, sizeof a));
            struct dp_graph *g = build(&a, NULL);
            CHECK(g && valid(g) && dp_graph_param_count(g, true) == dp_gen_params(&a));
            dp_graph_free(g);
        }
}

static void test_determinism(void) {
    struct dp_gen_arch a, b, c;
    bool differ = false;
    for (int i = 0; i < 20; i++) {
        dp_gen_sample(42, i, -1, &a);
        dp_gen_sample(42, i, -1, &b);
        dp_gen_sample(43, i, -1, &c);
        CHECK(!memcmp(&a, &b, sizeof a));
        c.seed = a.seed;
        memcpy(c.name, a.name, sizeof c.name);
        differ |= memcmp(&a, &c, sizeof a) != 0;
    }
    CHECK(differ);
    dp_gen_sample(42, 3, -1, &a);
    struct dp_graph *g1 = build(&a, NULL), *g2 = build(&a, NULL);
    CHECK(g1 && g2 && same_graph(g1, g2));
    dp_graph_free(g1);
    dp_graph_free(g2);
}

/* The closed form against counts made by hand. */
static void test_hand_counts(void) {
    struct dp_gen_arch a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "hand-mlp");
    a.kind = DP_GEN_MLP;
    a.batch = 8;
    a.u.mlp = (struct dp_gen_mlp){.input = 784, .layers = 2, .width = {256, 128},
                                  .layer_norm = true, .act = DP_GEN_RELU, .classes = 10};
    /* 784x256 + 256, LN 2x256, 256x128 + 128, LN 2x128, 128x10 + 10. */
    int64_t mlp = 784 * 256 + 256 + 512 + 256 * 128 + 128 + 256 + 128 * 10 + 10;
    CHECK(dp_gen_params(&a) == mlp);
    struct dp_graph *g = build(&a, NULL);
    CHECK(g && dp_graph_param_count(g, true) == mlp);
    dp_graph_free(g);

    a.kind = DP_GEN_RNN;
    a.u.rnn = (struct dp_gen_rnn){.gru = false, .layers = 2, .hidden = 200, .embed = 200,
                                  .vocab = 10000, .seq = 5, .classes = 0};
    /* PTB small (Zaremba et al.): 4.65M = embedding 2M, two LSTMs 2 x 320,800, softmax 2.01M. */
    int64_t lstm = 10000 * 200 + 2 * (400 * 800 + 800) + 200 * 10000 + 10000;
    CHECK(lstm == 4651600);
    CHECK(dp_gen_params(&a) == lstm);
    a.u.rnn.gru = true; /* gates (in + h) x 2h + 2h, candidate (in + h) x h + h per layer */
    CHECK(dp_gen_params(&a) == 10000 * 200 + 2 * (400 * 400 + 400 + 400 * 200 + 200) +
                                   200 * 10000 + 10000);
    g = build(&a, NULL);
    CHECK(g && dp_graph_param_count(g, true) == dp_gen_params(&a));
    dp_graph_free(g);

    a.kind = DP_GEN_TRANSFORMER;
    a.u.tf = (struct dp_gen_transformer){.variant = DP_GEN_ENCODER, .enc_layers = 12,
                                         .d_model = 768, .heads = 12, .inner = 3072, .seq = 512,
                                         .vocab = 30522, .pre_norm = false, .gelu = true};
    /* BERT-base with its masked-LM head: 110.1M + the MLM transform and bias (the zoo's
     * bert_base has also 2 token types and the next-sentence head). */
    int64_t layer = 4 * (768 * 768 + 768) + 768 * 3072 + 3072 + 3072 * 768 + 768 + 4 * 768;
    int64_t bert = 30522 * 768 + 512 * 768 + 2 * 768 + 12 * layer + 768 * 768 + 768 + 2 * 768 +
                   30522;
    CHECK(dp_gen_params(&a) == bert);
    g = build(&a, NULL);
    CHECK(g && dp_graph_param_count(g, true) == bert);
    dp_graph_free(g);

    /* Swin-T as torchvision builds it: 28,288,354 parameters (its model card), which the corpus's
     * ONNX export of swin_t also holds; the graph has the export's gathers (q, k, v of every
     * block and the bias table) and their UnsortedSegmentSum gradients. */
    a.u.tf = (struct dp_gen_transformer){.variant = DP_GEN_SWIN, .d_model = 96, .heads = 3,
                                         .inner = 384, .seq = 224, .patch = 4, .window = 7,
                                         .stages = 4, .stage_layers = {2, 2, 6, 2},
                                         .enc_layers = 12, .pre_norm = true, .gelu = true,
                                         .fused_qkv = true, .classes = 1000};
    CHECK(dp_gen_params(&a) == 28288354);
    a.batch = 32;
    g = build(&a, NULL);
    CHECK(g && valid(g) && dp_graph_param_count(g, true) == 28288354);
    int gathers = 0, segment_sums = 0;
    for (size_t i = 0; g && i < dp_graph_n_nodes(g); i++) {
        gathers += !strcmp(dp_graph_node(g, i)->op, "GatherV2");
        segment_sums += !strcmp(dp_graph_node(g, i)->op, "UnsortedSegmentSum");
    }
    CHECK(gathers == 12 * 4 && segment_sums == 12 * 4);
    dp_graph_free(g);

    a.kind = DP_GEN_CNN;
    struct dp_gen_cnn *c = &a.u.cnn;
    memset(c, 0, sizeof *c);
    c->input = 32;
    c->stem_width = 16;
    c->stem_kernel = 3;
    c->stem_stride = 1;
    c->n_stages = 1;
    c->stage[0] = (struct dp_gen_stage){.block = DP_GEN_RESIDUAL, .depth = 1, .width = 32,
                                        .kernel = 3, .stride = 2, .se = true};
    c->classes = 10;
    /* stem 3x3x3x16 + BN 32; conv1 3x3x16x32 + 64; conv2 3x3x32x32 + 64; shortcut 1x1x16x32 +
     * 64; SE 32x8 + 8 + 8x32 + 32; fc 32x10 + 10. */
    int64_t cnn = 432 + 32 + 4608 + 64 + 9216 + 64 + 512 + 64 + 264 + 288 + 330;
    CHECK(dp_gen_params(&a) == cnn);
    g = build(&a, NULL);
    CHECK(g && valid(g) && dp_graph_param_count(g, true) == cnn);
    dp_graph_free(g);
    /* Folded (an eval-mode export): a bias of 16 or 32 where each BN's 32 or 64 were. */
    c->folded = true;
    CHECK(dp_gen_params(&a) == cnn - 16 - 32 - 32 - 32);
    g = build(&a, NULL);
    CHECK(g && valid(g) && dp_graph_param_count(g, true) == cnn - 16 - 32 - 32 - 32);
    dp_graph_free(g);
    /* AlexNet's and VGG's classifier: the 16 x 16 map of 32 channels average-pooled 4 x 4 to
     * 4 x 4, flattened (512), fc 64, fc 64, 10 classes in place of the global pooling's fc. */
    c->folded = false;
    c->flat_pool = 4;
    c->flat_side = 4;
    c->head_width = 64;
    CHECK(dp_gen_params(&a) == cnn - 330 + (512 * 64 + 64) + (64 * 64 + 64) + (64 * 10 + 10));
    g = build(&a, NULL);
    CHECK(g && valid(g) && dp_graph_param_count(g, true) == dp_gen_params(&a));
    dp_graph_free(g);
    c->flat_pool = c->flat_side = c->head_width = 0;
    c->folded = true;
    /* Every block kind folded: valid, no batch norm left, the closed form's count. */
    for (int k = 0; k < DP_GEN_BLOCK_COUNT; k++) {
        c->stage[0] = (struct dp_gen_stage){.block = (enum dp_gen_block)k, .depth = 2,
                                            .width = 32, .kernel = 3, .stride = 2, .inner = 16,
                                            .expand = 4, .groups = k == DP_GEN_GROUPED ? 2 : 1,
                                            .se = k != DP_GEN_SEPARABLE && k != DP_GEN_DENSE &&
                                                  k != DP_GEN_PLAIN};
        if (k == DP_GEN_DENSE) c->stage[0].width = 12;
        g = build(&a, NULL);
        int bn = 0;
        for (size_t i = 0; g && i < dp_graph_n_nodes(g); i++)
            bn += strstr(dp_graph_node(g, i)->op, "BatchNorm") != NULL;
        CHECK(g && valid(g) && bn == 0);
        if (g && dp_graph_param_count(g, true) != dp_gen_params(&a))
            fprintf(stderr, "folded %s: %lld parameters, closed form %lld\n",
                    dp_gen_block_name((enum dp_gen_block)k),
                    (long long)dp_graph_param_count(g, true), (long long)dp_gen_params(&a));
        if (g) CHECK(dp_graph_param_count(g, true) == dp_gen_params(&a));
        dp_graph_free(g);
    }
}

static void test_names(void) {
    struct dp_gen_arch a, b;
    dp_gen_sample(3, 17, -1, &a);
    char want[64];
    snprintf(want, sizeof want, "gen-%s-s3-17", dp_gen_kind_name(a.kind));
    CHECK(!strcmp(a.name, want));
    CHECK(dp_gen_parse_name(a.name, &b) && !memcmp(&a, &b, sizeof a));
    CHECK(dp_gen_is_generated("gen-mlp-s0-0"));
    CHECK(dp_gen_parse_name("gen-rnn-s18446744073709551615-9223372036854775807", &b));
    CHECK(b.kind == DP_GEN_RNN && b.index == INT64_MAX);
    static const char *const bad[] = {
        "resnet50", "gen-", "gen-cnn", "gen-cnn-s1", "gen-cnn-s1-", "gen-cnn-1-2",
        "gen-foo-s1-2", "gen-cnn-s-1-2", "gen-cnn-s1-2x", "gen-cnn-s1-+2", "gen-cnn-s1-2-3",
        "gen-cnn-s99999999999999999999-1", "gen-cnn-s1-9223372036854775808", "GEN-cnn-s1-2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (dp_gen_is_generated(bad[i])) fprintf(stderr, "accepted '%s'\n", bad[i]);
        CHECK(!dp_gen_is_generated(bad[i]));
    }
    CHECK(!dp_gen_is_generated(NULL));
    enum dp_gen_kind k;
    CHECK(dp_gen_kind_parse("mixer", &k) && k == DP_GEN_MIXER && !dp_gen_kind_parse("gnn", &k));
    char d[256];
    dp_gen_describe(&a, d, sizeof d);
    CHECK(strlen(d) > 10 && !strncmp(d, dp_gen_kind_name(a.kind), strlen(dp_gen_kind_name(a.kind))));
    dp_gen_describe(&a, d, 8); /* truncates, never overflows */
    CHECK(strlen(d) == 7);
}

/* NCHW, mixed precision and another optimizer and batch: the same parameters, valid graphs. */
static void test_options(void) {
    for (int k = 0; k < DP_GEN_KIND_COUNT; k++) {
        struct dp_gen_arch a;
        dp_gen_sample(5, 0, k, &a);
        if (k == DP_GEN_TRANSFORMER) a.u.tf.variant = DP_GEN_VISION, a.u.tf.seq = 64,
                                     a.u.tf.patch = 8, a.u.tf.classes = 10;
        struct dp_zoo_opts o;
        dp_zoo_opts_default(&o);
        o.nchw = true;
        o.precision = DP_PREC_MIXED;
        o.optimizer = DP_OPT_ADAM;
        o.batch = 3;
        struct dp_graph *g = build(&a, &o);
        CHECK(g && valid(g) && dp_graph_batch(g) == 3);
        if (g) CHECK(dp_graph_param_count(g, true) == dp_gen_params(&a));
        dp_graph_free(g);
    }
    struct dp_gen_arch a;
    dp_gen_sample(5, 0, DP_GEN_MLP, &a);
    struct dp_zoo_opts o;
    dp_zoo_opts_default(&o);
    o.batch = -1;
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_gen_build(&a, &o, &g, &err) == DP_ERR_INVALID && !g);
    CHECK_CONTAINS(err.msg, a.name);
}

int main(void) {
    test_corpus();
    test_forced_kind();
    test_determinism();
    test_hand_counts();
    test_names();
    test_options();
    TEST_MAIN_END();
}
