/* metrics.c: the output and derived-figure tables of dp/metrics.h and the one function that
 * computes the derived figures for every front end. */
#include "dp/metrics.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dp/json_out.h"

const struct dp_output_info dp_outputs[DP_N_OUTPUTS] = {
    {"gpu_mem_util.idle", "gpu_mem_util", "idle", "ms"},
    {"gpu_mem_util.active", "gpu_mem_util", "active", "ms"},
    {"gpu_mem_util.peak", "gpu_mem_util", "peak", "%"},
    {"gpu_util.idle", "gpu_util", "idle", "ms"},
    {"gpu_util.active", "gpu_util", "active", "ms"},
    {"gpu_util.peak", "gpu_util", "peak", "%"},
    {"net_rx.idle", "net_rx", "idle", "ms"},
    {"net_rx.active", "net_rx", "active", "ms"},
    {"net_rx.peak", "net_rx", "peak", "MB/s"},
    {"net_tx.idle", "net_tx", "idle", "ms"},
    {"net_tx.active", "net_tx", "active", "ms"},
    {"net_tx.peak", "net_tx", "peak", "MB/s"},
};

static const char *const resource_names[DP_N_RESOURCES] = {"gpu_mem_util", "gpu_util", "net_rx",
                                                           "net_tx"};

const struct dp_derived_info dp_derived_figures[DP_N_DERIVED] = {
    {"iteration_ms", "iteration", "ms",
     "(gpu_util.idle + gpu_util.active) / bursts.iterations_per_burst_cycle",
     "a burst cycle is one GPU burst and the idle period after it: one iteration (1) unless the "
     "iteration time is known directly (simulated: the simulator's mean iteration; "
     "setting-aware: predicted), where bursts may span iterations (> 1) or an iteration hold "
     "several (< 1): docs/accuracy.md, Bursts and idle periods"},
    {"throughput", "throughput", "samples/s", "batch x workers / iteration",
     "per worker when the worker count is unknown"},
    {"mean_gpu_util", "mean GPU util", "%",
     "gpu_util.peak x gpu_util.active / (gpu_util.idle + gpu_util.active)",
     "at most 100; simulated: the mean over the workers and the whole run"},
    {"mean_gpu_mem_util", "mean mem-ctrl util", "%",
     "gpu_mem_util.peak x gpu_mem_util.active / (gpu_mem_util.idle + gpu_mem_util.active)",
     "at most 100; the memory controller's busy share, not memory occupancy"},
    {"memory_gb", "GPU memory", "GB", "simulated per-worker footprint",
     "weights, gradients, optimizer state, activations; OOM when above the GPU's memory"},
    {"net_mb_per_iter", "net per iter", "MB",
     "PS: 2 x parameters x 4 B; all-reduce: NCCL ring, 2 (W-1)/W x gradient bytes on full machines",
     "by the setting's sync (dp_sync_bytes_per_iter): a PS worker pulls every variable and "
     "pushes every gradient, fp32 on the wire; all-reduce: NCCL's ring (its tree where the setting "
     "names it) over W workers: the bytes over the links inside a worker's machine plus its "
     "share of the machine's NIC traffic (gradients 2 B a parameter under TensorFlow mixed "
     "precision); "
     "without a setting the PS formula; simulated: bytes crossing a link (PS: not the worker's "
     "own shard)"},
    {"epoch_s", "epoch time", "s", "epoch samples / throughput", "dataset size per epoch"},
    {"epoch_cost", "epoch cost", "$", "epoch time (h) x workers x price per GPU-hour",
     "every worker's GPU is paid for"},
};

int dp_output_find(const char *name) {
    for (int i = 0; name && i < DP_N_OUTPUTS; i++)
        if (!strcmp(name, dp_outputs[i].name)) return i;
    return -1;
}

const char *dp_resource_name(enum dp_resource r) {
    return (unsigned)r < DP_N_RESOURCES ? resource_names[r] : "?";
}

const char *dp_resource_unit(enum dp_resource r) {
    return (unsigned)r < DP_N_RESOURCES ? dp_outputs[DP_OUTPUT(r, DP_STAT_PEAK)].unit : "?";
}

bool dp_amount_parse(const char *s, double *out) {
    if (!s) return false;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s) return false;
    static const char suffix[] = "kMG";
    const char *k = *end ? strchr(suffix, *end) : NULL;
    if (k) {
        x *= k == suffix ? 1e3 : k == suffix + 1 ? 1e6 : 1e9;
        end++;
    }
    while (isspace((unsigned char)*end)) end++;
    if (*end || !isfinite(x)) return false;
    *out = x;
    return true;
}

void dp_derive_in_init(struct dp_derive_in *in) {
    memset(in, 0, sizeof *in);
    in->params = in->epoch_samples = in->price_per_gpu_hour = NAN;
    for (int k = 0; k < DP_N_DERIVED; k++) in->direct[k] = NAN;
}

/* A resource's mean utilisation over its bursts and gaps: peak x duty cycle, at most 100. */
static double duty(const double *m, enum dp_resource r) {
    double idle = m[DP_OUTPUT(r, DP_STAT_IDLE)], active = m[DP_OUTPUT(r, DP_STAT_ACTIVE)];
    return idle + active > 0 ? fmin(100.0, m[DP_OUTPUT(r, DP_STAT_PEAK)] * active / (idle + active))
                             : NAN;
}

