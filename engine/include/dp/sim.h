/* sim.h: the parameter-server training simulator that stands in for a GPU cluster. Synchronous
 * data parallelism as TensorFlow 1 runs it: variables sharded over the PS by size; each iteration
 * every worker pulls the variables, runs forward and backward (per-op roofline time), pushes its
 * gradients, the PS apply them, a barrier. It emits nvidia-smi-like and /proc/net/dev-like traces
 * per worker and the 12 labels extracted from them. Every result is simulated, never measured. */
#ifndef DP_SIM_H
#define DP_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/settings.h"
#include "dp/trace.h"

/* The simulator's free constants: physical, shared by every model, GPU and row. */
struct dp_sim_constants {
    double eff_matmul;      /* fraction of peak FLOPs reached by conv / matmul kernels */
    double winograd;        /* speed-up of 3x3 stride-1 convolutions (cuDNN's Winograd
                               kernels) over their direct-convolution FLOP count */
    double eff_mem;         /* fraction of memory bandwidth reached by memory-bound kernels */
    double launch_us;       /* per-kernel launch overhead (framework + driver) */
    double net_eff;         /* fraction of a link's line rate a transfer reaches */
    double ps_host_gbps;    /* memory bandwidth a CPU parameter server applies updates at */
    double jitter;          /* straggler jitter: sigma of the log-normal compute-time factor */
    double context_gb;      /* CUDA context + framework reservation per GPU */
};
/* The calibrated defaults (notes/calibration.md). */
void dp_sim_constants_default(struct dp_sim_constants *out);

struct dp_sim_opts {
    int64_t batch;          /* per-worker batch; 0 = the graph's exported batch (else 32) */
    uint64_t seed;          /* straggler jitter; same seed, same result */
    int     iterations;     /* simulated iterations, at least; 0 = 20 (at most 5000 in all) */
    double  sample_ms;      /* trace sample interval; 0 = auto: iteration / 50 clamped to
                               [1, 100] ms, fine enough to resolve the bursts inside one
                               iteration; 100 mimics nvidia-smi -lms 100 */
    bool    want_traces;    /* keep the per-worker traces in the result */
    double  threshold;      /* burst threshold fraction; 0 = DP_TRACE_THRESHOLD */
    double  min_run_ms;     /* simulate at least this long; 0 = 200 sample intervals */
    const struct dp_sim_constants *constants; /* NULL = dp_sim_constants_default; borrowed */
};

/* Fills opts with the defaults above (seed 1). */
void dp_sim_opts_default(struct dp_sim_opts *opts);

struct dp_sim_result {
    double iteration_ms;    /* mean iteration time */
    double throughput;      /* samples/s = batch x workers / iteration */
    double memory_gb;       /* per-worker GPU memory footprint */
    bool   oom;             /* footprint > the GPU's memory */
    double labels[DP_N_OUTPUTS]; /* Driple order: the mean over workers of each one's labels */
    double mean_gpu_util;   /* %, mean over the workers and the whole run */
    double bytes_per_iter;  /* bytes moved over the network (or PCIe) per iteration, all workers */
    /* Breakdown of one iteration (ms): worker 0's compute and wait, the slowest worker's pull
     * and push (network time; they overlap compute), the slowest PS's apply. */
    double compute_ms, pull_ms, push_ms, apply_ms, wait_ms;
    /* Conservation bookkeeping (whole run): */
    double bytes_pushed;    /* by all workers */
    double bytes_received_ps; /* by all PS */
    double bytes_pulled;    /* received by all workers */
    double bytes_sent_ps;   /* by all PS */
    double link_tx_bytes;   /* sent into the network by all NICs (0 inside one machine) */
    double link_rx_bytes;   /* received from the network by all NICs */
    double gflops_per_iter; /* one worker's forward + backward at this batch */
    int64_t batch;          /* the batch used */
    double sample_ms;       /* the trace sample interval used */
    int    n_iterations;    /* iterations simulated */
    double params;          /* parameter count */
    int    n_traces;        /* = workers when want_traces, else 0 */
    struct dp_trace **traces; /* owned by the result */
};

/* Simulates graph g on setting s with GPU gpu (figures from the catalog; unknown fp32 or
 * bandwidth fail with DP_ERR_INVALID naming the GPU; under mixed precision an unknown tensor
 * rate means the fp32 rate, and an fp32 graph's activations take half the bytes). Per-op FLOPs
 * and bytes come from dp_cost_node at the simulated batch; an op it cannot cost but that carries
 * flops/bytes uses those, scaled by batch / exported batch. Ops on a GPU device run on the
 * worker (every op with a kernel when the graph names no device). An OOM setting still gets
 * timings (flagged). Absurd inputs fail with DP_ERR_INVALID rather than give zeros: an
 * iteration time that is not finite and positive, or a trace of fewer than 2 or more than 10^7
 * samples over the workers (sample_ms against the run's length). Fills *out (free with
 * dp_sim_result_free; untouched when s or gpu are refused); thread-safe (no globals). */
enum dp_status dp_simulate(const struct dp_graph *g, const struct dp_setting *s,
                           const struct dp_gpu *gpu, const struct dp_sim_opts *opts,
                           struct dp_sim_result *out, struct dp_error *err);
/* The activation memory of one training step of g at batch `batch`: the peak, over the ops in
 * a topological order (the node order where it is one; a cycle is broken at its lowest node),
 * of the bytes of batch-dimension tensors alive at once (activations and their gradients) plus
 * the running convolution's or matmul's workspace (its largest batch-dimension operand, at most
 * 4 GiB, TF's default cuDNN limit). Counted are the ops that run on the worker (those on a GPU,
 * or all when the graph names no GPU), not initialisers or variables, and tensors from
 * elsewhere that they read (the input batch). A tensor is freed after its last reader, forward
 * or backward; Identity, Reshape, Squeeze, ExpandDims, Snapshot, StopGradient and
 * PreventGradient outputs share their input's buffer; an element-wise op that is the last
 * reader of a same-sized input reuses its buffer (TF's forward_input_or_allocate_output); a
 * fused batch norm's gradient and moving-average update read its statistics, not its output.
 * Element sizes are the graph's dtypes (unknown: 4 bytes). Sets *peak (bytes; 0 for an empty
 * graph); DP_ERR_NOMEM when out of memory. Thread-safe; g is only read. */
enum dp_status dp_sim_activation_bytes(const struct dp_graph *g, int64_t batch, double *peak,
                                       struct dp_error *err);
/* Frees the traces of r (the struct itself is the caller's); NULL-safe. */
void dp_sim_result_free(struct dp_sim_result *r);

#endif
