/* inspector_json.c: the driple-inspector/1 file: architecture, outputs {name, unit, scale,
 * transform ("linear" when absent), offset (0), span (1)},
 * setting, training provenance, and parameters {name, shape, data: little-endian float32 in
 * base64}. A transferred inspector may store only the parameters that differ from its base and
 * name the base file (relative to its own directory); loading starts from the base's weights. */
#include "dp/inspector.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspector_impl.h"
#include "core/json_util.h"

#define INSPECTOR_MAX_BYTES ((size_t)256 << 20)
static const struct dp_read_spec inspector_spec = {"inspector", INSPECTOR_MAX_BYTES, true, NULL,
                                                   NULL};
#define INSPECTOR_MAX_DEPTH 8
#define INSPECTOR_MAX_WEIGHT 1e6
#define INSPECTOR_MAX_SCALE  1e12

/* ---- base64 (RFC 4648, padded) ---- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Encodes n bytes; the caller frees the NUL-terminated result. NULL when out of memory. */
static char *b64_encode(const unsigned char *p, size_t n) {
    char *s = malloc((n + 2) / 3 * 4 + 1), *o = s;
    if (!s) return NULL;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *o++ = b64_alphabet[v >> 18 & 63];
        *o++ = b64_alphabet[v >> 12 & 63];
        *o++ = b64_alphabet[v >> 6 & 63];
        *o++ = b64_alphabet[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);
        *o++ = b64_alphabet[v >> 18 & 63];
        *o++ = b64_alphabet[v >> 12 & 63];
        *o++ = i + 1 < n ? b64_alphabet[v >> 6 & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return s;
}

/* Decodes s into exactly `want` bytes at out. Returns -1 on success, else the offending
 * character's offset (or the string length when the decoded size is wrong; *got says it). */
static long b64_decode(const char *s, unsigned char *out, size_t want, size_t *got) {
    size_t len = strlen(s), k = 0, pads = 0;
    *got = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '=' && i + 2 >= len && (i + 1 == len || s[i + 1] == '=')) { pads++; continue; }
        if (b64_value((unsigned char)s[i]) < 0) return (long)i;
    }
    if (len % 4) {
        *got = len * 3 / 4 - pads;
        return (long)len;
    }
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        int pad = 0;
        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)s[i + j];
            if (c == '=' && i + 4 == len && j >= 2) {
                if (j == 2 && s[i + 3] != '=') return (long)(i + j);
                v[j] = 0;
                pad++;
                continue;
            }
            if ((v[j] = b64_value(c)) < 0) return (long)(i + j);
        }
        unsigned x = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
        unsigned char b[3] = {(unsigned char)(x >> 16), (unsigned char)(x >> 8), (unsigned char)x};
        for (int j = 0; j < 3 - pad; j++) {
            if (k < want) out[k] = b[j];
            k++;
        }
    }
    *got = k;
    return k == want ? -1 : (long)len;
}

static void put_f32le(unsigned char *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    p[0] = (unsigned char)u;
    p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16);
    p[3] = (unsigned char)(u >> 24);
}

static float get_f32le(const unsigned char *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The floats of v, little-endian, in base64; the caller frees. NULL when out of memory. */
char *dp_b64_floats(const float *v, size_t n) {
    unsigned char *bytes = malloc(n * 4 + 1);
    if (!bytes) return NULL;
    for (size_t i = 0; i < n; i++) put_f32le(bytes + 4 * i, v[i]);
    char *s = b64_encode(bytes, n * 4);
    free(bytes);
    return s;
}

enum dp_status dp_json_get_b64_floats(const cJSON *o, const char *key, size_t n,
                                      const char *name, const char *path, float *out,
                                      struct dp_error *err) {
    const char *s = NULL;
    enum dp_status st = dp_json_get_string(o, key, false, name, path, &s, err);
    if (st) return st;
    unsigned char *bytes = malloc(n * 4 + 1);
    if (!bytes) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    size_t got = 0;
    long bad = b64_decode(s, bytes, n * 4, &got);
    for (size_t i = 0; bad < 0 && i < n; i++) out[i] = get_f32le(bytes + 4 * i);
    free(bytes);
    if (bad >= 0)
        return dp_error_set(err, DP_ERR_PARSE, "%s:%s.%s: not %zu float32 values in base64 (at "
                            "character %ld)", name, path, key, n, bad);
    return DP_OK;
}

/* ---- paths ---- */

/* The directory part of path ("." when none) into buf. */
static void dir_of(const char *path, char *buf, size_t n) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, n, ".");
    else if (slash == path) snprintf(buf, n, "/");
    else snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

