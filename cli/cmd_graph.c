/* cmd_graph.c: `driple graph info|import|coarsen|weights` (inspect, convert and coarsen workload
 * graphs in any supported format) and `driple bench coarsen` (times coarsening a ~50,000-op
 * graph, synthesized deterministically unless a file is given). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/coarsen.h"
#include "dp/cost.h"
#include "dp/graph_io.h"
#include "dp/json_out.h"

#define GRAPH_USAGE                                                                               \
    "driple graph info GRAPH [--batch N] [--exported-batch N] [--json] [--tensors]\n"                        \
    "       driple graph import IN -o OUT.json [--exported-batch N]\n"                           \
    "       driple graph coarsen GRAPH -o GROUPED.json [--groups K] [--seed S] [--batch N]\n"    \
    "                            [--exported-batch N] [--max-iter N] [--weights FILE]\n"         \
    "       driple graph weights GRAPH... -o OUT.json [--source TEXT] [--exported-batch N]\n"    \
    "GRAPH is driple-graph/1 JSON, TensorFlow GraphDef text (.pbtxt) or ONNX, told apart by content."

/* --- small helpers --------------------------------------------------------------------------- */

static int load_counting(const char *path, const struct dp_import_opts *o, int64_t batch,
                         struct dp_graph **g, size_t *dropped) {
    struct dp_error err = {0};
    if (dp_graph_load_ex(path, o, g, dropped, &err)) return cli_fail(&err);
    cmd_import_warnings(path, o, batch);
    return 0;
}

static int load(const char *path, const struct dp_import_opts *o, int64_t batch,
                struct dp_graph **g) {
    return load_counting(path, o, batch, g, NULL);
}

struct type_count {
    const char *op;
    int         n;
};

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_count(const void *a, const void *b) {
    const struct type_count *x = a, *y = b;
    if (x->n != y->n) return y->n - x->n;
    return strcmp(x->op, y->op);
}

/* The op-type histogram, most frequent first; *n gets the number of types. NULL on OOM. */
static struct type_count *histogram(const struct dp_graph *g, size_t *n) {
    size_t nn = dp_graph_n_nodes(g), k = 0;
    const char **ops = malloc((nn + 1) * sizeof *ops);
    struct type_count *h = malloc((nn + 1) * sizeof *h);
    if (!ops || !h) {
        free((void *)ops);
        free(h);
        return NULL;
    }
    for (size_t i = 0; i < nn; i++) ops[i] = dp_graph_node(g, i)->op;
    qsort((void *)ops, nn, sizeof *ops, cmp_name);
    for (size_t i = 0; i < nn; i++) {
        if (k > 0 && !strcmp(h[k - 1].op, ops[i])) h[k - 1].n++;
        else h[k++] = (struct type_count){ops[i], 1};
    }
    free((void *)ops);
    qsort(h, k, sizeof *h, cmp_count);
    *n = k;
    return h;
}

/* --- graph info ---------------------------------------------------------------------------- */

/* A stored tensor of the graph (a variable, or a constant an importer classified): what it is
 * and by which rule. NULL when node n is neither. */
static const char *tensor_rule(const struct dp_node *n, bool *trained) {
    const char *rule = dp_node_attr(n, "rule"), *t = dp_node_attr(n, "trainable");
    *trained = n->params > 0 && !(t && !strcmp(t, "false"));
    if (rule) return rule;
    if (n->params <= 0) return NULL;
    return *trained ? "parameter: a variable of the graph (trainable)"
                    : "buffer: a variable marked trainable=false";
}

static void print_tensors(const struct dp_graph *g) {
    printf("stored tensors (elements, kind: rule)\n");
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        bool trained;
        const char *rule = tensor_rule(n, &trained);
        if (rule) printf("  %12.0f  %s  %s\n", dp_node_elements(n, 1), n->name, rule);
    }
}

static void json_tensors(struct dp_jw *w, const struct dp_graph *g) {
    dp_jw_array(w, "tensors");
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        bool trained;
        const char *rule = tensor_rule(n, &trained);
        if (!rule) continue;
        dp_jw_object(w, NULL);
        dp_jw_str(w, "name", n->name);
        dp_jw_num(w, "elements", dp_node_elements(n, 1));
        dp_jw_str(w, "kind", trained ? "parameter" : n->params > 0 ? "buffer" : "constant");
        dp_jw_str(w, "rule", rule);
        dp_jw_end(w);
    }
    dp_jw_end(w);
}

