/* plan_model.c: the planner's closed form of one layout: memory per GPU (ZeRO's model states,
 * Korthikanti et al.'s activations per layer, 1F1B's micro-batches in flight), compute at the
 * simulator's achieved tensor-core share, the collectives of tensor, pipeline and data
 * parallelism through the simulator's NCCL model, the 1F1B bubble and what overlap hides. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan_impl.h"

/* Adam: bytes per parameter of optimizer state. Mixed precision keeps an fp32 master copy
 * and both moments (ZeRO's K = 12); fp32 training the two moments. */
#define ADAM_STATE_MIXED 12.0
#define ADAM_STATE_FP32 8.0
/* Adam's step reads and writes about this many bytes per parameter it owns (master, moments,
 * gradient in; master, moments, the 16-bit copy out). */
#define ADAM_STEP_BYTES 28.0

static bool wide(enum dp_precision p) { return p == DP_PREC_FP32 || p == DP_PREC_TF32; }

double plan_peak_tflops(const struct dp_gpu *g, const struct dp_setting *s) {
    double fp16 = g->fp16_tflops;
    switch (s->precision) {
    case DP_PREC_MIXED:
    case DP_PREC_BF16: return fp16;
    case DP_PREC_FP8: return 2 * fp16; /* dense fp8 runs at twice the fp16 rate (H100, Ada) */
    case DP_PREC_TF32: return fp16 / 2;
    default:
        return dp_setting_tf32_matmul(s, dp_gpu_generation(g)) ? fp16 / 2 : g->fp32_tflops;
    }
}

void plan_machine_init(const struct dp_gpu *g, const struct dp_sim_constants *k,
                       const struct dp_sim_fabric *f, double peak, struct plan_machine *mc) {
    enum dp_gpu_gen gen = dp_gpu_generation(g);
    double share = fmin(1.0, k->eff_tensor * k->gen_scale[gen]);
    int dev = g->devices > 1 ? g->devices : 1;
    mc->peak_tflops = peak;
    mc->rate = peak * 1e9 * share; /* FLOP per ms */
    mc->mem_rate = g->bandwidth_gbps / dev * 1e6 * k->eff_mem;
    mc->memory_gb = g->memory_gb / dev;
    mc->context_gb = k->context_gb;
    mc->fabric = *f;
}

/* Activation bytes of one layer for one micro-batch on one GPU (Korthikanti et al. 2022,
 * section 4.1: 34sbh + 5as^2b for GPT at 16 bits, generalised to grouped kv heads and gated
 * MLPs), the s x s score terms left out when flash attention or selective recompute drops
 * them. */
static double layer_act_bytes(const struct dp_llm *m, const struct plan_layout *l, double e,
                              bool scores) {
    double s = (double)m->seq, b = (double)l->micro_batch, h = (double)m->hidden, t = l->tp;
    double hq = (double)(m->heads * m->head_dim), hkv = (double)(m->kv_heads * m->head_dim);
    double f = (double)m->ffn, sbh = s * b * h;
    /* kept whole on every TP rank (split by sequence parallelism): the norms' inputs, the
     * attention's and the MLP's inputs, two dropout masks of a byte */
    double mlp_in = m->parallel && m->norms_per_layer == 1 ? 0 : e;
    double rep = m->norms_per_layer * e + e + mlp_in + 2;
    /* split over TP: q, k, v, the output projection's input, the MLP's inner activations */
    double mlp = (m->gated ? 3 : 2) * e * f / h * (m->experts ? m->top_k : 1);
    double par = e * (hq + 2 * hkv + hq) / h + mlp;
    double bytes = sbh * ((l->sp ? rep / t : rep) + par / t);
    if (scores) bytes += (2 * e + 1) * (double)m->heads * s * s * b / t;
    return bytes;
}