/* rel resolved against the directory of `from` (kept when absolute). */
/* rel against the directory of from into buf; false when the result does not fit in n. */
static bool resolve(const char *from, const char *rel, char *buf, size_t n) {
    char dir[PATH_MAX];
    int w;
    if (rel[0] == '/') {
        w = snprintf(buf, n, "%s", rel);
    } else {
        dir_of(from, dir, sizeof dir);
        w = !strcmp(dir, ".") ? snprintf(buf, n, "%s", rel) : snprintf(buf, n, "%s/%s", dir, rel);
    }
    return w >= 0 && (size_t)w < n;
}

/* The path of `target` relative to the directory of `from` (that directory and target must
 * exist) into buf, component by component: "../" per directory of from's not shared. */
static bool relative_to(const char *from, const char *target, char *buf, size_t n) {
    char dir[PATH_MAX], adir[PATH_MAX], atgt[PATH_MAX];
    dir_of(from, dir, sizeof dir);
    if (!realpath(dir, adir) || !realpath(target, atgt)) return false;
    /* Common leading components: positions where both have '/' (or adir ends) at equal text. */
    size_t common = 0, i = 0;
    for (;;) {
        bool end_d = adir[i] == '\0' || adir[i] == '/';
        bool end_t = atgt[i] == '/';
        if (end_d && end_t && i > 0) common = i;
        if (adir[i] == '\0' || adir[i] != atgt[i]) break;
        i++;
    }
    size_t ups = 0;
    if (!strcmp(adir, "/")) common = 0;
    else
        for (size_t j = common; adir[j]; j++)
            if (adir[j] == '/') ups++;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t u = 0; u < ups; u++) {
        if (used + 4 >= n) return false;
        memcpy(buf + used, "../", 4);
        used += 3;
    }
    int w = snprintf(buf + used, n - used, "%s", atgt + common + 1);
    return w >= 0 && (size_t)w < n - used;
}

void dp_path_resolve(const char *from, const char *rel, char *buf, size_t n) {
    resolve(from, rel, buf, n);
}

bool dp_path_relative(const char *from, const char *target, char *buf, size_t n) {
    return relative_to(from, target, buf, n);
}

/* ---- reading ---- */

static enum dp_status read_arch(const cJSON *o, const char *name, struct dp_arch *a,
                                struct dp_error *err) {
    enum dp_status st;
    const char *s = NULL;
    int64_t v;
    dp_arch_default(a);
    const char *P = "$.architecture";
    if ((st = dp_json_get_string(o, "layer", false, name, P, &s, err))) return st;
    if (!dp_layer_parse(s, &a->layer))
        return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:%s.layer: unknown layer type '%s'", name, P, s);
    struct { const char *key; int *dst; int64_t lo, hi; } ints[] = {
        {"n_feat", &a->n_feat, 1, 1 << 20},      {"hidden", &a->hidden, 1, 1 << 16},
        {"n_out", &a->n_out, 1, 1 << 16},        {"n_layers", &a->n_layers, 0, 1 << 20},
        {"max_layers", &a->max_layers, 0, 1 << 20}, {"heads", &a->heads, 0, 1 << 10},
        {"towers", &a->towers, 0, 1 << 10},      {"set2set_steps", &a->set2set_steps, 0, 1 << 20},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        v = *ints[i].dst;
        if ((st = dp_json_get_int(o, ints[i].key, true, ints[i].lo, ints[i].hi, name, P, &v, err)))
            return st;
        *ints[i].dst = (int)v;
    }
    s = NULL;
    if ((st = dp_json_get_string(o, "rule", true, name, P, &s, err))) return st;
    if (s && !dp_layer_rule_parse(s, &a->rule))
        return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:%s.rule: unknown layer rule '%s'", name, P, s);
    s = NULL;
    if ((st = dp_json_get_string(o, "features", true, name, P, &s, err))) return st;
    if (s && !dp_feat_parse(s, &a->feat))
        return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:%s.features: unknown transform '%s'", name, P, s);
    const cJSON *gru = cJSON_GetObjectItemCaseSensitive(o, "gru");
    if (gru) {
        if (!cJSON_IsBool(gru))
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.gru: expected true or false", name, P);
        a->gru = cJSON_IsTrue(gru);
    }
    const char *ro = NULL;
    if ((st = dp_json_get_string(o, "readout", true, name, P, &ro, err))) return st;
    if (ro && strcmp(ro, "set2set"))
        return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:%s.readout: '%s' (only set2set)", name, P, ro);
    int64_t depth = 3;
    if ((st = dp_json_get_int(o, "mlp_depth", true, 1, 64, name, P, &depth, err))) return st;
    if (depth != 3)
        return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:%s.mlp_depth: %lld (only 3)", name, P,
                            (long long)depth);
    /* The feature count is fixed by the grouped graph: the published three, or those and the
     * cost features; a model built for others cannot run. */
    if (a->n_feat != DP_N_FEATURES && a->n_feat != DP_N_FEATURES_MAX)
        return dp_error_set(err, DP_ERR_SHAPE,
                            "%s:%s.n_feat: %d input features, but grouped graphs have %d (or %d "
                            "with the cost features)", name, P, a->n_feat, DP_N_FEATURES,
                            DP_N_FEATURES_MAX);
    const char *keys[2] = {"feat_mean", "feat_std"};
    double *dst[2] = {a->feat_mean, a->feat_std};
    for (int k = 0; k < 2; k++) {
        const cJSON *arr;
        if ((st = dp_json_get_array(o, keys[k], true, name, P, &arr, err))) return st;
        if (!arr) continue;
        if (cJSON_GetArraySize(arr) != a->n_feat)
            return dp_error_set(err, DP_ERR_SHAPE, "%s:%s.%s: %d values, expected %d", name, P,
                                keys[k], cJSON_GetArraySize(arr), a->n_feat);
        for (int f = 0; f < a->n_feat; f++) {
            const cJSON *x = cJSON_GetArrayItem(arr, f);
            if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
                return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s[%d]: expected a finite number",
                                    name, P, keys[k], f);
            dst[k][f] = x->valuedouble;
        }
    }
    if (a->n_out != DP_N_OUTPUTS)
        return dp_error_set(err, DP_ERR_SHAPE, "%s:%s.n_out: %d outputs, expected %d", name, P,
                            a->n_out, DP_N_OUTPUTS);
    if ((st = dp_arch_check(a, err))) {
        dp_error_prefix(err, P);
        dp_error_prefix(err, name);
        return st;
    }
    return DP_OK;
}

