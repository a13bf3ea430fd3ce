/* test_foundation.c: status messages, the graph model's builder and name index, and the
 * grouped-graph reader (good, bad and truncated input). */
#include <stdio.h>

#include "dp/graph.h"
#include "dp/grouped.h"
#include "test.h"

static void test_graph_builder(void) {
    struct dp_graph *g = dp_graph_init("t");
    struct dp_error err = {0};
    int64_t dims[] = {DP_DIM_BATCH, 224, 224, 3};
    int a = -1, b = -1;
    CHECK(dp_graph_add_node(g, "a", "Placeholder", "/device:CPU:0", 4, dims, DP_DTYPE_F32, &a, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "b", "Conv2D", "/device:GPU:0", 4, dims, DP_DTYPE_F32, &b, &err) == DP_OK);
    CHECK(dp_graph_add_node(g, "a", "Relu", "", 0, NULL, DP_DTYPE_F32, NULL, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "duplicate node name 'a'");
    CHECK(dp_graph_add_input(g, b, a, false, &err) == DP_OK);
    CHECK(dp_graph_find(g, "b") == 1 && dp_graph_find(g, "zz") == -1);
    CHECK_NEAR(dp_node_tensor_size(dp_graph_node(g, 1), 32), 32.0 * 224 * 224 * 3, 0);
    CHECK(dp_node_on_gpu(dp_graph_node(g, 1)) && !dp_node_on_gpu(dp_graph_node(g, 0)));
    /* Many nodes exercise the index growth. */
    char name[32];
    int added = 0;
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "n%d", i);
        added += dp_graph_add_node(g, name, "Add", "", 0, NULL, DP_DTYPE_F32, NULL, NULL) == DP_OK;
    }
    CHECK(added == 5000);
    CHECK(dp_graph_find(g, "n4999") == 5001);
    struct dp_graph *c = dp_graph_clone(g);
    CHECK(c && dp_graph_n_nodes(c) == 5002 && dp_graph_node(c, 1)->n_inputs == 1);
    dp_graph_free(c);
    dp_graph_free(g);
}

static void test_grouped(void) {
    struct dp_grouped *g = NULL;
    struct dp_error err = {0};
    const char *ok = "{\"format\":\"driple-grouped/1\",\"graph\":\"x\",\"batch\":32,\"groups\":["
                     "{\"tensor_size\":10,\"ops\":2,\"type_weight\":0.5,\"members\":[\"a\",\"b\"]},"
                     "{\"tensor_size\":1,\"ops\":1,\"type_weight\":0.1,\"members\":[\"c\"]}],"
                     "\"edges\":[[1,0],[0,1]]}";
    CHECK(dp_grouped_parse_json(ok, strlen(ok), "ok.json", &g, &err) == DP_OK);
    CHECK(g && g->n_groups == 2 && g->n_edges == 1 && g->edges[0] == 0 && g->edges[1] == 1);
    CHECK(g && g->member_start[2] == 3 && !strcmp(g->members[2], "c"));
    dp_grouped_free(g);

    static const struct { const char *text, *want; } bad[] = {
        {"{\"format\":\"driple-grouped/1\",\"groups\":[", "bad.json:1:"},
        {"{\"format\":\"nope\"}", "bad.json:$.format"},
        {"{\"format\":\"driple-grouped/1\",\"groups\":[],\"edges\":[]}", "$.groups: empty"},
        {"{\"format\":\"driple-grouped/1\",\"groups\":[{\"tensor_size\":1,\"ops\":\"x\",\"type_weight\":0}],\"edges\":[]}",
         "$.groups[0].ops: expected a number"},
        {"{\"format\":\"driple-grouped/1\",\"groups\":[{\"tensor_size\":1,\"ops\":1,\"type_weight\":0}],\"edges\":[[0,3]]}",
         "$.edges[0]"},
        {"{\"format\":\"driple-grouped/1\",\"groups\":[{\"tensor_size\":-1,\"ops\":1,\"type_weight\":0}],\"edges\":[]}",
         "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = NULL;
        CHECK(dp_grouped_parse_json(bad[i].text, strlen(bad[i].text), "bad.json", &g, &err) != DP_OK);
        CHECK(g == NULL);
        CHECK_CONTAINS(err.msg, bad[i].want);
    }
    /* Round trip through a file. */
    CHECK(dp_grouped_load_json(REF_DIR "/cases/gcn/tiny3.grouped.json", &g, &err) == DP_OK);
    if (g) {
        CHECK(dp_grouped_save_json(g, test_path("tiny3.json"), &err) == DP_OK);
        struct dp_grouped *h = NULL;
        CHECK(dp_grouped_load_json(test_path("tiny3.json"), &h, &err) == DP_OK);
        CHECK(h && h->n_groups == 3 && h->x[0] == g->x[0] && h->x[8] == g->x[8]);
        dp_grouped_free(h);
    }
    dp_grouped_free(g);
    CHECK(dp_grouped_load_json("no/such/file.json", &g, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "no/such/file.json");
}

int main(void) {
    test_graph_builder();
    test_grouped();
    TEST_MAIN_END();
}
