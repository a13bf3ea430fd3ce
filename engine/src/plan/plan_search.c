/* plan_search.c: the planner's search: every tensor x pipeline x data-parallel split of the GPUs
 * with each ZeRO stage, micro-batch size, recomputation and sequence parallelism (and expert
 * parallelism for MoE models) at a global batch, evaluated by the closed form (plan_model.c),
 * the ones that fit in memory ranked, the best kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_impl.h"

#define MAX_TOP 1000
/* Tokens per step when the query gives no global batch: 4M (Llama 2's, GPT-3 175B's 3.2M). */
#define DEFAULT_STEP_TOKENS 4194304.0

struct search {
    const struct dp_plan_query *q;
    struct dp_plan *plans;   /* the best so far, sorted, n of them */
    int n, top;
    int64_t n_candidates, n_fit;
    double tokens;
};

/* a better than b under the query's order */
static bool better(const struct search *S, const struct dp_plan *a, const struct dp_plan *b) {
    switch (S->q->sort) {
    case DP_PLAN_SORT_COST:
        if (isnan(b->cost_usd)) return !isnan(a->cost_usd) || a->train_hours < b->train_hours;
        if (isnan(a->cost_usd)) return false;
        return a->cost_usd < b->cost_usd;
    case DP_PLAN_SORT_TIME: return a->train_hours < b->train_hours;
    default: return a->r.tokens_per_s > b->r.tokens_per_s;
    }
}

static void offer(struct search *S, const struct dp_plan *p) {
    if (S->n == S->top && !better(S, p, &S->plans[S->n - 1])) return;
    int i = S->n < S->top ? S->n++ : S->n - 1;
    while (i > 0 && better(S, p, &S->plans[i - 1])) {
        S->plans[i] = S->plans[i - 1];
        i--;
    }
    S->plans[i] = *p;
}

static bool tp_ok(const struct dp_llm *m, int tp) {
    return m->heads % tp == 0 && (m->kv_heads % tp == 0 || tp % m->kv_heads == 0);
}

/* The setting of a plan: the base cluster with the layout's fields (its id formatted). */
static enum dp_status plan_setting(const struct dp_plan_query *q, const struct dp_gpu *g,
                                   const struct plan_layout *l, int machines,
                                   enum dp_network net, struct dp_setting *s,
                                   struct dp_error *err) {
    *s = q->base;
    snprintf(s->gpu, sizeof s->gpu, "%s", g->name);
    if (q->system) snprintf(s->system, sizeof s->system, "%s", q->system->name);
    s->sync = DP_SYNC_ALLREDUCE;
    s->ps = 0;
    s->workers = l->workers;
    s->machines = machines;
    s->network = net;
    s->precision = l->precision;
    s->shard = l->shard;
    s->tp = l->tp;
    s->pp = l->pp;
    s->ep = l->ep;
    s->microbatches = l->microbatches;
    s->accum = l->accum;
    s->recompute = l->recompute;
    s->seq_parallel = l->sp;
    s->inspector[0] = '\0';
    return dp_setting_finish(s, err);
}

