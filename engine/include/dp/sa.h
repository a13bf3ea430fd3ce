/* sa.h: the setting-aware inspector: one model for every point of the what-if space. Its GNN
 * body reads the coarsened graph as the paper's inspectors do; its head also reads the graph's
 * whole-graph profile (dp/profile.h) and the setting (the GPU's spec vector, the cluster, the
 * network, sync, precision, framework), so another GPU, network or worker count moves the
 * prediction and a GPU without any training data is predicted from its specs. */
#ifndef DP_SA_H
#define DP_SA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/grouped.h"
#include "dp/inspector.h"
#include "dp/profile.h"
#include "dp/settings.h"

/* ---- the head's inputs ---- */

/* The setting as DP_SA_SETTING_N numbers: the GPU's figures per CUDA device (log FP32 and
 * tensor TFLOPS, log memory GB, log bandwidth GB/s, log1p NVLink GB/s, PCIe generation,
 * architecture generation), log workers, log1p PS, log machines, log GPUs per machine, hetero,
 * log network GB/s and latency us, intra-machine, mixed precision, all-reduce, PyTorch, tensor
 * rate unknown, TF32-capable. Unknown GPU figures read as 0 (their log). */
#define DP_SA_SETTING_N 20
extern const char *const dp_sa_setting_names[DP_SA_SETTING_N];
void dp_sa_setting_vector(const struct dp_setting *s, const struct dp_gpu *g,
                          double v[DP_SA_SETTING_N]);

/* Physical ratios of profile to setting, each log(ms) (or log of a share): the matrix FLOPs at
 * the GPU's matrix rate for the precision (the simulator's: tensor cores under mixed precision,
 * TF32 for fp32 on Ampere and later), the memory-bound bytes at its bandwidth, all FLOPs at the
 * FP32 rate, the parameter bytes over the link a worker's transfers cross first (the
 * simulator's: the GPU's own NVLink or PCIe inside a machine, else the NIC: dp_sim_link_gbps),
 * the PS NIC's traffic (parameters x workers / PS) and all-reduce's traffic per worker (2 (N-1)/N
 * x parameters) over the same link, and activations plus four copies of the parameters over
 * the GPU's memory. `legacy` (DP_SA_LEGACY_* bits) gives the inputs as inspectors trained before
 * a change read them: FP32_MATMUL, fp32 products at the FP32 rate (before TF32; their input
 * "matmul_ms"); NETWORK_RATE, the transfers at the network's nominal rate, one NVLink or PCIe
 * figure for every GPU (their inputs "params_over_network_ms", ...). */
#define DP_SA_CROSS_N 7
enum {
    DP_SA_LEGACY_FP32_MATMUL = 1u,
    DP_SA_LEGACY_NETWORK_RATE = 2u,
    DP_SA_LEGACY_NO_BURST = 4u,
    DP_SA_LEGACY_NO_PLACE = 8u,
};
extern const char *const dp_sa_cross_names[DP_SA_CROSS_N];
/* The names DP_SA_LEGACY_NETWORK_RATE's inputs had: NULL where a name did not change. */
extern const char *const dp_sa_cross_legacy_names[DP_SA_CROSS_N];
void dp_sa_cross_vector(const struct dp_profile *p, const struct dp_setting *s,
                        const struct dp_gpu *g, unsigned legacy, double v[DP_SA_CROSS_N]);

/* The burst structure of an iteration as the simulator's traces would show it (sim.c,
 * sim_trace.c), in closed form from the profile and the setting, each log-scaled (floor 1e-3):
 * a physical iteration estimate (ms: compute from the simulator's efficiencies, then the PS
 * pull and push or the all-reduce buckets, the update), the sample interval it gives
 * (iteration / 50, within 1-100 ms), the GPU's idle time per iteration in samples, the PS pull
 * over the forward compute, the synchronisation (push, or all buckets' collectives) over the
 * backward compute, the same in samples, the gap between two transfer pieces (push pieces,
 * DDP buckets) in samples, 1 + the pieces, and the update the network waits on (the PS apply,
 * or the GPU's update after the last bucket) in samples, the compute (forward and backward) in
 * samples and its memory-bound share. Inspectors trained before these read none of them
 * (DP_SA_LEGACY_NO_BURST). */
#define DP_SA_BURST_N 11
extern const char *const dp_sa_burst_names[DP_SA_BURST_N];
void dp_sa_burst_vector(const struct dp_profile *p, const struct dp_setting *s,
                        const struct dp_gpu *g, double v[DP_SA_BURST_N]);

