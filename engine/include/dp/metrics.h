/* metrics.h: the vocabulary of what driple predicts, in one place. The 12 outputs (four
 * resources, each {idle, active, peak}, in Driple's order, kept for compatibility with its
 * checkpoints) with their names and units, and the figures derived from them (iteration time,
 * throughput, mean utilisations, GPU memory, bytes per iteration, time and cost per epoch) with
 * their formulas, computed by one function (dp_derive) for every front end.
 *
 * Units: durations in milliseconds, utilisations in percent, network rates in MB/s (1e6 B/s).
 * A burst is a maximal run of samples above a threshold; idle is the run between bursts; peak
 * is the largest sample of a burst (trace.h extracts them). */
#ifndef DP_METRICS_H
#define DP_METRICS_H

#include <stdbool.h>
#include <stdint.h>

/* The four resources, in Driple's order (also trace.h's first four series). */
enum dp_resource {
    DP_RES_GPU_MEM_UTIL, /* nvidia-smi utilization.memory: the memory controller's busy time, % */
    DP_RES_GPU_UTIL,     /* utilization.gpu, % */
    DP_RES_NET_RX,       /* MB/s */
    DP_RES_NET_TX,       /* MB/s */
    DP_N_RESOURCES
};
/* What each resource's bursts are summarised by. */
enum dp_stat { DP_STAT_IDLE, DP_STAT_ACTIVE, DP_STAT_PEAK, DP_N_STATS };

/* The outputs, resource-major: output = resource x DP_N_STATS + stat (DP_OUTPUT). */
enum dp_output {
    DP_OUT_GPU_MEM_UTIL_IDLE, DP_OUT_GPU_MEM_UTIL_ACTIVE, DP_OUT_GPU_MEM_UTIL_PEAK,
    DP_OUT_GPU_UTIL_IDLE,     DP_OUT_GPU_UTIL_ACTIVE,     DP_OUT_GPU_UTIL_PEAK,
    DP_OUT_NET_RX_IDLE,       DP_OUT_NET_RX_ACTIVE,       DP_OUT_NET_RX_PEAK,
    DP_OUT_NET_TX_IDLE,       DP_OUT_NET_TX_ACTIVE,       DP_OUT_NET_TX_PEAK,
    DP_N_OUTPUTS
};
#define DP_OUTPUT(res, stat) ((int)(res) * DP_N_STATS + (int)(stat))

struct dp_output_info {
    const char *name;     /* "gpu_util.active" */
    const char *resource; /* "gpu_util" */
    const char *stat;     /* "active" */
    const char *unit;     /* "ms" (idle, active), "%" (GPU peaks), "MB/s" (network peaks) */
};
/* The table, indexed by enum dp_output. */
extern const struct dp_output_info dp_outputs[DP_N_OUTPUTS];
/* Index of an output name ("gpu_util.active"), or -1 (also for NULL). */
int dp_output_find(const char *name);
/* "gpu_mem_util", "gpu_util", "net_rx", "net_tx"; "?" out of range. */
const char *dp_resource_name(enum dp_resource r);
/* Unit of a resource's peak: "%" or "MB/s"; "?" out of range. */
const char *dp_resource_unit(enum dp_resource r);

/* ---- derived figures ----
 * Each is computed by a formula from the outputs and a few facts about the job, unless a
 * direct figure is known (simulated, measured, or predicted by an inspector that predicts it):
 * a direct figure is used as it is, and the figures that depend on it follow from it. */
enum dp_derived {
    DP_D_ITERATION_MS,      /* ms */
    DP_D_THROUGHPUT,        /* samples/s, all workers together */
    DP_D_MEAN_GPU_UTIL,     /* %, 0..100 */
    DP_D_MEAN_GPU_MEM_UTIL, /* %, 0..100 */
    DP_D_MEMORY_GB,         /* per-worker GPU memory footprint (direct only) */
    DP_D_NET_MB_PER_ITER,   /* MB one worker moves per iteration */
    DP_D_EPOCH_S,           /* s */
    DP_D_EPOCH_COST,        /* in the price's currency */
    DP_N_DERIVED
};
struct dp_derived_info {
    const char *key;     /* JSON key: "iteration_ms" */
    const char *label;   /* for people: "iteration" */
    const char *unit;    /* "ms" */
    const char *formula; /* "gpu_util.idle + gpu_util.active" (names: outputs and derived keys) */
    const char *note;    /* what the formula assumes, and where a direct figure comes from */
};
/* The table, indexed by enum dp_derived. */
extern const struct dp_derived_info dp_derived_figures[DP_N_DERIVED];

