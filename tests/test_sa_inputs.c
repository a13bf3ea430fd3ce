/* test_sa_inputs.c: what the setting-aware inspector's head reads beside the embedding: the
 * whole-graph profile (by hand on a tiny graph), the setting vector and the physical ratios
 * (the matrix rate per precision, the link the simulator moves parameters on, the bytes a run
 * moves under mixed precision), the burst structure and where the parameters fall among the
 * compute (finite over the catalog, by hand on one case, monotone where the simulator is). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/coarsen.h"
#include "dp/cost.h"
#include "dp/graph.h"
#include "dp/sa.h"
#include "dp/sim.h"
#include "test.h"

static struct dp_gpu_catalog *cat;

/* x [B, 3] . w [3, 4] -> Relu: the FLOPs and bytes by hand. */
static void test_profile(void) {
    struct dp_graph *g = dp_graph_init("tiny");
    struct dp_error err = {0};
    int64_t xd[2] = {DP_DIM_BATCH, 3}, wd[2] = {3, 4}, yd[2] = {DP_DIM_BATCH, 4};
    int x, w, y, r;
    CHECK(dp_graph_add_node(g, "x", "Placeholder", "/device:GPU:0", 2, xd, DP_DTYPE_F32, &x, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "w", "VariableV2", "/device:GPU:0", 2, wd, DP_DTYPE_F32, &w, &err) == DP_OK);
    dp_graph_set_cost(g, w, 0, 0, 12);
    CHECK(dp_graph_add_node(g, "y", "MatMul", "/device:GPU:0", 2, yd, DP_DTYPE_F32, &y, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "r", "Relu", "/device:GPU:0", 2, yd, DP_DTYPE_F32, &r, &err) == DP_OK);
    CHECK(dp_graph_add_input(g, y, x, false, &err) == DP_OK);
    CHECK(dp_graph_add_input(g, y, w, false, &err) == DP_OK);
    CHECK(dp_graph_add_input(g, r, y, false, &err) == DP_OK);
    struct dp_profile p;
    CHECK(dp_profile_graph(g, 8, &p, &err) == DP_OK);
    CHECK(p.batch == 8);
    CHECK_NEAR(p.flops[DP_OPCLASS_MATMUL], 2.0 * 8 * 3 * 4, 1e-9); /* 2 x |A| x N */
    CHECK(p.flops[DP_OPCLASS_ELEMWISE] > 0 && p.bytes[DP_OPCLASS_ELEMWISE] > 0);
    CHECK_NEAR(p.params, 12, 0);
    CHECK_NEAR(p.param_bytes, 48, 0);
    CHECK(p.n_variables == 1 && p.n_ops == 4 && p.n_kernels >= 2);
    CHECK(p.activation_bytes > 0);
    double v[DP_PROFILE_N];
    dp_profile_vector(&p, v);
    CHECK_NEAR(v[0], log1p(8), 1e-12);
    CHECK(!strcmp(dp_profile_names[0], "batch") && !strcmp(dp_profile_names[DP_PROFILE_N - 1], "flops"));
    for (int k = 0; k < DP_PROFILE_N; k++) CHECK(isfinite(v[k]) && v[k] >= 0);
    /* The FLOPs scale with the batch. */
    struct dp_profile q;
    CHECK(dp_profile_graph(g, 16, &q, &err) == DP_OK);
    CHECK_NEAR(q.flops[DP_OPCLASS_MATMUL], 2 * p.flops[DP_OPCLASS_MATMUL], 1e-9);
    CHECK(!p.f16 && !dp_graph_f16(g));
    /* An fp16 op on the GPU: a mixed-precision graph, as the simulator takes it (an op in fp16
     * on no GPU does not count, as the simulator runs only the GPU's ops when some are placed). */
    int h;
    CHECK(dp_graph_add_node(g, "h", "Cast", "/device:CPU:0", 2, yd, DP_DTYPE_F16, &h, &err) == DP_OK);
    CHECK(!dp_graph_f16(g));
    CHECK(dp_graph_add_node(g, "h2", "Cast", "/device:GPU:0", 2, yd, DP_DTYPE_F16, &h, &err) == DP_OK);
    CHECK(dp_graph_add_input(g, h, r, false, &err) == DP_OK);
    CHECK(dp_profile_graph(g, 8, &q, &err) == DP_OK);
    CHECK(q.f16 && dp_graph_f16(g));
    dp_graph_free(g);
}

