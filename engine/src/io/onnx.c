/* onnx.c: ONNX import, the walk that ties the reader's parts together. The model is decoded
 * (onnx_schema.c over the wire decoder), its nodes put in dependency order (a cycle or a value
 * nobody produces is a named error), the float initializers that gradients reach from the
 * outputs are the weights (the rest, like attention masks, are constants), then each node is
 * folded (shape arithmetic, onnx_infer.c) or mapped onto the training-graph builder
 * (onnx_map.c), the loss is put on the first float output and the builder adds the gradients,
 * the optimizer (momentum) and the costs: the same training expansion as `driple zoo build`. */
#include "onnx_impl.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "file_map.h"

#define ONNX_MAX_FILE ((size_t)1 << 31)

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Defines v from an initializer or a Constant's tensor: its shape and small contents. */
static bool define_tensor(struct imp *im, struct oval *v, const struct o_tensor *t) {
    if (t->n_dims > DP_MAX_DIMS)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "tensor '%s' has %d dimensions", v->name,
                         t->n_dims) == 0;
    v->defined = true;
    v->init = t;
    v->dtype = onnx_dtype(t->dtype);
    v->n_dims = t->n_dims;
    for (int d = 0; d < t->n_dims; d++) {
        if (t->dims[d] > ZB_MAX_DIM)
            return onnx_fail(im, DP_ERR_UNSUPPORTED, "tensor '%s': dimension %lld larger than "
                             "2^40", v->name, (long long)t->dims[d]) == 0;
        v->dims[d] = sym_num(t->dims[d]);
    }
    if (t->n_vals < 0) return true;
    v->n_fold = t->n_vals;
    size_t cnt = t->n_vals ? (size_t)t->n_vals : 1;
    if (t->fvals) {
        v->fv = t->fvals;
    } else if (t->ivals) {
        if (!(v->iv = pb_alloc(&im->d->ar, cnt * sizeof *v->iv))) return pb_oom(im->d);
        for (int i = 0; i < t->n_vals; i++) v->iv[i] = sym_num(t->ivals[i]);
    } else {
        v->n_fold = -1;
    }
    return true;
}

