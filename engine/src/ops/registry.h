/* registry.h: the op registry's rows (private to engine/src/ops): cost.c reads an op type's cost
 * rule and per-element FLOPs from the same row that gives its class and flags (dp/ops.h). */
#ifndef DP_OPS_REGISTRY_H
#define DP_OPS_REGISTRY_H

#include "dp/ops.h"

/* How an op's FLOPs follow from its shapes (dp_cost_node). */
enum op_rule {
    RULE_PER_ELEM,        /* per_elem x output elements */
    RULE_CONV,            /* 2 x |y| x kh x kw x cin/groups (filter [kh, kw, cin/g, cout]) */
    RULE_CONV_BP_INPUT,   /* the same with dy = input 2 */
    RULE_CONV_BP_FILTER,  /* 2 x |dy| x (the filter it outputs: kh x kw x cin/g) */
    RULE_DWCONV,          /* 2 x |y| x kh x kw */
    RULE_DWCONV_BP_INPUT,
    RULE_DWCONV_BP_FILTER,
    RULE_MATMUL,          /* 2 x |A| x N (or 2 x |B| x M when A is broadcast) */
    RULE_POOL,            /* |y| x window (attr ksize) */
    RULE_MAXPOOL_GRAD,    /* |dy = input 2| x window */
    RULE_AVGPOOL_GRAD,    /* |dy = input 1| x window */
    RULE_XENT,            /* 6 x |logits| */
    RULE_REDUCE,          /* |input 0| */
    RULE_ADDN,            /* |y| x (inputs - 1) */
    RULE_BN_GRAD,         /* 12 x |x = input 1| */
    RULE_EINSUM,          /* 2 x the product of every subscript's size (attr equation) */
};

enum {
    OPF_VARIABLE = 1u << 0,
    OPF_CONST    = 1u << 1,
    OPF_ALIAS    = 1u << 2,
    OPF_PIPELINE = 1u << 3, /* an input-pipeline output (the batch is its first dimension) */
    OPF_UPDATE   = 1u << 4,
    OPF_READS_MORE = 1u << 5,
    OPF_WINOGRAD = 1u << 6, /* a convolution cuDNN may run with Winograd when 3x3, stride 1 */
};

struct op_def {
    const char      *op;
    enum dp_op_class cls;
    enum op_rule     rule;
    float            per_elem; /* FLOPs per output element (RULE_PER_ELEM) */
    unsigned         flags;
    int              slots;    /* optimizer slots per variable */
    enum dp_op_grad  grad;     /* the gradient builder's rule (dp_op_grad) */
    const char      *copy_grad; /* a copy's gradient op (dp_op_copy_grad), NULL when none */
};

/* The row of op type `op`, or NULL when the registry does not list it. */
const struct op_def *ops_find(const char *op);

#endif
