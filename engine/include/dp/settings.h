/* settings.h: the GPU catalog ("driple-gpus/1", assets/gpus.json, spec-sheet figures with their
 * source; unknown = NaN or 0, never guessed), the interconnects, and setting lists
 * ("driple-settings/1"): a setting is the cluster an inspector was trained for (GPU, parameter
 * servers, workers, placement, network, machines, precision) plus the inspector file to use. */
#ifndef DP_SETTINGS_H
#define DP_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/status.h"

#define DP_NAME_MAX 64

/* One GPU model. Numbers the source did not give are NaN (doubles) or 0 (integers). */
struct dp_gpu {
    char   name[DP_NAME_MAX];         /* "V100-PCIe-16GB": the catalog key */
    char   architecture[DP_NAME_MAX]; /* "Volta (GV100)" */
    double fp32_tflops;               /* peak FP32 (non-tensor) */
    double fp16_tflops;               /* dense FP16 tensor-core peak; NaN: not read, or no
                                         tensor cores */
    double memory_gb;
    double bandwidth_gbps;            /* memory bandwidth, GB/s */
    int    sm_count;
    double tdp_w;
    int    year;
    char   source[512];               /* where the figures were read */
    char   notes[512];
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
/* dp_gpu_catalog_load of `path`, or of the shipped assets/gpus.json (found by dp_shipped_path,
 * shipped.h) when path is NULL. */
enum dp_status dp_gpu_catalog_load_default(const char *path, struct dp_gpu_catalog **out,
                                           struct dp_error *err);
/* Finds a GPU by name: exact, then case-insensitive, then the first entry (catalog order) whose
 * name starts with `name` ("V100" -> the first V100), then the first containing it ("2080Ti").
 * Returns a pointer into the catalog, or NULL. */
const struct dp_gpu *dp_gpu_find(const struct dp_gpu_catalog *c, const char *name);
/* Checks that g, an entry of c, has the figures the simulator needs (fp32_tflops and
 * bandwidth_gbps); DP_ERR_INVALID with "<catalog>:$.gpus[i]: ..." when one is unknown. */
enum dp_status dp_gpu_check_sim(const struct dp_gpu_catalog *c, const struct dp_gpu *g,
                                struct dp_error *err);
/* The short form used in setting ids: the name up to its first '-', without a leading "RTX"
 * ("V100-PCIe-16GB" -> "V100", "RTX2080Ti" -> "2080Ti"). Writes at most n bytes (NUL included). */
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
const char *dp_placement_name(enum dp_placement p); /* "homo" | "hetero" */
/* Parses "homo"/"ho" or "hetero"/"he" (case-insensitive); false (out untouched) otherwise. */
bool dp_placement_parse(const char *s, enum dp_placement *out);
const char *dp_precision_name(enum dp_precision p); /* "fp32" | "mixed" */
/* Parses "fp32"/"float32" or "mixed"/"fp16"/"amp" (case-insensitive); false otherwise. */
bool dp_precision_parse(const char *s, enum dp_precision *out);

/* One setting. Placement: homo = PS and workers spread together over the machines; hetero = the
 * PS on machines of their own, the workers on the others (needs machines >= 2 and a
 * cross-machine network). PCIe/NVLink settings have one machine. */
struct dp_setting {
    char              id[DP_NAME_MAX];  /* "V100-P1w2ho-PCIe" */
    char              gpu[DP_NAME_MAX]; /* a catalog name */
    int               ps;               /* >= 1 */
    int               workers;          /* >= 1 */
    enum dp_placement placement;
    enum dp_network   network;
    int               machines;         /* >= 1 */
    enum dp_precision precision;
    char              inspector[512];   /* resolved path ("" = none); see dp_settings_load */
};

/* A setting list in file order. */
struct dp_settings {
    int                n_settings;
    struct dp_setting *settings;
    char              *path; /* the file it came from ("" when built in memory) */
};

/* Reads a driple-settings/1 file: {format, settings: [{id, gpu, ps, workers, placement, network,
 * machines, precision, inspector}]}. `machines` defaults from placement and network, precision to
 * fp32, id to dp_setting_format_id. A relative `inspector` path is resolved against the settings
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

/* Formats "<gpu short>-P<ps>w<workers><ho|he>-<network>" plus "-mixed" for mixed precision
 * ("V100-P1w2ho-PCIe", "A100-P2w4ho-100GbE-mixed") into buf (n bytes). */
void dp_setting_format_id(const struct dp_setting *s, char *buf, size_t n);
/* Builds a setting on the fly (the explorer's what-if changes): machines <= 0 picks
 * dp_setting_default_machines, the id is formatted, inspector "". Fails (DP_ERR_INVALID) like
 * dp_setting_check. `gpu` is copied as given (look it up in the catalog first if wanted). */
enum dp_status dp_setting_make(const char *gpu, int workers, int ps, enum dp_network net,
                               int machines, enum dp_placement placement,
                               enum dp_precision precision, struct dp_setting *out,
                               struct dp_error *err);
/* Default machine count: 1 inside a machine (PCIe/NVLink); homo: one machine per worker (the PS
 * share them); hetero: one machine per worker and one per PS. */
int dp_setting_default_machines(int workers, int ps, enum dp_network net,
                                enum dp_placement placement);
/* Checks ranges (ps, workers in [1, 64], machines in [1, 128]) and consistency (hetero needs a
 * cross-machine network and machines >= 2; PCIe/NVLink need machines == 1). */
enum dp_status dp_setting_check(const struct dp_setting *s, struct dp_error *err);

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
 * cluster (GPU, PS, workers, placement, network, precision) names when that file does not exist
 * yet, else dp_user_inspector_path. list may be NULL. false (buf "") when neither is known. */
bool dp_inspector_save_path(const struct dp_settings *list, const struct dp_setting *s, char *buf,
                            size_t n);

/* The setting of `list` nearest to s (same GPU first, then network class, then the closest
 * worker and PS counts, placement, precision), considering only settings with an inspector
 * file that exists when having_inspector is true. NULL when none qualifies. */
const struct dp_setting *dp_settings_nearest(const struct dp_settings *list,
                                             const struct dp_setting *s, bool having_inspector);

#endif
