/* gen_seq.c: generated token and patch models: transformers (BERT-like encoders, GPT-like
 * decoders, encoder-decoders, ViT-like vision encoders, Swin-like hierarchical window-attention
 * encoders), LSTM/GRU models (language models and classifiers), MLPs and MLP-Mixers. Attention,
 * feed-forward, embeddings and recurrent layers are the zoo's (zoo_layers.h), so a generated
 * BERT-like encoder has the ops of the zoo's BERT. */
#include "zoo/gen_impl.h"

#define DROP 0.1

/* Token ids [B, seq] with labels [B] (a classifier) or [B, seq] (a language model). */
static int tokens(struct zb *b, int64_t seq, bool per_token, int *labels) {
    if (per_token) return zoo_token_input(b, seq, labels);
    int64_t d[2] = {DP_DIM_BATCH, seq}, l[1] = {DP_DIM_BATCH};
    return zb_input(b, 2, d, DP_DTYPE_I32, 1, l, labels, false);
}

/* x + dropout(y). */
static int residual(struct zb *b, int x, int y) {
    return zb_binary(b, "AddV2", x, zb_dropout(b, y, DROP));
}

/* One transformer layer: self-attention (masked when mask >= 0), cross-attention over mem when
 * mem >= 0, feed-forward; LayerNorm before each sub-block (pre-norm) or after its residual. */
static int tf_layer(struct zb *b, const struct dp_gen_transformer *t, int x, int mask, int mem) {
    static const char *const ln[3] = {"ln_1", "ln_2", "ln_3"};
    int subs = mem >= 0 ? 3 : 2;
    for (int k = 0; k < subs; k++) {
        int in = t->pre_norm ? zb_layer_norm(b, ln[k], x) : x, y;
        if (k == subs - 1) y = zoo_ffn(b, "ffn", in, t->inner, t->gelu, DROP);
        else if (k == 0) y = zoo_attention(b, "attention", in, in, t->heads, mask, t->fused_qkv, DROP);
        else y = zoo_attention(b, "cross_attention", in, mem, t->heads, -1, false, DROP);
        x = residual(b, x, y);
        if (!t->pre_norm) x = zb_layer_norm(b, ln[k], x);
    }
    return x;
}

static int tf_stack(struct zb *b, const struct dp_gen_transformer *t, const char *name, int x,
                    int layers, int mask, int mem) {
    zb_push(b, "%s", name);
    for (int l = 0; l < layers; l++) {
        zb_push(b, "layer_%d", l);
        x = tf_layer(b, t, x, mask, mem);
        zb_pop(b);
    }
    if (t->pre_norm) x = zb_layer_norm(b, "LayerNorm", x);
    zb_pop(b);
    return x;
}

/* Word embeddings plus learned positions (a table of seq rows read at constant ids). */
static int embed_learned(struct zb *b, int table, int ids, int64_t seq, int64_t d) {
    int64_t pd[2] = {seq, d};
    int pos = zb_variable(b, "position_embeddings", 2, pd, "normal", true);
    int pos_ids = zb_const(b, "position_ids", 1, &seq, DP_DTYPE_I32);
    return zb_binary(b, "AddV2", zb_gather(b, table, ids), zb_gather(b, pos, pos_ids));
}

/* Logits of h against the (tied) embedding table, plus a bias when with_bias. */
static int tied_logits(struct zb *b, int h, int table, int vocab, bool with_bias) {
    int y = zb_matmul(b, h, table, false, true);
    int64_t v = vocab;
    return with_bias ? zb_bias_add(b, y, zb_variable(b, "output_bias", 1, &v, "zeros", true)) : y;
}

/* Image patches of side p as tokens [B, (side/p)^2, d] (a p x p / p convolution with bias). */
static int patches(struct zb *b, int x, int64_t side, int p, int d) {
    int64_t n = side / p, td[3] = {DP_DIM_BATCH, n * n, d};
    x = zb_conv_layer(b, "patch_embed", x, d, p, p, false, false, NULL);
    if (zb_nchw(b)) {
        static const int to_nhwc[4] = {0, 2, 3, 1};
        x = zb_transpose(b, x, to_nhwc);
    }
    return zb_reshape(b, x, 3, td);
}

/* The mean over tokens, a classifier and the loss. */
static int token_mean_head(struct zb *b, int x, int classes, int labels) {
    x = zb_reduce(b, "Mean", x, 0x2u, false);
    return zb_xent_loss(b, zb_dense(b, "head", x, classes, NULL), labels, false);
}