/* What dp_derive needs besides the outputs. dp_derive_in_init makes every fact unknown. */
struct dp_derive_in {
    int64_t batch;              /* samples per worker per iteration; <= 0: unknown */
    int     workers;            /* <= 0: unknown: throughput and cost are per worker */
    double  params;             /* the graph's parameter count; NaN: unknown */
    double  epoch_samples;      /* samples per epoch; NaN or <= 0: no epoch figures */
    double  price_per_gpu_hour; /* NaN: no cost */
    const char *price_source;   /* where that price comes from (borrowed; NULL: not said) */
    double  direct[DP_N_DERIVED]; /* figures known directly; NaN: by the formula */
};
void dp_derive_in_init(struct dp_derive_in *in);

/* Samples per epoch when nobody says otherwise, by the workload's dataset family
 * (dp_session_epoch_default): an image model's, ImageNet-1k's 1,281,167 training images
 * (ILSVRC 2012); a sequence model's, the tokens of BERT's pre-training corpus (BooksCorpus 800M
 * + English Wikipedia 2,500M words, Devlin et al. 2019, section 3.1) in sequences of the
 * graph's length. Defaults the user sets (--epoch-samples, the explorer's dataset size), not
 * measurements. */
#define DP_EPOCH_SAMPLES_DEFAULT 1281167.0
#define DP_EPOCH_TOKENS_DEFAULT  3.3e9
/* Reads an amount as people type it and the front ends print it: a finite number with an
 * optional k, M or G suffix (x 1e3, 1e6, 1e9: "1.28M" = 1,280,000), blanks around it allowed.
 * False (out untouched) when s is not one. */
bool dp_amount_parse(const char *s, double *out);

/* The derived figures of outputs m (in their units; NULL: none known, so only direct figures
 * and what follows from them) into d (NaN where not computable):
 *   iteration_ms      = gpu_util.idle + gpu_util.active (direct where known: see bursts below)
 *   throughput        = batch x workers x 1000 / iteration_ms
 *   mean_gpu_util     = min(100, gpu_util.peak x gpu_util.active /
 *                                (gpu_util.idle + gpu_util.active))
 *   mean_gpu_mem_util = the same of gpu_mem_util
 *   memory_gb         = direct only
 *   net_mb_per_iter   = 2 x params x 4 / 1e6
 *   epoch_s           = epoch_samples / throughput
 *   epoch_cost        = epoch_s / 3600 x workers x price_per_gpu_hour
 * (dp_derived_figures says why each holds). Never fails. */
void dp_derive(const double *m, const struct dp_derive_in *in, double d[DP_N_DERIVED]);

/* ---- bursts and idle periods (docs/accuracy.md, "Bursts and idle periods") ----
 * A burst cycle is one burst and the idle period after it. Where the iteration time is known
 * directly (simulated, measured, or predicted by the setting-aware inspector) a cycle need not
 * be one iteration: the GPU's bursts of consecutive iterations merge when the gap between them
 * is shorter than a sample (all-reduce overlapping the backward pass), so one cycle spans
 * several iterations; an iteration that waits on the network mid-way holds several cycles. The
 * relation every output satisfies:
 *     iteration_ms = (gpu_util.idle + gpu_util.active) / iterations_per_burst_cycle
 * with iterations_per_burst_cycle = 1 where the iteration time follows from the bursts (the
 * paper's inspectors: iteration_ms = gpu_util.idle + gpu_util.active). */
struct dp_bursts_info {
    double iterations_per_cycle; /* NaN when either side is unknown or 0 */
    bool   span_iterations;      /* iterations_per_cycle > 1: a burst holds more than one
                                    iteration (gpu_util.active may exceed iteration_ms) */
};
/* The relation above solved for iterations_per_burst_cycle from outputs m and the iteration
 * time the same source gives. Never fails. */
struct dp_bursts_info dp_bursts_info(const double m[DP_N_OUTPUTS], double iteration_ms);

/* ---- as JSON (dp/json_out.h), the same in every front end's output ---- */
struct dp_jw;
/* Member key: {"iterations_per_burst_cycle": x (null when unknown), "bursts_span_iterations":
 * bool, "relation": the formula above}. */
void dp_jw_bursts(struct dp_jw *w, const char *key, const double m[DP_N_OUTPUTS],
                  double iteration_ms);
/* Member key: {"gpu_mem_util": {"idle": m[0], "active": m[1], "peak": m[2]}, "gpu_util": ...}. */
void dp_jw_outputs(struct dp_jw *w, const char *key, const double m[DP_N_OUTPUTS]);
/* Member key: the derived figures d by their keys, in table order; with facts (may be NULL)
 * each fact stands beside the figure it explains: "workers" (null when unknown) after
 * "throughput", "parameters" before "net_mb_per_iter", "epoch_samples" before "epoch_s",
 * "price_per_gpu_hour" and "price_source" after "epoch_cost". */
void dp_jw_derived(struct dp_jw *w, const char *key, const double d[DP_N_DERIVED],
                   const struct dp_derive_in *facts);
/* Member key: {"iteration_ms": "<formula>", ...}, every derived figure's formula. */
void dp_jw_formulas(struct dp_jw *w, const char *key);

#endif
