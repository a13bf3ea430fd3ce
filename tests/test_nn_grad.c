/* test_nn_grad.c: the autograd tape: every op's backward against central finite differences
 * ((f(x+eps) - f(x-eps)) / 2eps of sum w . out, as ggml's grad mode), tiny hand-computed
 * forwards, and the op name table. */
#include <stdbool.h>
#include <stdint.h>

#include "tape/nn.h"
#include "dp/status.h"
#include "test.h"

static uint64_t rng = 0x12345678u;
static float frand(void) { /* uniform in [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 23) - 1.0);
}

/* A 4-node graph: 0-1, 1-2, 1-3 (CSR without self loops, GCN values). */
static const int adj_ptr[5] = {0, 1, 4, 5, 6};
static const int adj_col[6] = {1, 0, 2, 3, 1, 1};
static float adj_val[6], adj_self[4];
static struct dp_nn_adj adj = {4, adj_ptr, adj_col, adj_val, adj_self};
static const int seg_off[3] = {0, 3, 4};
static struct dp_nn_seg seg2 = {2, seg_off};
static const int idx5[5] = {3, 0, 1, 1, 2};

static void init_adj(void) {
    for (int i = 0; i < 4; i++) {
        float di = (float)(1 + adj_ptr[i + 1] - adj_ptr[i]);
        adj_self[i] = 1.0f / di;
        for (int p = adj_ptr[i]; p < adj_ptr[i + 1]; p++) {
            int j = adj_col[p];
            float dj = (float)(1 + adj_ptr[j + 1] - adj_ptr[j]);
            adj_val[p] = 1.0f / sqrtf(di * dj);
        }
    }
}

typedef struct dp_tensor *(*build_fn)(struct dp_ctx *ctx, struct dp_tensor **in);

static double weighted(const struct dp_tensor *out, const float *w) {
    double s = 0;
    for (int i = 0; i < out->rows * out->cols; i++) s += (double)w[i] * out->data[i];
    return s;
}

/* Checks d(sum w . out)/d in[k] for every input element. */
static void grad_check(const char *name, int n_in, const int *rows, const int *cols, build_fn f,
                       bool away_from_zero) {
    struct dp_ctx *ctx = dp_ctx_init(1 << 16);
    struct dp_tensor *in[4];
    for (int k = 0; k < n_in; k++) {
        in[k] = dp_tensor_new(ctx, rows[k], cols[k]);
        in[k]->requires_grad = true;
        for (int i = 0; i < rows[k] * cols[k]; i++) {
            float v = frand();
            if (away_from_zero) v = v < 0 ? v - 0.1f : v + 0.1f;
            in[k]->data[i] = v;
        }
    }
    struct dp_tensor *out = f(ctx, in);
    dp_nn_forward(ctx);
    float w[512];
    CHECK(out->rows * out->cols <= 512);
    for (int i = 0; i < out->rows * out->cols; i++) w[i] = frand();
    dp_nn_backward(ctx, out, w);
    const float eps = 1e-2f;
    double worst = 0;
    for (int k = 0; k < n_in; k++)
        for (int i = 0; in[k]->requires_grad && i < rows[k] * cols[k]; i++) {
            float x = in[k]->data[i];
            in[k]->data[i] = x + eps;
            dp_nn_invalidate(ctx);
            dp_nn_forward(ctx);
            double lp = weighted(out, w);
            in[k]->data[i] = x - eps;
            dp_nn_invalidate(ctx);
            dp_nn_forward(ctx);
            double lm = weighted(out, w);
            in[k]->data[i] = x;
            double fd = (lp - lm) / (2.0 * eps), an = in[k]->grad[i];
            double e = fabs(fd - an) / (1.0 + fabs(fd));
            if (e > worst) worst = e;
            if (e > 5e-3)
                fprintf(stderr, "%s: input %d element %d: analytic %.6g, numeric %.6g\n", name, k,
                        i, an, fd);
            CHECK(e <= 5e-3);
        }
    CHECK(!dp_ctx_failed(ctx));
    printf("  %-12s grad ok (worst rel diff %.2g)\n", name, worst);
    dp_ctx_free(ctx);
}

static struct dp_tensor *b_matmul(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_matmul(c, in[0], in[1], false);
}
static struct dp_tensor *b_matmul_t(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_matmul(c, in[0], in[1], true);
}
static struct dp_tensor *b_add(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_add(c, in[0], in[1]);
}
static struct dp_tensor *b_bias(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_add_bias(c, in[0], in[1]);
}
static struct dp_tensor *b_mul(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_mul(c, in[0], in[1]);
}
static struct dp_tensor *b_sigmoid(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_sigmoid(c, in[0]);
}
static struct dp_tensor *b_tanh(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_tanh(c, in[0]);
}
static struct dp_tensor *b_relu(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_relu(c, in[0]);
}
static struct dp_tensor *b_leaky(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_leaky_relu(c, in[0], 0.01f);
}
static struct dp_tensor *b_gcn(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_agg_gcn(c, in[0], &adj);
}
static struct dp_tensor *b_gin(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_agg_gin(c, in[0], in[1], &adj);
}
static struct dp_tensor *b_softmax(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_softmax_seg(c, in[0], &seg2);
}
static struct dp_tensor *b_concat(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_concat(c, in[0], in[1]);
}
static struct dp_tensor *b_slice(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_slice(c, in[0], 1, 2);
}
static struct dp_tensor *b_gat(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_gat(c, in[0], in[1], in[2], &adj);
}
static struct dp_tensor *b_gather(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_gather(c, in[0], idx5, 5);
}
static struct dp_tensor *b_scatter(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_scatter_add(c, in[0], idx5, 4);
}
static struct dp_tensor *b_lstm(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_lstm(c, in[0], in[1]);
}
static struct dp_tensor *b_gru(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_gru(c, in[0], in[1], in[2]);
}
static struct dp_tensor *b_seg_dot(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_seg_dot(c, in[0], in[1], &seg2);
}
static struct dp_tensor *b_seg_wsum(struct dp_ctx *c, struct dp_tensor **in) {
    return dp_seg_wsum(c, in[0], in[1], &seg2);
}
static struct dp_tensor *b_mse(struct dp_ctx *c, struct dp_tensor **in) {
    in[1]->requires_grad = false; /* the target takes no gradient */
    return dp_mse(c, in[0], in[1]);
}
/* a composition: one GCN layer + GRU, as the model uses them */
static struct dp_tensor *b_layer(struct dp_ctx *c, struct dp_tensor **in) {
    struct dp_tensor *y = dp_leaky_relu(c, dp_agg_gcn(c, dp_matmul(c, in[0], in[1], false), &adj),
                                        0.01f);
    struct dp_tensor *gi = dp_matmul(c, in[0], in[2], true);
    struct dp_tensor *gh = dp_matmul(c, y, in[3], true);
    return dp_gru(c, gi, gh, y);
}

static void hand_forwards(void) {
    struct dp_ctx *ctx = dp_ctx_init(4096);
    float A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8};
    struct dp_tensor *a = dp_tensor_wrap(ctx, 2, 2, A, false);
    struct dp_tensor *b = dp_tensor_wrap(ctx, 2, 2, B, false);
    struct dp_tensor *ab = dp_matmul(ctx, a, b, false), *abt = dp_matmul(ctx, a, b, true);
    /* a 2-node graph 0-1: Â = [[1/2, 1/2], [1/2, 1/2]] */
    static const int p2[3] = {0, 1, 2}, c2[2] = {1, 0};
    static const float v2[2] = {0.5f, 0.5f}, s2[2] = {0.5f, 0.5f};
    static const struct dp_nn_adj adj2 = {2, p2, c2, v2, s2};
    struct dp_tensor *agg = dp_agg_gcn(ctx, a, &adj2);
    float E[1] = {0.5f};
    struct dp_tensor *eps = dp_tensor_wrap(ctx, 1, 1, E, false);
    struct dp_tensor *gin = dp_agg_gin(ctx, a, eps, &adj2);
    float X[3] = {0, 0, logf(2.0f)};
    static const int off1[2] = {0, 3};
    static const struct dp_nn_seg seg1 = {1, off1};
    struct dp_tensor *sm = dp_softmax_seg(ctx, dp_tensor_wrap(ctx, 3, 1, X, false), &seg1);
    float G[4] = {0, 0, 0, 0}, C[1] = {2.0f};
    struct dp_tensor *lstm = dp_lstm(ctx, dp_tensor_wrap(ctx, 1, 4, G, false),
                                     dp_tensor_wrap(ctx, 1, 1, C, false));
    float T[4] = {1, 1, 1, 1};
    struct dp_tensor *mse = dp_mse(ctx, a, dp_tensor_wrap(ctx, 2, 2, T, false));
    /* GAT with zero attention vectors: uniform weights over self and neighbour */
    float Z[2] = {0, 0};
    struct dp_tensor *za = dp_tensor_wrap(ctx, 1, 2, Z, false);
    struct dp_tensor *gat = dp_gat(ctx, a, za, za, &adj2);
    /* GRU with zero gates: r = z = 1/2, n = tanh(0) = 0, out = h / 2 */
    float Q[3] = {0, 0, 0}, Hh[1] = {3.0f};
    struct dp_tensor *q3 = dp_tensor_wrap(ctx, 1, 3, Q, false);
    struct dp_tensor *gru = dp_gru(ctx, q3, q3, dp_tensor_wrap(ctx, 1, 1, Hh, false));
    dp_nn_forward(ctx);
    CHECK_NEAR(gat->data[0], 2.0, 1e-6); /* (1 + 3) / 2 */
    CHECK_NEAR(gat->data[3], 3.0, 1e-6);
    CHECK_NEAR(gru->data[0], 1.5, 1e-6);
    CHECK(ab->data[0] == 19 && ab->data[1] == 22 && ab->data[2] == 43 && ab->data[3] == 50);
    CHECK(abt->data[0] == 17 && abt->data[1] == 23 && abt->data[2] == 39 && abt->data[3] == 53);
    CHECK_NEAR(agg->data[0], 2.0, 1e-6);  /* (1 + 3) / 2 */
    CHECK_NEAR(agg->data[3], 3.0, 1e-6);  /* (2 + 4) / 2 */
    CHECK_NEAR(gin->data[0], 4.5, 1e-6);  /* 1.5 * 1 + 3 */
    CHECK_NEAR(gin->data[3], 8.0, 1e-6);  /* 1.5 * 4 + 2 */
    CHECK_NEAR(sm->data[0], 0.25, 1e-6);
    CHECK_NEAR(sm->data[2], 0.5, 1e-6);
    CHECK_NEAR(lstm->data[1], 1.0, 1e-6);  /* c = 0.5 * 2 + 0.5 * 0 */
    CHECK_NEAR(lstm->data[0], 0.5 * tanh(1.0), 1e-6);
    CHECK_NEAR(mse->data[0], (0 + 1 + 4 + 9) / 4.0, 1e-6);
    CHECK(!dp_ctx_failed(ctx));
    dp_ctx_free(ctx);
}

