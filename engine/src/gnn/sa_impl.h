/* sa_impl.h: the layout of struct dp_sa_inspector, shared by sa_inspector.c (head, predict,
 * trainer) and sa_json.c (the driple-sa-inspector/1 file). Private to the engine. */
#ifndef DP_SA_IMPL_H
#define DP_SA_IMPL_H

#include <limits.h>

#include "dp/sa.h"

struct dp_sa_inspector {
    struct dp_inspector *body;         /* owned */
    struct dp_sa_arch    arch;
    int                  n_emb, n_in;  /* n_in = n_emb + profile + setting + cross */
    unsigned             legacy;       /* DP_SA_LEGACY_* bits: a file naming the older inputs
                                          reads them as they were (dp_sa_cross_vector) */
    size_t               per_member;   /* floats per ensemble member */
    float               *w;            /* members x per_member: W1 (n_in x h1), b1, W2 (h1 x h2),
                                          b2, W3 (h2 x DP_SA_N_OUT), b3, row-major */
    double              *in_mean, *in_std; /* n_in each */
    double               out_mean[DP_SA_N_OUT], out_std[DP_SA_N_OUT];
    double               q[DP_SA_N_OUT], s0[DP_SA_N_OUT]; /* interval calibration */
    int                  n_ref;        /* OOD reference points */
    float               *ref;          /* n_ref x (n_emb + DP_PROFILE_N) */
    double               ood_threshold;
    struct dp_sa_provenance prov;
    char                 body_path[PATH_MAX]; /* as dp_sa_load resolved it; "" otherwise */
};

/* dp_sa_burst_vector into burst and dp_sa_place_vector into place (either NULL: skipped) from
 * one closed-form iteration model, which both read. */
void dp_sa_burst_place(const struct dp_profile *p, const struct dp_setting *s,
                       const struct dp_gpu *g, double *burst, double *place);

/* Floats of one member's parameters for these sizes. */
size_t dp_sa_member_floats(int n_in, int h1, int h2);

#endif
