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
    "  networks: PCIe NVLink 1GbE 10GbE 25GbE 40GbE 100GbE IB-EDR IB-HDR (all-reduce: the "  \
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

int cmd_simulate(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_simulate_spec)) return c.rc;
    bool json = cli_flag(&c, "--json"), xla = cli_flag(&c, "--xla");
    const char *setting_id = cli_value(&c, "--setting");
    const char *settings_path = cli_value(&c, "--settings");
    const char *trace_out = cli_value(&c, "--trace");
    const char *optimizer = cli_value(&c, "--optimizer");
    int64_t batch = 0, seed = 1, iters = 0, seq = 0, input = 0;
    double sample_ms = 0, threshold = DP_TRACE_THRESHOLD;
    struct dp_import_opts io;
    struct cmd_cluster cl;
    struct dp_zoo_opts zo;
    dp_zoo_opts_default(&zo);
    bool ok = cmd_import_opts(&c, &io) && cmd_cluster_opts(&c, &cl) &&
              cli_int(&c, "--batch", 1, DP_BATCH_MAX, &batch) &&
              cli_int(&c, "--seq", 1, 1 << 16, &seq) && cli_int(&c, "--input", 1, 1 << 16, &input) &&
              cli_int(&c, "--seed", 0, INT64_MAX, &seed) &&
              cli_int(&c, "--iterations", 1, 5000, &iters) &&
              cli_double(&c, "--sample-ms", 0.01, 60000, &sample_ms) &&
              cli_double(&c, "--threshold", 1e-6, 0.999999, &threshold);
    const char *graph_path = cli_positional(&c, 0);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!graph_path) return cli_usage("simulate", SIM_USAGE, "missing GRAPH");
    if (!setting_id && !cl.gpu)
        return cli_usage("simulate", SIM_USAGE, "give --setting ID or --gpu NAME");
    if (setting_id && cmd_cluster_given(&cl))
        return cli_usage("simulate", SIM_USAGE,
                         "--setting and --gpu/--workers/--ps/--network/--machines/--placement/"
                         "--sync/--framework exclude each other");
    enum dp_precision prec = DP_PREC_FP32;
    if (cl.precision && !dp_precision_parse(cl.precision, &prec))
        return cli_usage("simulate", SIM_USAGE, "--precision %s: expected fp32 or mixed",
                         cl.precision);
    if (optimizer && !dp_optimizer_parse(optimizer, &zo.optimizer))
        return cli_usage("simulate", SIM_USAGE, "--optimizer %s: expected sgd, momentum or adam",
                         optimizer);
    if (seq && input)
        return cli_usage("simulate", SIM_USAGE, "--seq and --input exclude each other");
    zo.input = seq ? seq : input;
    zo.batch = batch;

    struct dp_gpu_catalog *cat = NULL;
    struct dp_settings *list = NULL;
    struct dp_graph *g = NULL;
    struct dp_sim_result r;
    struct dp_error err = {0};
    struct dp_setting s;
    int rc = load_catalog(cl.gpus, &cat);
    memset(&r, 0, sizeof r);
    if (rc) return rc;
    if (setting_id) {
        if (dp_settings_load_default(settings_path, cat, &list, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        /* A setting of the list, else any cluster the id names. */
        const struct dp_setting *f = dp_settings_find(list, setting_id);
        if (f) {
            s = *f;
        } else if (dp_setting_parse_id(setting_id, cat, &s, &err)) {
            char why[sizeof err.msg];
            snprintf(why, sizeof why, "%s", err.msg);
            dp_error_set(&err, err.status, "%s: no setting '%s' (%d settings), and as an id for "
                         "any cluster: %.400s", list->path, setting_id, list->n_settings, why);
            rc = cli_fail(&err);
            goto done;
        }
        if (cl.precision && prec != s.precision) {
            s.precision = prec;
            dp_setting_format_id(&s, s.id, sizeof s.id);
        }
    } else if ((rc = cmd_cluster_setting(&cl, cat, "simulate", SIM_USAGE, &s))) {
        goto done;
    }
    if (xla && s.framework == DP_FW_PYTORCH) {
        rc = cli_usage("simulate", SIM_USAGE, "--xla is TensorFlow's XLA auto-clustering; "
                       "setting %s runs PyTorch", s.id);
        goto done;
    }
    s.xla = xla;
    const struct dp_gpu *gpu = dp_gpu_find(cat, s.gpu);
    if (!gpu) {
        fprintf(stderr, "driple: %s: no GPU \"%s\" in the catalog\n", cat->path, s.gpu);
        rc = 1;
        goto done;
    }
    zo.precision = s.precision;
    double tokens = 0;
    if ((rc = load_graph(graph_path, &zo, seq || input || optimizer, &io, &g, &tokens)))
        goto done;
    if (dp_gpu_check_sim(cat, gpu, &err)) {
        /* No timing without speed figures; the memory footprint needs none. */
        struct dp_sim_workload *wl = NULL;
        double gb = NAN;
        bool oom = false;
        struct dp_error merr = {0};
        if (!dp_sim_workload_init(g, batch, &wl, &merr) &&
            !dp_sim_memory(wl, &s, gpu, NULL, &gb, &oom, &merr)) {
            char why[sizeof err.msg];
            snprintf(why, sizeof why, "%s", err.msg);
            dp_error_set(&err, err.status, "%.600s; its simulated memory footprint needs no speed "
                         "figure: %.2f GB per worker%s", why, gb, oom ? ", out of memory" : "");
        }
        dp_sim_workload_free(wl);
        rc = cli_fail(&err);
        goto done;
    }

    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.batch = batch;
    o.seed = (uint64_t)seed;
    if (iters) o.iterations = (int)iters;
    o.sample_ms = sample_ms;
    o.threshold = threshold;
    o.want_traces = trace_out != NULL;
    if (dp_simulate(g, &s, gpu, &o, &r, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (trace_out) {
        char comment[256];
        snprintf(comment, sizeof comment,
                 "simulated by driple (not measured): graph %s, setting %s, batch %lld, seed %lld",
                 dp_graph_name(g), s.id, (long long)r.batch, (long long)seed);
        if (dp_trace_write_sim((const struct dp_trace *const *)r.traces, r.n_traces, comment,
                               trace_out, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
    }
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_bool(w, "simulated", true);
        dp_jw_str(w, "graph", dp_graph_name(g));
        dp_jw_str(w, "setting", s.id);
        dp_jw_str(w, "gpu", s.gpu);
        dp_jw_str(w, "sync", dp_sync_name(s.sync));
        dp_jw_int(w, "workers", s.workers);
        dp_jw_int(w, "ps", s.ps);
        dp_jw_int(w, "machines", s.machines);
        dp_jw_str(w, "placement", dp_placement_name(s.placement));
        dp_jw_str(w, "network", dp_network_name(s.network));
        dp_jw_str(w, "precision", dp_precision_name(s.precision));
        dp_jw_str(w, "framework", dp_framework_name(s.framework));
        dp_jw_bool(w, "xla", s.xla);
        dp_jw_int(w, "batch", r.batch);
        dp_jw_int(w, "seed", seed);
        dp_jw_int(w, "iterations", r.n_iterations);
        dp_jw_num(w, "sample_ms", r.sample_ms);
        dp_jw_num(w, "iteration_ms", r.iteration_ms);
        dp_jw_num(w, "throughput", r.throughput);
        dp_jw_num(w, "tokens_per_sample", tokens > 0 ? tokens : NAN);
        dp_jw_num(w, "tokens_per_s", tokens > 0 ? tokens * r.throughput : NAN);
        dp_jw_num(w, "memory_gb", r.memory_gb);
        dp_jw_bool(w, "oom", r.oom);
        dp_jw_num(w, "mean_gpu_util", r.mean_gpu_util);
        dp_jw_num(w, "bytes_per_iter", r.bytes_per_iter);
        dp_jw_num(w, "grad_bytes", r.grad_bytes);
        dp_jw_num(w, "params", r.params);
        dp_jw_num(w, "gflops_per_iter", r.gflops_per_iter);
        dp_jw_str(w, "notes", r.notes);
        dp_jw_object(w, "breakdown_ms");
        const struct named_num parts[] = {{"compute", r.compute_ms}, {"pull", r.pull_ms},
                                          {"push", r.push_ms},       {"apply", r.apply_ms},
                                          {"wait", r.wait_ms},       {"allreduce", r.allreduce_ms}};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            dp_jw_num(w, parts[i].key, parts[i].v);
        dp_jw_end(w);
        cmd_jw_labels(w, "labels", r.labels);
        dp_jw_bursts(w, "bursts", r.labels, r.iteration_ms);
        dp_jw_str(w, "trace", trace_out);
        if ((rc = cmd_json_emit(w))) goto done;
    } else {
        printf("SIMULATED (not measured): %s on %s, batch %lld per worker, seed %lld\n",
               dp_graph_name(g), s.id, (long long)r.batch, (long long)seed);
        if (s.sync == DP_SYNC_ALLREDUCE)
            printf("  GPU %s, %d worker(s), all-reduce, %s, %d machine(s), %s, %s%s\n", s.gpu,
                   s.workers, dp_network_name(s.network), s.machines,
                   dp_precision_name(s.precision), dp_framework_name(s.framework),
                   s.xla ? " with XLA" : "");
        else
            printf("  GPU %s, %d worker(s), %d PS, %s placement, %s, %d machine(s), %s, %s%s\n",
                   s.gpu, s.workers, s.ps, dp_placement_name(s.placement),
                   dp_network_name(s.network), s.machines, dp_precision_name(s.precision),
                   dp_framework_name(s.framework), s.xla ? " with XLA" : "");
        if (s.sync == DP_SYNC_ALLREDUCE)
            printf("  iteration     %.2f ms (compute %.2f, all-reduce %.2f%s, update %.2f, wait "
                   "%.2f)\n", r.iteration_ms, r.compute_ms, r.allreduce_ms,
                   s.framework == DP_FW_PYTORCH ? " in buckets overlapping the backward pass"
                                                : " after the backward pass",
                   r.apply_ms, r.wait_ms);
        else
            printf("  iteration     %.2f ms (compute %.2f, pull %.2f, push %.2f, apply %.2f, "
                   "wait %.2f; pull/push overlap compute)\n",
                   r.iteration_ms, r.compute_ms, r.pull_ms, r.push_ms, r.apply_ms, r.wait_ms);
        printf("  throughput    %.1f samples/s (= batch x workers / iteration)", r.throughput);
        if (tokens > 0) printf(", %.0f tokens/s (%.0f tokens a sample)", r.throughput * tokens, tokens);
        printf("\n");
        if (r.notes[0]) printf("  GPU figures   %s\n", r.notes);
        printf("  GPU memory    %.2f GB per worker%s\n", r.memory_gb,
               r.oom ? "  OUT OF MEMORY on this GPU" : "");
        printf("  mean GPU util %.1f %%   network %.1f MB per iteration   %.3g parameters\n",
               r.mean_gpu_util, r.bytes_per_iter / 1e6, r.params);
        printf("  labels (simulated; mean over the workers; %.3g ms samples, %d iterations):\n",
               r.sample_ms, r.n_iterations);
        cmd_text_labels(r.labels);
        cmd_text_bursts("  ", r.labels, r.iteration_ms);
        if (trace_out) printf("  traces written to %s (simulated)\n", trace_out);
    }
done:
    dp_sim_result_free(&r);
    dp_graph_free(g);
    dp_settings_free(list);
    dp_gpu_catalog_free(cat);
    return rc;
}

