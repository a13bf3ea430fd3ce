/* llm.h: transformer language models described by their architecture (the fields of a Hugging
 * Face config.json): decoders (Llama, Mistral, Qwen2, GPT-2/GPT-3, GPT-NeoX, GPT-J, Falcon,
 * Mixtral's top-k experts) and encoders (BERT, RoBERTa, T5's encoder). The exact parameter
 * count of a description, named presets checked against their papers and model cards, and the
 * training graph of one (driple-graph, the zoo's TensorFlow-1 style) so that every command can
 * read it. The closed-form planner (dp/plan.h) works from the same description. */
#ifndef DP_LLM_H
#define DP_LLM_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/status.h"
#include "dp/zoo.h"

/* Position encoding: learned absolute table (GPT-2, BERT), rotary (Llama, NeoX, GPT-J; no
 * parameters), T5's relative bias buckets (first layer only, per head), none. */
enum dp_llm_pos { DP_LLM_POS_LEARNED, DP_LLM_POS_ROTARY, DP_LLM_POS_RELATIVE };
/* Normalisation: LayerNorm (scale and shift) or RMSNorm (scale only; T5's "LayerNorm" too). */
enum dp_llm_norm { DP_LLM_NORM_LAYER, DP_LLM_NORM_RMS };
/* The MLP's activation; gated (SwiGLU, GeGLU) is a separate flag. */
enum dp_llm_act { DP_LLM_ACT_GELU, DP_LLM_ACT_RELU, DP_LLM_ACT_SILU };

struct dp_llm {
    char    name[64];
    bool    encoder;         /* bidirectional encoder (BERT); false: causal decoder */
    int64_t layers, hidden, heads, kv_heads, head_dim; /* head_dim: usually hidden / heads */
    int64_t ffn;             /* the MLP's inner width (per expert) */
    int64_t vocab;
    int64_t max_pos;         /* learned position table rows (DP_LLM_POS_LEARNED) */
    int64_t type_vocab;      /* BERT token types (0: none) */
    int64_t rel_buckets;     /* T5 relative-attention buckets (DP_LLM_POS_RELATIVE) */
    enum dp_llm_pos  pos;
    enum dp_llm_norm norm;
    enum dp_llm_act  act;
    bool    gated;           /* gate x up projections (SwiGLU: three matrices) */
    bool    qkv_bias, out_bias, mlp_bias, head_bias; /* the bias vectors each layout has */
    bool    tied;            /* output projection shares the token embedding */
    bool    parallel;        /* attention and MLP side by side (GPT-J, NeoX, Falcon) */
    int     norms_per_layer; /* 2, or 1 where the parallel block shares one (GPT-J, Falcon-7B) */
    bool    embed_norm;      /* a norm after the embeddings (BERT) */
    bool    final_norm;      /* a norm before the output (decoders, T5) */
    bool    pooler;          /* BERT's pooler (dense h x h + bias) */
    int     experts, top_k;  /* MoE: experts per layer and experts per token (0: dense) */
    int64_t seq;             /* the sequence length trained at */
};

/* The exact parameter count of m: embeddings, every layer's projections, norms and biases, the
 * output projection (none of its own when tied), all experts. */
int64_t dp_llm_params(const struct dp_llm *m);
/* The parameters one token's forward pass multiplies by: the matrix products' weights (the
 * output projection included, the embedding lookup and norms not; top_k of the experts). */
int64_t dp_llm_matmul_params(const struct dp_llm *m);
/* One layer's parameters (the embeddings and the output projection left out). */
int64_t dp_llm_layer_params(const struct dp_llm *m);
/* The embedding-side parameters: token (and position, type) tables, their norm, the final
 * norm, the output projection when not tied, the pooler. */
int64_t dp_llm_embed_params(const struct dp_llm *m);

/* Checks m: positive sizes, heads dividing hidden where head_dim is not given, kv_heads
 * dividing heads, top_k <= experts, seq >= 1 (and <= max_pos for learned positions).
 * DP_ERR_INVALID naming `where` and the field. */
enum dp_status dp_llm_check(const struct dp_llm *m, const char *where, struct dp_error *err);

/* Named presets (static storage): "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b",
 * "llama3-70b", "mistral-7b", "gpt3-125m" .. "gpt3-175b", "bert-base", "bert-large", ...
 * Each with the published parameter count it was checked against and the source. */
struct dp_llm_preset {
    struct dp_llm model;       /* seq: the model's training context */
    int64_t       published;   /* the count the source states (exact where `exact`) */
    bool          exact;       /* the source gives the exact count (else a rounded one) */
    const char   *source;
};
int dp_llm_preset_count(void);
const struct dp_llm_preset *dp_llm_preset_at(int i);
/* The preset called name (case-insensitive), or NULL. */
const struct dp_llm_preset *dp_llm_preset_find(const char *name);

/* Reads a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2, GPT-2, GPT-NeoX, GPT-J,
 * Falcon, BERT, RoBERTa, T5 field names, told apart by model_type, else by the fields present)
 * into *out at sequence length seq (0: the config's max_position_embeddings / n_positions, else
 * 2048). Fails naming the file and the field: DP_ERR_PARSE (not JSON, a field of the wrong
 * type), DP_ERR_INVALID (a field the layout needs is missing, an impossible shape: hidden not
 * divisible by heads), DP_ERR_UNSUPPORTED (an unknown model_type without the common fields);
 * *out untouched on failure. */
enum dp_status dp_llm_load_hf(const char *path, int64_t seq, struct dp_llm *out,
                              struct dp_error *err);

/* The training graph of m (forward per layer: norms, attention with grouped key/value heads and
 * rotary positions, the MLP or the top-k experts, the loss; gradients; optimizer updates), built
 * by the zoo's builder with o (batch 0: 1; input 0: m->seq; o may be NULL). Its trainable
 * parameter count is dp_llm_params(m). New graph owned by the caller (dp_graph_free);
 * DP_ERR_INVALID as dp_llm_check or for a batch out of range, DP_ERR_NOMEM. */
enum dp_status dp_llm_build(const struct dp_llm *m, const struct dp_zoo_opts *o,
                            struct dp_graph **out, struct dp_error *err);

#endif
