/* cmd_calibrate.c: `driple calibrate`: the simulator against the published measured throughput
 * of ../shared/calibration (its three tables by default): per-row predictions with the built-in
 * constants, and leave-one-GPU-out, leave-one-generation-out and leave-one-system-out
 * cross-validation (the constants refitted without each group's rows, then those rows
 * predicted), summarised by GPU, model, precision, framework, sync, GPU count and the issue's
 * groups. Predictions are simulated; measurements are the tables'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/calibrate.h"
#include "dp/json_out.h"
#include "dp/settings.h"

#define CALIB_DIR "../shared/calibration/"
#define CALIB_USAGE                                                                              \
    "driple calibrate [--data FILE]... [--gpus FILE] [--fit] [--no-logo] [--no-holdout] "       \
    "[--rows] [--threads N] [--json]\n"                                                         \
    "  simulates every row of the published tables (default " CALIB_DIR                        \
    "throughput_measured.csv,\n  throughput_published.csv and throughput_dle_v100.csv) and "     \
    "compares throughput;\n"                                                                    \
    "  leave-one-GPU-out: refits the constants without each GPU's rows and predicts them\n"      \
    "  (--no-logo skips it), then the same leaving out each GPU generation and each system\n"   \
    "  (--no-holdout skips those); --fit prints the constants fitted over every row"

/* A group of rows for the summary: rows whose field equals value. */
enum group_by { BY_GPU, BY_MODEL, BY_PRECISION, BY_FRAMEWORK, BY_SYNC, BY_COUNT };
static const char *const by_name[BY_COUNT] = {"gpu", "model", "precision", "framework", "sync"};

static const char *row_field(const struct dp_calib_row *r, enum group_by by) {
    switch (by) {
    case BY_GPU: return r->catalog;
    case BY_MODEL: return r->model;
    case BY_PRECISION: return dp_precision_name(r->setting.precision);
    case BY_FRAMEWORK: return dp_framework_name(r->setting.framework);
    default: return dp_sync_name(r->setting.sync);
    }
}

static void print_stats(const char *label, const struct dp_calib_stats *a,
                        const struct dp_calib_stats *l) {
    printf("  %-30s %4d  median %5.1f%%  p90 %6.1f%%  signed %+6.1f%%", label, a->n, a->median,
           a->p90, a->median_signed);
    if (l) printf("   LOGO median %5.1f%%  p90 %6.1f%%", l->median, l->p90);
    printf("\n");
}

static void jw_stats(struct dp_jw *w, const char *key, const struct dp_calib_stats *a) {
    dp_jw_object(w, key);
    dp_jw_int(w, "n", a->n);
    dp_jw_num(w, "median_abs_error_pct", a->median);
    dp_jw_num(w, "p90_abs_error_pct", a->p90);
    dp_jw_num(w, "worst_abs_error_pct", a->worst);
    dp_jw_num(w, "median_error_pct", a->median_signed);
    dp_jw_num(w, "mean_abs_log_ratio", a->mean_abs_log);
    dp_jw_end(w);
}

/* Whether the generation and system hold-outs ran (with LOGO, unless --no-holdout). */
static bool g_held;

/* The figures of the rows in use, with the built-in constants and (logo) left out: as members
 * "all" and "logo" of w (and "logen", "loso" when the hold-outs ran), or a text line when w is
 * NULL. */

static void report(const struct dp_calib *cb, const bool *use, bool logo, struct dp_jw *w,
                   const char *label) {
    struct dp_calib_stats a, l, g, sy;
    dp_calib_stats(cb, use, false, &a);
    dp_calib_stats(cb, use, true, &l);
    dp_calib_stats_held(cb, use, DP_HOLD_GENERATION, &g);
    dp_calib_stats_held(cb, use, DP_HOLD_SYSTEM, &sy);
    if (!w) {
        print_stats(label, &a, logo ? &l : NULL);
        if (logo && g_held)
            printf("    %-26s leave-one-generation-out median %5.1f%% p90 %5.1f%%; "
                   "leave-one-system-out median %5.1f%% p90 %5.1f%%\n", "", g.median, g.p90,
                   sy.median, sy.p90);
        return;
    }
    jw_stats(w, "all", &a);
    if (logo) jw_stats(w, "logo", &l);
    if (logo && g_held) {
        jw_stats(w, "logen", &g);
        jw_stats(w, "loso", &sy);
    }
}

