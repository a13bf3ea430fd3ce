/* sweep_json.c: the driple-sweep/1 reader and writer. Graphs carry their profile (raw fields)
 * and grouped graph as blobs (the six features per group and the edge pairs as little-endian
 * float32 in base64: a sweep of ten thousand graphs stays under the JSON readers' value cap);
 * rows are compact arrays [graph, setting id, [12 labels], iteration_ms, memory_gb, oom], the id
 * parsed against the GPU catalog. */
#include "dp/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "dp/metrics.h"
#include "dataset_impl.h"
#include "gnn/inspector_impl.h" /* dp_b64_floats, dp_json_get_b64_floats */

#define SWEEP_MAX_BYTES ((size_t)1 << 31)

static const struct dp_read_spec sweep_spec = {"sweep", SWEEP_MAX_BYTES, true, NULL, NULL};

/* A finite number >= 0 read from v into *out; false otherwise. */
static bool nonneg(const cJSON *v, double *out) {
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) return false;
    *out = v->valuedouble;
    return true;
}

static int cmp_edge(const void *a, const void *b) {
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* {seed, n_groups, n_edges, features: blob n_groups x 6, edges: blob 2 x n_edges}: features
 * finite >= 0, edges in range, no self loops (sorted and de-duplicated). */
static enum dp_status read_grouped(const cJSON *o, struct dp_sweep_graph *sg, const char *name,
                                   const char *path, struct dp_error *err) {
    int64_t seed = -1, n = 0, m = 0;
    enum dp_status st;
    if ((st = dp_json_get_int(o, "seed", true, -1, INT64_C(1) << 53, name, path, &seed, err)) ||
        (st = dp_json_get_int(o, "n_groups", false, 1, 1000000, name, path, &n, err)) ||
        (st = dp_json_get_int(o, "n_edges", false, 0, 100000000, name, path, &m, err)))
        return st;
    struct dp_grouped *g = dp_grouped_init(sg->graph, (int)n, (int)m);
    float *f = malloc(((size_t)n * DP_N_FEATURES_MAX + 2 * (size_t)m + 1) * sizeof *f);
    if (!g || !f || !dp_grouped_add_cost(g)) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    g->batch = sg->batch;
    g->seed = seed;
    if ((st = dp_json_get_b64_floats(o, "features", (size_t)n * DP_N_FEATURES_MAX, name, path, f,
                                     err)))
        goto done;
    for (int64_t i = 0; i < n * DP_N_FEATURES_MAX; i++) {
        double v = f[i];
        if (!(v >= 0 && isfinite(v))) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.features: group %lld feature %lld is "
                              "not a finite number >= 0", name, path, (long long)(i / DP_N_FEATURES_MAX),
                              (long long)(i % DP_N_FEATURES_MAX));
            goto done;
        }
        int64_t r = i / DP_N_FEATURES_MAX, k = i % DP_N_FEATURES_MAX;
        if (k < DP_N_FEATURES) g->x[r * DP_N_FEATURES + k] = v;
        else g->cost[r * DP_N_COST_FEATURES + (k - DP_N_FEATURES)] = v;
    }
    if ((st = dp_json_get_b64_floats(o, "edges", 2 * (size_t)m, name, path, f, err))) goto done;
    int kept = 0;
    for (int64_t e = 0; e < m; e++) {
        float a = f[2 * e], b = f[2 * e + 1];
        if (!(a >= 0 && b >= 0 && a < n && b < n && a != b && a == floorf(a) && b == floorf(b))) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.edges: edge %lld (%g, %g) is not a pair "
                              "of distinct groups in [0, %lld)", name, path, (long long)e, a, b,
                              (long long)n);
            goto done;
        }
        int i = (int)a, j = (int)b;
        g->edges[2 * kept] = i < j ? i : j;
        g->edges[2 * kept + 1] = i < j ? j : i;
        kept++;
    }
    /* sorted and unique, as every grouped graph keeps them */
    qsort(g->edges, (size_t)kept, 2 * sizeof *g->edges, cmp_edge);
    int uniq = 0;
    for (int e = 0; e < kept; e++)
        if (!uniq || g->edges[2 * e] != g->edges[2 * uniq - 2] ||
            g->edges[2 * e + 1] != g->edges[2 * uniq - 1]) {
            g->edges[2 * uniq] = g->edges[2 * e];
            g->edges[2 * uniq + 1] = g->edges[2 * e + 1];
            uniq++;
        }
    g->n_edges = uniq;
    sg->grouped = g;
    g = NULL;