void plan_evaluate(const struct dp_llm *m, const struct plan_layout *l,
                   const struct plan_machine *mc, struct dp_plan_result *r) {
    const double t = l->tp, p = l->pp, d = l->dp, mb = l->microbatches, acc = l->accum;
    const double s = (double)m->seq, b = (double)l->micro_batch, h = (double)m->hidden;
    const double L = (double)m->layers, Ls = ceil(L / p);
    const double e = wide(l->precision) ? 4 : 2; /* bytes of a weight, gradient, activation */
    const double K = wide(l->precision) ? ADAM_STATE_FP32 : ADAM_STATE_MIXED;
    const struct dp_sim_fabric *fab = &mc->fabric;
    memset(r, 0, sizeof *r);
    r->dp = l->dp;
    r->global_batch = l->micro_batch * l->microbatches * l->accum * l->dp;
    r->peak_tflops = mc->peak_tflops;

    /* ---- parameters on the most loaded stage, per GPU ---- */
    double expert = m->experts ? (double)m->experts * ((m->gated ? 3.0 : 2.0) * h * m->ffn) : 0;
    double layer = (double)dp_llm_layer_params(m), dense = layer - expert;
    double embed = (double)dp_llm_embed_params(m);
    if (l->pp > 1 && !m->tied) embed -= (double)(m->vocab * m->hidden); /* head: last stage */
    double per_gpu = (Ls * (dense + expert / l->ep) + embed) / t;
    double zshard = l->shard >= DP_SHARD_ZERO1 ? d : 1;
    r->mem_params_gb = per_gpu * e / (l->shard >= DP_SHARD_ZERO3 ? d : 1) / 1e9;
    r->mem_grads_gb = per_gpu * e / (l->shard >= DP_SHARD_ZERO2 ? d : 1) / 1e9;
    r->mem_optim_gb = per_gpu * K / zshard / 1e9;

    /* ---- activations: 1F1B keeps min(pp, micro-batches) in flight on the first stage ---- */
    bool scores = !l->flash && l->recompute == DP_RECOMPUTE_NONE;
    double act = layer_act_bytes(m, l, e, scores), stored = act;
    if (l->recompute == DP_RECOMPUTE_FULL) /* only each layer's input, one layer rebuilt */
        stored = e * s * b * h / (l->sp ? t : 1);
    double logits = s * b * (double)m->vocab / t * (e + 4); /* and their fp32 softmax */
    double inflight = l->pp > 1 ? fmin(p, mb) : 1;
    double first = inflight * Ls * stored, last = Ls * stored;
    if (l->recompute == DP_RECOMPUTE_FULL) {
        double one = layer_act_bytes(m, l, e, !l->flash);
        first += one;
        last += one;
    }
    if (l->pp > 1) last += logits;
    else first += logits;
    r->mem_act_gb = fmax(first, last) / 1e9;
    double gather = l->shard == DP_SHARD_ZERO3 ? 2 * layer / t * e : 0; /* prefetched layers */
    r->mem_other_gb = mc->context_gb + gather / 1e9;
    r->memory_gb = r->mem_params_gb + r->mem_grads_gb + r->mem_optim_gb + r->mem_act_gb +
                   r->mem_other_gb;
    r->oom = !isnan(mc->memory_gb) && r->memory_gb > mc->memory_gb;

    /* ---- work: 6 FLOPs per matmul parameter and token, attention's 12 L s h_q ---- */
    double hq = (double)(m->heads * m->head_dim);
    double nmm = (double)dp_llm_matmul_params(m), nlayers = nmm - (double)(m->vocab * m->hidden);
    double attn = 12 * L * s * hq;
    double model_tok = 6 * nmm + attn, extra = 0;
    if (l->recompute == DP_RECOMPUTE_FULL) extra = 2 * nlayers + attn / 3;
    else if (l->recompute == DP_RECOMPUTE_SELECTIVE) extra = attn / 3;
    double tokens_mb = b * s;
    double flops_mb = (model_tok + extra) * tokens_mb / (t * p); /* one stage, one micro-batch */
    /* the element-wise work streams each stored activation about three times (written
     * forward, read backward, its gradient written), the recomputed forward once more */
    double elem = 3 * Ls * layer_act_bytes(m, l, e, !l->flash) *
                  (l->recompute == DP_RECOMPUTE_FULL ? 4.0 / 3 : 1);
    /* the loss over the vocabulary on the last stage: the logits written, read in fp32 by the
     * softmax and cross-entropy, their gradient written and read (about 3 x (e + 4) bytes each) */
    elem += 3 * logits / (l->pp > 1 ? p : 1);
    double t_mb = flops_mb / mc->rate + elem / mc->mem_rate;

    /* ---- tensor parallel: 2 all-reduces forward, 2 backward per layer (reduce-scatter +
     * all-gather pairs under sequence parallelism), 2 more when the forward is redone ---- */
    double tp_mb = 0;
    if (l->tp > 1) {
        double bytes = e * s * b * h;
        double one = l->sp ? dp_sim_collective_ms(fab, DP_COLL_REDUCE_SCATTER, l->ar_algo, bytes,
                                                  l->tp, l->tp) +
                                 dp_sim_collective_ms(fab, DP_COLL_ALLGATHER, l->ar_algo, bytes,
                                                      l->tp, l->tp)
                           : dp_sim_collective_ms(fab, DP_COLL_ALLREDUCE, l->ar_algo, bytes,
                                                  l->tp, l->tp);
        tp_mb = Ls * (l->recompute == DP_RECOMPUTE_FULL ? 6 : 4) * fmax(0, one);
    }

    /* ---- pipeline: each micro-batch's activations forward and gradients back, on the
     * critical path (m + pp - 1) times; the bubble is pp - 1 micro-batch slots ---- */
    double pp_flush = 0;
    if (l->pp > 1) {
        int rpm = fab->machines > 1 ? 1 : 2;
        double send = dp_sim_collective_ms(fab, DP_COLL_SENDRECV, l->ar_algo, e * s * b * h / t,
                                           2, rpm);
        pp_flush = 2 * (mb + p - 1) * fmax(0, send);
    }
    double slot = t_mb + tp_mb;
    r->compute_ms = acc * mb * t_mb;
    r->tp_ms = acc * mb * tp_mb;
    r->bubble_ms = acc * (p - 1) * slot;
    r->pp_ms = acc * pp_flush;

    /* ---- data parallel: gradients reduced while the last micro-batch's backward runs
     * (2/3 of its work); ZeRO-2 reduce-scatters every micro-batch, ZeRO-3 also gathers the
     * parameters forward and backward, prefetched under the compute ---- */
    if (l->dp > 1) {
        int rpm = l->gpus_per_machine / l->tp;
        if (rpm < 1) rpm = 1;
        if (rpm > l->dp) rpm = l->dp;
        double grads = per_gpu * e, t_b = 2.0 / 3 * t_mb, t_f = t_mb / 3;
        double ar = fmax(0, dp_sim_collective_ms(fab, DP_COLL_ALLREDUCE, l->ar_algo, grads,
                                                 l->dp, rpm));
        double rs = fmax(0, dp_sim_collective_ms(fab, DP_COLL_REDUCE_SCATTER, l->ar_algo, grads,
                                                 l->dp, rpm));
        double ag = fmax(0, dp_sim_collective_ms(fab, DP_COLL_ALLGATHER, l->ar_algo, grads,
                                                 l->dp, rpm));
        switch (l->shard) {
        case DP_SHARD_NONE:
            r->dp_total_ms = ar;
            r->dp_ms = fmax(0, ar - t_b);
            break;
        case DP_SHARD_ZERO1:
            r->dp_total_ms = rs + ag;
            r->dp_ms = fmax(0, rs - t_b);
            r->zero_ms = ag; /* the updated parameters gathered after the step */
            break;
        case DP_SHARD_ZERO2:
            r->dp_total_ms = acc * mb * rs + ag;
            r->dp_ms = acc * mb * fmax(0, rs - t_b);
            r->zero_ms = ag;
            break;
        case DP_SHARD_ZERO3:
            r->dp_total_ms = acc * mb * (rs + 2 * ag);
            r->dp_ms = acc * mb * fmax(0, rs + ag - t_b);
            r->zero_ms = acc * mb * (fmax(0, ag - t_f) + ag / Ls); /* the first layer waits */
            break;
        }
    }
    r->optimizer_ms = ADAM_STEP_BYTES * per_gpu / zshard / mc->mem_rate;
    r->input_ms = 0; /* token ids: a few KB per micro-batch, read ahead */
    r->iteration_ms = r->compute_ms + r->tp_ms + r->bubble_ms + r->pp_ms + r->dp_ms +
                      r->zero_ms + r->optimizer_ms + r->input_ms;
    double tokens = (double)r->global_batch * s, sec = r->iteration_ms / 1e3;
    r->tokens_per_s = tokens / sec;
    r->samples_per_s = (double)r->global_batch / sec;
    r->model_flops = model_tok * tokens;
    double peak_all = sec * l->workers * mc->peak_tflops * 1e12;
    r->mfu = r->model_flops / peak_all;
    r->hfu = (model_tok + extra) * tokens / peak_all;
}

