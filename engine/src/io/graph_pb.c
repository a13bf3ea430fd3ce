/* graph_pb.c: binary TensorFlow graphs through the protobuf wire decoder shared with the ONNX
 * reader: a GraphDef (.pb, tf.io.write_graph(..., as_text=False)) or a SavedModel
 * (saved_model.pb: its first MetaGraphDef's graph_def). Each NodeDef is checked and decoded like
 * the text reader's (attribute values rendered as TF's text format writes them) and handed to
 * the shared GraphDef import (tf_graphdef.c), so a .pb and its .pbtxt give the same graph.
 * Field numbers from tensorflow/core/framework/{graph,node_def,attr_value,tensor_shape}.proto
 * and protobuf/{saved_model,meta_graph}.proto. Errors name "<file>:byte N". */
#include "dp/graph_io.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_map.h"
#include "pbwire.h"
#include "tf_graphdef.h"

#define PB_MAX_BYTES ((size_t)1 << 31)
#define MAX_LIST     4096 /* items of one list attribute rendered; the rest counted */

/* TensorFlow's DataType names (types.proto); the _REF types are these + 100. */
static const char *dt_name(int64_t t) {
    static const char *const names[] = {
        "DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8",
        "DT_STRING", "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8",
        "DT_QINT32", "DT_BFLOAT16", "DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128",
        "DT_HALF", "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64"};
    int64_t base = t >= 100 ? t - 100 : t;
    return base >= 0 && base < (int64_t)(sizeof names / sizeof names[0]) ? names[base] : NULL;
}

static void text_type(struct tf_text *b, int64_t t) {
    const char *nm = dt_name(t);
    char buf[32];
    if (!nm) {
        snprintf(buf, sizeof buf, "%lld", (long long)t);
        nm = buf;
    }
    tf_text_str(b, nm);
    if (t >= 100 && dt_name(t)) tf_text_str(b, "_REF");
}

/* A float as TF's text writer prints it: the shortest of 6 or 9 significant digits that reads
 * back as the same float. */
static void text_float(struct tf_text *b, float f) {
    char buf[48];
    if (isnan(f)) {
        tf_text_str(b, "nan");
        return;
    }
    if (isinf(f)) {
        tf_text_str(b, f < 0 ? "-inf" : "inf");
        return;
    }
    snprintf(buf, sizeof buf, "%.*g", FLT_DIG, (double)f);
    if (strtof(buf, NULL) != f) snprintf(buf, sizeof buf, "%.*g", FLT_DIG + 3, (double)f);
    tf_text_str(b, buf);
}

/* TensorShapeProto: dim (size, name), unknown_rank; n -1 for an unknown rank. */
static bool read_shape(struct pb_rd *r, int *n, int64_t *dims) {
    uint32_t f;
    int w;
    *n = 0;
    while (r->p < r->end) {
        const unsigned char *at = r->p;
        if (!pb_key(r, &f, &w)) return false;
        if (f == 3 && w == PB_VARINT) {
            int64_t unknown;
            if (!pb_int(r, w, &unknown)) return false;
            if (unknown) *n = -1;
            continue;
        }
        if (f != 2 || w != PB_LEN) {
            if (!pb_skip(r, w)) return false;
            continue;
        }
        struct pb_rd dim;
        if (!pb_len(r, &dim)) return false;
        int64_t size = 0;
        while (dim.p < dim.end) {
            if (!pb_key(&dim, &f, &w)) return false;
            if (f == 1) {
                if (!pb_int(&dim, w, &size)) return false;
            } else if (!pb_skip(&dim, w)) {
                return false;
            }
        }
        if (*n < 0) continue;
        if (*n >= DP_MAX_DIMS)
            return pb_fail(r->d, at, DP_ERR_INVALID, "shape with more than %d dimensions",
                           DP_MAX_DIMS);
        if (size < -1)
            return pb_fail(r->d, at, DP_ERR_INVALID, "dim size: expected an integer >= -1");
        dims[(*n)++] = size;
    }
    return true;
}

static bool text_shape(struct pb_rd *r, struct tf_text *b) {
    int n;
    int64_t dims[DP_MAX_DIMS];
    if (!read_shape(r, &n, dims)) return false;
    tf_text_shape(b, n, dims);
    return true;
}

