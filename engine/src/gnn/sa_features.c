/* sa_features.c: what the setting-aware inspector's head reads beside the graph embedding
 * (dp/sa.h): the setting as numbers (the GPU's spec vector per CUDA device, the cluster, the
 * network, sync, precision, framework) and a few physical ratios of the graph's profile to the
 * setting's rates, which let the head extrapolate to a GPU or network it never saw: time in ms of
 * the matrix work at the GPU's rate, of the memory-bound traffic at its bandwidth, of the
 * parameters over the network, and the memory footprint's share of the GPU's memory; and the
 * burst structure a trace of the setting would show (dp_sa_burst_vector). */
#include "dp/sa.h"

#include <math.h>

#include "dp/sim.h"
#include "sa_impl.h"

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
    out->fused_bytes *= k;
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

const char *const dp_sa_burst_names[DP_SA_BURST_N] = {
    "iteration_est_ms", "sample_ms",       "gpu_gap_samples", "pull_over_forward",
    "sync_over_backward", "net_active_samples", "net_gap_samples", "sync_pieces",
    "update_samples",   "compute_samples", "memory_busy_share",
};

/* A rate (GB/s or TFLOPS) when known, else the fallback. */
static double known_or(double v, double fallback) { return v > 0 && isfinite(v) ? v : fallback; }

/* The closed-form iteration of dp_sa_burst_vector, its parts in ms (the pieces as a count, the
 * memory rate in bytes per ms), and what dp_sa_place_vector recosts the compute with: the
 * kernels' time, the gap per launch and the host's dispatch per launch (ms), the framework's
 * share of the fusable traffic and launches its fused kernels save. */
struct burst_model {
    double iter, sample, compute, fw, bw, pull, sync, gpu_busy, net_gap, pieces, upd_idle;
    double mem_rate, kern, gap, host, fuse;
};

