/* fuzz_op_weights.c: libFuzzer target for the driple-op-weights/1 reader (and a lookup). */
#include <stddef.h>
#include <stdint.h>

#include "dp/coarsen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_op_weights *w = NULL;
    struct dp_error err;
    if (dp_op_weights_parse((const char *)data, size, "fuzz.json", &w, &err) == DP_OK) {
        bool known;
        (void)dp_op_weight(w, "Conv2D", &known);
        dp_op_weights_free(w);
    }
    return 0;
}
