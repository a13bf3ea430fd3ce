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

#define TRACE_MAX_COLS 32
#define TRACE_LINE_MAX 4096

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

struct csv {
    FILE       *f;
    const char *path;
    int         line;
    char        buf[TRACE_LINE_MAX];
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

/* Reads the next non-blank, non-comment line and splits it on commas. 1 = a line, 0 = end,
 * -1 = error (err filled, c->st set). */
static int csv_next(struct csv *c, struct dp_error *err) {
    for (;;) {
        if (!fgets(c->buf, sizeof c->buf, c->f)) {
            if (ferror(c->f)) {
                c->st = dp_error_set(err, DP_ERR_IO, "%s:%d: read error: %s", c->path,
                                     c->line + 1, strerror(errno));
                return -1;
            }
            return 0;
        }
        c->line++;
        size_t n = strlen(c->buf);
        if (n == sizeof c->buf - 1 && c->buf[n - 1] != '\n') {
            /* A full buffer without a newline is a long line unless the file ends right here. */
            int next = fgetc(c->f);
            if (next != EOF) {
                c->st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: line longer than %d characters",
                                     c->path, c->line, TRACE_LINE_MAX - 2);
                return -1;
            }
        }
        char *p = trim(c->buf);
        if (!*p || *p == '#') continue;
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
}

/* Opens path and reads its header line into c->col; on failure the file is closed again. */
static enum dp_status csv_open(struct csv *c, const char *path, struct dp_error *err) {
    memset(c, 0, sizeof *c);
    c->path = path;
    c->f = fopen(path, "r");
    if (!c->f) return dp_error_set(err, DP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int r = csv_next(c, err);
    if (r > 0) return DP_OK;
    fclose(c->f);
    return r < 0 ? c->st : dp_error_set(err, DP_ERR_PARSE, "%s:1: empty file", path);
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
        if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
            !(sec >= 0 && sec < 61))
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

enum dp_status dp_trace_read_smi(const char *path, struct dp_trace *t, struct dp_error *err) {
    struct csv c;
    enum dp_status st = csv_open(&c, path, err);
    if (st) return st;
    int r;
    int n_hdr = c.n_cols;
    char hdr_copy[TRACE_LINE_MAX];
    char *hdr[TRACE_MAX_COLS];
    {
        size_t off = 0;
        for (int i = 0; i < n_hdr; i++) {
            size_t len = strlen(c.col[i]) + 1;
            memcpy(hdr_copy + off, c.col[i], len);
            hdr[i] = hdr_copy + off;
            off += len;
        }
    }
    int ct = find_col(hdr, n_hdr, "timestamp");
    int cg = find_col(hdr, n_hdr, "utilization.gpu");
    int cm = find_col(hdr, n_hdr, "utilization.memory");
    int cu = find_col(hdr, n_hdr, "memory.used");
    int ci = find_col(hdr, n_hdr, "index");
    if (ci < 0) ci = find_col(hdr, n_hdr, "pci.bus_id");
    if (ct < 0 || (cg < 0 && cm < 0 && cu < 0)) {
        st = dp_error_set(err, DP_ERR_PARSE,
                          "%s:%d: not an nvidia-smi CSV: the header needs timestamp and "
                          "utilization.gpu, utilization.memory or memory.used",
                          path, c.line);
        goto done;
    }
    char first_id[64] = "";
    int rows = 0;
    while ((r = csv_next(&c, err)) > 0) {
        if (c.n_cols != n_hdr) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: %d columns, the header has %d", path,
                              c.line, c.n_cols, n_hdr);
            goto done;
        }
        if (ci >= 0) {
            if (!first_id[0]) snprintf(first_id, sizeof first_id, "%s", c.col[ci]);
            if (strcmp(first_id, c.col[ci])) continue; /* another GPU */
        }
        double tm;
        if (!parse_time_ms(c.col[ct], &tm)) {
            st = dp_error_set(err, DP_ERR_PARSE,
                              "%s:%d: bad timestamp \"%s\" (expected like 2024/01/31 12:00:00.123)",
                              path, c.line, c.col[ct]);
            goto done;
        }
        const struct { int col; enum dp_series_kind k; const char *unit; } cols[3] = {
            {cg, DP_SERIES_GPU_UTIL, "%"},
            {cm, DP_SERIES_GPU_MEM_UTIL, "%"},
            {cu, DP_SERIES_MEM_USED, "MiB"}};
        for (int j = 0; j < 3; j++) {
            if (cols[j].col < 0) continue;
            const char *cell = c.col[cols[j].col];
            if (smi_missing(cell)) continue;
            double v;
            if (!parse_num(cell, cols[j].unit, &v) || v < 0 ||
                (cols[j].k != DP_SERIES_MEM_USED && v > 100)) {
                st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad %s value \"%s\"", path, c.line,
                                  hdr[cols[j].col], cell);
                goto done;
            }
            if ((st = csv_push(&c, t, cols[j].k, tm, v, err))) goto done;
        }
        rows++;
    }
    st = csv_end(&c, r, rows, err);
