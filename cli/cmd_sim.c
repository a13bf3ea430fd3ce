/* cmd_sim.c: `driple simulate` (the PS training simulator on one graph and setting),
 * `driple trace extract` (labels from measured or simulated traces) and `driple calibrate`
 * (the simulator against published tf_cnn_benchmarks throughput). Simulated figures are
 * labelled "simulated" in every output. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/dataset.h"
#include "dp/graph_io.h"
#include "dp/settings.h"
#include "dp/sim.h"
#include "dp/trace.h"
#include "dp/zoo.h"


#define SIM_USAGE                                                                               \
    "driple simulate GRAPH (--setting ID [--settings FILE] | --gpu NAME " CMD_CLUSTER_USAGE    \
    ")\n       [--batch N] [--exported-batch N] [--seed S] "                                      \
    "[--iterations N] [--sample-ms MS]\n       [--threshold FRAC] [--trace OUT.csv] "          \
    "[--gpus FILE] [--json]\n"                                                                \
    "  GRAPH: a graph file (driple-graph/1, .pbtxt, .onnx) or zoo:MODEL (driple zoo list)\n"  \
    "  networks: PCIe NVLink 1GbE 10GbE 25GbE 40GbE 100GbE IB-EDR IB-HDR (all-reduce: the "  \
    "network between machines; inside one NCCL uses NVLink or PCIe as the GPU has them)\n"   \
    "  throughput = batch x workers / iteration (samples/s); every figure is simulated"
#define TRACE_USAGE                                                                             \
    "driple trace extract TRACE.csv [--net NET.csv] [--threshold FRAC] [--json] "             \
    "[--driple-csv OUT.csv [--gpu G] [--model M] [--job J] [--batch N]]\n"                    \
    "  TRACE.csv: nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,"       \
    "memory.used --format=csv -lms 100, a timestamp,rx_bytes,tx_bytes counter CSV, or a "     \
    "driple simulate --trace file\n"                                                          \
    "  a burst is a maximal run of samples above FRAC x the resource's maximum (default 0.1); " \
    "idle/active = mean gap/burst length (ms), peak = mean of each burst's largest sample"
/* --- JSON and text printers --- */

struct named_num {
    const char *key;
    double      v;
};

/* Writes "key":v pairs separated by commas (no braces). */
static void json_nums(FILE *f, const struct named_num *v, int n) {
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s\"%s\":", i ? "," : "", v[i].key);
        cmd_json_num(f, v[i].v);
    }
}

static void json_labels(FILE *f, const double *labels) {
    fputc('{', f);
    for (int r = 0; r < DP_N_RESOURCES; r++) {
        const struct named_num l[3] = {
            {"idle", labels[3 * r]}, {"active", labels[3 * r + 1]}, {"peak", labels[3 * r + 2]}};
        if (r) fputc(',', f);
        cmd_json_str(f, dp_series_name((enum dp_series_kind)r));
        fputs(":{", f);
        json_nums(f, l, 3);
        fputc('}', f);
    }
    fputc('}', f);
}

static void text_labels(const double *labels) {
    printf("  %-13s %12s %12s %12s\n", "resource", "idle (ms)", "active (ms)", "peak");
    for (int r = 0; r < DP_N_RESOURCES; r++)
        printf("  %-13s %12.2f %12.2f %12.2f %s\n", dp_series_name((enum dp_series_kind)r),
               labels[3 * r], labels[3 * r + 1], labels[3 * r + 2],
               dp_series_unit((enum dp_series_kind)r));
}

/* --- loading --- */

static int load_catalog(const char *path, struct dp_gpu_catalog **out) {
    struct dp_error err = {0};
    if (dp_gpu_catalog_load_default(path, out, &err)) return cli_fail(&err);
    return 0;
}

/* GRAPH: a file (read with io), or zoo:MODEL built at the given batch (0 = the model's
 * default). */
