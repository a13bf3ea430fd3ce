/* sim.c: the simulator's driver: a workload's compute profile on the device (sim_compute.c),
 * the synchronisation (parameter-server flows or NCCL all-reduce, sim_network.c) and the
 * memory footprint (sim_memory.c) make a per-iteration timeline; iterations with straggler
 * jitter fill the run, and each worker's traces are sampled from it (sim_trace.c). Everything
 * here is simulated. */
#include "dp/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_impl.h"

#define SIM_MAX_ITERATIONS 5000
/* Trace samples over all workers, at most: about 800 MB of traces and tens of seconds of
 * sampling. Only absurd inputs (a sample interval far below the iteration time, a batch of
 * millions) reach it; they fail instead of exhausting memory or overflowing the count. */
#define SIM_MAX_SAMPLES 1e7
void dp_sim_constants_default(struct dp_sim_constants *c) {
    /* Fitted by `driple calibrate --fit` over the 834 rows of ../shared/calibration
     * (notes/calibration.md); ps_host_gbps, jitter and context_gb are typical figures, not
     * fitted. Every generation with a GPU in the data has its fitted scale (Kepler from the
     * K80, Ada from the RTX 6000 Ada, Hopper from the H100 PCIe); one without takes the
     * nearest fitted one's (Maxwell: Kepler's; Blackwell: Hopper's), an unknown one their
     * geometric mean. e_cuda and e_tensor are capped at the peak, so a scale times its
     * efficiency above 1 means that generation's kernels reach the peak. */
    static const double gen[DP_GEN_COUNT] = {
        [DP_GEN_UNKNOWN] = 1.59, [DP_GEN_KEPLER] = 0.807, [DP_GEN_MAXWELL] = 0.807,
        [DP_GEN_PASCAL] = 0.851, [DP_GEN_VOLTA] = 1.90,   [DP_GEN_TURING] = 1.21,
        [DP_GEN_AMPERE] = 2.34,  [DP_GEN_ADA] = 2.96,     [DP_GEN_HOPPER] = 2.34,
        [DP_GEN_BLACKWELL] = 2.34};
    for (int g = 0; g < DP_GEN_COUNT; g++) c->gen_scale[g] = gen[g];
    c->eff_cuda = 0.718;
    c->eff_tensor = 0.264;
    c->eff_tensor_mm = 0.264;
    c->winograd = 3.98;
    c->tc_unaligned = 0.25;
    c->eff_mem = 0.45;
    c->gap_us = 12.1;
    c->host_tf_us = 14.6;
    c->host_pt_us = 16.4;
    c->fuse_tf = 1.0;
    c->fuse_pt = 1.0;
    c->net_eff = 0.300;
    c->ps_host_gbps = 20.0;
    c->jitter = 0.03;
    c->context_gb = 0.4;
    /* torchvision's JPEG decode, one thread, ImageNet's validation JPEGs: 712 images/s on an
     * Intel Xeon Platinum 8581C (arXiv 2605.08731, Iglovikov and Kosarevsky, 2026, Table 1),
     * 1.40 ms an image, over a 224 x 224 input's 0.0502 megapixels */
    c->decode_ms_mp = 1000.0 / 712 / (224.0 * 224 / 1e6);
}

void dp_sim_opts_default(struct dp_sim_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->iterations = 20;
    o->threshold = DP_TRACE_THRESHOLD;
}