/* The compute with the simulator's fused kernels, and where the parameters fall among it, which
 * decides how the transfers overlap it (sim_trace.c: the PS pull feeds the forward chunks, the
 * push or the DDP buckets follow the gradients the backward chunks make), each log-scaled
 * (floor 1e-3): the share of dp_sa_burst_vector's compute estimate the fused kernels save (the
 * profile's fused bytes and launches at the framework's share), that compute less them in
 * samples, the profile's four placement shares (fw_param_mid, fw_param_head, bw_grad_mid,
 * bw_grad_tail), the transfers' time past the backward pass and the forward pass's wait for the
 * PS pull (0 under all-reduce), both in samples. Inspectors trained before these read none of
 * them (DP_SA_LEGACY_NO_PLACE). */
#define DP_SA_PLACE_N 8
extern const char *const dp_sa_place_names[DP_SA_PLACE_N];
void dp_sa_place_vector(const struct dp_profile *p, const struct dp_setting *s,
                        const struct dp_gpu *g, double v[DP_SA_PLACE_N]);

/* The profile as a run on setting s moves it (the head reads this one): a graph in fp32 (p->f16
 * false) under mixed precision moves half of its per-op bytes and activations
 * (dp_sim_byte_scale), as the graphs built in fp16 that every mixed-precision training row has
 * show them; FLOPs, parameters and the optimizer's fp32 traffic stay. *out may be p. */
void dp_sa_profile_at(const struct dp_profile *p, const struct dp_setting *s,
                      struct dp_profile *out);

/* ---- the inspector ---- */

/* Outputs: the 12 metrics (Driple order), then the iteration time and the GPU memory footprint,
 * predicted directly (an iteration may hold several bursts: idle + active is not one). */
#define DP_SA_ITERATION DP_N_OUTPUTS
#define DP_SA_MEMORY    (DP_N_OUTPUTS + 1)
#define DP_SA_N_OUT     (DP_N_OUTPUTS + 2)
/* Output o's name and unit: dp_outputs' (dp/metrics.h), then the derived figures' keys and units
 * ("iteration_ms" ms, "memory_gb" GB); "?" out of range. */
const char *dp_sa_output_name(int o);
const char *dp_sa_output_unit(int o);

/* Error of an inspector on one evaluation (a split's test part): per output, MAPE (%, labels
 * >= DP_MAPE_FLOOR), R^2, and the share of labels inside the predicted 80% interval (%); NaN when
 * not measured. */
struct dp_sa_eval {
    char   name[32];   /* "random", "families", "gpus", "networks" */
    char   held[256];  /* what was held out: "resnet, mobilenet", "T4, A100-40GB-SXM" */
    int    n_rows;
    double mape[DP_SA_N_OUT], r2[DP_SA_N_OUT], coverage[DP_SA_N_OUT];
};
#define DP_SA_MAX_EVALS 4

/* Set when the inspector was fine-tuned for one setting (dp_sa_tune): every ensemble member's
 * head learnt from a dataset's samples of that setting (the body, the normalisation and the OOD
 * reference are the base's) and the interval was recalibrated on the samples held out for
 * validation. setting[0] == '\0': not fine-tuned. */
struct dp_sa_tuning {
    char   setting[DP_ID_MAX]; /* the setting id it was fine-tuned for */
    char   data[16];       /* the samples' labels: "measured", "simulated" or "mixed" */
    char   dataset[256];   /* the dataset file, as given (the caller fills it; may be "") */
    char   base[256];      /* the setting-aware inspector it started from, as given (idem) */
    int    n_train, n_val; /* samples that trained and validated */
    int    epochs;         /* of the longest member */
    double seconds;
    struct dp_sa_eval before, after; /* the base's and the tuned heads' error on the
                                        validation samples (coverage: of the base's and of
                                        the recalibrated interval) */
};

struct dp_sa_provenance {
    char   data[16];      /* "simulated" */
    char   split[32];     /* what the shipped parameters were trained on: "random" */
    int    epochs;        /* of the longest member */
    double seconds;
    int    n_train, n_val, n_test, n_graphs; /* rows; graphs of the training data */
    int    n_evals;
    struct dp_sa_eval evals[DP_SA_MAX_EVALS];
    struct dp_sa_tuning tuned;
};

struct dp_sa_inspector;

