/* onnx.h: ONNX ModelProto import (opsets 7 to 18), expanded into a training graph like the
 * zoo's (forward, gradients, momentum optimizer, costs). No protobuf dependency: a bounds-checked
 * wire decoder (engine/src/io/pbwire.c). Shapes are inferred from the graph inputs with the batch
 * kept symbolic (dim 0 of every input; the batch may be folded into other dimensions,
 * [batch x heads, L, d]); the shape arithmetic exporters write (Shape, Gather, Concat, Slice,
 * Reshape 0/-1, ...) is folded, so value_info is only a fallback. Attributes that became inputs
 * (axes, split sizes, pads, scales, clip bounds) are read either way. Weights are the float
 * initializers that gradients reach (attention masks stay constants); initializers in external
 * data need only their dims, their values are never read, except for small tensors (at most 64
 * elements: a Reshape's target, Slice bounds) that shape arithmetic needs, which are read from
 * the data file beside the model (a node that needs one the file cannot give names the file). Activations stay NCHW, ONNX ops become TensorFlow ops (Conv ->
 * Conv2D with groups and dilations / DepthwiseConv2dNative, ConvTranspose ->
 * Conv2DBackpropInput, MatMul/Gemm -> MatMul / BatchMatMulV2, LSTM/GRU/RNN unrolled per step,
 * ...); the first float output (the input of a final Softmax) gets a cross-entropy loss against
 * labels from the input pipeline. An op type driple does not know is kept with the shape of its
 * value_info (else of its first input) and a generic cost, and counted in dp_import_notes. */
#ifndef DP_ONNX_H
#define DP_ONNX_H

#include <stddef.h>

#include "dp/graph_io.h"

/* Imports an .onnx file; a new graph owned by the caller (framework "onnx", batch = dim 0 of the
 * first input or opts->exported_batch, 0 when symbolic and not given). Errors name the file and
 * byte offset ("m.onnx:byte 1234: ..."), and the node for semantic errors. */
enum dp_status dp_graph_import_onnx(const char *path, const struct dp_import_opts *opts,
                                    struct dp_graph **out, struct dp_error *err);
/* The same from bytes in memory (fuzzing, tests); no file beside it is read, so small tensors in
 * external data stay unknown (a node needing one fails saying so). */
enum dp_status dp_graph_parse_onnx(const unsigned char *data, size_t len, const char *name,
                                   const struct dp_import_opts *opts, struct dp_graph **out,
                                   struct dp_error *err);

#endif
