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

/* The all-reduce buckets: under PyTorch DDP the gradients fill 25 MB buckets (the first 1 MB)
 * in the order the backward pass makes them, each reduced once full; TensorFlow's replicated
 * mode reduces all of them after the backward pass. */
static void make_buckets(const struct dp_setting *s, const struct sim_allreduce *a,
                         double grad_bytes, struct iter_state *st, double *ar_total) {
    st->n_buckets = 0;
    *ar_total = 0;
    if (s->workers < 2 || !st->bw.n || grad_bytes <= 0) return;
    double fill = 0, cap = DP_SIM_DDP_FIRST_BUCKET_BYTES, intra, nic;
    for (int c = 0; c < st->bw.n; c++) {
        fill += grad_bytes * st->bw.c[c].frac;
        bool last = c == st->bw.n - 1;
        if (!last && (s->framework != DP_FW_PYTORCH || fill < cap)) continue;
        if (fill <= 0) continue;
        int b = st->n_buckets++;
        st->bucket_bytes[b] = fill;
        st->bucket_chunk[b] = c;
        st->bucket_ms[b] = sim_allreduce_ms(a, fill, &intra, &nic);
        st->bucket_nic[b] = nic;
        *ar_total += st->bucket_ms[b];
        fill = 0;
        cap = DP_SIM_DDP_BUCKET_BYTES;
    }
}

/* One iteration under all-reduce: every worker's backward pass (factor jit[w]; under
 * all-reduce nothing waits inside the compute, so a chunk ends at jit[w] x the profile's
 * running sum) makes the buckets ready; a bucket's collective starts when every worker has it
 * and the previous one is done; then each worker updates. Fills the bucket spans of iteration
 * q and returns the slowest worker's end. */
