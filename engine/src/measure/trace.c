/* trace.c: resource traces and the burst extractor that turns them into the paper's 12 labels.
 * Readers for nvidia-smi's CSV, /proc/net/dev counter CSVs and the simulator's own trace CSV;
 * a writer for the latter. Every reader names "<path>:<line>" on malformed input. */
#include "dp/trace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dp/files.h"

#define TRACE_MAX_COLS 32

const char *dp_series_name(enum dp_series_kind k) {
    if (k == DP_SERIES_MEM_USED) return "mem_used";
    return dp_resource_name((enum dp_resource)k);
}

const char *dp_series_unit(enum dp_series_kind k) {
    if (k == DP_SERIES_MEM_USED) return "MiB";
    return dp_resource_unit((enum dp_resource)k);
}

/* --- traces --- */

struct dp_trace *dp_trace_init(const char *source) {
    struct dp_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    snprintf(t->source, sizeof t->source, "%s", source ? source : "");
    return t;
}

void dp_trace_free(struct dp_trace *t) {
    if (!t) return;
    for (int k = 0; k < DP_SERIES_COUNT; k++) {
        free(t->s[k].t_ms);
        free(t->s[k].v);
    }
    free(t);
}

enum dp_status dp_trace_push(struct dp_trace *t, enum dp_series_kind k, double t_ms, double v,
                             struct dp_error *err) {
    DP_ASSERT((unsigned)k < DP_SERIES_COUNT);
    struct dp_series *s = &t->s[k];
    if (!isfinite(t_ms) || !isfinite(v))
        return dp_error_set(err, DP_ERR_INVALID, "trace: %s sample is not a finite number",
                            dp_series_name(k));
    if (s->n && t_ms < s->t_ms[s->n - 1])
        return dp_error_set(err, DP_ERR_INVALID,
                            "trace: %s sample at %.3f ms goes back in time (previous %.3f ms)",
                            dp_series_name(k), t_ms, s->t_ms[s->n - 1]);
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        double *nt = realloc(s->t_ms, cap * sizeof *nt);
        if (!nt) return dp_error_set(err, DP_ERR_NOMEM, "trace: out of memory");
        s->t_ms = nt;
        double *nv = realloc(s->v, cap * sizeof *nv);
        if (!nv) return dp_error_set(err, DP_ERR_NOMEM, "trace: out of memory");
        s->v = nv;
        s->cap = cap;
    }
    s->t_ms[s->n] = t_ms;
    s->v[s->n] = v;
    s->n++;
    return DP_OK;
}

/* --- bursts --- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median spacing of the samples (0 with fewer than two). */
static double median_dt(const struct dp_series *s) {
    if (s->n < 2) return 0;
    double *d = malloc((s->n - 1) * sizeof *d);
    if (!d) /* out of memory: the mean spacing, equal to the median for a regular sampler */
        return (s->t_ms[s->n - 1] - s->t_ms[0]) / (double)(s->n - 1);
    for (size_t i = 1; i < s->n; i++) d[i - 1] = s->t_ms[i] - s->t_ms[i - 1];
    qsort(d, s->n - 1, sizeof *d, cmp_double);
    double m = d[(s->n - 1) / 2];
    free(d);
    return m;
}

void dp_series_bursts(const struct dp_series *s, double threshold_frac, struct dp_bursts *out) {
    memset(out, 0, sizeof *out);
    if (!s || !s->n) return;
    double mx = s->v[0];
    for (size_t i = 1; i < s->n; i++)
        if (s->v[i] > mx) mx = s->v[i];
    out->max = mx;
    if (!(mx > 0)) return;
    double thr = threshold_frac * mx;
    out->threshold = thr;
    double dt = median_dt(s);
    double sum_active = 0, sum_peak = 0, sum_gap = 0, edge_idle = 0;
    int n_edge = 0;
    size_t i = 0;
    double prev_end = NAN; /* time of the last sample of the previous burst */
    while (i < s->n) {
        if (s->v[i] <= thr) {
            i++;
            continue;
        }
        size_t b = i;
        double peak = s->v[i];
        while (i < s->n && s->v[i] > thr) {
            if (s->v[i] > peak) peak = s->v[i];
            i++;
        }
        size_t e = i - 1;
        sum_active += s->t_ms[e] - s->t_ms[b] + dt;
        sum_peak += peak;
        if (isnan(prev_end)) {
            if (b > 0) { /* a leading idle run */
                edge_idle += s->t_ms[b] - s->t_ms[0];
                n_edge++;
            }
        } else {
            sum_gap += s->t_ms[b] - prev_end - dt;
            out->n_gaps++;
        }
        prev_end = s->t_ms[e];
        out->n_bursts++;
    }
    if (!out->n_bursts) return;
    if (prev_end < s->t_ms[s->n - 1]) { /* a trailing idle run */
        edge_idle += s->t_ms[s->n - 1] - prev_end;
        n_edge++;
    }
    out->active_ms = sum_active / out->n_bursts;
    out->peak = sum_peak / out->n_bursts;
    if (out->n_gaps) out->idle_ms = sum_gap / out->n_gaps;
    else if (n_edge) out->idle_ms = edge_idle / n_edge;
    if (out->idle_ms < 0) out->idle_ms = 0;
}

