/* tf_graphdef.c: TensorFlow GraphDef nodes into the op graph, for the text and binary readers:
 * ops with their shapes (the batch made symbolic once it is known), variables' parameter counts,
 * attributes as text in key order, inputs resolved once every node is known. */
#include "tf_graphdef.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/ops.h"

struct tf_pending {
    int   dst;
    char *ref;
};

enum dp_status tf_import_begin(struct tf_import *im, const char *path, struct dp_error *err) {
    memset(im, 0, sizeof *im);
    im->name = path;
    im->iterator_node = -1;
    char gname[256];
    const char *b = strrchr(path, '/');
    snprintf(gname, sizeof gname, "%s", b ? b + 1 : path);
    char *dot = strrchr(gname, '.');
    if (dot && dot != gname) *dot = '\0';
    if (!(im->g = dp_graph_init(gname)) || dp_graph_set_framework(im->g, "tensorflow"))
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
    return DP_OK;
}

void tf_import_free(struct tf_import *im) {
    for (size_t k = 0; k < im->n_in; k++) free(im->in[k].ref);
    free(im->in);
    dp_graph_free(im->g);
    memset(im, 0, sizeof *im);
}

bool tf_dims_overflow(int n, const int64_t *dims) {
    int64_t count = 1;
    for (int d = 0; d < n; d++) {
        if (dims[d] > 0 && count > INT64_MAX / dims[d]) return true;
        if (dims[d] > 0) count *= dims[d];
    }
    return false;
}

static int cmp_attr(const void *a, const void *b) {
    return strcmp(((const struct tf_attr *)a)->key, ((const struct tf_attr *)b)->key);
}

enum dp_status tf_import_node(struct tf_import *im, const struct tf_node *n,
                              struct dp_error *err) {
    int64_t dims[DP_MAX_DIMS];
    enum dp_status st;
    for (int d = 0; d < n->n_dims; d++) /* TF's -1: decided once the batch is known */
        dims[d] = n->dims[d] == -1 ? DP_DIM_UNKNOWN : n->dims[d];
    int idx;
    if ((st = dp_graph_add_node(im->g, n->name, n->op, n->device, n->n_dims, dims, n->dtype, &idx,
                                err))) {
        dp_error_prefix(err, im->name);
        return st;
    }
    /* Variables: the parameter count from the `shape` attribute (else the output shape). */
    if (dp_op_is_variable(n->op)) {
        int vn = n->has_var_shape ? n->var_n_dims : n->n_dims;
        const int64_t *vd = n->has_var_shape ? n->var_dims : n->dims;
        int64_t params = vn >= 0 ? 1 : 0;
        for (int d = 0; d < vn; d++) {
            if (vd[d] < 0 || (vd[d] > 0 && params > (INT64_C(1) << 53) / vd[d])) {
                params = 0;
                break;
            }
            params *= vd[d];
        }
        dp_graph_set_cost(im->g, idx, -1, -1, params);
    }
    if (im->iterator_node < 0 && dp_op_is_input_pipeline(n->op) && n->n_dims > 0 &&
        n->dims[0] > 0)
        im->iterator_node = idx;
    for (int k = 0; k < n->n_inputs; k++) {
        if (im->n_in == im->cap_in) {
            size_t cap = im->cap_in ? im->cap_in * 2 : 256;
            struct tf_pending *in = realloc(im->in, cap * sizeof *in);
            if (!in) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", im->name);
            im->in = in;
            im->cap_in = cap;
        }
        size_t len = strlen(n->inputs[k]) + 1;
        char *ref = malloc(len);
        if (!ref) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", im->name);
        memcpy(ref, n->inputs[k], len);
        im->in[im->n_in].dst = idx;
        im->in[im->n_in].ref = ref;
        im->n_in++;
    }
    /* Attributes in key order: TF's text writer sorts them, binary maps have no order. */
    struct tf_attr *sorted = malloc(((size_t)n->n_attrs + 1) * sizeof *sorted);
    if (!sorted) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", im->name);
    if (n->n_attrs) memcpy(sorted, n->attrs, (size_t)n->n_attrs * sizeof *sorted);
    qsort(sorted, (size_t)n->n_attrs, sizeof *sorted, cmp_attr);
    for (int a = 0; a < n->n_attrs && !st; a++)
        if (dp_graph_set_attr(im->g, idx, sorted[a].key, sorted[a].text))
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", im->name);
    free(sorted);
    return st;
}

