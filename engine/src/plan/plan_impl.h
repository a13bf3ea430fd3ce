/* plan_impl.h: the planner's internals (private to engine/src/plan): one layout as the closed
 * form reads it, without the strings of a setting, so the search can evaluate thousands. */
#ifndef DP_PLAN_IMPL_H
#define DP_PLAN_IMPL_H

#include "dp/plan.h"

struct plan_layout {
    int     workers, tp, pp, dp, ep;
    int     microbatches, accum;      /* per pipeline flush; flushes per step */
    int     gpus_per_machine;
    int64_t micro_batch;
    enum dp_shard     shard;
    enum dp_recompute recompute;
    bool    sp, flash;
    enum dp_precision precision;
    enum dp_allreduce_algo ar_algo;
};

/* What a layout's evaluation reads of the GPU and cluster, computed once per GPU and size. */
struct plan_machine {
    double peak_tflops;   /* the precision's dense tensor peak */
    double rate;          /* achieved FLOP/ms: peak x the simulator's tensor share */
    double mem_rate;      /* achieved bytes/ms of memory-bound work */
    double memory_gb;     /* NaN: unknown (never OOM) */
    double context_gb;
    struct dp_sim_fabric fabric;
};

/* The peak of g at precision p on setting s (its TF32 rule for fp32); NaN when the catalog has
 * no tensor rate the precision needs. */
double plan_peak_tflops(const struct dp_gpu *g, const struct dp_setting *s);
/* Fills mc for GPU g (peak already set) under constants k with fabric f. */
void plan_machine_init(const struct dp_gpu *g, const struct dp_sim_constants *k,
                       const struct dp_sim_fabric *f, double peak, struct plan_machine *mc);
/* The closed form: layout l of model m on machine mc into *r (notes untouched). */
void plan_evaluate(const struct dp_llm *m, const struct plan_layout *l,
                   const struct plan_machine *mc, struct dp_plan_result *r);

#endif
