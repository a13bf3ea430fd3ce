/* fuzz_pbtxt.c: libFuzzer target for the TensorFlow GraphDef text parser; graphs that load are
 * also coarsened and featurised (small k). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dp/coarsen.h"
#include "dp/graph_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_graph *g = NULL;
    struct dp_error err;
    struct dp_import_opts opts = {.exported_batch = size % 3 == 0 ? 16 : 0};
    if (dp_graph_parse_pbtxt((const char *)data, size, "fuzz.pbtxt", &opts, &g, &err) != DP_OK)
        return 0;
    if (dp_graph_n_nodes(g) > 2000) { /* keep the runs fast; big inputs only test the parser */
        dp_graph_free(g);
        return 0;
    }
    struct dp_grouped *gr = NULL;
    char *unknown = NULL;
    struct dp_coarsen_opts o = {.k = 3, .seed = 2, .max_iter = 5};
    if (dp_graph_group(g, &o, NULL, 4, &gr, &unknown, &err) == DP_OK) dp_grouped_free(gr);
    free(unknown);
    dp_graph_free(g);
    return 0;
}