static const struct cli_opt info_opts[] = {
    {"--batch", "N", "the graph's", 1, (double)(INT64_C(1) << 40),
     "the batch size the figures are at", NULL},
    {"--json", NULL, NULL, 0, 0, "print the figures as JSON", NULL},
    {"--tensors", NULL, NULL, 0, 0, "list the stored tensors, each with the rule that classified it",
     NULL},
    CLI_MORE(cmd_import_table),
    CLI_END,
};
const struct cli_spec cmd_graph_info_spec = {
    "graph info", "a graph's ops, parameters, FLOPs and memory", GRAPH_USAGE, info_opts, NULL};

static int graph_info(int argc, char **argv) {
    struct cli c;
    struct dp_import_opts o;
    int64_t batch = 0;
    if (!cli_init(&c, argc, argv, &cmd_graph_info_spec)) return c.rc;
    bool json = cli_flag(&c, "--json"), tensors = cli_flag(&c, "--tensors");
    bool ok = cmd_import_opts(&c, &o) && cli_int(&c, "--batch", 1, INT64_C(1) << 40, &batch);
    const char *path = cli_positional(&c, 0);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!path) return cli_usage("graph info", GRAPH_USAGE, "missing GRAPH");
    struct dp_graph *g = NULL;
    size_t dropped = 0;
    int rc = load_counting(path, &o, batch, &g, &dropped);
    if (rc) return rc;
    struct dp_graph_stats s;
    struct dp_error err = {0};
    size_t n_types = 0;
    struct type_count *h = NULL;
    if (dp_graph_stats(g, &s, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (!(h = histogram(g, &n_types))) {
        fprintf(stderr, "driple: graph info: out of memory\n");
        rc = 1;
        goto done;
    }
    int64_t b = batch > 0 ? batch : dp_graph_batch(g);
    int64_t params = dp_graph_param_count(g, true), buffers = dp_graph_param_count(g, false) - params;
    double elems = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_graph_op_on_gpu(n, s.unplaced)) elems += dp_node_tensor_size(n, b);
    }
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "graph", dp_graph_name(g));
        dp_jw_str(w, "framework", dp_graph_framework(g));
        dp_jw_int(w, "exported_batch", dp_graph_batch(g));
        dp_jw_str(w, "batch_source", dp_graph_batch_source(g));
        dp_jw_int(w, "batch", b);
        dp_jw_int(w, "ops", s.n_ops);
        dp_jw_int(w, "gpu_ops", s.n_gpu_ops);
        dp_jw_int(w, "gpu_edges", s.n_gpu_edges);
        dp_jw_int(w, "isolated_gpu_ops", s.n_isolated);
        dp_jw_int(w, "components", s.n_components);
        dp_jw_int(w, "largest_component_ops", s.largest_component);
        dp_jw_int(w, "variables", s.n_variables);
        dp_jw_num(w, "parameters", (double)params);
        dp_jw_num(w, "buffers", (double)buffers);
        dp_jw_num(w, "parameter_bytes", s.param_bytes);
        dp_jw_num(w, "gpu_tensor_elements", elems);
        dp_jw_int(w, "dropped_inputs", (int64_t)dropped);
        dp_jw_bool(w, "unplaced", s.unplaced);
        dp_jw_object(w, "op_types");
        for (size_t i = 0; i < n_types; i++) dp_jw_int(w, h[i].op, h[i].n);
        dp_jw_end(w);
        if (tensors) json_tensors(w, g);
        rc = cmd_json_emit(w);
    } else {
        printf("graph            %s (%s)\n", dp_graph_name(g),
               *dp_graph_framework(g) ? dp_graph_framework(g) : "framework not given");
        printf("exported batch   %lld%s%s%s\n", (long long)dp_graph_batch(g),
               *dp_graph_batch_source(g) ? " (" : "", dp_graph_batch_source(g),
               *dp_graph_batch_source(g) ? ")" : "");
        printf("ops              %d\n", s.n_ops);
        printf("dropped inputs   %zu (naming no op in the file)\n", dropped);
        printf("GPU ops          %d%s\n", s.n_gpu_ops,
               s.unplaced ? " (no op names a device: all taken as GPU ops)" : "");
        printf("GPU edges        %lld (undirected, data + control, multi-edges collapsed)\n",
               (long long)s.n_gpu_edges);
        printf("isolated GPU ops %d\n", s.n_isolated);
        printf("components       %d (of the non-isolated GPU ops)\n", s.n_components);
        printf("largest comp.    %d ops (kept for coarsening)\n", s.largest_component);
        printf("variables        %d: %lld parameters (trained), %lld in buffers (not trained); "
               "%.1f MB in all\n", s.n_variables, (long long)params, (long long)buffers,
               s.param_bytes / 1e6);
        printf("GPU tensor elems %.6g at batch %lld\n", elems, (long long)b);
        printf("op types         %zu\n", n_types);
        for (size_t i = 0; i < n_types && i < 25; i++) printf("  %8d  %s\n", h[i].n, h[i].op);
        if (n_types > 25) printf("  ... %zu more (see --json)\n", n_types - 25);
        if (tensors) print_tensors(g);
    }
