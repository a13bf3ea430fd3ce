/* test_explain.c: group importance. A graph whose prediction is decided by one group ranks that
 * group first under both methods; rankings are identical across runs and thread counts;
 * gradient x input matches finite differences of predict; the iteration metric is the sum of
 * gpu_util idle and active; the drill-down follows the documented sharing rule; the explorer's
 * importance pane (tui/views/view_importance.c) selects, pans, zooms and draws headless. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tui/views/view_importance.h"
#include "dp/compute.h"
#include "dp/explain.h"
#include "test.h"

/* A small GCN inspector (2 layers, GRU, 3 Set2Set steps) with seeded weights, reading n_feat
 * features (the published 3, or 6 with the cost features). */
static struct dp_model *small_model_feat(uint64_t seed, int n_feat) {
    struct dp_arch a;
    dp_arch_default(&a);
    a.hidden = 16;
    a.rule = DP_RULE_FIXED;
    a.n_layers = 2;
    a.set2set_steps = 3;
    a.n_feat = n_feat;
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    if (dp_model_init(&a, seed, &m, &err) != DP_OK) {
        fprintf(stderr, "dp_model_init: %s\n", err.msg);
        return NULL;
    }
    return m;
}

static struct dp_model *small_model(uint64_t seed) { return small_model_feat(seed, DP_N_FEATURES); }

/* A small GAT inspector (2 heads), the same otherwise. */
static struct dp_model *small_gat(uint64_t seed) {
    struct dp_arch a;
    dp_arch_default(&a);
    a.layer = DP_LAYER_GAT;
    a.hidden = 8;
    a.heads = 2;
    a.rule = DP_RULE_FIXED;
    a.n_layers = 2;
    a.set2set_steps = 2;
    struct dp_model *m = NULL;
    struct dp_error err = {0};
    if (dp_model_init(&a, seed, &m, &err) != DP_OK) {
        fprintf(stderr, "dp_model_init (gat): %s\n", err.msg);
        return NULL;
    }
    return m;
}

/* n groups in a chain (edges i, i+1) with O(1) features varying by group. */
static struct dp_grouped *chain(int n) {
    struct dp_grouped *g = dp_grouped_init("chain", n, n - 1);
    for (int i = 0; i < n; i++) {
        g->x[i * 3 + 0] = 0.2 + 0.05 * (i % 7);
        g->x[i * 3 + 1] = 0.5 + 0.1 * (i % 3);
        g->x[i * 3 + 2] = 0.3 + 0.07 * (i % 5);
    }
    for (int i = 0; i + 1 < n; i++) {
        g->edges[2 * i] = i;
        g->edges[2 * i + 1] = i + 1;
    }
    return g;
}

static double metric_value(const struct dp_model *m, const struct dp_grouped *g, int metric,
                           const double *scale) {
    float out[DP_N_OUTPUTS], w[DP_N_OUTPUTS];
    struct dp_error err = {0};
    if (dp_model_predict(m, g, out, &err) != DP_OK) return NAN;
    dp_metric_weights(metric, scale, w);
    double v = 0;
    for (int o = 0; o < DP_N_OUTPUTS; o++) v += (double)w[o] * out[o];
    return v;
}

static void test_metrics(void) {
    CHECK(dp_metric_find("gpu_util.active") == 4);
    CHECK(dp_metric_find("net_tx.peak") == 11);
    CHECK(dp_metric_find("iteration_time") == DP_METRIC_ITERATION);
    CHECK(dp_metric_find("iteration") == DP_METRIC_ITERATION);
    CHECK(dp_metric_find("gpu_util") == -1);
    CHECK(!strcmp(dp_metric_name(DP_METRIC_ITERATION), "iteration_time"));
    CHECK(!strcmp(dp_metric_unit(DP_METRIC_ITERATION), "ms"));
    CHECK(dp_metric_name(DP_N_METRICS) == NULL);
    double scale[DP_N_OUTPUTS];
    for (int o = 0; o < DP_N_OUTPUTS; o++) scale[o] = o + 1;
    float w[DP_N_OUTPUTS];
    dp_metric_weights(DP_METRIC_ITERATION, scale, w);
    CHECK(w[3] == 4.0f && w[4] == 5.0f && w[0] == 0.0f && w[5] == 0.0f);
    dp_metric_weights(8, NULL, w);
    CHECK(w[8] == 1.0f && w[7] == 0.0f);
    enum dp_explain_method me;
    CHECK(dp_explain_method_parse("occlusion", &me) && me == DP_EXPLAIN_OCCLUSION);
    CHECK(dp_explain_method_parse("grad", &me) && me == DP_EXPLAIN_GRAD);
    CHECK(!dp_explain_method_parse("shap", &me));
}

