/* settings.h: the GPU catalog ("driple-gpus/1", assets/gpus.json, spec-sheet figures with their
 * source; unknown = NaN or 0, never guessed), the interconnects, and setting lists
 * ("driple-settings/1"): a setting is the cluster an inspector was trained for (GPU, how the
 * workers synchronise, parameter servers, workers, placement, network, machines, precision,
 * framework) plus the inspector file to use. Setting ids are printed and parsed here only. */
#ifndef DP_SETTINGS_H
#define DP_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/status.h"

#define DP_NAME_MAX 64
/* Setting ids: long enough for every suffix of the grammar below at once. */
#define DP_ID_MAX 160
#define DP_GPU_MAX_ALIASES 8
/* The most GPUs one machine holds (a DGX-2 / HGX-2 has 16): a setting that would put more
 * workers in one machine is refused. */
#define DP_MAX_GPUS_PER_MACHINE 16
/* GPUs per machine when neither the user nor a system says (a DGX / HGX baseboard): the default
 * machine count of a new cluster, the same for PS and all-reduce (dp_setting_cluster_machines). */
#define DP_DEFAULT_GPUS_PER_MACHINE 8
/* Ranges a setting is checked against (dp_setting_check). */
#define DP_MAX_WORKERS 4096
#define DP_MAX_MACHINES 1024
#define DP_MAX_PS 64

/* Architecture generations, in order (from the first word of dp_gpu.architecture). */
enum dp_gpu_gen {
    DP_GEN_UNKNOWN, DP_GEN_KEPLER, DP_GEN_MAXWELL, DP_GEN_PASCAL, DP_GEN_VOLTA, DP_GEN_TURING,
    DP_GEN_AMPERE, DP_GEN_ADA, DP_GEN_HOPPER, DP_GEN_BLACKWELL, DP_GEN_COUNT
};

/* How a GPU is mounted: an SXM module (NVLink between every GPU of the machine, through a
 * mesh or NVSwitch) or a PCIe card (NVLink, where it has any, only through 2-GPU bridges). */
enum dp_form_factor { DP_FORM_UNKNOWN, DP_FORM_SXM, DP_FORM_PCIE };

/* One GPU model. Numbers the source did not give are NaN (doubles) or 0 (integers). Figures
 * are for the board as sold; a board of `devices` CUDA devices (K80: 2) runs one worker per
 * device, each with 1/devices of its compute, memory and bandwidth. */
struct dp_gpu {
    char   name[DP_NAME_MAX];         /* "V100-PCIe-16GB": the catalog key */
    char   architecture[DP_NAME_MAX]; /* "Volta (GV100)" */
    double fp32_tflops;               /* peak FP32 (non-tensor) */
    double fp32_base_tflops;          /* the same at the base clock where the spec sheet gives
                                         it beside the boost figure; NaN: not read */
    double fp16_tflops;               /* dense FP16 tensor-core peak; NaN: not read, or no
                                         tensor cores */
    double memory_gb;
    double bandwidth_gbps;            /* memory bandwidth, GB/s */
    int    sm_count;
    double tdp_w;
    int    year;
    double nvlink_gbps;               /* per-GPU NVLink bandwidth, both directions, GB/s; NaN:
                                         none read (no NVLink known) */
    int    pcie_gen;                  /* PCIe generation of the host link; 0 = not read */
    enum dp_form_factor form_factor;
    int    devices;                   /* CUDA devices per board (>= 1) */
    int    n_aliases;
    char   aliases[DP_GPU_MAX_ALIASES][DP_NAME_MAX]; /* nvidia-smi's and others' names */
    char   source[1024];              /* where the figures were read */
    char   notes[1024];
    double price_per_gpu_hour;        /* a public cloud's on-demand price for one worker GPU
                                         (one device), USD; NaN: no price read */
    char   price_source[512];         /* where it was read ("no price read" when none) */
    char   price_date[16];            /* when it was read: "2026-11-09" or "2023-11"; "" */
};

/* The catalog: an array of GPUs in file order. */
struct dp_gpu_catalog {
    int            n_gpus;
    struct dp_gpu *gpus;
    char          *path; /* the file it came from, for messages */
};

