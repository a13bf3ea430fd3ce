/* inspector_impl.h: the layout of struct dp_inspector, shared by inspector.c (metadata,
 * predict) and inspector_json.c (the driple-inspector/1 file). Private to the engine. */
#ifndef DP_INSPECTOR_IMPL_H
#define DP_INSPECTOR_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/inspector.h"

struct cJSON;

struct dp_inspector {
    struct dp_model      *model;
    struct dp_output_meta out[DP_N_OUTPUTS];
    char                  setting[64];
    struct dp_provenance  prov;
    char                  body_key[40];
    bool                  key_stale;
};

/* Recomputes the body key (a hash of the architecture and every parameter outside the head). */
void dp_inspector_refresh_key(struct dp_inspector *insp);
/* Whether parameter i of m belongs to the MLP head ("graph_read_out.mlp.*"). */
bool dp_param_is_head(const char *name);

/* What inspector files share with the setting-aware inspector's (sa_json.c) and sweeps
 * (train/sweep_json.c): n floats as little-endian float32 in base64 (the caller frees; NULL when
 * out of memory), and back: member key of o (JSON path `path` in file `name`) into out, exactly
 * n values; DP_ERR_PARSE naming name:path.key and the first bad character when it does not hold
 * n floats in base64, DP_ERR_NOMEM, or dp_json_get_string's failure (missing, not a string). */
char *dp_b64_floats(const float *v, size_t n);
enum dp_status dp_json_get_b64_floats(const struct cJSON *o, const char *key, size_t n,
                                      const char *name, const char *path, float *out,
                                      struct dp_error *err);
/* rel resolved against the directory of `from` (kept when absolute); "" when it does not fit. */
void dp_path_resolve(const char *from, const char *rel, char *buf, size_t n);
/* The path of target relative to from's directory (both must exist); false when not. */
bool dp_path_relative(const char *from, const char *target, char *buf, size_t n);

#endif
