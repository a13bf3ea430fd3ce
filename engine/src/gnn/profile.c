/* profile.c: whole-graph numbers at a batch size (dp/profile.h): one pass over the GPU ops with
 * the same per-op cost formulas the simulator and the group features use, where the parameters
 * fall among the forward and backward work (as the simulator assigns them to its ops:
 * sim_compute.c), and the activation sweep of dp_sim_activation_bytes. */
#include "dp/profile.h"

#include <math.h>
#include <stdlib.h>
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

/* The variable behind a read, through Identity / ReadVariableOp / Cast / Enter hops (as the
 * simulator follows them): the node with parameters, or -1. */
static int var_of(const struct dp_graph *g, int idx) {
    for (int hop = 0; hop < 4 && idx >= 0; hop++) {
        const struct dp_node *n = dp_graph_node(g, (size_t)idx);
        if (n->params > 0) return idx;
        if (n->n_inputs < 1 || !(!strcmp(n->op, "Identity") || !strcmp(n->op, "ReadVariableOp") ||
                                 !strcmp(n->op, "Cast") || !strcmp(n->op, "Enter")))
            return -1;
        idx = n->inputs[0];
    }
    return -1;
}

/* The fusion roles of sim_compute.c (without XLA): an element-wise op or softmax chains (it
 * takes in its producer and fuses into its reader); a row reduction ends a fused kernel. */
enum { ROLE_NONE, ROLE_CHAIN, ROLE_SINK };
static unsigned char fuse_role(const char *op) {
    enum dp_op_class c = dp_op_class(op);
    if (c == DP_OPCLASS_ELEMWISE || !strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax"))
        return ROLE_CHAIN;
    if (c != DP_OPCLASS_REDUCE) return ROLE_NONE;
    static const char *const sinks[] = {"Mean", "Sum", "Max", "Min", "Prod", "BiasAddGrad",
                                        "L2Loss", "SoftmaxCrossEntropyWithLogits",
                                        "SparseSoftmaxCrossEntropyWithLogits"};
    for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++)
        if (!strcmp(op, sinks[k])) return ROLE_SINK;
    return ROLE_NONE;
}

/* The bytes and launches fused kernels save (sim_compute.c's fuse_ops): a chaining op whose
 * readers all fuse (role: per node, its fusion role on the worker, else ROLE_NONE) runs inside
 * them; with r readers it is recomputed in each, saving (1 + r) x its output less (r - 1) x
 * its inputs (bytes: per node, its traffic). readers, fusing: scratch, per node. */
static void fusion(const struct dp_graph *g, int64_t batch, const unsigned char *role,
                   const double *bytes, int *readers, int *fusing, struct dp_profile *p) {
    size_t nn = dp_graph_n_nodes(g);
    for (size_t j = 0; j < nn; j++) {
        const struct dp_node *m = dp_graph_node(g, j);
        for (int k = 0; k < m->n_inputs; k++) {
            readers[m->inputs[k]]++;
            fusing[m->inputs[k]] += role[j] != ROLE_NONE;
        }
    }
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        int r = readers[i];
        if (role[i] != ROLE_CHAIN || r < 1 || fusing[i] != r) continue;
        int es = dp_dtype_size(n->dtype);
        double osz = dp_node_tensor_size(n, batch) * (es ? es : 4);
        double in = bytes[i] > osz ? bytes[i] - osz : 0, saved = (1 + r) * osz - (r - 1) * in;
        if (saved <= 0) continue;
        p->fused_bytes += saved;
        p->fused_kernels++;
    }
}

/* One phase's ops in graph order: each op's work (seconds at the reference rates) and the
 * parameters it first reads (forward) or whose gradient it makes (backward). */
struct phase_seq {
    double *work, *params;
    int n;
};

/* Work share done before (forward: the op that reaches half the parameters starts; backward:
 * it ends) and the parameters' share in the phase's first (forward) or last (backward)
 * 1/DP_SIM_CHUNKS of the work. */
static void placement(const struct phase_seq *q, bool backward, double *mid, double *edge) {
    double W = 0, Q = 0, w = 0, acc = 0;
    *mid = *edge = 0;
    for (int i = 0; i < q->n; i++)
        W += q->work[i], Q += q->params[i];
    if (!(W > 0 && Q > 0)) return;
    bool found = false;
    for (int i = 0; i < q->n; i++) {
        double start = w;
        w += q->work[i];
        acc += q->params[i];
        if (!found && acc >= Q / 2) {
            *mid = fmin(1, (backward ? w : start) / W);
            found = true;
        }
        if (backward ? w > W * (1 - 1.0 / DP_SIM_CHUNKS) : start < W / DP_SIM_CHUNKS)
            *edge += q->params[i] / Q;
    }
    *edge = fmin(1, *edge); /* a sum of shares may pass 1 by a rounding */
}

