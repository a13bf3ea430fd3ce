/* cmd_compare.c: `driple compare`: one graph through every setting's inspector side by side,
 * one GNN pass per distinct body (each inspector then runs only its MLP head; the
 * setting-aware inspector's rows one batched head), and `driple bench compare`, its timing;
 * with --grid, through every catalog GPU x sync x network at one worker count (the
 * setting-aware inspector's what-if space). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/compute.h"
#include "dp/coarsen.h"
#include "dp/inspector.h"
#include "dp/json_out.h"
#include "dp/metrics.h"
#include "dp/session.h"
#include "dp/settings.h"
#include "dp/systems.h"

static const char usage_compare[] =
    "driple compare GRAPH|--grouped FILE [--settings FILE] [--batch N] [--exported-batch N]\n"
    "       [--groups K] [--seed S] [--weights FILE] " CMD_ECONOMICS_USAGE " [--json]\n"
    "       [--setting ID | --gpu NAME " CMD_CLUSTER_USAGE "\n"
    "       [--gpus FILE]]   (one more row: a setting not in the list, with its inspector found\n"
    "       as predict finds it)\n"
    "       [--setting-aware FILE|none]\n"
    "   or: driple compare GRAPH --grid [--workers N] [--ps N] [--precision P] [--accum N] ...\n"
    "       [--framework tensorflow|pytorch[:VERSION]] [--placement homo|hetero] [--batch N] [--json]\n"
    "       every catalog GPU x sync (ps, allreduce) x network at N workers (8; PS: --ps, 2),\n"
    "       fastest first";

/* The grid's rows: every catalog GPU x sync x network at the options' workers, PS, placement,
 * framework and modifying options (precision, accumulation, ...), machines from the GPUs per
 * machine alike for PS and all-reduce; combinations a setting cannot have (more GPUs in one
 * machine than a machine holds, NVLink on a GPU without it, fp8 before Ada, ...) are left out.
 * A new array (caller frees) of *n settings; NULL when out of memory. The options' values were
 * checked (cmd_cluster_modify on a template) before. */
static struct dp_setting *grid_rows(const struct dp_gpu_catalog *cat, const struct cmd_cluster *cl,
                                    const struct dp_setting *tmpl, int *n) {
    struct dp_setting *rows = malloc(((size_t)cat->n_gpus * 2 * DP_NET_COUNT + 1) * sizeof *rows);
    *n = 0;
    if (!rows) return NULL;
    for (int g = 0; g < cat->n_gpus; g++)
        for (int sy = 0; sy < 2; sy++)
            for (int net = 0; net < DP_NET_COUNT; net++) {
                struct dp_setting s = *tmpl;
                snprintf(s.gpu, sizeof s.gpu, "%s", cat->gpus[g].name);
                s.sync = (enum dp_sync)sy;
                s.workers = cl->workers > 0 ? (int)cl->workers : 8;
                s.ps = cl->ps > 0 ? (int)cl->ps : 2;
                s.network = (enum dp_network)net;
                if (dp_network_intra(s.network) || s.sync == DP_SYNC_ALLREDUCE)
                    s.placement = DP_PLACE_HOMO;
                s.machines = dp_setting_cluster_machines(s.sync, s.workers, s.ps, s.network,
                                                         s.placement, 0);
                if (dp_setting_finish(&s, NULL) == DP_OK &&
                    dp_setting_check_gpu(&s, &cat->gpus[g], NULL, NULL) == DP_OK)
                    rows[(*n)++] = s;
            }
    return rows;
}

/* One row of the --json array. */
static void json_row(struct dp_jw *w, const struct dp_setting *s, const struct dp_prediction *p) {
    dp_jw_object(w, NULL);
    dp_jw_str(w, "id", s->id);
    dp_jw_str(w, "gpu", s->gpu);
    dp_jw_int(w, "workers", s->workers);
    dp_jw_int(w, "ps", s->ps);
    dp_jw_prediction(w, p);
    if (!p->ok) dp_jw_str(w, "error", p->note);
    dp_jw_end(w);
}

/* A figure of the table, "-" when unknown (a GPU without a price). */
static void cell(char *buf, size_t n, double v) {
    if (isfinite(v)) snprintf(buf, n, "%.4g", v);
    else snprintf(buf, n, "-");
}

