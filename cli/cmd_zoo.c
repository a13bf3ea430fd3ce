/* cmd_zoo.c: `driple zoo list [--json]`, `driple zoo build MODEL ... -o FILE` and `driple zoo
 * generate --seed S --count N`: TensorFlow-1-style training graphs of well-known models and of
 * generated architectures (synthetic: built by the engine's zoo, not exported from TensorFlow),
 * written as driple-graph/1. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/cost.h"
#include "dp/graph_io.h"
#include "dp/json_out.h"
#include "dp/llm.h"
#include "dp/zoo.h"
#include "dp/zoo_gen.h"

#define ZOO_USAGE                                                                                 \
    "driple zoo list [--json]\n"                                                                 \
    "       driple zoo build MODEL [--batch N] [--optimizer sgd|momentum|adam]\n"                \
    "                        [--precision fp32|mixed] [--input PIXELS | --seq TOKENS] [--nchw]\n" \
    "                        -o FILE.json   (\"-o -\": stdout; MODEL may be a generated name\n" \
    "                        or an LLM preset of `driple plan --list`)\n"                       \
    "       driple zoo build --hf-config CONFIG.json [--seq S] [--batch N] ... -o FILE.json\n"   \
    "       driple zoo generate --seed S --count N [--start I] [--kind cnn|transformer|rnn|mlp|mixer]\n" \
    "                        [--out DIR] [--json]\n"                                             \
    "  generate: architectures I .. I+N-1 of the seeded corpus (gen-<kind>-s<S>-<index>), each\n"  \
    "  with its parameters, FLOPs per training step and ops at its batch; --out DIR writes each\n" \
    "  graph as DIR/<name>.json (zoo build options apply)."

static const struct cli_opt list_opts[] = {
    {"--json", NULL, NULL, 0, 0, "print the list as JSON (with each model's family)", NULL},
    CLI_END,
};
const struct cli_spec cmd_zoo_list_spec = {
    "zoo list", "the models of the zoo", ZOO_USAGE, list_opts, NULL};

/* What zoo build and zoo generate both build with. */
static const struct cli_opt build_common[] = {
    {"--batch", "N", "the model's", 1, (double)DP_BATCH_MAX, "the batch size", NULL},
    {"--optimizer", "sgd|momentum|adam", "momentum", 0, 0, "the optimizer", NULL},
    {"--precision", "fp32|mixed", "fp32", 0, 0, "the precision", NULL},
    {"--nchw", NULL, NULL, 0, 0, "channels-first layout (NHWC without)", NULL},
    CLI_END,
};

static int zoo_list(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_zoo_list_spec)) return c.rc;
    bool json = cli_flag(&c, "--json");
    if (!cli_check_unused(&c)) {
        cli_done(&c);
        return cli_usage("zoo list", ZOO_USAGE, "bad arguments");
    }
    cli_done(&c);
    if (!json)
        printf("%-17s %-8s %6s %6s %12s %7s  %s\n", "MODEL", "INPUT", "SIZE", "BATCH", "PARAMS",
                "OPS", "DESCRIPTION");
    struct dp_jw *w = json ? dp_jw_new_array() : NULL;
    for (size_t i = 0; i < dp_zoo_count(); i++) {
        const struct dp_zoo_info *m = dp_zoo_info(i);
        struct dp_graph *g = NULL;
        struct dp_error err = {0};
        if (dp_zoo_build(m->name, NULL, &g, &err)) {
            dp_jw_free(w);
            return cli_fail(&err);
        }
        int64_t params = dp_graph_param_count(g, false);
        size_t ops = dp_graph_n_nodes(g);
        dp_graph_free(g);
        if (json) {
            dp_jw_object(w, NULL);
            dp_jw_str(w, "name", m->name);
            dp_jw_str(w, "family", m->family);
            dp_jw_str(w, "description", m->description);
            dp_jw_str(w, "input_kind", m->input_kind);
            dp_jw_int(w, "default_input", m->default_input);
            dp_jw_int(w, "default_batch", m->default_batch);
            dp_jw_int(w, "min_input", m->min_input);
            dp_jw_int(w, "max_input", m->max_input);
            dp_jw_int(w, "params", params);
            dp_jw_int(w, "ops", (int64_t)ops);
            dp_jw_end(w);
        } else {
            printf("%-17s %-8s %6lld %6lld %12lld %7zu  %s\n", m->name, m->input_kind,
                   (long long)m->default_input, (long long)m->default_batch, (long long)params,
                   ops, m->description);
        }
    }
    if (json) return cmd_json_emit(w);
    printf("\nparams and ops at the defaults (momentum, fp32); graphs are synthetic "
           "TensorFlow-1-style training graphs; `--json` also gives each model's family "
           "(what --split models holds out together).\n");
    return 0;
}

