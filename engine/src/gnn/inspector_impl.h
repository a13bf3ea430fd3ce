/* inspector_impl.h: the layout of struct dp_inspector, shared by inspector.c (metadata,
 * predict) and inspector_json.c (the driple-inspector/1 file). Private to the engine. */
#ifndef DP_INSPECTOR_IMPL_H
#define DP_INSPECTOR_IMPL_H

#include <stdbool.h>

#include "dp/inspector.h"

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

#endif
