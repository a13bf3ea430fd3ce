/* zoo_builder.c: builds TensorFlow-1-style training graphs. Forward primitives append an op and
 * record it on a tape; zb_finish() differentiates the tape in reverse (TF's gradients(): one
 * gradient op or small op group per forward op, AddN where a tensor fans out), then appends the
 * optimizer: one Apply* per trainable variable, slots, global step and the train_op NoOp. */
#include "zoo_builder.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/cost.h"

#define GPU_DEV "/job:worker/replica:0/task:0/device:GPU:0"
#define CPU_DEV "/job:worker/replica:0/task:0/device:CPU:0"
#define NAME_MAX_LEN 512
#define MAX_FAN      512 /* most inputs or outputs of one op */

struct tensor {
    int           node;
    int           n_dims;
    int64_t       dims[DP_MAX_DIMS];
    enum dp_dtype dt;
    bool          grad;  /* depends on a trainable variable: needs a gradient */
    int           first; /* head of its gradient-contribution list in b->contrib, -1 */
};

struct contrib {
    int t;    /* the gradient tensor */
    int next; /* next contribution, -1 */
};

enum kind {
    K_CONV, K_DWCONV, K_BIAS, K_BN, K_UNARY, K_CAST, K_BINARY, K_MATMUL, K_POOL, K_REDUCE,
    K_SOFTMAX, K_CONCAT, K_SPLIT, K_UNSTACK, K_STACK, K_RESHAPE, K_TRANSPOSE, K_GATHER, K_XENT,
    K_SLICE
};

struct tape_op {
    enum kind kind;
    int       node;      /* the forward node */
    int       in0, n_in; /* inputs: b->pool[in0 .. in0 + n_in) (tensor ids) */
    int       out0, n_out;
    int       ia[4];     /* kind-specific integers (transpose flags, axis, mask, perm) */
    char      op[24];
};

struct var {
    int  ref;  /* tensor aliasing the VariableV2 node */
    int  read; /* the Identity read (fp32) */
    bool trainable;
};

struct zb {
    struct dp_graph   *g;
    struct dp_zoo_opts opts;
    enum dp_status     st;
    char               msg[sizeof ((struct dp_error *)0)->msg];
    char               scope[NAME_MAX_LEN];
    int                scope_len[64];
    int                depth;
    struct tensor     *t;
    int                n_t, cap_t;
    struct contrib    *c;
    int                n_c, cap_c;
    struct tape_op    *tape;
    int                n_tape, cap_tape;
    int               *pool;
    int                n_pool, cap_pool;
    struct var        *vars;
    int                n_vars, cap_vars;
    int               *updates; /* nodes the train_op waits for (BN moving averages) */
    int                n_updates, cap_updates;
};

/* snprintf whose truncation is deliberate (names are capped at NAME_MAX_LEN). */
static void sfmt(char *out, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void sfmt(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

/* Grows *arr (elements of size sz) to hold one more than *n; false on OOM (sticky error). */
static bool grow(struct zb *b, void **arr, int n, int *cap, size_t sz) {
    if (n < *cap) return true;
    int nc = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, (size_t)nc * sz);
    if (!p) {
        zb_fail(b, DP_ERR_NOMEM, "out of memory building the graph");
        return false;
    }
    *arr = p;
    *cap = nc;
    return true;
}

int zb_fail(struct zb *b, enum dp_status st, const char *fmt, ...) {
    if (b->st) return -1;
    b->st = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof b->msg, fmt, ap);
    va_end(ap);
    return -1;
}

struct zb *zb_init(struct dp_graph *g, const struct dp_zoo_opts *opts) {
    struct zb *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->g = g;
    if (opts) b->opts = *opts;
    else dp_zoo_opts_default(&b->opts);
    return b;
}

void zb_free(struct zb *b) {
    if (!b) return;
    free(b->t);
    free(b->c);
    free(b->tape);
    free(b->pool);
    free(b->vars);
    free(b->updates);
    free(b);
}

enum dp_status zb_status(const struct zb *b, struct dp_error *err) {
    if (b->st) dp_error_set(err, b->st, "%s", b->msg);
    return b->st;
}

void zb_push(struct zb *b, const char *fmt, ...) {
    if (b->depth >= 64) {
        zb_fail(b, DP_ERR_INVALID, "name scopes nested too deeply");
        return;
    }
    size_t len = strlen(b->scope);
    b->scope_len[b->depth++] = (int)len;
    char part[NAME_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(part, sizeof part, fmt, ap);
    va_end(ap);
    sfmt(b->scope + len, sizeof b->scope - len, "%s%s", len ? "/" : "", part);
}

void zb_pop(struct zb *b) {
    if (b->depth > 0) b->scope[b->scope_len[--b->depth]] = '\0';
}

int zb_rank(const struct zb *b, int t) { return b->t[t].n_dims; }
const int64_t *zb_dims(const struct zb *b, int t) { return b->t[t].dims; }
enum dp_dtype zb_dtype(const struct zb *b, int t) { return b->t[t].dt; }
bool zb_nchw(const struct zb *b) { return b->opts.nchw; }
int zb_caxis(const struct zb *b) { return b->opts.nchw ? 1 : 3; }
enum dp_dtype zb_compute_dtype(const struct zb *b) {
    return b->opts.precision == DP_PREC_MIXED ? DP_DTYPE_F16 : DP_DTYPE_F32;
}
int64_t zb_dim(const struct zb *b, int t, int d) {
    const struct tensor *x = &b->t[t];
    if (d < 0) d += x->n_dims;
    return d >= 0 && d < x->n_dims ? x->dims[d] : 0;
}

/* --- nodes and tensors ------------------------------------------------------------------- */

/* Adds a node named `full` (made unique TF-style) with data inputs in_nodes. */
static int add_node(struct zb *b, const char *full, const char *op, const char *dev, int n_dims,
                    const int64_t *dims, enum dp_dtype dt, const int *in_nodes, int n_in) {
    if (b->st) return -1;
    char name[NAME_MAX_LEN + 16];
    sfmt(name, sizeof name, "%s", full);
    for (int k = 1; dp_graph_find(b->g, name) >= 0; k++) {
        /* Shorten full to leave room for the suffix: a truncated "<full>_<k>" would be the
         * taken name again, forever. */
        char suffix[16];
        int ns = snprintf(suffix, sizeof suffix, "_%d", k);
        int keep = (int)sizeof name - 1 - ns;
        sfmt(name, sizeof name, "%.*s%s", keep, full, suffix);
    }
    int idx = -1;
    struct dp_error e = {0};
    if (dp_graph_add_node(b->g, name, op, dev, n_dims, dims, dt, &idx, &e))
        return zb_fail(b, e.status, "%s", e.msg);
    for (int i = 0; i < n_in; i++)
        if (in_nodes[i] >= 0 && dp_graph_add_input(b->g, idx, in_nodes[i], false, &e))
            return zb_fail(b, e.status, "%s", e.msg);
    return idx;
}

static void scoped(const struct zb *b, const char *base, char *out, size_t n) {
    sfmt(out, n, "%s%s%s", b->scope, b->scope[0] ? "/" : "", base);
}

static int new_tensor(struct zb *b, int node, int n_dims, const int64_t *dims, enum dp_dtype dt,
                      bool grad) {
    if (b->st || node < 0) return -1;
    /* Imported shapes can hold anything: bounding every dimension keeps the shape arithmetic
     * (padding, concatenation) far from int64_t overflow. */
    for (int d = 0; d < n_dims && d < DP_MAX_DIMS; d++)
        if (dims[d] > ZB_MAX_DIM || dims[d] < DP_DIM_UNKNOWN)
            return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: dimension %lld out of range [0, 2^40]",
                           b->scope, (long long)dims[d]);
    int64_t copy[DP_MAX_DIMS]; /* dims may point into b->t, which grow() moves */
    for (int d = 0; d < n_dims && d < DP_MAX_DIMS; d++) copy[d] = dims[d];
    if (!grow(b, (void **)&b->t, b->n_t, &b->cap_t, sizeof *b->t)) return -1;
    struct tensor *x = &b->t[b->n_t];
    x->node = node;
    x->n_dims = n_dims;
    for (int d = 0; d < n_dims && d < DP_MAX_DIMS; d++) x->dims[d] = copy[d];
    x->dt = dt;
    x->grad = grad;
    x->first = -1;
    return b->n_t++;
}