/* Where the parameters fall, by the rule: two layers, the second holding almost all of them;
 * its gradient made first in the backward pass. Each share is of a phase's work, every op's
 * FLOPs at 10 TFLOPS or bytes at 400 GB/s, the larger. */
static void test_profile_placement(void) {
    struct dp_graph *g = dp_graph_init("two");
    struct dp_error err = {0};
    const char *gpu = "/device:GPU:0";
    int64_t xd[2] = {DP_DIM_BATCH, 3}, w1d[2] = {3, 4}, hd[2] = {DP_DIM_BATCH, 4},
            w2d[2] = {4, 1000}, yd[2] = {DP_DIM_BATCH, 1000};
    int x, w1, w2, y1, r, y2, g2, g1, u1, u2;
    CHECK(dp_graph_add_node(g, "x", "Placeholder", gpu, 2, xd, DP_DTYPE_F32, &x, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "w1", "VariableV2", gpu, 2, w1d, DP_DTYPE_F32, &w1, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "w2", "VariableV2", gpu, 2, w2d, DP_DTYPE_F32, &w2, &err) == DP_OK);
    dp_graph_set_cost(g, w1, 0, 0, 12);
    dp_graph_set_cost(g, w2, 0, 0, 4000);
    CHECK(dp_graph_add_node(g, "y1", "MatMul", gpu, 2, hd, DP_DTYPE_F32, &y1, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "r", "Relu", gpu, 2, hd, DP_DTYPE_F32, &r, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "y2", "MatMul", gpu, 2, yd, DP_DTYPE_F32, &y2, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "gradients/y2", "MatMul", gpu, 2, w2d, DP_DTYPE_F32, &g2, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "gradients/y1", "MatMul", gpu, 2, w1d, DP_DTYPE_F32, &g1, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "u2", "ApplyGradientDescent", gpu, 2, w2d, DP_DTYPE_F32, &u2, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "u1", "ApplyGradientDescent", gpu, 2, w1d, DP_DTYPE_F32, &u1, &err) == DP_OK);
    const int edges[][2] = {{y1, x}, {y1, w1}, {r, y1}, {y2, r}, {y2, w2}, {g2, r}, {g2, y2},
                            {g1, x}, {g1, r},  {u2, w2}, {u2, g2}, {u1, w1}, {u1, g1}};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
        CHECK(dp_graph_add_input(g, edges[k][0], edges[k][1], false, &err) == DP_OK);
    struct dp_profile p;
    CHECK(dp_profile_graph(g, 8, &p, &err) == DP_OK);
    double wk[4], f, b;
    const int ops[4] = {y1, r, y2, g2};
    for (int k = 0; k < 4; k++) {
        dp_cost_node(g, (size_t)ops[k], 8, &f, &b);
        wk[k] = fmax(f / 1e13, b / 4e11);
    }
    dp_cost_node(g, (size_t)g1, 8, &f, &b);
    double wg1 = fmax(f / 1e13, b / 4e11), W = wk[0] + wk[1] + wk[2], B = wk[3] + wg1;
    /* Forward: half the parameters are first read by y2, after y1 and r; the first 1/64 of the
     * work reads w1 and, when y2 starts within it, w2. */
    CHECK_NEAR(p.fw_param_mid, (wk[0] + wk[1]) / W, 1e-12);
    CHECK_NEAR(p.fw_param_head, (12 + (wk[0] + wk[1] < W / 64 ? 4000 : 0)) / 4012.0, 1e-12);
    /* Backward: w2's gradient (most of them) is made when its op ends; the last 1/64 of the
     * work makes w1's, and w2's if its op ends within it. */
    CHECK_NEAR(p.bw_grad_mid, wk[3] / B, 1e-12);
    CHECK_NEAR(p.bw_grad_tail, (12 + (wk[3] > B * 63 / 64 ? 4000 : 0)) / 4012.0, 1e-12);
    CHECK(p.fw_param_mid > 0 && p.fw_param_mid < 1 && p.bw_grad_mid > 0 && p.bw_grad_mid < 1);
    /* Fusion: r has readers that do not fuse (products); nothing saved. */
    CHECK(p.fused_bytes == 0 && p.fused_kernels == 0);
    /* No parameters: every share 0. Two chained element-wise ops: the first runs inside the
     * second, its output [8, 3] in fp32 neither written nor read (2 x 96 bytes). */
    struct dp_graph *e = dp_graph_init("none");
    int a, c, d;
    CHECK(dp_graph_add_node(e, "a", "Placeholder", gpu, 2, xd, DP_DTYPE_F32, &a, &err) == DP_OK);
    CHECK(dp_graph_add_node(e, "c", "Relu", gpu, 2, xd, DP_DTYPE_F32, &c, &err) == DP_OK);
    CHECK(dp_graph_add_node(e, "d", "Relu", gpu, 2, xd, DP_DTYPE_F32, &d, &err) == DP_OK);
    CHECK(dp_graph_add_input(e, c, a, false, &err) == DP_OK);
    CHECK(dp_graph_add_input(e, d, c, false, &err) == DP_OK);
    CHECK(dp_profile_graph(e, 8, &p, &err) == DP_OK);
    CHECK(p.fw_param_mid == 0 && p.fw_param_head == 0 && p.bw_grad_mid == 0 &&
          p.bw_grad_tail == 0);
    CHECK_NEAR(p.fused_bytes, 2 * 8 * 3 * 4, 0);
    CHECK(p.fused_kernels == 1);
    dp_graph_free(e);
    dp_graph_free(g);
}

