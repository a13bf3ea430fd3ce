/* cmd_record.c: `driple record` (run a command, sample its GPU and network into nvidia-smi-style
 * CSV traces, then print the 12 labels through `driple trace extract`) and `driple dataset add`
 * (a measured sample: a graph, a setting and the labels of recorded traces, appended to a
 * driple-dataset/1 file). The engine records; this file owns the signals and the messages. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/coarsen.h"
#include "dp/dataset.h"
#include "dp/graph_io.h"
#include "dp/model.h"
#include "dp/record.h"
#include "dp/trace.h"

/* ---- driple record ------------------------------------------------------------------------ */

static const char record_usage[] =
    "driple record [--interval MS] [--gpu INDEX] [--iface NAME] [--duration S] [--no-gpu]\n"
    "                     [--threshold F] [--json] [-o PREFIX] -- COMMAND ARGS...\n"
    "  Runs COMMAND and samples GPU INDEX (NVML; default 0) and the network interface (default:\n"
    "  the non-loopback one with the most bytes so far) every MS ms (default 100) until it exits\n"
    "  or S seconds pass (then it is stopped with SIGINT). Writes PREFIX.gpu.csv (nvidia-smi\n"
    "  --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used --format=csv) and\n"
    "  PREFIX.net.csv (timestamp,rx_bytes,tx_bytes) (PREFIX: driple-record-DATE-TIME, also\n"
    "  inside a directory given as -o DIR/), then prints the 12 labels as\n"
    "  `driple trace extract` does. Ctrl-C stops the command and keeps whole files (exit 130).\n"
    "  --no-gpu records the network only (needed where no NVIDIA driver is installed).\n"
    "  Without COMMAND, --duration S records the machine as it is.";

static struct dp_record_stop g_stop;

/* A stop request. A terminal's Ctrl-C (sent by the kernel, si_code > 0) already reached the
 * command, which shares our process group, so only a signal sent by a process is forwarded. */
static void on_stop_signal(int sig, siginfo_t *si, void *uctx) {
    (void)uctx;
    static const char first[] = "\ndriple: record: stopping; waiting for the command to end "
                                "(again to kill it)\n";
    static const char again[] = "\ndriple: record: killing the command\n";
    ssize_t w;
    if (g_stop.requests == 0) {
        g_stop.forward = (si && si->si_code > 0) ? 0 : sig;
        w = write(STDERR_FILENO, first, sizeof first - 1); /* write(2) is async-signal-safe */
    } else {
        w = write(STDERR_FILENO, again, sizeof again - 1);
    }
    (void)w;
    g_stop.requests = g_stop.requests + 1;
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (int)(sizeof stop_signals / sizeof stop_signals[0])

static void install_stop_handlers(struct sigaction old[]) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop_signal;
    sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the sampler's sleep must wake up */
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_STOP_SIGNALS; i++) sigaction(stop_signals[i], &sa, &old[i]);
}

static void restore_handlers(const struct sigaction old[]) {
    for (int i = 0; i < N_STOP_SIGNALS; i++) sigaction(stop_signals[i], &old[i], NULL);
}

/* Prints the labels of the recorded traces through `driple trace extract` (the same code). */
static int print_labels(const char *gpu_csv, const char *net_csv, const char *threshold,
                        bool json) {
    char a_extract[] = "extract", a_net[] = "--net", a_thr[] = "--threshold", a_json[] = "--json";
    char *args[8];
    int n = 0;
    args[n++] = a_extract;
    if (gpu_csv) {
        args[n++] = (char *)(uintptr_t)gpu_csv;
        args[n++] = a_net;
    }
    args[n++] = (char *)(uintptr_t)net_csv;
    if (threshold) {
        args[n++] = a_thr;
        args[n++] = (char *)(uintptr_t)threshold;
    }
    if (json) args[n++] = a_json;
    args[n] = NULL;
    fflush(stdout);
    return cmd_trace(n, args);
}

