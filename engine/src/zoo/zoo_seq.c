/* zoo_seq.c: the sequence models of the zoo: 2-layer LSTM language models (PTB small, medium
 * and large of Zaremba et al., statically unrolled as TF1's static_rnn does), the Transformer
 * translation model (OpenNMT-tf: pre-norm, 6+6 layers; base and big), BERT pre-training (masked
 * LM over every position + next-sentence head; base, large and Google's Tiny/Mini/Small/Medium
 * miniatures), BERT SQuAD fine-tuning (span head; base and large) and GPT-2 (pre-norm, tied output embedding; distilgpt2, small, medium, large). */
#include <math.h>
#include <stdio.h>

#include "zoo_models.h"
#include "zoo/zoo_layers.h"

static int lstm_lm(struct zb *b, int64_t seq, int64_t hidden, const char *name) {
    const int64_t vocab = 10000;
    const int layers = 2;
    int labels;
    int ids = zoo_token_input(b, seq, &labels);
    zb_push(b, "%s", name);
    int64_t ed[2] = {vocab, hidden};
    zb_push(b, "embedding");
    int emb = zb_variable(b, "embedding", 2, ed, "normal", true);
    int x = zb_dropout(b, zb_gather(b, emb, ids), 0.5);
    zb_pop(b);
    int steps[512], n = (int)seq;
    if (n > 512) return zb_fail(b, DP_ERR_INVALID, "%s: sequence length %d > 512", name, n);
    zb_push(b, "rnn");
    zb_unstack(b, x, n, 1, steps);
    for (int l = 0; l < layers; l++) zoo_rnn_layer(b, l, steps, n, hidden, false);
    int out = zb_stack(b, steps, n, 1);
    zb_pop(b);
    out = zb_dropout(b, out, 0.5);
    int logits = zb_dense(b, "softmax", out, (int)vocab, NULL);
    int loss = zb_xent_loss(b, logits, labels, true);
    zb_pop(b);
    return loss;
}

int zoo_lstm_lm(struct zb *b, int64_t seq) { return lstm_lm(b, seq, 650, "lstm_lm"); }
int zoo_lstm_lm_small(struct zb *b, int64_t seq) { return lstm_lm(b, seq, 200, "lstm_lm_small"); }
int zoo_lstm_lm_large(struct zb *b, int64_t seq) { return lstm_lm(b, seq, 1500, "lstm_lm_large"); }

static int transformer(struct zb *b, int64_t seq, int64_t d, int heads) {
    const int64_t vocab = 32000;
    const int layers = 6, inner = 4 * (int)d;
    int labels;
    int src = zoo_token_input(b, seq, &labels);
    int64_t td[2] = {DP_DIM_BATCH, seq};
    /* The target ids are a second output of IteratorGetNext. */
    int tgt = zb_opaque(b, "Identity", &src, 1, 2, td, DP_DTYPE_I32);
    zb_push(b, "transformer");
    int64_t ed[2] = {vocab, d};
    int src_emb = zb_variable(b, "encoder/w_embs", 2, ed, "normal", true);
    int tgt_emb = zb_variable(b, "decoder/w_embs", 2, ed, "normal", true);
    int x = zoo_embed_sinusoid(b, "encoder/embedding", src_emb, src, seq, d);
    for (int l = 0; l < layers; l++) {
        zb_push(b, "encoder/layer_%d", l);
        int a = zoo_attention(b, "multi_head", zb_layer_norm(b, "LayerNorm", x),
                          zb_layer_norm(b, "LayerNorm", x), heads, -1, false, 0.1);
        x = zb_binary(b, "AddV2", x, zb_dropout(b, a, 0.1));
        int f = zoo_ffn(b, "ffn", zb_layer_norm(b, "LayerNorm_1", x), inner, false, 0.1);
        x = zb_binary(b, "AddV2", x, zb_dropout(b, f, 0.1));
        zb_pop(b);
    }
    int mem = zb_layer_norm(b, "encoder/LayerNorm", x);
    int y = zoo_embed_sinusoid(b, "decoder/embedding", tgt_emb, tgt, seq, d);
    int mask = zoo_causal_mask(b, seq);
    for (int l = 0; l < layers; l++) {
        zb_push(b, "decoder/layer_%d", l);
        int n1 = zb_layer_norm(b, "LayerNorm", y);
        y = zb_binary(b, "AddV2", y,
                      zb_dropout(b, zoo_attention(b, "masked_multi_head", n1, n1, heads, mask, false,
                                              0.1), 0.1));
        int n2 = zb_layer_norm(b, "LayerNorm_1", y);
        y = zb_binary(b, "AddV2", y,
                      zb_dropout(b, zoo_attention(b, "multi_head", n2, mem, heads, -1, false, 0.1),
                                 0.1));
        int f = zoo_ffn(b, "ffn", zb_layer_norm(b, "LayerNorm_2", y), inner, false, 0.1);
        y = zb_binary(b, "AddV2", y, zb_dropout(b, f, 0.1));
        zb_pop(b);
    }
    y = zb_layer_norm(b, "decoder/LayerNorm", y);
    zb_push(b, "decoder/dense");
    int64_t vb = vocab;
    int logits = zb_matmul(b, y, tgt_emb, false, true); /* output projection tied to the input */
    logits = zb_bias_add(b, logits, zb_variable(b, "bias", 1, &vb, "zeros", true));
    zb_pop(b);
    int loss = zb_xent_loss(b, logits, labels, true);
    zb_pop(b);
    return loss;
}