/* torch.roll of x [B, side, side, c] along both spatial axes so that position `start` comes
 * first, as an export writes it: two slices and a concatenation per axis. */
static int roll(struct zb *b, int x, int64_t side, int64_t start) {
    for (int axis = 1; axis <= 2; axis++) {
        int parts[2] = {zb_slice(b, x, axis, start, side - start), zb_slice(b, x, axis, 0, start)};
        x = zb_concat(b, parts, 2, axis);
    }
    return x;
}

/* Window attention over x [B, side, side, c] as torchvision's shifted_window_attention exports
 * it: the windows of w x w tokens as a batch of B x windows (shifted by `shift` first, and the
 * scores across the shift's seams masked), q, k and v gathered from one projection, the
 * relative-position bias gathered from its table by a constant index. The gathers' gradients
 * (UnsortedSegmentSum) and the partition's copies are what no other generated model has. */
static int window_attention(struct zb *b, int x, int64_t side, int64_t c, int64_t heads,
                            int64_t w, int64_t shift) {
    int64_t nw = (side / w) * (side / w), n = w * w, bw = ZB_DIM_BATCH_TIMES(nw);
    static const int part[6] = {0, 1, 3, 2, 4, 5}, qkv_perm[5] = {2, 0, 3, 1, 4};
    static const int hnn[3] = {2, 0, 1}, merge[4] = {0, 2, 1, 3};
    int64_t pd[6] = {DP_DIM_BATCH, side / w, w, side / w, w, c}, wd[3] = {bw, n, c};
    int64_t qd[5] = {bw, n, 3, heads, c / heads}, hd[4] = {bw, heads, n, c / heads};
    int64_t td[2] = {(2 * w - 1) * (2 * w - 1), heads}, nn = n * n, rd[3] = {n, n, heads};
    int64_t bd[4] = {1, heads, n, n}, sd[5] = {DP_DIM_BATCH, nw, heads, n, n};
    int64_t md[5] = {1, nw, 1, n, n}, sc[4] = {bw, heads, n, n};
    int64_t ud[6] = {DP_DIM_BATCH, side / w, side / w, w, w, c};
    int64_t xd[4] = {DP_DIM_BATCH, side, side, c};
    zb_push(b, "attn");
    if (shift) x = roll(b, x, side, shift);
    x = zb_reshape(b, zb_transpose(b, zb_reshape(b, x, 6, pd), part), 3, wd);
    int qkv = zb_transpose(b, zb_reshape(b, zb_dense(b, "qkv", x, 3 * (int)c, NULL), 5, qd),
                           qkv_perm);
    int qkv_k[3];
    for (int k = 0; k < 3; k++) {
        int idx = zb_const(b, "index", 0, NULL, DP_DTYPE_I32);
        qkv_k[k] = zb_copy(b, "GatherV2", qkv, &idx, 1, 4, hd);
    }
    int q = zb_binary(b, "Mul", qkv_k[0], zb_const(b, "scale", 0, NULL, zb_compute_dtype(b)));
    int s = zb_matmul(b, q, qkv_k[1], false, true);
    int table = zb_variable(b, "relative_position_bias_table", 2, td, "normal", true);
    int rel = zb_gather(b, table, zb_const(b, "relative_position_index", 1, &nn, DP_DTYPE_I32));
    rel = zb_reshape(b, zb_transpose(b, zb_reshape(b, rel, 3, rd), hnn), 4, bd);
    s = zb_binary(b, "AddV2", s, rel);
    if (shift) {
        int mask = zb_const(b, "attn_mask", 5, md, zb_compute_dtype(b));
        s = zb_reshape(b, zb_binary(b, "AddV2", zb_reshape(b, s, 5, sd), mask), 4, sc);
    }
    int o = zb_matmul(b, zb_softmax(b, s), qkv_k[2], false, false);
    o = zb_dense(b, "proj", zb_reshape(b, zb_transpose(b, o, merge), 3, wd), (int)c, NULL);
    x = zb_reshape(b, zb_transpose(b, zb_reshape(b, o, 6, ud), part), 4, xd);
    if (shift) x = roll(b, x, side, side - shift);
    zb_pop(b);
    return x;
}

/* Patch merging: the four 2 x 2 interleaved quarters of x [B, side, side, c] (strided slices),
 * concatenated, LayerNorm, a linear map to 2c without bias. */
