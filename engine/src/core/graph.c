/* graph.c: the op-graph model: node storage, the name index (open addressing), the builder
 * calls and dtype names. Importers and writers live in graph_*.c. */
#include "dp/graph.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"

struct dp_graph {
    char           *name;
    char           *framework;
    char           *batch_source;
    int64_t         batch;
    struct dp_node *nodes;
    size_t          n_nodes, cap_nodes;
    int            *index;   /* open-addressing table of node indices, -1 = empty */
    size_t          n_index; /* power of two, kept at least 2 x n_nodes */
};

static const char *const dtype_names[] = {
    "unknown", "float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
    "uint8", "bool", "string", "resource",
};
_Static_assert(sizeof dtype_names / sizeof dtype_names[0] == DP_DTYPE_COUNT, "update dtype_names");

static const int dtype_sizes[] = {0, 4, 2, 2, 8, 1, 2, 4, 8, 1, 1, 0, 0};
_Static_assert(sizeof dtype_sizes / sizeof dtype_sizes[0] == DP_DTYPE_COUNT, "update dtype_sizes");

/* Other spellings: TensorFlow's enum names and numpy-ish short names. */
static const struct { const char *name; enum dp_dtype t; } dtype_aliases[] = {
    {"DT_FLOAT", DP_DTYPE_F32},   {"float", DP_DTYPE_F32},      {"f32", DP_DTYPE_F32},
    {"DT_HALF", DP_DTYPE_F16},    {"half", DP_DTYPE_F16},       {"f16", DP_DTYPE_F16},
    {"DT_BFLOAT16", DP_DTYPE_BF16}, {"bf16", DP_DTYPE_BF16},   {"DT_DOUBLE", DP_DTYPE_F64},
    {"double", DP_DTYPE_F64},     {"DT_INT8", DP_DTYPE_I8},     {"DT_INT16", DP_DTYPE_I16},
    {"DT_INT32", DP_DTYPE_I32},   {"int", DP_DTYPE_I32},        {"DT_INT64", DP_DTYPE_I64},
    {"long", DP_DTYPE_I64},       {"DT_UINT8", DP_DTYPE_U8},    {"DT_BOOL", DP_DTYPE_BOOL},
    {"DT_STRING", DP_DTYPE_STRING}, {"DT_RESOURCE", DP_DTYPE_RESOURCE},
    {"DT_FLOAT_REF", DP_DTYPE_F32}, {"DT_HALF_REF", DP_DTYPE_F16}, {"DT_INT32_REF", DP_DTYPE_I32},
    {"DT_INT64_REF", DP_DTYPE_I64},
};

const char *dp_dtype_name(enum dp_dtype t) {
    return (unsigned)t < DP_DTYPE_COUNT ? dtype_names[t] : "unknown";
}

bool dp_dtype_parse(const char *s, enum dp_dtype *out) {
    if (!s) return false;
    for (int i = 0; i < DP_DTYPE_COUNT; i++)
        if (!strcmp(s, dtype_names[i])) { *out = (enum dp_dtype)i; return true; }
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++)
        if (!strcmp(s, dtype_aliases[i].name)) { *out = dtype_aliases[i].t; return true; }
    return false;
}

bool dp_dtype_is_float(enum dp_dtype t) {
    return t == DP_DTYPE_F32 || t == DP_DTYPE_F16 || t == DP_DTYPE_BF16 || t == DP_DTYPE_F64;
}

int dp_dtype_size(enum dp_dtype t) { return (unsigned)t < DP_DTYPE_COUNT ? dtype_sizes[t] : 0; }

static char *dup_str(const char *s) {
    size_t n = strlen(s ? s : "") + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s ? s : "", n);
    return d;
}

static bool index_rebuild(struct dp_graph *g, size_t n_index) {
    int *idx = malloc(n_index * sizeof *idx);
    if (!idx) return false;
    for (size_t i = 0; i < n_index; i++) idx[i] = -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        size_t h = dp_hash_str(g->nodes[i].name) & (n_index - 1);
        while (idx[h] >= 0) h = (h + 1) & (n_index - 1);
        idx[h] = (int)i;
    }
    free(g->index);
    g->index = idx;
    g->n_index = n_index;
    return true;
}

struct dp_graph *dp_graph_init(const char *name) {
    struct dp_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = dup_str(name);
    g->framework = dup_str("");
    g->batch_source = dup_str("");
    if (!g->name || !g->framework || !g->batch_source || !index_rebuild(g, 64)) {
        dp_graph_free(g);
        return NULL;
    }
    return g;
}

static void node_free(struct dp_node *n) {
    free(n->name);
    free(n->op);
    free(n->device);
    free(n->inputs);
    free(n->ctrl);
    for (int i = 0; i < n->n_attrs; i++) {
        free(n->attrs[i].key);
        free(n->attrs[i].value);
    }
    free(n->attrs);
}

