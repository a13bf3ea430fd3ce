/* test_model.c: the inspector network: architecture rules and checks, parameter table and
 * errors, the JSON parameter loader's failures, the fast engine against the autograd tape
 * (outputs, parameter and input gradients, every layer type; GAT and MPNN forward over more
 * shapes and a batch), GAT and MPNN gradients against finite differences, batching of mixed
 * graph sizes, training that lowers the loss, head-only training, the log feature transform,
 * and two threads predicting with one model. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "dp/compute.h"
#include "dp/grouped.h"
#include "dp/model.h"
#include "gnn/model_impl.h"
#include "tape/model_tape.h"
#include "test.h"

static uint64_t rng = 99;
static double urand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) * 0x1.0p-53;
}

/* A random connected graph of n groups with features in Driple-like ranges scaled by `scale`. */
static struct dp_grouped *rand_graph(int n, double scale) {
    int want = n > 1 ? n - 1 + n / 2 : 0, m = 0;
    int *e = malloc(((size_t)want + 1) * 2 * sizeof *e);
    for (int i = 1; i < n; i++) {
        e[2 * m] = (int)(urand() * i);
        e[2 * m + 1] = i;
        m++;
    }
    for (int k = n - 1; k < want; k++) {
        int i = (int)(urand() * n), j = (int)(urand() * n), dup = 0;
        if (i == j) continue;
        if (i > j) { int tmp = i; i = j; j = tmp; }
        for (int q = 0; q < m && !dup; q++) dup = e[2 * q] == i && e[2 * q + 1] == j;
        if (dup) continue;
        e[2 * m] = i;
        e[2 * m + 1] = j;
        m++;
    }
    struct dp_grouped *g = dp_grouped_init("rand", n, m);
    memcpy(g->edges, e, (size_t)m * 2 * sizeof *e);
    free(e);
    for (int i = 0; i < n; i++) {
        g->x[3 * i] = scale * urand();
        g->x[3 * i + 1] = 1 + 20 * urand();
        g->x[3 * i + 2] = 3 * urand();
    }
    return g;
}

static bool small_gru = true;
static int small_heads = 2, small_towers = 2;

static struct dp_model *small_model(enum dp_layer layer, int hidden, int layers, uint64_t seed) {
    struct dp_arch a;
    dp_arch_default(&a);
    a.gru = small_gru;
    a.layer = layer;
    a.hidden = hidden;
    a.rule = DP_RULE_FIXED;
    a.n_layers = layers;
    a.heads = small_heads;
    a.towers = small_towers;
    a.set2set_steps = 3;
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    CHECK(dp_model_init(&a, seed, &m, &err) == DP_OK);
    /* init biases too, so that every path is exercised */
    for (int i = 0; i < dp_model_n_params(m); i++) {
        struct dp_param p;
        dp_model_param(m, i, &p);
        for (size_t k = 0; k < p.size; k++)
            if (p.data[k] == 0) p.data[k] = (float)(0.2 * (urand() - 0.5));
    }
    return m;
}

static double max_rel(const float *a, const float *b, size_t n) {
    double d = 0, mb = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (!(e <= d)) d = e;
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
    }
    return d / (mb > 1e-6 ? mb : 1e-6);
}

