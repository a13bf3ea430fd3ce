/* onnx_impl.h: the ONNX reader's parts (private to engine/src/io): the decoded model
 * (onnx_schema.c, over the wire decoder pbwire.h), the importer's knowledge of every value
 * (symbolic shapes with the batch kept symbolic, folded contents of small integer tensors:
 * onnx_infer.c), the mapping of ONNX ops onto the training-graph builder (onnx_map.c,
 * onnx_rnn.c), and the walk that ties them together (onnx.c). */
#ifndef DP_IO_ONNX_IMPL_H
#define DP_IO_ONNX_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/onnx.h"
#include "pbwire.h"
#include "tfgraph/tfgraph.h"

#define ONNX_MAX_FOLD  64 /* elements of a tensor whose contents are kept (shape arithmetic) */
#define ONNX_MAX_INTS  64 /* integers kept per attribute */

/* dp_graph_parse_onnx of a file's bytes: the small tensors in external data are read from
 * beside path (NULL: a model from memory or stdin, they are not). */
enum dp_status onnx_parse(const unsigned char *data, size_t len, const char *name,
                          const char *path, const struct dp_import_opts *opts,
                          struct dp_graph **out, struct dp_error *err);

/* --- the decoded model (onnx_schema.c) ------------------------------------------------------ */

/* An initializer, or the value of a Constant node. */
struct o_tensor {
    const char *name;
    int         n_dims;   /* may exceed DP_MAX_DIMS: then dims holds the first ones */
    int64_t     dims[DP_MAX_DIMS];
    int64_t     dtype;    /* TensorProto.DataType */
    bool        external; /* data in an external file: dims known, contents read when small */
    const char *location; /* external: the data file, relative to the model's directory */
    int64_t     ext_offset, ext_length; /* external: where in it (length -1: not given) */
    const char *unread;   /* external and small, but not read: why (a node needing it says) */
    int         n_vals;   /* elements decoded into ivals or fvals; -1: not kept (large, absent) */
    int64_t    *ivals;    /* integer and bool types */
    double     *fvals;    /* float types */
    size_t      offset;
};

struct o_attr {
    const char      *name;
    int64_t          type; /* AttributeProto.AttributeType (0 when the writer left it out) */
    int64_t          i;
    float            f;
    const char      *s;
    const int64_t   *ints;   /* the first ONNX_MAX_INTS written (n_ints of them) */
    int              n_ints;
    const float     *floats; /* the first ONNX_MAX_INTS written */
    int              n_floats;
    struct o_tensor *t;
};

struct o_node {
    const char    *name, *op, *domain;
    const char   **in, **out;
    int            n_in, cap_in, n_out, cap_out;
    struct o_attr *attrs;
    int            n_attrs, cap_attrs;
    size_t         offset;
};

/* A ValueInfoProto: a graph input or output, or a value_info hint. */
struct o_value_info {
    const char *name;
    int64_t     elem;   /* element type, 0 when none */
    int         n_dims; /* -1: no shape */
    int64_t     dims[DP_MAX_DIMS]; /* DP_DIM_UNKNOWN where symbolic or absent */
    bool        sym[DP_MAX_DIMS];  /* named (dim_param) or absent */
    const char *param0; /* the symbolic name of dim 0, if any */
    size_t      offset;
};

struct o_graph {
    const char          *name;
    struct o_node       *nodes;
    int                  n_nodes, cap_nodes;
    struct o_tensor     *inits;
    int                  n_inits, cap_inits;
    struct o_value_info *inputs, *outputs, *vinfo;
    int                  n_inputs, cap_inputs, n_outputs, cap_outputs, n_vinfo, cap_vinfo;
};

struct o_model {
    int64_t        opset; /* of the default domain; 0 when none was declared */
    bool           have_graph;
    struct o_graph g;
};

/* Decodes a ModelProto from d's bytes into m (strings and arrays in d's arena). False on
 * failure, with d's error naming the byte offset. */
bool onnx_decode(struct pb_doc *d, struct o_model *m);
/* Decodes t's contents from raw little-endian bytes into ivals/fvals when t is small (at most
 * ONNX_MAX_FOLD elements) and raw_len is exactly its size; otherwise leaves them unknown
 * (n_vals -1). False only when out of memory. */
bool onnx_tensor_raw(struct pb_doc *d, struct o_tensor *t, const unsigned char *raw,
                     size_t raw_len);
/* Bytes per element of a TensorProto.DataType as stored (raw_data, external data); 0 for
 * strings and unknown types. */
int onnx_elem_bytes(int64_t dtype);
/* Bytes per element of a TensorProto.DataType whose contents can be folded; 0 for the rest. */
int onnx_raw_width(int64_t dtype);
/* Reads the contents of m's small initializers and Constant tensors kept in external data, from
 * files beside model_path (NULL: a model from memory, nothing read). A file that is missing,
 * short or outside the model's directory leaves the contents unknown with the reason in
 * t->unread; weights are never read. False only when out of memory. */
