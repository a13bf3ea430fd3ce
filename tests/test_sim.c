/* Over 800 lines on purpose: one hand-built graph serves every case below.
 * test_sim.c: the training simulator on a hand-built two-layer training graph: bytes are
 * conserved (pushed = received by the PS, sent into the network = received from it), adding
 * workers behind one PS never shortens a NIC-bound iteration, the same seed gives the same run,
 * a huge batch is flagged out of memory, the traces and labels are sane, absurd options fail
 * with a reason, all-reduce moves 2(N-1)/N x the gradients per worker (and 2(M-1)/M per NIC
 * across machines), PyTorch's bucketed all-reduce overlaps the backward pass, no link carries
 * more than its line rate, and the device follows the catalog (K80 dies, estimated tensor
 * rates, TF32, NVLink), Winograd's gain falls with the channels (its transforms' traffic), an
 * fp16 GEMM of a width that is no whole number of 16-byte vectors runs at tc_unaligned of the
 * tensor-core rate (never below the CUDA cores'), a forward transposed convolution is forward
 * work; the activation-memory liveness sweep gives
 * the hand-computed peak on the MLP and on a tiny graph that exercises aliases, in-place ops
 * and batch-norm statistics, whatever the order its nodes were added in, and breaks a cycle. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dp/settings.h"
#include "dp/sim.h"
#include "dp/systems.h"
#include "sim/sim_impl.h"
#include "test.h"

static const char *GPU_DEV = "/job:worker/replica:0/task:0/device:GPU:0";
static const char *PS_DEV = "/job:ps/replica:0/task:0/device:CPU:0";

static int add(struct dp_graph *g, const char *name, const char *op, const char *dev, int nd,
               const int64_t *dims, const int *in, int n_in) {
    int idx = -1;
    struct dp_error err;
    if (dp_graph_add_node(g, name, op, dev, nd, dims, DP_DTYPE_F32, &idx, &err) != DP_OK)
        return -1;
    for (int i = 0; i < n_in; i++) dp_graph_add_input(g, idx, in[i], false, &err);
    return idx;
}

/* x[B,1024] -> MatMul w1[1024,h] -> Relu -> MatMul w2[h,10] -> loss, gradients, SGD updates. */
static struct dp_graph *mlp(int64_t hidden) {
    struct dp_graph *g = dp_graph_init("mlp_test");
    dp_graph_set_batch(g, 32, "test");
    int64_t dx[2] = {DP_DIM_BATCH, 1024}, dw1[2] = {1024, hidden}, dh[2] = {DP_DIM_BATCH, hidden},
            dw2[2] = {hidden, 10}, dy[2] = {DP_DIM_BATCH, 10}, ds[1] = {1};
    int x = add(g, "IteratorGetNext", "IteratorGetNext", "/job:worker/task:0/device:CPU:0", 2,
                dx, NULL, 0);
    int w1 = add(g, "w1", "VariableV2", PS_DEV, 2, dw1, NULL, 0);
    int w2 = add(g, "w2", "VariableV2", PS_DEV, 2, dw2, NULL, 0);
    dp_graph_set_cost(g, w1, -1, -1, 1024 * hidden);
    dp_graph_set_cost(g, w2, -1, -1, hidden * 10);
    int r1 = add(g, "w1/read", "Identity", GPU_DEV, 2, dw1, &w1, 1);
    int r2 = add(g, "w2/read", "Identity", GPU_DEV, 2, dw2, &w2, 1);
    int in1[2] = {x, r1};
    int m1 = add(g, "dense1/MatMul", "MatMul", GPU_DEV, 2, dh, in1, 2);
    int a1 = add(g, "dense1/Relu", "Relu", GPU_DEV, 2, dh, &m1, 1);
    int in2[2] = {a1, r2};
    int m2 = add(g, "dense2/MatMul", "MatMul", GPU_DEV, 2, dy, in2, 2);
    int loss = add(g, "loss", "Mean", GPU_DEV, 1, ds, &m2, 1);
    int gy = add(g, "gradients/loss_grad", "Tile", GPU_DEV, 2, dy, &loss, 1);
    int gi1[2] = {gy, r2};
    int ga1 = add(g, "gradients/dense2/MatMul_grad/MatMul", "MatMul", GPU_DEV, 2, dh, gi1, 2);
    int gi2[2] = {a1, gy};
    int gw2 = add(g, "gradients/dense2/MatMul_grad/MatMul_1", "MatMul", GPU_DEV, 2, dw2, gi2, 2);
    int gr[2] = {ga1, a1};
    int gm1 = add(g, "gradients/dense1/Relu_grad/ReluGrad", "ReluGrad", GPU_DEV, 2, dh, gr, 2);
    int gi3[2] = {x, gm1};
    int gw1 = add(g, "gradients/dense1/MatMul_grad/MatMul_1", "MatMul", GPU_DEV, 2, dw1, gi3, 2);
    int u1[2] = {w1, gw1}, u2[2] = {w2, gw2};
    add(g, "update_w1", "ApplyGradientDescent", PS_DEV, 2, dw1, u1, 2);
    add(g, "update_w2", "ApplyGradientDescent", PS_DEV, 2, dw2, u2, 2);
    return g;
}

static struct dp_gpu v100(void) {
    struct dp_gpu gpu;
    memset(&gpu, 0, sizeof gpu);
    strcpy(gpu.name, "V100-PCIe-16GB");
    gpu.fp32_tflops = 14;
    gpu.fp16_tflops = 112;
    gpu.memory_gb = 16;
    gpu.bandwidth_gbps = 900;
    return gpu;
}

static void test_conservation(struct dp_graph *g) {
    struct dp_gpu gpu = v100();
    struct dp_error err = {0};
    const enum dp_network nets[3] = {DP_NET_PCIE, DP_NET_1GBE, DP_NET_100GBE};
    const enum dp_placement pl[3] = {DP_PLACE_HOMO, DP_PLACE_HETERO, DP_PLACE_HOMO};
    for (int i = 0; i < 3; i++) {
        struct dp_setting s;
        CHECK(dp_setting_make(gpu.name, 4, 2, nets[i], 0, pl[i], DP_PREC_FP32, &s, &err) ==
              DP_OK);
        struct dp_sim_opts o;
        dp_sim_opts_default(&o);
        o.min_run_ms = 2000;
        struct dp_sim_result r;
        CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
        CHECK(r.bytes_pushed > 0);
        CHECK_NEAR(r.bytes_pushed, r.bytes_received_ps, 1e-6 * r.bytes_pushed);
        CHECK_NEAR(r.bytes_pulled, r.bytes_sent_ps, 1e-6 * r.bytes_pulled);
        CHECK_NEAR(r.link_tx_bytes, r.link_rx_bytes, 1e-6 * (r.link_tx_bytes + 1));
        if (nets[i] == DP_NET_1GBE) CHECK(r.link_tx_bytes > 0); /* hetero: all cross NICs */
        if (nets[i] == DP_NET_PCIE) CHECK(r.link_tx_bytes == 0);
        /* Per iteration, each worker pulls and pushes every parameter once (fp32). */
        CHECK_NEAR(r.bytes_per_iter, 2.0 * 4 * r.params * 4, 1e-6 * r.bytes_per_iter);
        dp_sim_result_free(&r);
    }
}

static void test_nic_bound(struct dp_graph *g) {
    struct dp_gpu gpu = v100();
    struct dp_error err = {0};
    double prev = 0;
    for (int w = 1; w <= 8; w++) {
        struct dp_setting s;
        CHECK(dp_setting_make(gpu.name, w, 1, DP_NET_1GBE, 0, DP_PLACE_HETERO, DP_PREC_FP32, &s,
                              &err) == DP_OK);
        struct dp_sim_opts o;
        dp_sim_opts_default(&o);
        o.min_run_ms = 1;
        o.iterations = 5;
        struct dp_sim_result r;
        CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
        CHECK(r.iteration_ms >= prev);
        if (w == 1) CHECK(r.pull_ms > r.compute_ms); /* NIC-bound indeed */
        prev = r.iteration_ms;
        dp_sim_result_free(&r);
    }
    /* The same with the PS co-located (homo): still never shorter. */
    prev = 0;
    for (int w = 2; w <= 8; w += 2) {
        struct dp_setting s;
        CHECK(dp_setting_make(gpu.name, w, 1, DP_NET_10GBE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                              &err) == DP_OK);
        struct dp_sim_opts o;
        dp_sim_opts_default(&o);
        o.min_run_ms = 1;
        o.iterations = 5;
        struct dp_sim_result r;
        CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
        CHECK(r.iteration_ms >= prev);
        prev = r.iteration_ms;
        dp_sim_result_free(&r);
    }
}

