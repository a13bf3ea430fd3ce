/* dataset_impl.h: helpers shared by dataset.c and dataset_json.c (private to the engine). */
#ifndef DP_DATASET_IMPL_H
#define DP_DATASET_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/dataset.h"

/* Frees a sample's owned strings and grouped graph (not the sample). */
void dp_dataset_sample_clear(struct dp_sample *s);
/* "simulated" or "measured". */
bool dp_dataset_source_ok(const char *kind);
/* A grouped graph and 12 finite labels. */
bool dp_dataset_sample_trainable(const struct dp_sample *s);

/* A graph's profile as JSON ({flops: [per op class], bytes: [...], winograd_flops, params,
 * param_bytes, activation_bytes, ops, kernels, variables, f16}; datasets and sweeps): read from
 * o (the batch given; f16 where the file has no "f16"; failures name "<name>:<path>...") and
 * written as member key of o (false when out of memory). Only *_json.c call these. */
struct cJSON;
enum dp_status dp_profile_read_json(const struct cJSON *o, int64_t batch, bool f16,
                                    const char *name,
                                    const char *path, struct dp_profile *p,
                                    struct dp_error *err);
bool dp_profile_write_json(struct cJSON *o, const char *key, const struct dp_profile *p);

#endif