/* Only group 5 carries features and no group is connected: the prediction depends on group 5
 * alone, so both methods give it all the importance. */
static void test_one_group_decides(struct dp_model *m) {
    struct dp_grouped *g = dp_grouped_init("one", 9, 0);
    g->x[5 * 3 + 0] = 0.9;
    g->x[5 * 3 + 1] = 0.7;
    g->x[5 * 3 + 2] = 0.4;
    struct dp_error err = {0};
    for (int method = 0; method < DP_EXPLAIN_METHOD_COUNT; method++) {
        for (int metric = 0; metric < DP_N_METRICS; metric += 4) {
            struct dp_explain *e = NULL;
            CHECK(dp_explain_compute(m, NULL, g, metric, (enum dp_explain_method)method, 2, &e,
                                     &err) == DP_OK);
            if (!e) continue;
            CHECK(e->order[0] == 5);
            CHECK(e->groups[5].rank == 0);
            /* exact on the own kernels; OpenBLAS's products of other shapes (occlusion batches)
             * round differently, leaving the others a trace */
            CHECK_NEAR(e->groups[5].importance, 1.0,
                       strcmp(dp_kernels_backend(), "own") ? 1e-2 : 1e-12);
            /* The rest tie at 0 and keep index order. */
            CHECK(e->order[1] == 0 && e->order[2] == 1 && e->order[8] == 8);
            dp_explain_free(e);
        }
    }
    dp_grouped_free(g);
}

/* One group with features 1000x the others in a connected graph ranks first under occlusion. */
static void test_dominant_group(struct dp_model *m) {
    struct dp_grouped *g = chain(12);
    for (int f = 0; f < 3; f++) g->x[7 * 3 + f] *= 1000.0;
    struct dp_error err = {0};
    struct dp_explain *e = NULL;
    CHECK(dp_explain_compute(m, NULL, g, 4, DP_EXPLAIN_OCCLUSION, 2, &e, &err) == DP_OK);
    if (e) {
        CHECK(e->order[0] == 7);
        dp_explain_free(e);
    }
    dp_grouped_free(g);
}

static void test_normalised_stable(struct dp_model *m) {
    struct dp_grouped *g = chain(30);
    struct dp_error err = {0};
    for (int method = 0; method < DP_EXPLAIN_METHOD_COUNT; method++) {
        struct dp_explain *a = NULL, *b = NULL;
        CHECK(dp_explain_compute(m, NULL, g, DP_METRIC_ITERATION, (enum dp_explain_method)method,
                                 1, &a, &err) == DP_OK);
        CHECK(dp_explain_compute(m, NULL, g, DP_METRIC_ITERATION, (enum dp_explain_method)method,
                                 4, &b, &err) == DP_OK);
        if (!a || !b) {
            dp_explain_free(a);
            dp_explain_free(b);
            continue;
        }
        double sum = 0;
        int sorted = 1, same = 1;
        for (int i = 0; i < 30; i++) {
            sum += a->groups[i].importance;
            same &= a->order[i] == b->order[i];
            same &= a->groups[i].attribution == b->groups[i].attribution;
            if (i > 0) {
                double p = a->groups[a->order[i - 1]].importance;
                double q = a->groups[a->order[i]].importance;
                sorted &= p > q || (p == q && a->order[i - 1] < a->order[i]);
            }
            same &= a->groups[a->order[i]].rank == i;
        }
        CHECK_NEAR(sum, 1.0, 1e-9);
        CHECK(sorted);
        CHECK(same);
        CHECK_NEAR(a->value, metric_value(m, g, DP_METRIC_ITERATION, NULL), 1e-5);
        dp_explain_free(a);
        dp_explain_free(b);
    }
    dp_grouped_free(g);
}