/* Reads a driple-gpus/1 file. New catalog owned by the caller (dp_gpu_catalog_free); on failure
 * "<path>:<json path>: <what>" and *out untouched. */
enum dp_status dp_gpu_catalog_load(const char *path, struct dp_gpu_catalog **out,
                                   struct dp_error *err);
void dp_gpu_catalog_free(struct dp_gpu_catalog *c); /* NULL-safe */
/* The catalog's names, ", "-separated, into buf (n >= 4 bytes; cut with "..." when longer). */
void dp_gpu_catalog_names(const struct dp_gpu_catalog *c, char *buf, size_t n);
/* dp_gpu_catalog_load of `path`, or of the shipped assets/gpus.json (found by dp_shipped_path,
 * shipped.h) when path is NULL. */
enum dp_status dp_gpu_catalog_load_default(const char *path, struct dp_gpu_catalog **out,
                                           struct dp_error *err);
/* Finds a GPU by an exact name: a paper-style short id ("V100", "2080Ti"; dp_gpu_short_name,
 * the abbreviations of the shipped setting ids), its catalog name, or a name or alias compared
 * ignoring case, everything but letters and digits, a leading "NVIDIA", "Tesla" or "GeForce"
 * and a trailing "(...)" ("NVIDIA A100-SXM4-40GB", "Tesla V100-SXM2-16GB", "GeForce RTX 2080
 * Ti", "K80 (AWS p2.8xlarge)": the spellings tools print). Nothing else: no prefix or
 * substring guesses. Returns a pointer into the catalog, or NULL. The loader makes sure every
 * name and alias finds its own GPU. */
const struct dp_gpu *dp_gpu_find(const struct dp_gpu_catalog *c, const char *name);
/* The strict lookup of a name a user typed (--gpu, the explorer): an exact catalog name or
 * alias as dp_gpu_find compares them, but not a short id ("V100" stands for several GPUs to a
 * reader: it is refused as ambiguous). Anything else is DP_ERR_NOT_FOUND with the candidates:
 * "<what> A100 is ambiguous: A100-40GB-SXM, A100-80GB-SXM, A100-PCIe-40GB, A100-PCIe-80GB"
 * (names it is a part of), "<what> V100-SXM2-16G: not a GPU name of <catalog>; did you mean
 * V100-SXM2-16GB?" (part of one name), "<what> X: not a GPU of <catalog>; did you mean Y?"
 * (edit distance 1 or 2), else "<what> X: no such GPU in <catalog> (<all names>)". *out is set
 * on success only. */
enum dp_status dp_gpu_lookup(const struct dp_gpu_catalog *c, const char *name, const char *what,
                             const struct dp_gpu **out, struct dp_error *err);
/* Whether g has NVLink (a known nvlink_gbps); NVLink settings on one without are refused
 * (dp_setting_check_gpu). */
bool dp_gpu_has_nvlink(const struct dp_gpu *g);
/* Whether g's generation has TF32 / bf16 tensor cores (Ampere and later) and fp8 tensor
 * cores (Ada, Hopper, Blackwell). */
bool dp_gpu_has_tf32(const struct dp_gpu *g);
bool dp_gpu_has_fp8(const struct dp_gpu *g);
/* Checks that g, an entry of c, has the figures the simulator needs (fp32_tflops and
 * bandwidth_gbps); DP_ERR_INVALID with "<catalog>:$.gpus[i]: ..." when one is unknown. */
enum dp_status dp_gpu_check_sim(const struct dp_gpu_catalog *c, const struct dp_gpu *g,
                                struct dp_error *err);
/* The generation named by the first word of g's architecture ("Ampere (GA100)" -> Ampere);
 * DP_GEN_UNKNOWN when none is recognised. */
enum dp_gpu_gen dp_gpu_generation(const struct dp_gpu *g);
/* "Kepler" .. "Blackwell", "unknown". */
const char *dp_gpu_gen_name(enum dp_gpu_gen gen);
/* The GPU part of setting ids: the paper's short ids for the GPUs its setting list abbreviates
 * (V100-PCIe-16GB -> "V100", RTX2080Ti -> "2080Ti", RTX4090 -> "4090", A100-40GB-SXM ->
 * "A100", H100-SXM -> "H100"), else the name itself, so that an id names one GPU. Writes at
 * most n bytes (NUL included). */
