/* settings_json.c: reading the GPU catalog ("driple-gpus/1") and reading and writing setting
 * lists ("driple-settings/1"). Unknown catalog figures are JSON null (or absent) and become NaN
 * or 0; nothing is filled in. */
#include "dp/settings.h"

#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "dp/shipped.h"
#include "dp/systems.h"
#include "core/json_util.h"

#define SETTINGS_MAX_BYTES ((size_t)64 << 20)
static const struct dp_read_spec catalog_spec = {"GPU catalog", SETTINGS_MAX_BYTES, true, NULL,
                                                 NULL};
static const struct dp_read_spec settings_spec = {"setting list", SETTINGS_MAX_BYTES, true, NULL,
                                                  NULL};

/* Removes "dir/../" pairs from a joined path in place ("assets/settings/../inspectors/x" ->
 * "assets/inspectors/x") so that messages and the explorer show the path a user would type.
 * Purely lexical: a leading "../" or a pair whose first half is ".." stays. */
static void collapse_dotdot(char *p) {
    for (char *q; (q = strstr(p, "/../"));) {
        char *seg = q;
        while (seg > p && seg[-1] != '/') seg--;
        if (q - seg == 2 && seg[0] == '.' && seg[1] == '.') return;
        if (q == seg) return; /* "//../": leave odd paths alone */
        memmove(seg, q + 4, strlen(q + 4) + 1);
    }
}

/* An optional figure that must lie in [lo, hi] when present; NaN when absent or null. The
 * bounds are far outside any real GPU's and only stop typos (a unit off by 1e3 and more) from
 * reaching the simulator, whose times they scale. */
static enum dp_status opt_fig(const cJSON *obj, const char *key, double lo, double hi,
                              const char *name, const char *path, double *out,
                              struct dp_error *err) {
    double v = NAN;
    enum dp_status st = dp_json_get_number(obj, key, true, name, path, &v, err);
    if (st) return st;
    if (!isnan(v) && !(v >= lo && v <= hi))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:%s.%s: %g is not in [%g, %g] (null when unknown)", name, path,
                            key, v, lo, hi);
    *out = v;
    return DP_OK;
}

