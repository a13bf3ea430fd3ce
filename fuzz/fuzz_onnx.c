/* fuzz_onnx.c: libFuzzer target for the ONNX importer (protobuf decoder + training expansion);
 * graphs that import are also costed at another batch and cloned. Seeds: tests/data/onnx. */
#include <stddef.h>
#include <stdint.h>

#include "dp/cost.h"
#include "dp/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_graph *g = NULL;
    struct dp_error err;
    struct dp_import_opts opts = {.exported_batch = size % 3 == 0 ? 16 : 0};
    if (dp_graph_parse_onnx(data, size, "fuzz.onnx", &opts, &g, &err) != DP_OK) return 0;
    dp_cost_fill(g, 3, true);
    (void)dp_graph_param_count(g, true);
    struct dp_graph *c = dp_graph_clone(g);
    dp_graph_free(c);
    dp_graph_free(g);
    return 0;
}
