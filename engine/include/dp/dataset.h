/* dataset.h: a training set for one setting ("driple-dataset/1"): the setting id, the output
 * names (Driple order, dp_outputs) and samples, each a job (graph, model, batch, optimizer,
 * precision, ...), its grouped graph and its 12 labels, with where the labels came from (the
 * simulator or a measured trace: never mixed up). Also reads and writes the published
 * DriplePerf CSV (one row per job and resource; no graphs in it). */
#ifndef DP_DATASET_H
#define DP_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/grouped.h"
#include "dp/model.h"
#include "dp/profile.h"
#include "dp/status.h"

/* Job fields beside the graph. Empty strings / 0 mean unknown. */
struct dp_job {
    char    optimizer[16];  /* "sgd", "momentum", "adam" */
    char    precision[16];  /* "fp32", "mixed" */
    char    data_set[32];   /* DriplePerf "Data Set": "ImageNet", "CIFAR-10", "synthetic" */
    char    sync[8];        /* "sync", "async" (DriplePerf "Sync/Async") */
    char    hyper[64];      /* DriplePerf "Hyper-Parameter", free text ("batch=32") */
    char    job_name[64];   /* DriplePerf "Job Name" */
    char    gpu[32];        /* DriplePerf "GPU" (also the setting's GPU) */
    int64_t input_size;     /* image side or sequence length */
};

/* Where the labels came from. */
struct dp_source {
    char kind[16];    /* "simulated" or "measured" (required) */
    char where[128];  /* "driple-sim seed 7", "host gpu03 / cluster A", a file name */
    char when[32];    /* ISO 8601 UTC, "2026-11-30T07:40:00Z" */
};

struct dp_sample {
    char              *graph;   /* graph name or file; owned (may be NULL) */
    char              *model;   /* model name, "resnet50"; owned (may be NULL) */
    int64_t            batch;   /* 0 = unknown */
    struct dp_job      job;
    struct dp_grouped *grouped; /* owned; NULL for rows read from a DriplePerf CSV */
    double             labels[DP_N_OUTPUTS]; /* Driple order, raw units; NaN = missing */
    double             iteration_ms; /* the iteration time; 0 = unknown */
    double             memory_gb;    /* the per-worker GPU memory footprint; 0 = unknown */
    bool               has_profile;  /* profile holds the graph's profile at the batch */
    struct dp_profile  profile;      /* what the setting-aware inspector reads (dp/profile.h) */
    struct dp_source   source;
};

struct dp_dataset {
    char              setting[64];  /* setting id, "V100-P1w2ho-PCIe"; "" = unknown */
    int               n_samples;
    int               cap;
    struct dp_sample *samples;
};

/* An empty dataset for a setting (id may be NULL or ""). The caller owns ds's contents: release
 * them with dp_dataset_free (which does not free ds itself). Never fails. */
void dp_dataset_init(struct dp_dataset *ds, const char *setting);
/* Releases every sample; ds is left empty (re-usable). NULL-safe. */
void dp_dataset_free(struct dp_dataset *ds);

/* Appends a deep copy of s (strings and grouped graph are copied; s stays the caller's).
 * DP_ERR_INVALID when source.kind is not "simulated"/"measured" or a label is infinite;
 * DP_ERR_NOMEM when out of memory. */
enum dp_status dp_dataset_add_sample(struct dp_dataset *ds, const struct dp_sample *s,
                                     struct dp_error *err);
/* Appends every sample of src (deep copies). Fails on a setting mismatch (both non-empty). */
enum dp_status dp_dataset_merge(struct dp_dataset *ds, const struct dp_dataset *src,
                                struct dp_error *err);
/* Number of samples whose labels are all finite and which have a grouped graph (trainable). */
int dp_dataset_n_trainable(const struct dp_dataset *ds);
/* The data label for a dataset: "simulated", "measured", "mixed" or "" when empty. */
const char *dp_dataset_data_kind(const struct dp_dataset *ds);

/* Reads a driple-dataset/1 file into ds (initialised inside; the caller frees with
 * dp_dataset_free). Checks format, output names/order, grouped graphs (features finite >= 0,
 * edges in range), labels (12 numbers or null), source kind. On failure ds is left empty and
 * err names "<path>:<json path>: <what>". */
enum dp_status dp_dataset_load_json(const char *path, struct dp_dataset *ds, struct dp_error *err);
/* The same from memory (`name` used in messages; fuzzable). */
enum dp_status dp_dataset_parse_json(const char *text, size_t len, const char *name,
                                     struct dp_dataset *ds, struct dp_error *err);
/* Writes ds as driple-dataset/1 (compact: groups as [tensor_size, ops, type_weight] triples,
 * no member names), atomically; "-" is stdout. */
enum dp_status dp_dataset_save_json(const struct dp_dataset *ds, const char *path,
                                    struct dp_error *err);

/* DriplePerf CSV: header `GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resource,
 * avg Idle time,avg Active time,avg Peak consumption`, four rows per job (Resource = "GPU Memory
 * Utilization", "GPU Utilization", "Network RX", "Network TX"; spelling variants are accepted on
 * read). Reading groups rows by (GPU, Model, Data Set, Sync/Async, Hyper-Parameter, Job Name)
 * into samples without grouped graphs; the batch is taken from a "batch=N"/"bs N"/plain-number
 * Hyper-Parameter; source.kind is set to `kind` ("measured" for the published file) and
 * source.where to the file name. Fails naming "<path>:<line>: <what>". ds is initialised inside. */
enum dp_status dp_dataset_load_csv(const char *path, const char *kind, struct dp_dataset *ds,
                                   struct dp_error *err);
enum dp_status dp_dataset_parse_csv(const char *text, size_t len, const char *name,
                                    const char *kind, struct dp_dataset *ds,
                                    struct dp_error *err);
/* Writes the DriplePerf CSV (fields quoted when they hold a comma or quote); "-" is stdout.
 * Samples with a missing resource (all three labels NaN) skip that row. */
enum dp_status dp_dataset_save_csv(const struct dp_dataset *ds, const char *path,
                                   struct dp_error *err);

/* DriplePerf's Resource column for output group r (0..3, Driple order). */
const char *dp_dataset_resource_name(int r);

#endif
