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

/* The top-level fields of a binary protobuf, as far as the bytes given go: ONNX's ModelProto has
 * its graph in field 7 (after small fields: ir_version, producer...), a GraphDef opens with a
 * NodeDef (field 1, a message) or versions (4), a SavedModel with its schema version (field 1, a
 * varint) then meta graphs (2, a message). */
static enum dp_graph_format binary_format(const unsigned char *p, size_t len) {
    size_t i = 0;
    int first = -1, first_wire = -1, second = -1;
    while (i < len) {
        uint64_t key = 0;
        int shift = 0;
        while (i < len && shift < 64) {
            key |= (uint64_t)(p[i] & 0x7f) << shift;
            shift += 7;
            if (!(p[i++] & 0x80)) break;
        }
        uint64_t field = key >> 3;
        int wire = (int)(key & 7);
        if (field == 0 || field > 536870911u) break;
        if (first < 0) {
            first = (int)field;
            first_wire = wire;
        } else if (second < 0) {
            second = (int)field;
        }
        if (field == 7 && wire == 2) return DP_GRAPH_FORMAT_ONNX; /* no TF message has it */
        uint64_t n = 0;
        shift = 0;
        if (wire == 0 || wire == 2) { /* a varint value or a length */
            while (i < len && shift < 64) {
                n |= (uint64_t)(p[i] & 0x7f) << shift;
                shift += 7;
                if (!(p[i++] & 0x80)) break;
            }
        }
        if (wire == 2) {
            if (n > len - i) break; /* runs past what was read: decide from what was seen */
            i += (size_t)n;
        } else if (wire == 1 || wire == 5) {
            i += wire == 1 ? 8 : 4;
        } else if (wire != 0) {
            return DP_GRAPH_FORMAT_UNKNOWN;
        }
    }
    if (first == 1 && first_wire == 2) return DP_GRAPH_FORMAT_GRAPHDEF;
    if (first == 4 && first_wire == 2) return DP_GRAPH_FORMAT_GRAPHDEF;
    if (first == 1 && first_wire == 0 && second == 2) {
        /* a SavedModel's meta graph, or ONNX's producer_name before a graph not seen yet: a
         * MetaGraphDef opens with a message (0x0a or 0x12), a producer name with a letter */
        size_t at = 0;
        while (at < len && (p[at] & 0x80)) at++; /* the key */
        for (at++; at < len && (p[at] & 0x80); at++) {} /* the version */
        at++;
        if (at < len && p[at] == 0x12) {
            for (at++; at < len && (p[at] & 0x80); at++) {} /* the length */
            at++;
            if (at < len && (p[at] == 0x0a || p[at] == 0x12)) return DP_GRAPH_FORMAT_SAVED_MODEL;
        }
        return DP_GRAPH_FORMAT_ONNX;
    }
    /* ModelProto fields 1..20 otherwise (ir_version is a varint, tag 0x08; the rest
     * length-delimited). */
    unsigned char tag = len ? p[0] : 0;
    if (tag == 0x08 || ((tag & 7) == 2 && (tag >> 3) >= 2 && (tag >> 3) <= 20))
        return DP_GRAPH_FORMAT_ONNX;
    return DP_GRAPH_FORMAT_UNKNOWN;
}

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
    return binary_format(head + i, len - i);
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
           "or binary, a SavedModel or ONNX)";
}

/* The largest graph file of any format (ONNX's, protobuf's own limit, holds the weights). */
#define GRAPH_FILE_MAX_BYTES ((size_t)1 << 31)

enum dp_status dp_graph_load_ex(const char *path, const struct dp_import_opts *opts,
                                struct dp_graph **out, size_t *n_dropped, struct dp_error *err) {
    static const struct dp_read_spec spec = {"graph", GRAPH_FILE_MAX_BYTES, false, graph_head};
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
    if (n_dropped) *n_dropped = dropped;
    *out = g;
    return DP_OK;
}