/* The direct figure k when one is known, else v (the formula's value). */
static double pick(const struct dp_derive_in *in, enum dp_derived k, double v) {
    return isnan(in->direct[k]) ? v : in->direct[k];
}

void dp_derive(const double *m, const struct dp_derive_in *in, double d[DP_N_DERIVED]) {
    double iter = m ? m[DP_OUT_GPU_UTIL_IDLE] + m[DP_OUT_GPU_UTIL_ACTIVE] : NAN;
    int    w = in->workers > 0 ? in->workers : 1;
    d[DP_D_ITERATION_MS] = pick(in, DP_D_ITERATION_MS, iter > 0 ? iter : NAN);
    d[DP_D_MEAN_GPU_UTIL] = pick(in, DP_D_MEAN_GPU_UTIL, m ? duty(m, DP_RES_GPU_UTIL) : NAN);
    d[DP_D_MEAN_GPU_MEM_UTIL] =
        pick(in, DP_D_MEAN_GPU_MEM_UTIL, m ? duty(m, DP_RES_GPU_MEM_UTIL) : NAN);
    d[DP_D_MEMORY_GB] = in->direct[DP_D_MEMORY_GB];
    d[DP_D_NET_MB_PER_ITER] = pick(in, DP_D_NET_MB_PER_ITER, 2.0 * in->params * 4.0 / 1e6);
    d[DP_D_THROUGHPUT] =
        pick(in, DP_D_THROUGHPUT, d[DP_D_ITERATION_MS] > 0 && in->batch > 0
                                      ? (double)in->batch * w * 1000.0 / d[DP_D_ITERATION_MS]
                                      : NAN);
    d[DP_D_EPOCH_S] = pick(in, DP_D_EPOCH_S, in->epoch_samples > 0 && d[DP_D_THROUGHPUT] > 0
                                                 ? in->epoch_samples / d[DP_D_THROUGHPUT]
                                                 : NAN);
    d[DP_D_EPOCH_COST] =
        pick(in, DP_D_EPOCH_COST, d[DP_D_EPOCH_S] / 3600.0 * w * in->price_per_gpu_hour);
}

struct dp_bursts_info dp_bursts_info(const double m[DP_N_OUTPUTS], double iteration_ms) {
    double cycle = m[DP_OUT_GPU_UTIL_IDLE] + m[DP_OUT_GPU_UTIL_ACTIVE];
    struct dp_bursts_info b = {NAN, false};
    if (cycle > 0 && iteration_ms > 0 && isfinite(cycle) && isfinite(iteration_ms)) {
        b.iterations_per_cycle = cycle / iteration_ms;
        b.span_iterations = b.iterations_per_cycle > 1.0;
    }
    return b;
}

void dp_jw_bursts(struct dp_jw *w, const char *key, const double m[DP_N_OUTPUTS],
                  double iteration_ms) {
    struct dp_bursts_info b = dp_bursts_info(m, iteration_ms);
    dp_jw_object(w, key);
    dp_jw_num(w, "iterations_per_burst_cycle", b.iterations_per_cycle);
    dp_jw_bool(w, "bursts_span_iterations", b.span_iterations);
    dp_jw_str(w, "relation",
              "iteration_ms = (gpu_util.idle + gpu_util.active) / iterations_per_burst_cycle");
    dp_jw_end(w);
}

void dp_jw_outputs(struct dp_jw *w, const char *key, const double m[DP_N_OUTPUTS]) {
    dp_jw_object(w, key);
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        if (o % DP_N_STATS == 0) dp_jw_object(w, dp_outputs[o].resource);
        dp_jw_num(w, dp_outputs[o].stat, m[o]);
        if (o % DP_N_STATS == DP_N_STATS - 1) dp_jw_end(w);
    }
    dp_jw_end(w);
}

void dp_jw_derived(struct dp_jw *w, const char *key, const double d[DP_N_DERIVED],
                   const struct dp_derive_in *facts) {
    dp_jw_object(w, key);
    for (int k = 0; k < DP_N_DERIVED; k++) {
        if (facts && k == DP_D_NET_MB_PER_ITER) dp_jw_num(w, "parameters", facts->params);
        if (facts && k == DP_D_EPOCH_S) dp_jw_num(w, "epoch_samples", facts->epoch_samples);
        dp_jw_num(w, dp_derived_figures[k].key, d[k]);
        if (facts && k == DP_D_EPOCH_COST) {
            dp_jw_num(w, "price_per_gpu_hour", facts->price_per_gpu_hour);
            dp_jw_str(w, "price_source", facts->price_source);
        }
        if (facts && k == DP_D_THROUGHPUT) {
            if (facts->workers > 0) dp_jw_int(w, "workers", facts->workers);
            else dp_jw_null(w, "workers");
        }
    }
    dp_jw_end(w);
}

void dp_jw_formulas(struct dp_jw *w, const char *key) {
    dp_jw_object(w, key);
    for (int k = 0; k < DP_N_DERIVED; k++)
        dp_jw_str(w, dp_derived_figures[k].key, dp_derived_figures[k].formula);
    dp_jw_end(w);
}
