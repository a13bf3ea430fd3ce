/* onnx_fold.c: the shape arithmetic exporters write, folded on the known contents of small
 * tensors (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Slice of shapes, Cast, arithmetic
 * and comparisons, ConstantOfShape, Range, Expand, Where, Transpose, Split, ReduceProd), with the
 * batch kept symbolic (onnx_infer.c), so the mapper sees plain target shapes and value_info is
 * never needed. A node that cannot be folded is left to the mapper. */
#include "onnx_impl.h"

#include <math.h>
#include <string.h>

static const struct sym UNKNOWN = {0, 0, false};

/* Defines output k as a folded tensor of plain shape dims[n] (contents allocated, zeroed). */
static struct oval *fold_out(struct imp *im, int k, enum dp_dtype dt, int n, const int64_t *dims) {
    const struct o_node *node = im->node;
    if (k >= node->n_out || !*node->out[k]) return NULL;
    struct oval *v = onnx_val(im, node->out[k], false);
    if (!v || v->defined) {
        onnx_fail(im, DP_ERR_INVALID, "output '%s' defined twice", node->out[k]);
        return NULL;
    }
    int64_t numel = 1;
    for (int d = 0; d < n; d++) numel *= dims[d];
    v->defined = true;
    v->dtype = dt;
    v->n_dims = n;
    for (int d = 0; d < n; d++) v->dims[d] = sym_num(dims[d]);
    v->n_fold = (int)numel;
    size_t cnt = numel ? (size_t)numel : 1;
    if (dp_dtype_is_float(dt)) v->fv = pb_alloc(&im->d->ar, cnt * sizeof *v->fv);
    else v->iv = pb_alloc(&im->d->ar, cnt * sizeof *v->iv);
    if (dp_dtype_is_float(dt) ? !v->fv : !v->iv) {
        pb_oom(im->d);
        return NULL;
    }
    if (v->fv) memset(v->fv, 0, cnt * sizeof *v->fv);
    for (size_t i = 0; v->iv && i < cnt; i++) v->iv[i] = sym_num(0);
    return v;
}

/* A folded input with plain dimensions (*dims, *n), or NULL. */
static struct oval *folded(struct imp *im, int k, int64_t *dims, int *n) {
    struct oval *v = onnx_in(im, k);
    if (!v || !v->defined || v->n_fold < 0 || v->n_dims < 0) return NULL;
    for (int d = 0; d < v->n_dims; d++) {
        if (!sym_plain(v->dims[d])) return NULL;
        dims[d] = v->dims[d].c;
    }
    *n = v->n_dims;
    return v;
}

static double as_double(const struct oval *v, int64_t i, bool *ok) {
    if (v->fv) return v->fv[i];
    if (!sym_plain(v->iv[i])) *ok = false;
    return (double)v->iv[i].c;
}

/* Flat index into a tensor of shape in[nin] broadcast to out[nout] at flat index i. */
static int64_t bcast_at(int64_t i, const int64_t *out, int nout, const int64_t *in, int nin) {
    int64_t idx = 0, stride = 1;
    for (int d = nout - 1; d >= 0; d--) {
        int64_t c = i % out[d];
        i /= out[d];
        int di = d - (nout - nin);
        if (di >= 0) {
            idx += (in[di] == 1 ? 0 : c) * stride;
            stride *= in[di];
        }
    }
    return idx;
}

enum ew { EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_MOD, EW_POW, EW_EQ, EW_LT, EW_GT, EW_LE, EW_GE,
          EW_AND, EW_OR, EW_XOR, EW_MAX, EW_MIN, EW_WHERE };

