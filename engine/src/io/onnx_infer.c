/* onnx_infer.c: ONNX shape inference with the batch kept symbolic. A dimension or an integer is
 * c + k x batch (PyTorch's exports fold the batch into other dimensions: [batch x heads, L, d]).
 * The shape arithmetic exporters write (Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
 * Slice of shapes, Cast, ConstantOfShape, Range, Expand, Where, ...) is folded here on the known
 * contents of small tensors, so the mapper (onnx_map.c) sees plain target shapes; value_info is
 * never needed. The shape rules shared with the mapper (reshape, squeeze and unsqueeze axes,
 * slices, broadcasting) live here too. */
#include "onnx_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct sym UNKNOWN = {0, 0, false};

struct sym sym_num(int64_t c) { return (struct sym){c, 0, true}; }
struct sym sym_batch(int64_t k) { return (struct sym){0, k, true}; }

struct sym sym_of_dim(int64_t d) {
    if (d >= 0) return sym_num(d);
    int64_t k = zb_batch_multiple(d);
    return k ? sym_batch(k) : UNKNOWN;
}

int64_t sym_to_dim(struct sym s) {
    if (!s.known) return DP_DIM_UNKNOWN;
    if (s.k == 0) return s.c >= 0 && s.c <= ZB_MAX_DIM ? s.c : DP_DIM_UNKNOWN;
    if (s.c == 0 && s.k >= 1 && s.k <= ZB_MAX_DIM) return ZB_DIM_BATCH_TIMES(s.k);
    return DP_DIM_UNKNOWN;
}

static bool plain(struct sym s) { return s.known && s.k == 0; }

/* Results past 2^62 are unknown: folded values stay far from int64_t overflow. */
static struct sym bounded(struct sym s) {
    const int64_t lim = (int64_t)1 << 62;
    return s.known && s.c > -lim && s.c < lim && s.k > -lim && s.k < lim ? s : UNKNOWN;
}

static struct sym sym_add(struct sym a, struct sym b) {
    if (!a.known || !b.known) return UNKNOWN;
    struct sym r = {0, 0, true};
    if (__builtin_add_overflow(a.c, b.c, &r.c) || __builtin_add_overflow(a.k, b.k, &r.k))
        return UNKNOWN;
    return bounded(r);
}

static struct sym sym_neg(struct sym a) {
    return a.known && a.c != INT64_MIN && a.k != INT64_MIN ? (struct sym){-a.c, -a.k, true}
                                                             : UNKNOWN;
}

static struct sym sym_mul(struct sym a, struct sym b) {
    if (!a.known || !b.known || (a.k && b.k)) return UNKNOWN;
    if (a.k) { /* keep the number in a */
        struct sym t = a;
        a = b;
        b = t;
    }
    struct sym r = {0, 0, true};
    if (__builtin_mul_overflow(b.c, a.c, &r.c) || __builtin_mul_overflow(b.k, a.c, &r.k))
        return UNKNOWN;
    return bounded(r);
}

/* ONNX's integer Div (truncating) where the result is exact or plain. */
static struct sym sym_div(struct sym a, struct sym b) {
    if (!a.known || !b.known) return UNKNOWN;
    if (b.k) /* (c + k B) / (j B): a number only when a is a multiple of b */
        return !a.c && !b.c && a.k % b.k == 0 ? sym_num(a.k / b.k) : UNKNOWN;
    if (b.c == 0 || (b.c == -1 && (a.c == INT64_MIN || a.k == INT64_MIN))) return UNKNOWN;
    if (!a.k) return sym_num(a.c / b.c);
    return a.c % b.c == 0 && a.k % b.c == 0 ? (struct sym){a.c / b.c, a.k / b.c, true} : UNKNOWN;
}

/* The sign of a - b for a batch of at least 1: -1, 0 or 1; 2 when it depends on the batch. */
static int sym_cmp(struct sym a, struct sym b) {
    struct sym d = sym_add(a, sym_neg(b));
    if (!d.known) return 2;
    if (!d.k) return (d.c > 0) - (d.c < 0);
    int64_t at_one; /* d at batch 1: its least value when k > 0, its largest when k < 0 */
    if (__builtin_add_overflow(d.c, d.k, &at_one)) return 2;
    if (d.k > 0 && at_one > 0) return 1;
    if (d.k < 0 && at_one < 0) return -1;
    return 2;
}

