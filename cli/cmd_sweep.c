/* cmd_sweep.c: `driple dataset sweep` (the setting-aware inspector's data: zoo and generated
 * graphs x settings x batch sizes, simulated; dp/sweep.h) and `driple dataset extract` (one
 * setting's rows of a sweep as a per-setting dataset). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/json_out.h"
#include "dp/sweep.h"

#define SWEEP_USAGE                                                                              \
    "driple dataset sweep --out FILE [--models a,b,...] [--optimizers sgd,momentum,adam]\n"     \
    "       [--zoo-batches K] [--generated N] [--gen-seed S] [--gen-batches K] [--fp32-only]\n" \
    "       [--settings FILE] [--quota Q] [--random K] [--gpus a,b,...] [--max-workers N]\n"    \
    "       [--allreduce] [--pytorch]\n"                                                        \
    "       [--groups K] [--seed S] [--jobs J] [--gpus-file FILE] [--weights FILE]\n"             \
    "  graphs: every zoo model (or --models) with each optimizer at K batch sizes (default 12:\n" \
    "  the default x 1/16 .. 6), generated architectures 0 .. N-1 of seed S (driple zoo\n"       \
    "  generate) at K batch sizes (default 3), in fp32 and mixed precision; rows: each graph on\n" \
    "  every setting of --settings (all zoo graphs, the first Q generated ones; no list: none)\n"  \
    "  and on K settings drawn from the catalog's GPUs, 1 .. N workers, every network (default\n" \
    "  8, 64). Labels are SIMULATED."
#define EXTRACT_USAGE                                                                           \
    "driple dataset extract SWEEP.json (--setting ID -o DATASET.json | --setting ID,ID,...\n"   \
    "       --dir DIR) [--cost-features] [--gpus-file FILE]\n"                                  \
    "  the setting's rows that fit its GPU, as a driple-dataset/1 (for train and transfer);\n"   \
    "  with --dir, each listed setting's into DIR/ID.json (the sweep read once)"

static void on_progress(int done, int total, void *ud) {
    (void)ud;
    fprintf(stderr, "\rdataset sweep: %d / %d models", done, total);
    if (done == total) fputc('\n', stderr);
}

static const struct cli_opt sweep_opts[] = {
    {"--out", "FILE", NULL, 0, 0, "the sweep written (needed)", NULL},
    {"--settings", "FILE", "none", 0, 0, "a setting list every graph runs on", NULL},
    {"--gpus-file", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog", NULL},
    {"--weights", "FILE", "assets/op_weights.json", 0, 0, "the op-type weights", NULL},
    {"--models", "a,b,...", "the whole zoo", 0, 0, "zoo models", NULL},
    {"--optimizers", "sgd,momentum,adam", "all three", 0, 0, "optimizers", NULL},
    {"--gpus", "a,b,...", "every catalog GPU", 0, 0, "the GPUs random settings are drawn from",
     NULL},
    {"--fp32-only", NULL, NULL, 0, 0, "no mixed-precision graphs", NULL},
    {"--allreduce", NULL, NULL, 0, 0, "random settings also with all-reduce", NULL},
    {"--pytorch", NULL, NULL, 0, 0, "random settings also under PyTorch", NULL},
    {"--zoo-batches", "K", "12", 1, DP_SWEEP_BATCH_FACTORS, "batch sizes per zoo graph", NULL},
    {"--generated", "N", "0", 0, 1000000, "generated architectures", NULL},
    {"--gen-seed", "S", "1", 0, (double)INT64_MAX, "their corpus's seed", NULL},
    {"--gen-batches", "K", "3", 1, DP_SWEEP_BATCH_FACTORS, "batch sizes per generated graph",
     NULL},
    {"--quota", "Q", "0", 0, 1000000, "generated graphs that also run on --settings", NULL},
    {"--random", "K", "8", 0, 1000, "random settings per graph", NULL},
    {"--max-workers", "N", "64", 1, 64, "the random settings' most workers", NULL},
    {"--groups", "K", "the sweep's", 1, 100000, "groups", NULL},
    {"--seed", "S", "1", 0, (double)INT64_MAX, "the draws' seed", NULL},
    {"--jobs", "J", "2", 1, 64, "threads simulating", NULL},
    {"--json", NULL, NULL, 0, 0, "print the summary as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_dataset_sweep_spec = {
    "dataset sweep", "graphs x settings x batch sizes, simulated, for the setting-aware inspector",
    SWEEP_USAGE, sweep_opts, NULL};

int cmd_dataset_sweep(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_dataset_sweep_spec)) return c.rc;
    struct dp_sweep_opts o;
    dp_sweep_opts_default(&o);
    const char *out = cli_value(&c, "--out"), *settings_path = cli_value(&c, "--settings");
    const char *gpus_file = cli_value(&c, "--gpus-file"), *weights = cli_value(&c, "--weights");
    o.models = cli_value(&c, "--models");
    o.optimizers = cli_value(&c, "--optimizers");
    o.gpus = cli_value(&c, "--gpus");
    o.mixed = !cli_flag(&c, "--fp32-only");
    o.allreduce = cli_flag(&c, "--allreduce");
    o.pytorch = cli_flag(&c, "--pytorch");
    bool json = cli_flag(&c, "--json");
    int64_t zb = o.zoo_batches, ng = 0, gs = 1, gb = o.gen_batches, quota = 0, rnd = 8, mw = 64;
    int64_t groups = 0, seed = 1, jobs = 2;
    cli_int(&c, "--zoo-batches", 1, DP_SWEEP_BATCH_FACTORS, &zb);
    cli_int(&c, "--generated", 0, 1000000, &ng);
    cli_int(&c, "--gen-seed", 0, INT64_MAX, &gs);
    cli_int(&c, "--gen-batches", 1, DP_SWEEP_BATCH_FACTORS, &gb);
    cli_int(&c, "--quota", 0, 1000000, &quota);
    cli_int(&c, "--random", 0, 1000, &rnd);
    cli_int(&c, "--max-workers", 1, 64, &mw);
    cli_int(&c, "--groups", 1, 100000, &groups);
    cli_int(&c, "--seed", 0, INT64_MAX, &seed);
    cli_int(&c, "--jobs", 1, 64, &jobs);
    int rc = 0;
    if (c.bad || !cli_check_unused(&c)) {
        rc = cli_usage("dataset sweep", SWEEP_USAGE, "bad arguments");
        goto done;
    }
    if (!out || !*out) {
        rc = cli_usage("dataset sweep", SWEEP_USAGE, "missing --out FILE");
        goto done;
    }
    o.zoo_batches = (int)zb;
    o.n_generated = (int)ng;
    o.gen_seed = (uint64_t)gs;
    o.gen_batches = (int)gb;
    o.fixed_quota = (int)quota;
    o.random_settings = (int)rnd;
    o.max_workers = (int)mw;
    o.groups = (int)groups;
    o.seed = (uint64_t)seed;
    o.threads = (int)jobs;
    if (!json) o.progress = on_progress;
    struct dp_gpu_catalog *cat = NULL;
    struct dp_settings *list = NULL;
    struct dp_op_weights *w = NULL;
    struct dp_sweep sw;
    memset(&sw, 0, sizeof sw);
    struct dp_error err = {0};
    if (dp_gpu_catalog_load_default(gpus_file, &cat, &err) ||
        (settings_path && dp_settings_load(settings_path, cat, &list, &err)) ||
        dp_op_weights_load_default(weights, &w, &err)) {
        rc = cli_fail(&err);
        goto free_all;
    }
    o.catalog = cat;
    o.fixed = list;
    o.weights = w;
    double t0 = dp_clock_ms();
    o.cancel = cli_cancel_watch();
    enum dp_status st = dp_sweep_build(&o, &sw, &err);
    cli_cancel_unwatch();
    double t1 = dp_clock_ms();
    if (!st) {
        time_t now = time(NULL);
        struct tm tmv;
        gmtime_r(&now, &tmv);
        strftime(sw.source.when, sizeof sw.source.when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
        st = dp_sweep_save(&sw, out, &err);
    }
    if (st) {
        rc = cli_fail(&err);
        goto free_all;
    }
    int oom = 0;
    for (int i = 0; i < sw.n_rows; i++) oom += sw.rows[i].oom;
    if (json) {
        struct dp_jw *jw = dp_jw_new();
        dp_jw_bool(jw, "simulated", true);
        dp_jw_str(jw, "out", out);
        dp_jw_int(jw, "graphs", sw.n_graphs);
        dp_jw_int(jw, "rows", sw.n_rows);
        dp_jw_int(jw, "oom", oom);
        dp_jw_fixed(jw, "seconds", (t1 - t0) / 1e3, 1);
        rc = cmd_json_emit(jw);
    } else
        printf("%s: %d graphs, %d rows (%d out of memory), simulated, in %.1f s\n", out,
               sw.n_graphs, sw.n_rows, oom, (t1 - t0) / 1e3);
free_all:
    dp_sweep_free(&sw);
    dp_op_weights_free(w);
    dp_settings_free(list);
    dp_gpu_catalog_free(cat);
done:
    cli_done(&c);
    return rc;
}

/* One setting's rows of sw into path; prints the count. 0, or 1 on failure or no row. */
static int extract_one(const struct dp_sweep *sw, const struct dp_gpu_catalog *cat, const char *in,
                       const char *id, bool cost, const char *path) {
    struct dp_dataset ds;
    dp_dataset_init(&ds, NULL);
    struct dp_setting s;
    struct dp_error err = {0};
    int rc = 0;
    if (dp_setting_parse_id(id, cat, &s, &err) ||
        dp_sweep_dataset(sw, &s, cost, 0, &ds, NULL, &err) || dp_dataset_save_json(&ds, path, &err)) {
        rc = cli_fail(&err);
    } else {
        printf("%s: %d samples of %s from %s (simulated)\n", path, ds.n_samples, s.id, in);
        if (!ds.n_samples) {
            fprintf(stderr, "driple: %s: no row of setting %s\n", in, s.id);
            rc = 1;
        }
    }
    dp_dataset_free(&ds);
    return rc;
}