int cmd_record(int argc, char **argv) {
    /* Options come before "--"; everything after it is the command, untouched. */
    int dashdash = -1;
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            dashdash = i;
            break;
        }
    int n_opts = dashdash >= 0 ? dashdash : argc;
    char **command = dashdash >= 0 ? argv + dashdash + 1 : NULL;
    bool has_cmd = command && command[0];

    struct cli c;
    if (!cli_init(&c, n_opts, argv, "record")) return 1;
    int64_t interval = 100, gpu = 0;
    double duration = 0, threshold_v = 0;
    int rc = 2;
    bool ok = cli_int(&c, "--interval", 10, 600000, &interval);
    ok = cli_int(&c, "--gpu", 0, 63, &gpu) && ok;
    ok = cli_double(&c, "--duration", 0.01, 1e7, &duration) && ok;
    const char *threshold = cli_value(&c, "--threshold");
    const char *iface = cli_value(&c, "--iface");
    const char *prefix = cli_value(&c, "-o");
    bool no_gpu = cli_flag(&c, "--no-gpu");
    bool json = cli_flag(&c, "--json");
    if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
        printf("usage: %s\n", record_usage);
        cli_done(&c);
        return 0;
    }
    if (!ok || c.bad) goto done;
    if (threshold) {
        char *end;
        errno = 0;
        threshold_v = strtod(threshold, &end);
        /* Checked now, with the range `trace extract` uses, not after the recording. */
        if (errno || end == threshold || *end || !(threshold_v >= 1e-6 && threshold_v <= 0.999999)) {
            rc = cli_usage("record", record_usage, "--threshold '%s': expected a number in "
                           "[1e-06, 0.999999]", threshold);
            goto done;
        }
    }
    if (cli_positional(&c, 0)) {
        rc = cli_usage("record", record_usage, "unexpected '%s': put the command after '--'",
                       cli_positional(&c, 0));
        goto done;
    }
    if (!cli_check_unused(&c)) goto done;
    if (!has_cmd && duration <= 0) {
        rc = cli_usage("record", record_usage,
                       "no command given (put it after '--', or give --duration S to record the "
                       "machine as it is)");
        goto done;
    }
    if (iface && (!*iface || strlen(iface) >= DP_IFACE_MAX)) {
        rc = cli_usage("record", record_usage, "--iface '%s': not an interface name", iface);
        goto done;
    }

    /* No prefix, or a directory ("runs/"): the default name, there ("runs/.gpu.csv" would be
     * a hidden file). */
    char default_prefix[PATH_MAX - 16]; /* room for ".gpu.csv" in gpu_csv below */
    size_t plen = prefix ? strlen(prefix) : 0;
    if (!prefix || (plen > 0 && plen < PATH_MAX - 64 && prefix[plen - 1] == '/')) {
        char stamp[64];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "driple-record-%Y%m%d-%H%M%S", &tm);
        snprintf(default_prefix, sizeof default_prefix, "%s%s", prefix ? prefix : "", stamp);
        prefix = default_prefix;
    }
    if (!*prefix || strlen(prefix) > PATH_MAX - 16) {
        rc = cli_usage("record", record_usage, "-o '%s': not a usable prefix", prefix);
        goto done;
    }
    char gpu_csv[PATH_MAX], net_csv[PATH_MAX];
    snprintf(gpu_csv, sizeof gpu_csv, "%s.gpu.csv", prefix);
    snprintf(net_csv, sizeof net_csv, "%s.net.csv", prefix);

    struct dp_record_opts o = {
        .interval_ms = (int)interval,
        .duration_s = duration,
        .no_gpu = no_gpu,
        .gpu_index = (unsigned)gpu,
        .iface = iface,
        .gpu_csv = gpu_csv,
        .net_csv = net_csv,
        .stop = &g_stop,
    };
    struct dp_record_result res;
    struct dp_error err = {0};
    struct sigaction old[N_STOP_SIGNALS];
    g_stop.requests = 0;
    g_stop.forward = 0;
    install_stop_handlers(old);
    enum dp_status st = dp_record_run(&o, has_cmd ? command : NULL, &res, &err);
    restore_handlers(old);
    if (st != DP_OK && res.n_samples == 0) {
        rc = cli_fail(&err);
        if (st == DP_ERR_NOT_FOUND && strstr(err.msg, "no NVIDIA GPU/driver found"))
            fprintf(stderr, "driple: record: use --no-gpu to record the network only\n");
        goto done;
    }

    fprintf(stderr, "driple: record: %ld samples every %d ms over %.1f s; ", res.n_samples,
            (int)interval, res.seconds);
    if (no_gpu) fprintf(stderr, "no GPU (--no-gpu); ");
    else fprintf(stderr, "GPU %d (%s) -> %s; ", (int)gpu, res.gpu_name[0] ? res.gpu_name : "?",
                 gpu_csv);
    fprintf(stderr, "network %s -> %s\n", res.iface, net_csv);

    rc = 0;
    if (st != DP_OK) {
        rc = cli_fail(&err); /* the recording broke off; the files hold what came before */
    } else if (res.stopped) {
        fprintf(stderr, "driple: record: stopped by a signal; the command was ended\n");
        rc = 130;
    } else if (res.timed_out) {
        if (has_cmd)
            fprintf(stderr, "driple: record: --duration %g s reached; the command was stopped\n",
                    duration);
    } else if (res.reaped && WIFEXITED(res.wait_status) && WEXITSTATUS(res.wait_status) != 0) {
        fprintf(stderr, "driple: record: the command exited with status %d\n",
                WEXITSTATUS(res.wait_status));
        rc = 1;
    } else if (res.reaped && WIFSIGNALED(res.wait_status)) {
        fprintf(stderr, "driple: record: the command was killed by signal %d\n",
                WTERMSIG(res.wait_status));
        rc = 1;
    }
    if (res.n_samples < 2) {
        fprintf(stderr, "driple: record: fewer than 2 samples: no labels (record longer or with a "
                        "shorter --interval)\n");
        if (rc == 0) rc = 1;
        goto done;
    }
    int lrc = print_labels(no_gpu ? NULL : gpu_csv, net_csv, threshold, json);
    if (lrc != 0 && rc == 0) rc = lrc;