static void test_determinism(struct dp_graph *g) {
    struct dp_gpu gpu = v100();
    struct dp_error err = {0};
    struct dp_setting s;
    CHECK(dp_setting_make(gpu.name, 4, 2, DP_NET_40GBE, 0, DP_PLACE_HETERO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.seed = 7;
    o.batch = 4096; /* compute matters: jitter shows */
    o.want_traces = true;
    struct dp_sim_result a, b, c;
    CHECK(dp_simulate(g, &s, &gpu, &o, &a, &err) == DP_OK);
    CHECK(dp_simulate(g, &s, &gpu, &o, &b, &err) == DP_OK);
    o.seed = 8;
    CHECK(dp_simulate(g, &s, &gpu, &o, &c, &err) == DP_OK);
    CHECK(a.iteration_ms == b.iteration_ms);
    CHECK(!memcmp(a.labels, b.labels, sizeof a.labels));
    CHECK(a.compute_ms != c.compute_ms); /* jitter depends on the seed */
    CHECK(a.n_traces == 4);
    CHECK(!strcmp(a.traces[0]->source, "simulated"));
    CHECK(a.traces[0]->s[DP_SERIES_GPU_UTIL].n >= 199);
    for (int i = 0; i < DP_N_OUTPUTS; i++) CHECK(isfinite(a.labels[i]) && a.labels[i] >= 0);
    CHECK(a.labels[5] > 0 && a.labels[5] <= 100); /* gpu_util peak, % */
    CHECK(a.labels[8] > 0);                       /* net_rx peak, MB/s */
    CHECK(a.labels[8] <= 5000 * 0.7 + 1e-6);      /* never above the 40GbE line rate x eff */
    CHECK(a.mean_gpu_util > 0 && a.mean_gpu_util <= 100);
    CHECK(a.throughput > 0 && fabs(a.throughput - 4.0 * 4096 / (a.iteration_ms / 1000)) < 1e-6);
    dp_sim_result_free(&a);
    dp_sim_result_free(&b);
    dp_sim_result_free(&c);
}

static void test_memory(struct dp_graph *g) {
    struct dp_gpu gpu = v100();
    struct dp_error err = {0};
    struct dp_setting s;
    CHECK(dp_setting_make(gpu.name, 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.min_run_ms = 1;
    o.iterations = 2;
    struct dp_sim_result r;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    CHECK(!r.oom && r.memory_gb > 0.4 && r.memory_gb < 16);
    double small = r.memory_gb;
    dp_sim_result_free(&r);
    o.batch = 4000000;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    CHECK(r.oom && r.memory_gb > 16 && r.memory_gb > small);
    dp_sim_result_free(&r);
    /* Mixed precision: less activation memory, faster matmuls. */
    o.batch = 256;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    double fp32_ms = r.compute_ms, fp32_gb = r.memory_gb;
    dp_sim_result_free(&r);
    s.precision = DP_PREC_MIXED;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    CHECK(r.compute_ms < fp32_ms);
    CHECK(r.memory_gb < fp32_gb);
    dp_sim_result_free(&r);
}

static void test_errors(struct dp_graph *g) {
    struct dp_gpu gpu = v100();
    struct dp_error err = {0};
    struct dp_setting s;
    CHECK(dp_setting_make(gpu.name, 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    struct dp_sim_result r;
    gpu.fp32_tflops = NAN;
    CHECK(dp_simulate(g, &s, &gpu, NULL, &r, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "V100-PCIe-16GB");
    gpu = v100();
    struct dp_graph *empty = dp_graph_init("empty");
    CHECK(dp_simulate(empty, &s, &gpu, NULL, &r, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "no GPU op");
    dp_graph_free(empty);
    s.workers = 0;
    CHECK(dp_simulate(g, &s, &gpu, NULL, &r, &err) == DP_ERR_INVALID);
}

/* The catalog's GPU called name (the shipped catalog), copied; fails the test when absent. */
static bool catalog_gpu(const char *name, struct dp_gpu *out) {
    struct dp_gpu_catalog *c = NULL;
    struct dp_error err = {0};
    if (dp_gpu_catalog_load("assets/gpus.json", &c, &err) != DP_OK) return false;
    const struct dp_gpu *g = dp_gpu_find(c, name);
    if (g) *out = *g;
    dp_gpu_catalog_free(c);
    CHECK(g != NULL);
    return g != NULL;
}

static struct dp_setting ar_setting(const char *gpu, int workers, enum dp_network net,
                                    int machines, enum dp_framework fw) {
    struct dp_setting s;
    struct dp_error err = {0};
    memset(&s, 0, sizeof s);
    snprintf(s.gpu, sizeof s.gpu, "%s", gpu);
    s.sync = DP_SYNC_ALLREDUCE;
    s.workers = workers;
    s.network = net;
    s.machines = machines;
    s.framework = fw;
    CHECK(dp_setting_finish(&s, &err) == DP_OK);
    return s;
}

/* NCCL all-reduce: inside one machine each worker sends 2(N-1)/N x its gradient bytes (a
 * ring); across machines the ring runs through all N workers, one hop in 8 leaving each
 * machine, so each machine's NIC sends 2(N-1)/N x them and the rest stays inside: 2(N-1) x the
 * bytes in all either way, and only the NICs' cross the network. */
static void test_allreduce_traffic(struct dp_graph *g) {
    struct dp_gpu gpu;
    struct dp_error err = {0};
    if (!catalog_gpu("A100-40GB-SXM", &gpu)) return;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.throughput_only = true;
    for (int n = 1; n <= 8; n *= 2) {
        struct dp_setting s = ar_setting(gpu.name, n, DP_NET_NVLINK, 1, DP_FW_PYTORCH);
        struct dp_sim_result r;
        CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
        CHECK_NEAR(r.grad_bytes, 4.0 * r.params, 1e-9);
        CHECK_NEAR(r.bytes_per_iter, n * 2.0 * (n - 1) / n * r.grad_bytes, 1e-6 * r.grad_bytes);
        CHECK(r.link_tx_bytes == 0 && r.bytes_pushed == 0 && r.bytes_pulled == 0);
        CHECK(n == 1 ? r.allreduce_ms == 0 : r.allreduce_ms > 0);
        dp_sim_result_free(&r);
    }
    /* 16 workers, 8 a machine, over 100GbE: one ring through both machines */
    struct dp_setting s = ar_setting(gpu.name, 16, DP_NET_100GBE, 0, DP_FW_PYTORCH);
    s.ar_algo = DP_AR_RING;
    CHECK(s.machines == 2);
    struct dp_sim_result r;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    double ring = 2.0 * 15 / 16 * r.grad_bytes, intra = ring * 7 / 8, nic = ring;
    CHECK_NEAR(r.bytes_per_iter, 16 * intra + 2 * nic, 1e-6 * r.grad_bytes);
    CHECK_NEAR(r.bytes_per_iter, 2.0 * 15 * r.grad_bytes, 1e-6 * r.grad_bytes);
    CHECK_NEAR(r.link_tx_bytes, 2 * nic * r.n_iterations, 1e-6 * r.grad_bytes * r.n_iterations);
    CHECK_NEAR(r.link_tx_bytes, r.link_rx_bytes, 1e-6 * r.link_tx_bytes);
    dp_sim_result_free(&r);
    /* TensorFlow's mixed precision all-reduces fp16 gradients (compact transfer) */
    s = ar_setting(gpu.name, 4, DP_NET_NVLINK, 1, DP_FW_TENSORFLOW);
    s.precision = DP_PREC_MIXED;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    CHECK_NEAR(r.grad_bytes, 2.0 * r.params, 1e-9);
    dp_sim_result_free(&r);
}

/* dp_sim_allreduce_ms by hand: a ring of 8 over the A100's NVLink (half its figure each way),
 * then 16 workers on two machines (one ring through both, its bus bandwidth the machine's one
 * NIC over 100GbE; 2 of its 30 steps cross machines), at the constants' achieved share of
 * each link; one worker exchanges nothing, and a GPU whose speeds are unknown still has its
 * links. */
static void test_allreduce_closed_form(void) {
    struct dp_gpu gpu;
    if (!catalog_gpu("A100-40GB-SXM", &gpu)) return;
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    double B = 1e8, nvl = gpu.nvlink_gbps / 2 * 1e6 * k.net_eff;
    double lat_nvl = dp_network_latency_us(DP_NET_NVLINK) / 1000;
    struct dp_setting s = ar_setting(gpu.name, 8, DP_NET_NVLINK, 1, DP_FW_PYTORCH);
    double ring = 2.0 * 7 / 8 * B / nvl + 2.0 * 7 * lat_nvl;
    CHECK_NEAR(dp_sim_allreduce_ms(&s, &gpu, &k, B), ring, 1e-12 * ring);
    s = ar_setting(gpu.name, 16, DP_NET_100GBE, 0, DP_FW_PYTORCH);
    double nic = dp_network_bandwidth_gbps(DP_NET_100GBE) * 1e6 * k.net_eff;
    double two = 2.0 * 15 / 16 * B / nic + 28 * lat_nvl +
                 2.0 * dp_network_latency_us(DP_NET_100GBE) / 1000;
    CHECK_NEAR(dp_sim_allreduce_ms(&s, &gpu, &k, B), two, 1e-12 * two);
    gpu.fp32_tflops = gpu.bandwidth_gbps = NAN;
    CHECK_NEAR(dp_sim_allreduce_ms(&s, &gpu, &k, B), two, 1e-12 * two);
    s = ar_setting(gpu.name, 1, DP_NET_NVLINK, 1, DP_FW_PYTORCH);
    CHECK(dp_sim_allreduce_ms(&s, &gpu, &k, B) == 0);
}

/* PyTorch DDP overlaps bucketed all-reduce with the backward pass; TensorFlow's replicated mode
 * reduces after it: on a slow link the same job takes longer under TensorFlow's schedule
 * (compute alike: the host overheads set equal). */
static void test_allreduce_overlap(struct dp_graph *g) {
    struct dp_gpu gpu;
    struct dp_error err = {0};
    if (!catalog_gpu("RTX2080Ti", &gpu)) return;
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    k.host_pt_us = k.host_tf_us;
    k.fuse_pt = k.fuse_tf;
    k.jitter = 0;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.constants = &k;
    o.batch = 4096;
    o.min_run_ms = 1;
    o.iterations = 2;
    double t[2];
    for (int f = 0; f < 2; f++) {
        struct dp_setting s = ar_setting(gpu.name, 8, DP_NET_PCIE, 1, f ? DP_FW_PYTORCH
                                                                         : DP_FW_TENSORFLOW);
        struct dp_sim_result r;
        CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
        t[f] = r.iteration_ms;
        CHECK(r.allreduce_ms > 0);
        if (f == 0) CHECK(r.iteration_ms >= r.compute_ms + r.allreduce_ms - 1e-9);
        dp_sim_result_free(&r);
    }
    CHECK(t[1] < t[0]);
}

/* No link carries more than its line rate x net_eff: a worker's NIC series shows what crosses
 * its NIC (a co-located PS's traffic stays inside the machine, where it once read 5,746 MB/s
 * on a 10GbE setting), and a PS NIC serving many workers shares its rate among them. */
static void test_line_rate(struct dp_graph *g) {
    struct dp_gpu gpu = v100();
    struct dp_error err = {0};
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    const enum dp_network nets[3] = {DP_NET_10GBE, DP_NET_1GBE, DP_NET_PCIE};
    const enum dp_placement pl[3] = {DP_PLACE_HOMO, DP_PLACE_HETERO, DP_PLACE_HOMO};
    for (int i = 0; i < 3; i++) {
        struct dp_setting s;
        CHECK(dp_setting_make(gpu.name, 4, 2, nets[i], 0, pl[i], DP_PREC_FP32, &s, &err) ==
              DP_OK);
        struct dp_sim_opts o;
        dp_sim_opts_default(&o);
        o.want_traces = true;
        o.batch = 64;
        struct dp_sim_result r;
        CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
        double cap = (nets[i] == DP_NET_PCIE ? 15.75 : dp_network_bandwidth_gbps(nets[i])) *
                     k.net_eff * 1000; /* MB/s */
        double peak = 0;
        for (int w = 0; w < r.n_traces; w++)
            for (int kind = DP_SERIES_NET_RX; kind <= DP_SERIES_NET_TX; kind++)
                for (size_t j = 0; j < r.traces[w]->s[kind].n; j++)
                    if (r.traces[w]->s[kind].v[j] > peak) peak = r.traces[w]->s[kind].v[j];
        CHECK(peak > 0);
        CHECK(peak <= cap * (1 + 1e-9));
        CHECK(r.labels[8] <= cap * (1 + 1e-9) && r.labels[11] <= cap * (1 + 1e-9));
        dp_sim_result_free(&r);
    }
}

/* The device as the catalog describes it: a K80 worker is one of the board's two GPUs, at the
 * base clock, Kepler's issue rate and ECC's share of the bandwidth (Pascal and later keep their
 * boost and bandwidth figures); a GPU without a tensor figure gets an estimate the result
 * names; fp32 on Ampere runs on TF32 tensor cores (faster than the FP32 CUDA cores could);
 * NVLink on a GPU without it is refused. */
static void test_devices(struct dp_graph *g) {
    struct dp_gpu k80, ti, a100;
    struct dp_error err = {0};
    if (!catalog_gpu("K80", &k80) || !catalog_gpu("RTX2080Ti", &ti) ||
        !catalog_gpu("A100-PCIe-40GB", &a100))
        return;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.min_run_ms = 1;
    o.iterations = 2;
    o.batch = 4096;
    struct dp_setting s = ar_setting(k80.name, 1, DP_NET_PCIE, 1, DP_FW_TENSORFLOW);
    struct dp_sim_result r;
    CHECK(dp_simulate(g, &s, &k80, &o, &r, &err) == DP_OK);
    CHECK_CONTAINS(r.notes, "one of the board's 2 devices");
    CHECK_CONTAINS(r.notes, "Kepler runs at its base clock: 5.6 of the boost 8.74 TFLOPS");
    CHECK_CONTAINS(r.notes, "Kepler issues to 74% of its FP32 lanes");
    CHECK_CONTAINS(r.notes, "Kepler runs with ECC on GDDR5: 80% of its memory bandwidth");
    double k80_ms = r.compute_ms;
    dp_sim_result_free(&r);
    /* ECC on GDDR5 takes a fifth of a Kepler die's 240 GB/s (HBM2's, Pascal on, is free) */
    struct sim_device dev;
    CHECK(sim_device_init(&k80, &dev, &err) == DP_OK);
    CHECK_NEAR(dev.bw, BYTES_PER_MS(240.0) * 0.8, 1e-6 * dev.bw);
    /* the boost figure alone: faster; the same base figure on a Pascal GPU is not used */
    struct dp_gpu boost = k80;
    boost.fp32_base_tflops = NAN;
    CHECK(dp_simulate(g, &s, &boost, &o, &r, &err) == DP_OK);
    CHECK(r.compute_ms < k80_ms);
    CHECK(!strstr(r.notes, "base clock"));
    dp_sim_result_free(&r);
    struct dp_gpu pascal = boost;
    strcpy(pascal.architecture, "Pascal (GP100)");
    pascal.fp32_base_tflops = 5.6;
    CHECK(dp_simulate(g, &s, &pascal, &o, &r, &err) == DP_OK);
    CHECK(!strstr(r.notes, "base clock") && !strstr(r.notes, "issues to") &&
          !strstr(r.notes, "ECC"));
    dp_sim_result_free(&r);
    s = ar_setting(ti.name, 1, DP_NET_PCIE, 1, DP_FW_PYTORCH);
    s.precision = DP_PREC_MIXED;
    CHECK(dp_simulate(g, &s, &ti, &o, &r, &err) == DP_OK);
    CHECK_CONTAINS(r.notes, "tensor rate unknown: 108 TFLOPS estimated (Turing: 8x FP32)");
    dp_sim_result_free(&r);
    /* TF32: the same GPU with its tensor figure removed runs fp32 on CUDA cores: slower */
    s = ar_setting(a100.name, 1, DP_NET_PCIE, 1, DP_FW_PYTORCH);
    CHECK(dp_simulate(g, &s, &a100, &o, &r, &err) == DP_OK);
    double tf32 = r.compute_ms;
    dp_sim_result_free(&r);
    struct dp_gpu cuda_only = a100;
    strcpy(cuda_only.architecture, "unknown");
    CHECK(dp_simulate(g, &s, &cuda_only, &o, &r, &err) == DP_OK);
    CHECK(r.compute_ms > 1.5 * tf32);
    CHECK_CONTAINS(r.notes, "architecture generation unknown");
    dp_sim_result_free(&r);
    CHECK(dp_setting_make(ti.name, 2, 1, DP_NET_NVLINK, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    struct dp_gpu no_nvl = ti;
    no_nvl.nvlink_gbps = NAN;
    CHECK(dp_simulate(g, &s, &no_nvl, &o, &r, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "has no NVLink in the catalog");
    /* the memory footprint needs no speed figure, and equals the simulation's */
    CHECK(dp_setting_make(ti.name, 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s, &err) ==
          DP_OK);
    CHECK(dp_simulate(g, &s, &ti, &o, &r, &err) == DP_OK);
    struct dp_sim_workload *wl = NULL;
    CHECK(dp_sim_workload_init(g, o.batch, &wl, &err) == DP_OK);
    struct dp_gpu slow = ti;
    slow.fp32_tflops = NAN;
    double gb = 0;
    bool oom = false;
    CHECK(wl && dp_sim_memory(wl, &s, &slow, NULL, &gb, &oom, &err) == DP_OK);
    CHECK_NEAR(gb, r.memory_gb, 1e-12);
    CHECK(oom == r.oom);
    dp_sim_workload_free(wl);
    dp_sim_result_free(&r);
}

/* A 3-D convolution is costed as one: its reduction is the filter's window times cin (3 x 7 x
 * 7 x 3 for r3d_18's stem, whose input has 3 channels), so under mixed precision it runs on the
 * tensor cores, its 3 channels padded to 8 (3/8 of their rate): about 1.6x the FP32 CUDA cores
 * on a V100 (read as a matmul, its reduction was the input's 3 channels: too narrow for tensor
 * cores, no faster than fp32). */
static void test_conv3d(void) {
    struct dp_graph *g = dp_graph_init("conv3d_test");
    dp_graph_set_batch(g, 8, "test");
    int64_t dx[5] = {DP_DIM_BATCH, 16, 112, 112, 3}, df[5] = {3, 7, 7, 3, 64},
            dy[5] = {DP_DIM_BATCH, 16, 56, 56, 64};
    int x = add(g, "IteratorGetNext", "IteratorGetNext", "/job:worker/task:0/device:CPU:0", 5,
                dx, NULL, 0);
    int f = add(g, "stem/kernel", "VariableV2", PS_DEV, 5, df, NULL, 0);
    dp_graph_set_cost(g, f, -1, -1, 3 * 7 * 7 * 3 * 64);
    int r = add(g, "stem/kernel/read", "Identity", GPU_DEV, 5, df, &f, 1);
    int in[2] = {x, r};
    add(g, "stem/Conv3D", "Conv3D", GPU_DEV, 5, dy, in, 2);
    struct dp_gpu gpu = v100();
    strcpy(gpu.architecture, "Volta (GV100)");
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.min_run_ms = 1;
    o.iterations = 2;
    o.sample_ms = 0.05;
    struct dp_setting s = ar_setting(gpu.name, 1, DP_NET_PCIE, 1, DP_FW_PYTORCH);
    struct dp_sim_result r32, r16;
    struct dp_error err = {0};
    CHECK(dp_simulate(g, &s, &gpu, &o, &r32, &err) == DP_OK);
    s.precision = DP_PREC_MIXED;
    CHECK(dp_setting_finish(&s, &err) == DP_OK);
    CHECK(dp_simulate(g, &s, &gpu, &o, &r16, &err) == DP_OK);
    CHECK(r16.compute_ms < 0.75 * r32.compute_ms);
    dp_sim_result_free(&r32);
    dp_sim_result_free(&r16);
    dp_graph_free(g);
}

/* The compute time of graph g (consumed: freed here) on one V100 (Volta) worker over PCIe under
 * framework fw (XLA: xla), in precision prec, with constants k; NAN when the run fails. */
static double v100_setting_ms(struct dp_graph *g, const struct dp_sim_constants *k,
                              enum dp_precision prec, enum dp_framework fw, bool xla) {
    struct dp_gpu gpu = v100();
    strcpy(gpu.architecture, "Volta (GV100)");
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.min_run_ms = 1;
    o.iterations = 2;
    o.throughput_only = true;
    o.constants = k;
    struct dp_setting s = ar_setting(gpu.name, 1, DP_NET_PCIE, 1, fw);
    s.precision = prec;
    s.xla = xla;
    struct dp_sim_result res;
    struct dp_error err = {0};
    double ms = NAN;
    if (dp_setting_finish(&s, &err) == DP_OK && dp_simulate(g, &s, &gpu, &o, &res, &err) == DP_OK) {
        ms = res.compute_ms;
        dp_sim_result_free(&res);
    }
    dp_graph_free(g);
    return ms;
}

/* v100_setting_ms under PyTorch. */
static double v100_compute_ms(struct dp_graph *g, const struct dp_sim_constants *k,
                              enum dp_precision prec) {
    return v100_setting_ms(g, k, prec, DP_FW_PYTORCH, false);
}

/* The compute time on a V100 (v100_compute_ms) of a graph of one op, "<scope>/<op>" of type op:
 * input [dx] times its weights [dw] (params elements, read through an Identity) gives [dy], at
 * batch B (dims of DP_DIM_BATCH). */
static double weighted_op_ms(const char *scope, const char *op, int rank, const int64_t *dx,
                             const int64_t *dw, const int64_t *dy, int64_t B, int64_t params,
                             const struct dp_sim_constants *k, enum dp_precision prec) {
    char name[64];
    struct dp_graph *g = dp_graph_init("one_op_test");
    dp_graph_set_batch(g, B, "test");
    int x = add(g, "IteratorGetNext", "IteratorGetNext", "/job:worker/task:0/device:CPU:0", rank,
                dx, NULL, 0);
    snprintf(name, sizeof name, "%s/kernel", scope);
    int w = add(g, name, "VariableV2", PS_DEV, rank, dw, NULL, 0);
    dp_graph_set_cost(g, w, -1, -1, params);
    snprintf(name, sizeof name, "%s/kernel/read", scope);
    int in[2] = {x, add(g, name, "Identity", GPU_DEV, rank, dw, &w, 1)};
    snprintf(name, sizeof name, "%s/%s", scope, op);
    add(g, name, op, GPU_DEV, rank, dy, in, 2);
    return v100_compute_ms(g, k, prec);
}

/* One forward 3x3 stride-1 convolution of cin to cout channels at hw x hw, fp32 on a V100, with
 * Winograd's speed-up w: its simulated compute time. */
static double conv3x3_ms(int64_t cin, int64_t cout, int64_t hw, double w) {
    int64_t dx[4] = {DP_DIM_BATCH, hw, hw, cin}, df[4] = {3, 3, cin, cout},
            dy[4] = {DP_DIM_BATCH, hw, hw, cout};
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    k.winograd = w;
    return weighted_op_ms("conv", "Conv2D", 4, dx, df, dy, 32, 9 * cin * cout, &k, DP_PREC_FP32);
}

/* cuDNN's Winograd writes and reads back its transformed tiles: a 3x3 convolution of many
 * channels gains most of the speed-up, one of few channels is bound by that traffic and gains
 * little; neither runs slower than the direct kernel (cuDNN would not pick Winograd then). */
static void test_winograd_traffic(void) {
    double wide1 = conv3x3_ms(256, 256, 28, 1), wide4 = conv3x3_ms(256, 256, 28, 4);
    double thin1 = conv3x3_ms(8, 8, 224, 1), thin4 = conv3x3_ms(8, 8, 224, 4);
    CHECK(wide1 / wide4 > 2.5);
    CHECK(thin1 / thin4 < 1.5);
    CHECK(thin4 <= thin1 && wide4 <= wide1);
}

/* One forward matmul [B, 1024] x [1024, n] at batch 4096 on a V100, in precision prec, with
 * tc_unaligned u: its simulated compute time. */
static double matmul_ms(int64_t n, enum dp_precision prec, double u) {
    int64_t dx[2] = {DP_DIM_BATCH, 1024}, dw[2] = {1024, n}, dy[2] = {DP_DIM_BATCH, n};
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    k.tc_unaligned = u;
    return weighted_op_ms("dense", "MatMul", 2, dx, dw, dy, 4096, 1024 * n, &k, prec);
}

/* cuBLAS pads no dimension: an fp16 GEMM whose output width is not a whole number of 16-byte
 * vectors (Transformer-XL's 267,735-word softmax) loads element by element and runs at
 * tc_unaligned of the tensor-core rate, never slower than on the CUDA cores; one width further
 * (a multiple of 8) it runs at the full rate. */
static void test_unaligned_gemm(void) {
    double aligned = matmul_ms(4096, DP_PREC_MIXED, 0.25);
    double odd = matmul_ms(4095, DP_PREC_MIXED, 0.25), odd_full = matmul_ms(4095, DP_PREC_MIXED, 1);
    double odd_cuda = matmul_ms(4095, DP_PREC_MIXED, 0.01), fp32 = matmul_ms(4095, DP_PREC_FP32, 1);
    CHECK(odd > 2 * aligned);
    CHECK_NEAR(odd_full / aligned, 1, 0.02);
    CHECK(odd_cuda <= fp32 * 1.001);
    CHECK(odd_cuda > odd);
}

/* A forward transposed convolution (ONNX's ConvTranspose: a Conv2DBackpropInput outside the
 * gradients scope) is forward work; the same op under "gradients/" is backward. */
static void test_conv_transpose_phase(void) {
    struct dp_graph *g = dp_graph_init("deconv_test");
    dp_graph_set_batch(g, 8, "test");
    int64_t dx[4] = {DP_DIM_BATCH, 16, 16, 64}, df[4] = {3, 3, 32, 64},
            dy[4] = {DP_DIM_BATCH, 32, 32, 32}, ds[1] = {4};
    int x = add(g, "IteratorGetNext", "IteratorGetNext", "/job:worker/task:0/device:CPU:0", 4,
                dx, NULL, 0);
    int f = add(g, "up/kernel", "VariableV2", PS_DEV, 4, df, NULL, 0);
    dp_graph_set_cost(g, f, -1, -1, 9 * 32 * 64);
    int r = add(g, "up/kernel/read", "Identity", GPU_DEV, 4, df, &f, 1);
    int sz = add(g, "up/output_shape", "Const", GPU_DEV, 1, ds, NULL, 0);
    int in[3] = {sz, r, x};
    int y = add(g, "up/conv2d_transpose", "Conv2DBackpropInput", GPU_DEV, 4, dy, in, 3);
    int gin[3] = {sz, r, y};
    add(g, "gradients/up/conv2d_transpose_grad/Conv2DBackpropInput", "Conv2DBackpropInput",
        GPU_DEV, 4, dy, gin, 3);
    struct dp_sim_workload *w = NULL;
    struct dp_error err = {0};
    CHECK(dp_sim_workload_init(g, 8, &w, &err) == DP_OK);
    if (w) {
        CHECK(w->n_ops == 2 && w->n_fw == 1);
        CHECK(!w->ops[0].back && w->ops[1].back);
    }
    dp_sim_workload_free(w);
    dp_graph_free(g);
}

/* Absurd inputs fail with a reason instead of exhausting memory or overflowing the sample count
 * (which used to give all-zero labels and a 0 % utilisation as if they were the answer). */
static void test_absurd(struct dp_graph *g) {
    struct dp_gpu gpu = v100();
    struct dp_error err = {0};
    struct dp_setting s;
    CHECK(dp_setting_make(gpu.name, 2, 1, DP_NET_1GBE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    struct dp_sim_result r;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.sample_ms = 0.01; /* 5000 long iterations at 10 us: billions of samples */
    o.iterations = 5000;
    o.batch = 4096;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "trace samples");
    dp_sim_opts_default(&o);
    o.sample_ms = 1e9; /* coarser than the whole run: no sample at all */
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "0 trace sample(s)");
    gpu.fp32_tflops = 1e-300; /* an iteration longer than any clock can count */
    gpu.bandwidth_gbps = 1e-300;
    CHECK(dp_simulate(g, &s, &gpu, NULL, &r, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "one iteration would take");
    /* More iterations than the documented 5000 are clamped, not allocated. */
    gpu = v100();
    dp_sim_opts_default(&o);
    o.iterations = 1 << 30;
    o.sample_ms = 100;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    CHECK(r.n_iterations == 5000);
    CHECK(r.n_traces == 0 && r.traces == NULL);
    dp_sim_result_free(&r);
}

/* The liveness sweep on mlp(h) at batch B, in units of 4B bytes (x = 1024, a hidden tensor
 * = h, a logit tensor = 10): the input batch lives from the start to the weight gradient of
 * dense1; the Relu takes over its MatMul's buffer and the ReluGrad its incoming gradient's; the
 * peak is at the dense2 input-gradient MatMul: x + the Relu output + the logits' gradient + its
 * own output = 1024 + 2h + 10 (a matmul takes no workspace: cuBLAS needs a few MB; only
 * convolutions add cuDNN's). */
static void test_liveness_mlp(struct dp_graph *g) {
    struct dp_error err = {0};
    double peak = -1;
    CHECK(dp_sim_activation_bytes(g, 32, &peak, &err) == DP_OK);
    CHECK_NEAR(peak, 4.0 * 32 * (1024 + 2 * 4096 + 10), 0.5);
    struct dp_graph *empty = dp_graph_init("empty");
    CHECK(dp_sim_activation_bytes(empty, 32, &peak, &err) == DP_OK && peak == 0);
    dp_graph_free(empty);
}

/* A tiny graph, every tensor [B, 100] (one unit = 400B bytes): x -> FusedBatchNormV3 -> Relu
 * (takes over the batch norm's buffer: the norm's gradient reads its statistics, not its
 * output) -> Reshape (an alias) -> Sigmoid (a new buffer: the Reshape is read again later) ->
 * Sum -> a gradient Mul(sigmoid, reshape) (takes over the sigmoid's buffer) -> the norm's
 * gradient (reads x). At most 3 units are alive at once (x, the Relu/Reshape buffer, the
 * Sigmoid/Mul buffer; then x, the Mul, the norm gradient); summing every output would give 7.
 * The result must not depend on the order the nodes were added in. */
static void test_liveness_rules(void) {
    static const struct {
        const char *name, *op;
        int n_in, in[3];
        bool scalar;
    } spec[] = {
        {"x", "Placeholder", 0, {0}, false},
        {"bn", "FusedBatchNormV3", 1, {0}, false},
        {"relu", "Relu", 1, {1}, false},
        {"flat", "Reshape", 1, {2}, false},
        {"sig", "Sigmoid", 1, {3}, false},
        {"loss", "Sum", 1, {4}, true},
        {"gradients/mul", "Mul", 2, {4, 3}, false},
        {"gradients/bn_grad", "FusedBatchNormGradV3", 3, {6, 0, 1}, false},
    };
    enum { N = sizeof spec / sizeof spec[0] };
    static const int orders[2][N] = {{0, 1, 2, 3, 4, 5, 6, 7}, {7, 5, 6, 3, 1, 4, 0, 2}};
    int64_t dims[2] = {DP_DIM_BATCH, 100}, one[1] = {1};
    for (int o = 0; o < 2; o++) {
        struct dp_graph *g = dp_graph_init("liveness");
        struct dp_error err = {0};
        int idx[N];
        for (int k = 0; k < N; k++) {
            int i = orders[o][k];
            CHECK(dp_graph_add_node(g, spec[i].name, spec[i].op, GPU_DEV, spec[i].scalar ? 1 : 2,
                                    spec[i].scalar ? one : dims, DP_DTYPE_F32, &idx[i],
                                    &err) == DP_OK);
        }
        for (int i = 0; i < N; i++)
            for (int k = 0; k < spec[i].n_in; k++)
                CHECK(dp_graph_add_input(g, idx[i], idx[spec[i].in[k]], false, &err) == DP_OK);
        double peak = -1;
        CHECK(dp_sim_activation_bytes(g, 10, &peak, &err) == DP_OK);
        CHECK_NEAR(peak, 3 * 400.0 * 10, 0.5);
        dp_graph_free(g);
    }
    /* A cycle (a while loop's back edge) is broken at its lowest node, not looped over: Merge
     * first, then NextIteration, which (element-wise, Merge's last reader) reuses its buffer. */
    struct dp_graph *g = dp_graph_init("cycle");
    struct dp_error err = {0};
    int a = -1, b = -1;
    CHECK(dp_graph_add_node(g, "merge", "Merge", GPU_DEV, 2, dims, DP_DTYPE_F32, &a, &err) ==
          DP_OK);
    CHECK(dp_graph_add_node(g, "next", "NextIteration", GPU_DEV, 2, dims, DP_DTYPE_F32, &b,
                            &err) == DP_OK);
    CHECK(dp_graph_add_input(g, a, b, false, &err) == DP_OK);
    CHECK(dp_graph_add_input(g, b, a, false, &err) == DP_OK);
    double peak = -1;
    CHECK(dp_sim_activation_bytes(g, 10, &peak, &err) == DP_OK);
    CHECK_NEAR(peak, 400.0 * 10, 0.5);
    dp_graph_free(g);
}

/* x[B,100] -> norm -> Relu -> Sum, the norm's statistics read by a per-channel Identity (its
 * moving average): norm "FusedBatchNormV3" or an element-wise op. */
static struct dp_graph *norm_relu(const char *norm) {
    struct dp_graph *g = dp_graph_init("norm_relu");
    dp_graph_set_batch(g, 1000, "test");
    int64_t dx[2] = {DP_DIM_BATCH, 100}, dc[1] = {100}, ds[1] = {1};
    int x = add(g, "IteratorGetNext", "IteratorGetNext", "/job:worker/task:0/device:CPU:0", 2,
                dx, NULL, 0);
    int bn = add(g, "bn/norm", norm, GPU_DEV, 2, dx, &x, 1);
    add(g, "bn/moving_mean", "Identity", GPU_DEV, 1, dc, &bn, 1);
    int relu = add(g, "relu", "Relu", GPU_DEV, 2, dx, &bn, 1);
    add(g, "loss", "Sum", GPU_DEV, 1, ds, &relu, 1);
    return g;
}

/* XLA auto-clustering expands a batch norm into a reduction and element-wise ops that fuse with
 * the Relu that reads it: the norm's output (B x 100 x 4 bytes) is neither written nor read
 * back, 2 x its bytes less over the memory bandwidth at eff_mem (gaps and host dispatch at 0:
 * the traffic alone); reading its statistics (the moving average) does not keep the output.
 * Without a batch norm XLA changes nothing here, and PyTorch ignores the switch. */
static void test_xla(void) {
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    k.gap_us = k.host_tf_us = k.host_pt_us = k.jitter = 0;
    enum dp_precision fp32 = DP_PREC_FP32;
    double plain = v100_setting_ms(norm_relu("FusedBatchNormV3"), &k, fp32, DP_FW_TENSORFLOW, 0);
    double xla = v100_setting_ms(norm_relu("FusedBatchNormV3"), &k, fp32, DP_FW_TENSORFLOW, 1);
    CHECK_NEAR(plain - xla, 2 * 1000 * 100 * 4.0 / (900e6 * k.eff_mem), 1e-9);
    CHECK(xla > 0);
    double sig = v100_setting_ms(norm_relu("Sigmoid"), &k, fp32, DP_FW_TENSORFLOW, 0);
    CHECK_NEAR(v100_setting_ms(norm_relu("Sigmoid"), &k, fp32, DP_FW_TENSORFLOW, 1), sig, 1e-12);
    double pt = v100_setting_ms(norm_relu("FusedBatchNormV3"), &k, fp32, DP_FW_PYTORCH, 0);
    CHECK_NEAR(v100_setting_ms(norm_relu("FusedBatchNormV3"), &k, fp32, DP_FW_PYTORCH, 1), pt,
               1e-12);
}


/* dp_sim_collective_ms by hand on a fabric of 2 machines x 4 GPUs: 100 GB/s and 1 us inside,
 * each GPU's share of the NICs 10 GB/s at 5 us across; a ring's bus bandwidth is the slower of
 * a GPU's link and its machine's NICs (4 x 10 = 40 GB/s); S = 1e8 bytes. */
static void test_collectives(void) {
    struct dp_sim_fabric f = {4, 2, 100, 1, 10, 5};
    double S = 1e8, B = 40e6; /* bytes per ms */
    double ring = 2.0 * 7 / 8 * S / B + (14 - 2) * 1e-3 + 2 * 5e-3;
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_RING, S, 8, 4), ring, 1e-9);
    double tree = 2 * S / (0.92 * B) + 2 * (3 * 1e-3 + 1 * 5e-3);
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_TREE, S, 8, 4), tree, 1e-9);
    /* NCCL's choice: the ring for the large buffer, the tree (fewer latencies) for 1 KB */
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_AUTO, S, 8, 4), ring, 1e-9);
    double small_tree = 2 * 1e3 / (0.92 * B) + 0.016;
    CHECK(small_tree < 2.0 * 7 / 8 * 1e3 / B + 0.022);
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_AUTO, 1e3, 8, 4), small_tree,
               1e-12);
    /* one machine: the ring over the GPUs' links, whatever the choice */
    double one = 2.0 * 3 / 4 * S / 100e6 + 6 * 1e-3;
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_AUTO, S, 4, 4), one, 1e-9);
    /* a group using 2 GPUs of each machine has their share of the NICs: 20 GB/s */
    double half = 2.0 * 3 / 4 * S / 20e6 + (6 - 2) * 1e-3 + 2 * 5e-3;
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_RING, S, 4, 2), half, 1e-9);
    double rs = 7.0 / 8 * S / B + 6 * 1e-3 + 5e-3;
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_REDUCE_SCATTER, DP_AR_TREE, S, 8, 4), rs, 1e-9);
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLGATHER, DP_AR_AUTO, S, 8, 4), rs, 1e-9);
    /* all-to-all: 3/8 of the buffer inside at 100, 4/8 out at 10: the NIC's part is longer */
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLTOALL, DP_AR_AUTO, S, 8, 4),
               4.0 / 8 * S / 10e6 + 5e-3, 1e-9);
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_ALLTOALL, DP_AR_AUTO, S, 4, 4),
               3.0 / 4 * S / 100e6 + 1e-3, 1e-9);
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_SENDRECV, DP_AR_AUTO, S, 2, 1), S / 10e6 + 5e-3,
               1e-9);
    CHECK_NEAR(dp_sim_collective_ms(&f, DP_COLL_SENDRECV, DP_AR_AUTO, S, 2, 2),
               S / 100e6 + 1e-3, 1e-9);
    CHECK(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_AUTO, S, 1, 1) == 0);
    CHECK(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_AUTO, 0, 8, 4) == 0);
    CHECK(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_AUTO, S, 8, 0) == -1);
    CHECK(dp_sim_collective_ms(&f, DP_COLL_ALLREDUCE, DP_AR_AUTO, S, 4, 8) == -1);
    struct dp_sim_fabric lone = {8, 1, 100, 1, 0, 0}; /* no network between machines */
    CHECK(dp_sim_collective_ms(&lone, DP_COLL_ALLREDUCE, DP_AR_AUTO, S, 16, 8) == -1);
}

