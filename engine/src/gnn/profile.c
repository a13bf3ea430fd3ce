/* profile.c: whole-graph numbers at a batch size (dp/profile.h): one pass over the GPU ops with
 * the same per-op cost formulas the simulator and the group features use, the fusion and the
 * parameters' placement as the simulator's workload has them (dp_sim_workload_shape), and the
 * activation sweep of dp_sim_activation_bytes. */
#include "dp/profile.h"

#include <math.h>
#include <string.h>

#include "dp/coarsen.h"
#include "dp/cost.h"
#include "dp/sim.h"

const char *const dp_profile_names[DP_PROFILE_N] = {
    "batch",
    "flops.none",      "flops.matmul", "flops.elementwise", "flops.reduce", "flops.optimizer",
    "flops.memory",    "flops.input",
    "bytes.none",      "bytes.matmul", "bytes.elementwise", "bytes.reduce", "bytes.optimizer",
    "bytes.memory",    "bytes.input",
    "flops.winograd",  "params",       "param_bytes",       "activation_bytes", "ops",
    "kernels",         "variables",    "flops",
};
_Static_assert(DP_OPCLASS_COUNT == 7, "update dp_profile_names");

enum dp_status dp_profile_graph(const struct dp_graph *g, int64_t batch, struct dp_profile *out,
                                struct dp_error *err) {
    return dp_profile_graph_workload(g, batch, NULL, out, err);
}

enum dp_status dp_profile_graph_workload(const struct dp_graph *g, int64_t batch,
                                         const struct dp_sim_workload *w, struct dp_profile *out,
                                         struct dp_error *err) {
    struct dp_profile p;
    memset(&p, 0, sizeof p);
    if (batch <= 0) batch = dp_graph_batch(g);
    if (batch <= 0) batch = 32;
    p.batch = batch;
    bool unplaced = dp_graph_unplaced(g);
    p.f16 = dp_graph_f16(g);
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (n->params > 0 || dp_op_is_variable(n->op)) {
            int sz = dp_dtype_size(n->dtype);
            p.n_variables++;
            p.params += n->params > 0 ? (double)n->params : 0;
            p.param_bytes += n->params > 0 ? (double)n->params * (sz > 0 ? sz : 4) : 0;
        }
        if (!dp_graph_op_on_gpu(n, unplaced) || dp_node_phase(n) == DP_PHASE_INIT) continue;
        enum dp_op_class c = dp_op_class(n->op);
        double flops = 0, bytes = 0;
        dp_cost_node(g, i, batch, &flops, &bytes);
        p.flops[c] += flops > 0 ? flops : 0;
        p.bytes[c] += bytes > 0 ? bytes : 0;
        if (c == DP_OPCLASS_MATMUL && dp_op_winograd_eligible(g, n))
            p.winograd_flops += flops > 0 ? flops : 0;
        p.n_ops++;
        p.n_kernels += c != DP_OPCLASS_NONE;
    }
    struct dp_sim_workload *own = NULL;
    enum dp_status st = DP_OK;
    if (!w) {
        struct dp_error werr = {0};
        st = dp_sim_workload_init(g, batch, &own, &werr);
        if (st == DP_ERR_NOMEM) {
            *err = werr;
            return st;
        }
        w = own;
    }
    if (w) {
        struct dp_sim_workload_shape sh;
        dp_sim_workload_shape(w, &sh);
        p.fused_bytes = sh.fused_bytes;
        p.fused_kernels = sh.fused_kernels;
        p.fw_param_mid = sh.fw_param_mid;
        p.fw_param_head = sh.fw_param_head;
        p.bw_grad_mid = sh.bw_grad_mid;
        p.bw_grad_tail = sh.bw_grad_tail;
        p.activation_bytes = sh.activation_bytes;
        dp_sim_workload_free(own);
    } else if ((st = dp_sim_activation_bytes(g, batch, &p.activation_bytes, err))) {
        /* A graph with no op to simulate: no fusion or placement to speak of (those stay 0). */
        return st;
    }
    *out = p;
    return DP_OK;
}

void dp_profile_vector(const struct dp_profile *p, double v[DP_PROFILE_N]) {
    int k = 0;
    double total = 0;
    v[k++] = log1p((double)p->batch);
    for (int c = 0; c < DP_OPCLASS_COUNT; c++) {
        v[k++] = log1p(p->flops[c] / 1e9);
        total += p->flops[c];
    }
    for (int c = 0; c < DP_OPCLASS_COUNT; c++) v[k++] = log1p(p->bytes[c] / 1e6);
    v[k++] = log1p(p->winograd_flops / 1e9);
    v[k++] = log1p(p->params / 1e6);
    v[k++] = log1p(p->param_bytes / 1e6);
    v[k++] = log1p(p->activation_bytes / 1e6);
    v[k++] = log1p(p->n_ops);
    v[k++] = log1p(p->n_kernels);
    v[k++] = log1p(p->n_variables);
    v[k++] = log1p(total / 1e9);
}