static bool fold_elementwise(struct imp *im, enum ew op) {
    int64_t d[3][DP_MAX_DIMS], od[DP_MAX_DIMS];
    int n[3], no = 0, nin = op == EW_WHERE ? 3 : 2;
    struct oval *in[3];
    for (int k = 0; k < nin; k++)
        if (!(in[k] = folded(im, k, d[k], &n[k]))) return false;
    struct sym sa[DP_MAX_DIMS], sb[DP_MAX_DIMS], so[DP_MAX_DIMS];
    for (int k = 1; k < nin; k++) {
        for (int i = 0; i < (k == 1 ? n[0] : no); i++) sa[i] = sym_num(k == 1 ? d[0][i] : od[i]);
        for (int i = 0; i < n[k]; i++) sb[i] = sym_num(d[k][i]);
        if (!onnx_broadcast(sa, k == 1 ? n[0] : no, sb, n[k], so, &no))
            return onnx_fail(im, DP_ERR_SHAPE, "operand shapes do not broadcast") == 0;
        for (int i = 0; i < no; i++) od[i] = so[i].c;
    }
    int64_t numel = 1;
    for (int i = 0; i < no; i++) numel *= od[i];
    if (numel > ONNX_MAX_FOLD) return false;
    const struct oval *a = in[op == EW_WHERE ? 1 : 0], *b = in[op == EW_WHERE ? 2 : 1];
    bool cmp = op >= EW_EQ && op <= EW_XOR;
    enum dp_dtype dt = cmp ? DP_DTYPE_BOOL : a->dtype;
    bool fl = dp_dtype_is_float(a->dtype) || dp_dtype_is_float(b->dtype) || op == EW_POW;
    if (op == EW_WHERE) dt = a->dtype;
    else if (!cmp && fl) dt = dp_dtype_is_float(a->dtype) ? a->dtype : b->dtype;
    struct oval *o = fold_out(im, 0, dt, no, od);
    if (!o) return false;
    for (int64_t i = 0; i < numel; i++) {
        int64_t ia = bcast_at(i, od, no, d[op == EW_WHERE ? 1 : 0], n[op == EW_WHERE ? 1 : 0]);
        int64_t ib = bcast_at(i, od, no, d[op == EW_WHERE ? 2 : 1], n[op == EW_WHERE ? 2 : 1]);
        if (op == EW_WHERE) {
            int64_t ic = bcast_at(i, od, no, d[0], n[0]);
            bool c = in[0]->iv ? sym_plain(in[0]->iv[ic]) && in[0]->iv[ic].c : in[0]->fv[ic] != 0;
            if (in[0]->iv && !in[0]->iv[ic].known) {
                if (o->iv) o->iv[i] = UNKNOWN;
                else o->n_fold = -1;
                continue;
            }
            const struct oval *src = c ? a : b;
            int64_t is = c ? ia : ib;
            if (o->fv) {
                bool ok = true;
                o->fv[i] = as_double(src, is, &ok);
                if (!ok) o->n_fold = -1;
            } else {
                o->iv[i] = src->iv ? src->iv[is] : sym_num((int64_t)src->fv[is]);
            }
            continue;
        }
        if (fl || (cmp && (a->fv || b->fv))) {
            bool ok = true;
            double x = as_double(a, ia, &ok), y = as_double(b, ib, &ok), r = 0;
            switch (op) {
            case EW_ADD: r = x + y; break;
            case EW_SUB: r = x - y; break;
            case EW_MUL: r = x * y; break;
            case EW_DIV: r = x / y; break;
            case EW_MOD: r = fmod(x, y); break;
            case EW_POW: r = pow(x, y); break;
            case EW_EQ: r = x == y; break;
            case EW_LT: r = x < y; break;
            case EW_GT: r = x > y; break;
            case EW_LE: r = x <= y; break;
            case EW_GE: r = x >= y; break;
            case EW_MAX: r = x > y ? x : y; break;
            case EW_MIN: r = x < y ? x : y; break;
            default: ok = false;
            }
            if (!ok || !isfinite(r)) {
                o->n_fold = -1; /* contents unknown, shape still right */
                break;
            }
            if (o->fv) o->fv[i] = r;
            else o->iv[i] = sym_num((int64_t)r);
            continue;
        }
        struct sym x = a->iv[ia], y = b->iv[ib], r = UNKNOWN;
        bool both = sym_plain(x) && sym_plain(y);
        int c = sym_cmp(x, y);
        switch (op) {
        case EW_ADD: r = sym_add(x, y); break;
        case EW_SUB: r = sym_add(x, sym_neg(y)); break;
        case EW_MUL: r = sym_mul(x, y); break;
        case EW_DIV: r = sym_div(x, y); break;
        case EW_MOD:
            if (both && y.c) r = sym_num(((x.c % y.c) + y.c) % y.c);
            break;
        case EW_EQ: if (c != 2) r = sym_num(c == 0); break;
        case EW_LT: if (c != 2) r = sym_num(c < 0); break;
        case EW_GT: if (c != 2) r = sym_num(c > 0); break;
        case EW_LE: if (c != 2) r = sym_num(c <= 0); break;
        case EW_GE: if (c != 2) r = sym_num(c >= 0); break;
        case EW_AND: if (both) r = sym_num(x.c && y.c); break;
        case EW_OR: if (both) r = sym_num(x.c || y.c); break;
        case EW_XOR: if (both) r = sym_num(!x.c != !y.c); break;
        case EW_MAX: if (c != 2) r = c >= 0 ? x : y; break;
        case EW_MIN: if (c != 2) r = c <= 0 ? x : y; break;
        default: break;
        }
        o->iv[i] = r;
    }
    return true;
}

