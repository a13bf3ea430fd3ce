/* json_util.c: file reading, JSON parsing with line/column errors, and typed field access that
 * names the JSON path of whatever is wrong. */
#include "json_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when text ends inside a string or an unclosed object or array: a truncated file, whatever
 * place cJSON's error pointer names. */
static bool unbalanced(const char *text, size_t len) {
    long depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return in_str || depth > 0;
}

/* The object and array nesting depth at `at` (strings skipped): cJSON refuses a value nested
 * deeper than CJSON_NESTING_LIMIT, which its error pointer alone does not tell. */
static long depth_at(const char *text, const char *at) {
    long depth = 0;
    bool in_str = false;
    for (const char *q = text; q < at; q++) {
        if (in_str) {
            if (*q == '\\') q++;
            else if (*q == '"') in_str = false;
        } else if (*q == '"') {
            in_str = true;
        } else if (*q == '{' || *q == '[') {
            depth++;
        } else if (*q == '}' || *q == ']') {
            depth--;
        }
    }
    return depth;
}

static int cmp_key(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Finds an object that names one key twice anywhere under node (cJSON keeps both and every
 * lookup sees only the first: the second would be ignored silently). Writes the object's JSON
 * path to path and the key to *dup; false when there is none or memory ran out (*nomem). */
static bool find_duplicate_key(const cJSON *node, char *path, size_t cap, const char **dup,
                               bool *nomem) {
    size_t len = strlen(path);
    if (cJSON_IsObject(node)) {
        int n = cJSON_GetArraySize(node);
        if (n > 1) {
            const char **keys = malloc((size_t)n * sizeof *keys);
            if (!keys) {
                *nomem = true;
                return false;
            }
            int k = 0;
            for (const cJSON *c = node->child; c; c = c->next) keys[k++] = c->string;
            qsort(keys, (size_t)k, sizeof *keys, cmp_key);
            for (int i = 1; i < k && !*dup; i++)
                if (!strcmp(keys[i - 1], keys[i])) *dup = keys[i];
            free(keys);
            if (*dup) return true;
        }
        for (const cJSON *c = node->child; c; c = c->next) {
            snprintf(path + len, cap - len, ".%s", c->string);
            if (find_duplicate_key(c, path, cap, dup, nomem)) return true;
        }
    } else if (cJSON_IsArray(node)) {
        int i = 0;
        for (const cJSON *c = node->child; c; c = c->next, i++) {
            snprintf(path + len, cap - len, "[%d]", i);
            if (find_duplicate_key(c, path, cap, dup, nomem)) return true;
        }
    }
    path[len] = '\0';
    return false;
}

/* Line and column of offset `at` in text, 1-based. */
static void line_col(const char *text, size_t at, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < at; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* What cJSON would accept but driple must not, found before cJSON allocates anything: a NUL
 * byte, or a \u0000 escape inside a string (cJSON would cut the string there silently), and
 * more values than DP_JSON_MAX_VALUES (the parsed tree's memory cap). Each value but the root
 * follows a comma or an opening bracket, so those bound the count. */
static enum dp_status prescan(const char *text, size_t len, const char *name,
                              struct dp_error *err) {
    size_t values = 1;
    bool in_str = false;
    int line, col;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\0') {
            line_col(text, i, &line, &col);
            return dp_error_set(err, DP_ERR_PARSE, "%s:%d:%d: a NUL byte (not JSON text)", name,
                                line, col);
        }
        if (in_str) {
            if (c == '\\' && i + 1 < len) {
                if (text[i + 1] == 'u' && len - i >= 6 && !memcmp(text + i + 2, "0000", 4)) {
                    line_col(text, i, &line, &col);
                    return dp_error_set(err, DP_ERR_PARSE,
                                        "%s:%d:%d: \\u0000 (a NUL character) inside a string: "
                                        "names and values cannot hold one", name, line, col);
                }
                i++;
            } else if (c == '"') {
                in_str = false;
            }
        } else if (c == '"') {
            in_str = true;
        } else if (c == ',' || c == '[' || c == '{') {
            values++;
        }
    }
    if (values > DP_JSON_MAX_VALUES)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: more than %d JSON values: over driple's memory cap for one "
                            "file", name, DP_JSON_MAX_VALUES);
    return DP_OK;
}

