/* sim.h: the training simulator that stands in for a GPU cluster. Synchronous data
 * parallelism as TensorFlow and PyTorch run it: with parameter servers (variables sharded over
 * the PS by size; each iteration every worker pulls the variables, runs forward and backward,
 * pushes its gradients, the PS apply them, a barrier) or with NCCL all-reduce (PyTorch DDP
 * reduces 25 MB buckets while the backward pass runs; TensorFlow `replicated` after it; then
 * every worker updates its own copy). Per-op GPU time is a roofline on the GPU's CUDA or tensor
 * cores by architecture generation; transfers pay line rate, latency and contention. It emits
 * nvidia-smi-like and /proc/net/dev-like traces per worker and the 12 labels extracted from
 * them. Every result is simulated, never measured. */
#ifndef DP_SIM_H
#define DP_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/settings.h"
#include "dp/systems.h"
#include "dp/trace.h"

/* The simulator's free constants: physical, shared by every model, GPU and row, a few per
 * architecture generation (none per GPU model). notes/calibration.md gives each one's meaning
 * and fit. */
struct dp_sim_constants {
    double eff_cuda;     /* fraction of the FP32 CUDA-core peak conv/matmul kernels reach */
    double eff_tensor;   /* fraction of the tensor-core peak (FP16, TF32) cuDNN's convolutions
                            reach */
    double eff_tensor_mm; /* ... cuBLAS's matrix products (no im2col, no filter transform: a
                             GEMM kernel alone) */
    double gen_scale[DP_GEN_COUNT]; /* both fractions scaled per architecture generation (its
                                       cuDNN / cuBLAS kernels); a generation without a GPU in
                                       the calibration takes the nearest fitted one's */
    double winograd;     /* speed-up of 3x3 stride-1 convolutions on CUDA cores (cuDNN's
                            Winograd kernels, F(2x2, 3x3) to F(4x4, 3x3): 2.25 to 4) over
                            their direct FLOP count */
    double tc_unaligned; /* share of the tensor-core rate an fp16 cuBLAS GEMM reaches when a
                            dimension is not a whole number of 16-byte vectors: its kernel
                            loads element by element (TF32's 4-byte elements: twice the
                            share); never below the CUDA cores' rate */
    double eff_mem;      /* fraction of memory bandwidth memory-bound kernels reach */
    double gap_us;       /* GPU time between two kernels (launch latency, tail) */
    double host_tf_us;   /* host time to dispatch one op: TensorFlow's graph executor */
    double host_pt_us;   /* ... PyTorch's eager dispatcher */
    double fuse_tf;      /* share of the element-wise traffic and launches fused kernels save:
                            TensorFlow (XLA, fused ops) */
    double fuse_pt;      /* ... PyTorch (cuDNN RNN cells, apex/JIT fused layers) */
    double net_eff;      /* fraction of a link's line rate a transfer reaches */
    double ps_host_gbps; /* memory bandwidth of a CPU parameter server's host */
    double jitter;       /* straggler jitter: sigma of the log-normal compute-time factor */
    double context_gb;   /* CUDA context + framework reservation per GPU */
    double decode_ms_mp; /* host CPU time (ms) one core takes per megapixel of an image
                            model's input to decode the JPEG it is cropped from (loader cpu;
                            not fitted: a published decode rate, notes/calibration.md) */
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
    bool    throughput_only; /* timings, throughput and memory only: no traces, no labels
                                (calibration) */
    double  threshold;      /* burst threshold fraction; 0 = DP_TRACE_THRESHOLD */
    double  min_run_ms;     /* simulate at least this long; 0 = 200 sample intervals */
    const struct dp_sim_constants *constants; /* NULL = dp_sim_constants_default; borrowed */
    const struct dp_system *system; /* the machines' systems-catalog entry (the setting's
                                       `system`, looked up by the caller); NULL = a generic
                                       machine of the GPU; borrowed */
};

/* Fills opts with the defaults above (seed 1). */
void dp_sim_opts_default(struct dp_sim_opts *opts);

