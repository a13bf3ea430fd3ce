/* zoo_llm.c: transformer language models from their architecture (dp/llm.h): the exact
 * parameter count, the named presets with the counts their papers and model cards state, and
 * the training graph (per layer: norms, grouped-query attention with rotary positions, the MLP
 * or top-k experts) on the zoo's builder. */
#include "dp/llm.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "zoo/zoo_layers.h"

/* ---- parameter counts ---- */

static int64_t norm_params(const struct dp_llm *m) {
    return m->norm == DP_LLM_NORM_LAYER ? 2 * m->hidden : m->hidden;
}

/* One expert's MLP (the dense MLP when not MoE). */
static int64_t mlp_params(const struct dp_llm *m) {
    int64_t in = m->gated ? 2 : 1, h = m->hidden, f = m->ffn;
    return in * h * f + f * h + (m->mlp_bias ? in * f + h : 0);
}

static int64_t attn_params(const struct dp_llm *m) {
    int64_t h = m->hidden, q = m->heads * m->head_dim, kv = m->kv_heads * m->head_dim;
    return h * q + 2 * h * kv + (m->qkv_bias ? q + 2 * kv : 0) + q * h + (m->out_bias ? h : 0);
}

int64_t dp_llm_layer_params(const struct dp_llm *m) {
    int64_t mlp = mlp_params(m);
    if (m->experts > 0) mlp = m->experts * mlp + m->hidden * m->experts; /* + the router */
    return attn_params(m) + mlp + m->norms_per_layer * norm_params(m);
}

int64_t dp_llm_embed_params(const struct dp_llm *m) {
    int64_t h = m->hidden, n = m->vocab * h;
    if (m->pos == DP_LLM_POS_LEARNED) n += m->max_pos * h;
    if (m->pos == DP_LLM_POS_RELATIVE) n += m->rel_buckets * m->heads;
    n += m->type_vocab * h;
    if (m->embed_norm) n += norm_params(m);
    if (m->final_norm) n += norm_params(m);
    if (!m->tied) n += m->vocab * h + (m->head_bias ? m->vocab : 0);
    if (m->pooler) n += h * h + h;
    return n;
}

int64_t dp_llm_params(const struct dp_llm *m) {
    return m->layers * dp_llm_layer_params(m) + dp_llm_embed_params(m);
}

int64_t dp_llm_matmul_params(const struct dp_llm *m) {
    int64_t h = m->hidden, q = m->heads * m->head_dim, kv = m->kv_heads * m->head_dim;
    int64_t mlp = ((m->gated ? 2 : 1) + 1) * h * m->ffn;
    if (m->experts > 0) mlp = m->top_k * mlp + h * m->experts;
    int64_t layer = h * q + 2 * h * kv + q * h + mlp;
    return m->layers * layer + m->vocab * h;
}

enum dp_status dp_llm_check(const struct dp_llm *m, const char *where, struct dp_error *err) {
    const struct { const char *field; int64_t v; } pos[] = {
        {"layers", m->layers}, {"hidden", m->hidden}, {"heads", m->heads},
        {"kv_heads", m->kv_heads}, {"head_dim", m->head_dim}, {"ffn", m->ffn},
        {"vocab", m->vocab}, {"seq", m->seq},
    };
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i].v < 1 || pos[i].v > ((int64_t)1 << 24))
            return dp_error_set(err, DP_ERR_INVALID, "%s: %s %lld: expected an integer in [1, "
                                "16777216]", where, pos[i].field, (long long)pos[i].v);
    if (m->heads % m->kv_heads)
        return dp_error_set(err, DP_ERR_INVALID, "%s: %lld key/value heads do not divide %lld "
                            "attention heads", where, (long long)m->kv_heads,
                            (long long)m->heads);
    if (m->pos == DP_LLM_POS_LEARNED && m->seq > m->max_pos)
        return dp_error_set(err, DP_ERR_INVALID, "%s: sequence %lld longer than the %lld learned "
                            "positions", where, (long long)m->seq, (long long)m->max_pos);
    if (m->experts < 0 || m->top_k < 0 || (m->experts > 0 && (m->top_k < 1 ||
                                                               m->top_k > m->experts)))
        return dp_error_set(err, DP_ERR_INVALID, "%s: top-%d of %d experts: expected 1 <= top-k "
                            "<= experts", where, m->top_k, m->experts);
    if (m->norms_per_layer < 1 || m->norms_per_layer > 2)
        return dp_error_set(err, DP_ERR_INVALID, "%s: %d norms per layer: expected 1 or 2",
                            where, m->norms_per_layer);
    return DP_OK;
}

