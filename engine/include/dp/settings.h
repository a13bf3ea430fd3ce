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
#define DP_GPU_MAX_ALIASES 8
/* The most GPUs one machine holds (a DGX-2 / HGX-2 has 16): a setting that would put more
 * workers in one machine is refused. */
#define DP_MAX_GPUS_PER_MACHINE 16

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
/* Finds a GPU by name: a paper-style short id ("V100", "2080Ti"; dp_gpu_short_name), its
 * catalog name, or a name or alias compared ignoring case, everything but letters and digits,
 * a leading "NVIDIA", "Tesla" or "GeForce" and a trailing "(...)" ("NVIDIA A100-SXM4-40GB",
 * "Tesla V100-SXM2-16GB", "GeForce RTX 2080 Ti", "K80 (AWS p2.8xlarge)"); then the one GPU
 * whose name starts with, else contains, `name` (NULL when several do). Returns a pointer into
 * the catalog, or NULL. The loader makes sure every name and alias finds its own GPU. */
const struct dp_gpu *dp_gpu_find(const struct dp_gpu_catalog *c, const char *name);
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

/* Interconnects. PCIe and NVLink are inside one machine; the rest cross machines. */
enum dp_network {
    DP_NET_PCIE, DP_NET_NVLINK, DP_NET_1GBE, DP_NET_10GBE, DP_NET_25GBE, DP_NET_40GBE,
    DP_NET_100GBE, DP_NET_IB_EDR, DP_NET_IB_HDR, DP_NET_COUNT
};
/* "PCIe", "NVLink", "1GbE", "10GbE", "25GbE", "40GbE", "100GbE", "IB-EDR", "IB-HDR". */
const char *dp_network_name(enum dp_network n);
/* Parses a name above (case-insensitive); false when unknown. */
bool dp_network_parse(const char *s, enum dp_network *out);
/* Nominal one-direction bandwidth in GB/s (line rate: 1GbE = 0.125, PCIe 3.0 x16 = 15.75,
 * NVLink 2 one link pair = 50, IB-EDR = 12.5, IB-HDR = 25). */
double dp_network_bandwidth_gbps(enum dp_network n);
/* Typical one-way message latency in microseconds. */
double dp_network_latency_us(enum dp_network n);
/* True for PCIe and NVLink (transfers stay inside one machine). */
bool dp_network_intra(enum dp_network n);

enum dp_placement { DP_PLACE_HOMO, DP_PLACE_HETERO };
enum dp_precision { DP_PREC_FP32, DP_PREC_MIXED };
/* How workers synchronise: parameter servers (the paper's, TensorFlow 1's) or NCCL all-reduce
 * (PyTorch DDP, TensorFlow `replicated`). */
enum dp_sync { DP_SYNC_PS, DP_SYNC_ALLREDUCE };
enum dp_framework { DP_FW_TENSORFLOW, DP_FW_PYTORCH };
const char *dp_sync_name(enum dp_sync s); /* "ps" | "allreduce" */
/* Parses "ps"/"parameter_server" or "allreduce"/"all-reduce"/"ar"/"replicated"/"nccl"
 * (case-insensitive); false (out untouched) otherwise. */
bool dp_sync_parse(const char *s, enum dp_sync *out);
const char *dp_framework_name(enum dp_framework f); /* "tensorflow" | "pytorch" */
/* Parses "tensorflow"/"tf" or "pytorch"/"torch"/"pt" (case-insensitive); false otherwise. */
bool dp_framework_parse(const char *s, enum dp_framework *out);
const char *dp_placement_name(enum dp_placement p); /* "homo" | "hetero" */
/* Parses "homo"/"ho" or "hetero"/"he" (case-insensitive); false (out untouched) otherwise. */
bool dp_placement_parse(const char *s, enum dp_placement *out);
const char *dp_precision_name(enum dp_precision p); /* "fp32" | "mixed" */
/* Parses "fp32"/"float32" or "mixed"/"fp16"/"amp" (case-insensitive); false otherwise. */
bool dp_precision_parse(const char *s, enum dp_precision *out);

/* One setting. Placement: homo = PS and workers spread together over the machines; hetero = the
 * PS on machines of their own, the workers on the others (needs machines >= 2 and a
 * cross-machine network). PCIe/NVLink settings have one machine. All-reduce settings have no
 * PS (ps 0) and homo placement; their network is the one between machines (inside a machine
 * NCCL uses NVLink or PCIe as the GPU has them), or PCIe/NVLink for one machine. */