/* Every layout of the model on `workers` GPUs of type g. */
static void search_size(struct search *S, const struct dp_gpu *g, int workers,
                        const struct dp_sim_constants *k) {
    const struct dp_plan_query *q = S->q;
    const struct dp_llm *m = q->model;
    int gpm = q->system ? q->system->gpus_per_machine : DP_DEFAULT_GPUS_PER_MACHINE;
    if (gpm > workers) gpm = workers;
    int machines = (workers + gpm - 1) / gpm;
    enum dp_network net = q->system ? q->system->nic : q->base.network;
    if (machines == 1)
        net = q->system ? (q->system->fabric == DP_FABRIC_PCIE ? DP_NET_PCIE : DP_NET_NVLINK)
                        : (dp_gpu_has_nvlink(g) ? DP_NET_NVLINK : DP_NET_PCIE);
    struct dp_setting probe = q->base;
    snprintf(probe.gpu, sizeof probe.gpu, "%s", g->name);
    probe.sync = DP_SYNC_ALLREDUCE;
    probe.workers = workers;
    probe.machines = machines;
    probe.network = net;
    /* fp32 in the query means "the precision this GPU trains LLMs in" */
    enum dp_gpu_gen gen = dp_gpu_generation(g);
    if (probe.precision == DP_PREC_FP32)
        probe.precision = gen >= DP_GEN_AMPERE ? DP_PREC_BF16 : DP_PREC_MIXED;
    double peak = plan_peak_tflops(g, &probe);
    if (!(peak > 0)) return; /* no tensor rate: nothing to plan on this GPU */
    struct dp_sim_fabric f;
    dp_sim_fabric(&probe, g, q->system, k, &f);
    struct plan_machine mc;
    plan_machine_init(g, k, &f, peak, &mc);

    int64_t gb_default = (int64_t)fmax(1, round(DEFAULT_STEP_TOKENS / (double)m->seq));
    /* no global batch given: a quarter, half, once and twice the default */
    int64_t gbs[4] = {q->global_batch, 0, 0, 0};
    int n_gb = 1;
    if (!q->global_batch) {
        n_gb = 0;
        for (int64_t mul = 1; mul <= 8; mul *= 2)
            if (gb_default * mul / 4 >= 1) gbs[n_gb++] = gb_default * mul / 4;
    }
    static const int64_t micro[] = {1, 2, 4, 8, 16, 32, 64};
    for (int tp = 1; tp <= gpm && tp <= 64; tp *= 2) {
        if (!tp_ok(m, tp) || workers % tp) continue;
        for (int pp = 1; pp <= workers / tp && pp <= m->layers; pp++) {
            if ((workers / tp) % pp) continue;
            int dp = workers / (tp * pp);
            for (int ep = 1; ep <= (m->experts ? m->experts : 1); ep++) {
                if (ep > 1 && (m->experts % ep || dp % ep)) continue;
                for (int gi = 0; gi < n_gb; gi++)
                    for (size_t bi = 0; bi < sizeof micro / sizeof micro[0]; bi++) {
                        int64_t b = micro[bi], per = b * dp;
                        if (per > gbs[gi] || gbs[gi] % per) continue;
                        int64_t n = gbs[gi] / per;
                        if (n > 65536) continue;
                        for (int sh = 0; sh <= (dp > 1 ? DP_SHARD_ZERO3 : 0); sh++)
                            for (int rc = 0; rc <= DP_RECOMPUTE_FULL; rc++)
                                for (int sp = 0; sp <= (tp > 1); sp++) {
                                    struct plan_layout l = {
                                        .workers = workers, .tp = tp, .pp = pp, .dp = dp,
                                        .ep = ep, .microbatches = pp > 1 ? (int)n : 1,
                                        .accum = pp > 1 ? 1 : (int)n, .gpus_per_machine = gpm,
                                        .micro_batch = b, .shard = (enum dp_shard)sh,
                                        .recompute = (enum dp_recompute)rc, .sp = sp,
                                        .flash = !q->flash_off, .precision = probe.precision,
                                        .ar_algo = q->base.ar_algo,
                                    };
                                    struct dp_plan p;
                                    memset(&p.setting, 0, sizeof p.setting);
                                    plan_evaluate(m, &l, &mc, &p.r);
                                    S->n_candidates++;
                                    if (p.r.oom) continue;
                                    S->n_fit++;
                                    p.micro_batch = b;
                                    p.train_hours = S->tokens / p.r.tokens_per_s / 3600;
                                    p.cost_usd = p.train_hours * workers * g->price_per_gpu_hour;
                                    if (q->budget_usd > 0 && !(p.cost_usd <= q->budget_usd))
                                        continue;
                                    if (q->gpu_hours > 0 &&
                                        !(p.train_hours * workers <= q->gpu_hours))
                                        continue;
                                    /* the layout rides in the setting until the ids are made */
                                    p.setting.tp = tp;
                                    p.setting.pp = pp;
                                    p.setting.ep = ep;
                                    p.setting.workers = workers;
                                    p.setting.machines = machines;
                                    p.setting.network = net;
                                    p.setting.microbatches = l.microbatches;
                                    p.setting.accum = l.accum;
                                    p.setting.shard = l.shard;
                                    p.setting.recompute = l.recompute;
                                    p.setting.seq_parallel = l.sp;
                                    p.setting.precision = l.precision;
                                    snprintf(p.setting.gpu, sizeof p.setting.gpu, "%s", g->name);
                                    offer(S, &p);
                                }
                    }
            }
        }
    }
}

