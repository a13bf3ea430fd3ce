/* gen_impl.h: the architecture generator's builders, one per kind (gen_cnn.c, gen_seq.c), called
 * by dp_gen_build (gen.c). Each builds the forward graph and loss of its description through the
 * zoo's builder and returns the scalar loss tensor (-1 once the builder failed). */
#ifndef DP_GEN_IMPL_H
#define DP_GEN_IMPL_H

#include "dp/zoo_gen.h"
#include "zoo/zoo_layers.h"

int zoo_gen_cnn(struct zb *b, const struct dp_gen_cnn *c);
int zoo_gen_transformer(struct zb *b, const struct dp_gen_transformer *t);
int zoo_gen_rnn(struct zb *b, const struct dp_gen_rnn *r);
int zoo_gen_mlp(struct zb *b, const struct dp_gen_mlp *m);
int zoo_gen_mixer(struct zb *b, const struct dp_gen_mixer *m);

#endif
