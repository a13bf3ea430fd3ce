/* model_tape.h: the inspector network composed from autograd-tape ops (nn.h), for every layer
 * type: the cross-check of the fast engine (model_fast.c), which runs them all. One graph per
 * tape. */
#ifndef DP_MODEL_TAPE_H
#define DP_MODEL_TAPE_H

#include "dp/model.h"

/* Forward of one graph on the tape: emb (2H) and/or out (n_out), either may be NULL. */
enum dp_status dp_tape_predict(const struct dp_model *m, const struct dp_grouped *g, float *emb,
                               float *out, struct dp_error *err);
/* d(sum w . out)/d transformed features (n x n_feat) into dx; out gets the outputs. */
enum dp_status dp_tape_input_grad(const struct dp_model *m, const struct dp_grouped *g,
                                  const float *w, float *dx, float *out, struct dp_error *err);
/* Forward and backward of sum(dout . out) for one graph: adds parameter gradients into grads[i]
 * (NULL entries skipped); out gets the outputs. With dout NULL, dout = scale (out - target) is
 * taken from the forward's outputs (the MSE gradient), in one pass. */
enum dp_status dp_tape_grad(const struct dp_model *m, const struct dp_grouped *g, float *out,
                            const float *dout, const float *target, float scale,
                            float *const *grads, struct dp_error *err);

#endif
