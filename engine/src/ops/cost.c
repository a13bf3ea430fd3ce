/* cost.c: per-op FLOPs and bytes from op type, shapes and attributes, by the rule the op
 * registry gives each type (registry.c). Convolutions and matrix products use the exact
 * multiply-add count (x2); element-wise ops a small per-element count; bytes are the inputs read
 * plus the output written. Optimizer updates are costed from the variable's size (their gradient
 * input may be a multi-output op's first output). */
#include "dp/cost.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

enum dp_op_phase dp_node_phase(const struct dp_node *n) {
    const char *phase = dp_node_attr(n, "phase");
    if (phase && !strcmp(phase, "init")) return DP_PHASE_INIT;
    enum dp_op_class cls = dp_op_class(n->op);
    if (cls == DP_OPCLASS_INPUT) return DP_PHASE_INPUT;
    if (!strncmp(n->name, "gradients/", 10) || strstr(n->name, "/gradients/") ||
        !strncmp(n->name, "loss_scale/unscale/", 19))
        return DP_PHASE_BACKWARD;
    if (cls == DP_OPCLASS_OPTIMIZER || dp_op_is_update(n->op)) return DP_PHASE_UPDATE;
    return DP_PHASE_FORWARD;
}

const char *dp_op_phase_name(enum dp_op_phase p) {
    static const char *const names[] = {"init", "input", "forward", "backward", "update"};
    _Static_assert(sizeof names / sizeof names[0] == DP_PHASE_COUNT, "update names");
    return (unsigned)p < DP_PHASE_COUNT ? names[p] : "forward";
}

double dp_cost_conv2d_flops(int64_t n, int64_t oh, int64_t ow, int64_t cin, int64_t cout,
                            int64_t kh, int64_t kw) {
    return 2.0 * (double)n * (double)oh * (double)ow * (double)cout * (double)cin * (double)kh *
           (double)kw;
}

double dp_cost_matmul_flops(int64_t m, int64_t n, int64_t k) {
    return 2.0 * (double)m * (double)n * (double)k;
}

static double dim_at(const struct dp_node *n, int d, int64_t batch) {
    if (d < 0) d += n->n_dims;
    if (n->n_dims < 0 || d < 0 || d >= n->n_dims) return 0;
    int64_t v = n->dims[d] == DP_DIM_BATCH ? batch : n->dims[d];
    return v > 0 ? (double)v : 0;
}

/* A convolution filter's multiply-adds per output element: every dimension but the last (the
 * output channels) of [kh, kw, cin / groups, cout] or [kd, kh, kw, cin / groups, cout]; 0 for
 * any other rank. */
static double filter_taps(const struct dp_node *w, int64_t batch) {
    if (w->n_dims != 4 && w->n_dims != 5) return 0;
    double taps = 1;
    for (int d = 0; d < w->n_dims - 1; d++) taps *= dim_at(w, d, batch);
    return taps;
}

static int elem_size(const struct dp_node *n) {
    int s = dp_dtype_size(n->dtype);
    return s > 0 ? s : n->dtype == DP_DTYPE_UNKNOWN ? 4 : 0;
}

/* Product of the integers in an attribute value ("[1, 3, 3, 1]" -> 9); 1 when absent. */
static double attr_product(const struct dp_node *n, const char *key) {
    const char *v = dp_node_attr(n, key);
    if (!v) return 1;
    double p = 1;
    int found = 0;
    while (*v) {
        if (*v >= '0' && *v <= '9') {
            char *end;
            long x = strtol(v, &end, 10);
            if (x > 0) p *= (double)x;
            found = 1;
            v = end;
        } else v++;
    }
    return found ? p : 1;
}

/* 2 x the product of the sizes of every subscript of an einsum ("bij,bjk->bik": 2 x b x i x
 * j x k: the multiply-adds of the contraction); 0 when the equation does not match the inputs. */
