/* zoo_nmt.c: the recurrent and relative-attention models of NVIDIA DeepLearningExamples
 * (PyTorch) that the published calibration runs measure: GNMT v2 (4+4 LSTM layers of 1024, the
 * first encoder layer bidirectional, normalised Bahdanau attention, shared embeddings) and
 * Transformer-XL base (WikiText-103: 16 layers, d 512, 8 heads, segments of 192 tokens with 192
 * remembered, one softmax over the 267,735 words tied to the embedding, as the published runs
 * train it). Written with the builder's TF-style ops:
 * an LSTM layer is one input projection for every step plus, per step, the recurrent product and
 * the gates (the work cuDNN's LSTM does). */
#include <math.h>
#include <stdio.h>

#include "zoo/zoo_layers.h"
#include "zoo_models.h"

#define MAX_STEPS 512

/* One LSTM layer over x [B, T, in] as PyTorch's nn.LSTM holds it (weight_ih, weight_hh and two
 * biases); reverse walks the steps backwards (a bidirectional layer's second direction).
 * Returns the hidden states [B, T, hidden]. */
static int lstm_layer(struct zb *b, const char *name, int x, int64_t hidden, bool reverse) {
    zb_push(b, "%s", name);
    int64_t in = zb_dim(b, x, -1), n = zb_dim(b, x, 1);
    if (n < 1 || n > MAX_STEPS) {
        zb_pop(b);
        return zb_fail(b, DP_ERR_INVALID, "%s: %lld steps (1..%d)", name, (long long)n,
                       MAX_STEPS);
    }
    int64_t wih[2] = {in, 4 * hidden}, whh[2] = {hidden, 4 * hidden}, bd = 4 * hidden;
    int w_ih = zb_variable(b, "weight_ih", 2, wih, "normal", true);
    int w_hh = zb_variable(b, "weight_hh", 2, whh, "normal", true);
    int b_ih = zb_variable(b, "bias_ih", 1, &bd, "zeros", true);
    int b_hh = zb_variable(b, "bias_hh", 1, &bd, "zeros", true);
    int xp = zb_bias_add(b, zb_bias_add(b, zb_matmul(b, x, w_ih, false, false), b_ih), b_hh);
    int steps[MAX_STEPS], outs[MAX_STEPS];
    zb_unstack(b, xp, (int)n, 1, steps);
    int64_t hd[2] = {DP_DIM_BATCH, hidden};
    int h = zb_const(b, "h0", 2, hd, zb_compute_dtype(b));
    int c = zb_const(b, "c0", 2, hd, zb_compute_dtype(b));
    for (int k = 0; k < (int)n; k++) {
        int t = reverse ? (int)n - 1 - k : k, gates[4];
        zb_push(b, "step_%d", t);
        int z = zb_binary(b, "AddV2", steps[t], zb_matmul(b, h, w_hh, false, false));
        zb_split(b, z, 4, 1, gates);
        int i = zb_unary(b, "Sigmoid", gates[0]), f = zb_unary(b, "Sigmoid", gates[1]);
        int g = zb_unary(b, "Tanh", gates[2]), o = zb_unary(b, "Sigmoid", gates[3]);
        c = zb_binary(b, "AddV2", zb_binary(b, "Mul", f, c), zb_binary(b, "Mul", i, g));
        h = zb_binary(b, "Mul", o, zb_unary(b, "Tanh", c));
        outs[t] = h;
        zb_pop(b);
    }
    int y = zb_stack(b, outs, (int)n, 1);
    zb_pop(b);
    return y;
}

static int concat2(struct zb *b, int x, int y) {
    int xs[2] = {x, y};
    return zb_concat(b, xs, 2, -1);
}

/* Normalised Bahdanau attention of queries q [B, T, U] over keys/values k [B, S, U]: scores
 * v . tanh(Wq q + Wk k + bias) for every (t, s) pair at once, as DeepLearningExamples computes
 * them ([B, T, S, U]), softmax over s, the weighted keys. Returns the context [B, T, U]. */
