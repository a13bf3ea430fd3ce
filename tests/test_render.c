/* test_render.c: the Graphviz view of a grouped graph: the SVG holds one node per group, the DOT
 * round-trips through Graphviz with the same node and edge counts, PNG has its magic bytes, the
 * terminal layout stays inside its box and is deterministic, and bad output paths fail clearly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/render.h"
#include "test.h"

/* A ring of n groups plus chords, features growing with the index. */
static struct dp_grouped *ring(int n, int chords) {
    int n_edges = n > 2 ? n + chords : (n == 2 ? 1 : 0);
    struct dp_grouped *g = dp_grouped_init("ring", n, n_edges);
    if (!g) return NULL;
    for (int i = 0; i < n; i++) {
        g->x[i * 3 + 0] = 1000.0 * (i + 1);
        g->x[i * 3 + 1] = 3 + i % 5;
        g->x[i * 3 + 2] = 0.5 * (i + 1);
    }
    int e = 0;
    if (n == 2) {
        g->edges[0] = 0;
        g->edges[1] = 1;
    } else if (n > 2) {
        for (int i = 0; i < n; i++) {
            int a = i, b = (i + 1) % n;
            g->edges[2 * e] = a < b ? a : b;
            g->edges[2 * e + 1] = a < b ? b : a;
            e++;
        }
        for (int c = 0; c < chords; c++) {
            int a = c, b = (c + n / 2) % n;
            if (b == a || b == (a + 1) % n || a == (b + 1) % n) b = (a + 3) % n;
            g->edges[2 * e] = a < b ? a : b;
            g->edges[2 * e + 1] = a < b ? b : a;
            e++;
        }
    }
    return g;
}

static int count(const char *hay, const char *needle) {
    int c = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) c++;
    return c;
}

/* A hand-made importance result (no model needed): group i has importance proportional to i+1
 * and one op type, so labels and fill colours can be checked. */
static struct dp_explain *fake_explain(int n) {
    struct dp_explain *e = calloc(1, sizeof *e);
    e->metric = 4;
    e->method = DP_EXPLAIN_GRAD;
    e->n_groups = n;
    e->groups = calloc((size_t)n, sizeof *e->groups);
    e->order = calloc((size_t)n, sizeof *e->order);
    e->n_names = 1;
    e->names = calloc(1, sizeof *e->names);
    e->names[0] = strdup("Conv2DBackpropFilter");
    double total = n * (n + 1) / 2.0;
    for (int i = 0; i < n; i++) {
        struct dp_explain_group *gr = &e->groups[i];
        gr->attribution = i + 1;
        gr->importance = (i + 1) / total;
        gr->rank = n - 1 - i;
        e->order[n - 1 - i] = i;
        gr->n_types = 1;
        gr->types = calloc(1, sizeof *gr->types);
        gr->types[0].op = e->names[0];
        gr->types[0].n_ops = 3;
        gr->types[0].importance = gr->importance;
    }
    return e;
}

static void test_svg_dot_png(void) {
    struct dp_grouped *g = ring(12, 3);
    struct dp_explain *e = fake_explain(12);
    struct dp_error err = {0};
    struct dp_render_opts o = {.layout = DP_LAYOUT_AUTO};

    const char *svg = test_path("test_render.svg");
    CHECK(dp_render_file(g, e, &o, DP_RENDER_SVG, svg, &err) == DP_OK);
    size_t len = 0;
    char *text = test_slurp(svg, &len);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, "<svg") != NULL);
        CHECK(strstr(text, "</svg>") != NULL);
        CHECK(count(text, "class=\"node\"") == 12);
        CHECK(count(text, "class=\"edge\"") == 15);
        CHECK(strstr(text, "Conv2DBackpropFilter (3)") != NULL);
        CHECK(strstr(text, "#bd0026") != NULL); /* the most important group: darkest red */
        free(text);
    }

    const char *dot = test_path("test_render.dot");
    CHECK(dp_render_file(g, e, &o, DP_RENDER_DOT, dot, &err) == DP_OK);
    text = test_slurp(dot, &len);
    CHECK(text != NULL);
    if (text) {
        int nn = -1, ne = -1;
        CHECK(dp_render_dot_stats(text, &nn, &ne, &err) == DP_OK);
        CHECK(nn == 12);
        CHECK(ne == 15);
        free(text);
    }

    /* In memory, and without importances. */
    char *data = NULL;
    CHECK(dp_render_data(g, NULL, NULL, DP_RENDER_DOT, &data, &len, &err) == DP_OK);
    if (data) {
        int nn = -1, ne = -1;
        CHECK(dp_render_dot_stats(data, &nn, &ne, &err) == DP_OK);
        CHECK(nn == 12 && ne == 15);
        CHECK(len == strlen(data));
        free(data);
    }

    const char *png = test_path("test_render.png");
    CHECK(dp_render_file(g, e, &o, DP_RENDER_PNG, png, &err) == DP_OK);
    text = test_slurp(png, &len);
    CHECK(text != NULL && len > 8 && !memcmp(text, "\x89PNG", 4));
    free(text);

    dp_explain_free(e);
    dp_grouped_free(g);
}