enum dp_status dp_gpu_catalog_load(const char *path, struct dp_gpu_catalog **out,
                                   struct dp_error *err) {
    cJSON *root = NULL;
    struct dp_gpu_catalog *c = NULL;
    enum dp_status st = dp_json_load(path, &catalog_spec, &root, err);
    if (st) return st;
    path = dp_file_name(path); /* from here on a name for messages: "stdin" for "-" */
    if ((st = dp_json_check_format(root, "driple-gpus/1", path, err))) goto fail;
    const cJSON *arr = NULL;
    if ((st = dp_json_get_array(root, "gpus", false, path, "$", &arr, err))) goto fail;
    int n = cJSON_GetArraySize(arr);
    if (!(c = calloc(1, sizeof *c)) || !(c->gpus = calloc((size_t)n + 1, sizeof *c->gpus)) ||
        !(c->path = strdup(path))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    const cJSON *g;
    int i = 0;
    cJSON_ArrayForEach(g, arr) {
        char jp[48];
        snprintf(jp, sizeof jp, "$.gpus[%d]", i);
        struct dp_gpu *d = &c->gpus[i];
        if (!cJSON_IsObject(g)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", path, jp);
            goto fail;
        }
        if ((st = dp_json_copy_string(g, "name", false, path, jp, d->name, sizeof d->name, err)))
            goto fail;
        if (!d->name[0]) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.name: empty", path, jp);
            goto fail;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(c->gpus[j].name, d->name)) {
                st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.name: \"%s\" appears twice", path,
                                  jp, d->name);
                goto fail;
            }
        if ((st = dp_json_copy_string(g, "architecture", true, path, jp, d->architecture,
                                      sizeof d->architecture, err)) ||
            (st = dp_json_copy_string(g, "source", true, path, jp, d->source, sizeof d->source,
                                      err)) ||
            (st = dp_json_copy_string(g, "notes", true, path, jp, d->notes, sizeof d->notes,
                                      err)) ||
            (st = opt_fig(g, "fp32_tflops", 0.001, 1e4, path, jp, &d->fp32_tflops, err)) ||
            (st = opt_fig(g, "fp32_base_tflops", 0.001, 1e4, path, jp, &d->fp32_base_tflops,
                          err)) ||
            (st = opt_fig(g, "fp16_tflops", 0.001, 1e5, path, jp, &d->fp16_tflops, err)) ||
            (st = opt_fig(g, "memory_gb", 0.001, 1e5, path, jp, &d->memory_gb, err)) ||
            (st = opt_fig(g, "bandwidth_gbps", 0.1, 1e6, path, jp, &d->bandwidth_gbps, err)) ||
            (st = opt_fig(g, "tdp_w", 1, 1e5, path, jp, &d->tdp_w, err)) ||
            (st = opt_fig(g, "price_per_gpu_hour", 0, 1e4, path, jp, &d->price_per_gpu_hour,
                          err)) ||
            (st = dp_json_copy_string(g, "price_source", true, path, jp, d->price_source,
                                      sizeof d->price_source, err)) ||
            (st = dp_json_copy_string(g, "price_date", true, path, jp, d->price_date,
                                      sizeof d->price_date, err)))
            goto fail;
        if (isnan(d->price_per_gpu_hour) || !d->price_source[0])
            snprintf(d->price_source, sizeof d->price_source, "%s",
                     isnan(d->price_per_gpu_hour) ? "no price read" : "no source given");
        int64_t sm = 0, year = 0, pcie = 0, devices = 1;
        if ((st = dp_json_get_int(g, "sm_count", true, 1, 100000, path, jp, &sm, err)) ||
            (st = dp_json_get_int(g, "year", true, 1990, 2100, path, jp, &year, err)) ||
            (st = opt_fig(g, "nvlink_gbps", 1, 1e5, path, jp, &d->nvlink_gbps, err)) ||
            (st = dp_json_get_int(g, "pcie_gen", true, 1, 10, path, jp, &pcie, err)) ||
            (st = dp_json_get_int(g, "devices", true, 1, 16, path, jp, &devices, err)))
            goto fail;
        d->sm_count = (int)sm;
        d->year = (int)year;
        d->pcie_gen = (int)pcie;
        d->devices = (int)devices;
        const char *ff = NULL;
        if ((st = dp_json_get_string(g, "form_factor", true, path, jp, &ff, err))) goto fail;
        if (!ff) d->form_factor = DP_FORM_UNKNOWN;
        else if (!strcasecmp(ff, "SXM")) d->form_factor = DP_FORM_SXM;
        else if (!strcasecmp(ff, "PCIe")) d->form_factor = DP_FORM_PCIE;
        else {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.form_factor: \"%s\" is not SXM or PCIe",
                              path, jp, ff);
            goto fail;
        }
        const cJSON *al = NULL, *a;
        if ((st = dp_json_get_array(g, "aliases", true, path, jp, &al, err))) goto fail;
        cJSON_ArrayForEach(a, al) {
            char ap[64];
            snprintf(ap, sizeof ap, "%s.aliases[%d]", jp, d->n_aliases);
            if (d->n_aliases == DP_GPU_MAX_ALIASES) {
                st = dp_error_set(err, DP_ERR_INVALID, "%s:%s: more than %d aliases", path, ap,
                                  DP_GPU_MAX_ALIASES);
                goto fail;
            }
            if (!cJSON_IsString(a) || !a->valuestring[0] ||
                strlen(a->valuestring) >= sizeof d->aliases[0]) {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  "%s:%s: expected a name of 1 to %d characters", path, ap,
                                  DP_NAME_MAX - 1);
                goto fail;
            }
            strcpy(d->aliases[d->n_aliases++], a->valuestring);
        }
        i++;
    }
    c->n_gpus = i;
    /* Every name and alias must find its GPU and no other (dp_gpu_find, setting ids). */
    for (int k = 0; k < c->n_gpus; k++) {
        const struct dp_gpu *d = &c->gpus[k];
        for (int a = -1; a < d->n_aliases; a++) {
            const char *nm = a < 0 ? d->name : d->aliases[a];
            const struct dp_gpu *hit = dp_gpu_find(c, nm);
            if (hit != d) {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  "%s:$.gpus[%d]: \"%s\" also names %s; a name or alias must "
                                  "name one GPU (setting ids abbreviate a few: %s)",
                                  path, k, nm, hit ? hit->name : "several GPUs",
                                  "V100, 2080Ti, 4090, A100, H100");
                goto fail;
            }
        }
    }
    cJSON_Delete(root);
    *out = c;
    return DP_OK;
fail:
    cJSON_Delete(root);
    dp_gpu_catalog_free(c);
    return st;
}

/* The directory part of path including the '/', or "" (caller frees). */
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