struct dp_sim_result {
    double iteration_ms;    /* mean time of one synchronised step (accum micro-batches) */
    double throughput;      /* samples/s = samples_per_step / iteration */
    double samples_per_step; /* batch x accum x workers (the global batch) */
    int    accum;           /* micro-batches per synchronised step */
    double tokens_per_s;    /* a sequence model's throughput x its tokens per sample (the
                               width of its integer [batch, tokens] input); 0 otherwise */
    double input_ms;        /* the host CPUs' decode time per step per worker (loader cpu;
                               0: no CPU decoding) */
    bool   input_bound;     /* the step waits for the input pipeline (input_ms sets it) */
    char   notes[1024];     /* what the GPU's blank catalog cells made the simulator estimate or
                               leave out, what precision rule and loader it assumed ("" when
                               nothing) */
    double memory_gb;       /* per-worker GPU memory footprint */
    bool   oom;             /* footprint > the GPU's memory */
    double labels[DP_N_OUTPUTS]; /* Driple order: the mean over workers of each one's labels */
    double mean_gpu_util;   /* %, mean over the workers and the whole run */
    double bytes_per_iter;  /* bytes workers send and receive per iteration, all workers: PS
                               pulls and pushes; all-reduce: 2(N-1)/N x gradient bytes per
                               worker inside a machine (N its GPUs) plus its machine's NIC
                               share, 2(M-1)/M x gradient bytes per machine (M machines) */
    /* Breakdown of one iteration (ms): worker 0's compute and wait, the slowest worker's pull
     * and push (PS: network time; they overlap compute), the slowest PS's apply (PS) or the
     * update on each GPU (all-reduce), the all-reduce of all gradients (its transfers, run in
     * buckets under PyTorch). */
    double compute_ms, pull_ms, push_ms, apply_ms, wait_ms, allreduce_ms;
    /* Conservation bookkeeping (whole run): */
    double bytes_pushed;    /* by all workers */
    double bytes_received_ps; /* by all PS */
    double bytes_pulled;    /* received by all workers */
    double bytes_sent_ps;   /* by all PS */
    double link_tx_bytes;   /* sent into the network by all NICs (0 inside one machine) */
    double link_rx_bytes;   /* received from the network by all NICs */
    double grad_bytes;      /* one worker's gradients as synchronised (4 B per parameter; 2
                               under TensorFlow mixed precision, tf_cnn_benchmarks' compact
                               gradient transfer) */
    double gflops_per_iter; /* one worker's forward + backward at this batch */
    int64_t batch;          /* the batch used */
    double sample_ms;       /* the trace sample interval used */
    int    n_iterations;    /* iterations simulated */
    double params;          /* parameter count */
    int    n_traces;        /* = workers when want_traces, else 0 */
    struct dp_trace **traces; /* owned by the result */
};

/* A graph prepared for simulation at one batch: its worker ops costed (dp_cost_node; an op it
 * cannot cost but that carries flops/bytes uses those, scaled by batch / exported batch), its
 * variables and its activation peak (dp_sim_activation_bytes). Ops on a GPU device run on the
 * worker (every op with a kernel when the graph names no device). batch <= 0: the graph's
 * exported batch (else 32). New workload owned by the caller (dp_sim_workload_free);
 * DP_ERR_INVALID when the graph has no op to simulate, DP_ERR_NOMEM. g is only read and need
 * not outlive the workload. */
struct dp_sim_workload;
enum dp_status dp_sim_workload_init(const struct dp_graph *g, int64_t batch,
                                    struct dp_sim_workload **out, struct dp_error *err);
void dp_sim_workload_free(struct dp_sim_workload *w); /* NULL-safe */

/* What a workload's ops say of its shape beyond its totals, for the setting-aware inspector's
 * profile: the bytes and launches fused kernels save without XLA, and where the parameters fall
 * among the compute, as shares (0-1) of a phase's work (each op's FLOPs at 10 TFLOPS or its bytes
 * at 400 GB/s, the larger): the forward work done before the op that first reads the half-way
 * parameter starts, the parameters the first 1/DP_SIM_CHUNKS of it reads, the backward work done
 * when the op making the half-way gradient ends, the gradients the last 1/DP_SIM_CHUNKS of it
 * makes. The shares are 0 for a workload without parameters. activation_bytes is the
 * workload's dp_sim_activation_bytes (the sweep ran once, in dp_sim_workload_init). */
struct dp_sim_workload_shape {
    double fused_bytes, fused_kernels;
    double fw_param_mid, fw_param_head, bw_grad_mid, bw_grad_tail;
    double activation_bytes;
};
void dp_sim_workload_shape(const struct dp_sim_workload *w, struct dp_sim_workload_shape *out);