void dp_gpu_short_name(const char *name, char *buf, size_t n);

/* Interconnects. PCIe and NVLink are inside one machine; the rest cross machines. New values
 * are appended (files and ids name networks, never their numbers). */
enum dp_network {
    DP_NET_PCIE, DP_NET_NVLINK, DP_NET_1GBE, DP_NET_10GBE, DP_NET_25GBE, DP_NET_40GBE,
    DP_NET_100GBE, DP_NET_IB_EDR, DP_NET_IB_HDR, DP_NET_IB_NDR, DP_NET_200GBE, DP_NET_400GBE,
    DP_NET_COUNT
};
/* "PCIe", "NVLink", "1GbE", "10GbE", "25GbE", "40GbE", "100GbE", "IB-EDR", "IB-HDR", "IB-NDR",
 * "200GbE", "400GbE" (Ethernet rows stand for RoCE too: the same line rate). */
const char *dp_network_name(enum dp_network n);
/* Parses a name above, ignoring case (a case variant names the same network); false when
 * unknown (dp_network_lookup says which names were near). */
bool dp_network_parse(const char *s, enum dp_network *out);
/* dp_network_parse with the refusal a user sees: DP_ERR_INVALID "<what> <s>: unknown network;
 * did you mean X?" naming the near names (a prefix or part, edit distance 1 or 2), else listing
 * all. */
enum dp_status dp_network_lookup(const char *s, const char *what, enum dp_network *out,
                                 struct dp_error *err);
/* Nominal one-direction bandwidth in GB/s (line rate: 1GbE = 0.125, PCIe 3.0 x16 = 15.75,
 * NVLink 2 one link pair = 50, IB-EDR = 12.5, IB-HDR = 25, IB-NDR = 50). */
double dp_network_bandwidth_gbps(enum dp_network n);
/* Typical one-way message latency in microseconds. */
double dp_network_latency_us(enum dp_network n);
/* True for PCIe and NVLink (transfers stay inside one machine). */
bool dp_network_intra(enum dp_network n);

enum dp_placement { DP_PLACE_HOMO, DP_PLACE_HETERO };
/* Numerical precision of the training step (values appended, never renumbered): fp32 (plain;
 * runs as TF32 on Ampere and later where the framework does, dp_setting_tf32_matmul), mixed
 * (fp16 automatic mixed precision), tf32 (fp32 with TF32 tensor cores asked for), bf16
 * (bfloat16 AMP, Ampere and later), fp8 (fp8 tensor cores: Ada, Hopper, Blackwell). */
enum dp_precision { DP_PREC_FP32, DP_PREC_MIXED, DP_PREC_TF32, DP_PREC_BF16, DP_PREC_FP8,
                    DP_PREC_COUNT };
/* How workers synchronise: parameter servers (the paper's, TensorFlow 1's) or NCCL all-reduce
 * (PyTorch DDP, TensorFlow `replicated`). */
enum dp_sync { DP_SYNC_PS, DP_SYNC_ALLREDUCE };
enum dp_framework { DP_FW_TENSORFLOW, DP_FW_PYTORCH };
/* TF32 for fp32 work: as the framework decides (auto), or forced off / on
 * (torch.backends.*.allow_tf32, NVIDIA_TF32_OVERRIDE=0). */
enum dp_tf32 { DP_TF32_AUTO, DP_TF32_OFF, DP_TF32_ON };
/* Where input images are decoded: nowhere (synthetic data, today's runs), on the host CPUs, or
 * on the GPU (NVIDIA DALI). */
enum dp_loader { DP_LOADER_SYNTHETIC, DP_LOADER_CPU, DP_LOADER_DALI };
/* NCCL's all-reduce algorithm: NCCL's choice, ring or (double binary) tree. */
enum dp_allreduce_algo { DP_AR_AUTO, DP_AR_RING, DP_AR_TREE };
/* Sharding of optimizer state, gradients and parameters over the data-parallel ranks: none,
 * ZeRO stage 1 / 2 / 3 (FSDP full sharding = ZeRO-3). */
