/* model_json.c: reads parameters in the JSON form the reference data uses
 * (`{architecture?, params: {name: {shape: [...], data: [row-major floats]}}}`) into a model,
 * and builds the architecture from the file when asked (from its "architecture" object when
 * present, otherwise inferred from the parameter names and shapes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "model_impl.h"

#define TORCH_JSON_MAX_BYTES ((size_t)256 << 20)
static const struct dp_read_spec weights_spec = {"weights JSON", TORCH_JSON_MAX_BYTES, true, NULL,
                                                 NULL};
#define MAX_DIM              1e8                /* largest dimension a shape may give */
#define MAX_ELEMS            ((size_t)1 << 31)  /* a parameter's element count stays below this */

/* A shape entry that is an integer in [1, MAX_DIM] (tested before any cast: a double out of
 * int64_t range makes the cast undefined). */
static bool shape_dim(const cJSON *v, int64_t *out) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= MAX_DIM) ||
        v->valuedouble != floor(v->valuedouble))
        return false;
    *out = (int64_t)v->valuedouble;
    return true;
}

/* Reads one {shape, data} entry into a new float array. */
static enum dp_status read_entry(const cJSON *e, const char *path, const char *name, int *n_dims,
                                 int64_t shape[4], float **out, struct dp_error *err) {
    char jp[160];
    snprintf(jp, sizeof jp, "$.params[\"%s\"]", name);
    const cJSON *sh, *data;
    enum dp_status st;
    if (!cJSON_IsObject(e))
        return dp_error_set(err, DP_ERR_PARSE, "%s:%s: expected an object {shape, data}", path, jp);
    if ((st = dp_json_get_array(e, "shape", false, path, jp, &sh, err))) return st;
    if ((st = dp_json_get_array(e, "data", false, path, jp, &data, err))) return st;
    int nd = cJSON_GetArraySize(sh);
    if (nd < 1 || nd > 4)
        return dp_error_set(err, DP_ERR_SHAPE, "%s:%s.shape: %d dimensions (1 to 4 allowed)", path,
                            jp, nd);
    size_t size = 1;
    for (int d = 0; d < nd; d++) {
        if (!shape_dim(cJSON_GetArrayItem(sh, d), &shape[d]))
            return dp_error_set(err, DP_ERR_SHAPE, "%s:%s.shape[%d]: not an integer in [1, %.0f]",
                                path, jp, d, MAX_DIM);
        /* four dimensions of up to 1e8 would wrap size_t and could match a short data array */
        if ((size_t)shape[d] > MAX_ELEMS / size)
            return dp_error_set(err, DP_ERR_SHAPE, "%s:%s.shape: more than %zu elements", path,
                                jp, MAX_ELEMS);
        size *= (size_t)shape[d];
    }
    if ((size_t)cJSON_GetArraySize(data) != size)
        return dp_error_set(err, DP_ERR_SHAPE, "%s:%s.data: %d values, shape needs %zu", path, jp,
                            cJSON_GetArraySize(data), size);
    float *buf = malloc(size * sizeof *buf + 1);
    if (!buf) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
    size_t k = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, data) {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
            free(buf);
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s.data[%zu]: not a finite number", path,
                                jp, k);
        }
        buf[k++] = (float)v->valuedouble;
    }
    *n_dims = nd;
    *out = buf;
    return DP_OK;
}

static enum dp_status load_params(struct dp_model *m, const cJSON *root, const char *path,
                                  struct dp_error *err) {
    const cJSON *params;
    enum dp_status st = dp_json_get_object(root, "params", false, path, "$", &params, err);
    if (st) return st;
    const cJSON *e;
    /* every entry must belong to the model */
    cJSON_ArrayForEach(e, params) {
        if (dp_model_find_param(m, e->string) < 0)
            return dp_error_set(err, DP_ERR_NOT_FOUND,
                                "%s:$.params[\"%s\"]: not a parameter of a %s model (hidden %d, "
                                "gru %s)", path, e->string, dp_layer_name(m->arch.layer),
                                m->arch.hidden, m->arch.gru ? "on" : "off");
    }
    for (int i = 0; i < m->n_params; i++) {
        const char *name = m->p[i].name;
        e = cJSON_GetObjectItemCaseSensitive(params, name);
        if (!e)
            return dp_error_set(err, DP_ERR_NOT_FOUND, "%s:$.params: missing parameter \"%s\"",
                                path, name);
        int nd = 0;
        int64_t shape[4] = {0, 0, 0, 0};
        float *buf = NULL;
        if ((st = read_entry(e, path, name, &nd, shape, &buf, err))) return st;
        st = dp_model_set_param(m, name, nd, shape, buf, err);
        free(buf);
        if (st) {
            dp_error_prefix(err, path);
            return st;
        }
    }
    return DP_OK;
}

