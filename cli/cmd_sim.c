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

#define DEFAULT_CALIB    "../shared/calibration/throughput_measured.csv"

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
    "driple trace extract TRACE.csv [--gpu-index I] [--net NET.csv] [--threshold FRAC] "      \
    "[--json] [--driple-csv OUT.csv [--gpu G] [--model M] [--job J] [--batch N]]\n"           \
    "  TRACE.csv: nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,"       \
    "memory.used --format=csv -lms 100, a timestamp,rx_bytes,tx_bytes counter CSV, or a "     \
    "driple simulate --trace file (\"-\": standard input)\n"                                    \
    "  --gpu-index I: the GPU of an nvidia-smi CSV holding several (its index column; default: "\
    "the first)\n"                                                                              \
    "  a burst is a maximal run of samples above FRAC x the resource's maximum (default 0.1); " \
    "idle/active = mean gap/burst length (ms), peak = mean of each burst's largest sample"
#define CALIB_USAGE                                                                             \
    "driple calibrate [--data FILE] [--gpus FILE] [--fit] [--k80-boost] [--json]\n"          \
    "  simulates each row of the published tf_cnn_benchmarks table (default " DEFAULT_CALIB   \
    ") and prints predicted vs measured throughput"

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
    const char *gpu_index = cli_value(&c, "--gpu-index");
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
    struct dp_trace_file tf;
    if (dp_trace_file_read(path, gpu_index, &tf, &err)) return cli_fail(&err);
    int rc = 0;
    struct dp_trace *t = tf.traces[0];
    if (net && dp_trace_read_net(net, t, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    double labels[DP_N_OUTPUTS];
    unsigned missing = 0;
    dp_trace_labels(t, threshold, labels, &missing);
    /* A simulator trace holds every worker: the labels are the mean over them, as simulate's. */
    int n_workers = tf.n_traces;
    for (int w = 1; w < n_workers; w++) {
        double lw[DP_N_OUTPUTS];
        dp_trace_labels(tf.traces[w], threshold, lw, NULL);
        for (int i = 0; i < DP_N_OUTPUTS; i++) labels[i] += lw[i];
    }
    for (int i = 0; i < DP_N_OUTPUTS; i++) labels[i] /= n_workers;
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
        for (int i = 0; i < DP_N_OUTPUTS; i++)
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
        printf(",\"simulated\":%s,\"workers\":%d,\"gpu_index\":",
               strcmp(t->source, "simulated") ? "false" : "true", n_workers);
        if (tf.gpu[0]) cmd_json_str(stdout, tf.gpu);
        else printf("null");
        printf(",\"gpus_in_file\":%d,\"threshold\":", tf.n_gpus);
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
        if (tf.gpu[0])
            printf("  GPU %s (%d GPU%s in the file%s)\n", tf.gpu, tf.n_gpus,
                   tf.n_gpus == 1 ? "" : "s", tf.n_gpus > 1 ? "; --gpu-index picks another" : "");
        text_labels(labels);
        for (int k = 0; k < DP_N_RESOURCES; k++)
            if ((missing >> k) & 1u)
                printf("  (%s: not in the trace; reported as 0)\n",
                       dp_series_name((enum dp_series_kind)k));
    }
done:
    dp_trace_file_free(&tf);
    return rc;
}

int cmd_trace(int argc, char **argv) {
    if (argc < 1) return cli_usage("trace", TRACE_USAGE, "missing subcommand");
    if (!strcmp(argv[0], "extract")) return trace_extract(argc - 1, argv + 1);
    return cli_usage("trace", TRACE_USAGE, "unknown subcommand \"%s\"", argv[0]);
}

/* --- calibrate --- */

/* Splits one CSV line (quotes allowed) into at most max fields, in place. */
static int split_csv(char *line, char **f, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        if (*p == '"') {
            char *w = ++p;
            f[n++] = w;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') p++;
                *w++ = *p++;
            }
            if (*p == '"') p++;
            *w = '\0';
            if (*p == ',') *p++ = '\0';
            else if (!*p || *p == '\n' || *p == '\r') break;
            else { *p = '\0'; p++; }
        } else {
            f[n++] = p;
            p += strcspn(p, ",\r\n");
            if (*p == ',') *p++ = '\0';
            else {
                *p = '\0';
                break;
            }
        }
    }
    return n;
}

