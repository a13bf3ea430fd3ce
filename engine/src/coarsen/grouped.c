/* grouped.c: the grouped (coarsened) graph: allocation and the driple-grouped/1 reader and
 * writer. Edges are normalised to i < j, sorted and de-duplicated on load. */
#include "dp/grouped.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"

#define GROUPED_MAX_BYTES ((size_t)256 << 20)
static const struct dp_read_spec grouped_spec = {"grouped graph", GROUPED_MAX_BYTES, true, NULL,
                                                 NULL};
#define GROUPED_MAX_GROUPS 1000000

static const char *const feature_keys[DP_N_FEATURES_MAX] = {
    "tensor_size", "ops", "type_weight", "flops", "bytes", "param_bytes"};

struct dp_grouped *dp_grouped_init(const char *graph, int n_groups, int n_edges) {
    if (n_groups < 0 || n_edges < 0) return NULL;
    struct dp_grouped *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    size_t len = strlen(graph ? graph : "") + 1;
    g->graph = malloc(len);
    g->x = calloc((size_t)n_groups * DP_N_FEATURES + 1, sizeof *g->x);
    g->edges = calloc((size_t)n_edges * 2 + 1, sizeof *g->edges);
    if (!g->graph || !g->x || !g->edges) {
        dp_grouped_free(g);
        return NULL;
    }
    memcpy(g->graph, graph ? graph : "", len);
    g->seed = -1;
    g->n_groups = n_groups;
    g->n_edges = n_edges;
    return g;
}

bool dp_grouped_add_cost(struct dp_grouped *g) {
    if (g->cost) return true;
    g->cost = calloc((size_t)g->n_groups * DP_N_COST_FEATURES + 1, sizeof *g->cost);
    return g->cost != NULL;
}

void dp_grouped_drop_cost(struct dp_grouped *g) {
    free(g->cost);
    g->cost = NULL;
}

void dp_grouped_free(struct dp_grouped *g) {
    if (!g) return;
    free(g->cost);
    if (g->member_start)
        for (int i = 0; i < g->member_start[g->n_groups]; i++) free(g->members[i]);
    free(g->members);
    free(g->member_start);
    free(g->edges);
    free(g->x);
    free(g->graph);
    free(g);
}

struct dp_grouped *dp_grouped_clone(const struct dp_grouped *g, bool with_members) {
    struct dp_grouped *c = dp_grouped_init(g->graph, g->n_groups, g->n_edges);
    if (!c) return NULL;
    c->batch = g->batch;
    c->seed = g->seed;
    memcpy(c->x, g->x, (size_t)g->n_groups * DP_N_FEATURES * sizeof *c->x);
    if (g->cost) {
        if (!dp_grouped_add_cost(c)) goto fail;
        memcpy(c->cost, g->cost, (size_t)g->n_groups * DP_N_COST_FEATURES * sizeof *c->cost);
    }
    memcpy(c->edges, g->edges, (size_t)g->n_edges * 2 * sizeof *c->edges);
    if (!with_members || !g->member_start) return c;
    int n = g->member_start[g->n_groups];
    c->member_start = calloc((size_t)g->n_groups + 1, sizeof *c->member_start);
    c->members = calloc((size_t)n + 1, sizeof *c->members);
    if (!c->member_start || !c->members) goto fail;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(g->members[i]) + 1;
        if (!(c->members[i] = malloc(len))) goto fail;
        memcpy(c->members[i], g->members[i], len);
        /* the count dp_grouped_free reads: names copied so far, should the next one fail */
        c->member_start[c->n_groups] = i + 1;
    }
    memcpy(c->member_start, g->member_start, ((size_t)g->n_groups + 1) * sizeof *c->member_start);
    return c;
fail:
    dp_grouped_free(c);
    return NULL;
}

