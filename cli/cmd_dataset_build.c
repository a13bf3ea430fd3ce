/* cmd_dataset_build.c: `driple dataset build`: per-setting datasets of simulated jobs, zoo
 * models x batch sizes x optimizers (and, on request, generated architectures: dp/zoo_gen.h) on
 * every chosen setting of a list. The jobs are a sweep (dp/sweep.h: each training graph
 * coarsened once, simulated on every chosen setting by --jobs threads); each setting's dataset
 * is its rows that fit (dp_sweep_dataset: the first --graphs zoo jobs spread over the models,
 * every generated one). Reports the throughput (jobs per second, a job being one graph on every
 * chosen setting) and writes one driple-dataset/1 per setting, its labels marked simulated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/compute.h" /* dp_threads: --jobs' default */
#include "dp/dataset.h"
#include "dp/files.h"
#include "dp/json_out.h"
#include "dp/settings.h"
#include "dp/sim.h"
#include "dp/sweep.h"

#define BUILD_USAGE                                                                             \
    "driple dataset build [--settings FILE] [--setting ID] --out DIR [--graphs N] [--jobs J]\n" \
    "       [--seed S] [--models a,b,...] [--optimizers sgd,momentum,adam] [--groups K]\n"       \
    "       [--weights FILE] [--gpus FILE] [--cost-features] [--generated N [--gen-seed S]\n"   \
    "       [--gen-jobs K]] [--json]\n"                                                          \
    "  jobs: zoo models x batch sizes (the model's default x 1/16 .. 6) x optimizers, in a\n"   \
    "  seeded order spread over the models; each setting keeps the first N (default 320) jobs\n" \
    "  that fit in its GPU's memory. Labels are SIMULATED (driple simulate). --jobs: threads\n" \
    "  simulating (default: $DRIPLE_THREADS, else the CPUs up to 4).\n"                        \
    "  --cost-features also stores each group's FLOPs, bytes and parameter bytes (for driple\n" \
    "  train --cost-features).\n"                                                               \
    "  --generated N adds generated architectures 0 .. N-1 of seed S (driple zoo generate;\n"     \
    "  default seed 1), K jobs each (an optimizer and K batch sizes drawn with --seed; default\n"\
    "  3), every one that fits kept beside the N zoo jobs (they always train under --split\n"  \
    "  models)."
#define MAX_GRAPHS 4096

static double now_s(void) { return dp_clock_ms() / 1000.0; }

/* Reports an allocation failure; returns the exit status. */
static int out_of_memory(void) {
    fprintf(stderr, "driple: dataset build: out of memory\n");
    return 1;
}

/* One setting's dataset: written to DIR/ID.json and reported (a line, or an object of jw). */
static int write_setting(const struct dp_sweep *sw, const struct dp_setting *s, bool cost,
                         int n_graphs, const char *out_dir, struct dp_jw *jw) {
    struct dp_error err = {0};
    struct dp_dataset ds;
    int oom = 0;
    char path[1200];
    enum dp_status st = dp_sweep_dataset(sw, s, cost, n_graphs, &ds, &oom, &err);
    if (st) return cli_fail(&err);
    int n_zoo = 0;
    for (int i = 0; i < ds.n_samples; i++) n_zoo += !strncmp(ds.samples[i].graph, "zoo:", 4);
    if (snprintf(path, sizeof path, "%s/%s.json", out_dir, s->id) >= (int)sizeof path)
        st = dp_error_set(&err, DP_ERR_INVALID, "%s/%s.json: path too long", out_dir, s->id);
    if (!st) st = dp_dataset_save_json(&ds, path, &err);
    int n_samples = ds.n_samples;
    dp_dataset_free(&ds);
    if (st) return cli_fail(&err);
    if (jw) {
        dp_jw_object(jw, NULL);
        dp_jw_str(jw, "id", s->id);
        dp_jw_str(jw, "file", path);
        dp_jw_int(jw, "samples", n_samples);
        dp_jw_int(jw, "skipped_oom", oom);
        dp_jw_end(jw);
    } else {
        printf("%-28s %4d samples (simulated) %3d left out (out of memory)  %s%s\n", s->id,
               n_samples, oom, path,
               n_zoo < n_graphs ? "  (fewer zoo jobs than asked: the rest do not fit)" : "");
    }
    return 0;
}