static void set_attr(struct zb *b, int node, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void set_attr(struct zb *b, int node, const char *key, const char *fmt, ...) {
    if (b->st || node < 0) return;
    char v[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (dp_graph_set_attr(b->g, node, key, v)) zb_fail(b, DP_ERR_NOMEM, "out of memory");
}

/* A node whose inputs are tensors; returns the new tensor (grad if any input needs one). */
static int emit(struct zb *b, const char *full, const char *op, const char *dev, const int *ins,
                int n_in, int n_dims, const int64_t *dims, enum dp_dtype dt) {
    if (b->st) return -1;
    int nodes[MAX_FAN];
    bool grad = false;
    if (n_in > MAX_FAN) return zb_fail(b, DP_ERR_UNSUPPORTED, "op '%s' with %d inputs", full, n_in);
    for (int i = 0; i < n_in; i++) {
        if (ins[i] < 0) return -1;
        nodes[i] = b->t[ins[i]].node;
        grad |= b->t[ins[i]].grad;
    }
    int node = add_node(b, full, op, dev, n_dims, dims, dt, n_in ? nodes : NULL, n_in);
    return new_tensor(b, node, n_dims, dims, dt, grad);
}

/* A forward GPU op in the current scope, recorded on the tape when it needs a gradient. */
static int fwd(struct zb *b, enum kind kind, const char *base, const char *op, const int *ins,
               int n_in, int n_dims, const int64_t *dims, enum dp_dtype dt, int *tape_idx) {
    char full[NAME_MAX_LEN];
    scoped(b, base, full, sizeof full);
    int y = emit(b, full, op, GPU_DEV, ins, n_in, n_dims, dims, dt);
    if (tape_idx) *tape_idx = -1;
    if (y < 0 || !b->t[y].grad) return y;
    if (!grow(b, (void **)&b->tape, b->n_tape, &b->cap_tape, sizeof *b->tape)) return -1;
    struct tape_op *o = &b->tape[b->n_tape];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->node = b->t[y].node;
    sfmt(o->op, sizeof o->op, "%s", op);
    o->in0 = b->n_pool;
    o->n_in = n_in;
    for (int i = 0; i < n_in; i++) {
        if (!grow(b, (void **)&b->pool, b->n_pool, &b->cap_pool, sizeof *b->pool)) return -1;
        b->pool[b->n_pool++] = ins[i];
    }
    if (!grow(b, (void **)&b->pool, b->n_pool, &b->cap_pool, sizeof *b->pool)) return -1;
    o->out0 = b->n_pool;
    o->n_out = 1;
    b->pool[b->n_pool++] = y;
    if (tape_idx) *tape_idx = b->n_tape;
    b->n_tape++;
    return y;
}

/* Adds output tensor y to tape op ti (multi-output ops). */
static void tape_add_out(struct zb *b, int ti, int y) {
    if (b->st || ti < 0) return;
    struct tape_op *o = &b->tape[ti];
    /* Outputs are appended only right after creation, so the pool is contiguous. */
    DP_ASSERT(o->out0 + o->n_out == b->n_pool);
    if (!grow(b, (void **)&b->pool, b->n_pool, &b->cap_pool, sizeof *b->pool)) return;
    b->pool[b->n_pool++] = y;
    o->n_out++;
}

/* A constant tensor in the current scope (GPU; TF keeps small ones in host memory). */
static int cst(struct zb *b, const char *base, int n_dims, const int64_t *dims, enum dp_dtype dt) {
    char full[NAME_MAX_LEN];
    scoped(b, base, full, sizeof full);
    return emit(b, full, "Const", GPU_DEV, NULL, 0, n_dims, dims, dt);
}

int zb_const(struct zb *b, const char *name, int n_dims, const int64_t *dims, enum dp_dtype dt) {
    return cst(b, name, n_dims, dims, dt);
}

static int scalar(struct zb *b, const char *base) {
    return cst(b, base, 0, NULL, zb_compute_dtype(b));
}

/* --- shapes ------------------------------------------------------------------------------ */

static bool same_dims(const struct tensor *a, const struct tensor *c) {
    if (a->n_dims != c->n_dims) return false;
    for (int d = 0; d < a->n_dims; d++)
        if (a->dims[d] != c->dims[d]) return false;
    return true;
}

static int64_t bcast_dim(int64_t a, int64_t c, bool *ok) {
    if (a == c) return a;
    if (a == 1) return c;
    if (c == 1) return a;
    if (a == DP_DIM_UNKNOWN || c == DP_DIM_UNKNOWN) return DP_DIM_UNKNOWN;
    *ok = false;
    return a;
}

/* NumPy broadcasting of x and y into out; false when they do not fit. */
static bool broadcast(const struct tensor *x, const struct tensor *y, int *n, int64_t *out) {
    int r = x->n_dims > y->n_dims ? x->n_dims : y->n_dims;
    bool ok = true;
    for (int i = 0; i < r; i++) {
        int dx = x->n_dims - r + i, dy = y->n_dims - r + i;
        int64_t a = dx >= 0 ? x->dims[dx] : 1, c = dy >= 0 ? y->dims[dy] : 1;
        out[i] = bcast_dim(a, c, &ok);
    }
    *n = r;
    return ok;
}

/* Output side of a window op: SAME (pads NULL) or explicit pads. */
static int64_t window_out(int64_t in, int64_t k, int stride, const int64_t *pads, int axis) {
    if (in <= 0) return in;
    if (!pads) return (in + stride - 1) / stride;
    int64_t v = in + pads[2 * axis] + pads[2 * axis + 1] - k;
    return v < 0 ? 0 : v / stride + 1;
}

static void set_window_attrs(struct zb *b, int node, int kh, int kw, int stride,
                             const int64_t *pads, bool pool) {
    bool nchw = b->opts.nchw;
    if (pool) {
        if (nchw) set_attr(b, node, "ksize", "[1, 1, %d, %d]", kh, kw);
        else set_attr(b, node, "ksize", "[1, %d, %d, 1]", kh, kw);
    }
    if (nchw) set_attr(b, node, "strides", "[1, 1, %d, %d]", stride, stride);
    else set_attr(b, node, "strides", "[1, %d, %d, 1]", stride, stride);
    bool zero = pads && !pads[0] && !pads[1] && !pads[2] && !pads[3];
    if (!pads) set_attr(b, node, "padding", "SAME");
    else if (zero) set_attr(b, node, "padding", "VALID");
    else {
        set_attr(b, node, "padding", "EXPLICIT");
        set_attr(b, node, "explicit_paddings", "[%lld, %lld, %lld, %lld]", (long long)pads[0],
                 (long long)pads[1], (long long)pads[2], (long long)pads[3]);
    }
    set_attr(b, node, "data_format", nchw ? "NCHW" : "NHWC");
}

/* --- sources ------------------------------------------------------------------------------ */

int zb_input(struct zb *b, int n_dims, const int64_t *dims, enum dp_dtype dt, int n_label_dims,
             const int64_t *label_dims, int *labels, bool nhwc_images) {
    int it = emit(b, "IteratorV2", "IteratorV2", CPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_RESOURCE);
    int x = emit(b, "IteratorGetNext", "IteratorGetNext", CPU_DEV, &it, 1, n_dims, dims, dt);
    if (x < 0) return -1;
    set_attr(b, b->t[x].node, "output_types", dt == DP_DTYPE_F32 ? "[DT_FLOAT, DT_INT32]"
                                                                  : "[DT_INT32, DT_INT32]");
    if (labels)
        *labels = new_tensor(b, b->t[x].node, n_label_dims, label_dims, DP_DTYPE_I32, false);
    if (n_dims == 4 && b->opts.nchw && nhwc_images) {
        int perm[4] = {0, 3, 1, 2};
        x = zb_transpose(b, x, perm);
    }
    if (dt == DP_DTYPE_F32 && b->opts.precision == DP_PREC_MIXED) x = zb_cast(b, x, DP_DTYPE_F16);
    return x;
}

/* Initializers run once when the session starts, not per step: attr phase=init (cost 0). */
static void mark_init(struct zb *b, int t) {
    if (t >= 0) set_attr(b, b->t[t].node, "phase", "init");
}

int zb_input_extra(struct zb *b, int features, int n_dims, const int64_t *dims,
                   enum dp_dtype dt) {
    if (b->st || features < 0) return -1;
    /* Walk back through a Transpose/Cast to the IteratorGetNext node. */
    int node = b->t[features].node;
    while (strcmp(dp_graph_node(b->g, (size_t)node)->op, "IteratorGetNext") &&
           dp_graph_node(b->g, (size_t)node)->n_inputs > 0)
        node = dp_graph_node(b->g, (size_t)node)->inputs[0];
    return new_tensor(b, node, n_dims, dims, dt, false);
}

static int variable(struct zb *b, const char *name, int n_dims, const int64_t *dims,
                    const char *init, bool trainable, bool cast, bool slot, int *ref_out) {
    if (b->st) return -1;
    char full[NAME_MAX_LEN];
    scoped(b, name, full, sizeof full);
    int ref = emit(b, full, "VariableV2", GPU_DEV, NULL, 0, n_dims, dims, DP_DTYPE_F32);
    if (ref < 0) return -1;
    int vnode = b->t[ref].node;
    const char *vname = dp_graph_node(b->g, (size_t)vnode)->name;
    char vn[NAME_MAX_LEN];
    sfmt(vn, sizeof vn, "%s", vname);
    double p = 1;
    for (int d = 0; d < n_dims; d++) p *= (double)dims[d];
    dp_graph_set_cost(b->g, vnode, 0, 0, slot ? 0 : (int64_t)p);
    char shape[160] = "[";
    for (int d = 0; d < n_dims; d++) {
        size_t len = strlen(shape);
        sfmt(shape + len, sizeof shape - len, "%s%lld", d ? ", " : "", (long long)dims[d]);
    }
    set_attr(b, vnode, "shape", "%s]", shape);
    if (!trainable) set_attr(b, vnode, "trainable", "false");
    if (slot) set_attr(b, vnode, "slot", "true");

    char nm[NAME_MAX_LEN + 64];
    int initv;
    if (!strcmp(init, "normal")) {
        int64_t nd = n_dims;
        sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/shape", vn);
        int shp = emit(b, nm, "Const", GPU_DEV, NULL, 0, 1, &nd, DP_DTYPE_I32);
        sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/TruncatedNormal", vn);
        int tn = emit(b, nm, "TruncatedNormal", GPU_DEV, &shp, 1, n_dims, dims, DP_DTYPE_F32);
        sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/stddev", vn);
        int sd = emit(b, nm, "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        sfmt(nm, sizeof nm, "%s/Initializer/truncated_normal/mul", vn);
        int ins[2] = {tn, sd};
        initv = emit(b, nm, "Mul", GPU_DEV, ins, 2, n_dims, dims, DP_DTYPE_F32);
        mark_init(b, shp);
        mark_init(b, tn);
        mark_init(b, sd);
    } else {
        sfmt(nm, sizeof nm, "%s/Initializer/%s", vn, init);
        initv = emit(b, nm, "Const", GPU_DEV, NULL, 0, n_dims, dims, DP_DTYPE_F32);
    }
    mark_init(b, initv);
    sfmt(nm, sizeof nm, "%s/Assign", vn);
    int ai[2] = {ref, initv};
    mark_init(b, emit(b, nm, "Assign", GPU_DEV, ai, 2, n_dims, dims, DP_DTYPE_F32));
    if (ref_out) *ref_out = ref;
    if (slot) return ref;

    sfmt(nm, sizeof nm, "%s/read", vn);
    int read = emit(b, nm, "Identity", GPU_DEV, &ref, 1, n_dims, dims, DP_DTYPE_F32);
    if (read < 0) return -1;
    b->t[read].grad = trainable;
    if (!grow(b, (void **)&b->vars, b->n_vars, &b->cap_vars, sizeof *b->vars)) return -1;
    b->vars[b->n_vars++] = (struct var){ref, read, trainable};
    if (cast && b->opts.precision == DP_PREC_MIXED) return zb_cast(b, read, DP_DTYPE_F16);
    return read;
}

int zb_variable(struct zb *b, const char *name, int n_dims, const int64_t *dims,
                const char *init, bool trainable) {
    return variable(b, name, n_dims, dims, init, trainable, trainable, false, NULL);
}

/* --- forward primitives ------------------------------------------------------------------- */

int zb_conv(struct zb *b, int x, int w, int stride, const int64_t *pads, bool depthwise) {
    if (b->st || x < 0 || w < 0) return -1;
    const struct tensor X = b->t[x], W = b->t[w];
    if (X.n_dims != 4 || W.n_dims != 4)
        return zb_fail(b, DP_ERR_SHAPE, "%s: convolution needs 4-D input and filter", b->scope);
    int c = zb_caxis(b), h = b->opts.nchw ? 2 : 1;
    if (X.dims[c] > 0 && W.dims[2] > 0 && X.dims[c] != W.dims[2])
        return zb_fail(b, DP_ERR_SHAPE, "%s: input has %lld channels, filter expects %lld",
                       b->scope, (long long)X.dims[c], (long long)W.dims[2]);
    int64_t dims[4];
    memcpy(dims, X.dims, sizeof dims);
    dims[h] = window_out(X.dims[h], W.dims[0], stride, pads, 0);
    dims[h + 1] = window_out(X.dims[h + 1], W.dims[1], stride, pads, 1);
    dims[c] = depthwise ? W.dims[2] * W.dims[3] : W.dims[3];
    if (dims[h] == 0 || dims[h + 1] == 0)
        return zb_fail(b, DP_ERR_INVALID, "%s: the input is too small for this layer (%lldx%lld)",
                       b->scope, (long long)X.dims[h], (long long)X.dims[h + 1]);
    int ins[2] = {x, w};
    const char *op = depthwise ? "DepthwiseConv2dNative" : "Conv2D";
    int y = fwd(b, depthwise ? K_DWCONV : K_CONV, op, op, ins, 2, 4, dims, X.dt, NULL);
    if (y >= 0) set_window_attrs(b, b->t[y].node, (int)W.dims[0], (int)W.dims[1], stride, pads,
                                 false);
    return y;
}

int zb_bias_add(struct zb *b, int x, int bias) {
    if (b->st || x < 0 || bias < 0) return -1;
    int ins[2] = {x, bias};
    int y = fwd(b, K_BIAS, "BiasAdd", "BiasAdd", ins, 2, b->t[x].n_dims, b->t[x].dims, b->t[x].dt,
                NULL);
    if (y >= 0 && b->t[x].n_dims == 4) set_attr(b, b->t[y].node, "data_format",
                                                 b->opts.nchw ? "NCHW" : "NHWC");
    return y;
}

int zb_batch_norm(struct zb *b, int x, int gamma, int beta, int mean, int var) {
    if (b->st || x < 0 || gamma < 0 || beta < 0) return -1;
    int ins[3] = {x, gamma, beta};
    int y = fwd(b, K_BN, "FusedBatchNormV3", "FusedBatchNormV3", ins, 3, b->t[x].n_dims,
                b->t[x].dims, b->t[x].dt, NULL);
    if (y < 0) return -1;
    int node = b->t[y].node;
    set_attr(b, node, "is_training", "true");
    set_attr(b, node, "data_format", b->opts.nchw ? "NCHW" : "NHWC");
    /* The moving averages: AssignMovingAvg = AssignSub(v, (v - batch_stat) * (1 - decay)). */
    int64_t c = b->t[gamma].dims[0];
    int stats[2] = {mean, var};
    const char *names[2] = {"AssignMovingAvg", "AssignMovingAvg_1"};
    for (int k = 0; k < 2; k++) {
        /* Only a variable's read (Identity of a VariableV2) gets a moving-average update. */
        if (stats[k] < 0) continue;
        const struct dp_node *sn = dp_graph_node(b->g, (size_t)b->t[stats[k]].node);
        if (strcmp(sn->op, "Identity") || sn->n_inputs < 1 ||
            strcmp(dp_graph_node(b->g, (size_t)sn->inputs[0])->op, "VariableV2"))
            continue;
        int batch_stat = new_tensor(b, node, 1, &c, DP_DTYPE_F32, false);
        zb_push(b, "%s", names[k]);
        int s_in[2] = {stats[k], batch_stat};
        char full[NAME_MAX_LEN];
        scoped(b, "sub", full, sizeof full);
        int s = emit(b, full, "Sub", GPU_DEV, s_in, 2, 1, &c, DP_DTYPE_F32);
        int dec = cst(b, "decay", 0, NULL, DP_DTYPE_F32);
        int m_in[2] = {s, dec};
        scoped(b, "mul", full, sizeof full);
        int m = emit(b, full, "Mul", GPU_DEV, m_in, 2, 1, &c, DP_DTYPE_F32);
        scoped(b, "AssignSub", full, sizeof full);
        /* AssignSub writes the variable itself: its input is the VariableV2 node. */
        int vnode = dp_graph_node(b->g, (size_t)b->t[stats[k]].node)->inputs[0];
        int a = add_node(b, full, "AssignSub", GPU_DEV, 1, &c, DP_DTYPE_F32, &vnode, 1);
        if (a >= 0 && m >= 0) {
            struct dp_error e = {0};
            if (dp_graph_add_input(b->g, a, b->t[m].node, false, &e))
                zb_fail(b, e.status, "%s", e.msg);
        }
        zb_pop(b);
        if (a >= 0 && grow(b, (void **)&b->updates, b->n_updates, &b->cap_updates,
                           sizeof *b->updates))
            b->updates[b->n_updates++] = a;
    }
    return y;
}

int zb_unary(struct zb *b, const char *op, int x) {
    if (b->st || x < 0) return -1;
    int y = fwd(b, K_UNARY, op, op, &x, 1, b->t[x].n_dims, b->t[x].dims, b->t[x].dt, NULL);
    if (y >= 0 && !strcmp(op, "LRN")) {
        set_attr(b, b->t[y].node, "depth_radius", "5");
    }
    return y;
}

int zb_cast(struct zb *b, int x, enum dp_dtype dt) {
    if (b->st || x < 0) return -1;
    int y = fwd(b, K_CAST, "Cast", "Cast", &x, 1, b->t[x].n_dims, b->t[x].dims, dt, NULL);
    if (y >= 0) set_attr(b, b->t[y].node, "DstT", "%s", dp_dtype_name(dt));
    return y;
}

int zb_binary(struct zb *b, const char *op, int x, int y) {
    if (b->st || x < 0 || y < 0) return -1;
    int n;
    int64_t dims[DP_MAX_DIMS];
    if (!broadcast(&b->t[x], &b->t[y], &n, dims))
        return zb_fail(b, DP_ERR_SHAPE, "%s/%s: operand shapes do not broadcast", b->scope, op);
    int ins[2] = {x, y};
    enum dp_dtype dt = b->t[x].n_dims >= b->t[y].n_dims ? b->t[x].dt : b->t[y].dt;
    return fwd(b, K_BINARY, op, op, ins, 2, n, dims, dt, NULL);
}

/* Output shape of a (batch) matrix product; false when the operands do not fit. */
static bool matmul_shape(const struct tensor *X, const struct tensor *Y, bool tx, bool ty, int *n,
                         int64_t *dims) {
    if (X->n_dims < 2 || Y->n_dims < 2) return false;
    int64_t m = X->dims[X->n_dims - (tx ? 1 : 2)], kx = X->dims[X->n_dims - (tx ? 2 : 1)];
    int64_t ky = Y->dims[Y->n_dims - (ty ? 1 : 2)], nn = Y->dims[Y->n_dims - (ty ? 2 : 1)];
    if (kx > 0 && ky > 0 && kx != ky) return false;
    if (Y->n_dims == 2) { /* x of any rank times a matrix: contract the last dim */
        if (tx && X->n_dims > 2) return false;
        *n = X->n_dims;
        for (int d = 0; d < X->n_dims - 2; d++) dims[d] = X->dims[d];
        dims[X->n_dims - 2] = m;
        dims[X->n_dims - 1] = nn;
        return true;
    }
    struct tensor bx = *X, by = *Y;
    bx.n_dims -= 2;
    by.n_dims -= 2;
    if (!broadcast(&bx, &by, n, dims)) return false;
    dims[(*n)++] = m;
    dims[(*n)++] = nn;
    return *n <= DP_MAX_DIMS;
}

static void matmul_attrs(struct zb *b, int node, bool batch, bool tx, bool ty) {
    set_attr(b, node, batch ? "adj_x" : "transpose_a", tx ? "true" : "false");
    set_attr(b, node, batch ? "adj_y" : "transpose_b", ty ? "true" : "false");
}

int zb_matmul(struct zb *b, int x, int y, bool tx, bool ty) {
    if (b->st || x < 0 || y < 0) return -1;
    int n;
    int64_t dims[DP_MAX_DIMS];
    if (!matmul_shape(&b->t[x], &b->t[y], tx, ty, &n, dims))
        return zb_fail(b, DP_ERR_SHAPE, "%s: matrix product of incompatible shapes", b->scope);
    bool batch = b->t[y].n_dims > 2;
    const char *op = batch ? "BatchMatMulV2" : "MatMul";
    int ins[2] = {x, y}, ti;
    int out = fwd(b, K_MATMUL, op, op, ins, 2, n, dims, b->t[x].dt, &ti);
    if (out >= 0) matmul_attrs(b, b->t[out].node, batch, tx, ty);
    if (ti >= 0) {
        b->tape[ti].ia[0] = tx;
        b->tape[ti].ia[1] = ty;
    }
    return out;
}

int zb_pool(struct zb *b, const char *op, int x, int k, int stride, const int64_t *pads) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    if (X.n_dims != 4) return zb_fail(b, DP_ERR_SHAPE, "%s: pooling needs a 4-D input", b->scope);
    int h = b->opts.nchw ? 2 : 1;
    int64_t dims[4];
    memcpy(dims, X.dims, sizeof dims);
    dims[h] = window_out(X.dims[h], k, stride, pads, 0);
    dims[h + 1] = window_out(X.dims[h + 1], k, stride, pads, 1);
    if (dims[h] == 0 || dims[h + 1] == 0)
        return zb_fail(b, DP_ERR_INVALID, "%s: the input is too small for this layer (%lldx%lld)",
                       b->scope, (long long)X.dims[h], (long long)X.dims[h + 1]);
    int y = fwd(b, K_POOL, op, op, &x, 1, 4, dims, X.dt, NULL);
    if (y >= 0) set_window_attrs(b, b->t[y].node, k, k, stride, pads, true);
    return y;
}

int zb_reduce(struct zb *b, const char *op, int x, unsigned mask, bool keepdims) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    int64_t dims[DP_MAX_DIMS], naxes = 0;
    int n = 0;
    for (int d = 0; d < X.n_dims; d++) {
        if (mask & (1u << d)) {
            naxes++;
            if (keepdims) dims[n++] = 1;
        } else dims[n++] = X.dims[d];
    }
    int ax = cst(b, "reduction_indices", 1, &naxes, DP_DTYPE_I32);
    int ins[2] = {x, ax}, ti;
    int y = fwd(b, K_REDUCE, op, op, ins, 2, n, dims, X.dt, &ti);
    if (y >= 0) set_attr(b, b->t[y].node, "keep_dims", keepdims ? "true" : "false");
    if (ti >= 0) {
        b->tape[ti].ia[0] = (int)mask;
        b->tape[ti].ia[1] = keepdims;
    }
    return y;
}

int zb_softmax(struct zb *b, int x) {
    if (b->st || x < 0) return -1;
    return fwd(b, K_SOFTMAX, "Softmax", "Softmax", &x, 1, b->t[x].n_dims, b->t[x].dims,
               b->t[x].dt, NULL);
}

int zb_concat(struct zb *b, const int *xs, int n, int axis) {
    if (b->st) return -1;
    if (n < 1 || n >= MAX_FAN)
        return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: concat of %d", b->scope, n);
    for (int i = 0; i < n; i++)
        if (xs[i] < 0) return -1;
    const struct tensor X = b->t[xs[0]];
    if (axis < 0) axis += X.n_dims;
    if (axis < 0 || axis >= X.n_dims) return zb_fail(b, DP_ERR_SHAPE, "%s: concat axis", b->scope);
    int64_t dims[DP_MAX_DIMS];
    memcpy(dims, X.dims, sizeof dims);
    dims[axis] = 0;
    for (int i = 0; i < n; i++) {
        const struct tensor Y = b->t[xs[i]];
        if (Y.n_dims != X.n_dims)
            return zb_fail(b, DP_ERR_SHAPE, "%s: concat of tensors of different ranks", b->scope);
        for (int d = 0; d < X.n_dims; d++)
            if (d != axis && Y.dims[d] != X.dims[d] && Y.dims[d] > 0 && X.dims[d] > 0)
                return zb_fail(b, DP_ERR_SHAPE, "%s: concat of mismatched shapes", b->scope);
        if (dims[axis] >= 0) dims[axis] = Y.dims[axis] >= 0 ? dims[axis] + Y.dims[axis]
                                                              : Y.dims[axis];
    }
    int ins[MAX_FAN];
    memcpy(ins, xs, (size_t)n * sizeof *ins);
    int64_t one = 1;
    ins[n] = cst(b, "axis", 0, &one, DP_DTYPE_I32);
    int ti;
    int y = fwd(b, K_CONCAT, "concat", "ConcatV2", ins, n + 1, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) {
        b->tape[ti].n_in = n; /* the axis constant needs no gradient */
        b->tape[ti].ia[0] = axis;
    }
    return y;
}

static int split_like(struct zb *b, int x, int n, int axis, int *outs, bool unstack) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    if (axis < 0) axis += X.n_dims;
    if (axis < 0 || axis >= X.n_dims || n < 1 || n > MAX_FAN)
        return zb_fail(b, DP_ERR_SHAPE, "%s: split axis or count", b->scope);
    int64_t dims[DP_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < X.n_dims; d++) {
        if (d != axis) dims[nd++] = X.dims[d];
        else if (!unstack) dims[nd++] = X.dims[d] > 0 ? X.dims[d] / n : X.dims[d];
    }
    const char *op = unstack ? "Unpack" : "Split";
    int ti;
    int y = fwd(b, unstack ? K_UNSTACK : K_SPLIT, unstack ? "unstack" : "split", op, &x, 1, nd,
                dims, X.dt, &ti);
    if (y < 0) return -1;
    set_attr(b, b->t[y].node, unstack ? "num" : "num_split", "%d", n);
    outs[0] = y;
    for (int i = 1; i < n; i++) {
        outs[i] = new_tensor(b, b->t[y].node, nd, dims, X.dt, b->t[y].grad);
        tape_add_out(b, ti, outs[i]);
    }
    if (ti >= 0) b->tape[ti].ia[0] = axis;
    return y;
}

