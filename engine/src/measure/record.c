/* record.c: runs a command and samples the GPU (NVML) and the network (/proc/net/dev) at a fixed
 * interval into two CSV traces, nvidia-smi's `--query-gpu=timestamp,utilization.gpu,
 * utilization.memory,memory.used --format=csv` and `timestamp,rx_bytes,tx_bytes`. Rows are
 * flushed one by one so that the files are whole whenever the recording stops. */
#include "dp/record.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp/clock.h"
#include "dp/files.h"

/* ---- rows ---------------------------------------------------------------------------------- */

char *dp_record_timestamp(const struct timespec *t, char *buf, size_t cap) {
    struct tm tm;
    time_t sec = t->tv_sec;
    if (!localtime_r(&sec, &tm)) memset(&tm, 0, sizeof tm);
    snprintf(buf, cap, "%04d/%02d/%02d %02d:%02d:%02d.%03ld", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(t->tv_nsec / 1000000));
    return buf;
}

char *dp_record_gpu_row(const char *ts, const struct dp_gpu_sample *s, char *buf, size_t cap) {
    snprintf(buf, cap, "%s, %u %%, %u %%, %llu MiB", ts, s->util_gpu, s->util_mem,
             (unsigned long long)(s->mem_used_bytes / (1024u * 1024u)));
    return buf;
}

char *dp_record_net_row(const char *ts, const struct dp_net_counters *c, char *buf, size_t cap) {
    snprintf(buf, cap, "%s,%llu,%llu", ts, (unsigned long long)c->rx_bytes,
             (unsigned long long)c->tx_bytes);
    return buf;
}

/* ---- time ---------------------------------------------------------------------------------- */

static double mono_s(void) { return dp_clock_ms() / 1e3; }

static struct timespec ts_add_ms(struct timespec t, long ms) {
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static bool ts_before(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Sleeps about ms milliseconds (a signal may cut it short). */
static void nap_ms(long ms) {
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
}

/* True when the command has ended: reaped (res->wait_status filled), or already reaped by
 * someone else (ECHILD, e.g. SIGCHLD ignored by the caller: *gone set, no status). */
static bool reap(pid_t pid, struct dp_record_result *res, bool *gone) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
        res->wait_status = status;
        res->reaped = true;
        return true;
    }
    if (r < 0 && errno == ECHILD) *gone = true;
    return *gone;
}

static bool stop_requested(const struct dp_record_opts *o, int at_least) {
    return o->stop && o->stop->requests >= at_least;
}

#define POLL_MS 50 /* how often a wait between samples looks for a stop or the command's end */

/* ---- the command ---------------------------------------------------------------------------- */

/* Forks and execs argv with default SIGINT/SIGTERM and an empty signal mask. An exec failure is
 * reported through a close-on-exec pipe, so that "command not found" is an error of ours. */
