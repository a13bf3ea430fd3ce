/* gradients.c: TensorFlow's gradients() over the builder's tape: for each forward op, in
 * reverse, the gradient op (or small op group) TF emits, named "gradients/<op>_grad/...", with
 * an AddN where a tensor fans out. */
#include "tfgraph_impl.h"

#include <string.h>

/* --- gradients ----------------------------------------------------------------------------- */

void tg_add_contrib(struct zb *b, int target, int grad) {
    if (b->st || target < 0 || grad < 0 || !b->t[target].grad) return;
    if (!tg_grow(b, (void **)&b->c, b->n_c, &b->cap_c, sizeof *b->c)) return;
    b->c[b->n_c] = (struct contrib){grad, b->t[target].first};
    b->t[target].first = b->n_c++;
}

/* The summed gradient of tensor t (AddN over its contributions), or -1 when it has none. */
int tg_grad_sum(struct zb *b, int t, const char *fwd_name) {
    int ids[64], n = 0;
    for (int c = b->t[t].first; c >= 0; c = b->c[c].next) {
        if (n == 64) { /* very wide fan-in: fold what we have so far */
            char full[NAME_MAX_LEN + 32];
            tg_sfmt(full, sizeof full, "gradients/%s_grad/AddN", fwd_name);
            ids[0] = tg_emit(b, full, "AddN", GPU_DEV, ids, n, b->t[t].n_dims, b->t[t].dims,
                          b->t[ids[0]].dt);
            n = 1;
        }
        ids[n++] = b->c[c].t;
    }
    if (n == 0) return -1;
    if (n == 1) return ids[0];
    char full[NAME_MAX_LEN + 32];
    tg_sfmt(full, sizeof full, "gradients/AddN");
    int y = tg_emit(b, full, "AddN", GPU_DEV, ids, n, b->t[t].n_dims, b->t[t].dims, b->t[ids[0]].dt);
    if (y >= 0) tg_set_attr(b, b->t[y].node, "N", "%d", n);
    (void)fwd_name;
    return y;
}

/* The op type of a gradient node named `base` (TF names some after the Python call). */
static const char *grad_op_type(const char *base) {
    static const struct { const char *from, *to; } map[] = {
        {"Mul_1", "Mul"}, {"mul", "Mul"}, {"mul_1", "Mul"}, {"sub", "Sub"},
        {"RealDiv_1", "RealDiv"}, {"RealDiv_2", "RealDiv"}, {"SelectV2_1", "SelectV2"},
        {"zeros_like", "ZerosLike"}, {"transpose", "Transpose"}, {"MatMul_1", "MatMul"},
        {"BatchMatMulV2_1", "BatchMatMulV2"}, {"truediv", "RealDiv"}, {"concat", "ConcatV2"},
        {"stack", "Pack"}, {"Einsum_1", "Einsum"},
    };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (!strcmp(base, map[k].from)) return map[k].to;
    return base;
}

/* A gradient op of forward op o: "gradients/<fwd>_grad/<base>", shaped like tensor `like`. */
static int gop(struct zb *b, const struct tape_op *o, const char *base, const int *ins, int n,
               int like) {
    if (b->st || like < 0) return -1;
    char full[NAME_MAX_LEN + 64];
    const char *op = grad_op_type(base);
    tg_sfmt(full, sizeof full, "gradients/%s_grad/%s",
         dp_graph_node(b->g, (size_t)o->node)->name, base);
    int y = tg_emit(b, full, op, GPU_DEV, ins, n, b->t[like].n_dims, b->t[like].dims, b->t[like].dt);
    if (y >= 0) b->t[y].grad = false;
    return y;
}

/* The gradient op TensorFlow emits for a rearranging copy (zb_copy), shaped like its input. */
static const char *copy_grad(const char *op) {
    static const struct { const char *fwd, *grad; } map[] = {
        {"StridedSlice", "StridedSliceGrad"}, {"Slice", "Pad"}, {"Pad", "Slice"},
        {"PadV2", "Slice"}, {"MirrorPad", "MirrorPadGrad"}, {"Tile", "Sum"},
        {"BroadcastTo", "Sum"}, {"GatherV2", "UnsortedSegmentSum"},
        {"ResizeNearestNeighbor", "ResizeNearestNeighborGrad"},
        {"ResizeBilinear", "ResizeBilinearGrad"}, {"ResizeBicubic", "ResizeBicubicGrad"},
    };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (!strcmp(op, map[k].fwd)) return map[k].grad;
    return "Identity";
}

