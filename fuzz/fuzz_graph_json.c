/* fuzz_graph_json.c: libFuzzer target for the driple-graph/1 reader; graphs that load are also
 * coarsened and featurised (small k), so odd but valid graphs exercise the pipeline too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dp/coarsen.h"
#include "dp/graph_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_graph *g = NULL;
    struct dp_error err;
    size_t dropped = 0;
    if (dp_graph_parse_json((const char *)data, size, "fuzz.json", &g, &dropped, &err) != DP_OK)
        return 0;
    if (dp_graph_n_nodes(g) > 2000) { /* keep the runs fast; big inputs only test the parser */
        dp_graph_free(g);
        return 0;
    }
    struct dp_grouped *gr = NULL;
    char *unknown = NULL;
    struct dp_coarsen_opts o = {.k = 4, .seed = 1, .max_iter = 5};
    if (dp_graph_group(g, &o, NULL, 2, &gr, &unknown, &err) == DP_OK) dp_grouped_free(gr);
    free(unknown);
    dp_graph_free(g);
    return 0;
}