static const struct cli_opt extract_opts[] = {
    {"--setting", "ID[,ID...]", NULL, 0, 0, "the setting (several with --dir)", NULL},
    {"-o", "DATASET.json", NULL, 0, 0, "the dataset written (one setting)", NULL},
    {"--dir", "DIR", NULL, 0, 0, "write each setting's as DIR/ID.json", NULL},
    {"--gpus-file", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog", NULL},
    {"--cost-features", NULL, NULL, 0, 0, "keep each group's FLOPs and bytes", NULL},
    CLI_END,
};
const struct cli_spec cmd_dataset_extract_spec = {
    "dataset extract", "one setting's rows of a sweep as a per-setting dataset", EXTRACT_USAGE,
    extract_opts, NULL};

int cmd_dataset_extract(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_dataset_extract_spec)) return c.rc;
    const char *id = cli_value(&c, "--setting"), *out = cli_value(&c, "-o");
    const char *dir = cli_value(&c, "--dir"), *gpus_file = cli_value(&c, "--gpus-file");
    bool cost = cli_flag(&c, "--cost-features");
    const char *in = cli_positional(&c, 0);
    int rc = 0;
    if (c.bad || !cli_check_unused(&c) || !in || !id || !out == !dir ||
        (out && strchr(id, ','))) {
        rc = cli_usage("dataset extract", EXTRACT_USAGE, "%s",
                       !in ? "missing SWEEP.json" : !id ? "missing --setting ID"
                       : !out && !dir ? "missing -o FILE or --dir DIR"
                       : out && dir ? "-o and --dir together"
                       : out && strchr(id, ',') ? "several settings need --dir DIR, not -o"
                                                : "bad arguments");
        goto done;
    }
    struct dp_gpu_catalog *cat = NULL;
    struct dp_sweep sw;
    memset(&sw, 0, sizeof sw);
    struct dp_error err = {0};
    if (dp_gpu_catalog_load_default(gpus_file, &cat, &err) || dp_sweep_load(in, cat, &sw, &err)) {
        rc = cli_fail(&err);
    } else if (out) {
        rc = extract_one(&sw, cat, in, id, cost, out);
    } else {
        /* Each id of the comma list, stopping at the first that fails. */
        for (const char *p = id; *p && !rc;) {
            size_t n = strcspn(p, ",");
            char one[DP_NAME_MAX], path[4096];
            if (n >= sizeof one || snprintf(path, sizeof path, "%s/%.*s.json", dir, (int)n, p) >=
                                       (int)sizeof path) {
                fprintf(stderr, "driple: dataset extract: '%.*s': setting id or path too long\n",
                        (int)n, p);
                rc = 1;
                break;
            }
            memcpy(one, p, n);
            one[n] = '\0';
            if (n) rc = extract_one(&sw, cat, in, one, cost, path);
            p += n + (p[n] == ',');
        }
    }
    dp_sweep_free(&sw);
    dp_gpu_catalog_free(cat);
done:
    cli_done(&c);
    return rc;
}