int zoo_transformer_base(struct zb *b, int64_t seq) { return transformer(b, seq, 512, 8); }
int zoo_transformer_big(struct zb *b, int64_t seq) { return transformer(b, seq, 1024, 16); }

/* BERT's embeddings and encoder over token ids and token types [B, T]: returns the last hidden states
 * [B, T, d] and, in *word, the word-embedding table (the pre-training head ties to it). */
static int bert_encoder(struct zb *b, int ids, int types, int64_t seq, int64_t d, int layers,
                        int heads, int *word) {
    const int64_t vocab = 30522, max_pos = 512;
    const int inner = 4 * (int)d;
    int64_t td[2] = {DP_DIM_BATCH, seq};
    zb_push(b, "embeddings");
    int64_t wd[2] = {vocab, d}, pd[2] = {max_pos, d}, ttd[2] = {2, d}, pl = seq;
    *word = zb_variable(b, "word_embeddings", 2, wd, "normal", true);
    int tok = zb_variable(b, "token_type_embeddings", 2, ttd, "normal", true);
    int pos = zb_variable(b, "position_embeddings", 2, pd, "normal", true);
    int x = zb_gather(b, *word, ids);
    x = zb_binary(b, "AddV2", x, zb_gather(b, tok, types));
    int pos_ids = zb_const(b, "position_ids", 1, &pl, DP_DTYPE_I32);
    x = zb_binary(b, "AddV2", x, zb_gather(b, pos, pos_ids));
    x = zb_dropout(b, zb_layer_norm(b, "LayerNorm", x), 0.1);
    zb_pop(b);
    /* The additive attention mask from the input mask: [B, 1, 1, T]. */
    int64_t md[4] = {DP_DIM_BATCH, 1, 1, seq};
    int m = zb_opaque(b, "Cast", &ids, 1, 2, td, zb_compute_dtype(b));
    m = zb_opaque(b, "Reshape", &m, 1, 4, md, zb_compute_dtype(b));
    int mask = zb_opaque(b, "Mul", &m, 1, 4, md, zb_compute_dtype(b));
    zb_push(b, "encoder");
    for (int l = 0; l < layers; l++) {
        zb_push(b, "layer_%d", l);
        int a = zoo_attention(b, "attention/self", x, x, heads, mask, false, 0.1);
        x = zb_layer_norm(b, "attention/output/LayerNorm",
                          zb_binary(b, "AddV2", zb_dropout(b, a, 0.1), x));
        int f = zoo_ffn(b, "ffn", x, inner, true, 0.1);
        x = zb_layer_norm(b, "output/LayerNorm", zb_binary(b, "AddV2", zb_dropout(b, f, 0.1), x));
        zb_pop(b);
    }
    zb_pop(b);
    return x;
}

static int bert(struct zb *b, int64_t seq, int64_t d, int layers, int heads) {
    const int64_t vocab = 30522;
    int labels, word;
    int ids = zoo_token_input(b, seq, &labels);
    int64_t td[2] = {DP_DIM_BATCH, seq}, one[1] = {DP_DIM_BATCH};
    int types = zb_opaque(b, "Identity", &ids, 1, 2, td, DP_DTYPE_I32);
    int nsp_labels = zb_opaque(b, "Identity", &ids, 1, 1, one, DP_DTYPE_I32);
    zb_push(b, "bert");
    int x = bert_encoder(b, ids, types, seq, d, layers, heads, &word);
    /* Pooler over the first token, next-sentence head. */
    int64_t fd[2] = {DP_DIM_BATCH, d};
    zb_push(b, "pooler");
    int first = zb_reshape(b, zb_slice(b, x, 1, 0, 1), 2, fd);
    int pooled = zb_dense(b, "dense", first, (int)d, "Tanh");
    zb_pop(b);
    int nsp = zb_dense(b, "cls/seq_relationship", pooled, 2, NULL);
    int nsp_loss = zb_xent_loss(b, nsp, nsp_labels, false);
    /* Masked LM over every position, output tied to the word embeddings. */
    zb_push(b, "cls/predictions");
    int h = zb_gelu(b, zb_dense(b, "transform/dense", x, (int)d, NULL));
    h = zb_layer_norm(b, "transform/LayerNorm", h);
    int64_t vb = vocab;
    int logits = zb_matmul(b, h, word, false, true);
    logits = zb_bias_add(b, logits, zb_variable(b, "output_bias", 1, &vb, "zeros", true));
    zb_pop(b);
    int mlm_loss = zb_xent_loss(b, logits, labels, true);
    int loss = zb_binary(b, "AddV2", mlm_loss, nsp_loss);
    zb_pop(b);
    return loss;
}