/* Splits an einsum equation "ab,bc->ac" into its operands' and output's subscripts; false when
 * it does not have n operands and an output. */
static bool einsum_split(const char *eq, char lhs[2][96], char *out, int n) {
    const char *arrow = strstr(eq, "->"), *comma = strchr(eq, ',');
    if (!arrow || (n == 2) != (comma && comma < arrow) || strlen(arrow + 2) >= 96) return false;
    size_t l0 = (size_t)((n == 2 ? comma : arrow) - eq);
    if (l0 >= 96 || (n == 2 && (size_t)(arrow - comma - 1) >= 96)) return false;
    memcpy(lhs[0], eq, l0);
    lhs[0][l0] = '\0';
    if (n == 2) {
        memcpy(lhs[1], comma + 1, (size_t)(arrow - comma - 1));
        lhs[1][arrow - comma - 1] = '\0';
    }
    strcpy(out, arrow + 2);
    return true;
}

/* Reduces a broadcast gradient g back to the shape of target (Sum + Reshape). */
static int unbroadcast(struct zb *b, const struct tape_op *o, int g, int target) {
    if (g < 0 || tg_same_dims(&b->t[g], &b->t[target])) return g;
    int s = gop(b, o, "Sum", &g, 1, target);
    return gop(b, o, "Reshape", &s, 1, target);
}

