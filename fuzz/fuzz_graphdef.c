/* fuzz_graphdef.c: libFuzzer target for the binary TensorFlow reader (GraphDef .pb and
 * SavedModel saved_model.pb through the protobuf wire decoder shared with ONNX); graphs that
 * load are also costed, coarsened and featurised (small k). */
#include <stddef.h>
#include <stdint.h>

#include "dp/cost.h"
#include "dp/graph_io.h"
#include "fuzz_group.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_graph *g = NULL;
    struct dp_error err;
    struct dp_import_opts opts = {.exported_batch = size % 3 == 0 ? 16 : 0};
    if (dp_graph_parse_graphdef(data, size, "fuzz.pb", &opts, &g, NULL, &err) != DP_OK) return 0;
    dp_cost_fill(g, 3, true);
    fuzz_group_and_free(g, 3, 2, 4);
    return 0;
}