static void burst_model(const struct dp_profile *p, const struct dp_setting *s,
                        const struct dp_gpu *g, struct burst_model *m) {
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    enum dp_gpu_gen gen = dp_gpu_generation(g);
    bool pt = s->framework == DP_FW_PYTORCH, ar = s->sync == DP_SYNC_ALLREDUCE;
    int W = s->workers, M = s->machines > 0 ? s->machines : 1;
    /* The compute of one worker's step, as sim_compute.c takes it in sum: products at the
     * tensor-core rate when it runs them (else the CUDA cores, Winograd's share faster), the
     * rest of the traffic at the bandwidth, a gap per launch or the host's dispatch if slower. */
    double fp32 = known_or(per_device(g, g->fp32_tflops), 10) * 1e9;
    double tensor = per_device(g, g->fp16_tflops);
    double share = s->precision == DP_PREC_MIXED ? 1.0 : dp_sim_tensor_share(gen, s);
    double tc = share > 0 && tensor > 0 && isfinite(tensor) ? share * tensor * 1e9 : 0;
    double mem_rate = known_or(per_device(g, g->bandwidth_gbps), 500) * 1e6 * k.eff_mem;
    double gs = k.gen_scale[gen];
    double cuda = fp32 * fmin(1.0, k.eff_cuda * gs);
    double mm = p->flops[DP_OPCLASS_MATMUL], wino = fmin(p->winograd_flops, mm);
    double mm_ms = tc > 0 ? mm / fmax(tc * fmin(1.0, k.eff_tensor * gs), cuda)
                          : (mm - wino) / cuda + wino / (cuda * k.winograd);
    double bound = 0;
    for (int c = 0; c < DP_OPCLASS_COUNT; c++)
        if (c != DP_OPCLASS_OPTIMIZER && c != DP_OPCLASS_MATMUL) bound += p->bytes[c];
    double kern = fmax(mm_ms, p->bytes[DP_OPCLASS_MATMUL] / mem_rate) + bound / mem_rate;
    double host = (pt ? k.host_pt_us : k.host_tf_us) / 1000, gap = k.gap_us / 1000;
    double compute = fmax(kern + p->n_kernels * gap, p->n_kernels * host);
    double fw = compute / 3, bw = compute - fw; /* backward: about twice the forward work */
    /* The update on the GPU (all-reduce) or the PS: the gradient, weights and slots read and
     * written (the optimizer ops' traffic), one launch per variable (PyTorch: per 64). */
    double upd_bytes = p->bytes[DP_OPCLASS_OPTIMIZER] > 0 ? p->bytes[DP_OPCLASS_OPTIMIZER]
                                                          : 12.0 * p->params;
    double launches = pt ? ceil(p->n_variables / 64) : p->n_variables;
    double update = fmax(upd_bytes / mem_rate + launches * gap, launches * host);
    double lat = dp_network_latency_us(s->network) / 1000;
    double nic = dp_network_bandwidth_gbps(s->network) * 1e6 * k.net_eff;
    double nvl = known_or(g->nvlink_gbps, 0) / 2 * 1e6 * k.net_eff;
    double pcie = dp_sim_link_gbps(g, DP_NET_PCIE) * 1e6 * k.net_eff;
    double iter, pull = 0, sync, gpu_busy = compute, net_gap, pieces, upd_idle;
    if (ar) {
        /* PyTorch DDP fills 25 MB buckets (the first 1 MB) as the backward pass makes the
         * gradients, each reduced once full; TensorFlow reduces them all after it. */
        double grad = p->params * (s->precision == DP_PREC_MIXED && !pt ? 2.0 : 4.0);
        double first = pt ? fmin(grad, DP_SIM_DDP_FIRST_BUCKET_BYTES) : grad, rest = grad - first;
        double nrest = rest > 0 ? ceil(rest / DP_SIM_DDP_BUCKET_BYTES) : 0;
        double ring_first = dp_sim_allreduce_ms(s, g, &k, first),
               ring_piece = nrest > 0 ? dp_sim_allreduce_ms(s, g, &k, rest / nrest) : 0;
        pieces = W > 1 ? 1 + nrest : 0;
        double last = nrest > 0 ? ring_piece : ring_first;
        sync = W > 1 ? ring_first + nrest * ring_piece : 0;
        double tail = pt ? last : sync;
        iter = fw + fmax(bw + (W > 1 ? tail : 0), sync) + update + (W > 1 ? 2 * lat : 0);
        gpu_busy += update;
        net_gap = pieces > 0 ? (bw - sync) / pieces : 0;
        upd_idle = update;
    } else {
        /* Pull and push: the bytes of every shard over the worker's link, its machine's NIC
         * (from a PS on another machine) and the PS host (sim_network.c's resources). */
        double B = p->params * 4.0, ps = s->ps > 0 ? s->ps : 1;
        if (s->network == DP_NET_NVLINK) {
            pull = fmax(B * (W - 1.0) / W, B * (W - 1.0) / ps) / known_or(nvl, pcie);
        } else {
            bool het = s->placement == DP_PLACE_HETERO && M >= 2;
            int pm = het ? (s->ps < M - 1 ? s->ps : M - 1) : M;
            double wpm = ceil((double)W / (het ? M - pm : M)), ppm = ceil(ps / pm);
            double remote = dp_network_intra(s->network) ? 0 : het ? 1 : (M - 1.0) / M;
            pull = fmax(B / pcie, fmax(wpm * B * remote / nic, W * B * ppm / ps * remote / nic));
            pull = fmax(pull, W * B * ppm / ps / (k.ps_host_gbps * 1e6));
        }
        pull += 2 * lat;
        sync = pull; /* the push crosses the same resources the other way */
        /* The PS applies the gradients (on the GPUs holding the shards under NVLink). */
        double apply = s->network == DP_NET_NVLINK ? upd_bytes / ps / mem_rate
                                                   : upd_bytes / ps / (k.ps_host_gbps * 1e6);
        iter = fmax(pull, fw) + fmax(bw, sync) + apply + 2 * lat;
        pieces = fmin(DP_SIM_CHUNKS, fmax(1, p->n_variables));
        net_gap = (bw - sync) / pieces;
        upd_idle = apply;
    }
    *m = (struct burst_model){iter, fmin(100, fmax(1, iter / 50)), compute, fw, bw, pull, sync,
                              gpu_busy, net_gap, pieces, upd_idle, mem_rate, kern, gap, host,
                              pt ? k.fuse_pt : k.fuse_tf};
}

