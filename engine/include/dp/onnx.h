/* onnx.h: ONNX ModelProto import: nodes, initializers as variables, value_info shapes, a symbolic
 * batch dimension, expanded into a training graph like the zoo's (forward, gradients, optimizer). */
#ifndef DP_ONNX_H
#define DP_ONNX_H

#include <stddef.h>

#include "dp/graph_io.h"

/* Imports an .onnx file; a new graph owned by the caller. Errors name the file and byte offset. */
enum dp_status dp_graph_import_onnx(const char *path, const struct dp_import_opts *opts,
                                    struct dp_graph **out, struct dp_error *err);
/* The same from bytes in memory (fuzzing, tests). */
enum dp_status dp_graph_parse_onnx(const unsigned char *data, size_t len, const char *name,
                                   const struct dp_import_opts *opts, struct dp_graph **out,
                                   struct dp_error *err);

#endif