void dp_graph_free(struct dp_graph *g) {
    if (!g) return;
    for (size_t i = 0; i < g->n_nodes; i++) node_free(&g->nodes[i]);
    free(g->nodes);
    free(g->index);
    free(g->name);
    free(g->framework);
    free(g->batch_source);
    free(g);
}

static enum dp_status replace_str(char **slot, const char *s) {
    char *d = dup_str(s);
    if (!d) return DP_ERR_NOMEM;
    free(*slot);
    *slot = d;
    return DP_OK;
}

const char *dp_graph_name(const struct dp_graph *g) { return g->name; }
const char *dp_graph_framework(const struct dp_graph *g) { return g->framework; }
int64_t dp_graph_batch(const struct dp_graph *g) { return g->batch; }
const char *dp_graph_batch_source(const struct dp_graph *g) { return g->batch_source; }
enum dp_status dp_graph_set_name(struct dp_graph *g, const char *name) {
    return replace_str(&g->name, name);
}
enum dp_status dp_graph_set_framework(struct dp_graph *g, const char *framework) {
    return replace_str(&g->framework, framework);
}
enum dp_status dp_graph_set_batch(struct dp_graph *g, int64_t batch, const char *source) {
    g->batch = batch;
    return replace_str(&g->batch_source, source);
}

size_t dp_graph_n_nodes(const struct dp_graph *g) { return g->n_nodes; }

const struct dp_node *dp_graph_node(const struct dp_graph *g, size_t i) {
    DP_ASSERT(i < g->n_nodes);
    return &g->nodes[i];
}

int dp_graph_find(const struct dp_graph *g, const char *name) {
    size_t h = dp_hash_str(name) & (g->n_index - 1);
    for (int i; (i = g->index[h]) >= 0; h = (h + 1) & (g->n_index - 1))
        if (!strcmp(g->nodes[i].name, name)) return i;
    return -1;
}

enum dp_status dp_graph_add_node(struct dp_graph *g, const char *name, const char *op,
                                 const char *device, int n_dims, const int64_t *dims,
                                 enum dp_dtype dtype, int *out_index, struct dp_error *err) {
    if (!name || !*name) return dp_error_set(err, DP_ERR_INVALID, "node with an empty name");
    if (n_dims > DP_MAX_DIMS || n_dims < -1)
        return dp_error_set(err, DP_ERR_INVALID, "node '%s': %d dimensions (at most %d)", name,
                            n_dims, DP_MAX_DIMS);
    /* Every importer lands here: a dimension below "unknown", or known dimensions whose product
     * (the batch counted once) leaves int64, is refused whichever format it came from. */
    int64_t count = 1;
    for (int d = 0; d < n_dims; d++) {
        if (dims[d] < DP_DIM_UNKNOWN)
            return dp_error_set(err, DP_ERR_INVALID, "node '%s': dimension %lld is negative", name,
                                (long long)dims[d]);
        if (dims[d] > 0 && count > INT64_MAX / dims[d])
            return dp_error_set(err, DP_ERR_INVALID,
                                "node '%s': the dimensions' product overflows 64 bits", name);
        if (dims[d] > 0) count *= dims[d];
    }
    if (dp_graph_find(g, name) >= 0)
        return dp_error_set(err, DP_ERR_INVALID, "duplicate node name '%s'", name);
    if (g->n_nodes >= (size_t)INT32_MAX - 1)
        return dp_error_set(err, DP_ERR_INVALID, "too many nodes");
    if (g->n_nodes == g->cap_nodes) {
        size_t cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        struct dp_node *nodes = realloc(g->nodes, cap * sizeof *nodes);
        if (!nodes) return dp_error_set(err, DP_ERR_NOMEM, "out of memory adding node '%s'", name);
        g->nodes = nodes;
        g->cap_nodes = cap;
    }
    if (2 * (g->n_nodes + 1) > g->n_index && !index_rebuild(g, g->n_index * 2))
        return dp_error_set(err, DP_ERR_NOMEM, "out of memory adding node '%s'", name);

    struct dp_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = dup_str(name);
    n->op = dup_str(op);
    n->device = dup_str(device);
    if (!n->name || !n->op || !n->device) {
        node_free(n);
        return dp_error_set(err, DP_ERR_NOMEM, "out of memory adding node '%s'", name);
    }
    n->n_dims = n_dims;
    for (int d = 0; d < n_dims; d++) n->dims[d] = dims[d];
    n->dtype = dtype;
    n->flops = -1;
    n->bytes = -1;

    size_t h = dp_hash_str(name) & (g->n_index - 1);
    while (g->index[h] >= 0) h = (h + 1) & (g->n_index - 1);
    g->index[h] = (int)g->n_nodes;
    if (out_index) *out_index = (int)g->n_nodes;
    g->n_nodes++;
    return DP_OK;
}

