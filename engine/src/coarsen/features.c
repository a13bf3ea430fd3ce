/* features.c: per-group features of a partition at a batch size, in the paper's order:
 * [sum of the members' tensor sizes, number of members, sum of their op-type weights], the cost
 * features [sum of FLOPs, sum of bytes moved (dp_cost_node), sum of parameter bytes], plus the
 * members' names. Cheap (one pass over the kept ops), so a batch change recomputes it. */
#include "dp/coarsen.h"
#include "dp/cost.h"

#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Notes an op type without a weight (repeats are dropped at the end: a search per op made a
 * graph of 60,000 distinct unknown types quadratic). */
static enum dp_status note_unknown(const char ***list, size_t *n, size_t *cap, const char *op) {
    if (*n && !strcmp((*list)[*n - 1], op)) return DP_OK; /* the common run of one type */
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        const char **l = realloc((void *)*list, c * sizeof *l);
        if (!l) return DP_ERR_NOMEM;
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = op;
    return DP_OK;
}

enum dp_status dp_features(const struct dp_graph *g, const struct dp_partition *p,
                           const struct dp_op_weights *w, int64_t batch, struct dp_grouped **out,
                           char **unknown, struct dp_error *err) {
    const char *gname = dp_graph_name(g);
    if (batch <= 0) batch = dp_graph_batch(g);
    if (batch <= 0)
        for (int i = 0; i < p->n_ops; i++) {
            const struct dp_node *n = dp_graph_node(g, (size_t)p->op_index[i]);
            for (int d = 0; d < n->n_dims; d++)
                if (n->dims[d] == DP_DIM_BATCH)
                    return dp_error_set(err, DP_ERR_INVALID,
                                        "%s: op '%s' has a batch dimension but the batch size is "
                                        "unknown (pass --batch N or --exported-batch N)",
                                        gname, n->name);
        }
    struct dp_grouped *gr = dp_grouped_init(gname, p->n_groups, p->n_edges);
    const char **unk = NULL;
    size_t n_unk = 0, cap_unk = 0;
    if (!gr || !dp_grouped_add_cost(gr)) goto oom;
    gr->batch = batch > 0 ? batch : 0;
    gr->seed = p->seed;
    memcpy(gr->edges, p->edges, (size_t)p->n_edges * 2 * sizeof *gr->edges);
    gr->member_start = calloc((size_t)p->n_groups + 1, sizeof *gr->member_start);
    gr->members = calloc((size_t)p->n_ops + 1, sizeof *gr->members);
    if (!gr->member_start || !gr->members) goto oom;
    for (int i = 0; i < p->n_ops; i++) gr->member_start[p->group[i] + 1]++;
    for (int k = 0; k < p->n_groups; k++) gr->member_start[k + 1] += gr->member_start[k];
    /* Members are filled through a cursor per group. */
    int *cur = malloc(((size_t)p->n_groups + 1) * sizeof *cur);
    if (!cur) goto oom;
    memcpy(cur, gr->member_start, ((size_t)p->n_groups + 1) * sizeof *cur);
    for (int i = 0; i < p->n_ops; i++) {
        const struct dp_node *n = dp_graph_node(g, (size_t)p->op_index[i]);
        int grp = p->group[i];
        double *x = &gr->x[(size_t)grp * DP_N_FEATURES];
        bool known;
        x[0] += dp_node_tensor_size(n, batch);
        x[1] += 1;
        x[2] += dp_op_weight(w, n->op, &known);
        double *c = &gr->cost[(size_t)grp * DP_N_COST_FEATURES], flops = 0, bytes = 0;
        dp_cost_node(g, (size_t)p->op_index[i], batch > 0 ? batch : 1, &flops, &bytes);
        int dsz = dp_dtype_size(n->dtype);
        c[0] += flops > 0 ? flops : 0;
        c[1] += bytes > 0 ? bytes : 0;
        c[2] += n->params > 0 ? (double)n->params * (dsz > 0 ? dsz : 4) : 0;
        if (!known && note_unknown(&unk, &n_unk, &cap_unk, n->op)) {
            free(cur);
            goto oom;
        }
        if (!(gr->members[cur[grp]++] = dup_str(n->name))) {
            free(cur);
            goto oom;
        }
    }
    free(cur);
    /* More elements than a double counts exactly (2^53: 36 PB of float32) is no GPU's job:
     * the simulator refuses such a graph, and an inspector would only extrapolate. */
    double total = 0;
    for (int k = 0; k < p->n_groups; k++) total += gr->x[(size_t)k * DP_N_FEATURES];
    if (!(total <= 9007199254740992.0)) {
        free((void *)unk);
        dp_grouped_free(gr);
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: its tensors hold %.3g elements at batch %lld: more than 2^53, "
                            "beyond any GPU; nothing to predict", gname, total, (long long)batch);
    }
    if (unknown) {
        *unknown = NULL;
        if (n_unk) {
            /* the distinct types, sorted, each once, joined with ", " */
            qsort((void *)unk, n_unk, sizeof *unk, cmp_str);
            size_t len = 1;
            for (size_t i = 0; i < n_unk; i++) len += strlen(unk[i]) + 2;
            char *s = malloc(len), *at = s;
            if (!s) goto oom;
            for (size_t i = 0; i < n_unk; i++) {
                if (i && !strcmp(unk[i - 1], unk[i])) continue;
                size_t m = strlen(unk[i]);
                if (at != s) {
                    memcpy(at, ", ", 2);
                    at += 2;
                }
                memcpy(at, unk[i], m);
                at += m;
            }
            *at = '\0';
            *unknown = s;
        }
    }
    free((void *)unk);
    *out = gr;
    return DP_OK;
oom:
    free((void *)unk);
    dp_grouped_free(gr); /* frees members[0 .. total); unwritten slots are NULL */
    return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory computing features", gname);
}

enum dp_status dp_graph_group(const struct dp_graph *g, const struct dp_coarsen_opts *opts,
                              const struct dp_op_weights *w, int64_t batch,
                              struct dp_grouped **out, char **unknown, struct dp_error *err) {
    struct dp_partition *p = NULL;
    enum dp_status st = dp_coarsen(g, opts, &p, err);
    if (st) return st;
    st = dp_features(g, p, w, batch, out, unknown, err);
    dp_partition_free(p);
    return st;
}