static enum dp_status read_eval(const cJSON *o, const char *name, const char *path,
                                struct dp_eval *e, struct dp_error *err) {
    const char *keys[3] = {"mape", "rmse", "r2"};
    double *dst[3] = {e->mape, e->rmse, e->r2};
    for (int k = 0; k < 3; k++) {
        const cJSON *arr;
        enum dp_status st = dp_json_get_array(o, keys[k], true, name, path, &arr, err);
        if (st) return st;
        if (!arr) continue;
        if (cJSON_GetArraySize(arr) != DP_N_OUTPUTS)
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: %d values, expected %d", name,
                                path, keys[k], cJSON_GetArraySize(arr), DP_N_OUTPUTS);
        for (int i = 0; i < DP_N_OUTPUTS; i++) {
            const cJSON *x = cJSON_GetArrayItem(arr, i);
            if (cJSON_IsNull(x)) dst[k][i] = NAN;
            else if (cJSON_IsNumber(x)) dst[k][i] = x->valuedouble;
            else
                return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s[%d]: expected a number or null",
                                    name, path, keys[k], i);
        }
    }
    return DP_OK;
}

static enum dp_status read_provenance(const cJSON *o, const char *name, struct dp_provenance *p,
                                      struct dp_error *err) {
    const char *P = "$.training";
    enum dp_status st;
    int64_t v;
    if ((st = dp_json_copy_string(o, "origin", true, name, P, p->origin, sizeof p->origin, err)) ||
        (st = dp_json_copy_string(o, "base", true, name, P, p->base, sizeof p->base, err)) ||
        (st = dp_json_copy_string(o, "base_id", true, name, P, p->base_id, sizeof p->base_id,
                                  err)) ||
        (st = dp_json_copy_string(o, "mode", true, name, P, p->mode, sizeof p->mode, err)) ||
        (st = dp_json_copy_string(o, "data", true, name, P, p->data, sizeof p->data, err)) ||
        (st = dp_json_copy_string(o, "split", true, name, P, p->split, sizeof p->split, err)) ||
        (st = dp_json_get_number(o, "seconds", true, name, P, &p->seconds, err)))
        return st;
    struct { const char *key; int *dst; } ints[] = {
        {"epochs", &p->epochs}, {"n_train", &p->n_train}, {"n_val", &p->n_val}, {"n_test", &p->n_test}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        v = *ints[i].dst;
        if ((st = dp_json_get_int(o, ints[i].key, true, 0, INT32_MAX, name, P, &v, err))) return st;
        *ints[i].dst = (int)v;
    }
    const char *origins[] = {"scratch", "transfer", "imported"};
    bool ok = false;
    for (int i = 0; i < 3; i++) ok |= !strcmp(p->origin, origins[i]);
    if (!ok)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:%s.origin: '%s' is not scratch, transfer or imported", name, P, p->origin);
    const char *datas[] = {"", "simulated", "measured", "mixed", "published"};
    ok = false;
    for (int i = 0; i < 5; i++) ok |= !strcmp(p->data, datas[i]);
    if (!ok)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:%s.data: '%s' is not simulated, measured, mixed or published", name,
                            P, p->data);
    const cJSON *e;
    if ((st = dp_json_get_object(o, "val", true, name, P, &e, err))) return st;
    if (e && (st = read_eval(e, name, "$.training.val", &p->val, err))) return st;
    if ((st = dp_json_get_object(o, "test", true, name, P, &e, err))) return st;
    if (e && (st = read_eval(e, name, "$.training.test", &p->test, err))) return st;
    return DP_OK;
}

