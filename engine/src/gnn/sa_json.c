/* sa_json.c: the driple-sa-inspector/1 file: the body inspector it reads (a driple-inspector/1
 * file named relative to this one, and its body key), the head's architecture and the names of
 * its inputs, the outputs, the normalisation, the interval calibration, the OOD reference, the
 * provenance with one evaluation per hold-out, and the weights (little-endian float32, base64). */
#include "sa_impl.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "inspector_impl.h"

#define SA_MAX_BYTES ((size_t)1 << 30)
#define SA_MAX_REF   100000
/* The first physical ratio's name in files that read fp32 products at the FP32 rate */
#define LEGACY_MATMUL "matmul_ms"
/* The physical ratio whose name says which rate a file's transfers are at */
#define LINK_INPUT 3

static const struct dp_read_spec sa_spec = {"setting-aware inspector", SA_MAX_BYTES, true, NULL,
                                            NULL};

/* Reads exactly n finite numbers of array key into out. */
static enum dp_status read_numbers(const cJSON *o, const char *key, int n, const char *name,
                                   const char *path, double *out, bool positive,
                                   struct dp_error *err) {
    const cJSON *a, *v;
    enum dp_status st = dp_json_get_array(o, key, false, name, path, &a, err);
    if (st) return st;
    if (cJSON_GetArraySize(a) != n)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: %d numbers, expected %d", name, path,
                            key, cJSON_GetArraySize(a), n);
    int i = 0;
    cJSON_ArrayForEach(v, a) {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || (positive && !(v->valuedouble > 0)))
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s[%d]: expected a finite number%s",
                                name, path, key, i, positive ? " > 0" : "");
        out[i++] = v->valuedouble;
    }
    return DP_OK;
}

static bool add_numbers(cJSON *o, const char *key, const double *v, int n) {
    cJSON *a = cJSON_AddArrayToObject(o, key);
    if (!a) return false;
    for (int i = 0; i < n; i++)
        if (!dp_json_append(a, dp_json_number(v[i]))) return false;
    return true;
}

/* A base64 float array of exactly n values into out (finite). */
static enum dp_status read_blob(const cJSON *o, const char *key, size_t n, const char *name,
                                const char *path, float *out, struct dp_error *err) {
    enum dp_status st = dp_json_get_b64_floats(o, key, n, name, path, out, err);
    if (st) return st;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(out[i]))
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: value %zu is not finite", name,
                                path, key, i);
    return DP_OK;
}

static enum dp_status read_eval(const cJSON *o, const char *name, const char *path,
                                struct dp_sa_eval *e, struct dp_error *err) {
    enum dp_status st;
    int64_t n = 0;
    if ((st = dp_json_copy_string(o, "name", false, name, path, e->name, sizeof e->name, err)) ||
        (st = dp_json_copy_string(o, "held", true, name, path, e->held, sizeof e->held, err)) ||
        (st = dp_json_get_int(o, "n_rows", false, 0, INT_MAX, name, path, &n, err)))
        return st;
    e->n_rows = (int)n;
    const char *keys[3] = {"mape", "r2", "coverage"};
    double *dst[3] = {e->mape, e->r2, e->coverage};
    for (int k = 0; k < 3; k++) {
        const cJSON *a, *v;
        if ((st = dp_json_get_array(o, keys[k], false, name, path, &a, err))) return st;
        if (cJSON_GetArraySize(a) != DP_SA_N_OUT)
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: expected %d values", name, path,
                                keys[k], DP_SA_N_OUT);
        int i = 0;
        cJSON_ArrayForEach(v, a) dst[k][i++] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    }
    return DP_OK;
}

