/* onnx_move.c: ONNX's data movement on activations onto the builder: Reshape (0 and -1 against
 * the symbolic batch), Flatten, Squeeze and Unsqueeze (axes as attribute or input), Transpose,
 * Concat, Split (sizes as attribute, input or equal parts), Slice (steps, negative bounds),
 * Gather (embedding lookups and gathers along any axis), Expand, Tile, Pad, Resize and Upsample,
 * and the fills too large to fold (ConstantOfShape, Range). Each is a TensorFlow copy op with its
 * gradient. */
#include "onnx_impl.h"

#include <string.h>

#define MAX_SPLIT 64 /* most outputs of a Split */

static bool reshape_to(struct imp *im, int x, int n, const struct sym *dims) {
    int64_t d[DP_MAX_DIMS];
    for (int i = 0; i < n; i++) d[i] = sym_to_dim(dims[i]);
    onnx_scope(im);
    int y = zb_reshape(im->b, x, n, d);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

bool onnx_map_reshape(struct imp *im) {
    const struct o_node *n = im->node;
    struct oval *xv = onnx_in(im, 0), *t = onnx_in(im, 1);
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    struct sym want[DP_MAX_DIMS], out[DP_MAX_DIMS];
    int nd;
    const struct o_attr *sh = onnx_attr(n, "shape"), *az = onnx_attr(n, "allowzero");
    if (t && t->n_fold >= 0 && t->n_fold <= DP_MAX_DIMS && t->iv) {
        nd = t->n_fold;
        memcpy(want, t->iv, sizeof(struct sym) * (size_t)nd);
    } else if (!t && sh && sh->n_ints <= DP_MAX_DIMS) { /* opset 1-4 */
        nd = sh->n_ints;
        for (int i = 0; i < nd; i++) want[i] = sym_num(sh->ints[i]);
    } else {
        /* A target computed from data, not from shapes: value_info is the last resort. */
        struct oval *ov = onnx_val(im, n->out[0], false);
        const struct o_value_info *vi = ov ? ov->vi : NULL;
        if (!vi || vi->n_dims < 1)
            return onnx_fail(im, DP_ERR_UNSUPPORTED, "the target shape is computed from data "
                             "and the output has no value_info shape") == 0;
        nd = vi->n_dims;
        for (int d = 0; d < nd; d++) want[d] = d == 0 ? sym_batch(1) : sym_of_dim(vi->dims[d]);
        return reshape_to(im, x, nd, want);
    }
    if (!onnx_reshape_dims(im, xv, want, nd, az && az->i, out)) return false;
    return reshape_to(im, x, nd, out);
}

bool onnx_map_flatten(struct imp *im) {
    struct oval *xv = onnx_in(im, 0);
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    const struct o_attr *ax = onnx_attr(im->node, "axis");
    int64_t axis = ax ? ax->i : 1;
    if (axis < 0) axis += xv->n_dims;
    if (axis < 0 || axis > xv->n_dims)
        return onnx_fail(im, DP_ERR_INVALID, "flatten axis %lld of rank %d",
                         (long long)(ax ? ax->i : 1), xv->n_dims) == 0;
    struct oval part = {.n_dims = (int)axis};
    struct sym out[2];
    memcpy(part.dims, xv->dims, sizeof(struct sym) * (size_t)axis);
    out[0] = onnx_numel_sym(&part);
    part.n_dims = xv->n_dims - (int)axis;
    memcpy(part.dims, xv->dims + axis, sizeof(struct sym) * (size_t)part.n_dims);
    out[1] = onnx_numel_sym(&part);
    return reshape_to(im, x, 2, out);
}

bool onnx_map_squeeze(struct imp *im, bool unsqueeze) {
    struct oval *xv = onnx_in(im, 0);
    int x = onnx_in_t(im, 0), nd;
    struct sym out[DP_MAX_DIMS];
    if (x < 0 || !onnx_squeeze_dims(im, xv, unsqueeze, out, &nd)) return false;
    return reshape_to(im, x, nd, out);
}

bool onnx_map_transpose(struct imp *im) {
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    int r = zb_rank(im->b, x), perm[DP_MAX_DIMS];
    const struct o_attr *p = onnx_attr(im->node, "perm");
    if (p && p->n_ints != r)
        return onnx_fail(im, DP_ERR_INVALID, "perm of %d axes for rank %d", p->n_ints, r) == 0;
    unsigned seen = 0;
    for (int d = 0; d < r; d++) {
        int64_t a = p ? p->ints[d] : r - 1 - d;
        if (a < 0 || a >= r || (seen & (1u << a)))
            return onnx_fail(im, DP_ERR_INVALID, "perm is not a permutation") == 0;
        seen |= 1u << a;
        perm[d] = (int)a;
    }
    onnx_scope(im);
    int y = zb_transpose(im->b, x, perm);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

bool onnx_map_concat(struct imp *im) {
    const struct o_node *n = im->node;
    int xs[256], k = 0;
    if (n->n_in > 256) return onnx_fail(im, DP_ERR_UNSUPPORTED, "concat of %d", n->n_in) == 0;
    for (int i = 0; i < n->n_in; i++) {
        if (!*n->in[i]) continue;
        if ((xs[k] = onnx_in_t(im, i)) < 0) return false;
        k++;
    }
    if (k == 0) return onnx_fail(im, DP_ERR_INVALID, "concat of nothing") == 0;
    const struct o_attr *ax = onnx_attr(n, "axis");
    onnx_scope(im);
    int y = zb_concat(im->b, xs, k, (int)(ax ? ax->i : 0));
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Split: sizes from the attribute (opset < 13), the input (13+), or equal parts (num_outputs
 * in opset 18, else the output count). */
bool onnx_map_split(struct imp *im) {
    const struct o_node *n = im->node;
    struct oval *xv = onnx_in(im, 0);
    int x = onnx_in_t(im, 0), outs[MAX_SPLIT];
    if (x < 0) return false;
    if (n->n_out < 1 || n->n_out > MAX_SPLIT)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "split into %d", n->n_out) == 0;
    const struct o_attr *ax = onnx_attr(n, "axis"), *sa = onnx_attr(n, "split");
    int64_t axis = ax ? ax->i : 0, sizes[MAX_SPLIT];
    int ns = 0;
    if (axis < 0) axis += xv->n_dims;
    if (sa) {
        ns = sa->n_ints;
        memcpy(sizes, sa->ints, sizeof(int64_t) * (size_t)(ns < MAX_SPLIT ? ns : MAX_SPLIT));
    } else if (onnx_in(im, 1) && !onnx_ints(onnx_in(im, 1), sizes, MAX_SPLIT, &ns)) {
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "split sizes computed at run time") == 0;
    }
    if (ns && ns != n->n_out)
        return onnx_fail(im, DP_ERR_INVALID, "%d split sizes for %d outputs", ns, n->n_out) == 0;
    onnx_scope(im);
    if (ns) zb_split_sizes(im->b, x, ns, sizes, (int)axis, outs);
    else zb_split(im->b, x, n->n_out, (int)axis, outs);
    zb_pop(im->b);
    for (int k = 0; k < n->n_out && !im->d->st; k++)
        if (!zb_status(im->b, NULL) && !onnx_set_tensor(im, k, outs[k])) return false;
    return !im->d->st && !zb_status(im->b, NULL);
}

bool onnx_map_slice(struct imp *im) {
    struct oval *xv = onnx_in(im, 0);
    int x = onnx_in_t(im, 0);
    int64_t begin[DP_MAX_DIMS], step[DP_MAX_DIMS], dims[DP_MAX_DIMS];
    struct sym out[DP_MAX_DIMS];
    if (x < 0 || !onnx_slice_dims(im, xv, begin, step, out)) return false;
    int changed = 0, axis = -1;
    for (int d = 0; d < xv->n_dims; d++) {
        dims[d] = sym_to_dim(out[d]);
        bool same = sym_same(out[d], xv->dims[d]) || (!out[d].known && !xv->dims[d].known);
        if (begin[d] || step[d] != 1 || !same) changed++, axis = d;
    }
    onnx_scope(im);
    /* one axis at step 1: TF's strided_slice of a range, as the zoo writes it */
    int y = changed == 1 && step[axis] == 1 && dims[axis] >= 0
                ? zb_slice(im->b, x, axis, begin[axis], dims[axis])
                : zb_copy(im->b, "StridedSlice", x, NULL, 0, xv->n_dims, dims);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Gather: an embedding lookup (a weight table, integer ids, axis 0) or a gather of rows of an
 * activation along any axis. */
bool onnx_map_gather(struct imp *im) {
    struct oval *xv = onnx_in(im, 0), *iv = onnx_in(im, 1);
    const struct o_attr *ax = onnx_attr(im->node, "axis");
    int64_t axis = ax ? ax->i : 0;
    if (!xv || !iv || xv->n_dims < 1 || iv->n_dims < 0)
        return onnx_fail(im, DP_ERR_SHAPE, "gather of unknown shapes") == 0;
    if (axis < 0) axis += xv->n_dims;
    if (axis < 0 || axis >= xv->n_dims || xv->n_dims - 1 + iv->n_dims > DP_MAX_DIMS)
        return onnx_fail(im, DP_ERR_INVALID, "gather axis %lld of rank %d",
                         (long long)(ax ? ax->i : 0), xv->n_dims) == 0;
    int x = onnx_in_t(im, 0), idx = onnx_in_t(im, 1);
    if (x < 0 || idx < 0) return false;
    onnx_scope(im);
    int y;
    if (axis == 0 && xv->n_dims == 2 && !dp_dtype_is_float(iv->dtype)) {
        y = zb_gather(im->b, x, idx);
    } else {
        int64_t dims[DP_MAX_DIMS];
        int nd = 0;
        for (int d = 0; d < axis; d++) dims[nd++] = sym_to_dim(xv->dims[d]);
        for (int d = 0; d < iv->n_dims; d++) dims[nd++] = sym_to_dim(iv->dims[d]);
        for (int d = (int)axis + 1; d < xv->n_dims; d++) dims[nd++] = sym_to_dim(xv->dims[d]);
        y = zb_copy(im->b, "GatherV2", x, &idx, 1, nd, dims);
    }
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Expand (BroadcastTo) and Tile: the target shape from a constant input. */
bool onnx_map_expand(struct imp *im, bool tile) {
    struct oval *xv = onnx_in(im, 0), *sv = onnx_in(im, 1);
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    if (!sv || sv->n_fold < 0 || !sv->iv || sv->n_fold > DP_MAX_DIMS)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "%s shape computed at run time",
                         tile ? "tile" : "expand") == 0;
    struct sym out[DP_MAX_DIMS];
    int no = xv->n_dims;
    if (tile) {
        if (sv->n_fold != xv->n_dims)
            return onnx_fail(im, DP_ERR_INVALID, "%d repeats for rank %d", sv->n_fold,
                             xv->n_dims) == 0;
        for (int d = 0; d < no; d++) {
            struct sym r = sv->iv[d];
            out[d] = r.known && !r.k && r.c == 1 ? xv->dims[d]
                     : r.known && !r.k && xv->dims[d].known && !xv->dims[d].k
                         ? sym_num(r.c * xv->dims[d].c)
                         : (struct sym){0, 0, false};
        }
    } else if (!onnx_broadcast(xv->dims, xv->n_dims, sv->iv, sv->n_fold, out, &no)) {
        return onnx_fail(im, DP_ERR_SHAPE, "expand to a shape that does not broadcast") == 0;
    }
    int64_t dims[DP_MAX_DIMS];
    for (int d = 0; d < no; d++) dims[d] = sym_to_dim(out[d]);
    onnx_scope(im);
    int y = zb_copy(im->b, tile ? "Tile" : "BroadcastTo", x, NULL, 0, no, dims);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Pad: pads from the attribute (opset < 11) or the input, [begin..., end...]; constant padding
 * is TF's Pad, reflect and edge its MirrorPad. */
bool onnx_map_pad(struct imp *im) {
    struct oval *xv = onnx_in(im, 0);
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    int64_t pads[2 * DP_MAX_DIMS];
    int np;
    bool given;
    if (!onnx_axes(im, "pads", 1, pads, &np, &given) || !given)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "pads computed at run time") == 0;
    int r = xv->n_dims;
    if (np != 2 * r) return onnx_fail(im, DP_ERR_INVALID, "%d pads for rank %d", np, r) == 0;
    int64_t dims[DP_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        struct sym s = xv->dims[d];
        if (pads[d] < -ZB_MAX_DIM || pads[d] > ZB_MAX_DIM || pads[r + d] < -ZB_MAX_DIM ||
            pads[r + d] > ZB_MAX_DIM)
            return onnx_fail(im, DP_ERR_INVALID, "pad of %lld", (long long)pads[d]) == 0;
        dims[d] = s.known && !s.k ? s.c + pads[d] + pads[r + d]
                  : pads[d] || pads[r + d] ? DP_DIM_UNKNOWN : sym_to_dim(s);
        if (s.known && !s.k && dims[d] < 0)
            return onnx_fail(im, DP_ERR_SHAPE, "padding leaves dimension %d negative", d) == 0;
    }
    const struct o_attr *mode = onnx_attr(im->node, "mode");
    bool mirror = mode && mode->s && strcmp(mode->s, "constant");
    onnx_scope(im);
    int y = zb_copy(im->b, mirror ? "MirrorPad" : "Pad", x, NULL, 0, r, dims);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Resize (opset 10+: scales or sizes as inputs) and Upsample (scales as an attribute in opset
 * 7, an input in 9): nearest, linear or cubic over any of the dimensions. */
bool onnx_map_resize(struct imp *im) {
    const struct o_node *n = im->node;
    struct oval *xv = onnx_in(im, 0);
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    int r = xv->n_dims;
    const struct o_attr *sa = onnx_attr(n, "scales");
    bool upsample = !strcmp(n->op, "Upsample");
    struct oval *scales = onnx_in(im, upsample || im->m->opset == 10 ? 1 : 2);
    struct oval *sizes = upsample ? NULL : onnx_in(im, 3);
    int64_t dims[DP_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        struct sym s = xv->dims[d];
        double f = sa && d < sa->n_floats ? (double)sa->floats[d]
                   : scales && scales->n_fold == r && scales->fv ? scales->fv[d] : -1;
        if (sizes && sizes->n_fold == r && sizes->iv) {
            dims[d] = sym_to_dim(sizes->iv[d]);
        } else if (f > 0 && s.known && !s.k) {
            dims[d] = (int64_t)((double)s.c * f);
        } else if (f == 1) {
            dims[d] = sym_to_dim(s);
        } else {
            return onnx_fail(im, DP_ERR_UNSUPPORTED, "resize scales or sizes computed at run "
                             "time") == 0;
        }
    }
    const struct o_attr *mode = onnx_attr(n, "mode");
    const char *tf = !mode || !mode->s || !strcmp(mode->s, "nearest") ? "ResizeNearestNeighbor"
                     : !strcmp(mode->s, "cubic")                     ? "ResizeBicubic"
                                                                     : "ResizeBilinear";
    onnx_scope(im);
    int y = zb_copy(im->b, tf, x, NULL, 0, r, dims);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* ConstantOfShape and Range too large to fold: a Fill (or Range) of the inferred shape. */
bool onnx_map_fill(struct imp *im, bool range) {
    struct oval *sv = onnx_in(im, 0);
    int64_t dims[DP_MAX_DIMS], lims[3];
    int nd = 1, one;
    dims[0] = DP_DIM_UNKNOWN;
    if (range) { /* too long to fold, its length known when its bounds are plain numbers */
        bool plain = true;
        for (int k = 0; k < 3 && plain; k++) {
            struct oval *v = onnx_in(im, k);
            plain = v && v->n_fold == 1 && (v->iv ? onnx_ints(v, &lims[k], 1, &one)
                                                  : (lims[k] = (int64_t)v->fv[0], v->fv[0] ==
                                                                  (double)lims[k]));
        }
        for (int k = 0; k < 3 && plain; k++)
            plain = lims[k] >= -ZB_MAX_DIM && lims[k] <= ZB_MAX_DIM;
        if (plain && lims[2]) {
            int64_t len = (lims[1] - lims[0] + lims[2] - (lims[2] > 0 ? 1 : -1)) / lims[2];
            dims[0] = len < 0 ? 0 : len > ZB_MAX_DIM ? DP_DIM_UNKNOWN : len;
        }
    } else {
        if (!sv || sv->n_fold < 0 || !sv->iv || sv->n_fold > DP_MAX_DIMS)
            return onnx_map_generic(im, false);
        nd = sv->n_fold;
        for (int d = 0; d < nd; d++) dims[d] = sym_to_dim(sv->iv[d]);
    }
    const struct o_attr *v = onnx_attr(im->node, "value");
    enum dp_dtype dt = v && v->t ? onnx_dtype(v->t->dtype) : DP_DTYPE_F32;
    onnx_scope(im);
    int y = zb_opaque(im->b, range ? "Range" : "Fill", NULL, 0, nd, dims, dt);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

