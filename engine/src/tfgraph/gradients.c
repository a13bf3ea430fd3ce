/* gradients.c: TensorFlow's gradients() over the builder's tape: for each forward op, in
 * reverse, the gradient op (or small op group) TF emits, named "gradients/<op>_grad/...", with
 * an AddN where a tensor fans out. One backward function per tape kind (the table `backward`),
 * and per gradient rule of the op registry (dp_op_grad) for the element-wise and binary kinds,
 * as ggml keeps one function per op: no op names are compared here. */
#include "tfgraph_impl.h"

#include <string.h>

#include "dp/ops.h"

/* --- gradients ----------------------------------------------------------------------------- */

void zb_add_contrib(struct zb *b, int target, int grad) {
    if (b->st || target < 0 || grad < 0 || !b->t[target].grad) return;
    if (!zb_grow(b, (void **)&b->c, b->n_c, &b->cap_c, sizeof *b->c)) return;
    b->c[b->n_c] = (struct contrib){grad, b->t[target].first};
    b->t[target].first = b->n_c++;
}

/* The summed gradient of tensor t (AddN over its contributions), or -1 when it has none. */
int zb_grad_sum(struct zb *b, int t, const char *fwd_name) {
    int ids[64], n = 0;
    for (int c = b->t[t].first; c >= 0; c = b->c[c].next) {
        if (n == 64) { /* very wide fan-in: fold what we have so far */
            char full[NAME_MAX_LEN + 32];
            zb_sfmt(full, sizeof full, "gradients/%s_grad/AddN", fwd_name);
            ids[0] = zb_emit(b, full, "AddN", GPU_DEV, ids, n, b->t[t].n_dims, b->t[t].dims,
                          b->t[ids[0]].dt);
            n = 1;
        }
        ids[n++] = b->c[c].t;
    }
    if (n == 0) return -1;
    if (n == 1) return ids[0];
    char full[NAME_MAX_LEN + 32];
    zb_sfmt(full, sizeof full, "gradients/AddN");
    int y = zb_emit(b, full, "AddN", GPU_DEV, ids, n, b->t[t].n_dims, b->t[t].dims,
                    b->t[ids[0]].dt);
    if (y >= 0) zb_set_attr(b, b->t[y].node, "N", "%d", n);
    (void)fwd_name;
    return y;
}


/* One forward op being differentiated: its tensors and the summed gradients of its outputs. */
struct bw {
    struct zb            *b;
    const struct tape_op *o;
    const int            *in, *out;
    int                   dy[MAX_FAN]; /* per output, -1 when it has none */
    int                   g, x, w, y;  /* dy of output 0, inputs 0 and 1, output 0 (-1: none) */
    bool                  gx, gw;      /* inputs 0 and 1 take a gradient */
    char                  fname[NAME_MAX_LEN]; /* the forward node's name */
};

/* A gradient op of type `op` of the forward op: "gradients/<fwd>_grad/<base>", shaped like tensor
 * `like`. */
static int gopt(const struct bw *c, const char *base, const char *op, const int *ins, int n,
                int like) {
    struct zb *b = c->b;
    if (b->st || like < 0) return -1;
    char full[NAME_MAX_LEN + 64];
    zb_sfmt(full, sizeof full, "gradients/%s_grad/%s",
            dp_graph_node(b->g, (size_t)c->o->node)->name, base);
    const struct tensor *l = &b->t[like];
    int y = zb_emit(b, full, op, GPU_DEV, ins, n, l->n_dims, l->dims, l->dt);
    if (y >= 0) b->t[y].grad = false;
    return y;
}

/* The same named after its type. */
static int gop(const struct bw *c, const char *op, const int *ins, int n, int like) {
    return gopt(c, op, op, ins, n, like);
}

/* A gradient-side node "gradients/<fwd>_grad/<base>" of its own shape (shapes, constants). */
static int gemit(const struct bw *c, const char *base, const char *op, const int *ins, int n,
                 int n_dims, const int64_t *dims, enum dp_dtype dt) {
    char full[NAME_MAX_LEN + 64];
    zb_sfmt(full, sizeof full, "gradients/%s_grad/%s", c->fname, base);
    return zb_emit(c->b, full, op, GPU_DEV, ins, n, n_dims, dims, dt);
}

