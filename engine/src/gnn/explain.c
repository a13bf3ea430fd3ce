/* explain.c: group importance for one metric. Gradient x input (one backward pass through the
 * whole inspector) or occlusion (one prediction per group with its feature row zeroed, spread
 * over threads), normalised to sum 1 and ranked; then the drill-down from groups to their member
 * ops and op types (the sharing rule is documented in dp/explain.h). */
#include "dp/explain.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/compute.h"
#include "dp/ops.h"

#define MAX_THREADS 8
/* Groups a worker takes at a time: its copies go through one dp_model_predict_batch, which
 * shares them out among the engine's threads (dp/compute.h) when the worker is alone. */
#define OCCL_CHUNK 8

/* ---- metrics ---- */

const char *dp_metric_name(int metric) {
    if (metric >= 0 && metric < DP_N_OUTPUTS) return dp_outputs[metric].name;
    if (metric == DP_METRIC_ITERATION) return "iteration_time";
    return NULL;
}

const char *dp_metric_unit(int metric) {
    if (metric >= 0 && metric < DP_N_OUTPUTS) return dp_outputs[metric].unit;
    if (metric == DP_METRIC_ITERATION) return "ms";
    return "";
}

int dp_metric_find(const char *name) {
    if (!name) return -1;
    int o = dp_output_find(name);
    if (o >= 0) return o;
    if (!strcmp(name, "iteration_time") || !strcmp(name, "iteration") ||
        !strcmp(name, "iteration_ms"))
        return DP_METRIC_ITERATION;
    return -1;
}

void dp_metric_weights(int metric, const double *scale, float w[DP_N_OUTPUTS]) {
    for (int o = 0; o < DP_N_OUTPUTS; o++) w[o] = 0.0f;
    if (metric >= 0 && metric < DP_N_OUTPUTS) {
        w[metric] = scale ? (float)scale[metric] : 1.0f;
    } else if (metric == DP_METRIC_ITERATION) {
        /* One iteration = one GPU burst plus the idle gap that follows it. */
        int idle = DP_OUT_GPU_UTIL_IDLE, active = DP_OUT_GPU_UTIL_ACTIVE;
        w[idle] = scale ? (float)scale[idle] : 1.0f;
        w[active] = scale ? (float)scale[active] : 1.0f;
    }
}

const char *dp_explain_method_name(enum dp_explain_method m) {
    switch (m) {
    case DP_EXPLAIN_GRAD: return "grad";
    case DP_EXPLAIN_OCCLUSION: return "occlusion";
    default: return "unknown";
    }
}

bool dp_explain_method_parse(const char *s, enum dp_explain_method *out) {
    if (!s) return false;
    if (!strcmp(s, "grad") || !strcmp(s, "gradient") || !strcmp(s, "saliency")) {
        *out = DP_EXPLAIN_GRAD;
        return true;
    }
    if (!strcmp(s, "occlusion") || !strcmp(s, "occlude")) {
        *out = DP_EXPLAIN_OCCLUSION;
        return true;
    }
    return false;
}

static double weighted(const float w[DP_N_OUTPUTS], const float out[DP_N_OUTPUTS]) {
    double v = 0.0;
    for (int o = 0; o < DP_N_OUTPUTS; o++) v += (double)w[o] * (double)out[o];
    return v;
}

/* ---- freeing ---- */

static void drill_clear(struct dp_explain *e) {
    for (int i = 0; i < e->n_groups; i++) {
        struct dp_explain_group *gr = &e->groups[i];
        free(gr->ops);
        free(gr->op_share);
        free(gr->types);
        gr->ops = NULL;
        gr->op_share = NULL;
        gr->types = NULL;
        gr->n_ops = gr->n_types = 0;
    }
    free(e->types);
    e->types = NULL;
    e->n_types = 0;
    for (int i = 0; i < e->n_names; i++) free(e->names[i]);
    free(e->names);
    e->names = NULL;
    e->n_names = 0;
}

void dp_explain_free(struct dp_explain *e) {
    if (!e) return;
    if (e->groups) drill_clear(e);
    free(e->groups);
    free(e->order);
    free(e);
}

/* ---- occlusion ---- */