/* The setting as numbers: a worker count or GPU change moves the vector; an unknown tensor rate
 * reads as the FP32 rate and says so. */
static void test_setting_vector(void) {
    struct dp_setting a, b;
    struct dp_error err = {0};
    CHECK(dp_setting_make("V100-PCIe-16GB", 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &a, &err) == DP_OK);
    CHECK(dp_setting_make("V100-PCIe-16GB", 8, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &b, &err) == DP_OK);
    double va[DP_SA_SETTING_N], vb[DP_SA_SETTING_N];
    const struct dp_gpu *v100 = dp_gpu_find(cat, "V100-PCIe-16GB");
    dp_sa_setting_vector(&a, v100, va);
    dp_sa_setting_vector(&b, v100, vb);
    CHECK_NEAR(va[7], log(2), 1e-12);
    CHECK_NEAR(vb[7], log(8), 1e-12);
    CHECK_NEAR(va[0], log(v100->fp32_tflops), 1e-12);
    CHECK(va[18] == 0); /* V100's tensor rate is known */
    const struct dp_gpu *k80 = dp_gpu_find(cat, "K80");
    if (k80) { /* two devices per board: per-device figures; no tensor cores */
        dp_sa_setting_vector(&a, k80, va);
        CHECK_NEAR(va[0], log(k80->fp32_tflops / 2), 1e-12);
        CHECK(va[1] == va[0] && va[18] == 1);
    }
    double c[DP_SA_CROSS_N];
    struct dp_profile p = {.batch = 32, .params = 1e6, .param_bytes = 4e6, .activation_bytes = 1e9};
    p.flops[DP_OPCLASS_MATMUL] = 1e12;
    dp_sa_cross_vector(&p, &b, v100, 0, c);
    CHECK_NEAR(c[0], log(1e12 / (v100->fp32_tflops * 1e9)), 1e-9); /* fp32: the FP32 rate, ms */
    CHECK(!strcmp(dp_sa_cross_names[0], "matmul_rate_ms"));
    /* Mixed precision: the FP16 tensor rate; fp32 on Ampere: TF32, half of it (as simulated). */
    struct dp_setting m, t;
    CHECK(dp_setting_make("V100-PCIe-16GB", 8, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_MIXED, &m, &err) == DP_OK);
    dp_sa_cross_vector(&p, &m, v100, 0, c);
    CHECK_NEAR(c[0], log(1e12 / (v100->fp16_tflops * 1e9)), 1e-9);
    const struct dp_gpu *a100 = dp_gpu_find(cat, "A100-40GB-SXM");
    CHECK(a100 && a100->fp16_tflops > 0);
    if (a100 && dp_setting_make(a100->name, 2, 1, DP_NET_NVLINK, 0, DP_PLACE_HOMO, DP_PREC_FP32,
                                &t, &err) == DP_OK) {
        dp_sa_cross_vector(&p, &t, a100, 0, c);
        CHECK_NEAR(c[0], log(1e12 / (a100->fp16_tflops / 2 * 1e9)), 1e-9);
        CHECK(dp_sim_tensor_share(dp_gpu_generation(a100), &t) == 0.5);
        /* The parameters over the link the simulator moves them on: the A100's own NVLink (half
         * of its 600 GB/s each way), not NVLink 2's nominal 50; legacy files read the latter. */
        CHECK_NEAR(dp_sim_link_gbps(a100, DP_NET_NVLINK), a100->nvlink_gbps / 2, 1e-12);
        CHECK_NEAR(c[3], log(4e6 / (a100->nvlink_gbps / 2 * 1e6)), 1e-9);
        CHECK(!strcmp(dp_sa_cross_names[3], "params_over_link_ms"));
        dp_sa_cross_vector(&p, &t, a100, DP_SA_LEGACY_NETWORK_RATE, c);
        CHECK_NEAR(c[3], log(4e6 / (dp_network_bandwidth_gbps(DP_NET_NVLINK) * 1e6)), 1e-9);
        CHECK(!strcmp(dp_sa_cross_legacy_names[3], "params_over_network_ms"));
    }
    /* PCIe: its generation's x16 link (V100: 3.0, 15.75 GB/s; A100: 4.0, twice that); a NIC: the
     * network's rate, whatever the GPU. */
    CHECK_NEAR(dp_sim_link_gbps(v100, DP_NET_PCIE), 15.75, 1e-12);
    if (a100) {
        CHECK_NEAR(dp_sim_link_gbps(a100, DP_NET_PCIE), 31.5, 1e-12);
        CHECK_NEAR(dp_sim_link_gbps(a100, DP_NET_10GBE), dp_network_bandwidth_gbps(DP_NET_10GBE),
                   1e-12);
    }
    /* The bytes a run moves: an fp32 graph under mixed precision moves half of its per-op
     * bytes and activations (fp16), not its parameters or the optimizer's fp32 traffic; a graph
     * already in fp16, or an fp32 run, all of them. */
    p.bytes[DP_OPCLASS_ELEMWISE] = 8e6;
    p.bytes[DP_OPCLASS_OPTIMIZER] = 6e6;
    struct dp_profile at;
    dp_sa_profile_at(&p, &m, &at);
    CHECK_NEAR(at.bytes[DP_OPCLASS_ELEMWISE], 4e6, 0);
    CHECK_NEAR(at.activation_bytes, 0.5e9, 0);
    CHECK(at.bytes[DP_OPCLASS_OPTIMIZER] == 6e6 && at.param_bytes == 4e6 &&
          at.flops[DP_OPCLASS_MATMUL] == 1e12);
    dp_sa_profile_at(&p, &b, &at);
    CHECK(at.bytes[DP_OPCLASS_ELEMWISE] == 8e6 && at.activation_bytes == 1e9);
    p.f16 = true;
    dp_sa_profile_at(&p, &m, &at);
    CHECK(at.bytes[DP_OPCLASS_ELEMWISE] == 8e6 && at.activation_bytes == 1e9);
}