/* One row of the table. */
static void text_row(const struct dp_setting *s, const struct dp_prediction *p) {
    if (!p->ok) {
        printf("%-28s %10s %12s %9s %9s %10s %10s %9s %9s  (%s)\n", s->id, "-", "-", "-", "-",
               "-", "-", "-", "-", p->note);
        return;
    }
    char net[32], cost[32];
    cell(net, sizeof net, p->d[DP_D_NET_MB_PER_ITER]);
    cell(cost, sizeof cost, p->d[DP_D_EPOCH_COST]);
    printf("%-28s %10.4g %12.4g %9.4g %9.4g %10.4g %10.4g %9s %9s  %s%s%s\n", s->id,
           p->d[DP_D_ITERATION_MS], p->d[DP_D_THROUGHPUT], p->m[DP_OUT_GPU_UTIL_ACTIVE],
           p->m[DP_OUT_GPU_UTIL_PEAK], p->m[DP_OUT_NET_RX_PEAK], p->m[DP_OUT_NET_TX_PEAK], net,
           cost, p->from.source == DP_SOURCE_SETTING_AWARE ? "setting-aware" : p->from.path,
           p->oom ? " OOM" : "", p->ood ? " OOD" : "");
}

/* What the table's columns mean. */
static void text_footer(int n_ok, int n_rows, int n_gnn, double ms,
                        const struct dp_session *ss, double price, double params) {
    const char *epoch_what;
    double epoch_samples = dp_session_epoch_samples(ss, &epoch_what);
    printf("\n%d of %d settings predicted with %d GNN pass%s (shared bodies) in %.1f ms.\n"
           "GPU act = gpu_util.active (ms), GPU peak = gpu_util.peak (%%); "
           "iter ms = gpu_util.idle + gpu_util.active (setting-aware: predicted directly); "
           "samples/s = batch x workers x 1000 / iter ms;\n"
           "epoch $ = %.0f samples (%s) / samples/s / 3600 x workers x the GPU's price per "
           "hour (%s; -: no price read).\n",
           n_ok, n_rows, n_gnn, n_gnn == 1 ? "" : "es", ms, epoch_samples, epoch_what,
           isnan(price) ? "the catalog's, --price sets one" : "--price");
    if (isfinite(params))
        printf("net MB = what one worker moves per iteration by its row's sync, %.0f parameters: "
               "PS 2 x parameters x 4 B (every variable pulled, every gradient pushed, fp32 on the "
               "wire); all-reduce NCCL's ring over the W workers, 2 (W-1)/W x the gradient bytes "
               "when the machines are full.\n", params);
}

static int cmp_throughput(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b; /* NaN last */
    return isnan(x) ? !isnan(y) : isnan(y) ? -1 : (x < y) - (x > y);
}

/* compare's command line. */
struct compare_args {
    struct cmd_what_if wi;
    double             epoch_samples, price;
    bool               json, grid;
    const char        *graph;
    struct dp_setting  tmpl; /* --grid: the options' framework, placement and modifiers */
};

/* Reads and checks the command line into *a (c stays open for cli_done). Returns 0, or the
 * exit status after saying why. */
static int compare_args_read(struct cli *c, struct compare_args *a) {
    memset(a, 0, sizeof *a);
    a->epoch_samples = a->price = NAN; /* NaN: the family's epoch, the catalog's price */
    a->json = cli_flag(c, "--json");
    a->grid = cli_flag(c, "--grid");
    if (!cmd_what_if_opts(c, &a->wi) || !cmd_economics_opts(c, &a->epoch_samples, &a->price) ||
        c->bad)
        return 2;
    a->graph = cli_positional(c, 0);
    if (!cli_check_unused(c)) return 2;
    const struct cmd_cluster *cl = &a->wi.cl;
    if (a->wi.inspector)
        return cli_usage("compare", usage_compare, "--inspector: compare uses each setting's own");
    if (a->wi.setting && cmd_cluster_given(cl))
        return cli_usage("compare", usage_compare, "give --setting ID or --gpu NAME ..., not both");
    if (a->grid && (a->wi.setting || cl->gpu || cl->network || cl->sync || cl->system ||
                    cl->machines || cl->gpus_per_machine))
        return cli_usage("compare", usage_compare, "--grid ranges over every GPU, sync and network: "
                         "give only --workers, --ps, --placement, --framework or the options that "
                         "modify a setting (--precision, --accum, ...)");
    if (!a->grid) return 0;
    struct dp_error err = {0};
    if (cl->placement && !dp_placement_parse(cl->placement, &a->tmpl.placement))
        return cli_usage("compare", usage_compare, "--placement %s: expected homo or hetero",
                         cl->placement);
    if (cl->framework && dp_framework_lookup(cl->framework, "--framework", &a->tmpl.framework,
                                             &a->tmpl.fw_version, &err)) {
        fprintf(stderr, "driple: compare: %s\n", err.msg);
        return 2;
    }
    return cmd_cluster_modify(cl, "compare", &a->tmpl);
}

