/* json_out.c: the front ends' JSON documents (dp/json_out.h): a cJSON tree built member by
 * member (numbers stored as raw text in the one number format) and printed on one line with
 * ": " and ", " separators, which cJSON's own printers do not offer. */
#include "dp/json_out.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "dp/files.h"

#define JW_MAX_DEPTH 32

struct dp_jw {
    cJSON *root;
    cJSON *open[JW_MAX_DEPTH]; /* open[0] = root; open[depth] = the current container (NULL:
                                  one that could not be added) */
    int    depth;
    bool   nomem;
    FILE  *stream;      /* dp_jw_new_stream: where finished root elements go, else NULL */
    const char *stream_name;
    bool   streamed;    /* an element was written already */
};

/* Replaces the locale's decimal point in buf by '.' (JSON's). */
static void c_decimal_point(char *buf) {
    const char *dp = localeconv()->decimal_point;
    if (!dp || !dp[0] || (dp[0] == '.' && !dp[1])) return;
    size_t len = strlen(dp);
    char *p = strstr(buf, dp);
    if (!p) return;
    *p = '.';
    memmove(p + 1, p + len, strlen(p + len) + 1);
}

/* Whether text reads back as v (as a float when is_float). */
static bool reads_back(const char *text, double v, bool is_float) {
    return is_float ? strtof(text, NULL) == (float)v : strtod(text, NULL) == v;
}

/* The shortest digits that read back as v (at most 17, 9 for a float), written as JavaScript
 * writes numbers: plain decimals for 1e-7 <= |v| < 1e21 ("80", "0.001", "1281167"), exponent
 * form beyond ("1e+21"). */
static void shortest_text(double v, bool is_float, char *buf, size_t n) {
    if (!isfinite(v)) {
        snprintf(buf, n, "null");
        return;
    }
    char e[48];
    int max = is_float ? 9 : 17, digits = 1;
    for (; digits < max; digits++) {
        snprintf(e, sizeof e, "%.*e", digits - 1, v);
        if (reads_back(e, v, is_float)) break;
    }
    snprintf(e, sizeof e, "%.*e", digits - 1, v); /* "-d.ddde+XX" in any locale's digits */
    char mant[24];
    int nm = 0, exp10 = 0;
    const char *p = e;
    bool neg = *p == '-';
    for (p += neg; *p && *p != 'e' && *p != 'E'; p++)
        if (*p >= '0' && *p <= '9' && nm < (int)sizeof mant - 1) mant[nm++] = *p;
    mant[nm] = '\0';
    if (*p) exp10 = atoi(p + 1);
    while (nm > 1 && mant[nm - 1] == '0') mant[--nm] = '\0'; /* 8.0e+01 -> "8" */
    if (v == 0 || exp10 < -7 || exp10 >= 21) {
        snprintf(buf, n, "%.*g", digits, v);
        c_decimal_point(buf);
        return;
    }
    char out[64];
    int k = 0;
    if (neg) out[k++] = '-';
    if (exp10 < 0) { /* 0.000ddd */
        out[k++] = '0';
        out[k++] = '.';
        for (int z = 0; z < -exp10 - 1; z++) out[k++] = '0';
        for (int i = 0; i < nm; i++) out[k++] = mant[i];
    } else { /* ddd[000][.ddd] */
        for (int i = 0; i <= exp10; i++) out[k++] = i < nm ? mant[i] : '0';
        if (nm > exp10 + 1) {
            out[k++] = '.';
            for (int i = exp10 + 1; i < nm; i++) out[k++] = mant[i];
        }
    }
    out[k] = '\0';
    snprintf(buf, n, "%s", out);
}

void dp_json_num_text(double v, char *buf, size_t n) { shortest_text(v, false, buf, n); }

static struct dp_jw *jw_new(cJSON *root) {
    struct dp_jw *w = root ? calloc(1, sizeof *w) : NULL;
    if (!w) {
        cJSON_Delete(root);
        return NULL;
    }
    w->root = w->open[0] = root;
    return w;
}

struct dp_jw *dp_jw_new(void) { return jw_new(cJSON_CreateObject()); }

struct dp_jw *dp_jw_new_array(void) { return jw_new(cJSON_CreateArray()); }

struct dp_jw *dp_jw_new_stream(FILE *f, const char *name) {
    struct dp_jw *w = dp_jw_new_array();
    if (!w) return NULL;
    w->stream = f;
    w->stream_name = name;
    fputc('[', f);
    return w;
}

static void put_value(FILE *f, const cJSON *v);

/* In a stream, writes the root's finished elements and frees them. */
static void flush_root(struct dp_jw *w) {
    if (!w->stream || w->depth > 0) return;
    cJSON *c;
    while ((c = w->root->child)) {
        if (w->streamed) fputs(", ", w->stream);
        put_value(w->stream, c);
        w->streamed = true;
        cJSON_Delete(cJSON_DetachItemViaPointer(w->root, c));
    }
}