done:
    dp_grouped_free(g);
    free(f);
    return st;
}

static enum dp_status read_graph(const cJSON *o, const char *name, const char *path,
                                 struct dp_sweep_graph *g, struct dp_error *err) {
    const char *graph = NULL, *model = NULL, *prec = NULL;
    const cJSON *prof, *grouped;
    char sub[96];
    enum dp_status st;
    if (!cJSON_IsObject(o))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", name, path);
    if ((st = dp_json_get_string(o, "graph", false, name, path, &graph, err)) ||
        (st = dp_json_get_string(o, "model", false, name, path, &model, err)) ||
        (st = dp_json_copy_string(o, "optimizer", false, name, path, g->optimizer,
                                  sizeof g->optimizer, err)) ||
        (st = dp_json_get_string(o, "precision", false, name, path, &prec, err)) ||
        (st = dp_json_get_int(o, "batch", false, 1, INT64_C(1) << 40, name, path, &g->batch,
                              err)) ||
        (st = dp_json_get_object(o, "profile", false, name, path, &prof, err)) ||
        (st = dp_json_get_object(o, "grouped", false, name, path, &grouped, err)))
        return st;
    if (!dp_precision_parse(prec, &g->precision))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s.precision: '%s' is not fp32 or mixed",
                            name, path, prec);
    if (!(g->graph = strdup(graph)) || !(g->model = strdup(model)))
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    snprintf(sub, sizeof sub, "%s.profile", path);
    /* Files before "f16": every sweep graph is the builder's, in fp16 under mixed precision */
    if ((st = dp_profile_read_json(prof, g->batch, g->precision == DP_PREC_MIXED, name, sub,
                                   &g->profile, err)))
        return st;
    snprintf(sub, sizeof sub, "%s.grouped", path);
    return read_grouped(grouped, g, name, sub, err);
}

static enum dp_status read_row(const cJSON *o, const char *name, const char *path,
                               const struct dp_sweep *sw, const struct dp_gpu_catalog *cat,
                               struct dp_sweep_row *r, struct dp_error *err) {
    const cJSON *g = cJSON_GetArrayItem(o, 0), *id = cJSON_GetArrayItem(o, 1);
    const cJSON *labels = cJSON_GetArrayItem(o, 2), *oom = cJSON_GetArrayItem(o, 5);
    if (!cJSON_IsArray(o) || cJSON_GetArraySize(o) != 6)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected [graph, setting id, [12 "
                            "labels], iteration_ms, memory_gb, oom]", name, path);
    if (!cJSON_IsNumber(g) || g->valuedouble != floor(g->valuedouble) || g->valuedouble < 0 ||
        g->valuedouble >= sw->n_graphs)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[0]: not the index of a graph (0 .. %d)",
                            name, path, sw->n_graphs - 1);
    r->graph = (int)g->valuedouble;
    if (!cJSON_IsString(id))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[1]: expected a setting id", name, path);
    struct dp_error e = {0};
    if (dp_setting_parse_id(id->valuestring, cat, &r->setting, &e))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[1]: %s", name, path, e.msg);
    if (r->setting.precision != sw->graphs[r->graph].precision)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[1]: %s is not the precision of graph %d",
                            name, path, r->setting.id, r->graph);
    if (!cJSON_IsArray(labels) || cJSON_GetArraySize(labels) != DP_N_OUTPUTS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[2]: expected %d labels", name, path,
                            DP_N_OUTPUTS);
    for (int k = 0; k < DP_N_OUTPUTS; k++)
        if (!nonneg(cJSON_GetArrayItem(labels, k), &r->labels[k]))
            return dp_error_set(err, DP_ERR_INVALID, "%s:%s[2][%d]: expected a number >= 0 (%s)",
                                name, path, k, dp_outputs[k].name);
    if (!nonneg(cJSON_GetArrayItem(o, 3), &r->iteration_ms) || !(r->iteration_ms > 0))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[3]: iteration_ms must be > 0", name, path);
    if (!nonneg(cJSON_GetArrayItem(o, 4), &r->memory_gb))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[4]: memory_gb must be >= 0", name, path);
    if (!cJSON_IsNumber(oom) || (oom->valuedouble != 0 && oom->valuedouble != 1))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s[5]: oom must be 0 or 1", name, path);
    r->oom = oom->valuedouble == 1;
    return DP_OK;
}