struct occl_job {
    const struct dp_model    *m;
    const struct dp_grouped  *g;
    const float              *w;
    double                    base;
    struct dp_explain        *e;
    pthread_mutex_t           mu;
    int                       next;
    enum dp_status            st;
    struct dp_error           err;
};

/* Zeroes (or, with `from`, restores) group i's features in copy c: the published row and, when
 * the graph has them, its cost features, so a group left out loses everything it contributes. */
static void occl_row(struct dp_grouped *c, const struct dp_grouped *from, int i) {
    size_t o = (size_t)i * DP_N_FEATURES, oc = (size_t)i * DP_N_COST_FEATURES;
    if (from) memcpy(c->x + o, from->x + o, DP_N_FEATURES * sizeof *c->x);
    else memset(c->x + o, 0, DP_N_FEATURES * sizeof *c->x);
    if (!c->cost) return;
    if (from) memcpy(c->cost + oc, from->cost + oc, DP_N_COST_FEATURES * sizeof *c->cost);
    else memset(c->cost + oc, 0, DP_N_COST_FEATURES * sizeof *c->cost);
}

/* Takes chunks of groups from the shared counter; for each group of a chunk a copy of the graph
 * with that group's features zeroed, all predicted together. */
static void *occl_worker(void *arg) {
    struct occl_job *job = arg;
    const int n = job->g->n_groups;
    size_t nx = (size_t)n * DP_N_FEATURES, nc = job->g->cost ? (size_t)n * DP_N_COST_FEATURES : 0;
    double *x = malloc(nx * OCCL_CHUNK * sizeof *x);
    double *cost = nc ? malloc(nc * OCCL_CHUNK * sizeof *cost) : NULL;
    struct dp_grouped *copies = malloc(OCCL_CHUNK * sizeof *copies);
    const struct dp_grouped **ptrs = malloc(OCCL_CHUNK * sizeof *ptrs);
    float *out = malloc((size_t)OCCL_CHUNK * DP_N_OUTPUTS * sizeof *out);
    if (!x || (nc && !cost) || !copies || !ptrs || !out) {
        pthread_mutex_lock(&job->mu);
        if (job->st == DP_OK)
            job->st = dp_error_set(&job->err, DP_ERR_NOMEM, "explain: out of memory");
        pthread_mutex_unlock(&job->mu);
        goto done;
    }
    for (int c = 0; c < OCCL_CHUNK; c++) {
        memcpy(x + c * nx, job->g->x, nx * sizeof *x);
        copies[c] = *job->g; /* shallow: only x and cost are replaced */
        copies[c].x = x + c * nx;
        if (nc) {
            memcpy(cost + c * nc, job->g->cost, nc * sizeof *cost);
            copies[c].cost = cost + c * nc;
        }
        ptrs[c] = &copies[c];
    }
    for (;;) {
        pthread_mutex_lock(&job->mu);
        int first = job->next;
        job->next += OCCL_CHUNK;
        bool stop = job->st != DP_OK;
        pthread_mutex_unlock(&job->mu);
        if (stop || first >= n) break;
        int cnt = n - first < OCCL_CHUNK ? n - first : OCCL_CHUNK;
        for (int c = 0; c < cnt; c++) occl_row(&copies[c], NULL, first + c);
        struct dp_error lerr = {0};
        enum dp_status st = dp_model_predict_batch(job->m, ptrs, cnt, out, &lerr);
        for (int c = 0; c < cnt; c++) occl_row(&copies[c], job->g, first + c);
        if (st != DP_OK) {
            pthread_mutex_lock(&job->mu);
            if (job->st == DP_OK) {
                job->st = st;
                job->err = lerr;
                job->err.status = st;
            }
            pthread_mutex_unlock(&job->mu);
            break;
        }
        /* Positive when the group raises the metric. */
        for (int c = 0; c < cnt; c++)
            job->e->groups[first + c].attribution =
                job->base - weighted(job->w, out + (size_t)c * DP_N_OUTPUTS);
    }
done:
    free(x);
    free(cost);
    free(copies);
    free(ptrs);
    free(out);
    return NULL;
}

static int auto_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    return (int)n;
}