/* The tensor of a Constant node: attribute value, or value_int(s) / value_float(s) (opset 12). */
static const struct o_tensor *constant_tensor(struct imp *im, const struct o_node *n) {
    const struct o_attr *a = onnx_attr(n, "value");
    if (!a) a = onnx_attr(n, "sparse_value");
    if (a && a->t) return a->t;
    const struct o_attr *vi = onnx_attr(n, "value_int"), *vis = onnx_attr(n, "value_ints");
    const struct o_attr *vf = onnx_attr(n, "value_float"), *vfs = onnx_attr(n, "value_floats");
    if (!vi && !vis && !vf && !vfs) return NULL;
    struct o_tensor *t = pb_alloc(&im->d->ar, sizeof *t);
    if (!t) {
        pb_oom(im->d);
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->name = n->out[0];
    bool ints = vi || vis;
    int cnt = vi || vf ? 1 : ints ? vis->n_ints : vfs->n_floats;
    t->dtype = ints ? 7 : 1;
    t->n_dims = vi || vf ? 0 : 1;
    t->dims[0] = cnt;
    t->n_vals = cnt;
    if (ints) t->ivals = pb_alloc(&im->d->ar, (size_t)(cnt + 1) * sizeof *t->ivals);
    else t->fvals = pb_alloc(&im->d->ar, (size_t)(cnt + 1) * sizeof *t->fvals);
    if (ints ? !t->ivals : !t->fvals) {
        pb_oom(im->d);
        return NULL;
    }
    for (int i = 0; i < cnt; i++) {
        if (ints) t->ivals[i] = vi ? vi->i : vis->ints[i];
        else t->fvals[i] = vf ? (double)vf->f : (double)vfs->floats[i];
    }
    return t;
}

static bool is_constant(const struct o_node *n) {
    return !strcmp(n->op, "Constant") && (!*n->domain || !strcmp(n->domain, "ai.onnx"));
}

/* An Identity of a stored tensor is a stored tensor of its own: torch's exporter writes
 * parameters of equal values once and the others as Identity nodes of it (the layers of a
 * freshly built nn.TransformerEncoder, every layer norm's ones and zeros). True when n is one
 * (its output is then defined). */
static bool copy_of_stored(struct imp *im, const struct o_node *n) {
    if (strcmp(n->op, "Identity") || *n->domain || n->n_in != 1 || n->n_out != 1 || !*n->out[0])
        return false;
    const struct oval *x = onnx_val(im, n->in[0], false);
    if (!x || !x->defined || !x->init || (x->src != SRC_INIT && x->src != SRC_CONST))
        return false;
    struct oval *v = onnx_val(im, n->out[0], false);
    v->src = SRC_CONST;
    v->copy = true;
    define_tensor(im, v, x->init); /* a failure is in im->d->st */
    return true;
}

/* Registers every value: initializers, Constant nodes, node outputs (their producer), value_info
 * hints. */
static bool register_values(struct imp *im) {
    const struct o_graph *g = im->g;
    for (int i = 0; i < g->n_inits; i++) {
        struct oval *v = onnx_val(im, g->inits[i].name, true);
        if (!v || v->src != SRC_NODE || v->defined)
            return onnx_fail(im, DP_ERR_INVALID, "initializer '%s' defined twice (or unnamed)",
                             g->inits[i].name) == 0;
        v->src = SRC_INIT;
        if (!define_tensor(im, v, &g->inits[i])) return false;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const struct o_node *n = &g->nodes[i];
        im->node = n;
        for (int k = 0; k < n->n_out; k++) {
            if (!*n->out[k]) continue;
            struct oval *v = onnx_val(im, n->out[k], true);
            if (!v || v->defined || v->producer >= 0)
                return onnx_fail(im, DP_ERR_INVALID, "output '%s' defined twice", n->out[k]) == 0;
            v->producer = i;
        }
        if (copy_of_stored(im, n)) {
            if (im->d->st) return false;
            continue;
        }
        if (!is_constant(n)) continue;
        const struct o_tensor *t = n->n_out < 1 || !*n->out[0] ? NULL : constant_tensor(im, n);
        if (im->d->st) return false;
        if (!t)
            return onnx_fail(im, DP_ERR_UNSUPPORTED, "Constant without a tensor value") == 0;
        struct oval *v = onnx_val(im, n->out[0], false);
        v->src = SRC_CONST;
        if (!define_tensor(im, v, t)) return false;
    }
    im->node = NULL;
    for (int i = 0; i < g->n_vinfo + g->n_outputs; i++) {
        const struct o_value_info *vi = i < g->n_vinfo ? &g->vinfo[i] : &g->outputs[i - g->n_vinfo];
        struct oval *v = onnx_val(im, vi->name, true);
        if (v && !v->vi) v->vi = vi;
    }
    return true;
}

/* Kahn's order of the nodes (a file's own order when it is one already). Fails naming a value
 * no one produces, or a node on a cycle. */
static bool order_nodes(struct imp *im, int *order) {
    const struct o_graph *g = im->g;
    int n = g->n_nodes, head = 0, tail = 0;
    int *missing = calloc((size_t)n + 1, sizeof *missing);
    int *first = malloc(((size_t)n + 1) * sizeof *first), *next = NULL, *user = NULL;
    size_t n_edges = 0;
    for (int i = 0; i < n; i++) n_edges += (size_t)g->nodes[i].n_in;
    next = malloc((n_edges + 1) * sizeof *next);
    user = malloc((n_edges + 1) * sizeof *user);
    bool ok = false;
    if (!missing || !first || !next || !user) {
        pb_oom(im->d);
        goto done;
    }
    for (int i = 0; i < n; i++) first[i] = -1;
    size_t e = 0;
    for (int i = 0; i < n; i++) { /* an edge producer -> user per input produced by a node */
        const struct o_node *nd = &g->nodes[i];
        im->node = nd;
        for (int k = 0; k < nd->n_in; k++) {
            if (!*nd->in[k]) continue;
            struct oval *v = onnx_val(im, nd->in[k], false);
            if (!v || (v->producer < 0 && !v->defined && v->src != SRC_INPUT)) {
                onnx_fail(im, DP_ERR_INVALID, "input '%s' is not produced by any node, "
                          "initializer or graph input", nd->in[k]);
                goto done;
            }
            if (v->producer < 0 || v->src == SRC_CONST) continue;
            missing[i]++;
            user[e] = i;
            next[e] = first[v->producer];
            first[v->producer] = (int)e++;
        }
    }
    im->node = NULL;
    for (int i = 0; i < n; i++)
        if (!missing[i]) order[tail++] = i;
    /* Ready nodes in file order, so a sorted file keeps its order. */
    while (head < tail) {
        int i = order[head++];
        for (int ed = first[i]; ed >= 0; ed = next[ed])
            if (--missing[user[ed]] == 0) order[tail++] = user[ed];
    }
    if (tail < n) {
        for (int i = 0; i < n; i++)
            if (missing[i]) {
                im->node = &g->nodes[i];
                break;
            }
        onnx_fail(im, DP_ERR_INVALID, "the graph has a cycle through this node (%d nodes never "
                  "become ready)", n - tail);
        goto done;
    }
    ok = true;
done:
    free(missing);
    free(first);
    free(next);
    free(user);
    return ok;
}

/* The graph inputs that are not initializers: the first from the CPU input pipeline, the others
 * further outputs of its IteratorGetNext; dim 0 is the batch. */
static int define_inputs(struct imp *im, const struct dp_import_opts *opts, int64_t *batch,
                         char *source, size_t n_source) {
    const struct o_graph *g = im->g;
    int features = -1;
    *batch = opts && opts->exported_batch > 0 ? opts->exported_batch : 0;
    if (*batch) snprintf(source, n_source, "--exported-batch");
    for (int i = 0; i < g->n_inputs; i++) {
        const struct o_value_info *in = &g->inputs[i];
        struct oval *v = onnx_val(im, in->name, true);
        if (!v) return onnx_fail(im, DP_ERR_INVALID, "graph input with an empty name");
        if (v->src == SRC_INIT) continue; /* an initializer listed as an input (IR < 4) */
        if (v->defined || v->src == SRC_INPUT || v->producer >= 0)
            return onnx_fail(im, DP_ERR_INVALID, "graph input '%s' defined twice", in->name);
        if (in->n_dims < 1)
            return onnx_fail(im, DP_ERR_UNSUPPORTED, "graph input '%s' has no tensor shape "
                             "(at least the batch dimension)", in->name);
        int64_t dims[DP_MAX_DIMS];
        for (int d = 0; d < in->n_dims; d++) dims[d] = in->dims[d];
        if (features < 0 && !in->sym[0]) im->fixed_batch = in->dims[0];
        if (!*batch) {
            if (!in->sym[0]) {
                *batch = in->dims[0];
                snprintf(source, n_source, "ONNX input '%.100s' dim 0", in->name);
            } else if (!*source) {
                snprintf(source, n_source, "symbolic '%.60s' in ONNX input '%.60s'",
                         in->param0 ? in->param0 : "?", in->name);
            }
        }
        dims[0] = DP_DIM_BATCH;
        enum dp_dtype dt = onnx_dtype(in->elem);
        if (dt == DP_DTYPE_UNKNOWN) dt = DP_DTYPE_F32;
        int t = features < 0 ? zb_input(im->b, in->n_dims, dims, dt, 0, NULL, NULL, false)
                             : zb_input_extra(im->b, features, in->n_dims, dims, dt);
        struct dp_error e = {0};
        if (zb_status(im->b, &e)) /* a refused shape: the builder's reason */
            return onnx_fail(im, e.status, "graph input '%s': %s", in->name, e.msg);
        if (features < 0) features = t;
        v->src = SRC_INPUT;
        v->defined = true;
        v->tensor = t;
        v->dtype = dt;
        v->n_dims = in->n_dims;
        for (int d = 0; d < in->n_dims; d++) v->dims[d] = sym_of_dim(dims[d]);
    }
    if (features < 0) return onnx_fail(im, DP_ERR_INVALID, "the graph has no input");
    return features;
}

/* The loss on the first float output: cross-entropy against labels from the input pipeline
 * (the logits under a final Softmax), or the mean of a vector output. */
static int add_loss(struct imp *im, int features) {
    const struct o_graph *g = im->g;
    struct oval *ov = NULL;
    for (int i = 0; i < g->n_outputs && !ov; i++) {
        struct oval *v = onnx_val(im, g->outputs[i].name, false);
        if (v && v->defined && dp_dtype_is_float(v->dtype)) ov = v;
    }
    if (!ov) return onnx_fail(im, DP_ERR_INVALID, "the graph has no float output to put a loss "
                              "on");
    if (ov->tensor < 0 && ov->softmax_of < 0)
        return onnx_fail(im, DP_ERR_INVALID, "graph output '%s' does not depend on the input",
                         ov->name);
    int logits = ov->softmax_of >= 0 ? ov->softmax_of : ov->tensor;
    int r = zb_rank(im->b, logits);
    if (r < 0)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "graph output '%s' has an unknown shape (no "
                         "loss)", ov->name);
    if (r < 2) return zb_reduce(im->b, "Mean", logits, (1u << r) - 1, false);
    int64_t ld[DP_MAX_DIMS];
    memcpy(ld, zb_dims(im->b, logits), sizeof(int64_t) * (size_t)(r - 1));
    int labels = zb_input_extra(im->b, features, r - 1, ld, DP_DTYPE_I32);
    return zb_xent_loss(im->b, logits, labels, r > 2);
}