static int patch_merge(struct zb *b, int x, int64_t side, int64_t c) {
    int64_t hd[4] = {DP_DIM_BATCH, side / 2, side / 2, c}, rd[2] = {4 * c, 2 * c};
    int q[4];
    zb_push(b, "downsample");
    for (int k = 0; k < 4; k++) q[k] = zb_copy(b, "StridedSlice", x, NULL, 0, 4, hd);
    x = zb_layer_norm(b, "norm", zb_concat(b, q, 4, 3));
    x = zb_matmul(b, x, zb_variable(b, "reduction", 2, rd, "normal", true), false, false);
    zb_pop(b);
    return x;
}

/* A Swin-like classifier: patch embedding, stages of window-attention blocks (every second one
 * shifted while the map is wider than a window) with patch merging between them, LayerNorm,
 * the mean over positions, a classifier. */
static int swin(struct zb *b, const struct dp_gen_transformer *t) {
    static const int to_nhwc[4] = {0, 2, 3, 1};
    int labels;
    int64_t side = t->seq / t->patch, c = t->d_model, heads = t->heads, w = t->window;
    int inner = t->inner;
    int x = zoo_image_input(b, t->seq, &labels);
    x = zb_conv_layer(b, "patch_embed", x, (int)c, t->patch, t->patch, false, false, NULL);
    if (zb_nchw(b)) x = zb_transpose(b, x, to_nhwc);
    x = zb_layer_norm(b, "patch_norm", x);
    for (int st = 0; st < t->stages; st++) {
        zb_push(b, "stage_%d", st);
        if (st) {
            x = patch_merge(b, x, side, c);
            side /= 2, c *= 2, heads *= 2, inner *= 2;
        }
        for (int l = 0; l < t->stage_layers[st]; l++) {
            zb_push(b, "block_%d", l);
            int64_t shift = l % 2 && w < side ? w / 2 : 0;
            int y = window_attention(b, zb_layer_norm(b, "norm1", x), side, c, heads, w, shift);
            x = zb_binary(b, "AddV2", x, y);
            y = zoo_ffn(b, "mlp", zb_layer_norm(b, "norm2", x), inner, true, 0);
            x = zb_binary(b, "AddV2", x, y);
            zb_pop(b);
        }
        zb_pop(b);
    }
    x = zb_reduce(b, "Mean", zb_layer_norm(b, "norm", x), 0x6u, false);
    return zb_xent_loss(b, zb_dense(b, "head", x, t->classes, NULL), labels, false);
}

int zoo_gen_transformer(struct zb *b, const struct dp_gen_transformer *t) {
    int64_t d = t->d_model, wd[2] = {t->vocab, d};
    int labels, x, loss;
    zb_push(b, "transformer");
    switch (t->variant) {
    case DP_GEN_ENCODER: {
        int ids = tokens(b, t->seq, !t->classes, &labels);
        zb_push(b, "embeddings");
        int word = zb_variable(b, "word_embeddings", 2, wd, "normal", true);
        x = embed_learned(b, word, ids, t->seq, d);
        if (!t->pre_norm) x = zb_layer_norm(b, "LayerNorm", x);
        x = zb_dropout(b, x, DROP);
        zb_pop(b);
        x = tf_stack(b, t, "encoder", x, t->enc_layers, -1, -1);
        if (t->classes) {
            int64_t fd[2] = {DP_DIM_BATCH, d};
            int first = zb_reshape(b, zb_slice(b, x, 1, 0, 1), 2, fd);
            int pooled = zb_dense(b, "pooler", first, (int)d, "Tanh");
            loss = zb_xent_loss(b, zb_dense(b, "classifier", pooled, t->classes, NULL), labels,
                                false);
        } else {
            zb_push(b, "mlm");
            int h = zb_gelu(b, zb_dense(b, "transform", x, (int)d, NULL));
            h = zb_layer_norm(b, "LayerNorm", h);
            loss = zb_xent_loss(b, tied_logits(b, h, word, t->vocab, true), labels, true);
            zb_pop(b);
        }
        break;
    }
    case DP_GEN_DECODER: {
        int ids = tokens(b, t->seq, true, &labels);
        int wte = zb_variable(b, "wte", 2, wd, "normal", true);
        x = zb_dropout(b, embed_learned(b, wte, ids, t->seq, d), DROP);
        x = tf_stack(b, t, "decoder", x, t->dec_layers, zoo_causal_mask(b, t->seq), -1);
        loss = zb_xent_loss(b, tied_logits(b, x, wte, t->vocab, false), labels, true);
        break;
    }
    case DP_GEN_ENCDEC: {
        int src = tokens(b, t->seq, true, &labels);
        int64_t td[2] = {DP_DIM_BATCH, t->seq};
        int tgt = zb_input_extra(b, src, 2, td, DP_DTYPE_I32);
        int src_emb = zb_variable(b, "encoder/w_embs", 2, wd, "normal", true);
        int tgt_emb = zb_variable(b, "decoder/w_embs", 2, wd, "normal", true);
        x = zoo_embed_sinusoid(b, "encoder/embedding", src_emb, src, t->seq, d);
        int mem = tf_stack(b, t, "encoder", x, t->enc_layers, -1, -1);
        int y = zoo_embed_sinusoid(b, "decoder/embedding", tgt_emb, tgt, t->seq, d);
        y = tf_stack(b, t, "decoder", y, t->dec_layers, zoo_causal_mask(b, t->seq), mem);
        loss = zb_xent_loss(b, tied_logits(b, y, tgt_emb, t->vocab, true), labels, true);
        break;
    }
    case DP_GEN_SWIN: loss = swin(b, t); break;
    default: { /* vision */
        x = patches(b, zoo_image_input(b, t->seq, &labels), t->seq, t->patch, (int)d);
        int64_t n = t->seq / t->patch, pd[2] = {n * n, d};
        x = zb_binary(b, "AddV2", x, zb_variable(b, "position_embeddings", 2, pd, "normal", true));
        x = tf_stack(b, t, "encoder", zb_dropout(b, x, DROP), t->enc_layers, -1, -1);
        loss = token_mean_head(b, x, t->classes, labels);
        break;
    }
    }
    zb_pop(b);
    return loss;
}