enum dp_shard { DP_SHARD_NONE, DP_SHARD_ZERO1, DP_SHARD_ZERO2, DP_SHARD_ZERO3 };
/* Activation recomputation: none, selective (attention's softmax/dropout, Megatron's), full
 * (every layer's activations recomputed in the backward pass). */
enum dp_recompute { DP_RECOMPUTE_NONE, DP_RECOMPUTE_SELECTIVE, DP_RECOMPUTE_FULL };
/* fw_version for a PyTorch NGC container (nvcr.io/nvidia/pytorch): it sets
 * TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, so TF32 matmuls whatever the PyTorch version. */
#define DP_FW_VERSION_NGC (-1)
const char *dp_sync_name(enum dp_sync s); /* "ps" | "allreduce" */
/* Parses "ps"/"parameter_server" or "allreduce"/"all-reduce"/"ar"/"replicated"/"nccl"
 * (case-insensitive); false (out untouched) otherwise. */
bool dp_sync_parse(const char *s, enum dp_sync *out);
const char *dp_framework_name(enum dp_framework f); /* "tensorflow" | "pytorch" */
/* Parses "tensorflow"/"tf" or "pytorch"/"torch"/"pt" (case-insensitive); false otherwise. */
bool dp_framework_parse(const char *s, enum dp_framework *out);
/* Parses a --framework value NAME[:VERSION]: NAME as dp_framework_parse, VERSION "1.13" ->
 * 113 (major*100 + minor, minor < 100), "ngc" (PyTorch only) -> DP_FW_VERSION_NGC, absent ->
 * 0. DP_ERR_INVALID naming `what` and the accepted forms otherwise (a near name such as
 * "pytoch" is refused with the candidate, never taken); out untouched on failure. */
enum dp_status dp_framework_lookup(const char *s, const char *what, enum dp_framework *fw,
                                   int *version, struct dp_error *err);
/* "pytorch", "pytorch:1.13", "pytorch:ngc", "tensorflow:2.4" into buf (n bytes). */
void dp_framework_format(enum dp_framework fw, int version, char *buf, size_t n);
const char *dp_placement_name(enum dp_placement p); /* "homo" | "hetero" */
/* Parses "homo"/"ho" or "hetero"/"he" (case-insensitive); false (out untouched) otherwise. */
bool dp_placement_parse(const char *s, enum dp_placement *out);
/* "fp32" | "mixed" | "tf32" | "bf16" | "fp8". */
const char *dp_precision_name(enum dp_precision p);
/* Parses a name above, "float32" (fp32) or "amp" (mixed: automatic mixed precision), ignoring
 * case; false otherwise ("fp16" is refused: pure fp16 training is not modelled, and mixed is
 * fp16 AMP: dp_precision_lookup says so). */
bool dp_precision_parse(const char *s, enum dp_precision *out);
/* dp_precision_parse with the refusal a user sees (DP_ERR_INVALID naming `what`, the value and
 * the candidates: "fp16" -> "did you mean mixed (fp16 automatic mixed precision)?"). */
enum dp_status dp_precision_lookup(const char *s, const char *what, enum dp_precision *out,
                                   struct dp_error *err);
/* The precision a graph is built in for p: fp32 for fp32 and tf32 (fp32 tensors), mixed for
 * mixed, bf16 and fp8 (16-bit activations, fp32 master weights: the zoo and graph builders know
 * only these two). */
enum dp_precision dp_precision_graph(enum dp_precision p);
const char *dp_tf32_name(enum dp_tf32 t);             /* "auto" | "off" | "on" */
bool dp_tf32_parse(const char *s, enum dp_tf32 *out);  /* the names above, ignoring case */
const char *dp_loader_name(enum dp_loader l);         /* "synthetic" | "cpu" | "dali" */
bool dp_loader_parse(const char *s, enum dp_loader *out); /* the names above, ignoring case */
const char *dp_allreduce_algo_name(enum dp_allreduce_algo a); /* "auto" | "ring" | "tree" */
bool dp_allreduce_algo_parse(const char *s, enum dp_allreduce_algo *out);
const char *dp_shard_name(enum dp_shard s); /* "none" | "zero1" | "zero2" | "zero3" */
/* The names above or "fsdp" (= zero3), ignoring case. */
bool dp_shard_parse(const char *s, enum dp_shard *out);
const char *dp_recompute_name(enum dp_recompute r); /* "none" | "selective" | "full" */
bool dp_recompute_parse(const char *s, enum dp_recompute *out); /* also "sel" */