/* A setting, all-reduce (with PyTorch when asked) where `ar`, else a TensorFlow PS one. */
static int make(const char *gpu, int workers, int ps, enum dp_network net, int machines,
                enum dp_placement pl, enum dp_precision prec, bool ar, bool pt,
                struct dp_setting *s) {
    struct dp_error err = {0};
    if (dp_setting_make(gpu, workers, ar ? 1 : ps, net, machines, pl, prec, s, &err)) return 0;
    if (!ar && !pt) return 1;
    if (ar) s->sync = DP_SYNC_ALLREDUCE;
    if (pt) s->framework = DP_FW_PYTORCH;
    return dp_setting_finish(s, &err) == DP_OK;
}

/* Case c (0-3) of catalog GPU i on network net: 8 workers on 4 machines (1 machine on an
 * intra-machine link): TensorFlow fp32 with 2 PS, mixed precision with 1 PS (heterogeneous
 * across machines), all-reduce TensorFlow fp32 and PyTorch mixed. False where the GPU has no
 * such link or the setting is refused. */
static bool catalog_case(int i, int net, int c, struct dp_setting *s) {
    const struct dp_gpu *g = &cat->gpus[i];
    if (net == DP_NET_NVLINK && !(g->nvlink_gbps > 0)) return false;
    bool intra = dp_network_intra((enum dp_network)net);
    return make(g->name, 8, c == 1 ? 1 : 2, (enum dp_network)net, intra ? 1 : 4,
                c == 1 && !intra ? DP_PLACE_HETERO : DP_PLACE_HOMO,
                c & 1 ? DP_PREC_MIXED : DP_PREC_FP32, c >= 2, c == 3, s);
}