int zoo_gen_rnn(struct zb *b, const struct dp_gen_rnn *r) {
    int labels, steps[512], n = (int)r->seq;
    if (n < 1 || n > 512) return zb_fail(b, DP_ERR_INVALID, "rnn: %d steps not in [1, 512]", n);
    int ids = tokens(b, r->seq, !r->classes, &labels);
    zb_push(b, "rnn");
    int64_t ed[2] = {r->vocab, r->embed};
    int emb = zb_variable(b, "embedding", 2, ed, "normal", true);
    zb_unstack(b, zb_dropout(b, zb_gather(b, emb, ids), DROP), n, 1, steps);
    int last = -1;
    for (int l = 0; l < r->layers; l++) last = zoo_rnn_layer(b, l, steps, n, r->hidden, r->gru);
    int loss;
    if (r->classes) {
        loss = zb_xent_loss(b, zb_dense(b, "classifier", last, r->classes, NULL), labels, false);
    } else {
        int out = zb_dropout(b, zb_stack(b, steps, n, 1), DROP);
        loss = zb_xent_loss(b, zb_dense(b, "softmax", out, r->vocab, NULL), labels, true);
    }
    zb_pop(b);
    return loss;
}

int zoo_gen_mlp(struct zb *b, const struct dp_gen_mlp *m) {
    int labels;
    int64_t d[2] = {DP_DIM_BATCH, m->input}, l[1] = {DP_DIM_BATCH};
    int x = zb_input(b, 2, d, DP_DTYPE_F32, 1, l, &labels, false);
    zb_push(b, "mlp");
    for (int k = 0; k < m->layers; k++) {
        zb_push(b, "layer_%d", k);
        x = zoo_gen_act(b, m->act, zb_dense(b, "dense", x, m->width[k], NULL));
        if (m->layer_norm) x = zb_layer_norm(b, "LayerNorm", x);
        if (m->dropout > 0) x = zb_dropout(b, x, m->dropout);
        zb_pop(b);
    }
    int loss = zb_xent_loss(b, zb_dense(b, "logits", x, m->classes, NULL), labels, false);
    zb_pop(b);
    return loss;
}

int zoo_gen_mixer(struct zb *b, const struct dp_gen_mixer *m) {
    int labels;
    int x = patches(b, zoo_image_input(b, m->input, &labels), m->input, m->patch, m->d);
    static const int swap[3] = {0, 2, 1};
    zb_push(b, "mixer");
    for (int l = 0; l < m->layers; l++) {
        zb_push(b, "layer_%d", l);
        int t = zb_transpose(b, zb_layer_norm(b, "ln_1", x), swap);
        t = zb_transpose(b, zoo_ffn(b, "token_mixing", t, m->token_mlp, true, 0), swap);
        x = zb_binary(b, "AddV2", x, t);
        x = zb_binary(b, "AddV2", x, zoo_ffn(b, "channel_mixing", zb_layer_norm(b, "ln_2", x),
                                             m->channel_mlp, true, 0));
        zb_pop(b);
    }
    x = zb_layer_norm(b, "LayerNorm", x);
    int loss = token_mean_head(b, x, m->classes, labels);
    zb_pop(b);
    return loss;
}