/* One setting. Placement: homo = PS and workers spread together over the machines; hetero = the
 * PS on machines of their own, the workers on the others (needs machines >= 2 and a
 * cross-machine network). PCIe/NVLink settings have one machine. All-reduce settings have no
 * PS (ps 0) and homo placement; their network is the one between machines (inside a machine
 * NCCL uses NVLink or PCIe as the GPU has them), or PCIe/NVLink for one machine.
 * Fields after `xla` are zero by default and a zero means today's setting: memset(0) then the
 * fields above gives the setting it always gave (counts of 0 read as 1). */
struct dp_setting {
    char              id[DP_ID_MAX];       /* "V100-P1w2ho-PCIe" */
    char              gpu[DP_NAME_MAX];    /* a catalog name */
    enum dp_sync      sync;
    int               ps;                  /* >= 1 (PS); 0 (all-reduce) */
    int               workers;             /* >= 1: GPUs in all (tp x pp x data-parallel) */
    enum dp_placement placement;
    enum dp_network   network;
    int               machines;            /* >= 1 */
    enum dp_precision precision;
    enum dp_framework framework;
    bool              xla;                 /* TensorFlow with XLA auto-clustering
                                              (TF_XLA_FLAGS=--tf_xla_auto_jit): the simulator
                                              also fuses a forward batch norm with its
                                              element-wise readers (less traffic, fewer
                                              kernels); ignored under PyTorch. Not part of the
                                              id or of settings files (driple simulate --xla,
                                              calibrate's XLA rows); false by default */
    char              inspector[512];      /* resolved path ("" = none); see dp_settings_load */
    /* ---- issue 28: scale, precision as frameworks run it, input pipeline ---- */
    enum dp_tf32      tf32;                /* TF32 for fp32 work: auto = the framework's rule */
    int               fw_version;          /* major*100 + minor ("pytorch:1.13" -> 113);
                                              DP_FW_VERSION_NGC; 0 = not given */
    int               accum;               /* gradient accumulation steps (>= 1; 0 read as 1):
                                              one synchronisation per `accum` micro-batches */
    char              system[DP_NAME_MAX]; /* a systems-catalog name (systems.h), "" = none:
                                              a generic machine of this GPU */
    enum dp_loader    loader;              /* where input images are decoded */
    int               cpu_cores;           /* host CPU cores per machine for the loader;
                                              0 = the system's (unknown without one) */
    enum dp_allreduce_algo ar_algo;        /* NCCL's algorithm (all-reduce only) */
    /* ---- issue 29: model parallelism (the planner's; the simulator reads them) ---- */
    enum dp_shard     shard;               /* ZeRO stage / FSDP */
    int               tp, pp;              /* tensor / pipeline parallel degree (0 read as 1) */
    int               microbatches;        /* pipeline micro-batches per step (0 read as 1) */
    int               ep;                  /* expert parallel degree (0 read as 1) */
    enum dp_recompute recompute;
    bool              seq_parallel;        /* Megatron sequence parallelism (needs tp > 1) */
};

/* A count field of dp_setting as the simulator reads it: 0 (unset) is 1. */
int dp_setting_accum(const struct dp_setting *s);
int dp_setting_tp(const struct dp_setting *s);
int dp_setting_pp(const struct dp_setting *s);
int dp_setting_microbatches(const struct dp_setting *s);
int dp_setting_ep(const struct dp_setting *s);
/* The data-parallel size: workers / (tp x pp) (workers when tp x pp does not divide it: the
 * check refuses that). */
int dp_setting_dp_size(const struct dp_setting *s);

