/* optimizer.h: the optimizers a training graph's updates follow (the zoo and the importers
 * build one Apply* op per trainable variable, engine/src/tfgraph/optimizer.c). */
#ifndef DP_OPTIMIZER_H
#define DP_OPTIMIZER_H

#include <stdbool.h>

enum dp_optimizer { DP_OPT_SGD, DP_OPT_MOMENTUM, DP_OPT_ADAM, DP_OPT_COUNT };

/* "sgd" | "momentum" | "adam". */
const char *dp_optimizer_name(enum dp_optimizer o);
/* Parses the names above; false if unknown. */
bool dp_optimizer_parse(const char *s, enum dp_optimizer *out);

#endif
