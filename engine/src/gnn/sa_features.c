/* sa_features.c: what the setting-aware inspector's head reads beside the graph embedding
 * (dp/sa.h): the setting as numbers (the GPU's spec vector per CUDA device, the cluster, the
 * network, sync, precision, framework) and a few physical ratios of the graph's profile to the
 * setting's rates, which let the head extrapolate to a GPU or network it never saw: time in ms of
 * the matrix work at the GPU's rate, of the memory-bound traffic at its bandwidth, of the
 * parameters over the network, and the memory footprint's share of the GPU's memory. */
#include "dp/sa.h"

#include <math.h>

#include "dp/sim.h"

const char *const dp_sa_setting_names[DP_SA_SETTING_N] = {
    "fp32_tflops",  "tensor_tflops", "memory_gb",  "bandwidth_gbps", "nvlink_gbps",
    "pcie_gen",     "generation",    "workers",    "ps",             "machines",
    "gpus_per_machine", "hetero",    "network_gbps", "latency_us",   "intra",
    "mixed",        "allreduce",     "pytorch",    "tensor_unknown", "tf32",
};

const char *const dp_sa_cross_names[DP_SA_CROSS_N] = {
    "matmul_rate_ms", "memory_bound_ms", "all_flops_fp32_ms", "params_over_link_ms",
    "ps_link_traffic_ms", "allreduce_link_traffic_ms", "memory_share",
};

const char *const dp_sa_cross_legacy_names[DP_SA_CROSS_N] = {
    NULL, NULL, NULL, "params_over_network_ms", "ps_traffic_ms", "allreduce_traffic_ms", NULL,
};

/* Per CUDA device: a board of `devices` devices shares its figures. */
static double per_device(const struct dp_gpu *g, double v) {
    return g->devices > 1 ? v / g->devices : v;
}

static double log_or(double v, double fallback) { return v > 0 && isfinite(v) ? log(v) : fallback; }

/* The matrix rate the GPU runs this precision's products at, in TFLOPS, as the simulator takes
 * it: its share of the tensor-core rate (FP16 under mixed precision, TF32 for fp32 on Ampere
 * and later: dp_sim_tensor_share), else (or the tensor rate unknown) the FP32 rate;
 * fp32_matmul: no TF32. */
static double matmul_tflops(const struct dp_setting *s, const struct dp_gpu *g, bool fp32_matmul) {
    double fp32 = per_device(g, g->fp32_tflops), tensor = per_device(g, g->fp16_tflops);
    double share = s->precision == DP_PREC_MIXED ? 1.0
                   : fp32_matmul                 ? 0.0
                                                 : dp_sim_tensor_share(dp_gpu_generation(g), s);
    return share > 0 && tensor > 0 && isfinite(tensor) ? share * tensor : fp32;
}

void dp_sa_setting_vector(const struct dp_setting *s, const struct dp_gpu *g,
                          double v[DP_SA_SETTING_N]) {
    double fp32 = per_device(g, g->fp32_tflops), tensor = per_device(g, g->fp16_tflops);
    bool tensor_known = tensor > 0 && isfinite(tensor);
    enum dp_gpu_gen gen = dp_gpu_generation(g);
    v[0] = log_or(fp32, 0);
    v[1] = log_or(tensor_known ? tensor : fp32, 0);
    v[2] = log_or(per_device(g, g->memory_gb), 0);
    v[3] = log_or(per_device(g, g->bandwidth_gbps), 0);
    v[4] = log1p(g->nvlink_gbps > 0 && isfinite(g->nvlink_gbps) ? g->nvlink_gbps : 0);
    v[5] = g->pcie_gen > 0 ? g->pcie_gen : 3;
    v[6] = gen;
    v[7] = log(s->workers);
    v[8] = log1p(s->ps);
    v[9] = log(s->machines);
    v[10] = log(dp_setting_gpus_per_machine(s));
    v[11] = s->placement == DP_PLACE_HETERO;
    v[12] = log(dp_network_bandwidth_gbps(s->network));
    v[13] = log(dp_network_latency_us(s->network));
    v[14] = dp_network_intra(s->network);
    v[15] = s->precision == DP_PREC_MIXED;
    v[16] = s->sync == DP_SYNC_ALLREDUCE;
    v[17] = s->framework == DP_FW_PYTORCH;
    v[18] = !tensor_known;
    v[19] = gen >= DP_GEN_AMPERE;
}

void dp_sa_profile_at(const struct dp_profile *p, const struct dp_setting *s,
                      struct dp_profile *out) {
    double k = dp_sim_byte_scale(p->f16, s);
    *out = *p;
    for (int c = 0; c < DP_OPCLASS_COUNT; c++)
        if (c != DP_OPCLASS_NONE && c != DP_OPCLASS_INPUT && c != DP_OPCLASS_OPTIMIZER)
            out->bytes[c] *= k;
    out->activation_bytes *= k;
}

void dp_sa_cross_vector(const struct dp_profile *p, const struct dp_setting *s,
                        const struct dp_gpu *g, unsigned legacy, double v[DP_SA_CROSS_N]) {
    double fp32 = per_device(g, g->fp32_tflops), bw = per_device(g, g->bandwidth_gbps);
    /* The simulator moves an NVLink setting's parameters at the GPU's own NVLink rate (an A100
     * 6x the nominal NVLink 2 figure) and a PCIe one's at its PCIe generation's. */
    double mem = per_device(g, g->memory_gb),
           net = legacy & DP_SA_LEGACY_NETWORK_RATE ? dp_network_bandwidth_gbps(s->network)
                                                    : dp_sim_link_gbps(g, s->network);
    double bound = 0, total = 0;
    for (int c = 0; c < DP_OPCLASS_COUNT; c++) {
        total += p->flops[c];
        if (c != DP_OPCLASS_MATMUL) bound += p->bytes[c];
    }
    /* Each a time in ms (or a share), log-scaled; a floor keeps empty work finite. */
    double ms[DP_SA_CROSS_N] = {
        p->flops[DP_OPCLASS_MATMUL] /
            (matmul_tflops(s, g, legacy & DP_SA_LEGACY_FP32_MATMUL) * 1e9),
        bound / (bw * 1e6),
        total / (fp32 * 1e9),
        p->param_bytes / (net * 1e6),
        p->param_bytes * s->workers / ((s->ps > 0 ? s->ps : 1) * net * 1e6),
        2.0 * p->param_bytes * (s->workers > 1 ? (s->workers - 1.0) / s->workers : 0) / (net * 1e6),
        (p->activation_bytes + 4.0 * p->param_bytes) / (mem * 1e9),
    };
    for (int k = 0; k < DP_SA_CROSS_N; k++) v[k] = log(ms[k] > 1e-6 && isfinite(ms[k]) ? ms[k] : 1e-6);
}