int main(void) {
    init_adj();
    for (int op = 0; op < DP_OP_COUNT; op++) CHECK(strcmp(dp_op_name((enum dp_op)op), "?") != 0);
    CHECK(!strcmp(dp_op_name(DP_OP_MATMUL), "matmul") && !strcmp(dp_op_name(DP_OP_COUNT), "?"));
    hand_forwards();
    {   int r[2] = {3, 4}, c[2] = {4, 5}; grad_check("matmul", 2, r, c, b_matmul, false); }
    {   int r[2] = {3, 5}, c[2] = {4, 4}; grad_check("matmul_t", 2, r, c, b_matmul_t, false); }
    {   int r[2] = {3, 3}, c[2] = {4, 4}; grad_check("add", 2, r, c, b_add, false); }
    {   int r[2] = {3, 1}, c[2] = {4, 4}; grad_check("add_bias", 2, r, c, b_bias, false); }
    {   int r[2] = {3, 3}, c[2] = {4, 4}; grad_check("mul", 2, r, c, b_mul, false); }
    {   int r[1] = {3}, c[1] = {4}; grad_check("sigmoid", 1, r, c, b_sigmoid, false); }
    {   int r[1] = {3}, c[1] = {4}; grad_check("tanh", 1, r, c, b_tanh, false); }
    {   int r[1] = {3}, c[1] = {4}; grad_check("relu", 1, r, c, b_relu, true); }
    {   int r[1] = {3}, c[1] = {4}; grad_check("leaky_relu", 1, r, c, b_leaky, true); }
    {   int r[1] = {4}, c[1] = {3}; grad_check("agg_gcn", 1, r, c, b_gcn, false); }
    {   int r[2] = {4, 1}, c[2] = {3, 1}; grad_check("agg_gin", 2, r, c, b_gin, false); }
    {   int r[1] = {4}, c[1] = {1}; grad_check("softmax_seg", 1, r, c, b_softmax, false); }
    {   int r[2] = {3, 3}, c[2] = {2, 3}; grad_check("concat", 2, r, c, b_concat, false); }
    {   int r[1] = {3}, c[1] = {4}; grad_check("slice", 1, r, c, b_slice, false); }
    {   int r[3] = {4, 2, 2}, c[3] = {6, 3, 3}; grad_check("gat", 3, r, c, b_gat, false); }
    {   int r[1] = {4}, c[1] = {3}; grad_check("gather", 1, r, c, b_gather, false); }
    {   int r[1] = {5}, c[1] = {3}; grad_check("scatter_add", 1, r, c, b_scatter, false); }
    {   int r[2] = {2, 2}, c[2] = {12, 3}; grad_check("lstm", 2, r, c, b_lstm, false); }
    {   int r[3] = {2, 2, 2}, c[3] = {9, 9, 3}; grad_check("gru", 3, r, c, b_gru, false); }
    {   int r[2] = {4, 2}, c[2] = {3, 3}; grad_check("seg_dot", 2, r, c, b_seg_dot, false); }
    {   int r[2] = {4, 4}, c[2] = {1, 3}; grad_check("seg_wsum", 2, r, c, b_seg_wsum, false); }
    {   int r[2] = {2, 2}, c[2] = {3, 3}; grad_check("mse", 2, r, c, b_mse, false); }
    {   int r[4] = {4, 3, 9, 9}, c[4] = {3, 3, 3, 3}; grad_check("gcn+gru", 4, r, c, b_layer, false); }
    TEST_MAIN_END();
}
