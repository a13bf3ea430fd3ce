/* zoo_models.h: the zoo's models (private to engine/src/zoo): each builds its forward graph and
 * loss on the training-graph builder (tfgraph/tfgraph.h) and returns the scalar loss tensor. */
#ifndef DP_ZOO_MODELS_H
#define DP_ZOO_MODELS_H

#include <stdint.h>

#include "tfgraph/tfgraph.h"

int zoo_alexnet(struct zb *b, int64_t input);
int zoo_vgg11(struct zb *b, int64_t input);
int zoo_vgg13(struct zb *b, int64_t input);
int zoo_vgg16(struct zb *b, int64_t input);
int zoo_vgg19(struct zb *b, int64_t input);
int zoo_resnet18(struct zb *b, int64_t input);
int zoo_resnet34(struct zb *b, int64_t input);
int zoo_resnet50(struct zb *b, int64_t input);
int zoo_resnet101(struct zb *b, int64_t input);
int zoo_resnet152(struct zb *b, int64_t input);
int zoo_wide_resnet50_2(struct zb *b, int64_t input);
int zoo_inception3(struct zb *b, int64_t input);
int zoo_googlenet(struct zb *b, int64_t input);
int zoo_mobilenet_v1(struct zb *b, int64_t input);
int zoo_mobilenet_v1_050(struct zb *b, int64_t input);
int zoo_mobilenet_v2(struct zb *b, int64_t input);
int zoo_mobilenet_v2_050(struct zb *b, int64_t input);
int zoo_mobilenet_v2_140(struct zb *b, int64_t input);
int zoo_densenet121(struct zb *b, int64_t input);
int zoo_densenet169(struct zb *b, int64_t input);
int zoo_densenet201(struct zb *b, int64_t input);
int zoo_squeezenet(struct zb *b, int64_t input);
int zoo_squeezenet1_1(struct zb *b, int64_t input);
int zoo_lstm_lm(struct zb *b, int64_t input);
int zoo_lstm_lm_small(struct zb *b, int64_t input);
int zoo_lstm_lm_large(struct zb *b, int64_t input);
int zoo_transformer_base(struct zb *b, int64_t input);
int zoo_transformer_big(struct zb *b, int64_t input);
int zoo_bert_base(struct zb *b, int64_t input);
int zoo_bert_large(struct zb *b, int64_t input);
int zoo_bert_tiny(struct zb *b, int64_t input);
int zoo_bert_mini(struct zb *b, int64_t input);
int zoo_bert_small(struct zb *b, int64_t input);
int zoo_bert_medium(struct zb *b, int64_t input);
int zoo_gpt2_small(struct zb *b, int64_t input);
int zoo_gpt2_medium(struct zb *b, int64_t input);
int zoo_gpt2_large(struct zb *b, int64_t input);
int zoo_distilgpt2(struct zb *b, int64_t input);
int zoo_inception4(struct zb *b, int64_t input);
int zoo_bert_base_squad(struct zb *b, int64_t input);
int zoo_bert_large_squad(struct zb *b, int64_t input);
int zoo_gnmt(struct zb *b, int64_t input);
int zoo_transformer_xl_base(struct zb *b, int64_t input);

#endif