static bool sym_same(struct sym a, struct sym b) {
    return a.known && b.known && a.c == b.c && a.k == b.k;
}

struct sym onnx_numel_sym(const struct oval *v) {
    if (v->n_dims < 0) return UNKNOWN;
    struct sym n = sym_num(1);
    for (int d = 0; d < v->n_dims; d++) n = sym_mul(n, v->dims[d]);
    return n;
}

bool onnx_ints(const struct oval *v, int64_t *vals, int max, int *n) {
    if (!v || v->n_fold < 0 || !v->iv || v->n_fold > max) return false;
    for (int i = 0; i < v->n_fold; i++) {
        if (!plain(v->iv[i])) return false;
        vals[i] = v->iv[i].c;
    }
    *n = v->n_fold;
    return true;
}

/* --- shape rules shared with the mapper ------------------------------------------------------ */

static bool bcast_one(struct sym a, struct sym b, struct sym *out) {
    if (plain(a) && a.c == 1) *out = b;
    else if (plain(b) && b.c == 1) *out = a;
    else if (sym_same(a, b)) *out = a;
    else if (!a.known || !b.known) *out = UNKNOWN;
    else return false;
    return true;
}

bool onnx_broadcast(const struct sym *a, int na, const struct sym *b, int nb, struct sym *out,
                    int *n) {
    int r = na > nb ? na : nb;
    if (na < 0 || nb < 0 || r > DP_MAX_DIMS) return false;
    for (int i = 0; i < r; i++) {
        int da = na - r + i, db = nb - r + i;
        struct sym x = da >= 0 ? a[da] : sym_num(1), y = db >= 0 ? b[db] : sym_num(1);
        if (!bcast_one(x, y, &out[i])) return false;
    }
    *n = r;
    return true;
}

bool onnx_reshape_dims(struct imp *im, const struct oval *x, const struct sym *want, int n,
                       bool allowzero, struct sym *out) {
    if (n < 0 || n > DP_MAX_DIMS) return onnx_fail(im, DP_ERR_UNSUPPORTED, "reshape to rank %d", n) == 0;
    int infer = -1;
    struct sym known = sym_num(1);
    for (int d = 0; d < n; d++) {
        out[d] = want[d];
        if (plain(want[d]) && want[d].c == 0 && !allowzero) {
            if (d >= x->n_dims)
                return onnx_fail(im, DP_ERR_SHAPE, "reshape copies dimension %d of a rank-%d "
                                 "tensor", d, x->n_dims) == 0;
            out[d] = x->dims[d];
        } else if (plain(want[d]) && want[d].c == -1) {
            if (infer >= 0)
                return onnx_fail(im, DP_ERR_INVALID, "reshape target with two -1") == 0;
            infer = d;
            continue;
        } else if (plain(want[d]) && want[d].c < -1) {
            return onnx_fail(im, DP_ERR_INVALID, "reshape target dimension %lld",
                             (long long)want[d].c) == 0;
        }
        known = sym_mul(known, out[d]);
    }
    struct sym total = onnx_numel_sym(x);
    if (infer >= 0) {
        out[infer] = sym_div(total, known);
        /* the inferred dimension must multiply back to the element count */
        if (total.known && known.known && !sym_same(sym_mul(out[infer], known), total)) {
            if (plain(total) && plain(known))
                return onnx_fail(im, DP_ERR_SHAPE, "reshape of %lld elements: %lld does not "
                                 "divide them", (long long)total.c, (long long)known.c) == 0;
            if (!total.c && plain(known)) /* k x batch elements in parts of known */
                return onnx_fail(im, DP_ERR_SHAPE, "reshape of %lld x batch elements: %lld does "
                                 "not divide them", (long long)total.k, (long long)known.c) == 0;
            out[infer] = UNKNOWN;
        }
    } else if (total.known && known.known && !sym_same(total, known)) {
        /* An export at a fixed batch writes it as a number: put the batch back into the first
         * dimension that holds it. */
        int64_t fb = im->fixed_batch;
        if (fb > 0 && total.k && !total.c && plain(known) && known.c == total.k * fb) {
            for (int d = 0; d < n; d++)
                if (plain(out[d]) && out[d].c % fb == 0 && out[d].c >= fb) {
                    out[d] = sym_batch(out[d].c / fb);
                    return true;
                }
        }
        if (plain(total) && plain(known))
            return onnx_fail(im, DP_ERR_SHAPE, "reshape of %lld elements into %lld",
                             (long long)total.c, (long long)known.c) == 0;
        return onnx_fail(im, DP_ERR_SHAPE, "reshape changes the element count (the batch "
                         "dimension does not fit the target)") == 0;
    }
    return true;
}