static enum dp_status load_members(struct dp_grouped *g, const cJSON *groups, const char *name,
                                   struct dp_error *err) {
    int total = 0, with = 0;
    const cJSON *grp;
    cJSON_ArrayForEach(grp, groups) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(grp, "members");
        if (m) {
            with++;
            if (!cJSON_IsArray(m))
                return dp_error_set(err, DP_ERR_INVALID, "%s:$.groups[%d].members: expected an array",
                                    name, with - 1);
            total += cJSON_GetArraySize(m);
        }
    }
    if (with == 0) return DP_OK;
    if (with != g->n_groups)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:$.groups: %d of %d groups list members (all or none)", name, with,
                            g->n_groups);
    g->member_start = calloc((size_t)g->n_groups + 1, sizeof *g->member_start);
    g->members = calloc((size_t)total + 1, sizeof *g->members);
    if (!g->member_start || !g->members) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    int k = 0, gi = 0;
    cJSON_ArrayForEach(grp, groups) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(grp, "members"), *s;
        g->member_start[gi] = k;
        int mi = 0;
        cJSON_ArrayForEach(s, m) {
            if (!cJSON_IsString(s)) {
                g->member_start[g->n_groups] = k;
                return dp_error_set(err, DP_ERR_INVALID,
                                    "%s:$.groups[%d].members[%d]: expected a string", name, gi, mi);
            }
            size_t len = strlen(s->valuestring) + 1;
            if (!(g->members[k] = malloc(len))) {
                g->member_start[g->n_groups] = k;
                return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
            }
            memcpy(g->members[k++], s->valuestring, len);
            mi++;
        }
        gi++;
    }
    g->member_start[g->n_groups] = k;
    return DP_OK;
}

static enum dp_status from_json(const cJSON *root, const char *name, struct dp_grouped **out,
                                struct dp_error *err) {
    enum dp_status st = dp_json_check_format(root, "driple-grouped/1", name, err);
    if (st) return st;
    const char *gname = "";
    const cJSON *groups, *edges;
    int64_t batch = 0, seed = -1;
    if ((st = dp_json_get_string(root, "graph", true, name, "$", &gname, err)) ||
        (st = dp_json_get_int(root, "batch", true, 0, INT64_C(1) << 40, name, "$", &batch, err)) ||
        (st = dp_json_get_int(root, "seed", true, -1, INT64_C(1) << 53, name, "$", &seed, err)) ||
        (st = dp_json_get_array(root, "groups", false, name, "$", &groups, err)) ||
        (st = dp_json_get_array(root, "edges", false, name, "$", &edges, err)))
        return st;
    int n = cJSON_GetArraySize(groups), m = cJSON_GetArraySize(edges);
    if (n == 0) return dp_error_set(err, DP_ERR_INVALID, "%s:$.groups: empty (a graph needs a group)", name);
    if (n > GROUPED_MAX_GROUPS)
        return dp_error_set(err, DP_ERR_INVALID, "%s:$.groups: %d groups (at most %d)", name, n,
                            GROUPED_MAX_GROUPS);
    struct dp_grouped *g = dp_grouped_init(gname, n, m);
    if (!g) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    g->batch = batch;
    g->seed = seed;

    char path[64];
    int i = 0, with_cost = 0;
    const cJSON *grp;
    cJSON_ArrayForEach(grp, groups) {
        snprintf(path, sizeof path, "$.groups[%d]", i);
        if (!cJSON_IsObject(grp)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", name, path);
            goto fail;
        }
        /* Cost features: all three in every group, or none anywhere. */
        int has = 0;
        for (int f = DP_N_FEATURES; f < DP_N_FEATURES_MAX; f++)
            has += cJSON_GetObjectItemCaseSensitive(grp, feature_keys[f]) != NULL;
        if (has && !dp_grouped_add_cost(g)) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
            goto fail;
        }
        if ((has != 0 && has != DP_N_COST_FEATURES) || (i > 0 && (has != 0) != (with_cost != 0))) {
            st = dp_error_set(err, DP_ERR_INVALID,
                              "%s:%s: cost features (flops, bytes, param_bytes) must be given "
                              "all three in every group or in none", name, path);
            goto fail;
        }
        with_cost += has != 0;
        for (int f = 0; f < (has ? DP_N_FEATURES_MAX : DP_N_FEATURES); f++) {
            double v = 0;
            if ((st = dp_json_get_number(grp, feature_keys[f], false, name, path, &v, err))) goto fail;
            if (v < 0 || v > 1e30) {
                st = dp_error_set(err, DP_ERR_INVALID, "%s:%s.%s: %g is out of range [0, 1e30]",
                                  name, path, feature_keys[f], v);
                goto fail;
            }
            if (f < DP_N_FEATURES) g->x[(size_t)i * DP_N_FEATURES + f] = v;
            else g->cost[(size_t)i * DP_N_COST_FEATURES + (f - DP_N_FEATURES)] = v;
        }
        i++;
    }
    if ((st = dp_json_read_edges(edges, n, name, "$.edges", g->edges, &g->n_edges, err)))
        goto fail;
    if ((st = load_members(g, groups, name, err))) goto fail;
    *out = g;
    return DP_OK;
