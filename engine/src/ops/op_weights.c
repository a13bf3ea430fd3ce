/* op_weights.c: the op-type weight table ("driple-op-weights/1"): each op type's relative
 * frequency over a corpus of training graphs, the third group feature. Loading, lookup (open
 * addressing), building from graphs and writing. Types absent from the table weigh 0. */
#include "dp/coarsen.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/shipped.h"
#include "core/hash.h"
#include "core/json_util.h"

#define WEIGHTS_MAX_BYTES ((size_t)1 << 26)
static const struct dp_read_spec weights_spec = {"op-type weights file", WEIGHTS_MAX_BYTES, true,
                                                 NULL, NULL};

struct dp_op_weights {
    char   *source;
    size_t  n, cap;   /* entries */
    char  **op;
    double *w;
    int    *index;    /* open addressing over entries, -1 = empty; n_index a power of two */
    size_t  n_index;
};

void dp_op_weights_free(struct dp_op_weights *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) free(w->op[i]);
    free(w->op);
    free(w->w);
    free(w->index);
    free(w->source);
    free(w);
}

static struct dp_op_weights *weights_new(const char *source) {
    struct dp_op_weights *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    size_t len = strlen(source ? source : "") + 1;
    w->n_index = 64;
    w->source = malloc(len);
    w->index = malloc(w->n_index * sizeof *w->index);
    if (!w->source || !w->index) {
        dp_op_weights_free(w);
        return NULL;
    }
    memcpy(w->source, source ? source : "", len);
    for (size_t i = 0; i < w->n_index; i++) w->index[i] = -1;
    return w;
}

static int find(const struct dp_op_weights *w, const char *op) {
    size_t h = dp_hash_str(op) & (w->n_index - 1);
    for (int i; (i = w->index[h]) >= 0; h = (h + 1) & (w->n_index - 1))
        if (!strcmp(w->op[i], op)) return i;
    return -1;
}

/* Adds `v` to op's entry (creating it). */
static bool add(struct dp_op_weights *w, const char *op, double v) {
    int i = find(w, op);
    if (i >= 0) {
        w->w[i] += v;
        return true;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        char **o = realloc(w->op, cap * sizeof *o);
        if (!o) return false;
        w->op = o;
        double *x = realloc(w->w, cap * sizeof *x);
        if (!x) return false;
        w->w = x;
        w->cap = cap;
    }
    if (2 * (w->n + 1) > w->n_index) {
        size_t ni = w->n_index * 2;
        int *idx = malloc(ni * sizeof *idx);
        if (!idx) return false;
        for (size_t k = 0; k < ni; k++) idx[k] = -1;
        for (size_t k = 0; k < w->n; k++) {
            size_t h = dp_hash_str(w->op[k]) & (ni - 1);
            while (idx[h] >= 0) h = (h + 1) & (ni - 1);
            idx[h] = (int)k;
        }
        free(w->index);
        w->index = idx;
        w->n_index = ni;
    }
    size_t len = strlen(op) + 1;
    if (!(w->op[w->n] = malloc(len))) return false;
    memcpy(w->op[w->n], op, len);
    w->w[w->n] = v;
    size_t h = dp_hash_str(op) & (w->n_index - 1);
    while (w->index[h] >= 0) h = (h + 1) & (w->n_index - 1);
    w->index[h] = (int)w->n;
    w->n++;
    return true;
}

double dp_op_weight(const struct dp_op_weights *w, const char *op, bool *known) {
    int i = w && op ? find(w, op) : -1;
    if (known) *known = i >= 0;
    return i >= 0 ? w->w[i] : 0;
}

const char *dp_op_weights_source(const struct dp_op_weights *w) { return w ? w->source : ""; }
size_t dp_op_weights_count(const struct dp_op_weights *w) { return w ? w->n : 0; }