/* The rows: the grid, or the list's settings then the named one when the list lacks its
 * cluster. *rows: a new array (caller frees) of *n_rows. Returns 0, or the exit status. */
static int compare_rows(struct dp_session *ss, const struct compare_args *a,
                        struct dp_setting **rows, int *n_rows) {
    const struct dp_settings *list = dp_session_settings(ss);
    struct dp_setting extra;
    int rc;
    *n_rows = list->n_settings;
    if (a->grid) {
        if (!dp_session_sa(ss)) {
            fprintf(stderr, "driple: compare --grid: no setting-aware inspector (the shipped "
                    "assets/inspectors/setting-aware.json, or --setting-aware FILE): only it "
                    "predicts every GPU, sync and network\n");
            return 1;
        }
        if (!(*rows = grid_rows(dp_session_catalog(ss), &a->wi.cl, &a->tmpl, n_rows))) goto oom;
        return 0;
    }
    if (a->wi.setting || cmd_cluster_given(&a->wi.cl)) {
        struct dp_resolution r;
        if ((rc = cmd_session_setting(ss, a->wi.setting, &a->wi.cl, "compare", usage_compare,
                                      &extra)) ||
            (rc = cmd_session_inspector(ss, &extra, &r)))
            return rc;
        bool listed = false;
        for (int i = 0; i < list->n_settings && !listed; i++)
            listed = dp_setting_same_cluster(&list->settings[i], &extra);
        if (!listed) (*n_rows)++;
    }
    if (!(*rows = malloc(((size_t)*n_rows + 1) * sizeof **rows))) goto oom;
    memcpy(*rows, list->settings, (size_t)list->n_settings * sizeof **rows);
    if (*n_rows > list->n_settings) (*rows)[list->n_settings] = extra;
    return 0;
oom:
    fprintf(stderr, "driple: compare: out of memory\n");
    return 1;
}

/* One row of the table or of the JSON array. */
static void compare_row(struct dp_jw *w, const struct dp_setting *s, const struct dp_prediction *p) {
    if (w) json_row(w, s, p);
    else text_row(s, p);
}

/* After the rows: the counts, timing and formulas. Returns 0, or 1 when the JSON fails. */
static int compare_footer(struct dp_jw *w, const struct compare_args *a,
                          const struct dp_session *ss, double params, int n_ok, int n_rows,
                          int n_gnn, double ms) {
    if (w) {
        dp_jw_end(w);
        dp_jw_int(w, "n_predicted", n_ok);
        dp_jw_int(w, "gnn_passes", n_gnn);
        dp_jw_fixed(w, "ms", ms, 3);
        dp_jw_num(w, "parameters", params);
        dp_jw_formulas(w, "formulas");
        return cmd_json_emit(w);
    }
    text_footer(n_ok, n_rows, n_gnn, ms, ss, a->price, params);
    return 0;
}