static enum dp_status spawn(char *const argv[], pid_t *pid_out, struct dp_error *err) {
    int fds[2];
    if (pipe(fds) != 0)
        return dp_error_set(err, DP_ERR_IO, "record: pipe: %s", strerror(errno));
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return dp_error_set(err, DP_ERR_IO, "record: fork: %s", strerror(e));
    }
    if (pid == 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGTERM, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        close(fds[0]);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(fds[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(fds[1]);
    int e = 0;
    ssize_t n;
    do n = read(fds[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(fds[0]);
    if (n == (ssize_t)sizeof e) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        return dp_error_set(err, DP_ERR_NOT_FOUND, "record: '%s': cannot run: %s", argv[0],
                            strerror(e));
    }
    *pid_out = pid;
    return DP_OK;
}

/* Makes sure the command ends: sends `first` (0 = none; it already has a signal), waits grace_s,
 * SIGTERM, waits grace_s, SIGKILL; a second stop request kills at once. Reaps it into res. */
static void finish_child(const struct dp_record_opts *o, pid_t pid, int first, double grace_s,
                         struct dp_record_result *res) {
    if (first) kill(pid, first);
    double t0 = mono_s();
    int phase = 0; /* 0: waiting after the first signal, 1: after SIGTERM, 2: after SIGKILL */
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            res->wait_status = status;
            res->reaped = true;
            return;
        }
        if (r < 0 && errno != EINTR) return; /* not our child any more: nothing to reap */
        double t = mono_s() - t0;
        if (phase < 2 && stop_requested(o, 2)) {
            kill(pid, SIGKILL);
            phase = 2;
        } else if (phase == 0 && t >= grace_s) {
            kill(pid, SIGTERM);
            phase = 1;
        } else if (phase == 1 && t >= 2 * grace_s) {
            kill(pid, SIGKILL);
            phase = 2;
        }
        nap_ms(10);
    }
}

/* ---- the recording -------------------------------------------------------------------------- */

static enum dp_status write_line(FILE *f, const char *path, const char *line,
                                 struct dp_error *err) {
    if (fputs(line, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0)
        return dp_error_set(err, DP_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return DP_OK;
}

/* A trace is written as any output is (dp/files.h): into a temporary file (close-on-exec: the
 * command must not hold it) that takes the target's name when the recording ends. */
static enum dp_status open_trace(const char *path, const char *header, struct dp_out **out,
                                 struct dp_error *err) {
    struct dp_out *o = NULL;
    enum dp_status st = dp_out_open(path, &o, err);
    if (st != DP_OK) return st;
    if ((st = write_line(dp_out_stream(o), path, header, err)) != DP_OK) {
        dp_out_discard(o);
        return st;
    }
    *out = o;
    return DP_OK;
}

static enum dp_status close_trace(struct dp_out **o, struct dp_error *err) {
    if (!*o) return DP_OK;
    enum dp_status st = dp_out_commit(*o, err);
    *o = NULL;
    return st;
}

/* Takes one sample of each source and writes the rows (*wrote set), unless the clock still
 * reads last_ts (the sample taken at once when the command ends can fall in the millisecond
 * of the one before: two rows at one time would stop the counters' rates); last_ts (32 bytes)
 * gets the time written. */
static enum dp_status sample_once(const struct dp_record_opts *o, struct dp_nvml *nvml,
                                  const char *iface, struct dp_out *gpu, struct dp_out *net,
                                  char *last_ts, bool *wrote, struct dp_error *err) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char ts[32], row[160];
    dp_record_timestamp(&now, ts, sizeof ts);
    *wrote = false;
    if (!strcmp(ts, last_ts)) return DP_OK;
    memcpy(last_ts, ts, sizeof ts);
    *wrote = true;
    struct dp_net_counters c;
    enum dp_status st = dp_netdev_read(o->netdev_path, iface, &c, err);
    if (st != DP_OK) return st;
    if (nvml) {
        struct dp_gpu_sample s;
        if ((st = dp_nvml_sample(nvml, &s, err)) != DP_OK) return st;
        st = write_line(dp_out_stream(gpu), o->gpu_csv,
                        dp_record_gpu_row(ts, &s, row, sizeof row), err);
        if (st != DP_OK) return st;
    }
    return write_line(dp_out_stream(net), o->net_csv, dp_record_net_row(ts, &c, row, sizeof row),
                      err);
}

static enum dp_status check_opts(const struct dp_record_opts *o, bool has_cmd,
                                 struct dp_error *err) {
    if (o->interval_ms < 1 || o->interval_ms > 3600 * 1000)
        return dp_error_set(err, DP_ERR_INVALID, "record: interval %d ms out of [1, 3600000]",
                            o->interval_ms);
    if (!isfinite(o->duration_s) || o->duration_s < 0)
        return dp_error_set(err, DP_ERR_INVALID, "record: duration must be >= 0 seconds");
    if (!has_cmd && o->duration_s <= 0)
        return dp_error_set(err, DP_ERR_INVALID,
                            "record: no command to run (give it after '--', or give a duration "
                            "to record the machine as it is)");
    if (!o->net_csv || (!o->no_gpu && !o->gpu_csv))
        return dp_error_set(err, DP_ERR_INVALID, "record: no output path");
    if (o->grace_s < 0 || !isfinite(o->grace_s))
        return dp_error_set(err, DP_ERR_INVALID, "record: grace must be >= 0 seconds");
    return DP_OK;
}

enum dp_status dp_record_run(const struct dp_record_opts *o, char *const argv[],
                             struct dp_record_result *res, struct dp_error *err) {
    memset(res, 0, sizeof *res);
    bool has_cmd = argv && argv[0] && argv[0][0];
    enum dp_status st = check_opts(o, has_cmd, err);
    if (st != DP_OK) return st;
    double grace = o->grace_s > 0 ? o->grace_s : 5.0;
    struct dp_nvml *nvml = NULL;
    struct dp_out *gpu = NULL, *net = NULL;
    pid_t pid = 0;

    /* Everything that can fail on bad input fails here, before the command starts. */
    if (o->iface) {
        if (strlen(o->iface) >= sizeof res->iface)
            return dp_error_set(err, DP_ERR_INVALID, "record: interface name '%s' too long",
                                o->iface);
        snprintf(res->iface, sizeof res->iface, "%s", o->iface);
    } else if ((st = dp_netdev_busiest(o->netdev_path, res->iface, sizeof res->iface, err)) !=
               DP_OK) {
        return st;
    }
    struct dp_net_counters probe;
    if ((st = dp_netdev_read(o->netdev_path, res->iface, &probe, err)) != DP_OK) return st;
    if (!o->no_gpu) {
        if ((st = dp_nvml_open(o->nvml_lib, o->gpu_index, &nvml, err)) != DP_OK) return st;
        snprintf(res->gpu_name, sizeof res->gpu_name, "%s", dp_nvml_device_name(nvml));
        struct dp_gpu_sample s;
        if ((st = dp_nvml_sample(nvml, &s, err)) != DP_OK) goto fail;
        if ((st = open_trace(o->gpu_csv, DP_GPU_CSV_HEADER, &gpu, err)) != DP_OK) goto fail;
    }
    if ((st = open_trace(o->net_csv, DP_NET_CSV_HEADER, &net, err)) != DP_OK) goto fail;

    if (has_cmd) {
        if ((st = spawn(argv, &pid, err)) != DP_OK) goto fail;
        res->pid = pid;
    }

    /* Sample on a fixed monotonic grid; a late tick skips the missed ones instead of bunching.
     * Between ticks, wake every POLL_MS to notice a stop, the duration, or the command's exit
     * (then one last sample is taken at once), so that a long interval never delays the end. */
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    double t_start = mono_s(), t_first = 0, t_last = 0;
    char last_ts[32] = "";
    bool gone = false;
    for (;;) {
        double t = mono_s();
        bool wrote;
        if ((st = sample_once(o, nvml, res->iface, gpu, net, last_ts, &wrote, err)) != DP_OK)
            break;
        if (wrote) {
            if (res->n_samples == 0) t_first = t;
            t_last = t;
            res->n_samples++;
        }
        if (res->reaped || gone) break; /* it ended during the last wait: that was the final row */
        if (pid && reap(pid, res, &gone)) break;
        if (stop_requested(o, 1)) {
            res->stopped = true;
            break;
        }
        if (o->duration_s > 0 && mono_s() - t_start >= o->duration_s) {
            res->timed_out = true;
            break;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        do next = ts_add_ms(next, o->interval_ms);
        while (!ts_before(&now, &next));
        for (;;) {
            struct timespec slice = ts_add_ms(now, POLL_MS);
            const struct timespec *until = ts_before(&slice, &next) ? &slice : &next;
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, until, NULL); /* EINTR: look again */
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (stop_requested(o, 1)) res->stopped = true;
            else if (o->duration_s > 0 && mono_s() - t_start >= o->duration_s)
                res->timed_out = true;
            else if (pid && reap(pid, res, &gone)) break;
            if (res->stopped || res->timed_out || !ts_before(&now, &next)) break;
        }
        if (res->stopped || res->timed_out) break;
    }
    res->seconds = t_last - t_first;

    if (pid && !res->reaped && !gone) {
        int first = SIGTERM; /* a failure of ours */
        if (res->stopped) first = o->stop ? o->stop->forward : SIGINT;
        else if (res->timed_out) first = SIGINT;
        finish_child(o, pid, first, grace, res);
    }
    /* The rows so far are kept whatever stopped the recording. */
    {
        struct dp_error cerr;
        enum dp_status c1 = close_trace(&gpu, &cerr);
        if (c1 != DP_OK && st == DP_OK) st = dp_error_set(err, c1, "%s", cerr.msg);
        enum dp_status c2 = close_trace(&net, &cerr);
        if (c2 != DP_OK && st == DP_OK) st = dp_error_set(err, c2, "%s", cerr.msg);
    }
    dp_nvml_close(nvml);
    return st;
fail:
    dp_out_discard(gpu);
    dp_out_discard(net);
    dp_nvml_close(nvml);
    return st;
}
