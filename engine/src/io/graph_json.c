/* graph_json.c: the driple-graph/1 reader and writer. Nodes are added first and inputs second,
 * so inputs may name later nodes; an input naming no node is counted and dropped (an input from
 * a CPU-side op that was not exported is normal). Every error names the JSON path. */
#include "dp/graph_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"

#define GRAPH_MAX_BATCH (INT64_C(1) << 40)

/* Reads node.shape into dims: -1 batch, null or -2 unknown; checks the element count cannot
 * overflow int64 (the batch dimension counted at `batch`, or 1 when unknown). */
static enum dp_status read_shape(const cJSON *node, const char *name, const char *path,
                                 int64_t batch, int *n_dims, int64_t *dims, struct dp_error *err) {
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(node, "shape");
    *n_dims = -1;
    if (!shape || cJSON_IsNull(shape)) return DP_OK;
    if (!cJSON_IsArray(shape))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.shape: expected an array of dimensions",
                            name, path);
    int n = cJSON_GetArraySize(shape);
    if (n > DP_MAX_DIMS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.shape: %d dimensions (at most %d)", name,
                            path, n, DP_MAX_DIMS);
    int d = 0;
    int64_t count = 1;
    const cJSON *v;
    cJSON_ArrayForEach(v, shape) {
        int64_t x;
        if (cJSON_IsNull(v)) {
            x = DP_DIM_UNKNOWN;
        } else if (cJSON_IsNumber(v) && v->valuedouble > 9007199254740992.0) {
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s.shape[%d]: dimension %g too large (at most 2^53)", name,
                                path, d, v->valuedouble);
        } else if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
                   v->valuedouble < -2) {
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s.shape[%d]: expected an integer >= 0, -1 (batch), -2 or "
                                "null (unknown)",
                                name, path, d);
        } else {
            x = (int64_t)v->valuedouble;
        }
        int64_t f = x == DP_DIM_BATCH ? (batch > 0 ? batch : 1) : x > 0 ? x : 1;
        if (count > INT64_MAX / f)
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s.shape: the dimensions' product overflows 64 bits", name,
                                path);
        count *= f;
        dims[d++] = x;
    }
    *n_dims = d;
    return DP_OK;
}

/* attrs: {key: value}; strings kept as written, anything else as its JSON text. */
static enum dp_status read_attrs(struct dp_graph *g, int idx, const cJSON *node, const char *name,
                                 const char *path, struct dp_error *err) {
    const cJSON *attrs = NULL, *a;
    enum dp_status st = dp_json_get_object(node, "attrs", true, name, path, &attrs, err);
    if (st || !attrs) return st;
    cJSON_ArrayForEach(a, attrs) {
        if (!a->string) continue;
        if (cJSON_IsString(a)) {
            st = dp_graph_set_attr(g, idx, a->string, a->valuestring);
        } else {
            char *text = cJSON_PrintUnformatted(a);
            if (!text) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
            st = dp_graph_set_attr(g, idx, a->string, text);
            free(text);
        }
        if (st) return dp_error_set(err, st, "%s: out of memory", name);
    }
    return DP_OK;
}