/* Every catalog GPU on PS and all-reduce clusters of every network (NVLink where it has it),
 * both precisions: every burst, fusion and placement input finite (an empty profile too), the
 * sample interval within 1-100 ms, no wait for a pull under all-reduce. */
static void test_inputs_finite(void) {
    struct dp_profile p = {.batch = 64, .params = 25e6, .param_bytes = 1e8, .n_kernels = 300,
                           .n_variables = 160, .activation_bytes = 3e9, .fused_bytes = 2e9,
                           .fused_kernels = 100, .fw_param_mid = 0.4, .fw_param_head = 0.05,
                           .bw_grad_mid = 0.6, .bw_grad_tail = 0.1};
    p.flops[DP_OPCLASS_MATMUL] = 2e12;
    p.winograd_flops = 1e12;
    p.bytes[DP_OPCLASS_MATMUL] = 2e9;
    p.bytes[DP_OPCLASS_ELEMWISE] = 6e9;
    p.bytes[DP_OPCLASS_OPTIMIZER] = 8e8;
    struct dp_profile empty = {.batch = 1};
    int n = 0;
    for (int i = 0; i < cat->n_gpus; i++)
        for (int net = 0; net < DP_NET_COUNT; net++)
            for (int c = 0; c < 4; c++) {
                const struct dp_gpu *g = &cat->gpus[i];
                struct dp_setting s;
                if (!catalog_case(i, net, c, &s)) continue;
                double v[DP_SA_BURST_N], e[DP_SA_BURST_N];
                dp_sa_burst_vector(&p, &s, g, v);
                dp_sa_burst_vector(&empty, &s, g, e);
                for (int k = 0; k < DP_SA_BURST_N; k++) CHECK(isfinite(v[k]) && isfinite(e[k]));
                CHECK(v[1] >= -1e-12 && v[1] <= log(100) + 1e-12);
                double pv[DP_SA_PLACE_N], pe[DP_SA_PLACE_N];
                dp_sa_place_vector(&p, &s, g, pv);
                dp_sa_place_vector(&empty, &s, g, pe);
                for (int k = 0; k < DP_SA_PLACE_N; k++)
                    CHECK(isfinite(pv[k]) && isfinite(pe[k]));
                if (c >= 2) CHECK_NEAR(pv[7], log(1e-3), 1e-12); /* no pull under all-reduce */
                n++;
            }
    CHECK(n > 10 * cat->n_gpus);
    CHECK(!strcmp(dp_sa_burst_names[1], "sample_ms") &&
          !strcmp(dp_sa_burst_names[DP_SA_BURST_N - 1], "memory_busy_share"));
    CHECK(!strcmp(dp_sa_place_names[0], "fused_share") &&
          !strcmp(dp_sa_place_names[DP_SA_PLACE_N - 1], "pull_wait_samples"));
}