/* x > 1e-3 as its log, else log(1e-3): a floor keeps an absent gap or transfer finite. */
static double floored_log(double x) { return log(x > 1e-3 && isfinite(x) ? x : 1e-3); }

static void burst_inputs(const struct burst_model *m, const struct dp_profile *p,
                         double v[DP_SA_BURST_N]) {
    double bound = 0;
    for (int c = 0; c < DP_OPCLASS_COUNT; c++)
        if (c != DP_OPCLASS_OPTIMIZER && c != DP_OPCLASS_MATMUL) bound += p->bytes[c];
    double x[DP_SA_BURST_N] = {
        m->iter,
        m->sample,
        (m->iter - m->gpu_busy) / m->sample,
        m->pull / m->fw,
        m->sync / m->bw,
        m->sync / m->sample,
        m->net_gap / m->sample,
        1 + m->pieces,
        m->upd_idle / m->sample,
        m->compute / m->sample,
        (p->bytes[DP_OPCLASS_MATMUL] + bound) / m->mem_rate / m->compute,
    };
    for (int i = 0; i < DP_SA_BURST_N; i++) v[i] = floored_log(x[i]);
}

const char *const dp_sa_place_names[DP_SA_PLACE_N] = {
    "fused_share", "compute_fused_samples", "fw_param_mid",      "fw_param_head",
    "bw_grad_mid", "bw_grad_tail",          "push_tail_samples", "pull_wait_samples",
};

static void place_inputs(const struct burst_model *m, const struct dp_profile *p,
                         double v[DP_SA_PLACE_N]) {
    /* The compute as sim_compute.c takes it with its fused kernels: the framework's share of
     * the fusable traffic and launches saved. */
    double fused_ms = fmin(m->fuse * p->fused_bytes / m->mem_rate, m->kern);
    double launches = fmax(0, p->n_kernels - m->fuse * p->fused_kernels);
    double compute = fmax(m->kern - fused_ms + launches * m->gap, launches * m->host);
    double fw = compute / 3, bw = compute - fw;
    /* The transfers end no sooner than half of them after the middle gradient is made, nor
     * than the last chunk's gradients' share of them after the backward pass; the forward pass
     * waits for the parameters its first chunk reads, and for half of them by its middle. */
    double end =
        fmax(bw, fmax(p->bw_grad_mid * bw + m->sync / 2, bw + p->bw_grad_tail * m->sync));
    double wait = fmax(p->fw_param_head * m->pull, m->pull / 2 - p->fw_param_mid * fw);
    double x[DP_SA_PLACE_N] = {
        fused_ms / m->compute, compute / m->sample,    p->fw_param_mid,  p->fw_param_head,
        p->bw_grad_mid,        p->bw_grad_tail,        (end - bw) / m->sample, wait / m->sample,
    };
    for (int i = 0; i < DP_SA_PLACE_N; i++) v[i] = floored_log(x[i]);
}

void dp_sa_burst_place(const struct dp_profile *p, const struct dp_setting *s,
                       const struct dp_gpu *g, double *burst, double *place) {
    struct burst_model m;
    burst_model(p, s, g, &m);
    if (burst) burst_inputs(&m, p, burst);
    if (place) place_inputs(&m, p, place);
}

void dp_sa_burst_vector(const struct dp_profile *p, const struct dp_setting *s,
                        const struct dp_gpu *g, double v[DP_SA_BURST_N]) {
    dp_sa_burst_place(p, s, g, v, NULL);
}

void dp_sa_place_vector(const struct dp_profile *p, const struct dp_setting *s,
                        const struct dp_gpu *g, double v[DP_SA_PLACE_N]) {
    dp_sa_burst_place(p, s, g, NULL, v);
}
