/* cmd_util.h: small helpers the commands share: a JSON document printed to stdout, an
 * ascending comparison of doubles for qsort, the seeded synthetic grouped graph that the
 * benchmarks time when no graph is given, the --exported-batch option that every command
 * reading a graph file takes, the cluster options (--gpu --ps --workers ...) with which
 * simulate, predict, compare and explain name a setting that need not be in the setting list
 * plus how such a setting finds its inspector, and reading the workload (a graph or a grouped
 * file) for predict and compare, and the 12 labels as JSON or a table (simulate, trace
 * extract). */
#ifndef DRIPLE_CMD_UTIL_H
#define DRIPLE_CMD_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "dp/graph_io.h"
#include "dp/grouped.h"
#include "dp/metrics.h"
#include "dp/session.h"
#include "dp/settings.h"
#include "dp/trace.h"

struct dp_jw;

/* The 12 labels as member key of w: {"gpu_mem_util": {"idle": .., "active": .., "peak": ..},
 * ...}. */
void cmd_jw_labels(struct dp_jw *w, const char *key, const double *labels);
/* Prints the 12 labels as a table (resource, idle, active, peak and its unit). */
void cmd_text_labels(const double *labels);
/* One line when a source's bursts do not make one iteration each (dp_bursts_info): they span
 * iterations, or an iteration holds several; nothing when a cycle is one iteration. prefix
 * leads the line ("", "simulated: "). */
void cmd_text_bursts(const char *prefix, const double *m, double iteration_ms);
/* qsort comparison: doubles in ascending order. */
int cmd_cmp_double(const void *a, const void *b);
/* The median of n >= 1 values (sorts them in place). */
double cmd_median(double *v, int n);
/* CPU time of the whole process (all its threads) in ms, for benchmark figures less sensitive
 * to other load than wall-clock ones. */
double cmd_cpu_ms(void);
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
/* Its table fragment (CLI_MORE(cmd_import_table) in a command's table). */
extern const struct cli_opt cmd_import_table[];
/* After a graph loaded with options from cmd_import_opts: prints on stderr, once, the op types
 * the reader did not know and kept with a generic cost ("driple: warning: m.onnx: 3 ops of
 * types driple does not know, kept with a generic cost: GridSample (3)"), and the batch the
 * reader assumed for a dynamic-batch export unless the command was given one (batch > 0). */
void cmd_import_warnings(const char *path, const struct dp_import_opts *o, int64_t batch);

/* The cluster options as given (NULL / 0: absent): --gpu NAME --sync ps|allreduce --ps N
 * --workers N --placement homo|hetero --network NET --machines M --gpus-per-machine G
 * --system NAME --framework NAME[:VERSION], and --gpus FILE / --systems FILE (the catalogs;
 * NULL: the shipped ones); then the options that modify any setting, a --setting's too
 * (cmd_cluster_apply): --precision --tf32 --accum --loader --cpu-cores --allreduce --shard --tp
 * --pp --microbatches --ep --recompute --seq-parallel. */
/* The cluster options as the usage messages show them (after "--gpu NAME"). */
#define CMD_CLUSTER_USAGE                                                                        \
    "--workers N --network NET [--sync ps|allreduce] [--ps N] [--machines M]\n"                 \
    "       [--gpus-per-machine G] [--system NAME] [--placement homo|hetero]\n"                  \
    "       [--framework tensorflow|pytorch[:VERSION|:ngc]] [--precision fp32|tf32|bf16|mixed|fp8]\n" \
    "       [--tf32 on|off] [--accum N] [--loader synthetic|cpu|dali] [--cpu-cores N]\n"         \
    "       [--allreduce auto|ring|tree] [--shard none|zero1|zero2|zero3|fsdp] [--tp N] [--pp N]\n" \
    "       [--microbatches N] [--ep N] [--recompute none|selective|full] [--seq-parallel]"
struct cmd_cluster {
    const char *gpu, *network, *placement, *precision, *sync, *framework, *gpus;
    int64_t     ps, workers, machines;
    /* issue 28/29 */
    const char *system, *systems, *tf32, *loader, *allreduce, *shard, *recompute;
    int64_t     gpus_per_machine, accum, cpu_cores, tp, pp, microbatches, ep;
    bool        seq_parallel;
};
/* Reads the cluster options into *o (query them with the other options, before any
 * positional). False, with c->bad set and the message printed, when a count is malformed or out
 * of range (--workers [1, 4096], --ps [1, 64], --machines [1, 1024], --gpus-per-machine
 * [1, 16], --accum [1, 65536], --cpu-cores [1, 1024], --tp/--pp/--microbatches/--ep
 * [1, 4096]). */
bool cmd_cluster_opts(struct cli *c, struct cmd_cluster *o);
/* Their table fragment, the one place a cluster option is declared: every command that calls
 * cmd_cluster_opts has CLI_MORE(cmd_cluster_table) in its table. */
extern const struct cli_opt cmd_cluster_table[];
/* True when an option naming the cluster (--gpu --network --placement --workers --ps
 * --machines --gpus-per-machine --system --sync --framework) was given. */
bool cmd_cluster_given(const struct cmd_cluster *o);
/* True when an option modifying a setting (--precision ... --seq-parallel) was given. */
bool cmd_cluster_modified(const struct cmd_cluster *o);
/* Builds the setting the options name (the GPU by dp_gpu_lookup: exact names only; --system
 * gives the GPU, GPUs per machine and network when they are not given; machines from
 * --machines, else dp_setting_cluster_machines with --gpus-per-machine, the system's or
 * DP_DEFAULT_GPUS_PER_MACHINE, the same for PS and all-reduce), then cmd_cluster_apply.
 * Returns 0, or 2 after printing why: usage of cmd for a missing option (--ps is needed with
 * parameter servers and refused with all-reduce), one line naming the option for an unknown or
 * near name (listing the candidates) or an impossible setting. */