fail:
    dp_grouped_free(g);
    return st;
}

enum dp_status dp_grouped_parse_json(const char *text, size_t len, const char *name,
                                     struct dp_grouped **out, struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_parse(text, len, name, &root, err);
    if (st) return st;
    st = from_json(root, name, out, err);
    cJSON_Delete(root);
    return st;
}

enum dp_status dp_grouped_load_json(const char *path, struct dp_grouped **out, struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_load(path, &grouped_spec, &root, err);
    if (st) return st;
    st = from_json(root, path, out, err);
    cJSON_Delete(root);
    return st;
}

enum dp_status dp_grouped_save_json(const struct dp_grouped *g, const char *path,
                                    struct dp_error *err) {
    enum dp_status st = DP_ERR_NOMEM;
    cJSON *root = cJSON_CreateObject(), *groups, *edges;
    if (!root || !cJSON_AddStringToObject(root, "format", "driple-grouped/1") ||
        !cJSON_AddStringToObject(root, "graph", g->graph))
        goto fail;
    if (g->batch > 0 ? !cJSON_AddNumberToObject(root, "batch", (double)g->batch)
                     : !cJSON_AddNullToObject(root, "batch"))
        goto fail;
    if (g->seed >= 0 && !cJSON_AddNumberToObject(root, "seed", (double)g->seed)) goto fail;
    if (!(groups = cJSON_AddArrayToObject(root, "groups"))) goto fail;
    for (int i = 0; i < g->n_groups; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(groups, o)) { cJSON_Delete(o); goto fail; }
        for (int f = 0; f < (g->cost ? DP_N_FEATURES_MAX : DP_N_FEATURES); f++) {
            cJSON *v = dp_json_number(dp_grouped_feat(g, i, f));
            if (!v || !cJSON_AddItemToObject(o, feature_keys[f], v)) { cJSON_Delete(v); goto fail; }
        }
        if (g->member_start) {
            cJSON *m = cJSON_AddArrayToObject(o, "members");
            if (!m) goto fail;
            for (int k = g->member_start[i]; k < g->member_start[i + 1]; k++) {
                cJSON *s = cJSON_CreateString(g->members[k]);
                if (!s || !cJSON_AddItemToArray(m, s)) { cJSON_Delete(s); goto fail; }
            }
        }
    }
    if (!(edges = cJSON_AddArrayToObject(root, "edges"))) goto fail;
    for (int e = 0; e < g->n_edges; e++) {
        cJSON *p = cJSON_CreateIntArray(&g->edges[2 * e], 2);
        if (!p || !cJSON_AddItemToArray(edges, p)) { cJSON_Delete(p); goto fail; }
    }
    st = dp_json_save(root, path, false, err);
    cJSON_Delete(root);
    return st;
fail:
    cJSON_Delete(root);
    return dp_error_set(err, st, "%s: out of memory writing the grouped graph", path);
}