/* One V100 PCIe worker with one PS, TensorFlow fp32, a pure matrix workload: the compute at
 * the CUDA cores' rate (Volta's generation scale takes them to the peak), the pull and push at
 * 30% of PCIe 3.0 x16, the PS host's apply, by hand. */
static void test_burst_by_hand(void) {
    const struct dp_gpu *v100 = dp_gpu_find(cat, "V100-PCIe-16GB");
    struct dp_setting s;
    CHECK(v100 && make(v100->name, 1, 1, DP_NET_PCIE, 1, DP_PLACE_HOMO, DP_PREC_FP32, false,
                       false, &s));
    if (!v100) return;
    struct dp_profile p = {.batch = 32, .params = 1e6, .param_bytes = 4e6, .n_variables = 1};
    p.flops[DP_OPCLASS_MATMUL] = 1e12;
    p.bytes[DP_OPCLASS_OPTIMIZER] = 2e7;
    double v[DP_SA_BURST_N];
    dp_sa_burst_vector(&p, &s, v100, v);
    double lat = dp_network_latency_us(DP_NET_PCIE) / 1000;
    double compute = 1e12 / (v100->fp32_tflops * 1e9);
    double fw = compute / 3, bw = compute - fw;
    double pull = 4e6 / (15.75 * 1e6 * 0.3) + 2 * lat, apply = 2e7 / 20e6;
    double iter = fw + bw + apply + 2 * lat, sample = fmax(1, fmin(100, iter / 50));
    CHECK_NEAR(v[0], log(iter), 1e-9);
    CHECK_NEAR(v[1], log(sample), 1e-9);
    CHECK_NEAR(v[2], log((iter - compute) / sample), 1e-9);
    CHECK_NEAR(v[3], log(pull / fw), 1e-9);
    CHECK_NEAR(v[4], log(pull / bw), 1e-9);
    CHECK_NEAR(v[5], log(pull / sample), 1e-9);
    CHECK_NEAR(v[6], log((bw - pull) / 1 / sample), 1e-9);
    CHECK_NEAR(v[7], log(2), 1e-12);
    CHECK_NEAR(v[8], log(apply / sample), 1e-9);
    CHECK_NEAR(v[9], log(compute / sample), 1e-9);
    CHECK_NEAR(v[10], log(1e-3), 1e-12); /* no memory-bound bytes: the floor */
}

/* Monotone as the simulator is: a slower network makes the PS transfers and the all-reduce
 * longer against the compute; more workers per PS, more; more parameters, more DDP buckets. */
