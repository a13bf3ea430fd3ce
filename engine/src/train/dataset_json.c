/* dataset_json.c: the driple-dataset/1 reader and writer. Samples carry their grouped graph in a
 * compact form (groups as [tensor_size, ops, type_weight] triples, edges as [i, j] pairs), the
 * 12 labels in Driple order (null = missing) and where the labels came from. */
#include "dp/dataset.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_impl.h"
#include "dp/settings.h"
#include "core/json_util.h"

#define DATASET_MAX_BYTES ((size_t)1 << 30)
static const struct dp_read_spec dataset_spec = {"dataset", DATASET_MAX_BYTES, true, NULL, NULL};
#define DATASET_MAX_GROUPS 1000000

static const char *const feature_keys[DP_N_FEATURES_MAX] = {
    "tensor_size", "ops", "type_weight", "flops", "bytes", "param_bytes"};

static enum dp_status get_dup(const cJSON *obj, const char *key, char **dst, const char *name,
                              const char *path, struct dp_error *err) {
    const char *s = NULL;
    enum dp_status st = dp_json_get_string(obj, key, true, name, path, &s, err);
    if (st || !s) return st;
    size_t n = strlen(s) + 1;
    if (!(*dst = malloc(n))) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    memcpy(*dst, s, n);
    return DP_OK;
}

static enum dp_status read_grouped(const cJSON *obj, const char *gname, int64_t batch,
                                   const char *name, const char *path, struct dp_grouped **out,
                                   struct dp_error *err) {
    const cJSON *groups, *edges;
    int64_t seed = -1;
    enum dp_status st;
    if ((st = dp_json_get_int(obj, "seed", true, -1, INT64_C(1) << 53, name, path, &seed, err)) ||
        (st = dp_json_get_array(obj, "groups", false, name, path, &groups, err)) ||
        (st = dp_json_get_array(obj, "edges", false, name, path, &edges, err)))
        return st;
    int n = cJSON_GetArraySize(groups), m = cJSON_GetArraySize(edges);
    if (n == 0) return dp_error_set(err, DP_ERR_INVALID, "%s:%s.groups: empty", name, path);
    if (n > DATASET_MAX_GROUPS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.groups: %d groups (at most %d)", name,
                            path, n, DATASET_MAX_GROUPS);
    struct dp_grouped *g = dp_grouped_init(gname ? gname : "", n, m);
    if (!g) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    g->batch = batch;
    g->seed = seed;
    /* Groups are [tensor_size, ops, type_weight] triples (or objects with those keys) or, with
     * the cost features, those and flops, bytes, param_bytes; the first group decides for the
     * graph. */
    const cJSON *first = cJSON_GetArrayItem(groups, 0);
    const int nf = (cJSON_IsArray(first) && cJSON_GetArraySize(first) == DP_N_FEATURES_MAX) ||
                           (cJSON_IsObject(first) &&
                            cJSON_GetObjectItemCaseSensitive(first, feature_keys[DP_N_FEATURES]))
                       ? DP_N_FEATURES_MAX
                       : DP_N_FEATURES;
    if (nf > DP_N_FEATURES && !dp_grouped_add_cost(g)) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    int i = 0;
    const cJSON *grp;
    cJSON_ArrayForEach(grp, groups) {
        for (int f = 0; f < nf; f++) {
            const cJSON *v = NULL;
            if (cJSON_IsArray(grp) && cJSON_GetArraySize(grp) == nf)
                v = cJSON_GetArrayItem(grp, f);
            else if (cJSON_IsObject(grp))
                v = cJSON_GetObjectItemCaseSensitive(grp, feature_keys[f]);
            else {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  nf > DP_N_FEATURES
                                      ? "%s:%s.groups[%d]: expected [tensor_size, ops, "
                                        "type_weight, flops, bytes, param_bytes]"
                                      : "%s:%s.groups[%d]: expected [tensor_size, ops, type_weight]",
                                  name, path, i);
                goto fail;
            }
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
                v->valuedouble > 1e30) {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  "%s:%s.groups[%d][%d]: %s must be a number in [0, 1e30]", name,
                                  path, i, f, feature_keys[f]);
                goto fail;
            }
            if (f < DP_N_FEATURES) g->x[(size_t)i * DP_N_FEATURES + f] = v->valuedouble;
            else g->cost[(size_t)i * DP_N_COST_FEATURES + (f - DP_N_FEATURES)] = v->valuedouble;
        }
        i++;
    }
    char epath[128];
    snprintf(epath, sizeof epath, "%s.edges", path);
    if ((st = dp_json_read_edges(edges, n, name, epath, g->edges, &g->n_edges, err))) goto fail;
    *out = g;
    return DP_OK;