static double einsum_flops(const struct dp_graph *g, const struct dp_node *n, int64_t batch) {
    const char *eq = dp_node_attr(n, "equation");
    double size[128] = {0}, f = n->n_inputs > 1 ? 2 : 1;
    if (!eq) return 0;
    for (int k = 0; k < n->n_inputs && k < 2 && *eq && *eq != '-'; k++) {
        const struct dp_node *in = dp_graph_node(g, (size_t)n->inputs[k]);
        int letters = 0, ell = 0;
        const char *p = eq;
        for (; *p && *p != ',' && *p != '-'; p++) letters += *p != '.';
        if (strstr(eq, "...") && strstr(eq, "...") < p) ell = in->n_dims - letters;
        int d = 0;
        for (p = eq; *p && *p != ',' && *p != '-'; p++) {
            if (*p == '.') {
                if (p[1] == '.' && p[2] == '.') /* the ellipsis: its dims as subscripts 1..8 */
                    for (int e = 0; e < ell; e++, d++) size[1 + e] = dim_at(in, d, batch);
                p += 2;
                continue;
            }
            if ((unsigned char)*p < 128) size[(unsigned char)*p] = dim_at(in, d++, batch);
        }
        eq = *p == ',' ? p + 1 : p;
    }
    for (int c = 0; c < 128; c++)
        if (size[c] > 0) f *= size[c];
    return f;
}

static const struct dp_node *input(const struct dp_graph *g, const struct dp_node *n, int k) {
    return k < n->n_inputs ? dp_graph_node(g, (size_t)n->inputs[k]) : NULL;
}

static double size_of(const struct dp_node *n, int64_t batch) {
    return n ? dp_node_elements(n, batch) : 0;
}

