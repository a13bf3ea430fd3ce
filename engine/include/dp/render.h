/* render.h: the grouped graph drawn through Graphviz (libgvc + cgraph): one node per group, filled
 * on a white-yellow-red scale by importance, labelled with its top op types and op count, laid
 * out with dot (small graphs) or sfdp (large ones), written as SVG, PNG or DOT; and the same
 * layout as plain coordinates for the terminal view. Graphviz failures are DP_ERR_RENDER.
 * Graphviz is not thread-safe: call these from one thread at a time. One Graphviz context is
 * made on first use and kept for the life of the process. */
#ifndef DP_RENDER_H
#define DP_RENDER_H

#include <stdbool.h>

#include "dp/explain.h"
#include "dp/grouped.h"
#include "dp/status.h"

enum dp_render_format { DP_RENDER_SVG, DP_RENDER_PNG, DP_RENDER_DOT, DP_RENDER_FORMAT_COUNT };
const char *dp_render_format_name(enum dp_render_format f); /* "svg", "png", "dot" */

/* Layout engines. AUTO: dot up to DP_RENDER_DOT_MAX groups, sfdp above; when the chosen engine
 * is not installed, neato, then dot, are tried. */
enum dp_render_layout_engine {
    DP_LAYOUT_AUTO, DP_LAYOUT_DOT, DP_LAYOUT_SFDP, DP_LAYOUT_NEATO, DP_LAYOUT_COUNT
};
#define DP_RENDER_DOT_MAX 40
const char *dp_render_layout_name(enum dp_render_layout_engine l); /* "auto", "dot", ... */
bool        dp_render_layout_parse(const char *s, enum dp_render_layout_engine *out);

struct dp_render_opts {
    enum dp_render_layout_engine layout;
    const char                  *title;     /* graph label; NULL: g->graph and the metric */
    int                          max_types; /* op types per node label (0: 2) */
};

/* Draws g (importances, metric and op types from e, which may be NULL: then nodes are unfilled
 * and labelled with their op count only) into path in format f: rendered in memory, then
 * written atomically (dp_out_write_all: the old file stays whole until the new one is complete;
 * "-" is stdout). Errors: DP_ERR_RENDER with Graphviz's message (layout engine or output format
 * missing), DP_ERR_IO naming the file when it cannot be written. */
enum dp_status dp_render_file(const struct dp_grouped *g, const struct dp_explain *e,
                              const struct dp_render_opts *o, enum dp_render_format f,
                              const char *path, struct dp_error *err);
/* The same into memory: *out (NUL-terminated, *len bytes) is malloc'd, the caller frees. */
enum dp_status dp_render_data(const struct dp_grouped *g, const struct dp_explain *e,
                              const struct dp_render_opts *o, enum dp_render_format f,
                              char **out, size_t *len, struct dp_error *err);

/* Parses DOT text with Graphviz (agmemread) and counts its nodes and edges: the round-trip check
 * of a written DOT file. DP_ERR_PARSE with Graphviz's message when the text does not parse. */
enum dp_status dp_render_dot_stats(const char *text, int *n_nodes, int *n_edges,
                                   struct dp_error *err);

/* Node positions of g's layout, scaled into [0, w] x [0, h] with y growing downwards (screen
 * coordinates) and the drawing centred; with keep_aspect the layout's aspect ratio is kept,
 * otherwise it is stretched to fill the box (terminal panes). Nodes are laid out as equal
 * unlabelled boxes. Edges are g's edges: draw them between node centres. */
struct dp_layout {
    int         n_nodes;
    double     *x, *y;     /* node centres */
    double      w, h;      /* the box the positions were scaled into */
    const char *engine;    /* the layout engine actually used ("dot", "sfdp", ...) */
};
/* Lays g out (engine as in dp_render_opts) and fills a new dp_layout owned by the caller
 * (dp_layout_free). A single node sits at the centre. DP_ERR_RENDER on Graphviz failure,
 * DP_ERR_INVALID for w or h <= 0. */
enum dp_status dp_render_layout(const struct dp_grouped *g, enum dp_render_layout_engine engine,
                                double w, double h, bool keep_aspect, struct dp_layout **out,
                                struct dp_error *err);
void dp_layout_free(struct dp_layout *l); /* NULL-safe */

#endif