done:
    cli_done(&c);
    return rc;
}

/* ---- driple dataset add ------------------------------------------------------------------- */

static const char add_usage[] =
    "driple dataset add --dataset D.json --graph G --setting ID [--batch N] [--threshold F]\n"
    "                     [--exported-batch N] [--groups K] [--seed S] [--optimizer O]\n"
    "                     [--precision P] [--job-name N] [--where TEXT] [--when ISO8601] TRACE...\n"
    "  Appends a measured sample: G coarsened (K groups, seed S; defaults 100 and 42) with its\n"
    "  features at batch N (default: the graph's), and the 12 labels of the traces (an\n"
    "  nvidia-smi GPU CSV and/or a network counter CSV, or a `driple record` PREFIX for both).\n"
    "  The dataset is created for ID when it does not exist. Source: \"measured\", where = this\n"
    "  host's name, when = the first trace's modification time (UTC), unless given.";

/* Expands a `driple record` prefix into its traces; other arguments stay as they are. */
static int expand_traces(struct cli *c, char paths[][PATH_MAX], int cap) {
    int n = 0;
    for (int i = 0; cli_positional(c, i); i++) {
        const char *a = cli_positional(c, i);
        struct stat sb;
        if (stat(a, &sb) == 0 || n >= cap) {
            if (n < cap) snprintf(paths[n++], PATH_MAX, "%s", a);
            continue;
        }
        char g[PATH_MAX], ne[PATH_MAX];
        snprintf(g, sizeof g, "%.*s.gpu.csv", PATH_MAX - 9, a);
        snprintf(ne, sizeof ne, "%.*s.net.csv", PATH_MAX - 9, a);
        bool hg = stat(g, &sb) == 0, hn = stat(ne, &sb) == 0;
        if (!hg && !hn) {
            snprintf(paths[n++], PATH_MAX, "%s", a); /* let the reader report it */
            continue;
        }
        if (hg && n < cap) snprintf(paths[n++], PATH_MAX, "%s", g);
        if (hn && n < cap) snprintf(paths[n++], PATH_MAX, "%s", ne);
    }
    return n;
}