/* TensorProto as "tensor(DT_FLOAT, [3])" (dtype 1, tensor_shape 2). */
static bool text_tensor(struct pb_rd *r, struct tf_text *b) {
    uint32_t f;
    int w;
    int64_t dt = -1;
    struct pb_rd shape = {NULL, NULL, r->d};
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1 && w == PB_VARINT) {
            if (!pb_int(r, w, &dt)) return false;
        } else if (f == 2 && w == PB_LEN) {
            if (!pb_len(r, &shape)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    tf_text_str(b, "tensor(");
    if (dt >= 0) text_type(b, dt);
    else tf_text_str(b, "?");
    if (shape.p) {
        tf_text_str(b, ", ");
        if (!text_shape(&shape, b)) return false;
    }
    tf_text_str(b, ")");
    return true;
}

/* NameAttrList: its name (field 1). */
static bool text_func(struct pb_rd *r, struct tf_text *b) {
    uint32_t f;
    int w;
    const char *name = NULL;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1) {
            if (!pb_string(r, w, &name)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    tf_text_str(b, name ? name : "func");
    return true;
}

/* One scalar of AttrValue (or of a ListValue: the same field numbers but for s) into b. */
static bool text_scalar(struct pb_rd *r, uint32_t f, int w, struct tf_text *b, int64_t *type) {
    int64_t v;
    struct pb_rd sub;
    if (f == 2 || f == 9) { /* s (and placeholder) */
        const unsigned char *s;
        size_t n;
        if (!pb_bytes(r, w, &s, &n)) return false;
        tf_text_bytes(b, (const char *)s, n);
    } else if (f == 3 || f == 5 || f == 6) {
        if (!pb_int(r, w, &v)) return false;
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)v);
        if (f == 3) tf_text_str(b, num);
        else if (f == 5) tf_text_str(b, v ? "true" : "false");
        else {
            text_type(b, v);
            if (type && *type < 0) *type = v;
        }
    } else if (f == 4) {
        float x;
        if (!pb_float(r, w, &x)) return false;
        text_float(b, x);
    } else if (w == PB_LEN && (f == 7 || f == 8 || f == 10)) {
        if (!pb_len(r, &sub)) return false;
        if (f == 7) return text_shape(&sub, b);
        if (f == 8) return text_tensor(&sub, b);
        return text_func(&sub, b);
    } else {
        return pb_skip(r, w);
    }
    return true;
}

/* ListValue: s 2, i 3, f 4, b 5, type 6 (packed or not), shape 7, tensor 8, func 9. */
static bool text_list(struct pb_rd *r, struct tf_text *b, int64_t *type) {
    uint32_t f;
    int w, k = 0;
    tf_text_str(b, "[");
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        uint32_t as = f == 9 ? 10 : f; /* func is 9 in a list, 10 in a value */
        if (w == PB_LEN && (f == 3 || f == 4 || f == 5 || f == 6)) { /* packed */
            struct pb_rd sub;
            if (!pb_len(r, &sub)) return false;
            while (sub.p < sub.end) {
                if (k++ < MAX_LIST && k > 1) tf_text_str(b, ", ");
                if (k <= MAX_LIST) {
                    if (!text_scalar(&sub, f, f == 4 ? PB_I32 : PB_VARINT, b, type)) return false;
                } else if (!pb_skip(&sub, f == 4 ? PB_I32 : PB_VARINT)) {
                    return false;
                }
            }
            continue;
        }
        if (k++ < MAX_LIST && k > 1) tf_text_str(b, ", ");
        if (k <= MAX_LIST) {
            if (!text_scalar(r, as, w, b, type)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    tf_text_str(b, "]");
    return true;
}

/* An AttrValue as text (*type: its type or its list's first type, -1 if none; *shape: the
 * first shape of its list or its shape, for _output_shapes and shape). */
static bool text_value(struct pb_rd *r, struct tf_text *b, int64_t *type, struct pb_rd *shape) {
    uint32_t f;
    int w;
    *type = -1;
    shape->p = NULL;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1 && w == PB_LEN) {
            struct pb_rd sub, scan;
            if (!pb_len(r, &sub)) return false;
            scan = sub;
            while (scan.p < scan.end && !shape->p) { /* the list's first shape */
                uint32_t g;
                int gw;
                if (!pb_key(&scan, &g, &gw)) return false;
                if (g == 7 && gw == PB_LEN) {
                    if (!pb_len(&scan, shape)) return false;
                } else if (!pb_skip(&scan, gw)) {
                    return false;
                }
            }
            if (!text_list(&sub, b, type)) return false;
        } else if (f == 7 && w == PB_LEN) {
            struct pb_rd sub;
            if (!pb_len(r, &sub)) return false;
            *shape = sub;
            if (!text_shape(&sub, b)) return false;
        } else if (!text_scalar(r, f, w, b, f == 6 ? type : NULL)) {
            return false;
        }
    }
    return true;
}

struct node_buf {
    const char   **inputs;
    int            n_inputs, cap_inputs;
    struct tf_attr *attrs;
    int             n_attrs, cap_attrs;
};

