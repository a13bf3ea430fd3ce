/* cmd_dataset_build.c: `driple dataset build` sweeps zoo models x batch sizes x optimizers (and,
 * on request, generated architectures: dp/zoo_gen.h), coarsens each training graph once
 * (grouping depends only on structure), recomputes the features per batch, simulates every job
 * on every chosen setting (--jobs threads take jobs as they come; dp_sample_simulate), reports
 * the simulation's throughput (jobs per second, a job being one graph on every chosen setting)
 * and writes one driple-dataset/1 per setting, its labels marked simulated. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/coarsen.h"
#include "dp/compute.h" /* dp_threads: --jobs' default */
#include "dp/dataset.h"
#include "dp/files.h"
#include "dp/json_out.h"
#include "dp/names.h"
#include "dp/session.h"
#include "dp/settings.h"
#include "dp/sim.h"
#include "dp/zoo.h"
#include "dp/zoo_gen.h"

#define BUILD_USAGE                                                                             \
    "driple dataset build [--settings FILE] [--setting ID] --out DIR [--graphs N] [--jobs J]\n" \
    "       [--seed S] [--models a,b,...] [--optimizers sgd,momentum,adam] [--groups K]\n"       \
    "       [--weights FILE] [--gpus FILE] [--cost-features] [--generated N [--gen-seed S]\n"   \
    "       [--gen-jobs K]] [--json]\n"                                                          \
    "  jobs: zoo models x batch sizes (the model's default x 1/16 .. 6) x optimizers, in a\n"   \
    "  seeded order spread over the models; each setting keeps the first N (default 320) jobs\n" \
    "  that fit in its GPU's memory. Labels are SIMULATED (driple simulate). --jobs: threads\n" \
    "  simulating (default: $DRIPLE_THREADS, else the CPUs up to 4).\n"                        \
    "  --cost-features also stores each group's FLOPs, bytes and parameter bytes (for driple\n" \
    "  train --cost-features).\n"                                                               \
    "  --generated N adds generated architectures 0 .. N-1 of seed S (driple zoo generate;\n"     \
    "  default seed 1), K jobs each (an optimizer and K batch sizes drawn with --seed; default\n"\
    "  3), every one that fits kept beside the N zoo jobs (they always train under --split\n"  \
    "  models)."
static const double batch_factors[] = {0.0625, 0.125, 0.25, 0.375, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6};
#define N_FACTORS ((int)(sizeof batch_factors / sizeof batch_factors[0]))
#define MAX_GRAPHS 4096
#define GEN_CHUNK 64 /* generated models whose graphs are held at once */

/* One training graph: a model with an optimizer and a precision, coarsened once. A generated
 * model's info is one of build.gen_info (its architecture the same index of build.gens). */
struct gkey {
    const struct dp_zoo_info *model;
    enum dp_optimizer         opt;
    enum dp_precision         prec;
    struct dp_graph          *g;
    struct dp_partition      *part;
};

struct job {
    const struct dp_zoo_info *model;
    enum dp_optimizer         opt;
    int64_t                   batch;
    int                       key[2]; /* graph per precision (-1: not needed) */
};

struct build {
    const struct dp_settings  *settings;
    const struct dp_gpu_catalog *cat;
    const struct dp_op_weights *weights;
    int                *chosen;   /* indices of the settings built */
    int                 n_chosen;
    struct gkey        *keys;
    int                 n_keys;
    struct job         *jobs;
    int                 n_jobs;
    struct dp_grouped **grouped;  /* [job][prec] */
    double             *labels;   /* [job][chosen][12] */
    unsigned char      *oom;      /* [job][chosen] */
    struct dp_gen_arch *gens;     /* generated architectures */
    struct dp_zoo_info *gen_info; /* their name, default batch and input, family "generated" */
    int                 n_gen;
    uint64_t            seed;
    int                 groups;
    bool                cost;     /* keep the cost features in the samples' grouped graphs */
    /* work queue */
    pthread_mutex_t     mu;
    int                 next, limit;
    int                 done;
    bool                failed;
    struct dp_error     err;
};

static int take(struct build *b, int limit) {
    pthread_mutex_lock(&b->mu);
    int i = b->failed || b->next >= limit ? -1 : b->next++;
    pthread_mutex_unlock(&b->mu);
    return i;
}

