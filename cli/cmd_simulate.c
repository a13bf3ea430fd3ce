/* cmd_simulate.c: `driple simulate`: the training simulator on one graph and setting (an id
 * of the list or any cluster the options name): timings, throughput (tokens/s too for the
 * zoo's sequence models), memory, the breakdown of an iteration, the 12 labels, and the
 * per-worker traces on request. Every figure is labelled simulated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/graph_io.h"
#include "dp/json_out.h"
#include "dp/settings.h"
#include "dp/sim.h"
#include "dp/trace.h"
#include "dp/zoo.h"

#define SIM_USAGE                                                                               \
    "driple simulate GRAPH (--setting ID [--settings FILE] | --gpu NAME " CMD_CLUSTER_USAGE    \
    ")\n       [--batch N] [--exported-batch N] [--seq N | --input N] [--optimizer O] [--seed S] " \
    "[--iterations N] [--sample-ms MS]\n       [--threshold FRAC] [--trace OUT.csv] "          \
    "[--gpus FILE] [--xla] [--json]\n"                                                        \
    "  GRAPH: a graph file (driple-graph/1, .pbtxt, .onnx) or zoo:MODEL (driple zoo list;\n" \
    "  --seq/--input and --optimizer sgd|momentum|adam build it)\n"                          \
    "  networks: PCIe NVLink 1GbE 10GbE 25GbE 40GbE 100GbE 200GbE 400GbE IB-EDR IB-HDR IB-NDR\n"\
    "  (all-reduce: the "  \
    "network between machines; inside one NCCL uses NVLink or PCIe as the GPU has them)\n"   \
    "  --xla: TensorFlow with XLA auto-clustering (TF_XLA_FLAGS=--tf_xla_auto_jit=2): batch "    \
    "norms fuse with their element-wise neighbours; refused for PyTorch\n"                   \
    "  throughput = batch x workers / iteration (samples/s); every figure is simulated"
struct named_num {
    const char *key;
    double      v;
};

/* --- loading --- */

static int load_catalog(const char *path, struct dp_gpu_catalog **out) {
    struct dp_error err = {0};
    if (dp_gpu_catalog_load_default(path, out, &err)) return cli_fail(&err);
    return 0;
}

/* GRAPH: a file (read with io), or zoo:MODEL built with zo (its batch, precision, input or
 * sequence length and optimizer); *tokens gets a zoo sequence model's tokens per sample (0
 * otherwise). zoo_given: an option only zoo:MODEL takes was given. */
static int load_graph(const char *spec, struct dp_zoo_opts *zo, bool zoo_given,
                      const struct dp_import_opts *io, struct dp_graph **out, double *tokens) {
    struct dp_error err = {0};
    *tokens = 0;
    if (!strncmp(spec, "zoo:", 4)) {
        if (io && io->exported_batch)
            return cli_usage("simulate", SIM_USAGE,
                             "--exported-batch needs a graph file (zoo:MODEL is built at --batch)");
        if (dp_zoo_build(spec + 4, zo, out, &err)) return cli_fail(&err);
        const struct dp_zoo_info *zi = dp_zoo_find(spec + 4);
        if (zi && zi->token_streams)
            *tokens = (double)zi->token_streams * (zo->input ? zo->input : zi->default_input);
        return 0;
    }
    if (zoo_given)
        return cli_usage("simulate", SIM_USAGE,
                         "--seq, --input and --optimizer build zoo:MODEL; %s is a graph file", spec);
    if (dp_graph_load(spec, io, out, &err)) return cli_fail(&err);
    cmd_import_warnings(spec, io, zo->batch);
    return 0;
}

/* --- simulate --- */

/* The command line. */
struct sim_args {
    bool               json, xla;
    const char        *setting_id, *settings_path, *trace_out, *optimizer, *graph_path;
    int64_t            batch, seed, iters, seq, input;
    double             sample_ms, threshold;
    struct dp_import_opts io;
    struct cmd_cluster cl;
};