/* Reads every trace into t, each file on its own first (so that two traces of one resource are
 * reported as such, not as samples going back in time), then merged. t->source becomes
 * "simulated" when the traces came from the simulator, else "measured"; one sample may not mix
 * the two. */
static enum dp_status read_traces(char paths[][PATH_MAX], int n, struct dp_trace *t,
                                  struct dp_error *err) {
    const char *owner[DP_SERIES_COUNT] = {0};
    enum dp_status st = DP_OK;
    int n_simulated = 0;
    for (int i = 0; i < n && st == DP_OK; i++) {
        struct dp_trace *one = dp_trace_init("measured");
        if (!one) return dp_error_set(err, DP_ERR_NOMEM, "dataset add: out of memory");
        st = dp_trace_read_any(paths[i], one, err);
        bool any = false;
        for (int k = 0; k < DP_SERIES_COUNT && st == DP_OK; k++) {
            const struct dp_series *s = &one->s[k];
            if (s->n == 0) continue;
            any = true;
            if (owner[k]) {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  "%s: a second trace of %s (first: %s); give one GPU trace and "
                                  "one network trace per sample",
                                  paths[i], dp_series_name((enum dp_series_kind)k), owner[k]);
                break;
            }
            owner[k] = paths[i];
            for (size_t j = 0; j < s->n && st == DP_OK; j++)
                st = dp_trace_push(t, (enum dp_series_kind)k, s->t_ms[j], s->v[j], err);
        }
        if (st == DP_OK && !any) st = dp_error_set(err, DP_ERR_INVALID, "%s: no samples", paths[i]);
        n_simulated += !strcmp(one->source, "simulated");
        dp_trace_free(one);
    }
    if (st == DP_OK && n_simulated > 0 && n_simulated < n)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: mixes simulated and measured traces in one sample", paths[0]);
    snprintf(t->source, sizeof t->source, "%s", n_simulated ? "simulated" : "measured");
    return st;
}

/* "YYYY-MM-DDTHH:MM:SSZ", digits where the pattern has them (sscanf's %d would also take signs
 * and spaces, letting "2026-01-01T-1:00:00Z" through), fields in range. */
static bool valid_iso_utc(const char *s) {
    static const char pattern[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != sizeof pattern - 1) return false;
    for (size_t i = 0; pattern[i]; i++)
        if (pattern[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i]) return false;
    int mo = atoi(s + 5), d = atoi(s + 8), h = atoi(s + 11), mi = atoi(s + 14),
        se = atoi(s + 17);
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && se <= 60;
}

