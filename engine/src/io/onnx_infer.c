/* onnx_infer.c: ONNX shape inference with the batch kept symbolic. A dimension or an integer is
 * c + k x batch (PyTorch's exports fold the batch into other dimensions: [batch x heads, L, d]);
 * this file holds that arithmetic and the shape rules of ONNX that both the folding of shape
 * arithmetic (onnx_fold.c) and the mapping onto the builder (onnx_map.c) apply: broadcasting,
 * Reshape with 0 and -1, Squeeze/Unsqueeze axes given either way, Slice bounds. */
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

bool sym_plain(struct sym s) { return s.known && s.k == 0; }

/* Results past 2^62 are unknown: folded values stay far from int64_t overflow. */
static struct sym bounded(struct sym s) {
    const int64_t lim = (int64_t)1 << 62;
    return s.known && s.c > -lim && s.c < lim && s.k > -lim && s.k < lim ? s : UNKNOWN;
}

struct sym sym_add(struct sym a, struct sym b) {
    if (!a.known || !b.known) return UNKNOWN;
    struct sym r = {0, 0, true};
    if (__builtin_add_overflow(a.c, b.c, &r.c) || __builtin_add_overflow(a.k, b.k, &r.k))
        return UNKNOWN;
    return bounded(r);
}

struct sym sym_neg(struct sym a) {
    return a.known && a.c != INT64_MIN && a.k != INT64_MIN ? (struct sym){-a.c, -a.k, true}
                                                             : UNKNOWN;
}

struct sym sym_mul(struct sym a, struct sym b) {
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
struct sym sym_div(struct sym a, struct sym b) {
    if (!a.known || !b.known) return UNKNOWN;
    if (b.k) /* (c + k B) / (j B): a number only when a is a multiple of b */
        return !a.c && !b.c && a.k % b.k == 0 ? sym_num(a.k / b.k) : UNKNOWN;
    if (b.c == 0 || (b.c == -1 && (a.c == INT64_MIN || a.k == INT64_MIN))) return UNKNOWN;
    if (!a.k) return sym_num(a.c / b.c);
    return a.c % b.c == 0 && a.k % b.c == 0 ? (struct sym){a.c / b.c, a.k / b.c, true} : UNKNOWN;
}

/* The sign of a - b for a batch of at least 1: -1, 0 or 1; 2 when it depends on the batch. */
int sym_cmp(struct sym a, struct sym b) {
    struct sym d = sym_add(a, sym_neg(b));
    if (!d.known) return 2;
    if (!d.k) return (d.c > 0) - (d.c < 0);
    int64_t at_one; /* d at batch 1: its least value when k > 0, its largest when k < 0 */
    if (__builtin_add_overflow(d.c, d.k, &at_one)) return 2;
    if (d.k > 0 && at_one > 0) return 1;
    if (d.k < 0 && at_one < 0) return -1;
    return 2;
}

bool sym_same(struct sym a, struct sym b) {
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
        if (!sym_plain(v->iv[i])) return false;
        vals[i] = v->iv[i].c;
    }
    *n = v->n_fold;
    return true;
}

/* --- shape rules shared with the mapper ----------------------------------------------------- */

static bool bcast_one(struct sym a, struct sym b, struct sym *out) {
    if (sym_plain(a) && a.c == 1) *out = b;
    else if (sym_plain(b) && b.c == 1) *out = a;
    else if (sym_same(a, b)) *out = a;
    else if (!a.known || !b.known) *out = a.known ? a : b; /* the unknown one is 1 or the same */
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
    if (n < 0 || n > DP_MAX_DIMS)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "reshape to rank %d", n) == 0;
    int infer = -1;
    struct sym known = sym_num(1);
    for (int d = 0; d < n; d++) {
        out[d] = want[d];
        if (sym_plain(want[d]) && want[d].c == 0 && !allowzero) {
            if (d >= x->n_dims)
                return onnx_fail(im, DP_ERR_SHAPE, "reshape copies dimension %d of a rank-%d "
                                 "tensor", d, x->n_dims) == 0;
            out[d] = x->dims[d];
        } else if (sym_plain(want[d]) && want[d].c == -1) {
            if (infer >= 0)
                return onnx_fail(im, DP_ERR_INVALID, "reshape target with two -1") == 0;
            infer = d;
            continue;
        } else if (sym_plain(want[d]) && want[d].c < -1) {
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
            if (sym_plain(total) && sym_plain(known))
                return onnx_fail(im, DP_ERR_SHAPE, "reshape of %lld elements: %lld does not "
                                 "divide them", (long long)total.c, (long long)known.c) == 0;
            if (!total.c && sym_plain(known)) /* k x batch elements in parts of known */
                return onnx_fail(im, DP_ERR_SHAPE, "reshape of %lld x batch elements: %lld does "
                                 "not divide them", (long long)total.k, (long long)known.c) == 0;
            out[infer] = UNKNOWN;
        }
    } else if (total.known && known.known && !sym_same(total, known)) {
        /* An export at a fixed batch writes it as a number: put the batch back into the first
         * dimension that holds it. */
        int64_t fb = im->fixed_batch;
        if (fb > 0 && total.k && !total.c && sym_plain(known) && known.c == total.k * fb) {
            for (int d = 0; d < n; d++)
                if (sym_plain(out[d]) && out[d].c % fb == 0 && out[d].c >= fb) {
                    out[d] = sym_batch(out[d].c / fb);
                    return true;
                }
        }
        if (sym_plain(total) && sym_plain(known))
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
            if (sym_plain(x->dims[d]) && x->dims[d].c == 1) mask |= 1u << d;
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
        if (!sym_plain(dim)) { /* the batch: only a slice that keeps all of it keeps it */
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