/* Gradient x input against central differences of predict, feature by feature. */
static void test_grad_vs_fd(struct dp_model *m) {
    struct dp_grouped *g = chain(6);
    double scale[DP_N_OUTPUTS];
    for (int o = 0; o < DP_N_OUTPUTS; o++) scale[o] = 1.0 + 0.5 * o;
    struct dp_error err = {0};
    int metrics[3] = {4, 10, DP_METRIC_ITERATION};
    for (int k = 0; k < 3; k++) {
        struct dp_explain *e = NULL;
        CHECK(dp_explain_compute(m, scale, g, metrics[k], DP_EXPLAIN_GRAD, 1, &e, &err) == DP_OK);
        if (!e) continue;
        double max_a = 0, max_diff = 0;
        for (int i = 0; i < 6; i++)
            for (int f = 0; f < 3; f++) {
                double x = g->x[i * 3 + f], h = 1e-2 * x;
                g->x[i * 3 + f] = x + h;
                double up = metric_value(m, g, metrics[k], scale);
                g->x[i * 3 + f] = x - h;
                double dn = metric_value(m, g, metrics[k], scale);
                g->x[i * 3 + f] = x;
                double fd = (up - dn) / (2 * h) * x;
                double a = e->groups[i].feat_attr[f];
                if (fabs(a) > max_a) max_a = fabs(a);
                if (fabs(fd - a) > max_diff) max_diff = fabs(fd - a);
            }
        CHECK(max_a > 0);
        if (max_diff > 2e-2 * max_a + 1e-6)
            fprintf(stderr, "metric %d: max |fd - grad x input| %g vs max %g\n", metrics[k],
                    max_diff, max_a);
        CHECK(max_diff <= 2e-2 * max_a + 1e-6);
        for (int i = 0; i < 6; i++) {
            double s = 0;
            for (int f = 0; f < 3; f++) s += e->groups[i].feat_attr[f];
            CHECK_NEAR(e->groups[i].attribution, s, 1e-12);
        }
        dp_explain_free(e);
    }
    dp_grouped_free(g);
}

/* Occlusion attributions are the change when a row is zeroed. */
static void test_occlusion_definition(struct dp_model *m) {
    struct dp_grouped *g = chain(5);
    struct dp_error err = {0};
    struct dp_explain *e = NULL;
    CHECK(dp_explain_compute(m, NULL, g, 7, DP_EXPLAIN_OCCLUSION, 0, &e, &err) == DP_OK);
    if (e) {
        double base = metric_value(m, g, 7, NULL);
        CHECK_NEAR(e->value, base, 1e-6);
        double saved[3];
        memcpy(saved, &g->x[2 * 3], sizeof saved);
        memset(&g->x[2 * 3], 0, sizeof saved);
        double occluded = metric_value(m, g, 7, NULL);
        memcpy(&g->x[2 * 3], saved, sizeof saved);
        CHECK_NEAR(e->groups[2].attribution, base - occluded, 1e-6);
        dp_explain_free(e);
    }
    dp_grouped_free(g);
}

/* With an inspector that reads the cost features, occluding a group zeroes them too (the
 * attribution is f(x) - f(x with all six of the group's features zeroed)), and gradient x input
 * attributes all six, each matching finite differences, their sum the group's attribution. */