/* ---- presets ---- */

/* Llama's layout (Touvron et al. 2023): RMSNorm, rotary, SwiGLU, no biases, untied. */
#define LLAMA(nm, L, h, H, kv, f, V, ctx)                                                       \
    {nm, false, L, h, H, kv, (h) / (H), f, V, 0, 0, 0, DP_LLM_POS_ROTARY, DP_LLM_NORM_RMS,       \
     DP_LLM_ACT_SILU, true, false, false, false, false, false, false, 2, false, true, false, 0, \
     0, ctx}
/* GPT-3's (Brown et al. 2020, Table 2.1; GPT-2's layout): LayerNorm, learned positions, GELU
 * MLP of 4 x d_model, biases everywhere, tied output, 50257 tokens, context 2048. */
#define GPT3(nm, L, h, dh)                                                                       \
    {nm, false, L, h, (h) / (dh), (h) / (dh), dh, 4 * (h), 50257, 2048, 0, 0, DP_LLM_POS_LEARNED, \
     DP_LLM_NORM_LAYER, DP_LLM_ACT_GELU, false, true, true, true, false, true, false, 2, false,   \
     true, false, 0, 0, 2048}
/* BERT's (Devlin et al. 2019): post-norm LayerNorm, learned positions and two token types, GELU,
 * biases, an embedding norm and the pooler; the count of Hugging Face's BertModel (no
 * pre-training heads). */
#define BERT(nm, L, h, H)                                                                         \
    {nm, true, L, h, H, H, (h) / (H), 4 * (h), 30522, 512, 2, 0, DP_LLM_POS_LEARNED,               \
     DP_LLM_NORM_LAYER, DP_LLM_ACT_GELU, false, true, true, true, false, true, false, 2, true,     \
     false, true, 0, 0, 512}

#define HF_LLAMA "the released checkpoint's parameter count (Hugging Face model card, config.json " \
                 "of "