static int load_graph(const char *spec, int64_t batch, enum dp_precision prec,
                      const struct dp_import_opts *io, struct dp_graph **out) {
    struct dp_error err = {0};
    if (!strncmp(spec, "zoo:", 4)) {
        if (io && io->exported_batch)
            return cli_usage("simulate", SIM_USAGE,
                             "--exported-batch needs a graph file (zoo:MODEL is built at --batch)");
        struct dp_zoo_opts zo;
        dp_zoo_opts_default(&zo);
        zo.batch = batch;
        zo.precision = prec;
        if (dp_zoo_build(spec + 4, &zo, out, &err)) return cli_fail(&err);
        return 0;
    }
    if (dp_graph_load(spec, io, out, &err)) return cli_fail(&err);
    return 0;
}

/* --- simulate --- */

int cmd_simulate(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "simulate")) return 1;
    bool json = cli_flag(&c, "--json");
    const char *setting_id = cli_value(&c, "--setting");
    const char *settings_path = cli_value(&c, "--settings");
    const char *trace_out = cli_value(&c, "--trace");
    int64_t batch = 0, seed = 1, iters = 0;
    double sample_ms = 0, threshold = DP_TRACE_THRESHOLD;
    struct dp_import_opts io;
    struct cmd_cluster cl;
    bool ok = cmd_import_opts(&c, &io) && cmd_cluster_opts(&c, &cl) &&
              cli_int(&c, "--batch", 1, INT64_C(1) << 30, &batch) &&
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
        const struct dp_setting *f = dp_settings_find(list, setting_id);
        if (!f) {
            fprintf(stderr, "driple: %s: no setting \"%s\" (%d settings; see driple compare)\n",
                    list->path, setting_id, list->n_settings);
            rc = 1;
            goto done;
        }
        s = *f;
        if (cl.precision && prec != s.precision) {
            s.precision = prec;
            dp_setting_format_id(&s, s.id, sizeof s.id);
        }
    } else if ((rc = cmd_cluster_setting(&cl, cat, "simulate", SIM_USAGE, &s))) {
        goto done;
    }
    /* The GPU's figures are checked before the (possibly slow) graph build. */
    const struct dp_gpu *gpu = dp_gpu_find(cat, s.gpu);
    if (!gpu) {
        fprintf(stderr, "driple: %s: no GPU \"%s\" in the catalog\n", cat->path, s.gpu);
        rc = 1;
        goto done;
    }
    if (dp_gpu_check_sim(cat, gpu, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if ((rc = load_graph(graph_path, batch, s.precision, &io, &g))) goto done;

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
        FILE *f = stdout;
        fputs("{\"simulated\":true,\"graph\":", f);
        cmd_json_str(f, dp_graph_name(g));
        fputs(",\"setting\":", f);
        cmd_json_str(f, s.id);
        fputs(",\"gpu\":", f);
        cmd_json_str(f, s.gpu);
        const struct named_num timing[] = {{"sample_ms", r.sample_ms},
                                           {"iteration_ms", r.iteration_ms},
                                           {"throughput", r.throughput},
                                           {"memory_gb", r.memory_gb}};
        const struct named_num usage[] = {{"mean_gpu_util", r.mean_gpu_util},
                                          {"bytes_per_iter", r.bytes_per_iter},
                                          {"params", r.params},
                                          {"gflops_per_iter", r.gflops_per_iter}};
        const struct named_num parts[] = {{"compute", r.compute_ms}, {"pull", r.pull_ms},
                                          {"push", r.push_ms},       {"apply", r.apply_ms},
                                          {"wait", r.wait_ms}};
        fprintf(f, ",\"sync\":\"%s\",\"workers\":%d,\"ps\":%d,\"machines\":%d,"
                   "\"placement\":\"%s\",\"network\":\"%s\",\"precision\":\"%s\","
                   "\"framework\":\"%s\",\"batch\":%lld,\"seed\":%lld,\"iterations\":%d,",
                dp_sync_name(s.sync), s.workers, s.ps, s.machines, dp_placement_name(s.placement),
                dp_network_name(s.network), dp_precision_name(s.precision),
                dp_framework_name(s.framework), (long long)r.batch, (long long)seed,
                r.n_iterations);
        json_nums(f, timing, 4);
        fprintf(f, ",\"oom\":%s,", r.oom ? "true" : "false");
        json_nums(f, usage, 4);
        fputs(",\"breakdown_ms\":{", f);
        json_nums(f, parts, 5);
        fputs("},\"labels\":", f);
        json_labels(f, r.labels);
        fputs(",\"trace\":", f);
        if (trace_out) cmd_json_str(f, trace_out);
        else fputs("null", f);
        fputs("}\n", f);
    } else {
        printf("SIMULATED (not measured): %s on %s, batch %lld per worker, seed %lld\n",
               dp_graph_name(g), s.id, (long long)r.batch, (long long)seed);
        if (s.sync == DP_SYNC_ALLREDUCE)
            printf("  GPU %s, %d worker(s), all-reduce, %s, %d machine(s), %s, %s\n", s.gpu,
                   s.workers, dp_network_name(s.network), s.machines,
                   dp_precision_name(s.precision), dp_framework_name(s.framework));
        else
            printf("  GPU %s, %d worker(s), %d PS, %s placement, %s, %d machine(s), %s, %s\n",
                   s.gpu, s.workers, s.ps, dp_placement_name(s.placement),
                   dp_network_name(s.network), s.machines, dp_precision_name(s.precision),
                   dp_framework_name(s.framework));
        printf("  iteration     %.2f ms (compute %.2f, pull %.2f, push %.2f, apply %.2f, wait "
               "%.2f; pull/push overlap compute)\n",
               r.iteration_ms, r.compute_ms, r.pull_ms, r.push_ms, r.apply_ms, r.wait_ms);
        printf("  throughput    %.1f samples/s (= batch x workers / iteration)\n", r.throughput);
        printf("  GPU memory    %.2f GB per worker%s\n", r.memory_gb,
               r.oom ? "  OUT OF MEMORY on this GPU" : "");
        printf("  mean GPU util %.1f %%   network %.1f MB per iteration   %.3g parameters\n",
               r.mean_gpu_util, r.bytes_per_iter / 1e6, r.params);
        printf("  labels (simulated; mean over the workers; %.3g ms samples, %d iterations):\n",
               r.sample_ms, r.n_iterations);
        text_labels(r.labels);
        if (trace_out) printf("  traces written to %s (simulated)\n", trace_out);
    }
done:
    dp_sim_result_free(&r);
    dp_graph_free(g);
    dp_settings_free(list);
    dp_gpu_catalog_free(cat);
    return rc;
}

