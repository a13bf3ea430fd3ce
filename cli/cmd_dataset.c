/* cmd_dataset.c: `driple dataset`: `build` (cmd_dataset_build.c: datasets from the simulator),
 * `add` (a measured sample: a graph and the labels of its recorded traces, appended to a
 * driple-dataset/1 file) and `eval` (`inspector eval`'s). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/dataset.h"
#include "dp/session.h"
#include "dp/trace.h"

#define DATASET_USAGE                                                                           \
    "driple dataset build ... (datasets from the simulator)\n"                                  \
    "       dataset add ... (a measured job: see driple dataset add --help)\n"                    \
    "       dataset sweep ... (graphs x settings x batch sizes for the setting-aware inspector)\n" \
    "       dataset extract SWEEP.json --setting ID -o D.json (one setting's rows)\n"              \
    "       dataset eval M.json --dataset D.json [--json] (an inspector's error on a dataset)"

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

static const struct cli_opt add_opts[] = {
    {"--dataset", "D.json", NULL, 0, 0, "the dataset appended to (created when absent)", NULL},
    {"--graph", "G", NULL, 0, 0, "the job's workload graph", NULL},
    {"--setting", "ID", NULL, 0, 0, "the job's setting", NULL},
    {"--batch", "N", "the graph's", 1, (double)DP_BATCH_MAX, "the batch size per worker", NULL},
    {"--groups", "K", CLI_STR(DP_DEFAULT_GROUPS), 1, 100000, "groups", NULL},
    {"--seed", "S", CLI_STR(DP_DEFAULT_SEED), (double)INT64_MIN, (double)INT64_MAX,
     "the coarsening's seed", NULL},
    {"--threshold", "F", CLI_STR(DP_TRACE_THRESHOLD), 1e-6, 0.999999,
     "the burst threshold, a fraction of the peak", NULL},
    {"--optimizer", "O", NULL, 0, 0, "the job's optimizer (recorded)", NULL},
    {"--precision", "P", NULL, 0, 0, "the job's precision (recorded)", NULL},
    {"--job-name", "N", NULL, 0, 0, "the sample's name", NULL},
    {"--where", "TEXT", "this host's name", 0, 0, "where it was measured", NULL},
    {"--when", "ISO8601", "the first trace's time", 0, 0, "when, as YYYY-MM-DDTHH:MM:SSZ", NULL},
    CLI_MORE(cmd_import_table),
    CLI_END,
};
const struct cli_spec cmd_dataset_add_spec = {
    "dataset add", "a measured job (its traces and graph) appended to a dataset", add_usage,
    add_opts, NULL};

static int dataset_add(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_dataset_add_spec)) return c.rc;
    int rc = 2;
    int64_t batch = 0, groups = DP_DEFAULT_GROUPS, seed = DP_DEFAULT_SEED;
    double thr = 0;
    struct dp_session *ss = NULL;
    struct dp_trace *t = NULL;
    struct dp_dataset ds;
    dp_dataset_init(&ds, NULL);
    char (*paths)[PATH_MAX] = NULL;
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
    ok = cli_int(&c, "--batch", 1, DP_BATCH_MAX, &batch) && ok;
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
    const char *tr[MAX_TRACES];
    for (int i = 0; i < n_traces; i++) tr[i] = paths[i];
    if (dp_trace_read_merged(tr, n_traces, t, &err) != DP_OK) goto fail;
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
    if ((rc = cmd_session_open(NULL, NULL, NULL, "none", &ss)) ||
        (rc = cmd_session_workload(ss, graph, NULL, &io, batch, groups, seed, "dataset add",
                                   add_usage)))
        goto done;
    rc = 1;
    const struct dp_grouped *grouped = dp_session_grouped(ss);
    const char *unknown = dp_session_unknown_ops(ss);
    if (unknown)
        fprintf(stderr, "driple: dataset add: %s: op types without a weight (counted 0): %s\n",
                graph, unknown);

    struct dp_sample s;
    memset(&s, 0, sizeof s);
    s.graph = (char *)(uintptr_t)graph;
    s.model = grouped->graph; /* the graph's name */
    s.batch = batch ? batch : grouped->batch;
    s.grouped = (struct dp_grouped *)(uintptr_t)grouped; /* copied by dp_dataset_add_sample */
    if (optimizer) snprintf(s.job.optimizer, sizeof s.job.optimizer, "%s", optimizer);
    if (precision) snprintf(s.job.precision, sizeof s.job.precision, "%s", precision);
    if (job_name) snprintf(s.job.job_name, sizeof s.job.job_name, "%s", job_name);
    /* The profile the setting-aware inspector reads (driple transfer --from SA.json). */
    if (dp_profile_graph(dp_session_graph(ss), s.batch, &s.profile, &err) != DP_OK) goto fail;
    s.has_profile = true;
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
    dp_session_free(ss);
    free(paths);
    dp_trace_free(t);
    dp_dataset_free(&ds);
    cli_done(&c);
    return rc;
}

int cmd_dataset(int argc, char **argv) {
    if (argc < 1) return cli_usage("dataset", DATASET_USAGE, "missing subcommand");
    if (!strcmp(argv[0], "build")) return cmd_dataset_build(argc - 1, argv + 1);
    if (!strcmp(argv[0], "add")) return dataset_add(argc - 1, argv + 1);
    if (!strcmp(argv[0], "sweep")) return cmd_dataset_sweep(argc - 1, argv + 1);
    if (!strcmp(argv[0], "extract")) return cmd_dataset_extract(argc - 1, argv + 1);
    /* One evaluation, two doors: `inspector eval` owns it. */
    if (!strcmp(argv[0], "eval")) return cmd_inspector(argc, argv);
    return cli_usage("dataset", DATASET_USAGE, "unknown subcommand \"%s\"", argv[0]);
}