static bool arch_equal(const struct dp_arch *a, const struct dp_arch *b) {
    if (a->layer != b->layer || a->n_feat != b->n_feat || a->hidden != b->hidden ||
        a->n_out != b->n_out || a->rule != b->rule || a->n_layers != b->n_layers ||
        a->max_layers != b->max_layers || a->gru != b->gru || a->heads != b->heads ||
        a->towers != b->towers || a->set2set_steps != b->set2set_steps || a->feat != b->feat)
        return false;
    for (int f = 0; f < a->n_feat; f++)
        if (a->feat_mean[f] != b->feat_mean[f] || a->feat_std[f] != b->feat_std[f]) return false;
    return true;
}

/* Above this many weights, allocating and initialising the model costs seconds and gigabytes:
 * a small file declaring a huge architecture is refused first, by the weights its parameters'
 * base64 data can hold. Smaller models go on to the per-parameter checks, whose messages name
 * the parameter at fault. */
#define INSPECTOR_CHECK_WEIGHTS ((size_t)1 << 20)

static enum dp_status check_weight_count(const struct dp_arch *a, const cJSON *params,
                                         const char *name, struct dp_error *err) {
    size_t need = dp_arch_n_weights(a);
    if (need <= INSPECTOR_CHECK_WEIGHTS) return DP_OK;
    size_t have = 0; /* float32 values the base64 texts can decode to, at most */
    const cJSON *po;
    cJSON_ArrayForEach(po, params) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(po, "data");
        if (cJSON_IsString(d)) have += strlen(d->valuestring) / 4 * 3 / 4 + 1;
    }
    if (have >= need) return DP_OK;
    return dp_error_set(err, DP_ERR_SHAPE,
                        "%s:$.parameters: data for at most %zu weights, but the architecture "
                        "has %zu",
                        name, have, need);
}