int zb_split(struct zb *b, int x, int n, int axis, int *outs) {
    return split_like(b, x, n, axis, outs, false);
}

int zb_unstack(struct zb *b, int x, int n, int axis, int *outs) {
    return split_like(b, x, n, axis, outs, true);
}

int zb_stack(struct zb *b, const int *xs, int n, int axis) {
    if (b->st) return -1;
    if (n < 1 || n > MAX_FAN) return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: stack of %d", b->scope, n);
    const struct tensor X = b->t[xs[0]];
    int64_t dims[DP_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d <= X.n_dims; d++) {
        if (d == axis) dims[nd++] = n;
        if (d < X.n_dims) dims[nd++] = X.dims[d];
    }
    int ti;
    int y = fwd(b, K_STACK, "stack", "Pack", xs, n, nd, dims, X.dt, &ti);
    if (ti >= 0) b->tape[ti].ia[0] = axis;
    return y;
}

int zb_reshape(struct zb *b, int x, int n_dims, const int64_t *dims) {
    if (b->st || x < 0) return -1;
    int64_t nd = n_dims;
    int s = cst(b, "shape", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, s}, ti;
    int y = fwd(b, K_RESHAPE, "Reshape", "Reshape", ins, 2, n_dims, dims, b->t[x].dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 1;
    return y;
}

int zb_transpose(struct zb *b, int x, const int *perm) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    int64_t dims[DP_MAX_DIMS], nd = X.n_dims;
    if (nd > 4) return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: transpose of rank %d", b->scope,
                               X.n_dims);
    for (int d = 0; d < X.n_dims; d++) {
        if (perm[d] < 0 || perm[d] >= X.n_dims)
            return zb_fail(b, DP_ERR_SHAPE, "%s: transpose permutation", b->scope);
        dims[d] = X.dims[perm[d]];
    }
    int p = cst(b, "perm", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, p}, ti;
    int y = fwd(b, K_TRANSPOSE, "transpose", "Transpose", ins, 2, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) {
        b->tape[ti].n_in = 1;
        for (int d = 0; d < X.n_dims; d++) b->tape[ti].ia[d] = perm[d];
    }
    return y;
}