static const struct cli_opt simulate_opts[] = {
    {"--setting", "ID", NULL, 0, 0, "the setting by its id (V100-P1w2ho-PCIe)", NULL},
    {"--settings", "FILE", "assets/settings/default.json", 0, 0,
     "the setting list --setting looks in", NULL},
    {"--batch", "N", "the graph's", 1, (double)DP_BATCH_MAX, "the batch size per worker", NULL},
    {"--seq", "N", "the model's", 1, 1 << 16, "zoo:MODEL's sequence length", NULL},
    {"--input", "N", "the model's", 1, 1 << 16, "zoo:MODEL's input (image side or tokens)", NULL},
    {"--optimizer", "sgd|momentum|adam", "momentum", 0, 0, "zoo:MODEL's optimizer", NULL},
    {"--seed", "S", "1", 0, (double)INT64_MAX, "the simulation's seed", NULL},
    {"--iterations", "N", "the simulator's", 1, 5000, "iterations simulated", NULL},
    {"--sample-ms", "MS", "the simulator's", 0.01, 60000, "the trace's sampling interval", NULL},
    {"--threshold", "FRAC", CLI_STR(DP_TRACE_THRESHOLD), 1e-6, 0.999999,
     "the burst threshold, a fraction of the peak", NULL},
    {"--trace", "OUT.csv", NULL, 0, 0, "also write the simulated traces", NULL},
    {"--xla", NULL, NULL, 0, 0, "TensorFlow with XLA auto-clustering", NULL},
    {"--json", NULL, NULL, 0, 0, "print the result as JSON", NULL},
    CLI_MORE(cmd_import_table),
    CLI_MORE(cmd_cluster_table),
    CLI_END,
};
const struct cli_spec cmd_simulate_spec = {
    "simulate", "a training job in the simulator: the 12 metrics and the iteration time",
    SIM_USAGE, simulate_opts, NULL};

/* Reads argv into *a; returns 0, -1 after printing the help, or the exit status after saying
 * why. */
static int sim_args_read(int argc, char **argv, struct sim_args *a) {
    struct cli c;
    memset(a, 0, sizeof *a);
    a->seed = 1;
    a->threshold = DP_TRACE_THRESHOLD;
    if (!cli_init(&c, argc, argv, &cmd_simulate_spec)) return c.rc ? c.rc : -1; /* -1: helped */
    a->json = cli_flag(&c, "--json");
    a->xla = cli_flag(&c, "--xla");
    a->setting_id = cli_value(&c, "--setting");
    a->settings_path = cli_value(&c, "--settings");
    a->trace_out = cli_value(&c, "--trace");
    a->optimizer = cli_value(&c, "--optimizer");
    bool ok = cmd_import_opts(&c, &a->io) && cmd_cluster_opts(&c, &a->cl) &&
              cli_int(&c, "--batch", 1, DP_BATCH_MAX, &a->batch) &&
              cli_int(&c, "--seq", 1, 1 << 16, &a->seq) &&
              cli_int(&c, "--input", 1, 1 << 16, &a->input) &&
              cli_int(&c, "--seed", 0, INT64_MAX, &a->seed) &&
              cli_int(&c, "--iterations", 1, 5000, &a->iters) &&
              cli_double(&c, "--sample-ms", 0.01, 60000, &a->sample_ms) &&
              cli_double(&c, "--threshold", 1e-6, 0.999999, &a->threshold);
    a->graph_path = cli_positional(&c, 0);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!a->graph_path) return cli_usage("simulate", SIM_USAGE, "missing GRAPH");
    if (!a->setting_id && !cmd_cluster_given(&a->cl))
        return cli_usage("simulate", SIM_USAGE, "give --setting ID or --gpu NAME (or --system)");
    if (a->setting_id && cmd_cluster_given(&a->cl))
        return cli_usage("simulate", SIM_USAGE,
                         "--setting and --gpu/--workers/--ps/--network/--machines/--placement/"
                         "--sync/--framework/--system/--gpus-per-machine exclude each other");
    if (a->seq && a->input)
        return cli_usage("simulate", SIM_USAGE, "--seq and --input exclude each other");
    return 0;
}