void dp_cost_node(const struct dp_graph *g, size_t i, int64_t batch, double *flops,
                  double *bytes) {
    const struct dp_node *n = dp_graph_node(g, i);
    const struct op_def *info = ops_find(n->op);
    enum dp_op_class cls = dp_op_class(n->op);
    double out = dp_node_elements(n, batch);
    double f = 0, by = 0;
    const char *phase = dp_node_attr(n, "phase");
    if (phase && !strcmp(phase, "init")) { /* runs once at session start, not per step */
        *flops = 0;
        *bytes = 0;
        return;
    }
    if (cls == DP_OPCLASS_NONE || cls == DP_OPCLASS_INPUT) {
        *flops = 0;
        *bytes = cls == DP_OPCLASS_INPUT ? out * elem_size(n) : 0;
        return;
    }
    if (cls == DP_OPCLASS_OPTIMIZER) {
        /* Reads the variable, its slots and the gradient; writes the variable and slots. */
        int slots = dp_op_optimizer_slots(n->op);
        *flops = out * (info ? info->per_elem : 4);
        *bytes = out * 4.0 * (3 + 2 * slots);
        return;
    }
    for (int k = 0; k < n->n_inputs; k++) {
        const struct dp_node *in = input(g, n, k);
        if (dp_op_is_constant(in->op)) continue;
        double s = size_of(in, batch);
        /* An element-wise op reads no more than it writes (broadcasting only shrinks inputs),
         * nor does a copy (slice, gather, one-hot, tile, pad): a larger input is a multi-output
         * op (IteratorGetNext, FusedBatchNormV3) whose first output is not the one read. */
        if (s > out && (cls == DP_OPCLASS_ELEMWISE ||
                        (cls == DP_OPCLASS_MEMORY && !dp_op_reads_more(n->op))))
            s = out;
        by += s * elem_size(in);
    }
    by += out * elem_size(n);
    enum op_rule rule = info ? info->rule : RULE_PER_ELEM;
    const struct dp_node *w = input(g, n, 1);
    switch (rule) {
    case RULE_CONV:
    case RULE_CONV_BP_INPUT: { /* filter [kh, kw, cin / groups, cout] ([kd, kh, kw, ...] 3-D) */
        const struct dp_node *dy = rule == RULE_CONV ? n : input(g, n, 2);
        if (w) f = 2.0 * size_of(dy, batch) * filter_taps(w, batch);
        break;
    }
    case RULE_CONV_BP_FILTER:
        f = 2.0 * size_of(input(g, n, 2), batch) * filter_taps(n, batch);
        break;
    case RULE_DWCONV:
    case RULE_DWCONV_BP_INPUT: {
        const struct dp_node *dy = rule == RULE_DWCONV ? n : input(g, n, 2);
        if (w && w->n_dims == 4)
            f = 2.0 * size_of(dy, batch) * dim_at(w, 0, batch) * dim_at(w, 1, batch);
        break;
    }
    case RULE_DWCONV_BP_FILTER:
        if (n->n_dims == 4)
            f = 2.0 * size_of(input(g, n, 2), batch) * dim_at(n, 0, batch) * dim_at(n, 1, batch);
        break;
    case RULE_MATMUL: {
        /* C = A.B holds |C| x K products; with A unbroadcast, |C| x K = |A| x N. */
        const struct dp_node *a = input(g, n, 0);
        if (a && w && w->n_dims > a->n_dims) /* A broadcast: |C| x K = |B| x M */
            f = 2.0 * size_of(w, batch) * dim_at(n, -2, batch);
        else if (a)
            f = 2.0 * size_of(a, batch) * dim_at(n, -1, batch);
        break;
    }
    case RULE_POOL: f = out * attr_product(n, "ksize"); break;
    case RULE_MAXPOOL_GRAD: f = size_of(input(g, n, 2), batch) * attr_product(n, "ksize"); break;
    case RULE_AVGPOOL_GRAD: f = size_of(w, batch) * attr_product(n, "ksize"); break;
    case RULE_XENT: f = 6.0 * size_of(input(g, n, 0), batch); break;
    case RULE_REDUCE: f = size_of(input(g, n, 0), batch); break;
    case RULE_ADDN: f = out * (n->n_inputs > 1 ? n->n_inputs - 1 : 1); break;
    case RULE_BN_GRAD: /* reads dy and x, not the reserve space */
        if (n->n_inputs >= 2)
            by = (size_of(input(g, n, 0), batch) + size_of(w, batch) + out) * elem_size(n);
        f = 12.0 * size_of(w, batch);
        break;
    case RULE_EINSUM: f = einsum_flops(g, n, batch); break;
    case RULE_PER_ELEM: f = out * (info ? info->per_elem : 1); break;
    }
    *flops = f;
    *bytes = by;
}

void dp_cost_fill(struct dp_graph *g, int64_t batch, bool overwrite) {
    if (batch <= 0) batch = dp_graph_batch(g) > 0 ? dp_graph_batch(g) : 32;
    size_t n = dp_graph_n_nodes(g);
    for (size_t i = 0; i < n; i++) {
        const struct dp_node *nd = dp_graph_node(g, i);
        if (!overwrite && nd->flops >= 0 && nd->bytes >= 0) continue;
        double f, by;
        dp_cost_node(g, i, batch, &f, &by);
        dp_graph_set_cost(g, (int)i, f, by, nd->params);
    }
}

double dp_cost_total_flops(const struct dp_graph *g, int64_t batch) {
    double total = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        double f, by;
        dp_cost_node(g, i, batch, &f, &by);
        total += f;
    }
    return total;
}

int64_t dp_graph_param_count(const struct dp_graph *g, bool trainable_only) {
    int64_t total = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (n->params <= 0) continue;
        const char *t = dp_node_attr(n, "trainable");
        if (trainable_only && t && !strcmp(t, "false")) continue;
        /* a file may give each node up to 2^53: saturate rather than overflow int64_t */
        if (n->params > INT64_MAX - total) return INT64_MAX;
        total += n->params;
    }
    return total;
}