/* --- trace extract --- */

static int trace_extract(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "trace extract")) return 1;
    bool json = cli_flag(&c, "--json");
    const char *net = cli_value(&c, "--net");
    const char *csv_out = cli_value(&c, "--driple-csv");
    const char *gpu = cli_value(&c, "--gpu");
    const char *model = cli_value(&c, "--model");
    const char *job = cli_value(&c, "--job");
    double threshold = DP_TRACE_THRESHOLD;
    int64_t batch = 0;
    bool ok = cli_double(&c, "--threshold", 1e-6, 0.999999, &threshold) &&
              cli_int(&c, "--batch", 1, INT64_C(1) << 30, &batch);
    const char *path = cli_positional(&c, 0);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!path) return cli_usage("trace extract", TRACE_USAGE, "missing TRACE.csv");
    struct dp_error err = {0};
    struct dp_trace *t = dp_trace_init("measured");
    if (!t) {
        fprintf(stderr, "driple: trace extract: out of memory\n");
        return 1;
    }
    int rc = 0;
    if (dp_trace_read_any(path, t, &err) || (net && dp_trace_read_net(net, t, &err))) {
        rc = cli_fail(&err);
        goto done;
    }
    double labels[DP_N_LABELS];
    unsigned missing = 0;
    dp_trace_labels(t, threshold, labels, &missing);
    /* A simulator trace holds every worker: the labels are the mean over them, as simulate's. */
    int n_workers = 1;
    if (!strcmp(t->source, "simulated")) {
        for (int w = 1;; w++) {
            struct dp_trace *tw = dp_trace_init("simulated");
            if (!tw) { /* a mean over fewer workers would pass for the answer */
                fprintf(stderr, "driple: %s: out of memory reading worker %d\n", path, w);
                rc = 1;
                goto done;
            }
            enum dp_status st = dp_trace_read_sim_worker(path, w, tw, &err);
            if (st) {
                dp_trace_free(tw);
                if (st == DP_ERR_NOT_FOUND) break;
                rc = cli_fail(&err);
                goto done;
            }
            double lw[DP_N_LABELS];
            dp_trace_labels(tw, threshold, lw, NULL);
            for (int i = 0; i < DP_N_LABELS; i++) labels[i] += lw[i];
            n_workers++;
            dp_trace_free(tw);
        }
        for (int i = 0; i < DP_N_LABELS; i++) labels[i] /= n_workers;
    }
    if (csv_out) {
        struct dp_dataset ds;
        struct dp_sample smp;
        dp_dataset_init(&ds, NULL);
        memset(&smp, 0, sizeof smp);
        smp.model = (char *)(model ? model : "");
        smp.graph = smp.model;
        smp.batch = batch;
        snprintf(smp.job.gpu, sizeof smp.job.gpu, "%s", gpu ? gpu : "");
        snprintf(smp.job.job_name, sizeof smp.job.job_name, "%s", job ? job : path);
        snprintf(smp.job.sync, sizeof smp.job.sync, "sync");
        if (batch) snprintf(smp.job.hyper, sizeof smp.job.hyper, "batch=%lld", (long long)batch);
        snprintf(smp.source.kind, sizeof smp.source.kind, "%s", t->source);
        snprintf(smp.source.where, sizeof smp.source.where, "%s", path);
        for (int i = 0; i < DP_N_LABELS; i++)
            smp.labels[i] = (missing >> (i / 3)) & 1u ? NAN : labels[i];
        enum dp_status st = dp_dataset_add_sample(&ds, &smp, &err);
        if (!st) st = dp_dataset_save_csv(&ds, csv_out, &err);
        dp_dataset_free(&ds);
        if (st) {
            rc = cli_fail(&err);
            goto done;
        }
    }
    if (json) {
        printf("{\"trace\":");
        cmd_json_str(stdout, path);
        printf(",\"net\":");
        if (net) cmd_json_str(stdout, net);
        else printf("null");
        printf(",\"source\":");
        cmd_json_str(stdout, t->source);
        printf(",\"simulated\":%s,\"workers\":%d,\"threshold\":",
               strcmp(t->source, "simulated") ? "false" : "true", n_workers);
        cmd_json_num(stdout, threshold);
        printf(",\"samples\":{");
        for (int k = 0; k < DP_SERIES_COUNT; k++)
            printf("%s\"%s\":%zu", k ? "," : "", dp_series_name((enum dp_series_kind)k),
                   t->s[k].n);
        printf("},\"missing\":[");
        for (int k = 0, n = 0; k < DP_N_RESOURCES; k++)
            if ((missing >> k) & 1u)
                printf("%s\"%s\"", n++ ? "," : "", dp_series_name((enum dp_series_kind)k));
        printf("],\"labels\":");
        json_labels(stdout, labels);
        printf("}\n");
    } else {
        printf("labels from %s%s%s (%s%s), threshold %.3g x each resource's max\n", path,
               net ? " + " : "", net ? net : "", t->source,
               n_workers > 1 ? "; mean over the workers" : "", threshold);
        text_labels(labels);
        for (int k = 0; k < DP_N_RESOURCES; k++)
            if ((missing >> k) & 1u)
                printf("  (%s: not in the trace; reported as 0)\n",
                       dp_series_name((enum dp_series_kind)k));
    }
done:
    dp_trace_free(t);
    return rc;
}

int cmd_trace(int argc, char **argv) {
    if (argc < 1) return cli_usage("trace", TRACE_USAGE, "missing subcommand");
    if (!strcmp(argv[0], "extract")) return trace_extract(argc - 1, argv + 1);
    return cli_usage("trace", TRACE_USAGE, "unknown subcommand \"%s\"", argv[0]);
}