static bool fold_unary(struct imp *im, const char *op) {
    int64_t d[DP_MAX_DIMS];
    int n;
    struct oval *x = folded(im, 0, d, &n);
    if (!x) return false;
    struct oval *o = fold_out(im, 0, x->dtype, n, d);
    if (!o) return false;
    for (int i = 0; i < x->n_fold; i++) {
        if (x->iv) {
            struct sym s = x->iv[i];
            if (!strcmp(op, "Neg")) s = sym_neg(s);
            else if (!strcmp(op, "Abs"))
                s = sym_plain(s) ? sym_num(s.c < 0 ? -s.c : s.c) : s.k > 0 && !s.c ? s : UNKNOWN;
            else if (!strcmp(op, "Not")) s = sym_plain(s) ? sym_num(!s.c) : UNKNOWN;
            else if (!strcmp(op, "Sign"))
                s = sym_plain(s) ? sym_num((s.c > 0) - (s.c < 0))
                    : s.k > 0 && !s.c ? sym_num(1) : UNKNOWN;
            o->iv[i] = s; /* Floor, Ceil, Identity of integers: unchanged */
        } else {
            double v = x->fv[i];
            if (!strcmp(op, "Neg")) v = -v;
            else if (!strcmp(op, "Abs")) v = fabs(v);
            else if (!strcmp(op, "Sqrt")) v = sqrt(v);
            else if (!strcmp(op, "Floor")) v = floor(v);
            else if (!strcmp(op, "Ceil")) v = ceil(v);
            else if (!strcmp(op, "Reciprocal")) v = 1 / v;
            else if (!strcmp(op, "Sign")) v = (v > 0) - (v < 0);
            else if (!strcmp(op, "Not")) v = !v;
            if (!isfinite(v)) o->n_fold = -1;
            else o->fv[i] = v;
        }
    }
    return true;
}

static bool fold_shape(struct imp *im, bool size) {
    struct oval *x = onnx_in(im, 0);
    if (!x || !x->defined || x->n_dims < 0) return false;
    int64_t lo = 0, hi = x->n_dims, len;
    const struct o_attr *s = onnx_attr(im->node, "start"), *e = onnx_attr(im->node, "end");
    if (s) lo = s->i < 0 ? s->i + x->n_dims : s->i;
    if (e) hi = e->i < 0 ? e->i + x->n_dims : e->i;
    lo = lo < 0 ? 0 : lo > x->n_dims ? x->n_dims : lo;
    hi = hi < lo ? lo : hi > x->n_dims ? x->n_dims : hi;
    len = hi - lo;
    struct oval *o = fold_out(im, 0, DP_DTYPE_I64, size ? 0 : 1, &len);
    if (!o) return false;
    if (size) o->iv[0] = onnx_numel_sym(x);
    else for (int64_t i = 0; i < len; i++) o->iv[i] = x->dims[lo + i];
    return true;
}