/* A string member parsed by `parse` into *out (an int-sized enum); absent keeps *out. */
static enum dp_status opt_enum(const cJSON *o, const char *key, const char *path, const char *jp,
                               bool (*parse)(const char *, int *), const char *allowed, int *out,
                               struct dp_error *err) {
    const char *str = NULL;
    enum dp_status st = dp_json_get_string(o, key, true, path, jp, &str, err);
    if (st || !str) return st;
    if (!parse(str, out))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: \"%s\" is not %s", path, jp, key, str,
                            allowed);
    return DP_OK;
}

/* int-typed adapters of the enum parsers for opt_enum (enums are int-sized here). */
#define ENUM_ADAPTER(fn, parse, type)                                                          \
    static bool fn(const char *s, int *out) {                                                  \
        type v;                                                                                \
        if (!parse(s, &v)) return false;                                                       \
        *out = (int)v;                                                                         \
        return true;                                                                           \
    }
ENUM_ADAPTER(parse_tf32, dp_tf32_parse, enum dp_tf32)
ENUM_ADAPTER(parse_loader, dp_loader_parse, enum dp_loader)
ENUM_ADAPTER(parse_ar, dp_allreduce_algo_parse, enum dp_allreduce_algo)
ENUM_ADAPTER(parse_shard, dp_shard_parse, enum dp_shard)
ENUM_ADAPTER(parse_rc, dp_recompute_parse, enum dp_recompute)

/* The optional fields of issues 28 and 29 (absent: today's setting). */
static enum dp_status parse_scale(const cJSON *o, const char *path, const char *jp,
                                  struct dp_setting *s, struct dp_error *err) {
    enum dp_status st;
    int e[5] = {0, 0, 0, 0, 0};
    if ((st = opt_enum(o, "tf32", path, jp, parse_tf32, "auto, on or off", &e[0], err)) ||
        (st = opt_enum(o, "loader", path, jp, parse_loader, "synthetic, cpu or dali", &e[1],
                       err)) ||
        (st = opt_enum(o, "allreduce", path, jp, parse_ar, "auto, ring or tree", &e[2], err)) ||
        (st = opt_enum(o, "shard", path, jp, parse_shard, "none, zero1, zero2, zero3 or fsdp",
                       &e[3], err)) ||
        (st = opt_enum(o, "recompute", path, jp, parse_rc, "none, selective or full", &e[4],
                       err)))
        return st;
    s->tf32 = (enum dp_tf32)e[0];
    s->loader = (enum dp_loader)e[1];
    s->ar_algo = (enum dp_allreduce_algo)e[2];
    s->shard = (enum dp_shard)e[3];
    s->recompute = (enum dp_recompute)e[4];
    static const struct {
        const char *key;
        size_t      off;
        int64_t     lo, hi;
    } counts[] = {{"accum", offsetof(struct dp_setting, accum), 1, 65536},
                  {"cpu_cores", offsetof(struct dp_setting, cpu_cores), 1, 1024},
                  {"tp", offsetof(struct dp_setting, tp), 1, DP_MAX_WORKERS},
                  {"pp", offsetof(struct dp_setting, pp), 1, DP_MAX_WORKERS},
                  {"microbatches", offsetof(struct dp_setting, microbatches), 1, DP_MAX_WORKERS},
                  {"ep", offsetof(struct dp_setting, ep), 1, DP_MAX_WORKERS}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        int64_t v = 0;
        if ((st = dp_json_get_int(o, counts[i].key, true, counts[i].lo, counts[i].hi, path, jp,
                                  &v, err)))
            return st;
        *(int *)((char *)s + counts[i].off) = (int)v;
    }
    if ((st = dp_json_copy_string(o, "system", true, path, jp, s->system, sizeof s->system, err)))
        return st;
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "seq_parallel");
    if (sp && !cJSON_IsBool(sp))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.seq_parallel: expected true or false",
                            path, jp);
    s->seq_parallel = cJSON_IsTrue(sp);
    return DP_OK;
}

