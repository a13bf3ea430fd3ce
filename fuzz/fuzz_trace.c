/* fuzz_trace.c: libFuzzer target for the trace readers (nvidia-smi CSV, network counters, the
 * simulator's CSV), recognised by header, and the burst extractor on whatever they read; inputs
 * of odd length are also read whole, every worker and GPU "1" (the per-worker and per-GPU
 * split). The readers take a path, so each input goes through a per-process temporary file. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "dp/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_trace.%d.csv", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct dp_trace *t = dp_trace_init("measured");
    struct dp_error err;
    if (t && dp_trace_read_any(path, t, &err) == DP_OK) {
        double labels[DP_N_OUTPUTS];
        dp_trace_labels(t, 0.1, labels, NULL);
    }
    dp_trace_free(t);
    if (size % 2) {
        struct dp_trace_file tf;
        if (dp_trace_file_read(path, "1", &tf, &err) == DP_OK) dp_trace_file_free(&tf);
        if (dp_trace_file_read(path, NULL, &tf, &err) == DP_OK) dp_trace_file_free(&tf);
    }
    return 0;
}