enum dp_status dp_plan_search(const struct dp_plan_query *q, struct dp_plan_list **out,
                              struct dp_error *err) {
    if (!q || !q->model || !q->gpus || q->n_gpus < 1)
        return dp_error_set(err, DP_ERR_INVALID, "plan: a model and at least one GPU are needed");
    enum dp_status st = dp_llm_check(q->model, q->model->name, err);
    if (st) return st;
    if (q->workers < 0 || q->workers > DP_MAX_WORKERS)
        return dp_error_set(err, DP_ERR_INVALID, "--gpus %d: expected 1 to %d", q->workers,
                            DP_MAX_WORKERS);
    if (!q->workers && !(q->budget_usd > 0) && !(q->gpu_hours > 0))
        return dp_error_set(err, DP_ERR_INVALID, "plan: --gpus, --budget-usd or --gpu-hours");
    struct search S = {q, NULL, 0, q->top < 1 ? 1 : q->top > MAX_TOP ? MAX_TOP : q->top, 0, 0,
                       q->tokens > 0 ? q->tokens : 1e9};
    struct dp_plan_list *l = calloc(1, sizeof *l);
    if (!l || !(S.plans = calloc((size_t)S.top, sizeof *S.plans))) {
        free(l);
        return dp_error_set(err, DP_ERR_NOMEM, "plan: out of memory");
    }
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    for (int gi = 0; gi < q->n_gpus; gi++) {
        if (q->workers) search_size(&S, q->gpus[gi], q->workers, &k);
        else
            for (int w = 1; w <= DP_MAX_WORKERS; w *= 2) search_size(&S, q->gpus[gi], w, &k);
    }
    /* the kept plans' settings, ids formatted (and checked: they parse back) */
    for (int i = 0; i < S.n && !st; i++) {
        struct dp_plan *p = &S.plans[i];
        struct plan_layout lay = {
            .workers = p->setting.workers, .tp = p->setting.tp, .pp = p->setting.pp,
            .ep = p->setting.ep, .microbatches = p->setting.microbatches,
            .accum = p->setting.accum, .shard = p->setting.shard,
            .recompute = p->setting.recompute, .sp = p->setting.seq_parallel,
            .precision = p->setting.precision,
        };
        const struct dp_gpu *g = NULL;
        for (int gi = 0; gi < q->n_gpus; gi++)
            if (!strcmp(q->gpus[gi]->name, p->setting.gpu)) g = q->gpus[gi];
        st = plan_setting(q, g, &lay, p->setting.machines, p->setting.network, &p->setting, err);
        if (!st)
            snprintf(p->r.notes, sizeof p->r.notes, "closed form (docs/planning.md): Adam, %s "
                     "attention", q->flash_off ? "materialised" : "flash");
    }
    if (st) {
        free(S.plans);
        free(l);
        return st;
    }
    l->plans = S.plans;
    l->n_plans = S.n;
    l->n_candidates = S.n_candidates;
    l->n_fit = S.n_fit;
    *out = l;
    return DP_OK;
}

void dp_plan_list_free(struct dp_plan_list *l) {
    if (!l) return;
    free(l->plans);
    free(l);
}