fail:
    dp_grouped_free(g);
    return st;
}

/* ---- the whole-graph profile (dp/profile.h), shared with sweep_json.c ---- */

/* The scalar fields by key. The `later` ones came with the fusion and placement inputs: a file
 * written before them has none (read as 0). Every field is >= 0, a share at most 1. */
static const struct {
    const char *key;
    size_t at; /* offsetof(struct dp_profile, the field) */
    bool later, share;
} profile_keys[] = {
    {"winograd_flops", offsetof(struct dp_profile, winograd_flops), false, false},
    {"params", offsetof(struct dp_profile, params), false, false},
    {"param_bytes", offsetof(struct dp_profile, param_bytes), false, false},
    {"activation_bytes", offsetof(struct dp_profile, activation_bytes), false, false},
    {"ops", offsetof(struct dp_profile, n_ops), false, false},
    {"kernels", offsetof(struct dp_profile, n_kernels), false, false},
    {"variables", offsetof(struct dp_profile, n_variables), false, false},
    {"fused_bytes", offsetof(struct dp_profile, fused_bytes), true, false},
    {"fused_kernels", offsetof(struct dp_profile, fused_kernels), true, false},
    {"fw_param_mid", offsetof(struct dp_profile, fw_param_mid), true, true},
    {"fw_param_head", offsetof(struct dp_profile, fw_param_head), true, true},
    {"bw_grad_mid", offsetof(struct dp_profile, bw_grad_mid), true, true},
    {"bw_grad_tail", offsetof(struct dp_profile, bw_grad_tail), true, true},
};
#define N_PROFILE_KEYS ((int)(sizeof profile_keys / sizeof profile_keys[0]))

static double *profile_field(struct dp_profile *p, int k) {
    return (double *)(void *)((char *)p + profile_keys[k].at);
}

enum dp_status dp_profile_read_json(const cJSON *o, int64_t batch, bool f16, const char *name,
                                    const char *path, struct dp_profile *p,
                                    struct dp_error *err) {
    const cJSON *arr[2];
    enum dp_status st;
    memset(p, 0, sizeof *p);
    p->batch = batch;
    const cJSON *half = cJSON_GetObjectItemCaseSensitive(o, "f16");
    if (half && !cJSON_IsBool(half))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.f16: expected true or false", name, path);
    p->f16 = half ? cJSON_IsTrue(half) : f16;
    if ((st = dp_json_get_array(o, "flops", false, name, path, &arr[0], err)) ||
        (st = dp_json_get_array(o, "bytes", false, name, path, &arr[1], err)))
        return st;
    for (int a = 0; a < 2; a++) {
        if (cJSON_GetArraySize(arr[a]) != DP_OPCLASS_COUNT)
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: expected %d numbers (one per op "
                                "class)", name, path, a ? "bytes" : "flops", DP_OPCLASS_COUNT);
        for (int c = 0; c < DP_OPCLASS_COUNT; c++) {
            const cJSON *v = cJSON_GetArrayItem(arr[a], c);
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
                return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s[%d]: expected a number >= 0",
                                    name, path, a ? "bytes" : "flops", c);
            if (a) p->bytes[c] = v->valuedouble;
            else p->flops[c] = v->valuedouble;
        }
    }
    for (int k = 0; k < N_PROFILE_KEYS; k++) {
        double v = 0;
        if ((st = dp_json_get_number(o, profile_keys[k].key, profile_keys[k].later, name, path,
                                     &v, err)))
            return st;
        if (!(v >= 0) || (profile_keys[k].share && v > 1))
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: expected a number %s", name,
                                path, profile_keys[k].key,
                                profile_keys[k].share ? "within 0-1" : ">= 0");
        *profile_field(p, k) = v;
    }
    return DP_OK;
}