static bool singular(struct pb_rd *r, const unsigned char *at, int w, const char **slot,
                     const char *what) {
    if (*slot) return pb_fail(r->d, at, DP_ERR_INVALID, "%s: given twice in one node", what);
    return pb_string(r, w, slot);
}

/* NodeDef: name 1, op 2, input 3, device 4, attr 5 (map entries: key 1, value 2). */
static bool read_node(struct pb_rd *r, struct tf_import *im, struct node_buf *nb) {
    const unsigned char *start = r->p;
    uint32_t f;
    int w;
    struct tf_node n = {0};
    int64_t dtype_rank = 99, shape_attr_dims[DP_MAX_DIMS];
    static const char *const dtype_keys[] = {"T", "dtype", "DstT", "out_type", "output_types",
                                             "Tout"};
    struct pb_rd out_shape = {NULL, NULL, r->d}, var_shape = {NULL, NULL, r->d};
    const unsigned char *out_at = start;
    nb->n_inputs = nb->n_attrs = 0;
    n.n_dims = -1;
    n.dtype = DP_DTYPE_UNKNOWN;
    while (r->p < r->end) {
        const unsigned char *at = r->p;
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1 || f == 2 || f == 4) {
            const char **slot = f == 1 ? &n.name : f == 2 ? &n.op : &n.device;
            if (!singular(r, at, w, slot, f == 1 ? "name" : f == 2 ? "op" : "device"))
                return false;
        } else if (f == 3) {
            const char **in = pb_push(&r->d->ar, (void **)&nb->inputs, &nb->n_inputs,
                                      &nb->cap_inputs, sizeof *nb->inputs);
            if (!in) return pb_oom(r->d);
            if (!pb_string(r, w, in)) return false;
            if (!**in) return pb_fail(r->d, at, DP_ERR_INVALID, "input: expected a node name");
        } else if (f == 5 && w == PB_LEN) {
            struct pb_rd entry, value = {NULL, NULL, r->d};
            const char *key = NULL;
            if (!pb_len(r, &entry)) return false;
            while (entry.p < entry.end) {
                if (!pb_key(&entry, &f, &w)) return false;
                if (f == 1) {
                    if (!pb_string(&entry, w, &key)) return false;
                } else if (f == 2 && w == PB_LEN) {
                    if (!pb_len(&entry, &value)) return false;
                } else if (!pb_skip(&entry, w)) {
                    return false;
                }
            }
            if (!key) continue;
            struct tf_text text = {0};
            struct pb_rd shape = {NULL, NULL, r->d};
            int64_t type = -1;
            const unsigned char *vat = value.p;
            bool ok = !value.p || text_value(&value, &text, &type, &shape);
            if (!ok || text.oom) {
                free(text.s);
                return ok ? pb_oom(r->d) : false;
            }
            for (size_t k = 0; type >= 0 && k < sizeof dtype_keys / sizeof dtype_keys[0]; k++)
                if (!strcmp(key, dtype_keys[k]) && (int64_t)k < dtype_rank) {
                    dtype_rank = (int64_t)k;
                    const char *nm = dt_name(type);
                    if (!nm || !dp_dtype_parse(nm, &n.dtype)) n.dtype = DP_DTYPE_UNKNOWN;
                }
            if (!strcmp(key, "_output_shapes")) {
                if (shape.p) {
                    out_shape = shape;
                    out_at = vat;
                }
                free(text.s);
                continue;
            }
            if (!strcmp(key, "shape") && shape.p) var_shape = shape;
            struct tf_attr *a = pb_push(&r->d->ar, (void **)&nb->attrs, &nb->n_attrs,
                                        &nb->cap_attrs, sizeof *nb->attrs);
            char *kept = text.s ? pb_alloc(&r->d->ar, text.n + 1) : NULL;
            if (!a || (text.s && !kept)) {
                free(text.s);
                return pb_oom(r->d);
            }
            if (kept) memcpy(kept, text.s, text.n + 1);
            free(text.s);
            a->key = key;
            a->text = kept ? kept : "";
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    if (!n.name) return pb_fail(r->d, start, DP_ERR_INVALID, "node without a 'name'");
    if (!n.op) return pb_fail(r->d, start, DP_ERR_INVALID, "node '%.200s' without an 'op'", n.name);
    if (!*n.name) return pb_fail(r->d, start, DP_ERR_INVALID, "node with an empty name");
    if (dp_graph_find(im->g, n.name) >= 0)
        return pb_fail(r->d, start, DP_ERR_INVALID, "duplicate node name '%.200s'", n.name);
    if (!n.device) n.device = "";
    if (!out_shape.p) out_shape = var_shape;
    if (out_shape.p) {
        struct pb_rd s = out_shape;
        if (!read_shape(&s, &n.n_dims, n.dims)) return false;
    }
    if (tf_dims_overflow(n.n_dims, n.dims))
        return pb_fail(r->d, out_at, DP_ERR_INVALID, "node '%.200s': the dimensions' product "
                       "overflows 64 bits", n.name);
    if (var_shape.p) {
        struct pb_rd s = var_shape;
        n.has_var_shape = read_shape(&s, &n.var_n_dims, shape_attr_dims);
        memcpy(n.var_dims, shape_attr_dims, sizeof n.var_dims);
        if (!n.has_var_shape) return false;
    }
    n.inputs = nb->inputs;
    n.n_inputs = nb->n_inputs;
    n.attrs = nb->attrs;
    n.n_attrs = nb->n_attrs;
    enum dp_status st = tf_import_node(im, &n, r->d->err);
    if (st) r->d->st = st;
    return !st;
}

/* GraphDef: node 1 (versions, library: skipped). */
static bool read_graph(struct pb_rd *r, struct tf_import *im, struct node_buf *nb) {
    uint32_t f;
    int w;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        if (f == 1 && w == PB_LEN) {
            struct pb_rd sub;
            if (!pb_len(r, &sub) || !read_node(&sub, im, nb)) return false;
        } else if (!pb_skip(r, w)) {
            return false;
        }
    }
    return true;
}