/* Whether fp32 matrix multiplies (resp. convolutions) of s run on TF32 tensor cores on a GPU of
 * generation gen. Only Ampere and later have TF32; precision tf32 is on for both; mixed, bf16
 * and fp8 leave their fp32 remainder as the framework's rule says. An explicit s->tf32 on/off
 * wins. Otherwise (auto): TensorFlow >= 2.4 both (TF32 on by default since 2.4; < 2.4 never),
 * version not given: as the current release (both on); PyTorch 1.7 - 1.11 both, >= 1.12
 * convolutions only (torch.backends.cuda.matmul.allow_tf32 became False), < 1.7 none; an NGC
 * container (DP_FW_VERSION_NGC) both; PyTorch without a version is assumed to run in an NGC
 * container (the shipped calibration's PyTorch rows did), so both: say so with
 * dp_setting_describe_tf32. */
bool dp_setting_tf32_matmul(const struct dp_setting *s, enum dp_gpu_gen gen);
bool dp_setting_tf32_conv(const struct dp_setting *s, enum dp_gpu_gen gen);
/* One line saying what the TF32 rule gave and why, for front ends to print beside a
 * simulation or prediction ("fp32 matmuls and convolutions on TF32 tensor cores (PyTorch
 * without a version: assumed an NGC container; --framework pytorch:1.13 or --tf32 off to
 * change)"; "not applicable: Volta has no TF32"). Writes at most n bytes. */
void dp_setting_describe_tf32(const struct dp_setting *s, enum dp_gpu_gen gen, char *buf,
                              size_t n);

/* A setting list in file order. */
struct dp_settings {
    int                n_settings;
    struct dp_setting *settings;
    char              *path; /* the file it came from ("" when built in memory) */
};

/* Reads a driple-settings/1 file: {format, settings: [{id, gpu, sync, ps, workers, placement,
 * network, machines, precision, framework, inspector}]}. `sync` defaults to ps, `ps` is
 * required for it and absent (or 0) for allreduce, `machines` defaults from sync, placement and
 * network, precision to fp32, framework to tensorflow, id to dp_setting_format_id. A relative `inspector` path is resolved against the settings
 * file's directory (kept as written when absolute); when that file does not exist (or none is
 * named) and the user directory has one for the setting, that one is used (the search path
 * below). Checks each setting (dp_setting_check) and
 * that ids are unique ignoring case and usable as file names (no '/', no leading '.'). When
 * `catalog` is non-NULL, every gpu must be in it (the stored name is replaced by the
 * catalog's). New list owned by the caller (dp_settings_free); on failure "<path>:<json path>:
 * <what>" and *out untouched. */
enum dp_status dp_settings_load(const char *path, const struct dp_gpu_catalog *catalog,
                                struct dp_settings **out, struct dp_error *err);
void dp_settings_free(struct dp_settings *s); /* NULL-safe */
/* dp_settings_load of `path`, or of the shipped assets/settings/default.json (dp_shipped_path)
 * when path is NULL. */
enum dp_status dp_settings_load_default(const char *path, const struct dp_gpu_catalog *catalog,
                                        struct dp_settings **out, struct dp_error *err);
/* Writes a list as driple-settings/1, its inspector paths rewritten so that dp_settings_load of
 * the new file finds the same files. DP_ERR_IO (or NOMEM) naming path on failure. */
enum dp_status dp_settings_save(const struct dp_settings *s, const char *path,
                                struct dp_error *err);
/* The setting with this id (exact, then case-insensitive), or NULL. */
const struct dp_setting *dp_settings_find(const struct dp_settings *s, const char *id);