static void test_burst_monotone(void) {
    const enum dp_network nets[] = {DP_NET_100GBE, DP_NET_40GBE, DP_NET_10GBE, DP_NET_1GBE};
    struct dp_profile p = {.batch = 32, .params = 6e7, .param_bytes = 1e8, .n_kernels = 200,
                           .n_variables = 100};
    p.flops[DP_OPCLASS_MATMUL] = 5e12;
    p.bytes[DP_OPCLASS_ELEMWISE] = 4e9;
    for (int ar = 0; ar < 2; ar++) {
        double prev[DP_SA_BURST_N] = {0};
        for (int k = 0; k < 4; k++) {
            struct dp_setting s;
            double v[DP_SA_BURST_N];
            CHECK(make("A100-80GB-SXM", 8, 2, nets[k], 4, DP_PLACE_HOMO, DP_PREC_FP32, ar, ar,
                       &s));
            dp_sa_burst_vector(&p, &s, dp_gpu_find(cat, "A100-80GB-SXM"), v);
            if (k) {
                CHECK(v[0] >= prev[0] && v[4] > prev[4]); /* iteration, sync / backward */
                CHECK(v[1] >= prev[1]);                   /* the sample interval */
                if (!ar) CHECK(v[3] > prev[3]);           /* the pull against the forward */
            }
            memcpy(prev, v, sizeof v);
        }
    }
    double few[DP_SA_BURST_N], many[DP_SA_BURST_N];
    struct dp_setting a, b;
    CHECK(make("V100-PCIe-16GB", 2, 1, DP_NET_10GBE, 2, DP_PLACE_HOMO, DP_PREC_FP32, false, false,
               &a));
    CHECK(make("V100-PCIe-16GB", 8, 1, DP_NET_10GBE, 2, DP_PLACE_HOMO, DP_PREC_FP32, false, false,
               &b));
    const struct dp_gpu *v100 = dp_gpu_find(cat, "V100-PCIe-16GB");
    dp_sa_burst_vector(&p, &a, v100, few);
    dp_sa_burst_vector(&p, &b, v100, many);
    CHECK(many[4] > few[4] && many[0] > few[0]);
    CHECK(make("V100-PCIe-16GB", 8, 0, DP_NET_10GBE, 2, DP_PLACE_HOMO, DP_PREC_FP32, true, true,
               &a));
    dp_sa_burst_vector(&p, &a, v100, few);
    p.params *= 4;
    dp_sa_burst_vector(&p, &a, v100, many);
    CHECK(many[7] > few[7]);                        /* more 25 MB buckets */
    CHECK_NEAR(few[7], log(1 + 1 + ceil((6e7 * 4 - 1048576) / (25.0 * 1048576))), 1e-12);
}

/* The fusion and placement inputs (finite over the catalog: test_inputs_finite): by hand on
 * the one-worker V100 PS case of test_burst_by_hand; monotone: more fused bytes, a larger share
 * saved; later gradients or a slower network, a longer transfer past the backward pass;
 * parameters read earlier, a longer wait for the pull; none under all-reduce. */