done:
    free(h);
    dp_graph_free(g);
    return rc;
}

/* --- graph import ---------------------------------------------------------------------------- */

static const struct cli_opt import_opts[] = {
    {"-o", "OUT.json", NULL, 0, 0, "the driple-graph/1 file written (-: stdout)", NULL},
    CLI_MORE(cmd_import_table),
    CLI_END,
};
const struct cli_spec cmd_graph_import_spec = {
    "graph import", "a GraphDef or ONNX file as driple-graph/1 JSON", GRAPH_USAGE, import_opts,
    NULL};

static int graph_import(int argc, char **argv) {
    struct cli c;
    struct dp_import_opts o;
    if (!cli_init(&c, argc, argv, &cmd_graph_import_spec)) return c.rc;
    const char *outp = cli_value(&c, "-o");
    bool ok = cmd_import_opts(&c, &o);
    const char *in = cli_positional(&c, 0);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!in) return cli_usage("graph import", GRAPH_USAGE, "missing IN");
    if (!outp) return cli_usage("graph import", GRAPH_USAGE, "missing -o OUT.json");
    struct dp_graph *g = NULL;
    int rc = load(in, &o, 0, &g);
    if (rc) return rc;
    struct dp_error err = {0};
    if (dp_graph_save_json(g, outp, &err)) rc = cli_fail(&err);
    else if (strcmp(outp, "-"))
        fprintf(stderr, "driple: wrote %s: %zu ops, exported batch %lld (%s)\n", outp,
                dp_graph_n_nodes(g), (long long)dp_graph_batch(g), dp_graph_batch_source(g));
    dp_graph_free(g);
    return rc;
}

/* --- graph coarsen ------------------------------------------------------------------------- */

static const struct cli_opt coarsen_opts[] = {
    {"-o", "GROUPED.json", NULL, 0, 0, "the grouped graph written", NULL},
    {"--weights", "FILE", "assets/op_weights.json", 0, 0, "the op-type weights", NULL},
    {"--groups", "K", CLI_STR(DP_DEFAULT_GROUPS), 1, 1000000, "groups", NULL},
    {"--seed", "S", CLI_STR(DP_DEFAULT_SEED), (double)INT64_MIN, (double)INT64_MAX,
     "the fluid communities' seed", NULL},
    {"--batch", "N", "the graph's", 1, (double)(INT64_C(1) << 40), "the features' batch size",
     NULL},
    {"--max-iter", "N", "until converged", 1, 1000000, "fluid-community rounds", NULL},
    CLI_MORE(cmd_import_table),
    CLI_END,
};
const struct cli_spec cmd_graph_coarsen_spec = {
    "graph coarsen", "a graph grouped into K groups with their features", GRAPH_USAGE,
    coarsen_opts, NULL};