void dp_trace_labels(const struct dp_trace *t, double threshold_frac, double labels[DP_N_OUTPUTS],
                     unsigned *missing) {
    if (!(threshold_frac > 0)) threshold_frac = DP_TRACE_THRESHOLD;
    unsigned miss = 0;
    for (int k = 0; k < DP_N_RESOURCES; k++) {
        struct dp_bursts b;
        dp_series_bursts(&t->s[k], threshold_frac, &b);
        if (!t->s[k].n) miss |= 1u << k;
        labels[3 * k + 0] = b.idle_ms;
        labels[3 * k + 1] = b.active_ms;
        labels[3 * k + 2] = b.peak;
    }
    if (missing) *missing = miss;
}

/* --- CSV reading --- */

#define TRACE_MAX_BYTES ((size_t)1 << 30)
static const struct dp_read_spec trace_spec = {"trace CSV", TRACE_MAX_BYTES, true, NULL, NULL};

/* A trace file read whole (bounded by TRACE_MAX_BYTES), split into lines in place. */
struct csv {
    char       *text;
    size_t      len, pos;
    const char *path; /* for messages ("stdin" for "-") */
    int         line;
    int         n_cols;
    char       *col[TRACE_MAX_COLS];
    enum dp_status st; /* why csv_next returned -1 (err may be NULL) */
};

/* Trims spaces and surrounding quotes in place. */
static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s[n - 1] = '\0';
        s++;
    }
    return s;
}

/* Takes the next non-blank, non-comment line and splits it on commas. 1 = a line, 0 = end,
 * -1 = error (err filled, c->st set). A row without its line end is where the file was cut
 * (a writer ends every row): its last number may be short ("989.596" read as "9"). */
static int csv_next(struct csv *c, struct dp_error *err) {
    while (c->pos < c->len) {
        char *s = c->text + c->pos;
        char *nl = memchr(s, '\n', c->len - c->pos);
        bool cut = !nl;
        if (nl) *nl = '\0';
        c->pos = nl ? (size_t)(nl - c->text) + 1 : c->len;
        c->line++;
        char *p = trim(s);
        if (!*p || *p == '#') continue;
        if (cut) {
            c->st = dp_error_set(err, DP_ERR_PARSE,
                                 "%s:%d: the file ends inside this row (no line end: cut short?)",
                                 c->path, c->line);
            return -1;
        }
        c->n_cols = 0;
        for (;;) {
            char *comma = strchr(p, ',');
            if (comma) *comma = '\0';
            if (c->n_cols == TRACE_MAX_COLS) {
                c->st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: more than %d columns", c->path,
                                     c->line, TRACE_MAX_COLS);
                return -1;
            }
            c->col[c->n_cols++] = trim(p);
            if (!comma) break;
            p = comma + 1;
        }
        return 1;
    }
    return 0;
}

/* Reads path whole and its header line into c->col (the cells point into c->text, which
 * csv_close frees). */
static enum dp_status csv_open(struct csv *c, const char *path, struct dp_error *err) {
    memset(c, 0, sizeof *c);
    c->path = dp_file_name(path);
    enum dp_status st = dp_file_read(path, &trace_spec, &c->text, &c->len, err);
    if (st) return st;
    int r = csv_next(c, err);
    if (r > 0) return DP_OK;
    free(c->text);
    c->text = NULL;
    return r < 0 ? c->st : dp_error_set(err, DP_ERR_PARSE, "%s:1: empty file", c->path);
}

