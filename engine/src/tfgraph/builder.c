/* builder.c: the training-graph builder's core: the sticky error, name scopes, nodes (made
 * unique TF-style), tensors and the tape that records forward ops for their gradients, and the
 * sources: the input pipeline, variables (with initializers and reads) and constants. */
#include "tfgraph_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"

void zb_sfmt(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

/* Grows *arr (elements of size sz) to hold one more than *n; false on OOM (sticky error). */
bool zb_grow(struct zb *b, void **arr, int n, int *cap, size_t sz) {
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

struct zb *zb_init(struct dp_graph *g, const struct zb_opts *opts) {
    struct zb *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->g = g;
    b->opts = *opts;
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
    for (int i = 0; i < b->cap_names; i++) free(b->names[i].base);
    free(b->names);
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
    zb_sfmt(b->scope + len, sizeof b->scope - len, "%s%s", len ? "/" : "", part);
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

int64_t zb_batch_multiple(int64_t d) {
    if (d == DP_DIM_BATCH) return 1;
    return d <= ZB_DIM_BATCH_TIMES(2) && -d - 2 <= ZB_MAX_DIM ? -d - 2 : 0;
}

int zb_graph_dims(int n, const int64_t *dims, int64_t *out) {
    if (n < 0) return n;
    int m = 0;
    for (int d = 0; d < n; d++) {
        int64_t k = zb_batch_multiple(dims[d]);
        if (k < 2) {
            out[m++] = dims[d];
        } else if (m + (n - d) < DP_MAX_DIMS) { /* room for the batch and its factor */
            out[m++] = DP_DIM_BATCH;
            out[m++] = k;
        } else {
            out[m++] = DP_DIM_UNKNOWN;
        }
    }
    return m;
}

/* The next suffix to try for a node name already taken (TF's unique_name counter): names never
 * leave the graph, so every suffix below it is taken, and making n clashing names unique costs
 * O(n), not O(n^2) (10,000 unnamed ONNX nodes took 9.8 s). */
static int *suffix_slot(struct zb *b, const char *base) {
    if (2 * (b->n_names + 1) > b->cap_names) {
        int nc = b->cap_names ? b->cap_names * 2 : 256;
        struct name_count *t = calloc((size_t)nc, sizeof *t);
        if (!t) return NULL;
        for (int i = 0; i < b->cap_names; i++) {
            if (!b->names[i].base) continue;
            size_t h = dp_hash_str(b->names[i].base) & (size_t)(nc - 1);
            while (t[h].base) h = (h + 1) & (size_t)(nc - 1);
            t[h] = b->names[i];
        }
        free(b->names);
        b->names = t;
        b->cap_names = nc;
    }
    size_t h = dp_hash_str(base) & (size_t)(b->cap_names - 1);
    for (; b->names[h].base; h = (h + 1) & (size_t)(b->cap_names - 1))
        if (!strcmp(b->names[h].base, base)) return &b->names[h].next;
    size_t len = strlen(base) + 1;
    if (!(b->names[h].base = malloc(len))) return NULL;
    memcpy(b->names[h].base, base, len);
    b->names[h].next = 1;
    b->n_names++;
    return &b->names[h].next;
}

/* Adds a node named `full` (made unique TF-style) with data inputs in_nodes. */
int zb_add_node(struct zb *b, const char *full, const char *op, const char *dev, int n_dims,
                const int64_t *dims, enum dp_dtype dt, const int *in_nodes, int n_in) {
    if (b->st) return -1;
    char name[NAME_MAX_LEN + 16];
    zb_sfmt(name, sizeof name, "%s", full);
    if (dp_graph_find(b->g, name) >= 0) {
        int *next = suffix_slot(b, name);
        if (!next) return zb_fail(b, DP_ERR_NOMEM, "out of memory building the graph");
        for (int k = *next;; k++) {
            /* Shorten full to leave room for the suffix: a truncated "<full>_<k>" would be
             * the taken name again, forever. */
            char suffix[16];
            int ns = snprintf(suffix, sizeof suffix, "_%d", k);
            int keep = (int)sizeof name - 1 - ns;
            zb_sfmt(name, sizeof name, "%.*s%s", keep, full, suffix);
            if (dp_graph_find(b->g, name) < 0) {
                *next = k + 1;
                break;
            }
        }
    }
    int idx = -1;
    int64_t gd[DP_MAX_DIMS];
    int gn = zb_graph_dims(n_dims, dims, gd);
    struct dp_error e = {0};
    if (dp_graph_add_node(b->g, name, op, dev, gn, gd, dt, &idx, &e))
        return zb_fail(b, e.status, "%s", e.msg);
    for (int i = 0; i < n_in; i++)
        if (in_nodes[i] >= 0 && dp_graph_add_input(b->g, idx, in_nodes[i], false, &e))
            return zb_fail(b, e.status, "%s", e.msg);
    return idx;
}

void zb_set_shape(struct zb *b, int t, int n_dims, const int64_t *dims) {
    if (b->st || t < 0) return;
    struct tensor *x = &b->t[t];
    x->n_dims = n_dims;
    for (int d = 0; d < n_dims && d < DP_MAX_DIMS; d++) x->dims[d] = dims[d];
    int64_t gd[DP_MAX_DIMS];
    int gn = zb_graph_dims(n_dims, x->dims, gd);
    if (dp_graph_set_shape(b->g, x->node, gn, gd)) zb_fail(b, DP_ERR_NOMEM, "out of memory");
}

void zb_scoped(const struct zb *b, const char *base, char *out, size_t n) {
    zb_sfmt(out, n, "%s%s%s", b->scope, b->scope[0] ? "/" : "", base);
}

int zb_new_tensor(struct zb *b, int node, int n_dims, const int64_t *dims, enum dp_dtype dt,
                      bool grad) {
    if (b->st || node < 0) return -1;
    /* Imported shapes can hold anything: bounding every dimension keeps the shape arithmetic
     * (padding, concatenation) far from int64_t overflow. */
    for (int d = 0; d < n_dims && d < DP_MAX_DIMS; d++)
        if (dims[d] > ZB_MAX_DIM || (dims[d] < DP_DIM_UNKNOWN && !zb_batch_multiple(dims[d])))
            return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: dimension %lld out of range [0, 2^40]",
                           b->scope, (long long)dims[d]);
    int64_t copy[DP_MAX_DIMS]; /* dims may point into b->t, which zb_grow() moves */
    for (int d = 0; d < n_dims && d < DP_MAX_DIMS; d++) copy[d] = dims[d];
    if (!zb_grow(b, (void **)&b->t, b->n_t, &b->cap_t, sizeof *b->t)) return -1;
    struct tensor *x = &b->t[b->n_t];
    x->node = node;
    x->n_dims = n_dims;
    for (int d = 0; d < n_dims && d < DP_MAX_DIMS; d++) x->dims[d] = copy[d];
    x->dt = dt;
    x->grad = grad;
    x->first = -1;
    return b->n_t++;
}

void zb_set_attr(struct zb *b, int node, const char *key, const char *fmt, ...) {
    if (b->st || node < 0) return;
    char v[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (dp_graph_set_attr(b->g, node, key, v)) zb_fail(b, DP_ERR_NOMEM, "out of memory");
}

/* A node whose inputs are tensors; returns the new tensor (grad if any input needs one). */
int zb_emit(struct zb *b, const char *full, const char *op, const char *dev, const int *ins,
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
    int node = zb_add_node(b, full, op, dev, n_dims, dims, dt, n_in ? nodes : NULL, n_in);
    return zb_new_tensor(b, node, n_dims, dims, dt, grad);
}

/* A forward GPU op in the current scope, recorded on the tape when it needs a gradient. */
int zb_fwd(struct zb *b, enum kind kind, const char *base, const char *op, const int *ins,
               int n_in, int n_dims, const int64_t *dims, enum dp_dtype dt, int *tape_idx) {
    char full[NAME_MAX_LEN];
    zb_scoped(b, base, full, sizeof full);
    int y = zb_emit(b, full, op, GPU_DEV, ins, n_in, n_dims, dims, dt);
    if (tape_idx) *tape_idx = -1;
    if (y < 0 || !b->t[y].grad) return y;
    if (!zb_grow(b, (void **)&b->tape, b->n_tape, &b->cap_tape, sizeof *b->tape)) return -1;
    struct tape_op *o = &b->tape[b->n_tape];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->node = b->t[y].node;
    zb_sfmt(o->op, sizeof o->op, "%s", op);
    o->in0 = b->n_pool;
    o->n_in = n_in;
    for (int i = 0; i < n_in; i++) {
        if (!zb_grow(b, (void **)&b->pool, b->n_pool, &b->cap_pool, sizeof *b->pool)) return -1;
        b->pool[b->n_pool++] = ins[i];
    }
    if (!zb_grow(b, (void **)&b->pool, b->n_pool, &b->cap_pool, sizeof *b->pool)) return -1;
    o->out0 = b->n_pool;
    o->n_out = 1;
    b->pool[b->n_pool++] = y;
    if (tape_idx) *tape_idx = b->n_tape;
    b->n_tape++;
    return y;
}

/* Adds output tensor y to tape op ti (multi-output ops). */
void zb_tape_add_out(struct zb *b, int ti, int y) {
    if (b->st || ti < 0) return;
    struct tape_op *o = &b->tape[ti];
    /* Outputs are appended only right after creation, so the pool is contiguous. */
    DP_ASSERT(o->out0 + o->n_out == b->n_pool);
    if (!zb_grow(b, (void **)&b->pool, b->n_pool, &b->cap_pool, sizeof *b->pool)) return;
    b->pool[b->n_pool++] = y;
    o->n_out++;
}

/* A constant tensor in the current scope (GPU; TF keeps small ones in host memory). */
int zb_const(struct zb *b, const char *name, int n_dims, const int64_t *dims, enum dp_dtype dt) {
    char full[NAME_MAX_LEN];
    zb_scoped(b, name, full, sizeof full);
    return zb_emit(b, full, "Const", GPU_DEV, NULL, 0, n_dims, dims, dt);
}

int zb_scalar(struct zb *b, const char *base) {
    return zb_const(b, base, 0, NULL, zb_compute_dtype(b));
}