bool dp_profile_write_json(cJSON *o, const char *key, const struct dp_profile *prof) {
    cJSON *p = cJSON_AddObjectToObject(o, key), *a;
    if (!p) return false;
    struct dp_profile copy = *prof;
    for (int k = 0; k < 2; k++) {
        if (!(a = cJSON_AddArrayToObject(p, k ? "bytes" : "flops"))) return false;
        for (int c = 0; c < DP_OPCLASS_COUNT; c++)
            if (!dp_json_append(a, dp_json_number(k ? copy.bytes[c] : copy.flops[c]))) return false;
    }
    for (int k = 0; k < N_PROFILE_KEYS; k++)
        if (!dp_json_add_number(p, profile_keys[k].key, *profile_field(&copy, k))) return false;
    return cJSON_AddBoolToObject(p, "f16", prof->f16) != NULL;
}

static enum dp_status read_sample(const cJSON *o, const char *name, const char *path,
                                  struct dp_sample *s, struct dp_error *err) {
    enum dp_status st;
    const cJSON *job, *grouped, *labels, *source;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < DP_N_OUTPUTS; i++) s->labels[i] = NAN;
    if (!cJSON_IsObject(o))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", name, path);
    char sub[96];
    if ((st = get_dup(o, "graph", &s->graph, name, path, err)) ||
        (st = get_dup(o, "model", &s->model, name, path, err)) ||
        (st = dp_json_get_int(o, "batch", true, 0, INT64_C(1) << 40, name, path, &s->batch, err)) ||
        (st = dp_json_get_object(o, "job", true, name, path, &job, err)) ||
        (st = dp_json_get_object(o, "grouped", true, name, path, &grouped, err)) ||
        (st = dp_json_get_array(o, "labels", false, name, path, &labels, err)) ||
        (st = dp_json_get_object(o, "source", false, name, path, &source, err)))
        return st;
    if (job) {
        snprintf(sub, sizeof sub, "%s.job", path);
        if ((st = dp_json_copy_string(job, "optimizer", true, name, sub, s->job.optimizer,
                                      sizeof s->job.optimizer, err)) ||
            (st = dp_json_copy_string(job, "precision", true, name, sub, s->job.precision,
                                      sizeof s->job.precision, err)) ||
            (st = dp_json_copy_string(job, "data_set", true, name, sub, s->job.data_set,
                                      sizeof s->job.data_set, err)) ||
            (st = dp_json_copy_string(job, "sync", true, name, sub, s->job.sync, sizeof s->job.sync,
                                      err)) ||
            (st = dp_json_copy_string(job, "hyper", true, name, sub, s->job.hyper,
                                      sizeof s->job.hyper, err)) ||
            (st = dp_json_copy_string(job, "job_name", true, name, sub, s->job.job_name,
                                      sizeof s->job.job_name, err)) ||
            (st = dp_json_copy_string(job, "gpu", true, name, sub, s->job.gpu, sizeof s->job.gpu,
                                      err)) ||
            (st = dp_json_get_int(job, "input_size", true, 0, INT64_C(1) << 40, name, sub,
                                  &s->job.input_size, err)))
            return st;
    }
    snprintf(sub, sizeof sub, "%s.source", path);
    if ((st = dp_json_copy_string(source, "kind", true, name, sub, s->source.kind,
                                  sizeof s->source.kind, err)) ||
        (st = dp_json_copy_string(source, "where", true, name, sub, s->source.where,
                                  sizeof s->source.where, err)) ||
        (st = dp_json_copy_string(source, "when", true, name, sub, s->source.when,
                                  sizeof s->source.when, err)))
        return st;
    if (!dp_dataset_source_ok(s->source.kind))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:%s.kind: '%s' is not \"simulated\" or \"measured\"", name, sub,
                            s->source.kind);
    if (cJSON_GetArraySize(labels) != DP_N_OUTPUTS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.labels: %d values, expected %d", name,
                            path, cJSON_GetArraySize(labels), DP_N_OUTPUTS);
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, labels) {
        if (cJSON_IsNull(v)) s->labels[i] = NAN;
        else if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0)
            s->labels[i] = v->valuedouble;
        else
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s.labels[%d]: expected a number >= 0 or null (%s)", name,
                                path, i, dp_outputs[i].name);
        i++;
    }
    const cJSON *prof = NULL;
    if ((st = dp_json_get_number(o, "iteration_ms", true, name, path, &s->iteration_ms, err)) ||
        (st = dp_json_get_number(o, "memory_gb", true, name, path, &s->memory_gb, err)) ||
        (st = dp_json_get_object(o, "profile", true, name, path, &prof, err)))
        return st;
    if (!(s->iteration_ms >= 0 && isfinite(s->iteration_ms)) ||
        !(s->memory_gb >= 0 && isfinite(s->memory_gb)))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: iteration_ms and memory_gb must be "
                            "numbers >= 0", name, path);
    if (prof) {
        snprintf(sub, sizeof sub, "%s.profile", path);
        /* Files before "f16": every sample was a zoo graph, built in fp16 under mixed precision */
        enum dp_precision prec = DP_PREC_FP32;
        bool f16 = dp_precision_parse(s->job.precision, &prec) && prec == DP_PREC_MIXED;
        if ((st = dp_profile_read_json(prof, s->batch, f16, name, sub, &s->profile, err)))
            return st;
        s->has_profile = true;
    }
    if (grouped) {
        snprintf(sub, sizeof sub, "%s.grouped", path);
        if ((st = read_grouped(grouped, s->graph, s->batch, name, sub, &s->grouped, err))) return st;
    }
    return DP_OK;
}