static bool fold_cast(struct imp *im) {
    int64_t d[DP_MAX_DIMS];
    int n;
    struct oval *x = folded(im, 0, d, &n);
    const struct o_attr *to = onnx_attr(im->node, "to");
    if (!x || !to) return false;
    enum dp_dtype dt = onnx_dtype(to->i);
    if (dt == DP_DTYPE_UNKNOWN || dt == DP_DTYPE_STRING) return false;
    struct oval *o = fold_out(im, 0, dt, n, d);
    if (!o) return false;
    for (int i = 0; i < x->n_fold; i++) {
        if (o->fv) {
            bool ok = true;
            o->fv[i] = as_double(x, i, &ok);
            if (!ok) o->n_fold = -1;
        } else if (x->iv) {
            bool to_bool = dt == DP_DTYPE_BOOL && sym_plain(x->iv[i]);
            o->iv[i] = to_bool ? sym_num(x->iv[i].c != 0) : x->iv[i];
        } else {
            double v = x->fv[i];
            o->iv[i] = dt == DP_DTYPE_BOOL ? sym_num(v != 0)
                       : fabs(v) < 4e18 ? sym_num((int64_t)v) : UNKNOWN;
        }
    }
    return true;
}

/* Copies x's contents into output 0 under a new plain shape (Reshape, Squeeze, Flatten...). */
static bool fold_same_contents(struct imp *im, const struct sym *dims, int n) {
    int64_t d[DP_MAX_DIMS], xd[DP_MAX_DIMS];
    int xn;
    struct oval *x = folded(im, 0, xd, &xn);
    if (!x) return false;
    for (int i = 0; i < n; i++) {
        if (!sym_plain(dims[i])) return false;
        d[i] = dims[i].c;
    }
    struct oval *o = fold_out(im, 0, x->dtype, n, d);
    if (!o) return false;
    if (o->n_fold != x->n_fold)
        return onnx_fail(im, DP_ERR_SHAPE, "reshape changes the element count") == 0;
    for (int i = 0; i < x->n_fold; i++) {
        if (o->iv) o->iv[i] = x->iv[i];
        else o->fv[i] = x->fv[i];
    }
    return true;
}

static bool fold_gather(struct imp *im) {
    int64_t dd[DP_MAX_DIMS], id[DP_MAX_DIMS], od[DP_MAX_DIMS];
    int dn, in;
    struct oval *data = folded(im, 0, dd, &dn), *idx = folded(im, 1, id, &in);
    if (!data || !idx || dn < 1 || !idx->iv) return false;
    const struct o_attr *ax = onnx_attr(im->node, "axis");
    int64_t axis = ax ? ax->i : 0;
    if (axis < 0) axis += dn;
    if (axis < 0 || axis >= dn || dn - 1 + in > DP_MAX_DIMS)
        return onnx_fail(im, DP_ERR_INVALID, "gather axis %lld of a rank-%d tensor",
                         (long long)(ax ? ax->i : 0), dn) == 0;
    int on = 0;
    for (int d = 0; d < axis; d++) od[on++] = dd[d];
    for (int d = 0; d < in; d++) od[on++] = id[d];
    for (int d = (int)axis + 1; d < dn; d++) od[on++] = dd[d];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= dd[d];
    for (int d = (int)axis + 1; d < dn; d++) inner *= dd[d];
    struct oval *o = fold_out(im, 0, data->dtype, on, od);
    if (!o) return false;
    int64_t ni = idx->n_fold ? idx->n_fold : 1, pos = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t j = 0; j < ni; j++) {
            if (!sym_plain(idx->iv[j]))
                return onnx_fail(im, DP_ERR_UNSUPPORTED, "gather at an index computed from the "
                                 "batch") == 0;
            int64_t k = idx->iv[j].c < 0 ? idx->iv[j].c + dd[axis] : idx->iv[j].c;
            if (k < 0 || k >= dd[axis])
                return onnx_fail(im, DP_ERR_INVALID, "gather index %lld out of range [0, %lld)",
                                 (long long)idx->iv[j].c, (long long)dd[axis]) == 0;
            for (int64_t c = 0; c < inner; c++, pos++) {
                int64_t src = (a * dd[axis] + k) * inner + c;
                if (o->iv) o->iv[pos] = data->iv[src];
                else o->fv[pos] = data->fv[src];
            }
        }
    return true;
}