/* provenance.tuned (absent: not fine-tuned). */
static enum dp_status read_tuning(const cJSON *prov, const char *name, struct dp_sa_tuning *t,
                                  struct dp_error *err) {
    const char *P = "$.provenance.tuned";
    const cJSON *o, *before, *after;
    enum dp_status st = dp_json_get_object(prov, "tuned", true, name, "$.provenance", &o, err);
    if (st || !o) return st;
    int64_t v[3] = {0, 0, 0};
    const char *ints[3] = {"n_train", "n_val", "epochs"};
    if ((st = dp_json_copy_string(o, "setting", false, name, P, t->setting, sizeof t->setting,
                                  err)) ||
        (st = dp_json_copy_string(o, "data", false, name, P, t->data, sizeof t->data, err)) ||
        (st = dp_json_copy_string(o, "dataset", true, name, P, t->dataset, sizeof t->dataset,
                                  err)) ||
        (st = dp_json_copy_string(o, "base", true, name, P, t->base, sizeof t->base, err)) ||
        (st = dp_json_get_number(o, "seconds", true, name, P, &t->seconds, err)) ||
        (st = dp_json_get_object(o, "before", false, name, P, &before, err)) ||
        (st = dp_json_get_object(o, "after", false, name, P, &after, err)) ||
        (st = read_eval(before, name, "$.provenance.tuned.before", &t->before, err)) ||
        (st = read_eval(after, name, "$.provenance.tuned.after", &t->after, err)))
        return st;
    for (int k = 0; k < 3; k++)
        if ((st = dp_json_get_int(o, ints[k], false, 0, INT_MAX, name, P, &v[k], err))) return st;
    if (!t->setting[0])
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.setting: empty", name, P);
    t->n_train = (int)v[0];
    t->n_val = (int)v[1];
    t->epochs = (int)v[2];
    return DP_OK;
}

static enum dp_status read_provenance(const cJSON *o, const char *name,
                                      struct dp_sa_provenance *p, struct dp_error *err) {
    const char *P = "$.provenance";
    enum dp_status st;
    int64_t v[5] = {0, 0, 0, 0, 0};
    const char *ints[5] = {"epochs", "n_train", "n_val", "n_test", "n_graphs"};
    const cJSON *evals, *e;
    if ((st = dp_json_copy_string(o, "data", false, name, P, p->data, sizeof p->data, err)) ||
        (st = dp_json_copy_string(o, "split", true, name, P, p->split, sizeof p->split, err)) ||
        (st = dp_json_get_number(o, "seconds", true, name, P, &p->seconds, err)) ||
        (st = dp_json_get_array(o, "evals", true, name, P, &evals, err)))
        return st;
    for (int k = 0; k < 5; k++)
        if ((st = dp_json_get_int(o, ints[k], true, 0, INT_MAX, name, P, &v[k], err))) return st;
    p->epochs = (int)v[0];
    p->n_train = (int)v[1];
    p->n_val = (int)v[2];
    p->n_test = (int)v[3];
    p->n_graphs = (int)v[4];
    if (evals && cJSON_GetArraySize(evals) > DP_SA_MAX_EVALS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.evals: more than %d", name, P,
                            DP_SA_MAX_EVALS);
    cJSON_ArrayForEach(e, evals) {
        char path[64];
        snprintf(path, sizeof path, "%s.evals[%d]", P, p->n_evals);
        if ((st = read_eval(e, name, path, &p->evals[p->n_evals], err))) return st;
        p->n_evals++;
    }
    return read_tuning(o, name, &p->tuned, err);
}