/* The setting simulated: the list's (or any cluster its id names) with the modifying options
 * applied, else the cluster the options name. Returns 0, or the exit status after saying why. */
static int sim_setting(const struct sim_args *a, const struct dp_gpu_catalog *cat,
                       struct dp_setting *s) {
    struct dp_error err = {0};
    struct dp_settings *list = NULL;
    if (!a->setting_id) return cmd_cluster_setting(&a->cl, cat, "simulate", SIM_USAGE, s);
    if (dp_settings_load_default(a->settings_path, cat, &list, &err)) return cli_fail(&err);
    const struct dp_setting *f = dp_settings_find(list, a->setting_id);
    int rc = 0;
    if (f) {
        *s = *f;
    } else if (dp_setting_parse_id(a->setting_id, cat, s, &err)) {
        char why[sizeof err.msg];
        snprintf(why, sizeof why, "%s", err.msg);
        dp_error_set(&err, err.status, "%s: no setting '%s' (%d settings), and as an id for any "
                     "cluster: %.400s", list->path, a->setting_id, list->n_settings, why);
        rc = cli_fail(&err);
    }
    dp_settings_free(list);
    return rc ? rc : cmd_cluster_apply(&a->cl, cat, "simulate", s);
}

/* A GPU without speed figures: the error, with the memory footprint that needs none. */
static int sim_memory_only(const struct dp_graph *g, int64_t batch, const struct dp_setting *s,
                           const struct dp_gpu *gpu, struct dp_error *err) {
    struct dp_sim_workload *wl = NULL;
    double gb = NAN;
    bool oom = false;
    struct dp_error merr = {0};
    if (!dp_sim_workload_init(g, batch, &wl, &merr) &&
        !dp_sim_memory(wl, s, gpu, NULL, &gb, &oom, &merr)) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        dp_error_set(err, err->status, "%.600s; its simulated memory footprint needs no speed "
                     "figure: %.2f GB per worker%s", why, gb, oom ? ", out of memory" : "");
    }
    dp_sim_workload_free(wl);
    return cli_fail(err);
}

/* The setting's fields as JSON members of w. */
static void sim_jw_setting(struct dp_jw *w, const struct dp_setting *s, const char *tf32) {
    char fw[32];
    dp_framework_format(s->framework, s->fw_version, fw, sizeof fw);
    dp_jw_str(w, "setting", s->id);
    dp_jw_str(w, "gpu", s->gpu);
    dp_jw_str(w, "system", s->system[0] ? s->system : NULL);
    dp_jw_str(w, "sync", dp_sync_name(s->sync));
    dp_jw_int(w, "workers", s->workers);
    dp_jw_int(w, "ps", s->ps);
    dp_jw_int(w, "machines", s->machines);
    dp_jw_int(w, "gpus_per_machine", dp_setting_gpus_per_machine(s));
    dp_jw_str(w, "placement", dp_placement_name(s->placement));
    dp_jw_str(w, "network", dp_network_name(s->network));
    dp_jw_str(w, "precision", dp_precision_name(s->precision));
    dp_jw_str(w, "framework", fw);
    dp_jw_str(w, "tf32", tf32);
    dp_jw_int(w, "accum", dp_setting_accum(s));
    dp_jw_str(w, "loader", dp_loader_name(s->loader));
    dp_jw_str(w, "allreduce_algo", dp_allreduce_algo_name(s->ar_algo));
    dp_jw_bool(w, "xla", s->xla);
}

