/* dataset_impl.h: helpers shared by dataset.c and dataset_json.c (private to the engine). */
#ifndef DP_DATASET_IMPL_H
#define DP_DATASET_IMPL_H

#include <stdbool.h>

#include "dp/dataset.h"

/* Frees a sample's owned strings and grouped graph (not the sample). */
void dp_dataset_sample_clear(struct dp_sample *s);
/* "simulated" or "measured". */
bool dp_dataset_source_ok(const char *kind);
/* A grouped graph and 12 finite labels. */
bool dp_dataset_sample_trainable(const struct dp_sample *s);

#endif