enum dp_status dp_graph_add_input(struct dp_graph *g, int dst, int src, bool control,
                                  struct dp_error *err) {
    DP_ASSERT(dst >= 0 && (size_t)dst < g->n_nodes && src >= 0 && (size_t)src < g->n_nodes);
    struct dp_node *n = &g->nodes[dst];
    int **arr = control ? &n->ctrl : &n->inputs;
    int *cnt = control ? &n->n_ctrl : &n->n_inputs;
    /* Grow in powers of two: capacity is implied by the count. */
    if ((*cnt & (*cnt - 1)) == 0) {
        int *a = realloc(*arr, (size_t)(*cnt ? *cnt * 2 : 1) * sizeof *a);
        if (!a) return dp_error_set(err, DP_ERR_NOMEM, "out of memory adding an input");
        *arr = a;
    }
    (*arr)[(*cnt)++] = src;
    return DP_OK;
}

void dp_graph_set_cost(struct dp_graph *g, int i, double flops, double bytes, int64_t params) {
    DP_ASSERT(i >= 0 && (size_t)i < g->n_nodes);
    g->nodes[i].flops = flops;
    g->nodes[i].bytes = bytes;
    g->nodes[i].params = params;
}

enum dp_status dp_graph_set_attr(struct dp_graph *g, int i, const char *key, const char *value) {
    DP_ASSERT(i >= 0 && (size_t)i < g->n_nodes);
    struct dp_node *n = &g->nodes[i];
    for (int a = 0; a < n->n_attrs; a++)
        if (!strcmp(n->attrs[a].key, key)) return replace_str(&n->attrs[a].value, value);
    struct dp_attr *attrs = realloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *attrs);
    if (!attrs) return DP_ERR_NOMEM;
    n->attrs = attrs;
    char *k = dup_str(key), *v = dup_str(value);
    if (!k || !v) {
        free(k);
        free(v);
        return DP_ERR_NOMEM;
    }
    attrs[n->n_attrs].key = k;
    attrs[n->n_attrs].value = v;
    n->n_attrs++;
    return DP_OK;
}

enum dp_status dp_graph_set_shape(struct dp_graph *g, int i, int n_dims, const int64_t *dims) {
    DP_ASSERT(i >= 0 && (size_t)i < g->n_nodes);
    if (n_dims > DP_MAX_DIMS || n_dims < -1) return DP_ERR_INVALID;
    g->nodes[i].n_dims = n_dims;
    for (int d = 0; d < n_dims; d++) g->nodes[i].dims[d] = dims[d];
    return DP_OK;
}

enum dp_status dp_graph_set_device(struct dp_graph *g, int i, const char *device) {
    DP_ASSERT(i >= 0 && (size_t)i < g->n_nodes);
    return replace_str(&g->nodes[i].device, device);
}

const char *dp_node_attr(const struct dp_node *n, const char *key) {
    for (int a = 0; a < n->n_attrs; a++)
        if (!strcmp(n->attrs[a].key, key)) return n->attrs[a].value;
    return NULL;
}

bool dp_node_on_gpu(const struct dp_node *n) {
    return strstr(n->device, "GPU") || strstr(n->device, "gpu");
}

bool dp_graph_f16(const struct dp_graph *g) {
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_node_on_gpu(n) && (n->dtype == DP_DTYPE_F16 || n->dtype == DP_DTYPE_BF16))
            return true;
    }
    return false;
}

double dp_node_tensor_size(const struct dp_node *n, int64_t batch) {
    return n->n_dims == 0 ? 0 : dp_node_elements(n, batch);
}

double dp_node_elements(const struct dp_node *n, int64_t batch) {
    if (n->n_dims < 0) return 0;
    double s = 1;
    for (int d = 0; d < n->n_dims; d++) {
        int64_t v = n->dims[d] == DP_DIM_BATCH ? batch : n->dims[d];
        s *= v > 0 ? (double)v : 0;
    }
    return s;
}

struct dp_graph *dp_graph_clone(const struct dp_graph *g) {
    struct dp_graph *c = dp_graph_init(g->name);
    if (!c) return NULL;
    if (dp_graph_set_framework(c, g->framework) || dp_graph_set_batch(c, g->batch, g->batch_source))
        goto fail;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct dp_node *n = &g->nodes[i];
        if (dp_graph_add_node(c, n->name, n->op, n->device, n->n_dims, n->dims, n->dtype, NULL,
                              NULL))
            goto fail;
        dp_graph_set_cost(c, (int)i, n->flops, n->bytes, n->params);
        for (int a = 0; a < n->n_attrs; a++)
            if (dp_graph_set_attr(c, (int)i, n->attrs[a].key, n->attrs[a].value)) goto fail;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const struct dp_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (dp_graph_add_input(c, (int)i, n->inputs[k], false, NULL)) goto fail;
        for (int k = 0; k < n->n_ctrl; k++)
            if (dp_graph_add_input(c, (int)i, n->ctrl[k], true, NULL)) goto fail;
    }
    return c;
fail:
    dp_graph_free(c);
    return NULL;
}