/* Axes from attribute `name` or from input k (Squeeze, Unsqueeze, Reduce*: they became inputs
 * in opset 13 and 18); *given false when neither is there. False when the input is not a known
 * constant. */
bool onnx_axes(struct imp *im, const char *name, int k, int64_t *axes, int *n, bool *given) {
    const struct o_attr *a = onnx_attr(im->node, name);
    *given = true;
    if (a) {
        *n = a->n_ints;
        memcpy(axes, a->ints, sizeof(int64_t) * (size_t)a->n_ints);
        return true;
    }
    struct oval *v = onnx_in(im, k);
    if (!v) {
        *given = false;
        *n = 0;
        return true;
    }
    return onnx_ints(v, axes, DP_MAX_DIMS, n);
}

/* Normalises axes against rank r into a bit mask; false (node failed) when out of range. */
bool onnx_axes_mask(struct imp *im, const int64_t *axes, int n, int r, unsigned *mask) {
    *mask = 0;
    for (int i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r || r > DP_MAX_DIMS)
            return onnx_fail(im, DP_ERR_INVALID, "axis %lld out of range for rank %d",
                             (long long)axes[i], r) == 0;
        *mask |= 1u << a;
    }
    return true;
}

bool onnx_squeeze_dims(struct imp *im, const struct oval *x, bool unsqueeze, struct sym *out,
                       int *n) {
    int64_t axes[DP_MAX_DIMS];
    int na;
    bool given;
    if (!onnx_axes(im, "axes", 1, axes, &na, &given))
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "axes computed at run time") == 0;
    if (x->n_dims < 0)
        return onnx_fail(im, DP_ERR_SHAPE, "%s of a tensor of unknown rank",
                         unsqueeze ? "unsqueeze" : "squeeze") == 0;
    int r = unsqueeze ? x->n_dims + na : x->n_dims;
    unsigned mask = 0;
    if (r > DP_MAX_DIMS)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "unsqueeze to rank %d", r) == 0;
    if (!given && !unsqueeze) { /* squeeze every dimension of size 1 */
        for (int d = 0; d < r; d++)
            if (plain(x->dims[d]) && x->dims[d].c == 1) mask |= 1u << d;
    } else if (!onnx_axes_mask(im, axes, na, r, &mask)) {
        return false;
    }
    *n = 0;
    for (int d = 0, s = 0; d < r; d++) {
        if (unsqueeze) out[(*n)++] = (mask & (1u << d)) ? sym_num(1) : x->dims[s++];
        else if (!(mask & (1u << d))) out[(*n)++] = x->dims[d];
    }
    return true;
}

/* ONNX Slice on x: per dimension the first index, the step and the output size. Starts, ends,
 * axes and steps come from attributes (opset < 10) or constant inputs. */