static void test_occlusion_cost(void) {
    struct dp_model *m = small_model_feat(5, DP_N_FEATURES_MAX);
    struct dp_error err = {0};
    CHECK(m != NULL);
    struct dp_grouped *g = chain(5);
    CHECK(dp_grouped_add_cost(g));
    if (!m || !g->cost) goto done;
    for (int i = 0; i < 5 * DP_N_COST_FEATURES; i++) g->cost[i] = 0.4 + 0.1 * (i % 4);
    struct dp_explain *e = NULL;
    CHECK(dp_explain_compute(m, NULL, g, 7, DP_EXPLAIN_OCCLUSION, 2, &e, &err) == DP_OK);
    if (e) {
        double base = metric_value(m, g, 7, NULL), sx[3], sc[DP_N_COST_FEATURES];
        memcpy(sx, &g->x[2 * 3], sizeof sx);
        memcpy(sc, &g->cost[2 * DP_N_COST_FEATURES], sizeof sc);
        memset(&g->x[2 * 3], 0, sizeof sx);
        memset(&g->cost[2 * DP_N_COST_FEATURES], 0, sizeof sc);
        double occluded = metric_value(m, g, 7, NULL);
        memcpy(&g->x[2 * 3], sx, sizeof sx);
        memcpy(&g->cost[2 * DP_N_COST_FEATURES], sc, sizeof sc);
        CHECK_NEAR(e->groups[2].attribution, base - occluded, 1e-6);
        /* the copies were restored: a second run gives the same attributions */
        struct dp_explain *e2 = NULL;
        CHECK(dp_explain_compute(m, NULL, g, 7, DP_EXPLAIN_OCCLUSION, 1, &e2, &err) == DP_OK);
        if (e2) {
            for (int i = 0; i < 5; i++)
                CHECK_NEAR(e2->groups[i].attribution, e->groups[i].attribution, 1e-9);
            dp_explain_free(e2);
        }
        dp_explain_free(e);
    }
    e = NULL;
    CHECK(dp_explain_compute(m, NULL, g, 7, DP_EXPLAIN_GRAD, 1, &e, &err) == DP_OK);
    if (e) {
        double max_a = 0, max_diff = 0;
        for (int i = 0; i < 5; i++) {
            double sum = 0;
            for (int f = 0; f < DP_N_FEATURES_MAX; f++) {
                double *v = f < DP_N_FEATURES ? &g->x[i * 3 + f]
                                              : &g->cost[i * DP_N_COST_FEATURES + f - 3];
                double x = *v, h = 1e-2 * x;
                *v = x + h;
                double up = metric_value(m, g, 7, NULL);
                *v = x - h;
                double dn = metric_value(m, g, 7, NULL);
                *v = x;
                double fd = (up - dn) / (2 * h) * x, at = e->groups[i].feat_attr[f];
                if (fabs(at) > max_a) max_a = fabs(at);
                if (fabs(fd - at) > max_diff) max_diff = fabs(fd - at);
                sum += at;
            }
            CHECK_NEAR(e->groups[i].attribution, sum, 1e-12);
        }
        CHECK(max_a > 0);
        CHECK(max_diff <= 2e-2 * max_a + 1e-6);
        dp_explain_free(e);
    }
done:
    dp_grouped_free(g);
    dp_model_free(m);
}

static void test_errors(struct dp_model *m) {
    struct dp_grouped *g = chain(3);
    struct dp_explain *e = NULL;
    struct dp_error err = {0};
    CHECK(dp_explain_compute(m, NULL, g, DP_N_METRICS, DP_EXPLAIN_GRAD, 1, &e, &err) ==
          DP_ERR_INVALID);
    CHECK(e == NULL);
    CHECK_CONTAINS(err.msg, "metric");
    CHECK(dp_explain_compute(m, NULL, g, 0, (enum dp_explain_method)7, 1, &e, &err) ==
          DP_ERR_INVALID);
    /* No member names: the drill-down says so. */
    CHECK(dp_explain_compute(m, NULL, g, 0, DP_EXPLAIN_GRAD, 1, &e, &err) == DP_OK);
    struct dp_graph *graph = dp_graph_init("x");
    if (e) {
        CHECK(dp_explain_drill(e, g, graph, NULL, &err) == DP_ERR_INVALID);
        CHECK_CONTAINS(err.msg, "member");
    }
    dp_explain_free(e);
    dp_graph_free(graph);
    dp_grouped_free(g);
}

/* ---- drill-down on a hand-made result ---- */

static struct dp_explain *fake(int n, enum dp_explain_method method) {
    struct dp_explain *e = calloc(1, sizeof *e);
    e->method = method;
    e->n_groups = n;
    e->groups = calloc((size_t)n, sizeof *e->groups);
    e->order = calloc((size_t)n, sizeof *e->order);
    return e;
}

static void add_op(struct dp_graph *g, const char *name, const char *op, int n_dims,
                   const int64_t *dims) {
    struct dp_error err = {0};
    CHECK(dp_graph_add_node(g, name, op, "/device:GPU:0", n_dims, dims, DP_DTYPE_F32, NULL,
                            &err) == DP_OK);
}

