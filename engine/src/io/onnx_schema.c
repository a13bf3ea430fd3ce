/* onnx_schema.c: the ONNX schema over the protobuf wire decoder: ModelProto (the default
 * domain's opset, the graph), GraphProto (nodes, initializers, inputs, outputs, value_info),
 * NodeProto, AttributeProto, TensorProto (dims, type, small contents from raw or typed data;
 * external data: dims and where its bytes are) and ValueInfoProto shapes. Field numbers from
 * onnx/onnx.proto. */
#include "onnx_impl.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum dp_dtype onnx_dtype(int64_t t) {
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

double onnx_numel(const struct o_tensor *t) {
    double n = 1;
    for (int d = 0; d < t->n_dims && d < DP_MAX_DIMS; d++) n *= (double)t->dims[d];
    return n;
}

const struct o_attr *onnx_attr(const struct o_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && !strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

/* Byte width of a type stored little-endian in raw_data, and whether it is a float; 0 for types
 * whose contents are never folded. */
static int raw_width(int64_t t, bool *is_float) {
    *is_float = t == 1 || t == 11;
    switch (t) {
    case 1: case 6: case 12: return 4;
    case 7: case 11: case 13: return 8;
    case 2: case 3: case 9: return 1;
    case 4: case 5: return 2;
    default: return 0;
    }
}

static int64_t raw_int(const unsigned char *p, int64_t t) {
    uint64_t u = 0;
    int w = t == 7 || t == 13 ? 8 : t == 6 || t == 12 ? 4 : t == 4 || t == 5 ? 2 : 1;
    for (int i = 0; i < w; i++) u |= (uint64_t)p[i] << (8 * i);
    switch (t) {
    case 3: return (int8_t)u;
    case 5: return (int16_t)u;
    case 6: return (int32_t)u;
    default: return (int64_t)u;
    }
}

static double raw_float(const unsigned char *p, int64_t t) {
    uint64_t u = 0;
    int w = t == 11 ? 8 : 4;
    for (int i = 0; i < w; i++) u |= (uint64_t)p[i] << (8 * i);
    if (t == 11) {
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    uint32_t u32 = (uint32_t)u;
    float f;
    memcpy(&f, &u32, sizeof f);
    return (double)f;
}

bool onnx_tensor_raw(struct pb_doc *d, struct o_tensor *t, const unsigned char *raw,
                     size_t raw_len) {
    double numel = onnx_numel(t);
    bool is_float;
    int w = raw_width(t->dtype, &is_float);
    t->n_vals = -1;
    if (t->n_dims > DP_MAX_DIMS || numel > ONNX_MAX_FOLD || !w ||
        raw_len != (size_t)numel * (size_t)w)
        return true;
    int n = (int)numel;
    if (is_float) t->fvals = pb_alloc(&d->ar, (size_t)(n ? n : 1) * sizeof *t->fvals);
    else t->ivals = pb_alloc(&d->ar, (size_t)(n ? n : 1) * sizeof *t->ivals);
    if (is_float ? !t->fvals : !t->ivals) return pb_oom(d);
    for (int i = 0; i < n; i++) {
        if (is_float) t->fvals[i] = raw_float(raw + (size_t)i * (size_t)w, t->dtype);
        else t->ivals[i] = raw_int(raw + (size_t)i * (size_t)w, t->dtype);
    }
    t->n_vals = n;
    return true;
}

int onnx_raw_width(int64_t dtype) {
    bool is_float;
    return raw_width(dtype, &is_float);
}

/* Small contents kept for folding: the typed fields or raw_data, when they hold exactly the
 * tensor's element count (at most ONNX_MAX_FOLD); external ones are read later, with the model's
 * directory (onnx_external.c). */
static bool keep_values(struct pb_doc *d, struct o_tensor *t, const int64_t *ints, int n_ints,
                        const double *floats, int n_floats, const unsigned char *raw,
                        size_t raw_len) {
    double numel = onnx_numel(t);
    t->n_vals = -1;
    if (t->external || t->n_dims > DP_MAX_DIMS || numel > ONNX_MAX_FOLD) return true;
    if (raw) return onnx_tensor_raw(d, t, raw, raw_len);
    int n = (int)numel;
    bool is_float;
    if (!raw_width(t->dtype, &is_float) || (is_float ? n_floats != n : n_ints != n)) return true;
    if (is_float) t->fvals = pb_alloc(&d->ar, (size_t)(n ? n : 1) * sizeof *t->fvals);
    else t->ivals = pb_alloc(&d->ar, (size_t)(n ? n : 1) * sizeof *t->ivals);
    if (is_float ? !t->fvals : !t->ivals) return pb_oom(d);
    for (int i = 0; i < n; i++) {
        if (is_float) t->fvals[i] = floats[i];
        else t->ivals[i] = ints[i];
    }
    t->n_vals = n;
    return true;
}

/* A decimal offset or length of an external_data entry (a string in the file). */
static bool ext_number(struct pb_doc *d, const unsigned char *at, const char *key,
                       const char *s, int64_t *out) {
    int64_t v = 0;
    if (!*s) return pb_fail(d, at, DP_ERR_PARSE, "external data %s is empty", key);
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9' || v > (INT64_MAX - 9) / 10)
            return pb_fail(d, at, DP_ERR_PARSE, "external data %s '%.40s' is not a byte count",
                           key, s);
        v = v * 10 + (*c - '0');
    }
    *out = v;
    return true;
}

/* One external_data entry (StringStringEntryProto: key 1, value 2): location, offset, length. */
static bool parse_external(struct pb_rd *r, struct o_tensor *t) {
    const unsigned char *at = r->p;
    const char *k = "", *v = "";
    uint32_t f;
    int w;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1 || f == 2) {
            if (!pb_string(r, w, f == 1 ? &k : &v)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    if (!strcmp(k, "location")) t->location = v;
    else if (!strcmp(k, "offset")) return ext_number(r->d, at, k, v, &t->ext_offset);
    else if (!strcmp(k, "length")) return ext_number(r->d, at, k, v, &t->ext_length);
    return true;
}

int onnx_elem_bytes(int64_t dtype) {
    switch (dtype) {
    case 2: case 3: case 9: return 1;      /* uint8, int8, bool */
    case 4: case 5: case 10: case 16: return 2; /* (u)int16, float16, bfloat16 */
    case 1: case 6: case 12: return 4;     /* float, int32, uint32 */
    case 7: case 11: case 13: case 14: return 8; /* int64, double, uint64, complex64 */
    case 15: return 16;                    /* complex128 */
    default: return 0;                     /* strings, unknown types */
    }
}

/* A tensor's declared shape against its data: the elements (at most 2^62) and, where data is
 * given inline, raw_data's bytes or the typed fields' count (raw_len / n_typed < 0 or 0: none
 * given; a declaration without data is a shape only, as stripped exports and tests write). */
static bool check_tensor(struct pb_doc *d, const struct o_tensor *t, double raw_len,
                         double n_typed) {
    const unsigned char *at = d->base + t->offset;
    double numel = onnx_numel(t);
    if (numel > 4611686018427387904.0)
        return pb_fail(d, at, DP_ERR_INVALID, "tensor '%.200s': its shape holds %.4g elements "
                       "(more than 2^62: no real tensor)", t->name, numel);
    if (t->external) return true;
    int w = onnx_elem_bytes(t->dtype);
    if (raw_len >= 0 && w && raw_len != numel * w)
        return pb_fail(d, at, DP_ERR_INVALID, "tensor '%.200s': its shape holds %.0f elements "
                       "(%.0f bytes at %d per element) but raw_data has %.0f bytes", t->name,
                       numel, numel * w, w, raw_len);
    /* complex types keep two numbers per element in float_data / double_data */
    double per = t->dtype == 14 || t->dtype == 15 ? 2 : 1;
    if (raw_len < 0 && n_typed > 0 && w && n_typed != numel * per)
        return pb_fail(d, at, DP_ERR_INVALID, "tensor '%.200s': its shape holds %.0f elements "
                       "but its data fields hold %.0f values", t->name, numel, n_typed);
    return true;
}

/* owner: the name a Constant's tensor goes by (its node's output), "" for initializers. */
static bool parse_tensor(struct pb_rd *r, struct o_tensor *t, const char *owner) {
    uint32_t f;
    int w, n_ints = 0, n_floats = 0;
    int64_t ints[ONNX_MAX_FOLD];
    double floats[ONNX_MAX_FOLD];
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    t->offset = (size_t)(r->p - r->d->base);
    t->name = owner;
    t->ext_length = -1;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1) {
            const unsigned char *at = r->p;
            int before = t->n_dims;
            if (!pb_ints(r, w, t->dims, DP_MAX_DIMS, &t->n_dims)) return false;
            for (int i = before; i < t->n_dims && i < DP_MAX_DIMS; i++)
                if (t->dims[i] < 0)
                    return pb_fail(r->d, at, DP_ERR_PARSE, "tensor dimension %lld is negative",
                                   (long long)t->dims[i]);
        } else if (f == 2) {
            if (!pb_int(r, w, &t->dtype)) return false;
        } else if (f == 8) {
            if (!pb_string(r, w, &t->name)) return false;
        } else if (f == 5 || f == 7 || f == 11) { /* int32_data, int64_data, uint64_data */
            if (!pb_ints(r, w, ints, ONNX_MAX_FOLD, &n_ints)) return false;
        } else if (f == 4 && (w == PB_LEN || w == PB_I32)) { /* float_data */
            struct pb_rd sub = *r;
            if (w == PB_LEN && !pb_len(r, &sub)) return false;
            for (struct pb_rd *src = w == PB_LEN ? &sub : r; w == PB_I32 || sub.p < sub.end;) {
                float x;
                if (!pb_float(src, PB_I32, &x)) return false;
                if (n_floats < ONNX_MAX_FOLD) floats[n_floats] = (double)x;
                if (n_floats < INT_MAX) n_floats++;
                if (w == PB_I32) break;
            }
        } else if (f == 10 && w == PB_LEN) { /* double_data, packed */
            struct pb_rd sub;
            if (!pb_len(r, &sub)) return false;
            while (sub.p < sub.end) {
                uint64_t v;
                if (!pb_fixed(&sub, 8, &v)) return false;
                double x;
                memcpy(&x, &v, sizeof x);
                if (n_floats < ONNX_MAX_FOLD) floats[n_floats] = x;
                if (n_floats < INT_MAX) n_floats++;
            }
        } else if (f == 9) { /* raw_data */
            if (!pb_bytes(r, w, &raw, &raw_len)) return false;
        } else if (f == 13 && w == PB_LEN) { /* external_data */
            struct pb_rd sub;
            if (!pb_len(r, &sub) || !parse_external(&sub, t)) return false;
        } else if (f == 14) { /* data_location: 1 = EXTERNAL */
            int64_t loc;
            if (!pb_int(r, w, &loc)) return false;
            t->external = loc == 1;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    if (!check_tensor(r->d, t, raw ? (double)raw_len : -1, (double)n_ints + n_floats))
        return false;
    if (n_ints > ONNX_MAX_FOLD) n_ints = ONNX_MAX_FOLD + 1;
    if (n_floats > ONNX_MAX_FOLD) n_floats = ONNX_MAX_FOLD + 1;
    return keep_values(r->d, t, ints, n_ints, floats, n_floats, raw, raw_len);
}

/* A SparseTensorProto (values 1, indices 2, dims 3) as the dense tensor it stands for: its
 * shape and type (the values' type); contents never kept. */
static bool parse_sparse(struct pb_rd *r, struct o_tensor *t, const char *owner) {
    uint32_t f;
    int w;
    t->offset = (size_t)(r->p - r->d->base);
    t->name = owner;
    t->ext_length = -1;
    t->n_vals = -1;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1 && w == PB_LEN) {
            struct pb_rd sub;
            struct o_tensor vals;
            memset(&vals, 0, sizeof vals);
            if (!pb_len(r, &sub) || !parse_tensor(&sub, &vals, owner)) return false;
            t->dtype = vals.dtype;
        } else if (f == 3) {
            const unsigned char *at = r->p;
            int before = t->n_dims;
            if (!pb_ints(r, w, t->dims, DP_MAX_DIMS, &t->n_dims)) return false;
            for (int i = before; i < t->n_dims && i < DP_MAX_DIMS; i++)
                if (t->dims[i] < 0)
                    return pb_fail(r->d, at, DP_ERR_PARSE, "sparse tensor dimension %lld is "
                                   "negative", (long long)t->dims[i]);
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    return check_tensor(r->d, t, -1, 0);
}

/* Copies n values of size sz into the arena (*out, never NULL: an empty list is a valid one). */
static bool keep(struct pb_doc *d, const void *vals, int n, size_t sz, const void **out) {
    void *p = pb_alloc(&d->ar, (size_t)(n > 0 ? n : 1) * sz);
    if (!p) return pb_oom(d);
    if (n > 0) memcpy(p, vals, (size_t)n * sz);
    *out = p;
    return true;
}

static bool parse_attr(struct pb_rd *r, struct o_attr *a, const char *owner) {
    uint32_t f;
    int w;
    int64_t ints[ONNX_MAX_INTS];
    float floats[ONNX_MAX_INTS];
    a->name = "";
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1) {
            if (!pb_string(r, w, &a->name)) return false;
        } else if (f == 2 && w == PB_I32) {
            if (!pb_float(r, w, &a->f)) return false;
        } else if (f == 3) {
            if (!pb_int(r, w, &a->i)) return false;
        } else if (f == 4) {
            if (!pb_string(r, w, &a->s)) return false;
        } else if (f == 5 && w == PB_LEN) {
            struct pb_rd sub;
            if (!pb_len(r, &sub)) return false;
            if (!(a->t = pb_alloc(&r->d->ar, sizeof *a->t))) return pb_oom(r->d);
            memset(a->t, 0, sizeof *a->t);
            if (!parse_tensor(&sub, a->t, owner)) return false;
        } else if (f == 22 && w == PB_LEN) { /* sparse_tensor: its dense shape */
            struct pb_rd sub;
            if (!pb_len(r, &sub)) return false;
            if (!(a->t = pb_alloc(&r->d->ar, sizeof *a->t))) return pb_oom(r->d);
            memset(a->t, 0, sizeof *a->t);
            if (!parse_sparse(&sub, a->t, owner)) return false;
        } else if (f == 7 && (w == PB_LEN || w == PB_I32)) { /* floats */
            struct pb_rd sub = *r;
            if (w == PB_LEN && !pb_len(r, &sub)) return false;
            for (struct pb_rd *src = w == PB_LEN ? &sub : r; w == PB_I32 || sub.p < sub.end;) {
                float x;
                if (!pb_float(src, PB_I32, &x)) return false;
                if (a->n_floats < ONNX_MAX_INTS) floats[a->n_floats++] = x;
                if (w == PB_I32) break;
            }
        } else if (f == 8) {
            if (!pb_ints(r, w, ints, ONNX_MAX_INTS, &a->n_ints)) return false;
        } else if (f == 20) {
            if (!pb_int(r, w, &a->type)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    if (a->n_ints > ONNX_MAX_INTS) a->n_ints = ONNX_MAX_INTS;
    return keep(r->d, ints, a->n_ints, sizeof *ints, (const void **)&a->ints) &&
           keep(r->d, floats, a->n_floats, sizeof *floats, (const void **)&a->floats);
}

static bool parse_node(struct pb_rd *r, struct o_node *n) {
    uint32_t f;
    int w;
    struct pb_arena *ar = &r->d->ar;
    n->offset = (size_t)(r->p - r->d->base);
    n->name = "";
    n->op = "";
    n->domain = "";
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1 || f == 2) {
            const char **slot = f == 1 ? pb_push(ar, (void **)&n->in, &n->n_in, &n->cap_in,
                                                 sizeof *n->in)
                                       : pb_push(ar, (void **)&n->out, &n->n_out, &n->cap_out,
                                                 sizeof *n->out);
            if (!slot) return pb_oom(r->d);
            if (!pb_string(r, w, slot)) return false;
        } else if (f == 3) {
            if (!pb_string(r, w, &n->name)) return false;
        } else if (f == 4) {
            if (!pb_string(r, w, &n->op)) return false;
        } else if (f == 7) {
            if (!pb_string(r, w, &n->domain)) return false;
        } else if (f == 5 && w == PB_LEN) {
            struct pb_rd sub;
            if (!pb_len(r, &sub)) return false;
            struct o_attr *a = pb_push(ar, (void **)&n->attrs, &n->n_attrs, &n->cap_attrs,
                                       sizeof *a);
            if (!a) return pb_oom(r->d);
            if (!parse_attr(&sub, a, n->n_out ? n->out[0] : n->name)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    if (!*n->op)
        return pb_fail(r->d, r->d->base + n->offset, DP_ERR_PARSE, "node without an op type");
    return true;
}

static bool parse_shape(struct pb_rd *r, struct o_value_info *v) {
    uint32_t f;
    int w;
    v->n_dims = 0;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f != 1 || w != PB_LEN) {
            if (!pb_skip(r, w)) return false;
            continue;
        }
        struct pb_rd dim;
        const unsigned char *at = r->p;
        if (!pb_len(r, &dim)) return false;
        int64_t value = DP_DIM_UNKNOWN;
        bool have = false;
        const char *param = NULL;
        while (dim.p < dim.end) {
            if (!pb_key(&dim, &f, &w)) return false;
            if (f == 1) {
                if (!pb_int(&dim, w, &value)) return false;
                have = true;
            } else if (f == 2) {
                if (!pb_string(&dim, w, &param)) return false;
            } else if (!pb_skip(&dim, w)) {
                return false;
            }
        }
        if (v->n_dims >= DP_MAX_DIMS)
            return pb_fail(r->d, at, DP_ERR_UNSUPPORTED,
                           "tensor shape with more than 8 dimensions");
        if (have && value < 0)
            return pb_fail(r->d, at, DP_ERR_PARSE, "'%s' dimension %d is %lld (negative)", v->name,
                           v->n_dims, (long long)value);
        if (value > ZB_MAX_DIM)
            return pb_fail(r->d, r->p, DP_ERR_UNSUPPORTED, "tensor dimension larger than 2^40");
        v->sym[v->n_dims] = !have;
        v->dims[v->n_dims] = have ? value : DP_DIM_UNKNOWN;
        if (v->n_dims == 0 && param) v->param0 = param;
        v->n_dims++;
    }
    return true;
}

static bool parse_value_info(struct pb_rd *r, struct o_value_info *v) {
    uint32_t f;
    int w;
    v->name = "";
    v->n_dims = -1;
    v->offset = (size_t)(r->p - r->d->base);
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1) {
            if (!pb_string(r, w, &v->name)) return false;
        } else if (f == 2 && w == PB_LEN) { /* TypeProto */
            struct pb_rd type;
            if (!pb_len(r, &type)) return false;
            while (type.p < type.end) {
                if (!pb_key(&type, &f, &w)) return false;
                if (f != 1 || w != PB_LEN) { /* only tensor types have shapes we use */
                    if (!pb_skip(&type, w)) return false;
                    continue;
                }
                struct pb_rd tt;
                if (!pb_len(&type, &tt)) return false;
                while (tt.p < tt.end) {
                    if (!pb_key(&tt, &f, &w)) return false;
                    if (f == 1) {
                        if (!pb_int(&tt, w, &v->elem)) return false;
                    } else if (f == 2 && w == PB_LEN) {
                        struct pb_rd shape;
                        if (!pb_len(&tt, &shape) || !parse_shape(&shape, v)) return false;
                    } else if (!pb_skip(&tt, w)) {
                        return false;
                    }
                }
            }
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    return true;
}

static bool parse_graph(struct pb_rd *r, struct o_graph *g) {
    uint32_t f;
    int w;
    struct pb_arena *ar = &r->d->ar;
    g->name = "";
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        struct pb_rd sub;
        if (f == 2) {
            if (!pb_string(r, w, &g->name)) return false;
        } else if (f == 1 && w == PB_LEN) {
            if (!pb_len(r, &sub)) return false;
            struct o_node *n = pb_push(ar, (void **)&g->nodes, &g->n_nodes, &g->cap_nodes,
                                       sizeof *n);
            if (!n) return pb_oom(r->d);
            if (!parse_node(&sub, n)) return false;
        } else if (f == 5 && w == PB_LEN) {
            if (!pb_len(r, &sub)) return false;
            struct o_tensor *t = pb_push(ar, (void **)&g->inits, &g->n_inits, &g->cap_inits,
                                         sizeof *t);
            if (!t) return pb_oom(r->d);
            if (!parse_tensor(&sub, t, "")) return false;
        } else if ((f == 11 || f == 12 || f == 13) && w == PB_LEN) {
            if (!pb_len(r, &sub)) return false;
            struct o_value_info *v = f == 11 ? pb_push(ar, (void **)&g->inputs, &g->n_inputs,
                                                       &g->cap_inputs, sizeof *v)
                                   : f == 12 ? pb_push(ar, (void **)&g->outputs, &g->n_outputs,
                                                       &g->cap_outputs, sizeof *v)
                                             : pb_push(ar, (void **)&g->vinfo, &g->n_vinfo,
                                                       &g->cap_vinfo, sizeof *v);
            if (!v) return pb_oom(r->d);
            if (!parse_value_info(&sub, v)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    return true;
}

/* OperatorSetIdProto: the version of the default domain ("" or "ai.onnx"). */
static bool parse_opset(struct pb_rd *r, struct o_model *m) {
    uint32_t f;
    int w;
    const char *domain = "";
    int64_t version = 0;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1) {
            if (!pb_string(r, w, &domain)) return false;
        } else if (f == 2) {
            if (!pb_int(r, w, &version)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    if (!*domain || !strcmp(domain, "ai.onnx")) m->opset = version;
    return true;
}

bool onnx_decode(struct pb_doc *d, struct o_model *m) {
    struct pb_rd r = pb_reader(d);
    uint32_t f;
    int w;
    memset(m, 0, sizeof *m);
    while (r.p < r.end) {
        if (!pb_key(&r, &f, &w)) return false;
        struct pb_rd sub;
        if (f == 7 && w == PB_LEN) {
            if (!pb_len(&r, &sub)) return false;
            memset(&m->g, 0, sizeof m->g);
            if (!parse_graph(&sub, &m->g)) return false;
            m->have_graph = true;
        } else if (f == 8 && w == PB_LEN) {
            if (!pb_len(&r, &sub) || !parse_opset(&sub, m)) return false;
        } else if (!pb_skip(&r, w)) {
            return false;
        }
    }
    return true;
}