void tg_backward_op(struct zb *b, const struct tape_op *o) {
    const int *in = &b->pool[o->in0], *out = &b->pool[o->out0];
    int dy[MAX_FAN];
    const char *fname = dp_graph_node(b->g, (size_t)o->node)->name;
    char fname_copy[NAME_MAX_LEN];
    tg_sfmt(fname_copy, sizeof fname_copy, "%s", fname);
    bool any = false;
    for (int k = 0; k < o->n_out && k < MAX_FAN; k++) {
        dy[k] = tg_grad_sum(b, out[k], fname_copy);
        any |= dy[k] >= 0;
    }
    if (!any || b->st) return;
    int g = dy[0], y = out[0];
    int x = o->n_in > 0 ? in[0] : -1, w = o->n_in > 1 ? in[1] : -1;
    bool gx = x >= 0 && b->t[x].grad, gw = w >= 0 && b->t[w].grad;
    const char *op = o->op;
    switch (o->kind) {
    case K_CONV:
    case K_DWCONV: {
        bool dw = o->kind == K_DWCONV, vol = b->t[x].n_dims == 5; /* Conv3D */
        int64_t rank = b->t[x].n_dims;
        char full[NAME_MAX_LEN + 64];
        tg_sfmt(full, sizeof full, "gradients/%s_grad/ShapeN", fname_copy);
        int shapes = tg_emit(b, full, "ShapeN", GPU_DEV, &x, 1, 1, &rank, DP_DTYPE_I32);
        if (gx) {
            int ins[3] = {shapes, w, g};
            tg_add_contrib(b, x, gop(b, o, dw ? "DepthwiseConv2dNativeBackpropInput"
                                           : vol ? "Conv3DBackpropInputV2"
                                                 : "Conv2DBackpropInput", ins, 3, x));
        }
        if (gw) {
            int ins[3] = {x, shapes, g};
            tg_add_contrib(b, w, gop(b, o, dw ? "DepthwiseConv2dNativeBackpropFilter"
                                           : vol ? "Conv3DBackpropFilterV2"
                                                 : "Conv2DBackpropFilter", ins, 3, w));
        }
        break;
    }
    case K_BIAS:
        tg_add_contrib(b, x, g);
        if (gw) tg_add_contrib(b, w, gop(b, o, "BiasAddGrad", &g, 1, w));
        break;
    case K_BN: {
        int ins[4] = {g, x, w, y};
        int r = gop(b, o, "FusedBatchNormGradV3", ins, 4, x);
        if (r < 0) break;
        tg_add_contrib(b, x, r);
        for (int k = 1; k < 3; k++) {
            int p = in[k];
            if (!b->t[p].grad) continue;
            tg_add_contrib(b, p, tg_new_tensor(b, b->t[r].node, b->t[p].n_dims, b->t[p].dims,
                                         b->t[p].dt, false));
        }
        break;
    }
    case K_UNARY: {
        if (!gx) break;
        int r = -1;
        if (!strcmp(op, "Relu") || !strcmp(op, "Relu6") || !strcmp(op, "Elu")) {
            int ins[2] = {g, y};
            char gn[32];
            tg_sfmt(gn, sizeof gn, "%sGrad", op);
            r = gop(b, o, gn, ins, 2, x);
        } else if (!strcmp(op, "LeakyRelu") || !strcmp(op, "Softplus")) {
            int ins[2] = {g, x};
            char gn[32];
            tg_sfmt(gn, sizeof gn, "%sGrad", op);
            r = gop(b, o, gn, ins, 2, x);
        } else if (!strcmp(op, "Sigmoid") || !strcmp(op, "Tanh") || !strcmp(op, "Rsqrt") ||
                   !strcmp(op, "Sqrt")) {
            int ins[2] = {y, g};
            char gn[32];
            tg_sfmt(gn, sizeof gn, "%sGrad", op);
            r = gop(b, o, gn, ins, 2, x);
        } else if (!strcmp(op, "LRN")) {
            int ins[3] = {g, x, y};
            r = gop(b, o, "LRNGrad", ins, 3, x);
        } else if (!strcmp(op, "Neg")) {
            r = gop(b, o, "Neg", &g, 1, x);
        } else if (!strcmp(op, "Exp")) {
            int ins[2] = {g, y};
            r = gop(b, o, "Mul", ins, 2, x);
        } else if (!strcmp(op, "Log")) {
            int rc = gop(b, o, "Reciprocal", &x, 1, x);
            int ins[2] = {g, rc};
            r = gop(b, o, "Mul", ins, 2, x);
        } else if (!strcmp(op, "Square")) {
            int m = gop(b, o, "Mul", &x, 1, x);
            int ins[2] = {g, m};
            r = gop(b, o, "Mul_1", ins, 2, x);
        } else if (!strcmp(op, "Erf")) {
            int sq = gop(b, o, "Square", &x, 1, x);
            int ng = gop(b, o, "Neg", &sq, 1, x);
            int ex = gop(b, o, "Exp", &ng, 1, x);
            int ins[2] = {g, ex};
            r = gop(b, o, "Mul", ins, 2, x);
        } else if (!strcmp(op, "Identity")) {
            r = g;
        } else { /* any other element-wise op: its TF-style gradient op from dy and x */
            int ins[2] = {g, x};
            char gn[40];
            tg_sfmt(gn, sizeof gn, "%sGrad", op);
            r = gop(b, o, gn, ins, 2, x);
        }
        tg_add_contrib(b, x, r);
        break;
    }
    case K_CAST:
        if (gx) {
            char full[NAME_MAX_LEN + 64];
            tg_sfmt(full, sizeof full, "gradients/%s_grad/Cast", fname_copy);
            int r = tg_emit(b, full, "Cast", GPU_DEV, &g, 1, b->t[x].n_dims, b->t[x].dims,
                         b->t[x].dt);
            if (r >= 0) {
                b->t[r].grad = false;
                tg_set_attr(b, b->t[r].node, "DstT", "%s", dp_dtype_name(b->t[x].dt));
            }
            tg_add_contrib(b, x, r);
        }
        break;
    case K_BINARY: {
        int ga = -1, gb = -1;
        if (!strcmp(op, "AddV2")) {
            ga = g;
            gb = g;
        } else if (!strcmp(op, "Sub")) {
            ga = g;
            if (gw) gb = gop(b, o, "Neg", &g, 1, y);
        } else if (!strcmp(op, "Mul")) {
            int i1[2] = {g, w}, i2[2] = {x, g};
            if (gx) ga = gop(b, o, "Mul", i1, 2, y);
            if (gw) gb = gop(b, o, "Mul_1", i2, 2, y);
        } else if (!strcmp(op, "RealDiv")) {
            int i1[2] = {g, w};
            if (gx) ga = gop(b, o, "RealDiv", i1, 2, y);
            if (gw) {
                int ng = gop(b, o, "Neg", &x, 1, x);
                int i2[2] = {ng, w};
                int d1 = gop(b, o, "RealDiv_1", i2, 2, y);
                int i3[2] = {d1, w};
                int d2 = gop(b, o, "RealDiv_2", i3, 2, y);
                int i4[2] = {g, d2};
                gb = gop(b, o, "mul", i4, 2, y);
            }
        } else if (!strcmp(op, "SquaredDifference")) {
            char full[NAME_MAX_LEN + 64];
            tg_sfmt(full, sizeof full, "gradients/%s_grad/scalar", fname_copy);
            int sc = tg_emit(b, full, "Const", GPU_DEV, NULL, 0, 0, NULL, b->t[g].dt);
            int i1[2] = {sc, g};
            int m = gop(b, o, "Mul", i1, 2, y);
            int i2[2] = {x, w};
            int s = gop(b, o, "sub", i2, 2, y);
            int i3[2] = {m, s};
            ga = gop(b, o, "mul_1", i3, 2, y);
            if (gw) gb = gop(b, o, "Neg", &ga, 1, y);
        } else if (!strcmp(op, "Maximum") || !strcmp(op, "Minimum")) {
            int i1[2] = {x, w};
            int mask = gop(b, o, "GreaterEqual", i1, 2, y);
            int z = gop(b, o, "zeros_like", &g, 1, y);
            int i2[3] = {mask, g, z}, i3[3] = {mask, z, g};
            if (gx) ga = gop(b, o, "SelectV2", i2, 3, y);
            if (gw) gb = gop(b, o, "SelectV2_1", i3, 3, y);
        } else if (!strcmp(op, "Pow")) {
            int i1[2] = {w, w};
            int s = gop(b, o, "sub", i1, 2, w);
            int i2[2] = {x, s};
            int p = gop(b, o, "Pow", i2, 2, y);
            int i3[2] = {w, p};
            int m = gop(b, o, "mul", i3, 2, y);
            int i4[2] = {g, m};
            ga = gop(b, o, "mul_1", i4, 2, y);
        } else {
            ga = g;
        }
        if (gx) tg_add_contrib(b, x, unbroadcast(b, o, ga, x));
        if (gw) tg_add_contrib(b, w, unbroadcast(b, o, gb, w));
        break;
    }
    case K_MATMUL: {
        bool tx = o->ia[0], ty = o->ia[1], batch = b->t[w].n_dims > 2;
        const char *mop = batch ? "BatchMatMulV2" : "MatMul";
        char name2[40];
        tg_sfmt(name2, sizeof name2, "%s_1", mop);
        /* TF's _MatMulGrad: operands and transposes of dA and dB for each (tx, ty). */
        int k = (tx ? 2 : 0) + (ty ? 1 : 0);
        static const int ga_sw[4] = {0, 0, 1, 1}, gb_sw[4] = {0, 1, 0, 1};
        static const bool ga_t[4][2] = {{false, true}, {false, false}, {false, true}, {true, true}};
        static const bool gb_t[4][2] = {{true, false}, {true, false}, {false, false}, {true, true}};
        if (gx) {
            int ins[2] = {ga_sw[k] ? w : g, ga_sw[k] ? g : w};
            int r = gop(b, o, mop, ins, 2, x);
            if (r >= 0) tg_matmul_attrs(b, b->t[r].node, batch, ga_t[k][0], ga_t[k][1]);
            tg_add_contrib(b, x, r);
        }
        if (gw) {
            int ins[2] = {gb_sw[k] ? g : x, gb_sw[k] ? x : g};
            int r = gop(b, o, name2, ins, 2, w);
            if (r >= 0) tg_matmul_attrs(b, b->t[r].node, batch, gb_t[k][0], gb_t[k][1]);
            tg_add_contrib(b, w, r);
        }
        break;
    }
    case K_POOL: {
        if (!gx) break;
        char gn[40];
        tg_sfmt(gn, sizeof gn, "%sGrad", op); /* MaxPoolGrad, AvgPool3DGrad, ... */
        if (!strncmp(op, "MaxPool", 7)) {
            int ins[3] = {x, y, g};
            tg_add_contrib(b, x, gop(b, o, gn, ins, 3, x));
        } else {
            int64_t rank = b->t[x].n_dims;
            char full[NAME_MAX_LEN + 64];
            tg_sfmt(full, sizeof full, "gradients/%s_grad/Shape", fname_copy);
            int s = tg_emit(b, full, "Const", GPU_DEV, NULL, 0, 1, &rank, DP_DTYPE_I32);
            int ins[2] = {s, g};
            tg_add_contrib(b, x, gop(b, o, gn, ins, 2, x));
        }
        break;
    }
    case K_CONVT: { /* y = conv2d_transpose(x, w) (conv3d_transpose): TF's
                     * _Conv2DBackpropInputGrad (_Conv3DBackpropInputGrad) */
        int xt = in[2], wt = in[1];
        int64_t rank = b->t[wt].n_dims;
        bool vol = rank == 5;
        if (b->t[xt].grad) {
            int ins[2] = {g, wt};
            int r = gop(b, o, vol ? "Conv3D" : "Conv2D", ins, 2, xt);
            tg_add_contrib(b, xt, r);
        }
        if (b->t[wt].grad) {
            char full[NAME_MAX_LEN + 64];
            tg_sfmt(full, sizeof full, "gradients/%s_grad/filter_sizes", fname_copy);
            int fs = tg_emit(b, full, "Const", GPU_DEV, NULL, 0, 1, &rank, DP_DTYPE_I32);
            int ins[3] = {g, fs, xt};
            tg_add_contrib(b, wt, gop(b, o, vol ? "Conv3DBackpropFilterV2"
                                               : "Conv2DBackpropFilter", ins, 3, wt));
        }
        break;
    }
    case K_GENERIC: {
        /* An op with no rule of its own (an imported custom op): one "<op>Grad" reading dy and
         * the op's inputs, whose outputs are the gradients of the float inputs that need one
         * (the node shaped like the first), so backprop goes on upstream of it. */
        char gn[NAME_MAX_LEN];
        tg_sfmt(gn, sizeof gn, "%sGrad", dp_graph_node(b->g, (size_t)o->node)->op);
        int ins[MAX_FAN], ni = 0, r = -1;
        ins[ni++] = g;
        for (int k = 0; k < o->n_in && ni < MAX_FAN; k++) ins[ni++] = in[k];
        for (int k = 0; k < o->n_in; k++) {
            int t = in[k];
            if (!b->t[t].grad || !dp_dtype_is_float(b->t[t].dt)) continue;
            if (r < 0) {
                r = gop(b, o, gn, ins, ni, t);
                tg_add_contrib(b, t, r);
            } else {
                tg_add_contrib(b, t, tg_new_tensor(b, b->t[r].node, b->t[t].n_dims,
                                                   b->t[t].dims, b->t[t].dt, false));
            }
            if (r < 0) break;
        }
        break;
    }
    case K_REDUCE: {
        if (!gx) break;
        /* Reshape to keepdims shape, Tile up to x, divide by the count for Mean. */
        int r = gop(b, o, "Reshape", &g, 1, g);
        if (r >= 0 && !o->ia[1]) {
            int nd = 0;
            int64_t dims[DP_MAX_DIMS];
            for (int d = 0; d < b->t[x].n_dims; d++)
                dims[nd++] = ((unsigned)o->ia[0] & (1u << d)) ? 1 : b->t[x].dims[d];
            tg_set_shape(b, r, nd, dims);
        }
        int t = gop(b, o, "Tile", &r, 1, x);
        if (!strcmp(op, "Mean")) {
            int ins[1] = {t};
            t = gop(b, o, "truediv", ins, 1, x);
        }
        tg_add_contrib(b, x, t);
        break;
    }
    case K_SOFTMAX: {
        if (!gx) break;
        int i1[2] = {g, y};
        int m = gop(b, o, "mul", i1, 2, y);
        int s = gop(b, o, "Sum", &m, 1, y);
        if (s >= 0 && b->t[s].n_dims > 0) {
            int64_t dims[DP_MAX_DIMS];
            memcpy(dims, b->t[s].dims, sizeof dims);
            dims[b->t[s].n_dims - 1] = 1;
            tg_set_shape(b, s, b->t[s].n_dims, dims);
        }
        int i2[2] = {g, s};
        int d = gop(b, o, "sub", i2, 2, y);
        int i3[2] = {d, y};
        tg_add_contrib(b, x, gop(b, o, "mul_1", i3, 2, y));
        break;
    }
    case K_CONCAT: {
        int off = -1;
        for (int i = 0; i < o->n_in; i++) {
            if (!b->t[in[i]].grad) continue;
            if (off < 0) {
                int64_t n = o->n_in;
                char full[NAME_MAX_LEN + 64];
                tg_sfmt(full, sizeof full, "gradients/%s_grad/ConcatOffset", fname_copy);
                off = tg_emit(b, full, "ConcatOffset", GPU_DEV, NULL, 0, 1, &n, DP_DTYPE_I32);
            }
            int ins[2] = {g, off};
            tg_add_contrib(b, in[i], gop(b, o, "Slice", ins, 2, in[i]));
        }
        break;
    }
    case K_SPLIT:
    case K_UNSTACK: {
        int parts[MAX_FAN], np = o->n_out < MAX_FAN ? o->n_out : MAX_FAN;
        for (int k = 0; k < np; k++)
            parts[k] = dy[k] >= 0 ? dy[k] : gop(b, o, "zeros_like", &out[k], 1, out[k]);
        tg_add_contrib(b, x, gop(b, o, o->kind == K_SPLIT ? "concat" : "stack", parts, np, x));
        break;
    }
    case K_STACK: {
        int parts[MAX_FAN];
        int np = o->n_in < MAX_FAN ? o->n_in : MAX_FAN;
        char full[NAME_MAX_LEN + 64];
        tg_sfmt(full, sizeof full, "gradients/%s_grad/unstack", fname_copy);
        int u = tg_emit(b, full, "Unpack", GPU_DEV, &g, 1, b->t[x].n_dims, b->t[x].dims, b->t[x].dt);
        for (int k = 0; k < np && u >= 0; k++) {
            parts[k] = k == 0 ? u : tg_new_tensor(b, b->t[u].node, b->t[x].n_dims, b->t[x].dims,
                                               b->t[x].dt, false);
            b->t[parts[k]].grad = false;
            tg_add_contrib(b, in[k], parts[k]);
        }
        break;
    }
    case K_RESHAPE:
        if (gx) tg_add_contrib(b, x, gop(b, o, "Reshape", &g, 1, x));
        break;
    case K_TRANSPOSE:
        if (gx) tg_add_contrib(b, x, gop(b, o, "transpose", &g, 1, x));
        break;
    case K_GATHER:
        if (gx) {
            int ins[2] = {g, w};
            tg_add_contrib(b, x, gop(b, o, "UnsortedSegmentSum", ins, 2, x));
        }
        break;
    case K_SLICE:
        if (gx) tg_add_contrib(b, x, gop(b, o, "StridedSliceGrad", &g, 1, x));
        break;
    case K_COPY:
        if (gx) tg_add_contrib(b, x, gop(b, o, copy_grad(op), &g, 1, x));
        break;
    case K_SELECT: { /* SelectV2(c, x, y): dx = SelectV2(c, dy, 0), dy = SelectV2(c, 0, dy) */
        int c = x, a = w, e = in[2];
        int z = gop(b, o, "zeros_like", &g, 1, y);
        int i1[3] = {c, g, z}, i2[3] = {c, z, g};
        if (b->t[a].grad)
            tg_add_contrib(b, a, unbroadcast(b, o, gop(b, o, "SelectV2", i1, 3, y), a));
        if (b->t[e].grad)
            tg_add_contrib(b, e, unbroadcast(b, o, gop(b, o, "SelectV2_1", i2, 3, y), e));
        break;
    }
    case K_EINSUM: {
        /* "A,B->C": dA = einsum("C,B->A", dC, B), dB = einsum("A,C->B", A, dC). */
        const char *eq = dp_node_attr(dp_graph_node(b->g, (size_t)o->node), "equation");
        char lhs[2][96], res[96], geq[256];
        if (!eq || !einsum_split(eq, lhs, res, o->n_in)) break;
        for (int k = 0; k < o->n_in; k++) {
            int t = in[k];
            if (!b->t[t].grad) continue;
            int ins[2];
            if (o->n_in == 1) {
                tg_sfmt(geq, sizeof geq, "%s->%s", res, lhs[0]);
                ins[0] = g;
            } else if (k == 0) {
                tg_sfmt(geq, sizeof geq, "%s,%s->%s", res, lhs[1], lhs[0]);
                ins[0] = g;
                ins[1] = in[1];
            } else {
                tg_sfmt(geq, sizeof geq, "%s,%s->%s", lhs[0], res, lhs[1]);
                ins[0] = in[0];
                ins[1] = g;
            }
            int r = gop(b, o, k ? "Einsum_1" : "Einsum", ins, o->n_in, t);
            tg_set_attr(b, r >= 0 ? b->t[r].node : -1, "equation", "%s", geq);
            tg_add_contrib(b, t, r);
        }
        break;
    }
    case K_XENT:
        if (gx) {
            int e = gop(b, o, "ExpandDims", &g, 1, g);
            int ins[2] = {e, o->ia[0]};
            tg_add_contrib(b, x, gop(b, o, "mul", ins, 2, x));
        }
        break;
    }
}
