/* plan.h: the closed-form planner of sharded and model-parallel LLM training (issue 29): for a
 * transformer (dp/llm.h) on a setting (GPU, system, workers, precision, accumulation, ZeRO
 * stage, tensor / pipeline / expert parallel degrees, micro-batches, recomputation, sequence
 * parallelism) the memory per GPU, the iteration time and its breakdown, throughput and MFU,
 * from formulas rather than a per-op simulation, so that a search over thousands of layouts
 * takes well under a second. Compute runs at the simulator's achieved tensor-core share
 * (dp_sim_constants); every collective is the simulator's (dp_sim_collective_ms). Every result
 * is modelled, never measured. docs/planning.md gives each formula and its source. */
#ifndef DP_PLAN_H
#define DP_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/llm.h"
#include "dp/settings.h"
#include "dp/sim.h"
#include "dp/systems.h"

/* What the setting does not say. */
struct dp_plan_opts {
    int64_t micro_batch;  /* sequences per GPU per micro-batch (>= 1) */
    bool    no_flash;     /* attention materialises its s x s scores (no flash attention) */
    const struct dp_sim_constants *constants; /* NULL: dp_sim_constants_default; borrowed */
};

/* One plan's figures. Times in ms per iteration (one optimizer step), memory in GB (1e9 B). */
struct dp_plan_result {
    int64_t global_batch;   /* sequences per step: micro_batch x microbatches x accum x dp */
    int     dp;             /* data-parallel size: workers / (tp x pp) */
    double  iteration_ms;
    double  tokens_per_s, samples_per_s;
    double  mfu;            /* model FLOPs (6 x matmul params + attention, per token, without
                               recomputation) / (iteration x workers x peak), 0-1 */
    double  hfu;            /* the same with the recomputed work counted */
    double  model_flops;    /* per iteration, all GPUs */
    double  peak_tflops;    /* one GPU's dense tensor peak at the precision */
    /* memory per GPU (the most loaded pipeline stage) */
    double  mem_params_gb, mem_grads_gb, mem_optim_gb, mem_act_gb, mem_other_gb, memory_gb;
    bool    oom;            /* memory_gb > the GPU's memory */
    /* breakdown: compute (micro-batches x stage work), the pipeline bubble, exposed
     * communication per kind, the optimizer step, input */
    double  compute_ms, bubble_ms, tp_ms, pp_ms, dp_ms, zero_ms, optimizer_ms, input_ms;
    double  dp_total_ms;    /* the data-parallel collectives before overlap */
    char    notes[256];
};

/* Evaluates model m on setting s (sync all-reduce; tp, pp, microbatches, accum, ep, shard,
 * recompute, seq_parallel, precision read through the dp_setting_* getters) with GPU g and
 * system sys (NULL: a generic machine of g). Refuses (DP_ERR_INVALID, one line naming the option
 * and the rule) what cannot run: tp x pp not dividing the workers, tp larger than a machine, pp
 * larger than the layers, heads (or kv heads, when more than tp) not divisible by tp, ep not
 * dividing the experts or the data-parallel size, sequence parallelism without tp, a precision
 * the GPU lacks (fp8 on a V100), a GPU without a tensor-core rate, micro_batch < 1. *out is
 * filled on success (an OOM plan too, flagged). Thread-safe; nothing allocated. */
enum dp_status dp_plan_eval(const struct dp_llm *m, const struct dp_setting *s,
                            const struct dp_gpu *g, const struct dp_system *sys,
                            const struct dp_plan_opts *o, struct dp_plan_result *out,
                            struct dp_error *err);

/* ---- the search ---- */
enum dp_plan_sort { DP_PLAN_SORT_THROUGHPUT, DP_PLAN_SORT_TIME, DP_PLAN_SORT_COST };

struct dp_plan_query {
    const struct dp_llm *model;
    const struct dp_gpu *const *gpus; /* n_gpus GPU types to try (borrowed) */
    int     n_gpus;
    const struct dp_system *system;   /* NULL: a generic machine of each GPU */
    struct dp_setting base;           /* network, framework, precision (fp32 reads as bf16 on
                                         Ampere+ and mixed before), ar_algo; the rest searched */
    int     workers;                  /* GPUs; 0: from budget_usd / gpu_hours per GPU type */
    double  budget_usd, gpu_hours;    /* with tokens: the most GPUs the budget buys for the job */
    int64_t global_batch;             /* sequences per step; 0: 1/4, 1/2, 1 and 2 x 4M tokens */
    double  tokens;                   /* tokens to train (time and cost); 0: 1e9 */
    enum dp_plan_sort sort;
    int     top;                      /* plans kept (>= 1) */
    bool    flash_off;
};

struct dp_plan {
    struct dp_setting setting;        /* finished: its id parses back (dp_setting_parse_id) */
    int64_t micro_batch;
    double  train_hours;              /* time for query->tokens */
    double  cost_usd;                 /* train_hours x workers x the GPU's price; NaN: no price */
    struct dp_plan_result r;
};

struct dp_plan_list {
    int             n_plans;          /* <= top, best first */
    struct dp_plan *plans;
    int64_t         n_candidates;     /* layouts evaluated */
    int64_t         n_fit;            /* of those, the ones that fit in memory */
};

/* Searches tp x pp x dp x shard x micro-batch x accumulation x recompute (x sequence parallel)
 * for q->model over the GPU types, drops plans that do not fit, ranks the rest by q->sort
 * (throughput: tokens/s, highest first; time to train q->tokens; cost) and keeps the best
 * q->top. New list owned by the caller (dp_plan_list_free); DP_ERR_INVALID for a query without
 * a model, GPUs or workers (or a budget that buys none), DP_ERR_NOMEM. An empty list (nothing
 * fits) is success. */
enum dp_status dp_plan_search(const struct dp_plan_query *q, struct dp_plan_list **out,
                              struct dp_error *err);
void dp_plan_list_free(struct dp_plan_list *l); /* NULL-safe */

/* ---- published runs ---- */
/* One published training run (tools/llm_published.csv) beside the planner's figures for it. */
struct dp_plan_check {
    char    paper[32], model[32], gpu[DP_NAME_MAX], source[256];
    int     workers, tp, pp;
    int64_t seq, micro_batch;
    double  pub_mfu, pub_hfu, pub_tokens_per_gpu; /* as published (NaN: not stated) */
    double  mfu, hfu, tokens_per_gpu;             /* modelled */
    double  memory_gb;
    bool    fits;                                 /* predicted to fit (the run did) */
};
/* Reads the CSV at path (NULL: tools/llm_published.csv under the shipped root, dp_shipped_path)
 * and evaluates each row with dp_plan_eval (flash attention; nothing fitted to the rows). New
 * array in *out (free()), *n rows; DP_ERR_IO, DP_ERR_PARSE ("<path>:<line>: <what>") or a
 * row's refusal, DP_ERR_NOMEM. */
enum dp_status dp_plan_validate(const char *path, const struct dp_gpu_catalog *cat,
                                struct dp_plan_check **out, int *n, struct dp_error *err);

#endif
