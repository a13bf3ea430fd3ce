/* tf_graphdef.h: TensorFlow GraphDef nodes into the op graph (private to engine/src/io), shared
 * by the text reader (graph_pbtxt.c) and the binary one (graph_pb.c: GraphDef .pb and
 * SavedModel saved_model.pb): each reader checks and decodes one NodeDef into struct tf_node,
 * attribute values rendered as text the same way, so both give the same graph; this part adds
 * the ops, resolves the inputs once every node is known and settles the exported batch. */
#ifndef DP_IO_TF_GRAPHDEF_H
#define DP_IO_TF_GRAPHDEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/graph_io.h"

struct tf_attr {
    const char *key;
    const char *text; /* the AttrValue rendered by tf_text_* */
};

/* One NodeDef as a reader decoded it (strings borrowed for the tf_import_node call). */
struct tf_node {
    const char           *name, *op, *device;
    const char *const    *inputs; /* "x", "x:1", "^x" */
    int                   n_inputs;
    const struct tf_attr *attrs;  /* every attribute but _output_shapes */
    int                   n_attrs;
    int                   n_dims; /* _output_shapes' first entry, else attr shape; -1 unknown */
    int64_t               dims[DP_MAX_DIMS]; /* TF's: -1 for an unknown dimension */
    bool                  has_var_shape; /* attr shape (a variable's parameter count) */
    int                   var_n_dims;
    int64_t               var_dims[DP_MAX_DIMS];
    enum dp_dtype         dtype; /* attr T, dtype, DstT, out_type, output_types[0] or Tout[0] */
};

struct tf_pending;
struct tf_import {
    struct dp_graph   *g;
    const char        *name;          /* the file, for messages */
    struct tf_pending *in;            /* inputs, resolved at the end */
    size_t             n_in, cap_in;
    int                iterator_node; /* first input-pipeline op with a known first dim */
};

/* Starts a graph named after the file (framework "tensorflow"). */
enum dp_status tf_import_begin(struct tf_import *im, const char *path, struct dp_error *err);
/* Adds a node (its name must not be taken: the reader checks, naming its place). */
enum dp_status tf_import_node(struct tf_import *im, const struct tf_node *n,
                              struct dp_error *err);
/* Resolves inputs (those naming no node are dropped and counted in *n_dropped, may be NULL),
 * chooses the exported batch and makes first dimensions symbolic; *out gets the graph. */
enum dp_status tf_import_end(struct tf_import *im, const struct dp_import_opts *opts,
                             struct dp_graph **out, size_t *n_dropped, struct dp_error *err);
/* Frees what the import holds (the graph too unless tf_import_end handed it out). */
void tf_import_free(struct tf_import *im);
/* True when known dims multiply past int64_t (the reader refuses the node, naming its place). */
bool tf_dims_overflow(int n, const int64_t *dims);

/* Rendering attribute values: a growing string (oom sticky). */
struct tf_text {
    char  *s;
    size_t n, cap;
    bool   oom;
};
void tf_text_add(struct tf_text *b, const char *s, size_t n);
void tf_text_str(struct tf_text *b, const char *s);
/* A shape "[1, 224, 224, 3]" (-1 where unknown), "?" for an unknown rank (n < 0). */
void tf_text_shape(struct tf_text *b, int n, const int64_t *dims);
/* A string value as it is when printable, else "<N bytes>". */
void tf_text_bytes(struct tf_text *b, const char *s, size_t n);

#endif
