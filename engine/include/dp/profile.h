/* profile.h: a training graph summed up in a few whole-graph numbers at a batch size: the work
 * and memory traffic of one training step per op class, the parameters, the activation memory
 * and the op counts. The setting-aware inspector's head reads them (log-scaled, dp_profile_vector)
 * beside the GNN's embedding: totals are what carries over to an architecture no inspector saw,
 * where the coarsened graph's shape alone does not. */
#ifndef DP_PROFILE_H
#define DP_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/ops.h"
#include "dp/status.h"

struct dp_profile {
    int64_t batch;
    /* Per training step at the batch, over the ops preprocessing keeps as GPU ops (init-phase
     * ops excluded), per op class (dp/ops.h): FLOPs and bytes moved (dp_cost_node). */
    double flops[DP_OPCLASS_COUNT];
    double bytes[DP_OPCLASS_COUNT];
    double winograd_flops;   /* matmul-class FLOPs of 3x3 stride-1 convolutions */
    double params;           /* parameters of the variables (trainable or not) */
    double param_bytes;      /* their bytes at their dtypes (4 when unknown) */
    double activation_bytes; /* dp_sim_activation_bytes at the batch */
    double n_ops;            /* GPU ops */
    double n_kernels;        /* GPU ops with a kernel (class other than none) */
    double n_variables;
    /* The simulator's workload at the batch (dp_sim_workload_shape; 0 when it has no op to
     * simulate): what its fused kernels save without XLA, and where the parameters fall among
     * the compute, as shares (0-1) of a phase's work, which decides how the PS pull and push
     * or the DDP buckets overlap it (0 for a graph without parameters). */
    double fused_bytes;   /* the bytes saved, at the graph's dtypes */
    double fused_kernels; /* the launches saved (the ops taken in) */
    double fw_param_mid;  /* forward work done before half the parameters are first read */
    double fw_param_head; /* share of the parameters the first 1/DP_SIM_CHUNKS of it reads */
    double bw_grad_mid;   /* backward work done when half the gradients are made */
    double bw_grad_tail;  /* share of the gradients the last 1/DP_SIM_CHUNKS of it makes */
    bool f16; /* the graph computes in fp16 (dp_graph_f16): its bytes are at half precision */
};

/* Profiles g at `batch` (<= 0: the graph's exported batch, else 32). DP_ERR_NOMEM only (the
 * simulator's workload and the activation sweep's scratch). */
enum dp_status dp_profile_graph(const struct dp_graph *g, int64_t batch, struct dp_profile *out,
                                struct dp_error *err);
/* The same from g's workload at that batch (dp_sim_workload_init, still the caller's), which a
 * caller simulating g anyway has built: its fusion, placement and activation peak are read, not
 * computed again. w NULL: as dp_profile_graph. */
struct dp_sim_workload;
enum dp_status dp_profile_graph_workload(const struct dp_graph *g, int64_t batch,
                                         const struct dp_sim_workload *w, struct dp_profile *out,
                                         struct dp_error *err);

/* The profile as the head reads it: DP_PROFILE_N numbers, each log1p of a field above (FLOPs in
 * GFLOP, bytes in MB, parameters in millions, the batch as is), the fusion and placement
 * fields apart (dp_sa_place_vector reads them). */
#define DP_PROFILE_N (2 * DP_OPCLASS_COUNT + 9)
extern const char *const dp_profile_names[DP_PROFILE_N]; /* "batch", "flops.matmul", ... */
void dp_profile_vector(const struct dp_profile *p, double v[DP_PROFILE_N]);

#endif