static int bahdanau(struct zb *b, int q, int k) {
    zb_push(b, "attention");
    int64_t u = zb_dim(b, q, -1), t = zb_dim(b, q, 1), s = zb_dim(b, k, 1);
    int64_t wd[2] = {u, u}, vd[2] = {u, 1}, one = 1;
    int wq = zb_variable(b, "linear_q", 2, wd, "normal", true);
    int wk = zb_variable(b, "linear_k", 2, wd, "normal", true);
    int v = zb_variable(b, "linear_att", 2, vd, "normal", true);
    int nb = zb_variable(b, "normalize_bias", 1, &u, "zeros", true);
    int ns = zb_variable(b, "normalize_scalar", 1, &one, "ones", true);
    int64_t q4[4] = {DP_DIM_BATCH, t, 1, u}, k4[4] = {DP_DIM_BATCH, 1, s, u};
    int pq = zb_reshape(b, zb_matmul(b, q, wq, false, false), 4, q4);
    int pk = zb_reshape(b, zb_matmul(b, k, wk, false, false), 4, k4);
    int sum = zb_binary(b, "AddV2", zb_binary(b, "AddV2", pq, pk), nb);
    int64_t sd[3] = {DP_DIM_BATCH, t, s};
    int score = zb_matmul(b, zb_unary(b, "Tanh", sum), zb_binary(b, "Mul", v, ns), false, false);
    int p = zb_softmax(b, zb_reshape(b, score, 3, sd));
    int ctx = zb_matmul(b, p, k, false, false);
    zb_pop(b);
    return ctx;
}

int zoo_gnmt(struct zb *b, int64_t seq) {
    const int64_t vocab = 32320, h = 1024; /* 32,000 BPE merges + specials, padded to 8 */
    const double drop = 0.2;
    int labels;
    int src = zoo_token_input(b, seq, &labels);
    int64_t td[2] = {DP_DIM_BATCH, seq};
    int tgt = zb_input_extra(b, src, 2, td, DP_DTYPE_I32);
    zb_push(b, "gnmt");
    int64_t ed[2] = {vocab, h};
    int emb = zb_variable(b, "embedding", 2, ed, "normal", true); /* shared by both sides */
    zb_push(b, "encoder");
    int x = zb_dropout(b, zb_gather(b, emb, src), drop);
    x = concat2(b, lstm_layer(b, "rnn_0_fw", x, h, false), lstm_layer(b, "rnn_0_bw", x, h, true));
    x = lstm_layer(b, "rnn_1", zb_dropout(b, x, drop), h, false);
    for (int l = 2; l < 4; l++) {
        char nm[32];
        snprintf(nm, sizeof nm, "rnn_%d", l);
        x = zb_binary(b, "AddV2", lstm_layer(b, nm, zb_dropout(b, x, drop), h, false), x);
    }
    int enc = x;
    zb_pop(b);
    zb_push(b, "decoder");
    int y = zb_dropout(b, zb_gather(b, emb, tgt), drop);
    y = lstm_layer(b, "att_rnn", y, h, false);
    int ctx = bahdanau(b, y, enc);
    y = lstm_layer(b, "rnn_1", zb_dropout(b, concat2(b, y, ctx), drop), h, false);
    for (int l = 2; l < 4; l++) {
        char nm[32];
        snprintf(nm, sizeof nm, "rnn_%d", l);
        y = zb_binary(b, "AddV2",
                      lstm_layer(b, nm, zb_dropout(b, concat2(b, y, ctx), drop), h, false), y);
    }
    int logits = zb_dense(b, "classifier", y, (int)vocab, NULL);
    zb_pop(b);
    int loss = zb_xent_loss(b, logits, labels, true);
    zb_pop(b);
    return loss;
}

/* Transformer-XL's relative multi-head attention over the segment h [B, T, d] and the memory
 * mem [B, M, d] (DeepLearningExamples' RelPartialLearnableMultiHeadAttn, post-norm): q from
 * the segment, k and v from memory + segment, scores = (q + r_w_bias) k' + shift((q + r_r_bias)
 * r'), r the projected relative positions pos [K, d]. */
