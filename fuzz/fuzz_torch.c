/* fuzz_torch.c: libFuzzer target for the PyTorch checkpoint reader (dp_torch_parse). Inputs whose
 * first byte is odd are parsed as whole archives; even ones become archive/data.pkl of a valid
 * stored zip (correct CRC) beside a 64-byte storage "archive/data/0", so the pickle machine and
 * the tensor rebuild get fuzzed past the container's checks too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp/torch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t crc32_f(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static uint8_t *put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); return p + 2; }
static uint8_t *put32(uint8_t *p, uint32_t v) { return put16(put16(p, v & 0xFFFF), v >> 16); }

/* A stored zip of two entries, as torch.save writes it. Returns the length. */
static size_t wrap(const uint8_t *pkl, size_t n, uint8_t *z) {
    static const uint8_t storage[64];
    const char *names[2] = {"archive/data.pkl", "archive/data/0"};
    const uint8_t *datas[2] = {pkl, storage};
    size_t lens[2] = {n, sizeof storage};
    uint32_t off[2];
    uint8_t *p = z;
    for (int i = 0; i < 2; i++) {
        off[i] = (uint32_t)(p - z);
        p = put32(p, 0x04034b50u); p = put16(p, 20); p = put16(p, 0x0808); p = put16(p, 0);
        p = put32(p, 0); p = put32(p, 0); p = put32(p, 0); p = put32(p, 0);
        p = put16(p, (unsigned)strlen(names[i])); p = put16(p, 0);
        memcpy(p, names[i], strlen(names[i])); p += strlen(names[i]);
        memcpy(p, datas[i], lens[i]); p += lens[i];
    }
    uint32_t cd = (uint32_t)(p - z);
    for (int i = 0; i < 2; i++) {
        p = put32(p, 0x02014b50u); p = put16(p, 20); p = put16(p, 20); p = put16(p, 0x0808);
        p = put16(p, 0); p = put32(p, 0); p = put32(p, crc32_f(datas[i], lens[i]));
        p = put32(p, (uint32_t)lens[i]); p = put32(p, (uint32_t)lens[i]);
        p = put16(p, (unsigned)strlen(names[i])); p = put32(p, 0); p = put32(p, 0); p = put32(p, 0);
        p = put32(p, off[i]);
        memcpy(p, names[i], strlen(names[i])); p += strlen(names[i]);
    }
    uint32_t cd_size = (uint32_t)(p - z) - cd;
    p = put32(p, 0x06054b50u); p = put32(p, 0); p = put16(p, 2); p = put16(p, 2);
    p = put32(p, cd_size); p = put32(p, cd); p = put16(p, 0);
    return (size_t)(p - z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct dp_torch_state st = {0, NULL};
    struct dp_error err;
    if (size == 0) return 0;
    if (data[0] & 1) {
        if (dp_torch_parse(data + 1, size - 1, "fuzz.pkl", &st, &err) == DP_OK) dp_torch_state_free(&st);
        return 0;
    }
    uint8_t *z = malloc(size + 512);
    if (!z) return 0;
    size_t n = wrap(data + 1, size - 1, z);
    if (dp_torch_parse(z, n, "fuzz.pkl", &st, &err) == DP_OK) dp_torch_state_free(&st);
    free(z);
    return 0;
}