enum dp_status dp_plan_eval(const struct dp_llm *m, const struct dp_setting *s,
                            const struct dp_gpu *g, const struct dp_system *sys,
                            const struct dp_plan_opts *o, struct dp_plan_result *out,
                            struct dp_error *err) {
    enum dp_status st = dp_llm_check(m, m->name, err);
    if (st || (st = dp_setting_check(s, err))) return st;
    struct dp_setting bare = *s; /* the precision rules need no systems catalog */
    bare.system[0] = '\0';
    if ((st = dp_setting_check_gpu(&bare, g, NULL, err))) return st;
    struct plan_layout l = {
        .workers = s->workers, .tp = dp_setting_tp(s), .pp = dp_setting_pp(s),
        .dp = dp_setting_dp_size(s), .ep = dp_setting_ep(s),
        .microbatches = dp_setting_microbatches(s), .accum = dp_setting_accum(s),
        .gpus_per_machine = sys ? sys->gpus_per_machine : dp_setting_gpus_per_machine(s),
        .micro_batch = o ? o->micro_batch : 1, .shard = s->shard, .recompute = s->recompute,
        .sp = s->seq_parallel, .flash = !(o && o->no_flash), .precision = s->precision,
        .ar_algo = s->ar_algo,
    };
    if (l.micro_batch < 1)
        return dp_error_set(err, DP_ERR_INVALID, "--batch %lld: a micro-batch of at least one "
                            "sequence", (long long)l.micro_batch);
    if (l.tp > l.gpus_per_machine)
        return dp_error_set(err, DP_ERR_INVALID, "--tp %d: tensor parallelism stays inside one "
                            "machine (%d GPUs)", l.tp, l.gpus_per_machine);
    if (l.pp > m->layers)
        return dp_error_set(err, DP_ERR_INVALID, "--pp %d: more pipeline stages than the %lld "
                            "layers of %s", l.pp, (long long)m->layers, m->name);
    if (m->heads % l.tp || (m->kv_heads % l.tp && l.tp % m->kv_heads))
        return dp_error_set(err, DP_ERR_INVALID, "--tp %d: does not divide the %lld attention "
                            "heads (%lld key/value heads) of %s", l.tp, (long long)m->heads,
                            (long long)m->kv_heads, m->name);
    if (l.ep > 1 && (!m->experts || m->experts % l.ep || l.dp % l.ep))
        return dp_error_set(err, DP_ERR_INVALID, "--ep %d: expert parallelism divides the "
                            "experts (%d) and the data-parallel size (%d)", l.ep, m->experts,
                            l.dp);
    double peak = plan_peak_tflops(g, s);
    if (!(peak > 0))
        return dp_error_set(err, DP_ERR_INVALID, "--gpu %s: the catalog gives no %s tensor rate",
                            g->name, dp_precision_name(s->precision));
    struct dp_sim_constants def;
    const struct dp_sim_constants *k = o && o->constants ? o->constants : NULL;
    if (!k) {
        dp_sim_constants_default(&def);
        k = &def;
    }
    struct dp_sim_fabric f;
    dp_sim_fabric(s, g, sys, k, &f);
    struct plan_machine mc;
    plan_machine_init(g, k, &f, peak, &mc);
    plan_evaluate(m, &l, &mc, out);
    snprintf(out->notes, sizeof out->notes, "closed form (docs/planning.md): Adam, %s attention%s",
             l.flash ? "flash" : "materialised", l.pp > 1 ? ", 1F1B, stages balanced" : "");
    return DP_OK;
}
