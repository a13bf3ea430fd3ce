/* cmd_trace.c: `driple trace extract`: the 12 labels from measured traces (nvidia-smi CSV and
 * /proc/net/dev-style counters) or from a `driple simulate --trace` file (the mean over its
 * workers), optionally written as a DriplePerf CSV row. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/dataset.h"
#include "dp/json_out.h"
#include "dp/trace.h"

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

static const struct cli_opt extract_opts[] = {
    {"--gpu-index", "I", "the first GPU", 0, 0, "the GPU of a CSV holding several", NULL},
    {"--net", "NET.csv", NULL, 0, 0, "the network counter CSV (rx_bytes, tx_bytes)", NULL},
    {"--threshold", "FRAC", CLI_STR(DP_TRACE_THRESHOLD), 1e-6, 0.999999,
     "the burst threshold, a fraction of the resource's maximum", NULL},
    {"--driple-csv", "OUT.csv", NULL, 0, 0, "also write the labels as a DriplePerf CSV row",
     NULL},
    {"--gpu", "G", NULL, 0, 0, "the DriplePerf row's GPU", NULL},
    {"--model", "M", NULL, 0, 0, "the DriplePerf row's model", NULL},
    {"--job", "J", NULL, 0, 0, "the DriplePerf row's job name", NULL},
    {"--batch", "N", NULL, 1, (double)DP_BATCH_MAX, "the DriplePerf row's batch size", NULL},
    {"--json", NULL, NULL, 0, 0, "print the labels as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_trace_extract_spec = {
    "trace extract", "the 12 labels of GPU and network traces", TRACE_USAGE, extract_opts, NULL};

static int trace_extract(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_trace_extract_spec)) return c.rc;
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
              cli_int(&c, "--batch", 1, DP_BATCH_MAX, &batch);
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
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "trace", path);
        dp_jw_str(w, "net", net);
        dp_jw_str(w, "source", t->source);
        dp_jw_bool(w, "simulated", !strcmp(t->source, "simulated"));
        dp_jw_int(w, "workers", n_workers);
        dp_jw_str(w, "gpu_index", tf.gpu[0] ? tf.gpu : NULL);
        dp_jw_int(w, "gpus_in_file", tf.n_gpus);
        dp_jw_num(w, "threshold", threshold);
        dp_jw_object(w, "samples");
        for (int k = 0; k < DP_SERIES_COUNT; k++)
            dp_jw_int(w, dp_series_name((enum dp_series_kind)k), (int64_t)t->s[k].n);
        dp_jw_end(w);
        dp_jw_array(w, "missing");
        for (int k = 0; k < DP_N_RESOURCES; k++)
            if ((missing >> k) & 1u) dp_jw_str(w, NULL, dp_series_name((enum dp_series_kind)k));
        dp_jw_end(w);
        cmd_jw_labels(w, "labels", labels);
        rc = cmd_json_emit(w);
    } else {
        printf("labels from %s%s%s (%s%s), threshold %.3g x each resource's max\n", path,
               net ? " + " : "", net ? net : "", t->source,
               n_workers > 1 ? "; mean over the workers" : "", threshold);
        if (tf.gpu[0])
            printf("  GPU %s (%d GPU%s in the file%s)\n", tf.gpu, tf.n_gpus,
                   tf.n_gpus == 1 ? "" : "s", tf.n_gpus > 1 ? "; --gpu-index picks another" : "");
        cmd_text_labels(labels);
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