static enum dp_status add_node(struct dp_graph *g, const cJSON *node, int i, const char *name,
                               int64_t batch, struct dp_error *err) {
    char path[48];
    snprintf(path, sizeof path, "$.nodes[%d]", i);
    if (!cJSON_IsObject(node))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", name, path);
    const char *nname = NULL, *op = NULL, *device = "", *dtype_s = NULL;
    enum dp_status st;
    if ((st = dp_json_get_string(node, "name", false, name, path, &nname, err)) ||
        (st = dp_json_get_string(node, "op", false, name, path, &op, err)) ||
        (st = dp_json_get_string(node, "device", true, name, path, &device, err)) ||
        (st = dp_json_get_string(node, "dtype", true, name, path, &dtype_s, err)))
        return st;
    if (!*nname) return dp_error_set(err, DP_ERR_INVALID, "%s:%s.name: empty", name, path);
    if (!*op) return dp_error_set(err, DP_ERR_INVALID, "%s:%s.op: empty", name, path);
    enum dp_dtype dtype = DP_DTYPE_UNKNOWN;
    if (dtype_s && !dp_dtype_parse(dtype_s, &dtype))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.dtype: unknown dtype '%s'", name, path,
                            dtype_s);
    int n_dims;
    int64_t dims[DP_MAX_DIMS];
    if ((st = read_shape(node, name, path, batch, &n_dims, dims, err))) return st;
    double flops = -1, bytes = -1;
    int64_t params = 0;
    if ((st = dp_json_get_number(node, "flops", true, name, path, &flops, err)) ||
        (st = dp_json_get_number(node, "bytes", true, name, path, &bytes, err)) ||
        (st = dp_json_get_int(node, "params", true, 0, INT64_C(1) << 53, name, path, &params, err)))
        return st;
    if (cJSON_GetObjectItemCaseSensitive(node, "flops") && flops < 0 && flops != -1)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.flops: negative", name, path);
    if (cJSON_GetObjectItemCaseSensitive(node, "bytes") && bytes < 0 && bytes != -1)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.bytes: negative", name, path);
    const cJSON *inputs;
    if ((st = dp_json_get_array(node, "inputs", true, name, path, &inputs, err))) return st;
    int k = 0;
    const cJSON *in;
    cJSON_ArrayForEach(in, inputs) {
        if (!cJSON_IsString(in) || !in->valuestring[0] ||
            (in->valuestring[0] == '^' && !in->valuestring[1]))
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.inputs[%d]: expected a node name",
                                name, path, k);
        k++;
    }
    int idx;
    if (dp_graph_find(g, nname) >= 0)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.name: duplicate node name '%s'", name,
                            path, nname);
    if ((st = dp_graph_add_node(g, nname, op, device, n_dims, dims, dtype, &idx, err))) {
        dp_error_prefix(err, name);
        return st;
    }
    dp_graph_set_cost(g, idx, flops, bytes, params);
    return read_attrs(g, idx, node, name, path, err);
}

static enum dp_status from_json(const cJSON *root, const char *name, struct dp_graph **out,
                                size_t *n_dropped, struct dp_error *err) {
    enum dp_status st = dp_json_check_format(root, "driple-graph/1", name, err);
    if (st) return st;
    const char *gname = "", *framework = "", *bsource = NULL;
    int64_t batch = 0;
    const cJSON *nodes;
    if ((st = dp_json_get_string(root, "name", true, name, "$", &gname, err)) ||
        (st = dp_json_get_string(root, "framework", true, name, "$", &framework, err)) ||
        (st = dp_json_get_string(root, "batch_source", true, name, "$", &bsource, err)) ||
        (st = dp_json_get_int(root, "batch", true, 0, GRAPH_MAX_BATCH, name, "$", &batch, err)) ||
        (st = dp_json_get_array(root, "nodes", false, name, "$", &nodes, err)))
        return st;
    if (cJSON_GetArraySize(nodes) == 0)
        return dp_error_set(err, DP_ERR_INVALID, "%s:$.nodes: empty graph (no nodes)", name);
    struct dp_graph *g = dp_graph_init(gname);
    if (!g) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    if (dp_graph_set_framework(g, framework) ||
        dp_graph_set_batch(g, batch, bsource ? bsource : batch > 0 ? "graph file" : "")) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    int i = 0;
    const cJSON *node;
    cJSON_ArrayForEach(node, nodes) {
        if ((st = add_node(g, node, i, name, batch, err))) goto fail;
        i++;
    }
    size_t dropped = 0;
    i = 0;
    cJSON_ArrayForEach(node, nodes) {
        const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(node, "inputs"), *in;
        cJSON_ArrayForEach(in, inputs) {
            bool control;
            int src = dp_graph_resolve_input(g, in->valuestring, &control);
            if (src < 0) {
                dropped++;
                continue;
            }
            if ((st = dp_graph_add_input(g, i, src, control, err))) goto fail;
        }
        i++;
    }
    if (n_dropped) *n_dropped = dropped;
    *out = g;
    return DP_OK;
fail:
    dp_graph_free(g);
    return st;
}

enum dp_status dp_graph_parse_json(const char *text, size_t len, const char *name,
                                   struct dp_graph **out, size_t *n_dropped, struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_parse(text, len, name, &root, err);
    if (st) return st;
    st = from_json(root, name, out, n_dropped, err);
    cJSON_Delete(root);
    return st;
}