static enum dp_status parse_setting(const cJSON *o, const char *path, const char *jp,
                                    const char *dir, const struct dp_gpu_catalog *catalog,
                                    struct dp_setting *s, struct dp_error *err) {
    enum dp_status st;
    const char *str = NULL;
    int64_t v = 0;
    memset(s, 0, sizeof *s);
    if (!cJSON_IsObject(o))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", path, jp);
    if ((st = dp_json_copy_string(o, "id", true, path, jp, s->id, sizeof s->id, err)) ||
        (st = dp_json_copy_string(o, "gpu", false, path, jp, s->gpu, sizeof s->gpu, err)))
        return st;
    if (catalog) {
        const struct dp_gpu *g = dp_gpu_find(catalog, s->gpu);
        if (!g)
            return dp_error_set(err, DP_ERR_NOT_FOUND,
                                "%s:%s.gpu: \"%s\" is not in the GPU catalog", path, jp, s->gpu);
        strcpy(s->gpu, g->name);
    }
    str = "ps";
    if ((st = dp_json_get_string(o, "sync", true, path, jp, &str, err))) return st;
    if (!dp_sync_parse(str, &s->sync))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.sync: \"%s\" is not ps or allreduce", path,
                            jp, str);
    v = 0;
    bool ar = s->sync == DP_SYNC_ALLREDUCE;
    if ((st = dp_json_get_int(o, "ps", ar, ar ? 0 : 1, ar ? 0 : DP_MAX_PS, path, jp, &v, err)))
        return st;
    s->ps = (int)v;
    if ((st = dp_json_get_int(o, "workers", false, 1, DP_MAX_WORKERS, path, jp, &v, err)))
        return st;
    s->workers = (int)v;
    str = NULL;
    if ((st = dp_json_get_string(o, "network", false, path, jp, &str, err))) return st;
    if (!dp_network_parse(str, &s->network)) {
        char what[600];
        snprintf(what, sizeof what, "%s:%s.network", path, jp);
        return dp_network_lookup(str, what, &s->network, err);
    }
    str = "homo";
    if ((st = dp_json_get_string(o, "placement", true, path, jp, &str, err))) return st;
    if (!dp_placement_parse(str, &s->placement))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.placement: \"%s\" is not homo or hetero",
                            path, jp, str);
    str = "fp32";
    if ((st = dp_json_get_string(o, "precision", true, path, jp, &str, err))) return st;
    char what[600];
    snprintf(what, sizeof what, "%s:%s.precision", path, jp);
    if ((st = dp_precision_lookup(str, what, &s->precision, err))) return st;
    str = "tensorflow";
    if ((st = dp_json_get_string(o, "framework", true, path, jp, &str, err))) return st;
    snprintf(what, sizeof what, "%s:%s.framework", path, jp);
    if ((st = dp_framework_lookup(str, what, &s->framework, &s->fw_version, err))) return st;
    if ((st = parse_scale(o, path, jp, s, err))) return st;
    v = 0;
    if ((st = dp_json_get_int(o, "machines", true, 1, DP_MAX_MACHINES, path, jp, &v, err)))
        return st;
    s->machines = v ? (int)v : dp_setting_default_machines(s->sync, s->workers, s->ps, s->network,
                                                           s->placement);
    int *ones[] = {&s->accum, &s->tp, &s->pp, &s->microbatches, &s->ep};
    for (size_t k = 0; k < sizeof ones / sizeof ones[0]; k++)
        if (*ones[k] == 0) *ones[k] = 1;
    bool id_given = s->id[0] != '\0';
    if (!id_given) dp_setting_format_id(s, s->id, sizeof s->id);
    /* `dataset build` names its output files <id>.json: an id must stay one file name. */
    if (s->id[0] == '.' || strchr(s->id, '/'))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:%s.id: \"%s\" cannot name a file (no '/', no leading '.')", path,
                            jp, s->id);
    str = NULL;
    if ((st = dp_json_get_string(o, "inspector", true, path, jp, &str, err))) return st;
    if (str && *str) {
        int n = str[0] == '/' ? snprintf(s->inspector, sizeof s->inspector, "%s", str)
                              : snprintf(s->inspector, sizeof s->inspector, "%s%s", dir, str);
        if (n < 0 || (size_t)n >= sizeof s->inspector)
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.inspector: path too long", path, jp);
        collapse_dotdot(s->inspector);
    }
    st = dp_setting_check(s, err);
    if (!st && catalog) st = dp_setting_check_gpu(s, dp_gpu_find(catalog, s->gpu), NULL, err);
    if (st) {
        char pre[600];
        snprintf(pre, sizeof pre, "%s:%s", path, jp);
        dp_error_prefix(err, pre);
        return st;
    }
    /* An id of the setting-id grammar must name this setting ("P1" beside "ps": 3 would file
     * its predictions under another cluster); a free-form name is the user's. */
    struct dp_setting named;
    if (id_given && catalog && dp_setting_parse_id(s->id, catalog, &named, NULL) == DP_OK) {
        char want[sizeof s->id], got[sizeof s->id];
        dp_setting_format_id(s, want, sizeof want);
        dp_setting_format_id(&named, got, sizeof got);
        if (strcmp(want, got))
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s.id: \"%s\" disagrees with the setting's fields (they make "
                                "%s)", path, jp, s->id, want);
    }
    return DP_OK;
}

