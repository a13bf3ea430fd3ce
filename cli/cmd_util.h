/* cmd_util.h: small helpers the commands share: a JSON document printed to stdout, an
 * ascending comparison of doubles for qsort, the seeded synthetic grouped graph that the
 * benchmarks time when no graph is given, the --exported-batch option that every command
 * reading a graph file takes, the cluster options (--gpu --ps --workers ...) with which
 * simulate, predict, compare and explain name a setting that need not be in the setting list
 * plus how such a setting finds its inspector, and reading the workload (a graph or a grouped
 * file) for predict and compare, and the 12 labels as JSON or a table (simulate, trace
 * extract). (cmd_json_str and cmd_json_num serve the printers not yet on dp/json_out.h.) */
#ifndef DRIPLE_CMD_UTIL_H
#define DRIPLE_CMD_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "dp/graph_io.h"
#include "dp/grouped.h"
#include "dp/metrics.h"
#include "dp/settings.h"
#include "dp/trace.h"

struct dp_jw;

/* Writes s (NULL: "") as a JSON string literal: quote, backslash and control characters escaped. */
void cmd_json_str(FILE *f, const char *s);
/* Writes v in the one number format of every JSON output (dp_json_num_text, dp/json_out.h):
 * the shortest text that reads back as v, null when it is NaN or infinite. For the printers
 * not yet on dp/json_out.h (bench). */
void cmd_json_num(FILE *f, double v);
/* The 12 labels as member key of w: {"gpu_mem_util": {"idle": .., "active": .., "peak": ..},
 * ...}. */
void cmd_jw_labels(struct dp_jw *w, const char *key, const double *labels);
/* Prints the 12 labels as a table (resource, idle, active, peak and its unit). */
void cmd_text_labels(const double *labels);
/* qsort comparison: doubles in ascending order. */
int cmd_cmp_double(const void *a, const void *b);
/* A seeded random connected grouped graph of n >= 1 groups (a random spanning tree plus about
 * 1.8 n chords, de-duplicated) with features in the ranges Driple's grouped graphs show (tensor
 * size 0..1e7, 1..50 ops, op weight 0..3). The same seed gives the same graph. New graph owned
 * by the caller (dp_grouped_free); NULL when out of memory. */
struct dp_grouped *cmd_synthetic_grouped(int n, uint64_t seed);
/* Reads `--exported-batch N` (the batch size the graph was exported with, 1..2^40) into *o, which
 * it first resets (exported_batch 0 = detect from the graph). Query it with the other options,
 * before any positional. False, with c->bad set and the message naming the option printed, when
 * the value is malformed or out of range; true when absent or valid. */
bool cmd_import_opts(struct cli *c, struct dp_import_opts *o);

/* The cluster options as given (NULL / 0: absent): --gpu NAME --sync ps|allreduce --ps N
 * --workers N --placement homo|hetero --network NET --machines M --precision fp32|mixed
 * --framework tensorflow|pytorch, and --gpus FILE (the catalog; NULL: the shipped one). */
/* The cluster options as the usage messages show them (after "--gpu NAME"). */
#define CMD_CLUSTER_USAGE                                                                        \
    "--workers N --network NET [--sync ps|allreduce] [--ps N] [--machines M]\n"                 \
    "       [--placement homo|hetero] [--precision fp32|mixed] [--framework tensorflow|pytorch]"
struct cmd_cluster {
    const char *gpu, *network, *placement, *precision, *sync, *framework, *gpus;
    int64_t     ps, workers, machines;
};
/* Reads the cluster options into *o (query them with the other options, before any
 * positional). False, with c->bad set and the message printed, when --ps, --workers or
 * --machines is malformed or out of range ([1, 64], [1, 64], [1, 128]). */
bool cmd_cluster_opts(struct cli *c, struct cmd_cluster *o);
/* True when an option naming the cluster (all but --precision and --gpus) was given. */
bool cmd_cluster_given(const struct cmd_cluster *o);
/* Builds the setting the options name (the GPU found with dp_gpu_find in cat, machines 0 =
 * dp_setting_default_machines). Returns 0, or the exit status after printing why: 2 (usage of
 * cmd) for a missing option (--ps is needed with parameter servers and refused with
 * all-reduce), an unknown GPU, sync, network, placement, precision or framework; 1 when the
 * combination is invalid (dp_setting_finish's message: too many GPUs in one machine, ...). */
int cmd_cluster_setting(const struct cmd_cluster *o, const struct dp_gpu_catalog *cat,
                        const char *cmd, const char *usage, struct dp_setting *out);
/* The setting named by --setting ID or by the cluster options o (exactly one; the caller
 * checks) and its inspector file, for predict and explain. ID is looked up in the setting list
 * (settings_file, NULL: the shipped one) first; an ID not in it is parsed against the catalog
 * (dp_setting_parse_id), as are the options. Such a setting takes the inspector of the list's
 * entry for the same cluster (dp_setting_same_cluster) when that file exists, else the user directory's file (dp_user_inspector_path). Fills *s (the list's entry
 * when there is one) and path (n bytes). Returns 0, or the exit status after printing why: 2
 * for a bad option (cmd_cluster_setting), 1 otherwise (an unknown or ambiguous id, no inspector
 * file: the message names the file looked for and how to make one). */
int cmd_setting_resolve(const char *id, const struct cmd_cluster *o, const char *settings_file,
                        const char *cmd, const char *usage, struct dp_setting *s, char *path,
                        size_t n);

/* Reading the workload and writing results, for predict and compare. */
/* The default setting list found as every shipped file is (dp_shipped_path), into buf (n
 * bytes); when none is readable, assets/settings/default.json, whose load then fails naming it.
 * Returns buf. */
const char *cmd_default_settings(char *buf, size_t n);
/* The grouped graph of GRAPH (read with io, coarsened into `groups` groups with `seed`,
 * features at `batch`, op weights from `weights` or the shipped table) or of --grouped FILE:
 * exactly one of graph_path and grouped_path (else the usage of cmd). *unknown: the op types
 * without a weight (caller frees; NULL when none); *params: GRAPH's parameter count (the sum
 * over its variables), NaN for a grouped file, which does not keep it. Returns 0, or the exit
 * status after printing why (2 for usage). */
int cmd_load_grouped(const char *graph_path, const char *grouped_path,
                     const struct dp_import_opts *io, int64_t batch, int64_t groups, int64_t seed,
                     const char *weights, const char *cmd, const char *usage,
                     struct dp_grouped **out, char **unknown, double *params);
/* A setting's worker count in the list at `file` (NULL: the default list); 0 when unknown. */
int cmd_setting_workers(const char *file, const char *id);
/* The 12 raw outputs as a JSON array, member key of w. */
void cmd_jw_raw(struct dp_jw *w, const char *key, const float raw[DP_N_OUTPUTS]);
/* Prints the derived figures' formulas, one line each. */
void cmd_print_formulas(void);
/* Prints the document w to stdout and frees it; 0, or 1 after saying why it failed. */
int cmd_json_emit(struct dp_jw *w);

#endif