static enum dp_status read_param(struct dp_model *m, const cJSON *o, int i, const char *name,
                                 bool *seen, struct dp_error *err) {
    char path[48];
    snprintf(path, sizeof path, "$.parameters[%d]", i);
    const char *pname = NULL, *data = NULL;
    const cJSON *shape;
    enum dp_status st;
    if (!cJSON_IsObject(o))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", name, path);
    if ((st = dp_json_get_string(o, "name", false, name, path, &pname, err)) ||
        (st = dp_json_get_array(o, "shape", false, name, path, &shape, err)) ||
        (st = dp_json_get_string(o, "data", false, name, path, &data, err)))
        return st;
    int idx = dp_model_find_param(m, pname);
    if (idx < 0)
        return dp_error_set(err, DP_ERR_NOT_FOUND, "%s:%s.name: '%s' is not a parameter of this %s model",
                            name, path, pname, dp_layer_name(dp_model_arch(m)->layer));
    if (seen[idx])
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.name: '%s' appears twice", name, path, pname);
    struct dp_param p;
    dp_model_param(m, idx, &p);
    int nd = cJSON_GetArraySize(shape);
    int64_t dims[4] = {0};
    bool match = nd == p.n_dims;
    if (nd > 4) match = false;
    for (int d = 0; d < nd && d < 4; d++) {
        const cJSON *x = cJSON_GetArrayItem(shape, d);
        if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) || x->valuedouble < 0 ||
            x->valuedouble > 1e12)
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.shape[%d]: expected a size", name, path, d);
        dims[d] = (int64_t)x->valuedouble;
        if (d < p.n_dims && dims[d] != p.shape[d]) match = false;
    }
    if (!match) {
        char want[64] = "", got[64] = "";
        size_t u = 0;
        for (int d = 0; d < p.n_dims; d++)
            u += (size_t)snprintf(want + u, sizeof want - u, "%s%lld", d ? ", " : "", (long long)p.shape[d]);
        u = 0;
        for (int d = 0; d < nd && d < 4 && u < sizeof got; d++)
            u += (size_t)snprintf(got + u, sizeof got - u, "%s%lld", d ? ", " : "", (long long)dims[d]);
        if (nd > 4 && u < sizeof got) snprintf(got + u, sizeof got - u, ", ... (%d dims)", nd);
        return dp_error_set(err, DP_ERR_SHAPE, "%s:%s.shape: [%s] for '%s', the model has [%s]",
                            name, path, got, pname, want);
    }
    size_t want_bytes = p.size * 4, got_bytes = 0;
    unsigned char *bytes = malloc(want_bytes + 1);
    if (!bytes) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    long bad = b64_decode(data, bytes, want_bytes, &got_bytes);
    if (bad >= 0) {
        free(bytes);
        if ((size_t)bad < strlen(data))
            return dp_error_set(err, DP_ERR_PARSE, "%s:%s.data: bad base64 at character %ld", name,
                                path, bad);
        return dp_error_set(err, DP_ERR_SHAPE,
                            "%s:%s.data: %zu bytes of base64 data for '%s', expected %zu (%zu float32)",
                            name, path, got_bytes, pname, want_bytes, p.size);
    }
    for (size_t k = 0; k < p.size; k++) {
        float f = get_f32le(bytes + 4 * k);
        if (!isfinite(f)) {
            free(bytes);
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.data[%zu]: %s weight in '%s'", name,
                                path, k, isnan(f) ? "NaN" : "infinite", pname);
        }
        /* Trained weights are small (weight decay); a huge one means a corrupt file, and it
         * would overflow the forward pass. */
        if (fabsf(f) > INSPECTOR_MAX_WEIGHT) {
            free(bytes);
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s.data[%zu]: weight %g in '%s' exceeds %g in magnitude (corrupt?)",
                                name, path, k, (double)f, pname, INSPECTOR_MAX_WEIGHT);
        }
        p.data[k] = f;
    }
    free(bytes);
    seen[idx] = true;
    return DP_OK;
}

/* The files being loaded, innermost first: a base naming one of them is a cycle. */
struct base_chain {
    char                     real[PATH_MAX]; /* realpath of the file; "" when unknown */
    int                      depth;
    const struct base_chain *up;
};

static enum dp_status load_at(const char *path, const struct base_chain *up,
                              struct dp_inspector **out, struct dp_error *err);

/* Whether the file at bpath is one of the chain's. */
static bool in_chain(const struct base_chain *c, const char *bpath) {
    char real[PATH_MAX];
    if (!realpath(bpath, real)) return false; /* a missing base fails when opened, named */
    for (; c; c = c->up)
        if (c->real[0] && !strcmp(c->real, real)) return true;
    return false;
}

/* Builds the inspector from a parsed file (takes root); `path` names it and anchors its base,
 * `up` lists the files whose base it is (NULL at the top). */
