/* onnx.c: ONNX import. A hand-written protobuf wire-format decoder (varints, fixed 32/64-bit,
 * length-delimited fields; every read bounds-checked, errors give the byte offset) reads
 * ModelProto -> GraphProto: nodes, initializers, inputs/outputs/value_info shapes. The ONNX ops
 * are then mapped onto the zoo's builder (NCHW, TF op names), which adds the gradient ops, the
 * optimizer (momentum) and the costs: the same training expansion as `driple zoo build`. */
#include "dp/onnx.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"
#include "tfgraph/tfgraph.h"

#define ONNX_MAX_FILE  ((size_t)1 << 31)
#define ONNX_MAX_VALS  16 /* small integer tensors kept (Reshape shapes, axes) */
#define ONNX_MAX_DEPTH 8

/* --- arena: everything decoded lives here and goes in one free ---------------------------- */

struct ablock {
    struct ablock *next;
    size_t         used, cap;
    alignas(16) unsigned char data[];
};

struct arena {
    struct ablock *head;
};

static void *ar_alloc(struct arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        struct ablock *blk = malloc(sizeof *blk + cap);
        if (!blk) return NULL;
        blk->next = a->head;
        blk->used = 0;
        blk->cap = cap;
        a->head = blk;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static void ar_free(struct arena *a) {
    while (a->head) {
        struct ablock *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

/* Appends one zeroed element of size sz to *arr (n, cap); NULL on OOM. */
static void *vec_push(struct arena *a, void **arr, int *n, int *cap, size_t sz) {
    if (*n == *cap) {
        if (*cap > INT_MAX / 2) return NULL; /* 2^30 two-byte entries fit in a 2 GiB file */
        int nc = *cap ? *cap * 2 : 8;
        void *p = ar_alloc(a, (size_t)nc * sz);
        if (!p) return NULL;
        if (*n) memcpy(p, *arr, (size_t)*n * sz);
        *arr = p;
        *cap = nc;
    }
    void *e = (unsigned char *)*arr + (size_t)(*n)++ * sz;
    memset(e, 0, sz);
    return e;
}

/* --- the wire format ------------------------------------------------------------------------ */

struct ctx {
    const unsigned char *base;
    const char          *name;
    struct dp_error     *err;
    enum dp_status       st;
    struct arena         ar;
};

struct rd {
    const unsigned char *p, *end;
    struct ctx          *c;
};

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

static bool fail_at(struct ctx *c, const unsigned char *at, enum dp_status st, const char *what) {
    if (!c->st) {
        c->st = st;
        dp_error_set(c->err, st, "%s:byte %zu: %s", c->name, (size_t)(at - c->base), what);
    }
    return false;
}

static bool rd_fail(struct rd *r, const char *what) {
    return fail_at(r->c, r->p, DP_ERR_PARSE, what);
}

static bool oom(struct ctx *c) {
    if (!c->st) {
        c->st = DP_ERR_NOMEM;
        dp_error_set(c->err, DP_ERR_NOMEM, "%s: out of memory", c->name);
    }
    return false;
}

static bool rd_varint(struct rd *r, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return rd_fail(r, "truncated varint");
        unsigned char b = *r->p++;
        if (shift == 63 && (b & 0x7e)) return rd_fail(r, "varint overflows 64 bits");
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return rd_fail(r, "varint longer than 10 bytes");
}

static bool rd_key(struct rd *r, uint32_t *field, int *wire) {
    const unsigned char *at = r->p;
    uint64_t k;
    if (!rd_varint(r, &k)) return false;
    *field = (uint32_t)(k >> 3);
    *wire = (int)(k & 7);
    if ((k >> 3) == 0 || (k >> 3) > 536870911u)
        return fail_at(r->c, at, DP_ERR_PARSE, "bad field number");
    if (*wire == 3 || *wire == 4)
        return fail_at(r->c, at, DP_ERR_PARSE, "protobuf groups (wire type 3/4) are not supported");
    if (*wire != WIRE_VARINT && *wire != WIRE_I64 && *wire != WIRE_LEN && *wire != WIRE_I32)
        return fail_at(r->c, at, DP_ERR_PARSE, "bad wire type");
    return true;
}

/* A length-delimited field: *sub reads its bytes. */
static bool rd_len(struct rd *r, struct rd *sub) {
    uint64_t n;
    if (!rd_varint(r, &n)) return false;
    if (n > (uint64_t)(r->end - r->p)) {
        char msg[128];
        snprintf(msg, sizeof msg, "length %llu runs past the end of its message (%zu bytes left)",
                 (unsigned long long)n, (size_t)(r->end - r->p));
        return rd_fail(r, msg);
    }
    sub->p = r->p;
    sub->end = r->p + n;
    sub->c = r->c;
    r->p += n;
    return true;
}

static bool rd_fixed(struct rd *r, int n, uint64_t *v) {
    if (r->end - r->p < n) return rd_fail(r, "truncated fixed-width field");
    uint64_t x = 0;
    for (int i = 0; i < n; i++) x |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    *v = x;
    return true;
}

static bool rd_skip(struct rd *r, int wire) {
    uint64_t v;
    struct rd sub;
    switch (wire) {
    case WIRE_VARINT: return rd_varint(r, &v);
    case WIRE_I64: return rd_fixed(r, 8, &v);
    case WIRE_I32: return rd_fixed(r, 4, &v);
    default: return rd_len(r, &sub);
    }
}

/* A string field, copied NUL-terminated into the arena. */
static bool rd_string(struct rd *r, int wire, const char **out) {
    struct rd sub;
    if (wire != WIRE_LEN) return rd_fail(r, "string field with a non-length wire type");
    if (!rd_len(r, &sub)) return false;
    size_t n = (size_t)(sub.end - sub.p);
    char *s = ar_alloc(&r->c->ar, n + 1);
    if (!s) return oom(r->c);
    memcpy(s, sub.p, n);
    s[n] = '\0';
    *out = s;
    return true;
}

/* Repeated integers, packed (wire 2) or one per field (wire 0); at most max kept, *n counts all. */
static bool rd_ints(struct rd *r, int wire, int64_t *vals, int max, int *n) {
    uint64_t v;
    if (wire == WIRE_VARINT) {
        if (!rd_varint(r, &v)) return false;
        if (*n < max) vals[*n] = (int64_t)v;
        (*n)++;
        return true;
    }
    if (wire != WIRE_LEN) return rd_fail(r, "integer list with a bad wire type");
    struct rd sub;
    if (!rd_len(r, &sub)) return false;
    while (sub.p < sub.end) {
        if (!rd_varint(&sub, &v)) return false;
        if (*n < max) vals[*n] = (int64_t)v;
        (*n)++;
    }
    return true;
}

static bool rd_int(struct rd *r, int wire, int64_t *out) {
    uint64_t v;
    if (wire != WIRE_VARINT) return rd_fail(r, "integer field with a non-varint wire type");
    if (!rd_varint(r, &v)) return false;
    *out = (int64_t)v;
    return true;
}

/* --- the decoded model ------------------------------------------------------------------------ */

struct o_tensor {
    const char *name;
    int         n_dims; /* may exceed DP_MAX_DIMS: then dims holds the first ones */
    int64_t     dims[DP_MAX_DIMS];
    int64_t     dtype;
    int64_t     vals[ONNX_MAX_VALS]; /* integer contents when small */
    int         n_vals;
    size_t      offset;
};

struct o_attr {
    const char      *name;
    int64_t          i;
    float            f;
    const char      *s;
    int64_t          ints[ONNX_MAX_VALS];
    int              n_ints;
    struct o_tensor *t;
};

struct o_node {
    const char    *name, *op;
    const char   **in, **out;
    int            n_in, cap_in, n_out, cap_out;
    struct o_attr *attrs;
    int            n_attrs, cap_attrs;
    size_t         offset;
};

struct o_value {
    const char *name;
    int64_t     elem;
    int         n_dims; /* -1: no shape */
    int64_t     dims[DP_MAX_DIMS];
    bool        sym[DP_MAX_DIMS];
    const char *param0; /* the symbolic name of dim 0, if any */
};

struct o_graph {
    const char      *name;
    struct o_node   *nodes;
    int              n_nodes, cap_nodes;
    struct o_tensor *inits;
    int              n_inits, cap_inits;
    struct o_value  *inputs, *outputs, *vinfo;
    int              n_inputs, cap_inputs, n_outputs, cap_outputs, n_vinfo, cap_vinfo;
};

static bool parse_tensor(struct rd *r, struct o_tensor *t) {
    uint32_t f;
    int w, n_vals = 0, n_raw = 0;
    struct rd raw = {NULL, NULL, r->c};
    t->offset = (size_t)(r->p - r->c->base);
    while (r->p < r->end) {
        if (!rd_key(r, &f, &w)) return false;
        if (f == 1) {
            if (!rd_ints(r, w, t->dims, DP_MAX_DIMS, &t->n_dims)) return false;
        } else if (f == 2) {
            if (!rd_int(r, w, &t->dtype)) return false;
        } else if (f == 8) {
            if (!rd_string(r, w, &t->name)) return false;
        } else if (f == 7 || f == 5) { /* int64_data, int32_data */
            if (!rd_ints(r, w, t->vals, ONNX_MAX_VALS, &n_vals)) return false;
        } else if (f == 9 && w == WIRE_LEN) { /* raw_data: decoded below, once dtype is known */
            if (!rd_len(r, &raw)) return false;
        } else if (!rd_skip(r, w)) {
            return false;
        }
    }
    if (raw.p && (t->dtype == 7 || t->dtype == 6)) { /* little-endian int64 / int32 */
        int width = t->dtype == 7 ? 8 : 4;
        size_t count = (size_t)(raw.end - raw.p) / (size_t)width;
        n_raw = count > ONNX_MAX_VALS ? ONNX_MAX_VALS + 1 : (int)count;
        for (int i = 0; i < n_raw && i < ONNX_MAX_VALS; i++) {
            uint64_t v;
            if (!rd_fixed(&raw, width, &v)) return false;
            t->vals[i] = width == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
        }
    }
    t->n_vals = n_vals ? n_vals : n_raw;
    if (t->n_vals > ONNX_MAX_VALS) t->n_vals = -1; /* too large to keep */
    return true;
}

static bool parse_attr(struct rd *r, struct o_attr *a) {
    uint32_t f;
    int w;
    while (r->p < r->end) {
        if (!rd_key(r, &f, &w)) return false;
        if (f == 1) {
            if (!rd_string(r, w, &a->name)) return false;
        } else if (f == 2 && w == WIRE_I32) {
            uint64_t v;
            if (!rd_fixed(r, 4, &v)) return false;
            uint32_t u = (uint32_t)v;
            memcpy(&a->f, &u, sizeof a->f);
        } else if (f == 3) {
            if (!rd_int(r, w, &a->i)) return false;
        } else if (f == 4) {
            if (!rd_string(r, w, &a->s)) return false;
        } else if (f == 5 && w == WIRE_LEN) {
            struct rd sub;
            if (!rd_len(r, &sub)) return false;
            if (!(a->t = ar_alloc(&r->c->ar, sizeof *a->t))) return oom(r->c);
            memset(a->t, 0, sizeof *a->t);
            if (!parse_tensor(&sub, a->t)) return false;
        } else if (f == 8) {
            if (!rd_ints(r, w, a->ints, ONNX_MAX_VALS, &a->n_ints)) return false;
        } else if (!rd_skip(r, w)) {
            return false;
        }
    }
    if (a->n_ints > ONNX_MAX_VALS) a->n_ints = ONNX_MAX_VALS;
    return true;
}

static bool parse_node(struct rd *r, struct o_node *n) {
    uint32_t f;
    int w;
    struct arena *ar = &r->c->ar;
    n->offset = (size_t)(r->p - r->c->base);
    n->name = "";
    n->op = "";
    while (r->p < r->end) {
        if (!rd_key(r, &f, &w)) return false;
        if (f == 1 || f == 2) {
            const char **slot = f == 1 ? vec_push(ar, (void **)&n->in, &n->n_in, &n->cap_in,
                                                  sizeof *n->in)
                                       : vec_push(ar, (void **)&n->out, &n->n_out, &n->cap_out,
                                                  sizeof *n->out);
            if (!slot) return oom(r->c);
            if (!rd_string(r, w, slot)) return false;
        } else if (f == 3) {
            if (!rd_string(r, w, &n->name)) return false;
        } else if (f == 4) {
            if (!rd_string(r, w, &n->op)) return false;
        } else if (f == 5 && w == WIRE_LEN) {
            struct rd sub;
            if (!rd_len(r, &sub)) return false;
            struct o_attr *a = vec_push(ar, (void **)&n->attrs, &n->n_attrs, &n->cap_attrs,
                                        sizeof *a);
            if (!a) return oom(r->c);
            a->name = "";
            if (!parse_attr(&sub, a)) return false;
        } else if (!rd_skip(r, w)) {
            return false;
        }
    }
    return true;
}

static bool parse_shape(struct rd *r, struct o_value *v) {
    uint32_t f;
    int w;
    v->n_dims = 0;
    while (r->p < r->end) {
        if (!rd_key(r, &f, &w)) return false;
        if (f != 1 || w != WIRE_LEN) {
            if (!rd_skip(r, w)) return false;
            continue;
        }
        struct rd dim;
        if (!rd_len(r, &dim)) return false;
        int64_t value = DP_DIM_UNKNOWN;
        const char *param = NULL;
        while (dim.p < dim.end) {
            if (!rd_key(&dim, &f, &w)) return false;
            if (f == 1) {
                if (!rd_int(&dim, w, &value)) return false;
            } else if (f == 2) {
                if (!rd_string(&dim, w, &param)) return false;
            } else if (!rd_skip(&dim, w)) {
                return false;
            }
        }
        if (v->n_dims >= DP_MAX_DIMS) return rd_fail(r, "tensor shape with more than 8 dimensions");
        if (value > ZB_MAX_DIM) return rd_fail(r, "tensor dimension larger than 2^40");
        v->sym[v->n_dims] = value < 0;
        v->dims[v->n_dims] = value < 0 ? DP_DIM_UNKNOWN : value;
        if (v->n_dims == 0 && param) v->param0 = param;
        v->n_dims++;
    }
    return true;
}

static bool parse_value_info(struct rd *r, struct o_value *v) {
    uint32_t f;
    int w;
    v->name = "";
    v->n_dims = -1;
    while (r->p < r->end) {
        if (!rd_key(r, &f, &w)) return false;
        if (f == 1) {
            if (!rd_string(r, w, &v->name)) return false;
        } else if (f == 2 && w == WIRE_LEN) { /* TypeProto */
            struct rd type;
            if (!rd_len(r, &type)) return false;
            while (type.p < type.end) {
                if (!rd_key(&type, &f, &w)) return false;
                if (f != 1 || w != WIRE_LEN) { /* only tensor types have shapes we use */
                    if (!rd_skip(&type, w)) return false;
                    continue;
                }
                struct rd tt;
                if (!rd_len(&type, &tt)) return false;
                while (tt.p < tt.end) {
                    if (!rd_key(&tt, &f, &w)) return false;
                    if (f == 1) {
                        if (!rd_int(&tt, w, &v->elem)) return false;
                    } else if (f == 2 && w == WIRE_LEN) {
                        struct rd shape;
                        if (!rd_len(&tt, &shape) || !parse_shape(&shape, v)) return false;
                    } else if (!rd_skip(&tt, w)) {
                        return false;
                    }
                }
            }
        } else if (!rd_skip(r, w)) {
            return false;
        }
    }
    return true;
}

static bool parse_graph(struct rd *r, struct o_graph *g) {
    uint32_t f;
    int w;
    struct arena *ar = &r->c->ar;
    g->name = "";
    while (r->p < r->end) {
        if (!rd_key(r, &f, &w)) return false;
        struct rd sub;
        if (f == 2) {
            if (!rd_string(r, w, &g->name)) return false;
        } else if (f == 1 && w == WIRE_LEN) {
            if (!rd_len(r, &sub)) return false;
            struct o_node *n = vec_push(ar, (void **)&g->nodes, &g->n_nodes, &g->cap_nodes,
                                        sizeof *n);
            if (!n) return oom(r->c);
            if (!parse_node(&sub, n)) return false;
        } else if (f == 5 && w == WIRE_LEN) {
            if (!rd_len(r, &sub)) return false;
            struct o_tensor *t = vec_push(ar, (void **)&g->inits, &g->n_inits, &g->cap_inits,
                                          sizeof *t);
            if (!t) return oom(r->c);
            t->name = "";
            if (!parse_tensor(&sub, t)) return false;
        } else if ((f == 11 || f == 12 || f == 13) && w == WIRE_LEN) {
            if (!rd_len(r, &sub)) return false;
            struct o_value *v = f == 11 ? vec_push(ar, (void **)&g->inputs, &g->n_inputs,
                                                   &g->cap_inputs, sizeof *v)
                              : f == 12 ? vec_push(ar, (void **)&g->outputs, &g->n_outputs,
                                                   &g->cap_outputs, sizeof *v)
                                        : vec_push(ar, (void **)&g->vinfo, &g->n_vinfo,
                                                   &g->cap_vinfo, sizeof *v);
            if (!v) return oom(r->c);
            if (!parse_value_info(&sub, v)) return false;
        } else if (!rd_skip(r, w)) {
            return false;
        }
    }
    return true;
}

/* ModelProto: finds field 7 (graph); everything else is skipped. */
static bool parse_model(struct ctx *c, const unsigned char *data, size_t len, struct o_graph *g,
                        bool *have_graph) {
    struct rd r = {data, data + len, c};
    uint32_t f;
    int w;
    *have_graph = false;
    while (r.p < r.end) {
        if (!rd_key(&r, &f, &w)) return false;
        if (f == 7 && w == WIRE_LEN) {
            struct rd sub;
            if (!rd_len(&r, &sub)) return false;
            memset(g, 0, sizeof *g);
            if (!parse_graph(&sub, g)) return false;
            *have_graph = true;
        } else if (!rd_skip(&r, w)) {
            return false;
        }
    }
    return true;
}

/* --- building the training graph ---------------------------------------------------------- */

enum { SRC_NONE, SRC_INIT, SRC_CONST };

struct value {
    const char *name;
    int         tensor;   /* builder tensor, -1 until made */
    int         src;      /* SRC_INIT (initializer index) or SRC_CONST (Constant node tensor) */
    const struct o_tensor *t;
    int         softmax_of; /* the tensor a Softmax output was computed from, -1 */
    const struct o_value *vi; /* its value_info (or graph output) shape, if any */
};

struct imp {
    struct ctx     *c;
    struct o_graph *g;
    struct zb      *b;
    struct value   *vals;
    size_t          n_vals, cap; /* open addressing, cap a power of two */
    const struct o_node *node;   /* the node being mapped, for messages */
    int64_t         fixed_batch; /* dim 0 of the first input when numeric (0: symbolic) */
};

static uint64_t hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct value *lookup(struct imp *im, const char *name, bool create) {
    size_t h = hash(name) & (im->cap - 1);
    while (im->vals[h].name) {
        if (!strcmp(im->vals[h].name, name)) return &im->vals[h];
        h = (h + 1) & (im->cap - 1);
    }
    if (!create || im->n_vals + 1 >= im->cap / 2) return NULL;
    struct value *v = &im->vals[h];
    v->name = name;
    v->tensor = -1;
    v->softmax_of = -1;
    im->n_vals++;
    return v;
}

static int node_fail(struct imp *im, enum dp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int node_fail(struct imp *im, enum dp_status st, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!im->c->st) {
        im->c->st = st;
        if (im->node)
            dp_error_set(im->c->err, st, "%s:byte %zu: node '%s' (%s): %s", im->c->name,
                         im->node->offset, im->node->name, im->node->op, what);
        else dp_error_set(im->c->err, st, "%s: %s", im->c->name, what);
    }
    return -1;
}

static const struct o_attr *attr(const struct o_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && !strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

static int64_t attr_i(const struct o_node *n, const char *name, int64_t def) {
    const struct o_attr *a = attr(n, name);
    return a ? a->i : def;
}

static enum dp_dtype onnx_dtype(int64_t t) {
    switch (t) {
    case 1: return DP_DTYPE_F32;
    case 2: return DP_DTYPE_U8;
    case 3: return DP_DTYPE_I8;
    case 5: return DP_DTYPE_I16;
    case 6: return DP_DTYPE_I32;
    case 7: return DP_DTYPE_I64;
    case 8: return DP_DTYPE_STRING;
    case 9: return DP_DTYPE_BOOL;
    case 10: return DP_DTYPE_F16;
    case 11: return DP_DTYPE_F64;
    case 16: return DP_DTYPE_BF16;
    default: return DP_DTYPE_UNKNOWN;
    }
}

/* A name fit for a graph node: ':' and control characters become '_'; empty -> fallback. */
static const char *clean_name(struct imp *im, const char *s, const char *fallback) {
    if (!s || !*s) s = fallback;
    size_t n = strlen(s);
    char *d = ar_alloc(&im->c->ar, n + 1);
    if (!d) {
        oom(im->c);
        return "x";
    }
    for (size_t i = 0; i <= n; i++)
        d[i] = (s[i] == ':' || s[i] == '^' || (s[i] > 0 && s[i] < 32)) ? '_' : s[i];
    return d;
}

static bool is_float(int64_t dtype) {
    return dtype == 1 || dtype == 10 || dtype == 11 || dtype == 16;
}

static double numel(const struct o_tensor *t) {
    double n = 1;
    for (int d = 0; d < t->n_dims && d < DP_MAX_DIMS; d++) n *= (double)t->dims[d];
    return n;
}

enum role { ROLE_AUTO, ROLE_WEIGHT, ROLE_STAT, ROLE_CONST };

/* The builder tensor for an ONNX value name, making variables and constants on first use
 * (dims: the variable's TF-layout shape, or NULL for the initializer's own). */
static int get_as(struct imp *im, const char *name, enum role role, int n_dims,
                  const int64_t *dims) {
    if (im->c->st) return -1;
    if (!name || !*name) return -1;
    struct value *v = lookup(im, name, false);
    if (!v) return node_fail(im, DP_ERR_INVALID, "input '%s' is not produced by an earlier node, "
                                                 "an initializer or a graph input", name);
    if (v->tensor >= 0) return v->tensor;
    const struct o_tensor *t = v->t;
    if (!t) return node_fail(im, DP_ERR_INVALID, "input '%s' is not produced by an earlier node, "
                                                 "an initializer or a graph input", name);
    if (t->n_dims > DP_MAX_DIMS)
        return node_fail(im, DP_ERR_UNSUPPORTED, "initializer '%s' has %d dimensions", name,
                         t->n_dims);
    if (!dims) {
        n_dims = t->n_dims;
        dims = t->dims;
    }
    for (int d = 0; d < n_dims; d++)
        if (dims[d] < 0 || dims[d] > ZB_MAX_DIM)
            return node_fail(im, DP_ERR_INVALID, "initializer '%s': dimension %lld out of range "
                             "[0, 2^40]", name, (long long)dims[d]);
    if (role == ROLE_AUTO) role = is_float(t->dtype) && numel(t) > 1 ? ROLE_WEIGHT : ROLE_CONST;
    if (v->src == SRC_CONST || !is_float(t->dtype)) role = ROLE_CONST;
    const char *nm = clean_name(im, name, "const");
    if (role == ROLE_CONST) v->tensor = zb_const(im->b, nm, n_dims, dims, onnx_dtype(t->dtype));
    else v->tensor = zb_variable(im->b, nm, n_dims, dims, role == ROLE_STAT ? "zeros" : "normal",
                                 role == ROLE_WEIGHT);
    return v->tensor;
}

static int get(struct imp *im, int k, enum role role) {
    const struct o_node *n = im->node;
    return k < n->n_in ? get_as(im, n->in[k], role, 0, NULL) : -1;
}

static bool set_out(struct imp *im, int k, int tensor) {
    const struct o_node *n = im->node;
    if (tensor < 0 || k >= n->n_out || !*n->out[k]) return tensor >= 0;
    struct value *v = lookup(im, n->out[k], true);
    if (!v) return node_fail(im, DP_ERR_INVALID, "output '%s' defined twice", n->out[k]) == 0;
    if (v->tensor >= 0 || v->t)
        return node_fail(im, DP_ERR_INVALID, "output '%s' defined twice", n->out[k]) == 0;
    v->tensor = tensor;
    /* The shape we inferred must agree with the file's value_info (batch dim aside). */
    const struct o_value *vi = v->vi;
    if (!vi || vi->n_dims < 0) return true;
    int r = zb_rank(im->b, tensor);
    const int64_t *d = zb_dims(im->b, tensor);
    bool same = r == vi->n_dims;
    for (int i = 1; same && i < r; i++)
        if (d[i] > 0 && vi->dims[i] > 0 && d[i] != vi->dims[i]) same = false;
    if (same) return true;
    char got[128] = "", want[128] = "";
    for (int i = 0; i < r && i < DP_MAX_DIMS; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                 (long long)d[i]);
    for (int i = 0; i < vi->n_dims; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "," : "",
                 (long long)vi->dims[i]);
    return node_fail(im, DP_ERR_SHAPE, "output '%s': inferred shape [%s] but value_info says [%s]",
                     n->out[k], got, want) == 0;
}

/* The constant integers behind input k (an initializer or a Constant node), or NULL. */
static const struct o_tensor *const_input(struct imp *im, int k) {
    const struct o_node *n = im->node;
    if (k >= n->n_in || !*n->in[k]) return NULL;
    struct value *v = lookup(im, n->in[k], false);
    return v && v->t && v->t->n_vals >= 0 ? v->t : NULL;
}

/* Window attributes: one stride and square kernel; pads as {top, bottom, left, right}, or
 * *same for SAME padding. */
static bool window(struct imp *im, int64_t *k, int64_t *stride, int64_t *pads, bool *same) {
    const struct o_node *n = im->node;
    const struct o_attr *ks = attr(n, "kernel_shape"), *st = attr(n, "strides");
    const struct o_attr *pd = attr(n, "pads"), *ap = attr(n, "auto_pad");
    const struct o_attr *dl = attr(n, "dilations");
    *k = 0;
    if (ks && ks->n_ints >= 2) {
        if (ks->ints[0] != ks->ints[1])
            return node_fail(im, DP_ERR_UNSUPPORTED, "non-square window %lldx%lld",
                             (long long)ks->ints[0], (long long)ks->ints[1]) == 0;
        *k = ks->ints[0];
    }
    *stride = 1;
    if (st && st->n_ints >= 2) {
        if (st->ints[0] != st->ints[1] || st->ints[0] < 1 || st->ints[0] > 64)
            return node_fail(im, DP_ERR_UNSUPPORTED, "strides %lld, %lld",
                             (long long)st->ints[0], (long long)st->ints[1]) == 0;
        *stride = st->ints[0];
    }
    for (int i = 0; dl && i < dl->n_ints; i++)
        if (dl->ints[i] != 1) return node_fail(im, DP_ERR_UNSUPPORTED, "dilated windows") == 0;
    memset(pads, 0, 4 * sizeof *pads);
    *same = ap && ap->s && !strncmp(ap->s, "SAME", 4);
    if (pd && pd->n_ints >= 4) {
        for (int i = 0; i < 4; i++)
            if (pd->ints[i] < 0 || pd->ints[i] > 1024)
                return node_fail(im, DP_ERR_INVALID, "pads out of range") == 0;
        pads[0] = pd->ints[0]; /* ONNX: [h_begin, w_begin, h_end, w_end] */
        pads[1] = pd->ints[2];
        pads[2] = pd->ints[1];
        pads[3] = pd->ints[3];
    }
    return true;
}

static int map_conv(struct imp *im) {
    const struct o_node *n = im->node;
    int x = get(im, 0, ROLE_AUTO);
    if (x < 0) return -1;
    if (zb_rank(im->b, x) != 4)
        return node_fail(im, DP_ERR_UNSUPPORTED, "only 2-D convolutions (4-D input)");
    struct value *wv = n->n_in > 1 ? lookup(im, n->in[1], false) : NULL;
    if (!wv || !wv->t || wv->t->n_dims != 4)
        return node_fail(im, DP_ERR_UNSUPPORTED, "the filter must be a 4-D initializer");
    const struct o_tensor *w = wv->t;
    int64_t group = attr_i(n, "group", 1), cin = zb_dim(im->b, x, 1);
    bool depthwise = group > 1 && group == cin && w->dims[1] == 1;
    if (group != 1 && !depthwise)
        return node_fail(im, DP_ERR_UNSUPPORTED, "grouped convolution (group %lld)",
                         (long long)group);
    int64_t k, stride, pads[4];
    bool same;
    if (!window(im, &k, &stride, pads, &same)) return -1;
    /* OIHW -> TF's HWIO (depthwise: [kh, kw, in, multiplier]). */
    int64_t wd[4] = {w->dims[2], w->dims[3], depthwise ? group : w->dims[1],
                     depthwise ? w->dims[0] / group : w->dims[0]};
    int wt = get_as(im, n->in[1], ROLE_WEIGHT, 4, wd);
    int bias = n->n_in > 2 ? get(im, 2, ROLE_WEIGHT) : -1;
    zb_push(im->b, "%s", clean_name(im, n->name, "conv"));
    int y = zb_conv(im->b, x, wt, (int)stride, same ? NULL : pads, depthwise);
    if (bias >= 0) y = zb_bias_add(im->b, y, bias);
    zb_pop(im->b);
    return y;
}

static int map_gemm(struct imp *im, bool gemm) {
    const struct o_node *n = im->node;
    bool ta = gemm && attr_i(n, "transA", 0), tb = gemm && attr_i(n, "transB", 0);
    int a = get(im, 0, ROLE_AUTO), w;
    if (a < 0) return -1;
    struct value *bv = n->n_in > 1 ? lookup(im, n->in[1], false) : NULL;
    if (bv && bv->t && bv->tensor < 0 && bv->t->n_dims == 2 && is_float(bv->t->dtype)) {
        const int64_t *bd = bv->t->dims;
        int64_t wd[2] = {tb ? bd[1] : bd[0], tb ? bd[0] : bd[1]};
        w = get_as(im, n->in[1], ROLE_WEIGHT, 2, wd);
        tb = false;
    } else {
        w = get(im, 1, ROLE_AUTO);
    }
    if (w < 0) return -1;
    zb_push(im->b, "%s", clean_name(im, n->name, gemm ? "gemm" : "matmul"));
    int y = zb_matmul(im->b, a, w, ta, tb);
    if (gemm && n->n_in > 2 && *n->in[2]) {
        int c = get(im, 2, ROLE_WEIGHT);
        if (c >= 0 && zb_rank(im->b, c) == 1) y = zb_bias_add(im->b, y, c);
        else if (c >= 0) y = zb_binary(im->b, "AddV2", y, c);
    }
    zb_pop(im->b);
    return y;
}

static int map_reshape_to(struct imp *im, int x, int n_dims, const int64_t *dims) {
    zb_push(im->b, "%s", clean_name(im, im->node->name, "reshape"));
    int y = zb_reshape(im->b, x, n_dims, dims);
    zb_pop(im->b);
    return y;
}

/* Resolves an ONNX Reshape target (0 = copy, -1 = infer) against x's shape with its symbolic
 * batch; fails when the batch would be folded into another dimension. */
static int map_reshape(struct imp *im, int x, const int64_t *want, int n) {
    const int64_t *xd = zb_dims(im->b, x);
    int xr = zb_rank(im->b, x);
    if (n < 0 || n > DP_MAX_DIMS) return node_fail(im, DP_ERR_UNSUPPORTED, "reshape to rank %d", n);
    double rest = 1; /* elements of x apart from the batch */
    bool batched = false;
    for (int d = 0; d < xr; d++) {
        if (xd[d] == DP_DIM_BATCH) batched = true;
        else if (xd[d] > 0) rest *= (double)xd[d];
        else return node_fail(im, DP_ERR_UNSUPPORTED, "reshape of a tensor of unknown shape");
    }
    int64_t out[DP_MAX_DIMS];
    int infer = -1;
    bool has_batch = false;
    double known = 1;
    for (int d = 0; d < n; d++) { /* ONNX's -1 (infer) is not our DP_DIM_BATCH (also -1) */
        out[d] = want[d] == 0 && d < xr ? xd[d] : want[d];
        if (want[d] == -1 && infer < 0) infer = d;
        else if (out[d] == DP_DIM_BATCH && want[d] == 0) has_batch = true;
        else if (out[d] > 0) known *= (double)out[d];
        else return node_fail(im, DP_ERR_INVALID, "bad reshape target dimension %lld",
                              (long long)want[d]);
    }
    if (infer >= 0) {
        if (has_batch || !batched) {
            double v = rest / known;
            /* bounded before the cast: a double beyond int64_t makes it undefined */
            if (!(v >= 1 && v <= (double)ZB_MAX_DIM) || v != floor(v))
                return node_fail(im, DP_ERR_SHAPE, "reshape of %g elements into %g", rest, known);
            out[infer] = (int64_t)v;
        } else if (rest == known) {
            out[infer] = DP_DIM_BATCH;
        } else {
            return node_fail(im, DP_ERR_UNSUPPORTED, "reshape folds the batch dimension into "
                                                     "another one");
        }
    } else if (batched && !has_batch) {
        return node_fail(im, DP_ERR_UNSUPPORTED, "reshape drops the batch dimension");
    }
    return map_reshape_to(im, x, n, out);
}

static unsigned axes_mask(struct imp *im, int rank, const struct o_attr *axes,
                          const struct o_tensor *axes_in) {
    unsigned mask = 0;
    if (rank < 0 || rank > DP_MAX_DIMS) {
        node_fail(im, DP_ERR_UNSUPPORTED, "reduction over a tensor of unknown rank");
        return 0;
    }
    const int64_t *v = axes ? axes->ints : axes_in ? axes_in->vals : NULL;
    int n = axes ? axes->n_ints : axes_in ? axes_in->n_vals : 0;
    if (!v) return (1u << rank) - 1;
    for (int i = 0; i < n; i++) {
        int64_t a = v[i] < 0 ? v[i] + rank : v[i];
        if (a < 0 || a >= rank) {
            node_fail(im, DP_ERR_INVALID, "axis %lld out of range", (long long)v[i]);
            return 0;
        }
        mask |= 1u << a;
    }
    return mask;
}

static const struct { const char *onnx, *tf; } unary_ops[] = {
    {"Relu", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Exp", "Exp"}, {"Log", "Log"},
    {"Sqrt", "Sqrt"}, {"Neg", "Neg"}, {"Erf", "Erf"}, {"Softplus", "Softplus"}, {"Elu", "Elu"},
    {"LeakyRelu", "LeakyRelu"}, {"Identity", "Identity"}, {"Clip", "Relu6"},
};
static const struct { const char *onnx, *tf; } binary_ops[] = {
    {"Add", "AddV2"}, {"Sub", "Sub"}, {"Mul", "Mul"}, {"Div", "RealDiv"}, {"Pow", "Pow"},
    {"Max", "Maximum"}, {"Min", "Minimum"},
};

static bool is_int_dtype(enum dp_dtype t) {
    return t == DP_DTYPE_I64 || t == DP_DTYPE_I32 || t == DP_DTYPE_I16 || t == DP_DTYPE_I8 ||
           t == DP_DTYPE_U8 || t == DP_DTYPE_BOOL;
}

/* True when every input is integer (shape arithmetic: Shape -> Gather -> Concat ...): such ops
 * need no gradient and are kept as they are, shaped from value_info. */
static bool int_only(struct imp *im) {
    const struct o_node *n = im->node;
    int seen = 0;
    for (int i = 0; i < n->n_in; i++) {
        if (!*n->in[i]) continue;
        struct value *v = lookup(im, n->in[i], false);
        if (!v) return false;
        if (v->tensor >= 0 && !is_int_dtype(zb_dtype(im->b, v->tensor))) return false;
        if (v->tensor < 0 && (!v->t || is_float(v->t->dtype))) return false;
        seen++;
    }
    return seen > 0;
}

/* Maps one ONNX node; false on failure (message set). */
static bool map_node(struct imp *im) {
    const struct o_node *n = im->node;
    struct zb *b = im->b;
    const char *op = n->op;
    const char *scope = clean_name(im, n->name, op);
    int y = -1;
    if (!strcmp(op, "Constant")) return true; /* recorded before the walk */
    if (int_only(im)) goto opaque;
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++) {
        if (strcmp(op, unary_ops[i].onnx)) continue;
        int x = get(im, 0, ROLE_AUTO);
        zb_push(b, "%s", scope);
        y = zb_unary(b, unary_ops[i].tf, x);
        zb_pop(b);
        return set_out(im, 0, y);
    }
    for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++) {
        if (strcmp(op, binary_ops[i].onnx)) continue;
        enum role r = !strcmp(op, "Div") || !strcmp(op, "Pow") ? ROLE_CONST : ROLE_AUTO;
        int x = get(im, 0, ROLE_AUTO), z = get(im, 1, r);
        if (n->n_in < 2) return node_fail(im, DP_ERR_INVALID, "needs 2 inputs") == 0;
        if (x < 0 || z < 0) return false;
        zb_push(b, "%s", scope);
        y = zb_binary(b, binary_ops[i].tf, x, z);
        zb_pop(b);
        return set_out(im, 0, y);
    }
    if (!strcmp(op, "Conv")) {
        y = map_conv(im);
    } else if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul")) {
        y = map_gemm(im, !strcmp(op, "Gemm"));
    } else if (!strcmp(op, "BatchNormalization")) {
        int x = get(im, 0, ROLE_AUTO), g = get(im, 1, ROLE_WEIGHT), be = get(im, 2, ROLE_WEIGHT);
        int m = get(im, 3, ROLE_STAT), v = get(im, 4, ROLE_STAT);
        zb_push(b, "%s", scope);
        y = zb_batch_norm(b, x, g, be, m, v);
        zb_pop(b);
    } else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
        int x = get(im, 0, ROLE_AUTO);
        int64_t k, stride, pads[4];
        bool same;
        if (x < 0 || !window(im, &k, &stride, pads, &same)) return false;
        if (k < 1 || k > 1024) return node_fail(im, DP_ERR_INVALID, "bad kernel_shape") == 0;
        zb_push(b, "%s", scope);
        y = zb_pool(b, op[0] == 'M' ? "MaxPool" : "AvgPool", x, (int)k, (int)stride,
                    same ? NULL : pads);
        zb_pop(b);
    } else if (!strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool")) {
        int x = get(im, 0, ROLE_AUTO);
        if (x >= 0 && zb_rank(b, x) != 4)
            return node_fail(im, DP_ERR_UNSUPPORTED, "global pooling of a non-4-D tensor") == 0;
        zb_push(b, "%s", scope);
        y = zb_reduce(b, op[6] == 'A' ? "Mean" : "Max", x, 0xcu, true);
        zb_pop(b);
    } else if (!strcmp(op, "ReduceMean") || !strcmp(op, "ReduceSum")) {
        int x = get(im, 0, ROLE_AUTO);
        if (x < 0) return false;
        unsigned mask = axes_mask(im, zb_rank(b, x), attr(n, "axes"), const_input(im, 1));
        if (im->c->st) return false;
        zb_push(b, "%s", scope);
        y = zb_reduce(b, op[6] == 'M' ? "Mean" : "Sum", x, mask, attr_i(n, "keepdims", 1) != 0);
        zb_pop(b);
    } else if (!strcmp(op, "Flatten")) {
        int x = get(im, 0, ROLE_AUTO);
        if (x < 0) return false;
        int64_t axis = attr_i(n, "axis", 1), want[2] = {0, -1};
        if (axis != 1) return node_fail(im, DP_ERR_UNSUPPORTED, "Flatten with axis %lld",
                                        (long long)axis) == 0;
        y = map_reshape(im, x, want, 2);
    } else if (!strcmp(op, "Reshape")) {
        int x = get(im, 0, ROLE_AUTO);
        const struct o_tensor *s = const_input(im, 1);
        if (x < 0) return false;
        if (!s && get(im, 1, ROLE_CONST) < 0) return false; /* names a dangling input */
        if (s) {
            y = map_reshape(im, x, s->vals, s->n_vals);
        } else {
            /* A computed target (Shape -> Gather -> Concat, as exporters write dynamic
             * reshapes): take the output's value_info, its dim 0 the batch. */
            struct value *ov = n->n_out > 0 ? lookup(im, n->out[0], false) : NULL;
            const struct o_value *vi = ov ? ov->vi : NULL;
            if (!vi || vi->n_dims < 1)
                return node_fail(im, DP_ERR_UNSUPPORTED, "the target shape is computed and the "
                                                         "output has no value_info shape") == 0;
            int64_t dims[DP_MAX_DIMS];
            for (int d = 0; d < vi->n_dims; d++) dims[d] = d == 0 ? DP_DIM_BATCH : vi->dims[d];
            y = map_reshape_to(im, x, vi->n_dims, dims);
        }
    } else if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
        int x = get(im, 0, ROLE_AUTO);
        if (x < 0) return false;
        int r = zb_rank(b, x), out_rank = r;
        const struct o_attr *ax = attr(n, "axes");
        const struct o_tensor *ai = const_input(im, 1);
        int na = ax ? ax->n_ints : ai ? ai->n_vals : 0;
        out_rank += op[0] == 'U' ? na : -na;
        if (out_rank < 0 || out_rank > DP_MAX_DIMS || na == 0)
            return node_fail(im, DP_ERR_UNSUPPORTED, "axes must be given as constants") == 0;
        unsigned mask = axes_mask(im, op[0] == 'U' ? out_rank : r, ax, ai);
        if (im->c->st) return false;
        int64_t dims[DP_MAX_DIMS];
        const int64_t *xd = zb_dims(b, x);
        int k = 0;
        if (op[0] == 'U') {
            for (int d = 0, s = 0; d < out_rank; d++) dims[d] = (mask & (1u << d)) ? 1 : xd[s++];
        } else {
            for (int d = 0; d < r; d++)
                if (!(mask & (1u << d))) dims[k++] = xd[d];
        }
        y = map_reshape_to(im, x, out_rank, dims);
    } else if (!strcmp(op, "Transpose")) {
        int x = get(im, 0, ROLE_AUTO);
        if (x < 0) return false;
        int r = zb_rank(b, x), perm[DP_MAX_DIMS];
        const struct o_attr *p = attr(n, "perm");
        if (r > 4) return node_fail(im, DP_ERR_UNSUPPORTED, "transpose of rank %d", r) == 0;
        for (int d = 0; d < r; d++) perm[d] = p && d < p->n_ints ? (int)p->ints[d] : r - 1 - d;
        zb_push(b, "%s", scope);
        y = zb_transpose(b, x, perm);
        zb_pop(b);
    } else if (!strcmp(op, "Concat")) {
        int xs[256], k = 0;
        if (n->n_in > 256) return node_fail(im, DP_ERR_UNSUPPORTED, "concat of %d", n->n_in) == 0;
        for (int i = 0; i < n->n_in; i++)
            if ((xs[k] = get(im, i, ROLE_AUTO)) >= 0) k++;
        if (im->c->st || k == 0) return false;
        zb_push(b, "%s", scope);
        y = zb_concat(b, xs, k, (int)attr_i(n, "axis", 1));
        zb_pop(b);
    } else if (!strcmp(op, "Softmax")) {
        int x = get(im, 0, ROLE_AUTO);
        if (x < 0) return false;
        int64_t axis = attr_i(n, "axis", -1);
        if (axis != -1 && axis != zb_rank(b, x) - 1)
            return node_fail(im, DP_ERR_UNSUPPORTED, "softmax over axis %lld (not the last)",
                             (long long)axis) == 0;
        zb_push(b, "%s", scope);
        y = zb_softmax(b, x);
        zb_pop(b);
        if (!set_out(im, 0, y)) return false;
        struct value *v = n->n_out > 0 ? lookup(im, n->out[0], false) : NULL;
        if (v) v->softmax_of = x;
        return true;
    } else if (!strcmp(op, "Dropout")) {
        int x = get(im, 0, ROLE_AUTO);
        const struct o_attr *r = attr(n, "ratio");
        zb_push(b, "%s", scope);
        y = zb_dropout(b, x, r ? (double)r->f : 0.5);
        zb_pop(b);
    } else if (!strcmp(op, "Gather")) {
        int x = get(im, 0, ROLE_WEIGHT), idx = get(im, 1, ROLE_CONST);
        if (x < 0 || idx < 0) return false;
        if (attr_i(n, "axis", 0) != 0 || zb_rank(b, x) != 2 || zb_dim(b, x, 0) <= 0 ||
            !is_int_dtype(zb_dtype(b, idx)))
            goto opaque; /* not an embedding lookup: kept without a gradient rule */
        zb_push(b, "%s", scope);
        y = zb_gather(b, x, idx);
        zb_pop(b);
    } else if (!strcmp(op, "Slice")) { /* one axis, step 1, constant bounds */
        int x = get(im, 0, ROLE_AUTO);
        const struct o_tensor *st = const_input(im, 1), *en = const_input(im, 2);
        const struct o_tensor *ax = const_input(im, 3), *sp = const_input(im, 4);
        if (x < 0) return false;
        if (!st || !en || st->n_vals != 1 || en->n_vals != 1 || (ax && ax->n_vals != 1) ||
            (sp && (sp->n_vals != 1 || sp->vals[0] != 1)) || (n->n_in > 3 && !ax))
            goto opaque;
        int r = zb_rank(b, x);
        int64_t axis = ax ? ax->vals[0] : 0;
        if (axis < 0) axis += r;
        if (axis < 0 || axis >= r) return node_fail(im, DP_ERR_INVALID, "slice axis") == 0;
        int64_t len = zb_dim(b, x, (int)axis), lo = st->vals[0], hi = en->vals[0];
        if (len <= 0) goto opaque;
        if (lo < 0) lo += len;
        if (hi < 0) hi += len;
        lo = lo < 0 ? 0 : lo > len ? len : lo;
        hi = hi < lo ? lo : hi > len ? len : hi;
        zb_push(b, "%s", scope);
        y = zb_slice(b, x, (int)axis, lo, hi - lo);
        zb_pop(b);
    } else if (!strcmp(op, "Sum")) { /* n-ary addition: a chain of AddV2 */
        int xs[64], k = 0;
        for (int i = 0; i < n->n_in && k < 64; i++) /* variables first, outside the scope */
            if ((xs[k] = get(im, i, ROLE_AUTO)) >= 0) k++;
        if (im->c->st || k == 0) return false;
        zb_push(b, "%s", scope);
        y = xs[0];
        for (int i = 1; i < k; i++) y = zb_binary(b, "AddV2", y, xs[i]);
        zb_pop(b);
    } else if (!strcmp(op, "Gelu")) {
        int x = get(im, 0, ROLE_AUTO);
        zb_push(b, "%s", scope);
        y = zb_gelu(b, x);
        zb_pop(b);
    } else if (!strcmp(op, "LayerNormalization")) {
        int x = get(im, 0, ROLE_AUTO);
        y = zb_layer_norm(b, scope, x);
    } else if (!strcmp(op, "Split")) {
        int x = get(im, 0, ROLE_AUTO), outs[64];
        if (x < 0) return false;
        if (n->n_out < 1 || n->n_out > 64)
            return node_fail(im, DP_ERR_UNSUPPORTED, "split into %d", n->n_out) == 0;
        int64_t axis = attr_i(n, "axis", 0);
        zb_push(b, "%s", scope);
        zb_split(b, x, n->n_out, (int)(axis < 0 ? axis + zb_rank(b, x) : axis), outs);
        zb_pop(b);
        for (int k = 0; k < n->n_out && !im->c->st; k++)
            if (!set_out(im, k, outs[k])) return false;
        return !im->c->st;
    } else if (!strcmp(op, "Cast")) {
        int x = get(im, 0, ROLE_AUTO);
        enum dp_dtype to = onnx_dtype(attr_i(n, "to", 1));
        zb_push(b, "%s", scope);
        y = zb_cast(b, x, to == DP_DTYPE_UNKNOWN ? DP_DTYPE_F32 : to);
        zb_pop(b);
    } else {
    opaque:;
        /* Anything else becomes an op without a gradient rule, shaped from value_info. */
        int xs[64], k = 0;
        for (int i = 0; i < n->n_in && k < 64; i++)
            if ((xs[k] = get(im, i, ROLE_CONST)) >= 0) k++;
        if (im->c->st) return false;
        const struct o_value *vi = NULL;
        for (int i = 0; n->n_out > 0 && i < im->g->n_vinfo + im->g->n_outputs && !vi; i++) {
            const struct o_value *c = i < im->g->n_vinfo ? &im->g->vinfo[i]
                                                         : &im->g->outputs[i - im->g->n_vinfo];
            if (!strcmp(c->name, n->out[0]) && c->n_dims >= 0) vi = c;
        }
        int64_t dims[DP_MAX_DIMS];
        int nd = vi ? vi->n_dims : -1;
        enum dp_dtype dt = vi ? onnx_dtype(vi->elem) : DP_DTYPE_F32;
        if (!vi && !strcmp(op, "Shape") && k > 0 && zb_rank(b, xs[0]) >= 0) {
            nd = 1; /* Shape of a known-rank tensor: [rank] int64 */
            dims[0] = zb_rank(b, xs[0]);
            dt = DP_DTYPE_I64;
        } else if (!vi && int_only(im)) {
            dt = DP_DTYPE_I64;
        }
        for (int d = 0; vi && d < nd; d++) /* dim 0 is the batch when symbolic or the input's */
            dims[d] = d == 0 && (vi->sym[0] || (im->fixed_batch > 0 &&
                                                vi->dims[0] == im->fixed_batch))
                          ? DP_DIM_BATCH
                          : vi->dims[d];
        zb_push(b, "%s", scope);
        y = zb_opaque(b, clean_name(im, op, "Unknown"), xs, k, nd, dims, dt);
        zb_pop(b);
    }
    if (y < 0 && !im->c->st) {
        struct dp_error e = {0};
        if (zb_status(b, &e)) return node_fail(im, e.status, "%s", e.msg) == 0;
        return node_fail(im, DP_ERR_INVALID, "missing input") == 0;
    }
    return set_out(im, 0, y);
}