struct calib_row {
    char              model[32], gpu[48], update[32], data[16];
    int               gpus, batch;
    double            measured, predicted;
    double            memory_gb; /* simulated per-GPU footprint */
    bool              oom;       /* the footprint exceeds the GPU's memory */
    struct dp_gpu     spec;    /* the GPU as simulated */
    struct dp_setting setting;
    int               graph;   /* index into the graph cache */
};

struct calib {
    int               n, cap;
    struct calib_row *rows;
    int               n_graphs;
    struct dp_graph  *graphs[64];
    char              gmodel[64][32];
    int               gbatch[64];
};

static void calib_free(struct calib *cb) {
    for (int i = 0; i < cb->n_graphs; i++) dp_graph_free(cb->graphs[i]);
    free(cb->rows);
}

/* A whole-cell integer in [lo, hi]. */
static bool cell_int(const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

/* The columns calib_read takes by position, as the published table names them. */
static const struct { int col; const char *name; } calib_cols[] = {
    {1, "model"}, {3, "gpu"}, {4, "num_gpus"}, {7, "variable_update"}, {8, "network"},
    {10, "batch_size_per_gpu"}, {11, "throughput"}, {13, "notes"}};

/* Reads the published table into rows: GPU, setting and (cached) zoo graph of each. */
static int calib_read(const char *data, const struct dp_gpu_catalog *cat, bool k80_boost,
                      struct calib *cb) {
    FILE *f = fopen(data, "r");
    if (!f) {
        fprintf(stderr, "driple: %s: cannot open: %s%s\n", data, strerror(errno),
                strcmp(data, DEFAULT_CALIB) ? ""
                                            : " (the default table, relative to the current "
                                              "directory; run from the repository root or pass "
                                              "--data FILE)");
        return 1;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    struct dp_error err = {0};
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "driple: %s:%d: line longer than %zu characters\n", data, lineno,
                    sizeof line - 2);
            rc = 1;
            break;
        }
        char *fld[16];
        int nf = split_csv(line, fld, 16);
        if (lineno == 1) {
            for (size_t i = 0; i < sizeof calib_cols / sizeof calib_cols[0]; i++)
                if (nf <= calib_cols[i].col || strcmp(fld[calib_cols[i].col], calib_cols[i].name)) {
                    fprintf(stderr,
                            "driple: %s:1: column %d is not \"%s\": not the published "
                            "throughput table (" DEFAULT_CALIB "'s header)\n",
                            data, calib_cols[i].col + 1, calib_cols[i].name);
                    rc = 1;
                    break;
                }
            if (rc) break;
            continue;
        }
        if (nf < 1 || !*fld[0]) continue;
        if (nf < 14) {
            fprintf(stderr, "driple: %s:%d: %d fields, expected 14\n", data, lineno, nf);
            rc = 1;
            break;
        }
        if (cb->n == cb->cap) {
            int cap = cb->cap ? 2 * cb->cap : 64;
            struct calib_row *nr = realloc(cb->rows, (size_t)cap * sizeof *nr);
            if (!nr) {
                fprintf(stderr, "driple: %s:%d: out of memory\n", data, lineno);
                rc = 1;
                break;
            }
            cb->rows = nr;
            cb->cap = cap;
        }
        struct calib_row *r = &cb->rows[cb->n];
        memset(r, 0, sizeof *r);
        snprintf(r->model, sizeof r->model, "%s", fld[1]);
        snprintf(r->gpu, sizeof r->gpu, "%s", fld[3]);
        snprintf(r->update, sizeof r->update, "%s", fld[7]);
        const char *d = strstr(fld[13], "data=");
        snprintf(r->data, sizeof r->data, "%s",
                 d && !strncmp(d + 5, "real", 4) ? "real" : "synthetic");
        char *end;
        errno = 0;
        r->measured = strtod(fld[11], &end);
        if (!cell_int(fld[4], 1, 64, &r->gpus) || !cell_int(fld[10], 1, 1 << 20, &r->batch) ||
            end == fld[11] || *end || errno || !(r->measured > 0 && isfinite(r->measured))) {
            fprintf(stderr,
                    "driple: %s:%d: bad num_gpus \"%s\" (1..64), batch_size_per_gpu \"%s\" "
                    "(1..1048576) or throughput \"%s\" (> 0)\n",
                    data, lineno, fld[4], fld[10], fld[11]);
            rc = 1;
            break;
        }
        /* The GPU: a DGX-1 P100 (SXM2), or one GK210 die of a K80 board: half the board's
         * memory and bandwidth, and half its FP32 rate at base clock (5.6 TFLOPS per board
         * without GPU Boost, per the catalog's notes; --k80-boost: the 8.74 boost figure). */
        bool k80 = !strncmp(r->gpu, "K80", 3);
        const struct dp_gpu *cg = dp_gpu_find(cat, k80 ? "K80" : "P100-SXM2");
        if (!cg) {
            fprintf(stderr, "driple: %s:%d: GPU %s not in the catalog\n", data, lineno, r->gpu);
            rc = 1;
            break;
        }
        r->spec = *cg;
        if (k80) {
            snprintf(r->spec.name, sizeof r->spec.name, "K80-one-GK210");
            r->spec.fp32_tflops = k80_boost ? cg->fp32_tflops / 2 : 5.6 / 2;
            r->spec.bandwidth_gbps /= 2;
            r->spec.memory_gb /= 2;
        }
        /* The setting: one machine; parameter_server = one PS on the host CPU (PCIe);
         * replicated = variables sharded over every GPU (NVLink on the DGX-1, else PCIe). */
        bool repl = !strcmp(r->update, "replicated");
        bool nvl = strstr(fld[8], "NVLink") != NULL;
        if (dp_setting_make(r->spec.name, r->gpus, repl ? r->gpus : 1,
                            repl && nvl ? DP_NET_NVLINK : DP_NET_PCIE, 1, DP_PLACE_HOMO,
                            DP_PREC_FP32, &r->setting, &err)) {
            fprintf(stderr, "driple: %s:%d: %s\n", data, lineno, err.msg);
            rc = 1;
            break;
        }
        r->graph = -1;
        for (int i = 0; i < cb->n_graphs; i++)
            if (!strcmp(cb->gmodel[i], r->model) && cb->gbatch[i] == r->batch) r->graph = i;
        if (r->graph < 0) {
            if (cb->n_graphs == 64) {
                fprintf(stderr, "driple: %s:%d: too many model/batch pairs\n", data, lineno);
                rc = 1;
                break;
            }
            struct dp_zoo_opts zo;
            dp_zoo_opts_default(&zo);
            zo.batch = r->batch;
            zo.optimizer = DP_OPT_SGD; /* tf_cnn_benchmarks' optimizer in this table */
            if (dp_zoo_build(r->model, &zo, &cb->graphs[cb->n_graphs], &err)) {
                fprintf(stderr, "driple: %s:%d: %s\n", data, lineno, err.msg);
                rc = 1;
                break;
            }
            snprintf(cb->gmodel[cb->n_graphs], sizeof cb->gmodel[0], "%s", r->model);
            cb->gbatch[cb->n_graphs] = r->batch;
            r->graph = cb->n_graphs++;
        }
        cb->n++;
    }
    if (!rc && ferror(f)) {
        fprintf(stderr, "driple: %s:%d: read error: %s\n", data, lineno + 1, strerror(errno));
        rc = 1;
    }
    fclose(f);
    if (!rc && !cb->n) {
        fprintf(stderr, "driple: %s:%d: no rows\n", data, lineno);
        rc = 1;
    }
    return rc;
}