static enum dp_status from_root(cJSON *root, const char *path, const struct base_chain *up,
                                struct dp_inspector **out, struct dp_error *err) {
    struct dp_model *m = NULL;
    struct dp_inspector *base = NULL, *insp = NULL;
    bool *seen = NULL;
    enum dp_status st;
    const cJSON *arch_o, *outputs, *params, *training;
    const char *setting = "", *base_rel = NULL;
    struct dp_arch arch;
    if ((st = dp_json_check_format(root, "driple-inspector/1", path, err)) ||
        (st = dp_json_get_object(root, "architecture", false, path, "$", &arch_o, err)) ||
        (st = read_arch(arch_o, path, &arch, err)) ||
        (st = dp_json_get_array(root, "outputs", false, path, "$", &outputs, err)) ||
        (st = dp_json_get_array(root, "parameters", false, path, "$", &params, err)) ||
        (st = dp_json_get_object(root, "training", true, path, "$", &training, err)) ||
        (st = dp_json_get_string(root, "setting", true, path, "$", &setting, err)) ||
        (st = dp_json_get_string(root, "base", true, path, "$", &base_rel, err)))
        goto fail;
    if (cJSON_GetArraySize(outputs) != DP_N_OUTPUTS) {
        st = dp_error_set(err, DP_ERR_SHAPE, "%s:$.outputs: %d outputs, expected %d", path,
                          cJSON_GetArraySize(outputs), DP_N_OUTPUTS);
        goto fail;
    }
    if (base_rel) {
        char bpath[PATH_MAX];
        struct base_chain self = {.depth = up ? up->depth + 1 : 0, .up = up};
        if (!realpath(path, self.real)) self.real[0] = '\0'; /* parsed from memory */
        if (self.depth >= INSPECTOR_MAX_DEPTH) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:$.base: bases nest deeper than %d", path,
                              INSPECTOR_MAX_DEPTH);
            goto fail;
        }
        if (!resolve(path, base_rel, bpath, sizeof bpath)) {
            st = dp_error_set(err, DP_ERR_INVALID,
                              "%s:$.base: '%.64s...' (%zu characters) makes a path longer than "
                              "%d", path, base_rel, strlen(base_rel), PATH_MAX - 1);
            goto fail;
        }
        if (in_chain(&self, bpath)) {
            st = dp_error_set(err, DP_ERR_INVALID,
                              "%s:$.base: '%s' is this inspector or one based on it (a cycle)",
                              path, base_rel);
            goto fail;
        }
        struct dp_error berr = {0};
        if ((st = load_at(bpath, &self, &base, &berr))) {
            dp_error_set(err, st, "%s:$.base: cannot load base inspector: %s", path, berr.msg);
            goto fail;
        }
        if (!arch_equal(dp_model_arch(base->model), &arch)) {
            st = dp_error_set(err, DP_ERR_SHAPE, "%s:$.base: the base %s has another architecture",
                              path, bpath);
            goto fail;
        }
        if (!(m = dp_model_clone(base->model))) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
            goto fail;
        }
    } else if ((st = check_weight_count(&arch, params, path, err))) {
        goto fail;
    } else if ((st = dp_model_init(&arch, 0, &m, err))) {
        dp_error_prefix(err, path);
        goto fail;
    }
    int n_params = dp_model_n_params(m);
    if (!(seen = calloc((size_t)n_params + 1, sizeof *seen))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    int i = 0;
    const cJSON *po;
    cJSON_ArrayForEach(po, params) {
        if ((st = read_param(m, po, i, path, seen, err))) goto fail;
        i++;
    }
    if (!base)
        for (int k = 0; k < n_params; k++)
            if (!seen[k]) {
                struct dp_param p;
                dp_model_param(m, k, &p);
                st = dp_error_set(err, DP_ERR_NOT_FOUND, "%s:$.parameters: '%s' is missing", path, p.name);
                goto fail;
            }
    st = dp_inspector_init(m, &insp, err);
    m = NULL; /* owned by insp now, also on failure */
    if (st) goto fail;
    i = 0;
    const cJSON *oo;
    cJSON_ArrayForEach(oo, outputs) {
        char op[32];
        snprintf(op, sizeof op, "$.outputs[%d]", i);
        struct dp_output_meta *om = &insp->out[i];
        double scale = 1, offset = 0, span = 1;
        const char *tname = NULL;
        enum dp_out_transform tr = DP_OUT_LINEAR;
        if (!cJSON_IsObject(oo)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected {name, unit, scale}", path, op);
            goto fail;
        }
        char oname[32] = "";
        if ((st = dp_json_copy_string(oo, "name", true, path, op, oname, sizeof oname, err)) ||
            (st = dp_json_copy_string(oo, "unit", true, path, op, om->unit, sizeof om->unit,
                                      err)) ||
            (st = dp_json_get_number(oo, "scale", false, path, op, &scale, err)) ||
            (st = dp_json_get_string(oo, "transform", true, path, op, &tname, err)) ||
            (st = dp_json_get_number(oo, "offset", true, path, op, &offset, err)) ||
            (st = dp_json_get_number(oo, "span", true, path, op, &span, err)))
            goto fail;
        if (tname && !dp_out_transform_parse(tname, &tr)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.transform: '%s' is not linear or log",
                              path, op, tname);
            goto fail;
        }
        if (!isfinite(offset)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.offset: not a finite number", path, op);
            goto fail;
        }
        if (!(isfinite(span) && span > 0)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.span: %g (must be > 0)", path, op, span);
            goto fail;
        }
        if (strcmp(oname, om->name)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.name: '%s', expected '%s' (Driple order)",
                              path, op, oname, om->name);
            goto fail;
        }
        /* Scales are label maxima (ms, %, MB/s): far beyond 1e12 only a corrupt file goes. */
        if (!(isfinite(scale) && scale > 0 && scale <= INSPECTOR_MAX_SCALE)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.scale: %g (must be > 0 and <= %g)", path,
                              op, scale, INSPECTOR_MAX_SCALE);
            goto fail;
        }
        om->scale = scale;
        om->transform = tr;
        om->offset = offset;
        om->span = span;
        i++;
    }
    if (strlen(setting) >= sizeof insp->setting) {
        st = dp_error_set(err, DP_ERR_INVALID, "%s:$.setting: too long", path);
        goto fail;
    }
    snprintf(insp->setting, sizeof insp->setting, "%s", setting);
    if (training && (st = read_provenance(training, path, &insp->prov, err))) goto fail;
    if (base_rel) snprintf(insp->prov.base, sizeof insp->prov.base, "%s", base_rel);
    dp_inspector_refresh_key(insp);
    free(seen);
    dp_inspector_free(base);
    cJSON_Delete(root);
    *out = insp;
    return DP_OK;