static enum dp_status from_json(const cJSON *root, const char *name,
                                const struct dp_gpu_catalog *cat, struct dp_sweep *sw,
                                struct dp_error *err) {
    const cJSON *source, *outputs, *graphs, *rows, *v;
    enum dp_status st;
    if ((st = dp_json_check_format(root, "driple-sweep/1", name, err)) ||
        (st = dp_json_get_object(root, "source", false, name, "$", &source, err)) ||
        (st = dp_json_get_array(root, "outputs", false, name, "$", &outputs, err)) ||
        (st = dp_json_get_array(root, "graphs", false, name, "$", &graphs, err)) ||
        (st = dp_json_get_array(root, "rows", false, name, "$", &rows, err)) ||
        (st = dp_json_copy_string(source, "kind", false, name, "$.source", sw->source.kind,
                                  sizeof sw->source.kind, err)) ||
        (st = dp_json_copy_string(source, "where", true, name, "$.source", sw->source.where,
                                  sizeof sw->source.where, err)) ||
        (st = dp_json_copy_string(source, "when", true, name, "$.source", sw->source.when,
                                  sizeof sw->source.when, err)))
        return st;
    if (!dp_dataset_source_ok(sw->source.kind))
        return dp_error_set(err, DP_ERR_INVALID, "%s:$.source.kind: '%s' is not \"simulated\" "
                            "or \"measured\"", name, sw->source.kind);
    int i = 0;
    if (cJSON_GetArraySize(outputs) != DP_N_OUTPUTS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:$.outputs: expected the %d outputs", name,
                            DP_N_OUTPUTS);
    cJSON_ArrayForEach(v, outputs) {
        if (!cJSON_IsString(v) || strcmp(v->valuestring, dp_outputs[i].name))
            return dp_error_set(err, DP_ERR_INVALID, "%s:$.outputs[%d]: expected \"%s\"", name,
                                i, dp_outputs[i].name);
        i++;
    }
    int ng = cJSON_GetArraySize(graphs), nr = cJSON_GetArraySize(rows);
    if (!(sw->graphs = calloc((size_t)ng + 1, sizeof *sw->graphs)) ||
        !(sw->rows = calloc((size_t)nr + 1, sizeof *sw->rows)))
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    char path[64];
    cJSON_ArrayForEach(v, graphs) {
        snprintf(path, sizeof path, "$.graphs[%d]", sw->n_graphs);
        st = read_graph(v, name, path, &sw->graphs[sw->n_graphs], err);
        sw->n_graphs++; /* counted even when it failed: dp_sweep_free frees what it holds */
        if (st) return st;
    }
    cJSON_ArrayForEach(v, rows) {
        snprintf(path, sizeof path, "$.rows[%d]", sw->n_rows);
        if ((st = read_row(v, name, path, sw, cat, &sw->rows[sw->n_rows], err))) return st;
        sw->n_rows++;
    }
    return DP_OK;
}

enum dp_status dp_sweep_parse(const char *text, size_t len, const char *name,
                              const struct dp_gpu_catalog *cat, struct dp_sweep *out,
                              struct dp_error *err) {
    cJSON *root = NULL;
    memset(out, 0, sizeof *out);
    enum dp_status st = dp_json_parse(text, len, name, &root, err);
    if (st) return st;
    if ((st = from_json(root, name, cat, out, err))) dp_sweep_free(out);
    cJSON_Delete(root);
    return st;
}

enum dp_status dp_sweep_load(const char *path, const struct dp_gpu_catalog *cat,
                             struct dp_sweep *out, struct dp_error *err) {
    cJSON *root = NULL;
    memset(out, 0, sizeof *out);
    enum dp_status st = dp_json_load(path, &sweep_spec, &root, err);
    if (st) return st;
    if ((st = from_json(root, path, cat, out, err))) dp_sweep_free(out);
    cJSON_Delete(root);
    return st;
}