bool onnx_slice_dims(struct imp *im, const struct oval *x, int64_t *begin, int64_t *step,
                     struct sym *out) {
    const struct o_node *n = im->node;
    int64_t st[DP_MAX_DIMS], en[DP_MAX_DIMS], ax[DP_MAX_DIMS], sp[DP_MAX_DIMS];
    int ns = 0, ne = 0, na = 0, np = 0;
    const struct o_attr *as = onnx_attr(n, "starts"), *ae = onnx_attr(n, "ends");
    const struct o_attr *aa = onnx_attr(n, "axes");
    bool ok;
    if (as || ae) {
        ok = as && ae && as->n_ints <= DP_MAX_DIMS && ae->n_ints <= DP_MAX_DIMS;
        if (ok) {
            memcpy(st, as->ints, sizeof(int64_t) * (size_t)(ns = as->n_ints));
            memcpy(en, ae->ints, sizeof(int64_t) * (size_t)(ne = ae->n_ints));
        }
        if (ok && aa) {
            ok = aa->n_ints <= DP_MAX_DIMS;
            if (ok) memcpy(ax, aa->ints, sizeof(int64_t) * (size_t)(na = aa->n_ints));
        }
    } else {
        ok = onnx_ints(onnx_in(im, 1), st, DP_MAX_DIMS, &ns) &&
             onnx_ints(onnx_in(im, 2), en, DP_MAX_DIMS, &ne) &&
             (!onnx_in(im, 3) || onnx_ints(onnx_in(im, 3), ax, DP_MAX_DIMS, &na)) &&
             (!onnx_in(im, 4) || onnx_ints(onnx_in(im, 4), sp, DP_MAX_DIMS, &np));
    }
    if (!ok) return onnx_fail(im, DP_ERR_UNSUPPORTED, "slice bounds computed at run time") == 0;
    int r = x->n_dims;
    if (r < 0) return onnx_fail(im, DP_ERR_SHAPE, "slice of a tensor of unknown rank") == 0;
    if (ns != ne || (na && na != ns) || (np && np != ns))
        return onnx_fail(im, DP_ERR_INVALID, "slice with %d starts, %d ends, %d axes, %d steps",
                         ns, ne, na, np) == 0;
    for (int d = 0; d < r; d++) {
        begin[d] = 0;
        step[d] = 1;
        out[d] = x->dims[d];
    }
    for (int i = 0; i < ns; i++) {
        int64_t a = na ? ax[i] : i, s = np ? sp[i] : 1;
        if (a < 0) a += r;
        if (a < 0 || a >= r || s == 0)
            return onnx_fail(im, DP_ERR_INVALID, "slice axis %lld or step %lld",
                             (long long)(na ? ax[i] : i), (long long)s) == 0;
        struct sym dim = x->dims[a];
        int64_t lo = st[i], hi = en[i];
        if (!plain(dim)) { /* the batch: only a slice that keeps all of it keeps it */
            bool whole = s == 1 && lo == 0 && hi >= ((int64_t)1 << 40);
            out[a] = whole ? dim : UNKNOWN;
            continue;
        }
        int64_t len = dim.c;
        if (lo < 0) lo = lo < -len ? 0 : lo + len;
        if (hi < 0) hi = hi < -len ? -1 : hi + len;
        if (s > 0) {
            lo = lo > len ? len : lo;
            hi = hi > len ? len : hi < 0 ? 0 : hi;
            out[a] = sym_num(hi > lo ? (hi - lo + s - 1) / s : 0);
        } else {
            lo = lo > len - 1 ? len - 1 : lo;
            hi = hi > len - 1 ? len - 1 : hi;
            out[a] = sym_num(lo > hi && s > INT64_MIN ? (lo - hi - s - 1) / -s : 0);
        }
        begin[a] = lo;
        step[a] = s;
    }
    return true;
}

/* --- folding ------------------------------------------------------------------------------- */

static bool is_float_t(enum dp_dtype t) {
    return t == DP_DTYPE_F32 || t == DP_DTYPE_F16 || t == DP_DTYPE_BF16 || t == DP_DTYPE_F64;
}

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
    if (is_float_t(dt)) v->fv = pb_alloc(&im->d->ar, cnt * sizeof *v->fv);
    else v->iv = pb_alloc(&im->d->ar, cnt * sizeof *v->iv);
    if (is_float_t(dt) ? !v->fv : !v->iv) {
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
        if (!plain(v->dims[d])) return NULL;
        dims[d] = v->dims[d].c;
    }
    *n = v->n_dims;
    return v;
}