fail:
    free(seen);
    dp_model_free(m);
    dp_inspector_free(insp);
    dp_inspector_free(base);
    cJSON_Delete(root);
    return st;
}

static enum dp_status load_at(const char *path, const struct base_chain *up,
                              struct dp_inspector **out, struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_load(path, &inspector_spec, &root, err);
    if (st) return st;
    return from_root(root, path, up, out, err);
}

enum dp_status dp_inspector_load(const char *path, struct dp_inspector **out, struct dp_error *err) {
    return load_at(path, NULL, out, err);
}

enum dp_status dp_inspector_parse_json(const char *text, size_t len, const char *name,
                                       struct dp_inspector **out, struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_parse(text, len, name, &root, err);
    if (st) return st;
    return from_root(root, name, NULL, out, err);
}

/* ---- writing ---- */

static bool add_nums(cJSON *o, const char *key, const double *v, int n) {
    cJSON *a = cJSON_AddArrayToObject(o, key);
    if (!a) return false;
    for (int i = 0; i < n; i++)
        if (!dp_json_append(a, dp_json_number(v[i]))) return false;
    return true;
}

static bool write_arch(cJSON *root, const struct dp_arch *a) {
    cJSON *o = cJSON_AddObjectToObject(root, "architecture");
    return o && cJSON_AddStringToObject(o, "layer", dp_layer_name(a->layer)) &&
           dp_json_add_number(o, "n_feat", a->n_feat) && dp_json_add_number(o, "hidden", a->hidden) &&
           dp_json_add_number(o, "n_out", a->n_out) &&
           cJSON_AddStringToObject(o, "rule", dp_layer_rule_name(a->rule)) &&
           dp_json_add_number(o, "n_layers", a->n_layers) && dp_json_add_number(o, "max_layers", a->max_layers) &&
           cJSON_AddBoolToObject(o, "gru", a->gru) && dp_json_add_number(o, "heads", a->heads) &&
           dp_json_add_number(o, "towers", a->towers) && dp_json_add_number(o, "set2set_steps", a->set2set_steps) &&
           cJSON_AddStringToObject(o, "readout", "set2set") && dp_json_add_number(o, "mlp_depth", 3) &&
           cJSON_AddStringToObject(o, "features", dp_feat_name(a->feat)) &&
           add_nums(o, "feat_mean", a->feat_mean, a->n_feat) &&
           add_nums(o, "feat_std", a->feat_std, a->n_feat);
}

static bool write_eval(cJSON *o, const char *key, const struct dp_eval *e) {
    cJSON *x = cJSON_AddObjectToObject(o, key);
    return x && add_nums(x, "mape", e->mape, DP_N_OUTPUTS) &&
           add_nums(x, "rmse", e->rmse, DP_N_OUTPUTS) && add_nums(x, "r2", e->r2, DP_N_OUTPUTS);
}

static bool write_training(cJSON *root, const struct dp_provenance *p, const char *base) {
    cJSON *o = cJSON_AddObjectToObject(root, "training");
    return o && cJSON_AddStringToObject(o, "origin", p->origin) &&
           cJSON_AddStringToObject(o, "base", base) &&
           cJSON_AddStringToObject(o, "base_id", p->base_id) &&
           cJSON_AddStringToObject(o, "mode", p->mode) &&
           cJSON_AddStringToObject(o, "data", p->data) &&
           cJSON_AddStringToObject(o, "split", p->split) && dp_json_add_number(o, "epochs", p->epochs) &&
           dp_json_add_number(o, "seconds", p->seconds) && dp_json_add_number(o, "n_train", p->n_train) &&
           dp_json_add_number(o, "n_val", p->n_val) && dp_json_add_number(o, "n_test", p->n_test) &&
           write_eval(o, "val", &p->val) && write_eval(o, "test", &p->test);
}