static bool write_graph(cJSON *arr, const struct dp_sweep_graph *g) {
    cJSON *o = cJSON_CreateObject();
    if (!dp_json_append(arr, o) || !cJSON_AddStringToObject(o, "graph", g->graph) ||
        !cJSON_AddStringToObject(o, "model", g->model) ||
        !cJSON_AddStringToObject(o, "optimizer", g->optimizer) ||
        !cJSON_AddStringToObject(o, "precision", dp_precision_name(g->precision)) ||
        !dp_json_add_number(o, "batch", (double)g->batch) ||
        !dp_profile_write_json(o, "profile", &g->profile))
        return false;
    const struct dp_grouped *gr = g->grouped;
    cJSON *go = cJSON_AddObjectToObject(o, "grouped");
    float *f = malloc(((size_t)gr->n_groups * DP_N_FEATURES_MAX + 2 * (size_t)gr->n_edges + 1) *
                      sizeof *f);
    bool ok = go && f && dp_json_add_number(go, "seed", (double)gr->seed) &&
              dp_json_add_number(go, "n_groups", gr->n_groups) &&
              dp_json_add_number(go, "n_edges", gr->n_edges);
    if (ok) {
        for (int i = 0; i < gr->n_groups; i++)
            for (int k = 0; k < DP_N_FEATURES_MAX; k++)
                f[(size_t)i * DP_N_FEATURES_MAX + k] = (float)dp_grouped_feat(gr, i, k);
        char *b = dp_b64_floats(f, (size_t)gr->n_groups * DP_N_FEATURES_MAX);
        ok = b && cJSON_AddStringToObject(go, "features", b);
        free(b);
    }
    if (ok) {
        for (int e = 0; e < 2 * gr->n_edges; e++) f[e] = (float)gr->edges[e];
        char *b = dp_b64_floats(f, 2 * (size_t)gr->n_edges);
        ok = b && cJSON_AddStringToObject(go, "edges", b);
        free(b);
    }
    free(f);
    return ok;
}

static bool write_row(cJSON *arr, const struct dp_sweep_row *r) {
    cJSON *o = cJSON_CreateArray(), *labels;
    if (!dp_json_append(arr, o) || !dp_json_append(o, cJSON_CreateNumber(r->graph)) ||
        !dp_json_append(o, cJSON_CreateString(r->setting.id)) ||
        !dp_json_append(o, labels = cJSON_CreateArray()))
        return false;
    for (int k = 0; k < DP_N_OUTPUTS; k++)
        if (!dp_json_append(labels, dp_json_number(r->labels[k]))) return false;
    return dp_json_append(o, dp_json_number(r->iteration_ms)) &&
           dp_json_append(o, dp_json_number(r->memory_gb)) &&
           dp_json_append(o, cJSON_CreateNumber(r->oom));
}

enum dp_status dp_sweep_save(const struct dp_sweep *s, const char *path, struct dp_error *err) {
    cJSON *root = cJSON_CreateObject(), *src, *outputs, *graphs, *rows;
    if (!root || !cJSON_AddStringToObject(root, "format", "driple-sweep/1") ||
        !(src = cJSON_AddObjectToObject(root, "source")) ||
        !cJSON_AddStringToObject(src, "kind", s->source.kind) ||
        !cJSON_AddStringToObject(src, "where", s->source.where) ||
        !cJSON_AddStringToObject(src, "when", s->source.when) ||
        !(outputs = cJSON_AddArrayToObject(root, "outputs")))
        goto fail;
    for (int k = 0; k < DP_N_OUTPUTS; k++)
        if (!dp_json_append(outputs, cJSON_CreateString(dp_outputs[k].name))) goto fail;
    if (!(graphs = cJSON_AddArrayToObject(root, "graphs"))) goto fail;
    for (int i = 0; i < s->n_graphs; i++)
        if (!write_graph(graphs, &s->graphs[i])) goto fail;
    if (!(rows = cJSON_AddArrayToObject(root, "rows"))) goto fail;
    for (int i = 0; i < s->n_rows; i++)
        if (!write_row(rows, &s->rows[i])) goto fail;
    enum dp_status st = dp_json_save(root, path, false, err);
    cJSON_Delete(root);
    return st;
fail:
    cJSON_Delete(root);
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory writing the sweep", path);
}
