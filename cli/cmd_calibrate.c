/* cmd_calibrate.c: `driple calibrate`: the simulator against the published measured throughput
 * of ../shared/calibration (both tables by default): per-row predictions with the built-in
 * constants, and leave-one-GPU-out cross-validation (the constants refitted without each GPU's
 * rows, then those rows predicted), summarised by GPU, model, precision, framework, sync and GPU
 * count. Predictions are simulated; measurements are the tables'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/calibrate.h"
#include "dp/settings.h"

#define CALIB_DIR "../shared/calibration/"
#define CALIB_USAGE                                                                              \
    "driple calibrate [--data FILE]... [--gpus FILE] [--fit] [--no-logo] [--rows] "             \
    "[--threads N] [--json]\n"                                                                  \
    "  simulates every row of the published tables (default " CALIB_DIR                        \
    "throughput_measured.csv and throughput_published.csv) and compares throughput;\n"          \
    "  leave-one-GPU-out: refits the constants without each GPU's rows and predicts them\n"      \
    "  (--no-logo skips it); --fit prints the constants fitted over every row"

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
    printf("  %-34s %4d  median %5.1f%%  p90 %6.1f%%  signed %+6.1f%%", label, a->n, a->median,
           a->p90, a->median_signed);
    if (l) printf("   LOGO median %5.1f%%  p90 %6.1f%%", l->median, l->p90);
    printf("\n");
}

int cmd_calibrate(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "calibrate")) return 1;
    bool json = cli_flag(&c, "--json"), fit = cli_flag(&c, "--fit");
    bool no_logo = cli_flag(&c, "--no-logo"), rows = cli_flag(&c, "--rows");
    const char *gpus_path = cli_value(&c, "--gpus");
    const char *data = cli_value(&c, "--data");
    int64_t threads = 2;
    bool ok = cli_int(&c, "--threads", 1, 16, &threads) && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    const char *paths[2] = {CALIB_DIR "throughput_measured.csv",
                            CALIB_DIR "throughput_published.csv"};
    int n_paths = 2;
    if (data) paths[0] = data, n_paths = 1;
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
    double obj = 0;
    if (!no_logo && dp_calib_logo(cb, &k, &fitted, (int)threads, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (fit && no_logo && dp_calib_fit(cb, NULL, &fitted, &obj, (int)threads, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    /* The reported per-row figures: the built-in constants. */
    if (dp_calib_predict(cb, &k, (int)threads, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (!(use = calloc((size_t)n + 1, sizeof *use))) {
        fprintf(stderr, "driple: calibrate: out of memory\n");
        goto done;
    }
    (void)json;
    if (rows)
        for (int i = 0; i < n; i++) {
            const struct dp_calib_row *r = dp_calib_row(cb, i);
            printf("%-18s %-16s %-10s %-9s %-5s %2d %5d %11.1f %11.1f %+7.1f%% %+7.1f%% %6.1f/%4.0f GB%s%s\n",
                   r->model, r->catalog, dp_framework_name(r->setting.framework),
                   dp_sync_name(r->setting.sync), dp_precision_name(r->setting.precision), r->gpus,
                   r->batch, r->measured, r->predicted, (r->predicted / r->measured - 1) * 100,
                   (r->predicted_logo / r->measured - 1) * 100, r->memory_gb, r->gpu_memory_gb,
                   r->oom ? " OOM" : "", r->real_data ? " real-data" : "");
        }
    struct dp_calib_stats a, l;
    dp_calib_stats(cb, NULL, false, &a);
    dp_calib_stats(cb, NULL, true, &l);
    printf("calibration: SIMULATED vs measured throughput, %d rows\n", n);
    print_stats("all rows", &a, no_logo ? NULL : &l);
    for (int multi = 0; multi < 2; multi++) {
        for (int i = 0; i < n; i++) use[i] = (dp_calib_row(cb, i)->gpus > 1) == multi;
        dp_calib_stats(cb, use, false, &a);
        dp_calib_stats(cb, use, true, &l);
        print_stats(multi ? "multi-GPU rows" : "one-GPU rows", &a, no_logo ? NULL : &l);
    }
    for (int by = 0; by < BY_COUNT; by++) {
        printf(" by %s:\n", by_name[by]);
        for (int i = 0; i < n; i++) {
            const char *v = row_field(dp_calib_row(cb, i), (enum group_by)by);
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = !strcmp(row_field(dp_calib_row(cb, j), (enum group_by)by), v);
            if (seen) continue;
            for (int j = 0; j < n; j++)
                use[j] = !strcmp(row_field(dp_calib_row(cb, j), (enum group_by)by), v);
            dp_calib_stats(cb, use, false, &a);
            dp_calib_stats(cb, use, true, &l);
            print_stats(v, &a, no_logo ? NULL : &l);
        }
    }
    int n_oom = 0;
    for (int i = 0; i < n; i++) n_oom += dp_calib_row(cb, i)->oom;
    printf("memory: %d of %d rows fit the simulated footprint in the GPU's memory\n", n - n_oom,
           n);
    printf("fitted over every row: eff_cuda %.3g eff_tensor %.3g winograd %.3g eff_mem %.3g "
           "gap %.3g us host TF %.3g us host PT %.3g us fuse TF %.3g fuse PT %.3g net_eff %.3g\n",
           fitted.eff_cuda, fitted.eff_tensor, fitted.winograd, fitted.eff_mem, fitted.gap_us,
           fitted.host_tf_us, fitted.host_pt_us, fitted.fuse_tf, fitted.fuse_pt, fitted.net_eff);
    rc = 0;
done:
    free(use);
    dp_calib_free(cb);
    dp_gpu_catalog_free(cat);
    return rc;
}