static double as_double(const struct oval *v, int64_t i, bool *ok) {
    if (v->fv) return v->fv[i];
    if (!plain(v->iv[i])) *ok = false;
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
    bool fl = is_float_t(a->dtype) || is_float_t(b->dtype) || op == EW_POW;
    if (op == EW_WHERE) dt = a->dtype;
    else if (!cmp && fl) dt = is_float_t(a->dtype) ? a->dtype : b->dtype;
    struct oval *o = fold_out(im, 0, dt, no, od);
    if (!o) return false;
    for (int64_t i = 0; i < numel; i++) {
        int64_t ia = bcast_at(i, od, no, d[op == EW_WHERE ? 1 : 0], n[op == EW_WHERE ? 1 : 0]);
        int64_t ib = bcast_at(i, od, no, d[op == EW_WHERE ? 2 : 1], n[op == EW_WHERE ? 2 : 1]);
        if (op == EW_WHERE) {
            int64_t ic = bcast_at(i, od, no, d[0], n[0]);
            bool c = in[0]->iv ? plain(in[0]->iv[ic]) && in[0]->iv[ic].c : in[0]->fv[ic] != 0;
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
        bool both = plain(x) && plain(y);
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
            else if (!strcmp(op, "Abs")) s = plain(s) ? sym_num(s.c < 0 ? -s.c : s.c) : s.k > 0 && !s.c ? s : UNKNOWN;
            else if (!strcmp(op, "Not")) s = plain(s) ? sym_num(!s.c) : UNKNOWN;
            else if (!strcmp(op, "Sign")) s = plain(s) ? sym_num((s.c > 0) - (s.c < 0)) : s.k > 0 && !s.c ? sym_num(1) : UNKNOWN;
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
            o->iv[i] = dt == DP_DTYPE_BOOL && plain(x->iv[i]) ? sym_num(x->iv[i].c != 0) : x->iv[i];
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
        if (!plain(dims[i])) return false;
        d[i] = dims[i].c;
    }
    struct oval *o = fold_out(im, 0, x->dtype, n, d);
    if (!o) return false;
    if (o->n_fold != x->n_fold) return onnx_fail(im, DP_ERR_SHAPE, "reshape changes the element count") == 0;
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
            if (!plain(idx->iv[j])) return onnx_fail(im, DP_ERR_UNSUPPORTED, "gather at an index computed from the batch") == 0;
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
        if (dn != r) return onnx_fail(im, DP_ERR_SHAPE, "concat of tensors of different ranks") == 0;
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
                if (o->iv) o->iv[at] = v->iv ? v->iv[a * chunk + c] : sym_num((int64_t)v->fv[a * chunk + c]);
                else o->fv[at] = v->fv ? v->fv[a * chunk + c] : (double)v->iv[a * chunk + c].c;
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
        if (shape[i] < 0) return onnx_fail(im, DP_ERR_INVALID, "shape dimension %lld", (long long)shape[i]) == 0;
        numel *= shape[i] > ONNX_MAX_FOLD ? ONNX_MAX_FOLD + 1 : shape[i];
        if (numel > ONNX_MAX_FOLD) return false;
    }
    const struct o_attr *v = onnx_attr(im->node, "value");
    enum dp_dtype dt = v && v->t ? onnx_dtype(v->t->dtype) : DP_DTYPE_F32;
    struct oval *o = fold_out(im, 0, dt, n, shape);
    if (!o) return false;
    for (int64_t i = 0; i < numel; i++) {
        if (o->iv) o->iv[i] = sym_num(v && v->t && v->t->n_vals == 1 && v->t->ivals ? v->t->ivals[0] : 0);
        else o->fv[i] = v && v->t && v->t->n_vals == 1 && v->t->fvals ? v->t->fvals[0] : 0;
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
            return onnx_fail(im, DP_ERR_INVALID, "split sizes past the input's %lld", (long long)d[0]) == 0;
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
            return n->n_in == (ew_ops[i].ew == EW_WHERE ? 3 : 2) && fold_elementwise(im, ew_ops[i].ew);
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
        for (int d = 0; d < x->n_dims; d++) dims[d < axis ? 0 : 1] = sym_mul(dims[d < axis ? 0 : 1], x->dims[d]);
        return fold_same_contents(im, dims, 2);
    }
    return false;
}