static enum dp_status occlusion(const struct dp_model *m, const struct dp_grouped *g,
                                const float w[DP_N_OUTPUTS], int n_threads, struct dp_explain *e,
                                struct dp_error *err) {
    float out[DP_N_OUTPUTS];
    enum dp_status st = dp_model_predict(m, g, out, err);
    if (st != DP_OK) return st;
    e->value = weighted(w, out);

    struct occl_job job = {.m = m, .g = g, .w = w, .base = e->value, .e = e, .st = DP_OK};
    if (pthread_mutex_init(&job.mu, NULL) != 0)
        return dp_error_set(err, DP_ERR_NOMEM, "explain: cannot create a mutex");
    /* Automatic: one worker per CPU, but only when a prediction runs on one thread; workers on
     * top of the engine's own threads would oversubscribe the CPUs. */
    if (n_threads <= 0) n_threads = dp_threads() > 1 ? 1 : auto_threads();
    if (n_threads > MAX_THREADS) n_threads = MAX_THREADS;
    int chunks = (g->n_groups + OCCL_CHUNK - 1) / OCCL_CHUNK;
    if (n_threads > chunks) n_threads = chunks;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < n_threads; t++) {
        if (pthread_create(&tid[started], NULL, occl_worker, &job) != 0) break;
        started++;
    }
    occl_worker(&job); /* the calling thread works too (alone when threads cannot start) */
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&job.mu);
    if (job.st != DP_OK) {
        if (err) *err = job.err;
        return job.st;
    }
    return DP_OK;
}

/* ---- gradient x input ---- */

static enum dp_status grad_x_input(const struct dp_model *m, const struct dp_grouped *g,
                                   const float w[DP_N_OUTPUTS], struct dp_explain *e,
                                   struct dp_error *err) {
    const int F = dp_model_arch(m)->n_feat;
    double *grad = calloc((size_t)g->n_groups * F, sizeof *grad);
    if (!grad) return dp_error_set(err, DP_ERR_NOMEM, "explain: out of memory");
    float out[DP_N_OUTPUTS];
    enum dp_status st = dp_model_input_grad(m, g, w, grad, out, err);
    if (st == DP_OK) {
        e->value = weighted(w, out);
        for (int i = 0; i < g->n_groups; i++) {
            double sum = 0.0;
            for (int f = 0; f < F; f++) {
                double a = grad[(size_t)i * F + f] * dp_grouped_feat(g, i, f);
                e->groups[i].feat_attr[f] = a;
                sum += a;
            }
            e->groups[i].attribution = sum;
        }
    }
    free(grad);
    return st;
}

/* ---- normalise and rank ---- */

struct rank_key {
    double imp;
    int    idx;
};