/* Predicts the rows and prints them (fastest first for the grid). Returns the exit status. */
static int compare_run(struct dp_session *ss, const struct compare_args *a,
                       const struct dp_setting *rows, int n_rows) {
    const struct dp_settings *list = dp_session_settings(ss);
    struct dp_error err = {0};
    struct dp_jw *w = NULL;
    int rc = 1;
    dp_session_set_economics(ss, a->epoch_samples, a->price);
    struct dp_prediction *preds = malloc(((size_t)n_rows + 1) * sizeof *preds);
    double *order = malloc(((size_t)n_rows + 1) * 2 * sizeof *order);
    if (!preds || !order || (a->json && !(w = dp_jw_new()))) {
        fprintf(stderr, "driple: compare: out of memory\n");
        goto done;
    }
    const struct dp_grouped *g = dp_session_grouped(ss);
    double params = dp_session_params(ss);
    long gnn0, gnn1;
    dp_session_counts(ss, &gnn0, NULL);
    double t0 = dp_clock_ms();
    int n_ok = 0;
    if (w) {
        dp_jw_str(w, "graph", g->graph);
        if (g->batch > 0) dp_jw_int(w, "batch", g->batch);
        else dp_jw_null(w, "batch");
        dp_jw_str(w, "settings_file", list->path);
        dp_jw_array(w, "settings");
    } else {
        printf("graph %s  batch %lld  groups %d  settings %s\n\n", g->graph, (long long)g->batch,
               g->n_groups, a->grid ? "every GPU x sync x network" : list->path);
        printf("%-28s %10s %12s %9s %9s %10s %10s %9s %9s  %s\n", "setting", "iter ms",
               "samples/s", "GPU act", "GPU peak", "RX MB/s", "TX MB/s", "net MB", "epoch $",
               "inspector");
    }
    /* one GNN pass per distinct body (the session caches it); the rows' heads after it */
    if (dp_session_predict_many(ss, rows, n_rows, 0, preds, &err)) {
        cli_fail(&err);
        goto done;
    }
    for (int i = 0; i < n_rows; i++) {
        order[2 * i] = preds[i].ok ? preds[i].d[DP_D_THROUGHPUT] : NAN;
        order[2 * i + 1] = i;
    }
    double ms = dp_clock_ms() - t0;
    if (a->grid) qsort(order, (size_t)n_rows, 2 * sizeof *order, cmp_throughput);
    for (int k = 0; k < n_rows; k++) {
        int i = (int)order[2 * k + 1];
        n_ok += preds[i].ok;
        compare_row(w, &rows[i], &preds[i]);
    }
    dp_session_counts(ss, &gnn1, NULL);
    rc = compare_footer(w, a, ss, params, n_ok, n_rows, (int)(gnn1 - gnn0), ms);
    w = NULL;
    if (!rc && n_ok == 0) { /* a table of dashes is no answer: say so in the exit status */
        dp_error_set(&err, DP_ERR_NOT_FOUND, "%s: no setting could be predicted (see the reasons above)",
                     list->path);
        rc = cli_fail(&err);
    }
done:
    free(preds);
    free(order);
    dp_jw_free(w);
    return rc;
}

static const struct cli_opt compare_opts[] = {
    {"--grid", NULL, NULL, 0, 0,
     "every catalog GPU x sync x network at --workers (8) and --ps (2)", NULL},
    {"--json", NULL, NULL, 0, 0, "print the rows as JSON", NULL},
    CLI_MORE(cmd_what_if_table),
    CLI_MORE(cmd_economics_table),
    CLI_END,
};
const struct cli_spec cmd_compare_spec = {
    "compare", "every setting of the list (or a grid of clusters) side by side",
    usage_compare, compare_opts, NULL};

int cmd_compare(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_compare_spec)) return c.rc;
    struct compare_args a;
    struct dp_session *ss = NULL;
    struct dp_setting *rows = NULL;
    int n_rows = 0;
    int rc = compare_args_read(&c, &a);
    if (!rc) rc = cmd_session_open(a.wi.settings, a.wi.cl.gpus, a.wi.weights, a.wi.sa, &ss);
    if (!rc) rc = compare_rows(ss, &a, &rows, &n_rows);
    if (!rc)
        rc = cmd_session_workload(ss, a.graph, a.wi.grouped, &a.wi.io, a.wi.batch, a.wi.groups,
                                  a.wi.seed, "compare", usage_compare);
    if (!rc) rc = compare_run(ss, &a, rows, n_rows);
    free(rows);
    dp_session_free(ss);
    cli_done(&c);
    return rc;
}

static const char usage_bench[] =
    "driple bench compare GRAPH [--grid] [--runs R] [--threads T] [--json]\n"
    "       compare's predictions of every shipped setting (--grid: every catalog GPU x sync x\n"
    "       network at 8 workers) from the cached embedding: the first call computes the\n"
    "       embedding (timed on its own), then the median of R calls";