int zb_gather(struct zb *b, int table, int ids) {
    if (b->st || table < 0 || ids < 0) return -1;
    const struct tensor T = b->t[table], I = b->t[ids];
    if (T.n_dims != 2 || I.n_dims < 0 || I.n_dims + 1 > DP_MAX_DIMS)
        return zb_fail(b, DP_ERR_SHAPE, "%s: gather needs a 2-D table", b->scope);
    int64_t dims[DP_MAX_DIMS];
    memcpy(dims, I.dims, sizeof(int64_t) * (size_t)I.n_dims);
    dims[I.n_dims] = T.dims[1];
    int64_t zero = 0;
    int ax = cst(b, "axis", 0, &zero, DP_DTYPE_I32);
    int ins[3] = {table, ids, ax}, ti;
    int y = fwd(b, K_GATHER, "GatherV2", "GatherV2", ins, 3, I.n_dims + 1, dims, T.dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 2;
    return y;
}

int zb_slice(struct zb *b, int x, int axis, int64_t start, int64_t len) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    if (axis < 0) axis += X.n_dims;
    if (axis < 0 || axis >= X.n_dims || start < 0 || len < 0 ||
        (X.dims[axis] >= 0 && start + len > X.dims[axis]))
        return zb_fail(b, DP_ERR_SHAPE, "%s: slice out of range", b->scope);
    int64_t dims[DP_MAX_DIMS], nd = X.n_dims;
    memcpy(dims, X.dims, sizeof dims);
    dims[axis] = len;
    int be = cst(b, "stack", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, be}, ti;
    int y = fwd(b, K_SLICE, "strided_slice", "StridedSlice", ins, 2, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 1;
    return y;
}

int zb_dropout(struct zb *b, int x, double rate) {
    if (b->st || x < 0) return -1;
    zb_push(b, "dropout");
    const struct tensor X = b->t[x];
    int n = X.n_dims;
    int64_t dims[DP_MAX_DIMS], nd = n;
    memcpy(dims, X.dims, sizeof dims);
    enum dp_dtype dt = X.dt;
    int shape = cst(b, "Shape", 1, &nd, DP_DTYPE_I32);
    int r = zb_opaque(b, "RandomUniform", &shape, 1, n, dims, dt);
    int rate_c = scalar(b, "rate");
    int ge_in[2] = {r, rate_c};
    int mask = zb_opaque(b, "GreaterEqual", ge_in, 2, n, dims, DP_DTYPE_BOOL);
    int maskf = zb_opaque(b, "Cast", &mask, 1, n, dims, dt);
    int y = zb_binary(b, "Mul", x, scalar(b, "truediv"));
    y = zb_binary(b, "Mul", y, maskf);
    if (y >= 0) set_attr(b, b->t[y].node, "rate", "%g", rate);
    zb_pop(b);
    return y;
}

int zb_opaque(struct zb *b, const char *op, const int *xs, int n, int n_dims,
              const int64_t *dims, enum dp_dtype dt) {
    char full[NAME_MAX_LEN];
    scoped(b, op, full, sizeof full);
    int y = emit(b, full, op, GPU_DEV, xs, n, n_dims, dims, dt);
    if (y >= 0) b->t[y].grad = false;
    return y;
}

int zb_xent_loss(struct zb *b, int logits, int labels, bool sparse) {
    if (b->st || logits < 0 || labels < 0) return -1;
    zb_push(b, "loss");
    if (b->t[logits].dt != DP_DTYPE_F32) logits = zb_cast(b, logits, DP_DTYPE_F32);
    if (b->st) return -1;
    const struct tensor L = b->t[logits];
    if (L.n_dims < 1) return zb_fail(b, DP_ERR_SHAPE, "%s: logits of unknown shape", b->scope);
    int64_t rows[DP_MAX_DIMS];
    int nr = L.n_dims - 1;
    memcpy(rows, L.dims, sizeof rows);
    int lab = labels;
    if (!sparse) {
        int64_t depth = L.dims[nr];
        int d = cst(b, "depth", 0, &depth, DP_DTYPE_I32);
        int ins[2] = {labels, d};
        lab = zb_opaque(b, "OneHot", ins, 2, L.n_dims, L.dims, DP_DTYPE_F32);
    }
    const char *op = sparse ? "SparseSoftmaxCrossEntropyWithLogits"
                            : "SoftmaxCrossEntropyWithLogits";
    int ins[2] = {logits, lab}, ti;
    int per = fwd(b, K_XENT, op, op, ins, 2, nr, rows, DP_DTYPE_F32, &ti);
    if (ti >= 0) {
        /* Output 1 is the backprop (softmax - labels), shaped like the logits. */
        int bp = new_tensor(b, b->t[per].node, L.n_dims, L.dims, DP_DTYPE_F32, false);
        b->tape[ti].ia[0] = bp;
    }
    unsigned mask = (1u << nr) - 1;
    int loss = zb_reduce(b, "Mean", per, mask, false);
    zb_pop(b);
    return loss;
}

/* --- layers -------------------------------------------------------------------------------- */

static int conv_layer(struct zb *b, const char *name, int x, int cout, int kh, int kw,
                      int stride, bool same, bool bn, const char *act, bool depthwise) {
    if (b->st || x < 0) return -1;
    zb_push(b, "%s", name);
    int64_t cin = zb_dim(b, x, zb_caxis(b));
    int64_t wd[4] = {kh, kw, cin, depthwise ? 1 : cout};
    int w = zb_variable(b, depthwise ? "depthwise_kernel" : "kernel", 4, wd, "normal", true);
    int64_t zp[4] = {0, 0, 0, 0};
    int y = zb_conv(b, x, w, stride, same ? NULL : zp, depthwise);
    int64_t c = depthwise ? cin : cout;
    if (bn) {
        zb_push(b, "BatchNorm");
        int gm = variable(b, "gamma", 1, &c, "ones", true, false, false, NULL);
        int bt = variable(b, "beta", 1, &c, "zeros", true, false, false, NULL);
        int mm = variable(b, "moving_mean", 1, &c, "zeros", false, false, false, NULL);
        int mv = variable(b, "moving_variance", 1, &c, "ones", false, false, false, NULL);
        y = zb_batch_norm(b, y, gm, bt, mm, mv);
        zb_pop(b);
    } else {
        y = zb_bias_add(b, y, zb_variable(b, "bias", 1, &c, "zeros", true));
    }
    if (act) y = zb_unary(b, act, y);
    zb_pop(b);
    return y;
}

int zb_conv_layer(struct zb *b, const char *name, int x, int cout, int k, int stride, bool same,
                  bool bn, const char *act) {
    return conv_layer(b, name, x, cout, k, k, stride, same, bn, act, false);
}

int zb_conv_layer2(struct zb *b, const char *name, int x, int cout, int kh, int kw, int stride,
                   bool same, bool bn, const char *act) {
    return conv_layer(b, name, x, cout, kh, kw, stride, same, bn, act, false);
}

int zb_dwconv_layer(struct zb *b, const char *name, int x, int k, int stride, const char *act) {
    return conv_layer(b, name, x, 0, k, k, stride, true, true, act, true);
}

int zb_bn_layer(struct zb *b, const char *name, int x, const char *act) {
    if (b->st || x < 0) return -1;
    zb_push(b, "%s", name);
    int64_t c = zb_dim(b, x, b->t[x].n_dims == 4 ? zb_caxis(b) : -1);
    int gm = variable(b, "gamma", 1, &c, "ones", true, false, false, NULL);
    int bt = variable(b, "beta", 1, &c, "zeros", true, false, false, NULL);
    int mm = variable(b, "moving_mean", 1, &c, "zeros", false, false, false, NULL);
    int mv = variable(b, "moving_variance", 1, &c, "ones", false, false, false, NULL);
    int y = zb_batch_norm(b, x, gm, bt, mm, mv);
    if (act) y = zb_unary(b, act, y);
    zb_pop(b);
    return y;
}

int zb_dense(struct zb *b, const char *name, int x, int units, const char *act) {
    if (b->st || x < 0) return -1;
    zb_push(b, "%s", name);
    int64_t wd[2] = {zb_dim(b, x, -1), units}, u = units;
    int w = zb_variable(b, "kernel", 2, wd, "normal", true);
    int y = zb_matmul(b, x, w, false, false);
    y = zb_bias_add(b, y, zb_variable(b, "bias", 1, &u, "zeros", true));
    if (act) y = zb_unary(b, act, y);
    zb_pop(b);
    return y;
}

int zb_layer_norm(struct zb *b, const char *name, int x) {
    if (b->st || x < 0) return -1;
    if (zb_rank(b, x) < 1)
        return zb_fail(b, DP_ERR_SHAPE, "%s/%s: layer norm of a tensor of unknown shape",
                       b->scope, name);
    zb_push(b, "%s", name);
    int64_t d = zb_dim(b, x, -1);
    int gamma = zb_variable(b, "gamma", 1, &d, "ones", true);
    int beta = zb_variable(b, "beta", 1, &d, "zeros", true);
    unsigned last = 1u << (zb_rank(b, x) - 1);
    zb_push(b, "moments");
    int mean = zb_reduce(b, "Mean", x, last, true);
    int sq = zb_binary(b, "SquaredDifference", x, mean);
    int var = zb_reduce(b, "Mean", sq, last, true);
    zb_pop(b);
    zb_push(b, "batchnorm");
    int r = zb_unary(b, "Rsqrt", zb_binary(b, "AddV2", var, scalar(b, "add/y")));
    int s = zb_binary(b, "Mul", r, gamma);
    int xm = zb_binary(b, "Mul", x, s);
    int mm = zb_binary(b, "Mul", mean, s);
    int sh = zb_binary(b, "Sub", beta, mm);
    int y = zb_binary(b, "AddV2", xm, sh);
    zb_pop(b);
    zb_pop(b);
    return y;
}

int zb_gelu(struct zb *b, int x) {
    if (b->st || x < 0) return -1;
    zb_push(b, "gelu");
    int p = zb_binary(b, "Pow", x, scalar(b, "Pow/y"));
    int m = zb_binary(b, "Mul", scalar(b, "mul/x"), p);
    int a = zb_binary(b, "AddV2", x, m);
    int m2 = zb_binary(b, "Mul", scalar(b, "mul_1/x"), a);
    int t = zb_unary(b, "Tanh", m2);
    int a2 = zb_binary(b, "AddV2", scalar(b, "add_1/x"), t);
    int cdf = zb_binary(b, "Mul", scalar(b, "mul_2/x"), a2);
    int y = zb_binary(b, "Mul", x, cdf);
    zb_pop(b);
    return y;
}

/* --- gradients ----------------------------------------------------------------------------- */

static void add_contrib(struct zb *b, int target, int grad) {
    if (b->st || target < 0 || grad < 0 || !b->t[target].grad) return;
    if (!grow(b, (void **)&b->c, b->n_c, &b->cap_c, sizeof *b->c)) return;
    b->c[b->n_c] = (struct contrib){grad, b->t[target].first};
    b->t[target].first = b->n_c++;
}

/* The summed gradient of tensor t (AddN over its contributions), or -1 when it has none. */
static int grad_sum(struct zb *b, int t, const char *fwd_name) {
    int ids[64], n = 0;
    for (int c = b->t[t].first; c >= 0; c = b->c[c].next) {
        if (n == 64) { /* very wide fan-in: fold what we have so far */
            char full[NAME_MAX_LEN + 32];
            sfmt(full, sizeof full, "gradients/%s_grad/AddN", fwd_name);
            ids[0] = emit(b, full, "AddN", GPU_DEV, ids, n, b->t[t].n_dims, b->t[t].dims,
                          b->t[ids[0]].dt);
            n = 1;
        }
        ids[n++] = b->c[c].t;
    }
    if (n == 0) return -1;
    if (n == 1) return ids[0];
    char full[NAME_MAX_LEN + 32];
    sfmt(full, sizeof full, "gradients/AddN");
    int y = emit(b, full, "AddN", GPU_DEV, ids, n, b->t[t].n_dims, b->t[t].dims, b->t[ids[0]].dt);
    if (y >= 0) set_attr(b, b->t[y].node, "N", "%d", n);
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
        {"stack", "Pack"},
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
    sfmt(full, sizeof full, "gradients/%s_grad/%s",
         dp_graph_node(b->g, (size_t)o->node)->name, base);
    int y = emit(b, full, op, GPU_DEV, ins, n, b->t[like].n_dims, b->t[like].dims, b->t[like].dt);
    if (y >= 0) b->t[y].grad = false;
    return y;
}

/* Reduces a broadcast gradient g back to the shape of target (Sum + Reshape). */
static int unbroadcast(struct zb *b, const struct tape_op *o, int g, int target) {
    if (g < 0 || same_dims(&b->t[g], &b->t[target])) return g;
    int s = gop(b, o, "Sum", &g, 1, target);
    return gop(b, o, "Reshape", &s, 1, target);
}

static void backward_op(struct zb *b, const struct tape_op *o) {
    const int *in = &b->pool[o->in0], *out = &b->pool[o->out0];
    int dy[MAX_FAN];
    const char *fname = dp_graph_node(b->g, (size_t)o->node)->name;
    char fname_copy[NAME_MAX_LEN];
    sfmt(fname_copy, sizeof fname_copy, "%s", fname);
    bool any = false;
    for (int k = 0; k < o->n_out && k < MAX_FAN; k++) {
        dy[k] = grad_sum(b, out[k], fname_copy);
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
        bool dw = o->kind == K_DWCONV;
        int64_t four = 4;
        char full[NAME_MAX_LEN + 64];
        sfmt(full, sizeof full, "gradients/%s_grad/ShapeN", fname_copy);
        int shapes = emit(b, full, "ShapeN", GPU_DEV, &x, 1, 1, &four, DP_DTYPE_I32);
        if (gx) {
            int ins[3] = {shapes, w, g};
            add_contrib(b, x, gop(b, o, dw ? "DepthwiseConv2dNativeBackpropInput"
                                           : "Conv2DBackpropInput", ins, 3, x));
        }
        if (gw) {
            int ins[3] = {x, shapes, g};
            add_contrib(b, w, gop(b, o, dw ? "DepthwiseConv2dNativeBackpropFilter"
                                           : "Conv2DBackpropFilter", ins, 3, w));
        }
        break;
    }
    case K_BIAS:
        add_contrib(b, x, g);
        if (gw) add_contrib(b, w, gop(b, o, "BiasAddGrad", &g, 1, w));
        break;
    case K_BN: {
        int ins[4] = {g, x, w, y};
        int r = gop(b, o, "FusedBatchNormGradV3", ins, 4, x);
        if (r < 0) break;
        add_contrib(b, x, r);
        for (int k = 1; k < 3; k++) {
            int p = in[k];
            if (!b->t[p].grad) continue;
            add_contrib(b, p, new_tensor(b, b->t[r].node, b->t[p].n_dims, b->t[p].dims,
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
            sfmt(gn, sizeof gn, "%sGrad", op);
            r = gop(b, o, gn, ins, 2, x);
        } else if (!strcmp(op, "LeakyRelu") || !strcmp(op, "Softplus")) {
            int ins[2] = {g, x};
            char gn[32];
            sfmt(gn, sizeof gn, "%sGrad", op);
            r = gop(b, o, gn, ins, 2, x);
        } else if (!strcmp(op, "Sigmoid") || !strcmp(op, "Tanh") || !strcmp(op, "Rsqrt") ||
                   !strcmp(op, "Sqrt")) {
            int ins[2] = {y, g};
            char gn[32];
            sfmt(gn, sizeof gn, "%sGrad", op);
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
        } else { /* Identity and pass-through ops */
            r = g;
        }
        add_contrib(b, x, r);
        break;
    }
    case K_CAST:
        if (gx) {
            char full[NAME_MAX_LEN + 64];
            sfmt(full, sizeof full, "gradients/%s_grad/Cast", fname_copy);
            int r = emit(b, full, "Cast", GPU_DEV, &g, 1, b->t[x].n_dims, b->t[x].dims,
                         b->t[x].dt);
            if (r >= 0) {
                b->t[r].grad = false;
                set_attr(b, b->t[r].node, "DstT", "%s", dp_dtype_name(b->t[x].dt));
            }
            add_contrib(b, x, r);
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
            sfmt(full, sizeof full, "gradients/%s_grad/scalar", fname_copy);
            int sc = emit(b, full, "Const", GPU_DEV, NULL, 0, 0, NULL, b->t[g].dt);
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
        if (gx) add_contrib(b, x, unbroadcast(b, o, ga, x));
        if (gw) add_contrib(b, w, unbroadcast(b, o, gb, w));
        break;
    }
    case K_MATMUL: {
        bool tx = o->ia[0], ty = o->ia[1], batch = b->t[w].n_dims > 2;
        const char *mop = batch ? "BatchMatMulV2" : "MatMul";
        char name2[40];
        sfmt(name2, sizeof name2, "%s_1", mop);
        /* TF's _MatMulGrad: operands and transposes of dA and dB for each (tx, ty). */
        int k = (tx ? 2 : 0) + (ty ? 1 : 0);
        static const int ga_sw[4] = {0, 0, 1, 1}, gb_sw[4] = {0, 1, 0, 1};
        static const bool ga_t[4][2] = {{false, true}, {false, false}, {false, true}, {true, true}};
        static const bool gb_t[4][2] = {{true, false}, {true, false}, {false, false}, {true, true}};
        if (gx) {
            int ins[2] = {ga_sw[k] ? w : g, ga_sw[k] ? g : w};
            int r = gop(b, o, mop, ins, 2, x);
            if (r >= 0) matmul_attrs(b, b->t[r].node, batch, ga_t[k][0], ga_t[k][1]);
            add_contrib(b, x, r);
        }
        if (gw) {
            int ins[2] = {gb_sw[k] ? g : x, gb_sw[k] ? x : g};
            int r = gop(b, o, name2, ins, 2, w);
            if (r >= 0) matmul_attrs(b, b->t[r].node, batch, gb_t[k][0], gb_t[k][1]);
            add_contrib(b, w, r);
        }
        break;
    }
    case K_POOL:
        if (!gx) break;
        if (!strcmp(op, "MaxPool")) {
            int ins[3] = {x, y, g};
            add_contrib(b, x, gop(b, o, "MaxPoolGrad", ins, 3, x));
        } else {
            int64_t four = 4;
            char full[NAME_MAX_LEN + 64];
            sfmt(full, sizeof full, "gradients/%s_grad/Shape", fname_copy);
            int s = emit(b, full, "Const", GPU_DEV, NULL, 0, 1, &four, DP_DTYPE_I32);
            int ins[2] = {s, g};
            add_contrib(b, x, gop(b, o, "AvgPoolGrad", ins, 2, x));
        }
        break;
    case K_REDUCE: {
        if (!gx) break;
        /* Reshape to keepdims shape, Tile up to x, divide by the count for Mean. */
        int r = gop(b, o, "Reshape", &g, 1, g);
        if (r >= 0 && !o->ia[1]) {
            struct tensor *R = &b->t[r];
            int nd = 0;
            int64_t dims[DP_MAX_DIMS];
            for (int d = 0; d < b->t[x].n_dims; d++)
                dims[nd++] = ((unsigned)o->ia[0] & (1u << d)) ? 1 : b->t[x].dims[d];
            R->n_dims = nd;
            memcpy(R->dims, dims, sizeof dims);
            dp_graph_set_shape(b->g, R->node, nd, dims);
        }
        int t = gop(b, o, "Tile", &r, 1, x);
        if (!strcmp(op, "Mean")) {
            int ins[1] = {t};
            t = gop(b, o, "truediv", ins, 1, x);
        }
        add_contrib(b, x, t);
        break;
    }
    case K_SOFTMAX: {
        if (!gx) break;
        int i1[2] = {g, y};
        int m = gop(b, o, "mul", i1, 2, y);
        int s = gop(b, o, "Sum", &m, 1, y);
        if (s >= 0) {
            struct tensor *S = &b->t[s];
            S->dims[S->n_dims - 1] = 1;
            dp_graph_set_shape(b->g, S->node, S->n_dims, S->dims);
        }
        int i2[2] = {g, s};
        int d = gop(b, o, "sub", i2, 2, y);
        int i3[2] = {d, y};
        add_contrib(b, x, gop(b, o, "mul_1", i3, 2, y));
        break;
    }
    case K_CONCAT: {
        int off = -1;
        for (int i = 0; i < o->n_in; i++) {
            if (!b->t[in[i]].grad) continue;
            if (off < 0) {
                int64_t n = o->n_in;
                char full[NAME_MAX_LEN + 64];
                sfmt(full, sizeof full, "gradients/%s_grad/ConcatOffset", fname_copy);
                off = emit(b, full, "ConcatOffset", GPU_DEV, NULL, 0, 1, &n, DP_DTYPE_I32);
            }
            int ins[2] = {g, off};
            add_contrib(b, in[i], gop(b, o, "Slice", ins, 2, in[i]));
        }
        break;
    }
    case K_SPLIT:
    case K_UNSTACK: {
        int parts[MAX_FAN], np = o->n_out < MAX_FAN ? o->n_out : MAX_FAN;
        for (int k = 0; k < np; k++)
            parts[k] = dy[k] >= 0 ? dy[k] : gop(b, o, "zeros_like", &out[k], 1, out[k]);
        add_contrib(b, x, gop(b, o, o->kind == K_SPLIT ? "concat" : "stack", parts, np, x));
        break;
    }
    case K_STACK: {
        int parts[MAX_FAN];
        int np = o->n_in < MAX_FAN ? o->n_in : MAX_FAN;
        char full[NAME_MAX_LEN + 64];
        sfmt(full, sizeof full, "gradients/%s_grad/unstack", fname_copy);
        int u = emit(b, full, "Unpack", GPU_DEV, &g, 1, b->t[x].n_dims, b->t[x].dims, b->t[x].dt);
        for (int k = 0; k < np && u >= 0; k++) {
            parts[k] = k == 0 ? u : new_tensor(b, b->t[u].node, b->t[x].n_dims, b->t[x].dims,
                                               b->t[x].dt, false);
            b->t[parts[k]].grad = false;
            add_contrib(b, in[k], parts[k]);
        }
        break;
    }
    case K_RESHAPE:
        if (gx) add_contrib(b, x, gop(b, o, "Reshape", &g, 1, x));
        break;
    case K_TRANSPOSE:
        if (gx) add_contrib(b, x, gop(b, o, "transpose", &g, 1, x));
        break;
    case K_GATHER:
        if (gx) {
            int ins[2] = {g, w};
            add_contrib(b, x, gop(b, o, "UnsortedSegmentSum", ins, 2, x));
        }
        break;
    case K_SLICE:
        if (gx) add_contrib(b, x, gop(b, o, "StridedSliceGrad", &g, 1, x));
        break;
    case K_XENT:
        if (gx) {
            int e = gop(b, o, "ExpandDims", &g, 1, g);
            int ins[2] = {e, o->ia[0]};
            add_contrib(b, x, gop(b, o, "mul", ins, 2, x));
        }
        break;
    }
}

/* --- optimizer ----------------------------------------------------------------------------- */

static int node_named(struct zb *b, const char *name, const char *op, const char *dev,
                      const int *in_nodes, int n_in, int n_dims, const int64_t *dims,
                      enum dp_dtype dt) {
    return add_node(b, name, op, dev, n_dims, dims, dt, in_nodes, n_in);
}

static void add_ctrl(struct zb *b, int dst, int src) {
    if (b->st || dst < 0 || src < 0) return;
    struct dp_error e = {0};
    if (dp_graph_add_input(b->g, dst, src, true, &e)) zb_fail(b, e.status, "%s", e.msg);
}

enum dp_status zb_finish(struct zb *b, int loss, struct dp_error *err) {
    if (b->st || loss < 0) goto done;
    bool mixed = b->opts.precision == DP_PREC_MIXED;
    int scale = -1, target = loss;
    if (mixed) { /* loss scaling: the gradients of loss * S, unscaled per variable below */
        scale = emit(b, "loss_scale/scale", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        int ins[2] = {loss, scale};
        target = fwd(b, K_BINARY, "loss_scale/mul", "Mul", ins, 2, 0, NULL, DP_DTYPE_F32, NULL);
    }
    int64_t zero = 0;
    int shp = emit(b, "gradients/Shape", "Const", GPU_DEV, NULL, 0, 1, &zero, DP_DTYPE_I32);
    int ones = emit(b, "gradients/grad_ys_0", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
    int fi[2] = {shp, ones};
    int seed = emit(b, "gradients/Fill", "Fill", GPU_DEV, fi, 2, 0, NULL, DP_DTYPE_F32);
    if (target >= 0) b->t[target].grad = true;
    add_contrib(b, target, seed);
    for (int i = b->n_tape - 1; i >= 0 && !b->st; i--) backward_op(b, &b->tape[i]);

    /* The optimizer. */
    enum dp_optimizer opt = b->opts.optimizer;
    const char *oname = opt == DP_OPT_SGD ? "GradientDescent" : opt == DP_OPT_MOMENTUM ? "Momentum"
                                                                                        : "Adam";
    const char *apply = opt == DP_OPT_SGD ? "ApplyGradientDescent"
                        : opt == DP_OPT_MOMENTUM ? "ApplyMomentum" : "ApplyAdam";
    char nm[NAME_MAX_LEN + 64];
    sfmt(nm, sizeof nm, "%s/learning_rate", oname);
    int lr = node_named(b, nm, "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
    int mom = -1, b1 = -1, b2 = -1, eps = -1, b1p = -1, b2p = -1, b1p_ref = -1, b2p_ref = -1;
    if (opt == DP_OPT_MOMENTUM) {
        sfmt(nm, sizeof nm, "%s/momentum", oname);
        mom = node_named(b, nm, "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
    } else if (opt == DP_OPT_ADAM) {
        b1 = node_named(b, "Adam/beta1", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        b2 = node_named(b, "Adam/beta2", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        eps = node_named(b, "Adam/epsilon", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        char saved[NAME_MAX_LEN];
        sfmt(saved, sizeof saved, "%s", b->scope);
        b->scope[0] = '\0';
        b1p = variable(b, "beta1_power", 0, NULL, "Const", false, false, false, &b1p_ref);
        b2p = variable(b, "beta2_power", 0, NULL, "Const", false, false, false, &b2p_ref);
        sfmt(b->scope, sizeof b->scope, "%s", saved);
        /* Optimizer state, not model parameters. */
        for (int k = 0; k < 2; k++) {
            int ref = k ? b2p_ref : b1p_ref;
            if (ref < 0) continue;
            dp_graph_set_cost(b->g, b->t[ref].node, 0, 0, 0);
            set_attr(b, b->t[ref].node, "slot", "true");
        }
    }
    int n_apply = 0, cap_apply = 0;
    int *applies = NULL;
    int n_model_vars = b->n_vars; /* beta powers were appended after the model's variables */
    if (opt == DP_OPT_ADAM) n_model_vars -= 2;
    for (int v = 0; v < n_model_vars && !b->st; v++) {
        struct var *V = &b->vars[v];
        if (!V->trainable) continue;
        const struct dp_node *vn = dp_graph_node(b->g, (size_t)b->t[V->ref].node);
        char vname[NAME_MAX_LEN];
        sfmt(vname, sizeof vname, "%s", vn->name);
        int g = grad_sum(b, V->read, vname);
        if (g < 0) continue; /* unused by the loss */
        if (mixed) {
            sfmt(nm, sizeof nm, "loss_scale/unscale/%s", vname);
            int ins[2] = {g, scale};
            g = emit(b, nm, "RealDiv", GPU_DEV, ins, 2, b->t[V->ref].n_dims, b->t[V->ref].dims,
                     DP_DTYPE_F32);
        }
        int n_dims = b->t[V->ref].n_dims;
        int64_t dims[DP_MAX_DIMS];
        memcpy(dims, b->t[V->ref].dims, sizeof dims);
        int slots[2] = {-1, -1}, n_slots = opt == DP_OPT_SGD ? 0 : opt == DP_OPT_MOMENTUM ? 1 : 2;
        char saved[NAME_MAX_LEN];
        sfmt(saved, sizeof saved, "%s", b->scope);
        for (int s = 0; s < n_slots; s++) {
            sfmt(b->scope, sizeof b->scope, "%s", vname);
            variable(b, s == 0 ? oname : "Adam_1", n_dims, dims, "zeros", false, false, true,
                     &slots[s]);
        }
        sfmt(b->scope, sizeof b->scope, "%s", saved);
        int ins[10], n = 0;
        ins[n++] = b->t[V->ref].node;
        for (int s = 0; s < n_slots; s++) ins[n++] = slots[s] >= 0 ? b->t[slots[s]].node : -1;
        if (opt == DP_OPT_ADAM) {
            ins[n++] = b->t[b1p].node;
            ins[n++] = b->t[b2p].node;
        }
        ins[n++] = lr;
        if (opt == DP_OPT_MOMENTUM) ins[n++] = -1; /* grad goes before momentum */
        if (opt == DP_OPT_ADAM) {
            ins[n++] = b1;
            ins[n++] = b2;
            ins[n++] = eps;
        }
        if (opt == DP_OPT_MOMENTUM) {
            ins[n - 1] = g >= 0 ? b->t[g].node : -1;
            ins[n++] = mom;
        } else {
            ins[n++] = g >= 0 ? b->t[g].node : -1;
        }
        sfmt(nm, sizeof nm, "%s/update_%s/%s", oname, vname, apply);
        int a = node_named(b, nm, apply, GPU_DEV, ins, n, n_dims, dims, DP_DTYPE_F32);
        if (a >= 0 && opt == DP_OPT_MOMENTUM) set_attr(b, a, "use_nesterov", "false");
        if (a < 0) break;
        if (n_apply == cap_apply) {
            int nc = cap_apply ? cap_apply * 2 : 256;
            int *p = realloc(applies, (size_t)nc * sizeof *p);
            if (!p) { zb_fail(b, DP_ERR_NOMEM, "out of memory"); break; }
            applies = p;
            cap_apply = nc;
        }
        applies[n_apply++] = a;
    }
    int done_nodes[4], n_done = 0;
    if (opt == DP_OPT_ADAM && !b->st) {
        for (int k = 0; k < 2; k++) {
            int pw = k ? b2p : b1p, beta = k ? b2 : b1, ref = k ? b2p_ref : b1p_ref;
            int ins[2] = {b->t[pw].node, beta};
            int m = node_named(b, k ? "Adam/mul_1" : "Adam/mul", "Mul", GPU_DEV, ins, 2, 0, NULL,
                               DP_DTYPE_F32);
            for (int i = 0; i < n_apply; i++) add_ctrl(b, m, applies[i]);
            int ai[2] = {b->t[ref].node, m};
            done_nodes[n_done++] = node_named(b, k ? "Adam/Assign_1" : "Adam/Assign", "Assign",
                                              GPU_DEV, ai, 2, 0, NULL, DP_DTYPE_F32);
        }
    }
    /* The global step lives on the CPU, as TF places it. */
    int gs = node_named(b, "global_step", "VariableV2", CPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_I64);
    int gs_init = node_named(b, "global_step/Initializer/zeros", "Const", CPU_DEV, NULL, 0, 0,
                             NULL, DP_DTYPE_I64);
    int gi[2] = {gs, gs_init};
    int gs_assign = node_named(b, "global_step/Assign", "Assign", CPU_DEV, gi, 2, 0, NULL,
                               DP_DTYPE_I64);
    if (gs_init >= 0) set_attr(b, gs_init, "phase", "init");
    if (gs_assign >= 0) set_attr(b, gs_assign, "phase", "init");
    if (gs >= 0) set_attr(b, gs, "trainable", "false");
    int one = node_named(b, "global_step/add/y", "Const", CPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_I64);
    int ai[2] = {gs, one};
    int step = node_named(b, "global_step/AssignAdd", "AssignAdd", CPU_DEV, ai, 2, 0, NULL,
                          DP_DTYPE_I64);
    sfmt(nm, sizeof nm, "%s", oname);
    int group = node_named(b, nm, "NoOp", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_UNKNOWN);
    for (int i = 0; i < n_apply; i++) add_ctrl(b, group, applies[i]);
    for (int i = 0; i < n_done; i++) add_ctrl(b, group, done_nodes[i]);
    for (int i = 0; i < b->n_updates; i++) add_ctrl(b, step, b->updates[i]);
    add_ctrl(b, step, group);
    int train = node_named(b, "train_op", "NoOp", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_UNKNOWN);
    add_ctrl(b, train, step);
    add_ctrl(b, train, group);
    free(applies);
    if (!b->st) dp_cost_fill(b->g, dp_graph_batch(b->g), true);
done:
    return zb_status(b, err);
}
