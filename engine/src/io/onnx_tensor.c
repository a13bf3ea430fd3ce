/* onnx_tensor.c: ONNX values as builder tensors: stored tensors (initializers, Constants) made
 * into trained variables, untrained variables (buffers) or constants as onnx_weights.c
 * classified them, node outputs defined from builder tensors, the scope named after a node, and
 * the generic mapping of an op no file maps (its value_info shape, a generic cost and gradient). */
#include "onnx_impl.h"

#include <stdio.h>
#include <string.h>

bool onnx_set_tensor(struct imp *im, int k, int t) {
    const struct o_node *n = im->node;
    if (t < 0) return false;
    if (k >= n->n_out || !*n->out[k]) return true;
    struct oval *v = onnx_val(im, n->out[k], false);
    if (!v || v->defined) return onnx_fail(im, DP_ERR_INVALID, "output '%s' defined twice",
                                           n->out[k]) == 0;
    v->defined = true;
    v->tensor = t;
    v->dtype = zb_dtype(im->b, t);
    v->n_dims = zb_rank(im->b, t);
    for (int d = 0; d < v->n_dims && d < DP_MAX_DIMS; d++)
        v->dims[d] = sym_of_dim(zb_dims(im->b, t)[d]);
    return true;
}

/* A name fit for a graph node: ':' and control characters become '_'; empty -> fallback. */
static const char *clean_name(struct imp *im, const char *s, const char *fallback) {
    if (!s || !*s) s = fallback;
    size_t n = strlen(s);
    char *d = pb_alloc(&im->d->ar, n + 1);
    if (!d) {
        pb_oom(im->d);
        return "x";
    }
    for (size_t i = 0; i <= n; i++)
        d[i] = (s[i] == ':' || s[i] == '^' || (s[i] > 0 && s[i] < 32)) ? '_' : s[i];
    return d;
}

void onnx_scope(struct imp *im) {
    zb_push(im->b, "%s", clean_name(im, im->node->name, im->node->op));
}

static void dims_of(const struct oval *v, int64_t *dims) {
    for (int d = 0; d < v->n_dims; d++) dims[d] = sym_to_dim(v->dims[d]);
}

/* Names on the graph's node for stored tensor v (its variable or constant, the first made
 * since node `first`) the rule that classified it, for `graph info --tensors`. */
static void name_rule(struct imp *im, const struct oval *v, size_t first) {
    if (!v->rule) return;
    for (size_t i = first; i < dp_graph_n_nodes(im->dg); i++) {
        const char *op = dp_graph_node(im->dg, i)->op;
        if (strcmp(op, "VariableV2") && strcmp(op, "Const")) continue;
        if (dp_graph_set_attr(im->dg, (int)i, "rule", v->rule)) pb_oom(im->d);
        return;
    }
}

int onnx_tensor(struct imp *im, struct oval *v) {
    if (im->d->st || !v) return -1;
    if (v->tensor >= 0) return v->tensor;
    if (!v->defined)
        return onnx_fail(im, DP_ERR_INVALID, "value '%s' is used before it is computed", v->name);
    if (v->n_dims < 0)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "value '%s' has an unknown shape", v->name);
    int64_t dims[DP_MAX_DIMS];
    dims_of(v, dims);
    const char *nm = clean_name(im, v->name, "const");
    enum dp_dtype dt = v->dtype == DP_DTYPE_UNKNOWN ? DP_DTYPE_F32 : v->dtype;
    /* Parameters are trained variables, buffers untrained ones (held in memory, no gradient,
     * no update), the rest constants: onnx_weights.c's rules. */
    size_t first = dp_graph_n_nodes(im->dg);
    if (v->kind == W_PARAM || v->kind == W_BUFFER)
        v->tensor = zb_variable(im->b, nm, v->n_dims, dims,
                                v->kind == W_PARAM ? "normal" : "zeros", v->kind == W_PARAM);
    else v->tensor = zb_const(im->b, nm, v->n_dims, dims, dt);
    name_rule(im, v, first);
    return v->tensor;
}

int onnx_weight_as(struct imp *im, struct oval *v, int n_dims, const int64_t *dims) {
    if (!v || v->tensor >= 0 || v->kind != W_PARAM) return -2;
    size_t first = dp_graph_n_nodes(im->dg);
    v->tensor = zb_variable(im->b, clean_name(im, v->name, "weight"), n_dims, dims, "normal", true);
    name_rule(im, v, first);
    return v->tensor;
}

int onnx_in_t(struct imp *im, int k) {
    struct oval *v = onnx_in(im, k);
    if (!v) return onnx_fail(im, DP_ERR_INVALID, "input %d is missing", k);
    return onnx_tensor(im, v);
}

/* Keeps the node with a generic cost: the op type as it is, the shape of value_info or else of
 * its first input. When `unknown` (an op no file maps, not shape bookkeeping), counted once per
 * type in the import notes and given a generic gradient (zb_generic), so the layers before it
 * are trained too. */
bool onnx_map_generic(struct imp *im, bool unknown) {
    const struct o_node *n = im->node;
    int xs[64], k = 0;
    for (int i = 0; i < n->n_in && k < 64; i++) {
        struct oval *v = onnx_in(im, i);
        if (v && v->n_dims >= 0 && (xs[k] = onnx_tensor(im, v)) >= 0) k++;
        if (im->d->st) return false;
    }
    if (unknown) {
        int i = 0;
        while (i < im->n_unknown && strcmp(im->unknown[i].op, n->op)) i++;
        if (i == im->n_unknown && i < (int)(sizeof im->unknown / sizeof im->unknown[0])) {
            im->unknown[i].op = n->op;
            im->n_unknown++;
        }
        if (i < im->n_unknown) im->unknown[i].count++;
        im->n_unknown_nodes++;
    }
    onnx_scope(im);
    for (int o = 0; o < n->n_out; o++) {
        if (!*n->out[o]) continue;
        struct oval *ov = onnx_val(im, n->out[o], false);
        const struct o_value_info *vi = ov ? ov->vi : NULL;
        int64_t dims[DP_MAX_DIMS];
        int nd = -1;
        enum dp_dtype dt = DP_DTYPE_F32;
        struct oval *x = onnx_in(im, 0);
        if (vi && vi->n_dims >= 0) {
            nd = vi->n_dims;
            /* dim 0 is the batch when symbolic or the input's; another dimension value_info
             * leaves open (PyTorch names every one of a custom op's) is the first input's
             * when the ranks agree, as the whole shape is without value_info */
            bool like_x = x && x->defined && x->n_dims == nd;
            for (int d = 0; d < nd; d++)
                dims[d] = d == 0 && (vi->sym[0] || (im->fixed_batch > 0 &&
                                                    vi->dims[0] == im->fixed_batch))
                              ? DP_DIM_BATCH
                          : vi->sym[d] && like_x ? sym_to_dim(x->dims[d])
                                                 : vi->dims[d];
            if (vi->elem) dt = onnx_dtype(vi->elem);
        } else if (x && x->defined) {
            nd = x->n_dims;
            dims_of(x, dims);
            dt = x->dtype;
        }
        const char *op = clean_name(im, n->op, "Unknown");
        if (dt == DP_DTYPE_UNKNOWN) dt = DP_DTYPE_F32;
        int y = unknown ? zb_generic(im->b, op, xs, k, nd, dims, dt)
                        : zb_opaque(im->b, op, xs, k, nd, dims, dt);
        if (!onnx_set_tensor(im, o, y)) break;
    }
    zb_pop(im->b);
    return !im->d->st && !zb_status(im->b, NULL);
}