static const struct cli_opt bench_compare_opts[] = {
    {"--grid", NULL, NULL, 0, 0, "the grid's rows (compare --grid)", NULL},
    {"--runs", "R", "20", 1, 100000, "timed calls", NULL},
    {"--threads", "T", "the engine's", 0, 256, "threads (0: the engine's default)", NULL},
    {"--json", NULL, NULL, 0, 0, "print the figures as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_bench_compare_spec = {
    "bench compare", "times compare's predictions from the cached embedding", usage_bench,
    bench_compare_opts, NULL};

int bench_compare(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_bench_compare_spec)) return c.rc;
    int rc = 2;
    struct dp_session *ss = NULL;
    struct dp_setting *rows = NULL;
    struct dp_prediction *preds = NULL;
    double *ms = NULL;
    struct dp_error err = {0};
    bool json = cli_flag(&c, "--json"), grid = cli_flag(&c, "--grid");
    int64_t runs = 20, threads = 0;
    bool ok = cli_int(&c, "--runs", 1, 100000, &runs) && cli_int(&c, "--threads", 0, 256, &threads);
    const char *graph = cli_positional(&c, 0);
    if (!ok || !cli_check_unused(&c)) goto done;
    if (!graph) {
        rc = cli_usage("bench compare", usage_bench, "missing GRAPH");
        goto done;
    }
    if (threads > 0) dp_threads_set((int)threads);
    struct dp_import_opts io;
    memset(&io, 0, sizeof io);
    if ((rc = cmd_session_open(NULL, NULL, NULL, NULL, &ss)) ||
        (rc = cmd_session_workload(ss, graph, NULL, &io, 0, DP_DEFAULT_GROUPS, DP_DEFAULT_SEED,
                                   "bench compare", usage_bench)))
        goto done;
    rc = 1;
    const struct dp_settings *list = dp_session_settings(ss);
    int n = list->n_settings;
    if (grid) {
        struct cmd_cluster cl;
        struct dp_setting tmpl;
        memset(&cl, 0, sizeof cl);
        memset(&tmpl, 0, sizeof tmpl);
        if (!dp_session_sa(ss)) {
            fprintf(stderr, "driple: bench compare --grid: no setting-aware inspector\n");
            goto done;
        }
        if (!(rows = grid_rows(dp_session_catalog(ss), &cl, &tmpl, &n))) goto oom;
    } else if ((rows = malloc(((size_t)n + 1) * sizeof *rows))) {
        memcpy(rows, list->settings, (size_t)n * sizeof *rows);
    } else {
        goto oom;
    }
    if (!(preds = malloc(((size_t)n + 1) * sizeof *preds)) ||
        !(ms = malloc((size_t)runs * 2 * sizeof *ms)))
        goto oom;
    double *cms = ms + runs, t0 = dp_clock_ms();
    if (dp_session_predict_many(ss, rows, n, 0, preds, &err)) goto fail; /* the embedding */
    double first = dp_clock_ms() - t0;
    for (int r = 0; r < runs; r++) {
        double w0 = dp_clock_ms(), c0 = cmd_cpu_ms();
        if (dp_session_predict_many(ss, rows, n, 0, preds, &err)) goto fail;
        ms[r] = dp_clock_ms() - w0;
        cms[r] = cmd_cpu_ms() - c0;
    }
    int n_ok = 0;
    for (int i = 0; i < n; i++) n_ok += preds[i].ok;
    double med = cmd_median(ms, (int)runs), cmed = cmd_median(cms, (int)runs);
    if (json) {
        struct dp_jw *jw = dp_jw_new();
        dp_jw_str(jw, "bench", "compare");
        dp_jw_str(jw, "graph", dp_session_grouped(ss)->graph);
        dp_jw_bool(jw, "grid", grid);
        dp_jw_int(jw, "settings", n);
        dp_jw_int(jw, "n_predicted", n_ok);
        dp_jw_int(jw, "threads", dp_threads());
        dp_jw_int(jw, "runs", runs);
        dp_jw_fixed(jw, "first_ms", first, 4);
        dp_jw_fixed(jw, "median_ms", med, 4);
        dp_jw_fixed(jw, "min_ms", ms[0], 4);
        dp_jw_fixed(jw, "cpu_median_ms", cmed, 4);
        rc = cmd_json_emit(jw);
        goto done;
    }
    printf("bench compare: %s, %d settings (%s), %d predicted: first call (with the "
           "embedding) %.3f ms; from the cached embedding median %.3f ms (CPU %.3f ms), "
           "min %.3f ms over %d runs, %d thread(s)\n",
           dp_session_grouped(ss)->graph, n, grid ? "every GPU x sync x network" : list->path,
           n_ok, first, med, cmed, ms[0], (int)runs, dp_threads());
    rc = 0;
    goto done;
fail:
    rc = cli_fail(&err);
    goto done;
oom:
    fprintf(stderr, "driple: bench compare: out of memory\n");
    rc = 1;
done:
    free(rows);
    free(preds);
    free(ms);
    dp_session_free(ss);
    cli_done(&c);
    return rc;
}
