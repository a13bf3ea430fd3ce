/* cmd_util.h: small helpers shared by the bench, zoo, explain and model (predict, compare, train,
 * transfer, inspector) commands and the explorer's importance pane (open to the other commands):
 * a JSON string or number written to a stream, an ascending
 * comparison of doubles for qsort, the seeded synthetic grouped graph that the benchmarks time
 * when no graph is given, the --exported-batch option that every command reading a graph
 * file takes, and the cluster options (--gpu --ps --workers --placement --network --machines
 * --precision) with which simulate, predict and explain name a setting that need not be in the
 * setting list, plus how such a setting finds its inspector. */
#ifndef DRIPLE_CMD_UTIL_H
#define DRIPLE_CMD_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "dp/graph_io.h"
#include "dp/grouped.h"
#include "dp/settings.h"

/* Writes s (NULL: "") as a JSON string literal: quote, backslash and control characters escaped. */
void cmd_json_str(FILE *f, const char *s);
/* Writes v with 9 significant digits, or null when it is NaN or infinite (JSON has neither). */
void cmd_json_num(FILE *f, double v);
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
/* After a graph loaded with options from cmd_import_opts: prints on stderr, once, the op types
 * the reader did not know and kept with a generic cost ("driple: warning: m.onnx: 3 ops of
 * types driple does not know, kept with a generic cost: GridSample (3)"). */
void cmd_import_warnings(const char *path, const struct dp_import_opts *o);

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

#endif
