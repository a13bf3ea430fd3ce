/* fuzz_settings.c: libFuzzer target for the driple-settings/1 and driple-gpus/1 readers (both
 * take a path: each input goes through a per-process temporary file), plus the lookups and the
 * simulator's GPU check on whatever catalog loads. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "dp/settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_settings.%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct dp_error err;
    struct dp_settings *s = NULL;
    if (dp_settings_load(path, NULL, &s, &err) == DP_OK) {
        if (s->n_settings) (void)dp_settings_nearest(s, &s->settings[0], false);
        dp_settings_free(s);
    }
    struct dp_gpu_catalog *c = NULL;
    if (dp_gpu_catalog_load(path, &c, &err) == DP_OK) {
        for (int i = 0; i < c->n_gpus; i++) {
            (void)dp_gpu_check_sim(c, &c->gpus[i], &err);
            (void)dp_gpu_find(c, c->gpus[i].name);
        }
        dp_gpu_catalog_free(c);
    }
    return 0;
}
