/* onnx_values.c: the ONNX importer's table of values (every initializer, Constant, graph input
 * and node output, by name: open addressing) and its one way to fail naming the node being
 * mapped. The bottom of the reader's parts: every other part calls it, it calls none. */
#include "onnx_impl.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/hash.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

struct oval *onnx_val(struct imp *im, const char *name, bool create) {
    if (!name || !*name) return NULL;
    size_t h = dp_hash_str(name) & (im->cap - 1);
    while (im->vals[h].name) {
        if (!strcmp(im->vals[h].name, name)) return &im->vals[h];
        h = (h + 1) & (im->cap - 1);
    }
    if (!create || im->n_vals + 1 >= im->cap / 2) return NULL;
    struct oval *v = &im->vals[h];
    v->name = name;
    v->producer = -1;
    v->n_dims = -1;
    v->n_fold = -1;
    v->tensor = -1;
    v->softmax_of = -1;
    im->n_vals++;
    return v;
}

struct oval *onnx_in(struct imp *im, int k) {
    const struct o_node *n = im->node;
    return k < n->n_in ? onnx_val(im, n->in[k], false) : NULL;
}

int onnx_fail(struct imp *im, enum dp_status st, const char *fmt, ...) {
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (im->d->st) return -1;
    im->d->st = st;
    char hint[PATH_MAX + 256] = "";
    for (int k = 0; im->node && k < im->node->n_in && !*hint; k++) {
        const struct oval *v = onnx_in(im, k);
        if (v && v->init && v->init->unread)
            snprintf(hint, sizeof hint, " (input '%.100s' is in external data driple could not "
                     "read: %s)", v->name, v->init->unread);
    }
    if (im->node)
        dp_error_set(im->d->err, st, "%s:byte %zu: node '%s' (%s): %s%s", im->d->name,
                     im->node->offset, im->node->name, im->node->op, what, hint);
    else dp_error_set(im->d->err, st, "%s: %s", im->d->name, what);
    return -1;
}