int cmd_cluster_setting(const struct cmd_cluster *o, const struct dp_gpu_catalog *cat,
                        const char *cmd, const char *usage, struct dp_setting *out);
/* Sets the modifying options' fields of s (no finish, no check). Returns 0, or 2 after one
 * line naming the option for a value none of its names. */
int cmd_cluster_modify(const struct cmd_cluster *o, const char *cmd, struct dp_setting *s);
/* Applies the modifying options to s (a --setting's, or one cmd_cluster_setting built),
 * re-finishes it (its id reformatted) and checks it against its GPU and system
 * (dp_setting_check_gpu). Returns 0, or 2 after one line naming the option and the rule. */
int cmd_cluster_apply(const struct cmd_cluster *o, const struct dp_gpu_catalog *cat,
                      const char *cmd, struct dp_setting *s);
/* The TF32 rule assumed for s (dp_setting_describe_tf32) into buf; "" when s's GPU is not in
 * cat. */
void cmd_describe_tf32(const struct dp_setting *s, const struct dp_gpu_catalog *cat, char *buf,
                       size_t n);
/* The economics options of predict and compare: --epoch-samples N (1 .. 1e15; "1.28M" reads as
 * 1,280,000) into *samples, left as it is when absent, and --price USD_PER_GPU_HOUR (0 .. 1e4)
 * into *price (NaN when absent: each GPU's catalog price). False, with c->bad set and the
 * option named, when one is malformed or out of range. */
#define CMD_ECONOMICS_USAGE "[--epoch-samples N] [--price USD_PER_GPU_HOUR]"
bool cmd_economics_opts(struct cli *c, double *samples, double *price);
extern const struct cli_opt cmd_economics_table[]; /* their table fragment */

/* ---- what predict, compare and explain share ---- */
/* Their options: --grouped FILE (instead of GRAPH), --inspector M | --setting ID | the cluster
 * options, --settings FILE, --weights FILE, --setting-aware FILE|none, --batch N, --groups K,
 * --seed S, --exported-batch N. */
struct cmd_what_if {
    const char           *grouped, *inspector, *setting, *settings, *weights;
    const char           *sa; /* --setting-aware FILE | none (NULL: the shipped one) */
    int64_t               batch, groups, seed; /* 0, DP_DEFAULT_GROUPS, DP_DEFAULT_SEED */
    struct dp_import_opts io;
    struct cmd_cluster    cl;
};
/* Reads them (with the command's own options, before any positional). False, with c->bad set
 * and the message printed, when one is malformed or out of range. */
bool cmd_what_if_opts(struct cli *c, struct cmd_what_if *o);
/* Their table fragment (the import and cluster fragments included). */
extern const struct cli_opt cmd_what_if_table[];
/* Exactly one of --inspector, --setting and the cluster options (else the usage of cmd, exit
 * 2); opens the session (cmd_session_open) and finds the inspector: the file given, or the one
 * that serves the setting (cmd_session_inspector). *insp: its index (-1: the setting-aware
 * inspector, dp_session_predict); *s: the setting predicted
 * for, whose workers the derived figures use: the one named, or with --inspector the list's
 * entry for the inspector's setting (*have_setting false when the list has none). Returns 0, or
 * the exit status after printing why; *ss is set (to free) either way. */
int cmd_what_if_inspector(const struct cmd_what_if *o, const char *cmd, const char *usage,
                          struct dp_session **ss, int *insp, struct dp_setting *s,
                          bool *have_setting);

/* ---- the session (dp/session.h) that predict, compare, explain and dataset add open ---- */
/* Opens it on the setting list (--settings), catalog (--gpus), op weights (--weights) and
 * setting-aware inspector (--setting-aware FILE, "none": without one); NULL: the shipped ones.
 * Returns 0, or 1 after saying why. */
int cmd_session_open(const char *settings, const char *gpus, const char *weights, const char *sa,
                     struct dp_session **out);
/* The setting named by --setting ID (the list's, else the id parsed against the catalog, with
 * the modifying options applied: cmd_cluster_apply) or by the cluster options o (exactly one;
 * the caller checks) into *s. Returns 0, or the exit status
 * after printing why: 2 for a bad option (cmd_cluster_setting), 1 for an unknown id. */
int cmd_session_setting(struct dp_session *ss, const char *id, const struct cmd_cluster *o,
                        const char *cmd, const char *usage, struct dp_setting *s);
/* The inspector that serves s (dp_session_resolve: no nearest setting's). Returns 0, or 1 after
 * printing why (the files looked for, how to make one, or to pass --inspector M). */
int cmd_session_inspector(struct dp_session *ss, const struct dp_setting *s,
                          struct dp_resolution *r);
/* The workload: GRAPH (read with io, coarsened into `groups` groups with `seed`, features at
 * `batch`; 0: the graph's own) or --grouped FILE, exactly one (else the usage of cmd). Returns
 * 0, or the exit status after printing why (2 for usage). */
int cmd_session_workload(struct dp_session *ss, const char *graph, const char *grouped,
                         const struct dp_import_opts *io, int64_t batch, int64_t groups,
                         int64_t seed, const char *cmd, const char *usage);

/* The 12 raw outputs as a JSON array, member key of w. */
void cmd_jw_raw(struct dp_jw *w, const char *key, const float raw[DP_N_OUTPUTS]);
/* Prints the derived figures' formulas, one line each. */
void cmd_print_formulas(void);
/* Prints the document w to stdout and frees it; 0, or 1 after saying why it failed. */
int cmd_json_emit(struct dp_jw *w);

#endif