static void jw_constants(struct dp_jw *w, const char *key, const struct dp_sim_constants *k) {
    const struct { const char *key; double v; } c[] = {
        {"eff_cuda", k->eff_cuda},     {"eff_tensor", k->eff_tensor},
        {"eff_tensor_mm", k->eff_tensor_mm}, {"winograd", k->winograd},
        {"tc_unaligned", k->tc_unaligned}, {"eff_mem", k->eff_mem},   {"gap_us", k->gap_us},
        {"host_tf_us", k->host_tf_us},
        {"host_pt_us", k->host_pt_us}, {"fuse_tf", k->fuse_tf},       {"fuse_pt", k->fuse_pt},
        {"net_eff", k->net_eff},       {"ps_host_gbps", k->ps_host_gbps},
        {"jitter", k->jitter},         {"context_gb", k->context_gb}};
    dp_jw_object(w, key);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) dp_jw_num(w, c[i].key, c[i].v);
    dp_jw_object(w, "gen_scale");
    for (int g = 1; g < DP_GEN_COUNT; g++)
        dp_jw_num(w, dp_gpu_gen_name((enum dp_gpu_gen)g), k->gen_scale[g]);
    dp_jw_end(w);
    dp_jw_end(w);
}

static void text_constants(const char *what, const struct dp_sim_constants *k) {
    printf("%s: eff_cuda %.3g, eff_tensor %.3g (matmuls %.3g), winograd %.3g, tc_unaligned %.3g, eff_mem %.3g, "
           "gap %.3g us, host TF %.3g us, PyTorch %.3g us, fuse TF %.3g, PyTorch %.3g, net_eff "
           "%.3g; generation scales", what, k->eff_cuda, k->eff_tensor, k->eff_tensor_mm,
           k->winograd,
           k->tc_unaligned, k->eff_mem, k->gap_us, k->host_tf_us, k->host_pt_us, k->fuse_tf,
           k->fuse_pt, k->net_eff);
    for (int g = 1; g < DP_GEN_COUNT; g++)
        printf(" %s %.3g", dp_gpu_gen_name((enum dp_gpu_gen)g), k->gen_scale[g]);
    printf("\n");
}

static void jw_row(struct dp_jw *w, const struct dp_calib_row *r, bool logo) {
    dp_jw_object(w, NULL);
    dp_jw_str(w, "file", r->file);
    dp_jw_int(w, "line", r->line);
    dp_jw_str(w, "model", r->model);
    dp_jw_str(w, "zoo", r->zoo);
    dp_jw_str(w, "gpu", r->gpu);
    dp_jw_str(w, "catalog", r->catalog);
    dp_jw_str(w, "setting", r->setting.id);
    dp_jw_str(w, "framework", dp_framework_name(r->setting.framework));
    dp_jw_str(w, "sync", dp_sync_name(r->setting.sync));
    dp_jw_str(w, "precision", dp_precision_name(r->setting.precision));
    dp_jw_str(w, "network", dp_network_name(r->setting.network));
    dp_jw_int(w, "gpus", r->gpus);
    dp_jw_int(w, "replicas", r->replicas);
    dp_jw_bool(w, "ran_fp32", r->ran_fp32);
    dp_jw_bool(w, "xla", r->xla);
    dp_jw_int(w, "batch", r->batch);
    dp_jw_bool(w, "real_data", r->real_data);
    dp_jw_str(w, "optimizer", dp_optimizer_name(r->optimizer));
    dp_jw_str(w, "unit", r->unit);
    dp_jw_num(w, "tokens_per_sample", r->tokens > 0 ? r->tokens : NAN);
    dp_jw_num(w, "measured", r->measured);
    dp_jw_num(w, "predicted", r->predicted);
    dp_jw_num(w, "error_pct", (r->predicted / r->measured - 1) * 100);
    dp_jw_num(w, "predicted_logo", logo ? r->predicted_logo : NAN);
    dp_jw_num(w, "logo_error_pct", logo ? (r->predicted_logo / r->measured - 1) * 100 : NAN);
    dp_jw_num(w, "memory_gb", r->memory_gb);
    dp_jw_num(w, "gpu_memory_gb", r->gpu_memory_gb);
    dp_jw_bool(w, "oom", r->oom);
    dp_jw_end(w);
}

