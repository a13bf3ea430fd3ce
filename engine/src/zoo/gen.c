/* gen.c: the architecture generator's draws (one seeded stream per (seed, index): the kind, then
 * the kind's description), its names, the closed-form parameter counts, descriptions, and
 * dp_gen_build, which runs a kind's builder (gen_cnn.c, gen_seq.c) and the zoo's training
 * expansion. The ranges aim at what people train: widths, depths, kernels, sequence lengths and
 * batches of published models and their neighbours, with sizes spread on a log scale. */
#include "dp/zoo_gen.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "zoo/gen_impl.h"

static const char *const kind_names[DP_GEN_KIND_COUNT] = {"cnn", "transformer", "rnn", "mlp",
                                                           "mixer"};
static const char *const block_names[DP_GEN_BLOCK_COUNT] = {
    "plain", "residual", "bottleneck", "inverted", "separable", "grouped", "dense"};
static const char *const act_names[DP_GEN_ACT_COUNT] = {"relu", "relu6", "swish"};
static const char *const variant_names[] = {"encoder", "decoder", "encoder-decoder", "vision",
                                            "swin"};

const char *dp_gen_kind_name(enum dp_gen_kind k) {
    return (unsigned)k < DP_GEN_KIND_COUNT ? kind_names[k] : "?";
}

bool dp_gen_kind_parse(const char *s, enum dp_gen_kind *out) {
    for (int k = 0; s && k < DP_GEN_KIND_COUNT; k++)
        if (!strcmp(s, kind_names[k])) {
            *out = (enum dp_gen_kind)k;
            return true;
        }
    return false;
}

const char *dp_gen_block_name(enum dp_gen_block k) {
    return (unsigned)k < DP_GEN_BLOCK_COUNT ? block_names[k] : "?";
}

/* ---- draws ---- */

#define PICK(s, arr) ((arr)[dp_rng_next(s) % (sizeof(arr) / sizeof((arr)[0]))])

static bool chance(uint64_t *s, double p) { return dp_rng_uniform(s) < p; }

