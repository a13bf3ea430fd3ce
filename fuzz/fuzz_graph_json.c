/* fuzz_graph_json.c: libFuzzer target for the driple-graph/1 reader (and the by-content format
 * detection dp_graph_load uses); graphs that load are also coarsened and featurised (small k),
 * so odd but valid graphs exercise the pipeline too. */
#include <stddef.h>
#include <stdint.h>

#include "dp/graph_io.h"
#include "fuzz_group.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_graph *g = NULL;
    struct dp_error err;
    size_t dropped = 0;
    (void)dp_graph_detect_format(data, size);
    if (dp_graph_parse_json((const char *)data, size, "fuzz.json", &g, &dropped, &err) == DP_OK)
        fuzz_group_and_free(g, 4, 1, 2);
    return 0;
}