static void csv_close(struct csv *c) {
    free(c->text);
    c->text = NULL;
}

/* dp_trace_push, its message prefixed with the current file and line. */
static enum dp_status csv_push(const struct csv *c, struct dp_trace *t, enum dp_series_kind k,
                               double t_ms, double v, struct dp_error *err) {
    enum dp_status st = dp_trace_push(t, k, t_ms, v, err);
    if (st) {
        char pre[600];
        snprintf(pre, sizeof pre, "%s:%d", c->path, c->line);
        dp_error_prefix(err, pre);
    }
    return st;
}

/* The status after the last row (r: csv_next's last result; samples: those kept). One sample
 * has no duration: its idle and active times would silently read 0, so it is refused. */
static enum dp_status csv_end(const struct csv *c, int r, int samples, struct dp_error *err) {
    if (r < 0) return c->st;
    if (!samples)
        return dp_error_set(err, DP_ERR_PARSE, "%s:%d: no samples after the header", c->path,
                            c->line);
    if (samples < 2)
        return dp_error_set(err, DP_ERR_PARSE, "%s:%d: only one sample; labels need at least two",
                            c->path, c->line);
    return DP_OK;
}

/* Column whose header names `key` (before any " [unit]"), or -1. Header cells are compared
 * case-insensitively. */
static int find_col(char **hdr, int n, const char *key) {
    size_t k = strlen(key);
    for (int i = 0; i < n; i++) {
        const char *h = hdr[i];
        if (!strncasecmp(h, key, k) && (h[k] == '\0' || h[k] == ' ' || h[k] == '[')) return i;
    }
    return -1;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil). */
static long days_from_civil(long y, long m, long d) {
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Plain-number timestamps beyond this many seconds (about 31,700 years) are refused: their
 * millisecond differences would no longer be exact enough to time 1 ms samples. */
#define TRACE_MAX_SECONDS 1e12

/* Parses "YYYY/MM/DD HH:MM:SS[.fff]" (nvidia-smi; '-' and 'T' accepted too) or a plain number of
 * seconds into milliseconds. Field widths keep sscanf's integers from overflowing. */
static bool parse_time_ms(const char *s, double *out) {
    int y, mo, d, h, mi, n = 0;
    double sec;
    char sep1, sep2, sep3;
    if (sscanf(s, "%4d%c%2d%c%2d%c%2d:%2d:%lf%n", &y, &sep1, &mo, &sep2, &d, &sep3, &h, &mi, &sec,
               &n) == 9 &&
        (sep1 == '/' || sep1 == '-') && sep2 == sep1 && (sep3 == ' ' || sep3 == 'T')) {
        const char *rest = s + n;
        while (*rest == ' ') rest++;
        if (*rest && strcmp(rest, "Z")) return false;
        /* A clock before 1970 is a clock that was never set (or a year 0000 that would make
         * one gap of 2,000 years). */
        if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
            mi > 59 || !(sec >= 0 && sec < 61))
            return false;
        double days = (double)days_from_civil(y, mo, d);
        *out = ((days * 24 + h) * 60 + mi) * 60000.0 + sec * 1000.0;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(fabs(v) <= TRACE_MAX_SECONDS)) return false;
    *out = v * 1000.0;
    return true;
}

/* Parses a number with an optional unit suffix ("35 %", "1234 MiB"); `unit` may be NULL. */
static bool parse_num(const char *s, const char *unit, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v)) return false;
    while (*end == ' ') end++;
    if (*end && (!unit || strcasecmp(end, unit))) return false;
    *out = v;
    return true;
}

/* nvidia-smi marks missing values "[N/A]", "[Not Supported]", "N/A". */
static bool smi_missing(const char *s) {
    return s[0] == '[' || !strcasecmp(s, "N/A") || !*s;
}

#define SMI_MAX_GPUS 64

/* The GPUs an nvidia-smi CSV names, in order of first appearance. */
struct smi_gpus {
    int  n;
    char id[SMI_MAX_GPUS][64];
};

/* "0, 1 and 2" into buf. */
static void smi_list(const struct smi_gpus *g, char *buf, size_t cap) {
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->n && off < cap; i++)
        off += (size_t)snprintf(buf + off, cap - off, "%s%s",
                                i == 0 ? "" : i == g->n - 1 ? " and " : ", ", g->id[i]);
}