void dp_jw_free(struct dp_jw *w) {
    if (!w) return;
    cJSON_Delete(w->root);
    free(w);
}

/* Adds item (NULL: an allocation failed) to the current container; false (item freed) when it
 * could not be added. */
static bool add(struct dp_jw *w, const char *key, cJSON *item) {
    if (!w) {
        cJSON_Delete(item);
        return false;
    }
    cJSON *c = w->open[w->depth];
    bool ok = item && c && (cJSON_IsArray(c) ? cJSON_AddItemToArray(c, item)
                                        : (DP_ASSERT(key), cJSON_AddItemToObject(c, key, item)));
    if (!ok) {
        cJSON_Delete(item);
        w->nomem = true;
    }
    if (ok && !cJSON_IsObject(item) && !cJSON_IsArray(item)) flush_root(w);
    return ok;
}

static void add_raw(struct dp_jw *w, const char *key, const char *text) {
    add(w, key, cJSON_CreateRaw(text));
}

void dp_jw_num(struct dp_jw *w, const char *key, double v) {
    char buf[32];
    dp_json_num_text(v, buf, sizeof buf);
    add_raw(w, key, buf);
}

void dp_jw_float(struct dp_jw *w, const char *key, float v) {
    char buf[32];
    shortest_text(v, true, buf, sizeof buf);
    add_raw(w, key, buf);
}

void dp_jw_fixed(struct dp_jw *w, const char *key, double v, int decimals) {
    DP_ASSERT(decimals >= 0 && decimals <= 9);
    double scale = pow(10.0, decimals);
    dp_jw_num(w, key, isfinite(v) && fabs(v) < 1e15 ? round(v * scale) / scale : v);
}

void dp_jw_int(struct dp_jw *w, const char *key, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    add_raw(w, key, buf);
}

void dp_jw_str(struct dp_jw *w, const char *key, const char *s) {
    add(w, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

void dp_jw_bool(struct dp_jw *w, const char *key, bool v) { add(w, key, cJSON_CreateBool(v)); }

void dp_jw_null(struct dp_jw *w, const char *key) { add(w, key, cJSON_CreateNull()); }

static void open_container(struct dp_jw *w, const char *key, cJSON *c) {
    if (!w) {
        cJSON_Delete(c);
        return;
    }
    DP_ASSERT(w->depth + 1 < JW_MAX_DEPTH);
    /* a container that could not be added is NULL here: its members are dropped (printing
     * reports out of memory), and the opens and ends still pair up */
    w->open[w->depth + 1] = add(w, key, c) ? c : NULL;
    w->depth++;
}

void dp_jw_object(struct dp_jw *w, const char *key) { open_container(w, key, cJSON_CreateObject()); }

void dp_jw_array(struct dp_jw *w, const char *key) { open_container(w, key, cJSON_CreateArray()); }

void dp_jw_end(struct dp_jw *w) {
    if (!w) return;
    DP_ASSERT(w->depth > 0);
    w->depth--;
    flush_root(w);
}

static void put_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void put_value(FILE *f, const cJSON *v) {
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        bool obj = cJSON_IsObject(v);
        fputc(obj ? '{' : '[', f);
        for (const cJSON *c = v->child; c; c = c->next) {
            if (c != v->child) fputs(", ", f);
            if (obj) {
                put_string(f, c->string);
                fputs(": ", f);
            }
            put_value(f, c);
        }
        fputc(obj ? '}' : ']', f);
    } else if (cJSON_IsRaw(v)) {
        fputs(v->valuestring, f);
    } else if (cJSON_IsString(v)) {
        put_string(f, v->valuestring);
    } else if (cJSON_IsBool(v)) {
        fputs(cJSON_IsTrue(v) ? "true" : "false", f);
    } else {
        fputs("null", f);
    }
}

enum dp_status dp_jw_print(const struct dp_jw *w, FILE *f, const char *name,
                           struct dp_error *err) {
    if (!w || w->nomem) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    if (w->stream) {
        DP_ASSERT(f == w->stream && w->depth == 0);
        fputc(']', f);
    } else {
        put_value(f, w->root);
    }
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f))
        return dp_error_set(err, DP_ERR_IO, "%s: cannot write: %s", name, strerror(errno));
    return DP_OK;
}

enum dp_status dp_jw_save(const struct dp_jw *w, const char *path, struct dp_error *err) {
    if (!w || w->nomem) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
    struct dp_out *o = NULL;
    enum dp_status st = dp_out_open(path, &o, err);
    if (st) return st;
    if ((st = dp_jw_print(w, dp_out_stream(o), path, err))) {
        dp_out_discard(o);
        return st;
    }
    return dp_out_commit(o, err);
}