static bool fold_concat(struct imp *im) {
    const struct o_node *n = im->node;
    int64_t d[DP_MAX_DIMS], od[DP_MAX_DIMS];
    int r = -1, dn;
    struct oval *first = NULL;
    const struct o_attr *ax = onnx_attr(n, "axis");
    int64_t axis = ax ? ax->i : 0, total = 0;
    for (int k = 0; k < n->n_in; k++) {
        if (!*n->in[k]) continue;
        struct oval *v = folded(im, k, d, &dn);
        if (!v) return false;
        if (!first) {
            first = v;
            r = dn;
            if (axis < 0) axis += r;
            if (axis < 0 || axis >= r)
                return onnx_fail(im, DP_ERR_INVALID, "concat axis %lld of rank %d",
                                 (long long)(ax ? ax->i : 0), r) == 0;
            memcpy(od, d, sizeof d);
        }
        if (dn != r)
            return onnx_fail(im, DP_ERR_SHAPE, "concat of tensors of different ranks") == 0;
        for (int i = 0; i < r; i++)
            if (i != axis && d[i] != od[i])
                return onnx_fail(im, DP_ERR_SHAPE, "concat of mismatched shapes") == 0;
        total += d[axis];
    }
    if (!first) return false;
    od[axis] = total;
    int64_t numel = 1;
    for (int i = 0; i < r; i++) numel *= od[i];
    if (numel > ONNX_MAX_FOLD) return false;
    struct oval *o = fold_out(im, 0, first->dtype, r, od);
    if (!o) return false;
    int64_t outer = 1, inner = 1, at = 0;
    for (int i = 0; i < axis; i++) outer *= od[i];
    for (int i = (int)axis + 1; i < r; i++) inner *= od[i];
    for (int64_t a = 0; a < outer; a++)
        for (int k = 0; k < n->n_in; k++) {
            if (!*n->in[k]) continue;
            struct oval *v = onnx_in(im, k);
            int64_t chunk = v->dims[axis].c * inner;
            for (int64_t c = 0; c < chunk; c++, at++) {
                int64_t src = a * chunk + c;
                if (o->iv) o->iv[at] = v->iv ? v->iv[src] : sym_num((int64_t)v->fv[src]);
                else o->fv[at] = v->fv ? v->fv[src] : (double)v->iv[src].c;
            }
        }
    return true;
}

static bool fold_slice(struct imp *im) {
    int64_t d[DP_MAX_DIMS], begin[DP_MAX_DIMS], step[DP_MAX_DIMS], od[DP_MAX_DIMS];
    int n;
    struct sym out[DP_MAX_DIMS];
    struct oval *x = folded(im, 0, d, &n);
    if (!x || !onnx_slice_dims(im, x, begin, step, out)) return false;
    for (int i = 0; i < n; i++) od[i] = out[i].c;
    struct oval *o = fold_out(im, 0, x->dtype, n, od);
    if (!o) return false;
    for (int64_t i = 0; i < o->n_fold; i++) {
        int64_t rem = i, src = 0, stride = 1;
        for (int a = n - 1; a >= 0; a--) {
            int64_t c = rem % od[a];
            rem /= od[a];
            src += (begin[a] + c * step[a]) * stride;
            stride *= d[a];
        }
        if (o->iv) o->iv[i] = x->iv[src];
        else o->fv[i] = x->fv[src];
    }
    return true;
}

