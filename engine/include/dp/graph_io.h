/* graph_io.h: reading and writing workload graphs: driple-graph/1 JSON, TensorFlow GraphDef text
 * (.pbtxt) and ONNX (dp/onnx.h), recognised by content. Importers leave the batch dimension
 * symbolic (DP_DIM_BATCH) using the exported batch size.
 *
 * driple-graph/1 shapes: -1 is the batch dimension, null or -2 an unknown one; a missing or null
 * shape is an unknown shape. TF GraphDef text: the exported batch is --exported-batch, else the
 * first dimension of the first IteratorGetNext (input pipeline) output, else of the first GPU
 * op's that is not a variable or constant; in any op but a variable, a first dimension equal to
 * it, or a first dimension of -1 (TF's None batch), becomes DP_DIM_BATCH; every other -1 is
 * DP_DIM_UNKNOWN (a tensor size of 0, as in the paper). dp_graph_batch_source() says which rule
 * chose the batch ("--exported-batch", "IteratorGetNext '<name>' dim 0", "first GPU op ..."). */
#ifndef DP_GRAPH_IO_H
#define DP_GRAPH_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/graph.h"

/* What a reader noticed without failing. */
struct dp_import_notes {
    size_t  n_generic;          /* ops kept with a generic cost: types the reader does not know */
    char    generic_types[256]; /* those types, each once with its count: "GridSample (3), ..." */
    int64_t assumed_batch;      /* > 0: the file's batch is dynamic and this one was assumed */
};

/* The batch a graph exported with a dynamic batch (ONNX's symbolic dim 0) is taken at, unless
 * --batch or --exported-batch says otherwise: one rule for the CLI and the explorer. */
#define DP_IMPORT_ASSUMED_BATCH 32
/* The most bytes of graph text (driple-graph/1 JSON, GraphDef text) a reader takes: larger than
 * any real graph's (ResNet-50's training graph is 2 MB), so an endless stream is refused early
 * and in bounded memory (dp_file_read: DRIPLE_MAX_INPUT, bytes or with a K, M or G suffix, sets
 * a lower one). */
#define DP_IMPORT_MAX_TEXT ((size_t)256 << 20)

struct dp_import_opts {
    int64_t                 exported_batch; /* the batch size the graph was exported with; 0 =
                                               detect */
    int64_t                 assumed_batch;  /* for a dynamic batch; 0 = DP_IMPORT_ASSUMED_BATCH */
    struct dp_import_notes *notes;          /* filled when not NULL (ONNX) */
};

enum dp_graph_format {
    DP_GRAPH_FORMAT_UNKNOWN = 0,
    DP_GRAPH_FORMAT_JSON,  /* driple-graph/1 */
    DP_GRAPH_FORMAT_PBTXT, /* TensorFlow GraphDef text */
    DP_GRAPH_FORMAT_ONNX,  /* ONNX ModelProto (binary protobuf) */
    DP_GRAPH_FORMAT_GRAPHDEF,    /* TensorFlow GraphDef, binary (.pb) */
    DP_GRAPH_FORMAT_SAVED_MODEL, /* TensorFlow SavedModel (saved_model.pb) */
};

/* Guesses the format of a file's first bytes (len may be short; the content decides, not the
 * name). The binary protobufs are told apart by their top-level fields: ONNX's ModelProto has a
 * graph (field 7), a GraphDef starts with nodes (field 1) or versions (4), a SavedModel has a
 * schema version (1) and meta graphs (2). */
enum dp_graph_format dp_graph_detect_format(const unsigned char *head, size_t len);

/* Loads a graph in any supported format, recognised by content (not only the extension); opts
 * may be NULL. With an exported batch in opts, a JSON graph's batch is overridden too.
 * Returns a new graph owned by the caller; on failure "<path>:<line or JSON path>: <what>". */
enum dp_status dp_graph_load(const char *path, const struct dp_import_opts *opts,
                             struct dp_graph **out, struct dp_error *err);
/* The same, counting the inputs that named no op and were dropped (n_dropped may be NULL;
 * always 0 for ONNX). */
enum dp_status dp_graph_load_ex(const char *path, const struct dp_import_opts *opts,
                                struct dp_graph **out, size_t *n_dropped, struct dp_error *err);
/* A binary TensorFlow GraphDef (.pb) or SavedModel (saved_model.pb, its first meta graph),
 * read into the same graph as its text form (dp_graph_import_pbtxt). Inputs naming no node are
 * dropped and counted in *n_dropped (may be NULL). Errors name "<file>:byte N". */
enum dp_status dp_graph_import_graphdef(const char *path, const struct dp_import_opts *opts,
                                        struct dp_graph **out, size_t *n_dropped,
                                        struct dp_error *err);
enum dp_status dp_graph_parse_graphdef(const unsigned char *data, size_t len, const char *name,
                                       const struct dp_import_opts *opts, struct dp_graph **out,
                                       size_t *n_dropped, struct dp_error *err);
/* Resolves an input reference as GraphDef and driple-graph/1 write them: "^x" (control: sets
 * *control), "x:1" (output 1 of x), "x". A name is first looked up whole, so a node named "a:1"
 * still resolves. Returns the node's index, or -1 when it names no node (or out of memory). */
int dp_graph_resolve_input(const struct dp_graph *g, const char *ref, bool *control);
/* driple-graph/1 JSON from a file or from memory (`name` used in messages). Inputs naming no op
 * are dropped and counted in *n_dropped (may be NULL). */
enum dp_status dp_graph_load_json(const char *path, struct dp_graph **out, size_t *n_dropped,
                                  struct dp_error *err);
enum dp_status dp_graph_parse_json(const char *text, size_t len, const char *name,
                                   struct dp_graph **out, size_t *n_dropped, struct dp_error *err);
/* Writes driple-graph/1 ("-" = stdout). */
enum dp_status dp_graph_save_json(const struct dp_graph *g, const char *path, struct dp_error *err);
/* TensorFlow GraphDef text format; opts may be NULL. Inputs naming no node are dropped. Errors
 * name "<file>:<line>:<col>". dp_graph_batch_source() says how the exported batch was chosen. */
enum dp_status dp_graph_import_pbtxt(const char *path, const struct dp_import_opts *opts,
                                     struct dp_graph **out, struct dp_error *err);
enum dp_status dp_graph_parse_pbtxt(const char *text, size_t len, const char *name,
                                    const struct dp_import_opts *opts, struct dp_graph **out,
                                    struct dp_error *err);
/* The pbtxt import counting dropped inputs (n_dropped may be NULL). */
enum dp_status dp_graph_import_pbtxt_ex(const char *path, const struct dp_import_opts *opts,
                                        struct dp_graph **out, size_t *n_dropped,
                                        struct dp_error *err);
enum dp_status dp_graph_parse_pbtxt_ex(const char *text, size_t len, const char *name,
                                       const struct dp_import_opts *opts, struct dp_graph **out,
                                       size_t *n_dropped, struct dp_error *err);

#endif
