/* graph_check.h: what every training graph of the zoo and of the architecture generator
 * satisfies, counted for the tests (test_zoo.c, test_zoo_gen.c). */
#ifndef DRIPLE_GRAPH_CHECK_H
#define DRIPLE_GRAPH_CHECK_H

#include <string.h>

#include "dp/graph.h"

struct graph_check {
    size_t unshaped;   /* GPU ops other than NoOp without a shape */
    size_t bad_inputs; /* inputs that are not a node */
    size_t uncosted;   /* nodes whose flops or bytes are unknown */
    size_t cpu_iter;   /* IteratorGetNext ops on the CPU (the input pipeline: 1) */
};

static inline struct graph_check graph_check(const struct dp_graph *g) {
    struct graph_check c = {0, 0, 0, 0};
    size_t n = dp_graph_n_nodes(g);
    for (size_t i = 0; i < n; i++) {
        const struct dp_node *nd = dp_graph_node(g, i);
        if (dp_node_on_gpu(nd) && nd->n_dims < 0 && strcmp(nd->op, "NoOp")) c.unshaped++;
        for (int j = 0; j < nd->n_inputs; j++)
            c.bad_inputs += nd->inputs[j] < 0 || (size_t)nd->inputs[j] >= n;
        c.uncosted += nd->flops < 0 || nd->bytes < 0;
        if (!strcmp(nd->op, "IteratorGetNext")) c.cpu_iter += !dp_node_on_gpu(nd);
    }
    return c;
}

#endif