/* Setting ids, one grammar (the GPU part is dp_gpu_short_name; defaults leave their suffix out):
 *   parameter servers: <gpu>-P<ps>w<workers><ho|he>-<network>[suffixes]
 *   all-reduce:        <gpu>-AR<workers>-<network>[suffixes]
 * ("V100-P1w2ho-PCIe" = V100-PCIe-16GB, 1 PS, 2 workers, homo, PCIe, fp32, TensorFlow;
 * "A100-80GB-SXM-AR16-IB-HDR-pytorch-mixed"). Suffixes, in this order when printed (parsed in
 * any order, case-insensitive):
 *   -M<machines>x<gpus per machine>  machines and the most workers in one of them: printed
 *       for every network between machines (issue 30: the id shows the machines); parsed
 *       with or without "x<g>" (which must agree); an id without -M has the machine count
 *       dp_setting_default_machines gave (the rule ids were written under, so old ids mean
 *       what they meant). PCIe/NVLink ids have one machine of <workers> GPUs and no -M.
 *   -sys<system>      a systems-catalog entry ("-sysDGXA100"; system names hold no '-')
 *   -pytorch[<v>|ngc] -tensorflow<v>   framework and version ("-pytorch1.13", "-pytorchngc",
 *       "-tensorflow2.4"; TensorFlow without a version prints nothing)
 *   -mixed -tf32 -bf16 -fp8           precision (fp32 prints nothing; "-fp32" parses)
 *   -tf32on -tf32off                  an explicit TF32 switch
 *   -acc<N>                           gradient accumulation (N > 1)
 *   -loadcpu -loaddali -cpu<N>        input pipeline and host cores per machine
 *   -ring -tree                       NCCL algorithm
 *   -zero1 -zero2 -zero3              sharding
 *   -tp<N> -pp<N> -mb<N> -ep<N>       model-parallel degrees and micro-batches (N > 1)
 *   -rcsel -rcfull -sp                recomputation, sequence parallelism
 * (the old "-M<machines>", "-pytorch", "-mixed" keep their meaning). Formats s's id into buf
 * (n bytes). */
void dp_setting_format_id(const struct dp_setting *s, char *buf, size_t n);
/* Parses an id of the grammar above against the catalog: the GPU part is a short id, a catalog
 * name or an alias (dp_gpu_find: exact names only, the paper's short ids "V100" / "A100"
 * included: inside an id they are the paper's abbreviations, not a lookup); suffixes are
 * case-insensitive ("-tensorflow", "-fp32" are accepted too). Every id dp_setting_format_id
 * prints for a catalog GPU parses back to that setting. A -sys suffix is taken as written
 * (dp_setting_check_gpu checks it against the systems catalog). Fills *out
 * (dp_setting_finish: its id reformatted) on success; on failure DP_ERR_INVALID (not of that
 * form, an unknown network or suffix, bad counts, an invalid combination) or DP_ERR_NOT_FOUND
 * (no such GPU: the message lists the catalog) with err->msg saying why, and *out untouched. */
enum dp_status dp_setting_parse_id(const char *id, const struct dp_gpu_catalog *cat,
                                   struct dp_setting *out, struct dp_error *err);
/* Completes a setting whose gpu, sync, ps, workers, placement, network, machines, precision
 * and framework (and any later field) are set: machines <= 0 picks
 * dp_setting_default_machines, all-reduce gets ps 0 and homo placement, counts of 0 become 1
 * (accum, tp, pp, microbatches, ep), the id is formatted, then dp_setting_check. DP_ERR_INVALID
 * as that, or when the id would not fit in DP_ID_MAX - 1 characters (a GPU name too long). */
enum dp_status dp_setting_finish(struct dp_setting *s, struct dp_error *err);
/* Builds a parameter-server TensorFlow setting on the fly (the explorer's what-if changes):
 * machines <= 0 picks dp_setting_default_machines, the id is formatted, inspector "". Fails
 * (DP_ERR_INVALID) like dp_setting_check. `gpu` is copied as given (look it up in the catalog
 * first if wanted). For all-reduce or PyTorch, set the fields and call dp_setting_finish. */
enum dp_status dp_setting_make(const char *gpu, int workers, int ps, enum dp_network net,
                               int machines, enum dp_placement placement,
                               enum dp_precision precision, struct dp_setting *out,
                               struct dp_error *err);
/* The machine count an id without -M stands for (the rule ids were written under; the
 * shipped list and inspectors use it): 1 inside a machine (PCIe/NVLink); PS homo: one machine
 * per worker (the PS share them; 2 for one worker); PS hetero: one machine per worker and one
 * per PS; all-reduce: 8 GPUs per machine (a DGX/HGX), at least 2 for 2 workers or more. */
int dp_setting_default_machines(enum dp_sync sync, int workers, int ps, enum dp_network net,
                                enum dp_placement placement);
