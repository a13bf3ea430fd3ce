/* tfgraph_impl.h: the builder's state and the helpers its files share (private to
 * engine/src/tfgraph): tensors, the tape of forward ops, gradient contributions, variables;
 * node and tensor creation (builder.c), variables (sources.c), the shape helpers (forward.c),
 * the gradient helpers (gradients.c) the optimizer uses. One prefix, zb_, as in tfgraph.h. */
#ifndef DP_TFGRAPH_IMPL_H
#define DP_TFGRAPH_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfgraph.h"

#define GPU_DEV "/job:worker/replica:0/task:0/device:GPU:0"
#define CPU_DEV "/job:worker/replica:0/task:0/device:CPU:0"
#define NAME_MAX_LEN 512
#define MAX_FAN      512 /* most inputs or outputs of one op */

struct tensor {
    int           node;
    int           n_dims;
    int64_t       dims[DP_MAX_DIMS];
    enum dp_dtype dt;
    bool          grad;  /* depends on a trainable variable: needs a gradient */
    int           first; /* head of its gradient-contribution list in b->contrib, -1 */
};

struct contrib {
    int t;    /* the gradient tensor */
    int next; /* next contribution, -1 */
};

/* The forward ops the tape records, each with its gradient rule in gradients.c. */
enum kind {
    K_CONV, K_DWCONV, K_BIAS, K_BN, K_UNARY, K_CAST, K_BINARY, K_MATMUL, K_POOL, K_REDUCE,
    K_SOFTMAX, K_CONCAT, K_SPLIT, K_UNSTACK, K_STACK, K_RESHAPE, K_TRANSPOSE, K_GATHER, K_XENT,
    K_SLICE, K_CONVT, K_COPY, K_SELECT, K_EINSUM, K_GENERIC, K_COUNT
};

struct tape_op {
    enum kind kind;
    int       node;      /* the forward node */
    int       in0, n_in; /* inputs: b->pool[in0 .. in0 + n_in) (tensor ids) */
    int       out0, n_out;
    int       ia[DP_MAX_DIMS]; /* kind-specific integers (transpose flags, axis, mask, perm) */
    char      op[24];
};

struct var {
    int  ref;  /* tensor aliasing the VariableV2 node */
    int  read; /* the Identity read (fp32) */
    bool trainable;
};

struct name_count {
    char *base; /* a node name that was taken */
    int   next; /* the next suffix to try */
};

struct zb {
    struct dp_graph   *g;
    struct zb_opts     opts;
    enum dp_status     st;
    char               msg[sizeof ((struct dp_error *)0)->msg];
    char               scope[NAME_MAX_LEN];
    int                scope_len[64];
    int                depth;
    struct tensor     *t;
    int                n_t, cap_t;
    struct contrib    *c;
    int                n_c, cap_c;
    struct tape_op    *tape;
    int                n_tape, cap_tape;
    int               *pool;
    int                n_pool, cap_pool;
    struct var        *vars;
    int                n_vars, cap_vars;
    int               *updates; /* nodes the train_op waits for (BN moving averages) */
    int                n_updates, cap_updates;
    struct name_count *names;   /* open addressing, cap_names a power of two */
    int                n_names, cap_names;
};

/* --- builder.c ------------------------------------------------------------------------------ */
/* snprintf whose truncation is deliberate (names are capped at NAME_MAX_LEN). */
void zb_sfmt(char *out, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Grows *arr (elements of size sz) to hold one more than n; false on OOM (sticky error). */
bool zb_grow(struct zb *b, void **arr, int n, int *cap, size_t sz);
/* The graph's form of builder dimensions: a batch multiple k x batch becomes two dimensions,
 * DP_DIM_BATCH and k (DP_DIM_UNKNOWN past DP_MAX_DIMS). Returns the count (n when -1). */
int zb_graph_dims(int n, const int64_t *dims, int64_t *out);
/* Reshapes tensor t (and its node) to dims. */
void zb_set_shape(struct zb *b, int t, int n_dims, const int64_t *dims);
/* Adds a node named `full` (made unique TF-style) with data inputs in_nodes; its index or -1. */
int zb_add_node(struct zb *b, const char *full, const char *op, const char *dev, int n_dims,
                const int64_t *dims, enum dp_dtype dt, const int *in_nodes, int n_in);
/* "<scope>/<base>" into out. */
void zb_scoped(const struct zb *b, const char *base, char *out, size_t n);
/* A tensor for output of node `node` (several tensors may share a multi-output node). */
int zb_new_tensor(struct zb *b, int node, int n_dims, const int64_t *dims, enum dp_dtype dt,
                  bool grad);
void zb_set_attr(struct zb *b, int node, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* A node whose inputs are tensors; returns the new tensor (grad if any input needs one). */
int zb_emit(struct zb *b, const char *full, const char *op, const char *dev, const int *ins,
            int n_in, int n_dims, const int64_t *dims, enum dp_dtype dt);
/* A forward GPU op in the current scope, recorded on the tape when it needs a gradient
 * (*tape_idx: its tape entry, -1 when none; tape_idx may be NULL). */
int zb_fwd(struct zb *b, enum kind kind, const char *base, const char *op, const int *ins,
           int n_in, int n_dims, const int64_t *dims, enum dp_dtype dt, int *tape_idx);
/* Adds output tensor y to tape op ti (multi-output ops). */
void zb_tape_add_out(struct zb *b, int ti, int y);
/* A scalar constant of the compute dtype. */
int zb_scalar(struct zb *b, const char *base);

/* --- sources.c ------------------------------------------------------------------------------ */
/* A variable (see zb_variable); cast: to fp16 under mixed precision; slot: optimizer state
 * (no params, no read); *ref_out: the VariableV2 tensor. */
int zb_new_var(struct zb *b, const char *name, int n_dims, const int64_t *dims, const char *init,
               bool trainable, bool cast, bool slot, int *ref_out);

/* --- forward.c ------------------------------------------------------------------------------ */
bool zb_same_dims(const struct tensor *a, const struct tensor *c);
/* NumPy broadcasting of the shapes of x and y into out; false when they do not fit. */
bool zb_broadcast(const struct tensor *x, const struct tensor *y, int *n, int64_t *out);
void zb_matmul_attrs(struct zb *b, int node, bool batch, bool tx, bool ty);

/* --- gradients.c ---------------------------------------------------------------------------- */
/* Adds grad as a contribution to the gradient of target. */
void zb_add_contrib(struct zb *b, int target, int grad);
/* The summed gradient of tensor t (AddN over its contributions), or -1 when it has none. */
int zb_grad_sum(struct zb *b, int t, const char *fwd_name);
/* Emits the gradient ops of tape op o. */
void zb_backward_op(struct zb *b, const struct tape_op *o);

#endif
