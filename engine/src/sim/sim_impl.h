/* sim_impl.h: the simulator's private parts, shared by its files: the workload (a graph's ops
 * costed at one batch), the device (a catalog GPU as one worker sees it), per-phase compute
 * profiles (sim_compute.c), the network (sim_network.c: parameter-server flows, NCCL
 * all-reduce), the per-iteration timeline and its trace sampling (sim_trace.c) and the memory
 * footprint (sim_memory.c). */
#ifndef DP_SIM_IMPL_H
#define DP_SIM_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/cost.h"
#include "dp/sim.h"

#define BYTES_PER_MS(gbps) ((gbps) * 1e6) /* GB/s -> bytes per ms */

/* What a worker runs per step, costed at the workload's batch: one convolution or matmul, or a
 * run of consecutive memory-bound ops (element-wise, reductions, copies: on every GPU their
 * FLOPs per byte sit far below the GPU's, so their time is their bytes over the bandwidth). */
struct sim_op {
    double flops;        /* conv/matmul: its FLOPs; a run: 0 */
    double bytes;        /* at the graph's dtypes (a run: its ops' sum) */
    double fused;        /* bytes a fused kernel saves: element-wise ops, softmaxes and row
                            reductions reading an element-wise op's or a softmax's output that
                            only such ops read (recomputed in each of them) */
    double launches;     /* kernels: 1, or a run's ops */
    double absorbed;     /* of a run's ops, those a fused kernel takes in (an element-wise op
                            or softmax whose readers all fuse) */
    double fused_xla, absorbed_xla; /* the same under XLA, whose fusions take in batch norms
                                       too (fuse_role) */
    double m, n;         /* conv/matmul as a GEMM, rows x columns (wave quantisation) */
    double chan, width;  /* conv/matmul: the channels (a matmul: the elements) each product
                            reduces over, and its output's last dimension */
    double pneed;        /* forward: parameters first read here; backward: gradients made here */
    double wino_bytes;   /* a Winograd-eligible convolution: the traffic of its transformed
                            tensors when cuDNN runs it that way (wino_traffic) */
    unsigned char mm;    /* a convolution or matmul */
    unsigned char back;  /* in the backward pass */
    unsigned char wino;  /* a 3x3 stride-1 convolution (cuDNN's Winograd on CUDA cores) */
    unsigned char tc;    /* tensor cores can run it (reduction and output widths >= 8) */
    unsigned char blas;  /* a matmul (cuBLAS, which pads no dimension; a convolution: cuDNN) */
    unsigned char batched; /* a matmul of 4-D operands (attention's per-head products), not a
                              layer's weights */
};

struct dp_sim_workload {
    char           name[128]; /* the graph's */
    int64_t        batch;
    int            n_ops, n_fw;
    struct sim_op *ops;       /* the n_fw forward records, then the backward ones, each in
                                 graph order */
    int            n_vars;
    double        *vars;      /* parameters per variable, largest first */
    double         params;
    int            slots;     /* optimizer slots per parameter (Momentum 1, Adam 2, ...) */
    double         act_bytes; /* activation peak of the liveness sweep, at the graph's dtypes */
    double         act_fused; /* the same with element-wise chains fused (sim_activation_fused) */
    bool           graph_f16; /* the graph computes in fp16 (a mixed-precision export) */
    double         seq_len;   /* a sequence model's tokens per sample (its integer [batch,
                                 tokens] input's width); 0: not one */
    double         image_px;  /* an image model's input pixels per sample (its [batch, h, w,
                                 3] or [batch, 3, h, w] input); 0: not one */
    double         gflops;    /* forward + backward, one worker */
};

/* A GPU as one worker sees it (one device of a multi-device board), with what was estimated. */
struct sim_device {
    enum dp_gpu_gen gen;
    double fp32;       /* FP32 FLOPs per ms it sustains (its clock, the lanes it issues to) */
    double tensor16;   /* dense FP16 tensor-core FLOPs per ms (FP32 accumulate); 0: none */
    double bw;         /* memory bytes per ms */
    double memory_gb;  /* NaN: unknown */
    int    sms;        /* 0: unknown (no wave quantisation) */
    double nvlink;     /* NVLink bytes per ms per direction; 0: none */
    double pcie;       /* PCIe bytes per ms per direction */
    enum dp_form_factor form;
    char   notes[512]; /* what was estimated or left out, for the result */
};

/* The device of gpu (DP_ERR_INVALID naming what the simulator needs and the catalog lacks). */
enum dp_status sim_device_init(const struct dp_gpu *gpu, struct sim_device *d,
                               struct dp_error *err);
/* Only d's links and form factor, which need no speed figure (sim_device_init sets them too). */
void sim_device_links(const struct dp_gpu *gpu, struct sim_device *d);