static bool fold_constant_of_shape(struct imp *im) {
    int64_t shape[DP_MAX_DIMS];
    int n;
    if (!onnx_ints(onnx_in(im, 0), shape, DP_MAX_DIMS, &n)) return false;
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        if (shape[i] < 0)
            return onnx_fail(im, DP_ERR_INVALID, "shape dimension %lld", (long long)shape[i]) == 0;
        numel *= shape[i] > ONNX_MAX_FOLD ? ONNX_MAX_FOLD + 1 : shape[i];
        if (numel > ONNX_MAX_FOLD) return false;
    }
    const struct o_attr *v = onnx_attr(im->node, "value");
    enum dp_dtype dt = v && v->t ? onnx_dtype(v->t->dtype) : DP_DTYPE_F32;
    struct oval *o = fold_out(im, 0, dt, n, shape);
    if (!o) return false;
    bool one = v && v->t && v->t->n_vals == 1; /* the value filled in; 0 by default */
    for (int64_t i = 0; i < numel; i++) {
        if (o->iv) o->iv[i] = sym_num(one && v->t->ivals ? v->t->ivals[0] : 0);
        else o->fv[i] = one && v->t->fvals ? v->t->fvals[0] : 0;
    }
    return true;
}

static bool fold_range(struct imp *im) {
    int64_t d[DP_MAX_DIMS];
    int n;
    struct oval *a = folded(im, 0, d, &n), *b = folded(im, 1, d, &n), *c = folded(im, 2, d, &n);
    if (!a || !b || !c || a->n_fold != 1 || b->n_fold != 1 || c->n_fold != 1) return false;
    bool ok = true;
    double s = as_double(a, 0, &ok), e = as_double(b, 0, &ok), st = as_double(c, 0, &ok);
    if (!ok || st == 0 || !isfinite(s) || !isfinite(e) || !isfinite(st)) return false;
    double cnt = ceil((e - s) / st);
    if (cnt < 0) cnt = 0;
    if (cnt > ONNX_MAX_FOLD) return false;
    int64_t len = (int64_t)cnt;
    struct oval *o = fold_out(im, 0, a->dtype, 1, &len);
    if (!o) return false;
    for (int64_t i = 0; i < len; i++) {
        if (o->iv) o->iv[i] = sym_num((int64_t)(s + (double)i * st));
        else o->fv[i] = s + (double)i * st;
    }
    return true;
}

static bool fold_expand(struct imp *im) {
    int64_t xd[DP_MAX_DIMS], shape[DP_MAX_DIMS];
    int xn, sn, on;
    struct oval *x = folded(im, 0, xd, &xn);
    if (!x || !onnx_ints(onnx_in(im, 1), shape, DP_MAX_DIMS, &sn)) return false;
    struct sym a[DP_MAX_DIMS], b[DP_MAX_DIMS], o[DP_MAX_DIMS];
    for (int i = 0; i < xn; i++) a[i] = sym_num(xd[i]);
    for (int i = 0; i < sn; i++) b[i] = sym_num(shape[i]);
    if (!onnx_broadcast(a, xn, b, sn, o, &on))
        return onnx_fail(im, DP_ERR_SHAPE, "expand to a shape that does not broadcast") == 0;
    int64_t od[DP_MAX_DIMS], numel = 1;
    for (int i = 0; i < on; i++) numel *= (od[i] = o[i].c);
    if (numel > ONNX_MAX_FOLD) return false;
    struct oval *out = fold_out(im, 0, x->dtype, on, od);
    if (!out) return false;
    for (int64_t i = 0; i < numel; i++) {
        int64_t s = bcast_at(i, od, on, xd, xn);
        if (out->iv) out->iv[i] = x->iv[s];
        else out->fv[i] = x->fv[s];
    }
    return true;
}