static enum dp_status from_json(const cJSON *root, const char *name, struct dp_dataset *ds,
                                struct dp_error *err) {
    enum dp_status st = dp_json_check_format(root, "driple-dataset/1", name, err);
    if (st) return st;
    const cJSON *outputs, *samples;
    if ((st = dp_json_copy_string(root, "setting", true, name, "$", ds->setting, sizeof ds->setting,
                                   err)) ||
        (st = dp_json_get_array(root, "outputs", false, name, "$", &outputs, err)) ||
        (st = dp_json_get_array(root, "samples", false, name, "$", &samples, err)))
        return st;
    if (cJSON_GetArraySize(outputs) != DP_N_OUTPUTS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:$.outputs: %d names, expected %d", name,
                            cJSON_GetArraySize(outputs), DP_N_OUTPUTS);
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, outputs) {
        if (!cJSON_IsString(v) || strcmp(v->valuestring, dp_outputs[i].name))
            return dp_error_set(err, DP_ERR_INVALID, "%s:$.outputs[%d]: expected \"%s\" (Driple order)",
                                name, i, dp_outputs[i].name);
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(v, samples) {
        char path[48];
        snprintf(path, sizeof path, "$.samples[%d]", i);
        struct dp_sample s;
        st = read_sample(v, name, path, &s, err);
        if (!st) {
            /* Hand the sample over without another copy. */
            if (ds->n_samples == ds->cap) {
                int cap = ds->cap ? ds->cap * 2 : 64;
                struct dp_sample *n = realloc(ds->samples, (size_t)cap * sizeof *n);
                if (!n) st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
                else { ds->samples = n; ds->cap = cap; }
            }
        }
        if (st) {
            dp_dataset_sample_clear(&s);
            return st;
        }
        ds->samples[ds->n_samples++] = s;
        i++;
    }
    return DP_OK;
}

enum dp_status dp_dataset_parse_json(const char *text, size_t len, const char *name,
                                     struct dp_dataset *ds, struct dp_error *err) {
    cJSON *root = NULL;
    dp_dataset_init(ds, NULL);
    enum dp_status st = dp_json_parse(text, len, name, &root, err);
    if (st) return st;
    st = from_json(root, name, ds, err);
    cJSON_Delete(root);
    if (st) dp_dataset_free(ds);
    return st;
}

enum dp_status dp_dataset_load_json(const char *path, struct dp_dataset *ds, struct dp_error *err) {
    cJSON *root = NULL;
    dp_dataset_init(ds, NULL);
    enum dp_status st = dp_json_load(path, &dataset_spec, &root, err);
    if (st) return st;
    st = from_json(root, path, ds, err);
    cJSON_Delete(root);
    if (st) dp_dataset_free(ds);
    return st;
}