/* "<op>Grad" of the forward op's type from ins, shaped like x. */
static int named_grad(const struct bw *c, const int *ins, int n) {
    char gn[40];
    zb_sfmt(gn, sizeof gn, "%sGrad", c->o->op);
    return gop(c, gn, ins, n, c->x);
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
static int unbroadcast(const struct bw *c, int g, int target) {
    struct zb *b = c->b;
    if (g < 0 || zb_same_dims(&b->t[g], &b->t[target])) return g;
    int s = gop(c, "Sum", &g, 1, target);
    return gop(c, "Reshape", &s, 1, target);
}

/* --- element-wise ops: the gradient of x, one function per rule ----------------------------- */

static int un_default(const struct bw *c) { /* TF-style "<op>Grad" from dy and x */
    int ins[2] = {c->g, c->x};
    return named_grad(c, ins, 2);
}
static int un_dy_y(const struct bw *c) {
    int ins[2] = {c->g, c->y};
    return named_grad(c, ins, 2);
}
static int un_y_dy(const struct bw *c) {
    int ins[2] = {c->y, c->g};
    return named_grad(c, ins, 2);
}
static int un_lrn(const struct bw *c) {
    int ins[3] = {c->g, c->x, c->y};
    return gop(c, "LRNGrad", ins, 3, c->x);
}
static int un_neg(const struct bw *c) { return gop(c, "Neg", &c->g, 1, c->x); }
static int un_exp(const struct bw *c) {
    int ins[2] = {c->g, c->y};
    return gop(c, "Mul", ins, 2, c->x);
}
static int un_log(const struct bw *c) {
    int rc = gop(c, "Reciprocal", &c->x, 1, c->x);
    int ins[2] = {c->g, rc};
    return gop(c, "Mul", ins, 2, c->x);
}
static int un_square(const struct bw *c) {
    int m = gop(c, "Mul", &c->x, 1, c->x);
    int ins[2] = {c->g, m};
    return gopt(c, "Mul_1", "Mul", ins, 2, c->x);
}
static int un_erf(const struct bw *c) {
    int sq = gop(c, "Square", &c->x, 1, c->x);
    int ng = gop(c, "Neg", &sq, 1, c->x);
    int ex = gop(c, "Exp", &ng, 1, c->x);
    int ins[2] = {c->g, ex};
    return gop(c, "Mul", ins, 2, c->x);
}
static int un_identity(const struct bw *c) { return c->g; }

/* Rules the table leaves NULL take un_default. */
static int (*const unary_rule[DP_OPGRAD_COUNT])(const struct bw *) = {
    [DP_OPGRAD_GRAD_DY_Y] = un_dy_y, [DP_OPGRAD_GRAD_Y_DY] = un_y_dy, [DP_OPGRAD_LRN] = un_lrn,
    [DP_OPGRAD_NEG] = un_neg,        [DP_OPGRAD_EXP] = un_exp,        [DP_OPGRAD_LOG] = un_log,
    [DP_OPGRAD_SQUARE] = un_square,  [DP_OPGRAD_ERF] = un_erf,
    [DP_OPGRAD_IDENTITY] = un_identity,
};

/* --- binary ops: the gradients of x (*ga) and y (*gb) before unbroadcasting ------------------ */

static void bin_default(const struct bw *c, int *ga, int *gb) {
    *ga = c->g;
    (void)gb;
}
static void bin_add(const struct bw *c, int *ga, int *gb) { *ga = *gb = c->g; }
static void bin_sub(const struct bw *c, int *ga, int *gb) {
    *ga = c->g;
    if (c->gw) *gb = gop(c, "Neg", &c->g, 1, c->y);
}
static void bin_mul(const struct bw *c, int *ga, int *gb) {
    int i1[2] = {c->g, c->w}, i2[2] = {c->x, c->g};
    if (c->gx) *ga = gop(c, "Mul", i1, 2, c->y);
    if (c->gw) *gb = gopt(c, "Mul_1", "Mul", i2, 2, c->y);
}
static void bin_div(const struct bw *c, int *ga, int *gb) {
    int i1[2] = {c->g, c->w};
    if (c->gx) *ga = gop(c, "RealDiv", i1, 2, c->y);
    if (!c->gw) return;
    int ng = gop(c, "Neg", &c->x, 1, c->x);
    int i2[2] = {ng, c->w};
    int d1 = gopt(c, "RealDiv_1", "RealDiv", i2, 2, c->y);
    int i3[2] = {d1, c->w};
    int d2 = gopt(c, "RealDiv_2", "RealDiv", i3, 2, c->y);
    int i4[2] = {c->g, d2};
    *gb = gopt(c, "mul", "Mul", i4, 2, c->y);
}
static void bin_squared_diff(const struct bw *c, int *ga, int *gb) {
    int sc = gemit(c, "scalar", "Const", NULL, 0, 0, NULL, c->b->t[c->g].dt);
    int i1[2] = {sc, c->g};
    int m = gop(c, "Mul", i1, 2, c->y);
    int i2[2] = {c->x, c->w};
    int s = gopt(c, "sub", "Sub", i2, 2, c->y);
    int i3[2] = {m, s};
    *ga = gopt(c, "mul_1", "Mul", i3, 2, c->y);
    if (c->gw) *gb = gop(c, "Neg", ga, 1, c->y);
}
static void bin_maxmin(const struct bw *c, int *ga, int *gb) {
    int i1[2] = {c->x, c->w};
    int mask = gop(c, "GreaterEqual", i1, 2, c->y);
    int z = gopt(c, "zeros_like", "ZerosLike", &c->g, 1, c->y);
    int i2[3] = {mask, c->g, z}, i3[3] = {mask, z, c->g};
    if (c->gx) *ga = gop(c, "SelectV2", i2, 3, c->y);
    if (c->gw) *gb = gopt(c, "SelectV2_1", "SelectV2", i3, 3, c->y);
}
static void bin_pow(const struct bw *c, int *ga, int *gb) {
    int i1[2] = {c->w, c->w};
    int s = gopt(c, "sub", "Sub", i1, 2, c->w);
    int i2[2] = {c->x, s};
    int p = gop(c, "Pow", i2, 2, c->y);
    int i3[2] = {c->w, p};
    int m = gopt(c, "mul", "Mul", i3, 2, c->y);
    int i4[2] = {c->g, m};
    *ga = gopt(c, "mul_1", "Mul", i4, 2, c->y);
    (void)gb;
}

/* Rules the table leaves NULL take bin_default. */
static void (*const binary_rule[DP_OPGRAD_COUNT])(const struct bw *, int *, int *) = {
    [DP_OPGRAD_ADD] = bin_add, [DP_OPGRAD_SUB] = bin_sub,           [DP_OPGRAD_MUL] = bin_mul,
    [DP_OPGRAD_DIV] = bin_div, [DP_OPGRAD_SQUARED_DIFF] = bin_squared_diff,
    [DP_OPGRAD_MAXMIN] = bin_maxmin, [DP_OPGRAD_POW] = bin_pow,
};

/* --- one backward function per tape kind ---------------------------------------------------- */

static void bw_conv(const struct bw *c) {
    struct zb *b = c->b;
    int x = c->x, w = c->w;
    bool dw = c->o->kind == K_DWCONV, vol = b->t[x].n_dims == 5; /* Conv3D */
    int64_t rank = b->t[x].n_dims;
    int shapes = gemit(c, "ShapeN", "ShapeN", &x, 1, 1, &rank, DP_DTYPE_I32);
    if (c->gx) {
        int ins[3] = {shapes, w, c->g};
        zb_add_contrib(b, x, gop(c, dw ? "DepthwiseConv2dNativeBackpropInput"
                                    : vol ? "Conv3DBackpropInputV2" : "Conv2DBackpropInput",
                                 ins, 3, x));
    }
    if (c->gw) {
        int ins[3] = {x, shapes, c->g};
        zb_add_contrib(b, w, gop(c, dw ? "DepthwiseConv2dNativeBackpropFilter"
                                    : vol ? "Conv3DBackpropFilterV2" : "Conv2DBackpropFilter",
                                 ins, 3, w));
    }
}

static void bw_bias(const struct bw *c) {
    zb_add_contrib(c->b, c->x, c->g);
    if (c->gw) zb_add_contrib(c->b, c->w, gop(c, "BiasAddGrad", &c->g, 1, c->w));
}

static void bw_bn(const struct bw *c) {
    struct zb *b = c->b;
    int ins[4] = {c->g, c->x, c->w, c->y};
    int r = gop(c, "FusedBatchNormGradV3", ins, 4, c->x);
    if (r < 0) return;
    zb_add_contrib(b, c->x, r);
    for (int k = 1; k < 3; k++) {
        int p = c->in[k];
        if (!b->t[p].grad) continue;
        zb_add_contrib(b, p, zb_new_tensor(b, b->t[r].node, b->t[p].n_dims, b->t[p].dims,
                                           b->t[p].dt, false));
    }
}

static void bw_unary(const struct bw *c) {
    if (!c->gx) return;
    int (*rule)(const struct bw *) = unary_rule[dp_op_grad(c->o->op)];
    zb_add_contrib(c->b, c->x, (rule ? rule : un_default)(c));
}

static void bw_cast(const struct bw *c) {
    struct zb *b = c->b;
    int x = c->x;
    if (!c->gx) return;
    int r = gemit(c, "Cast", "Cast", &c->g, 1, b->t[x].n_dims, b->t[x].dims, b->t[x].dt);
    if (r >= 0) {
        b->t[r].grad = false;
        zb_set_attr(b, b->t[r].node, "DstT", "%s", dp_dtype_name(b->t[x].dt));
    }
    zb_add_contrib(b, x, r);
}

static void bw_binary(const struct bw *c) {
    int ga = -1, gb = -1;
    void (*rule)(const struct bw *, int *, int *) = binary_rule[dp_op_grad(c->o->op)];
    (rule ? rule : bin_default)(c, &ga, &gb);
    if (c->gx) zb_add_contrib(c->b, c->x, unbroadcast(c, ga, c->x));
    if (c->gw) zb_add_contrib(c->b, c->w, unbroadcast(c, gb, c->w));
}

static void bw_matmul(const struct bw *c) {
    struct zb *b = c->b;
    int x = c->x, w = c->w, g = c->g;
    bool tx = c->o->ia[0], ty = c->o->ia[1], batch = b->t[w].n_dims > 2;
    const char *mop = batch ? "BatchMatMulV2" : "MatMul";
    char name2[40];
    zb_sfmt(name2, sizeof name2, "%s_1", mop);
    /* TF's _MatMulGrad: operands and transposes of dA and dB for each (tx, ty). */
    int k = (tx ? 2 : 0) + (ty ? 1 : 0);
    static const int ga_sw[4] = {0, 0, 1, 1}, gb_sw[4] = {0, 1, 0, 1};
    static const bool ga_t[4][2] = {{false, true}, {false, false}, {false, true}, {true, true}};
    static const bool gb_t[4][2] = {{true, false}, {true, false}, {false, false}, {true, true}};
    if (c->gx) {
        int ins[2] = {ga_sw[k] ? w : g, ga_sw[k] ? g : w};
        int r = gop(c, mop, ins, 2, x);
        if (r >= 0) zb_matmul_attrs(b, b->t[r].node, batch, ga_t[k][0], ga_t[k][1]);
        zb_add_contrib(b, x, r);
    }
    if (c->gw) {
        int ins[2] = {gb_sw[k] ? g : x, gb_sw[k] ? x : g};
        int r = gopt(c, name2, mop, ins, 2, w);
        if (r >= 0) zb_matmul_attrs(b, b->t[r].node, batch, gb_t[k][0], gb_t[k][1]);
        zb_add_contrib(b, w, r);
    }
}

static void bw_pool(const struct bw *c) {
    struct zb *b = c->b;
    int x = c->x;
    if (!c->gx) return;
    if (dp_op_grad(c->o->op) == DP_OPGRAD_MAXPOOL) {
        int ins[3] = {x, c->y, c->g};
        zb_add_contrib(b, x, named_grad(c, ins, 3)); /* MaxPoolGrad, MaxPool3DGrad */
    } else {
        int64_t rank = b->t[x].n_dims;
        int s = gemit(c, "Shape", "Const", NULL, 0, 1, &rank, DP_DTYPE_I32);
        int ins[2] = {s, c->g};
        zb_add_contrib(b, x, named_grad(c, ins, 2)); /* AvgPoolGrad, AvgPool3DGrad */
    }
}

/* y = conv2d_transpose(x, w) (conv3d_transpose): TF's _Conv2DBackpropInputGrad
 * (_Conv3DBackpropInputGrad). */
static void bw_convt(const struct bw *c) {
    struct zb *b = c->b;
    int xt = c->in[2], wt = c->in[1];
    int64_t rank = b->t[wt].n_dims;
    bool vol = rank == 5;
    if (b->t[xt].grad) {
        int ins[2] = {c->g, wt};
        zb_add_contrib(b, xt, gop(c, vol ? "Conv3D" : "Conv2D", ins, 2, xt));
    }
    if (b->t[wt].grad) {
        int fs = gemit(c, "filter_sizes", "Const", NULL, 0, 1, &rank, DP_DTYPE_I32);
        int ins[3] = {c->g, fs, xt};
        zb_add_contrib(b, wt, gop(c, vol ? "Conv3DBackpropFilterV2" : "Conv2DBackpropFilter",
                                  ins, 3, wt));
    }
}

/* An op with no rule of its own (an imported custom op): one "<op>Grad" reading dy and the op's
 * inputs, whose outputs are the gradients of the float inputs that need one (the node shaped like
 * the first), so backprop goes on upstream of it. */
static void bw_generic(const struct bw *c) {
    struct zb *b = c->b;
    const struct tape_op *o = c->o;
    char gn[NAME_MAX_LEN];
    zb_sfmt(gn, sizeof gn, "%sGrad", dp_graph_node(b->g, (size_t)o->node)->op);
    int ins[MAX_FAN], ni = 0, r = -1;
    ins[ni++] = c->g;
    for (int k = 0; k < o->n_in && ni < MAX_FAN; k++) ins[ni++] = c->in[k];
    for (int k = 0; k < o->n_in; k++) {
        int t = c->in[k];
        if (!b->t[t].grad || !dp_dtype_is_float(b->t[t].dt)) continue;
        if (r < 0) {
            r = gop(c, gn, ins, ni, t);
            zb_add_contrib(b, t, r);
        } else {
            zb_add_contrib(b, t, zb_new_tensor(b, b->t[r].node, b->t[t].n_dims, b->t[t].dims,
                                               b->t[t].dt, false));
        }
        if (r < 0) break;
    }
}

/* Reshape to keepdims shape, Tile up to x, divide by the count for Mean. */
static void bw_reduce(const struct bw *c) {
    struct zb *b = c->b;
    const struct tape_op *o = c->o;
    int x = c->x;
    if (!c->gx) return;
    int r = gop(c, "Reshape", &c->g, 1, c->g);
    if (r >= 0 && !o->ia[1]) {
        int nd = 0;
        int64_t dims[DP_MAX_DIMS];
        for (int d = 0; d < b->t[x].n_dims; d++)
            dims[nd++] = ((unsigned)o->ia[0] & (1u << d)) ? 1 : b->t[x].dims[d];
        zb_set_shape(b, r, nd, dims);
    }
    int t = gop(c, "Tile", &r, 1, x);
    if (dp_op_grad(o->op) == DP_OPGRAD_MEAN) {
        int ins[1] = {t};
        t = gopt(c, "truediv", "RealDiv", ins, 1, x);
    }
    zb_add_contrib(b, x, t);
}

static void bw_softmax(const struct bw *c) {
    struct zb *b = c->b;
    int y = c->y;
    if (!c->gx) return;
    int i1[2] = {c->g, y};
    int m = gopt(c, "mul", "Mul", i1, 2, y);
    int s = gop(c, "Sum", &m, 1, y);
    if (s >= 0 && b->t[s].n_dims > 0) {
        int64_t dims[DP_MAX_DIMS];
        memcpy(dims, b->t[s].dims, sizeof dims);
        dims[b->t[s].n_dims - 1] = 1;
        zb_set_shape(b, s, b->t[s].n_dims, dims);
    }
    int i2[2] = {c->g, s};
    int d = gopt(c, "sub", "Sub", i2, 2, y);
    int i3[2] = {d, y};
    zb_add_contrib(b, c->x, gopt(c, "mul_1", "Mul", i3, 2, y));
}

static void bw_concat(const struct bw *c) {
    struct zb *b = c->b;
    int off = -1;
    for (int i = 0; i < c->o->n_in; i++) {
        if (!b->t[c->in[i]].grad) continue;
        if (off < 0) {
            int64_t n = c->o->n_in;
            off = gemit(c, "ConcatOffset", "ConcatOffset", NULL, 0, 1, &n, DP_DTYPE_I32);
        }
        int ins[2] = {c->g, off};
        zb_add_contrib(b, c->in[i], gop(c, "Slice", ins, 2, c->in[i]));
    }
}

/* K_SPLIT and K_UNSTACK: the parts' gradients (zeros where one has none) joined back. */
static void bw_split(const struct bw *c) {
    const struct tape_op *o = c->o;
    int parts[MAX_FAN], np = o->n_out < MAX_FAN ? o->n_out : MAX_FAN;
    for (int k = 0; k < np; k++)
        parts[k] = c->dy[k] >= 0 ? c->dy[k]
                                 : gopt(c, "zeros_like", "ZerosLike", &c->out[k], 1, c->out[k]);
    zb_add_contrib(c->b, c->x, o->kind == K_SPLIT ? gopt(c, "concat", "ConcatV2", parts, np, c->x)
                                                  : gopt(c, "stack", "Pack", parts, np, c->x));
}

static void bw_stack(const struct bw *c) {
    struct zb *b = c->b;
    int x = c->x;
    int parts[MAX_FAN];
    int np = c->o->n_in < MAX_FAN ? c->o->n_in : MAX_FAN;
    int u = gemit(c, "unstack", "Unpack", &c->g, 1, b->t[x].n_dims, b->t[x].dims, b->t[x].dt);
    for (int k = 0; k < np && u >= 0; k++) {
        parts[k] = k == 0 ? u : zb_new_tensor(b, b->t[u].node, b->t[x].n_dims, b->t[x].dims,
                                              b->t[x].dt, false);
        b->t[parts[k]].grad = false;
        zb_add_contrib(b, c->in[k], parts[k]);
    }
}

/* The single-input copies: their gradient op from dy alone, shaped like x. */
static void copy_back(const struct bw *c, const char *base, const char *op) {
    if (c->gx) zb_add_contrib(c->b, c->x, gopt(c, base, op, &c->g, 1, c->x));
}
static void bw_reshape(const struct bw *c) { copy_back(c, "Reshape", "Reshape"); }
static void bw_transpose(const struct bw *c) { copy_back(c, "transpose", "Transpose"); }
static void bw_slice(const struct bw *c) { copy_back(c, "StridedSliceGrad", "StridedSliceGrad"); }
static void bw_copy(const struct bw *c) {
    const char *op = dp_op_copy_grad(c->o->op);
    copy_back(c, op, op);
}

static void bw_gather(const struct bw *c) {
    if (!c->gx) return;
    int ins[2] = {c->g, c->w};
    zb_add_contrib(c->b, c->x, gop(c, "UnsortedSegmentSum", ins, 2, c->x));
}

/* SelectV2(c, x, y): dx = SelectV2(c, dy, 0), dy = SelectV2(c, 0, dy). */
static void bw_select(const struct bw *c) {
    struct zb *b = c->b;
    int cond = c->x, a = c->w, e = c->in[2], g = c->g;
    int z = gopt(c, "zeros_like", "ZerosLike", &g, 1, c->y);
    int i1[3] = {cond, g, z}, i2[3] = {cond, z, g};
    if (b->t[a].grad) zb_add_contrib(b, a, unbroadcast(c, gop(c, "SelectV2", i1, 3, c->y), a));
    if (b->t[e].grad)
        zb_add_contrib(b, e, unbroadcast(c, gopt(c, "SelectV2_1", "SelectV2", i2, 3, c->y), e));
}

/* "A,B->C": dA = einsum("C,B->A", dC, B), dB = einsum("A,C->B", A, dC). */
static void bw_einsum(const struct bw *c) {
    struct zb *b = c->b;
    const struct tape_op *o = c->o;
    const char *eq = dp_node_attr(dp_graph_node(b->g, (size_t)o->node), "equation");
    char lhs[2][96], res[96], geq[256];
    if (!eq || !einsum_split(eq, lhs, res, o->n_in)) return;
    for (int k = 0; k < o->n_in; k++) {
        int t = c->in[k];
        if (!b->t[t].grad) continue;
        int ins[2];
        if (o->n_in == 1) {
            zb_sfmt(geq, sizeof geq, "%s->%s", res, lhs[0]);
            ins[0] = c->g;
        } else if (k == 0) {
            zb_sfmt(geq, sizeof geq, "%s,%s->%s", res, lhs[1], lhs[0]);
            ins[0] = c->g;
            ins[1] = c->in[1];
        } else {
            zb_sfmt(geq, sizeof geq, "%s,%s->%s", lhs[0], res, lhs[1]);
            ins[0] = c->in[0];
            ins[1] = c->g;
        }
        int r = gopt(c, k ? "Einsum_1" : "Einsum", "Einsum", ins, o->n_in, t);
        zb_set_attr(b, r >= 0 ? b->t[r].node : -1, "equation", "%s", geq);
        zb_add_contrib(b, t, r);
    }
}

static void bw_xent(const struct bw *c) {
    if (!c->gx) return;
    int e = gop(c, "ExpandDims", &c->g, 1, c->g);
    int ins[2] = {e, c->o->ia[0]};
    zb_add_contrib(c->b, c->x, gopt(c, "mul", "Mul", ins, 2, c->x));
}

static void (*const backward[])(const struct bw *) = {
    [K_CONV] = bw_conv,       [K_DWCONV] = bw_conv,       [K_BIAS] = bw_bias,
    [K_BN] = bw_bn,           [K_UNARY] = bw_unary,       [K_CAST] = bw_cast,
    [K_BINARY] = bw_binary,   [K_MATMUL] = bw_matmul,     [K_POOL] = bw_pool,
    [K_REDUCE] = bw_reduce,   [K_SOFTMAX] = bw_softmax,   [K_CONCAT] = bw_concat,
    [K_SPLIT] = bw_split,     [K_UNSTACK] = bw_split,     [K_STACK] = bw_stack,
    [K_RESHAPE] = bw_reshape, [K_TRANSPOSE] = bw_transpose, [K_GATHER] = bw_gather,
    [K_XENT] = bw_xent,       [K_SLICE] = bw_slice,       [K_CONVT] = bw_convt,
    [K_COPY] = bw_copy,       [K_SELECT] = bw_select,     [K_EINSUM] = bw_einsum,
    [K_GENERIC] = bw_generic,
};
_Static_assert(sizeof backward / sizeof backward[0] == K_COUNT,
               "a backward function for every tape kind");

void zb_backward_op(struct zb *b, const struct tape_op *o) {
    struct bw c = {.b = b, .o = o, .in = &b->pool[o->in0], .out = &b->pool[o->out0]};
    zb_sfmt(c.fname, sizeof c.fname, "%s", dp_graph_node(b->g, (size_t)o->node)->name);
    bool any = false;
    for (int k = 0; k < o->n_out && k < MAX_FAN; k++) {
        c.dy[k] = zb_grad_sum(b, c.out[k], c.fname);
        any |= c.dy[k] >= 0;
    }
    if (!any || b->st) return;
    c.g = c.dy[0];
    c.y = c.out[0];
    c.x = o->n_in > 0 ? c.in[0] : -1;
    c.w = o->n_in > 1 ? c.in[1] : -1;
    c.gx = c.x >= 0 && b->t[c.x].grad;
    c.gw = c.w >= 0 && b->t[c.w].grad;
    if ((unsigned)o->kind >= K_COUNT || !backward[o->kind]) {
        zb_fail(b, DP_ERR_UNSUPPORTED, "%s: no gradient rule for tape kind %d", c.fname,
                (int)o->kind);
        return;
    }
    backward[o->kind](&c);
}