/* dp_sim_fabric from a system entry: a DGX A100 (NVSwitch 600 GB/s a GPU, 8 x HDR for 8 GPUs)
 * gives each GPU 300 GB/s inside and one HDR NIC across; a DGX-1 (4 x EDR for 8) half an EDR;
 * without a system, one NIC of the setting's network for the machine. */
static void test_fabric_systems(void) {
    struct dp_gpu gpu;
    if (!catalog_gpu("A100-40GB-SXM", &gpu)) return;
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    struct dp_setting s = ar_setting(gpu.name, 32, DP_NET_IB_HDR, 4, DP_FW_PYTORCH);
    struct dp_system dgx = {.gpus_per_machine = 8, .fabric = DP_FABRIC_NVSWITCH,
                            .fabric_gbps = 600, .nic = DP_NET_IB_HDR, .nics = 8};
    struct dp_sim_fabric f;
    dp_sim_fabric(&s, &gpu, &dgx, &k, &f);
    CHECK(f.gpus_per_machine == 8 && f.machines == 4);
    CHECK_NEAR(f.intra_gbps, 300 * k.net_eff, 1e-9);
    CHECK_NEAR(f.inter_gbps, 25 * k.net_eff, 1e-9);
    CHECK_NEAR(f.inter_lat_us, dp_network_latency_us(DP_NET_IB_HDR), 1e-12);
    struct dp_system dgx1 = {.gpus_per_machine = 8, .fabric = DP_FABRIC_NVLINK_MESH,
                             .fabric_gbps = 300, .nic = DP_NET_IB_EDR, .nics = 4};
    dp_sim_fabric(&s, &gpu, &dgx1, &k, &f);
    CHECK_NEAR(f.inter_gbps, 12.5 * 4 / 8 * k.net_eff, 1e-9);
    dp_sim_fabric(&s, &gpu, NULL, &k, &f);
    CHECK_NEAR(f.intra_gbps, gpu.nvlink_gbps / 2 * k.net_eff, 1e-9);
    CHECK_NEAR(f.inter_gbps, 25.0 / 8 * k.net_eff, 1e-9);
}