/* Reads nvidia-smi rows (after the header, in c) of GPU `want` (NULL: the first the file
 * names) into t; info (may be NULL) gets the GPU kept and how many the file holds. */
static enum dp_status read_smi(struct csv *c, const char *want, struct dp_trace *t,
                               struct dp_trace_file *info, struct dp_error *err) {
    enum dp_status st = DP_OK;
    int r;
    int n_hdr = c->n_cols;
    char *hdr[TRACE_MAX_COLS];
    memcpy(hdr, c->col, sizeof hdr);
    int ct = find_col(hdr, n_hdr, "timestamp");
    int cg = find_col(hdr, n_hdr, "utilization.gpu");
    int cm = find_col(hdr, n_hdr, "utilization.memory");
    int cu = find_col(hdr, n_hdr, "memory.used");
    int ci = find_col(hdr, n_hdr, "index");
    if (ci < 0) ci = find_col(hdr, n_hdr, "pci.bus_id");
    if (ct < 0 || (cg < 0 && cm < 0 && cu < 0))
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s:%d: not an nvidia-smi CSV: the header needs timestamp and "
                            "utilization.gpu, utilization.memory or memory.used",
                            c->path, c->line);
    if (want && ci < 0)
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "%s:%d: no index or pci.bus_id column to pick GPU %s by", c->path,
                            c->line, want);
    struct smi_gpus *gpus = calloc(1, sizeof *gpus);
    if (!gpus) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", c->path);
    const char *keep = want;
    int rows = 0, same_time = 0, last = -1;
    double prev_tm = NAN;
    while ((r = csv_next(c, err)) > 0) {
        if (c->n_cols != n_hdr) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: %d columns, the header has %d", c->path,
                              c->line, c->n_cols, n_hdr);
            goto done;
        }
        if (ci >= 0) {
            const char *id = c->col[ci];
            /* rows of one GPU come together or interleaved: try the last one seen first */
            int g = last >= 0 && !strcmp(gpus->id[last], id) ? last : -1;
            for (int i = 0; g < 0 && i < gpus->n; i++)
                if (!strcmp(gpus->id[i], id)) g = i;
            if (g < 0) {
                if (gpus->n == SMI_MAX_GPUS || strlen(id) >= sizeof gpus->id[0]) {
                    st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: GPU \"%.64s\": more than %d "
                                      "GPUs, or a name longer than %zu characters", c->path,
                                      c->line, id, SMI_MAX_GPUS, sizeof gpus->id[0] - 1);
                    goto done;
                }
                g = gpus->n++;
                memcpy(gpus->id[g], id, strlen(id) + 1);
            }
            last = g;
            if (!keep) keep = gpus->id[g];
            if (strcmp(keep, gpus->id[g])) continue; /* another GPU */
        }
        double tm;
        if (!parse_time_ms(c->col[ct], &tm)) {
            st = dp_error_set(err, DP_ERR_PARSE,
                              "%s:%d: bad timestamp \"%s\" (expected like 2024/01/31 12:00:00.123, "
                              "in 1970 or later)",
                              c->path, c->line, c->col[ct]);
            goto done;
        }
        if (ci < 0 && tm == prev_tm) same_time++;
        prev_tm = tm;
        const struct { int col; enum dp_series_kind k; const char *unit; } cols[3] = {
            {cg, DP_SERIES_GPU_UTIL, "%"},
            {cm, DP_SERIES_GPU_MEM_UTIL, "%"},
            {cu, DP_SERIES_MEM_USED, "MiB"}};
        for (int j = 0; j < 3; j++) {
            if (cols[j].col < 0) continue;
            const char *cell = c->col[cols[j].col];
            if (smi_missing(cell)) continue;
            double v;
            if (!parse_num(cell, cols[j].unit, &v) || v < 0 ||
                (cols[j].k != DP_SERIES_MEM_USED && v > 100)) {
                st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad %s value \"%s\"", c->path,
                                  c->line, hdr[cols[j].col], cell);
                goto done;
            }
            if ((st = csv_push(c, t, cols[j].k, tm, v, err))) goto done;
        }
        rows++;
    }
    if (r >= 0 && want && !rows) {
        char list[512];
        smi_list(gpus, list, sizeof list);
        st = dp_error_set(err, DP_ERR_NOT_FOUND, "%s: no rows of GPU %s (the file has GPU%s %s)",
                          c->path, want, gpus->n == 1 ? "" : "s", gpus->n ? list : "none");
        goto done;
    }
    /* Without a GPU column, two GPUs' rows would merge into one series: nvidia-smi stamps every
     * GPU's row of one query alike, so half the rows or more repeat the time before them (one
     * GPU sampled fast may repeat a millisecond now and then). */
    if (r >= 0 && same_time >= 2 && 2 * same_time >= rows) {
        st = dp_error_set(err, DP_ERR_PARSE,
                          "%s: %d of %d rows repeat the time of the row before: rows of several "
                          "GPUs? add index to nvidia-smi's --query-gpu to tell them apart",
                          c->path, same_time, rows);
        goto done;
    }
    st = csv_end(c, r, rows, err);
    if (!st && info) {
        snprintf(info->gpu, sizeof info->gpu, "%s", keep ? keep : "");
        info->n_gpus = gpus->n;
    }