/* SavedModel: meta_graphs 2 -> MetaGraphDef: graph_def 2. The first meta graph is read. */
static bool read_saved_model(struct pb_rd *r, struct tf_import *im, struct node_buf *nb) {
    uint32_t f;
    int w;
    while (r->p < r->end) {
        if (!pb_key(r, &f, &w)) return false;
        struct pb_rd meta;
        if (f != 2 || w != PB_LEN) {
            if (!pb_skip(r, w)) return false;
            continue;
        }
        if (!pb_len(r, &meta)) return false;
        while (meta.p < meta.end) {
            if (!pb_key(&meta, &f, &w)) return false;
            struct pb_rd g;
            if (f == 2 && w == PB_LEN) {
                if (!pb_len(&meta, &g) || !read_graph(&g, im, nb)) return false;
            } else if (!pb_skip(&meta, w)) {
                return false;
            }
        }
        return true;
    }
    return true;
}

enum dp_status dp_graph_parse_graphdef(const unsigned char *data, size_t len, const char *name,
                                       const struct dp_import_opts *opts, struct dp_graph **out,
                                       size_t *n_dropped, struct dp_error *err) {
    struct pb_doc d = {.base = data, .len = len, .name = name ? name : "graphdef", .err = err};
    struct tf_import im;
    struct node_buf nb = {0};
    if (!data || len == 0) return dp_error_set(err, DP_ERR_PARSE, "%s: empty file", d.name);
    if ((d.st = tf_import_begin(&im, d.name, err))) return d.st;
    struct pb_rd r = pb_reader(&d);
    bool saved = dp_graph_detect_format(data, len) == DP_GRAPH_FORMAT_SAVED_MODEL;
    /* .../resnet/saved_model.pb: the graph is named after its directory */
    const char *base = strrchr(d.name, '/');
    if (saved && base && !strcmp(base + 1, "saved_model.pb")) {
        const char *dir = base;
        while (dir > d.name && dir[-1] != '/') dir--;
        char gname[256];
        snprintf(gname, sizeof gname, "%.*s", (int)(base - dir), dir);
        if (*gname && dp_graph_set_name(im.g, gname)) {
            d.st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", d.name);
            goto done;
        }
    }
    if (!(saved ? read_saved_model(&r, &im, &nb) : read_graph(&r, &im, &nb))) goto done;
    if (dp_graph_n_nodes(im.g) == 0) {
        d.st = dp_error_set(err, DP_ERR_INVALID, "%s: empty graph (no NodeDef%s)", d.name,
                            saved ? " in the SavedModel's first meta graph" : "");
        goto done;
    }
    d.st = tf_import_end(&im, opts, out, n_dropped, err);
done:
    tf_import_free(&im);
    pb_arena_free(&d.ar);
    return d.st;
}

enum dp_status dp_graph_import_graphdef(const char *path, const struct dp_import_opts *opts,
                                        struct dp_graph **out, size_t *n_dropped,
                                        struct dp_error *err) {
    static const struct dp_read_spec spec = {"TensorFlow GraphDef", PB_MAX_BYTES, false, NULL,
                                             NULL};
    struct file_bytes f;
    enum dp_status st = file_bytes_open(path, &spec, &f, err);
    if (st) return st;
    st = dp_graph_parse_graphdef(f.data, f.len, dp_file_name(path), opts, out, n_dropped, err);
    file_bytes_close(&f);
    return st;
}
