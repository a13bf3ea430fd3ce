/* fuzz_group.h: the tail the graph-reader targets share: a graph that loads is also coarsened
 * and featurised (small k), so odd but valid graphs exercise the whole pipeline. Included by
 * fuzz_graph_json.c, fuzz_pbtxt.c and fuzz_graphdef.c (run.sh builds only fuzz_*.c files as
 * targets). */
#ifndef DRIPLE_FUZZ_GROUP_H
#define DRIPLE_FUZZ_GROUP_H

#include <stdlib.h>

#include "dp/coarsen.h"

/* Groups g into k groups at `batch`, then frees g (takes it). Graphs of more than 2000 ops only
 * test the parser, which keeps each run fast. */
static void fuzz_group_and_free(struct dp_graph *g, int k, int64_t seed, int64_t batch) {
    if (dp_graph_n_nodes(g) <= 2000) {
        struct dp_grouped *gr = NULL;
        char *unknown = NULL;
        struct dp_error err;
        struct dp_coarsen_opts o = {.k = k, .seed = seed, .max_iter = 5};
        if (dp_graph_group(g, &o, NULL, batch, &gr, &unknown, &err) == DP_OK) dp_grouped_free(gr);
        free(unknown);
    }
    dp_graph_free(g);
}

#endif