done:
    fclose(c.f);
    return st;
}

enum dp_status dp_trace_read_net(const char *path, struct dp_trace *t, struct dp_error *err) {
    struct csv c;
    enum dp_status st = csv_open(&c, path, err);
    if (st) return st;
    int r;
    int ct = find_col(c.col, c.n_cols, "timestamp");
    int cr = find_col(c.col, c.n_cols, "rx_bytes");
    int cx = find_col(c.col, c.n_cols, "tx_bytes");
    int n_hdr = c.n_cols;
    if (ct < 0 || cr < 0 || cx < 0) {
        st = dp_error_set(err, DP_ERR_PARSE,
                          "%s:%d: not a network counter CSV: expected header "
                          "timestamp,rx_bytes,tx_bytes",
                          path, c.line);
        goto done;
    }
    double pt = NAN, prx = 0, ptx = 0;
    int rows = 0;
    while ((r = csv_next(&c, err)) > 0) {
        if (c.n_cols != n_hdr) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: %d columns, the header has %d", path,
                              c.line, c.n_cols, n_hdr);
            goto done;
        }
        double tm, rx, tx;
        if (!parse_time_ms(c.col[ct], &tm)) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad timestamp \"%s\"", path, c.line,
                              c.col[ct]);
            goto done;
        }
        /* /proc/net/dev counters are unsigned 64-bit: anything larger is not a counter. */
        if (!parse_num(c.col[cr], NULL, &rx) || !(rx >= 0 && rx <= 18446744073709551615.0) ||
            !parse_num(c.col[cx], NULL, &tx) || !(tx >= 0 && tx <= 18446744073709551615.0)) {
            st = dp_error_set(err, DP_ERR_PARSE,
                              "%s:%d: bad byte counter \"%s\" / \"%s\" (expected 0 .. 2^64-1)",
                              path, c.line, c.col[cr], c.col[cx]);
            goto done;
        }
        if (!isnan(pt)) {
            double dt = tm - pt;
            if (!(dt > 0)) {
                st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: timestamp does not advance", path,
                                  c.line);
                goto done;
            }
            if (rx < prx || tx < ptx) {
                st = dp_error_set(err, DP_ERR_PARSE,
                                  "%s:%d: byte counter went backwards (counter reset?)", path,
                                  c.line);
                goto done;
            }
            /* bytes per ms / 1000 = MB/s (1 MB = 1e6 bytes) */
            if ((st = csv_push(&c, t, DP_SERIES_NET_RX, tm, (rx - prx) / dt / 1000.0, err)) ||
                (st = csv_push(&c, t, DP_SERIES_NET_TX, tm, (tx - ptx) / dt / 1000.0, err)))
                goto done;
        }
        pt = tm;
        prx = rx;
        ptx = tx;
        rows++;
    }
    /* Rates are differences: n counter rows give n - 1 rate samples. */
    if (r >= 0 && rows < 3)
        st = dp_error_set(err, DP_ERR_PARSE,
                          "%s:%d: need at least three counter samples (two rates)", path, c.line);
    else
        st = csv_end(&c, r, rows - 1, err);
done:
    fclose(c.f);
    return st;
}

enum dp_status dp_trace_read_sim(const char *path, struct dp_trace *t, struct dp_error *err) {
    return dp_trace_read_sim_worker(path, -1, t, err);
}