static enum dp_status from_json(const cJSON *root, const char *name,
                                struct dp_sa_inspector **out, struct dp_error *err) {
    const cJSON *arch, *norm, *iv, *ood, *prov;
    const char *body_rel = NULL, *key = NULL;
    enum dp_status st;
    struct dp_inspector *body = NULL;
    struct dp_sa_inspector *sa = NULL;
    if ((st = dp_json_check_format(root, "driple-sa-inspector/1", name, err)) ||
        (st = dp_json_get_string(root, "body", false, name, "$", &body_rel, err)) ||
        (st = dp_json_get_string(root, "body_key", false, name, "$", &key, err)) ||
        (st = dp_json_get_object(root, "architecture", false, name, "$", &arch, err)) ||
        (st = dp_json_get_object(root, "normalisation", false, name, "$", &norm, err)) ||
        (st = dp_json_get_object(root, "interval", false, name, "$", &iv, err)) ||
        (st = dp_json_get_object(root, "ood", false, name, "$", &ood, err)) ||
        (st = dp_json_get_object(root, "provenance", false, name, "$", &prov, err)))
        return st;
    char path[PATH_MAX];
    dp_path_resolve(name, body_rel, path, sizeof path);
    if ((st = dp_inspector_load(path, &body, err))) {
        dp_error_prefix(err, name);
        return st;
    }
    if (strcmp(dp_inspector_body_key(body), key)) {
        st = dp_error_set(err, DP_ERR_INVALID, "%s:$.body_key: %s is not the body this inspector "
                          "was trained on (its key is %s, the file's %s)", name, path,
                          dp_inspector_body_key(body), key);
        dp_inspector_free(body);
        return st;
    }
    int64_t v[4];
    const char *ak[4] = {"hidden1", "hidden2", "members", "n_in"};
    for (int k = 0; k < 4; k++)
        if ((st = dp_json_get_int(arch, ak[k], false, 1, 1 << 20, name, "$.architecture", &v[k],
                                  err))) {
            dp_inspector_free(body);
            return st;
        }
    struct dp_sa_arch a = {(int)v[0], (int)v[1], (int)v[2]};
    if ((st = dp_sa_arch_check(&a, err))) {
        dp_inspector_free(body);
        return st;
    }
    if ((st = dp_sa_init(body, &a, 0, &sa, err))) return st;
    snprintf(sa->body_path, sizeof sa->body_path, "%s", path);
    /* Files from before the placement inputs read none of them, nor those from before the
     * burst inputs these (same layout, fewer inputs). */
    if (v[3] == sa->n_in - DP_SA_PLACE_N || v[3] == sa->n_in - DP_SA_PLACE_N - DP_SA_BURST_N) {
        sa->legacy |= DP_SA_LEGACY_NO_PLACE;
        sa->n_in -= DP_SA_PLACE_N;
    }
    if (v[3] == sa->n_in - DP_SA_BURST_N) {
        sa->legacy |= DP_SA_LEGACY_NO_BURST;
        sa->n_in -= DP_SA_BURST_N;
    }
    sa->per_member = dp_sa_member_floats(sa->n_in, a.hidden1, a.hidden2);
    if (v[3] != sa->n_in) {
        st = dp_error_set(err, DP_ERR_SHAPE, "%s:$.architecture.n_in: %lld inputs, but its body "
                          "and this driple give %d", name, (long long)v[3], sa->n_in);
        goto fail;
    }
    /* Files that name their first physical ratio "matmul_ms" read fp32 products at the FP32
     * rate (before TF32 entered it); those that name the transfers "params_over_network_ms",
     * ... read them at the network's nominal rate (before the GPU's own link). */
    const cJSON *in_names = cJSON_GetObjectItemCaseSensitive(arch, "inputs");
    const cJSON *first = cJSON_GetArrayItem(in_names, DP_PROFILE_N + DP_SA_SETTING_N);
    const cJSON *link = cJSON_GetArrayItem(in_names, DP_PROFILE_N + DP_SA_SETTING_N + LINK_INPUT);
    if (cJSON_IsString(first) && !strcmp(first->valuestring, LEGACY_MATMUL))
        sa->legacy |= DP_SA_LEGACY_FP32_MATMUL;
    if (cJSON_IsString(link) && !strcmp(link->valuestring, dp_sa_cross_legacy_names[LINK_INPUT]))
        sa->legacy |= DP_SA_LEGACY_NETWORK_RATE;
    int64_t n_ref = 0;
    double thr = 0;
    if ((st = read_numbers(norm, "in_mean", sa->n_in, name, "$.normalisation", sa->in_mean,
                           false, err)) ||
        (st = read_numbers(norm, "in_std", sa->n_in, name, "$.normalisation", sa->in_std, true,
                           err)) ||
        (st = read_numbers(norm, "out_mean", DP_SA_N_OUT, name, "$.normalisation", sa->out_mean,
                           false, err)) ||
        (st = read_numbers(norm, "out_std", DP_SA_N_OUT, name, "$.normalisation", sa->out_std,
                           true, err)) ||
        (st = read_numbers(iv, "q", DP_SA_N_OUT, name, "$.interval", sa->q, false, err)) ||
        (st = read_numbers(iv, "s0", DP_SA_N_OUT, name, "$.interval", sa->s0, false, err)) ||
        (st = dp_json_get_int(ood, "n", false, 0, SA_MAX_REF, name, "$.ood", &n_ref, err)) ||
        (st = dp_json_get_number(ood, "threshold", false, name, "$.ood", &thr, err)) ||
        (st = read_provenance(prov, name, &sa->prov, err)) ||
        (st = read_blob(root, "weights", sa->per_member * a.members, name, "$", sa->w, err)))
        goto fail;
    if (!(thr >= 0 && isfinite(thr))) {
        st = dp_error_set(err, DP_ERR_INVALID, "%s:$.ood.threshold: expected a number >= 0", name);
        goto fail;
    }
    if (n_ref > 0) {
        size_t n = (size_t)n_ref * dp_sa_ood_dims(sa);
        float *pts = malloc(n * sizeof *pts);
        if (!pts) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
            goto fail;
        }
        if (!(st = read_blob(ood, "points", n, name, "$.ood", pts, err)))
            st = dp_sa_set_ood(sa, pts, (int)n_ref, thr, err);
        free(pts);
        if (st) goto fail;
    }
    *out = sa;
    return DP_OK;
