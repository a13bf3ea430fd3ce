/* sources.c: where a training graph's tensors come from: the input pipeline (IteratorV2 ->
 * IteratorGetNext, the NCHW transpose and the mixed-precision cast after it) and variables (the
 * VariableV2, its initializer and Assign, its read). Above the node machinery (builder.c) and the
 * forward primitives it uses (forward.c, rearrange.c), which do not call back. */
#include "tfgraph_impl.h"

#include <string.h>

#include "dp/ops.h"

int zb_input(struct zb *b, int n_dims, const int64_t *dims, enum dp_dtype dt, int n_label_dims,
             const int64_t *label_dims, int *labels, bool nhwc_images) {
    int it = zb_emit(b, "IteratorV2", "IteratorV2", CPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_RESOURCE);
    int x = zb_emit(b, "IteratorGetNext", "IteratorGetNext", CPU_DEV, &it, 1, n_dims, dims, dt);
    if (x < 0) return -1;
    zb_set_attr(b, b->t[x].node, "output_types", dt == DP_DTYPE_F32 ? "[DT_FLOAT, DT_INT32]"
                                                                  : "[DT_INT32, DT_INT32]");
    if (labels)
        *labels = zb_new_tensor(b, b->t[x].node, n_label_dims, label_dims, DP_DTYPE_I32, false);
    if (n_dims == 4 && b->opts.nchw && nhwc_images) {
        int perm[4] = {0, 3, 1, 2};
        x = zb_transpose(b, x, perm);
    }
    if (dt == DP_DTYPE_F32 && b->opts.precision == DP_PREC_MIXED) x = zb_cast(b, x, DP_DTYPE_F16);
    return x;
}

/* Initializers run once when the session starts, not per step: attr phase=init (cost 0). */
static void mark_init(struct zb *b, int t) {
    if (t >= 0) zb_set_attr(b, b->t[t].node, "phase", "init");
}

int zb_input_extra(struct zb *b, int features, int n_dims, const int64_t *dims,
                   enum dp_dtype dt) {
    if (b->st || features < 0) return -1;
    /* Walk back through a Transpose/Cast to the IteratorGetNext node. */
    int node = b->t[features].node;
    while (!dp_op_is_input_pipeline(dp_graph_node(b->g, (size_t)node)->op) &&
           dp_graph_node(b->g, (size_t)node)->n_inputs > 0)
        node = dp_graph_node(b->g, (size_t)node)->inputs[0];
    return zb_new_tensor(b, node, n_dims, dims, dt, false);
}

int zb_new_var(struct zb *b, const char *name, int n_dims, const int64_t *dims, const char *init,
               bool trainable, bool cast, bool slot, int *ref_out) {
    if (b->st) return -1;
    char full[NAME_MAX_LEN];
    zb_scoped(b, name, full, sizeof full);
    int ref = zb_emit(b, full, "VariableV2", GPU_DEV, NULL, 0, n_dims, dims, DP_DTYPE_F32);
    if (ref < 0) return -1;
    int vnode = b->t[ref].node;
    const char *vname = dp_graph_node(b->g, (size_t)vnode)->name;
    char vn[NAME_MAX_LEN];
    zb_sfmt(vn, sizeof vn, "%s", vname);
    double p = 1;
    for (int d = 0; d < n_dims; d++) p *= (double)dims[d];
    dp_graph_set_cost(b->g, vnode, 0, 0, slot ? 0 : (int64_t)p);
    char shape[160] = "[";
    for (int d = 0; d < n_dims; d++) {
        size_t len = strlen(shape);
        zb_sfmt(shape + len, sizeof shape - len, "%s%lld", d ? ", " : "", (long long)dims[d]);
    }
    zb_set_attr(b, vnode, "shape", "%s]", shape);
    if (!trainable) zb_set_attr(b, vnode, "trainable", "false");
    if (slot) zb_set_attr(b, vnode, "slot", "true");

    char nm[NAME_MAX_LEN + 64];
    int initv;
    if (!strcmp(init, "normal")) {
        int64_t nd = n_dims;
        zb_sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/shape", vn);
        int shp = zb_emit(b, nm, "Const", GPU_DEV, NULL, 0, 1, &nd, DP_DTYPE_I32);
        zb_sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/TruncatedNormal", vn);
        int tn = zb_emit(b, nm, "TruncatedNormal", GPU_DEV, &shp, 1, n_dims, dims, DP_DTYPE_F32);
        zb_sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/stddev", vn);
        int sd = zb_emit(b, nm, "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        zb_sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/mul", vn);
        int ins[2] = {tn, sd};
        initv = zb_emit(b, nm, "Mul", GPU_DEV, ins, 2, n_dims, dims, DP_DTYPE_F32);
        mark_init(b, shp);
        mark_init(b, tn);
        mark_init(b, sd);
    } else {
        zb_sfmt(nm, sizeof nm, "%s/Initializer/%s", vn, init);
        initv = zb_emit(b, nm, "Const", GPU_DEV, NULL, 0, n_dims, dims, DP_DTYPE_F32);
    }
    mark_init(b, initv);
    zb_sfmt(nm, sizeof nm, "%s/Assign", vn);
    int ai[2] = {ref, initv};
    mark_init(b, zb_emit(b, nm, "Assign", GPU_DEV, ai, 2, n_dims, dims, DP_DTYPE_F32));
    if (ref_out) *ref_out = ref;
    if (slot) return ref;

    zb_sfmt(nm, sizeof nm, "%s/read", vn);
    int read = zb_emit(b, nm, "Identity", GPU_DEV, &ref, 1, n_dims, dims, DP_DTYPE_F32);
    if (read < 0) return -1;
    b->t[read].grad = trainable;
    if (!zb_grow(b, (void **)&b->vars, b->n_vars, &b->cap_vars, sizeof *b->vars)) return -1;
    b->vars[b->n_vars++] = (struct var){ref, read, trainable};
    if (cast && b->opts.precision == DP_PREC_MIXED) return zb_cast(b, read, DP_DTYPE_F16);
    return read;
}

int zb_variable(struct zb *b, const char *name, int n_dims, const int64_t *dims,
                const char *init, bool trainable) {
    return zb_new_var(b, name, n_dims, dims, init, trainable, trainable, false, NULL);
}
