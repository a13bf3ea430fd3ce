/* train_impl.h: what the per-setting training (train.c) and the setting-aware training
 * (sa_train.c) share. Private to the engine. */
#ifndef DP_TRAIN_IMPL_H
#define DP_TRAIN_IMPL_H

#include <stdint.h>

#include "dp/status.h"

struct dp_sweep;

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

/* The pairs among the rows rows[idx[0..n)] of sw of one graph (model, optimizer, precision) on
 * one setting at consecutive batch sizes: *out (owned by the caller) holds *n_out pairs, each
 * the two idx values, the smaller batch first. DP_ERR_NOMEM only. */
enum dp_status dp_sweep_batch_pairs(const struct dp_sweep *sw, const int *rows, const int *idx,
                                    int n, int **out, int *n_out, struct dp_error *err);

#endif