static int sim_emit_json(const struct sim_args *a, const struct dp_graph *g,
                         const struct dp_setting *s, const struct dp_sim_result *r,
                         double tokens, const char *tf32) {
    struct dp_jw *w = dp_jw_new();
    dp_jw_bool(w, "simulated", true);
    dp_jw_str(w, "graph", dp_graph_name(g));
    sim_jw_setting(w, s, tf32);
    dp_jw_int(w, "batch", r->batch);
    dp_jw_int(w, "seed", a->seed);
    dp_jw_int(w, "iterations", r->n_iterations);
    dp_jw_num(w, "sample_ms", r->sample_ms);
    dp_jw_num(w, "iteration_ms", r->iteration_ms);
    dp_jw_num(w, "throughput", r->throughput);
    dp_jw_num(w, "tokens_per_sample", tokens > 0 ? tokens : NAN);
    dp_jw_num(w, "tokens_per_s", tokens > 0 ? tokens * r->throughput : NAN);
    dp_jw_num(w, "memory_gb", r->memory_gb);
    dp_jw_bool(w, "oom", r->oom);
    dp_jw_num(w, "mean_gpu_util", r->mean_gpu_util);
    dp_jw_num(w, "bytes_per_iter", r->bytes_per_iter);
    dp_jw_num(w, "grad_bytes", r->grad_bytes);
    dp_jw_num(w, "params", r->params);
    dp_jw_num(w, "gflops_per_iter", r->gflops_per_iter);
    dp_jw_str(w, "notes", r->notes);
    dp_jw_object(w, "breakdown_ms");
    const struct named_num parts[] = {{"compute", r->compute_ms}, {"pull", r->pull_ms},
                                      {"push", r->push_ms},       {"apply", r->apply_ms},
                                      {"wait", r->wait_ms},       {"allreduce", r->allreduce_ms}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        dp_jw_num(w, parts[i].key, parts[i].v);
    dp_jw_end(w);
    cmd_jw_labels(w, "labels", r->labels);
    dp_jw_bursts(w, "bursts", r->labels, r->iteration_ms);
    dp_jw_str(w, "trace", a->trace_out);
    return cmd_json_emit(w);
}

static void sim_emit_text(const struct sim_args *a, const struct dp_graph *g,
                          const struct dp_setting *s, const struct dp_sim_result *r,
                          double tokens, const char *tf32) {
    char fw[32];
    dp_framework_format(s->framework, s->fw_version, fw, sizeof fw);
    printf("SIMULATED (not measured): %s on %s, batch %lld per worker, seed %lld\n",
           dp_graph_name(g), s->id, (long long)r->batch, (long long)a->seed);
    printf("  GPU %s, %d worker(s) on %d machine(s) of up to %d GPUs%s%s, ", s->gpu, s->workers,
           s->machines, dp_setting_gpus_per_machine(s), s->system[0] ? ", system " : "",
           s->system);
    if (s->sync == DP_SYNC_ALLREDUCE) printf("all-reduce, ");
    else printf("%d PS, %s placement, ", s->ps, dp_placement_name(s->placement));
    printf("%s, %s, %s%s\n", dp_network_name(s->network), dp_precision_name(s->precision), fw,
           s->xla ? " with XLA" : "");
    if (tf32[0]) printf("  TF32          %s\n", tf32);
    if (s->sync == DP_SYNC_ALLREDUCE)
        printf("  iteration     %.2f ms (compute %.2f, all-reduce %.2f%s, update %.2f, wait "
               "%.2f)\n", r->iteration_ms, r->compute_ms, r->allreduce_ms,
               s->framework == DP_FW_PYTORCH ? " in buckets overlapping the backward pass"
                                             : " after the backward pass",
               r->apply_ms, r->wait_ms);
    else
        printf("  iteration     %.2f ms (compute %.2f, pull %.2f, push %.2f, apply %.2f, "
               "wait %.2f; pull/push overlap compute)\n",
               r->iteration_ms, r->compute_ms, r->pull_ms, r->push_ms, r->apply_ms, r->wait_ms);
    printf("  throughput    %.1f samples/s (= batch x workers / iteration)", r->throughput);
    if (tokens > 0)
        printf(", %.0f tokens/s (%.0f tokens a sample)", r->throughput * tokens, tokens);
    printf("\n");
    if (r->notes[0]) printf("  GPU figures   %s\n", r->notes);
    printf("  GPU memory    %.2f GB per worker%s\n", r->memory_gb,
           r->oom ? "  OUT OF MEMORY on this GPU" : "");
    printf("  mean GPU util %.1f %%   network %.1f MB per iteration   %.3g parameters\n",
           r->mean_gpu_util, r->bytes_per_iter / 1e6, r->params);
    printf("  labels (simulated; mean over the workers; %.3g ms samples, %d iterations):\n",
           r->sample_ms, r->n_iterations);
    cmd_text_labels(r->labels);
    cmd_text_bursts("  ", r->labels, r->iteration_ms);
    if (a->trace_out) printf("  traces written to %s (simulated)\n", a->trace_out);
}

/* Runs the simulator on g for s and writes its traces when asked. */
static int sim_run(const struct sim_args *a, const struct dp_graph *g, const struct dp_setting *s,
                   const struct dp_gpu *gpu, struct dp_sim_result *r) {
    struct dp_error err = {0};
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.batch = a->batch;
    o.seed = (uint64_t)a->seed;
    if (a->iters) o.iterations = (int)a->iters;
    o.sample_ms = a->sample_ms;
    o.threshold = a->threshold;
    o.want_traces = a->trace_out != NULL;
    if (dp_simulate(g, s, gpu, &o, r, &err)) return cli_fail(&err);
    if (!a->trace_out) return 0;
    char comment[384];
    snprintf(comment, sizeof comment,
             "simulated by driple (not measured): graph %s, setting %s, batch %lld, seed %lld",
             dp_graph_name(g), s->id, (long long)r->batch, (long long)a->seed);
    if (dp_trace_write_sim((const struct dp_trace *const *)r->traces, r->n_traces, comment,
                           a->trace_out, &err))
        return cli_fail(&err);
    return 0;
}

int cmd_simulate(int argc, char **argv) {
    struct sim_args a;
    int rc = sim_args_read(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    struct dp_zoo_opts zo;
    dp_zoo_opts_default(&zo);
    if (a.optimizer && !dp_optimizer_parse(a.optimizer, &zo.optimizer))
        return cli_usage("simulate", SIM_USAGE, "--optimizer %s: expected sgd, momentum or adam",
                         a.optimizer);
    zo.input = a.seq ? a.seq : a.input;
    zo.batch = a.batch;

    struct dp_gpu_catalog *cat = NULL;
    struct dp_graph *g = NULL;
    struct dp_sim_result r;
    struct dp_error err = {0};
    struct dp_setting s;
    memset(&r, 0, sizeof r);
    if ((rc = load_catalog(a.cl.gpus, &cat))) return rc;
    if ((rc = sim_setting(&a, cat, &s))) goto done;
    if (a.xla && s.framework == DP_FW_PYTORCH) {
        rc = cli_usage("simulate", SIM_USAGE, "--xla is TensorFlow's XLA auto-clustering; "
                       "setting %s runs PyTorch", s.id);
        goto done;
    }
    s.xla = a.xla;
    const struct dp_gpu *gpu = dp_gpu_find(cat, s.gpu);
    zo.precision = dp_precision_graph(s.precision);
    double tokens = 0;
    if ((rc = load_graph(a.graph_path, &zo, a.seq || a.input || a.optimizer, &a.io, &g, &tokens)))
        goto done;
    if (dp_gpu_check_sim(cat, gpu, &err)) {
        rc = sim_memory_only(g, a.batch, &s, gpu, &err);
        goto done;
    }
    if ((rc = sim_run(&a, g, &s, gpu, &r))) goto done;
    char tf32[512];
    cmd_describe_tf32(&s, cat, tf32, sizeof tf32);
    if (a.json) rc = sim_emit_json(&a, g, &s, &r, tokens, tf32);
    else sim_emit_text(&a, g, &s, &r, tokens, tf32);
done:
    dp_sim_result_free(&r);
    dp_graph_free(g);
    dp_gpu_catalog_free(cat);
    return rc;
}
