/* cmd_bench.c: `driple bench predict|embed|train|transfer|kernels|coarsen|explain`: times the
 * inspector network (one prediction, or a batch of them in one call; the embeddings of a batch of
 * graphs; one training step of a batch; a transfer head step on cached embeddings and the
 * embedding pass) and reports medians, as text or one JSON object; `bench kernels` measures
 * auto's table of the dense products' backends on this CPU and saves it. Coarsening and explanation benchmarks live with their owners (bench_coarsen,
 * bench_explain). Baselines of other implementations are measured beside it by bench/run.sh,
 * never assumed here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/compute.h"
#include "dp/grouped.h"
#include "dp/inspector.h"
#include "dp/json_out.h"
#include "dp/model.h"
#include "dp/train.h"

#define BENCH_USAGE                                                                          \
    "driple bench predict|embed|train|transfer (--inspector M.json | --weights W.json |\n"    \
    "       --random [--layer gcn|gin|gat|mpnn] [--recipe paper|driple-c])\n"                  \
    "       [--grouped G.json | --synthetic N] [--runs R] [--batch B] [--threads T]\n"          \
    "       [--kernels auto|own|openblas|portable|avx2|avx512] [--json]\n"                     \
    "  predict --batch B: B graphs in one call (dp_model_predict_batch), per-graph figures\n"   \
    "  embed --batch B: the embeddings of B graphs in one call (dp_model_embed_batch)\n"        \
    "       driple bench kernels [--out FILE] [--json]   measure auto's table on this CPU\n"  \
    "       driple bench coarsen [GRAPH [--exported-batch N]] [--ops N] [--groups K]\n"         \
    "                            [--seed S] [--repeat R] [--json]\n"                            \
    "       driple bench explain [GRAPH [--exported-batch N] | --grouped FILE] [--inspector M]\n" \
    "                            [--groups K] [--repeat N] [--threads N] [--json]\n"        \
    "       driple bench compare GRAPH [--grid] [--runs R] [--threads T] [--json]"

struct stats {
    double median, min, mean;
};

static struct stats summarise(double *ms, int n) {
    struct stats s = {0, 0, 0};
    s.median = cmd_median(ms, n);
    for (int i = 0; i < n; i++) s.mean += ms[i] / n;
    s.min = ms[0];
    return s;
}

struct bench_opts {
    const char *inspector, *weights, *grouped, *layer, *kernels, *recipe;
    bool        random, json;
    int64_t     synthetic, runs, batch, threads;
};

static int load_model(const struct bench_opts *o, struct dp_inspector **insp,
                      struct dp_model **own, const struct dp_model **m) {
    struct dp_error err = {0};
    if (o->inspector) {
        if (dp_inspector_load(o->inspector, insp, &err)) return cli_fail(&err);
        *m = dp_inspector_model(*insp);
    } else if (o->weights) {
        if (dp_model_load_torch_json_new(o->weights, own, &err)) return cli_fail(&err);
        *m = *own;
    } else {
        struct dp_arch a;
        dp_arch_default(&a);
        if (o->layer && !dp_layer_parse(o->layer, &a.layer))
            return cli_usage("bench", BENCH_USAGE, "unknown --layer '%s' (gcn, gin, gat, mpnn)",
                             o->layer);
        enum dp_recipe r = DP_RECIPE_PAPER;
        if (o->recipe && !dp_recipe_parse(o->recipe, &r))
            return cli_usage("bench", BENCH_USAGE, "unknown --recipe '%s' (paper, driple-c)",
                             o->recipe);
        struct dp_train_opts t; /* the recipe's network shape (log features: mean 0, deviation 1) */
        dp_train_opts_recipe(&t, r);
        a.feat = t.feat;
        a.max_layers = t.max_layers;
        if (dp_model_init(&a, 1, own, &err)) return cli_fail(&err);
        *m = *own;
    }
    return 0;
}

#define BENCH_MAX_BATCH_GROUPS 10000000 /* groups over all graphs of one training batch */

/* The exit status of a benchmark that ran out of memory (sizes come from the options). */
static int out_of_memory(void) {
    fprintf(stderr, "driple: bench: out of memory (try a smaller --batch or --synthetic)\n");
    return 1;
}

