/* dataset.c: the in-memory training set of one setting (samples of job + grouped graph + 12
 * labels + label source) and the published DriplePerf CSV reader and writer. The JSON form
 * (driple-dataset/1) is in dataset_json.c. */
#include "dp/dataset.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_impl.h"
#include "dp/files.h"

#define CSV_MAX_BYTES ((size_t)1 << 28)
#define CSV_N_COLS    10

static const char *const resource_names[4] = {"GPU Memory Utilization", "GPU Utilization",
                                              "Network RX", "Network TX"};
static const char *const csv_header[CSV_N_COLS] = {
    "GPU", "Model", "Data Set", "Sync/Async", "Hyper-Parameter", "Job Name", "Resource",
    "avg Idle time", "avg Active time", "avg Peak consumption"};

const char *dp_dataset_resource_name(int r) {
    return r >= 0 && r < 4 ? resource_names[r] : "";
}

void dp_dataset_init(struct dp_dataset *ds, const char *setting) {
    memset(ds, 0, sizeof *ds);
    if (setting) snprintf(ds->setting, sizeof ds->setting, "%s", setting);
}

void dp_dataset_sample_clear(struct dp_sample *s) {
    free(s->graph);
    free(s->model);
    dp_grouped_free(s->grouped);
    s->graph = s->model = NULL;
    s->grouped = NULL;
}

void dp_dataset_free(struct dp_dataset *ds) {
    if (!ds) return;
    for (int i = 0; i < ds->n_samples; i++) dp_dataset_sample_clear(&ds->samples[i]);
    free(ds->samples);
    ds->samples = NULL;
    ds->n_samples = ds->cap = 0;
}

