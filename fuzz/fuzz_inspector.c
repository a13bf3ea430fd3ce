/* fuzz_inspector.c: libFuzzer target for the driple-inspector/1 reader (architecture, outputs,
 * provenance, base64 parameters); inspectors that load also predict on a 3-group graph. */
#include <stddef.h>
#include <stdint.h>

#include "dp/inspector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_inspector *insp = NULL;
    struct dp_error err;
    if (dp_inspector_parse_json((const char *)data, size, "fuzz/inspector.json", &insp, &err) != DP_OK)
        return 0;
    struct dp_grouped *g = dp_grouped_init("fuzz", 3, 2);
    if (g) {
        for (int i = 0; i < 9; i++) g->x[i] = i + 1;
        g->edges[0] = 0; g->edges[1] = 1; g->edges[2] = 1; g->edges[3] = 2;
        float raw[DP_N_OUTPUTS];
        double m[DP_N_OUTPUTS];
        (void)dp_inspector_predict(insp, g, raw, m, &err);
        dp_grouped_free(g);
    }
    dp_inspector_free(insp);
    return 0;
}