/* A uniform integer in [lo, hi]. */
static int in_range(uint64_t *s, int lo, int hi) {
    return lo + (int)(dp_rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* An integer in [lo, hi] spread evenly on a log scale, rounded to a multiple of `mult`. */
static int log_range(uint64_t *s, int lo, int hi, int mult) {
    double v = exp(log(lo) + dp_rng_uniform(s) * (log(hi) - log(lo)));
    int r = (int)lround(v / mult) * mult;
    return r < lo ? lo : r > hi ? hi : r;
}

static int round_up(int v, int mult) { return (v + mult - 1) / mult * mult; }

static enum dp_gen_act draw_act(uint64_t *s) {
    double u = dp_rng_uniform(s);
    return u < 0.55 ? DP_GEN_RELU : u < 0.75 ? DP_GEN_RELU6 : DP_GEN_SWISH;
}

static enum dp_gen_block draw_block(uint64_t *s) {
    /* Percent weights of plain, residual, bottleneck, inverted, separable, grouped, dense. */
    static const int w[DP_GEN_BLOCK_COUNT] = {12, 16, 18, 18, 10, 13, 13};
    int u = (int)(dp_rng_next(s) % 100), acc = 0;
    for (int k = 0; k < DP_GEN_BLOCK_COUNT; k++)
        if (u < (acc += w[k])) return (enum dp_gen_block)k;
    return DP_GEN_BOTTLENECK;
}

static int64_t cnn_body_params(const struct dp_gen_cnn *c, int64_t *out_ch);

static void sample_cnn(uint64_t *s, struct dp_gen_cnn *c, int64_t *batch) {
    static const int inputs[] = {32, 64, 96, 128, 160, 192, 224, 224, 224, 256, 299};
    static const int stems[] = {16, 24, 32, 32, 48, 64, 64, 96};
    static const int stem_k[] = {3, 3, 5, 7};
    static const int classes[] = {10, 100, 1000, 1000};
    static const int heads[] = {256, 512, 1024, 2048, 4096};
    c->input = PICK(s, inputs);
    int64_t side = c->input;
    c->stem_width = PICK(s, stems);
    c->stem_kernel = PICK(s, stem_k);
    c->stem_stride = side >= 96 || chance(s, 0.3) ? 2 : 1;
    side = (side + c->stem_stride - 1) / c->stem_stride;
    c->stem_pool = side >= 64 && chance(s, 0.5);
    if (c->stem_pool) side = (side + 1) / 2;
    c->act = draw_act(s);
    bool one_kind = chance(s, 0.75);
    enum dp_gen_block kind = draw_block(s);
    c->n_stages = in_range(s, 2, DP_GEN_MAX_STAGES);
    double width = c->stem_width * (chance(s, 0.5) ? 1.0 : 2.0), growth = chance(s, 0.7) ? 2.0 : 1.5;
    for (int i = 0; i < c->n_stages; i++) {
        struct dp_gen_stage *st = &c->stage[i];
        memset(st, 0, sizeof *st);
        st->block = one_kind ? kind : draw_block(s);
        st->stride = (i == 0 && chance(s, 0.5)) || side < 4 ? 1 : 2;
        side = st->block == DP_GEN_DENSE ? side / st->stride : (side + st->stride - 1) / st->stride;
        static const int k_dw[] = {3, 3, 5, 7}, k_conv[] = {3, 3, 3, 3, 5, 7};
        bool dw = st->block == DP_GEN_INVERTED || st->block == DP_GEN_SEPARABLE;
        st->kernel = dw ? PICK(s, k_dw) : PICK(s, k_conv);
        int w = round_up((int)fmin(1024, width), 8);
        width *= growth;
        static const int growths[] = {12, 16, 24, 32}, ratios[] = {1, 3, 4, 6, 6}, groups[] = {2, 4, 8};
        switch (st->block) {
        case DP_GEN_PLAIN:
            st->depth = in_range(s, 1, 4);
            st->pool = st->stride == 2 && chance(s, 0.6);
            break;
        case DP_GEN_RESIDUAL: st->depth = in_range(s, 1, 4); break;
        case DP_GEN_BOTTLENECK:
        case DP_GEN_GROUPED:
            st->depth = in_range(s, 1, st->block == DP_GEN_GROUPED ? 4 : 6);
            st->groups = st->block == DP_GEN_GROUPED ? PICK(s, groups) : 1;
            w *= chance(s, 0.5) ? 2 : 4; /* the output is the wide side, at most ResNet's */
            if (w > 2048) w = 2048;
            st->inner = round_up(w / (chance(s, 0.6) ? 4 : 2), 8 * st->groups);
            break;
        case DP_GEN_INVERTED:
            st->depth = in_range(s, 1, 4);
            st->expand = PICK(s, ratios);
            w = round_up(w / 2, 8);
            break;
        case DP_GEN_SEPARABLE: st->depth = in_range(s, 1, 3); break;
        case DP_GEN_DENSE: st->depth = in_range(s, 2, 12); w = PICK(s, growths); break;
        default: break;
        }
        st->width = w;
        st->se = (st->block == DP_GEN_RESIDUAL || st->block == DP_GEN_BOTTLENECK ||
                  st->block == DP_GEN_INVERTED || st->block == DP_GEN_GROUPED) && chance(s, 0.3);
    }
    c->head_width = chance(s, 0.25) ? PICK(s, heads) : 0;
    c->dropout = chance(s, 0.5) ? (chance(s, 0.5) ? 0.2 : 0.5) : 0;
    c->classes = PICK(s, classes);
    static const int small[] = {64, 128, 256}, mid[] = {32, 64, 128}, large[] = {16, 32, 64};
    *batch = c->input <= 64 ? PICK(s, small) : c->input <= 160 ? PICK(s, mid) : PICK(s, large);
    c->folded = chance(s, 0.2); /* drawn last: the other draws stay those of earlier sessions */
    /* AlexNet's and VGG's classifier (drawn after folded, for the same reason): the last map
     * average-pooled to at most 7 x 7 and VGG's 25,088 inputs, flattened, two wide layers. Most
     * of such a network's parameters sit there, few of its FLOPs: its transfers, not its
     * compute, set a step's time on many clusters, which no global-pooling CNN shows. */
    if (chance(s, 0.2)) {
        static const int fc[] = {1024, 2048, 4096};
        int64_t ch, p = 1;
        cnn_body_params(c, &ch);
        while (side / p > 1 && (side / p > 7 || (side / p) * (side / p) * ch > 25088)) p++;
        c->flat_pool = (int)p;
        c->flat_side = (int)(side / p);
        c->head_width = PICK(s, fc);
        c->dropout = 0.5;
    }
}

/* A power-of-two batch that gives at most about `tokens` tokens per step (1 .. 512). */
static int64_t token_batch(uint64_t *s, int64_t seq) {
    static const int budget[] = {4096, 8192, 16384, 32768};
    int64_t b = 1, want = PICK(s, budget) / seq;
    while (b * 2 <= want && b < 512) b *= 2;
    return b;
}

/* A Swin-like encoder (torchvision's Swin-T/S/B and smaller): the image side is the window
 * times the patch times 2^(stages - 1), so every stage's map holds whole windows and the last
 * one window (as Swin-T's 7 x 7 at 224 px); pairs of blocks, the second-last stage the deep
 * one; 16- or 32-wide heads. */
static void sample_swin(uint64_t *s, struct dp_gen_transformer *t, int64_t *batch) {
    static const int windows[] = {4, 7, 7, 8, 12}, widths[] = {48, 64, 96, 96, 128, 192};
    static const int ratios[] = {2, 4, 4}, classes[] = {10, 100, 1000, 1000};
    static const int small[] = {64, 128, 256}, mid[] = {16, 32, 64, 128}, large[] = {8, 16, 32};
    t->variant = DP_GEN_SWIN;
    t->window = PICK(s, windows);
    t->stages = in_range(s, 2, 4);
    t->patch = chance(s, 0.75) ? 4 : 2;
    while (t->stages > 2 && ((int64_t)t->window * t->patch << (t->stages - 1)) > 512) t->stages--;
    t->seq = (int64_t)t->window * t->patch << (t->stages - 1);
    t->d_model = PICK(s, widths);
    t->heads = t->d_model / (t->d_model % 32 ? 16 : 32);
    t->inner = t->d_model * PICK(s, ratios);
    t->enc_layers = 0;
    for (int i = 0; i < DP_GEN_MAX_STAGES; i++) {
        bool deep = t->stages > 2 && i == t->stages - 2;
        int pairs = i >= t->stages ? 0 : deep ? log_range(s, 1, 9, 1) : in_range(s, 1, 2);
        t->stage_layers[i] = 2 * pairs;
        t->enc_layers += t->stage_layers[i];
    }
    t->dec_layers = 0;
    t->vocab = 0;
    t->pre_norm = t->gelu = t->fused_qkv = true;
    t->classes = PICK(s, classes);
    *batch = t->seq <= 64 ? PICK(s, small) : t->seq <= 256 ? PICK(s, mid) : PICK(s, large);
}

static void sample_transformer(uint64_t *s, struct dp_gen_transformer *t, int64_t *batch) {
    static const int head_dims[] = {32, 64, 64, 128}, n_heads[] = {2, 4, 6, 8, 12, 16};
    static const int ratios[] = {2, 3, 4, 4}, vocabs[] = {8000, 16000, 30522, 32000, 50257};
    static const int enc_seq[] = {64, 128, 256, 384, 512}, dec_seq[] = {128, 256, 512, 1024};
    static const int ed_seq[] = {32, 64, 128, 256}, sides[] = {32, 64, 96, 128, 224, 224, 256, 384};
    static const int patches[] = {4, 8, 14, 16, 32}, classes[] = {2, 3, 10, 100};
    double u = dp_rng_uniform(s);
    t->variant = u < 0.35 ? DP_GEN_ENCODER : u < 0.65 ? DP_GEN_DECODER
                 : u < 0.8 ? DP_GEN_ENCDEC : DP_GEN_VISION;
    int hd = PICK(s, head_dims), h = PICK(s, n_heads);
    while (h > 1 && h * hd > 1536) h /= 2;
    t->heads = h;
    t->d_model = h * hd;
    t->inner = t->d_model * PICK(s, ratios);
    t->vocab = PICK(s, vocabs);
    t->enc_layers = t->dec_layers = 0;
    t->patch = 0;
    t->classes = 0;
    t->fused_qkv = false;
    switch (t->variant) {
    case DP_GEN_ENCODER:
        t->enc_layers = log_range(s, 1, 24, 1);
        t->seq = PICK(s, enc_seq);
        t->pre_norm = chance(s, 0.4);
        t->classes = chance(s, 0.5) ? PICK(s, classes) : 0;
        break;
    case DP_GEN_DECODER:
        t->dec_layers = log_range(s, 1, 24, 1);
        t->seq = PICK(s, dec_seq);
        t->pre_norm = chance(s, 0.8);
        t->fused_qkv = chance(s, 0.5);
        break;
    case DP_GEN_ENCDEC:
        t->enc_layers = log_range(s, 1, 8, 1);
        t->dec_layers = log_range(s, 1, 8, 1);
        t->seq = PICK(s, ed_seq);
        t->pre_norm = chance(s, 0.6);
        break;
    default: /* vision (a Swin-like one is drawn after, by sample_swin) */
        t->enc_layers = log_range(s, 1, 24, 1);
        t->seq = PICK(s, sides);
        t->pre_norm = chance(s, 0.8);
        t->classes = 1000;
        /* The first patch (from a random start) that divides the side into 16 .. 1024 tokens. */
        for (int k = 0, at = (int)(dp_rng_next(s) % 5); k < 5 && !t->patch; k++) {
            int p = patches[(at + k) % 5];
            int64_t n = t->seq / p;
            if (t->seq % p == 0 && n * n >= 16 && n * n <= 1024) t->patch = p;
        }
        if (!t->patch) t->patch = (int)(t->seq / 4); /* 4 x 4 tokens */
        break;
    }
    t->gelu = chance(s, t->variant == DP_GEN_ENCDEC ? 0.3 : 0.75);
    int64_t tokens = t->variant == DP_GEN_VISION ? (t->seq / t->patch) * (t->seq / t->patch)
                                                 : t->seq;
    *batch = token_batch(s, tokens);
    /* Swin-like for a fifth of transformers, drawn last: the other draws stay those of earlier
     * sessions (the transformers drawn Swin-like are replaced). */
    if (chance(s, 0.2)) sample_swin(s, t, batch);
}

static void sample_rnn(uint64_t *s, struct dp_gen_rnn *r, int64_t *batch) {
    static const int vocabs[] = {5000, 10000, 20000, 32000}, classes[] = {2, 5, 10, 100};
    static const int batches[] = {16, 20, 32, 64, 128};
    r->gru = chance(s, 0.4);
    r->layers = in_range(s, 1, 4);
    r->hidden = log_range(s, 64, 1536, 32);
    r->embed = chance(s, 0.5) ? r->hidden : log_range(s, 64, 1024, 32);
    r->vocab = PICK(s, vocabs);
    r->seq = in_range(s, 8, 160 / r->layers < 100 ? 160 / r->layers : 100);
    r->classes = chance(s, 0.3) ? PICK(s, classes) : 0;
    *batch = PICK(s, batches);
}

static void sample_mlp(uint64_t *s, struct dp_gen_mlp *m, int64_t *batch) {
    static const int inputs[] = {32, 64, 128, 256, 512, 784, 1024, 2048, 3072, 4096};
    static const int classes[] = {2, 10, 100, 1000}, batches[] = {32, 64, 128, 256, 512, 1024};
    static const double drops[] = {0.1, 0.2, 0.5};
    m->input = PICK(s, inputs);
    m->layers = in_range(s, 1, DP_GEN_MAX_LAYERS);
    int pattern = in_range(s, 0, 2), w = log_range(s, 64, 8192, 32);
    for (int l = 0; l < DP_GEN_MAX_LAYERS; l++) {
        if (l >= m->layers) m->width[l] = 0;
        else if (pattern == 0) m->width[l] = w;                                /* constant */
        else if (pattern == 1) m->width[l] = round_up((w >> l) > 32 ? w >> l : 32, 8); /* funnel */
        else m->width[l] = log_range(s, 32, 8192, 32);                         /* random */
    }
    m->layer_norm = chance(s, 0.3);
    m->dropout = chance(s, 0.4) ? PICK(s, drops) : 0;
    m->act = draw_act(s);
    m->classes = PICK(s, classes);
    *batch = PICK(s, batches);
}

static void sample_mixer(uint64_t *s, struct dp_gen_mixer *m, int64_t *batch) {
    static const int sides[] = {32, 64, 96, 128, 224, 224}, patches[] = {4, 8, 16, 32};
    static const int ds[] = {128, 192, 256, 384, 512, 768}, tok[] = {64, 128, 256, 384};
    static const int classes[] = {10, 100, 1000};
    m->input = PICK(s, sides);
    m->patch = 0;
    for (int k = 0, at = (int)(dp_rng_next(s) % 4); k < 4 && !m->patch; k++) {
        int p = patches[(at + k) % 4];
        int64_t n = m->input / p;
        if (m->input % p == 0 && n * n >= 16 && n * n <= 1024) m->patch = p;
    }
    if (!m->patch) m->patch = (int)(m->input / 4);
    m->d = PICK(s, ds);
    m->layers = log_range(s, 2, 16, 1);
    m->token_mlp = PICK(s, tok);
    m->channel_mlp = m->d * (chance(s, 0.5) ? 2 : 4);
    m->classes = PICK(s, classes);
    int64_t n = m->input / m->patch;
    *batch = token_batch(s, n * n);
}

void dp_gen_sample(uint64_t seed, int64_t index, int kind, struct dp_gen_arch *out) {
    memset(out, 0, sizeof *out);
    uint64_t s = seed * UINT64_C(0x100000001B3) ^ (uint64_t)index * UINT64_C(0x9E3779B97F4A7C15);
    dp_rng_next(&s);
    double u = dp_rng_uniform(&s);
    enum dp_gen_kind k = u < 0.45 ? DP_GEN_CNN : u < 0.70 ? DP_GEN_TRANSFORMER
                         : u < 0.80 ? DP_GEN_RNN : u < 0.90 ? DP_GEN_MLP : DP_GEN_MIXER;
    if (kind >= 0 && kind < DP_GEN_KIND_COUNT) k = (enum dp_gen_kind)kind;
    out->kind = k;
    out->seed = seed;
    out->index = index;
    snprintf(out->name, sizeof out->name, "gen-%s-s%llu-%lld", kind_names[k],
             (unsigned long long)seed, (long long)index);
    switch (k) {
    case DP_GEN_CNN: sample_cnn(&s, &out->u.cnn, &out->batch); break;
    case DP_GEN_TRANSFORMER: sample_transformer(&s, &out->u.tf, &out->batch); break;
    case DP_GEN_RNN: sample_rnn(&s, &out->u.rnn, &out->batch); break;
    case DP_GEN_MLP: sample_mlp(&s, &out->u.mlp, &out->batch); break;
    default: sample_mixer(&s, &out->u.mixer, &out->batch); break;
    }
}

/* Reads a decimal number at *p (no sign), moving *p past it; false when there is none or it
 * overflows. */
static bool read_number(const char **p, unsigned long long *v) {
    const char *q = *p;
    if (*q < '0' || *q > '9') return false;
    unsigned long long x = 0;
    for (; *q >= '0' && *q <= '9'; q++) {
        unsigned long long d = (unsigned long long)(*q - '0');
        if (x > (~0ULL - d) / 10) return false;
        x = x * 10 + d;
    }
    *p = q;
    *v = x;
    return true;
}

bool dp_gen_parse_name(const char *name, struct dp_gen_arch *out) {
    if (!name || strncmp(name, "gen-", 4)) return false;
    const char *p = name + 4;
    for (int k = 0; k < DP_GEN_KIND_COUNT; k++) {
        size_t n = strlen(kind_names[k]);
        if (strncmp(p, kind_names[k], n) || strncmp(p + n, "-s", 2)) continue;
        const char *q = p + n + 2;
        unsigned long long seed, index;
        if (!read_number(&q, &seed) || *q++ != '-' || !read_number(&q, &index) || *q ||
            index > (unsigned long long)INT64_MAX)
            return false;
        if (out) dp_gen_sample(seed, (int64_t)index, k, out);
        return true;
    }
    return false;
}

bool dp_gen_is_generated(const char *name) { return dp_gen_parse_name(name, NULL); }

/* ---- closed-form parameter counts (trainable), from the description alone ---- */

/* A convolution's weights and, per output channel, BN's gamma and beta (nb 2) or a bias (1). */
static int64_t conv_nb(int64_t cin, int64_t cout, int64_t k, int64_t nb) {
    return k * k * cin * cout + nb * cout;
}
static int64_t dense_p(int64_t in, int64_t out) { return in * out + out; }
static int64_t se_p(int64_t c) {
    int64_t r = c / 4 < 8 ? 8 : c / 4;
    return dense_p(c, r) + dense_p(r, c);
}

/* The parameters of the stem and the stages; *out_ch: the last feature map's channels. */
static int64_t cnn_body_params(const struct dp_gen_cnn *c, int64_t *out_ch) {
    /* per channel of a normalised layer: gamma and beta, or the folded bias (nb); of
     * DenseNet's stand-alone BN (bn): none when folded */
    int64_t nb = c->folded ? 1 : 2, bn = c->folded ? 0 : 2;
    int64_t n = conv_nb(3, c->stem_width, c->stem_kernel, nb), ch = c->stem_width;
    for (int i = 0; i < c->n_stages; i++) {
        const struct dp_gen_stage *st = &c->stage[i];
        int64_t w = st->width, k = st->kernel;
        if (st->block == DP_GEN_DENSE && st->stride == 2) { /* transition */
            int64_t half = ch / 2 < 8 ? 8 : ch / 2;
            n += bn * ch + conv_nb(ch, half, 1, 1);
            ch = half;
        }
        for (int r = 0; r < st->depth; r++) {
            bool first = r == 0, strided = first && st->stride == 2 && !st->pool &&
                                          st->block != DP_GEN_DENSE;
            switch (st->block) {
            case DP_GEN_PLAIN: n += conv_nb(ch, w, k, nb); ch = w; break;
            case DP_GEN_RESIDUAL:
                n += conv_nb(ch, w, k, nb) + conv_nb(w, w, k, nb) +
                     (strided || ch != w ? conv_nb(ch, w, 1, nb) : 0);
                n += st->se ? se_p(w) : 0;
                ch = w;
                break;
            case DP_GEN_BOTTLENECK:
            case DP_GEN_GROUPED: {
                int64_t in = st->inner, g = st->groups;
                n += conv_nb(ch, in, 1, nb) + g * k * k * (in / g) * (in / g) + nb * in +
                     conv_nb(in, w, 1, nb) + (strided || ch != w ? conv_nb(ch, w, 1, nb) : 0);
                n += st->se ? se_p(w) : 0;
                ch = w;
                break;
            }
            case DP_GEN_INVERTED: {
                int64_t e = ch * st->expand;
                n += (st->expand != 1 ? conv_nb(ch, e, 1, nb) : 0) + k * k * e + nb * e +
                     (st->se ? se_p(e) : 0) + conv_nb(e, w, 1, nb);
                ch = w;
                break;
            }
            case DP_GEN_SEPARABLE: n += k * k * ch + nb * ch + conv_nb(ch, w, 1, nb); ch = w; break;
            case DP_GEN_DENSE:
                n += bn * ch + conv_nb(ch, 4 * w, 1, 1) + bn * 4 * w + conv_nb(4 * w, w, k, 1);
                ch += w;
                break;
            default: break;
            }
        }
    }
    *out_ch = ch;
    return n;
}

static int64_t cnn_params(const struct dp_gen_cnn *c) {
    int64_t ch, n = cnn_body_params(c, &ch);
    if (c->flat_pool > 0) {
        int64_t h = c->head_width;
        return n + dense_p((int64_t)c->flat_side * c->flat_side * ch, h) + dense_p(h, h) +
               dense_p(h, c->classes);
    }
    if (c->head_width > 0) {
        n += dense_p(ch, c->head_width);
        ch = c->head_width;
    }
    return n + dense_p(ch, c->classes);
}

/* One transformer layer: self-attention, cross-attention when `cross`, feed-forward, and the
 * LayerNorm of each (gamma, beta). */
static int64_t tf_layer(int64_t d, int64_t inner, bool cross) {
    int64_t attn = 4 * (d * d + d);
    return attn * (cross ? 2 : 1) + dense_p(d, inner) + dense_p(inner, d) + 2 * d * (cross ? 3 : 2);
}

/* Swin-like: patch embedding (conv with bias, LayerNorm); per block two LayerNorms, the qkv and
 * output projections, the relative-position bias table ((2w - 1)^2 x heads) and the MLP; per
 * merge a LayerNorm of 4c and a 4c x 2c map without bias; the final LayerNorm and classifier. */
static int64_t swin_params(const struct dp_gen_transformer *t) {
    int64_t c = t->d_model, h = t->heads, inner = t->inner, w = t->window;
    int64_t n = conv_nb(3, c, t->patch, 1) + 2 * c;
    for (int st = 0; st < t->stages; st++) {
        if (st) {
            n += 2 * 4 * c + 4 * c * 2 * c;
            c *= 2, h *= 2, inner *= 2;
        }
        n += t->stage_layers[st] * (4 * c + dense_p(c, 3 * c) + (2 * w - 1) * (2 * w - 1) * h +
                                    dense_p(c, c) + dense_p(c, inner) + dense_p(inner, c));
    }
    return n + 2 * c + dense_p(c, t->classes);
}

static int64_t tf_params(const struct dp_gen_transformer *t) {
    if (t->variant == DP_GEN_SWIN) return swin_params(t);
    int64_t d = t->d_model, n = 0, final_ln = t->pre_norm ? 2 * d : 0;
    n += t->enc_layers * tf_layer(d, t->inner, false) + (t->enc_layers ? final_ln : 0);
    n += t->dec_layers * tf_layer(d, t->inner, t->variant == DP_GEN_ENCDEC) +
         (t->dec_layers ? final_ln : 0);
    switch (t->variant) {
    case DP_GEN_ENCODER:
        n += (int64_t)t->vocab * d + t->seq * d + (t->pre_norm ? 0 : 2 * d); /* embedding LN */
        n += t->classes ? dense_p(d, d) + dense_p(d, t->classes)
                        : dense_p(d, d) + 2 * d + t->vocab; /* MLM transform, LN, output bias */
        break;
    case DP_GEN_DECODER: n += (int64_t)t->vocab * d + t->seq * d; break;
    case DP_GEN_ENCDEC: n += 2 * (int64_t)t->vocab * d + t->vocab; break;
    default: { /* vision */
        int64_t p = t->patch, tokens = (t->seq / p) * (t->seq / p);
        n += conv_nb(3, d, p, 1) + tokens * d + dense_p(d, t->classes);
        break;
    }
    }
    return n;
}

static int64_t rnn_params(const struct dp_gen_rnn *r) {
    int64_t n = (int64_t)r->vocab * r->embed, h = r->hidden;
    for (int l = 0; l < r->layers; l++) {
        int64_t in = l ? h : r->embed;
        n += r->gru ? dense_p(in + h, 2 * h) + dense_p(in + h, h) : dense_p(in + h, 4 * h);
    }
    return n + dense_p(h, r->classes ? r->classes : r->vocab);
}

static int64_t mlp_params(const struct dp_gen_mlp *m) {
    int64_t n = 0, in = m->input;
    for (int l = 0; l < m->layers; l++) {
        n += dense_p(in, m->width[l]) + (m->layer_norm ? 2 * m->width[l] : 0);
        in = m->width[l];
    }
    return n + dense_p(in, m->classes);
}

static int64_t mixer_params(const struct dp_gen_mixer *m) {
    int64_t d = m->d, t = (m->input / m->patch) * (m->input / m->patch);
    int64_t layer = 4 * d + dense_p(t, m->token_mlp) + dense_p(m->token_mlp, t) +
                    dense_p(d, m->channel_mlp) + dense_p(m->channel_mlp, d);
    return conv_nb(3, d, m->patch, 1) + m->layers * layer + 2 * d + dense_p(d, m->classes);
}

int64_t dp_gen_params(const struct dp_gen_arch *a) {
    switch (a->kind) {
    case DP_GEN_CNN: return cnn_params(&a->u.cnn);
    case DP_GEN_TRANSFORMER: return tf_params(&a->u.tf);
    case DP_GEN_RNN: return rnn_params(&a->u.rnn);
    case DP_GEN_MLP: return mlp_params(&a->u.mlp);
    case DP_GEN_MIXER: return mixer_params(&a->u.mixer);
    default: return 0;
    }
}

/* ---- descriptions ---- */

struct text {
    char  *buf;
    size_t n, len;
};

static void put(struct text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(struct text *t, const char *fmt, ...) {
    if (t->len + 1 >= t->n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->len, t->n - t->len, fmt, ap);
    va_end(ap);
    if (k > 0) t->len = t->len + (size_t)k < t->n ? t->len + (size_t)k : t->n - 1;
}

void dp_gen_describe(const struct dp_gen_arch *a, char *buf, size_t n) {
    if (!n) return;
    struct text t = {buf, n, 0};
    buf[0] = '\0';
    switch (a->kind) {
    case DP_GEN_CNN: {
        const struct dp_gen_cnn *c = &a->u.cnn;
        put(&t, "cnn %lldpx, %s: stem %d k%d/%d%s;", (long long)c->input, act_names[c->act],
            c->stem_width, c->stem_kernel, c->stem_stride, c->stem_pool ? "+pool" : "");
        for (int i = 0; i < c->n_stages; i++) {
            const struct dp_gen_stage *st = &c->stage[i];
            put(&t, " %s %dx%d k%d/%d%s", block_names[st->block], st->depth, st->width,
                st->kernel, st->stride, st->pool ? "pool" : "");
            if (st->block == DP_GEN_BOTTLENECK || st->block == DP_GEN_GROUPED)
                put(&t, " inner %d", st->inner);
            if (st->block == DP_GEN_GROUPED) put(&t, " g%d", st->groups);
            if (st->block == DP_GEN_INVERTED) put(&t, " t%d", st->expand);
            if (st->se) put(&t, " se");
            put(&t, ";");
        }
        if (c->flat_pool)
            put(&t, " flatten %dx%d, fc %d x2;", c->flat_side, c->flat_side, c->head_width);
        else if (c->head_width)
            put(&t, " fc %d;", c->head_width);
        put(&t, " %d classes%s", c->classes, c->folded ? ", BN folded" : "");
        break;
    }
    case DP_GEN_TRANSFORMER: {
        const struct dp_gen_transformer *f = &a->u.tf;
        put(&t, "transformer %s: ", variant_names[f->variant]);
        if (f->variant == DP_GEN_SWIN) {
            put(&t, "%lldpx patches %d, window %d, layers", (long long)f->seq, f->patch,
                f->window);
            for (int i = 0; i < f->stages; i++) put(&t, "%s%d", i ? "-" : " ", f->stage_layers[i]);
            put(&t, ", d %d, %d heads, ffn %d (doubling per stage), %d classes", f->d_model,
                f->heads, f->inner, f->classes);
            break;
        }
        if (f->enc_layers) put(&t, "%d enc ", f->enc_layers);
        if (f->dec_layers) put(&t, "%d dec ", f->dec_layers);
        put(&t, "layers, d %d, %d heads, ffn %d (%s), %s-norm%s, ", f->d_model, f->heads, f->inner,
            f->gelu ? "gelu" : "relu", f->pre_norm ? "pre" : "post", f->fused_qkv ? ", fused qkv" : "");
        if (f->variant == DP_GEN_VISION)
            put(&t, "%lldpx patches %d, %d classes", (long long)f->seq, f->patch, f->classes);
        else
            put(&t, "seq %lld, vocab %d%s", (long long)f->seq, f->vocab,
                f->variant == DP_GEN_ENCODER ? (f->classes ? ", classifier" : ", masked LM") : "");
        break;
    }
    case DP_GEN_RNN: {
        const struct dp_gen_rnn *r = &a->u.rnn;
        put(&t, "rnn %s: %d layers of %d, embedding %d, vocab %d, %lld steps, %s", r->gru ? "gru" : "lstm",
            r->layers, r->hidden, r->embed, r->vocab, (long long)r->seq,
            r->classes ? "classifier" : "language model");
        break;
    }
    case DP_GEN_MLP: {
        const struct dp_gen_mlp *m = &a->u.mlp;
        put(&t, "mlp %lld in, %s:", (long long)m->input, act_names[m->act]);
        for (int l = 0; l < m->layers; l++) put(&t, " %d", m->width[l]);
        put(&t, "%s%s, %d classes", m->layer_norm ? ", layer norm" : "",
            m->dropout > 0 ? ", dropout" : "", m->classes);
        break;
    }
    case DP_GEN_MIXER: {
        const struct dp_gen_mixer *m = &a->u.mixer;
        put(&t, "mixer %lldpx patches %d: %d layers, d %d, token mlp %d, channel mlp %d, %d classes",
            (long long)m->input, m->patch, m->layers, m->d, m->token_mlp, m->channel_mlp,
            m->classes);
        break;
    }
    default: break;
    }
}

/* ---- building ---- */

/* Runs the builder of a's kind (zoo_build_graph's forward callback). */
static int gen_forward(struct zb *b, const void *ctx) {
    const struct dp_gen_arch *a = ctx;
    switch (a->kind) {
    case DP_GEN_CNN: return zoo_gen_cnn(b, &a->u.cnn);
    case DP_GEN_TRANSFORMER: return zoo_gen_transformer(b, &a->u.tf);
    case DP_GEN_RNN: return zoo_gen_rnn(b, &a->u.rnn);
    case DP_GEN_MLP: return zoo_gen_mlp(b, &a->u.mlp);
    case DP_GEN_MIXER: return zoo_gen_mixer(b, &a->u.mixer);
    default: return zb_fail(b, DP_ERR_INVALID, "unknown kind %d", (int)a->kind);
    }
}

enum dp_status dp_gen_build(const struct dp_gen_arch *a, const struct dp_zoo_opts *opts,
                            struct dp_graph **out, struct dp_error *err) {
    struct dp_zoo_opts o;
    if (opts) o = *opts;
    else dp_zoo_opts_default(&o);
    if (o.batch == 0) o.batch = a->batch;
    return zoo_build_graph(a->name, &o, gen_forward, a, out, err);
}