/* A prediction for one graph on one setting. Values in the outputs' units, inside their physical
 * range: utilisations in [0, 100] %, network rates within the link's line rate, durations,
 * iteration time and memory > 0; clamped[o] says a raw value was outside it. lo..hi is the
 * calibrated 80% interval (clipped to the same range). ood: the graph is far from every graph the
 * inspector was trained on (ood_score > 1: beyond the distance the 99th percentile of held-out
 * training graphs reached), so the numbers are a guess. oom: memory_gb exceeds the GPU's memory. */
struct dp_sa_prediction {
    double value[DP_SA_N_OUT], lo[DP_SA_N_OUT], hi[DP_SA_N_OUT];
    bool   clamped[DP_SA_N_OUT];
    double ood_score;
    bool   ood, oom;
};

/* Reads a driple-sa-inspector/1 file and the body inspector it names (relative to its
 * directory), checking the body's key. Failures name the file and JSON path. */
enum dp_status dp_sa_load(const char *path, struct dp_sa_inspector **out, struct dp_error *err);
/* Writes it; the body is named by body_path (written relative to path's directory; the body
 * file must exist there). */
enum dp_status dp_sa_save(const struct dp_sa_inspector *sa, const char *path,
                          const char *body_path, struct dp_error *err);
void dp_sa_free(struct dp_sa_inspector *sa); /* NULL-safe; frees the body too */
/* Whether path holds a driple-sa-inspector/1 file (by its format field); false when it cannot be
 * read or parsed (the loaders then say why). */
bool dp_sa_file(const char *path);
/* The body's file as dp_sa_load resolved it ("" for an inspector made by dp_sa_init): what
 * dp_sa_save names when the inspector is written elsewhere. Borrowed. */
const char *dp_sa_body_path(const struct dp_sa_inspector *sa);
/* The GNN body (borrowed): its embedding (dp_model_embed of its model) is what the head reads;
 * per-setting inspectors with the same dp_inspector_body_key share it. */
const struct dp_inspector *dp_sa_body(const struct dp_sa_inspector *sa);
const struct dp_sa_provenance *dp_sa_provenance(const struct dp_sa_inspector *sa);
struct dp_sa_provenance *dp_sa_provenance_mut(struct dp_sa_inspector *sa);

/* A graph at a batch as the head reads it: the body's embedding, the profile and the graph's
 * distance to the training graphs (computed once; every setting reuses it). */
struct dp_sa_graph {
    float            *emb;      /* dp_model_embed_size(body) floats; owned */
    struct dp_profile profile;
    double            ood_score;
};
/* Embeds g (its three published features; the body's n_feat) and scores it; with emb not NULL
 * (the body's embedding of g, computed elsewhere: a cache) g is not read. Fails like
 * dp_model_embed. Free with dp_sa_graph_free. */
enum dp_status dp_sa_graph_init(const struct dp_sa_inspector *sa, const struct dp_grouped *g,
                                const float *emb, const struct dp_profile *p,
                                struct dp_sa_graph *out, struct dp_error *err);
void dp_sa_graph_free(struct dp_sa_graph *g); /* NULL-safe; leaves it zeroed */

/* Predicts g on n settings (gpus[i] is settings[i]'s catalog GPU), one pass of the head over all
 * of them. DP_ERR_INVALID when a GPU lacks the figures the head reads (FP32 rate, memory,
 * bandwidth), naming it; out untouched for that row and after. */
enum dp_status dp_sa_predict(const struct dp_sa_inspector *sa, const struct dp_sa_graph *g,
                             const struct dp_setting *settings, const struct dp_gpu *const *gpus,
                             int n, struct dp_sa_prediction *out, struct dp_error *err);

/* ---- training (train/sa_train.c drives these; dp/train.h has dp_sa_train) ---- */

struct dp_sa_arch {
    int hidden1, hidden2; /* the MLP head's widths: 256, 128 */
    int members;          /* heads in the ensemble: 5 */
};
#define DP_SA_MAX_MEMBERS 16
/* Checks widths in [1, 4096] and members in [1, DP_SA_MAX_MEMBERS]; DP_ERR_INVALID naming one. */
enum dp_status dp_sa_arch_check(const struct dp_sa_arch *a, struct dp_error *err);

/* A new inspector over `body` (taken over, also on failure), head initialised from seed,
 * normalisation identity, intervals uncalibrated (half-width = 1.2816 x the ensemble's spread:
 * a normal's 80%), no OOD reference. */
enum dp_status dp_sa_init(struct dp_inspector *body, const struct dp_sa_arch *a, uint64_t seed,
                          struct dp_sa_inspector **out, struct dp_error *err);