static const struct dp_llm_preset presets[] = {
    {LLAMA("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096), 6738415616, true,
     HF_LLAMA "meta-llama/Llama-2-7b-hf); Touvron et al. 2023, Llama 2, Table 1: 7B"},
    {LLAMA("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096), 13015864320, true,
     HF_LLAMA "meta-llama/Llama-2-13b-hf); Touvron et al. 2023, Table 1: 13B"},
    {LLAMA("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096), 68976648192, true,
     HF_LLAMA "meta-llama/Llama-2-70b-hf, GQA 8 kv heads); Touvron et al. 2023, Table 1: 70B"},
    {LLAMA("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192), 8030261248, true,
     HF_LLAMA "meta-llama/Meta-Llama-3-8B); Llama 3 model card: 8B"},
    {LLAMA("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192), 70553706496, true,
     HF_LLAMA "meta-llama/Meta-Llama-3-70B); Llama 3 model card: 70B"},
    {LLAMA("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 8192), 7241732096, true,
     HF_LLAMA "mistralai/Mistral-7B-v0.1); Jiang et al. 2023, Mistral 7B, Table 1: 7.3B"},
    {{"mixtral-8x7b", false, 32, 4096, 32, 8, 128, 14336, 32000, 0, 0, 0, DP_LLM_POS_ROTARY,
      DP_LLM_NORM_RMS, DP_LLM_ACT_SILU, true, false, false, false, false, false, false, 2, false,
      true, false, 8, 2, 4096}, 47000000000, false,
     "Jiang et al. 2024, Mixtral of Experts, section 2: 47B parameters, 13B active per token"},
    {GPT3("gpt3-125m", 12, 768, 64), 125000000, false,
     "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1: 125M"},
    {GPT3("gpt3-350m", 24, 1024, 64), 350000000, false, "Brown et al. 2020, Table 2.1: 350M"},
    {GPT3("gpt3-760m", 24, 1536, 96), 760000000, false, "Brown et al. 2020, Table 2.1: 760M"},
    /* the table lists 24 heads of 128 for d_model 2048 (3072 wide): d_model / d_head = 16 kept */
    {GPT3("gpt3-1.3b", 24, 2048, 128), 1300000000, false,
     "Brown et al. 2020, Table 2.1: 1.3B (the table's 24 heads x 128 do not make its d_model "
     "2048; 16 heads of 128 here)"},
    {GPT3("gpt3-2.7b", 32, 2560, 80), 2700000000, false, "Brown et al. 2020, Table 2.1: 2.7B"},
    {GPT3("gpt3-6.7b", 32, 4096, 128), 6700000000, false, "Brown et al. 2020, Table 2.1: 6.7B"},
    /* the table's d_model 5140 is not 40 heads x 128: 5120 */
    {GPT3("gpt3-13b", 40, 5120, 128), 13000000000, false,
     "Brown et al. 2020, Table 2.1: 13.0B (its d_model 5140 is not 40 x 128; 5120 here)"},
    {GPT3("gpt3-175b", 96, 12288, 128), 175000000000, false, "Brown et al. 2020, Table 2.1: 175.0B"},
    {BERT("bert-base", 12, 768, 12), 110000000, false,
     "Devlin et al. 2019, BERT, section 3: 110M (BertModel with the pooler: 109,482,240)"},
    {BERT("bert-large", 24, 1024, 16), 340000000, false,
     "Devlin et al. 2019, section 3: 340M (BertModel with the pooler: 335,141,888)"},
};
#define N_PRESETS ((int)(sizeof presets / sizeof presets[0]))

int dp_llm_preset_count(void) { return N_PRESETS; }

const struct dp_llm_preset *dp_llm_preset_at(int i) {
    return i >= 0 && i < N_PRESETS ? &presets[i] : NULL;
}

const struct dp_llm_preset *dp_llm_preset_find(const char *name) {
    for (int i = 0; name && i < N_PRESETS; i++)
        if (!strcasecmp(presets[i].model.name, name)) return &presets[i];
    return NULL;
}

/* ---- the training graph ---- */

/* x W (+ b): a projection with or without its bias, in scope name. */
static int lin(struct zb *b, const char *name, int x, int64_t units, bool bias) {
    zb_push(b, "%s", name);
    int64_t wd[2] = {zb_dim(b, x, -1), units};
    int y = zb_matmul(b, x, zb_variable(b, "kernel", 2, wd, "normal", true), false, false);
    if (bias) y = zb_bias_add(b, y, zb_variable(b, "bias", 1, &units, "zeros", true));
    zb_pop(b);
    return y;
}

static int norm(struct zb *b, const struct dp_llm *m, const char *name, int x) {
    if (m->norm == DP_LLM_NORM_LAYER) return zb_layer_norm(b, name, x);
    zb_push(b, "%s", name);
    int64_t d = m->hidden;
    int gamma = zb_variable(b, "weight", 1, &d, "ones", true);
    unsigned last = 1u << (zb_rank(b, x) - 1);
    int ms = zb_reduce(b, "Mean", zb_unary(b, "Square", x), last, true);
    ms = zb_binary(b, "AddV2", ms, zb_const(b, "eps", 0, NULL, zb_compute_dtype(b)));
    int y = zb_binary(b, "Mul", zb_binary(b, "Mul", x, zb_unary(b, "Rsqrt", ms)), gamma);
    zb_pop(b);
    return y;
}

static int act(struct zb *b, const struct dp_llm *m, int x) {
    if (m->act == DP_LLM_ACT_GELU) return zb_gelu(b, x);
    if (m->act == DP_LLM_ACT_RELU) return zb_unary(b, "Relu", x);
    return zb_binary(b, "Mul", x, zb_unary(b, "Sigmoid", x)); /* SiLU */
}

static int mlp(struct zb *b, const struct dp_llm *m, const char *name, int x) {
    zb_push(b, "%s", name);
    int h = m->gated ? zb_binary(b, "Mul", act(b, m, lin(b, "gate_proj", x, m->ffn, m->mlp_bias)),
                                 lin(b, "up_proj", x, m->ffn, m->mlp_bias))
                     : act(b, m, lin(b, "fc_in", x, m->ffn, m->mlp_bias));
    int y = lin(b, "down_proj", h, m->hidden, m->mlp_bias);
    zb_pop(b);
    return y;
}

/* Top-k experts: every token is copied to k experts (the routed tokens spread evenly over the
 * experts, as a balanced router leaves them), each expert's MLP runs on its share, the k
 * outputs are summed and weighted by the router's probabilities. */
static int moe(struct zb *b, const struct dp_llm *m, int x) {
    int64_t t = m->seq, k = m->top_k, e = m->experts, h = m->hidden;
    if (t * k < e)
        return zb_fail(b, DP_ERR_INVALID, "%s: %lld tokens x top-%lld leave experts without a "
                       "token (sequence >= experts / top-k)", m->name, (long long)t,
                       (long long)k);
    zb_push(b, "moe");
    int probs = zb_softmax(b, lin(b, "router", x, e, false));
    int64_t td[3] = {DP_DIM_BATCH, t * k, h};
    int routed = zb_copy(b, "Tile", x, NULL, 0, 3, td);
    int64_t sizes[256];
    int parts[256], outs[256];
    for (int64_t i = 0; i < e; i++) sizes[i] = t * k / e + (i < t * k % e);
    zb_split_sizes(b, routed, (int)e, sizes, 1, parts);
    for (int i = 0; i < (int)e; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "expert_%d", i);
        outs[i] = mlp(b, m, nm, parts[i]);
    }
    int y = zb_concat(b, outs, (int)e, 1);
    int64_t kd[4] = {DP_DIM_BATCH, k, t, h};
    y = zb_reduce(b, "Sum", zb_reshape(b, y, 4, kd), 1u << 1, false);
    y = zb_binary(b, "Mul", y, zb_reduce(b, "Sum", probs, 1u << 2, true));
    zb_pop(b);
    return y;
}

/* Rotary positions: x cos + rotate_half(x) sin, the tables broadcast over [.., T, head_dim]. */
static int rotary(struct zb *b, int x, int64_t t, int64_t hd) {
    int64_t cd[2] = {t, hd};
    int rot = zb_copy(b, "ReverseV2", x, NULL, 0, zb_rank(b, x), zb_dims(b, x));
    return zb_binary(b, "AddV2", zb_binary(b, "Mul", x, zb_const(b, "cos", 2, cd,
                                                                  zb_compute_dtype(b))),
                     zb_binary(b, "Mul", rot, zb_const(b, "sin", 2, cd, zb_compute_dtype(b))));
}

/* Attention with kv_heads groups of heads / kv_heads query heads each: scores [B, KV, G, T, T]
 * (plus bias, e.g. the causal mask or T5's relative bias, when >= 0). */
static int attention(struct zb *b, const struct dp_llm *m, int x, int bias) {
    int64_t t = m->seq, hd = m->head_dim, kv = m->kv_heads, g = m->heads / m->kv_heads;
    zb_push(b, "attention");
    int q = lin(b, "q_proj", x, m->heads * hd, m->qkv_bias);
    int k = lin(b, "k_proj", x, kv * hd, m->qkv_bias);
    int v = lin(b, "v_proj", x, kv * hd, m->qkv_bias);
    int64_t qd[5] = {DP_DIM_BATCH, t, kv, g, hd}, kd[4] = {DP_DIM_BATCH, t, kv, hd};
    const int qp[5] = {0, 2, 3, 1, 4}, kp[4] = {0, 2, 1, 3}, cp[5] = {0, 3, 1, 2, 4};
    q = zb_transpose(b, zb_reshape(b, q, 5, qd), qp);
    k = zb_transpose(b, zb_reshape(b, k, 4, kd), kp);
    v = zb_transpose(b, zb_reshape(b, v, 4, kd), kp);
    if (m->pos == DP_LLM_POS_ROTARY) {
        q = rotary(b, q, t, hd);
        k = rotary(b, k, t, hd);
    }
    int64_t sd[5] = {DP_DIM_BATCH, kv, g, t, t}, od[5] = {DP_DIM_BATCH, kv, g, t, hd};
    int s = zb_einsum(b, "bkgtd,bksd->bkgts", q, k, 5, sd);
    s = zb_binary(b, "Mul", s, zb_const(b, "scale", 0, NULL, zb_compute_dtype(b)));
    if (bias >= 0) s = zb_binary(b, "AddV2", s, bias);
    int c = zb_einsum(b, "bkgts,bksd->bkgtd", zb_softmax(b, s), v, 5, od);
    int64_t cd[3] = {DP_DIM_BATCH, t, m->heads * hd};
    c = zb_reshape(b, zb_transpose(b, c, cp), 3, cd);
    int y = lin(b, "o_proj", c, m->hidden, m->out_bias);
    zb_pop(b);
    return y;
}

static int block(struct zb *b, const struct dp_llm *m, int x, int bias) {
    if (m->encoder && m->pos != DP_LLM_POS_RELATIVE) { /* BERT: post-norm */
        x = norm(b, m, "attention_norm", zb_binary(b, "AddV2", x, attention(b, m, x, bias)));
        int f = m->experts ? moe(b, m, x) : mlp(b, m, "mlp", x);
        return norm(b, m, "output_norm", zb_binary(b, "AddV2", x, f));
    }
    int n1 = norm(b, m, "input_norm", x);
    if (m->parallel) {
        int n2 = m->norms_per_layer == 2 ? norm(b, m, "mlp_norm", x) : n1;
        int f = m->experts ? moe(b, m, n2) : mlp(b, m, "mlp", n2);
        return zb_binary(b, "AddV2", x, zb_binary(b, "AddV2", attention(b, m, n1, bias), f));
    }
    x = zb_binary(b, "AddV2", x, attention(b, m, n1, bias));
    int n2 = norm(b, m, "post_attention_norm", x);
    return zb_binary(b, "AddV2", x, m->experts ? moe(b, m, n2) : mlp(b, m, "mlp", n2));
}

static int llm_forward(struct zb *b, const void *ctx) {
    const struct dp_llm *m = ctx;
    int64_t t = m->seq, h = m->hidden;
    int labels;
    int ids = zoo_token_input(b, t, &labels);
    zb_push(b, "model");
    int64_t wd[2] = {m->vocab, h};
    int tok = zb_variable(b, "embed_tokens", 2, wd, "normal", true);
    int x = zb_gather(b, tok, ids);
    if (m->pos == DP_LLM_POS_LEARNED) {
        int64_t pd[2] = {m->max_pos, h};
        int pos = zb_variable(b, "embed_positions", 2, pd, "normal", true);
        x = zb_binary(b, "AddV2", x, zb_gather(b, pos, zb_const(b, "position_ids", 1, &t,
                                                                DP_DTYPE_I32)));
    }
    if (m->type_vocab > 0) {
        int64_t yd[2] = {m->type_vocab, h}, idd[2] = {DP_DIM_BATCH, t};
        int types = zb_opaque(b, "Identity", &ids, 1, 2, idd, DP_DTYPE_I32);
        x = zb_binary(b, "AddV2", x, zb_gather(b, zb_variable(b, "token_type_embeddings", 2, yd,
                                                              "normal", true), types));
    }
    if (m->embed_norm) x = norm(b, m, "embed_norm", x);
    int bias = m->encoder ? -1 : zoo_causal_mask(b, t);
    if (m->pos == DP_LLM_POS_RELATIVE) { /* T5: one bucket table shared by every layer */
        int64_t rd[2] = {m->rel_buckets, m->heads}, bd[2] = {t, t}, hd[3] = {t, t, m->heads};
        int64_t sd[4] = {m->kv_heads, m->heads / m->kv_heads, t, t};
        const int perm[3] = {2, 0, 1};
        int table = zb_variable(b, "relative_attention_bias", 2, rd, "normal", true);
        int rel = zb_gather(b, table, zb_const(b, "relative_buckets", 2, bd, DP_DTYPE_I32));
        rel = zb_reshape(b, zb_transpose(b, zb_reshape(b, rel, 3, hd), perm), 4, sd);
        bias = bias >= 0 ? zb_binary(b, "AddV2", bias, rel) : rel;
    }
    for (int64_t l = 0; l < m->layers; l++) {
        zb_push(b, "layers_%lld", (long long)l);
        x = block(b, m, x, bias);
        zb_pop(b);
    }
    if (m->final_norm) x = norm(b, m, "norm", x);
    int extra = -1;
    if (m->pooler) { /* its mean joins the loss: the next-sentence head is not counted */
        int64_t fd[2] = {DP_DIM_BATCH, h};
        zb_push(b, "pooler");
        int first = zb_reshape(b, zb_slice(b, x, 1, 0, 1), 2, fd);
        extra = zb_reduce(b, "Mean", zb_unary(b, "Tanh", lin(b, "dense", first, h, true)), 3u,
                          false);
        zb_pop(b);
    }
    int logits = m->tied ? zb_matmul(b, x, tok, false, true)
                         : lin(b, "lm_head", x, m->vocab, m->head_bias);
    int loss = zb_xent_loss(b, logits, labels, true);
    if (extra >= 0) loss = zb_binary(b, "AddV2", loss, extra);
    zb_pop(b);
    return loss;
}

enum dp_status dp_llm_build(const struct dp_llm *m, const struct dp_zoo_opts *o,
                            struct dp_graph **out, struct dp_error *err) {
    enum dp_status st = dp_llm_check(m, m->name[0] ? m->name : "llm", err);
    if (st) return st;
    if (m->experts > 256)
        return dp_error_set(err, DP_ERR_INVALID, "%s: %d experts: the graph builder takes at "
                            "most 256", m->name, m->experts);
    struct dp_zoo_opts zo;
    if (o) zo = *o;
    else dp_zoo_opts_default(&zo);
    if (zo.batch == 0) zo.batch = 1;
    struct dp_llm mm = *m;
    if (zo.input > 0) mm.seq = zo.input;
    if ((st = dp_llm_check(&mm, m->name[0] ? m->name : "llm", err))) return st;
    return zoo_build_graph(mm.name[0] ? mm.name : "llm", &zo, llm_forward, &mm, out, err);
}