static char *dup_str(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

bool dp_dataset_source_ok(const char *kind) {
    return !strcmp(kind, "simulated") || !strcmp(kind, "measured");
}

enum dp_status dp_dataset_add_sample(struct dp_dataset *ds, const struct dp_sample *s,
                                     struct dp_error *err) {
    if (!dp_dataset_source_ok(s->source.kind))
        return dp_error_set(err, DP_ERR_INVALID,
                            "dataset sample %d: source kind '%s' is not 'simulated' or 'measured'",
                            ds->n_samples, s->source.kind);
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        if (isinf(s->labels[o]))
            return dp_error_set(err, DP_ERR_INVALID, "dataset sample %d: label %d is infinite",
                                ds->n_samples, o);
    if (ds->n_samples == ds->cap) {
        int cap = ds->cap ? ds->cap * 2 : 64;
        struct dp_sample *n = realloc(ds->samples, (size_t)cap * sizeof *n);
        if (!n) return dp_error_set(err, DP_ERR_NOMEM, "dataset: out of memory");
        ds->samples = n;
        ds->cap = cap;
    }
    struct dp_sample c = *s;
    c.graph = dup_str(s->graph);
    c.model = dup_str(s->model);
    /* Member names are not carried: datasets never store them. */
    c.grouped = s->grouped ? dp_grouped_clone(s->grouped, false) : NULL;
    if ((s->graph && !c.graph) || (s->model && !c.model) || (s->grouped && !c.grouped)) {
        dp_dataset_sample_clear(&c);
        return dp_error_set(err, DP_ERR_NOMEM, "dataset: out of memory");
    }
    ds->samples[ds->n_samples++] = c;
    return DP_OK;
}

enum dp_status dp_dataset_merge(struct dp_dataset *ds, const struct dp_dataset *src,
                                struct dp_error *err) {
    if (ds->setting[0] && src->setting[0] && strcmp(ds->setting, src->setting))
        return dp_error_set(err, DP_ERR_INVALID,
                            "dataset: cannot merge setting '%s' into setting '%s'", src->setting,
                            ds->setting);
    if (!ds->setting[0]) snprintf(ds->setting, sizeof ds->setting, "%s", src->setting);
    for (int i = 0; i < src->n_samples; i++) {
        enum dp_status st = dp_dataset_add_sample(ds, &src->samples[i], err);
        if (st) return st;
    }
    return DP_OK;
}

bool dp_dataset_sample_trainable(const struct dp_sample *s) {
    if (!s->grouped || s->grouped->n_groups < 1) return false;
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        if (!isfinite(s->labels[o])) return false;
    return true;
}

int dp_dataset_n_trainable(const struct dp_dataset *ds) {
    int n = 0;
    for (int i = 0; i < ds->n_samples; i++) n += dp_dataset_sample_trainable(&ds->samples[i]);
    return n;
}

const char *dp_dataset_data_kind(const struct dp_dataset *ds) {
    bool sim = false, meas = false;
    for (int i = 0; i < ds->n_samples; i++) {
        if (!strcmp(ds->samples[i].source.kind, "simulated")) sim = true;
        else meas = true;
    }
    return sim && meas ? "mixed" : sim ? "simulated" : meas ? "measured" : "";
}

/* ---- DriplePerf CSV ---- */

/* Which output group a Resource cell names: 0 memory util, 1 GPU util, 2 RX, 3 TX, -1 none. */
static int resource_parse(const char *s) {
    char low[64];
    size_t k = 0;
    for (; s[k] && k < sizeof low - 1; k++) low[k] = (char)tolower((unsigned char)s[k]);
    low[k] = '\0';
    if (strstr(low, "rx") || strstr(low, "receiv") || strstr(low, "recv")) return 2;
    if (strstr(low, "tx") || strstr(low, "transmit") || strstr(low, "send") || strstr(low, "sent"))
        return 3;
    if (strstr(low, "mem")) return 0;
    if (strstr(low, "gpu") || strstr(low, "util") || strstr(low, "sm")) return 1;
    return -1;
}

/* Splits one CSV record starting at *p (RFC 4180 quoting) into at most max fields (NUL-terminated
 * in place, quotes removed). Returns the field count, or -1 on an unterminated quote; *p moves to
 * the next record. */
static int csv_record(char **p, char *end, char **fields, int max) {
    char *s = *p;
    int n = 0;
    for (;;) {
        char *out = s, *start = s;
        if (s < end && *s == '"') {
            s++;
            for (;;) {
                if (s >= end) return -1;
                if (*s == '"') {
                    if (s + 1 < end && s[1] == '"') { *out++ = '"'; s += 2; continue; }
                    s++;
                    break;
                }
                *out++ = *s++;
            }
            while (s < end && *s != ',' && *s != '\n' && *s != '\r') s++; /* junk after quote */
        } else {
            while (s < end && *s != ',' && *s != '\n' && *s != '\r') *out++ = *s++;
        }
        char sep = s < end ? *s : '\n';
        *out = '\0';
        if (n < max) fields[n] = start;
        n++;
        if (sep == ',') { s++; continue; }
        if (s < end && *s == '\r') s++;
        if (s < end && *s == '\n') s++;
        break;
    }
    *p = s;
    return n;
}

static void trim(char *s) {
    size_t n = strlen(s), i = 0;
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    while (isspace((unsigned char)s[i])) i++;
    if (i) memmove(s, s + i, n - i + 1);
}

static bool same_header(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

/* A batch size from the Hyper-Parameter column: "batch=32", "bs 32", "batch size: 64", "32". */
static int64_t parse_batch(const char *h) {
    char low[64];
    size_t k = 0;
    for (; h[k] && k < sizeof low - 1; k++) low[k] = (char)tolower((unsigned char)h[k]);
    low[k] = '\0';
    const char *p = strstr(low, "batch");
    if (!p) p = strstr(low, "bs");
    if (!p) {
        char *e;
        long long v = strtoll(low, &e, 10);
        return (e != low && *e == '\0' && v > 0) ? (int64_t)v : 0;
    }
    while (*p && !isdigit((unsigned char)*p)) p++;
    long long v = strtoll(p, NULL, 10);
    return v > 0 ? (int64_t)v : 0;
}

static bool parse_num(const char *s, double *out) {
    char *e;
    if (!*s) { *out = NAN; return true; }
    errno = 0;
    double v = strtod(s, &e);
    while (isspace((unsigned char)*e)) e++;
    if (e == s || *e || !isfinite(v)) return false;
    *out = v;
    return true;
}

static void copy_field(char *dst, size_t cap, const char *src) {
    snprintf(dst, cap, "%s", src);
}

/* The job identity of a row: everything but Resource and the numbers. */
static bool same_job(const struct dp_sample *s, char **f) {
    return !strcmp(s->job.gpu, f[0]) && s->model && !strcmp(s->model, f[1]) &&
           !strcmp(s->job.data_set, f[2]) && !strcmp(s->job.sync, f[3]) &&
           !strcmp(s->job.hyper, f[4]) && !strcmp(s->job.job_name, f[5]);
}

enum dp_status dp_dataset_parse_csv(const char *text, size_t len, const char *name,
                                    const char *kind, struct dp_dataset *ds,
                                    struct dp_error *err) {
    enum dp_status st = DP_OK;
    dp_dataset_init(ds, NULL);
    if (!kind || !dp_dataset_source_ok(kind))
        return dp_error_set(err, DP_ERR_INVALID, "%s: source kind '%s' is not 'simulated' or 'measured'",
                            name, kind ? kind : "(null)");
    char *buf = malloc(len + 1);
    if (!buf) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *p = buf, *end = buf + len;
    /* A UTF-8 byte-order mark, as spreadsheets write. */
    if (len >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
        (unsigned char)p[2] == 0xBF)
        p += 3;
    char *f[CSV_N_COLS];
    int line = 1;
    int n = csv_record(&p, end, f, CSV_N_COLS);
    if (n < 0) { st = dp_error_set(err, DP_ERR_PARSE, "%s:1: unterminated quote", name); goto fail; }
    if (n != CSV_N_COLS) {
        st = dp_error_set(err, DP_ERR_PARSE, "%s:1: header has %d columns, DriplePerf has %d (%s, ...)",
                          name, n, CSV_N_COLS, csv_header[0]);
        goto fail;
    }
    for (int c = 0; c < CSV_N_COLS; c++) {
        trim(f[c]);
        if (!same_header(f[c], csv_header[c])) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:1: column %d is '%s', expected '%s'", name,
                              c + 1, f[c], csv_header[c]);
            goto fail;
        }
    }
    while (p < end) {
        line++;
        char *rec = p;
        n = csv_record(&p, end, f, CSV_N_COLS);
        if (n < 0) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: unterminated quote", name, line);
            goto fail;
        }
        /* Count the newlines the record spanned (quoted fields may hold some). */
        for (char *q = rec; q < p - 1; q++) line += *q == '\n';
        if (n == 1 && f[0][0] == '\0') continue; /* blank line */
        if (n != CSV_N_COLS) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: %d fields, expected %d", name, line, n,
                              CSV_N_COLS);
            goto fail;
        }
        for (int c = 0; c < CSV_N_COLS; c++) trim(f[c]);
        int r = resource_parse(f[6]);
        if (r < 0) {
            st = dp_error_set(err, DP_ERR_INVALID,
                              "%s:%d: Resource '%s' is none of GPU memory, GPU, network RX, TX",
                              name, line, f[6]);
            goto fail;
        }
        double v[3];
        for (int k = 0; k < 3; k++)
            if (!parse_num(f[7 + k], &v[k]) || v[k] < 0) {
                st = dp_error_set(err, DP_ERR_INVALID, "%s:%d: %s '%s' is not a number >= 0",
                                  name, line, csv_header[7 + k], f[7 + k]);
                goto fail;
            }
        struct dp_sample *s = NULL;
        for (int i = ds->n_samples - 1; i >= 0; i--)
            if (same_job(&ds->samples[i], f)) { s = &ds->samples[i]; break; }
        if (!s) {
            struct dp_sample ns;
            memset(&ns, 0, sizeof ns);
            for (int o = 0; o < DP_N_OUTPUTS; o++) ns.labels[o] = NAN;
            ns.model = f[1];
            copy_field(ns.job.gpu, sizeof ns.job.gpu, f[0]);
            copy_field(ns.job.data_set, sizeof ns.job.data_set, f[2]);
            copy_field(ns.job.sync, sizeof ns.job.sync, f[3]);
            copy_field(ns.job.hyper, sizeof ns.job.hyper, f[4]);
            copy_field(ns.job.job_name, sizeof ns.job.job_name, f[5]);
            ns.batch = parse_batch(f[4]);
            copy_field(ns.source.kind, sizeof ns.source.kind, kind);
            copy_field(ns.source.where, sizeof ns.source.where, name);
            if ((st = dp_dataset_add_sample(ds, &ns, err))) goto fail;
            s = &ds->samples[ds->n_samples - 1];
            /* Truncated cells would not match the next row's: keep the stored ones as identity. */
            if (strcmp(s->job.gpu, f[0]) || strcmp(s->job.data_set, f[2]) ||
                strcmp(s->job.sync, f[3]) || strcmp(s->job.hyper, f[4]) ||
                strcmp(s->job.job_name, f[5])) {
                st = dp_error_set(err, DP_ERR_INVALID, "%s:%d: a job field is too long", name, line);
                goto fail;
            }
        }
        if (!isnan(s->labels[3 * r]) || !isnan(s->labels[3 * r + 1]) || !isnan(s->labels[3 * r + 2])) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%d: a second '%s' row for job '%s' / '%s'",
                              name, line, resource_names[r], f[1], f[5]);
            goto fail;
        }
        for (int k = 0; k < 3; k++) s->labels[3 * r + k] = v[k];
    }
    free(buf);
    return DP_OK;
