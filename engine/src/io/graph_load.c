/* graph_load.c: loading a workload graph in whichever format the file holds, decided by its
 * first bytes (not its name): driple-graph/1 JSON starts with '{', TF GraphDef text with a
 * field name or a '#' comment, ONNX is binary protobuf (a ModelProto opens with a small tag). */
#include "dp/graph_io.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"
#include "dp/onnx.h"

enum dp_graph_format dp_graph_detect_format(const unsigned char *head, size_t len) {
    size_t i = 0;
    if (len >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf) i = 3; /* UTF-8 BOM */
    bool text = true;
    for (size_t k = i; k < len; k++)
        if (head[k] == 0 || (head[k] < 32 && !strchr("\t\r\n\f\v", head[k]))) text = false;
    if (text) {
        while (i < len && strchr(" \t\r\n\f\v", head[i]) && head[i]) i++;
        if (i == len) return DP_GRAPH_FORMAT_UNKNOWN;
        if (head[i] == '{') return DP_GRAPH_FORMAT_JSON;
        unsigned char c = head[i];
        if (c == '#' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
            return DP_GRAPH_FORMAT_PBTXT;
        return DP_GRAPH_FORMAT_UNKNOWN;
    }
    /* ModelProto fields 1..8 (ir_version is a varint, tag 0x08; graph etc. are
     * length-delimited, tags 0x12..0x42). */
    unsigned char tag = head[i];
    if (tag == 0x08 || ((tag & 7) == 2 && (tag >> 3) >= 1 && (tag >> 3) <= 20))
        return DP_GRAPH_FORMAT_ONNX;
    return DP_GRAPH_FORMAT_UNKNOWN;
}

enum dp_status dp_graph_load(const char *path, const struct dp_import_opts *opts,
                             struct dp_graph **out, struct dp_error *err) {
    return dp_graph_load_ex(path, opts, out, NULL, err);
}

/* The first bytes decide the format: anything else (an endless /dev/zero included) is refused
 * before the rest is read. */
static const char *graph_head(const unsigned char *head, size_t n) {
    if (dp_graph_detect_format(head, n) != DP_GRAPH_FORMAT_UNKNOWN) return NULL;
    return "not a graph this build reads (expected driple-graph/1 JSON, TensorFlow GraphDef text "
           "or ONNX)";
}

/* The largest graph file of any format (ONNX's, protobuf's own limit, holds the weights). */
#define GRAPH_FILE_MAX_BYTES ((size_t)1 << 31)

enum dp_status dp_graph_load_ex(const char *path, const struct dp_import_opts *opts,
                                struct dp_graph **out, size_t *n_dropped, struct dp_error *err) {
    static const struct dp_read_spec spec = {"graph", GRAPH_FILE_MAX_BYTES, false, graph_head};
    char *text = NULL;
    size_t len = 0;
    enum dp_status st = dp_file_read(path, &spec, &text, &len, err);
    if (st) return st;
    const char *name = dp_file_name(path);
    struct dp_graph *g = NULL;
    size_t dropped = 0;
    switch (dp_graph_detect_format((const unsigned char *)text, len < 4096 ? len : 4096)) {
    case DP_GRAPH_FORMAT_JSON:
        st = dp_graph_parse_json(text, len, name, &g, &dropped, err);
        if (!st && opts && opts->exported_batch > 0 &&
            dp_graph_set_batch(g, opts->exported_batch, "--exported-batch"))
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        break;
    case DP_GRAPH_FORMAT_PBTXT:
        st = dp_graph_parse_pbtxt_ex(text, len, name, opts, &g, &dropped, err);
        break;
    case DP_GRAPH_FORMAT_ONNX:
        st = dp_graph_parse_onnx((const unsigned char *)text, len, name, opts, &g, err);
        break;
    default:
        st = dp_error_set(err, DP_ERR_PARSE, "%s: empty file", name);
        break;
    }
    free(text);
    if (st) {
        dp_graph_free(g);
        return st;
    }
    if (n_dropped) *n_dropped = dropped;
    *out = g;
    return DP_OK;
}