static void fail_with(struct build *b, const struct dp_error *err) {
    pthread_mutex_lock(&b->mu);
    if (!b->failed) {
        b->failed = true;
        b->err = *err;
    }
    pthread_mutex_unlock(&b->mu);
}

/* Phase 1: build and coarsen each graph. */
static void *build_graphs(void *arg) {
    struct build *b = arg;
    int i;
    while ((i = take(b, b->limit)) >= 0) {
        struct gkey *k = &b->keys[i];
        struct dp_error err = {0};
        struct dp_zoo_opts zo;
        dp_zoo_opts_default(&zo);
        zo.optimizer = k->opt;
        zo.precision = k->prec;
        struct dp_coarsen_opts co = {b->groups, DP_DEFAULT_SEED, 0};
        ptrdiff_t gi = k->model - b->gen_info;
        bool gen = b->n_gen > 0 && gi >= 0 && gi < b->n_gen;
        if ((gen ? dp_gen_build(&b->gens[gi], &zo, &k->g, &err)
                 : dp_zoo_build(k->model->name, &zo, &k->g, &err)) ||
            dp_coarsen(k->g, &co, &k->part, &err)) {
            fail_with(b, &err);
            break;
        }
    }
    return NULL;
}

/* Drops the member names (datasets store features and edges only). */
static void strip_members(struct dp_grouped *g) {
    if (!g->member_start) return;
    for (int i = 0; i < g->member_start[g->n_groups]; i++) free(g->members[i]);
    free(g->members);
    free(g->member_start);
    g->members = NULL;
    g->member_start = NULL;
}

/* Phase 2: features per job, then a simulation per chosen setting. */
static void *run_jobs(void *arg) {
    struct build *b = arg;
    int j;
    while ((j = take(b, b->limit)) >= 0) {
        struct job *jb = &b->jobs[j];
        struct dp_error err = {0};
        for (int p = 0; p < 2; p++) {
            if (jb->key[p] < 0) continue;
            const struct gkey *k = &b->keys[jb->key[p]];
            struct dp_grouped **gg = &b->grouped[2 * j + p];
            if (dp_features(k->g, k->part, b->weights, jb->batch, gg, NULL, &err)) {
                fail_with(b, &err);
                return NULL;
            }
            strip_members(*gg);
            if (!b->cost) dp_grouped_drop_cost(*gg);
        }
        for (int c = 0; c < b->n_chosen; c++) {
            const struct dp_setting *s = &b->settings->settings[b->chosen[c]];
            const struct gkey *k = &b->keys[jb->key[s->precision == DP_PREC_MIXED]];
            const struct dp_gpu *gpu = dp_gpu_find(b->cat, s->gpu);
            struct dp_sim_opts o;
            dp_sim_opts_default(&o);
            o.batch = jb->batch;
            o.seed = b->seed * 1000003u + (uint64_t)j * 131u + (uint64_t)c;
            struct dp_sample smp; /* its labels; the sample is made when written */
            bool fits;
            if (dp_sample_simulate(k->g, s, gpu, &o, "", &smp, &fits, &err)) {
                fail_with(b, &err);
                return NULL;
            }
            memcpy(&b->labels[((size_t)j * b->n_chosen + c) * DP_N_OUTPUTS], smp.labels,
                   sizeof smp.labels);
            b->oom[(size_t)j * b->n_chosen + c] = !fits;
        }
        pthread_mutex_lock(&b->mu);
        b->done++;
        pthread_mutex_unlock(&b->mu);
    }
    return NULL;
}

/* Runs fn on n_threads threads over items [from, limit) of its queue. */
static int run_threads(struct build *b, int n_threads, void *(*fn)(void *), int from, int limit) {
    pthread_t th[64];
    int started = 0;
    b->next = from;
    b->limit = limit;
    for (int t = 1; t < n_threads && t < 64; t++)
        if (!pthread_create(&th[started], NULL, fn, b)) started++;
    fn(b);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    if (b->failed) return cli_fail(&b->err);
    return 0;
}

/* no list: every name */
static bool in_list(const char *list, const char *name) {
    return !list || dp_name_in_list(list, name);
}

/* Checks that every name in a comma list is known (model names or optimizers). */
static const char *unknown_in(const char *list, bool models) {
    static char bad[64];
    if (!list) return NULL;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        snprintf(bad, sizeof bad, "%.*s", (int)(len < 63 ? len : 63), p);
        enum dp_optimizer o;
        if (models ? !dp_zoo_find(bad) : !dp_optimizer_parse(bad, &o)) return bad;
        p += len;
        if (*p == ',') p++;
    }
    return NULL;
}