static const struct cli_opt build_opts[] = {
    {"--settings", "FILE", "assets/settings/default.json", 0, 0, "the setting list", NULL},
    {"--setting", "ID", "every setting of the list", 0, 0, "one setting only", NULL},
    {"--out", "DIR", NULL, 0, 0, "where the datasets are written (needed)", NULL},
    {"--graphs", "N", "320", 1, MAX_GRAPHS, "jobs kept per setting", NULL},
    {"--jobs", "J", "$DRIPLE_THREADS, else the CPUs up to 4", 1, 64, "threads simulating",
     NULL},
    {"--seed", "S", "1", 0, (double)INT64_MAX, "the jobs' order", NULL},
    {"--models", "a,b,...", "the whole zoo", 0, 0, "zoo models", NULL},
    {"--optimizers", "sgd,momentum,adam", "all three", 0, 0, "optimizers", NULL},
    {"--groups", "K", CLI_STR(DP_DEFAULT_GROUPS), 1, 100000, "groups", NULL},
    {"--weights", "FILE", "assets/op_weights.json", 0, 0, "the op-type weights", NULL},
    {"--gpus", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog", NULL},
    {"--cost-features", NULL, NULL, 0, 0, "also each group's FLOPs and bytes", NULL},
    {"--generated", "N", "0", 0, 100000, "generated architectures added", NULL},
    {"--gen-seed", "S", "1", 0, (double)INT64_MAX, "their corpus's seed", NULL},
    {"--gen-jobs", "K", "3", 1, DP_SWEEP_BATCH_FACTORS, "jobs per generated architecture",
     NULL},
    {"--json", NULL, NULL, 0, 0, "print the summary as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_dataset_build_spec = {
    "dataset build", "datasets of zoo jobs with simulated labels, one per setting",
    BUILD_USAGE, build_opts, NULL};

int cmd_dataset_build(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_dataset_build_spec)) return c.rc;
    bool json = cli_flag(&c, "--json");
    const char *settings_path = cli_value(&c, "--settings");
    const char *one = cli_value(&c, "--setting");
    const char *out_dir = cli_value(&c, "--out");
    const char *models = cli_value(&c, "--models");
    const char *opts_list = cli_value(&c, "--optimizers");
    const char *weights_path = cli_value(&c, "--weights");
    const char *gpus_path = cli_value(&c, "--gpus");
    bool cost = cli_flag(&c, "--cost-features");
    int64_t n_graphs = 320, n_threads = dp_threads(), seed = 1, groups = DP_DEFAULT_GROUPS;
    int64_t n_gen = 0, gen_seed = 1, gen_jobs = 3;
    bool ok = cli_int(&c, "--graphs", 1, MAX_GRAPHS, &n_graphs) &&
              cli_int(&c, "--jobs", 1, 64, &n_threads) &&
              cli_int(&c, "--seed", 0, INT64_MAX, &seed) &&
              cli_int(&c, "--groups", 1, 100000, &groups) &&
              cli_int(&c, "--generated", 0, 100000, &n_gen) &&
              cli_int(&c, "--gen-seed", 0, INT64_MAX, &gen_seed) &&
              cli_int(&c, "--gen-jobs", 1, DP_SWEEP_BATCH_FACTORS, &gen_jobs);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!out_dir || !*out_dir) return cli_usage("dataset build", BUILD_USAGE, "missing --out DIR");
    /* An empty list would select nothing and write empty datasets without complaint. */
    if ((models && !*models) || (opts_list && !*opts_list))
        return cli_usage("dataset build", BUILD_USAGE, "%s: empty list",
                         models && !*models ? "--models" : "--optimizers");
    struct dp_gpu_catalog *cat = NULL;
    struct dp_settings *list = NULL, chosen = {0, NULL, NULL};
    struct dp_op_weights *w = NULL;
    struct dp_jw *jw = NULL;
    struct dp_sweep sw;
    memset(&sw, 0, sizeof sw);
    struct dp_error err = {0};
    int rc = 0;
    double t0 = now_s();
    if (json && !(jw = dp_jw_new())) {
        rc = out_of_memory();
        goto done;
    }
    if (dp_gpu_catalog_load_default(gpus_path, &cat, &err) ||
        dp_settings_load_default(settings_path, cat, &list, &err) ||
        dp_op_weights_load_default(weights_path, &w, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (!(chosen.settings = calloc((size_t)list->n_settings + 1, sizeof *chosen.settings))) {
        rc = out_of_memory();
        goto done;
    }
    chosen.path = list->path;
    for (int i = 0; i < list->n_settings; i++)
        if (!one || !strcasecmp(list->settings[i].id, one))
            chosen.settings[chosen.n_settings++] = list->settings[i];
    if (!chosen.n_settings) {
        if (one) fprintf(stderr, "driple: %s: no setting \"%s\"\n", list->path, one);
        else fprintf(stderr, "driple: %s:$.settings: empty\n", list->path);
        rc = 1;
        goto done;
    }
    /* Fail now, not after minutes of simulation: GPUs without the figures the simulator needs,
     * and an output directory that cannot be made. */
    for (int i = 0; i < chosen.n_settings; i++) {
        const struct dp_setting *s = &chosen.settings[i];
        if (dp_gpu_check_sim(cat, dp_gpu_find(cat, s->gpu), &err)) {
            fprintf(stderr, "driple: %s (setting %s in %s)\n", err.msg, s->id, list->path);
            rc = 1;
            goto done;
        }
    }
    if (dp_mkdir_p(out_dir, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    struct dp_sweep_opts o;
    dp_sweep_opts_default(&o);
    o.models = models;
    o.optimizers = opts_list;
    o.zoo_batches = DP_SWEEP_BATCH_FACTORS;
    o.n_generated = (int)n_gen;
    o.gen_seed = (uint64_t)gen_seed;
    o.gen_batches = (int)gen_jobs;
    o.fp32 = o.mixed = false;
    for (int i = 0; i < chosen.n_settings; i++) {
        o.fp32 |= chosen.settings[i].precision != DP_PREC_MIXED;
        o.mixed |= chosen.settings[i].precision == DP_PREC_MIXED;
    }
    o.fixed = &chosen;
    o.random_settings = 0;
    o.catalog = cat;
    o.weights = w;
    o.groups = (int)groups;
    o.seed = (uint64_t)seed;
    o.threads = (int)n_threads;
    if (!json)
        fprintf(stderr, "dataset build: zoo models x optimizers x %d batch sizes and %lld "
                        "generated models x %lld, on %d setting(s), %lld thread(s), %lld zoo jobs "
                        "kept per setting\n",
                DP_SWEEP_BATCH_FACTORS, (long long)n_gen, (long long)gen_jobs, chosen.n_settings,
                (long long)n_threads, (long long)n_graphs);
    if (dp_sweep_build(&o, &sw, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    double t1 = now_s();
    if (json) {
        dp_jw_bool(jw, "simulated", true);
        dp_jw_str(jw, "out", out_dir);
        dp_jw_int(jw, "jobs", sw.n_graphs);
        dp_jw_array(jw, "settings");
    }
    for (int i = 0; i < chosen.n_settings && !rc; i++)
        rc = write_setting(&sw, &chosen.settings[i], cost, (int)n_graphs, out_dir, jw);
    if (rc) goto done;
    double t2 = now_s();
    /* jobs (graphs, each on every chosen setting) per second of building and simulating */
    const double jobs_s = t1 > t0 ? sw.n_graphs / (t1 - t0) : 0;
    if (json) {
        dp_jw_end(jw);
        dp_jw_object(jw, "seconds");
        dp_jw_fixed(jw, "build", t1 - t0, 3);
        dp_jw_fixed(jw, "write", t2 - t1, 3);
        dp_jw_end(jw);
        dp_jw_int(jw, "threads", (int)n_threads);
        dp_jw_fixed(jw, "jobs_per_s", jobs_s, 1);
        if (dp_jw_print(jw, stdout, "stdout", &err)) rc = cli_fail(&err);
    } else
        printf("built in %.1f s (graphs, coarsening, features and simulation %.1f s: %d jobs x %d "
               "setting(s) on %lld thread(s), %.1f jobs/s; writing %.1f s)\n",
               t2 - t0, t1 - t0, sw.n_graphs, chosen.n_settings, (long long)n_threads, jobs_s,
               t2 - t1);
done:
    dp_jw_free(jw);
    dp_sweep_free(&sw);
    free(chosen.settings);
    dp_op_weights_free(w);
    dp_settings_free(list);
    dp_gpu_catalog_free(cat);
    return rc;
}