enum dp_status dp_model_load_torch_json(struct dp_model *m, const char *path,
                                        struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_load(path, &weights_spec, &root, err);
    if (st) return st;
    /* load into a copy so that a failure leaves m untouched */
    struct dp_model *tmp = dp_model_clone(m);
    if (!tmp) {
        cJSON_Delete(root);
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
    }
    st = load_params(tmp, root, path, err);
    if (!st) memcpy(m->data, tmp->data, m->n_data * sizeof *m->data);
    dp_model_free(tmp);
    cJSON_Delete(root);
    return st;
}

/* The shape of params[name] (dimension d), or -1 when absent or not a valid dimension (the
 * entry's own check then names the problem). */
static int64_t param_dim(const cJSON *params, const char *name, int d) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(params, name);
    const cJSON *sh = e ? cJSON_GetObjectItemCaseSensitive(e, "shape") : NULL;
    int64_t v;
    return sh && shape_dim(cJSON_GetArrayItem(sh, d), &v) ? v : -1;
}

enum dp_status dp_model_load_torch_json_new(const char *path, struct dp_model **out,
                                            struct dp_error *err) {
    cJSON *root = NULL;
    struct dp_model *m = NULL;
    enum dp_status st = dp_json_load(path, &weights_spec, &root, err);
    if (st) return st;
    struct dp_arch a;
    dp_arch_default(&a);
    const cJSON *params, *arch;
    if ((st = dp_json_get_object(root, "params", false, path, "$", &params, err))) goto fail;
    if ((st = dp_json_get_object(root, "architecture", true, path, "$", &arch, err))) goto fail;
    /* infer from the names, then let "architecture" confirm or refine */
    if (cJSON_GetObjectItemCaseSensitive(params, "conv_layers.0.epsilon")) a.layer = DP_LAYER_GIN;
    else if (cJSON_GetObjectItemCaseSensitive(params, "conv_layers.0.att_src")) a.layer = DP_LAYER_GAT;
    else if (cJSON_GetObjectItemCaseSensitive(params, "conv_layers.0.lin.linear.weight"))
        a.layer = DP_LAYER_MPNN;
    a.gru = cJSON_GetObjectItemCaseSensitive(params, "gru.gru.weight_ih_l0") != NULL;
    int64_t h = param_dim(params, "graph_read_out.set2set.lstm.weight_hh_l0", 1);
    if (h > 0) a.hidden = (int)h;
    if (a.layer == DP_LAYER_GAT) {
        int64_t heads = param_dim(params, "conv_layers.0.att_src", 0);
        if (heads > 0) a.heads = (int)heads;
    }
    if (a.layer == DP_LAYER_MPNN) {
        int t = 0;
        char nm[96];
        for (;; t++) {
            snprintf(nm, sizeof nm, "conv_layers.0.towers.%d.pre.linear.weight", t);
            if (!cJSON_GetObjectItemCaseSensitive(params, nm)) break;
        }
        a.towers = t;
    }
    if (arch) {
        const char *ls = NULL;
        int64_t v;
        enum dp_layer layer;
        if ((st = dp_json_get_string(arch, "layer", true, path, "$.architecture", &ls, err)))
            goto fail;
        if (ls && !dp_layer_parse(ls, &layer)) {
            st = dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:$.architecture.layer: unknown layer "
                              "type \"%s\"", path, ls);
            goto fail;
        }
        if (ls && layer != a.layer) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:$.architecture.layer: \"%s\" but the "
                              "parameters are those of a %s model", path, ls,
                              dp_layer_name(a.layer));
            goto fail;
        }
        v = a.hidden;
        if ((st = dp_json_get_int(arch, "hidden", true, 1, 4096, path, "$.architecture", &v, err)))
            goto fail;
        a.hidden = (int)v;
        v = a.n_feat;
        if ((st = dp_json_get_int(arch, "nfeat", true, 1, 64, path, "$.architecture", &v, err)))
            goto fail;
        a.n_feat = (int)v;
        v = a.n_out;
        if ((st = dp_json_get_int(arch, "outputs", true, 1, 64, path, "$.architecture", &v, err)))
            goto fail;
        a.n_out = (int)v;
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(arch, "gru");
        if (cJSON_IsBool(g) && cJSON_IsTrue(g) != a.gru) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:$.architecture.gru: disagrees with the "
                              "parameters", path);
            goto fail;
        }
    }
    if ((st = dp_arch_check(&a, err))) {
        dp_error_prefix(err, path);
        goto fail;
    }
    if ((st = dp_model_init(&a, 0, &m, err))) goto fail;
    if ((st = load_params(m, root, path, err))) goto fail;
    cJSON_Delete(root);
    *out = m;
    return DP_OK;
fail:
    dp_model_free(m);
    cJSON_Delete(root);
    return st;
}