/* The search path's second place (settings.h): the user directory's inspector for s when the
 * list names none or its file does not exist. */
static void use_user_inspector(struct dp_setting *s) {
    char user[sizeof s->inspector];
    if (s->inspector[0] && access(s->inspector, F_OK) == 0) return;
    if (dp_user_inspector_path(s, user, sizeof user) && access(user, R_OK) == 0)
        memcpy(s->inspector, user, sizeof user);
}

enum dp_status dp_settings_load(const char *path, const struct dp_gpu_catalog *catalog,
                                struct dp_settings **out, struct dp_error *err) {
    cJSON *root = NULL;
    struct dp_settings *s = NULL;
    char *dir = NULL;
    enum dp_status st = dp_json_load(path, &settings_spec, &root, err);
    if (st) return st;
    path = dp_file_name(path); /* from here on a name for messages: "stdin" for "-" */
    if ((st = dp_json_check_format(root, "driple-settings/1", path, err))) goto fail;
    const cJSON *arr = NULL;
    if ((st = dp_json_get_array(root, "settings", false, path, "$", &arr, err))) goto fail;
    int n = cJSON_GetArraySize(arr);
    if (!(dir = dir_of(path)) || !(s = calloc(1, sizeof *s)) ||
        !(s->settings = calloc((size_t)n + 1, sizeof *s->settings)) ||
        !(s->path = malloc(strlen(path) + 1))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    strcpy(s->path, path);
    const cJSON *o;
    int i = 0;
    cJSON_ArrayForEach(o, arr) {
        char jp[48];
        snprintf(jp, sizeof jp, "$.settings[%d]", i);
        if ((st = parse_setting(o, path, jp, dir, catalog, &s->settings[i], err))) goto fail;
        use_user_inspector(&s->settings[i]);
        /* Ignoring case: --setting matches that way, and the datasets named after the ids
         * would collide on a case-insensitive file system. */
        for (int j = 0; j < i; j++)
            if (!strcasecmp(s->settings[j].id, s->settings[i].id)) {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  "%s:%s.id: \"%s\" appears twice (as \"%s\" in $.settings[%d])",
                                  path, jp, s->settings[i].id, s->settings[j].id, j);
                goto fail;
            }
        i++;
    }
    s->n_settings = i;
    cJSON_Delete(root);
    free(dir);
    *out = s;
    return DP_OK;
fail:
    cJSON_Delete(root);
    free(dir);
    dp_settings_free(s);
    return st;
}

/* The inspector path to write into a list saved at dest so that dp_settings_load, which resolves
 * it against dest's directory, finds the same file: "../" once per directory of dest when dest
 * is a plain relative path, else the absolute path. False when it does not fit in n bytes. */
static bool inspector_for(const char *dest, const char *insp, char *buf, size_t n) {
    const char *slash = strrchr(dest, '/');
    if (!insp[0] || insp[0] == '/' || !slash) return (size_t)snprintf(buf, n, "%s", insp) < n;
    size_t depth = 0, len = (size_t)(slash - dest);
    bool plain = dest[0] != '/';
    for (size_t i = 0; i < len && plain; i++) {
        size_t seg = strcspn(dest + i, "/");
        if (seg > len - i) seg = len - i;
        if (seg == 0) continue; /* "a//b" */
        if ((seg == 1 && dest[i] == '.') || (seg == 2 && dest[i] == '.' && dest[i + 1] == '.'))
            plain = false;
        depth++;
        i += seg;
    }
    size_t off = 0;
    if (plain) {
        for (size_t d = 0; d < depth; d++) {
            if (off + 3 >= n) return false;
            memcpy(buf + off, "../", 3);
            off += 3;
        }
    } else {
        if (!getcwd(buf, n) || (off = strlen(buf)) + 1 >= n) return false;
        buf[off++] = '/';
    }
    return (size_t)snprintf(buf + off, n - off, "%s", insp) < n - off;
}