struct dp_setting {
    char              id[DP_NAME_MAX];     /* "V100-P1w2ho-PCIe" */
    char              gpu[DP_NAME_MAX];    /* a catalog name */
    enum dp_sync      sync;
    int               ps;                  /* >= 1 (PS); 0 (all-reduce) */
    int               workers;             /* >= 1 */
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
};

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
 *   parameter servers: <gpu>-P<ps>w<workers><ho|he>-<network>[-M<machines>][-pytorch][-mixed]
 *   all-reduce:        <gpu>-AR<workers>-<network>[-M<machines>][-pytorch][-mixed]
 * ("V100-P1w2ho-PCIe" = V100-PCIe-16GB, 1 PS, 2 workers, homo, PCIe, fp32, TensorFlow;
 * "A100-80GB-SXM-AR16-IB-HDR-pytorch-mixed"). -M appears when machines is not
 * dp_setting_default_machines, -pytorch for PyTorch, -mixed for mixed precision. Formats s's id
 * into buf (n bytes). */
void dp_setting_format_id(const struct dp_setting *s, char *buf, size_t n);
/* Parses an id of the grammar above against the catalog: the GPU part is a short id, a catalog
 * name or an alias (dp_gpu_find without its prefix matches); suffixes are case-insensitive
 * ("-tensorflow", "-fp32" are accepted too). Every id dp_setting_format_id prints for a catalog
 * GPU parses back to that setting. Fills *out (dp_setting_finish: its id reformatted) on
 * success; on failure DP_ERR_INVALID (not of that form, an unknown network, bad counts, an
 * invalid combination) or DP_ERR_NOT_FOUND (no such GPU: the message lists the catalog) with
 * err->msg saying why, and *out untouched. */
enum dp_status dp_setting_parse_id(const char *id, const struct dp_gpu_catalog *cat,
                                   struct dp_setting *out, struct dp_error *err);
/* Completes a setting whose gpu, sync, ps, workers, placement, network, machines, precision
 * and framework are set: machines <= 0 picks dp_setting_default_machines, all-reduce gets ps 0
 * and homo placement, the id is formatted, then dp_setting_check. DP_ERR_INVALID as that, or
 * when the id would not fit in DP_NAME_MAX - 1 characters (a GPU name too long). */
enum dp_status dp_setting_finish(struct dp_setting *s, struct dp_error *err);
/* Builds a parameter-server TensorFlow setting on the fly (the explorer's what-if changes):
 * machines <= 0 picks dp_setting_default_machines, the id is formatted, inspector "". Fails
 * (DP_ERR_INVALID) like dp_setting_check. `gpu` is copied as given (look it up in the catalog
 * first if wanted). For all-reduce or PyTorch, set the fields and call dp_setting_finish. */
enum dp_status dp_setting_make(const char *gpu, int workers, int ps, enum dp_network net,
                               int machines, enum dp_placement placement,
                               enum dp_precision precision, struct dp_setting *out,
                               struct dp_error *err);
/* Default machine count: 1 inside a machine (PCIe/NVLink); PS homo: one machine per worker (the
 * PS share them; 2 for one worker); PS hetero: one machine per worker and one per PS;
 * all-reduce: 8 GPUs per machine (a DGX/HGX), at least 2 for 2 workers or more. */
int dp_setting_default_machines(enum dp_sync sync, int workers, int ps, enum dp_network net,
                                enum dp_placement placement);
/* The most worker GPUs s puts in one machine (workers spread evenly over the machines that
 * hold workers: all of them, or under hetero those the PS do not take). */
int dp_setting_gpus_per_machine(const struct dp_setting *s);
/* Checks ranges (PS: ps in [1, 64]; all-reduce: ps 0 and homo; workers in [1, 64], machines
 * in [1, 128]) and consistency (hetero needs a cross-machine network and machines >= 2;
 * PCIe/NVLink need machines == 1; at most DP_MAX_GPUS_PER_MACHINE workers in one machine). */
enum dp_status dp_setting_check(const struct dp_setting *s, struct dp_error *err);
/* True when a and b are the same cluster: GPU (names compared exactly), sync, PS, workers,
 * placement, network, machines, precision and framework; the id and inspector are not
 * compared. */
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