static void test_place(void) {
    const struct dp_gpu *v100 = dp_gpu_find(cat, "V100-PCIe-16GB");
    struct dp_setting s;
    CHECK(v100 && make("V100-PCIe-16GB", 1, 1, DP_NET_PCIE, 1, DP_PLACE_HOMO, DP_PREC_FP32, false,
                       false, &s));
    if (!v100) return;
    struct dp_profile h = {.batch = 32, .params = 1e6, .param_bytes = 4e6, .n_variables = 1,
                           .fw_param_mid = 0.5, .fw_param_head = 0.25, .bw_grad_mid = 0.9,
                           .bw_grad_tail = 0.3};
    h.flops[DP_OPCLASS_MATMUL] = 1e12;
    h.bytes[DP_OPCLASS_OPTIMIZER] = 2e7;
    double v[DP_SA_PLACE_N], burst[DP_SA_BURST_N];
    dp_sa_place_vector(&h, &s, v100, v);
    dp_sa_burst_vector(&h, &s, v100, burst);
    double lat = dp_network_latency_us(DP_NET_PCIE) / 1000;
    double compute = 1e12 / (v100->fp32_tflops * 1e9), fw = compute / 3, bw = compute - fw;
    double pull = 4e6 / (15.75 * 1e6 * 0.3) + 2 * lat, sample = exp(burst[1]);
    double end = fmax(bw, fmax(0.9 * bw + pull / 2, bw + 0.3 * pull));
    CHECK_NEAR(v[0], log(1e-3), 1e-12); /* nothing fused: the floor */
    CHECK_NEAR(v[1], log(compute / sample), 1e-9);
    CHECK_NEAR(v[2], log(0.5), 1e-12);
    CHECK_NEAR(v[3], log(0.25), 1e-12);
    CHECK_NEAR(v[4], log(0.9), 1e-12);
    CHECK_NEAR(v[5], log(0.3), 1e-12);
    CHECK_NEAR(v[6], log((end - bw) / sample), 1e-9);
    CHECK_NEAR(v[7], log(fmax(0.25 * pull, pull / 2 - 0.5 * fw) / sample), 1e-9);
    /* Element-wise traffic, a tenth of it fused away: TensorFlow's share of it saved, at 45% of
     * the bandwidth (the kernels' gaps and launches are nil here). */
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    h.bytes[DP_OPCLASS_ELEMWISE] = 1e10;
    h.fused_bytes = 1e9;
    dp_sa_place_vector(&h, &s, v100, v);
    dp_sa_burst_vector(&h, &s, v100, burst);
    double rate = v100->bandwidth_gbps * 1e6 * k.eff_mem, kern = compute + 1e10 / rate;
    CHECK_NEAR(v[0], log(k.fuse_tf * 1e9 / rate / kern), 1e-9);
    CHECK_NEAR(v[1], log((kern - k.fuse_tf * 1e9 / rate) / exp(burst[1])), 1e-9);

    struct dp_profile p = {.batch = 64, .params = 6e7, .param_bytes = 1e8, .n_kernels = 300,
                           .n_variables = 160, .fused_bytes = 2e9, .fused_kernels = 100,
                           .fw_param_mid = 0.4, .fw_param_head = 0.05,
                           .bw_grad_mid = 0.6, .bw_grad_tail = 0.1};
    p.flops[DP_OPCLASS_MATMUL] = 2e12;
    p.bytes[DP_OPCLASS_ELEMWISE] = 6e9;
    double later[DP_SA_PLACE_N], base[DP_SA_PLACE_N];
    struct dp_setting fast, slow;
    CHECK(make("V100-PCIe-16GB", 8, 1, DP_NET_100GBE, 4, DP_PLACE_HOMO, DP_PREC_FP32, false,
               false, &fast));
    CHECK(make("V100-PCIe-16GB", 8, 1, DP_NET_10GBE, 4, DP_PLACE_HOMO, DP_PREC_FP32, false,
               false, &slow));
    dp_sa_place_vector(&p, &fast, v100, base);
    dp_sa_place_vector(&p, &slow, v100, later);
    CHECK(later[6] > base[6] && later[7] > base[7]); /* a slower network */
    p.bw_grad_mid = 0.9;
    p.bw_grad_tail = 0.5;
    dp_sa_place_vector(&p, &slow, v100, later);
    double before[DP_SA_PLACE_N];
    p.bw_grad_mid = 0.6;
    p.bw_grad_tail = 0.1;
    dp_sa_place_vector(&p, &slow, v100, before);
    CHECK(later[6] > before[6]); /* later gradients */
    p.fw_param_mid = 0.1;
    p.fw_param_head = 0.5;
    dp_sa_place_vector(&p, &slow, v100, later);
    CHECK(later[7] > before[7]); /* parameters read earlier */
    double more[DP_SA_PLACE_N];
    p.fused_bytes = 4e9;
    dp_sa_place_vector(&p, &slow, v100, more);
    CHECK(more[0] > later[0] && more[1] < later[1]); /* more fused: a larger share saved */
}

int main(void) {
    struct dp_error err = {0};
    if (dp_gpu_catalog_load_default(NULL, &cat, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_profile();
    test_profile_placement();
    test_setting_vector();
    test_inputs_finite();
    test_burst_by_hand();
    test_burst_monotone();
    test_place();
    dp_gpu_catalog_free(cat);
    TEST_MAIN_END();
}