static const struct cli_opt build_opts[] = {
    {"--input", "PIXELS", "the model's", 1, 1 << 16, "the image side (CNNs)", NULL},
    {"--seq", "TOKENS", "the model's", 1, 1 << 16, "the sequence length (sequence models)", NULL},
    {"-o", "FILE.json", NULL, 0, 0, "the graph written (-: stdout)", NULL},
    {"--output", "FILE.json", NULL, 0, 0, "the same as -o", NULL},
    {"--hf-config", "CONFIG.json", NULL, 0, 0,
     "a transformer from its Hugging Face config.json (instead of MODEL)", NULL},
    CLI_MORE(build_common),
    CLI_END,
};
const struct cli_spec cmd_zoo_build_spec = {
    "zoo build", "a zoo model's (or a generated architecture's) training graph", ZOO_USAGE,
    build_opts, NULL};

static int zoo_build(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_zoo_build_spec)) return c.rc;
    struct dp_zoo_opts o;
    dp_zoo_opts_default(&o);
    int64_t input = 0, seq = 0;
    cli_int(&c, "--batch", 1, DP_BATCH_MAX, &o.batch);
    cli_int(&c, "--input", 1, 1 << 16, &input);
    cli_int(&c, "--seq", 1, 1 << 16, &seq);
    const char *opt = cli_value(&c, "--optimizer");
    const char *prec = cli_value(&c, "--precision");
    const char *path = cli_value(&c, "-o");
    if (!path) path = cli_value(&c, "--output");
    const char *hf = cli_value(&c, "--hf-config");
    o.nchw = cli_flag(&c, "--nchw");
    const char *model = hf ? hf : cli_positional(&c, 0);
    int rc = 0;
    if (c.bad || !cli_check_unused(&c)) {
        rc = cli_usage("zoo build", ZOO_USAGE, "bad arguments");
        goto done;
    }
    if (!model) {
        rc = cli_usage("zoo build", ZOO_USAGE, "which model? (see 'driple zoo list')");
        goto done;
    }
    if (!path) {
        rc = cli_usage("zoo build", ZOO_USAGE, "missing -o FILE");
        goto done;
    }
    if (opt && !dp_optimizer_parse(opt, &o.optimizer)) {
        rc = cli_usage("zoo build", ZOO_USAGE, "--optimizer '%s': expected sgd, momentum or adam",
                       opt);
        goto done;
    }
    if (prec) {
        if (!strcmp(prec, "fp32")) o.precision = DP_PREC_FP32;
        else if (!strcmp(prec, "mixed")) o.precision = DP_PREC_MIXED;
        else {
            rc = cli_usage("zoo build", ZOO_USAGE, "--precision '%s': expected fp32 or mixed",
                           prec);
            goto done;
        }
    }
    /* a transformer from its config.json or an LLM preset (dp/llm.h) */
    const struct dp_llm_preset *lp = hf ? NULL : dp_llm_preset_find(model);
    if (hf || lp) {
        struct dp_llm lm;
        struct dp_graph *g = NULL;
        struct dp_error err = {0};
        if (input) {
            rc = cli_usage("zoo build", ZOO_USAGE, "%s takes --seq TOKENS, not --input", model);
            goto done;
        }
        if (lp) {
            lm = lp->model;
            if (seq) lm.seq = seq;
        } else if (dp_llm_load_hf(hf, seq, &lm, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        if (dp_llm_build(&lm, &o, &g, &err) || dp_graph_save_json(g, path, &err)) rc = cli_fail(&err);
        else if (strcmp(path, "-"))
            printf("%s: %s, %zu ops, %lld params (architecture: %lld), sequence %lld, batch "
                   "%lld, %s\n", path, lm.name, dp_graph_n_nodes(g),
                   (long long)dp_graph_param_count(g, false), (long long)dp_llm_params(&lm),
                   (long long)lm.seq, (long long)dp_graph_batch(g),
                   dp_optimizer_name(o.optimizer));
        dp_graph_free(g);
        goto done;
    }
    const struct dp_zoo_info *m = dp_zoo_find(model);
    struct dp_gen_arch gen;
    bool generated = !m && dp_gen_parse_name(model, &gen);
    if (generated && (input || seq)) {
        rc = cli_usage("zoo build", ZOO_USAGE, "%s: a generated model's input size is part of "
                       "its architecture", model);
        goto done;
    }
    if (m) {
        bool image = !strcmp(m->input_kind, "image");
        if ((image && seq) || (!image && input)) {
            rc = cli_usage("zoo build", ZOO_USAGE, "%s takes %s", model,
                           image ? "--input PIXELS, not --seq" : "--seq TOKENS, not --input");
            goto done;
        }
        o.input = image ? input : seq;
    }
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    if (generated ? dp_gen_build(&gen, &o, &g, &err) : dp_zoo_build(model, &o, &g, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (dp_graph_save_json(g, path, &err)) rc = cli_fail(&err);
    else if (strcmp(path, "-"))
        printf("%s: %s, %zu ops, %lld params, batch %lld, %s, %s\n", path, model,
               dp_graph_n_nodes(g), (long long)dp_graph_param_count(g, false),
               (long long)dp_graph_batch(g), dp_optimizer_name(o.optimizer),
               o.precision == DP_PREC_MIXED ? "mixed" : "fp32");
    dp_graph_free(g);
done:
    cli_done(&c);
    return rc;
}

/* One generated architecture as a listing row, or a JSON object in w (when not NULL). */
static void gen_row(const struct dp_gen_arch *a, const struct dp_graph *g, struct dp_jw *w) {
    char desc[512];
    dp_gen_describe(a, desc, sizeof desc);
    int64_t params = dp_graph_param_count(g, true);
    double flops = dp_cost_total_flops(g, dp_graph_batch(g));
    if (!w) {
        printf("%-26s %-11s %6lld %12lld %10.1f %7zu  %s\n", a->name, dp_gen_kind_name(a->kind),
               (long long)dp_graph_batch(g), (long long)params, flops / 1e9, dp_graph_n_nodes(g),
               desc);
        return;
    }
    dp_jw_object(w, NULL);
    dp_jw_str(w, "name", a->name);
    dp_jw_str(w, "kind", dp_gen_kind_name(a->kind));
    dp_jw_int(w, "seed", (int64_t)a->seed); /* <= INT64_MAX: --seed */
    dp_jw_int(w, "index", a->index);
    dp_jw_int(w, "batch", dp_graph_batch(g));
    dp_jw_int(w, "params", params);
    dp_jw_int(w, "closed_form_params", dp_gen_params(a));
    dp_jw_num(w, "flops", flops);
    dp_jw_int(w, "ops", (int64_t)dp_graph_n_nodes(g));
    dp_jw_str(w, "description", desc);
    dp_jw_end(w);
}

static const struct cli_opt generate_opts[] = {
    {"--seed", "S", NULL, 0, (double)INT64_MAX, "the corpus's seed (needed)", NULL},
    {"--count", "N", NULL, 1, 1000000, "architectures (needed)", NULL},
    {"--start", "I", "0", 0, (double)(INT64_MAX / 2), "the first architecture's index", NULL},
    {"--kind", "cnn|transformer|rnn|mlp|mixer", "every kind", 0, 0, "only this kind", NULL},
    {"--out", "DIR", NULL, 0, 0, "write each graph as DIR/<name>.json", NULL},
    {"--json", NULL, NULL, 0, 0, "print the list as JSON", NULL},
    CLI_MORE(build_common),
    CLI_END,
};
const struct cli_spec cmd_zoo_generate_spec = {
    "zoo generate", "generated architectures of a seeded corpus", ZOO_USAGE, generate_opts, NULL};

static int zoo_generate(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_zoo_generate_spec)) return c.rc;
    struct dp_zoo_opts o;
    dp_zoo_opts_default(&o);
    int64_t seed = -1, count = -1, start = 0;
    cli_int(&c, "--seed", 0, INT64_MAX, &seed);
    cli_int(&c, "--count", 1, 1000000, &count);
    cli_int(&c, "--start", 0, INT64_MAX / 2, &start);
    cli_int(&c, "--batch", 1, DP_BATCH_MAX, &o.batch);
    const char *kind_s = cli_value(&c, "--kind"), *dir = cli_value(&c, "--out");
    const char *opt = cli_value(&c, "--optimizer"), *prec = cli_value(&c, "--precision");
    o.nchw = cli_flag(&c, "--nchw");
    bool json = cli_flag(&c, "--json");
    int rc = 0, kind = -1;
    enum dp_gen_kind k;
    struct dp_jw *w = NULL;
    if (c.bad || !cli_check_unused(&c)) {
        rc = cli_usage("zoo generate", ZOO_USAGE, "bad arguments");
        goto done;
    }
    if (seed < 0 || count < 0) {
        rc = cli_usage("zoo generate", ZOO_USAGE, "missing --%s", seed < 0 ? "seed" : "count");
        goto done;
    }
    if (kind_s) {
        if (!dp_gen_kind_parse(kind_s, &k)) {
            rc = cli_usage("zoo generate", ZOO_USAGE, "--kind '%s': expected cnn, transformer, "
                           "rnn, mlp or mixer", kind_s);
            goto done;
        }
        kind = (int)k;
    }
    if ((opt && !dp_optimizer_parse(opt, &o.optimizer)) ||
        (prec && !dp_precision_parse(prec, &o.precision))) {
        rc = cli_usage("zoo generate", ZOO_USAGE, "--optimizer or --precision: unknown value");
        goto done;
    }
    if (json && !(w = dp_jw_new_stream(stdout, "stdout"))) {
        fprintf(stderr, "driple: zoo generate: out of memory\n");
        rc = 1;
        goto done;
    }
    if (!json)
        printf("%-26s %-11s %6s %12s %10s %7s  %s\n", "NAME", "KIND", "BATCH", "PARAMS",
               "GFLOP/STEP", "OPS", "ARCHITECTURE");
    for (int64_t i = 0; i < count; i++) {
        struct dp_gen_arch a;
        dp_gen_sample((uint64_t)seed, start + i, kind, &a);
        struct dp_graph *g = NULL;
        struct dp_error err = {0};
        if (dp_gen_build(&a, &o, &g, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        if (dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.json", dir, a.name);
            if (dp_graph_save_json(g, path, &err)) {
                dp_graph_free(g);
                rc = cli_fail(&err);
                goto done;
            }
        }
        gen_row(&a, g, w);
        dp_graph_free(g);
    }
    if (json) rc = cmd_json_emit(w);
    else printf("\nparams: trainable; GFLOP/STEP: one training step (forward, backward, update) "
                "at the batch; graphs are synthetic (generated architectures, seeded).\n");
    w = NULL;
done:
    if (w) { /* stopped midway: close the array written so far */
        struct dp_error err = {0};
        dp_jw_print(w, stdout, "stdout", &err);
        dp_jw_free(w);
    }
    cli_done(&c);
    return rc;
}

int cmd_zoo(int argc, char **argv) {
    if (argc < 1) return cli_usage("zoo", ZOO_USAGE, "missing subcommand");
    if (!strcmp(argv[0], "list")) return zoo_list(argc - 1, argv + 1);
    if (!strcmp(argv[0], "build")) return zoo_build(argc - 1, argv + 1);
    if (!strcmp(argv[0], "generate")) return zoo_generate(argc - 1, argv + 1);
    if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "help")) {
        printf("usage: %s\n", ZOO_USAGE);
        return 0;
    }
    return cli_usage("zoo", ZOO_USAGE, "unknown subcommand '%s'", argv[0]);
}