/* Predicts every row with constants k; returns the mean |log(predicted / measured)| (the fit's
 * objective) or NAN after a failure. */
static double calib_eval(struct calib *cb, const struct dp_sim_constants *k) {
    double sum = 0;
    struct dp_error err = {0};
    for (int i = 0; i < cb->n; i++) {
        struct calib_row *r = &cb->rows[i];
        struct dp_sim_opts o;
        dp_sim_opts_default(&o);
        o.batch = r->batch;
        o.min_run_ms = 1;
        o.constants = k;
        struct dp_sim_result res;
        if (dp_simulate(cb->graphs[r->graph], &r->setting, &r->spec, &o, &res, &err)) {
            cli_fail(&err);
            return NAN;
        }
        r->predicted = res.throughput;
        r->memory_gb = res.memory_gb;
        r->oom = res.oom;
        dp_sim_result_free(&res);
        sum += fabs(log(r->predicted / r->measured));
    }
    return sum / cb->n;
}

/* Coordinate descent over the four compute constants on fixed grids (few passes). */
static double calib_fit(struct calib *cb, struct dp_sim_constants *k) {
    static const double g_mm[] = {0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9};
    static const double g_mem[] = {0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
    static const double g_la[] = {2, 4, 6, 8, 10, 15, 20, 30, 40};
    static const double g_wi[] = {1.0, 1.25, 1.5, 1.75, 2.0, 2.25};
    struct { double *v; const double *grid; int n; } axes[4] = {
        {&k->eff_matmul, g_mm, (int)(sizeof g_mm / sizeof *g_mm)},
        {&k->eff_mem, g_mem, (int)(sizeof g_mem / sizeof *g_mem)},
        {&k->launch_us, g_la, (int)(sizeof g_la / sizeof *g_la)},
        {&k->winograd, g_wi, (int)(sizeof g_wi / sizeof *g_wi)}};
    double best = calib_eval(cb, k);
    for (int pass = 0; pass < 3; pass++) {
        bool moved = false;
        for (int a = 0; a < 4; a++) {
            double keep = *axes[a].v;
            for (int j = 0; j < axes[a].n; j++) {
                *axes[a].v = axes[a].grid[j];
                double e = calib_eval(cb, k);
                if (e < best - 1e-12) {
                    best = e;
                    keep = axes[a].grid[j];
                    moved = true;
                }
            }
            *axes[a].v = keep;
        }
        if (!moved) break;
    }
    calib_eval(cb, k);
    return best;
}

int cmd_calibrate(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "calibrate")) return 1;
    bool json = cli_flag(&c, "--json");
    bool fit = cli_flag(&c, "--fit");
    bool boost = cli_flag(&c, "--k80-boost");
    const char *data = cli_value(&c, "--data");
    const char *gpus_path = cli_value(&c, "--gpus");
    bool ok = cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!data) data = DEFAULT_CALIB;
    struct dp_gpu_catalog *cat = NULL;
    struct calib cb;
    double *errs = NULL;
    memset(&cb, 0, sizeof cb);
    int rc = load_catalog(gpus_path, &cat);
    if (rc) return rc;
    if ((rc = calib_read(data, cat, boost, &cb))) goto done;
    struct dp_sim_constants k;
    dp_sim_constants_default(&k);
    double obj = fit ? calib_fit(&cb, &k) : calib_eval(&cb, &k);
    if (isnan(obj)) {
        rc = 1;
        goto done;
    }
    int n = cb.n;
    if (!(errs = malloc((size_t)n * sizeof *errs))) {
        fprintf(stderr, "driple: calibrate: out of memory\n");
        rc = 1;
        goto done;
    }
    double worst = 0;
    int worst_i = 0, n_oom = 0;
    for (int i = 0; i < n; i++) {
        n_oom += cb.rows[i].oom;
        errs[i] = fabs(cb.rows[i].predicted - cb.rows[i].measured) / cb.rows[i].measured * 100;
        if (errs[i] > worst) worst = errs[i], worst_i = i;
    }
    qsort(errs, (size_t)n, sizeof *errs, cmd_cmp_double);
    double median = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
    if (json) {
        printf("{\"simulated\":true,\"data\":");
        cmd_json_str(stdout, data);
        printf(",\"fitted\":%s,\"k80_tflops_per_die\":%s,\"constants\":{\"eff_matmul\":%g,"
               "\"winograd\":%g,\"eff_mem\":%g,\"launch_us\":%g,\"net_eff\":%g,"
               "\"ps_host_gbps\":%g,\"jitter\":%g,\"context_gb\":%g},\"rows\":[",
               fit ? "true" : "false", boost ? "4.37" : "2.8", k.eff_matmul, k.winograd,
               k.eff_mem, k.launch_us, k.net_eff, k.ps_host_gbps, k.jitter, k.context_gb);
        for (int i = 0; i < n; i++) {
            const struct calib_row *r = &cb.rows[i];
            printf("%s{\"model\":", i ? "," : "");
            cmd_json_str(stdout, r->model);
            printf(",\"gpu\":");
            cmd_json_str(stdout, r->gpu);
            printf(",\"num_gpus\":%d,\"variable_update\":", r->gpus);
            cmd_json_str(stdout, r->update);
            printf(",\"data\":\"%s\",\"batch_per_gpu\":%d,\"measured\":", r->data, r->batch);
            cmd_json_num(stdout, r->measured);
            printf(",\"predicted\":");
            cmd_json_num(stdout, r->predicted);
            printf(",\"error_pct\":");
            cmd_json_num(stdout, (r->predicted - r->measured) / r->measured * 100);
            printf(",\"memory_gb\":");
            cmd_json_num(stdout, r->memory_gb);
            printf(",\"gpu_memory_gb\":");
            cmd_json_num(stdout, r->spec.memory_gb);
            printf(",\"oom\":%s}", r->oom ? "true" : "false");
        }
        printf("],\"n\":%d,\"oom_rows\":%d,\"mean_abs_log_ratio\":", n, n_oom);
        cmd_json_num(stdout, obj);
        printf(",\"median_abs_error_pct\":");
        cmd_json_num(stdout, median);
        printf(",\"worst_abs_error_pct\":");
        cmd_json_num(stdout, worst);
        printf("}\n");
    } else {
        printf("calibration: SIMULATED vs measured throughput (images/s, all GPUs), %s\n", data);
        printf("%-11s %-32s %4s %-17s %-9s %5s %10s %10s %8s %9s\n", "model", "gpu", "gpus",
               "variable_update", "data", "batch", "measured", "simulated", "error", "memory");
        for (int i = 0; i < n; i++) {
            const struct calib_row *r = &cb.rows[i];
            printf("%-11s %-32s %4d %-17s %-9s %5d %10.1f %10.1f %+7.1f%% %6.1f GB%s\n",
                   r->model, r->gpu, r->gpus, r->update, r->data, r->batch, r->measured,
                   r->predicted, (r->predicted - r->measured) / r->measured * 100, r->memory_gb,
                   r->oom ? " OOM" : "");
        }
        printf("rows %d   median |error| %.1f%%   worst |error| %.1f%% (%s, %s, %d GPUs, %s)   "
               "mean |log ratio| %.3f\n",
               n, median, worst, cb.rows[worst_i].model, cb.rows[worst_i].gpu,
               cb.rows[worst_i].gpus, cb.rows[worst_i].update, obj);
        printf("memory: %d of %d rows fit the simulated footprint in the GPU's memory (every "
               "row ran, so all should)\n",
               n - n_oom, n);
        printf("constants%s: eff_matmul %g, winograd %g, eff_mem %g, launch %g us, net_eff %g, "
               "PS host %g GB/s, jitter %g, context %g GB (shared by every row); K80 die %s "
               "TFLOPS\n",
               fit ? " (fitted now; the built-in defaults are unchanged)" : "", k.eff_matmul,
               k.winograd, k.eff_mem, k.launch_us, k.net_eff, k.ps_host_gbps, k.jitter,
               k.context_gb, boost ? "4.37 (boost)" : "2.8 (base clock)");
    }
done:
    calib_free(&cb);
    free(errs);
    dp_gpu_catalog_free(cat);
    return rc;
}
