/* tfgraph.h: the training-graph builder shared by the model zoo and the importers (private to
 * the engine; engine/src/tfgraph: builder.c, sources.c, forward.c, window.c, rearrange.c,
 * gradients.c, optimizer.c, layers.c).
 * Forward primitives append TF-style ops and record them on a tape; zb_finish() walks the tape
 * backwards emitting the gradient ops of each forward op, then the optimizer's update per
 * variable. Errors are sticky: after the first failure every call returns -1 and zb_finish()
 * reports it. Tensors and variables are small integer ids. */
#ifndef DP_TFGRAPH_H
#define DP_TFGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/optimizer.h"
#include "dp/settings.h" /* enum dp_precision */

struct zb; /* the builder */

/* The largest dimension a tensor may have; a larger one fails the build (DP_ERR_UNSUPPORTED). */
#define ZB_MAX_DIM ((int64_t)1 << 40)
/* A dimension k times the batch (k >= 2; DP_DIM_BATCH is k = 1): imported graphs fold the batch
 * into other dimensions (PyTorch's attention reshapes to [batch x heads, L, d]). The graph's
 * node keeps the batch symbolic and the factor beside it: [.., batch, k, ..], so tensor sizes and
 * costs stay exact at any batch. */
#define ZB_DIM_BATCH_TIMES(k) ((k) == 1 ? (int64_t)DP_DIM_BATCH : -2 - (int64_t)(k))
/* The batch multiple k of a builder dimension (1 for DP_DIM_BATCH); 0 when it is none. */
int64_t zb_batch_multiple(int64_t d);

/* How the training graph is built. */
struct zb_opts {
    enum dp_optimizer optimizer; /* update ops per variable */
    enum dp_precision precision; /* fp32, or mixed: fp16 compute, fp32 variables, loss scaling */
    bool              nchw;      /* 4-D activations in NCHW (data_format attrs), else NHWC */
};

/* A builder writing into g (borrowed; must outlive it) with opts (copied). NULL when out of
 * memory. */