static int rel_attention(struct zb *b, int h, int mem, int pos, int mask, int r_w, int r_r,
                         int heads) {
    zb_push(b, "attn");
    int64_t d = zb_dim(b, h, -1), t = zb_dim(b, h, 1), m = zb_dim(b, mem, 1), k = t + m;
    int64_t dh = d / heads, hd = heads * dh;
    int64_t qkv_d[2] = {d, 3 * hd}, o_d[2] = {hd, d}, r_d[2] = {d, hd};
    int w_qkv = zb_variable(b, "qkv_net", 2, qkv_d, "normal", true);
    int w_o = zb_variable(b, "o_net", 2, o_d, "normal", true);
    int w_r = zb_variable(b, "r_net", 2, r_d, "normal", true);
    int cat[2] = {mem, h}, parts[3];
    int heads_all = zb_matmul(b, zb_concat(b, cat, 2, 1), w_qkv, false, false);
    zb_split(b, heads_all, 3, -1, parts);
    static const int perm[4] = {0, 2, 1, 3};
    int64_t q4[4] = {DP_DIM_BATCH, t, heads, dh}, k4[4] = {DP_DIM_BATCH, k, heads, dh};
    int q = zb_reshape(b, zb_slice(b, parts[0], 1, m, t), 4, q4);
    int kk = zb_transpose(b, zb_reshape(b, parts[1], 4, k4), perm);
    int v = zb_transpose(b, zb_reshape(b, parts[2], 4, k4), perm);
    int64_t r3[3] = {k, heads, dh}, r4[4] = {1, heads, k, dh};
    static const int rperm[3] = {1, 0, 2};
    int r = zb_transpose(b, zb_reshape(b, zb_matmul(b, pos, w_r, false, false), 3, r3), rperm);
    r = zb_reshape(b, r, 4, r4);
    int ac = zb_matmul(b, zb_transpose(b, zb_binary(b, "AddV2", q, r_w), perm), kk, false, true);
    int bd = zb_matmul(b, zb_transpose(b, zb_binary(b, "AddV2", q, r_r), perm), r, false, true);
    /* The relative shift: a zero column in front, viewed as [K + 1, T], its first row dropped. */
    int64_t zd[4] = {DP_DIM_BATCH, heads, t, 1}, v4[4] = {DP_DIM_BATCH, heads, k + 1, t};
    int64_t s4[4] = {DP_DIM_BATCH, heads, t, k};
    int pad[2] = {zb_const(b, "zero_pad", 4, zd, zb_compute_dtype(b)), bd};
    bd = zb_reshape(b, zb_concat(b, pad, 2, 3), 4, v4);
    bd = zb_reshape(b, zb_slice(b, bd, 2, 1, k), 4, s4);
    int score = zb_binary(b, "Mul", zb_binary(b, "AddV2", ac, bd),
                          zb_const(b, "scale", 0, NULL, zb_compute_dtype(b)));
    int p = zb_softmax(b, zb_binary(b, "AddV2", score, mask));
    int64_t od[3] = {DP_DIM_BATCH, t, hd};
    int vec = zb_reshape(b, zb_transpose(b, zb_matmul(b, p, v, false, false), perm), 3, od);
    int out = zb_dropout(b, zb_matmul(b, vec, w_o, false, false), 0.1);
    zb_pop(b);
    return zb_layer_norm(b, "attn_norm", zb_binary(b, "AddV2", h, out));
}

int zoo_transformer_xl_base(struct zb *b, int64_t seq) {
    const int64_t vocab = 267735, d = 512, mem_len = 192;
    const int layers = 16, heads = 8, inner = 2048;
    int labels;
    int ids = zoo_token_input(b, seq, &labels);
    zb_push(b, "transformer_xl");
    int64_t ed[2] = {vocab, d}, k = seq + mem_len, pd[2] = {k, d}, md[2] = {seq, k};
    int64_t bias_d[2] = {heads, d / heads}, memd[3] = {DP_DIM_BATCH, mem_len, d};
    int emb = zb_variable(b, "word_emb", 2, ed, "normal", true);
    int r_w = zb_variable(b, "r_w_bias", 2, bias_d, "zeros", true);
    int r_r = zb_variable(b, "r_r_bias", 2, bias_d, "zeros", true);
    int h = zb_binary(b, "Mul", zb_gather(b, emb, ids),
                      zb_const(b, "emb_scale", 0, NULL, zb_compute_dtype(b)));
    h = zb_dropout(b, h, 0.1);
    int pos = zb_dropout(b, zb_const(b, "pos_emb", 2, pd, zb_compute_dtype(b)), 0.1);
    int mask = zb_const(b, "attn_mask", 2, md, zb_compute_dtype(b));
    for (int l = 0; l < layers; l++) {
        zb_push(b, "layer_%d", l);
        /* The memory: the previous segment's input to this layer, kept without gradient. */
        int mem = zb_opaque(b, "Snapshot", &h, 1, 3, memd, zb_compute_dtype(b));
        h = rel_attention(b, h, mem, pos, mask, r_w, r_r, heads);
        zb_push(b, "ff");
        int f = zb_dense(b, "core_1", h, inner, "Relu");
        f = zb_dropout(b, zb_dense(b, "core_2", zb_dropout(b, f, 0.1), (int)d, NULL), 0.1);
        zb_pop(b);
        h = zb_layer_norm(b, "ff_norm", zb_binary(b, "AddV2", h, f));
        zb_pop(b);
    }
    h = zb_dropout(b, h, 0.1);
    zb_push(b, "crit");
    /* One softmax over the whole vocabulary, its weights tied to the embedding: train.py
     * without --adaptive (its default), as the published benchmark runs call it (their logs
     * print adaptive=False, div_val=1 and 191,948,759 parameters). */
    int logits = zb_bias_add(b, zb_matmul(b, h, emb, false, true),
                             zb_variable(b, "out_bias", 1, &vocab, "zeros", true));
    int loss = zb_xent_loss(b, logits, labels, true);
    zb_pop(b);
    zb_pop(b);
    return loss;
}