enum dp_status dp_json_parse(const char *text, size_t len, const char *name, cJSON **out,
                             struct dp_error *err) {
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) { /* a UTF-8 byte-order mark */
        text += 3;
        len -= 3;
    }
    if (len == 0) return dp_error_set(err, DP_ERR_PARSE, "%s: empty file", name);
    enum dp_status pre = prescan(text, len, name, err);
    if (pre) return pre;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root) {
        const char *p = end ? end : text + len;
        while (p < text + len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
        if (p == text + len || *p == '\0') {
            char path[256] = "$";
            const char *dup = NULL;
            bool nomem = false;
            if (find_duplicate_key(root, path, sizeof path, &dup, &nomem) || nomem) {
                enum dp_status st =
                    nomem ? dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name)
                          : dp_error_set(err, DP_ERR_PARSE, "%s:%s.%s: listed twice", name, path,
                                         dup);
                cJSON_Delete(root);
                return st;
            }
            *out = root;
            return DP_OK;
        }
        cJSON_Delete(root);
        int line = 1, col = 1;
        for (const char *q = text; q < p; q++) {
            if (*q == '\n') { line++; col = 1; } else col++;
        }
        return dp_error_set(err, DP_ERR_PARSE, "%s:%d:%d: text after the end of the JSON value",
                            name, line, col);
    }
    /* The error pointer is cJSON's global: read it at once. */
    const char *at = cJSON_GetErrorPtr();
    if (!at || at < text || at > text + len) at = end ? end : text + len;
    int line = 1, col = 1;
    for (const char *p = text; p < at; p++) {
        if (*p == '\n') { line++; col = 1; } else col++;
    }
    size_t rest = (size_t)(text + len - at);
    if (rest == 0)
        return dp_error_set(err, DP_ERR_PARSE, "%s:%d:%d: JSON ends early (truncated file?)", name,
                            line, col);
    if ((*at == '{' || *at == '[') && depth_at(text, at) >= CJSON_NESTING_LIMIT)
        return dp_error_set(err, DP_ERR_PARSE, "%s:%d:%d: JSON nested deeper than %d levels", name,
                            line, col, CJSON_NESTING_LIMIT);
    /* A file that is not JSON at all (a path in a setting list pointing at /etc/passwd) is said
     * to be so; quoting it would show its first bytes to whoever reads the message. */
    const char *first = text;
    while (first < text + len && strchr(" \t\r\n", *first)) first++;
    if (first == at && *at != '{' && *at != '[')
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s:%d:%d: not JSON (a driple file starts with '{')", name, line, col);
    char near[24];
    size_t k = 0;
    for (; k < sizeof near - 1 && k < rest && at[k] != '\n'; k++) near[k] = at[k];
    near[k] = '\0';
    return dp_error_set(err, DP_ERR_PARSE, "%s:%d:%d: JSON syntax error near '%s'%s", name, line,
                        col, near,
                        unbalanced(text, len)
                            ? " (the file ends inside an object or array: truncated?)"
                            : "");
}

enum dp_status dp_json_load(const char *path, const struct dp_read_spec *spec, cJSON **out,
                            struct dp_error *err) {
    char *text = NULL;
    size_t len = 0;
    enum dp_status st = dp_file_read(path, spec, &text, &len, err);
    if (st) return st;
    st = dp_json_parse(text, len, dp_file_name(path), out, err);
    free(text);
    return st;
}

enum dp_status dp_json_check_format(const cJSON *obj, const char *want, const char *name,
                                    struct dp_error *err) {
    if (!cJSON_IsObject(obj))
        return dp_error_set(err, DP_ERR_INVALID, "%s:$: expected a JSON object", name);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, "format");
    if (!cJSON_IsString(f))
        return dp_error_set(err, DP_ERR_INVALID, "%s:$.format: missing (expected \"%s\")", name, want);
    if (strcmp(f->valuestring, want))
        return dp_error_set(err, DP_ERR_INVALID, "%s:$.format: \"%s\", expected \"%s\"", name,
                            f->valuestring, want);
    return DP_OK;
}

static const cJSON *member(const cJSON *obj, const char *key) {
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static enum dp_status missing(const char *name, const char *path, const char *key,
                              struct dp_error *err) {
    return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: missing", name, path, key);
}

enum dp_status dp_json_get_number(const cJSON *obj, const char *key, bool optional,
                                  const char *name, const char *path, double *out,
                                  struct dp_error *err) {
    const cJSON *v = member(obj, key);
    if (!v || cJSON_IsNull(v)) return optional ? DP_OK : missing(name, path, key, err);
    if (!cJSON_IsNumber(v))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: expected a number", name, path, key);
    if (!isfinite(v->valuedouble))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: not a finite number", name, path, key);
    *out = v->valuedouble;
    return DP_OK;
}

enum dp_status dp_json_get_int(const cJSON *obj, const char *key, bool optional, int64_t lo,
                               int64_t hi, const char *name, const char *path, int64_t *out,
                               struct dp_error *err) {
    double d = 0;
    const cJSON *v = member(obj, key);
    if (!v || cJSON_IsNull(v)) return optional ? DP_OK : missing(name, path, key, err);
    enum dp_status st = dp_json_get_number(obj, key, optional, name, path, &d, err);
    if (st) return st;
    if (d != floor(d) || d < (double)lo || d > (double)hi)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: %g is not an integer in [%lld, %lld]",
                            name, path, key, d, (long long)lo, (long long)hi);
    *out = (int64_t)d;
    return DP_OK;
}

