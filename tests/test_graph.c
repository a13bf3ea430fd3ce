/* test_graph.c: workload-graph I/O: driple-graph/1 (good, bad, truncated, round trip), TF
 * GraphDef text (inputs "x:1" and "^x", _output_shapes and shape, skipped blocks, escapes, the
 * exported batch, errors with file:line:col), binary GraphDef and SavedModel (the same graph as
 * the text) and loading by content. */
#include <stdio.h>

#include "dp/graph_io.h"
#include "dp/settings.h"
#include "test.h"

#define DATA "tests/data/graph/"

static int find(const struct dp_graph *g, const char *name) { return dp_graph_find(g, name); }

static const struct dp_node *node(const struct dp_graph *g, const char *name) {
    int i = find(g, name);
    return i >= 0 ? dp_graph_node(g, (size_t)i) : NULL;
}

static void test_json_good(void) {
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    size_t dropped = 99;
    CHECK(dp_graph_load_json(DATA "small.json", &g, &dropped, &err) == DP_OK);
    if (!g) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    CHECK(dp_graph_n_nodes(g) == 11);
    CHECK(dropped == 1); /* "missing_op" */
    CHECK(dp_graph_batch(g) == 16);
    CHECK(!strcmp(dp_graph_name(g), "small") && !strcmp(dp_graph_framework(g), "tensorflow"));
    const struct dp_node *mm = node(g, "mm"), *relu = node(g, "relu"), *loss = node(g, "loss");
    const struct dp_node *grad = node(g, "grad"), *apply = node(g, "apply");
    CHECK(mm && mm->n_inputs == 2 && mm->flops == 1024 && mm->bytes == 2048);
    CHECK(mm && !strcmp(dp_node_attr(mm, "transpose_a"), "false"));
    CHECK(mm && !strcmp(dp_node_attr(mm, "n"), "3")); /* numbers kept as their JSON text */
    CHECK(relu && relu->n_inputs == 1 && relu->inputs[0] == find(g, "mm")); /* "mm:0" */
    CHECK(relu && relu->n_dims == 2 && relu->dims[0] == DP_DIM_BATCH && relu->dims[1] == DP_DIM_UNKNOWN);
    CHECK(loss && loss->n_inputs == 2 && loss->inputs[1] == find(g, "input")); /* "input:1" */
    CHECK(grad && grad->dims[1] == DP_DIM_UNKNOWN); /* -2 */
    CHECK(apply && apply->n_inputs == 2 && apply->n_ctrl == 1 && apply->ctrl[0] == find(g, "relu"));
    CHECK(node(g, "w")->params == 32 && node(g, "w")->dtype == DP_DTYPE_F32);
    CHECK(node(g, "lonely")->n_dims == 0);
    CHECK(node(g, "cpu_side")->n_dims == -1);
    CHECK_NEAR(dp_node_tensor_size(mm, 16), 64, 0);
    CHECK_NEAR(dp_node_tensor_size(mm, 32), 128, 0);
    CHECK_NEAR(dp_node_tensor_size(relu, 16), 0, 0);        /* unknown dim -> 0 (paper) */
    /* a scalar: tensor size 0 as the paper's build_graph.py counts it (issue 13; was 1), one
     * element for costs */
    CHECK_NEAR(dp_node_tensor_size(node(g, "lonely"), 16), 0, 0);
    CHECK_NEAR(dp_node_elements(node(g, "lonely"), 16), 1, 0);
    CHECK_NEAR(dp_node_tensor_size(node(g, "cpu_side"), 16), 0, 0);

    /* Round trip through a file: the same model comes back. */
    CHECK(dp_graph_save_json(g, test_path("graph_rt.json"), &err) == DP_OK);
    struct dp_graph *h = NULL;
    CHECK(dp_graph_load_json(test_path("graph_rt.json"), &h, &dropped, &err) == DP_OK);
    CHECK(dropped == 0);
    if (h) {
        CHECK(dp_graph_n_nodes(h) == dp_graph_n_nodes(g) && dp_graph_batch(h) == 16);
        int same = 1;
        for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
            const struct dp_node *a = dp_graph_node(g, i), *b = dp_graph_node(h, i);
            same &= !strcmp(a->name, b->name) && !strcmp(a->op, b->op) &&
                    !strcmp(a->device, b->device) && a->n_dims == b->n_dims &&
                    a->dtype == b->dtype && a->n_inputs == b->n_inputs && a->n_ctrl == b->n_ctrl &&
                    a->flops == b->flops && a->bytes == b->bytes && a->params == b->params &&
                    a->n_attrs == b->n_attrs;
            for (int d = 0; d < a->n_dims && d < b->n_dims; d++) same &= a->dims[d] == b->dims[d];
            for (int k = 0; k < a->n_inputs && k < b->n_inputs; k++)
                same &= a->inputs[k] == b->inputs[k];
            for (int k = 0; k < a->n_ctrl && k < b->n_ctrl; k++) same &= a->ctrl[k] == b->ctrl[k];
        }
        CHECK(same);
    }
    dp_graph_free(h);
    dp_graph_free(g);
}

