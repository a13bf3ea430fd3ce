/* fuzz_grouped.c: libFuzzer target for the driple-grouped/1 reader. */
#include <stddef.h>
#include <stdint.h>

#include "dp/grouped.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_grouped *g = NULL;
    struct dp_error err;
    if (dp_grouped_parse_json((const char *)data, size, "fuzz.json", &g, &err) == DP_OK)
        dp_grouped_free(g);
    return 0;
}
