/* llm_json.c: a Hugging Face config.json read into a transformer description (dp/llm.h): each
 * family's field names (Llama, Mistral, Mixtral, Qwen2, GPT-2, GPT-NeoX, GPT-J, Falcon, BERT,
 * RoBERTa, T5) and the layout facts the config leaves implicit (biases, norms, tied output). */
#include <stdio.h>
#include <string.h>

#include "core/json_util.h"
#include "dp/llm.h"

#define MAX_DIM ((int64_t)1 << 24)

enum family { F_LLAMA, F_QWEN2, F_GPT2, F_NEOX, F_GPTJ, F_FALCON, F_BERT, F_T5 };

static const struct { const char *type; enum family f; } families[] = {
    {"llama", F_LLAMA},   {"mistral", F_LLAMA},  {"mixtral", F_LLAMA}, {"qwen2", F_QWEN2},
    {"gpt2", F_GPT2},     {"gpt_neox", F_NEOX},  {"gptj", F_GPTJ},     {"falcon", F_FALCON},
    {"RefinedWebModel", F_FALCON}, {"RefinedWeb", F_FALCON}, {"bert", F_BERT},
    {"roberta", F_BERT},  {"t5", F_T5},
};

/* The first of names (NULL-terminated) present in root into *out; when none is and !optional,
 * DP_ERR_INVALID naming the file, the first name and the layout. */
static enum dp_status field(const cJSON *root, const char *const *names, bool optional,
                            const char *file, const char *layout, int64_t *out,
                            struct dp_error *err) {
    for (int i = 0; names[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, names[i]);
        if (!v || cJSON_IsNull(v)) continue;
        return dp_json_get_int(root, names[i], false, 0, MAX_DIM, file, "$", out, err);
    }
    if (optional) return DP_OK;
    return dp_error_set(err, DP_ERR_INVALID, "%s:$: missing \"%s\" (the %s layout needs it)", file,
                        names[0], layout);
}

static enum dp_status flag(const cJSON *root, const char *name, const char *file, bool *out,
                           struct dp_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
    if (!v || cJSON_IsNull(v)) return DP_OK;
    if (!cJSON_IsBool(v))
        return dp_error_set(err, DP_ERR_PARSE, "%s:$.%s: expected true or false", file, name);
    *out = cJSON_IsTrue(v);
    return DP_OK;
}