bool onnx_read_external(struct pb_doc *d, struct o_model *m, const char *model_path);
/* The attribute called name of n, or NULL. */
const struct o_attr *onnx_attr(const struct o_node *n, const char *name);
/* The dp dtype of an ONNX TensorProto.DataType (DP_DTYPE_UNKNOWN for the rest). */
enum dp_dtype onnx_dtype(int64_t t);
/* Elements of an initializer (a double: dims multiply past int64 in hostile files). */
double onnx_numel(const struct o_tensor *t);

/* --- what the importer knows of each value (onnx_infer.c) ----------------------------------- */

/* An integer that is c + k x batch (k = 0: a plain number), or unknown. */
struct sym {
    int64_t c, k;
    bool    known;
};

enum src { SRC_NODE, SRC_INPUT, SRC_INIT, SRC_CONST };

/* What a stored tensor is (onnx_weights.c): not one, a trained parameter, a buffer (stored and
 * held in memory, never trained: running statistics, masks, frequency tables) or a constant. */
enum wkind { W_NONE, W_PARAM, W_BUFFER, W_CONST };

struct oval {
    const char                *name;
    enum src                   src;
    const struct o_tensor     *init;  /* SRC_INIT / SRC_CONST: the tensor behind it */
    const struct o_value_info *vi;    /* a value_info (or graph output) shape: a hint */
    int                        producer; /* node index (SRC_NODE), -1 */
    bool                       diff;  /* gradients reach it from the loss */
    bool                       stat;  /* a batch norm's running statistic */
    bool                       copy;  /* an Identity of a stored tensor: one of its own */
    enum wkind                 kind;  /* stored tensors: what they are, by rule */
    const char                *rule;  /* the rule that said so (a static string) */
    double                     numel; /* stored tensors: elements */
    /* Known once defined: */
    bool                       defined;
    enum dp_dtype              dtype;
    int                        n_dims; /* -1: unknown rank */
    struct sym                 dims[DP_MAX_DIMS];
    int                        n_fold; /* folded elements; -1: contents unknown */
    struct sym                *iv;     /* integer contents (n_fold) */
    double                    *fv;     /* float contents (n_fold) */
    int                        tensor; /* builder tensor, -1 until made */
    int                        softmax_of; /* the builder tensor a Softmax read, -1 */
};

/* One unknown op type, counted. */
struct unknown_op {
    const char *op;
    int         count;
};

struct imp {
    struct pb_doc        *d;
    const struct o_model *m;
    const struct o_graph *g;
    struct zb            *b;
    struct dp_graph      *dg;          /* the graph b builds (stored tensors' rules go there) */
    struct oval          *vals;
    size_t                n_vals, cap; /* open addressing, cap a power of two */
    const struct o_node  *node;        /* the node being mapped, for messages */
    int64_t               fixed_batch; /* dim 0 of the first input when numeric (0: symbolic) */
    int64_t               assumed_batch; /* the batch taken for a dynamic one (0: none) */
    struct unknown_op     unknown[32];
    int                   n_unknown, n_unknown_nodes;
};

/* The value called name (created when create), or NULL. */
struct oval *onnx_val(struct imp *im, const char *name, bool create);
/* Input k of the node being mapped, or NULL when absent or empty. */
struct oval *onnx_in(struct imp *im, int k);
/* Fails the import naming the node being mapped ("<file>:byte N: node 'x' (Op): <what>");
 * returns -1. */