/* --- compute: per-op times compressed into phases --- */
#define SIM_CHUNKS DP_SIM_CHUNKS
struct chunk {
    double t, k, m; /* slot, kernel-busy and memory-busy time (ms) */
    double frac;    /* forward: cumulative share of the pulled bytes needed by the end of the
                       chunk; backward: share of the gradient bytes produced in it */
};
struct phase_prof {
    int          n;
    double       total; /* sum of t */
    struct chunk c[SIM_CHUNKS];
};
/* Forward and backward profiles of w on device d under setting s (precision, framework) and
 * constants k, and the optimizer update's time on the GPU (ms). DP_ERR_NOMEM only. */
enum dp_status sim_compute(const struct dp_sim_workload *w, const struct sim_device *d,
                           const struct dp_setting *s, const struct dp_sim_constants *k,
                           struct phase_prof *fw, struct phase_prof *bw, double *update_ms,
                           struct dp_error *err);

/* The device and compute profiles of a workload under a setting: what sim_run needs besides
 * the synchronisation; depends on the GPU, precision and framework, not on the cluster. */
struct sim_profiles {
    struct sim_device dev;
    struct phase_prof fw, bw;
    double            update_ms;
};
/* The input pipeline of w on setting s (machines of system sys, NULL: none): *cpu_ms the host
 * CPUs' decode time per synchronised step per worker (loader cpu: the machine's images over
 * its cores; 0 when synthetic, DALI, not an image model or the cores unknown), *gpu_ms the
 * GPU's per micro-batch (DALI: the decoded images' traffic). Appends what it assumed to notes
 * (n bytes). */
void sim_input(const struct dp_sim_workload *w, const struct dp_setting *s,
               const struct dp_system *sys, const struct sim_device *d,
               const struct dp_sim_constants *k, double *cpu_ms, double *gpu_ms, char *notes,
               size_t n);
/* Appends to notes (n bytes) what s's precision ran as on generation gen: the TF32 rule's
 * outcome (dp_setting_describe_tf32) where fp32 work is left, fp8's split. */
void sim_precision_notes(const struct dp_setting *s, enum dp_gpu_gen gen, char *notes, size_t n);
/* Whether s all-reduces or pushes fp16 gradients: TensorFlow's mixed and bf16 precision
 * (tf_cnn_benchmarks' compact gradient transfer); PyTorch's AMP keeps fp32 gradients. */
bool sim_f16_gradients(const struct dp_setting *s);
/* The share of the FP16 tensor-core rate s's cuBLAS matrix products run at (fp8 on a layer's
 * weights: twice it, Transformer Engine's fp8 GEMMs; batched: attention's products, bf16);
 * dp_sim_tensor_share for convolutions. */
double sim_matmul_share(enum dp_gpu_gen gen, const struct dp_setting *s, bool batched);
enum dp_status sim_profiles_init(const struct dp_sim_workload *w, const struct dp_setting *s,
                                 const struct dp_gpu *gpu, const struct dp_sim_constants *k,
                                 struct sim_profiles *p, struct dp_error *err);
/* dp_simulate_workload with the profiles made (s already checked; opts->constants must be
 * those of the profiles). */
enum dp_status sim_run(const struct dp_sim_workload *w, const struct dp_setting *s,
                       const struct dp_gpu *gpu, const struct dp_sim_opts *opts,
                       const struct sim_profiles *prof, struct dp_sim_result *out,
                       struct dp_error *err);

/* --- network --- */
/* Parameter-server flows over per-GPU links, per-machine NICs and the PS hosts. */
struct sim_ps {
    int     n_workers, n_ps, n_machines, stride;
    int    *worker_machine, *ps_machine;
    double *load; /* [kind][max(workers, machines)] */
    double  cap[5];
};
enum dp_status sim_ps_init(const struct dp_setting *s, const struct sim_device *d,
                           const struct dp_sim_constants *k, struct sim_ps *n);
void sim_ps_free(struct sim_ps *n);
/* Loads every flow of one phase (pull: PS -> workers), then each worker's completion time (ms,
 * without latency), bytes over its link and bytes through its machine's NIC. */
void sim_ps_phase(const struct dp_setting *s, struct sim_ps *n, const double *shard, bool pull,
                  double *t, double *bytes, double *nic_bytes);
/* Bytes sent into the network by all NICs in the last phase. */
double sim_ps_nic_total(const struct sim_ps *n);
/* True when the flow between worker w and PS p crosses any link. */
bool sim_ps_crosses(const struct dp_setting *s, const struct sim_ps *n, int w, int p);

/* NCCL's collectives (sim_collective.c). dp_sim_fabric of setting s on device d. */
void sim_fabric_of(const struct dp_setting *s, const struct sim_device *d,
                   const struct dp_system *sys, const struct dp_sim_constants *k,
                   struct dp_sim_fabric *f);
/* dp_sim_collective_ms's all-reduce, and the algorithm it took (*used, may be NULL). */
double sim_allreduce_algo_ms(const struct dp_sim_fabric *f, enum dp_allreduce_algo algo,
                             double bytes, int ranks, int rpm, enum dp_allreduce_algo *used);