static enum dp_status build_training(struct ctx *c, struct o_graph *g,
                                     const struct dp_import_opts *opts, const char *gname,
                                     struct dp_graph **out) {
    struct imp im = {.c = c, .g = g};
    struct dp_graph *dg = NULL;
    size_t want = (size_t)g->n_inits + (size_t)g->n_inputs + (size_t)g->n_vinfo +
                  (size_t)g->n_outputs + 16;
    for (int i = 0; i < g->n_nodes; i++) want += (size_t)g->nodes[i].n_out;
    im.cap = 64;
    while (im.cap < 2 * want + 2) im.cap *= 2;
    if (!(im.vals = calloc(im.cap, sizeof *im.vals))) {
        oom(c);
        return c->st;
    }
    /* ONNX activations are NCHW; PyTorch's usual SGD with momentum. */
    struct zb_opts zo = {DP_OPT_MOMENTUM, DP_PREC_FP32, true};
    if (!(dg = dp_graph_init(gname)) || dp_graph_set_framework(dg, "onnx") ||
        !(im.b = zb_init(dg, &zo))) {
        oom(c);
        goto done;
    }

    for (int i = 0; i < g->n_inits; i++) {
        struct value *v = lookup(&im, g->inits[i].name, true);
        if (!v || v->t) {
            node_fail(&im, DP_ERR_INVALID, "initializer '%s' defined twice", g->inits[i].name);
            goto done;
        }
        v->src = SRC_INIT;
        v->t = &g->inits[i];
    }
    for (int i = 0; i < g->n_nodes; i++) { /* Constant nodes: values known before the walk */
        const struct o_node *n = &g->nodes[i];
        const struct o_attr *a = attr(n, "value");
        if (strcmp(n->op, "Constant") || n->n_out < 1) continue;
        im.node = n;
        if (!a || !a->t) {
            node_fail(&im, DP_ERR_UNSUPPORTED, "Constant without a tensor value");
            goto done;
        }
        struct value *v = lookup(&im, n->out[0], true);
        if (!v || v->t) {
            node_fail(&im, DP_ERR_INVALID, "output '%s' defined twice", n->out[0]);
            goto done;
        }
        v->src = SRC_CONST;
        v->t = a->t;
    }
    for (int i = 0; i < g->n_vinfo + g->n_outputs; i++) { /* shapes to check against */
        const struct o_value *vi = i < g->n_vinfo ? &g->vinfo[i] : &g->outputs[i - g->n_vinfo];
        struct value *v = lookup(&im, vi->name, true);
        if (v && !v->vi) v->vi = vi;
    }
    im.node = NULL;

    /* Graph inputs (not initializers): the first comes from the CPU input pipeline, the others
     * are further outputs of the same IteratorGetNext; dim 0 is the batch. */
    int features = -1;
    int64_t batch = opts && opts->exported_batch > 0 ? opts->exported_batch : 0;
    char source[160] = "";
    if (batch) snprintf(source, sizeof source, "--exported-batch");
    for (int i = 0; i < g->n_inputs; i++) {
        const struct o_value *in = &g->inputs[i];
        struct value *v = lookup(&im, in->name, false);
        if (v && v->t) continue; /* an initializer listed as an input (IR < 4) */
        if (in->n_dims < 1) {
            node_fail(&im, DP_ERR_UNSUPPORTED, "graph input '%s' has no tensor shape", in->name);
            goto done;
        }
        int64_t dims[DP_MAX_DIMS];
        for (int d = 0; d < in->n_dims; d++) dims[d] = in->dims[d];
        if (features < 0 && !in->sym[0]) im.fixed_batch = in->dims[0];
        if (!batch) {
            if (!in->sym[0]) {
                batch = in->dims[0];
                snprintf(source, sizeof source, "ONNX input '%.100s' dim 0", in->name);
            } else {
                snprintf(source, sizeof source, "symbolic '%.100s' in ONNX input (unknown)",
                         in->param0 ? in->param0 : "?");
            }
        }
        dims[0] = DP_DIM_BATCH;
        enum dp_dtype dt = onnx_dtype(in->elem);
        int t = features < 0
                    ? zb_input(im.b, in->n_dims, dims, dt == DP_DTYPE_UNKNOWN ? DP_DTYPE_F32 : dt,
                               0, NULL, NULL, false)
                    : zb_input_extra(im.b, features, in->n_dims, dims, dt);
        struct dp_error e = {0};
        if (zb_status(im.b, &e)) { /* a refused shape: the builder's reason, not "no input" */
            node_fail(&im, e.status, "graph input '%s': %s", in->name, e.msg);
            goto done;
        }
        if (features < 0) features = t;
        if (!v) v = lookup(&im, in->name, true);
        if (!v) {
            node_fail(&im, DP_ERR_INVALID, "graph input '%s' defined twice", in->name);
            goto done;
        }
        v->tensor = t;
    }
    if (features < 0) {
        node_fail(&im, DP_ERR_INVALID, "the graph has no input");
        goto done;
    }
    if (dp_graph_set_batch(dg, batch, source)) {
        oom(c);
        goto done;
    }

    for (int i = 0; i < g->n_nodes && !c->st; i++) {
        im.node = &g->nodes[i];
        if (!map_node(&im)) break;
    }
    if (c->st) goto done;
    im.node = NULL;

    /* The loss on the first output: cross-entropy against labels from the input pipeline. */
    if (g->n_outputs < 1) {
        node_fail(&im, DP_ERR_INVALID, "the graph has no output");
        goto done;
    }
    struct value *ov = lookup(&im, g->outputs[0].name, false);
    if (!ov || ov->tensor < 0) {
        node_fail(&im, DP_ERR_INVALID, "graph output '%s' is not produced by any node",
                  g->outputs[0].name);
        goto done;
    }
    int logits = ov->softmax_of >= 0 ? ov->softmax_of : ov->tensor, loss;
    int r = zb_rank(im.b, logits);
    if (r < 0) {
        node_fail(&im, DP_ERR_UNSUPPORTED, "graph output '%s' has an unknown shape (no loss)",
                  g->outputs[0].name);
        goto done;
    }
    if (r >= 2) {
        int64_t ld[DP_MAX_DIMS];
        memcpy(ld, zb_dims(im.b, logits), sizeof(int64_t) * (size_t)(r - 1));
        int labels = zb_input_extra(im.b, features, r - 1, ld, DP_DTYPE_I32);
        loss = zb_xent_loss(im.b, logits, labels, r > 2);
    } else {
        loss = zb_reduce(im.b, "Mean", logits, (1u << r) - 1, false);
    }
    struct dp_error e = {0};
    if (zb_finish(im.b, loss, &e)) {
        node_fail(&im, e.status, "%s", e.msg);
        goto done;
    }
done:
    zb_free(im.b);
    free(im.vals);
    if (c->st) {
        dp_graph_free(dg);
        return c->st;
    }
    *out = dg;
    return DP_OK;
}

