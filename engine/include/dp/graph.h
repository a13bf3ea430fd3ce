/* graph.h: the op graph of a training job (docs/formats.md "driple-graph/1"): named ops with a type, a
 * device, data and control inputs, the shape and dtype of the first output (the batch dimension
 * symbolic), and optional per-op cost. Importers (JSON, TF GraphDef text, ONNX) and the model zoo
 * all build this one model through the builder calls below. */
#ifndef DP_GRAPH_H
#define DP_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/status.h"

#define DP_MAX_DIMS   8
#define DP_DIM_BATCH  (-1) /* the symbolic batch dimension */
#define DP_DIM_UNKNOWN (-2) /* a dimension nobody knows; counts as 0 in a tensor size (paper) */
/* The largest batch size (samples per worker per iteration) anything takes: the command line,
 * the explorer, the zoo's builder and a session's features; one limit, here. */
#define DP_BATCH_MAX  (INT64_C(1) << 20)

enum dp_dtype {
    DP_DTYPE_UNKNOWN = 0,
    DP_DTYPE_F32, DP_DTYPE_F16, DP_DTYPE_BF16, DP_DTYPE_F64,
    DP_DTYPE_I8, DP_DTYPE_I16, DP_DTYPE_I32, DP_DTYPE_I64, DP_DTYPE_U8,
    DP_DTYPE_BOOL, DP_DTYPE_STRING, DP_DTYPE_RESOURCE,
    DP_DTYPE_COUNT
};

/* "float32", "int64", ...; "unknown" for DP_DTYPE_UNKNOWN. */
const char *dp_dtype_name(enum dp_dtype t);
/* Parses our names and TensorFlow's ("DT_FLOAT", "float", "half", ...); false if unknown. */
bool dp_dtype_parse(const char *s, enum dp_dtype *out);
/* Bytes per element; 0 for unknown, string and resource. */
int dp_dtype_size(enum dp_dtype t);
/* float16, bfloat16, float32 or float64. */
bool dp_dtype_is_float(enum dp_dtype t);

struct dp_attr {
    char *key;
    char *value; /* the value as text (numbers, lists and strings as written) */
};

/* One op. Read it through dp_graph_node(); change it only through the builder calls. */
struct dp_node {
    char          *name;
    char          *op;       /* "Conv2D", "MatMul", ... */
    char          *device;   /* "/job:worker/replica:0/task:0/device:GPU:0", or "" */
    int            n_dims;   /* -1 when the shape is unknown altogether */
    int64_t        dims[DP_MAX_DIMS];
    enum dp_dtype  dtype;
    int            n_inputs; /* data inputs, as node indices */
    int           *inputs;
    int            n_ctrl;   /* control inputs ("^x"), as node indices */
    int           *ctrl;
    double         flops;    /* < 0: unknown */
    double         bytes;    /* bytes read + written; < 0: unknown */
    int64_t        params;   /* parameter count for variables; 0 otherwise */
    int            n_attrs;
    struct dp_attr *attrs;
};

struct dp_graph;

/* A new empty graph owned by the caller (free with dp_graph_free); NULL when out of memory. */
struct dp_graph *dp_graph_init(const char *name);
/* Frees g and everything in it; NULL-safe. */
void dp_graph_free(struct dp_graph *g);
/* A deep copy owned by the caller; NULL when out of memory. */
struct dp_graph *dp_graph_clone(const struct dp_graph *g);

const char *dp_graph_name(const struct dp_graph *g);
const char *dp_graph_framework(const struct dp_graph *g);
/* The batch size the shapes were exported with (0: unknown). */
int64_t     dp_graph_batch(const struct dp_graph *g);
/* How the exported batch was decided ("--exported-batch", "IteratorGetNext dim 0", ...); may be "". */
const char *dp_graph_batch_source(const struct dp_graph *g);
enum dp_status dp_graph_set_name(struct dp_graph *g, const char *name);
enum dp_status dp_graph_set_framework(struct dp_graph *g, const char *framework);
enum dp_status dp_graph_set_batch(struct dp_graph *g, int64_t batch, const char *source);

size_t dp_graph_n_nodes(const struct dp_graph *g);
/* Node i (i < n_nodes); the pointer stays valid until the next dp_graph_add_node. */
const struct dp_node *dp_graph_node(const struct dp_graph *g, size_t i);
/* Index of the node called name, or -1. O(1) average. */
int dp_graph_find(const struct dp_graph *g, const char *name);

/* Appends a node (strings and dims are copied); n_dims = -1 means unknown shape. Fails with
 * DP_ERR_INVALID on a duplicate or empty name, n_dims > DP_MAX_DIMS, a dimension below
 * DP_DIM_UNKNOWN, or known dimensions whose product overflows int64. *out_index may be NULL. */
enum dp_status dp_graph_add_node(struct dp_graph *g, const char *name, const char *op,
                                 const char *device, int n_dims, const int64_t *dims,
                                 enum dp_dtype dtype, int *out_index, struct dp_error *err);
/* Adds src as a data (control = false) or control input of node dst. */
enum dp_status dp_graph_add_input(struct dp_graph *g, int dst, int src, bool control,
                                  struct dp_error *err);
/* Sets the cost of node i (negative flops or bytes: unknown). */
void dp_graph_set_cost(struct dp_graph *g, int i, double flops, double bytes, int64_t params);
/* Sets or replaces an attribute of node i (copied). */
enum dp_status dp_graph_set_attr(struct dp_graph *g, int i, const char *key, const char *value);
/* Sets the shape of node i (n_dims = -1: unknown). */
enum dp_status dp_graph_set_shape(struct dp_graph *g, int i, int n_dims, const int64_t *dims);
/* Sets the device of node i. */
enum dp_status dp_graph_set_device(struct dp_graph *g, int i, const char *device);
/* The value of attribute key of node n, or NULL. */
const char *dp_node_attr(const struct dp_node *n, const char *key);

/* True when the node's device names a GPU ("GPU" or "gpu" in the device string). */
bool dp_node_on_gpu(const struct dp_node *n);
/* True when an op on a GPU computes in fp16 or bf16: a mixed-precision export or build, whose
 * bytes are already at half precision (an fp32 graph run under mixed precision moves half of
 * its bytes: dp_sim_byte_scale). */
bool dp_graph_f16(const struct dp_graph *g);
/* Elements of the first output at batch size `batch` (DP_DIM_BATCH -> batch, unknown dims -> 0,
 * unknown shape -> 0, scalar -> 1). Never overflows: the result is a double. */
double dp_node_elements(const struct dp_node *n, int64_t batch);
/* The paper's tensor size, the first group feature: dp_node_elements, except that a scalar
 * (shape ()) counts 0, as Driple's build_graph.py gives it (its product runs over no
 * dimension known to it), so features match what its checkpoints saw. */
double dp_node_tensor_size(const struct dp_node *n, int64_t batch);

#endif