static double allreduce_iteration(struct iter_state *st, int q, const double *jit) {
    double *s0 = &st->ar_start[(size_t)q * st->n_buckets];
    double *e0 = &st->ar_end[(size_t)q * st->n_buckets];
    double jmax = 0;
    for (int w = 0; w < st->n_workers; w++)
        if (jit[w] > jmax) jmax = jit[w];
    double prev = 0, cum = st->fw.total;
    int c = 0;
    for (int b = 0; b < st->n_buckets; b++) {
        for (; c <= st->bucket_chunk[b]; c++) cum += st->bw.c[c].t;
        s0[b] = jmax * cum > prev ? jmax * cum : prev;
        e0[b] = s0[b] + st->bucket_ms[b];
        prev = e0[b];
    }
    double slow = 0;
    for (int w = 0; w < st->n_workers; w++) {
        double bend = jit[w] * (st->fw.total + st->bw.total);
        double end = (bend > prev ? bend : prev) + jit[w] * st->update_ms;
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

enum dp_status sim_run(const struct dp_sim_workload *w, const struct dp_setting *s,
                       const struct dp_gpu *gpu, const struct dp_sim_opts *opts_in,
                       const struct sim_profiles *prof, struct dp_sim_result *out,
                       struct dp_error *err) {
    struct dp_sim_opts opts;
    struct dp_sim_constants cst;
    const struct sim_device dev = prof->dev;
    if (opts_in) opts = *opts_in;
    else dp_sim_opts_default(&opts);
    if (opts.constants) cst = *opts.constants;
    else dp_sim_constants_default(&cst);
    if (opts.iterations <= 0) opts.iterations = 20;
    if (!(opts.threshold > 0)) opts.threshold = DP_TRACE_THRESHOLD;
    enum dp_status st = DP_OK;
    if (s->network == DP_NET_NVLINK && !(dev.nvlink > 0))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: GPU %s has no NVLink in the catalog (nvlink_gbps unknown); "
                            "pick PCIe or a network between machines", s->id, gpu->name);

    memset(out, 0, sizeof *out);
    snprintf(out->notes, sizeof out->notes, "%s", dev.notes);
    struct sim_ps net = {0};
    struct iter_state is = {0};
    double *shard = NULL;
    int W = s->workers, NP = s->ps;
    bool ar = s->sync == DP_SYNC_ALLREDUCE, mixed = s->precision == DP_PREC_MIXED;
    is.allreduce = ar;
    is.n_workers = W;
    is.fw = prof->fw;
    is.bw = prof->bw;
    is.update_ms = prof->update_ms;
    if (!(shard = calloc((size_t)NP + 1, sizeof *shard)) ||
        !(is.P = calloc((size_t)W, sizeof(double))) ||
        !(is.Q = calloc((size_t)W, sizeof(double))) ||
        !(is.pb = calloc((size_t)W, sizeof(double))) ||
        !(is.qb = calloc((size_t)W, sizeof(double))) ||
        !(is.pnic = calloc((size_t)W, sizeof(double))) ||
        !(is.qnic = calloc((size_t)W, sizeof(double)))) {
        st = DP_ERR_NOMEM;
        goto fail;
    }

    /* The synchronisation: per-iteration costs that are not the workers' compute. */
    double apply = 0, barrier = 0, per_iter_bytes = 0, nic_iter = 0;
    out->grad_bytes = w->params * (mixed && s->framework == DP_FW_TENSORFLOW ? 2.0 : 4.0);
    if (ar) {
        struct sim_allreduce a;
        sim_allreduce_init(s, &dev, &cst, &a);
        make_buckets(s, &a, out->grad_bytes, &is, &out->allreduce_ms);
        double intra, nic;
        sim_allreduce_ms(&a, out->grad_bytes, &intra, &nic);
        per_iter_bytes = W * intra + a.machines * nic;
        nic_iter = a.machines * nic;
        barrier = W > 1 ? 2 * (a.machines > 1 ? a.lat_nic : a.lat_intra) : 0;
        apply = is.update_ms;
    } else {
        shard_vars(w, NP, shard);
        if ((st = sim_ps_init(s, &dev, &cst, &net))) goto fail;
        double lat = dp_network_latency_us(s->network) / 1000.0;
        bool intra = dp_network_intra(s->network);
        sim_ps_phase(s, &net, shard, true, is.P, is.pb, is.pnic);
        nic_iter += sim_ps_nic_total(&net);
        sim_ps_phase(s, &net, shard, false, is.Q, is.qb, is.qnic);
        nic_iter += sim_ps_nic_total(&net);
        for (int i = 0; i < W; i++) {
            /* The worker's interface: its NIC between machines, the local link (TF's gRPC over
             * loopback) inside one. */
            if (intra) is.pnic[i] = is.pb[i], is.qnic[i] = is.qb[i];
            if (is.pb[i] > 0) is.P[i] += 2 * lat;
            if (is.qb[i] > 0) is.Q[i] += 2 * lat;
            per_iter_bytes += is.pb[i] + is.qb[i];
        }
        /* The PS apply the aggregated gradient: read it, read and write the weights and the
         * optimizer slots; on the host CPU, or on a GPU when the shards live there. */
        for (int p = 0; p < NP; p++) {
            double b = (3.0 + 2.0 * w->slots) * shard[p];
            double t = s->network == DP_NET_NVLINK ? b / (dev.bw * cst.eff_mem)
                                                   : b / BYTES_PER_MS(cst.ps_host_gbps);
            if (t > apply) apply = t;
        }
        barrier = 2 * lat;
        is.lat2 = 2 * lat;
    }

    /* Memory footprint of one worker. */
    sim_footprint(w, s, &cst, shard, NP, &is.act_bytes, &is.base_bytes);
    out->memory_gb = (is.base_bytes + is.act_bytes) / 1e9;
    out->oom = !isnan(dev.memory_gb) && out->memory_gb > dev.memory_gb;

    /* Iterations: enough to fill min_run_ms of trace, at least opts.iterations. */
    double est = 0;
    struct timeline tl;
    if (ar) {
        is.n_iter = 1;
        if (!(is.ar_start = calloc((size_t)is.n_buckets + 1, sizeof(double))) ||
            !(is.ar_end = calloc((size_t)is.n_buckets + 1, sizeof(double))) ||
            !(is.jit = malloc((size_t)W * sizeof(double)))) {
            st = DP_ERR_NOMEM;
            goto fail;
        }
        for (int i = 0; i < W; i++) is.jit[i] = 1;
        est = allreduce_iteration(&is, 0, is.jit) + barrier;
        free(is.ar_start), free(is.ar_end), free(is.jit);
        is.ar_start = is.ar_end = is.jit = NULL;
    } else {
        for (int i = 0; i < W; i++) {
            sim_timeline(&is, i, 0, 1.0, &tl);
            if (tl.end > est) est = tl.end;
        }
        est += apply + barrier;
    }
    /* Absurd GPU figures or batches make the iteration time overflow or vanish; every count
     * below divides by it. */
    if (!(est > 0 && est < 1e15)) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: graph %s: one iteration would take %g ms on GPU %s; cannot "
                          "simulate that (check the batch and the GPU's figures)",
                          s->id, w->name, est, gpu->name);
        goto fail;
    }
    if (!(opts.sample_ms > 0)) {
        opts.sample_ms = est / 50;
        if (opts.sample_ms < 1) opts.sample_ms = 1;
        if (opts.sample_ms > 100) opts.sample_ms = 100;
    }
    if (!(opts.min_run_ms > 0)) opts.min_run_ms = 200 * opts.sample_ms;
    double want = ceil(opts.min_run_ms / est);
    int n_iter = want > SIM_MAX_ITERATIONS ? SIM_MAX_ITERATIONS : (int)want;
    if (n_iter < opts.iterations)
        n_iter = opts.iterations > SIM_MAX_ITERATIONS ? SIM_MAX_ITERATIONS : opts.iterations;
    is.n_iter = n_iter;
    size_t nb = (size_t)n_iter * (is.n_buckets ? is.n_buckets : 1);
    if (!(is.jit = malloc((size_t)n_iter * W * sizeof(double))) ||
        !(is.T = malloc(((size_t)n_iter + 1) * sizeof(double))) ||
        (ar && (!(is.ar_start = calloc(nb, sizeof(double))) ||
                !(is.ar_end = calloc(nb, sizeof(double)))))) {
        st = DP_ERR_NOMEM;
        goto fail;
    }
    uint64_t rng = opts.seed ^ 0x5DEECE66Dull;
    for (size_t i = 0; i < (size_t)n_iter * W; i++)
        is.jit[i] = exp(cst.jitter * normal01(&rng) - 0.5 * cst.jitter * cst.jitter);
    is.T[0] = 0;
    double sum_compute0 = 0, sum_wait0 = 0;
    for (int q = 0; q < n_iter; q++) {
        const double *jit = &is.jit[(size_t)q * W];
        double slow = 0;
        if (ar) slow = allreduce_iteration(&is, q, jit);
        else
            for (int i = 0; i < W; i++) {
                sim_timeline(&is, i, q, jit[i], &tl);
                if (tl.end > slow) slow = tl.end;
            }
        sim_timeline(&is, 0, q, jit[0], &tl);
        sum_compute0 += jit[0] * (is.fw.total + is.bw.total);
        sum_wait0 += slow - tl.end;
        is.T[q + 1] = is.T[q] + slow + (ar ? 0 : apply) + barrier;
    }
    double total = is.T[n_iter];
    out->iteration_ms = total / n_iter;
    out->throughput = (double)w->batch * W / (out->iteration_ms / 1000.0);
    out->compute_ms = sum_compute0 / n_iter;
    out->wait_ms = sum_wait0 / n_iter;
    for (int i = 0; i < W; i++) {
        if (is.P[i] > out->pull_ms) out->pull_ms = is.P[i];
        if (is.Q[i] > out->push_ms) out->push_ms = is.Q[i];
        out->bytes_pulled += is.pb[i] * n_iter;
        out->bytes_pushed += is.qb[i] * n_iter;
    }
    out->apply_ms = apply;
    out->bytes_per_iter = per_iter_bytes;
    out->batch = w->batch;
    out->sample_ms = opts.sample_ms;
    out->n_iterations = n_iter;
    out->params = w->params;
    out->gflops_per_iter = w->gflops;
    /* Per PS: what it sent and received, from its own side of each flow. */
    for (int p = 0; !ar && p < NP; p++)
        for (int i = 0; i < W; i++)
            if (shard[p] > 0 && sim_ps_crosses(s, &net, i, p)) {
                out->bytes_sent_ps += shard[p] * n_iter;
                out->bytes_received_ps += shard[p] * n_iter;
            }
    out->link_tx_bytes = nic_iter * n_iter;
    out->link_rx_bytes = nic_iter * n_iter;

    if (opts.throughput_only) {
        st = DP_OK;
        goto fail;
    }
    double n_samples = floor(total / opts.sample_ms + 1e-9);
    if (!(n_samples * W <= SIM_MAX_SAMPLES)) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: graph %s: %d iterations of %.4g ms sampled every %.4g ms would "
                          "take %.3g trace samples over the workers (at most %.0f); raise the "
                          "sample interval or lower the batch",
                          s->id, w->name, n_iter, total / n_iter, opts.sample_ms, n_samples * W,
                          SIM_MAX_SAMPLES);
        goto fail;
    }
    if (n_samples < 2) { /* labels need two samples; zeros would pass for an answer */
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: graph %s: %d iterations of %.4g ms sampled every %.4g ms give "
                          "%.0f trace sample(s); lower the sample interval",
                          s->id, w->name, n_iter, total / n_iter, opts.sample_ms, n_samples);
        goto fail;
    }
    /* Traces of every worker; the labels and the mean utilisation are means over the workers. */
    struct dp_trace **tr = calloc((size_t)W, sizeof *tr);
    if (!tr) {
        st = DP_ERR_NOMEM;
        goto fail;
    }
    out->traces = tr;
    out->n_traces = W;
    for (int i = 0; i < W; i++) {
        double busy, lab[DP_N_OUTPUTS];
        if (!(tr[i] = dp_trace_init("simulated"))) {
            st = DP_ERR_NOMEM;
            goto fail;
        }
        if ((st = sim_sample_worker(&is, i, opts.sample_ms, (int)n_samples, tr[i], &busy, err)))
            goto fail;
        out->mean_gpu_util += (total > 0 ? 100.0 * busy / total : 0) / W;
        dp_trace_labels(tr[i], opts.threshold, lab, NULL);
        for (int l = 0; l < DP_N_OUTPUTS; l++) out->labels[l] += lab[l] / W;
        if (!opts.want_traces) { /* only the labels are wanted: hold one trace at a time */
            dp_trace_free(tr[i]);
            tr[i] = NULL;
        }
    }
    if (!opts.want_traces) dp_sim_result_free(out);
    st = DP_OK;
fail:
    if (st) {
        if (st == DP_ERR_NOMEM)
            dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory simulating %s", s->id, w->name);
        dp_sim_result_free(out);
    }
    sim_ps_free(&net);
    iter_state_free(&is);
    free(shard);
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