/* A tree moves the same 2(N-1) x the gradient bytes as a ring in all (each edge of its spanning
 * tree up and down), m - 1 of its edges crossing machines: each machine's NIC 2(m-1)/m x. */
static void test_tree_traffic(struct dp_graph *g) {
    struct dp_gpu gpu;
    struct dp_error err = {0};
    if (!catalog_gpu("A100-40GB-SXM", &gpu)) return;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.throughput_only = true;
    struct dp_setting s = ar_setting(gpu.name, 32, DP_NET_IB_HDR, 4, DP_FW_PYTORCH);
    s.ar_algo = DP_AR_TREE;
    struct dp_sim_result r;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    CHECK_NEAR(r.bytes_per_iter, 2.0 * 31 * r.grad_bytes, 1e-6 * r.grad_bytes);
    CHECK_NEAR(r.link_tx_bytes, 4 * 2.0 * 3 / 4 * r.grad_bytes * r.n_iterations,
               1e-6 * r.grad_bytes * r.n_iterations);
    dp_sim_result_free(&r);
}

/* Gradient accumulation: a step of 4 micro-batches computes 4 times and synchronises once, so
 * (no jitter) it lasts 3 micro-batches' compute longer than a step of one, with the same
 * all-reduce, and counts 4 x batch x workers samples. */