static void test_arch(void) {
    struct dp_arch a;
    dp_arch_default(&a);
    struct dp_error err = {0};
    CHECK(dp_arch_check(&a, &err) == DP_OK);
    CHECK(dp_arch_n_layers(&a, 100) == 50 && dp_arch_n_layers(&a, 3) == 1 &&
          dp_arch_n_layers(&a, 1) == 1 && dp_arch_n_layers(&a, 37) == 18);
    a.rule = DP_RULE_N;
    CHECK(dp_arch_n_layers(&a, 5) == 5);
    a.rule = DP_RULE_LOG2;
    CHECK(dp_arch_n_layers(&a, 100) == 6 && dp_arch_n_layers(&a, 1) == 1);
    a.rule = DP_RULE_FIXED;
    a.n_layers = 7;
    CHECK(dp_arch_n_layers(&a, 100) == 7);
    a.rule = DP_RULE_HALF;
    a.max_layers = 10;
    CHECK(dp_arch_n_layers(&a, 100) == 10);
    enum dp_layer l;
    enum dp_layer_rule r;
    enum dp_feat f;
    CHECK(dp_layer_parse("gat", &l) && l == DP_LAYER_GAT && !strcmp(dp_layer_name(l), "gat"));
    CHECK(!dp_layer_parse("sage", &l));
    CHECK(dp_layer_rule_parse("log2", &r) && r == DP_RULE_LOG2);
    CHECK(dp_feat_parse("log", &f) && f == DP_FEAT_LOG && !strcmp(dp_feat_name(f), "log"));
    CHECK(dp_output_find("gpu_util.active") == 4 && dp_output_find("nope") == -1);
    dp_arch_default(&a);
    a.hidden = 0;
    CHECK(dp_arch_check(&a, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "hidden");
    dp_arch_default(&a);
    a.layer = DP_LAYER_GAT;
    a.heads = 5;
    CHECK(dp_arch_check(&a, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "heads");
    dp_arch_default(&a);
    a.feat = DP_FEAT_LOG;
    a.feat_std[1] = 0;
    CHECK(dp_arch_check(&a, &err) == DP_ERR_INVALID);
}

static void test_params(void) {
    struct dp_arch a;
    dp_arch_default(&a);
    struct dp_model *m1 = NULL, *m2 = NULL, *m3 = NULL;
    struct dp_error err = {0};
    CHECK(dp_model_init(&a, 1, &m1, &err) == DP_OK);
    CHECK(dp_model_init(&a, 1, &m2, &err) == DP_OK);
    CHECK(dp_model_init(&a, 2, &m3, &err) == DP_OK);
    CHECK(dp_model_n_params(m1) == 18);
    CHECK(dp_model_find_param(m1, "conv_layers.0.W") == 0);
    CHECK(dp_model_find_param(m1, "graph_read_out.mlp.fully_connected.2.linear.bias") == 17);
    CHECK(dp_model_find_param(m1, "gru.gru.weight_hh_l0") >= 0);
    struct dp_param p1, p2, p3;
    int wi = dp_model_find_param(m1, "gru.gru.weight_ih_l0");
    dp_model_param(m1, wi, &p1);
    dp_model_param(m2, wi, &p2);
    dp_model_param(m3, wi, &p3);
    CHECK(p1.n_dims == 2 && p1.shape[0] == 192 && p1.shape[1] == 64 && p1.size == 192 * 64);
    CHECK(memcmp(p1.data, p2.data, p1.size * sizeof(float)) == 0);  /* seeded */
    CHECK(memcmp(p1.data, p3.data, p1.size * sizeof(float)) != 0);
    double bound = 1.0 / 8.0, mx = 0;
    for (size_t k = 0; k < p1.size; k++) mx = fabs(p1.data[k]) > mx ? fabs(p1.data[k]) : mx;
    CHECK(mx <= bound && mx > 0.9 * bound); /* PyTorch's GRU init: U(-1/sqrt(H), 1/sqrt(H)) */
    float buf[64] = {0};
    int64_t shape[2] = {64, 0};
    CHECK(dp_model_set_param(m1, "conv_layers.0.b", 1, shape, buf, &err) == DP_OK);
    CHECK(dp_model_set_param(m1, "conv_layers.9.b", 1, shape, buf, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "conv_layers.9.b");
    shape[0] = 32;
    CHECK(dp_model_set_param(m1, "conv_layers.0.b", 1, shape, buf, &err) == DP_ERR_SHAPE);
    CHECK_CONTAINS(err.msg, "[32], expected [64]");
    shape[0] = 64;
    buf[5] = NAN;
    CHECK(dp_model_set_param(m1, "conv_layers.0.b", 1, shape, buf, &err) == DP_ERR_INVALID);
    struct dp_model *c = dp_model_clone(m1);
    CHECK(c && memcmp(dp_model_arch(c), dp_model_arch(m1), sizeof(struct dp_arch)) == 0);
    dp_model_free(c);
    dp_model_free(m1);
    dp_model_free(m2);
    dp_model_free(m3);
    dp_model_free(NULL);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_json_errors(void) {
    struct dp_error err = {0};
    struct dp_model *m = NULL;
    CHECK(dp_model_load_torch_json_new("build/no/such/file.json", &m, &err) == DP_ERR_IO);
    char path[700];
    snprintf(path, sizeof path, "%s/test_model_XXXXXX", test_dir());
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    write_file(path, "{\"params\": {\"conv_layers.0.W\": {\"shape\": [3, 64], \"data\": [1, 2");
    CHECK(dp_model_load_torch_json_new(path, &m, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, path);
    write_file(path, "{\"params\": {\"conv_layers.0.W\": {\"shape\": [3, 64], \"data\": [1, 2]}}}");
    CHECK(dp_model_load_torch_json_new(path, &m, &err) == DP_ERR_SHAPE);
    CHECK_CONTAINS(err.msg, "conv_layers.0.W");
    write_file(path, "{\"params\": {\"conv_layers.0.b\": {\"shape\": [2], \"data\": [1, \"x\"]}}}");
    struct dp_arch a;
    dp_arch_default(&a);
    struct dp_model *base = NULL;
    CHECK(dp_model_init(&a, 3, &base, &err) == DP_OK);
    struct dp_model *copy = dp_model_clone(base);
    CHECK(dp_model_load_torch_json(copy, path, &err) != DP_OK);
    CHECK(memcmp(copy->data, base->data, base->n_data * sizeof(float)) == 0); /* untouched */
    write_file(path, "{\"params\": {}}");
    CHECK(dp_model_load_torch_json(copy, path, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "missing parameter");
    write_file(path, "{\"architecture\": {\"layer\": \"sage\"}, \"params\": {}}");
    CHECK(dp_model_load_torch_json_new(path, &m, &err) == DP_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "$.architecture.layer");
    write_file(path, "[1, 2]");
    CHECK(dp_model_load_torch_json_new(path, &m, &err) != DP_OK);
    CHECK(m == NULL);
    /* A shape whose element count wraps size_t (2^64 -> 0) must not match an empty data array. */
    write_file(path, "{\"params\": {\"conv_layers.0.W\": {\"shape\": [65536, 65536, 65536, "
                     "65536], \"data\": []}}}");
    CHECK(dp_model_load_torch_json(copy, path, &err) == DP_ERR_SHAPE);
    CHECK_CONTAINS(err.msg, "$.params[\"conv_layers.0.W\"].shape: more than");
    /* A dimension beyond int64_t (read while inferring the architecture) is an error, not an
     * undefined cast; one beyond int is not truncated into a plausible hidden size. */
    write_file(path, "{\"params\": {\"graph_read_out.set2set.lstm.weight_hh_l0\": "
                     "{\"shape\": [256, 1e300], \"data\": []}}}");
    CHECK(dp_model_load_torch_json_new(path, &m, &err) != DP_OK);
    CHECK(m == NULL);
    write_file(path, "{\"params\": {\"conv_layers.0.W\": {\"shape\": [3, 4294967304], "
                     "\"data\": []}}}");
    CHECK(dp_model_load_torch_json(copy, path, &err) == DP_ERR_SHAPE);
    CHECK_CONTAINS(err.msg, "shape[1]: not an integer in [1, 100000000]");
    remove(path);
    dp_model_free(copy);
    dp_model_free(base);
}

/* Fast engine vs tape: outputs, embeddings, parameter gradients, input gradients. */
static void test_fast_vs_tape(enum dp_layer layer, int hidden, bool gru, int n) {
    small_gru = gru;
    struct dp_model *m = small_model(layer, hidden, 3, 5);
    small_gru = true;
    const int E = 2 * hidden;
    struct dp_grouped *g = rand_graph(n, 1.0);
    struct dp_error err = {0};
    float of[DP_N_OUTPUTS], ot[DP_N_OUTPUTS], ef[256], et[256];
    CHECK(dp_model_predict(m, g, of, &err) == DP_OK);
    CHECK(dp_tape_predict(m, g, et, ot, &err) == DP_OK);
    CHECK(dp_model_embed(m, g, ef, &err) == DP_OK);
    CHECK(max_rel(of, ot, DP_N_OUTPUTS) < 1e-4);
    CHECK(max_rel(ef, et, (size_t)E) < 1e-4);
    /* parameter gradients of sum w . out */
    float w[DP_N_OUTPUTS];
    for (int o = 0; o < DP_N_OUTPUTS; o++) w[o] = (float)(urand() - 0.5);
    const int P = dp_model_n_params(m);
    float *gf = calloc(m->n_data, sizeof *gf), *gt = calloc(m->n_data, sizeof *gt);
    float *tf[DP_MODEL_MAX_PARAMS], *tt[DP_MODEL_MAX_PARAMS];
    for (int i = 0; i < P; i++) {
        tf[i] = gf + m->p[i].off;
        tt[i] = gt + m->p[i].off;
    }
    struct dp_fx_batch b;
    struct dp_fx_work wk;
    memset(&wk, 0, sizeof wk);
    const struct dp_grouped *gs[1] = {g};
    CHECK(dp_fx_batch_build(m, gs, 1, &b, &err) == DP_OK);
    CHECK((b.dense_off[0] >= 0) == (n >= 20)); /* which aggregation this case exercises */
    CHECK(dp_fx_forward(m, &b, &wk, true, NULL, of, &err) == DP_OK);
    float *dx = calloc((size_t)g->n_groups * 3, sizeof *dx);
    CHECK(dp_fx_backward(m, &b, &wk, w, tf, true, dx, &err) == DP_OK);
    CHECK(dp_tape_grad(m, g, ot, w, NULL, 0, tt, &err) == DP_OK);
    double worst = 0;
    for (int i = 0; i < P; i++) {
        double e = max_rel(tf[i], tt[i], m->p[i].size);
        if (e > 1e-3) fprintf(stderr, "%s: grad %s: fast vs tape rel %.3g\n",
                              dp_layer_name(layer), m->p[i].name, e);
        CHECK(e <= 1e-3);
        worst = e > worst ? e : worst;
    }
    /* input gradient: public entry (fast) vs tape */
    double *gi = calloc((size_t)g->n_groups * 3, sizeof *gi);
    float *dt = calloc((size_t)g->n_groups * 3, sizeof *dt);
    CHECK(dp_model_input_grad(m, g, w, gi, NULL, &err) == DP_OK);
    CHECK(dp_tape_input_grad(m, g, w, dt, NULL, &err) == DP_OK);
    float *gif = calloc((size_t)g->n_groups * 3, sizeof *gif);
    for (int k = 0; k < g->n_groups * 3; k++) gif[k] = (float)gi[k];
    CHECK(max_rel(gif, dt, (size_t)g->n_groups * 3) < 1e-3);
    CHECK(max_rel(dx, dt, (size_t)g->n_groups * 3) < 1e-3);
    printf("  %s hidden %d gru %s, %d groups: fast vs tape: outputs %.2g, worst param grad %.2g\n",
           dp_layer_name(layer), hidden, gru ? "on" : "off", n, max_rel(of, ot, DP_N_OUTPUTS),
           worst);
    dp_fx_work_free(&wk);
    dp_fx_batch_free(&b);
    free(gf);
    free(gt);
    free(dx);
    free(gi);
    free(dt);
    free(gif);
    dp_grouped_free(g);
    dp_model_free(m);
}

/* GAT and MPNN forward: the fast engine (public entry points, and a batch of several graphs of
 * one size) against the tape, graph by graph, within 1e-5 relative; the last graph's features
 * are 100x wider (far wider ones make float32 attention scores ill-conditioned for any two
 * summation orders). heads_towers sets both. */
static void test_fast_forward_vs_tape(enum dp_layer layer, int hidden, int heads_towers, bool gru,
                                      int layers) {
    small_gru = gru;
    small_heads = small_towers = heads_towers;
    struct dp_model *m = small_model(layer, hidden, layers, 17);
    small_gru = true;
    small_heads = small_towers = 2;
    const int E = 2 * hidden, sizes[] = {1, 2, 9, 9, 9, 20, 33};
    enum { N = sizeof sizes / sizeof sizes[0], SAME0 = 2, SAME = 3 };
    struct dp_grouped *g[N];
    struct dp_error err = {0};
    float ot[N][DP_N_OUTPUTS], et[N][256];
    double worst = 0;
    for (int k = 0; k < N; k++) {
        g[k] = rand_graph(sizes[k], k == N - 1 ? 1e2 : 1.0);
        float of[DP_N_OUTPUTS], ef[256];
        CHECK(dp_tape_predict(m, g[k], et[k], ot[k], &err) == DP_OK);
        CHECK(dp_model_predict(m, g[k], of, &err) == DP_OK);
        CHECK(dp_model_embed(m, g[k], ef, &err) == DP_OK);
        double e = max_rel(of, ot[k], DP_N_OUTPUTS), ee = max_rel(ef, et[k], (size_t)E);
        if (e > 1e-5 || ee > 1e-5)
            fprintf(stderr, "%s: %d groups: fast vs tape rel outputs %.3g, embedding %.3g\n",
                    dp_layer_name(layer), sizes[k], e, ee);
        CHECK(e <= 1e-5 && ee <= 1e-5);
        worst = e > worst ? e : worst;
        worst = ee > worst ? ee : worst;
    }
    /* the graphs of one size stacked into one batch give each graph's own result */
    struct dp_fx_batch b;
    struct dp_fx_work wk;
    memset(&wk, 0, sizeof wk);
    CHECK(dp_fx_batch_build(m, (const struct dp_grouped *const *)&g[SAME0], SAME, &b, &err) ==
          DP_OK);
    float ob[SAME * DP_N_OUTPUTS], eb[SAME * 256];
    CHECK(dp_fx_forward(m, &b, &wk, false, eb, ob, &err) == DP_OK);
    for (int k = 0; k < SAME; k++) {
        CHECK(max_rel(ob + k * DP_N_OUTPUTS, ot[SAME0 + k], DP_N_OUTPUTS) <= 1e-5);
        CHECK(max_rel(eb + k * E, et[SAME0 + k], (size_t)E) <= 1e-5);
    }
    printf("  %s hidden %d, %d %s(s), gru %s, %d layers: fast vs tape forward: worst %.2g\n",
           dp_layer_name(layer), hidden, heads_towers, layer == DP_LAYER_GAT ? "head" : "tower",
           gru ? "on" : "off", layers, worst);
    dp_fx_work_free(&wk);
    dp_fx_batch_free(&b);
    for (int k = 0; k < N; k++) dp_grouped_free(g[k]);
    dp_model_free(m);
}

static double wsum(const struct dp_model *m, const struct dp_grouped *g, const float *w) {
    float o[DP_N_OUTPUTS];
    struct dp_error err = {0};
    CHECK(dp_model_predict(m, g, o, &err) == DP_OK);
    double s = 0;
    for (int k = 0; k < DP_N_OUTPUTS; k++) s += (double)w[k] * o[k];
    return s;
}

/* GAT and MPNN: input gradients (fast engine) and the tape's parameter gradients against finite
 * differences (the fast engine's parameter gradients are checked against the tape's). */
static void test_tape_layers_fd(enum dp_layer layer) {
    struct dp_model *m = small_model(layer, 8, 2, 11);
    struct dp_grouped *g = rand_graph(6, 1.0);
    struct dp_error err = {0};
    float w[DP_N_OUTPUTS];
    for (int o = 0; o < DP_N_OUTPUTS; o++) w[o] = (float)(urand() - 0.5);
    double gx[18];
    CHECK(dp_model_input_grad(m, g, w, gx, NULL, &err) == DP_OK);
    double worst = 0;
    for (int k = 0; k < 18; k++) {
        double x = g->x[k], h = 1e-2 * (fabs(x) > 1 ? fabs(x) : 1);
        g->x[k] = x + h;
        double lp = wsum(m, g, w);
        g->x[k] = x - h;
        double lm = wsum(m, g, w);
        g->x[k] = x;
        double fd = (lp - lm) / (2 * h), e = fabs(fd - gx[k]) / (1e-2 + fabs(fd));
        worst = e > worst ? e : worst;
    }
    CHECK(worst < 2e-2);
    /* a few entries of every parameter */
    float *gr = calloc(m->n_data, sizeof *gr);
    float *tab[DP_MODEL_MAX_PARAMS];
    for (int i = 0; i < m->n_params; i++) tab[i] = gr + m->p[i].off;
    float out[DP_N_OUTPUTS];
    CHECK(dp_tape_grad(m, g, out, w, NULL, 0, tab, &err) == DP_OK);
    double worst_p = 0;
    int kinks = 0, checked = 0;
    for (int i = 0; i < m->n_params; i++) {
        float *d = dp_model_pdata(m, i);
        for (size_t k = 0; k < m->p[i].size; k += 1 + m->p[i].size / 3) {
            float x = d[k];
            double fds[2];
            for (int r = 0; r < 2; r++) { /* two step sizes: disagreement means a ReLU kink */
                const float h = r ? 2e-3f : 4e-3f;
                d[k] = x + h;
                double lp = wsum(m, g, w);
                d[k] = x - h;
                double lm = wsum(m, g, w);
                d[k] = x;
                fds[r] = (lp - lm) / (2 * h);
            }
            if (fabs(fds[0] - fds[1]) > 0.02 * (1e-2 + fabs(fds[1]))) {
                kinks++;
                continue;
            }
            double fd = fds[1], e = fabs(fd - tab[i][k]) / (1e-2 + fabs(fd));
            if (e > 2e-2) fprintf(stderr, "%s: %s[%zu]: analytic %g numeric %g\n",
                                  dp_layer_name(layer), m->p[i].name, k, tab[i][k], fd);
            worst_p = e > worst_p ? e : worst_p;
            checked++;
        }
    }
    CHECK(worst_p < 2e-2);
    CHECK(kinks * 5 < checked);
    printf("  %s: input grad vs FD %.2g, param grad vs FD %.2g (%d entries, %d at kinks)\n",
           dp_layer_name(layer), worst, worst_p, checked, kinks);
    free(gr);
    dp_grouped_free(g);
    dp_model_free(m);
}

/* A batch of mixed sizes equals the mean of single-graph losses; training lowers the loss. */
static void test_training(enum dp_layer layer) {
    struct dp_arch a;
    dp_arch_default(&a);
    a.layer = layer;
    a.hidden = 16;
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    CHECK(dp_model_init(&a, 7, &m, &err) == DP_OK);
    enum { B = 8 };
    struct dp_grouped *gs[B];
    float tg[B * DP_N_OUTPUTS];
    for (int k = 0; k < B; k++) {
        gs[k] = rand_graph(k % 2 ? 6 : 9, 1.0);
        for (int o = 0; o < DP_N_OUTPUTS; o++) tg[k * DP_N_OUTPUTS + o] = (float)urand();
    }
    float all = 0, one, sum = 0;
    CHECK(dp_model_loss(m, (const struct dp_grouped *const *)gs, B, tg, &all, &err) == DP_OK);
    for (int k = 0; k < B; k++) {
        CHECK(dp_model_loss(m, (const struct dp_grouped *const *)&gs[k], 1,
                            tg + k * DP_N_OUTPUTS, &one, &err) == DP_OK);
        sum += one / B;
    }
    CHECK_NEAR(all, sum, 1e-5 * (1 + sum));
    struct dp_trainer *t = NULL;
    struct dp_adam_opts o;
    dp_adam_default(&o);
    o.lr = 0.01f;
    CHECK(dp_trainer_init(m, DP_TRAIN_FULL, &o, &t, &err) == DP_OK);
    float first = 0, last = 0;
    for (int s = 0; s < 40; s++) {
        float l;
        CHECK(dp_trainer_step(t, (const struct dp_grouped *const *)gs, B, tg, true, &l, &err) ==
              DP_OK);
        if (s == 0) first = l;
        last = l;
    }
    printf("  %s: training loss %.4f -> %.4f over 40 steps\n", dp_layer_name(layer), first, last);
    CHECK(last < 0.7 * first);
    CHECK(first == first && fabs(first - all) < 1e-5 * (1 + all));
    dp_trainer_free(t);
    for (int k = 0; k < B; k++) dp_grouped_free(gs[k]);
    dp_model_free(m);
}

/* Head-only training: only the head moves; step_head on cached embeddings agrees with step. */
static void test_head(void) {
    struct dp_model *m = small_model(DP_LAYER_GCN, 16, 2, 21);
    struct dp_model *m2 = dp_model_clone(m);
    struct dp_error err = {0};
    enum { B = 4 };
    struct dp_grouped *gs[B];
    float tg[B * DP_N_OUTPUTS], emb[B * 32];
    for (int k = 0; k < B; k++) {
        gs[k] = rand_graph(7, 1.0);
        for (int o = 0; o < DP_N_OUTPUTS; o++) tg[k * DP_N_OUTPUTS + o] = (float)urand();
        CHECK(dp_model_embed(m, gs[k], emb + k * 32, &err) == DP_OK);
    }
    struct dp_trainer *t1 = NULL, *t2 = NULL;
    struct dp_adam_opts o;
    dp_adam_default(&o);
    CHECK(dp_trainer_init(m, DP_TRAIN_HEAD, &o, &t1, &err) == DP_OK);
    CHECK(dp_trainer_init(m2, DP_TRAIN_HEAD, &o, &t2, &err) == DP_OK);
    float l1, l2;
    CHECK(dp_trainer_step(t1, (const struct dp_grouped *const *)gs, B, tg, true, &l1, &err) == 0);
    CHECK(dp_trainer_step_head(t2, emb, B, tg, true, &l2, &err) == DP_OK);
    CHECK_NEAR(l1, l2, 1e-6);
    CHECK(dp_trainer_grad(t1, 0) == NULL); /* conv_layers.0.W is frozen */
    int hb = dp_model_find_param(m, "graph_read_out.mlp.fully_connected.0.linear.weight");
    CHECK(dp_trainer_grad(t1, hb) != NULL);
    CHECK(max_rel(m->data, m2->data, m->n_data) < 1e-5);
    /* head+last: the head, the reused layer and the GRU learn; layer 0 and Set2Set do not */
    struct dp_trainer *t3 = NULL;
    CHECK(dp_trainer_init(m, DP_TRAIN_HEAD_LAST, &o, &t3, &err) == DP_OK);
    CHECK(dp_trainer_step(t3, (const struct dp_grouped *const *)gs, B, tg, false, &l1, &err) == 0);
    CHECK(dp_trainer_grad(t3, dp_model_find_param(m, "conv_layers.0.W")) == NULL);
    CHECK(dp_trainer_grad(t3, dp_model_find_param(m, "graph_read_out.set2set.lstm.bias_ih_l0")) ==
          NULL);
    const float *g1 = dp_trainer_grad(t3, dp_model_find_param(m, "conv_layers.1.W"));
    const float *g2 = dp_trainer_grad(t3, dp_model_find_param(m, "gru.gru.weight_hh_l0"));
    CHECK(g1 && g2);
    double n1 = 0, n2 = 0;
    for (int k = 0; g1 && g2 && k < 16 * 16; k++) {
        n1 += fabs(g1[k]);
        n2 += fabs(g2[k]);
    }
    CHECK(n1 > 0 && n2 > 0);
    dp_trainer_free(t3);
    struct dp_adam_opts bad = o;
    bad.lr = -1;
    CHECK(dp_trainer_init(m, DP_TRAIN_FULL, &bad, &t3, &err) == DP_ERR_INVALID);
    dp_trainer_free(t1);
    dp_trainer_free(t2);
    for (int k = 0; k < B; k++) dp_grouped_free(gs[k]);
    dp_model_free(m);
    dp_model_free(m2);
}

/* The log feature transform: input gradients are with respect to the raw features. */
static void test_log_features(void) {
    struct dp_arch a;
    dp_arch_default(&a);
    a.hidden = 8;
    a.rule = DP_RULE_FIXED;
    a.n_layers = 2;
    a.feat = DP_FEAT_LOG;
    a.feat_mean[0] = 10;
    a.feat_std[0] = 3;
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    CHECK(dp_model_init(&a, 4, &m, &err) == DP_OK);
    struct dp_grouped *g = rand_graph(5, 1e6);
    float w[DP_N_OUTPUTS];
    for (int o = 0; o < DP_N_OUTPUTS; o++) w[o] = (float)(urand() - 0.5);
    double gx[15];
    CHECK(dp_model_input_grad(m, g, w, gx, NULL, &err) == DP_OK);
    double worst = 0;
    for (int k = 0; k < 15; k++) {
        double x = g->x[k], h = 1e-2 * (fabs(x) > 1 ? fabs(x) : 1);
        g->x[k] = x + h;
        double lp = wsum(m, g, w);
        g->x[k] = x - h;
        double lm = wsum(m, g, w);
        g->x[k] = x;
        double fd = (lp - lm) / (2 * h);
        double e = fabs(fd - gx[k]) / (1e-6 + fabs(fd) + fabs(gx[k]));
        worst = e > worst ? e : worst;
    }
    printf("  log features: input grad vs FD %.2g\n", worst);
    CHECK(worst < 3e-2);
    dp_grouped_free(g);
    dp_model_free(m);
}

struct thread_arg {
    const struct dp_model   *m;
    const struct dp_grouped *g;
    float                    out[DP_N_OUTPUTS];
};
static void *predict_thread(void *p) {
    struct thread_arg *a = p;
    struct dp_error err = {0};
    for (int r = 0; r < 5; r++) dp_model_predict(a->m, a->g, a->out, &err);
    return NULL;
}

static void test_threads(void) {
    struct dp_arch a;
    dp_arch_default(&a);
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    CHECK(dp_model_init(&a, 8, &m, &err) == DP_OK);
    struct dp_grouped *g = rand_graph(40, 1e5);
    float ref[DP_N_OUTPUTS];
    CHECK(dp_model_predict(m, g, ref, &err) == DP_OK);
    struct thread_arg ta[2] = {{m, g, {0}}, {m, g, {0}}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, predict_thread, &ta[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(memcmp(ta[0].out, ref, sizeof ref) == 0 && memcmp(ta[1].out, ref, sizeof ref) == 0);
    /* bad graphs are errors, not crashes */
    struct dp_grouped *bad = dp_grouped_init("bad", 3, 1);
    bad->edges[0] = 0;
    bad->edges[1] = 7;
    CHECK(dp_model_predict(m, bad, ref, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "edge 0");
    bad->edges[1] = 1;
    bad->x[4] = NAN;
    CHECK(dp_model_predict(m, bad, ref, &err) == DP_ERR_INVALID);
    struct dp_grouped *empty = dp_grouped_init("empty", 0, 0);
    CHECK(dp_model_predict(m, empty, ref, &err) == DP_ERR_SHAPE);
    dp_grouped_free(empty);
    dp_grouped_free(bad);
    dp_grouped_free(g);
    dp_model_free(m);
}

/* Batched and single products agree bit for bit on the own kernels (every row's arithmetic is
 * the same in a stack); OpenBLAS (DRIPLE_KERNELS=openblas, or auto where its table picks it)
 * blocks a product by its row count, so there they agree to float rounding (1e-5 of the
 * largest value). */
static bool same_floats(const float *a, const float *b, size_t n) {
    if (!strcmp(dp_kernels_backend(), "own")) return !memcmp(a, b, n * sizeof *a);
    float scale = 1;
    for (size_t i = 0; i < n; i++) scale = fmaxf(scale, fabsf(b[i]));
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(a[i] - b[i]) <= 1e-5f * scale)) return false;
    return true;
}

/* Batched calls (dp_model_*_batch) against single ones, at 1 to 3 engine threads: the same
 * values bit for bit (every row's arithmetic is the same in a stack and whoever does it), for
 * graphs of mixed sizes given out of size order; a training step's loss and gradients are the
 * same at every thread count too; a bad graph fails the batch, named. */
static void test_batch(enum dp_layer layer) {
    struct dp_arch a;
    dp_arch_default(&a);
    a.layer = layer;
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    CHECK(dp_model_init(&a, 21, &m, &err) == DP_OK);
    enum { N = 11 };
    static const int sizes[N] = {30, 7, 30, 12, 30, 7, 1, 30, 12, 30, 30};
    struct dp_grouped *g[N];
    for (int i = 0; i < N; i++) g[i] = rand_graph(sizes[i], 1e5);
    const int E = dp_model_embed_size(m);
    float *ref = malloc((size_t)N * DP_N_OUTPUTS * sizeof *ref);
    float *eref = malloc((size_t)N * E * sizeof *eref);
    float *out = malloc((size_t)N * DP_N_OUTPUTS * sizeof *out), *emb = malloc((size_t)N * E * 4);
    dp_threads_set(1);
    for (int i = 0; i < N; i++) {
        CHECK(dp_model_predict(m, g[i], ref + (size_t)i * DP_N_OUTPUTS, &err) == DP_OK);
        CHECK(dp_model_embed(m, g[i], eref + (size_t)i * E, &err) == DP_OK);
    }
    float *targets = malloc((size_t)N * DP_N_OUTPUTS * sizeof *targets);
    for (int i = 0; i < N * DP_N_OUTPUTS; i++) targets[i] = (float)urand();
    float loss_ref = 0, *grad_ref = NULL;
    for (int t = 1; t <= 3; t++) {
        dp_threads_set(t);
        for (int i = 0; i < N; i++) { /* single predictions split rows over t threads */
            CHECK(dp_model_predict(m, g[i], out, &err) == DP_OK);
            CHECK(!memcmp(out, ref + (size_t)i * DP_N_OUTPUTS, DP_N_OUTPUTS * sizeof *out));
        }
        memset(out, 0, (size_t)N * DP_N_OUTPUTS * sizeof *out);
        CHECK(dp_model_predict_batch(m, (const struct dp_grouped *const *)g, N, out, &err) ==
              DP_OK);
        CHECK(same_floats(out, ref, (size_t)N * DP_N_OUTPUTS));
        CHECK(dp_model_embed_batch(m, (const struct dp_grouped *const *)g, N, emb, &err) == DP_OK);
        CHECK(same_floats(emb, eref, (size_t)N * E));
        CHECK(dp_model_head_batch(m, eref, N, out) == DP_OK);
        for (int i = 0; i < N; i++) {
            float one[DP_N_OUTPUTS];
            dp_model_head(m, eref + (size_t)i * E, one);
            CHECK(same_floats(out + (size_t)i * DP_N_OUTPUTS, one, DP_N_OUTPUTS));
        }
        /* a training step (no Adam step): loss and every gradient */
        struct dp_model *mc = dp_model_clone(m);
        struct dp_trainer *tr = NULL;
        struct dp_adam_opts ad;
        dp_adam_default(&ad);
        CHECK(dp_trainer_init(mc, DP_TRAIN_FULL, &ad, &tr, &err) == DP_OK);
        float loss = 0;
        CHECK(dp_trainer_step(tr, (const struct dp_grouped *const *)g, N, targets, false, &loss,
                              &err) == DP_OK);
        size_t total = 0;
        for (int i = 0; i < dp_model_n_params(mc); i++) {
            struct dp_param p;
            dp_model_param(mc, i, &p);
            total += p.size;
        }
        float *gcat = malloc(total * sizeof *gcat);
        for (int i = 0, at = 0; i < dp_model_n_params(mc); i++) {
            struct dp_param p;
            dp_model_param(mc, i, &p);
            memcpy(gcat + at, dp_trainer_grad(tr, i), p.size * sizeof *gcat);
            at += (int)p.size;
        }
        if (t == 1) {
            loss_ref = loss;
            grad_ref = gcat;
        } else {
            CHECK(loss == loss_ref && !memcmp(gcat, grad_ref, total * sizeof *gcat));
            free(gcat);
        }
        dp_trainer_free(tr);
        dp_model_free(mc);
    }
    /* a bad graph among good ones fails the batch, named */
    g[3]->x[1] = NAN;
    CHECK(dp_model_predict_batch(m, (const struct dp_grouped *const *)g, N, out, &err) ==
          DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "feature 1 is not finite");
    CHECK(dp_model_predict_batch(m, (const struct dp_grouped *const *)g, 0, out, &err) ==
          DP_ERR_INVALID);
    printf("  %s: %d graphs batched = single, 1-3 threads (%s products), training step too\n",
           dp_layer_name(layer), N, dp_kernels_backend());
    dp_threads_set(2);
    for (int i = 0; i < N; i++) dp_grouped_free(g[i]);
    free(ref), free(eref), free(out), free(emb), free(targets), free(grad_ref);
    dp_model_free(m);
}

/* A graph whose layer and step counts (published rules: N/2 and N) would cost minutes is refused
 * at once, naming its size; the group count an inspector is made for is fine. */
static void test_too_many_groups(void) {
    struct dp_arch a;
    dp_arch_default(&a);
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    CHECK(dp_model_init(&a, 1, &m, &err) == DP_OK);
    struct dp_grouped *big = dp_grouped_init("big", 9000, 8999);
    for (int i = 0; i < 8999; i++) {
        big->edges[2 * i] = i;
        big->edges[2 * i + 1] = i + 1;
    }
    for (int k = 0; k < 9000 * DP_N_FEATURES; k++) big->x[k] = 1.0f;
    float out[DP_N_OUTPUTS];
    CHECK(dp_model_predict(m, big, out, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "big: 9000 groups need 4500 graph layers and 9000 Set2Set steps");
    struct dp_grouped *g = rand_graph(100, 1.0);
    CHECK(dp_model_predict(m, g, out, &err) == DP_OK);
    dp_grouped_free(g);
    dp_grouped_free(big);
    dp_model_free(m);
}

int main(void) {
    test_too_many_groups();
    test_arch();
    test_params();
    test_json_errors();
    printf("fast engine vs tape:\n");
    test_fast_vs_tape(DP_LAYER_GCN, 16, true, 9);
    test_fast_vs_tape(DP_LAYER_GIN, 16, true, 9);
    test_fast_vs_tape(DP_LAYER_GCN, 20, true, 9);  /* a width that is not a multiple of 16 */
    test_fast_vs_tape(DP_LAYER_GIN, 36, true, 9);
    test_fast_vs_tape(DP_LAYER_GCN, 16, false, 9); /* no GRU */
    test_fast_vs_tape(DP_LAYER_GIN, 8, false, 9);
    test_fast_vs_tape(DP_LAYER_GCN, 16, true, 20); /* dense enough for the GEMM aggregation */
    test_fast_vs_tape(DP_LAYER_GIN, 16, true, 20);
    printf("GAT, MPNN vs finite differences:\n");
    test_tape_layers_fd(DP_LAYER_GAT);
    test_tape_layers_fd(DP_LAYER_MPNN);
    printf("fast engine vs tape (GAT, MPNN):\n");
    test_fast_vs_tape(DP_LAYER_GAT, 16, true, 9);
    test_fast_vs_tape(DP_LAYER_MPNN, 16, true, 9);
    test_fast_vs_tape(DP_LAYER_GAT, 20, false, 20);
    test_fast_vs_tape(DP_LAYER_GAT, 36, true, 20);  /* 18 per head: a SIMD block and a tail */
    test_fast_vs_tape(DP_LAYER_MPNN, 36, false, 20);
    test_fast_forward_vs_tape(DP_LAYER_GAT, 16, 2, true, 3);
    test_fast_forward_vs_tape(DP_LAYER_GAT, 20, 4, true, 3);  /* not a multiple of 16 */
    test_fast_forward_vs_tape(DP_LAYER_GAT, 16, 1, false, 3); /* no GRU, one head */
    test_fast_forward_vs_tape(DP_LAYER_GAT, 8, 8, true, 1);   /* one feature per head */
    test_fast_forward_vs_tape(DP_LAYER_MPNN, 16, 2, true, 3);
    test_fast_forward_vs_tape(DP_LAYER_MPNN, 36, 4, true, 3);
    test_fast_forward_vs_tape(DP_LAYER_MPNN, 16, 1, false, 3);
    test_fast_forward_vs_tape(DP_LAYER_MPNN, 24, 8, true, 1); /* 82 parameters: the most */
    test_fast_forward_vs_tape(DP_LAYER_GAT, 64, 4, true, 12);  /* the default width, deeper */
    test_fast_forward_vs_tape(DP_LAYER_MPNN, 64, 4, true, 12);
    printf("training:\n");
    test_training(DP_LAYER_GCN);
    test_training(DP_LAYER_GIN);
    test_training(DP_LAYER_GAT);
    test_training(DP_LAYER_MPNN);
    test_head();
    test_log_features();
    test_threads();
    printf("batches and engine threads:\n");
    for (int l = 0; l < DP_LAYER_COUNT; l++) test_batch((enum dp_layer)l);
    TEST_MAIN_END();
}