enum dp_status dp_graph_load_json(const char *path, struct dp_graph **out, size_t *n_dropped,
                                  struct dp_error *err) {
    char *text = NULL;
    size_t len = 0;
    static const struct dp_read_spec spec = {"driple-graph JSON", DP_IMPORT_MAX_TEXT, true, NULL,
                                             NULL};
    enum dp_status st = dp_file_read(path, &spec, &text, &len, err);
    if (st) return st;
    st = dp_graph_parse_json(text, len, dp_file_name(path), out, n_dropped, err);
    free(text);
    return st;
}

/* --- writer --------------------------------------------------------------------------------- */

static bool add_str(cJSON *o, const char *k, const char *v) {
    return cJSON_AddStringToObject(o, k, v ? v : "") != NULL;
}

static cJSON *node_to_json(const struct dp_graph *g, const struct dp_node *n) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (!add_str(o, "name", n->name) || !add_str(o, "op", n->op) || !add_str(o, "device", n->device))
        goto fail;
    cJSON *inputs = cJSON_AddArrayToObject(o, "inputs");
    if (!inputs) goto fail;
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? n->n_ctrl : n->n_inputs;
        const int *arr = pass ? n->ctrl : n->inputs;
        for (int k = 0; k < cnt; k++) {
            const char *src = dp_graph_node(g, (size_t)arr[k])->name;
            cJSON *s;
            if (pass) {
                size_t len = strlen(src);
                char *t = malloc(len + 2);
                if (!t) goto fail;
                t[0] = '^';
                memcpy(t + 1, src, len + 1);
                s = cJSON_CreateString(t);
                free(t);
            } else {
                s = cJSON_CreateString(src);
            }
            if (!s || !cJSON_AddItemToArray(inputs, s)) { cJSON_Delete(s); goto fail; }
        }
    }
    if (n->n_dims >= 0) {
        cJSON *shape = cJSON_AddArrayToObject(o, "shape");
        if (!shape) goto fail;
        for (int d = 0; d < n->n_dims; d++) {
            cJSON *v = n->dims[d] == DP_DIM_UNKNOWN ? cJSON_CreateNull()
                                                     : cJSON_CreateNumber((double)n->dims[d]);
            if (!v || !cJSON_AddItemToArray(shape, v)) { cJSON_Delete(v); goto fail; }
        }
    } else if (!cJSON_AddNullToObject(o, "shape")) {
        goto fail;
    }
    if (!add_str(o, "dtype", dp_dtype_name(n->dtype))) goto fail;
    if (n->flops >= 0) {
        cJSON *v = dp_json_number(n->flops);
        if (!v || !cJSON_AddItemToObject(o, "flops", v)) { cJSON_Delete(v); goto fail; }
    }
    if (n->bytes >= 0) {
        cJSON *v = dp_json_number(n->bytes);
        if (!v || !cJSON_AddItemToObject(o, "bytes", v)) { cJSON_Delete(v); goto fail; }
    }
    if (n->params > 0 && !cJSON_AddNumberToObject(o, "params", (double)n->params)) goto fail;
    if (n->n_attrs > 0) {
        cJSON *attrs = cJSON_AddObjectToObject(o, "attrs");
        if (!attrs) goto fail;
        for (int a = 0; a < n->n_attrs; a++)
            if (!add_str(attrs, n->attrs[a].key, n->attrs[a].value)) goto fail;
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

enum dp_status dp_graph_save_json(const struct dp_graph *g, const char *path, struct dp_error *err) {
    cJSON *root = cJSON_CreateObject(), *nodes;
    if (!root || !add_str(root, "format", "driple-graph/1") ||
        !add_str(root, "name", dp_graph_name(g)) ||
        !add_str(root, "framework", dp_graph_framework(g)))
        goto fail;
    if (dp_graph_batch(g) > 0 ? !cJSON_AddNumberToObject(root, "batch", (double)dp_graph_batch(g))
                              : !cJSON_AddNullToObject(root, "batch"))
        goto fail;
    if (!add_str(root, "batch_source", dp_graph_batch_source(g))) goto fail;
    if (!(nodes = cJSON_AddArrayToObject(root, "nodes"))) goto fail;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        cJSON *o = node_to_json(g, dp_graph_node(g, i));
        if (!o || !cJSON_AddItemToArray(nodes, o)) { cJSON_Delete(o); goto fail; }
    }
    enum dp_status st = dp_json_save(root, path, false, err);
    cJSON_Delete(root);
    return st;
fail:
    cJSON_Delete(root);
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory writing the graph", path);
}