int onnx_fail(struct imp *im, enum dp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

struct sym sym_num(int64_t c);
struct sym sym_batch(int64_t k);
/* A plain number (no batch in it). */
bool sym_plain(struct sym s);
/* Arithmetic, unknown when the result is not c + k x batch or passes 2^62; sym_div is ONNX's
 * truncating integer division, known when exact or plain. */
struct sym sym_add(struct sym a, struct sym b);
struct sym sym_neg(struct sym a);
struct sym sym_mul(struct sym a, struct sym b);
struct sym sym_div(struct sym a, struct sym b);
/* The sign of a - b for any batch of at least 1 (-1, 0, 1); 2 when it depends on the batch. */
int sym_cmp(struct sym a, struct sym b);
bool sym_same(struct sym a, struct sym b);
/* A builder dimension (DP_DIM_BATCH, a multiple of it, DP_DIM_UNKNOWN or a number) as a sym,
 * and back. */
struct sym sym_of_dim(int64_t d);
int64_t    sym_to_dim(struct sym s);
/* The element count of v's shape (unknown when a dimension is). */
struct sym onnx_numel_sym(const struct oval *v);
/* Defines output k of the node being mapped from builder tensor t (dtype and shape read from
 * the builder). False on failure. */
bool onnx_set_tensor(struct imp *im, int k, int t);
/* Tries to fold the node being mapped (shape arithmetic on known contents: Shape, Gather,
 * Concat, Unsqueeze, Reshape, Slice, Cast, arithmetic, ...): true when it did, and its outputs
 * are defined; false when the node is left to the mapper (or failed: im->d->st set). */
bool onnx_fold(struct imp *im);
/* ONNX Reshape semantics (0 copies the input's dimension unless allowzero, one -1 is inferred)
 * on symbolic dimensions: out gets the resolved shape. False (with the node failed) when the
 * element counts cannot agree. */
bool onnx_reshape_dims(struct imp *im, const struct oval *x, const struct sym *want, int n,
                       bool allowzero, struct sym *out);
/* Axes from attribute `name` or from input k (Squeeze, Unsqueeze, Reduce*: attributes that
 * became inputs in opsets 13 and 18, read either way); *given false when neither is there.
 * False when the input is not a known constant. */
bool onnx_axes(struct imp *im, const char *name, int k, int64_t *axes, int *n, bool *given);
/* Normalises axes against rank r into a bit mask; false (node failed) when one is out of range. */
bool onnx_axes_mask(struct imp *im, const int64_t *axes, int n, int r, unsigned *mask);
/* The shape of Squeeze or Unsqueeze of x by the node's axes; false (node failed) when they are
 * not known or out of range. */
bool onnx_squeeze_dims(struct imp *im, const struct oval *x, bool unsqueeze, struct sym *out,
                       int *n);
/* ONNX Slice of x by the node's starts, ends, axes, steps (attributes before opset 10, inputs
 * after): per dimension the first index, the step and the output size (a batch dimension is
 * kept only by a slice that keeps all of it). False (node failed) when the bounds are not
 * known. */
bool onnx_slice_dims(struct imp *im, const struct oval *x, int64_t *begin, int64_t *step,
                     struct sym *out);
/* NumPy broadcasting of shapes a and b into out; false when they do not fit. */
bool onnx_broadcast(const struct sym *a, int na, const struct sym *b, int nb, struct sym *out,
                    int *n);
/* The integers of a folded value (copied into vals, at most max; *n their count); false when
 * its contents are not known or not all plain numbers. */
bool onnx_ints(const struct oval *v, int64_t *vals, int max, int *n);

/* --- parameters, buffers, constants (onnx_weights.c) ------------------------------------- */

/* Marks the values gradients reach from the outputs (order: the nodes in dependency order) and
 * classifies every stored tensor (kind, rule). False only when out of memory. */
bool onnx_classify(struct imp *im, const int *order);

/* --- mapping onto the builder (onnx_map.c, onnx_window.c, onnx_rnn.c) ----------------------- */

/* The builder tensor of v, making initializers into variables (float ones gradients reach) or
 * constants, and folded values into constants, on first use. -1 on failure. */
int onnx_tensor(struct imp *im, struct oval *v);
/* The builder tensor of the node's input k; -1 (node failed) when absent. */
int onnx_in_t(struct imp *im, int k);
/* Makes initializer v a trainable variable in the given layout (HWIO for convolutions, [K, N]
 * for products); -2 when v is not an initializer still to be made. */
int onnx_weight_as(struct imp *im, struct oval *v, int n_dims, const int64_t *dims);
/* Pushes the builder scope named after the node (its op type when unnamed). */
void onnx_scope(struct imp *im);
/* Keeps the node as it is with its value_info shape (else its first input's) and a generic
 * cost; counted once per type in the import notes when `unknown`. */
bool onnx_map_generic(struct imp *im, bool unknown);
/* Maps the node being mapped onto the builder; false on failure. */
bool onnx_map(struct imp *im);
/* Data movement on activations (onnx_move.c), one function per ONNX op (Squeeze/Unsqueeze,
 * Expand/Tile and ConstantOfShape/Range share one). */
bool onnx_map_reshape(struct imp *im);
bool onnx_map_flatten(struct imp *im);
bool onnx_map_squeeze(struct imp *im, bool unsqueeze);
bool onnx_map_transpose(struct imp *im);
bool onnx_map_concat(struct imp *im);
bool onnx_map_split(struct imp *im);
bool onnx_map_slice(struct imp *im);
bool onnx_map_gather(struct imp *im);
bool onnx_map_expand(struct imp *im, bool tile);
bool onnx_map_pad(struct imp *im);
bool onnx_map_resize(struct imp *im);
bool onnx_map_fill(struct imp *im, bool range);
/* Conv (1-D to 3-D) and ConvTranspose (1-D and 2-D), grouped, dilated; MaxPool and AveragePool
 * (1-D to 3-D). */
bool onnx_map_conv(struct imp *im);
bool onnx_map_pool(struct imp *im);
/* LSTM, GRU and RNN, unrolled over their time steps. */
bool onnx_map_rnn(struct imp *im);

#endif
