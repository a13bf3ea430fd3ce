/* onnx.h: ONNX ModelProto import: nodes, initializers as variables, value_info shapes, a symbolic
 * batch dimension, expanded into a training graph like the zoo's (forward, gradients, optimizer).
 * No protobuf dependency: a bounds-checked wire-format decoder (engine/src/io/onnx.c).
 * Mapping: activations stay NCHW (data_format attrs), conv weights become HWIO variables, ONNX
 * ops become TensorFlow ops (Conv -> Conv2D / DepthwiseConv2dNative, Gemm/MatMul -> MatMul /
 * BatchMatMulV2, BatchNormalization -> FusedBatchNormV3, pools, Relu..., Add -> AddV2, Concat,
 * Reshape, Transpose, Softmax, Gather (embeddings), LayerNormalization, Slice, Split, ...); dim 0
 * of every graph input is the batch; the first graph output (the input of a final Softmax) gets
 * a cross-entropy loss against labels from the input pipeline; the optimizer is momentum. Ops
 * it does not know, and integer shape arithmetic, are kept with their value_info shape and no
 * gradient rule. Inferred shapes must match value_info (batch aside) or the import fails. */
#ifndef DP_ONNX_H
#define DP_ONNX_H

#include <stddef.h>

#include "dp/graph_io.h"

/* Imports an .onnx file; a new graph owned by the caller (framework "onnx", batch = dim 0 of the
 * first input or opts->exported_batch, 0 when symbolic and not given). Errors name the file and
 * byte offset ("m.onnx:byte 1234: ..."), and the node for semantic errors. */
enum dp_status dp_graph_import_onnx(const char *path, const struct dp_import_opts *opts,
                                    struct dp_graph **out, struct dp_error *err);
/* The same from bytes in memory (fuzzing, tests). */
enum dp_status dp_graph_parse_onnx(const unsigned char *data, size_t len, const char *name,
                                   const struct dp_import_opts *opts, struct dp_graph **out,
                                   struct dp_error *err);

#endif