/* Whether parameter p equals the base's parameter of the same name bit for bit. */
static bool same_as_base(const struct dp_param *p, const struct dp_model *base) {
    int j = dp_model_find_param(base, p->name);
    if (j < 0) return false;
    struct dp_param q;
    dp_model_param(base, j, &q);
    if (q.n_dims != p->n_dims || q.size != p->size) return false;
    for (int d = 0; d < p->n_dims; d++)
        if (q.shape[d] != p->shape[d]) return false;
    return memcmp(q.data, p->data, p->size * sizeof *p->data) == 0;
}

enum dp_status dp_inspector_save(const struct dp_inspector *insp, const char *path,
                                 const struct dp_inspector *base, const char *base_path,
                                 struct dp_error *err) {
    char rel[PATH_MAX] = "";
    unsigned char *bytes = NULL;
    if (base) {
        if (!base_path)
            return dp_error_set(err, DP_ERR_INVALID, "%s: a base inspector needs its file path", path);
        if (!arch_equal(dp_model_arch(base->model), dp_model_arch(insp->model)))
            return dp_error_set(err, DP_ERR_SHAPE, "%s: base %s has another architecture", path, base_path);
        if (!relative_to(path, base_path, rel, sizeof rel))
            return dp_error_set(err, DP_ERR_IO, "%s: cannot locate base %s: %s", path, base_path,
                                strerror(errno));
    }
    cJSON *root = cJSON_CreateObject(), *outputs, *params;
    if (!root || !cJSON_AddStringToObject(root, "format", "driple-inspector/1") ||
        !cJSON_AddStringToObject(root, "setting", insp->setting) ||
        !write_arch(root, dp_model_arch(insp->model)) ||
        !(outputs = cJSON_AddArrayToObject(root, "outputs")))
        goto nomem;
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        cJSON *x = cJSON_CreateObject();
        if (!dp_json_append(outputs, x) || !cJSON_AddStringToObject(x, "name", insp->out[o].name) ||
            !cJSON_AddStringToObject(x, "unit", insp->out[o].unit) ||
            !dp_json_add_number(x, "scale", insp->out[o].scale) ||
            !cJSON_AddStringToObject(x, "transform", dp_out_transform_name(insp->out[o].transform)) ||
            !dp_json_add_number(x, "offset", insp->out[o].offset) || !dp_json_add_number(x, "span", insp->out[o].span))
            goto nomem;
    }
    if (!write_training(root, &insp->prov, base ? rel : insp->prov.base)) goto nomem;
    if (base && !cJSON_AddStringToObject(root, "base", rel)) goto nomem;
    if (!(params = cJSON_AddArrayToObject(root, "parameters"))) goto nomem;
    int n = dp_model_n_params(insp->model);
    for (int i = 0; i < n; i++) {
        struct dp_param p;
        dp_model_param(insp->model, i, &p);
        if (base && same_as_base(&p, base->model)) continue;
        cJSON *x = cJSON_CreateObject(), *shape;
        if (!dp_json_append(params, x) || !cJSON_AddStringToObject(x, "name", p.name) ||
            !(shape = cJSON_AddArrayToObject(x, "shape")))
            goto nomem;
        for (int d = 0; d < p.n_dims; d++)
            if (!dp_json_append(shape, cJSON_CreateNumber((double)p.shape[d]))) goto nomem;
        if (!(bytes = malloc(p.size * 4 + 1))) goto nomem;
        for (size_t k = 0; k < p.size; k++) put_f32le(bytes + 4 * k, p.data[k]);
        char *b64 = b64_encode(bytes, p.size * 4);
        free(bytes);
        bytes = NULL;
        if (!b64) goto nomem;
        cJSON *s = cJSON_CreateString(b64);
        free(b64);
        if (!s || !cJSON_AddItemToObject(x, "data", s)) { cJSON_Delete(s); goto nomem; }
    }
    enum dp_status st = dp_json_save(root, path, true, err);
    cJSON_Delete(root);
    return st;
nomem:
    free(bytes);
    cJSON_Delete(root);
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory writing the inspector", path);
}