done:
    free(gpus);
    return st;
}

/* Reads network counter rows (after the header, in c) into t as rates. */
static enum dp_status read_net(struct csv *c, struct dp_trace *t, struct dp_error *err) {
    enum dp_status st;
    int r;
    int ct = find_col(c->col, c->n_cols, "timestamp");
    int cr = find_col(c->col, c->n_cols, "rx_bytes");
    int cx = find_col(c->col, c->n_cols, "tx_bytes");
    int n_hdr = c->n_cols;
    if (ct < 0 || cr < 0 || cx < 0)
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s:%d: not a network counter CSV: expected header "
                            "timestamp,rx_bytes,tx_bytes",
                            c->path, c->line);
    double pt = NAN, prx = 0, ptx = 0;
    int rows = 0;
    while ((r = csv_next(c, err)) > 0) {
        if (c->n_cols != n_hdr)
            return dp_error_set(err, DP_ERR_PARSE, "%s:%d: %d columns, the header has %d",
                                c->path, c->line, c->n_cols, n_hdr);
        double tm, rx, tx;
        if (!parse_time_ms(c->col[ct], &tm))
            return dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad timestamp \"%s\"", c->path,
                                c->line, c->col[ct]);
        /* /proc/net/dev counters are unsigned 64-bit: anything larger is not a counter. */
        if (!parse_num(c->col[cr], NULL, &rx) || !(rx >= 0 && rx <= 18446744073709551615.0) ||
            !parse_num(c->col[cx], NULL, &tx) || !(tx >= 0 && tx <= 18446744073709551615.0))
            return dp_error_set(err, DP_ERR_PARSE,
                                "%s:%d: bad byte counter \"%s\" / \"%s\" (expected 0 .. 2^64-1)",
                                c->path, c->line, c->col[cr], c->col[cx]);
        if (!isnan(pt)) {
            double dt = tm - pt;
            if (!(dt > 0))
                return dp_error_set(err, DP_ERR_PARSE, "%s:%d: timestamp does not advance",
                                    c->path, c->line);
            if (rx < prx || tx < ptx)
                return dp_error_set(err, DP_ERR_PARSE,
                                    "%s:%d: byte counter went backwards (counter reset?)",
                                    c->path, c->line);
            /* bytes per ms / 1000 = MB/s (1 MB = 1e6 bytes) */
            if ((st = csv_push(c, t, DP_SERIES_NET_RX, tm, (rx - prx) / dt / 1000.0, err)) ||
                (st = csv_push(c, t, DP_SERIES_NET_TX, tm, (tx - ptx) / dt / 1000.0, err)))
                return st;
        }
        pt = tm;
        prx = rx;
        ptx = tx;
        rows++;
    }
    /* Rates are differences: n counter rows give n - 1 rate samples. */
    if (r >= 0 && rows < 3)
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s:%d: need at least three counter samples (two rates)", c->path,
                            c->line);
    return csv_end(c, r, rows - 1, err);
}

/* Reads the simulator's rows (after the header, in c): each worker's into its own trace, in
 * order of first appearance (out->traces; a file without a worker column is worker 0). */