static int graph_coarsen(int argc, char **argv) {
    struct cli c;
    struct dp_import_opts o;
    int64_t k = DP_DEFAULT_GROUPS, seed = DP_DEFAULT_SEED, batch = 0, max_iter = 0;
    if (!cli_init(&c, argc, argv, &cmd_graph_coarsen_spec)) return c.rc;
    const char *outp = cli_value(&c, "-o");
    const char *wpath = cli_value(&c, "--weights");
    bool ok = cmd_import_opts(&c, &o) && cli_int(&c, "--groups", 1, 1000000, &k) &&
              cli_int(&c, "--seed", INT64_MIN, INT64_MAX, &seed) &&
              cli_int(&c, "--batch", 1, INT64_C(1) << 40, &batch) &&
              cli_int(&c, "--max-iter", 1, 1000000, &max_iter);
    const char *in = cli_positional(&c, 0);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!in) return cli_usage("graph coarsen", GRAPH_USAGE, "missing GRAPH");
    if (!outp) return cli_usage("graph coarsen", GRAPH_USAGE, "missing -o GROUPED.json");
    struct dp_error err = {0};
    struct dp_op_weights *w = NULL;
    if (dp_op_weights_load_default(wpath, &w, &err)) return cli_fail(&err);
    struct dp_graph *g = NULL;
    int rc = load(in, &o, batch, &g);
    struct dp_partition *p = NULL;
    struct dp_grouped *gr = NULL;
    char *unknown = NULL;
    if (rc) goto done;
    struct dp_coarsen_opts co = {.k = (int)k, .seed = seed, .max_iter = (int)max_iter};
    if (dp_coarsen(g, &co, &p, &err) || dp_features(g, p, w, batch, &gr, &unknown, &err)) {
        dp_error_prefix(&err, in); /* the engine names the graph; name the file too */
        rc = cli_fail(&err);
        goto done;
    }
    if (dp_grouped_save_json(gr, outp, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (p->unplaced)
        fprintf(stderr, "driple: note: %s names no device: every op taken as a GPU op\n", in);
    if (unknown)
        fprintf(stderr, "driple: warning: op types missing from the weight table (weight 0): %s\n",
                unknown);
    if (p->n_disconnected)
        fprintf(stderr, "driple: note: %d of %d groups are not connected inside\n",
                p->n_disconnected, p->n_groups);
    if (k > p->n_ops)
        fprintf(stderr, "driple: note: %lld groups asked, the graph keeps %d ops: %d groups\n",
                (long long)k, p->n_ops, p->n_groups);
    if (strcmp(outp, "-"))
        fprintf(stderr,
                "driple: wrote %s: %d of %d GPU ops kept (%d isolated dropped, %d components), "
                "%d groups, %d edges, batch %lld, seed %lld, %d sweeps\n",
                outp, p->n_ops, p->n_gpu_ops, p->n_isolated, p->n_components, p->n_groups,
                p->n_edges, (long long)gr->batch, (long long)seed, p->iterations);
done:
    free(unknown);
    dp_grouped_free(gr);
    dp_partition_free(p);
    dp_graph_free(g);
    dp_op_weights_free(w);
    return rc;
}

/* --- graph weights --------------------------------------------------------------------------- */

static const struct cli_opt weights_opts[] = {
    {"-o", "OUT.json", NULL, 0, 0, "the op-type weights written (driple-op-weights/1)", NULL},
    {"--source", "TEXT", "the graphs' names", 0, 0, "the provenance written in the file", NULL},
    CLI_MORE(cmd_import_table),
    CLI_END,
};
const struct cli_spec cmd_graph_weights_spec = {
    "graph weights", "the op-type weight table recomputed from graphs", GRAPH_USAGE,
    weights_opts, NULL};

static int graph_weights(int argc, char **argv) {
    struct cli c;
    struct dp_import_opts o;
    if (!cli_init(&c, argc, argv, &cmd_graph_weights_spec)) return c.rc;
    const char *outp = cli_value(&c, "-o");
    const char *source = cli_value(&c, "--source");
    bool ok = cmd_import_opts(&c, &o);
    int n = 0;
    while (cli_positional(&c, n)) n++;
    ok = ok && cli_check_unused(&c);
    if (!ok || n == 0 || !outp) {
        cli_done(&c);
        if (!ok) return 2;
        return cli_usage("graph weights", GRAPH_USAGE, n ? "missing -o OUT.json" : "missing GRAPH");
    }
    struct dp_graph **gs = calloc((size_t)n, sizeof *gs);
    const char **paths = calloc((size_t)n, sizeof *paths);
    char *src = NULL;
    int rc = 1;
    size_t len = 96;
    if (!gs || !paths) {
        fprintf(stderr, "driple: graph weights: out of memory\n");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        paths[i] = cli_positional(&c, i);
        const char *base = strrchr(paths[i], '/');
        len += strlen(base ? base + 1 : paths[i]) + 2;
    }
    for (int i = 0; i < n; i++)
        if ((rc = load(paths[i], &o, 0, &gs[i]))) goto done;
    if (!source) {
        if (!(src = malloc(len))) {
            fprintf(stderr, "driple: graph weights: out of memory\n");
            rc = 1;
            goto done;
        }
        snprintf(src, len, "relative frequency of GPU op types over %d graph%s:", n,
                 n == 1 ? "" : "s");
        for (int i = 0; i < n; i++) {
            const char *base = strrchr(paths[i], '/');
            strcat(src, i ? ", " : " ");
            strcat(src, base ? base + 1 : paths[i]);
        }
    }
    struct dp_error err = {0};
    struct dp_op_weights *w = NULL;
    rc = 0;
    if (dp_op_weights_build((const struct dp_graph *const *)gs, (size_t)n, source ? source : src,
                            &w, &err) ||
        dp_op_weights_save(w, outp, &err)) {
        rc = cli_fail(&err);
    } else if (strcmp(outp, "-")) {
        fprintf(stderr, "driple: wrote %s: %zu op types from %d graph%s\n", outp,
                dp_op_weights_count(w), n, n == 1 ? "" : "s");
    }
    dp_op_weights_free(w);
done:
    for (int i = 0; gs && i < n; i++) dp_graph_free(gs[i]);
    free(gs);
    free((void *)paths);
    free(src);
    cli_done(&c);
    return rc;
}

int cmd_graph(int argc, char **argv) {
    if (argc < 1) return cli_usage("graph", GRAPH_USAGE, "missing subcommand");
    const char *sub = argv[0];
    if (!strcmp(sub, "info")) return graph_info(argc - 1, argv + 1);
    if (!strcmp(sub, "import")) return graph_import(argc - 1, argv + 1);
    if (!strcmp(sub, "coarsen")) return graph_coarsen(argc - 1, argv + 1);
    if (!strcmp(sub, "weights")) return graph_weights(argc - 1, argv + 1);
    if (!strcmp(sub, "help") || !strcmp(sub, "--help") || !strcmp(sub, "-h")) {
        printf("usage: %s\n", GRAPH_USAGE);
        return 0;
    }
    return cli_usage("graph", GRAPH_USAGE, "unknown subcommand '%s'", sub);
}

/* --- bench coarsen ------------------------------------------------------------------------- */

static uint64_t mix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A training-graph-like op graph of about n ops, all on GPU: a forward chain of layers (conv,
 * bias, batch norm, relu; residual adds every third layer; a variable and its read per weight),
 * a mirrored backward chain (each gradient op reads its forward op and the next gradient), and
 * an optimizer op per variable. Deterministic for (n, seed). */
static struct dp_graph *synth_graph(int n, uint64_t seed) {
    struct dp_graph *g = dp_graph_init("synthetic");
    int *fwd = NULL, *vars;
    if (!g || dp_graph_set_framework(g, "synthetic") || dp_graph_set_batch(g, 32, "synthetic"))
        goto fail;
    static const char *const fwd_ops[] = {"Conv2D", "BiasAdd", "FusedBatchNormV3", "Relu"};
    static const char *const bwd_ops[] = {"Conv2DBackpropInput", "BiasAddGrad",
                                          "FusedBatchNormGradV3", "ReluGrad"};
    const char *dev = "/job:worker/replica:0/task:0/device:GPU:0";
    char name[64];
    int64_t act[4] = {DP_DIM_BATCH, 28, 28, 64}, wshape[4] = {3, 3, 64, 64};
    int per_layer = 4 /* fwd */ + 4 /* bwd */ + 2 /* var + read */ + 2 /* grad + apply */;
    int layers = n / per_layer;
    if (layers < 1) layers = 1;
    if (!(fwd = malloc((size_t)layers * 5 * sizeof *fwd))) goto fail;
    vars = fwd + (size_t)layers * 4;
    int prev = -1, idx, x;
    if (dp_graph_add_node(g, "input", "IteratorGetNext", dev, 4, act, DP_DTYPE_F32, &prev, NULL))
        goto fail;
    for (int l = 0; l < layers; l++) {
        int var, rd;
        snprintf(name, sizeof name, "l%d/w", l);
        if (dp_graph_add_node(g, name, "VariableV2", dev, 4, wshape, DP_DTYPE_F32, &var, NULL))
            goto fail;
        dp_graph_set_cost(g, var, -1, -1, 3 * 3 * 64 * 64);
        vars[l] = var;
        snprintf(name, sizeof name, "l%d/w/read", l);
        if (dp_graph_add_node(g, name, "Identity", dev, 4, wshape, DP_DTYPE_F32, &rd, NULL) ||
            dp_graph_add_input(g, rd, var, false, NULL))
            goto fail;
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "l%d/%s", l, fwd_ops[k]);
            if (dp_graph_add_node(g, name, fwd_ops[k], dev, 4, act, DP_DTYPE_F32, &idx, NULL) ||
                dp_graph_add_input(g, idx, prev, false, NULL))
                goto fail;
            if (k == 0 && dp_graph_add_input(g, idx, rd, false, NULL)) goto fail;
            fwd[l * 4 + k] = prev = idx;
        }
        if (l % 3 == 2) {
            snprintf(name, sizeof name, "l%d/add", l);
            if (dp_graph_add_node(g, name, "AddV2", dev, 4, act, DP_DTYPE_F32, &idx, NULL) ||
                dp_graph_add_input(g, idx, prev, false, NULL) ||
                dp_graph_add_input(g, idx, fwd[(l - 2) * 4 + 3], false, NULL))
                goto fail;
            prev = idx;
        }
    }
    int loss;
    if (dp_graph_add_node(g, "loss", "SparseSoftmaxCrossEntropyWithLogits", dev, 1, act,
                          DP_DTYPE_F32, &loss, NULL) ||
        dp_graph_add_input(g, loss, prev, false, NULL))
        goto fail;
    int grad = loss;
    for (int l = layers - 1; l >= 0; l--) {
        for (int k = 3; k >= 0; k--) {
            snprintf(name, sizeof name, "grad/l%d/%s", l, bwd_ops[k]);
            if (dp_graph_add_node(g, name, bwd_ops[k], dev, 4, act, DP_DTYPE_F32, &idx, NULL) ||
                dp_graph_add_input(g, idx, grad, false, NULL) ||
                dp_graph_add_input(g, idx, fwd[l * 4 + k], false, NULL))
                goto fail;
            grad = idx;
        }
        int wg, apply;
        snprintf(name, sizeof name, "grad/l%d/Conv2DBackpropFilter", l);
        if (dp_graph_add_node(g, name, "Conv2DBackpropFilter", dev, 4, wshape, DP_DTYPE_F32, &wg,
                              NULL) ||
            dp_graph_add_input(g, wg, grad, false, NULL))
            goto fail;
        snprintf(name, sizeof name, "train/l%d/ApplyAdam", l);
        if (dp_graph_add_node(g, name, "ApplyAdam", dev, 4, wshape, DP_DTYPE_F32, &apply, NULL) ||
            dp_graph_add_input(g, apply, vars[l], false, NULL) ||
            dp_graph_add_input(g, apply, wg, false, NULL))
            goto fail;
        /* A few long-range control edges, as summaries and savers add. */
        x = (int)(mix(&seed) % (uint64_t)dp_graph_n_nodes(g));
        if (l % 7 == 0 && x != apply && dp_graph_add_input(g, apply, x, true, NULL)) goto fail;
    }
    free(fwd);
    return g;