static void test_accumulation(struct dp_graph *g) {
    struct dp_gpu gpu;
    struct dp_error err = {0};
    if (!catalog_gpu("A100-40GB-SXM", &gpu)) return;
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    k.jitter = 0;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.constants = &k;
    o.batch = 2048;
    o.sample_ms = 0.05; /* finer than a micro-batch: the bursts resolved */
    for (int fw = 0; fw < 2; fw++) {
        struct dp_setting s = ar_setting(gpu.name, 4, DP_NET_PCIE, 1,
                                         fw ? DP_FW_PYTORCH : DP_FW_TENSORFLOW);
        struct dp_sim_result one, four;
        CHECK(dp_simulate(g, &s, &gpu, &o, &one, &err) == DP_OK);
        s.accum = 4;
        CHECK(dp_simulate(g, &s, &gpu, &o, &four, &err) == DP_OK);
        CHECK(one.accum == 1 && four.accum == 4);
        CHECK_NEAR(four.compute_ms, 4 * one.compute_ms, 1e-9 * four.compute_ms);
        CHECK_NEAR(four.iteration_ms, one.iteration_ms + 3 * one.compute_ms,
                   1e-9 * four.iteration_ms);
        CHECK_NEAR(four.allreduce_ms, one.allreduce_ms, 1e-12);
        CHECK_NEAR(four.samples_per_step, 4.0 * 4 * one.batch, 1e-9);
        CHECK_NEAR(four.throughput, four.samples_per_step / four.iteration_ms * 1000, 1e-6);
        CHECK_NEAR(four.bytes_per_iter, one.bytes_per_iter, 1e-6);
        /* the bursts between synchronisations are longer */
        CHECK(four.labels[DP_OUT_GPU_UTIL_ACTIVE] > 2 * one.labels[DP_OUT_GPU_UTIL_ACTIVE]);
        dp_sim_result_free(&one);
        dp_sim_result_free(&four);
    }
}