static const struct cli_opt calibrate_opts[] = {
    {"--data", "FILE[,FILE...]", "the three published tables", 0, 0,
     "throughput tables (at most 8)", NULL},
    {"--gpus", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog", NULL},
    {"--fit", NULL, NULL, 0, 0, "print the constants fitted over every row", NULL},
    {"--no-logo", NULL, NULL, 0, 0, "skip the leave-one-GPU-out refits", NULL},
    {"--no-holdout", NULL, NULL, 0, 0,
     "skip the leave-one-generation-out and leave-one-system-out refits", NULL},
    {"--rows", NULL, NULL, 0, 0, "print every row", NULL},
    {"--threads", "N", "2", 1, 16, "threads for the refits", NULL},
    {"--json", NULL, NULL, 0, 0, "print the result as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_calibrate_spec = {
    "calibrate", "the simulator against published measured throughput, leave-one-GPU-out",
    CALIB_USAGE, calibrate_opts, NULL};

int cmd_calibrate(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_calibrate_spec)) return c.rc;
    bool json = cli_flag(&c, "--json"), fit = cli_flag(&c, "--fit");
    bool logo = !cli_flag(&c, "--no-logo"), rows = cli_flag(&c, "--rows");
    g_held = !cli_flag(&c, "--no-holdout");
    const char *gpus_path = cli_value(&c, "--gpus");
    const char *data = cli_value(&c, "--data");
    int64_t threads = 2;
    bool ok = cli_int(&c, "--threads", 1, 16, &threads) && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    char buf[2048];
    const char *paths[8] = {CALIB_DIR "throughput_measured.csv",
                            CALIB_DIR "throughput_published.csv",
                            CALIB_DIR "throughput_dle_v100.csv"};
    int n_paths = 3;
    if (data) { /* FILE[,FILE...] */
        if (strlen(data) >= sizeof buf)
            return cli_usage("calibrate", CALIB_USAGE, "--data: too long");
        strcpy(buf, data);
        n_paths = 0;
        for (char *tok = strtok(buf, ","); tok && n_paths < 8; tok = strtok(NULL, ","))
            paths[n_paths++] = tok;
        if (!n_paths) return cli_usage("calibrate", CALIB_USAGE, "--data: no file named");
    }
    struct dp_gpu_catalog *cat = NULL;
    struct dp_calib *cb = NULL;
    struct dp_error err = {0};
    bool *use = NULL;
    int rc = 1;
    if (dp_gpu_catalog_load_default(gpus_path, &cat, &err) ||
        dp_calib_load(paths, n_paths, cat, &cb, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    struct dp_sim_constants k, fitted;
    dp_sim_constants_default(&k);
    fitted = k;
    int n = dp_calib_n_rows(cb);
    if ((logo && g_held &&
         (dp_calib_holdout(cb, DP_HOLD_GENERATION, &k, (int)threads, &err) ||
          dp_calib_holdout(cb, DP_HOLD_SYSTEM, &k, (int)threads, &err))) ||
        (logo && dp_calib_logo(cb, &k, &fitted, (int)threads, &err)) ||
        (fit && !logo && dp_calib_fit(cb, NULL, &fitted, NULL, (int)threads, &err)) ||
        dp_calib_predict(cb, &k, (int)threads, &err)) { /* rows: the built-in constants */
        rc = cli_fail(&err);
        goto done;
    }
    if (!(use = calloc((size_t)n + 1, sizeof *use))) {
        fprintf(stderr, "driple: calibrate: out of memory\n");
        goto done;
    }
    int n_oom = 0;
    for (int i = 0; i < n; i++) n_oom += dp_calib_row(cb, i)->oom;
    struct dp_jw *w = NULL;
    if (json) {
        w = dp_jw_new();
        dp_jw_bool(w, "simulated", true);
        dp_jw_array(w, "tables");
        for (int i = 0; i < n_paths; i++) dp_jw_str(w, NULL, paths[i]);
        dp_jw_end(w);
        dp_jw_int(w, "n", n);
        dp_jw_int(w, "skipped_rows", dp_calib_n_skipped(cb));
        dp_jw_str(w, "skipped", dp_calib_skipped(cb));
        dp_jw_int(w, "oom_rows", n_oom);
        jw_constants(w, "constants", &k);
        if (logo || fit) jw_constants(w, "fitted", &fitted);
        else dp_jw_null(w, "fitted");
        report(cb, NULL, logo, w, NULL);
    } else {
        if (rows) {
            printf("%-18s %-15s %-10s %-9s %-5s %4s %5s %11s %11s %8s %8s %s\n", "model", "gpu",
                   "framework", "sync", "prec", "gpus", "batch", "measured", "simulated", "error",
                   "LOGO", "memory / GPU");
            for (int i = 0; i < n; i++) {
                const struct dp_calib_row *r = dp_calib_row(cb, i);
                printf("%-18s %-15s %-10s %-9s %-5s %4d %5d %11.1f %11.1f %+7.1f%% ", r->model,
                       r->catalog, dp_framework_name(r->setting.framework),
                       dp_sync_name(r->setting.sync), dp_precision_name(r->setting.precision),
                       r->gpus, r->batch, r->measured, r->predicted,
                       (r->predicted / r->measured - 1) * 100);
                if (logo) printf("%+7.1f%% ", (r->predicted_logo / r->measured - 1) * 100);
                else printf("%8s ", "-");
                printf("%5.1f / %4.0f GB%s%s\n", r->memory_gb, r->gpu_memory_gb,
                       r->oom ? " OOM" : "", r->real_data ? " (real data)" : "");
            }
        }
        printf("calibration: SIMULATED vs measured throughput over %d published rows (|error| "
               "of the built-in constants%s)\n", n,
               logo ? "; LOGO: leave-one-GPU-out, refitted without the GPU's rows" : "");
        report(cb, NULL, logo, NULL, "all rows");
    }
    static const char *const count_name[2] = {"one_gpu", "multi_gpu"};
    for (int multi = 0; multi < 2; multi++) {
        for (int i = 0; i < n; i++) use[i] = (dp_calib_row(cb, i)->gpus > 1) == multi;
        dp_jw_object(w, count_name[multi]);
        report(cb, use, logo, w, multi ? "multi-GPU rows" : "one-GPU rows");
        dp_jw_end(w);
    }
    for (int i = 0; i < n; i++) use[i] = !dp_calib_row(cb, i)->real_data;
    dp_jw_object(w, "synthetic_data");
    report(cb, use, logo, w, "synthetic-data rows");
    dp_jw_end(w);
    /* the groups: DeepLearningExamples' DGX-1 rows, several machines, mixed precision */
    for (int grp = 0; grp < 3; grp++) {
        static const char *const key[3] = {"dle", "multi_machine", "mixed"};
        static const char *const label[3] = {"DeepLearningExamples rows", "multi-machine rows",
                                             "mixed-precision rows"};
        for (int i = 0; i < n; i++) {
            const struct dp_calib_row *r = dp_calib_row(cb, i);
            use[i] = grp == 0   ? r->dle
                     : grp == 1 ? r->machines > 1
                                : r->setting.precision == DP_PREC_MIXED;
        }
        dp_jw_object(w, key[grp]);
        report(cb, use, logo, w, label[grp]);
        dp_jw_end(w);
    }
    dp_jw_object(w, "groups");
    for (int by = 0; by < BY_COUNT; by++) {
        dp_jw_array(w, by_name[by]);
        if (!json) printf(" by %s:\n", by_name[by]);
        for (int i = 0; i < n; i++) {
            const char *v = row_field(dp_calib_row(cb, i), (enum group_by)by);
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = !strcmp(row_field(dp_calib_row(cb, j), (enum group_by)by), v);
            if (seen) continue;
            for (int j = 0; j < n; j++)
                use[j] = !strcmp(row_field(dp_calib_row(cb, j), (enum group_by)by), v);
            dp_jw_object(w, NULL);
            dp_jw_str(w, "value", v);
            report(cb, use, logo, w, v);
            dp_jw_end(w);
        }
        dp_jw_end(w);
    }
    dp_jw_end(w);
    if (json) {
        dp_jw_array(w, "rows");
        for (int i = 0; i < n; i++) jw_row(w, dp_calib_row(cb, i), logo);
        dp_jw_end(w);
        rc = cmd_json_emit(w);
        goto done;
    } else {
        if (dp_calib_n_skipped(cb))
            printf("not simulated: %d published rows: %s\n", dp_calib_n_skipped(cb),
                   dp_calib_skipped(cb));
        printf("memory: %d of %d rows fit the simulated footprint in the GPU's memory (every "
               "row ran, so all should)\n", n - n_oom, n);
        text_constants("built-in constants", &k);
        if (logo || fit) text_constants("fitted over every row now", &fitted);
    }
    rc = 0;
done:
    free(use);
    dp_calib_free(cb);
    dp_gpu_catalog_free(cat);
    return rc;
}