/* SQuAD fine-tuning (BertForQuestionAnswering, as NVIDIA DeepLearningExamples runs it): the
 * encoder and a span head, a dense layer to start and end logits per position, each trained
 * with cross-entropy against the answer's start and end position. No pooler, no MLM head. */
static int bert_squad(struct zb *b, int64_t seq, int64_t d, int layers, int heads) {
    int word;
    int64_t td[2] = {DP_DIM_BATCH, seq}, one[1] = {DP_DIM_BATCH};
    int ids = zb_input(b, 2, td, DP_DTYPE_I32, 1, one, NULL, false);
    int types = zb_input_extra(b, ids, 2, td, DP_DTYPE_I32);
    int start = zb_input_extra(b, ids, 1, one, DP_DTYPE_I32);
    int end = zb_input_extra(b, ids, 1, one, DP_DTYPE_I32);
    zb_push(b, "bert");
    int x = bert_encoder(b, ids, types, seq, d, layers, heads, &word);
    zb_pop(b);
    zb_push(b, "qa_outputs");
    int logits = zb_dense(b, "dense", x, 2, NULL), parts[2];
    zb_split(b, logits, 2, -1, parts);
    int s = zb_reshape(b, parts[0], 2, td), e = zb_reshape(b, parts[1], 2, td);
    zb_pop(b);
    int loss = zb_binary(b, "AddV2", zb_xent_loss(b, s, start, true),
                         zb_xent_loss(b, e, end, true));
    return loss;
}

int zoo_bert_base_squad(struct zb *b, int64_t seq) { return bert_squad(b, seq, 768, 12, 12); }
int zoo_bert_large_squad(struct zb *b, int64_t seq) { return bert_squad(b, seq, 1024, 24, 16); }
int zoo_bert_base(struct zb *b, int64_t seq) { return bert(b, seq, 768, 12, 12); }
int zoo_bert_large(struct zb *b, int64_t seq) { return bert(b, seq, 1024, 24, 16); }
int zoo_bert_tiny(struct zb *b, int64_t seq) { return bert(b, seq, 128, 2, 2); }
int zoo_bert_mini(struct zb *b, int64_t seq) { return bert(b, seq, 256, 4, 4); }
int zoo_bert_small(struct zb *b, int64_t seq) { return bert(b, seq, 512, 4, 8); }
int zoo_bert_medium(struct zb *b, int64_t seq) { return bert(b, seq, 512, 8, 8); }

static int gpt2(struct zb *b, int64_t seq, int64_t d, int layers, int heads) {
    const int64_t vocab = 50257, n_ctx = 1024;
    int labels;
    int ids = zoo_token_input(b, seq, &labels);
    zb_push(b, "model");
    int64_t wd[2] = {vocab, d}, pd[2] = {n_ctx, d}, pl = seq;
    int wte = zb_variable(b, "wte", 2, wd, "normal", true);
    int wpe = zb_variable(b, "wpe", 2, pd, "normal", true);
    int pos_ids = zb_const(b, "position_ids", 1, &pl, DP_DTYPE_I32);
    int h = zb_binary(b, "AddV2", zb_gather(b, wte, ids), zb_gather(b, wpe, pos_ids));
    h = zb_dropout(b, h, 0.1);
    int mask = zoo_causal_mask(b, seq);
    for (int l = 0; l < layers; l++) {
        zb_push(b, "h%d", l);
        int n1 = zb_layer_norm(b, "ln_1", h);
        h = zb_binary(b, "AddV2", h, zb_dropout(b, zoo_attention(b, "attn", n1, n1, heads, mask, true,
                                                             0.1), 0.1));
        int n2 = zb_layer_norm(b, "ln_2", h);
        zb_push(b, "mlp");
        int m = zb_gelu(b, zb_dense(b, "c_fc", n2, 4 * (int)d, NULL));
        m = zb_dense(b, "c_proj", m, (int)d, NULL);
        zb_pop(b);
        h = zb_binary(b, "AddV2", h, zb_dropout(b, m, 0.1));
        zb_pop(b);
    }
    h = zb_layer_norm(b, "ln_f", h);
    int logits = zb_matmul(b, h, wte, false, true);
    int loss = zb_xent_loss(b, logits, labels, true);
    zb_pop(b);
    return loss;
}

int zoo_gpt2_small(struct zb *b, int64_t seq) { return gpt2(b, seq, 768, 12, 12); }
int zoo_gpt2_medium(struct zb *b, int64_t seq) { return gpt2(b, seq, 1024, 24, 16); }
int zoo_gpt2_large(struct zb *b, int64_t seq) { return gpt2(b, seq, 1280, 36, 20); }
int zoo_distilgpt2(struct zb *b, int64_t seq) { return gpt2(b, seq, 768, 6, 12); }