static enum dp_status read_sim(struct csv *c, struct dp_trace_file *out, struct dp_error *err) {
    enum dp_status st = DP_OK;
    int r;
    int n_hdr = c->n_cols;
    int cw = find_col(c->col, n_hdr, "worker");
    int ct = find_col(c->col, n_hdr, "t_ms");
    int cs[DP_SERIES_COUNT];
    const char *keys[DP_SERIES_COUNT] = {"gpu_mem_util", "gpu_util", "net_rx", "net_tx",
                                         "mem_used_mib"};
    int found = 0;
    for (int k = 0; k < DP_SERIES_COUNT; k++) {
        cs[k] = find_col(c->col, n_hdr, keys[k]);
        found += cs[k] >= 0;
    }
    if (ct < 0 || !found)
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s:%d: not a driple trace: expected header t_ms,gpu_util,gpu_mem_util,"
                            "mem_used_mib,net_rx,net_tx",
                            c->path, c->line);
    int *slot = malloc(DP_TRACE_MAX_WORKERS * sizeof *slot);
    int *rows = calloc(DP_TRACE_MAX_WORKERS, sizeof *rows);
    if (!(out->traces = calloc(DP_TRACE_MAX_WORKERS, sizeof *out->traces)) || !slot || !rows) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", c->path);
        goto done;
    }
    for (int w = 0; w < DP_TRACE_MAX_WORKERS; w++) slot[w] = -1;
    while ((r = csv_next(c, err)) > 0) {
        if (c->n_cols != n_hdr) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: %d columns, the header has %d", c->path,
                              c->line, c->n_cols, n_hdr);
            goto done;
        }
        long w = 0;
        if (cw >= 0) {
            char *end;
            errno = 0;
            w = strtol(c->col[cw], &end, 10);
            if (end == c->col[cw] || *end || errno || w < 0 || w >= DP_TRACE_MAX_WORKERS) {
                st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad worker \"%s\" (0 .. %d)",
                                  c->path, c->line, c->col[cw], DP_TRACE_MAX_WORKERS - 1);
                goto done;
            }
        }
        if (slot[w] < 0) {
            if (!(out->traces[out->n_traces] = dp_trace_init("simulated"))) {
                st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", c->path);
                goto done;
            }
            slot[w] = out->n_traces++;
        }
        struct dp_trace *t = out->traces[slot[w]];
        double tm;
        if (!parse_num(c->col[ct], NULL, &tm)) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad t_ms \"%s\"", c->path, c->line,
                              c->col[ct]);
            goto done;
        }
        for (int k = 0; k < DP_SERIES_COUNT; k++) {
            if (cs[k] < 0 || !*c->col[cs[k]]) continue;
            double v;
            if (!parse_num(c->col[cs[k]], NULL, &v) || v < 0) {
                st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad %s value \"%s\"", c->path,
                                  c->line, keys[k], c->col[cs[k]]);
                goto done;
            }
            if ((st = csv_push(c, t, (enum dp_series_kind)k, tm, v, err))) goto done;
        }
        rows[slot[w]]++;
    }
    /* every worker needs two samples: each one's labels count in the mean */
    st = csv_end(c, r, out->n_traces ? rows[0] : 0, err);
    for (int i = 1; !st && i < out->n_traces; i++) st = csv_end(c, r, rows[i], err);
done:
    free(slot);
    free(rows);
    return st;
}

void dp_trace_file_free(struct dp_trace_file *f) {
    if (!f) return;
    for (int i = 0; i < f->n_traces; i++) dp_trace_free(f->traces[i]);
    free(f->traces);
    memset(f, 0, sizeof *f);
}

enum trace_kind { TRACE_SMI, TRACE_NET, TRACE_SIM };

/* Reads path whole as the kind its header says (or `want` when >= 0). */
static enum dp_status read_file(const char *path, int want, const char *gpu,
                                struct dp_trace_file *out, struct dp_error *err) {
    struct csv c;
    memset(out, 0, sizeof *out);
    enum dp_status st = csv_open(&c, path, err);
    if (st) return st;
    int kind = want;
    if (kind < 0) {
        if (find_col(c.col, c.n_cols, "t_ms") >= 0) kind = TRACE_SIM;
        else if (find_col(c.col, c.n_cols, "rx_bytes") >= 0) kind = TRACE_NET;
        else if (find_col(c.col, c.n_cols, "timestamp") >= 0) kind = TRACE_SMI;
        else {
            st = dp_error_set(err, DP_ERR_PARSE,
                              "%s:%d: unknown trace header (expected nvidia-smi's, "
                              "timestamp,rx_bytes,tx_bytes, or driple's t_ms,...)",
                              c.path, c.line);
            goto done;
        }
    }
    if (gpu && kind != TRACE_SMI) {
        st = dp_error_set(err, DP_ERR_INVALID, "%s: not an nvidia-smi CSV: no GPU %s to pick",
                          c.path, gpu);
        goto done;
    }
    if (kind == TRACE_SIM) {
        st = read_sim(&c, out, err);
        goto done;
    }
    if (!(out->traces = calloc(1, sizeof *out->traces)) ||
        !(out->traces[0] = dp_trace_init("measured"))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", c.path);
        goto done;
    }
    out->n_traces = 1;
    st = kind == TRACE_NET ? read_net(&c, out->traces[0], err)
                           : read_smi(&c, gpu, out->traces[0], out, err);
done:
    csv_close(&c);
    if (st) dp_trace_file_free(out);
    return st;
}