/* Chooses the exported batch and makes first dimensions symbolic. */
static enum dp_status settle_batch(struct tf_import *im, const struct dp_import_opts *opts) {
    struct dp_graph *g = im->g;
    int64_t batch = 0;
    char source[320] = "";
    if (opts && opts->exported_batch > 0) {
        batch = opts->exported_batch;
        snprintf(source, sizeof source, "--exported-batch");
    } else if (im->iterator_node >= 0) {
        const struct dp_node *n = dp_graph_node(g, (size_t)im->iterator_node);
        batch = n->dims[0];
        snprintf(source, sizeof source, "%s '%.200s' dim 0", n->op, n->name);
    } else {
        for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
            const struct dp_node *n = dp_graph_node(g, i);
            /* Variables and constants have no batch dimension: skip them. */
            if (!dp_node_on_gpu(n) || n->n_dims < 1 || n->dims[0] <= 0 ||
                dp_op_is_variable(n->op) || dp_op_is_constant(n->op))
                continue;
            batch = n->dims[0];
            snprintf(source, sizeof source, "first GPU op '%.200s' (%s) dim 0", n->name, n->op);
            break;
        }
    }
    enum dp_status st = dp_graph_set_batch(g, batch, batch > 0 ? source : "unknown");
    if (st) return st;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (n->n_dims < 1 || dp_op_is_variable(n->op)) continue;
        if (n->dims[0] == DP_DIM_UNKNOWN || (batch > 0 && n->dims[0] == batch)) {
            int64_t dims[DP_MAX_DIMS];
            memcpy(dims, n->dims, sizeof dims);
            dims[0] = DP_DIM_BATCH;
            if ((st = dp_graph_set_shape(g, (int)i, n->n_dims, dims))) return st;
        }
    }
    return DP_OK;
}

enum dp_status tf_import_end(struct tf_import *im, const struct dp_import_opts *opts,
                             struct dp_graph **out, size_t *n_dropped, struct dp_error *err) {
    enum dp_status st;
    size_t dropped = 0;
    for (size_t k = 0; k < im->n_in; k++) {
        bool control;
        int src = dp_graph_resolve_input(im->g, im->in[k].ref, &control);
        if (src < 0) { /* an input naming no node: dropped */
            dropped++;
            continue;
        }
        if ((st = dp_graph_add_input(im->g, im->in[k].dst, src, control, err))) return st;
    }
    if ((st = settle_batch(im, opts))) return dp_error_set(err, st, "%s: out of memory", im->name);
    if (n_dropped) *n_dropped = dropped;
    *out = im->g;
    im->g = NULL;
    return DP_OK;
}

void tf_text_add(struct tf_text *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *t = realloc(b->s, cap);
        if (!t) {
            b->oom = true;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

void tf_text_str(struct tf_text *b, const char *s) { tf_text_add(b, s, strlen(s)); }

void tf_text_shape(struct tf_text *b, int n, const int64_t *dims) {
    if (n < 0) {
        tf_text_str(b, "?");
        return;
    }
    tf_text_str(b, "[");
    for (int d = 0; d < n; d++) {
        char num[32];
        snprintf(num, sizeof num, "%s%lld", d ? ", " : "", (long long)dims[d]);
        tf_text_str(b, num);
    }
    tf_text_str(b, "]");
}

void tf_text_bytes(struct tf_text *b, const char *s, size_t n) {
    /* Keep text printable: a string with NUL or control bytes is shown by its length. */
    bool printable = true;
    for (size_t k = 0; printable && k < n; k++)
        if ((unsigned char)s[k] < 32 && !strchr("\t\n", s[k])) printable = false;
    if (printable) {
        tf_text_add(b, s, n);
    } else {
        char t[48];
        snprintf(t, sizeof t, "<%zu bytes>", n);
        tf_text_str(b, t);
    }
}