fail:
    free(buf);
    dp_dataset_free(ds);
    return st;
}

enum dp_status dp_dataset_load_csv(const char *path, const char *kind, struct dp_dataset *ds,
                                   struct dp_error *err) {
    char *text = NULL;
    size_t len = 0;
    dp_dataset_init(ds, NULL);
    static const struct dp_read_spec spec = {"DriplePerf CSV", CSV_MAX_BYTES, true, NULL, NULL};
    enum dp_status st = dp_file_read(path, &spec, &text, &len, err);
    if (st) return st;
    const char *name = dp_file_name(path);
    if (len == 0) st = dp_error_set(err, DP_ERR_PARSE, "%s: empty file", name);
    else st = dp_dataset_parse_csv(text, len, name, kind, ds, err);
    free(text);
    return st;
}

static void csv_put(FILE *f, const char *s, bool last) {
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

enum dp_status dp_dataset_save_csv(const struct dp_dataset *ds, const char *path,
                                   struct dp_error *err) {
    struct dp_out *o = NULL;
    enum dp_status st = dp_out_open(path, &o, err);
    if (st) return st;
    FILE *f = dp_out_stream(o);
    for (int c = 0; c < CSV_N_COLS; c++) csv_put(f, csv_header[c], c == CSV_N_COLS - 1);
    for (int i = 0; i < ds->n_samples; i++) {
        const struct dp_sample *s = &ds->samples[i];
        char hyper[64];
        if (s->job.hyper[0]) snprintf(hyper, sizeof hyper, "%s", s->job.hyper);
        else if (s->batch > 0) snprintf(hyper, sizeof hyper, "batch=%lld", (long long)s->batch);
        else hyper[0] = '\0';
        const char *gpu = s->job.gpu[0] ? s->job.gpu : ds->setting;
        for (int r = 0; r < 4; r++) {
            const double *l = &s->labels[3 * r];
            if (isnan(l[0]) && isnan(l[1]) && isnan(l[2])) continue;
            csv_put(f, gpu, false);
            csv_put(f, s->model ? s->model : (s->graph ? s->graph : ""), false);
            csv_put(f, s->job.data_set, false);
            csv_put(f, s->job.sync, false);
            csv_put(f, hyper, false);
            csv_put(f, s->job.job_name, false);
            csv_put(f, resource_names[r], false);
            for (int k = 0; k < 3; k++) {
                if (!isnan(l[k])) fprintf(f, "%.9g", l[k]);
                fputc(k == 2 ? '\n' : ',', f);
            }
        }
    }
    return dp_out_commit(o, err);
}