int cmd_dataset_add(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: %s\n", add_usage);
            return 0;
        }
    struct cli c;
    if (!cli_init(&c, argc, argv, "dataset add")) return 1;
    int rc = 2;
    int64_t batch = 0, groups = DP_DEFAULT_GROUPS, seed = DP_DEFAULT_SEED;
    double thr = 0;
    struct dp_graph *g = NULL;
    struct dp_grouped *grouped = NULL;
    struct dp_op_weights *w = NULL;
    struct dp_trace *t = NULL;
    struct dp_dataset ds;
    dp_dataset_init(&ds, NULL);
    char (*paths)[PATH_MAX] = NULL;
    char *unknown = NULL;
    struct dp_error err = {0};

    const char *dataset = cli_value(&c, "--dataset");
    const char *graph = cli_value(&c, "--graph");
    const char *setting = cli_value(&c, "--setting");
    const char *optimizer = cli_value(&c, "--optimizer");
    const char *precision = cli_value(&c, "--precision");
    const char *job_name = cli_value(&c, "--job-name");
    const char *where = cli_value(&c, "--where");
    const char *when = cli_value(&c, "--when");
    struct dp_import_opts io;
    bool ok = cmd_import_opts(&c, &io);
    ok = cli_int(&c, "--batch", 1, 1 << 20, &batch) && ok;
    ok = cli_int(&c, "--groups", 1, 100000, &groups) && ok;
    ok = cli_int(&c, "--seed", INT64_MIN, INT64_MAX, &seed) && ok;
    ok = cli_double(&c, "--threshold", 1e-6, 0.999999, &thr) && ok;
    if (!ok || c.bad) goto done;
    if (!dataset || !graph || !setting) {
        rc = cli_usage("dataset add", add_usage, "--dataset, --graph and --setting are required");
        goto done;
    }
    if (!*setting || strlen(setting) >= sizeof ds.setting) {
        rc = cli_usage("dataset add", add_usage, "--setting '%s': not a setting id", setting);
        goto done;
    }
    struct {
        const char *name, *val;
        size_t cap;
    } fields[] = {{"--optimizer", optimizer, sizeof ds.samples->job.optimizer},
                  {"--precision", precision, sizeof ds.samples->job.precision},
                  {"--job-name", job_name, sizeof ds.samples->job.job_name},
                  {"--where", where, sizeof ds.samples->source.where}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].val && strlen(fields[i].val) >= fields[i].cap) {
            rc = cli_usage("dataset add", add_usage, "%s: longer than %zu characters",
                           fields[i].name, fields[i].cap - 1);
            goto done;
        }
    if (when && !valid_iso_utc(when)) {
        rc = cli_usage("dataset add", add_usage, "--when '%s': expected YYYY-MM-DDTHH:MM:SSZ",
                       when);
        goto done;
    }
    enum { MAX_TRACES = 8 };
    if (!(paths = calloc(MAX_TRACES + 1, sizeof *paths))) {
        dp_error_set(&err, DP_ERR_NOMEM, "dataset add: out of memory");
        goto fail;
    }
    int n_traces = expand_traces(&c, paths, MAX_TRACES + 1);
    if (!cli_check_unused(&c)) goto done;
    if (n_traces == 0) {
        rc = cli_usage("dataset add", add_usage, "no TRACE given");
        goto done;
    }
    if (n_traces > MAX_TRACES) {
        rc = cli_usage("dataset add", add_usage, "more than %d traces", MAX_TRACES);
        goto done;
    }
    rc = 1;

    /* The traces first: they are the point, and the cheapest to get wrong. */
    if (!(t = dp_trace_init("measured"))) {
        dp_error_set(&err, DP_ERR_NOMEM, "dataset add: out of memory");
        goto fail;
    }
    if (read_traces(paths, n_traces, t, &err) != DP_OK) goto fail;
    double lab[DP_N_OUTPUTS];
    unsigned missing = 0;
    dp_trace_labels(t, thr, lab, &missing);
    if ((missing & 0xfu) == 0xfu) {
        dp_error_set(&err, DP_ERR_INVALID, "%s: no GPU or network samples", paths[0]);
        goto fail;
    }

    /* The dataset: appended to when it exists, created for the setting otherwise. */
    struct stat sb;
    if (stat(dataset, &sb) == 0) {
        if (dp_dataset_load_json(dataset, &ds, &err) != DP_OK) goto fail;
        if (ds.setting[0] && strcmp(ds.setting, setting)) {
            dp_error_set(&err, DP_ERR_INVALID, "%s: the dataset is for setting '%s', not '%s'",
                         dataset, ds.setting, setting);
            goto fail;
        }
        if (!ds.setting[0]) snprintf(ds.setting, sizeof ds.setting, "%s", setting);
    } else if (errno == ENOENT) {
        dp_dataset_init(&ds, setting);
    } else {
        dp_error_set(&err, DP_ERR_IO, "%s: %s", dataset, strerror(errno));
        goto fail;
    }

    /* The graph, grouped as every other sample. */
    if (dp_graph_load(graph, &io, &g, &err) != DP_OK) goto fail;
    if (dp_op_weights_load_default(NULL, &w, &err) != DP_OK) goto fail;
    struct dp_coarsen_opts co = {.k = (int)groups, .seed = seed, .max_iter = 0};
    if (dp_graph_group(g, &co, w, batch, &grouped, &unknown, &err) != DP_OK) {
        dp_error_prefix(&err, graph);
        goto fail;
    }
    if (unknown)
        fprintf(stderr, "driple: dataset add: %s: op types without a weight (counted 0): %s\n",
                graph, unknown);

    struct dp_sample s;
    memset(&s, 0, sizeof s);
    s.graph = (char *)(uintptr_t)graph;
    s.model = (char *)(uintptr_t)dp_graph_name(g);
    s.batch = batch ? batch : grouped->batch;
    s.grouped = grouped;
    if (optimizer) snprintf(s.job.optimizer, sizeof s.job.optimizer, "%s", optimizer);
    if (precision) snprintf(s.job.precision, sizeof s.job.precision, "%s", precision);
    if (job_name) snprintf(s.job.job_name, sizeof s.job.job_name, "%s", job_name);
    /* a resource the traces did not record has no labels */
    for (int i = 0; i < DP_N_OUTPUTS; i++)
        s.labels[i] = (missing >> (i / DP_N_STATS)) & 1u ? NAN : lab[i];
    /* A simulator trace added here stays simulated: never present it as a measurement. */
    snprintf(s.source.kind, sizeof s.source.kind, "%s", t->source);
    if (where) {
        snprintf(s.source.where, sizeof s.source.where, "%s", where);
    } else {
        char host[64] = "unknown host";
        if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown host");
        host[sizeof host - 1] = '\0';
        const char *base = strrchr(paths[0], '/');
        snprintf(s.source.where, sizeof s.source.where, "host %.58s, %.60s", host,
                 base ? base + 1 : paths[0]);
    }
    if (when) {
        snprintf(s.source.when, sizeof s.source.when, "%s", when);
    } else {
        time_t tt = stat(paths[0], &sb) == 0 ? sb.st_mtime : time(NULL);
        struct tm tm;
        gmtime_r(&tt, &tm);
        strftime(s.source.when, sizeof s.source.when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    if (dp_dataset_add_sample(&ds, &s, &err) != DP_OK) goto fail;
    if (dp_dataset_save_json(&ds, dataset, &err) != DP_OK) goto fail;

    printf("%s: sample %d added (setting %s, graph %s, batch %lld, %d groups; %s, %s, %s)\n",
           dataset, ds.n_samples, ds.setting, graph, (long long)s.batch, grouped->n_groups,
           s.source.kind, s.source.where, s.source.when);
    for (int i = 0; i < DP_N_OUTPUTS; i++) {
        if (isnan(s.labels[i])) printf("  %-20s missing\n", dp_outputs[i].name);
        else printf("  %-20s %10.3f %s\n", dp_outputs[i].name, s.labels[i], dp_outputs[i].unit);
    }
    rc = 0;
    goto done;
fail:
    rc = cli_fail(&err);
done:
    free(unknown);
    free(paths);
    dp_trace_free(t);
    dp_grouped_free(grouped);
    dp_op_weights_free(w);
    dp_graph_free(g);
    dp_dataset_free(&ds);
    cli_done(&c);
    return rc;
}