static void test_json_bad(void) {
#define G(nodes) "{\"format\":\"driple-graph/1\",\"name\":\"t\",\"nodes\":" nodes "}"
#define N(extra) "{\"name\":\"a\",\"op\":\"Conv2D\"" extra "}"
    static const struct { const char *text, *want; } bad[] = {
        {"{\"format\":\"driple-graph/1\",\"nodes\":[{\"name\":", "bad.json:1:"},
        {"{\"format\":\"driple-graph/1\",\"nodes\":[{\"name\":", "truncated"},
        {"{\"format\":\"driple-grouped/1\",\"nodes\":[]}", "bad.json:$.format: \"driple-grouped/1\""},
        {"[1,2]", "bad.json:$: expected a JSON object"},
        {"{\"format\":\"driple-graph/1\"}", "bad.json:$.nodes: missing"},
        {"{\"format\":\"driple-graph/1\",\"nodes\":{}}", "$.nodes: expected an array"},
        {G("[]"), "bad.json:$.nodes: empty graph"},
        {G("[3]"), "$.nodes[0]: expected an object"},
        {G("[{\"op\":\"X\"}]"), "$.nodes[0].name: missing"},
        {G("[{\"name\":7,\"op\":\"X\"}]"), "$.nodes[0].name: expected a string"},
        {G("[{\"name\":\"a\"}]"), "$.nodes[0].op: missing"},
        {G("[{\"name\":\"\",\"op\":\"X\"}]"), "$.nodes[0].name: empty"},
        {G("[" N("") "," N("") "]"), "bad.json:$.nodes[1].name: duplicate node name 'a'"},
        {G("[" N(",\"dtype\":\"float33\"") "]"), "bad.json:$.nodes[0].dtype: unknown dtype 'float33'"},
        {G("[" N(",\"dtype\":5") "]"), "$.nodes[0].dtype: expected a string"},
        {G("[" N(",\"device\":[]") "]"), "$.nodes[0].device: expected a string"},
        {G("[" N(",\"shape\":\"2x2\"") "]"), "$.nodes[0].shape: expected an array"},
        {G("[" N(",\"shape\":[2,-3]") "]"), "$.nodes[0].shape[1]: expected an integer"},
        {G("[" N(",\"shape\":[2,1.5]") "]"), "$.nodes[0].shape[1]"},
        {G("[" N(",\"shape\":[2,\"x\"]") "]"), "$.nodes[0].shape[1]"},
        {G("[" N(",\"shape\":[1,1,1,1,1,1,1,1,1]") "]"), "$.nodes[0].shape: 9 dimensions"},
        {G("[" N(",\"shape\":[4294967296,4294967296,2]") "]"), "$.nodes[0].shape: the dimensions' product overflows"},
        {G("[" N(",\"inputs\":\"b\"") "]"), "$.nodes[0].inputs: expected an array"},
        {G("[" N(",\"inputs\":[1]") "]"), "$.nodes[0].inputs[0]: expected a node name"},
        {G("[" N(",\"inputs\":[\"^\"]") "]"), "$.nodes[0].inputs[0]"},
        {G("[" N(",\"flops\":\"many\"") "]"), "$.nodes[0].flops: expected a number"},
        {G("[" N(",\"flops\":-5") "]"), "$.nodes[0].flops: negative"},
        {G("[" N(",\"params\":1.5") "]"), "$.nodes[0].params"},
        {G("[" N(",\"attrs\":[]") "]"), "$.nodes[0].attrs: expected an object"},
        {"{\"format\":\"driple-graph/1\",\"batch\":-4,\"nodes\":[" N("") "]}", "$.batch"},
        {"{\"format\":\"driple-graph/1\",\"batch\":1e999,\"nodes\":[" N("") "]}", "$.batch: not a finite number"},
        {G("[" N(",\"shape\":[9007199254740994]") "]"), "$.nodes[0].shape[0]: dimension 9.0072e+15 too large"},
        {"{\"format\":\"driple-graph/1\",\"name\":5,\"nodes\":[" N("") "]}", "$.name: expected a string"},
        {"", "bad.json: empty file"},
    };
#undef G
#undef N
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct dp_graph *g = NULL;
        struct dp_error err = {0};
        CHECK(dp_graph_parse_json(bad[i].text, strlen(bad[i].text), "bad.json", &g, NULL, &err) != DP_OK);
        CHECK(g == NULL);
        CHECK_CONTAINS(err.msg, bad[i].want);
    }
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_graph_load_json(DATA "bad_dtype.json", &g, NULL, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "tests/data/graph/bad_dtype.json:$.nodes[1].dtype: unknown dtype 'float33'");
    CHECK(dp_graph_load_json(DATA "truncated.json", &g, NULL, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "truncated.json:2:");
    CHECK(dp_graph_load_json(DATA "empty.json", &g, NULL, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "empty graph");
    CHECK(dp_graph_load_json(DATA "overflow.json", &g, NULL, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "overflow.json:$.nodes[0].shape: the dimensions' product overflows");
    CHECK(dp_graph_load_json("no/such/graph.json", &g, NULL, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "no/such/graph.json: cannot open");
    CHECK(g == NULL);
}

static void test_pbtxt_good(void) {
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_graph_import_pbtxt(DATA "small.pbtxt", NULL, &g, &err) == DP_OK);
    if (!g) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    CHECK(dp_graph_n_nodes(g) == 12); /* the library's node_def is not a node */
    CHECK(find(g, "not_a_node") < 0);
    CHECK(!strcmp(dp_graph_name(g), "small") && !strcmp(dp_graph_framework(g), "tensorflow"));
    CHECK(dp_graph_batch(g) == 16);
    CHECK_CONTAINS(dp_graph_batch_source(g), "IteratorGetNext");
    const struct dp_node *it = node(g, "IteratorGetNext"), *loss = node(g, "loss");
    const struct dp_node *w = node(g, "w"), *apply = node(g, "train/apply");
    const struct dp_node *gr = node(g, "grad/Relu"), *relu = node(g, "dense/Relu");
    CHECK(it && it->n_dims == 2 && it->dims[0] == DP_DIM_BATCH && it->dims[1] == 8);
    CHECK(it && it->dtype == DP_DTYPE_F32); /* output_types' first */
    CHECK(it && !strcmp(dp_node_attr(it, "output_types"), "[DT_FLOAT, DT_INT64]"));
    CHECK(loss && loss->n_inputs == 2 && loss->inputs[1] == find(g, "IteratorGetNext")); /* x:1 */
    CHECK(loss && loss->n_dims == 1 && loss->dims[0] == DP_DIM_BATCH); /* first output only */
    /* "lr" names no node: dropped; "^dense/Relu" is a control input. */
    CHECK(apply && apply->n_inputs == 2 && apply->n_ctrl == 1 && apply->ctrl[0] == find(g, "dense/Relu"));
    CHECK(w && w->params == 32 && w->dtype == DP_DTYPE_F32 && w->n_dims == 2 && w->dims[0] == 8);
    CHECK(w && !strcmp(dp_node_attr(w, "shape"), "[8, 4]"));
    CHECK(relu && relu->dims[0] == DP_DIM_BATCH);                          /* leading -1 */
    CHECK(gr && gr->dims[0] == DP_DIM_BATCH && gr->dims[1] == DP_DIM_UNKNOWN); /* other -1 */
    CHECK(dp_node_on_gpu(gr) && !dp_node_on_gpu(it));
    CHECK(!strcmp(dp_node_attr(node(g, "dense/MatMul"), "transpose_a"), "false"));
    const struct dp_node *fn = node(g, "save/filename");
    CHECK(fn && !strcmp(dp_node_attr(fn, "value"), "tensor(DT_STRING, [])"));
    CHECK(fn && !strcmp(dp_node_attr(fn, "note"), "a \"quoted\"\tstringand more"));
    CHECK(node(g, "lonely") && node(g, "lonely")->n_dims == -1);
    dp_graph_free(g);

    /* --exported-batch: a first dimension equal to it is the batch (even a false friend). */
    struct dp_import_opts o = {.exported_batch = 8};
    CHECK(dp_graph_import_pbtxt(DATA "small.pbtxt", &o, &g, &err) == DP_OK);
    if (g) {
        CHECK(dp_graph_batch(g) == 8 && !strcmp(dp_graph_batch_source(g), "--exported-batch"));
        CHECK(node(g, "grad/MatMul")->dims[0] == DP_DIM_BATCH);
        CHECK(node(g, "w")->dims[0] == 8);                        /* variables keep their shape */
        CHECK(node(g, "dense/MatMul")->dims[0] == 16);           /* 16 is no longer the batch */
        CHECK(node(g, "dense/Relu")->dims[0] == DP_DIM_BATCH);  /* TF's -1 */
    }
    dp_graph_free(g);

    /* No input pipeline: the first GPU op (not a variable or constant) decides. */
    const char *t = "node { name: \"v\" op: \"VariableV2\" device: \"/gpu:0\"\n"
                    "  attr { key: \"_output_shapes\" value { list { shape { dim { size: 3 } } } } } }\n"
                    "node { name: 'c' op: 'Conv2D' input: 'v' device: '/device:GPU:0'\n"
                    "  attr { key: 'shape' value { shape { dim { size: 24 } dim { size: 5 } } } } }\n"
                    "node { name: 'd' op: 'Relu' input: 'c' device: '/device:GPU:0'\n"
                    "  attr { key: '_output_shapes' value { list { shape { dim { size: 24 } } } } } }\n";
    CHECK(dp_graph_parse_pbtxt(t, strlen(t), "fb.pbtxt", NULL, &g, &err) == DP_OK);
    if (g) {
        CHECK(dp_graph_batch(g) == 24);
        CHECK_CONTAINS(dp_graph_batch_source(g), "first GPU op 'c'");
        CHECK(node(g, "d")->dims[0] == DP_DIM_BATCH && node(g, "c")->dims[1] == 5);
        CHECK(!strcmp(dp_graph_name(g), "fb"));
    }
    dp_graph_free(g);

    /* A MetaGraphDef: the nodes inside graph_def count; meta_info_def is skipped. */
    t = "meta_info_def { stripped_op_list { op { name: \"Conv2D\" } } tags: \"serve\" }\n"
        "graph_def { node { name: \"m\" op: \"X\" } node { name: \"n\" op: \"Y\" input: \"m\" }\n"
        "  versions { producer: 1 } }\n";
    CHECK(dp_graph_parse_pbtxt(t, strlen(t), "meta.pbtxt", NULL, &g, &err) == DP_OK);
    CHECK(g && dp_graph_n_nodes(g) == 2 && node(g, "n")->n_inputs == 1);
    dp_graph_free(g);

    /* Angle brackets, list syntax, separators and comments are all protobuf text. */
    t = "# c\nnode < name: \"a\" op: \"X\" ; attr: [ { key: \"k\" value { list { i: [1, 2] } } } ] >\n"
        "node: { name: \"b\" op: \"Y\", input: [\"a\", \"^a\"] } # trailing\n";
    CHECK(dp_graph_parse_pbtxt(t, strlen(t), "syn.pbtxt", NULL, &g, &err) == DP_OK);
    if (g) {
        CHECK(dp_graph_n_nodes(g) == 2 && !strcmp(dp_node_attr(node(g, "a"), "k"), "[1, 2]"));
        CHECK(node(g, "b")->n_inputs == 1 && node(g, "b")->n_ctrl == 1);
        CHECK(dp_graph_batch(g) == 0 && !strcmp(dp_graph_batch_source(g), "unknown"));
    } else {
        fprintf(stderr, "%s\n", err.msg);
    }
    dp_graph_free(g);
}

static void test_pbtxt_bad(void) {
    static const struct { const char *text, *want; } bad[] = {
        {"node {\n  name: \"a\"\n  op: \"X\"\n", "bad.pbtxt:4:1: file ends inside the block opened at 1:6 (truncated"},
        {"node {\n  name: \"a\n}\n", "bad.pbtxt:2:9: unterminated string"},
        {"node { name: \"a", "bad.pbtxt:1:14: unterminated string (truncated"},
        {"node { name: \"a\\q\" op: \"X\" }", "bad.pbtxt:1:14: bad escape sequence"},
        {"node { op: \"X\" }", "bad.pbtxt:1:1: node block without a 'name'"},
        {"node { name: \"a\" }", "node block without a 'op'"},
        {"node { name: 5 op: \"X\" }", "bad.pbtxt:1:8: name: expected a string"},
        {"node { name: \"\" op: \"X\" }", "empty name"},
        {"node { name: \"a\" op: \"X\" }\nnode { name: \"a\" op: \"Y\" }", "bad.pbtxt:2:8: duplicate node name 'a'"},
        {"node { name: \"a\" op: \"X\" input: 3 }", "bad.pbtxt:1:26: input: expected a node name"},
        {"node { name: \"a\" op: \"X\" bogus }", "bad.pbtxt:1:32: expected ':' or '{' after 'bogus'"},
        {"node { name: \"a\" op: \"X\" } }", "bad.pbtxt:1:28: expected a field name, found '}'"},
        {"node { name: \"a\" op: \"X\" @ }", "bad.pbtxt:1:26: unexpected character '@'"},
        {"node { name: \"a\" op: \"X\" attr { key: \"shape\" value { shape { dim { size: x } } } } }",
         "dim size: expected an integer"},
        {"node { name: \"a\" op: \"X\" attr { key: \"shape\" value { shape { dim { size: 99999999999999999999 } } } } }",
         "dim size: expected an integer"},
        {"node { name: \"a\" op: \"X\" attr { key: \"shape\" value { shape { "
         "dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 1 } "
         "dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 1 } } } } }",
         "shape with more than 8 dimensions"},
        {"node { name: \"a\" op: \"X\" attr { key: \"shape\" value { shape { "
         "dim { size: 4294967296 } dim { size: 4294967296 } dim { size: 2 } } } } }",
         "node 'a': the dimensions' product overflows"},
        {"node { name: \"a\" op: \"X\" input: [\"b\" \"c\" }", "expected ',' or ']' in a list"},
        {"versions { producer: 1 }\n", "bad.pbtxt:2:1: empty graph"},
        {"", "empty graph"},
        {"node: 5", "node: expected a block"},
        {"node { name: \"a\" name: \"b\" op: \"X\" }", "bad.pbtxt:1:18: name: given twice in one node"},
        {"node { name: [\"a\", \"b\"] op: \"X\" }", "name: given twice in one node"},
        {"node { name: \"a\" op: \"X\" op: \"Y\" }", "bad.pbtxt:1:26: op: given twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct dp_graph *g = NULL;
        struct dp_error err = {0};
        CHECK(dp_graph_parse_pbtxt(bad[i].text, strlen(bad[i].text), "bad.pbtxt", NULL, &g, &err) != DP_OK);
        CHECK(g == NULL);
        CHECK_CONTAINS(err.msg, bad[i].want);
    }
    /* Nesting deeper than the limit fails cleanly rather than overflowing the stack. */
    char deep[4096] = "node { name: \"a\" op: \"X\" ";
    for (int i = 0; i < 200; i++) strcat(deep, "a{");
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_graph_parse_pbtxt(deep, strlen(deep), "deep.pbtxt", NULL, &g, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "nested deeper than");
    CHECK(dp_graph_import_pbtxt(DATA "truncated.pbtxt", NULL, &g, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "tests/data/graph/truncated.pbtxt:");
    CHECK_CONTAINS(err.msg, "truncated");
    CHECK(dp_graph_import_pbtxt(DATA "bad_syntax.pbtxt", NULL, &g, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "tests/data/graph/bad_syntax.pbtxt:6:1: expected ':' or '{' after 'bogus', found '}'");
    CHECK(g == NULL);
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_load_by_content(void) {
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    /* The content decides, not the name. */
    const char *pb = "# exported\nnode { name: \"a\" op: \"X\" device: \"/gpu:0\" }\n";
    write_file(test_path("looks_like.json"), pb, strlen(pb));
    CHECK(dp_graph_load(test_path("looks_like.json"), NULL, &g, &err) == DP_OK);
    CHECK(g && !strcmp(dp_graph_framework(g), "tensorflow"));
    dp_graph_free(g);
    g = NULL;
    const char *js = "\xef\xbb\xbf  {\"format\":\"driple-graph/1\",\"nodes\":[{\"name\":\"a\",\"op\":\"X\"}]}";
    write_file(test_path("looks_like.pbtxt"), js, strlen(js));
    CHECK(dp_graph_load(test_path("looks_like.pbtxt"), NULL, &g, &err) == DP_OK); /* BOM skipped */
    CHECK(g && dp_graph_n_nodes(g) == 1);
    dp_graph_free(g);
    g = NULL;
    write_file(test_path("looks_like.pbtxt"), js + 3, strlen(js + 3));
    struct dp_import_opts o = {.exported_batch = 64};
    CHECK(dp_graph_load(test_path("looks_like.pbtxt"), &o, &g, &err) == DP_OK);
    CHECK(g && dp_graph_batch(g) == 64 && !strcmp(dp_graph_batch_source(g), "--exported-batch"));
    dp_graph_free(g);
    g = NULL;
    const unsigned char onnx[] = {0x08, 0x07, 0x12, 0x04, 'd', 'p', 0x00, 0x01};
    CHECK(dp_graph_detect_format(onnx, sizeof onnx) == DP_GRAPH_FORMAT_ONNX);
    const unsigned char junk[] = {0xff, 0x00, 0x13, 0x37};
    write_file(test_path("junk.bin"), junk, sizeof junk);
    CHECK(dp_graph_load(test_path("junk.bin"), NULL, &g, &err) == DP_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, test_path("junk.bin: not a graph"));
    write_file(test_path("empty.txt"), "", 0);
    CHECK(dp_graph_load(test_path("empty.txt"), NULL, &g, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "empty file");
    CHECK(dp_graph_load("no/such/file.pbtxt", NULL, &g, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "no/such/file.pbtxt: cannot open");
    CHECK(dp_graph_load("tests/data", NULL, &g, &err) == DP_ERR_IO); /* a directory: said so */
    CHECK_CONTAINS(err.msg, "tests/data: is a directory");
    CHECK(dp_graph_detect_format((const unsigned char *)"  \n", 3) == DP_GRAPH_FORMAT_UNKNOWN);
    CHECK(dp_graph_detect_format((const unsigned char *)"node {", 6) == DP_GRAPH_FORMAT_PBTXT);
    size_t dropped = 0;
    CHECK(dp_graph_load_ex(DATA "small.pbtxt", NULL, &g, &dropped, &err) == DP_OK);
    CHECK(g && dp_graph_n_nodes(g) == 12 && dropped == 1); /* "lr" */
    dp_graph_free(g);
    CHECK(dp_graph_load_ex(DATA "small.json", NULL, &g, &dropped, &err) == DP_OK);
    CHECK(g && dropped == 1); /* "missing_op" */
    dp_graph_free(g);
}

/* Two graphs node for node: names, ops, devices, shapes, dtypes, inputs, params, attrs. */
static bool same_graph(const struct dp_graph *a, const struct dp_graph *b) {
    if (dp_graph_n_nodes(a) != dp_graph_n_nodes(b) || dp_graph_batch(a) != dp_graph_batch(b) ||
        strcmp(dp_graph_batch_source(a), dp_graph_batch_source(b)))
        return false;
    for (size_t i = 0; i < dp_graph_n_nodes(a); i++) {
        const struct dp_node *x = dp_graph_node(a, i), *y = dp_graph_node(b, i);
        if (strcmp(x->name, y->name) || strcmp(x->op, y->op) || strcmp(x->device, y->device) ||
            x->n_dims != y->n_dims || x->dtype != y->dtype || x->n_inputs != y->n_inputs ||
            x->n_ctrl != y->n_ctrl || x->params != y->params || x->n_attrs != y->n_attrs)
            return false;
        for (int d = 0; d < x->n_dims; d++)
            if (x->dims[d] != y->dims[d]) return false;
        for (int k = 0; k < x->n_inputs; k++)
            if (x->inputs[k] != y->inputs[k]) return false;
        for (int k = 0; k < x->n_ctrl; k++)
            if (x->ctrl[k] != y->ctrl[k]) return false;
        for (int k = 0; k < x->n_attrs; k++)
            if (strcmp(x->attrs[k].key, y->attrs[k].key) ||
                strcmp(x->attrs[k].value, y->attrs[k].value)) {
                fprintf(stderr, "%s: attr %s: '%s' vs '%s'\n", x->name, x->attrs[k].key,
                        x->attrs[k].value, y->attrs[k].value);
                return false;
            }
    }
    return true;
}

static const char *attr(const struct dp_graph *g, const char *n, const char *key) {
    const struct dp_node *x = node(g, n);
    const char *v = x ? dp_node_attr(x, key) : NULL;
    return v ? v : "(none)";
}

static void expect_pb_fail(const unsigned char *d, size_t n, const char *want) {
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_graph_parse_graphdef(d, n, "bad.pb", NULL, &g, NULL, &err) != DP_OK && !g);
    CHECK_CONTAINS(err.msg, want);
    dp_graph_free(g);
}

/* Binary GraphDef and SavedModel (issue 13): the same graph as the text form (fixtures written
 * from the .pbtxt files by tools/pbtxt_to_pb.py with Google's protobuf library), attribute
 * values rendered as TF's text writer prints them, errors naming the byte. */
static void test_graphdef_binary(void) {
    static const char *const pairs[][2] = {
        {DATA "small.pbtxt", DATA "small.pb"},
        {DATA "attrs.pbtxt", DATA "attrs.pb"},
        {DATA "attrs.pbtxt", DATA "attrs_saved_model/saved_model.pb"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        struct dp_graph *t = NULL, *b = NULL;
        struct dp_error err = {0};
        size_t dt = 0, db = 0;
        CHECK(dp_graph_load_ex(pairs[i][0], NULL, &t, &dt, &err) == DP_OK);
        CHECK(dp_graph_load_ex(pairs[i][1], NULL, &b, &db, &err) == DP_OK);
        if (!b) fprintf(stderr, "%s\n", err.msg);
        CHECK(t && b && same_graph(t, b) && dt == db);
        dp_graph_free(t);
        dp_graph_free(b);
    }
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_graph_import_graphdef(DATA "attrs_saved_model/saved_model.pb", NULL, &g, NULL,
                                   &err) == DP_OK);
    CHECK(g && !strcmp(dp_graph_name(g), "attrs_saved_model")); /* named after its directory */
    CHECK(g && !strcmp(attr(g, "scale", "weights"), "[0.1, 1e-08, 3.14159274, -0]"));
    CHECK(g && !strcmp(attr(g, "scale", "binary"), "<5 bytes>"));
    CHECK(g && !strcmp(attr(g, "scale", "ref"), "DT_FLOAT_REF"));
    CHECK(g && !strcmp(attr(g, "scale", "count"), "-7"));
    CHECK(g && !strcmp(attr(g, "scale", "flags"), "[true, false]"));
    CHECK(g && !strcmp(attr(g, "scale", "value"), "tensor(DT_FLOAT, [3])"));
    CHECK(g && !strcmp(attr(g, "conv/Conv2D", "strides"), "[1, 1, 2, 2]"));
    CHECK(g && !strcmp(attr(g, "conv/Conv2D", "explicit_paddings"), "[]"));
    CHECK(g && !strcmp(attr(g, "bn/FusedBatchNormV3", "epsilon"), "0.001"));
    CHECK(g && !strcmp(attr(g, "bn/FusedBatchNormV3", "is_training"), "false"));
    CHECK(g && !strcmp(attr(g, "call", "fs"), "[a, b]") && !strcmp(attr(g, "call", "f"), "inner_fn"));
    CHECK(g && !strcmp(attr(g, "call", "shapes"), "[[-1], ?]"));
    const struct dp_node *call = g ? node(g, "call") : NULL, *k = g ? node(g, "conv/kernel") : NULL;
    CHECK(call && call->dtype == DP_DTYPE_F16 && call->n_dims == -1 && call->n_ctrl == 1);
    CHECK(k && k->params == 7 * 7 * 3 * 64);
    dp_graph_free(g);

    /* Told apart by content: ONNX, GraphDef and SavedModel are all binary protobufs. */
    unsigned char head[4096];
    static const struct { const char *path; enum dp_graph_format fmt; } kinds[] = {
        {DATA "attrs.pb", DP_GRAPH_FORMAT_GRAPHDEF},
        {DATA "attrs_saved_model/saved_model.pb", DP_GRAPH_FORMAT_SAVED_MODEL},
        {"tests/data/onnx/tiny_cnn.onnx", DP_GRAPH_FORMAT_ONNX},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        FILE *f = fopen(kinds[i].path, "rb");
        size_t n = f ? fread(head, 1, sizeof head, f) : 0;
        if (f) fclose(f);
        CHECK(dp_graph_detect_format(head, n) == kinds[i].fmt);
    }

    /* Every truncation of a binary graph fails cleanly or reads. */
    FILE *f = fopen(DATA "attrs.pb", "rb");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    int bad_msg = 0;
    for (size_t cut = 1; cut < n; cut++) {
        g = NULL;
        memset(&err, 0, sizeof err);
        if (dp_graph_parse_graphdef(buf, cut, "cut.pb", NULL, &g, NULL, &err) == DP_OK)
            dp_graph_free(g);
        else bad_msg += !strstr(err.msg, "cut.pb") || g != NULL;
    }
    CHECK(n > 1000 && bad_msg == 0);
    const unsigned char noname[] = {0x0a, 0x03, 0x12, 0x01, 'X'};
    expect_pb_fail(noname, sizeof noname, "bad.pb:byte 2: node without a 'name'");
    const unsigned char dup[] = {0x0a, 0x06, 0x0a, 0x01, 'a', 0x12, 0x01, 'X',
                                 0x0a, 0x06, 0x0a, 0x01, 'a', 0x12, 0x01, 'Y'};
    expect_pb_fail(dup, sizeof dup, "bad.pb:byte 10: duplicate node name 'a'");
    const unsigned char twice[] = {0x0a, 0x09, 0x0a, 0x01, 'a', 0x0a, 0x01, 'b', 0x12, 0x01, 'X'};
    expect_pb_fail(twice, sizeof twice, "bad.pb:byte 5: name: given twice in one node");
    /* attr { key: "shape" value { shape { dim { size: -2 } } } } */
    const unsigned char negdim[] = {0x0a, 0x20, 0x0a, 0x01, 'a',  0x12, 0x01, 'X',  0x2a, 0x18,
                                    0x0a, 0x05, 's',  'h',  'a',  'p',  'e',  0x12, 0x0f, 0x3a,
                                    0x0d, 0x12, 0x0b, 0x08, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0x01};
    expect_pb_fail(negdim, sizeof negdim, "dim size: expected an integer >= -1");
    const unsigned char nothing[] = {0x22, 0x02, 0x08, 0x01}; /* versions only */
    expect_pb_fail(nothing, sizeof nothing, "bad.pb: empty graph");
}

/* Input references as both formats write them; a whole name wins over a port suffix. */
static void test_resolve_input(void) {
    const char *t = "{\"format\": \"driple-graph/1\", \"nodes\": [{\"name\": \"a\", \"op\": \"X\"}, "
                    "{\"name\": \"a:1\", \"op\": \"X\"}]}";
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_graph_parse_json(t, strlen(t), "r.json", &g, NULL, &err) == DP_OK);
    if (!g) return;
    bool control = true;
    CHECK(dp_graph_resolve_input(g, "a", &control) == 0 && !control);
    CHECK(dp_graph_resolve_input(g, "a:1", &control) == 1 && !control);
    CHECK(dp_graph_resolve_input(g, "a:2", &control) == 0);
    CHECK(dp_graph_resolve_input(g, "^a:1", &control) == 1 && control);
    CHECK(dp_graph_resolve_input(g, "a:x", &control) == -1);
    CHECK(dp_graph_resolve_input(g, ":1", &control) == -1);
    CHECK(dp_graph_resolve_input(g, "a:", &control) == -1);
    CHECK(dp_graph_resolve_input(g, "b", &control) == -1);
    dp_graph_free(g);
}

/* Hostile inputs kept as files (tests/data/fuzz/, seeds of the fuzz targets too): each is
 * refused, read by content as the CLI reads it, with a message naming the file and the place. */
static void test_hostile_files(void) {
#define F "tests/data/fuzz/"
    static const struct { const char *path, *want; } cases[] = {
        {F "graph_json/huge_dim.json",
         F "graph_json/huge_dim.json:$.nodes[0].shape[0]: dimension 1e+18 too large (at most 2^53)"},
        {F "graph_json/deep_nesting.json",
         F "graph_json/deep_nesting.json:1:1080: JSON nested deeper than 1000 levels"},
        {F "graph_json/inf_flops.json", F "graph_json/inf_flops.json:$.nodes[0].flops: not a finite number"},
        {F "pbtxt/huge_dims.pbtxt",
         F "pbtxt/huge_dims.pbtxt:5:47: node 'a': the dimensions' product overflows 64 bits"},
        {F "pbtxt/float_dim.pbtxt", F "pbtxt/float_dim.pbtxt:5:61: dim size: expected an integer >= -1"},
        {F "pbtxt/deep_nesting.pbtxt", F "pbtxt/deep_nesting.pbtxt:1:486: blocks nested deeper than 64"},
        {F "pbtxt/duplicate_name.pbtxt", F "pbtxt/duplicate_name.pbtxt:2:8: duplicate node name 'a'"},
        {F "graphdef/huge_length.pb",
         F "graphdef/huge_length.pb:byte 6: length 4294967295 runs past the end of its message"},
        {F "graphdef/huge_product.pb",
         F "graphdef/huge_product.pb:byte 33: node 'big': the dimensions' product overflows 64 bits"},
        {F "graphdef/nine_dims.pb", F "graphdef/nine_dims.pb:byte 62: shape with more than 8 dimensions"},
    };
#undef F
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dp_graph *g = NULL;
        struct dp_error err = {0};
        CHECK(dp_graph_load(cases[i].path, NULL, &g, &err) != DP_OK);
        CHECK(g == NULL);
        CHECK_CONTAINS(err.msg, cases[i].want);
    }
    /* The same bounds hold for every importer, at dp_graph_add_node. */
    struct dp_graph *g = dp_graph_init("t");
    struct dp_error err = {0};
    const int64_t huge[3] = {INT64_C(1) << 31, INT64_C(1) << 31, DP_DIM_BATCH}; /* 2^62 */
    const int64_t neg[2] = {4, -3};
    CHECK(g && dp_graph_add_node(g, "a", "Const", "", 3, huge, DP_DTYPE_F32, NULL, &err) == DP_OK);
    const int64_t huger[3] = {INT64_C(1) << 31, INT64_C(1) << 31, 2};  /* 2^63 */
    CHECK(g && dp_graph_add_node(g, "b", "Const", "", 3, huger, DP_DTYPE_F32, NULL, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "node 'b': the dimensions' product overflows 64 bits");
    CHECK(g && dp_graph_add_node(g, "c", "Const", "", 2, neg, DP_DTYPE_F32, NULL, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "node 'c': dimension -3 is negative");
    CHECK(g && dp_graph_n_nodes(g) == 1);
    dp_graph_free(g);
}

/* What cJSON would accept and driple must not (issue 17): a \u0000 inside a name (cJSON cut the
 * name there silently) and a raw NUL byte, both named by line and column; more values than the
 * parsed tree's memory cap, refused before cJSON allocates; a file that is not JSON at all, said
 * so without quoting its bytes; "-" read as stdin. The same check serves every cJSON reader
 * (settings here as a second one). */
static void test_json_hostile(void) {
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    const char *nul_name =
        "{\"format\": \"driple-graph/1\", \"name\": \"n\", \"nodes\": [\n"
        "  {\"name\": \"conv\\u0000hidden\", \"op\": \"Conv2D\", \"device\": \"/gpu:0\"}]}\n";
    CHECK(dp_graph_parse_json(nul_name, strlen(nul_name), "nul.json", &g, NULL, &err) ==
          DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "nul.json:2:17: \\u0000 (a NUL character) inside a string");
    CHECK(g == NULL);
    const char raw[] = "{\"format\": \"driple-graph/1\", \"name\": \"a\0b\"}";
    CHECK(dp_graph_parse_json(raw, sizeof raw - 1, "raw.json", &g, NULL, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "raw.json:1:40: a NUL byte (not JSON text)");
    const char *p = write_tmp("nul_settings.json",
                              "{\"format\": \"driple-settings/1\", \"settings\": [{\"id\": "
                              "\"x\\u0000y\", \"gpu\": \"V100-PCIe-16GB\", \"ps\": 1, "
                              "\"workers\": 2, \"network\": \"PCIe\"}]}");
    struct dp_settings *set = NULL;
    CHECK(dp_settings_load(p, NULL, &set, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "nul_settings.json:1:55: \\u0000");
    dp_settings_free(set);
    /* 2^24 + 1 values: [0,0,...] */
    size_t n = ((size_t)1 << 24) + 1, len = 2 * n + 1;
    char *big = malloc(len + 1);
    if (big) {
        big[0] = '[';
        for (size_t i = 0; i < n; i++) {
            big[1 + 2 * i] = '0';
            big[2 + 2 * i] = i + 1 < n ? ',' : ']';
        }
        big[len] = '\0';
        CHECK(dp_graph_parse_json(big, len, "big.json", &g, NULL, &err) == DP_ERR_INVALID);
        CHECK_CONTAINS(err.msg, "big.json: more than 16777216 JSON values: over driple's memory cap");
        free(big);
    }
    p = write_tmp("not_json.json", "root:x:0:0:root:/root:/bin/bash\n");
    CHECK(dp_graph_load_json(p, &g, NULL, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "not_json.json:1:1: not JSON (a driple file starts with '{')");
    CHECK(!strstr(err.msg, "root"));
}

int main(void) {
    test_resolve_input();
    test_json_good();
    test_json_bad();
    test_pbtxt_good();
    test_pbtxt_bad();
    test_graphdef_binary();
    test_load_by_content();
    test_hostile_files();
    test_json_hostile();
    TEST_MAIN_END();
}