static void test_drill(void) {
    struct dp_graph *graph = dp_graph_init("drill");
    int64_t d_a[2] = {DP_DIM_BATCH, 10}, d_b[1] = {5}, d_c[2] = {DP_DIM_BATCH, 5}, d_d[1] = {7};
    add_op(graph, "a", "Conv2D", 2, d_a); /* 20 at batch 2 */
    add_op(graph, "b", "Relu", 1, d_b);   /* 5 */
    add_op(graph, "c", "Conv2D", 2, d_c); /* 10 */
    add_op(graph, "d", "MatMul", 1, d_d); /* 7, the second group */

    struct dp_grouped *g = dp_grouped_init("drill", 2, 1);
    g->batch = 2;
    g->edges[0] = 0;
    g->edges[1] = 1;
    static const char *names[4] = {"a", "b", "c", "d"};
    g->member_start = calloc(3, sizeof *g->member_start);
    g->members = calloc(4, sizeof *g->members);
    g->member_start[1] = 3;
    g->member_start[2] = 4;
    for (int i = 0; i < 4; i++) g->members[i] = strdup(names[i]);

    /* Occlusion: equal weight on the features used (tensor size and op count). */
    struct dp_explain *e = fake(2, DP_EXPLAIN_OCCLUSION);
    e->groups[0].importance = 0.8;
    e->groups[1].importance = 0.2;
    struct dp_error err = {0};
    CHECK(dp_explain_drill(e, g, graph, NULL, &err) == DP_OK);
    double sa = (20.0 / 35 + 1.0 / 3) / 2, sb = (5.0 / 35 + 1.0 / 3) / 2,
           sc = (10.0 / 35 + 1.0 / 3) / 2;
    struct dp_explain_group *g0 = &e->groups[0];
    CHECK(g0->n_ops == 3 && g0->n_types == 2);
    CHECK(g0->ops[0] == 0 && g0->ops[1] == 2 && g0->ops[2] == 1); /* a, c, b by share */
    CHECK_NEAR(g0->op_share[0], sa, 1e-12);
    CHECK_NEAR(g0->op_share[1], sc, 1e-12);
    CHECK_NEAR(g0->op_share[2], sb, 1e-12);
    CHECK(!strcmp(g0->types[0].op, "Conv2D") && g0->types[0].n_ops == 2);
    CHECK_NEAR(g0->types[0].importance, 0.8 * (sa + sc), 1e-12);
    CHECK_NEAR(g0->types[1].importance, 0.8 * sb, 1e-12);
    CHECK(e->n_types == 3);
    CHECK(!strcmp(e->types[0].op, "Conv2D"));
    CHECK_NEAR(e->types[0].importance, 0.8 * (sa + sc), 1e-12);
    CHECK(!strcmp(e->types[1].op, "MatMul"));
    CHECK_NEAR(e->types[1].importance, 0.2, 1e-12);
    double tsum = 0;
    for (int t = 0; t < e->n_types; t++) tsum += e->types[t].importance;
    CHECK_NEAR(tsum, 1.0, 1e-12);
    dp_explain_free(e);

    /* Grad: feature shares weighted by |grad x input| per feature (3 : 1 : 0). */
    e = fake(2, DP_EXPLAIN_GRAD);
    e->groups[0].importance = 1.0;
    e->groups[0].feat_attr[0] = -3.0;
    e->groups[0].feat_attr[1] = 1.0;
    CHECK(dp_explain_drill(e, g, graph, NULL, &err) == DP_OK);
    CHECK_NEAR(e->groups[0].op_share[0], 0.75 * 20.0 / 35 + 0.25 / 3, 1e-12);
    CHECK_NEAR(e->types[0].importance, 0.75 * 30.0 / 35 + 0.25 * 2 / 3, 1e-12);
    /* Idempotent: a second drill replaces the first. */
    CHECK(dp_explain_drill(e, g, graph, NULL, &err) == DP_OK);
    CHECK(e->n_types == 3);
    dp_explain_free(e);

    /* A member that is not in the graph. */
    free(g->members[3]);
    g->members[3] = strdup("zz");
    e = fake(2, DP_EXPLAIN_GRAD);
    CHECK(dp_explain_drill(e, g, graph, NULL, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "'zz'");
    CHECK(e->groups[0].n_ops == 0 && e->n_types == 0);
    dp_explain_free(e);

    dp_grouped_free(g);
    dp_graph_free(graph);
}


/* ---- the explorer's importance pane ---- */

/* A ring of 12 groups over a 24-op graph (two ops per group, named op<k>). */
static void ring_with_ops(struct dp_grouped **gout, struct dp_graph **graph_out) {
    struct dp_graph *graph = dp_graph_init("ring");
    static const char *types[3] = {"Conv2D", "Relu", "MatMul"};
    for (int k = 0; k < 24; k++) {
        char name[16];
        snprintf(name, sizeof name, "op%d", k);
        int64_t dims[2] = {DP_DIM_BATCH, 4 + k};
        add_op(graph, name, types[k % 3], 2, dims);
    }
    struct dp_grouped *g = dp_grouped_init("ring", 12, 12);
    g->batch = 2;
    g->member_start = calloc(13, sizeof *g->member_start);
    g->members = calloc(24, sizeof *g->members);
    for (int i = 0; i < 12; i++) {
        g->member_start[i + 1] = 2 * (i + 1);
        for (int j = 0; j < 2; j++) {
            char name[16];
            snprintf(name, sizeof name, "op%d", 2 * i + j);
            g->members[2 * i + j] = strdup(name);
        }
        g->x[i * 3 + 0] = 0.1 * (2 * (4 + 2 * i) + 2);
        g->x[i * 3 + 1] = 2;
        g->x[i * 3 + 2] = 0.3;
        g->edges[2 * i] = i < (i + 1) % 12 ? i : (i + 1) % 12;
        g->edges[2 * i + 1] = i < (i + 1) % 12 ? (i + 1) % 12 : i;
    }
    *gout = g;
    *graph_out = graph;
}

static bool pad_has(WINDOW *pad, int rows, int cols, const char *text) {
    char line[256];
    for (int r = 0; r < rows; r++) {
        int c;
        for (c = 0; c < cols && c < 255; c++)
            line[c] = (char)(mvwinch(pad, r, c) & A_CHARTEXT);
        line[c] = '\0';
        if (strstr(line, text)) return true;
    }
    return false;
}

static void test_view(struct dp_model *m) {
    struct dp_grouped *g;
    struct dp_graph *graph;
    ring_with_ops(&g, &graph);
    struct importance_view v;
    importance_view_init(&v);
    struct dp_error err = {0};
    CHECK(v.metric == 4 && v.method == DP_EXPLAIN_GRAD && v.selected == -1);
    CHECK(importance_view_set_graph(&v, g, graph, NULL, &err) == DP_OK);
    CHECK(v.layout != NULL && v.e == NULL);
    CHECK(importance_view_set_model(&v, m, NULL, &err) == DP_OK);
    CHECK(v.e != NULL);
    if (!v.e) goto done;
    CHECK(v.e->groups[0].n_ops == 2); /* drilled down */

    importance_view_select_next(&v);
    CHECK(v.selected == v.e->order[0]);
    importance_view_select_next(&v);
    CHECK(v.selected == v.e->order[1]);
    importance_view_select_prev(&v);
    importance_view_select_prev(&v);
    CHECK(v.selected == v.e->order[11]); /* wraps */
    importance_view_select(&v, 99);
    CHECK(v.selected == -1);

    importance_view_zoom(&v, IMPORTANCE_ZOOM_STEP);
    CHECK_NEAR(v.zoom, 1.5, 1e-12);
    importance_view_zoom(&v, 1000);
    CHECK_NEAR(v.zoom, 32.0, 1e-12);
    importance_view_pan(&v, 100, -100);
    CHECK(v.pan_x <= 1.0 && v.pan_y >= 0.0);
    importance_view_zoom(&v, 1e-6);
    CHECK_NEAR(v.zoom, 1.0, 1e-12);
    CHECK_NEAR(v.pan_x, 0.5, 1e-12); /* at zoom 1 the whole layout is in view */

    CHECK(importance_view_next_metric(&v, -1, &err) == DP_OK && v.metric == 3);
    CHECK(importance_view_set_metric(&v, 0, &err) == DP_OK);
    CHECK(importance_view_next_metric(&v, -1, &err) == DP_OK && v.metric == DP_METRIC_ITERATION);
    CHECK(importance_view_toggle_method(&v, &err) == DP_OK && v.method == DP_EXPLAIN_OCCLUSION);
    CHECK(v.e && v.e->method == DP_EXPLAIN_OCCLUSION);

    /* Graph and model together: one computation, the layout kept for the same graph. */
    struct dp_layout *before = v.layout;
    CHECK(importance_view_set_inputs(&v, g, graph, NULL, m, NULL, false, &err) == DP_OK);
    CHECK(v.layout == before && v.e != NULL && v.method == DP_EXPLAIN_OCCLUSION);
    CHECK(importance_view_set_inputs(&v, g, graph, NULL, NULL, NULL, false, &err) == DP_OK);
    CHECK(v.e == NULL);
    CHECK(importance_view_set_inputs(&v, g, graph, NULL, m, NULL, true, &err) == DP_OK);
    CHECK(v.e != NULL && v.layout != NULL);
    /* A new batch size: other features, the same grouping: layout and selection stay. */
    struct dp_grouped *g2 = dp_grouped_init("ring", 12, 12);
    memcpy(g2->x, g->x, 36 * sizeof *g2->x);
    memcpy(g2->edges, g->edges, 24 * sizeof *g2->edges);
    for (int i = 0; i < 12; i++) g2->x[i * 3] *= 2;
    importance_view_select(&v, 3);
    before = v.layout;
    CHECK(importance_view_set_inputs(&v, g2, NULL, NULL, m, NULL, false, &err) == DP_OK);
    CHECK(v.layout == before && v.selected == 3 && v.g == g2 && v.e != NULL);
    CHECK(importance_view_set_inputs(&v, g, graph, NULL, m, NULL, false, &err) == DP_OK);
    dp_grouped_free(g2);
    importance_view_toggle_edges(&v);
    CHECK(v.all_edges);

    /* Geometry: the list sits right of the canvas on a wide pane, every node is on the canvas. */
    struct importance_canvas cv = importance_view_canvas(&v, 30, 120);
    CHECK(cv.list_w > 0 && cv.list_x > cv.x + cv.w - 1 && cv.boxes);
    int inside = 0;
    for (int i = 0; i < 12; i++) {
        int r, c;
        inside += importance_view_cell(&v, &cv, i, &r, &c);
    }
    CHECK(inside == 12);
    cv = importance_view_canvas(&v, 30, 60);
    CHECK(cv.list_y > cv.y && cv.list_w == 60);
    CHECK(importance_view_level(&v, v.e->order[0]) == 4);
    /* A page of the list: every line below those that stay (a selected group's heading, its
     * rank and effect with importances; none for the whole graph's list). */
    importance_view_select(&v, 3);
    CHECK(importance_view_list_page(&v, 30, 60) == cv.list_h - 3);
    importance_view_select(&v, 99);
    CHECK(importance_view_list_page(&v, 30, 60) == cv.list_h);
    CHECK(importance_view_list_page(&v, 2, 5) == 1);

    /* Draw headless into a pad and read the characters back. */
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = out && in ? newterm("xterm", out, in) : NULL;
    if (scr) {
        importance_view_select(&v, v.e->order[0]);
        WINDOW *pad = newpad(30, 120);
        importance_view_draw(pad, &v);
        char want[32];
        snprintf(want, sizeof want, "group g%d", v.selected);
        CHECK(pad_has(pad, 30, 120, want));
        CHECK(pad_has(pad, 30, 120, "importance: iteration_time"));
        CHECK(pad_has(pad, 30, 120, "ops (share of group)"));
        v.ascii = true;
        importance_view_draw(pad, &v);
        CHECK(pad_has(pad, 30, 120, "+------------+"));
        /* A tiny pane must not crash. */
        WINDOW *tiny = newpad(2, 5);
        importance_view_draw(tiny, &v);
        delwin(tiny);
        delwin(pad);
        endwin();
        delscreen(scr);
    } else {
        fprintf(stderr, "test_view: no terminfo for xterm; draw not checked\n");
    }
    if (out) fclose(out);
    if (in) fclose(in);
done:
    importance_view_free(&v);
    dp_grouped_free(g);
    dp_graph_free(graph);
}

int main(void) {
    test_metrics();
    test_drill();
    test_occlusion_cost();
    struct dp_model *m = small_model(7);
    CHECK(m != NULL);
    if (m) {
        test_one_group_decides(m);
        test_dominant_group(m);
        test_normalised_stable(m);
        test_grad_vs_fd(m);
        test_occlusion_definition(m);
        test_errors(m);
        test_view(m);
        dp_model_free(m);
    }
    /* Both methods on a GAT inspector: the deciding group and finite differences. */
    m = small_gat(3);
    CHECK(m != NULL);
    if (m) {
        test_one_group_decides(m);
        test_grad_vs_fd(m);
        test_occlusion_definition(m);
        dp_model_free(m);
    }
    TEST_MAIN_END();
}