enum dp_status dp_profile_graph(const struct dp_graph *g, int64_t batch, struct dp_profile *out,
                                struct dp_error *err) {
    enum dp_status st = DP_ERR_NOMEM;
    struct dp_profile p;
    memset(&p, 0, sizeof p);
    if (batch <= 0) batch = dp_graph_batch(g);
    if (batch <= 0) batch = 32;
    p.batch = batch;
    bool unplaced = dp_graph_unplaced(g);
    p.f16 = dp_graph_f16(g);
    size_t nn = dp_graph_n_nodes(g);
    double *need = calloc(nn + 1, sizeof *need); /* per node: the parameters whose gradient it is */
    unsigned char *claimed = calloc(nn + 1, 1);  /* per variable: a forward op read it already */
    unsigned char *role = calloc(nn + 1, 1);     /* per node: its fusion role on the worker */
    double *traffic = calloc(nn + 1, sizeof *traffic);
    int *readers = calloc(nn + 1, sizeof *readers), *fusing = calloc(nn + 1, sizeof *fusing);
    struct phase_seq fw = {calloc(nn + 1, sizeof(double)), calloc(nn + 1, sizeof(double)), 0};
    struct phase_seq bw = {calloc(nn + 1, sizeof(double)), calloc(nn + 1, sizeof(double)), 0};
    if (!need || !claimed || !role || !traffic || !readers || !fusing || !fw.work || !fw.params ||
        !bw.work || !bw.params) {
        dp_error_set(err, st, "profiling %s: out of memory", dp_graph_name(g));
        goto done;
    }
    /* The gradient an update applies: its largest backward input (the simulator's rule). */
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_op_class(n->op) != DP_OPCLASS_OPTIMIZER || n->n_inputs < 1) continue;
        int v = var_of(g, n->inputs[0]), best = -1;
        double best_sz = -1;
        for (int k = 1; k < n->n_inputs; k++) {
            const struct dp_node *in = dp_graph_node(g, (size_t)n->inputs[k]);
            double sz = dp_node_tensor_size(in, 1);
            if (dp_node_phase(in) == DP_PHASE_BACKWARD && sz > best_sz)
                best = n->inputs[k], best_sz = sz;
        }
        /* Under mixed precision the update reads the gradient unscaled after the backward
         * pass; it was made where the scaled gradient was. */
        for (int hop = 0; hop < 2 && best >= 0; hop++) {
            const struct dp_node *u = dp_graph_node(g, (size_t)best);
            if (strncmp(u->name, "loss_scale/unscale/", 19) || u->n_inputs < 1) break;
            best = u->inputs[0];
        }
        if (v >= 0 && best >= 0) need[best] += (double)dp_graph_node(g, (size_t)v)->params;
    }
    double fw_params = 0;
    for (size_t i = 0; i < nn; i++) {
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
        flops = flops > 0 ? flops : 0;
        bytes = bytes > 0 ? bytes : 0;
        p.flops[c] += flops;
        p.bytes[c] += bytes;
        if (c == DP_OPCLASS_MATMUL && dp_op_winograd_eligible(g, n)) p.winograd_flops += flops;
        p.n_ops++;
        p.n_kernels += c != DP_OPCLASS_NONE;
        role[i] = fuse_role(n->op);
        traffic[i] = bytes;
        enum dp_op_phase ph = dp_node_phase(n);
        /* The ops the simulator runs on the worker: those with a kernel, the updates apart. */
        if (c == DP_OPCLASS_NONE || c == DP_OPCLASS_OPTIMIZER ||
            (ph != DP_PHASE_FORWARD && ph != DP_PHASE_BACKWARD))
            continue;
        struct phase_seq *q = ph == DP_PHASE_FORWARD ? &fw : &bw;
        q->work[q->n] = fmax(flops / 1e13, bytes / 4e11);
        if (ph == DP_PHASE_BACKWARD) q->params[q->n] = need[i];
        for (int k = 0; ph == DP_PHASE_FORWARD && k < n->n_inputs; k++) {
            int v = var_of(g, n->inputs[k]);
            if (v < 0 || claimed[v]) continue;
            claimed[v] = 1;
            q->params[q->n] += (double)dp_graph_node(g, (size_t)v)->params;
            fw_params += (double)dp_graph_node(g, (size_t)v)->params;
        }
        q->n++;
    }
    /* Parameters no forward op was seen reading are needed from the start (the simulator's). */
    if (fw.n && p.params > fw_params) fw.params[0] += p.params - fw_params;
    fusion(g, batch, role, traffic, readers, fusing, &p);
    placement(&fw, false, &p.fw_param_mid, &p.fw_param_head);
    placement(&bw, true, &p.bw_grad_mid, &p.bw_grad_tail);
    if ((st = dp_sim_activation_bytes(g, batch, &p.activation_bytes, err))) goto done;
    *out = p;
done:
    free(need);
    free(claimed);
    free(role);
    free(traffic);
    free(readers);
    free(fusing);
    free(fw.work);
    free(fw.params);
    free(bw.work);
    free(bw.params);
    return st;
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
