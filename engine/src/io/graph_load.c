/* graph_load.c: loading a workload graph in whichever format the file holds, decided by its
 * first bytes (not its name): driple-graph/1 JSON starts with '{', TF GraphDef text with a
 * field name or a '#' comment; binary protobufs (ONNX, GraphDef, SavedModel) by their top-level
 * fields. */
#include "dp/graph_io.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"
#include "file_map.h"
#include "onnx_impl.h"

enum dp_status dp_graph_load(const char *path, const struct dp_import_opts *opts,
                             struct dp_graph **out, struct dp_error *err) {
    return dp_graph_load_ex(path, opts, out, NULL, err);
}

/* The first bytes decide the format: anything else (an endless /dev/zero included) is refused
 * before the rest is read. */
static const char *graph_head(const unsigned char *head, size_t n) {
    if (dp_graph_detect_format(head, n) != DP_GRAPH_FORMAT_UNKNOWN) return NULL;
    return "not a graph this build reads (expected driple-graph/1 JSON, TensorFlow GraphDef text "
           "or binary, a SavedModel or ONNX)";
}

/* The largest graph file of any format (ONNX's, protobuf's own limit, holds the weights); a
 * text format's is DP_IMPORT_MAX_TEXT, known from the first bytes. */
#define GRAPH_FILE_MAX_BYTES ((size_t)1 << 31)
static size_t graph_head_max(const unsigned char *head, size_t n) {
    enum dp_graph_format f = dp_graph_detect_format(head, n);
    return f == DP_GRAPH_FORMAT_JSON || f == DP_GRAPH_FORMAT_PBTXT ? DP_IMPORT_MAX_TEXT : 0;
}

/* Refuses a cycle that no loop closes (a -> b -> a, an op its own input), in any format: only
 * TensorFlow's NextIteration feeds an op back (a while loop's back edge). Kahn's order over the
 * data and control inputs; an op never ready is on a cycle or after one. */
static enum dp_status check_acyclic(const struct dp_graph *g, const char *name,
                                    struct dp_error *err) {
    size_t n = dp_graph_n_nodes(g), head = 0, tail = 0;
    int *missing = calloc(n + 1, sizeof *missing), *queue = malloc((n + 1) * sizeof *queue);
    size_t *start = calloc(n + 2, sizeof *start), *users = NULL;
    enum dp_status st = DP_OK;
    if (!missing || !queue || !start) goto oom;
    for (size_t i = 0; i < n; i++) { /* users of each op, counted, then placed */
        const struct dp_node *d = dp_graph_node(g, i);
        for (int k = 0; k < d->n_inputs + d->n_ctrl; k++) {
            int src = k < d->n_inputs ? d->inputs[k] : d->ctrl[k - d->n_inputs];
            if (strcmp(dp_graph_node(g, (size_t)src)->op, "NextIteration")) start[src + 1]++;
        }
    }
    for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
    if (!(users = malloc((start[n] + 1) * sizeof *users))) goto oom;
    size_t *fill = calloc(n + 1, sizeof *fill);
    if (!fill) goto oom;
    for (size_t i = 0; i < n; i++) {
        const struct dp_node *d = dp_graph_node(g, i);
        for (int k = 0; k < d->n_inputs + d->n_ctrl; k++) {
            int src = k < d->n_inputs ? d->inputs[k] : d->ctrl[k - d->n_inputs];
            if (!strcmp(dp_graph_node(g, (size_t)src)->op, "NextIteration")) continue;
            users[start[src] + fill[src]++] = i;
            missing[i]++;
        }
    }
    free(fill);
    for (size_t i = 0; i < n; i++)
        if (!missing[i]) queue[tail++] = (int)i;
    while (head < tail) {
        size_t i = (size_t)queue[head++];
        for (size_t e = start[i]; e < start[i + 1]; e++)
            if (--missing[users[e]] == 0) queue[tail++] = (int)users[e];
    }
    size_t at = 0;
    while (tail < n && !missing[at]) at++;
    /* an op never ready has an input never ready: n steps back from one lands on the cycle */
    for (size_t step = 0; tail < n && step < n; step++) {
        const struct dp_node *d = dp_graph_node(g, at);
        for (int k = 0; k < d->n_inputs + d->n_ctrl; k++) {
            int src = k < d->n_inputs ? d->inputs[k] : d->ctrl[k - d->n_inputs];
            if (missing[src] && strcmp(dp_graph_node(g, (size_t)src)->op, "NextIteration")) {
                at = (size_t)src;
                break;
            }
        }
    }
    if (tail < n)
        st = dp_error_set(err, DP_ERR_INVALID, "%s: op '%s' is on a data cycle that no loop "
                          "closes (%zu ops never become ready)", name,
                          dp_graph_node(g, at)->name, n - tail);
    goto done;
oom:
    st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
done:
    free(missing);
    free(queue);
    free(start);
    free(users);
    return st;
}

enum dp_status dp_graph_load_ex(const char *path, const struct dp_import_opts *opts,
                                struct dp_graph **out, size_t *n_dropped, struct dp_error *err) {
    static const struct dp_read_spec spec = {"graph", GRAPH_FILE_MAX_BYTES, false, graph_head,
                                             graph_head_max};
    struct file_bytes f;
    enum dp_status st = file_bytes_open(path, &spec, &f, err);
    if (st) return st;
    const char *name = dp_file_name(path);
    struct dp_graph *g = NULL;
    size_t dropped = 0;
    enum dp_graph_format fmt = dp_graph_detect_format(f.data, f.len < 4096 ? f.len : 4096);
    char *text = NULL; /* the text formats read a NUL-terminated copy of a mapped file */
    if ((fmt == DP_GRAPH_FORMAT_JSON || fmt == DP_GRAPH_FORMAT_PBTXT) && f.mapped) {
        if (!(text = malloc(f.len + 1))) {
            file_bytes_close(&f);
            return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        }
        memcpy(text, f.data, f.len);
        text[f.len] = '\0';
    }
    const char *t = text ? text : (const char *)f.data;
    switch (fmt) {
    case DP_GRAPH_FORMAT_JSON:
        st = dp_graph_parse_json(t, f.len, name, &g, &dropped, err);
        if (!st && opts && opts->exported_batch > 0 &&
            dp_graph_set_batch(g, opts->exported_batch, "--exported-batch"))
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        break;
    case DP_GRAPH_FORMAT_PBTXT:
        st = dp_graph_parse_pbtxt_ex(t, f.len, name, opts, &g, &dropped, err);
        break;
    case DP_GRAPH_FORMAT_ONNX:
        st = onnx_parse(f.data, f.len, name, strcmp(path, "-") ? path : NULL, opts, &g, err);
        break;
    case DP_GRAPH_FORMAT_GRAPHDEF:
    case DP_GRAPH_FORMAT_SAVED_MODEL:
        st = dp_graph_parse_graphdef(f.data, f.len, name, opts, &g, &dropped, err);
        break;
    default:
        st = dp_error_set(err, DP_ERR_PARSE, "%s: empty file", name);
        break;
    }
    free(text);
    file_bytes_close(&f);
    if (st) {
        dp_graph_free(g);
        return st;
    }
    if ((st = check_acyclic(g, name, err))) {
        dp_graph_free(g);
        return st;
    }
    if (n_dropped) *n_dropped = dropped;
    *out = g;
    return DP_OK;
}