static int rank_cmp(const void *pa, const void *pb) {
    const struct rank_key *a = pa, *b = pb;
    if (a->imp > b->imp) return -1;
    if (a->imp < b->imp) return 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static enum dp_status rank_groups(struct dp_explain *e, struct dp_error *err) {
    double total = 0.0;
    for (int i = 0; i < e->n_groups; i++) {
        double a = e->groups[i].attribution;
        if (!isfinite(a))
            return dp_error_set(err, DP_ERR_INVALID,
                                "explain: group %d: attribution is not finite (%g): the "
                                "features overflow the network's float arithmetic", i, a);
        total += fabs(a);
    }
    struct rank_key *keys = malloc((size_t)(e->n_groups > 0 ? e->n_groups : 1) * sizeof *keys);
    if (!keys) return dp_error_set(err, DP_ERR_NOMEM, "explain: out of memory");
    for (int i = 0; i < e->n_groups; i++) {
        e->groups[i].importance = total > 0.0 ? fabs(e->groups[i].attribution) / total : 0.0;
        keys[i].imp = e->groups[i].importance;
        keys[i].idx = i;
    }
    qsort(keys, (size_t)e->n_groups, sizeof *keys, rank_cmp);
    for (int r = 0; r < e->n_groups; r++) {
        e->order[r] = keys[r].idx;
        e->groups[keys[r].idx].rank = r;
    }
    free(keys);
    return DP_OK;
}

/* A result for g's groups, nothing computed yet; NULL when out of memory. */
static struct dp_explain *explain_new(const struct dp_grouped *g, int metric,
                                      enum dp_explain_method method) {
    struct dp_explain *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->metric = metric;
    e->method = method;
    e->n_groups = g->n_groups;
    e->groups = calloc((size_t)g->n_groups, sizeof *e->groups);
    e->order = calloc((size_t)g->n_groups, sizeof *e->order);
    if (e->groups && e->order) return e;
    dp_explain_free(e);
    return NULL;
}

enum dp_status dp_explain_compute(const struct dp_model *m, const double *scale,
                                  const struct dp_grouped *g, int metric,
                                  enum dp_explain_method method, int n_threads,
                                  struct dp_explain **out, struct dp_error *err) {
    if (!m || !g || !out) return dp_error_set(err, DP_ERR_INVALID, "explain: missing model or graph");
    if (metric < 0 || metric >= DP_N_METRICS)
        return dp_error_set(err, DP_ERR_INVALID, "explain: metric %d out of range [0, %d)", metric,
                            DP_N_METRICS);
    if (method != DP_EXPLAIN_GRAD && method != DP_EXPLAIN_OCCLUSION)
        return dp_error_set(err, DP_ERR_INVALID, "explain: unknown method %d", (int)method);
    if (g->n_groups < 1)
        return dp_error_set(err, DP_ERR_INVALID, "explain: %s: the grouped graph has no groups",
                            g->graph ? g->graph : "graph");

    enum dp_status st;
    struct dp_explain *e = explain_new(g, metric, method);
    if (!e) return dp_error_set(err, DP_ERR_NOMEM, "explain: out of memory");
    float w[DP_N_OUTPUTS];
    dp_metric_weights(metric, scale, w);
    if (method == DP_EXPLAIN_GRAD) st = grad_x_input(m, g, w, e, err);
    else st = occlusion(m, g, w, n_threads, e, err);
    if (st != DP_OK) goto fail;
    if ((st = rank_groups(e, err)) != DP_OK) goto fail;
    *out = e;
    return DP_OK;
fail:
    dp_explain_free(e);
    return st;
}

/* ---- drill-down ---- */

/* Index of an interned op-type name, adding it when new; -1 when out of memory. Linear search:
 * graphs hold a few hundred op types at most. */
static int intern(struct dp_explain *e, int *cap, const char *name) {
    for (int i = e->n_names - 1; i >= 0; i--)
        if (!strcmp(e->names[i], name)) return i;
    if (e->n_names == *cap) {
        int nc = *cap ? *cap * 2 : 32;
        char **nn = realloc(e->names, (size_t)nc * sizeof *nn);
        if (!nn) return -1;
        e->names = nn;
        *cap = nc;
    }
    char *copy = strdup(name);
    if (!copy) return -1;
    e->names[e->n_names] = copy;
    return e->n_names++;
}

static int type_cmp(const void *pa, const void *pb) {
    const struct dp_explain_type *a = pa, *b = pb;
    if (a->importance > b->importance) return -1;
    if (a->importance < b->importance) return 1;
    if (a->n_ops != b->n_ops) return a->n_ops > b->n_ops ? -1 : 1;
    return strcmp(a->op, b->op);
}

struct op_key {
    double share;
    int    op;
};

static int op_cmp(const void *pa, const void *pb) {
    const struct op_key *a = pa, *b = pb;
    if (a->share > b->share) return -1;
    if (a->share < b->share) return 1;
    return (a->op > b->op) - (a->op < b->op);
}

static int op_index_cmp(const void *pa, const void *pb) {
    const struct op_key *a = pa, *b = pb;
    return (a->op > b->op) - (a->op < b->op);
}

/* An op nobody tunes: no kernel of its own (constants, variables, Identity, NoOp, shape
 * bookkeeping: class none in the registry) or a variable's update. */
static bool bookkeeping(const char *op) {
    return dp_op_class(op) == DP_OPCLASS_NONE || dp_op_is_update(op);
}

/* The graph's data consumers as lists (start[n + 1], list). */
struct consumers {
    int *start, *list;
};

static bool consumers_init(const struct dp_graph *g, struct consumers *c) {
    size_t n = dp_graph_n_nodes(g), n_edges = 0;
    c->start = calloc(n + 1, sizeof *c->start);
    for (size_t i = 0; c->start && i < n; i++) {
        const struct dp_node *nd = dp_graph_node(g, i);
        n_edges += (size_t)nd->n_inputs;
        for (int k = 0; k < nd->n_inputs; k++) c->start[nd->inputs[k] + 1]++;
    }
    c->list = malloc((n_edges ? n_edges : 1) * sizeof *c->list);
    int *fill = malloc((n ? n : 1) * sizeof *fill);
    if (!c->start || !c->list || !fill) {
        free(fill);
        return false;
    }
    for (size_t i = 0; i < n; i++) c->start[i + 1] += c->start[i];
    memcpy(fill, c->start, n * sizeof *fill);
    for (size_t i = 0; i < n; i++) {
        const struct dp_node *nd = dp_graph_node(g, i);
        for (int k = 0; k < nd->n_inputs; k++) c->list[fill[nd->inputs[k]]++] = (int)i;
    }
    free(fill);
    return true;
}

static void consumers_free(struct consumers *c) {
    free(c->start);
    free(c->list);
}

/* The op a bookkeeping op is folded into: the first op with a kernel it feeds, following its
 * consumers through other bookkeeping ops (a Const into its Conv2D, a VariableV2 through its
 * Identity into the MatMul that reads it; an optimizer update only when it feeds nothing
 * else). Depth-first, FOLD_DEPTH consumers deep at most; -1 when none is found below `op`. */
#define FOLD_DEPTH 8
static int fold_find(const struct dp_graph *g, const struct consumers *c, int op, int depth,
                     bool any) {
    const struct dp_node *nd = dp_graph_node(g, (size_t)op);
    if (!bookkeeping(nd->op)) return any || dp_op_class(nd->op) != DP_OPCLASS_OPTIMIZER ? op : -1;
    if (depth >= FOLD_DEPTH) return -1;
    for (int k = c->start[op]; k < c->start[op + 1]; k++) {
        int o = fold_find(g, c, c->list[k], depth + 1, any);
        if (o >= 0) return o;
    }
    /* an update (an initializer's Assign) feeds nothing: it belongs to the variable it writes,
     * which belongs to the layer that reads it (its other updates skipped: no cycle) */
    if (dp_op_is_update(nd->op) && nd->n_inputs > 0) {
        int var = nd->inputs[0];
        for (int k = c->start[var]; k < c->start[var + 1]; k++) {
            if (dp_op_is_update(dp_graph_node(g, (size_t)c->list[k])->op)) continue;
            int o = fold_find(g, c, c->list[k], depth + 1, any);
            if (o >= 0) return o;
        }
    }
    return -1;
}

/* -1 when a bookkeeping op feeds no op with a kernel (a NoOp, a stray Const): its group's
 * leading op takes it (group_shares). */
static int fold_owner(const struct dp_graph *g, const struct consumers *c, int op) {
    int o = fold_find(g, c, op, 0, false);
    return o < 0 ? fold_find(g, c, op, 0, true) : o;
}

/* Group gi's member ops into keys (graph node index, share of the group's importance: the rule
 * of dp/explain.h), each bookkeeping op's share moved to the op it feeds; merged per op, most
 * important first. *n_keys: how many. DP_ERR_INVALID naming a member that is no op of graph. */
static enum dp_status group_shares(const struct dp_explain *e, const struct dp_grouped *g,
                                   const struct dp_graph *graph, const struct consumers *cons,
                                   const struct dp_op_weights *w, int64_t batch, int gi,
                                   double *xs, int *own, struct op_key *keys, int *n_keys,
                                   struct dp_error *err) {
    const struct dp_explain_group *gr = &e->groups[gi];
    int m0 = g->member_start[gi], k = g->member_start[gi + 1] - m0;
    double total[DP_N_FEATURES] = {0};
    for (int j = 0; j < k; j++) {
        const char *name = g->members[m0 + j];
        int idx = dp_graph_find(graph, name);
        if (idx < 0)
            return dp_error_set(err, DP_ERR_INVALID,
                                "explain: group %d member '%s' is not an op of graph '%s'", gi,
                                name, dp_graph_name(graph));
        const struct dp_node *nd = dp_graph_node(graph, (size_t)idx);
        keys[j].op = fold_owner(graph, cons, idx);
        own[j] = idx;
        xs[j * DP_N_FEATURES + 0] = dp_node_tensor_size(nd, batch);
        xs[j * DP_N_FEATURES + 1] = 1.0;
        xs[j * DP_N_FEATURES + 2] = w ? dp_op_weight(w, nd->op, NULL) : 0.0;
        for (int f = 0; f < DP_N_FEATURES; f++) total[f] += xs[j * DP_N_FEATURES + f];
    }
    /* Feature coefficients: |a_Gf| for grad when any is non-zero, else equal. */
    double c[DP_N_FEATURES], csum = 0.0;
    bool use_attr = false;
    if (e->method == DP_EXPLAIN_GRAD)
        for (int f = 0; f < DP_N_FEATURES; f++)
            if (total[f] > 0.0 && gr->feat_attr[f] != 0.0) use_attr = true;
    for (int f = 0; f < DP_N_FEATURES; f++) {
        c[f] = total[f] > 0.0 ? (use_attr ? fabs(gr->feat_attr[f]) : 1.0) : 0.0;
        csum += c[f];
    }
    for (int j = 0; j < k; j++) {
        double s = 0.0;
        if (csum > 0.0) {
            for (int f = 0; f < DP_N_FEATURES; f++)
                if (c[f] > 0.0) s += c[f] / csum * xs[j * DP_N_FEATURES + f] / total[f];
        } else {
            s = 1.0 / k;
        }
        keys[j].share = s;
    }
    /* what feeds nothing goes to the group's leading op (its largest share of a kernel op);
     * to itself when the group has none */
    int lead = -1;
    for (int j = 0; j < k; j++)
        if (keys[j].op >= 0 && (lead < 0 || keys[j].share > keys[lead].share)) lead = j;
    for (int j = 0; j < k; j++)
        if (keys[j].op < 0) keys[j].op = lead >= 0 ? keys[lead].op : own[j];
    qsort(keys, (size_t)k, sizeof *keys, op_index_cmp);
    int n = 0;
    for (int j = 0; j < k; j++) {
        if (n > 0 && keys[n - 1].op == keys[j].op) keys[n - 1].share += keys[j].share;
        else keys[n++] = keys[j];
    }
    qsort(keys, (size_t)n, sizeof *keys, op_cmp);
    *n_keys = n;
    return DP_OK;
}

/* Per-name accumulators: this group's (g_) and the whole graph's (t_), grown with the names. */
struct type_acc {
    int     cap;
    int    *g_count, *t_count;
    double *g_imp, *t_imp;
};

static bool acc_grow(struct type_acc *a, int n) {
    if (n <= a->cap) return true;
    int *c1 = realloc(a->g_count, (size_t)n * sizeof *c1);
    if (c1) a->g_count = c1;
    int *c2 = realloc(a->t_count, (size_t)n * sizeof *c2);
    if (c2) a->t_count = c2;
    double *i1 = realloc(a->g_imp, (size_t)n * sizeof *i1);
    if (i1) a->g_imp = i1;
    double *i2 = realloc(a->t_imp, (size_t)n * sizeof *i2);
    if (i2) a->t_imp = i2;
    if (!c1 || !c2 || !i1 || !i2) return false;
    for (int i = a->cap; i < n; i++) {
        a->t_count[i] = 0;
        a->t_imp[i] = 0.0;
    }
    a->cap = n;
    return true;
}

static void acc_free(struct type_acc *a) {
    free(a->g_count);
    free(a->t_count);
    free(a->g_imp);
    free(a->t_imp);
}

/* Group gr's ops and op types from its n merged keys; the totals in a. False when out of
 * memory. */
static bool group_fill(struct dp_explain *e, struct dp_explain_group *gr,
                       const struct dp_graph *graph, const struct op_key *keys, int n,
                       int *cap_names, struct type_acc *a) {
    int *tid = malloc((size_t)(n > 0 ? n : 1) * sizeof *tid);
    gr->ops = malloc((size_t)(n > 0 ? n : 1) * sizeof *gr->ops);
    gr->op_share = malloc((size_t)(n > 0 ? n : 1) * sizeof *gr->op_share);
    if (!tid || !gr->ops || !gr->op_share) goto fail;
    for (int j = 0; j < n; j++)
        if ((tid[j] = intern(e, cap_names, dp_graph_node(graph, (size_t)keys[j].op)->op)) < 0)
            goto fail;
    if (!acc_grow(a, *cap_names)) goto fail;
    for (int i = 0; i < e->n_names; i++) {
        a->g_count[i] = 0;
        a->g_imp[i] = 0.0;
    }
    int n_types = 0;
    for (int j = 0; j < n; j++) {
        int t = tid[j];
        if (a->g_count[t]++ == 0) n_types++;
        a->g_imp[t] += gr->importance * keys[j].share;
        a->t_count[t]++;
        a->t_imp[t] += gr->importance * keys[j].share;
        gr->ops[j] = keys[j].op;
        gr->op_share[j] = keys[j].share;
    }
    gr->n_ops = n;
    if (!(gr->types = malloc((size_t)(n_types > 0 ? n_types : 1) * sizeof *gr->types))) goto fail;
    int nt = 0;
    for (int i = 0; i < e->n_names; i++)
        if (a->g_count[i] > 0) {
            gr->types[nt].op = e->names[i];
            gr->types[nt].n_ops = a->g_count[i];
            gr->types[nt].importance = a->g_imp[i];
            nt++;
        }
    gr->n_types = nt;
    qsort(gr->types, (size_t)nt, sizeof *gr->types, type_cmp);
    free(tid);
    return true;
fail:
    free(tid);
    return false;
}

/* Checks the drill-down's inputs. */
static enum dp_status drill_check(const struct dp_explain *e, const struct dp_grouped *g,
                                  const struct dp_graph *graph, struct dp_error *err) {
    if (!e || !g || !graph) return dp_error_set(err, DP_ERR_INVALID, "explain: drill: missing input");
    if (!g->member_start || !g->members)
        return dp_error_set(err, DP_ERR_INVALID,
                            "explain: %s: the grouped graph lists no member ops (coarsen it from "
                            "the op graph to get them)", g->graph ? g->graph : "graph");
    if (g->n_groups != e->n_groups)
        return dp_error_set(err, DP_ERR_INVALID,
                            "explain: drill: %d groups in the graph, %d in the result", g->n_groups,
                            e->n_groups);
    return DP_OK;
}

enum dp_status dp_explain_drill(struct dp_explain *e, const struct dp_grouped *g,
                                const struct dp_graph *graph, const struct dp_op_weights *w,
                                struct dp_error *err) {
    enum dp_status st = drill_check(e, g, graph, err);
    if (st) return st;
    drill_clear(e);
    st = DP_ERR_NOMEM;
    int64_t batch = g->batch > 0 ? g->batch : dp_graph_batch(graph);
    int cap_names = 0, max_k = 1;
    for (int i = 0; i < g->n_groups; i++) {
        int k = g->member_start[i + 1] - g->member_start[i];
        if (k > max_k) max_k = k;
    }
    double *xs = malloc((size_t)max_k * DP_N_FEATURES * sizeof *xs);
    struct op_key *keys = malloc((size_t)max_k * sizeof *keys);
    int *own = malloc((size_t)max_k * sizeof *own);
    struct type_acc acc = {0};
    struct consumers cons = {0};
    if (!xs || !keys || !own || !consumers_init(graph, &cons)) goto nomem;
    for (int gi = 0; gi < g->n_groups; gi++) {
        int n = 0;
        if ((st = group_shares(e, g, graph, &cons, w, batch, gi, xs, own, keys, &n, err)))
            goto done;
        st = DP_ERR_NOMEM;
        if (!group_fill(e, &e->groups[gi], graph, keys, n, &cap_names, &acc)) goto nomem;
    }
    if (!(e->types = malloc((size_t)(e->n_names > 0 ? e->n_names : 1) * sizeof *e->types)))
        goto nomem;
    for (int i = 0; i < e->n_names; i++) {
        e->types[i].op = e->names[i];
        e->types[i].n_ops = acc.t_count[i];
        e->types[i].importance = acc.t_imp[i];
    }
    e->n_types = e->n_names;
    qsort(e->types, (size_t)e->n_types, sizeof *e->types, type_cmp);
    st = DP_OK;
    goto done;
nomem:
    dp_error_set(err, DP_ERR_NOMEM, "explain: out of memory");
done:
    if (st != DP_OK) drill_clear(e); /* no half-made drill-down */
    free(xs);
    free(keys);
    free(own);
    consumers_free(&cons);
    acc_free(&acc);
    return st;
}
enum dp_status dp_explain_compute_inspector(const struct dp_inspector *insp,
                                            const struct dp_grouped *g, int metric,
                                            enum dp_explain_method method, int n_threads,
                                            struct dp_explain **out, struct dp_error *err) {
    float raw[DP_N_OUTPUTS];
    double metrics[DP_N_OUTPUTS], slope[DP_N_OUTPUTS];
    enum dp_status st = dp_inspector_predict(insp, g, raw, metrics, err);
    if (st != DP_OK) return st;
    for (int o = 0; o < DP_N_OUTPUTS; o++) slope[o] = dp_inspector_metric_slope(insp, o, raw[o]);
    struct dp_explain *e = NULL;
    if ((st = dp_explain_compute(dp_inspector_model(insp), slope, g, metric, method, n_threads,
                                 &e, err)) != DP_OK)
        return st;
    float sel[DP_N_OUTPUTS];
    dp_metric_weights(metric, NULL, sel);
    e->value = 0;
    for (int o = 0; o < DP_N_OUTPUTS; o++) e->value += sel[o] * metrics[o];
    *out = e;
    return DP_OK;
}

/* ---- through the setting-aware inspector ----
 * Occlusion, one prediction per group with its features zeroed, through the body's embedding
 * and the head; the whole-graph profile and the setting stay (they are no group's). */

/* The metric among the head's outputs: the 12, then the iteration time it predicts directly
 * (the one predict prints for the setting). */
static double sa_metric(const struct dp_sa_prediction *p, int metric) {
    return metric == DP_METRIC_ITERATION ? p->value[DP_SA_ITERATION] : p->value[metric];
}

/* The head's prediction of metric for g (embedded here) on in's setting. */
static enum dp_status sa_value(const struct dp_explain_sa *in, const struct dp_grouped *g,
                               int metric, double *v, struct dp_error *err) {
    struct dp_sa_graph sg;
    struct dp_sa_prediction p;
    const struct dp_gpu *gpu = &in->gpu;
    enum dp_status st = dp_sa_graph_init(in->sa, g, NULL, &in->profile, &sg, err);
    if (!st) st = dp_sa_predict(in->sa, &sg, &in->setting, &gpu, 1, &p, err);
    dp_sa_graph_free(&sg);
    if (!st) *v = sa_metric(&p, metric);
    return st;
}

enum dp_status dp_explain_compute_sa(const struct dp_explain_sa *in, const struct dp_grouped *g,
                                     int metric, struct dp_explain **out, struct dp_error *err) {
    if (!in || !in->sa || !g || !out)
        return dp_error_set(err, DP_ERR_INVALID, "explain: missing inspector or graph");
    if (metric < 0 || metric >= DP_N_METRICS)
        return dp_error_set(err, DP_ERR_INVALID, "explain: metric %d out of range [0, %d)", metric,
                            DP_N_METRICS);
    if (g->n_groups < 1)
        return dp_error_set(err, DP_ERR_INVALID, "explain: %s: the grouped graph has no groups",
                            g->graph ? g->graph : "graph");
    enum dp_status st = DP_ERR_NOMEM;
    struct dp_explain *e = explain_new(g, metric, DP_EXPLAIN_OCCLUSION);
    struct dp_grouped c = *g; /* shallow: only x and cost are replaced */
    size_t nx = (size_t)g->n_groups * DP_N_FEATURES;
    size_t nc = g->cost ? (size_t)g->n_groups * DP_N_COST_FEATURES : 0;
    c.x = malloc(nx * sizeof *c.x);
    c.cost = nc ? malloc(nc * sizeof *c.cost) : NULL;
    if (!e || !c.x || (nc && !c.cost)) {
        dp_error_set(err, DP_ERR_NOMEM, "explain: out of memory");
        goto fail;
    }
    memcpy(c.x, g->x, nx * sizeof *c.x);
    if (nc) memcpy(c.cost, g->cost, nc * sizeof *c.cost);
    if ((st = sa_value(in, g, metric, &e->value, err))) goto fail;
    for (int i = 0; i < g->n_groups; i++) {
        double v;
        occl_row(&c, NULL, i);
        st = sa_value(in, &c, metric, &v, err);
        occl_row(&c, g, i);
        if (st) goto fail;
        e->groups[i].attribution = e->value - v; /* positive when the group raises the metric */
    }
    if ((st = rank_groups(e, err))) goto fail;
    free(c.x);
    free(c.cost);
    *out = e;
    return DP_OK;
fail:
    free(c.x);
    free(c.cost);
    dp_explain_free(e);
    return st;
}