/* The MLP's activation from hidden_act / activation_function / feed_forward_proj. */
static enum dp_status activation(const cJSON *root, const char *file, struct dp_llm *m,
                                 struct dp_error *err) {
    static const char *const keys[] = {"hidden_act", "activation_function", "feed_forward_proj"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *s = NULL;
        enum dp_status st = dp_json_get_string(root, keys[i], true, file, "$", &s, err);
        if (st) return st;
        if (!s) continue;
        if (strstr(s, "gated")) m->gated = true; /* T5's "gated-gelu" */
        if (strstr(s, "gelu")) m->act = DP_LLM_ACT_GELU;
        else if (strstr(s, "relu")) m->act = DP_LLM_ACT_RELU;
        else if (strstr(s, "silu") || strstr(s, "swish")) m->act = DP_LLM_ACT_SILU;
        else
            return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:$.%s: activation \"%s\": expected "
                                "gelu, relu or silu", file, keys[i], s);
        return DP_OK;
    }
    return DP_OK;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static enum dp_status read_config(const cJSON *root, const char *file, int64_t seq,
                                  struct dp_llm *m, struct dp_error *err) {
    const char *type = NULL;
    enum dp_status st = dp_json_get_string(root, "model_type", true, file, "$", &type, err);
    if (st) return st;
    enum family f = F_LLAMA;
    bool known = false;
    for (size_t i = 0; type && i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(type, families[i].type)) f = families[i].f, known = true;
    if (!known) {
        /* no (or an unknown) model_type: the field names tell GPT-2's and T5's apart */
        if (cJSON_GetObjectItemCaseSensitive(root, "n_embd")) f = F_GPT2;
        else if (cJSON_GetObjectItemCaseSensitive(root, "d_model")) f = F_T5;
        else if (!cJSON_GetObjectItemCaseSensitive(root, "hidden_size"))
            return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:$.model_type: \"%s\" is not a "
                                "layout driple reads (llama, mistral, mixtral, qwen2, gpt2, "
                                "gpt_neox, gptj, falcon, bert, roberta, t5) and the config has "
                                "no hidden_size", file, type ? type : "(none)");
    }
    const char *layout = type ? type : f == F_GPT2 ? "gpt2" : f == F_T5 ? "t5" : "llama";
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", dp_file_name(file));
    m->norms_per_layer = 2;
    m->final_norm = true;
    m->act = DP_LLM_ACT_GELU;
    int64_t max_pos = 0, inner = 0, kv = 0, head_dim = 0;
    bool gpt_style = f == F_GPT2 || f == F_GPTJ;
    if (f == F_T5) {
        if ((st = field(root, NAMES("d_model"), false, file, layout, &m->hidden, err)) ||
            (st = field(root, NAMES("num_layers"), false, file, layout, &m->layers, err)) ||
            (st = field(root, NAMES("num_heads"), false, file, layout, &m->heads, err)) ||
            (st = field(root, NAMES("d_kv"), false, file, layout, &head_dim, err)) ||
            (st = field(root, NAMES("d_ff"), false, file, layout, &inner, err)))
            return st;
        m->rel_buckets = 32;
        if ((st = field(root, NAMES("relative_attention_num_buckets"), true, file, layout,
                        &m->rel_buckets, err)))
            return st;
    } else if (gpt_style) {
        if ((st = field(root, NAMES("n_embd", "hidden_size"), false, file, layout, &m->hidden,
                        err)) ||
            (st = field(root, NAMES("n_layer", "num_hidden_layers"), false, file, layout,
                        &m->layers, err)) ||
            (st = field(root, NAMES("n_head", "num_attention_heads"), false, file, layout,
                        &m->heads, err)) ||
            (st = field(root, NAMES("n_inner"), true, file, layout, &inner, err)) ||
            (st = field(root, NAMES("n_positions", "n_ctx"), f == F_GPTJ, file, layout, &max_pos,
                        err)))
            return st;
    } else {
        if ((st = field(root, NAMES("hidden_size", "n_embed"), false, file, layout, &m->hidden,
                        err)) ||
            (st = field(root, NAMES("num_hidden_layers", "n_layer"), false, file, layout,
                        &m->layers, err)) ||
            (st = field(root, NAMES("num_attention_heads", "n_head"), false, file, layout,
                        &m->heads, err)) ||
            (st = field(root, NAMES("intermediate_size", "ffn_hidden_size"), f == F_FALCON, file,
                        layout, &inner, err)) ||
            (st = field(root, NAMES("num_key_value_heads", "num_kv_heads"), true, file, layout,
                        &kv, err)) ||
            (st = field(root, NAMES("head_dim"), true, file, layout, &head_dim, err)) ||
            (st = field(root, NAMES("max_position_embeddings"), f == F_LLAMA || f == F_QWEN2 ||
                        f == F_FALCON || f == F_NEOX, file, layout, &max_pos, err)))
            return st;
    }
    if ((st = field(root, NAMES("vocab_size"), false, file, layout, &m->vocab, err)) ||
        (st = activation(root, file, m, err)))
        return st;
    if (m->heads < 1)
        return dp_error_set(err, DP_ERR_INVALID, "%s:$: 0 attention heads", file);
    if (!head_dim) {
        if (m->hidden % m->heads)
            return dp_error_set(err, DP_ERR_INVALID, "%s:$: hidden size %lld is not divisible by "
                                "%lld attention heads", file, (long long)m->hidden,
                                (long long)m->heads);
        head_dim = m->hidden / m->heads;
    }
    m->head_dim = head_dim;
    m->kv_heads = kv ? kv : m->heads;
    m->ffn = inner ? inner : 4 * m->hidden;
    m->max_pos = max_pos;
    bool tied = false;
    switch (f) {
    case F_LLAMA:
    case F_QWEN2: {
        m->pos = DP_LLM_POS_ROTARY;
        m->norm = DP_LLM_NORM_RMS;
        m->gated = true;
        m->qkv_bias = f == F_QWEN2; /* Qwen2's q, k, v projections carry biases */
        if ((st = flag(root, "attention_bias", file, &m->qkv_bias, err)) ||
            (st = flag(root, "mlp_bias", file, &m->mlp_bias, err)))
            return st;
        m->out_bias = m->qkv_bias && f == F_LLAMA; /* Llama's attention_bias: o_proj too */
        int64_t e = 0, k = 0;
        if ((st = field(root, NAMES("num_local_experts", "num_experts"), true, file, layout, &e,
                        err)) ||
            (st = field(root, NAMES("num_experts_per_tok"), e == 0, file, layout, &k, err)))
            return st;
        m->experts = (int)e;
        m->top_k = (int)k;
        break;
    }
    case F_GPT2:
        m->pos = DP_LLM_POS_LEARNED;
        m->qkv_bias = m->out_bias = m->mlp_bias = true;
        tied = true;
        break;
    case F_NEOX:
        m->pos = DP_LLM_POS_ROTARY;
        m->qkv_bias = m->out_bias = m->mlp_bias = true;
        m->parallel = true;
        if ((st = flag(root, "use_parallel_residual", file, &m->parallel, err))) return st;
        break;
    case F_GPTJ:
        m->pos = DP_LLM_POS_ROTARY;
        m->mlp_bias = m->head_bias = true;
        m->parallel = true;
        m->norms_per_layer = 1;
        break;
    case F_FALCON: {
        bool mq = false, new_arch = false, bias = false;
        m->parallel = true;
        tied = true;
        if ((st = flag(root, "multi_query", file, &mq, err)) ||
            (st = flag(root, "new_decoder_architecture", file, &new_arch, err)) ||
            (st = flag(root, "parallel_attn", file, &m->parallel, err)) ||
            (st = flag(root, "bias", file, &bias, err)))
            return st;
        m->pos = DP_LLM_POS_ROTARY;
        m->qkv_bias = m->out_bias = m->mlp_bias = bias;
        if (!new_arch) m->kv_heads = mq ? 1 : m->heads;
        else if (!kv) /* new_decoder_architecture names its groups num_kv_heads */
            return dp_error_set(err, DP_ERR_INVALID, "%s:$: missing \"num_kv_heads\" (falcon's "
                                "new_decoder_architecture needs it)", file);
        m->norms_per_layer = new_arch || !m->parallel ? 2 : 1;
        break;
    }
    case F_BERT:
        m->encoder = true;
        m->pos = DP_LLM_POS_LEARNED;
        m->qkv_bias = m->out_bias = m->mlp_bias = true;
        m->embed_norm = true;
        m->final_norm = false;
        m->pooler = true;
        m->type_vocab = 2;
        tied = true;
        if ((st = field(root, NAMES("type_vocab_size"), true, file, layout, &m->type_vocab, err)))
            return st;
        if (!max_pos)
            return dp_error_set(err, DP_ERR_INVALID, "%s:$: missing \"max_position_embeddings\" "
                                "(the %s layout needs it)", file, layout);
        break;
    case F_T5:
        m->encoder = true;
        m->pos = DP_LLM_POS_RELATIVE;
        m->norm = DP_LLM_NORM_RMS;
        m->act = m->gated ? m->act : DP_LLM_ACT_RELU;
        tied = true;
        break;
    }
    m->tied = tied;
    if ((st = flag(root, "tie_word_embeddings", file, &m->tied, err))) return st;
    if (f == F_T5 || f == F_BERT) m->tied = true; /* an encoder's MLM output is its embedding */
    m->seq = seq ? seq : m->pos == DP_LLM_POS_LEARNED && max_pos ? max_pos : 2048;
    return dp_llm_check(m, file, err);
}

enum dp_status dp_llm_load_hf(const char *path, int64_t seq, struct dp_llm *out,
                              struct dp_error *err) {
    static const struct dp_read_spec spec = {"Hugging Face config.json", 16 << 20, true, NULL,
                                             NULL};
    cJSON *root = NULL;
    enum dp_status st = dp_json_load(path, &spec, &root, err);
    if (st) return st;
    struct dp_llm m;
    if (!cJSON_IsObject(root))
        st = dp_error_set(err, DP_ERR_PARSE, "%s:$: expected a JSON object", dp_file_name(path));
    else st = read_config(root, dp_file_name(path), seq, &m, err);
    cJSON_Delete(root);
    if (!st) *out = m;
    return st;
}
