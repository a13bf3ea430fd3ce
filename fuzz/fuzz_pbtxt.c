/* fuzz_pbtxt.c: libFuzzer target for the TensorFlow GraphDef text parser; graphs that load are
 * also coarsened and featurised (small k). */
#include <stddef.h>
#include <stdint.h>

#include "dp/graph_io.h"
#include "fuzz_group.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_graph *g = NULL;
    struct dp_error err;
    struct dp_import_opts opts = {.exported_batch = size % 3 == 0 ? 16 : 0};
    if (dp_graph_parse_pbtxt((const char *)data, size, "fuzz.pbtxt", &opts, &g, &err) == DP_OK)
        fuzz_group_and_free(g, 3, 2, 4);
    return 0;
}