static bool fold_split(struct imp *im) {
    const struct o_node *n = im->node;
    int64_t d[DP_MAX_DIMS], sizes[ONNX_MAX_FOLD];
    int xn, ns = 0;
    struct oval *x = folded(im, 0, d, &xn);
    if (!x || xn != 1 || n->n_out < 1 || n->n_out > ONNX_MAX_FOLD) return false;
    const struct o_attr *sa = onnx_attr(n, "split");
    if (sa) {
        ns = sa->n_ints;
        memcpy(sizes, sa->ints, sizeof(int64_t) * (size_t)ns);
    } else if (onnx_in(im, 1)) {
        if (!onnx_ints(onnx_in(im, 1), sizes, ONNX_MAX_FOLD, &ns)) return false;
    } else {
        ns = n->n_out;
        for (int i = 0; i < ns; i++) sizes[i] = (d[0] + ns - 1) / ns;
        sizes[ns - 1] = d[0] - (ns - 1) * sizes[0];
    }
    int64_t at = 0;
    for (int k = 0; k < n->n_out && k < ns; k++) {
        if (sizes[k] < 0 || at + sizes[k] > d[0])
            return onnx_fail(im, DP_ERR_INVALID, "split sizes past the input's %lld",
                             (long long)d[0]) == 0;
        struct oval *o = fold_out(im, k, x->dtype, 1, &sizes[k]);
        if (!o) return false;
        for (int64_t i = 0; i < sizes[k]; i++) {
            if (o->iv) o->iv[i] = x->iv[at + i];
            else o->fv[i] = x->fv[at + i];
        }
        at += sizes[k];
    }
    return true;
}

static bool fold_transpose(struct imp *im) {
    int64_t d[DP_MAX_DIMS], od[DP_MAX_DIMS], perm[DP_MAX_DIMS];
    int n;
    struct oval *x = folded(im, 0, d, &n);
    const struct o_attr *p = onnx_attr(im->node, "perm");
    if (!x || (p && p->n_ints != n)) return false;
    for (int i = 0; i < n; i++) {
        perm[i] = p ? p->ints[i] : n - 1 - i;
        if (perm[i] < 0 || perm[i] >= n) return false;
        od[i] = d[perm[i]];
    }
    struct oval *o = fold_out(im, 0, x->dtype, n, od);
    if (!o) return false;
    for (int64_t i = 0; i < o->n_fold; i++) {
        int64_t rem = i, src = 0, idx[DP_MAX_DIMS];
        for (int a = n - 1; a >= 0; a--) {
            idx[a] = rem % od[a];
            rem /= od[a];
        }
        for (int a = 0; a < n; a++) {
            int64_t stride = 1;
            for (int k = (int)perm[a] + 1; k < n; k++) stride *= d[k];
            src += idx[a] * stride;
        }
        if (o->iv) o->iv[i] = x->iv[src];
        else o->fv[i] = x->fv[src];
    }
    return true;
}

static bool fold_reduce(struct imp *im, bool prod) {
    int64_t d[DP_MAX_DIMS];
    int n;
    struct oval *x = folded(im, 0, d, &n);
    if (!x || !x->iv || n > 1) return false;
    const struct o_attr *kd = onnx_attr(im->node, "keepdims");
    int64_t one = 1;
    struct oval *o = fold_out(im, 0, x->dtype, kd && !kd->i ? 0 : n, &one);
    if (!o) return false;
    struct sym r = sym_num(prod ? 1 : 0);
    for (int i = 0; i < x->n_fold; i++) r = prod ? sym_mul(r, x->iv[i]) : sym_add(r, x->iv[i]);
    o->iv[0] = r;
    return true;
}

static const struct { const char *op; enum ew ew; } ew_ops[] = {
    {"Add", EW_ADD}, {"Sub", EW_SUB}, {"Mul", EW_MUL}, {"Div", EW_DIV}, {"Mod", EW_MOD},
    {"Pow", EW_POW}, {"Equal", EW_EQ}, {"Less", EW_LT}, {"Greater", EW_GT},
    {"LessOrEqual", EW_LE}, {"GreaterOrEqual", EW_GE}, {"And", EW_AND}, {"Or", EW_OR},
    {"Xor", EW_XOR}, {"Max", EW_MAX}, {"Min", EW_MIN}, {"Where", EW_WHERE},
};

