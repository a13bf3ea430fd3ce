/* train_impl.h: what the per-setting training (train.c) and the setting-aware training
 * (sa_train.c) share. Private to the engine. */
#ifndef DP_TRAIN_IMPL_H
#define DP_TRAIN_IMPL_H

#include <stdint.h>

#include "dp/status.h"

/* The hold-out of whole families: keys[i] is item i's family (NULL: a generated architecture,
 * always in training). Families in name order are shuffled with the seed; the first
 * round(test_frac x F) (at least 1) go to test (part 2), the next round(val_frac x F) (at least
 * 1) to val (1), the rest to train (0), at least one family training. Sets part[i] for every
 * item and *n_families; with fewer than 3 families every part is 0 (the caller refuses).
 * DP_ERR_NOMEM only. */
/* Shuffles a[0..n) with the stream *rng (Fisher-Yates from the end). */
void dp_shuffle(int *a, int n, uint64_t *rng);

enum dp_status dp_family_parts(const char *const *keys, int n, double val_frac, double test_frac,
                               uint64_t seed, int *part, int *n_families, struct dp_error *err);

#endif
