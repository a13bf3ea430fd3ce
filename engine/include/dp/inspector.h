/* inspector.h: an inspector = a model plus what it predicts for ("driple-inspector/1"): named
 * outputs with units, label scales and transforms (prediction = scale x raw for the paper's
 * linear outputs, dp_inspector_metric in general), the setting it was trained
 * for, and how (from scratch, or transferred from which base; epochs; validation and test error
 * per output). A transferred inspector file may store only the parameters that differ from its
 * base and name the base file; loading resolves it relative to the file's directory. */
#ifndef DP_INSPECTOR_H
#define DP_INSPECTOR_H

#include "dp/model.h"

/* How an output's raw network value maps to its metric (in the output's unit):
 *   linear: metric = scale x (offset + span x raw)         (the paper: offset 0, span 1)
 *   log:    metric = scale x expm1(offset + span x raw)    (the exponent is capped at 80)
 * so a network trained on (log1p(label / scale) - offset) / span predicts the label back. The
 * published head ends in a LeakyReLU, so fitted offsets and spans keep training targets >= 0. */
enum dp_out_transform { DP_OUT_LINEAR, DP_OUT_LOG, DP_OUT_TRANSFORM_COUNT };
const char *dp_out_transform_name(enum dp_out_transform t);          /* "linear", "log" */
bool        dp_out_transform_parse(const char *s, enum dp_out_transform *out);

struct dp_output_meta {
    char   name[32];  /* "gpu_util.active" */
    char   unit[16];  /* "ms", "%", "MB/s" */
    double scale;     /* training-label maximum (linear, paper); 1 for an imported checkpoint */
    enum dp_out_transform transform; /* DP_OUT_LINEAR unless the file says otherwise */
    double offset, span; /* target normalisation (0 and 1: none) */
};

struct dp_eval {      /* per output, on one split; NaN when not measured */
    double mape[DP_N_OUTPUTS], rmse[DP_N_OUTPUTS], r2[DP_N_OUTPUTS];
};

struct dp_provenance {
    char   origin[16];      /* "scratch", "transfer", "imported" */
    char   base[256];       /* base inspector file (transfer), relative to this file */
    char   base_id[64];     /* the base's setting id */
    char   mode[16];        /* "full", "head", "head+last" */
    char   data[16];        /* "simulated", "measured", "mixed", "published" */
    char   split[32];       /* "random", "hold-out-models" */
    int    epochs;
    double seconds;         /* training time */
    int    n_train, n_val, n_test;
    struct dp_eval val, test;
};

struct dp_inspector;

/* Wraps a model (takes ownership of m, also on failure) with default output metadata
 * (dp_outputs: names, units; scale 1), no setting and provenance "scratch". */
enum dp_status dp_inspector_init(struct dp_model *m, struct dp_inspector **out, struct dp_error *err);
/* Reads an inspector file (and its base, when it names one). Corrupt, truncated or mismatched
 * files (base64, shapes, NaN weights, feature count) fail naming the file and JSON path. */
enum dp_status dp_inspector_load(const char *path, struct dp_inspector **out, struct dp_error *err);
/* The same from text in memory; `name` is used in messages and a base is resolved relative to
 * its directory. */
enum dp_status dp_inspector_parse_json(const char *text, size_t len, const char *name,
                                       struct dp_inspector **out, struct dp_error *err);
/* Writes it; with base != NULL only parameters that differ from base are stored and the file
 * names base_path (written relative to path's directory). */
enum dp_status dp_inspector_save(const struct dp_inspector *insp, const char *path,
                                 const struct dp_inspector *base, const char *base_path,
                                 struct dp_error *err);
/* Frees the inspector and its model; NULL-safe. */
void dp_inspector_free(struct dp_inspector *insp);

/* The model, borrowed (owned by insp). The _mut form lets a trainer change the parameters and
 * marks the body key for recomputation. */
const struct dp_model *dp_inspector_model(const struct dp_inspector *insp);
struct dp_model       *dp_inspector_model_mut(struct dp_inspector *insp);
/* Output o's metadata, borrowed; NULL when o is out of range. */
const struct dp_output_meta *dp_inspector_output(const struct dp_inspector *insp, int o);
/* Sets output o's scale (ignored when o is out of range; the caller passes a finite scale > 0). */
void        dp_inspector_set_scale(struct dp_inspector *insp, int o, double scale);
/* Sets output o's mapping (scale > 0 and span > 0 finite, offset finite: else DP_ERR_INVALID). */
enum dp_status dp_inspector_set_transform(struct dp_inspector *insp, int o,
                                          enum dp_out_transform t, double scale, double offset,
                                          double span);
/* Output o's metric for a raw network value (see enum dp_out_transform). */
double dp_inspector_metric(const struct dp_inspector *insp, int o, double raw);
/* The inverse: the raw value (training target) whose metric is `label` (labels below 0 are
 * taken as 0 under the log transform). */
double dp_inspector_target(const struct dp_inspector *insp, int o, double label);
/* d metric / d raw at `raw`: scale x span (linear), scale x span x exp(offset + span x raw) (log).
 * The per-output weight that turns a gradient of the raw outputs into one of the metrics (explain:
 * pass it where a linear inspector's scale went). */
double dp_inspector_metric_slope(const struct dp_inspector *insp, int o, double raw);
const char *dp_inspector_setting(const struct dp_inspector *insp);   /* setting id, or "" */
/* Sets the setting id (NULL: none); DP_ERR_INVALID when longer than 63 characters. */
enum dp_status dp_inspector_set_setting(struct dp_inspector *insp, const char *id);
/* How it was trained, borrowed (owned by insp; the _mut form for trainers to fill in). */
const struct dp_provenance *dp_inspector_provenance(const struct dp_inspector *insp);
struct dp_provenance       *dp_inspector_provenance_mut(struct dp_inspector *insp);
/* A key equal for inspectors whose GNN body is identical (a transferred inspector and its base):
 * embeddings may be shared between them. */
const char *dp_inspector_body_key(const struct dp_inspector *insp);

/* Imports a torch.save(state_dict) checkpoint (dp/torch.h) as an inspector of architecture
 * `arch`: every model parameter must be present with its shape and finite values; the tensors
 * conv_layers.2.* (the published transfer model's never-used extra layer) are skipped, any other
 * unknown tensor fails. Scales 1, provenance origin "imported", data "published". */
enum dp_status dp_inspector_import_torch(const char *path, const struct dp_arch *arch,
                                         struct dp_inspector **out, struct dp_error *err);

/* Predicts: raw outputs and metrics (dp_inspector_metric of each, in the output's unit); raw
 * and metrics may be NULL. Fails (DP_ERR_INVALID, naming the graph and output) when a raw
 * output or a metric is not finite, leaving both arrays untouched. */
enum dp_status dp_inspector_predict(const struct dp_inspector *insp, const struct dp_grouped *g,
                                    float raw[DP_N_OUTPUTS], double metrics[DP_N_OUTPUTS],
                                    struct dp_error *err);

#endif