void dp_sim_result_free(struct dp_sim_result *r) {
    if (!r) return;
    for (int i = 0; i < r->n_traces; i++) dp_trace_free(r->traces[i]);
    free(r->traces);
    r->traces = NULL;
    r->n_traces = 0;
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* 53 random bits into (0, 1): never 0, so log() in normal01 stays finite. */
static double uniform01(uint64_t *s) {
    return ((double)(splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal01(uint64_t *s) {
    double u1 = uniform01(s), u2 = uniform01(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Variables sharded over the PS by size (greedy, largest first), fp32 on the wire. */
static void shard_vars(const struct dp_sim_workload *w, int n_ps, double *shard) {
    for (int v = 0; v < w->n_vars; v++) {
        int best = 0;
        for (int p = 1; p < n_ps; p++)
            if (shard[p] < shard[best]) best = p;
        shard[best] += w->vars[v] * 4.0;
    }
}

/* The most workers whose traces and timelines are simulated one by one; a larger cluster is
 * simulated by this many representatives spread over it (the workers of a class share their
 * links and schedule: under all-reduce all of them, under PS those of a machine), and one
 * straggler standing for the rest, whose compute factor is the maximum of theirs (an order
 * statistic, drawn in closed form). */
#define SIM_MAX_REPS 64

/* The inverse of the standard normal distribution function at p in (0, 1) (Acklam's rational
 * approximation, relative error below 1.2e-9). */
static double probit(double p) {
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    if (p > 0.5) return -probit(1 - p);
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* The largest of k standard normal draws, in one draw: its distribution function is Phi^k, so
 * Phi^-1(u^(1/k)) for u uniform; the upper tail 1 - u^(1/k) is taken without cancellation. */
static double normal_max(uint64_t *s, double k) {
    double tail = -expm1(log(uniform01(s)) / k);
    return -probit(tail);
}

/* The all-reduce buckets: under PyTorch DDP the gradients fill 25 MB buckets (the first 1 MB)
 * in the order the backward pass makes them, each reduced once full; TensorFlow's replicated
 * mode reduces all of them after the backward pass. */
static void make_buckets(const struct dp_setting *s, const struct dp_sim_fabric *f,
                         double grad_bytes, struct iter_state *st, double *ar_total) {
    st->n_buckets = 0;
    *ar_total = 0;
    if (s->workers < 2 || !st->bw.n || grad_bytes <= 0) return;
    double fill = 0, cap = DP_SIM_DDP_FIRST_BUCKET_BYTES, intra, nic;
    enum dp_allreduce_algo used;
    for (int c = 0; c < st->bw.n; c++) {
        fill += grad_bytes * st->bw.c[c].frac;
        bool last = c == st->bw.n - 1;
        if (!last && (s->framework != DP_FW_PYTORCH || fill < cap)) continue;
        if (fill <= 0) continue;
        int b = st->n_buckets++;
        st->bucket_bytes[b] = fill;
        st->bucket_chunk[b] = c;
        st->bucket_ms[b] = sim_allreduce_algo_ms(f, s->ar_algo, fill, s->workers,
                                                 f->gpus_per_machine, &used);
        sim_allreduce_traffic(used, fill, s->workers, f->gpus_per_machine, &intra, &nic);
        st->bucket_nic[b] = nic;
        *ar_total += st->bucket_ms[b];
        fill = 0;
        cap = DP_SIM_DDP_BUCKET_BYTES;
    }
}

/* One iteration under all-reduce: every worker's backward pass (factor jit[r] of each column;
 * under all-reduce nothing waits inside the compute, so a chunk ends at jit x the profile's
 * running sum) makes the buckets ready; a bucket's collective starts when every worker has it
 * and the previous one is done; then each worker updates. Fills the bucket spans of iteration
 * q and returns the slowest worker's end. */
static double allreduce_iteration(struct iter_state *st, int q, const double *jit) {
    double *s0 = &st->ar_start[(size_t)q * st->n_buckets];
    double *e0 = &st->ar_end[(size_t)q * st->n_buckets];
    double jmax = 0;
    for (int r = 0; r < st->n_cols; r++)
        if (jit[r] > jmax) jmax = jit[r];
    double prev = 0, cum = st->fw.total + st->mid_t;
    int c = 0;
    for (int b = 0; b < st->n_buckets; b++) {
        for (; c <= st->bucket_chunk[b]; c++) cum += st->bw.c[c].t;
        s0[b] = jmax * cum > prev ? jmax * cum : prev;
        e0[b] = s0[b] + st->bucket_ms[b];
        prev = e0[b];
    }
    double slow = 0;
    for (int r = 0; r < st->n_cols; r++) {
        double bend = jit[r] * (st->fw.total + st->mid_t + st->bw.total);
        double end = (bend > prev ? bend : prev) + jit[r] * st->update_ms;
        if (end > slow) slow = end;
    }
    return slow;
}

static void iter_state_free(struct iter_state *is) {
    free(is->P);
    free(is->Q);
    free(is->pb);
    free(is->qb);
    free(is->pnic);
    free(is->qnic);
    free(is->ar_start);
    free(is->ar_end);
    free(is->jit);
    free(is->T);
    free(is->rep);
}

enum dp_status sim_profiles_init(const struct dp_sim_workload *w, const struct dp_setting *s,
                                 const struct dp_gpu *gpu, const struct dp_sim_constants *k,
                                 struct sim_profiles *p, struct dp_error *err) {
    enum dp_status st = sim_device_init(gpu, &p->dev, err);
    if (st) {
        dp_error_prefix(err, s->id);
        return st;
    }
    return sim_compute(w, &p->dev, s, k, &p->fw, &p->bw, &p->update_ms, err);
}

enum dp_status dp_simulate_workload(const struct dp_sim_workload *w, const struct dp_setting *s,
                                    const struct dp_gpu *gpu, const struct dp_sim_opts *opts,
                                    struct dp_sim_result *out, struct dp_error *err) {
    struct dp_sim_constants k;
    struct sim_profiles *p = malloc(sizeof *p);
    if (!p) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", s->id);
    if (opts && opts->constants) k = *opts->constants;
    else dp_sim_constants_default(&k);
    enum dp_status st = dp_setting_check(s, err);
    if (!st) st = sim_profiles_init(w, s, gpu, &k, p, err);
    if (!st) st = sim_run(w, s, gpu, opts, p, out, err);
    free(p);
    return st;
}

/* What a run needs beside the iteration state: the PS network and shards, and the
 * synchronisation's per-iteration costs outside the workers' compute. */
struct run {
    const struct dp_sim_workload *w;
    const struct dp_setting      *s;
    const struct dp_gpu          *gpu;
    struct dp_sim_opts            opts;
    struct dp_sim_constants       k;
    struct sim_device             dev;
    struct sim_ps                 net;
    double                       *shard;
    double apply, barrier, per_iter_bytes, nic_iter;
    double input_ms; /* the loader's time per step per worker (CPU decode), 0 when none */
};

/* The representatives (SIM_MAX_REPS at most, spread over the workers) and the jitter columns:
 * one per representative and, for a larger cluster, the straggler's. */
static enum dp_status pick_reps(struct iter_state *is, int W) {
    is->n_workers = W;
    is->n_rep = W < SIM_MAX_REPS ? W : SIM_MAX_REPS;
    is->n_cols = is->n_rep + (W > is->n_rep);
    if (!(is->rep = malloc((size_t)is->n_rep * sizeof *is->rep))) return DP_ERR_NOMEM;
    for (int r = 0; r < is->n_rep; r++) is->rep[r] = (int)((int64_t)r * W / is->n_rep);
    return DP_OK;
}

/* The synchronisation: NCCL's buckets, or the PS flows and apply, and what they move. */
static enum dp_status plan_sync(struct run *rn, struct iter_state *is, struct dp_sim_result *out) {
    const struct dp_setting *s = rn->s;
    const struct dp_sim_workload *w = rn->w;
    int W = s->workers, NP = s->ps;
    bool half = sim_f16_gradients(s);
    out->grad_bytes = w->params * (half ? 2.0 : 4.0);
    if (is->allreduce) {
        struct dp_sim_fabric f;
        enum dp_allreduce_algo used;
        double intra, nic;
        sim_fabric_of(s, &rn->dev, rn->opts.system, &rn->k, &f);
        make_buckets(s, &f, out->grad_bytes, is, &out->allreduce_ms);
        sim_allreduce_algo_ms(&f, s->ar_algo, out->grad_bytes, W, f.gpus_per_machine, &used);
        sim_allreduce_traffic(used, out->grad_bytes, W, f.gpus_per_machine, &intra, &nic);
        rn->per_iter_bytes = W * intra + f.machines * nic;
        rn->nic_iter = f.machines * nic;
        rn->barrier = W > 1 ? 2 * (f.machines > 1 ? f.inter_lat_us : f.intra_lat_us) / 1000 : 0;
        rn->apply = is->update_ms;
        return DP_OK;
    }
    shard_vars(w, NP, rn->shard);
    enum dp_status st = sim_ps_init(s, &rn->dev, &rn->k, &rn->net);
    if (st) return st;
    double lat = dp_network_latency_us(s->network) / 1000.0;
    bool intra = dp_network_intra(s->network);
    sim_ps_phase(s, &rn->net, rn->shard, true, is->P, is->pb, is->pnic);
    rn->nic_iter += sim_ps_nic_total(&rn->net);
    sim_ps_phase(s, &rn->net, rn->shard, false, is->Q, is->qb, is->qnic);
    rn->nic_iter += sim_ps_nic_total(&rn->net);
    for (int i = 0; i < W; i++) {
        /* The worker's interface: its NIC between machines, the local link (TF's gRPC over
         * loopback) inside one. */
        if (intra) is->pnic[i] = is->pb[i], is->qnic[i] = is->qb[i];
        if (is->pb[i] > 0) is->P[i] += 2 * lat;
        if (is->qb[i] > 0) is->Q[i] += 2 * lat;
        rn->per_iter_bytes += is->pb[i] + is->qb[i];
    }
    /* The PS apply the aggregated gradient: read it, read and write the weights and the
     * optimizer slots; on the host CPU, or on a GPU when the shards live there. */
    for (int p = 0; p < NP; p++) {
        double b = (3.0 + 2.0 * w->slots) * rn->shard[p];
        double t = s->network == DP_NET_NVLINK ? b / (rn->dev.bw * rn->k.eff_mem)
                                               : b / BYTES_PER_MS(rn->k.ps_host_gbps);
        if (t > rn->apply) rn->apply = t;
    }
    rn->barrier = 2 * lat;
    is->lat2 = 2 * lat;
    return DP_OK;
}

/* One iteration without jitter, to size the run; under PS also the worker whose schedule ends
 * last (the straggler's class). */
static enum dp_status estimate(struct run *rn, struct iter_state *is, double *est) {
    struct timeline tl;
    *est = 0;
    if (!is->allreduce) {
        for (int i = 0; i < is->n_workers; i++) {
            sim_timeline(is, i, 0, 1.0, &tl);
            if (tl.end > *est) *est = tl.end, is->worst = i;
        }
        *est += rn->apply + rn->barrier;
        return DP_OK;
    }
    double ones[SIM_MAX_REPS + 1];
    is->n_iter = 1;
    if (!(is->ar_start = calloc((size_t)is->n_buckets + 1, sizeof(double))) ||
        !(is->ar_end = calloc((size_t)is->n_buckets + 1, sizeof(double))))
        return DP_ERR_NOMEM;
    for (int r = 0; r < is->n_cols; r++) ones[r] = 1;
    *est = allreduce_iteration(is, 0, ones) + rn->barrier;
    free(is->ar_start), free(is->ar_end);
    is->ar_start = is->ar_end = NULL;
    return DP_OK;
}

/* The iterations: each column's compute factor (log-normal; the straggler's the largest of the
 * workers it stands for), each iteration as long as its slowest worker, or as the loader when
 * the input pipeline is slower. */
static enum dp_status run_iterations(struct run *rn, struct iter_state *is, int n_iter,
                                     struct dp_sim_result *out) {
    const struct dp_sim_constants *k = &rn->k;
    int C = is->n_cols, R = is->n_rep;
    bool ar = is->allreduce;
    is->n_iter = n_iter;
    size_t nb = (size_t)n_iter * (is->n_buckets ? is->n_buckets : 1);
    if (!(is->jit = malloc((size_t)n_iter * C * sizeof(double))) ||
        !(is->T = malloc(((size_t)n_iter + 1) * sizeof(double))) ||
        (ar && (!(is->ar_start = calloc(nb, sizeof(double))) ||
                !(is->ar_end = calloc(nb, sizeof(double))))))
        return DP_ERR_NOMEM;
    uint64_t rng = rn->opts.seed ^ 0x5DEECE66Dull;
    double rest = (double)is->n_workers - R;
    for (size_t i = 0; i < (size_t)n_iter * C; i++) {
        double z = (int)(i % C) < R ? normal01(&rng) : normal_max(&rng, rest);
        is->jit[i] = exp(k->jitter * z - 0.5 * k->jitter * k->jitter);
    }
    struct timeline tl;
    double step = is->fw.total + is->mid_t + is->bw.total, sum_c = 0, sum_w = 0;
    is->T[0] = 0;
    for (int q = 0; q < n_iter; q++) {
        const double *jit = &is->jit[(size_t)q * C];
        double slow = 0;
        if (ar) slow = allreduce_iteration(is, q, jit);
        else
            for (int r = 0; r < C; r++) {
                sim_timeline(is, r < R ? is->rep[r] : is->worst, q, jit[r], &tl);
                if (tl.end > slow) slow = tl.end;
            }
        sim_timeline(is, 0, q, jit[0], &tl);
        sum_c += jit[0] * step;
        sum_w += slow - tl.end;
        double len = slow + (ar ? 0 : rn->apply) + rn->barrier;
        is->T[q + 1] = is->T[q] + (len > rn->input_ms ? len : rn->input_ms);
    }
    out->compute_ms = sum_c / n_iter;
    out->wait_ms = sum_w / n_iter;
    return DP_OK;
}

/* The result's timings, throughput and byte counts, from the iterations run. */
static void fill_result(const struct run *rn, const struct iter_state *is,
                        struct dp_sim_result *out) {
    const struct dp_setting *s = rn->s;
    int W = s->workers, n = is->n_iter;
    double total = is->T[n];
    out->iteration_ms = total / n;
    out->accum = dp_setting_accum(s);
    out->samples_per_step = (double)rn->w->batch * out->accum * W;
    out->throughput = out->samples_per_step / (out->iteration_ms / 1000.0);
    out->tokens_per_s = rn->w->seq_len > 0 ? out->throughput * rn->w->seq_len : 0;
    out->input_ms = rn->input_ms;
    out->input_bound = rn->input_ms > 0 && rn->input_ms >= out->iteration_ms * (1 - 1e-9);
    for (int i = 0; i < W; i++) {
        if (is->P[i] > out->pull_ms) out->pull_ms = is->P[i];
        if (is->Q[i] > out->push_ms) out->push_ms = is->Q[i];
        out->bytes_pulled += is->pb[i] * n;
        out->bytes_pushed += is->qb[i] * n;
    }
    out->apply_ms = rn->apply;
    out->bytes_per_iter = rn->per_iter_bytes;
    out->batch = rn->w->batch;
    out->sample_ms = rn->opts.sample_ms;
    out->n_iterations = n;
    out->params = rn->w->params;
    out->gflops_per_iter = rn->w->gflops;
    /* Per PS: what it sent and received, from its own side of each flow. */
    for (int p = 0; !is->allreduce && p < s->ps; p++)
        for (int i = 0; i < W; i++)
            if (rn->shard[p] > 0 && sim_ps_crosses(s, &rn->net, i, p)) {
                out->bytes_sent_ps += rn->shard[p] * n;
                out->bytes_received_ps += rn->shard[p] * n;
            }
    out->link_tx_bytes = rn->nic_iter * n;
    out->link_rx_bytes = rn->nic_iter * n;
}

/* The representatives' traces; the labels and the mean utilisation are means over them. */
static enum dp_status sample_traces(const struct run *rn, const struct iter_state *is,
                                    struct dp_sim_result *out, struct dp_error *err) {
    const struct dp_sim_opts *o = &rn->opts;
    int R = is->n_rep, n_iter = is->n_iter;
    double total = is->T[n_iter], n_samples = floor(total / o->sample_ms + 1e-9);
    if (!(n_samples * R <= SIM_MAX_SAMPLES))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: graph %s: %d iterations of %.4g ms sampled every %.4g ms would "
                            "take %.3g trace samples over the workers (at most %.0f); raise the "
                            "sample interval or lower the batch",
                            rn->s->id, rn->w->name, n_iter, total / n_iter, o->sample_ms,
                            n_samples * R, SIM_MAX_SAMPLES);
    if (n_samples < 2) /* labels need two samples; zeros would pass for an answer */
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: graph %s: %d iterations of %.4g ms sampled every %.4g ms give "
                            "%.0f trace sample(s); lower the sample interval",
                            rn->s->id, rn->w->name, n_iter, total / n_iter, o->sample_ms,
                            n_samples);
    struct dp_trace **tr = calloc((size_t)R, sizeof *tr);
    if (!tr) return DP_ERR_NOMEM;
    out->traces = tr;
    out->n_traces = R;
    for (int r = 0; r < R; r++) {
        double busy, lab[DP_N_OUTPUTS];
        enum dp_status st;
        if (!(tr[r] = dp_trace_init("simulated"))) return DP_ERR_NOMEM;
        if ((st = sim_sample_worker(is, r, o->sample_ms, (int)n_samples, tr[r], &busy, err)))
            return st;
        out->mean_gpu_util += (total > 0 ? 100.0 * busy / total : 0) / R;
        dp_trace_labels(tr[r], o->threshold, lab, NULL);
        for (int l = 0; l < DP_N_OUTPUTS; l++) out->labels[l] += lab[l] / R;
        if (!o->want_traces) { /* only the labels are wanted: hold one trace at a time */
            dp_trace_free(tr[r]);
            tr[r] = NULL;
        }
    }
    if (!o->want_traces) dp_sim_result_free(out);
    return DP_OK;
}

/* Fills the iteration state's per-worker arrays and compute phases (extra_ms: GPU work per
 * micro-batch beside them). */
static enum dp_status init_state(struct run *rn, const struct sim_profiles *prof,
                                 double extra_ms, struct iter_state *is) {
    int W = rn->s->workers;
    is->allreduce = rn->s->sync == DP_SYNC_ALLREDUCE;
    is->fw = prof->fw;
    is->bw = prof->bw;
    is->update_ms = prof->update_ms;
    sim_accumulate(is, dp_setting_accum(rn->s), extra_ms);
    if (!(rn->shard = calloc((size_t)rn->s->ps + 1, sizeof *rn->shard)) ||
        !(is->P = calloc((size_t)W, sizeof(double))) ||
        !(is->Q = calloc((size_t)W, sizeof(double))) ||
        !(is->pb = calloc((size_t)W, sizeof(double))) ||
        !(is->qb = calloc((size_t)W, sizeof(double))) ||
        !(is->pnic = calloc((size_t)W, sizeof(double))) ||
        !(is->qnic = calloc((size_t)W, sizeof(double))))
        return DP_ERR_NOMEM;
    return pick_reps(is, W);
}

/* The run's length: enough iterations to fill min_run_ms of trace, at least opts.iterations
 * (the sample interval picked from the iteration's estimate when not given). */
static int run_length(struct dp_sim_opts *o, double est) {
    if (!(o->sample_ms > 0)) {
        o->sample_ms = est / 50;
        if (o->sample_ms < 1) o->sample_ms = 1;
        if (o->sample_ms > 100) o->sample_ms = 100;
    }
    if (!(o->min_run_ms > 0)) o->min_run_ms = 200 * o->sample_ms;
    double want = ceil(o->min_run_ms / est);
    int n_iter = want > SIM_MAX_ITERATIONS ? SIM_MAX_ITERATIONS : (int)want;
    if (n_iter < o->iterations)
        n_iter = o->iterations > SIM_MAX_ITERATIONS ? SIM_MAX_ITERATIONS : o->iterations;
    return n_iter;
}

enum dp_status sim_run(const struct dp_sim_workload *w, const struct dp_setting *s,
                       const struct dp_gpu *gpu, const struct dp_sim_opts *opts_in,
                       const struct sim_profiles *prof, struct dp_sim_result *out,
                       struct dp_error *err) {
    struct run rn = {.w = w, .s = s, .gpu = gpu, .dev = prof->dev};
    struct iter_state is = {0};
    if (opts_in) rn.opts = *opts_in;
    else dp_sim_opts_default(&rn.opts);
    if (rn.opts.constants) rn.k = *rn.opts.constants;
    else dp_sim_constants_default(&rn.k);
    if (rn.opts.iterations <= 0) rn.opts.iterations = 20;
    if (!(rn.opts.threshold > 0)) rn.opts.threshold = DP_TRACE_THRESHOLD;
    if (s->network == DP_NET_NVLINK && !(rn.dev.nvlink > 0))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: GPU %s has no NVLink in the catalog (nvlink_gbps unknown); "
                            "pick PCIe or a network between machines", s->id, gpu->name);
    memset(out, 0, sizeof *out);
    snprintf(out->notes, sizeof out->notes, "%s", rn.dev.notes);
    sim_precision_notes(s, rn.dev.gen, out->notes, sizeof out->notes);
    double dali_ms;
    sim_input(w, s, rn.opts.system, &rn.dev, &rn.k, &rn.input_ms, &dali_ms, out->notes,
              sizeof out->notes);
    enum dp_status st = init_state(&rn, prof, dali_ms, &is);
    if (!st) st = plan_sync(&rn, &is, out);
    if (st) goto fail;
    sim_footprint(w, s, &rn.k, rn.shard, s->ps, &is.act_bytes, &is.base_bytes);
    out->memory_gb = (is.base_bytes + is.act_bytes) / 1e9;
    out->oom = !isnan(rn.dev.memory_gb) && out->memory_gb > rn.dev.memory_gb;
    double est = 0;
    if ((st = estimate(&rn, &is, &est))) goto fail;
    if (est < rn.input_ms) est = rn.input_ms;
    /* Absurd GPU figures or batches make the iteration time overflow or vanish; every count
     * below divides by it. */
    if (!(est > 0 && est < 1e15)) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: graph %s: one iteration would take %g ms on GPU %s; cannot "
                          "simulate that (check the batch and the GPU's figures)",
                          s->id, w->name, est, gpu->name);
        goto fail;
    }
    if ((st = run_iterations(&rn, &is, run_length(&rn.opts, est), out))) goto fail;
    fill_result(&rn, &is, out);
    if (!rn.opts.throughput_only) st = sample_traces(&rn, &is, out, err);
fail:
    if (st) {
        if (st == DP_ERR_NOMEM)
            dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory simulating %s", s->id, w->name);
        dp_sim_result_free(out);
    }
    sim_ps_free(&rn.net);
    iter_state_free(&is);
    free(rn.shard);
    return st;
}

enum dp_status dp_sim_memory(const struct dp_sim_workload *w, const struct dp_setting *s,
                             const struct dp_gpu *gpu, const struct dp_sim_constants *k,
                             double *memory_gb, bool *oom, struct dp_error *err) {
    struct dp_sim_constants def;
    enum dp_status st = dp_setting_check(s, err);
    if (st) return st;
    if (!k) {
        dp_sim_constants_default(&def);
        k = &def;
    }
    double *shard = calloc((size_t)s->ps + 1, sizeof *shard), act, base;
    if (!shard) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", s->id);
    shard_vars(w, s->ps, shard);
    sim_footprint(w, s, k, shard, s->ps, &act, &base);
    free(shard);
    double per = gpu->devices > 1 ? 1.0 / gpu->devices : 1.0;
    *memory_gb = (act + base) / 1e9;
    *oom = gpu->memory_gb > 0 && *memory_gb > gpu->memory_gb * per;
    return DP_OK;
}

enum dp_status dp_simulate(const struct dp_graph *g, const struct dp_setting *s,
                           const struct dp_gpu *gpu, const struct dp_sim_opts *opts,
                           struct dp_sim_result *out, struct dp_error *err) {
    struct dp_sim_workload *w = NULL;
    enum dp_status st = dp_setting_check(s, err);
    if (st) return st;
    if ((st = dp_sim_workload_init(g, opts ? opts->batch : 0, &w, err))) {
        dp_error_prefix(err, s->id);
        return st;
    }
    st = dp_simulate_workload(w, s, gpu, opts, out, err);
    dp_sim_workload_free(w);
    return st;
}