/* --- entry points ----------------------------------------------------------------------------- */

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

enum dp_status dp_graph_parse_onnx(const unsigned char *data, size_t len, const char *name,
                                   const struct dp_import_opts *opts, struct dp_graph **out,
                                   struct dp_error *err) {
    struct ctx c = {.base = data, .name = name ? name : "onnx", .err = err};
    if (!data || len == 0) return dp_error_set(err, DP_ERR_PARSE, "%s: empty file", c.name);
    struct o_graph g;
    bool have = false;
    if (!parse_model(&c, data, len, &g, &have)) goto done;
    if (!have) {
        dp_error_set(err, DP_ERR_PARSE, "%s:byte %zu: not an ONNX model (no graph field)", c.name,
                     len);
        c.st = DP_ERR_PARSE;
        goto done;
    }
    if (g.n_nodes == 0) {
        dp_error_set(err, DP_ERR_INVALID, "%s: the ONNX graph has no nodes", c.name);
        c.st = DP_ERR_INVALID;
        goto done;
    }
    char gname[256];
    snprintf(gname, sizeof gname, "%s", g.name && *g.name ? g.name : base_name(c.name));
    for (char *p = strrchr(gname, '.'); p && !strcmp(p, ".onnx"); p = NULL) *p = '\0';
    build_training(&c, &g, opts, gname, out);
done:
    ar_free(&c.ar);
    return c.st;
}

enum dp_status dp_graph_import_onnx(const char *path, const struct dp_import_opts *opts,
                                    struct dp_graph **out, struct dp_error *err) {
    static const struct dp_read_spec spec = {"ONNX model", ONNX_MAX_FILE, false, NULL};
    char *buf = NULL;
    size_t len = 0;
    enum dp_status st = dp_file_read(path, &spec, &buf, &len, err);
    if (!st)
        st = dp_graph_parse_onnx((unsigned char *)buf, len, dp_file_name(path), opts, out, err);
    free(buf);
    return st;
}