static double a100_ms(struct dp_graph *g, enum dp_framework fw, int version, enum dp_tf32 t,
                      enum dp_precision p, char *notes, size_t n) {
    struct dp_gpu gpu;
    struct dp_error err = {0};
    struct dp_sim_result r;
    if (!catalog_gpu("A100-40GB-SXM", &gpu)) return NAN;
    struct dp_setting s = ar_setting(gpu.name, 1, DP_NET_NVLINK, 1, fw);
    s.fw_version = version;
    s.tf32 = t;
    s.precision = p;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.throughput_only = true;
    o.batch = 4096;
    if (dp_simulate(g, &s, &gpu, &o, &r, &err) != DP_OK) return NAN;
    if (notes) snprintf(notes, n, "%s", r.notes);
    return r.iteration_ms;
}

/* The TF32 rule on an A100 for a graph of matrix products: PyTorch 1.7-1.11 and an NGC
 * container run them on TF32, 1.12 and later in fp32 (as --tf32 off and TensorFlow 2.3);
 * TensorFlow 2.4 on TF32 (as --tf32 on); the result's notes say which. bf16 runs at the fp16
 * rate (the mixed setting's time), fp8 faster still. */
static void test_tf32_rule(struct dp_graph *g) {
    char notes[1024];
    double pt110 = a100_ms(g, DP_FW_PYTORCH, 110, DP_TF32_AUTO, DP_PREC_FP32, NULL, 0);
    double pt113 = a100_ms(g, DP_FW_PYTORCH, 113, DP_TF32_AUTO, DP_PREC_FP32, notes, sizeof notes);
    CHECK(strstr(notes, "matmuls in fp32") != NULL);
    double ngc = a100_ms(g, DP_FW_PYTORCH, DP_FW_VERSION_NGC, DP_TF32_AUTO, DP_PREC_FP32, NULL, 0);
    double off = a100_ms(g, DP_FW_PYTORCH, 110, DP_TF32_OFF, DP_PREC_FP32, NULL, 0);
    CHECK(pt113 > 1.2 * pt110);
    CHECK_NEAR(ngc, pt110, 1e-12);
    CHECK_NEAR(off, pt113, 1e-12);
    double tf23 = a100_ms(g, DP_FW_TENSORFLOW, 203, DP_TF32_AUTO, DP_PREC_FP32, NULL, 0);
    double tf24 = a100_ms(g, DP_FW_TENSORFLOW, 204, DP_TF32_AUTO, DP_PREC_FP32, notes,
                          sizeof notes);
    CHECK(strstr(notes, "TF32 tensor cores") != NULL);
    double tf_on = a100_ms(g, DP_FW_TENSORFLOW, 203, DP_TF32_ON, DP_PREC_FP32, NULL, 0);
    double tf32 = a100_ms(g, DP_FW_TENSORFLOW, 203, DP_TF32_AUTO, DP_PREC_TF32, NULL, 0);
    CHECK(tf23 > 1.2 * tf24);
    CHECK_NEAR(tf_on, tf24, 1e-12);
    CHECK_NEAR(tf32, tf24, 1e-12);
    double mixed = a100_ms(g, DP_FW_PYTORCH, 0, DP_TF32_AUTO, DP_PREC_MIXED, NULL, 0);
    double bf16 = a100_ms(g, DP_FW_PYTORCH, 0, DP_TF32_AUTO, DP_PREC_BF16, NULL, 0);
    CHECK_NEAR(bf16, mixed, 1e-12);
    CHECK(mixed < pt110);
}

