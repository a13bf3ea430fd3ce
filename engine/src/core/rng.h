/* rng.h: the engine's one seeded random generator (splitmix64: small, no global state, the same
 * sequence on every platform), private to engine/src. */
#ifndef DP_RNG_H
#define DP_RNG_H

#include <stdint.h>

/* The next 64 random bits of the stream whose state is *s. */
static inline uint64_t dp_rng_next(uint64_t *s) {
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* A uniform double in [0, 1) (53 random bits). */
static inline double dp_rng_uniform(uint64_t *s) {
    return (double)(dp_rng_next(s) >> 11) * 0x1.0p-53;
}

#endif