struct zb *zb_init(struct dp_graph *g, const struct zb_opts *opts);
void zb_free(struct zb *b);
/* The sticky status (DP_OK while nothing failed) and its message. */
enum dp_status zb_status(const struct zb *b, struct dp_error *err);
/* Records a failure (first one wins); returns -1 for convenience. */
int zb_fail(struct zb *b, enum dp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Name scopes: ops are named "<scope>/<base>" (made unique TF-style with _1, _2 ...). */
void zb_push(struct zb *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void zb_pop(struct zb *b);

/* Tensor facts. */
int            zb_rank(const struct zb *b, int t);
int64_t        zb_dim(const struct zb *b, int t, int d); /* d < 0 counts from the end */
const int64_t *zb_dims(const struct zb *b, int t);
enum dp_dtype  zb_dtype(const struct zb *b, int t);
bool           zb_nchw(const struct zb *b);
int            zb_caxis(const struct zb *b); /* channel axis of 4-D activations */
enum dp_dtype  zb_compute_dtype(const struct zb *b);

/* --- sources ---------------------------------------------------------------------------- */
/* The CPU input pipeline: IteratorV2 -> IteratorGetNext. Returns the features tensor (dims as
 * given) and *labels (label_dims, int32; labels may be NULL). With nhwc_images, a 4-D NHWC
 * image batch is transposed to NCHW on the GPU when the layout is NCHW (tf_cnn_benchmarks). */
int zb_input(struct zb *b, int n_dims, const int64_t *dims, enum dp_dtype dt, int n_label_dims,
             const int64_t *label_dims, int *labels, bool nhwc_images);
/* Another output of the IteratorGetNext behind `features` (labels, a second input). */
int zb_input_extra(struct zb *b, int features, int n_dims, const int64_t *dims,
                   enum dp_dtype dt);
/* A variable (VariableV2 + initializer + Assign + Identity read) of the given shape; returns
 * the tensor the model uses (cast to fp16 under mixed precision when trainable). init: "zeros",
 * "ones", "normal" (TruncatedNormal). Non-trainable variables get attr trainable=false. */
int zb_variable(struct zb *b, const char *name, int n_dims, const int64_t *dims,
                const char *init, bool trainable);
/* A constant (no gradient). */
int zb_const(struct zb *b, const char *name, int n_dims, const int64_t *dims, enum dp_dtype dt);

/* --- forward primitives (each records its gradient rule) ------------------------------- */
/* The window of a convolution or pooling over n spatial axes (2, or 3 for volumes):
 * kernel, stride and dilation per axis, padding {begin, end} per axis; same: TF's SAME padding
 * (pad unused); ceil_mode: output sides rounded up (ONNX, PyTorch). */
struct zb_window {
    int     n;
    int64_t k[3], stride[3], dilation[3], pad[6];
    bool    same, ceil_mode;
};
/* 2-D convolution of x with filter w [kh, kw, cin / groups, cout] (grouped when the input has
 * a multiple of cin / groups channels; depthwise: [kh, kw, cin, multiplier]); over a 3-D window,
 * Conv3D of a 5-D x with w [kd, kh, kw, cin / groups, cout]. */
int zb_conv_window(struct zb *b, int x, int w, const struct zb_window *win, bool depthwise);
/* The same with one stride and dilation 1; pads = NULL: SAME, else {top, bottom, left, right}. */
int zb_conv(struct zb *b, int x, int w, int stride, const int64_t *pads, bool depthwise);
/* Transposed 2-D convolution (TF's conv2d_transpose: Conv2DBackpropInput) of x with filter w
 * [kh, kw, cout / groups, cin] to the output sides out_spatial[2]; over a 3-D window, TF's
 * conv3d_transpose (Conv3DBackpropInputV2) of a 5-D x with w [kd, kh, kw, cout / groups, cin]
 * to out_spatial[3]. Its gradients: Conv2D / Conv3D into x, the filter gradient into w. */
int zb_conv_transpose(struct zb *b, int x, int w, const struct zb_window *win,
                      const int64_t *out_spatial, int64_t groups);
int zb_bias_add(struct zb *b, int x, int bias);
/* FusedBatchNormV3 in training mode plus the moving-average updates of mean and var. */
int zb_batch_norm(struct zb *b, int x, int gamma, int beta, int mean, int var);
/* "Relu", "Relu6", "Sigmoid", "Tanh", "Rsqrt", "Neg", "Exp", "Sqrt", "Erf", "Square", "LRN",
 * "Identity", "Cast" (to the compute dtype), "Elu", "LeakyRelu", "Softplus", "Log". */
int zb_unary(struct zb *b, const char *op, int x);
/* Cast to dtype dt (gradient: the cast back). */
int zb_cast(struct zb *b, int x, enum dp_dtype dt);
/* "AddV2", "Sub", "Mul", "RealDiv", "SquaredDifference", "Maximum", "Minimum", "Pow" with
 * NumPy broadcasting. */
int zb_binary(struct zb *b, const char *op, int x, int y);
/* SelectV2: elements of x where cond holds, else of y (NumPy broadcasting of all three). */
int zb_select(struct zb *b, int cond, int x, int y);
/* Einsum of x (and y; -1 for one operand) by an explicit equation ("bhid,bhjd->bhij") into the
 * given shape; its gradients are einsums too. */
int zb_einsum(struct zb *b, const char *equation, int x, int y, int n_dims, const int64_t *dims);
/* MatMul (2-D, or x of any rank times 2-D y) or BatchMatMulV2 (both >= 3-D). */
int zb_matmul(struct zb *b, int x, int y, bool transpose_x, bool transpose_y);
/* "MaxPool" | "AvgPool" over a 2-D window (MaxPool3D, AvgPool3D over a 3-D one). */
int zb_pool_window(struct zb *b, const char *op, int x, const struct zb_window *win);
/* The same, k x k window. pads as for zb_conv. */
int zb_pool(struct zb *b, const char *op, int x, int k, int stride, const int64_t *pads);
/* Mean or Sum over the axes set in axis_mask (bit d = dim d). */
int zb_reduce(struct zb *b, const char *op, int x, unsigned axis_mask, bool keepdims);
int zb_softmax(struct zb *b, int x);
/* Concatenation along axis of n tensors. */
int zb_concat(struct zb *b, const int *xs, int n, int axis);
/* Splits x into n equal parts along axis; outs gets n tensor ids. Returns outs[0]. */
int zb_split(struct zb *b, int x, int n, int axis, int *outs);
/* The same into parts of the given sizes (SplitV). */
int zb_split_sizes(struct zb *b, int x, int n, const int64_t *sizes, int axis, int *outs);
/* Unstacks x along axis into n tensors (Unpack); Stacks n same-shape tensors along a new axis
 * (Pack). */
int zb_unstack(struct zb *b, int x, int n, int axis, int *outs);
int zb_stack(struct zb *b, const int *xs, int n, int axis);
int zb_reshape(struct zb *b, int x, int n_dims, const int64_t *dims);
int zb_transpose(struct zb *b, int x, const int *perm);
/* GatherV2 rows of table [V, d] at int ids: shape ids.dims + [d]. */
int zb_gather(struct zb *b, int table, int ids);
/* StridedSlice of len elements from start along axis. */
int zb_slice(struct zb *b, int x, int axis, int64_t start, int64_t len);
/* A copy of x rearranged into shape dims by TensorFlow op `op` (StridedSlice, Pad, MirrorPad,
 * Tile, BroadcastTo, GatherV2, ResizeNearestNeighbor, ResizeBilinear, ...); extra: its other
 * inputs (indices, sizes), which take no gradient. Its gradient is TF's for op, shaped like x. */
int zb_copy(struct zb *b, const char *op, int x, const int *extra, int n_extra, int n_dims,
            const int64_t *dims);
/* Dropout at rate (RandomUniform, GreaterEqual, Cast, Mul, Mul). */
int zb_dropout(struct zb *b, int x, double rate);
/* An op with no gradient rule: output shape given (n_dims -1: unknown); stops backprop. */
int zb_opaque(struct zb *b, const char *op, const int *xs, int n, int n_dims,
              const int64_t *dims, enum dp_dtype dt);
/* An op the builder knows nothing of (an imported custom op), costed generically (one FLOP per
 * output element): output shape given (n_dims -1: unknown). A float output that depends on a
 * trainable variable gets one gradient op "<op>Grad" (dy and the inputs in, the gradient of
 * every float input that needs one out), so backprop goes on through it; any other output is
 * zb_opaque's. Returns the tensor, -1 on failure (sticky). */
int zb_generic(struct zb *b, const char *op, const int *xs, int n, int n_dims,
               const int64_t *dims, enum dp_dtype dt);

/* --- losses and the end of the graph ---------------------------------------------------- */
/* SoftmaxCrossEntropyWithLogits against one-hot labels (int labels go through OneHot), or the
 * Sparse variant when sparse; logits of any rank (last = classes). Returns the scalar mean loss. */
int zb_xent_loss(struct zb *b, int logits, int labels, bool sparse);
/* Emits the gradients of loss (a scalar from zb_xent_loss or any scalar), loss scaling under
 * mixed precision, the optimizer's update per trainable variable, the global step and the
 * train_op NoOp. Returns the status. */
enum dp_status zb_finish(struct zb *b, int loss, struct dp_error *err);

/* --- layers (zoo helpers) ---------------------------------------------------------------- */
/* Conv (+ BatchNorm when bn, else bias) (+ act when act != NULL) in scope name. */
int zb_conv_layer(struct zb *b, const char *name, int x, int cout, int k, int stride, bool same,
                  bool bn, const char *act);
/* Non-square kernels (Inception's 1x7 and 7x1). */
int zb_conv_layer2(struct zb *b, const char *name, int x, int cout, int kh, int kw, int stride,
                   bool same, bool bn, const char *act);
/* Batch norm (+ activation) on its own, for pre-activation blocks (DenseNet). */
int zb_bn_layer(struct zb *b, const char *name, int x, const char *act);
int zb_dwconv_layer(struct zb *b, const char *name, int x, int k, int stride, const char *act);
/* Dense: MatMul + BiasAdd (+ act). */
int zb_dense(struct zb *b, const char *name, int x, int units, const char *act);
/* LayerNorm as TF1 writes it: moments, Rsqrt, scale and shift. */
int zb_layer_norm(struct zb *b, const char *name, int x);
/* The same with given scale and shift, over the last n_axes dimensions. */
int zb_layer_norm_with(struct zb *b, int x, int gamma, int beta, int n_axes);
/* GELU as BERT's TF code writes it (tanh approximation). */
int zb_gelu(struct zb *b, int x);

#endif