/* The issue 28/29 fields of x that are not at their default into o; false when out of memory. */
static bool save_scale(cJSON *o, const struct dp_setting *x) {
    const struct {
        const char *key;
        const char *val; /* NULL: at its default */
    } strs[] = {{"tf32", x->tf32 != DP_TF32_AUTO ? dp_tf32_name(x->tf32) : NULL},
                {"system", x->system[0] ? x->system : NULL},
                {"loader", x->loader ? dp_loader_name(x->loader) : NULL},
                {"allreduce", x->ar_algo ? dp_allreduce_algo_name(x->ar_algo) : NULL},
                {"shard", x->shard ? dp_shard_name(x->shard) : NULL},
                {"recompute", x->recompute ? dp_recompute_name(x->recompute) : NULL}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strs[i].val && !cJSON_AddStringToObject(o, strs[i].key, strs[i].val)) return false;
    const struct {
        const char *key;
        int         val, dflt;
    } nums[] = {{"accum", x->accum, 1},     {"cpu_cores", x->cpu_cores, 0}, {"tp", x->tp, 1},
                {"pp", x->pp, 1},           {"microbatches", x->microbatches, 1},
                {"ep", x->ep, 1}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (nums[i].val > nums[i].dflt && !cJSON_AddNumberToObject(o, nums[i].key, nums[i].val))
            return false;
    return !x->seq_parallel || cJSON_AddBoolToObject(o, "seq_parallel", true);
}

enum dp_status dp_settings_save(const struct dp_settings *s, const char *path,
                                struct dp_error *err) {
    enum dp_status st = DP_OK;
    char insp[PATH_MAX + sizeof s->settings->inspector];
    cJSON *root = cJSON_CreateObject(), *arr = NULL;
    if (!root || !cJSON_AddStringToObject(root, "format", "driple-settings/1") ||
        !(arr = cJSON_AddArrayToObject(root, "settings")))
        goto nomem;
    for (int i = 0; i < s->n_settings; i++) {
        const struct dp_setting *x = &s->settings[i];
        if (!inspector_for(path, x->inspector, insp, sizeof insp)) {
            cJSON_Delete(root);
            return dp_error_set(err, DP_ERR_INVALID, "%s:$.settings[%d].inspector: path too long",
                                path, i);
        }
        cJSON *o = cJSON_CreateObject();
        if (!o) goto nomem;
        cJSON_AddItemToArray(arr, o);
        char fw[32];
        dp_framework_format(x->framework, x->fw_version, fw, sizeof fw);
        if (!cJSON_AddStringToObject(o, "id", x->id) ||
            !cJSON_AddStringToObject(o, "gpu", x->gpu) ||
            !cJSON_AddStringToObject(o, "sync", dp_sync_name(x->sync)) ||
            (x->sync == DP_SYNC_PS && !cJSON_AddNumberToObject(o, "ps", x->ps)) ||
            !cJSON_AddNumberToObject(o, "workers", x->workers) ||
            !cJSON_AddStringToObject(o, "placement", dp_placement_name(x->placement)) ||
            !cJSON_AddStringToObject(o, "network", dp_network_name(x->network)) ||
            !cJSON_AddNumberToObject(o, "machines", x->machines) ||
            !cJSON_AddStringToObject(o, "precision", dp_precision_name(x->precision)) ||
            !cJSON_AddStringToObject(o, "framework", fw) || !save_scale(o, x) ||
            !cJSON_AddStringToObject(o, "inspector", insp))
            goto nomem;
    }
    st = dp_json_save(root, path, true, err);
    cJSON_Delete(root);
    return st;
nomem:
    cJSON_Delete(root);
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
}

enum dp_status dp_gpu_catalog_load_default(const char *path, struct dp_gpu_catalog **out,
                                           struct dp_error *err) {
    if (path) return dp_gpu_catalog_load(path, out, err);
    char p[PATH_MAX + 64];
    enum dp_status st = dp_shipped_path("assets/gpus.json", "--gpus", p, sizeof p, err);
    return st ? st : dp_gpu_catalog_load(p, out, err);
}

enum dp_status dp_settings_load_default(const char *path, const struct dp_gpu_catalog *catalog,
                                        struct dp_settings **out, struct dp_error *err) {
    if (path) return dp_settings_load(path, catalog, out, err);
    char p[PATH_MAX + 64];
    enum dp_status st =
        dp_shipped_path("assets/settings/default.json", "--settings", p, sizeof p, err);
    return st ? st : dp_settings_load(p, catalog, out, err);
}