/* Simulates workload w on setting s with GPU gpu (catalog figures for one board, split over
 * its devices; unknown fp32 or bandwidth fail with DP_ERR_INVALID naming the GPU; an unknown
 * tensor rate is estimated from the generation and an unknown SM count, PCIe generation or
 * NVLink leave their effect out: result.notes says which; NVLink on a GPU without it fails).
 * Mixed precision on an fp32 graph halves its activation bytes. opts->batch is ignored (the
 * workload's). An OOM setting still gets timings (flagged). Absurd inputs fail with
 * DP_ERR_INVALID rather than give zeros: an iteration time that is not finite and positive,
 * or a trace of fewer than 2 or more than 10^7 samples over the workers (sample_ms against the
 * run's length). Fills *out (free with dp_sim_result_free; untouched when s or gpu are
 * refused); thread-safe (no globals). */
enum dp_status dp_simulate_workload(const struct dp_sim_workload *w, const struct dp_setting *s,
                                    const struct dp_gpu *gpu, const struct dp_sim_opts *opts,
                                    struct dp_sim_result *out, struct dp_error *err);
/* The per-worker GPU memory footprint of workload w on setting s (dp_sim_result.memory_gb and
 * .oom), which needs no speed figure: a GPU without a known FP32 rate or bandwidth gets it too.
 * k NULL: the defaults. DP_ERR_INVALID for an invalid setting, DP_ERR_NOMEM. */
enum dp_status dp_sim_memory(const struct dp_sim_workload *w, const struct dp_setting *s,
                             const struct dp_gpu *gpu, const struct dp_sim_constants *k,
                             double *memory_gb, bool *oom, struct dp_error *err);
/* dp_sim_workload_init of g at opts->batch, then dp_simulate_workload. */
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
/* The share of a GPU's FP16 tensor-core rate that convolutions run at on setting s: 1 under
 * mixed, bf16 and fp8 (whose convolutions run in bf16), 0.5 on TF32 (precision tf32, or fp32
 * where dp_setting_tf32_conv says so: Ampere and later), 0 otherwise (the FP32 CUDA cores).
 * gen: dp_gpu_generation. Matrix products follow dp_setting_tf32_matmul and run fp8 GEMMs at
 * twice the rate. */
double dp_sim_tensor_share(enum dp_gpu_gen gen, const struct dp_setting *s);
/* One direction of the link, GB/s, that a worker of GPU g moves its transfers over first on
 * network n: NVLink: half of the GPU's NVLink figure (both directions); PCIe (and NVLink on a
 * GPU without it): a x16 link of its PCIe generation (3.0 when unknown); any other network: its
 * NIC rate (dp_network_bandwidth_gbps). */
double dp_sim_link_gbps(const struct dp_gpu *g, enum dp_network n);
/* PyTorch DDP's gradient buckets as the simulator fills them: 25 MB (bucket_cap_mb), the first
 * one 1 MB. */
#define DP_SIM_DDP_BUCKET_BYTES       (25.0 * 1048576)
#define DP_SIM_DDP_FIRST_BUCKET_BYTES 1048576.0
/* The most chunks the simulator compresses a compute phase into: under PS, the most pieces
 * whose gradients join the push queue. */
#define DP_SIM_CHUNKS 64
/* The bytes one worker of setting s moves per iteration to synchronise `params` parameters, by
 * the sync in use (the one formula predict, compare, the explorer and the simulator share):
 * parameter servers: every variable pulled and every gradient pushed, fp32 on the wire,
 * 2 x params x 4 B (the simulator counts only the shards that cross a link); all-reduce: NCCL's
 * ring, or its tree where s->ar_algo names it (sim_allreduce_traffic: the ring's 2(n-1)/n x B
 * from every rank, the tree's edges up and down), over n workers in machines of
 * dp_setting_gpus_per_machine(s): the bytes over the links inside its machine plus its share of
 * its machine's NIC traffic, with B the gradient bytes (2 a parameter under TensorFlow's mixed
 * precision, else 4). DP_AR_AUTO counts the ring (the simulator may take the tree across
 * machines, where the GPU's links make it faster: its bytes_per_iter says what it took). 0 for
 * one worker; NaN when params is not a finite count or s has no workers. */
double dp_sync_bytes_per_iter(const struct dp_setting *s, double params);
/* A cluster's fabric as NCCL's collectives see it, at the achieved rates (the constants' net_eff
 * share of each link's line rate). */