static enum dp_status from_json(const cJSON *root, const char *name, struct dp_op_weights **out,
                                struct dp_error *err) {
    enum dp_status st = dp_json_check_format(root, "driple-op-weights/1", name, err);
    if (st) return st;
    const char *source = "";
    const cJSON *weights, *e;
    if ((st = dp_json_get_string(root, "source", true, name, "$", &source, err)) ||
        (st = dp_json_get_object(root, "weights", false, name, "$", &weights, err)))
        return st;
    struct dp_op_weights *w = weights_new(source);
    if (!w) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    cJSON_ArrayForEach(e, weights) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0 ||
            e->valuedouble > 1) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:$.weights.%s: expected a number in [0, 1]",
                              name, e->string ? e->string : "?");
            goto fail;
        }
        if (!add(w, e->string, e->valuedouble)) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
            goto fail;
        }
    }
    *out = w;
    return DP_OK;
fail:
    dp_op_weights_free(w);
    return st;
}

enum dp_status dp_op_weights_parse(const char *text, size_t len, const char *name,
                                   struct dp_op_weights **out, struct dp_error *err) {
    cJSON *root = NULL;
    if (len == 0) return dp_error_set(err, DP_ERR_PARSE, "%s: empty file", name);
    enum dp_status st = dp_json_parse(text, len, name, &root, err);
    if (st) return st;
    st = from_json(root, name, out, err);
    cJSON_Delete(root);
    return st;
}

enum dp_status dp_op_weights_load(const char *path, struct dp_op_weights **out,
                                  struct dp_error *err) {
    cJSON *root = NULL;
    enum dp_status st = dp_json_load(path, &weights_spec, &root, err);
    if (st) return st;
    st = from_json(root, path, out, err);
    cJSON_Delete(root);
    return st;
}

enum dp_status dp_op_weights_load_default(const char *path, struct dp_op_weights **out,
                                          struct dp_error *err) {
    if (path) return dp_op_weights_load(path, out, err);
    char found[PATH_MAX + 64];
    enum dp_status st = dp_shipped_path("assets/op_weights.json", "--weights", found, sizeof found, err);
    return st ? st : dp_op_weights_load(found, out, err);
}

enum dp_status dp_op_weights_build(const struct dp_graph *const *graphs, size_t n_graphs,
                                   const char *source, struct dp_op_weights **out,
                                   struct dp_error *err) {
    struct dp_op_weights *w = weights_new(source);
    if (!w) return dp_error_set(err, DP_ERR_NOMEM, "op weights: out of memory");
    double total = 0;
    for (size_t k = 0; k < n_graphs; k++) {
        const struct dp_graph *g = graphs[k];
        size_t n = dp_graph_n_nodes(g), gpu = 0;
        for (size_t i = 0; i < n; i++) gpu += dp_node_on_gpu(dp_graph_node(g, i));
        for (size_t i = 0; i < n; i++) {
            const struct dp_node *nd = dp_graph_node(g, i);
            if (gpu && !dp_node_on_gpu(nd)) continue;
            if (!add(w, nd->op, 1)) {
                dp_op_weights_free(w);
                return dp_error_set(err, DP_ERR_NOMEM, "op weights: out of memory");
            }
            total++;
        }
    }
    if (total == 0) {
        dp_op_weights_free(w);
        return dp_error_set(err, DP_ERR_INVALID, "op weights: the corpus has no ops");
    }
    for (size_t i = 0; i < w->n; i++) w->w[i] /= total;
    *out = w;
    return DP_OK;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

enum dp_status dp_op_weights_save(const struct dp_op_weights *w, const char *path,
                                  struct dp_error *err) {
    enum dp_status st;
    char **names = malloc((w->n + 1) * sizeof *names);
    cJSON *root = cJSON_CreateObject(), *tab;
    if (!names || !root || !cJSON_AddStringToObject(root, "format", "driple-op-weights/1") ||
        !cJSON_AddStringToObject(root, "source", w->source) ||
        !(tab = cJSON_AddObjectToObject(root, "weights")))
        goto oom;
    memcpy(names, w->op, w->n * sizeof *names);
    qsort(names, w->n, sizeof *names, cmp_str);
    for (size_t i = 0; i < w->n; i++) {
        cJSON *v = dp_json_number(w->w[find(w, names[i])]);
        if (!v || !cJSON_AddItemToObject(tab, names[i], v)) {
            cJSON_Delete(v);
            goto oom;
        }
    }
    st = dp_json_save(root, path, true, err);
    free(names);
    cJSON_Delete(root);
    return st;
oom:
    free(names);
    cJSON_Delete(root);
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
}