fail:
    dp_sa_free(sa);
    return st;
}

bool dp_sa_file(const char *path) {
    cJSON *root = NULL;
    struct dp_error err = {0};
    if (dp_json_load(path, &sa_spec, &root, &err)) return false;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
    bool yes = cJSON_IsString(f) && !strcmp(f->valuestring, "driple-sa-inspector/1");
    cJSON_Delete(root);
    return yes;
}

enum dp_status dp_sa_load(const char *path, struct dp_sa_inspector **out, struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_load(path, &sa_spec, &root, err);
    if (st) return st;
    st = from_json(root, path, out, err);
    cJSON_Delete(root);
    return st;
}

static bool add_blob(cJSON *o, const char *key, const float *v, size_t n) {
    char *s = dp_b64_floats(v, n);
    bool ok = s && cJSON_AddStringToObject(o, key, s);
    free(s);
    return ok;
}

/* e as an object: appended to arr, or (key not NULL) added to arr as key. */
static bool write_eval(cJSON *arr, const char *key, const struct dp_sa_eval *e) {
    cJSON *o = cJSON_CreateObject();
    bool in = key ? o && cJSON_AddItemToObject(arr, key, o) : dp_json_append(arr, o);
    if (key && !in) cJSON_Delete(o);
    return in && cJSON_AddStringToObject(o, "name", e->name) &&
           cJSON_AddStringToObject(o, "held", e->held) &&
           dp_json_add_number(o, "n_rows", e->n_rows) &&
           add_numbers(o, "mape", e->mape, DP_SA_N_OUT) &&
           add_numbers(o, "r2", e->r2, DP_SA_N_OUT) &&
           add_numbers(o, "coverage", e->coverage, DP_SA_N_OUT);
}

static bool write_tuning(cJSON *prov, const struct dp_sa_tuning *t) {
    cJSON *o = cJSON_AddObjectToObject(prov, "tuned");
    return o && cJSON_AddStringToObject(o, "setting", t->setting) &&
           cJSON_AddStringToObject(o, "data", t->data) &&
           cJSON_AddStringToObject(o, "dataset", t->dataset) &&
           cJSON_AddStringToObject(o, "base", t->base) &&
           dp_json_add_number(o, "n_train", t->n_train) &&
           dp_json_add_number(o, "n_val", t->n_val) &&
           dp_json_add_number(o, "epochs", t->epochs) &&
           dp_json_add_number(o, "seconds", t->seconds) &&
           write_eval(o, "before", &t->before) && write_eval(o, "after", &t->after);
}