static double now_s(void) { return dp_clock_ms() / 1000.0; }

/* Reports an allocation failure; returns the exit status. */
static int out_of_memory(void) {
    fprintf(stderr, "driple: dataset build: out of memory\n");
    return 1;
}

int cmd_dataset_build(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "dataset build")) return 1;
    bool json = cli_flag(&c, "--json");
    const char *settings_path = cli_value(&c, "--settings");
    const char *one = cli_value(&c, "--setting");
    const char *out_dir = cli_value(&c, "--out");
    const char *models = cli_value(&c, "--models");
    const char *opts_list = cli_value(&c, "--optimizers");
    const char *weights_path = cli_value(&c, "--weights");
    const char *gpus_path = cli_value(&c, "--gpus");
    bool cost = cli_flag(&c, "--cost-features");
    int64_t n_graphs = 320, n_threads = dp_threads(), seed = 1, groups = DP_DEFAULT_GROUPS;
    int64_t n_gen = 0, gen_seed = 1, gen_jobs = 3;
    bool ok = cli_int(&c, "--graphs", 1, MAX_GRAPHS, &n_graphs) &&
              cli_int(&c, "--jobs", 1, 64, &n_threads) &&
              cli_int(&c, "--seed", 0, INT64_MAX, &seed) &&
              cli_int(&c, "--groups", 1, 100000, &groups) &&
              cli_int(&c, "--generated", 0, 100000, &n_gen) &&
              cli_int(&c, "--gen-seed", 0, INT64_MAX, &gen_seed) &&
              cli_int(&c, "--gen-jobs", 1, N_FACTORS, &gen_jobs);
    ok = ok && cli_check_unused(&c);
    cli_done(&c);
    if (!ok) return 2;
    if (!out_dir || !*out_dir) return cli_usage("dataset build", BUILD_USAGE, "missing --out DIR");
    /* An empty list would select nothing and write empty datasets without complaint. */
    if ((models && !*models) || (opts_list && !*opts_list))
        return cli_usage("dataset build", BUILD_USAGE, "%s: empty list",
                         models && !*models ? "--models" : "--optimizers");
    const char *bad = unknown_in(models, true);
    if (bad) return cli_usage("dataset build", BUILD_USAGE, "--models: unknown model \"%s\"", bad);
    if ((bad = unknown_in(opts_list, false)))
        return cli_usage("dataset build", BUILD_USAGE, "--optimizers: unknown optimizer \"%s\"",
                         bad);

    struct build b;
    memset(&b, 0, sizeof b);
    pthread_mutex_init(&b.mu, NULL);
    b.seed = (uint64_t)seed;
    b.groups = (int)groups;
    b.cost = cost;
    struct dp_gpu_catalog *cat = NULL;
    struct dp_settings *list = NULL;
    struct dp_op_weights *w = NULL;
    struct dp_jw *jw = NULL;
    struct dp_error err = {0};
    int rc = 0;
    double t0 = now_s();
    if (json && !(jw = dp_jw_new())) {
        rc = out_of_memory();
        goto done;
    }
    if (dp_gpu_catalog_load_default(gpus_path, &cat, &err) ||
        dp_settings_load_default(settings_path, cat, &list, &err) ||
        dp_op_weights_load_default(weights_path, &w, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    b.settings = list;
    b.cat = cat;
    b.weights = w;
    if (!(b.chosen = calloc((size_t)list->n_settings + 1, sizeof *b.chosen))) {
        rc = out_of_memory();
        goto done;
    }
    for (int i = 0; i < list->n_settings; i++)
        if (!one || !strcasecmp(list->settings[i].id, one)) b.chosen[b.n_chosen++] = i;
    if (!b.n_chosen) {
        if (one) fprintf(stderr, "driple: %s: no setting \"%s\"\n", list->path, one);
        else fprintf(stderr, "driple: %s:$.settings: empty\n", list->path);
        rc = 1;
        goto done;
    }
    /* Fail now, not after minutes of simulation: GPUs without the figures the simulator needs,
     * and an output directory that cannot be made. */
    for (int i = 0; i < b.n_chosen; i++) {
        const struct dp_setting *s = &list->settings[b.chosen[i]];
        if (dp_gpu_check_sim(cat, dp_gpu_find(cat, s->gpu), &err)) {
            fprintf(stderr, "driple: %s (setting %s in %s)\n", err.msg, s->id, list->path);
            rc = 1;
            goto done;
        }
    }
    if (dp_mkdir_p(out_dir, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    bool need[2] = {false, false};
    for (int i = 0; i < b.n_chosen; i++)
        need[list->settings[b.chosen[i]].precision == DP_PREC_MIXED] = true;

    /* The job list: per model, its optimizer x batch combinations in a seeded order; then
     * round-robin over the models so that any prefix covers them evenly. */
    size_t n_models = dp_zoo_count();
    int n_opt = 0;
    enum dp_optimizer opts[DP_OPT_COUNT];
    for (int o = 0; o < DP_OPT_COUNT; o++)
        if (in_list(opts_list, dp_optimizer_name((enum dp_optimizer)o)))
            opts[n_opt++] = (enum dp_optimizer)o;
    const struct dp_zoo_info *mods[64];
    int n_mod = 0;
    for (size_t i = 0; i < n_models && n_mod < 64; i++)
        if (in_list(models, dp_zoo_info(i)->name)) mods[n_mod++] = dp_zoo_info(i);
    int per_model = n_opt * N_FACTORS;
    int total = n_mod * per_model; /* the pool: every combination, simulated everywhere */
    b.n_gen = (int)n_gen;
    if (!(b.jobs = calloc((size_t)total + (size_t)n_gen * gen_jobs, sizeof *b.jobs)) ||
        !(b.keys = calloc((size_t)(n_mod * n_opt + n_gen) * 2, sizeof *b.keys)) ||
        (n_gen && (!(b.gens = calloc((size_t)n_gen, sizeof *b.gens)) ||
                   !(b.gen_info = calloc((size_t)n_gen, sizeof *b.gen_info))))) {
        rc = out_of_memory();
        goto done;
    }
    int *order = malloc((size_t)per_model * sizeof *order);
    if (!order) {
        rc = out_of_memory();
        goto done;
    }
    uint64_t rng = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
    int *perm = malloc((size_t)n_mod * per_model * sizeof *perm);
    if (!perm) {
        free(order);
        rc = out_of_memory();
        goto done;
    }
    for (int m = 0; m < n_mod; m++) {
        for (int i = 0; i < per_model; i++) order[i] = i;
        for (int i = per_model - 1; i > 0; i--) { /* Fisher-Yates, xorshift */
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            int r = (int)(rng % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[r];
            order[r] = t;
        }
        memcpy(perm + (size_t)m * per_model, order, (size_t)per_model * sizeof *order);
    }
    free(order);
    for (int j = 0; j < total; j++) {
        int m = j % n_mod, i = perm[(size_t)m * per_model + j / n_mod];
        struct job *jb = &b.jobs[j];
        jb->model = mods[m];
        jb->opt = opts[i / N_FACTORS];
        double bt = (double)mods[m]->default_batch * batch_factors[i % N_FACTORS];
        jb->batch = bt < 1 ? 1 : (int64_t)llround(bt);
        for (int p = 0; p < 2; p++) {
            jb->key[p] = -1;
            if (!need[p]) continue;
            int k;
            for (k = 0; k < b.n_keys; k++)
                if (b.keys[k].model == jb->model && b.keys[k].opt == jb->opt &&
                    b.keys[k].prec == (enum dp_precision)p)
                    break;
            if (k == b.n_keys) {
                b.keys[k].model = jb->model;
                b.keys[k].opt = jb->opt;
                b.keys[k].prec = (enum dp_precision)p;
                b.n_keys++;
            }
            jb->key[p] = k;
        }
    }
    free(perm);
    b.n_jobs = total;
    int n_zoo_keys = b.n_keys;
    /* Generated models, one after the other (each one's graphs are freed once its jobs ran):
     * a drawn optimizer, gen_jobs distinct batch factors. */
    for (int g = 0; g < b.n_gen; g++) {
        struct dp_gen_arch *a = &b.gens[g];
        dp_gen_sample((uint64_t)gen_seed, g, -1, a);
        struct dp_zoo_info *info = &b.gen_info[g];
        info->name = a->name;
        info->family = "generated";
        info->default_batch = a->batch;
        info->default_input = a->kind == DP_GEN_CNN ? a->u.cnn.input
                              : a->kind == DP_GEN_TRANSFORMER ? a->u.tf.seq
                              : a->kind == DP_GEN_RNN ? a->u.rnn.seq
                              : a->kind == DP_GEN_MLP ? a->u.mlp.input : a->u.mixer.input;
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        enum dp_optimizer opt = opts[rng % (uint64_t)n_opt];
        int key[2] = {-1, -1};
        for (int p = 0; p < 2; p++)
            if (need[p]) {
                key[p] = b.n_keys++;
                b.keys[key[p]] = (struct gkey){info, opt, (enum dp_precision)p, NULL, NULL};
            }
        int used = 0; /* bit f: batch factor f taken */
        for (int k = 0; k < gen_jobs; k++) {
            int f;
            do {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                f = (int)(rng % N_FACTORS);
            } while (used & (1 << f));
            used |= 1 << f;
            struct job *jb = &b.jobs[b.n_jobs++];
            double bt = (double)a->batch * batch_factors[f];
            *jb = (struct job){info, opt, bt < 1 ? 1 : (int64_t)llround(bt), {key[0], key[1]}};
        }
    }
    if (!(b.grouped = calloc((size_t)b.n_jobs * 2, sizeof *b.grouped)) ||
        !(b.labels = calloc((size_t)b.n_jobs * b.n_chosen * DP_N_OUTPUTS, sizeof *b.labels)) ||
        !(b.oom = calloc((size_t)b.n_jobs * b.n_chosen, 1))) {
        rc = out_of_memory();
        goto done;
    }

    if (!json)
        fprintf(stderr, "dataset build: a pool of %d jobs (%d models x %d optimizers x %d batch "
                        "sizes; %d generated models x %lld), %d graphs to coarsen, %d "
                        "setting(s), %lld thread(s), %lld zoo jobs kept per setting\n",
                b.n_jobs, n_mod, n_opt, N_FACTORS, b.n_gen, (long long)gen_jobs, b.n_keys,
                b.n_chosen, (long long)n_threads, (long long)n_graphs);
    if ((rc = run_threads(&b, (int)n_threads, build_graphs, 0, n_zoo_keys))) goto done;
    double t1 = now_s();
    if ((rc = run_threads(&b, (int)n_threads, run_jobs, 0, total))) goto done;
    /* Generated models a chunk at a time, their graphs freed after their jobs. */
    int per_gen = need[0] + need[1];
    for (int g0 = 0; g0 < b.n_gen; g0 += GEN_CHUNK) {
        int g1 = g0 + GEN_CHUNK < b.n_gen ? g0 + GEN_CHUNK : b.n_gen;
        int k0 = n_zoo_keys + g0 * per_gen, k1 = n_zoo_keys + g1 * per_gen;
        if ((rc = run_threads(&b, (int)n_threads, build_graphs, k0, k1)) ||
            (rc = run_threads(&b, (int)n_threads, run_jobs, total + g0 * (int)gen_jobs,
                              total + g1 * (int)gen_jobs)))
            goto done;
        for (int k = k0; k < k1; k++) {
            dp_partition_free(b.keys[k].part);
            dp_graph_free(b.keys[k].g);
            b.keys[k].part = NULL;
            b.keys[k].g = NULL;
        }
    }
    double t2 = now_s();

    char when[32];
    time_t tnow = time(NULL);
    struct tm tmv;
    gmtime_r(&tnow, &tmv);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    if (json) {
        dp_jw_bool(jw, "simulated", true);
        dp_jw_str(jw, "out", out_dir);
        dp_jw_int(jw, "jobs", b.n_jobs);
        dp_jw_int(jw, "graphs", b.n_keys);
        dp_jw_array(jw, "settings");
    }
    for (int cc = 0; cc < b.n_chosen; cc++) {
        const struct dp_setting *s = &list->settings[b.chosen[cc]];
        struct dp_dataset ds;
        dp_dataset_init(&ds, s->id);
        int skipped = 0;
        enum dp_status st = DP_OK;
        int n_zoo = 0;
        for (int j = 0; j < b.n_jobs && !st; j++) {
            const struct job *jb = &b.jobs[j];
            if (j < total && n_zoo >= n_graphs) continue; /* the zoo's quota is full */
            if (b.oom[(size_t)j * b.n_chosen + cc]) {
                skipped++;
                continue;
            }
            struct dp_sample smp;
            memset(&smp, 0, sizeof smp);
            char gname[96], model[64];
            snprintf(gname, sizeof gname, "%s:%s", j < total ? "zoo" : "generated",
                     jb->model->name);
            snprintf(model, sizeof model, "%s", jb->model->name);
            smp.graph = gname;
            smp.model = model;
            smp.batch = jb->batch;
            smp.grouped = b.grouped[2 * j + (s->precision == DP_PREC_MIXED)];
            snprintf(smp.job.optimizer, sizeof smp.job.optimizer, "%s", dp_optimizer_name(jb->opt));
            snprintf(smp.job.data_set, sizeof smp.job.data_set, "synthetic");
            snprintf(smp.job.sync, sizeof smp.job.sync, "sync");
            snprintf(smp.job.hyper, sizeof smp.job.hyper, "batch=%lld", (long long)jb->batch);
            snprintf(smp.job.job_name, sizeof smp.job.job_name, "%s-%s-b%lld", jb->model->name,
                     dp_optimizer_name(jb->opt), (long long)jb->batch);
            smp.job.input_size = jb->model->default_input;
            memcpy(smp.labels, &b.labels[((size_t)j * b.n_chosen + cc) * DP_N_OUTPUTS],
                   sizeof smp.labels);
            char where[64];
            snprintf(where, sizeof where, "driple simulate, seed %lld", (long long)seed);
            dp_sample_mark_simulated(&smp, s, where);
            snprintf(smp.source.when, sizeof smp.source.when, "%s", when);
            st = dp_dataset_add_sample(&ds, &smp, &err);
            n_zoo += j < total;
        }
        char path[1200];
        if (!st && snprintf(path, sizeof path, "%s/%s.json", out_dir, s->id) >= (int)sizeof path)
            st = dp_error_set(&err, DP_ERR_INVALID, "%s/%s.json: path too long", out_dir, s->id);
        if (!st) st = dp_dataset_save_json(&ds, path, &err);
        int n_samples = ds.n_samples;
        dp_dataset_free(&ds);
        if (st) {
            rc = cli_fail(&err);
            goto done;
        }
        if (json) {
            dp_jw_object(jw, NULL);
            dp_jw_str(jw, "id", s->id);
            dp_jw_str(jw, "file", path);
            dp_jw_int(jw, "samples", n_samples);
            dp_jw_int(jw, "skipped_oom", skipped);
            dp_jw_end(jw);
        } else {
            printf("%-28s %4d samples (simulated) %3d left out (out of memory)  %s%s\n", s->id,
                   n_samples, skipped, path,
                   n_zoo < n_graphs ? "  (fewer zoo jobs than asked: the rest do not fit)" : "");
        }
    }
    double t3 = now_s();
    /* jobs simulated per second of the features + simulation phase (every chosen setting) */
    const double jobs_s = t2 > t1 ? b.n_jobs / (t2 - t1) : 0;
    if (json) {
        dp_jw_end(jw);
        dp_jw_object(jw, "seconds");
        dp_jw_fixed(jw, "coarsen", t1 - t0, 3);
        dp_jw_fixed(jw, "simulate", t2 - t1, 3);
        dp_jw_fixed(jw, "write", t3 - t2, 3);
        dp_jw_end(jw);
        dp_jw_int(jw, "threads", (int)n_threads);
        dp_jw_fixed(jw, "jobs_per_s", jobs_s, 1);
        if (dp_jw_print(jw, stdout, "stdout", &err)) rc = cli_fail(&err);
    } else
        printf("built in %.1f s (graphs + coarsening %.1f s, features + simulation %.1f s: %d "
               "jobs x %d setting(s) on %lld thread(s), %.1f jobs/s; writing %.1f s)\n",
               t3 - t0, t1 - t0, t2 - t1, b.n_jobs, b.n_chosen, (long long)n_threads, jobs_s,
               t3 - t2);
done:
    dp_jw_free(jw);
    for (int k = 0; k < b.n_keys; k++) {
        dp_partition_free(b.keys[k].part);
        dp_graph_free(b.keys[k].g);
    }
    if (b.grouped)
        for (int j = 0; j < 2 * b.n_jobs; j++) dp_grouped_free(b.grouped[j]);
    free(b.grouped);
    free(b.labels);
    free(b.oom);
    free(b.jobs);
    free(b.keys);
    free(b.gens);
    free(b.gen_info);
    free(b.chosen);
    pthread_mutex_destroy(&b.mu);
    dp_op_weights_free(w);
    dp_settings_free(list);
    dp_gpu_catalog_free(cat);
    return rc;
}