enum dp_status dp_trace_read_sim_worker(const char *path, int worker, struct dp_trace *t,
                                        struct dp_error *err) {
    struct csv c;
    enum dp_status st = csv_open(&c, path, err);
    if (st) return st;
    int r;
    int n_hdr = c.n_cols;
    int cw = find_col(c.col, n_hdr, "worker");
    int ct = find_col(c.col, n_hdr, "t_ms");
    int cs[DP_SERIES_COUNT];
    const char *keys[DP_SERIES_COUNT] = {"gpu_mem_util", "gpu_util", "net_rx", "net_tx",
                                         "mem_used_mib"};
    int found = 0;
    for (int k = 0; k < DP_SERIES_COUNT; k++) {
        cs[k] = find_col(c.col, n_hdr, keys[k]);
        found += cs[k] >= 0;
    }
    if (ct < 0 || !found) {
        st = dp_error_set(err, DP_ERR_PARSE,
                          "%s:%d: not a driple trace: expected header t_ms,gpu_util,gpu_mem_util,"
                          "mem_used_mib,net_rx,net_tx",
                          path, c.line);
        goto done;
    }
    char first[32] = "";
    int rows = 0;
    snprintf(t->source, sizeof t->source, "simulated");
    while ((r = csv_next(&c, err)) > 0) {
        if (c.n_cols != n_hdr) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: %d columns, the header has %d", path,
                              c.line, c.n_cols, n_hdr);
            goto done;
        }
        if (cw >= 0) {
            if (worker >= 0) {
                char *end;
                long wv = strtol(c.col[cw], &end, 10);
                if (end == c.col[cw] || *end) {
                    st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad worker \"%s\"", path,
                                      c.line, c.col[cw]);
                    goto done;
                }
                if (wv != worker) continue;
            } else {
                if (!first[0]) snprintf(first, sizeof first, "%s", c.col[cw]);
                if (strcmp(first, c.col[cw])) continue;
            }
        } else if (worker > 0) {
            continue;
        }
        double tm;
        if (!parse_num(c.col[ct], NULL, &tm)) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad t_ms \"%s\"", path, c.line,
                              c.col[ct]);
            goto done;
        }
        for (int k = 0; k < DP_SERIES_COUNT; k++) {
            if (cs[k] < 0 || !*c.col[cs[k]]) continue;
            double v;
            if (!parse_num(c.col[cs[k]], NULL, &v) || v < 0) {
                st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: bad %s value \"%s\"", path, c.line,
                                  keys[k], c.col[cs[k]]);
                goto done;
            }
            if ((st = csv_push(&c, t, (enum dp_series_kind)k, tm, v, err))) goto done;
        }
        rows++;
    }
    if (r >= 0 && !rows && worker > 0)
        st = dp_error_set(err, DP_ERR_NOT_FOUND, "%s: no rows of worker %d", path, worker);
    else
        st = csv_end(&c, r, rows, err);
done:
    fclose(c.f);
    return st;
}

enum dp_status dp_trace_read_any(const char *path, struct dp_trace *t, struct dp_error *err) {
    struct csv c;
    enum dp_status st = csv_open(&c, path, err);
    if (st) return st;
    fclose(c.f);
    if (find_col(c.col, c.n_cols, "t_ms") >= 0) return dp_trace_read_sim(path, t, err);
    if (find_col(c.col, c.n_cols, "rx_bytes") >= 0) return dp_trace_read_net(path, t, err);
    if (find_col(c.col, c.n_cols, "timestamp") >= 0) return dp_trace_read_smi(path, t, err);
    return dp_error_set(err, DP_ERR_PARSE,
                        "%s:%d: unknown trace header (expected nvidia-smi's, "
                        "timestamp,rx_bytes,tx_bytes, or driple's t_ms,...)",
                        path, c.line);
}

enum dp_status dp_trace_write_sim(const struct dp_trace *const *traces, int n_traces,
                                  const char *comment, const char *path, struct dp_error *err) {
    static const enum dp_series_kind order[DP_SERIES_COUNT] = {
        DP_SERIES_GPU_UTIL, DP_SERIES_GPU_MEM_UTIL, DP_SERIES_MEM_USED, DP_SERIES_NET_RX,
        DP_SERIES_NET_TX};
    bool to_stdout = !strcmp(path, "-");
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f) return dp_error_set(err, DP_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
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
    bool bad = ferror(f) != 0;
    if (!to_stdout && fclose(f)) bad = true;
    if (bad) return dp_error_set(err, DP_ERR_IO, "%s: write failed", path);
    return DP_OK;
}