static bool add_str(cJSON *o, const char *key, const char *v) {
    return !v || !v[0] || cJSON_AddStringToObject(o, key, v);
}

static bool write_sample(cJSON *arr, const struct dp_sample *s) {
    cJSON *o = cJSON_CreateObject(), *job, *labels, *src;
    if (!dp_json_append(arr, o)) return false;
    if (!add_str(o, "graph", s->graph) || !add_str(o, "model", s->model)) return false;
    if (s->batch > 0 && !dp_json_add_number(o, "batch", (double)s->batch)) return false;
    if (!(job = cJSON_AddObjectToObject(o, "job"))) return false;
    if (!add_str(job, "optimizer", s->job.optimizer) || !add_str(job, "precision", s->job.precision) ||
        !add_str(job, "data_set", s->job.data_set) || !add_str(job, "sync", s->job.sync) ||
        !add_str(job, "hyper", s->job.hyper) || !add_str(job, "job_name", s->job.job_name) ||
        !add_str(job, "gpu", s->job.gpu))
        return false;
    if (s->job.input_size > 0 && !dp_json_add_number(job, "input_size", (double)s->job.input_size)) return false;
    if ((s->iteration_ms > 0 && !dp_json_add_number(o, "iteration_ms", s->iteration_ms)) ||
        (s->memory_gb > 0 && !dp_json_add_number(o, "memory_gb", s->memory_gb)) ||
        (s->has_profile && !dp_profile_write_json(o, "profile", &s->profile)))
        return false;
    if (!(labels = cJSON_AddArrayToObject(o, "labels"))) return false;
    for (int i = 0; i < DP_N_OUTPUTS; i++)
        if (!dp_json_append(labels, dp_json_number(s->labels[i]))) return false;
    if (!(src = cJSON_AddObjectToObject(o, "source"))) return false;
    if (!cJSON_AddStringToObject(src, "kind", s->source.kind) || !add_str(src, "where", s->source.where) ||
        !add_str(src, "when", s->source.when))
        return false;
    if (s->grouped) {
        const struct dp_grouped *g = s->grouped;
        cJSON *go = cJSON_AddObjectToObject(o, "grouped"), *groups, *edges;
        if (!go) return false;
        if (g->seed >= 0 && !dp_json_add_number(go, "seed", (double)g->seed)) return false;
        if (!(groups = cJSON_AddArrayToObject(go, "groups"))) return false;
        for (int i = 0; i < g->n_groups; i++) {
            cJSON *t = cJSON_CreateArray();
            if (!dp_json_append(groups, t)) return false;
            for (int f = 0; f < (g->cost ? DP_N_FEATURES_MAX : DP_N_FEATURES); f++)
                if (!dp_json_append(t, dp_json_number(dp_grouped_feat(g, i, f)))) return false;
        }
        if (!(edges = cJSON_AddArrayToObject(go, "edges"))) return false;
        for (int e = 0; e < g->n_edges; e++)
            if (!dp_json_append(edges, cJSON_CreateIntArray(&g->edges[2 * e], 2))) return false;
    }
    return true;
}

enum dp_status dp_dataset_save_json(const struct dp_dataset *ds, const char *path,
                                    struct dp_error *err) {
    cJSON *root = cJSON_CreateObject(), *outputs, *samples;
    if (!root || !cJSON_AddStringToObject(root, "format", "driple-dataset/1") ||
        !cJSON_AddStringToObject(root, "setting", ds->setting) ||
        !cJSON_AddStringToObject(root, "data", dp_dataset_data_kind(ds)) ||
        !(outputs = cJSON_AddArrayToObject(root, "outputs")))
        goto fail;
    for (int i = 0; i < DP_N_OUTPUTS; i++)
        if (!dp_json_append(outputs, cJSON_CreateString(dp_outputs[i].name))) goto fail;
    if (!(samples = cJSON_AddArrayToObject(root, "samples"))) goto fail;
    for (int i = 0; i < ds->n_samples; i++)
        if (!write_sample(samples, &ds->samples[i])) goto fail;
    enum dp_status st = dp_json_save(root, path, false, err);
    cJSON_Delete(root);
    return st;
fail:
    cJSON_Delete(root);
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory writing the dataset", path);
}
