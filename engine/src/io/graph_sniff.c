/* graph_sniff.c: which format a graph file holds, from its first bytes (not its name). Called by
 * the loader (graph_load.c) before it picks a reader and by the readers that must tell two
 * formats of one wire apart (graph_pb.c: GraphDef or SavedModel); it calls no reader. */
#include "dp/graph_io.h"
#include "dp/files.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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
        if (c == '#') return DP_GRAPH_FORMAT_PBTXT;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            /* protobuf text: a field name, then ':' or a block ('{', '<'); a word alone (a
             * garbage .onnx) is no graph */
            while (i < len && (isalnum(head[i]) || head[i] == '_' || head[i] == '.')) i++;
            while (i < len && strchr(" \t\r\n\f\v", head[i])) i++;
            if (i == len && len >= DP_FILE_HEAD_BYTES) return DP_GRAPH_FORMAT_PBTXT;
            if (i < len && (head[i] == ':' || head[i] == '{' || head[i] == '<'))
                return DP_GRAPH_FORMAT_PBTXT;
            return DP_GRAPH_FORMAT_UNKNOWN;
        }
        return DP_GRAPH_FORMAT_UNKNOWN;
    }
    return binary_format(head + i, len - i);
}