/* The bytes an all-reduce of `bytes` over `ranks` (rpm per machine) by algorithm `used` moves:
 * per rank over the links inside its machine (on average), per machine through its NICs.
 * Ring: 2(n-1)/n x bytes from every rank, (rpm-1)/rpm of it inside, one machine's NICs 2(n-1)/n
 * x bytes; tree: each of the n-1 edges of the spanning tree carries bytes up and down, m-1 of
 * them across machines. Either way 2(n-1) x bytes in all. */
void sim_allreduce_traffic(enum dp_allreduce_algo used, double bytes, int ranks, int rpm,
                           double *intra_bytes, double *nic_bytes);

/* --- the iteration timeline and the traces --- */
struct span {
    double a, b;   /* ms from the iteration start */
    double rx, tx; /* bytes per ms over the span */
};
#define SIM_MAX_SPANS (SIM_CHUNKS + 2)
struct iter_state {
    struct phase_prof fw, bw;
    double  update_ms;         /* on the worker GPU after the gradients are synchronised */
    bool    allreduce;
    /* PS: per worker pull / push times (ms, a round trip included), bytes, NIC bytes */
    double  lat2;
    double *P, *Q, *pb, *qb, *pnic, *qnic;
    /* all-reduce: buckets (bytes, the backward chunk that fills each, the collective's time
     * and the bytes each machine's NIC sends for it), per iteration their start and end */
    int     n_buckets;
    double  bucket_bytes[SIM_CHUNKS], bucket_ms[SIM_CHUNKS], bucket_nic[SIM_CHUNKS];
    int     bucket_chunk[SIM_CHUNKS];
    double *ar_start, *ar_end; /* [iteration][bucket] */
    double *jit;               /* [iteration][column] compute factor */
    double *T;                 /* iteration start times, n_iter + 1 */
    int     n_iter, n_workers;
    /* the workers simulated one by one: n_rep representatives (rep[r], worker 0 first) and,
     * when the cluster has more workers, a straggler column standing for the rest, on the
     * schedule of worker `worst` (PS: the one whose iteration ends last) */
    int     n_rep, n_cols, *rep, worst;
    /* gradient accumulation: between the first micro-batch's forward pass and the last one's
     * backward pass, the other micro-batches' compute (and DALI's decoding), at a compute
     * factor of 1: slot, kernel-busy and memory-busy time */
    double  mid_t, mid_k, mid_m;
    double  act_bytes, base_bytes; /* memory: activations at their peak, the rest */
};
struct timeline {
    double      j;
    double      fs[SIM_CHUNKS], fend; /* forward chunk starts; end of the forward phase */
    double      ms;                   /* start of the accumulated micro-batches (ends at ms +
                                         j x mid_t, where the backward pass starts) */
    double      bs[SIM_CHUNKS], bend; /* backward chunk starts; end of the compute */
    int         n_spans;
    struct span sp[SIM_MAX_SPANS];    /* network traffic */
    double      us, ue;               /* the update on the worker GPU */
    double      end;                  /* done with its part of the iteration */
};
/* The accumulated micro-batches of a step of `accum` (>= 1) and extra_ms of GPU work per
 * micro-batch (DALI), from st's phases. */
void sim_accumulate(struct iter_state *st, int accum, double extra_ms);
/* Worker w's timeline in iteration q at compute factor j (relative to the iteration start). */
void sim_timeline(const struct iter_state *st, int w, int q, double j, struct timeline *tl);
/* Samples representative r's trace over the whole run: n_samples intervals of dt ms; *busy_total gets
 * its kernel-busy time. */
enum dp_status sim_sample_worker(const struct iter_state *st, int r, double dt, int n_samples,
                                 struct dp_trace *tr, double *busy_total, struct dp_error *err);

/* --- memory --- */
/* A read of node src by node dst that does not read src's (first) output: a fused batch norm's
 * gradient and its moving-average update read its per-channel statistics (outputs 1 to 4,
 * which the graph does not size), not the normalised tensor. dst_has_batch:
 * sim_has_batch_dim(dst). */
bool sim_reads_stats_only(const struct dp_node *src, const struct dp_node *dst,
                          bool dst_has_batch);
/* Whether n's shape has the batch dimension. */
bool sim_has_batch_dim(const struct dp_node *n);
/* dp_sim_activation_bytes with the element-wise ops of the forward pass whose forward readers
 * are all element-wise fused into their consumers' kernels: not kept, recomputed for the
 * backward pass from the fused kernel's inputs, which stay alive instead. */
enum dp_status sim_activation_fused(const struct dp_graph *g, int64_t batch, double *peak,
                                    struct dp_error *err);
/* One worker's memory: *act the activations at their peak (the framework's fused share of the
 * fused sweep, mixed precision halving an fp32 graph's), *base the rest: the CUDA context,
 * weights (fp16 copies under mixed precision), gradients, optimizer slots where the update runs
 * on the worker (shard: the PS shards' bytes). */
void sim_footprint(const struct dp_sim_workload *w, const struct dp_setting *s,
                   const struct dp_sim_constants *k, const double *shard, int n_ps,
                   double *act, double *base);

#endif