const struct dp_sa_arch *dp_sa_arch(const struct dp_sa_inspector *sa);
/* The raw input of one row (dp_sa_input_size numbers): embedding, profile vector, setting
 * vector, cross vector. */
int  dp_sa_input_size(const struct dp_sa_inspector *sa);
void dp_sa_raw_input(const struct dp_sa_inspector *sa, const float *emb,
                     const struct dp_profile *p, const struct dp_setting *s,
                     const struct dp_gpu *g, double *x);
/* Normalisation: inputs x -> (x - in_mean) / in_std; targets log1p(label) -> (. - out_mean) /
 * out_std. Arrays of dp_sa_input_size and DP_SA_N_OUT values (std > 0). */
void dp_sa_set_norm(struct dp_sa_inspector *sa, const double *in_mean, const double *in_std,
                    const double *out_mean, const double *out_std);
void dp_sa_normalize(const struct dp_sa_inspector *sa, const double *raw, float *x);
/* The training target of a label of output o, and back. */
double dp_sa_target(const struct dp_sa_inspector *sa, int o, double label);
double dp_sa_label(const struct dp_sa_inspector *sa, int o, double target);
/* Member m's (or, m < 0, the ensemble's mean) outputs in target units for B normalised rows x
 * (B x dp_sa_input_size) into y (B x DP_SA_N_OUT); with spread (may be NULL, m < 0 only) the
 * members' standard deviation per output. */
void dp_sa_head(const struct dp_sa_inspector *sa, int m, const float *x, int B, float *y,
                float *spread);
/* The calibration of the intervals: output o's 80% half-width in target units is
 * q[o] x (spread + s0[o]). */
void dp_sa_set_calibration(struct dp_sa_inspector *sa, const double *q, const double *s0);
void dp_sa_calibration(const struct dp_sa_inspector *sa, double *q, double *s0);
/* The OOD reference: n points of the graph part of the normalised input (embedding and
 * profile: dp_sa_ood_dims numbers each, row-major) and the distance a training graph's nearest
 * other reaches at the 99th percentile. */
int dp_sa_ood_dims(const struct dp_sa_inspector *sa);
enum dp_status dp_sa_set_ood(struct dp_sa_inspector *sa, const float *points, int n,
                             double threshold, struct dp_error *err);
/* The graph's OOD distance (nearest reference point, root mean square over dims) from its
 * normalised graph part. */
double dp_sa_ood_distance(const struct dp_sa_inspector *sa, const float *graph_part);

/* The loss a trainer descends, per target in target units (standardised log1p): weight[o] x
 * Huber(error) (quadratic within +-huber, linear beyond; huber 0: the squared error); plus, over
 * the pairs of a step (dp_sa_trainer_step), pair[o] x the mean squared error of the difference
 * between a pair's two predictions against their targets' difference (one graph at two batch
 * sizes on one setting: how the output moves with the batch). */
struct dp_sa_loss {
    double weight[DP_SA_N_OUT];
    double huber;
    double pair[DP_SA_N_OUT];
};
/* Adam on one member's parameters; loss NULL: the squared error, every output weight 1. */
struct dp_sa_trainer;
enum dp_status dp_sa_trainer_init(struct dp_sa_inspector *sa, int member, float lr,
                                  float weight_decay, const struct dp_sa_loss *loss,
                                  struct dp_sa_trainer **out, struct dp_error *err);
void dp_sa_trainer_free(struct dp_sa_trainer *t);
/* The trainer's loss over B rows x DP_SA_N_OUT targets t (target units), its gradient, then
 * (when step) one Adam step; *loss: the plain MSE of the first B - 2 n_pairs rows before the
 * step. A NaN target is missing (a measured sample without that label): it adds no loss and no
 * gradient, and the means are over the targets present (0 when none). The last 2 n_pairs rows
 * are pairs (row B - 2 n_pairs + 2p, the next): only the loss's pair term reads them.
 * DP_ERR_NOMEM only. */
enum dp_status dp_sa_trainer_step(struct dp_sa_trainer *t, const float *x, const float *tg,
                                  int B, int n_pairs, bool step, float *loss,
                                  struct dp_error *err);
/* Member m's parameters (dp_sa_member_size floats), writable: the trainer keeps the best. */
size_t dp_sa_member_size(const struct dp_sa_inspector *sa);
float *dp_sa_member(struct dp_sa_inspector *sa, int m);

#endif