/* The input pipeline on resnet-like images: 8 GPUs of a machine with 4 cores decoding for them
 * wait for 8 x batch images x (224 x 224 / 1e6) MP x decode_ms_mp / 4 ms a step, which then sets
 * the step (input-bound); 1,024 cores leave the GPU speed; DALI costs the GPU a little; a model
 * without image input has no ceiling. */
static void test_input_ceiling(void) {
    struct dp_gpu gpu;
    struct dp_error err = {0};
    if (!catalog_gpu("V100-SXM2-16GB", &gpu)) return;
    struct dp_graph *g = dp_graph_init("images");
    dp_graph_set_batch(g, 64, "test");
    int64_t dx[4] = {DP_DIM_BATCH, 224, 224, 3}, dw[4] = {3, 3, 3, 64},
            dy[4] = {DP_DIM_BATCH, 224, 224, 64}, ds[1] = {1};
    int x = add(g, "IteratorGetNext", "IteratorGetNext", "/job:worker/task:0/device:CPU:0", 4,
                dx, NULL, 0);
    int w = add(g, "w", "VariableV2", GPU_DEV, 4, dw, NULL, 0);
    dp_graph_set_cost(g, w, -1, -1, 3 * 3 * 3 * 64);
    int in[2] = {x, w};
    int c = add(g, "conv", "Conv2D", GPU_DEV, 4, dy, in, 2);
    add(g, "loss", "Sum", GPU_DEV, 1, ds, &c, 1);
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    k.jitter = 0;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.constants = &k;
    o.throughput_only = true;
    struct dp_setting s = ar_setting(gpu.name, 8, DP_NET_NVLINK, 1, DP_FW_PYTORCH);
    struct dp_sim_result syn, cpu, many, dali;
    CHECK(dp_simulate(g, &s, &gpu, &o, &syn, &err) == DP_OK);
    CHECK(!syn.input_bound && syn.input_ms == 0);
    s.loader = DP_LOADER_CPU;
    s.cpu_cores = 4;
    CHECK(dp_simulate(g, &s, &gpu, &o, &cpu, &err) == DP_OK);
    double want = 8 * 64 * (224.0 * 224 / 1e6) * k.decode_ms_mp / 4;
    CHECK_NEAR(cpu.input_ms, want, 1e-9 * want);
    CHECK(cpu.input_bound);
    CHECK_NEAR(cpu.iteration_ms, want, 1e-9 * want);
    CHECK_NEAR(cpu.throughput, 4 * 1000 / ((224.0 * 224 / 1e6) * k.decode_ms_mp), 1e-6);
    s.cpu_cores = 1024;
    CHECK(dp_simulate(g, &s, &gpu, &o, &many, &err) == DP_OK);
    CHECK(!many.input_bound);
    CHECK_NEAR(many.iteration_ms, syn.iteration_ms, 1e-9 * syn.iteration_ms);
    s.loader = DP_LOADER_DALI;
    s.cpu_cores = 0;
    CHECK(dp_simulate(g, &s, &gpu, &o, &dali, &err) == DP_OK);
    CHECK(!dali.input_bound && dali.iteration_ms > syn.iteration_ms);
    CHECK(dali.iteration_ms < 1.5 * syn.iteration_ms);
    dp_graph_free(g);
    /* the MLP reads no image: a CPU loader changes nothing */
    struct dp_graph *m = mlp(256);
    s = ar_setting(gpu.name, 8, DP_NET_NVLINK, 1, DP_FW_PYTORCH);
    CHECK(dp_simulate(m, &s, &gpu, &o, &syn, &err) == DP_OK);
    s.loader = DP_LOADER_CPU;
    s.cpu_cores = 1;
    CHECK(dp_simulate(m, &s, &gpu, &o, &cpu, &err) == DP_OK);
    CHECK(!cpu.input_bound && cpu.iteration_ms == syn.iteration_ms);
    dp_graph_free(m);
}

