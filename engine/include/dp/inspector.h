/* inspector.h: an inspector = a model plus what it predicts for ("driple-inspector/1"): named
 * outputs with units and label scales (prediction = raw x scale), the setting it was trained
 * for, and how (from scratch, or transferred from which base; epochs; validation and test error
 * per output). A transferred inspector file may store only the parameters that differ from its
 * base and name the base file; loading resolves it relative to the file's directory. */
#ifndef DP_INSPECTOR_H
#define DP_INSPECTOR_H

#include "dp/model.h"

struct dp_output_meta {
    char   name[32];  /* "gpu_util.active" */
    char   unit[16];  /* "ms", "%", "MB/s" */
    double scale;     /* training-label maximum; 1 for an imported checkpoint */
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
 * (dp_output_names, units, scale 1), no setting and provenance "scratch". */
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
void dp_inspector_free(struct dp_inspector *insp);

const struct dp_model *dp_inspector_model(const struct dp_inspector *insp);
struct dp_model       *dp_inspector_model_mut(struct dp_inspector *insp);
const struct dp_output_meta *dp_inspector_output(const struct dp_inspector *insp, int o);
void        dp_inspector_set_scale(struct dp_inspector *insp, int o, double scale);
const char *dp_inspector_setting(const struct dp_inspector *insp);   /* setting id, or "" */
enum dp_status dp_inspector_set_setting(struct dp_inspector *insp, const char *id);
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

/* Predicts: raw outputs and scaled metrics (raw x scale, in the output's unit). */
enum dp_status dp_inspector_predict(const struct dp_inspector *insp, const struct dp_grouped *g,
                                    float raw[DP_N_OUTPUTS], double metrics[DP_N_OUTPUTS],
                                    struct dp_error *err);

#endif