enum dp_status dp_trace_file_read(const char *path, const char *gpu, struct dp_trace_file *out,
                                  struct dp_error *err) {
    return read_file(path, -1, gpu, out, err);
}

/* Reads a file of `kind` (-1: by its header) and appends its first trace's samples to t; a
 * simulator trace makes t's source "simulated". */
static enum dp_status read_into(const char *path, int kind, struct dp_trace *t,
                                struct dp_error *err) {
    struct dp_trace_file f;
    enum dp_status st = read_file(path, kind, NULL, &f, err);
    if (st) return st;
    const struct dp_trace *one = f.traces[0];
    for (int k = 0; k < DP_SERIES_COUNT && !st; k++)
        for (size_t i = 0; i < one->s[k].n && !st; i++)
            st = dp_trace_push(t, (enum dp_series_kind)k, one->s[k].t_ms[i], one->s[k].v[i],
                               err);
    if (!st && !strcmp(one->source, "simulated"))
        snprintf(t->source, sizeof t->source, "simulated");
    dp_trace_file_free(&f);
    return st;
}

enum dp_status dp_trace_read_smi(const char *path, struct dp_trace *t, struct dp_error *err) {
    return read_into(path, TRACE_SMI, t, err);
}

enum dp_status dp_trace_read_net(const char *path, struct dp_trace *t, struct dp_error *err) {
    return read_into(path, TRACE_NET, t, err);
}

enum dp_status dp_trace_read_sim(const char *path, struct dp_trace *t, struct dp_error *err) {
    return read_into(path, TRACE_SIM, t, err);
}

enum dp_status dp_trace_read_any(const char *path, struct dp_trace *t, struct dp_error *err) {
    return read_into(path, -1, t, err);
}

enum dp_status dp_trace_write_sim(const struct dp_trace *const *traces, int n_traces,
                                  const char *comment, const char *path, struct dp_error *err) {
    static const enum dp_series_kind order[DP_SERIES_COUNT] = {
        DP_SERIES_GPU_UTIL, DP_SERIES_GPU_MEM_UTIL, DP_SERIES_MEM_USED, DP_SERIES_NET_RX,
        DP_SERIES_NET_TX};
    struct dp_out *o = NULL;
    enum dp_status st = dp_out_open(path, &o, err);
    if (st) return st;
    FILE *f = dp_out_stream(o);
    if (comment) { /* one line: a line break would turn the rest into the header */
        fputs("# ", f);
        for (const char *q = comment; *q; q++) fputc(*q == '\n' || *q == '\r' ? ' ' : *q, f);
        fputc('\n', f);
    }
    fprintf(f, "worker,t_ms,gpu_util,gpu_mem_util,mem_used_mib,net_rx,net_tx\n");
    for (int w = 0; w < n_traces; w++) {
        const struct dp_trace *t = traces[w];
        size_t n = 0;
        for (int k = 0; k < DP_SERIES_COUNT; k++)
            if (t->s[k].n > n) n = t->s[k].n;
        for (size_t i = 0; i < n; i++) {
            double tm = NAN;
            for (int k = 0; k < DP_SERIES_COUNT && isnan(tm); k++)
                if (i < t->s[k].n) tm = t->s[k].t_ms[i];
            fprintf(f, "%d,%.3f", w, tm);
            for (int j = 0; j < DP_SERIES_COUNT; j++) {
                const struct dp_series *s = &t->s[order[j]];
                if (i < s->n) fprintf(f, ",%.6g", s->v[i]);
                else fputs(",", f);
            }
            fputc('\n', f);
        }
    }
    return dp_out_commit(o, err);
}