fail:
    free(fwd);
    dp_graph_free(g);
    return NULL;
}

static const struct cli_opt bench_coarsen_opts[] = {
    {"--ops", "N", "50000", 10, 10000000, "the synthetic graph's ops (no GRAPH)", NULL},
    {"--groups", "K", CLI_STR(DP_DEFAULT_GROUPS), 1, 1000000, "groups", NULL},
    {"--seed", "S", CLI_STR(DP_DEFAULT_SEED), (double)INT64_MIN, (double)INT64_MAX,
     "the seed", NULL},
    {"--repeat", "R", "5", 1, 1000, "timed runs", NULL},
    {"--json", NULL, NULL, 0, 0, "print the figures as JSON", NULL},
    CLI_MORE(cmd_import_table),
    CLI_END,
};
const struct cli_spec cmd_bench_coarsen_spec = {
    "bench coarsen", "times coarsening (a synthetic graph without GRAPH)",
    "driple bench coarsen [GRAPH [--exported-batch N]] [--ops N] [--groups K] [--seed S]\n"
    "       [--repeat R] [--json]", bench_coarsen_opts, NULL};

int bench_coarsen(int argc, char **argv) {
    struct cli c;
    struct dp_import_opts o;
    int64_t ops = 50000, k = DP_DEFAULT_GROUPS, seed = DP_DEFAULT_SEED, repeat = 5;
    if (!cli_init(&c, argc, argv, &cmd_bench_coarsen_spec)) return c.rc;
    bool json = cli_flag(&c, "--json");
    bool ok = cmd_import_opts(&c, &o) && cli_int(&c, "--ops", 10, 10000000, &ops) &&
              cli_int(&c, "--groups", 1, 1000000, &k) &&
              cli_int(&c, "--seed", INT64_MIN, INT64_MAX, &seed) &&
              cli_int(&c, "--repeat", 1, 1000, &repeat);
    const char *path = cli_positional(&c, 0);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    struct dp_graph *g = NULL;
    if (path) {
        int rc = load(path, &o, 0, &g);
        if (rc) return rc;
    } else if (!(g = synth_graph((int)ops, (uint64_t)seed))) {
        fprintf(stderr, "driple: bench coarsen: out of memory\n");
        return 1;
    }
    double *ms = calloc((size_t)repeat, sizeof *ms), *fms = calloc((size_t)repeat, sizeof *fms);
    struct dp_error err = {0};
    int rc = 0, kept = 0, groups = 0, sweeps = 0, disc = 0;
    if (!ms || !fms) {
        fprintf(stderr, "driple: bench coarsen: out of memory\n");
        rc = 1;
        goto done;
    }
    for (int r = 0; r < repeat; r++) {
        struct dp_partition *p = NULL;
        struct dp_grouped *gr = NULL;
        struct dp_coarsen_opts co = {.k = (int)k, .seed = seed};
        double t0 = dp_clock_ms();
        if (dp_coarsen(g, &co, &p, &err)) {
            if (path) dp_error_prefix(&err, path);
            rc = cli_fail(&err);
            goto done;
        }
        double t1 = dp_clock_ms();
        if (dp_features(g, p, NULL, 0, &gr, NULL, &err)) {
            dp_partition_free(p);
            if (path) dp_error_prefix(&err, path);
            rc = cli_fail(&err);
            goto done;
        }
        double t2 = dp_clock_ms();
        ms[r] = t1 - t0;
        fms[r] = t2 - t1;
        kept = p->n_ops;
        groups = p->n_groups;
        sweeps = p->iterations;
        disc = p->n_disconnected;
        dp_grouped_free(gr);
        dp_partition_free(p);
    }
    qsort(ms, (size_t)repeat, sizeof *ms, cmd_cmp_double);
    qsort(fms, (size_t)repeat, sizeof *fms, cmd_cmp_double);
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "bench", "coarsen");
        dp_jw_str(w, "graph", path ? path : "synthetic");
        dp_jw_int(w, "ops", (int64_t)dp_graph_n_nodes(g));
        dp_jw_int(w, "kept_ops", kept);
        dp_jw_int(w, "groups", groups);
        dp_jw_int(w, "sweeps", sweeps);
        dp_jw_int(w, "disconnected", disc);
        dp_jw_int(w, "repeat", repeat);
        dp_jw_fixed(w, "median_ms", ms[repeat / 2], 3);
        dp_jw_fixed(w, "min_ms", ms[0], 3);
        dp_jw_fixed(w, "features_median_ms", fms[repeat / 2], 3);
        rc = cmd_json_emit(w);
    } else {
        printf("coarsen %s: %zu ops, %d kept, %d groups, %d sweeps: median %.1f ms (min %.1f) "
               "over %lld runs; features %.2f ms\n",
               path ? path : "synthetic graph", dp_graph_n_nodes(g), kept, groups, sweeps,
               ms[repeat / 2], ms[0], (long long)repeat, fms[repeat / 2]);
    }
done:
    free(ms);
    free(fms);
    dp_graph_free(g);
    return rc;
}
