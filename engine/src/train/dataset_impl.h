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

/* The compact grouped graph of datasets and sweeps, {seed, groups: [[3 or 6 features]], edges:
 * [[i, j]]}: read from obj (the graph's name and batch given; failures name "<name>:<path>..."),
 * and written as member "grouped" of o (false when out of memory). Only *_json.c call these. */
struct cJSON;
enum dp_status dp_dataset_read_grouped(const struct cJSON *obj, const char *gname, int64_t batch,
                                       const char *name, const char *path,
                                       struct dp_grouped **out, struct dp_error *err);
bool dp_dataset_write_grouped(struct cJSON *o, const struct dp_grouped *g);

#endif