struct dp_sim_fabric {
    int    gpus_per_machine; /* worker GPUs in one machine (the setting's layout) */
    int    machines;         /* machines holding workers */
    double intra_gbps;       /* per GPU, one direction, inside a machine: its NVLink (SXM, or a
                                bridged pair of PCIe cards) or its PCIe link */
    double intra_lat_us;     /* one step's latency inside a machine */
    double inter_gbps;       /* per GPU, one direction, across machines: its share of its
                                machine's NICs (NIC rate x NICs / GPUs per machine); 0 on a
                                setting of one machine */
    double inter_lat_us;     /* one step's latency across machines; 0 on one machine */
};
/* The fabric of setting s with GPU g in machines of system sys (its GPUs per machine are the
 * setting's; sys NULL: a generic machine of g: NVLink between SXM modules or a bridged pair of
 * PCIe cards, else PCIe, and one NIC of s's network per machine) under constants k (NULL: the
 * defaults). Inside: sys's fabric (half its per-GPU figure each way; unknown: g's own NVLink or
 * PCIe); across: sys's NICs (nics x its network's rate over the GPUs per machine). Only g's
 * link figures are read, none of its speeds. */
void dp_sim_fabric(const struct dp_setting *s, const struct dp_gpu *g,
                   const struct dp_system *sys, const struct dp_sim_constants *k,
                   struct dp_sim_fabric *out);
enum dp_collective {
    DP_COLL_ALLREDUCE, DP_COLL_REDUCE_SCATTER, DP_COLL_ALLGATHER, DP_COLL_ALLTOALL,
    DP_COLL_SENDRECV
};
/* The time (ms) of one NCCL collective on fabric f, as NCCL's cost model (tuning.cc) takes it.
 * bytes = the full buffer per rank (an all-reduce's or all-gather's whole output, an
 * all-to-all's whole send buffer, a send's message); a group of `ranks` laid out
 * ranks_per_machine per machine (a TP group inside a machine: ranks_per_machine == ranks; a
 * pipeline's send to the next stage on another machine: ranks 2, ranks_per_machine 1). Its bus
 * bandwidth B per rank: f's intra_gbps on one machine, else min(intra_gbps, ranks_per_machine x
 * inter_gbps) (the NICs its GPUs share). With n ranks over m machines:
 *   all-reduce, ring: 2(n-1)/n x bytes / B + (2(n-1) - 2(m-1)) x intra_lat + 2(m-1) x inter_lat;
 *   all-reduce, tree (a chain in each machine, a double binary tree across): 2 x bytes / (B x
 *     0.92 when m > 1) + 2 x ((ranks_per_machine-1) x intra_lat + ceil(log2 m) x inter_lat);
 *     DP_AR_AUTO: the ring on one machine, else the faster of the two;
 *   reduce-scatter, all-gather (rings; algo ignored): (n-1)/n x bytes / B + (n-1-(m-1)) x
 *     intra_lat + (m-1) x inter_lat;
 *   all-to-all: the larger of (ranks_per_machine-1)/n x bytes / intra_gbps and, on m > 1,
 *     (n-ranks_per_machine)/n x bytes / inter_gbps, plus one latency (inter_lat on m > 1);
 *   send/receive: bytes / intra_gbps + intra_lat in one machine, else bytes / inter_gbps +
 *     inter_lat.
 * 0 for fewer than 2 ranks or no bytes; -1 when the call is impossible: ranks_per_machine < 1 or
 * > ranks, or a group over several machines on a fabric without a network between them. */
double dp_sim_collective_ms(const struct dp_sim_fabric *f, enum dp_collective op,
                            enum dp_allreduce_algo algo, double bytes, int ranks,
                            int ranks_per_machine);
/* The time (ms) the simulator takes for NCCL's all-reduce of `bytes` per worker over all the
 * workers of setting s with GPU g and constants k: dp_sim_collective_ms on dp_sim_fabric with
 * NCCL's automatic choice; 0 with one worker or no bytes. Needs only g's link figures, none of
 * its speeds; machines < 1 read as 1. */
double dp_sim_allreduce_ms(const struct dp_setting *s, const struct dp_gpu *g,
                           const struct dp_sim_constants *k, double bytes);
/* The share of a graph's bytes (per-op traffic, activations) that a run on setting s moves: 0.5
 * for a graph in fp32 (graph_f16 false: dp_graph_f16) run under mixed, bf16 or fp8 precision,
 * whose activations are 16-bit; 1 otherwise. */
double dp_sim_byte_scale(bool graph_f16, const struct dp_setting *s);
/* Frees the traces of r (the struct itself is the caller's); NULL-safe. */
void dp_sim_result_free(struct dp_sim_result *r);

#endif