enum dp_status dp_json_get_string(const cJSON *obj, const char *key, bool optional,
                                  const char *name, const char *path, const char **out,
                                  struct dp_error *err) {
    const cJSON *v = member(obj, key);
    if (!v || cJSON_IsNull(v)) return optional ? DP_OK : missing(name, path, key, err);
    if (!cJSON_IsString(v))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: expected a string", name, path, key);
    *out = v->valuestring;
    return DP_OK;
}

enum dp_status dp_json_copy_string(const cJSON *obj, const char *key, bool optional,
                                   const char *name, const char *path, char *dst, size_t cap,
                                   struct dp_error *err) {
    const char *s = NULL;
    enum dp_status st = dp_json_get_string(obj, key, optional, name, path, &s, err);
    if (st || !s) return st;
    size_t n = strlen(s);
    if (n >= cap)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: longer than %zu characters", name,
                            path, key, cap - 1);
    memcpy(dst, s, n + 1);
    return DP_OK;
}

enum dp_status dp_json_get_array(const cJSON *obj, const char *key, bool optional,
                                 const char *name, const char *path, const cJSON **out,
                                 struct dp_error *err) {
    const cJSON *v = member(obj, key);
    if (!v || cJSON_IsNull(v)) {
        *out = NULL;
        return optional ? DP_OK : missing(name, path, key, err);
    }
    if (!cJSON_IsArray(v))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: expected an array", name, path, key);
    *out = v;
    return DP_OK;
}

enum dp_status dp_json_get_object(const cJSON *obj, const char *key, bool optional,
                                  const char *name, const char *path, const cJSON **out,
                                  struct dp_error *err) {
    const cJSON *v = member(obj, key);
    if (!v || cJSON_IsNull(v)) {
        *out = NULL;
        return optional ? DP_OK : missing(name, path, key, err);
    }
    if (!cJSON_IsObject(v))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: expected an object", name, path, key);
    *out = v;
    return DP_OK;
}

enum dp_status dp_json_save(const cJSON *root, const char *path, bool pretty, struct dp_error *err) {
    char *text = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    if (!text) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory writing JSON", path);
    size_t n = strlen(text);
    text[n] = '\n'; /* the terminating NUL becomes the final line end */
    enum dp_status st = dp_out_write_all(path, text, n + 1, err);
    free(text);
    return st;
}

cJSON *dp_json_number(double v) {
    /* %.9g round-trips float32; keep doubles exact when they need it. */
    if (!isfinite(v)) return cJSON_CreateNull();
    char buf[40];
    snprintf(buf, sizeof buf, "%.9g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
}

bool dp_json_add_number(cJSON *o, const char *key, double v) {
    cJSON *n = dp_json_number(v);
    if (!n) return false;
    if (!cJSON_AddItemToObject(o, key, n)) {
        cJSON_Delete(n);
        return false;
    }
    return true;
}

bool dp_json_append(cJSON *a, cJSON *item) {
    if (!item) return false;
    if (!cJSON_AddItemToArray(a, item)) {
        cJSON_Delete(item);
        return false;
    }
    return true;
}

static int cmp_edge(const void *a, const void *b) {
    const int *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

enum dp_status dp_json_read_edges(const cJSON *edges, int n_groups, const char *name,
                                  const char *path, int *dst, int *n_edges, struct dp_error *err) {
    int e = 0;
    const cJSON *edge;
    cJSON_ArrayForEach(edge, edges) {
        if (!cJSON_IsArray(edge) || cJSON_GetArraySize(edge) != 2 ||
            !cJSON_IsNumber(edge->child) || !cJSON_IsNumber(edge->child->next))
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s[%d]: expected [i, j]", name, path, e);
        double a = edge->child->valuedouble, b = edge->child->next->valuedouble;
        if (a != floor(a) || b != floor(b) || a < 0 || b < 0 || a >= n_groups || b >= n_groups)
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s[%d]: [%g, %g] is not a pair of group indices in [0, %d)",
                                name, path, e, a, b, n_groups);
        if (a == b)
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s[%d]: self loop on group %g", name,
                                path, e, a);
        dst[2 * e] = (int)(a < b ? a : b);
        dst[2 * e + 1] = (int)(a < b ? b : a);
        e++;
    }
    qsort(dst, (size_t)e, 2 * sizeof *dst, cmp_edge);
    int k = 0;
    for (int j = 0; j < e; j++) {
        if (k > 0 && dst[2 * k - 2] == dst[2 * j] && dst[2 * k - 1] == dst[2 * j + 1]) continue;
        dst[2 * k] = dst[2 * j];
        dst[2 * k + 1] = dst[2 * j + 1];
        k++;
    }
    *n_edges = k;
    return DP_OK;
}
