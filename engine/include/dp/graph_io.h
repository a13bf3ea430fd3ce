/* graph_io.h: reading and writing workload graphs: driple-graph/1 JSON, TensorFlow GraphDef text
 * (.pbtxt) and ONNX (dp/onnx.h), recognised by content. Importers leave the batch dimension
 * symbolic (DP_DIM_BATCH) using the exported batch size. */
#ifndef DP_GRAPH_IO_H
#define DP_GRAPH_IO_H

#include <stddef.h>
#include <stdint.h>

#include "dp/graph.h"

struct dp_import_opts {
    int64_t exported_batch; /* the batch size the graph was exported with; 0 = detect */
};

/* Loads a graph in any supported format, recognised by content (not only the extension).
 * Returns a new graph owned by the caller; on failure "<path>:<line or JSON path>: <what>". */
enum dp_status dp_graph_load(const char *path, const struct dp_import_opts *opts,
                             struct dp_graph **out, struct dp_error *err);
/* driple-graph/1 JSON from a file or from memory (`name` used in messages). Inputs naming no op
 * are dropped and counted in *n_dropped (may be NULL). */
enum dp_status dp_graph_load_json(const char *path, struct dp_graph **out, size_t *n_dropped,
                                  struct dp_error *err);
enum dp_status dp_graph_parse_json(const char *text, size_t len, const char *name,
                                   struct dp_graph **out, size_t *n_dropped, struct dp_error *err);
/* Writes driple-graph/1 ("-" = stdout). */
enum dp_status dp_graph_save_json(const struct dp_graph *g, const char *path, struct dp_error *err);
/* TensorFlow GraphDef text format. */
enum dp_status dp_graph_import_pbtxt(const char *path, const struct dp_import_opts *opts,
                                     struct dp_graph **out, struct dp_error *err);
enum dp_status dp_graph_parse_pbtxt(const char *text, size_t len, const char *name,
                                    const struct dp_import_opts *opts, struct dp_graph **out,
                                    struct dp_error *err);

#endif