enum dp_status dp_sa_save(const struct dp_sa_inspector *sa, const char *path,
                          const char *body_path, struct dp_error *err) {
    char rel[PATH_MAX];
    if (!dp_path_relative(path, body_path, rel, sizeof rel))
        return dp_error_set(err, DP_ERR_IO, "%s: cannot name its body %s relative to it (do "
                            "the body file and the directory exist?)", path, body_path);
    cJSON *root = cJSON_CreateObject(), *a, *outs, *norm, *iv, *ood, *prov, *evals, *names;
    const struct dp_sa_provenance *p = &sa->prov;
    if (!root || !cJSON_AddStringToObject(root, "format", "driple-sa-inspector/1") ||
        !cJSON_AddStringToObject(root, "body", rel) ||
        !cJSON_AddStringToObject(root, "body_key", dp_inspector_body_key(sa->body)) ||
        !(a = cJSON_AddObjectToObject(root, "architecture")) ||
        !dp_json_add_number(a, "hidden1", sa->arch.hidden1) ||
        !dp_json_add_number(a, "hidden2", sa->arch.hidden2) ||
        !dp_json_add_number(a, "members", sa->arch.members) ||
        !dp_json_add_number(a, "n_in", sa->n_in) ||
        !dp_json_add_number(a, "n_emb", sa->n_emb) || !(names = cJSON_AddArrayToObject(a, "inputs")))
        goto oom;
    /* The inputs after the embedding, named (documentation: the loader checks n_in). */
    for (int k = 0; k < DP_PROFILE_N; k++)
        if (!dp_json_append(names, cJSON_CreateString(dp_profile_names[k]))) goto oom;
    for (int k = 0; k < DP_SA_SETTING_N; k++)
        if (!dp_json_append(names, cJSON_CreateString(dp_sa_setting_names[k]))) goto oom;
    for (int k = 0; k < DP_SA_CROSS_N; k++) {
        const char *in = k == 0 && (sa->legacy & DP_SA_LEGACY_FP32_MATMUL) ? LEGACY_MATMUL
                         : dp_sa_cross_legacy_names[k] && (sa->legacy & DP_SA_LEGACY_NETWORK_RATE)
                             ? dp_sa_cross_legacy_names[k]
                             : dp_sa_cross_names[k];
        if (!dp_json_append(names, cJSON_CreateString(in))) goto oom;
    }
    for (int k = 0; !(sa->legacy & DP_SA_LEGACY_NO_BURST) && k < DP_SA_BURST_N; k++)
        if (!dp_json_append(names, cJSON_CreateString(dp_sa_burst_names[k]))) goto oom;
    for (int k = 0; !(sa->legacy & DP_SA_LEGACY_NO_PLACE) && k < DP_SA_PLACE_N; k++)
        if (!dp_json_append(names, cJSON_CreateString(dp_sa_place_names[k]))) goto oom;
    if (!(outs = cJSON_AddArrayToObject(root, "outputs"))) goto oom;
    for (int o = 0; o < DP_SA_N_OUT; o++) {
        cJSON *x = cJSON_CreateObject();
        if (!dp_json_append(outs, x) || !cJSON_AddStringToObject(x, "name", dp_sa_output_name(o)) ||
            !cJSON_AddStringToObject(x, "unit", dp_sa_output_unit(o)))
            goto oom;
    }
    if (!(norm = cJSON_AddObjectToObject(root, "normalisation")) ||
        !add_numbers(norm, "in_mean", sa->in_mean, sa->n_in) ||
        !add_numbers(norm, "in_std", sa->in_std, sa->n_in) ||
        !add_numbers(norm, "out_mean", sa->out_mean, DP_SA_N_OUT) ||
        !add_numbers(norm, "out_std", sa->out_std, DP_SA_N_OUT) ||
        !(iv = cJSON_AddObjectToObject(root, "interval")) ||
        !dp_json_add_number(iv, "coverage", 0.8) || !add_numbers(iv, "q", sa->q, DP_SA_N_OUT) ||
        !add_numbers(iv, "s0", sa->s0, DP_SA_N_OUT) ||
        !(ood = cJSON_AddObjectToObject(root, "ood")) ||
        !dp_json_add_number(ood, "n", sa->n_ref) ||
        !dp_json_add_number(ood, "threshold", sa->ood_threshold) ||
        (sa->n_ref && !add_blob(ood, "points", sa->ref, (size_t)sa->n_ref * dp_sa_ood_dims(sa))) ||
        !(prov = cJSON_AddObjectToObject(root, "provenance")) ||
        !cJSON_AddStringToObject(prov, "data", p->data) ||
        !cJSON_AddStringToObject(prov, "split", p->split) ||
        !dp_json_add_number(prov, "epochs", p->epochs) ||
        !dp_json_add_number(prov, "seconds", p->seconds) ||
        !dp_json_add_number(prov, "n_train", p->n_train) ||
        !dp_json_add_number(prov, "n_val", p->n_val) ||
        !dp_json_add_number(prov, "n_test", p->n_test) ||
        !dp_json_add_number(prov, "n_graphs", p->n_graphs) ||
        !(evals = cJSON_AddArrayToObject(prov, "evals")))
        goto oom;
    for (int e = 0; e < p->n_evals; e++)
        if (!write_eval(evals, NULL, &p->evals[e])) goto oom;
    if (p->tuned.setting[0] && !write_tuning(prov, &p->tuned)) goto oom;
    if (!add_blob(root, "weights", sa->w, sa->per_member * sa->arch.members)) goto oom;
    enum dp_status st = dp_json_save(root, path, false, err);
    cJSON_Delete(root);
    return st;
oom:
    cJSON_Delete(root);
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory writing the inspector", path);
}