/* The machine count of a new cluster built from options (the CLI without --machines, the
 * explorer): the same for PS and all-reduce (issue 30). Inside a machine 1; else
 * ceil(workers / gpus_per_machine) machines for the workers (at least 2 when workers >= 2, so
 * the network is used, and at least 2 for one PS worker: the PS sits across it), plus one per
 * PS under hetero placement. gpus_per_machine <= 0 reads DP_DEFAULT_GPUS_PER_MACHINE. */
int dp_setting_cluster_machines(enum dp_sync sync, int workers, int ps, enum dp_network net,
                                enum dp_placement placement, int gpus_per_machine);
/* The most worker GPUs s puts in one machine (workers spread evenly over the machines that
 * hold workers: all of them, or under hetero those the PS do not take). */
int dp_setting_gpus_per_machine(const struct dp_setting *s);
/* Checks ranges (PS: ps in [1, 64]; all-reduce: ps 0 and homo; workers in [1, 4096],
 * machines in [1, 1024], accum in [0, 65536], cpu_cores in [0, 1024], tp/pp/ep/microbatches
 * in [0, 4096]) and consistency (hetero needs a cross-machine network and machines >= 2;
 * PCIe/NVLink need machines == 1; at most DP_MAX_GPUS_PER_MACHINE workers in one machine;
 * tp x pp divides workers; tp within one machine; sequence parallelism needs tp > 1; sharding,
 * tp, pp and ep need all-reduce; a loader's cores only with a CPU loader; enums in range). The
 * message names the option ("--tp 3: tp x pp = 3 does not divide the 8 workers"). */
enum dp_status dp_setting_check(const struct dp_setting *s, struct dp_error *err);
/* True when a and b are the same cluster: GPU (names compared exactly), sync, PS, workers,
 * placement, network, machines, precision, framework and every later field (counts of 0 and 1
 * alike); the id, inspector and xla are not compared. */
bool dp_setting_same_cluster(const struct dp_setting *a, const struct dp_setting *b);

/* ---- where inspector files are found ----
 * One search path, used by dp_settings_load (so by every command that takes --setting) and by
 * the explorer for settings that are not in its list. A setting's inspector is, in order:
 *   1. the file its setting list names, when that file exists;
 *   2. <user dir>/<dp_setting_file_name(s)>, when that file exists.
 * The user directory holds inspectors the user kept (the explorer saves a transfer there):
 * $DRIPLE_INSPECTORS when set and non-empty, else $XDG_DATA_HOME/driple/inspectors, else
 * $HOME/.local/share/driple/inspectors. */

/* Writes the user inspector directory (see above) into buf (n bytes); false, buf "", when none
 * can be formed (none of the three variables set) or it does not fit. */
bool dp_user_inspector_dir(char *buf, size_t n);
/* The file name of s's inspector in the user directory: its id with the full GPU name in front
 * (ids alone are ambiguous: V100-PCIe-16GB and V100-SXM2-16GB both read "V100-P1w2ho-PCIe"), then
 * ".json": "V100-PCIe-16GB-P1w2ho-PCIe.json". Characters other than letters, digits and "._+-"
 * become '_'. Writes at most n bytes (NUL included). */
void dp_setting_file_name(const struct dp_setting *s, char *buf, size_t n);
/* <user dir>/<dp_setting_file_name(s)>, whether or not the file exists; false when there is no
 * user directory or the path does not fit in n bytes. */
bool dp_user_inspector_path(const struct dp_setting *s, char *buf, size_t n);
/* Where a new inspector for s (a transfer) is saved: the path that list's entry for the same
 * cluster (dp_setting_same_cluster) names when that file does not exist yet, else
 * dp_user_inspector_path. list may be NULL. false (buf "") when neither is known. */
bool dp_inspector_save_path(const struct dp_settings *list, const struct dp_setting *s, char *buf,
                            size_t n);

/* The setting of `list` nearest to s (same GPU first, then sync and network class, then the
 * closest worker and PS counts, placement, precision, framework), considering only settings with an inspector
 * file that exists when having_inspector is true. NULL when none qualifies. */
const struct dp_setting *dp_settings_nearest(const struct dp_settings *list,
                                             const struct dp_setting *s, bool having_inspector);

#endif