bool onnx_fold(struct imp *im) {
    const struct o_node *n = im->node;
    const char *op = n->op;
    if (*n->domain && strcmp(n->domain, "ai.onnx")) return false;
    for (size_t i = 0; i < sizeof ew_ops / sizeof ew_ops[0]; i++)
        if (!strcmp(op, ew_ops[i].op))
            return n->n_in == (ew_ops[i].ew == EW_WHERE ? 3 : 2) &&
                   fold_elementwise(im, ew_ops[i].ew);
    if (!strcmp(op, "Neg") || !strcmp(op, "Abs") || !strcmp(op, "Not") || !strcmp(op, "Sqrt") ||
        !strcmp(op, "Floor") || !strcmp(op, "Ceil") || !strcmp(op, "Reciprocal") ||
        !strcmp(op, "Sign") || !strcmp(op, "Identity"))
        return fold_unary(im, op);
    if (!strcmp(op, "Shape") || !strcmp(op, "Size")) return fold_shape(im, op[1] == 'i');
    if (!strcmp(op, "Cast")) return fold_cast(im);
    if (!strcmp(op, "Gather")) return fold_gather(im);
    if (!strcmp(op, "Concat")) return fold_concat(im);
    if (!strcmp(op, "Slice")) return fold_slice(im);
    if (!strcmp(op, "ConstantOfShape")) return fold_constant_of_shape(im);
    if (!strcmp(op, "Range")) return fold_range(im);
    if (!strcmp(op, "Expand")) return fold_expand(im);
    if (!strcmp(op, "Split")) return fold_split(im);
    if (!strcmp(op, "Transpose")) return fold_transpose(im);
    if (!strcmp(op, "ReduceProd") || !strcmp(op, "ReduceSum")) return fold_reduce(im, op[6] == 'P');
    struct oval *x = onnx_in(im, 0);
    if (!x || x->n_fold < 0 || !x->defined) return false;
    struct sym dims[DP_MAX_DIMS];
    int nd = 0;
    if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
        if (!onnx_squeeze_dims(im, x, op[0] == 'U', dims, &nd)) return false;
        return fold_same_contents(im, dims, nd);
    }
    if (!strcmp(op, "Reshape")) {
        struct sym w[DP_MAX_DIMS];
        const struct o_attr *az = onnx_attr(n, "allowzero");
        struct oval *t = onnx_in(im, 1);
        if (!t || t->n_fold < 0 || t->n_fold > DP_MAX_DIMS || !t->iv) {
            const struct o_attr *sh = onnx_attr(n, "shape"); /* opset 1-4 */
            if (!sh || sh->n_ints > DP_MAX_DIMS) return false;
            nd = sh->n_ints;
            for (int i = 0; i < nd; i++) w[i] = sym_num(sh->ints[i]);
        } else {
            nd = t->n_fold;
            for (int i = 0; i < nd; i++) w[i] = t->iv[i];
        }
        if (!onnx_reshape_dims(im, x, w, nd, az && az->i, dims)) return false;
        return fold_same_contents(im, dims, nd);
    }
    if (!strcmp(op, "Flatten")) {
        const struct o_attr *ax = onnx_attr(n, "axis");
        int64_t axis = ax ? ax->i : 1;
        if (axis < 0) axis += x->n_dims;
        if (axis < 0 || axis > x->n_dims) return false;
        dims[0] = sym_num(1);
        dims[1] = sym_num(1);
        for (int d = 0; d < x->n_dims; d++) {
            int part = d < axis ? 0 : 1;
            dims[part] = sym_mul(dims[part], x->dims[d]);
        }
        return fold_same_contents(im, dims, 2);
    }
    return false;
}