/* The expected largest of n log-normal compute factors exp(sigma Z - sigma^2 / 2), by the
 * trapezoid rule over the density of the largest of n standard normals, n phi Phi^(n-1). */
static double expected_max_factor(int n, double sigma) {
    double sum = 0, h = 1e-3;
    for (double z = -4; z < 8; z += h) {
        double Phi = 0.5 * erfc(-z / sqrt(2)), phi = exp(-z * z / 2) / sqrt(2 * M_PI);
        sum += exp(sigma * z - sigma * sigma / 2) * n * phi * pow(Phi, n - 1) * h;
    }
    return sum;
}

/* 4,096 workers cost about what 64 do (representatives and one straggler), and the straggler's
 * factor is the largest of all 4,096: under TensorFlow's schedule (the all-reduce after the
 * backward pass) a step lasts jmax x (compute + update) + the collective, so the mean step over
 * many iterations exceeds the jitter-free one by (E[jmax] - 1) x (compute + update). */
static void test_scale(struct dp_graph *g) {
    struct dp_gpu gpu;
    struct dp_error err = {0};
    if (!catalog_gpu("A100-40GB-SXM", &gpu)) return;
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.constants = &k;
    o.iterations = 3000;
    o.throughput_only = true;
    struct dp_setting s = ar_setting(gpu.name, 4096, DP_NET_IB_HDR, 512, DP_FW_TENSORFLOW);
    struct dp_sim_result r0, r;
    k.jitter = 0;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r0, &err) == DP_OK);
    k.jitter = 0.05;
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    double jmax = expected_max_factor(4096, 0.05);
    CHECK(jmax > 1.15 && jmax < 1.20);
    double want = r0.iteration_ms + (jmax - 1) * (r0.compute_ms + r0.apply_ms);
    CHECK_NEAR(r.iteration_ms, want, 0.003 * want);
    CHECK_NEAR(r.throughput, 4096.0 * r.batch / r.iteration_ms * 1000, 1e-6 * r.throughput);
    /* run time, traces and labels included: 4,096 workers against 64 */
    o.iterations = 0;
    o.throughput_only = false;
    struct dp_setting s64 = ar_setting(gpu.name, 64, DP_NET_IB_HDR, 8, DP_FW_PYTORCH);
    s = ar_setting(gpu.name, 4096, DP_NET_IB_HDR, 512, DP_FW_PYTORCH);
    clock_t c0 = clock();
    CHECK(dp_simulate(g, &s64, &gpu, &o, &r0, &err) == DP_OK);
    clock_t c1 = clock();
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    clock_t c2 = clock();
    double t64 = (double)(c1 - c0) / CLOCKS_PER_SEC, t4096 = (double)(c2 - c1) / CLOCKS_PER_SEC;
    printf("simulate: 64 workers %.3f s, 4096 workers %.3f s of CPU\n", t64, t4096);
    CHECK(t4096 < 3 * t64 + 0.05);
    CHECK(r.labels[DP_OUT_GPU_UTIL_ACTIVE] > 0);
    /* a PS cluster of 4,096 workers too */
    s = ar_setting(gpu.name, 4096, DP_NET_IB_HDR, 512, DP_FW_TENSORFLOW);
    s.sync = DP_SYNC_PS;
    s.ps = 64;
    CHECK(dp_setting_finish(&s, &err) == DP_OK);
    CHECK(dp_simulate(g, &s, &gpu, &o, &r, &err) == DP_OK);
    CHECK(r.bytes_pushed > 0 && r.iteration_ms > 0);
}

int main(void) {
    struct dp_graph *g = mlp(4096);
    CHECK(g && dp_graph_n_nodes(g) == 16);
    test_conservation(g);
    test_nic_bound(g);
    test_determinism(g);
    test_memory(g);
    test_errors(g);
    test_absurd(g);
    test_allreduce_traffic(g);
    test_allreduce_closed_form();
    test_collectives();
    test_fabric_systems();
    test_tree_traffic(g);
    test_accumulation(g);
    test_tf32_rule(g);
    test_scale(g);
    test_allreduce_overlap(g);
    test_line_rate(g);
    test_devices(g);
    test_liveness_mlp(g);
    dp_graph_free(g);
    test_liveness_rules();
    test_conv3d();
    test_winograd_traffic();
    test_unaligned_gemm();
    test_conv_transpose_phase();
    test_xla();
    test_input_ceiling();
    TEST_MAIN_END();
}
