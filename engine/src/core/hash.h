/* hash.h: the string hash of the engine's open-addressing tables (graph names, op registry,
 * op-type weights, builder names, ONNX values): FNV-1a, 64-bit. */
#ifndef DP_CORE_HASH_H
#define DP_CORE_HASH_H

#include <stdint.h>

static inline uint64_t dp_hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

#endif
