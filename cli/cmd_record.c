/* cmd_record.c: `driple record`: run a command, sample its GPU and network into nvidia-smi-style
 * CSV traces, then print the 12 labels through `driple trace extract` (`driple dataset add`
 * turns such traces into a sample). The engine records; this file owns the signals and the
 * messages. */
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
#include "dp/record.h"

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

static const struct cli_opt record_opts[] = {
    {"--interval", "MS", "100", 10, 600000, "the sampling interval", NULL},
    {"--gpu", "INDEX", "0", 0, 63, "the GPU sampled (NVML index)", NULL},
    {"--duration", "S", "until COMMAND exits", 0.01, 1e7, "stop after S seconds (SIGINT)", NULL},
    {"--threshold", "F", CLI_STR(DP_TRACE_THRESHOLD), 0, 0,
     "the burst threshold, a fraction of the peak, 1e-06 .. 0.999999", NULL},
    {"--iface", "NAME", "the busiest non-loopback one", 0, 0, "the network interface", NULL},
    {"-o", "PREFIX", "driple-record-DATE-TIME", 0, 0, "the traces' file prefix (or DIR/)", NULL},
    {"--no-gpu", NULL, NULL, 0, 0, "the network only (no NVIDIA driver needed)", NULL},
    {"--json", NULL, NULL, 0, 0, "print the labels as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_record_spec = {
    "record", "measures a training job's GPU and network traces and their 12 labels",
    record_usage, record_opts, NULL};

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
    if (!cli_init(&c, n_opts, argv, &cmd_record_spec)) return c.rc;
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