static void test_large_sfdp(void) {
    struct dp_grouped *g = ring(100, 40);
    struct dp_error err = {0};
    char *data = NULL;
    size_t len = 0;
    struct dp_render_opts o = {.layout = DP_LAYOUT_AUTO};
    CHECK(dp_render_data(g, NULL, &o, DP_RENDER_SVG, &data, &len, &err) == DP_OK);
    if (data) {
        CHECK(count(data, "class=\"node\"") == 100);
        free(data);
    }
    struct dp_layout *l = NULL;
    CHECK(dp_render_layout(g, DP_LAYOUT_AUTO, 120, 40, false, &l, &err) == DP_OK);
    if (l) {
        CHECK(l->n_nodes == 100);
        CHECK(!strcmp(l->engine, "sfdp") || !strcmp(l->engine, "neato"));
        int inside = 0;
        for (int i = 0; i < l->n_nodes; i++)
            inside += l->x[i] >= -1e-9 && l->x[i] <= 120 + 1e-9 && l->y[i] >= -1e-9 &&
                      l->y[i] <= 40 + 1e-9;
        CHECK(inside == 100);
        dp_layout_free(l);
    }
    dp_grouped_free(g);
}

static void test_layout(void) {
    struct dp_grouped *g = ring(8, 2);
    struct dp_error err = {0};
    struct dp_layout *a = NULL, *b = NULL;
    CHECK(dp_render_layout(g, DP_LAYOUT_DOT, 80, 24, true, &a, &err) == DP_OK);
    CHECK(dp_render_layout(g, DP_LAYOUT_DOT, 80, 24, true, &b, &err) == DP_OK);
    if (a && b) {
        CHECK(!strcmp(a->engine, "dot"));
        int same = 0;
        for (int i = 0; i < 8; i++) same += a->x[i] == b->x[i] && a->y[i] == b->y[i];
        CHECK(same == 8);
        /* The drawing spans the box along at least one axis. */
        double x0 = 1e9, x1 = -1e9, y0 = 1e9, y1 = -1e9;
        for (int i = 0; i < 8; i++) {
            x0 = a->x[i] < x0 ? a->x[i] : x0;
            x1 = a->x[i] > x1 ? a->x[i] : x1;
            y0 = a->y[i] < y0 ? a->y[i] : y0;
            y1 = a->y[i] > y1 ? a->y[i] : y1;
        }
        CHECK(x0 >= -1e-9 && x1 <= 80 + 1e-9 && y0 >= -1e-9 && y1 <= 24 + 1e-9);
        CHECK(fabs(x1 - x0 - 80) < 1e-6 || fabs(y1 - y0 - 24) < 1e-6);
    }
    dp_layout_free(a);
    dp_layout_free(b);
    dp_grouped_free(g);

    /* One node: the centre. */
    g = ring(1, 0);
    struct dp_layout *l = NULL;
    CHECK(dp_render_layout(g, DP_LAYOUT_AUTO, 10, 6, false, &l, &err) == DP_OK);
    if (l) {
        CHECK_NEAR(l->x[0], 5.0, 1e-9);
        CHECK_NEAR(l->y[0], 3.0, 1e-9);
        dp_layout_free(l);
    }
    CHECK(dp_render_layout(g, DP_LAYOUT_AUTO, 0, 6, false, &l, &err) == DP_ERR_INVALID);
    dp_grouped_free(g);
}

static void test_errors(void) {
    struct dp_grouped *g = ring(3, 0);
    struct dp_error err = {0};
    CHECK(dp_render_file(g, NULL, NULL, DP_RENDER_SVG, "/nonexistent-dir/x.svg", &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "/nonexistent-dir/x.svg");
    int nn, ne;
    CHECK(dp_render_dot_stats("graph { a -- ", &nn, &ne, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "DOT does not parse");
    enum dp_render_layout_engine l;
    CHECK(dp_render_layout_parse("sfdp", &l) && l == DP_LAYOUT_SFDP);
    CHECK(!dp_render_layout_parse("fdp", &l));
    dp_grouped_free(g);
}

int main(void) {
    test_svg_dot_png();
    test_large_sfdp();
    test_layout();
    test_errors();
    TEST_MAIN_END();
}