static int load_graph(const struct bench_opts *o, struct dp_grouped **g) {
    struct dp_error err = {0};
    if (o->grouped) {
        if (dp_grouped_load_json(o->grouped, g, &err)) return cli_fail(&err);
    } else if (!(*g = cmd_synthetic_grouped((int)o->synthetic, 7))) {
        return out_of_memory();
    }
    return 0;
}

/* The 1-minute load average (other processes inflate wall-clock medians), or -1. */
static double load_avg(void) {
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

/* A benchmark's own figures beside the common ones: numbers in the JSON object, and a phrase
 * (text) appended to the text line. */
struct extra {
    const char *key[4];
    double      v[4];
    int         n;
    char        text[256];
};

static int report(const struct bench_opts *o, const char *what, const struct dp_grouped *g,
                  const struct dp_model *m, struct stats s, struct stats cpu, int runs,
                  const struct extra *x) {
    const char *src = o->inspector ? o->inspector : o->weights ? o->weights : "random";
    const char *graph = o->grouped ? o->grouped : "synthetic";
    const char *layer = dp_layer_name(dp_model_arch(m)->layer);
    int layers = dp_arch_n_layers(dp_model_arch(m), g->n_groups);
    if (!o->json) {
        printf("bench %s: %s on %s (%d groups, %d edges, %d layers), %d thread(s), %s kernels, "
               "products %s: median %.3f ms (CPU mean %.3f ms), min %.3f ms, mean %.3f ms over %d "
               "runs, load average %.2f%s\n",
               what, layer, graph, g->n_groups, g->n_edges, layers, dp_threads(), dp_kernels(),
               dp_kernels_backend(), s.median, cpu.mean, s.min, s.mean, runs, load_avg(),
               x ? x->text : "");
        if (dp_kernels_note()) printf("note: %s\n", dp_kernels_note());
        return 0;
    }
    struct dp_jw *w = dp_jw_new();
    dp_jw_str(w, "bench", what);
    dp_jw_str(w, "model", src);
    dp_jw_str(w, "graph", graph);
    dp_jw_str(w, "layer", layer);
    dp_jw_int(w, "n_groups", g->n_groups);
    dp_jw_int(w, "n_edges", g->n_edges);
    dp_jw_int(w, "n_layers", layers);
    dp_jw_int(w, "threads", dp_threads());
    dp_jw_str(w, "kernels", dp_kernels());
    dp_jw_str(w, "backend", dp_kernels_backend());
    dp_jw_str(w, "openblas", dp_kernels_openblas());
    dp_jw_str(w, "note", dp_kernels_note());
    dp_jw_int(w, "runs", runs);
    dp_jw_fixed(w, "median_ms", s.median, 4);
    dp_jw_fixed(w, "min_ms", s.min, 4);
    dp_jw_fixed(w, "mean_ms", s.mean, 4);
    dp_jw_fixed(w, "cpu_median_ms", cpu.median, 4);
    dp_jw_fixed(w, "cpu_mean_ms", cpu.mean, 4);
    dp_jw_fixed(w, "load_avg", load_avg(), 2);
    for (int i = 0; x && i < x->n; i++) dp_jw_num(w, x->key[i], x->v[i]);
    struct dp_error err = {0};
    int rc = dp_jw_print(w, stdout, "stdout", &err) ? cli_fail(&err) : 0;
    dp_jw_free(w);
    return rc;
}

/* B graphs: g with features jittered per copy (seeded), random targets in [0, 1). */
static struct dp_grouped **batch_of(const struct dp_grouped *g, int B, float *targets) {
    struct dp_grouped **gs = calloc((size_t)B, sizeof *gs);
    if (!gs) return NULL;
    uint64_t s = 12345;
    for (int k = 0; k < B; k++) {
        gs[k] = dp_grouped_init(g->graph, g->n_groups, g->n_edges);
        if (!gs[k]) return gs;
        memcpy(gs[k]->edges, g->edges, (size_t)g->n_edges * 2 * sizeof *g->edges);
        for (int i = 0; i < g->n_groups * DP_N_FEATURES; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            gs[k]->x[i] = g->x[i] * (0.9 + 0.2 * (double)(s >> 40) / (double)(1ull << 24));
        }
        for (int o = 0; o < DP_N_OUTPUTS; o++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            targets[k * DP_N_OUTPUTS + o] = (float)((double)(s >> 40) / (double)(1ull << 24));
        }
    }
    return gs;
}

static void free_batch(struct dp_grouped **gs, int B) {
    for (int k = 0; gs && k < B; k++) dp_grouped_free(gs[k]);
    free(gs);
}

/* One prediction at a time, or (--batch B > 1) B jittered copies of g in one batched call,
 * reported per call and per graph; with embed, the embeddings of the B copies in one call. */
static int bench_predict(const struct bench_opts *o, const struct dp_model *m,
                         const struct dp_grouped *g, bool embed) {
    struct dp_error err = {0};
    const int R = (int)o->runs, B = (int)o->batch;
    if ((long long)B * g->n_groups > BENCH_MAX_BATCH_GROUPS)
        return cli_usage("bench", BENCH_USAGE, "--batch %d x %d groups: more than %d groups in "
                         "one batch", B, g->n_groups, BENCH_MAX_BATCH_GROUPS);
    double *ms = calloc((size_t)R * 2, sizeof *ms);
    float *out = calloc((size_t)B * DP_N_OUTPUTS, sizeof *out);
    float *emb = embed ? calloc((size_t)B * dp_model_embed_size(m), sizeof *emb) : NULL;
    const bool batched = B > 1 || embed;
    struct dp_grouped **gs = batched && out ? batch_of(g, B, out) : NULL;
    int rc = 1;
    if (!ms || !out || (embed && !emb) || (batched && (!gs || !gs[B - 1]))) {
        rc = out_of_memory();
        goto done;
    }
    double *cms = ms + R;
    for (int r = -2; r < R; r++) { /* two warm-up calls */
        double t0 = dp_clock_ms(), c0 = cmd_cpu_ms();
        const struct dp_grouped *const *cg = (const struct dp_grouped *const *)gs;
        enum dp_status st = embed   ? dp_model_embed_batch(m, cg, B, emb, &err)
                            : B > 1 ? dp_model_predict_batch(m, cg, B, out, &err)
                                    : dp_model_predict(m, g, out, &err);
        if (st) {
            rc = cli_fail(&err);
            goto done;
        }
        if (r < 0) continue;
        ms[r] = dp_clock_ms() - t0;
        cms[r] = cmd_cpu_ms() - c0;
    }
    struct stats s = summarise(ms, R), cs = summarise(cms, R);
    struct extra x = {.n = 0};
    if (batched) {
        x = (struct extra){{"batch", "per_graph_median_ms", "per_graph_cpu_median_ms"},
                           {B, s.median / B, cs.median / B}, 3, ""};
        snprintf(x.text, sizeof x.text, ", batch %d in one call: %.3f ms per graph (CPU %.3f ms)",
                 B, s.median / B, cs.median / B);
    }
    rc = report(o, embed ? "embed" : "predict", g, m, s, cs, R, &x);
done:
    free_batch(gs, B);
    free(emb);
    free(out);
    free(ms);
    return rc;
}

static int bench_train(const struct bench_opts *o, const struct dp_model *base,
                       const struct dp_grouped *g, bool transfer) {
    struct dp_error err = {0};
    const int B = (int)o->batch, R = (int)o->runs;
    /* B jittered copies of the graph are made: refuse sizes that would exhaust memory (4096 x
     * 1e5 groups is ~19 GB) instead of thrashing the machine. */
    if ((long long)B * g->n_groups > BENCH_MAX_BATCH_GROUPS)
        return cli_usage("bench", BENCH_USAGE, "--batch %d x %d groups: more than %d groups in "
                         "one batch", B, g->n_groups, BENCH_MAX_BATCH_GROUPS);
    float *targets = calloc((size_t)B * DP_N_OUTPUTS, sizeof *targets);
    struct dp_grouped **gs = targets ? batch_of(g, B, targets) : NULL;
    struct dp_model *m = dp_model_clone(base);
    struct dp_trainer *t = NULL;
    double *ms = calloc((size_t)R, sizeof *ms), *ems = calloc((size_t)R, sizeof *ems);
    double *cms = calloc((size_t)R, sizeof *cms);
    float *emb = NULL;
    int rc = 1;
    if (!gs || !m || !ms || !ems || !cms || !gs[B - 1]) {
        rc = out_of_memory();
        goto done;
    }
    struct dp_adam_opts ad;
    dp_adam_default(&ad);
    if (dp_trainer_init(m, transfer ? DP_TRAIN_HEAD : DP_TRAIN_FULL, &ad, &t, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    float loss = 0;
    if (!transfer) {
        for (int r = 0; r < R; r++) {
            double t0 = dp_clock_ms(), c0 = cmd_cpu_ms();
            if (dp_trainer_step(t, (const struct dp_grouped *const *)gs, B, targets, true, &loss,
                                &err)) {
                rc = cli_fail(&err);
                goto done;
            }
            ms[r] = dp_clock_ms() - t0;
            cms[r] = cmd_cpu_ms() - c0;
        }
        struct stats s = summarise(ms, R), cs = summarise(cms, R);
        struct extra x = {{"batch", "loss"}, {B, loss}, 2, ""};
        snprintf(x.text, sizeof x.text, ", batch %d", B);
        rc = report(o, "train", g, m, s, cs, R, &x);
        goto done;
    }
    /* transfer: the embedding pass (per graph, once per body) and head steps on the cache */
    const int E = dp_model_embed_size(m);
    emb = calloc((size_t)B * E, sizeof *emb);
    if (!emb) {
        rc = out_of_memory();
        goto done;
    }
    for (int r = 0; r < R; r++) {
        double t0 = dp_clock_ms();
        if (dp_model_embed(m, gs[r % B], emb + (size_t)(r % B) * E, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        ems[r] = dp_clock_ms() - t0;
    }
    for (int k = 0; k < B; k++)
        if (dp_model_embed(m, gs[k], emb + (size_t)k * E, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
    for (int r = 0; r < R; r++) {
        double t0 = dp_clock_ms(), c0 = cmd_cpu_ms();
        if (dp_trainer_step_head(t, emb, B, targets, true, &loss, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        ms[r] = dp_clock_ms() - t0;
        cms[r] = cmd_cpu_ms() - c0;
    }
    struct stats s = summarise(ms, R), se = summarise(ems, R), cs = summarise(cms, R);
    struct extra x = {{"batch", "embed_median_ms", "embed_min_ms", "loss"},
                      {B, se.median, se.min, loss}, 4, ""};
    snprintf(x.text, sizeof x.text, ", batch %d head step on cached embeddings; embedding pass "
             "per graph median %.3f ms", B, se.median);
    rc = report(o, "transfer", g, m, s, cs, R, &x);
done:
    dp_trainer_free(t);
    dp_model_free(m);
    free_batch(gs, B);
    free(targets);
    free(ms);
    free(ems);
    free(cms);
    free(emb);
    return rc;
}

static const struct cli_opt bench_opts[] = {
    {"--inspector", "M.json", NULL, 0, 0, "the inspector timed", NULL},
    {"--weights", "W.json", NULL, 0, 0, "weights exported as JSON", NULL},
    {"--random", NULL, NULL, 0, 0, "a network with seeded random weights", NULL},
    {"--layer", "gcn|gin|gat|mpnn", "gcn", 0, 0, "the --random network's layer", NULL},
    {"--recipe", "paper|driple-c", "paper", 0, 0, "the --random network's shape", NULL},
    {"--grouped", "G.json", NULL, 0, 0, "the grouped graph", NULL},
    {"--synthetic", "N", "100", 1, 100000, "a synthetic graph of N groups (no --grouped)", NULL},
    {"--runs", "R", "50 (train: 5)", 1, 100000, "timed runs", NULL},
    {"--batch", "B", "1 (train, transfer: 32)", 1, 4096, "graphs per call", NULL},
    {"--threads", "T", "the engine's", 0, 256, "threads (0: the engine's default)", NULL},
    {"--kernels", "portable|avx2|avx512", "the best the CPU has", 0, 0, "the kernels", NULL},
    {"--json", NULL, NULL, 0, 0, "print the figures as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_bench_predict_spec = {
    "bench predict", "times an inspector's predictions", BENCH_USAGE, bench_opts, NULL};
const struct cli_spec cmd_bench_train_spec = {
    "bench train", "times training steps", BENCH_USAGE, bench_opts, NULL};
const struct cli_spec cmd_bench_embed_spec = {
    "bench embed", "times the embeddings of a batch of graphs in one call", BENCH_USAGE, bench_opts,
    NULL};
const struct cli_spec cmd_bench_transfer_spec = {
    "bench transfer", "times transfer steps", BENCH_USAGE, bench_opts, NULL};

static const struct cli_opt bench_kernels_opts[] = {
    {"--out", "FILE", "the user data directory's kernels.json", 0, 0, "where the table is saved",
     NULL},
    {"--json", NULL, NULL, 0, 0, "print the measurements as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_bench_kernels_spec = {
    "bench kernels", "measures the own kernels against OpenBLAS per shape class (auto's table)",
    "driple bench kernels [--out FILE] [--json]", bench_kernels_opts, NULL};

/* `bench kernels`: measures auto's table (dp_kernels_measure) and saves it where the engine reads
 * it at start, or to --out; prints the CPU, the OpenBLAS core and each transpose case's picks. */
static int bench_kernels(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_bench_kernels_spec)) return c.rc;
    const bool json = cli_flag(&c, "--json");
    const char *out = cli_value(&c, "--out");
    const bool ok = cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    char path[1024];
    if (!out && !dp_kernels_table_path(path, sizeof path)) {
        fprintf(stderr, "driple: bench kernels: no place for the table (set HOME, XDG_DATA_HOME "
                        "or DRIPLE_KERNELS_TABLE, or give --out FILE)\n");
        return 1;
    }
    if (out) snprintf(path, sizeof path, "%s", out);
    struct dp_kernels_cell *cells = calloc(DP_KERNELS_CELLS, sizeof *cells);
    if (!cells) return out_of_memory();
    struct dp_error err = {0};
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    int rc = 0;
    if (dp_kernels_measure(path, cells, &err)) {
        if (dp_kernels_note()) fprintf(stderr, "note: %s\n", dp_kernels_note());
        rc = cli_fail(&err);
        goto done;
    }
    int n_blas = 0;
    for (int i = 0; i < DP_KERNELS_CELLS; i++) n_blas += cells[i].pick == 'b';
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "bench", "kernels");
        dp_jw_str(w, "table", path);
        dp_jw_str(w, "cpu", dp_kernels_cpu());
        dp_jw_str(w, "kernels", dp_kernels());
        dp_jw_str(w, "openblas", dp_kernels_openblas());
        dp_jw_str(w, "openblas_coretype_env", coretype);
        dp_jw_fixed(w, "load_avg", load_avg(), 2);
        dp_jw_int(w, "openblas_cells", n_blas);
        dp_jw_array(w, "cells");
        for (int i = 0; i < DP_KERNELS_CELLS; i++) {
            dp_jw_object(w, NULL);
            dp_jw_bool(w, "ta", cells[i].ta);
            dp_jw_bool(w, "tb", cells[i].tb);
            dp_jw_int(w, "m", cells[i].m);
            dp_jw_int(w, "n", cells[i].n);
            dp_jw_int(w, "k", cells[i].k);
            dp_jw_fixed(w, "own_us", cells[i].own_us, 3);
            dp_jw_fixed(w, "openblas_us", cells[i].blas_us, 3);
            dp_jw_str(w, "pick", cells[i].pick == 'b' ? "openblas" : "own");
            dp_jw_end(w);
        }
        dp_jw_end(w);
        rc = dp_jw_print(w, stdout, "stdout", &err) ? cli_fail(&err) : 0;
        dp_jw_free(w);
        goto done;
    }
    printf("bench kernels: %s, %s kernels, %s (OPENBLAS_CORETYPE%s%s), load average %.2f\n",
           dp_kernels_cpu(), dp_kernels(), dp_kernels_openblas(), coretype ? "=" : " not set",
           coretype ? coretype : "", load_avg());
    printf("%d of %d shape classes faster on OpenBLAS (by 3%% or more); table saved to %s\n",
           n_blas, DP_KERNELS_CELLS, path);
    printf("  case       m     n     k    own us  openblas us  pick\n");
    for (int i = 0; i < DP_KERNELS_CELLS; i++) {
        const struct dp_kernels_cell *e = &cells[i];
        printf("  %c%c     %5d %5d %5d %9.2f %12.2f  %s\n", e->ta ? 't' : 'n', e->tb ? 't' : 'n',
               e->m, e->n, e->k, e->own_us, e->blas_us, e->pick == 'b' ? "openblas" : "own");
    }
done:
    free(cells);
    return rc;
}

int cmd_bench(int argc, char **argv) {
    if (argc < 1) return cli_usage("bench", BENCH_USAGE, "missing what to benchmark");
    const char *what = argv[0];
    if (!strcmp(what, "coarsen")) return bench_coarsen(argc - 1, argv + 1);
    if (!strcmp(what, "explain")) return bench_explain(argc - 1, argv + 1);
    if (!strcmp(what, "compare")) return bench_compare(argc - 1, argv + 1);
    if (!strcmp(what, "kernels")) return bench_kernels(argc - 1, argv + 1);
    bool embed = !strcmp(what, "embed"), pred = !strcmp(what, "predict") || embed;
    bool train = !strcmp(what, "train"), transfer = !strcmp(what, "transfer");
    if (!pred && !train && !transfer)
        return cli_usage("bench", BENCH_USAGE, "unknown benchmark '%s'", what);
    struct cli c;
    struct bench_opts o = {.synthetic = 100, .runs = 0, .batch = 0, .threads = 0};
    if (!cli_init(&c, argc - 1, argv + 1, embed   ? &cmd_bench_embed_spec
                                          : pred  ? &cmd_bench_predict_spec
                                          : train ? &cmd_bench_train_spec
                                                  : &cmd_bench_transfer_spec))
        return c.rc;
    o.json = cli_flag(&c, "--json");
    o.random = cli_flag(&c, "--random");
    o.inspector = cli_value(&c, "--inspector");
    o.weights = cli_value(&c, "--weights");
    o.grouped = cli_value(&c, "--grouped");
    o.layer = cli_value(&c, "--layer");
    o.kernels = cli_value(&c, "--kernels");
    o.recipe = cli_value(&c, "--recipe");
    bool ok = cli_int(&c, "--synthetic", 1, 100000, &o.synthetic) &&
              cli_int(&c, "--runs", 1, 100000, &o.runs) &&
              cli_int(&c, "--batch", 1, 4096, &o.batch) &&
              cli_int(&c, "--threads", 0, 256, &o.threads);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!!o.inspector + !!o.weights + o.random != 1)
        return cli_usage("bench", BENCH_USAGE,
                         "give exactly one of --inspector, --weights or --random");
    if ((o.recipe || o.layer) && !o.random)
        return cli_usage("bench", BENCH_USAGE, "--recipe and --layer shape a --random network");
    if (o.runs == 0) o.runs = pred ? 50 : train ? 5 : 50;
    if (o.batch == 0) o.batch = embed ? 1000 : pred ? 1 : 32;
    /* the engine's defaults (dp/compute.h) unless asked */
    if (o.threads > 0) dp_threads_set((int)o.threads);
    if (o.kernels && !dp_kernels_set(o.kernels))
        return cli_usage("bench", BENCH_USAGE, "unknown --kernels '%s' (" DP_KERNELS_ALLOWED ")",
                         o.kernels);
    struct dp_inspector *insp = NULL;
    struct dp_model *own = NULL;
    const struct dp_model *m = NULL;
    struct dp_grouped *g = NULL;
    int rc = load_model(&o, &insp, &own, &m);
    if (!rc) rc = load_graph(&o, &g);
    if (!rc) rc = pred ? bench_predict(&o, m, g, embed) : bench_train(&o, m, g, transfer);
    dp_grouped_free(g);
    dp_model_free(own);
    dp_inspector_free(insp);
    return rc;
}