static void report_unknown(const struct imp *im, struct dp_import_notes *notes) {
    if (!notes) return;
    memset(notes, 0, sizeof *notes);
    notes->assumed_batch = im->assumed_batch;
    notes->n_generic = (size_t)im->n_unknown_nodes;
    size_t k = 0;
    for (int i = 0; i < im->n_unknown && k < sizeof notes->generic_types; i++)
        k += (size_t)snprintf(notes->generic_types + k, sizeof notes->generic_types - k,
                              "%s%s (%d)", i ? ", " : "", im->unknown[i].op,
                              im->unknown[i].count);
}

static enum dp_status build_training(struct pb_doc *d, const struct o_model *m,
                                     const struct dp_import_opts *opts, const char *gname,
                                     struct dp_graph **out) {
    const struct o_graph *g = &m->g;
    struct imp im = {.d = d, .m = m, .g = g};
    struct dp_graph *dg = NULL;
    int *order = NULL;
    size_t want = (size_t)g->n_inits + (size_t)g->n_inputs + (size_t)g->n_vinfo +
                  (size_t)g->n_outputs + 16;
    for (int i = 0; i < g->n_nodes; i++) want += (size_t)g->nodes[i].n_out;
    im.cap = 64;
    while (im.cap < 2 * want + 2) im.cap *= 2;
    /* ONNX activations are NCHW; PyTorch's usual SGD with momentum. */
    struct zb_opts zo = {DP_OPT_MOMENTUM, DP_PREC_FP32, true};
    if (!(im.vals = calloc(im.cap, sizeof *im.vals)) ||
        !(order = malloc(((size_t)g->n_nodes + 1) * sizeof *order)) ||
        !(dg = dp_graph_init(gname)) || dp_graph_set_framework(dg, "onnx") ||
        !(im.b = zb_init(dg, &zo))) {
        pb_oom(d);
        goto done;
    }
    im.dg = dg;
    if (!register_values(&im)) goto done;
    int64_t batch;
    char source[200] = "";
    int features = define_inputs(&im, opts, &batch, source, sizeof source);
    if (features < 0) goto done;
    if (!batch) { /* a dynamic batch: one rule for every front end, said by the caller */
        char sym[200];
        snprintf(sym, sizeof sym, "%s", source);
        batch = opts && opts->assumed_batch > 0 ? opts->assumed_batch : DP_IMPORT_ASSUMED_BATCH;
        snprintf(source, sizeof source, "assumed %lld: %.100s", (long long)batch, sym);
        im.assumed_batch = batch;
    }
    if (dp_graph_set_batch(dg, batch, source)) {
        pb_oom(d);
        goto done;
    }
    if (!order_nodes(&im, order)) goto done;
    if (!onnx_classify(&im, order)) goto done;
    for (int i = 0; i < g->n_nodes && !d->st; i++) {
        im.node = &g->nodes[order[i]];
        const struct oval *o0 = im.node->n_out ? onnx_val(&im, im.node->out[0], false) : NULL;
        if ((o0 && o0->src == SRC_CONST) || onnx_fold(&im) || d->st) continue;
        if (!onnx_map(&im) && !d->st) {
            struct dp_error e = {0};
            if (zb_status(im.b, &e)) onnx_fail(&im, e.status, "%s", e.msg);
            else onnx_fail(&im, DP_ERR_INVALID, "cannot map this node");
        }
    }
    if (d->st) goto done;
    im.node = NULL;
    int loss = add_loss(&im, features);
    struct dp_error e = {0};
    if (loss < 0 && !d->st && zb_status(im.b, &e)) onnx_fail(&im, e.status, "loss: %s", e.msg);
    if (d->st) goto done;
    if (zb_finish(im.b, loss, &e)) onnx_fail(&im, e.status, "%s", e.msg);
done:
    if (!d->st && opts) report_unknown(&im, opts->notes);
    zb_free(im.b);
    free(im.vals);
    free(order);
    if (d->st) {
        dp_graph_free(dg);
        return d->st;
    }
    *out = dg;
    return DP_OK;
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

enum dp_status onnx_parse(const unsigned char *data, size_t len, const char *name,
                          const char *path, const struct dp_import_opts *opts,
                          struct dp_graph **out, struct dp_error *err) {
    struct pb_doc d = {.base = data, .len = len, .name = name ? name : "onnx", .err = err};
    struct o_model m;
    if (!data || len == 0) return dp_error_set(err, DP_ERR_PARSE, "%s: empty file", d.name);
    if (!onnx_decode(&d, &m) || !onnx_read_external(&d, &m, path)) goto done;
    if (!m.have_graph) {
        dp_error_set(err, DP_ERR_PARSE, "%s:byte %zu: not an ONNX model (no graph field)", d.name,
                     len);
        d.st = DP_ERR_PARSE;
        goto done;
    }
    if (m.g.n_nodes == 0) {
        dp_error_set(err, DP_ERR_INVALID, "%s: the ONNX graph has no nodes", d.name);
        d.st = DP_ERR_INVALID;
        goto done;
    }
    char gname[256];
    /* named after the file (every PyTorch export calls its graph "torch_jit"); the graph's own
     * name only for a model from memory or stdin */
    snprintf(gname, sizeof gname, "%s", path || !m.g.name || !*m.g.name ? base_name(d.name)
                                                                        : m.g.name);
    for (char *p = strrchr(gname, '.'); p && !strcmp(p, ".onnx"); p = NULL) *p = '\0';
    build_training(&d, &m, opts, gname, out);
done:
    pb_arena_free(&d.ar);
    return d.st;
}

enum dp_status dp_graph_parse_onnx(const unsigned char *data, size_t len, const char *name,
                                   const struct dp_import_opts *opts, struct dp_graph **out,
                                   struct dp_error *err) {
    return onnx_parse(data, len, name, NULL, opts, out, err);
}

enum dp_status dp_graph_import_onnx(const char *path, const struct dp_import_opts *opts,
                                    struct dp_graph **out, struct dp_error *err) {
    static const struct dp_read_spec spec = {"ONNX model", ONNX_MAX_FILE, false, NULL, NULL};
    struct file_bytes f;
    enum dp_status st = file_bytes_open(path, &spec, &f, err);
    if (st) return st;
    st = onnx_parse(f.data, f.len, dp_file_name(path), strcmp(path, "-") ? path : NULL, opts,
                    out, err);
    file_bytes_close(&f);
    return st;
}
