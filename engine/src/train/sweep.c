/* sweep.c: building the setting-aware inspector's training data (dp/sweep.h). The plan comes
 * first and is fixed by the seed alone: every graph entry (a model, optimizer, precision and
 * batch) and the settings it runs on, rows pre-allocated in order. Worker threads then take one
 * model at a time: build its training graphs, coarsen each once, and per batch compute the
 * grouped graph and profile and simulate its rows; the model's graphs are freed before the next.
 * The result does not depend on the thread count. Also the extraction of one setting's rows as a
 * per-setting dataset, and the pairs of its rows at two batch sizes (the setting-aware loss). */
#include "dp/sweep.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "dp/names.h"
#include "dp/sim.h"
#include "dp/zoo.h"
#include "dp/zoo_gen.h"
#include "train_impl.h"

#define MAX_THREADS 64

static const double batch_factors[] = {0.0625, 0.125, 0.25, 0.375, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6};
#define N_FACTORS ((int)(sizeof batch_factors / sizeof batch_factors[0]))
_Static_assert(N_FACTORS == DP_SWEEP_BATCH_FACTORS, "dp/sweep.h names the batch factors");

void dp_sweep_opts_default(struct dp_sweep_opts *o) {
    memset(o, 0, sizeof *o);
    o->zoo_batches = N_FACTORS;
    o->gen_seed = 1;
    o->gen_batches = 3;
    o->fp32 = true;
    o->mixed = true;
    o->random_settings = 8;
    o->max_workers = 64;
    o->seed = 1;
    o->threads = 1;
}

void dp_sweep_free(struct dp_sweep *s) {
    if (!s) return;
    for (int i = 0; i < s->n_graphs; i++) {
        free(s->graphs[i].graph);
        free(s->graphs[i].model);
        dp_grouped_free(s->graphs[i].grouped);
    }
    free(s->graphs);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

/* ---- the plan ---- */

/* A model of the corpus: a zoo entry or a generated architecture. */
struct model {
    const struct dp_zoo_info *zoo;
    struct dp_gen_arch        gen;
    int                       first_entry, n_entries; /* its graph entries, consecutive */
};

struct build {
    const struct dp_sweep_opts *o;
    const struct dp_gpu       **space;  /* GPUs random settings draw from */
    int                         n_space;
    struct model               *models;
    int                         n_models;
    struct dp_sweep            *out;
    int                        *row_start; /* per entry: its first row; n_graphs + 1 */
    /* work queue over models */
    pthread_mutex_t             mu;
    int                         next, done;
    enum dp_status              st;
    struct dp_error             err;
};

static const char *model_name(const struct model *m) {
    return m->zoo ? m->zoo->name : m->gen.name;
}

/* no list: every name */
static bool in_list(const char *list, const char *name) {
    return !list || dp_name_in_list(list, name);
}

static int uniform_int(uint64_t *s, int n) { return (int)(dp_rng_next(s) % (uint64_t)n); }

/* Draws a setting of precision prec from the space into *out; false when no draw of 32 gives a
 * valid one (a space too narrow). */
static bool draw_setting(const struct build *b, uint64_t *s, enum dp_precision prec,
                         struct dp_setting *out) {
    static const enum dp_network cross[] = {DP_NET_1GBE, DP_NET_10GBE, DP_NET_25GBE,
                                            DP_NET_40GBE, DP_NET_100GBE, DP_NET_IB_EDR,
                                            DP_NET_IB_HDR};
    const struct dp_sweep_opts *o = b->o;
    for (int tries = 0; tries < 32; tries++) {
        struct dp_setting st;
        memset(&st, 0, sizeof st);
        const struct dp_gpu *gpu = b->space[uniform_int(s, b->n_space)];
        snprintf(st.gpu, sizeof st.gpu, "%s", gpu->name);
        st.precision = prec;
        st.sync = o->allreduce && dp_rng_uniform(s) < 0.5 ? DP_SYNC_ALLREDUCE : DP_SYNC_PS;
        st.framework = o->pytorch && dp_rng_uniform(s) < 0.5 ? DP_FW_PYTORCH : DP_FW_TENSORFLOW;
        double lw = dp_rng_uniform(s) * log(o->max_workers > 1 ? o->max_workers : 1);
        st.workers = (int)lround(exp(lw));
        if (st.workers < 1) st.workers = 1;
        bool intra = st.workers <= DP_MAX_GPUS_PER_MACHINE && dp_rng_uniform(s) < 0.4;
        if (intra) {
            st.network = isfinite(gpu->nvlink_gbps) && gpu->nvlink_gbps > 0 &&
                                 dp_rng_uniform(s) < 0.5
                             ? DP_NET_NVLINK
                             : DP_NET_PCIE;
        } else {
            st.network = cross[uniform_int(s, (int)(sizeof cross / sizeof cross[0]))];
        }
        if (st.sync == DP_SYNC_PS) {
            int max_ps = st.workers < 8 ? st.workers : 8;
            st.ps = 1 + uniform_int(s, max_ps);
            st.placement = !intra && dp_rng_uniform(s) < 0.5 ? DP_PLACE_HETERO : DP_PLACE_HOMO;
        }
        if (dp_setting_finish(&st, NULL) == DP_OK) {
            *out = st;
            return true;
        }
    }
    return false;
}

/* Fills the plan: models, graph entries (graph names, optimizers, precisions, batches) and rows
 * (settings), everything drawn from o->seed. */
static enum dp_status plan(struct build *b, struct dp_error *err) {
    const struct dp_sweep_opts *o = b->o;
    struct dp_sweep *sw = b->out;
    int n_zoo = 0;
    for (size_t i = 0; i < dp_zoo_count(); i++) n_zoo += in_list(o->models, dp_zoo_info(i)->name);
    b->n_models = n_zoo + o->n_generated;
    if (b->n_models < 1) return dp_error_set(err, DP_ERR_INVALID, "sweep: no model selected");
    enum dp_precision precs[2];
    int n_prec = 0;
    if (o->fp32) precs[n_prec++] = DP_PREC_FP32;
    if (o->mixed) precs[n_prec++] = DP_PREC_MIXED;
    if (!n_prec) return dp_error_set(err, DP_ERR_INVALID, "sweep: no precision selected");
    enum dp_optimizer opts[DP_OPT_COUNT];
    int n_opt = 0;
    for (int k = 0; k < DP_OPT_COUNT; k++)
        if (in_list(o->optimizers, dp_optimizer_name((enum dp_optimizer)k)))
            opts[n_opt++] = (enum dp_optimizer)k;
    if (!n_opt) return dp_error_set(err, DP_ERR_INVALID, "sweep: no optimizer selected");
    int zb = o->zoo_batches < 1 ? 1 : o->zoo_batches > N_FACTORS ? N_FACTORS : o->zoo_batches;
    int gb = o->gen_batches < 1 ? 1 : o->gen_batches > N_FACTORS ? N_FACTORS : o->gen_batches;
    size_t n_entries = ((size_t)n_zoo * n_opt * zb + (size_t)o->n_generated * gb) * n_prec;
    if (!(b->models = calloc((size_t)b->n_models, sizeof *b->models)) ||
        !(sw->graphs = calloc(n_entries + 1, sizeof *sw->graphs)) ||
        !(b->row_start = calloc(n_entries + 2, sizeof *b->row_start)))
        return dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
    int m = 0;
    for (size_t i = 0; i < dp_zoo_count(); i++)
        if (in_list(o->models, dp_zoo_info(i)->name)) b->models[m++].zoo = dp_zoo_info(i);
    for (int g = 0; g < o->n_generated; g++) dp_gen_sample(o->gen_seed, g, -1, &b->models[m++].gen);
    uint64_t rng = o->seed * UINT64_C(0x9E3779B97F4A7C15) + 17;
    int e = 0;
    for (m = 0; m < b->n_models; m++) {
        struct model *md = &b->models[m];
        md->first_entry = e;
        int64_t def = md->zoo ? md->zoo->default_batch : md->gen.batch;
        int n_mopt = md->zoo ? n_opt : 1, nb = md->zoo ? zb : gb;
        enum dp_optimizer gen_opt = opts[uniform_int(&rng, n_opt)];
        for (int k = 0; k < n_mopt; k++) {
            /* nb distinct batch factors, drawn */
            int order[N_FACTORS];
            for (int f = 0; f < N_FACTORS; f++) order[f] = f;
            for (int f = N_FACTORS - 1; f > 0; f--) {
                int r = uniform_int(&rng, f + 1), t = order[f];
                order[f] = order[r];
                order[r] = t;
            }
            for (int j = 0; j < nb; j++)
                for (int p = 0; p < n_prec; p++) {
                    struct dp_sweep_graph *sg = &sw->graphs[e++];
                    enum dp_optimizer opt = md->zoo ? opts[k] : gen_opt;
                    snprintf(sg->optimizer, sizeof sg->optimizer, "%s", dp_optimizer_name(opt));
                    sg->precision = precs[p];
                    double bt = (double)def * batch_factors[order[j]];
                    sg->batch = bt < 1 ? 1 : (int64_t)llround(bt);
                    char name[96];
                    snprintf(name, sizeof name, "%s:%s", md->zoo ? "zoo" : "generated",
                             model_name(md));
                    sg->graph = strdup(name);
                    sg->model = strdup(model_name(md));
                    if (!sg->graph || !sg->model)
                        return dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
                }
        }
        md->n_entries = e - md->first_entry;
    }
    sw->n_graphs = e;
    /* Rows: the fixed settings (every zoo entry; the first fixed_quota generated entries of
     * each precision), then the random draws. */
    int n_fixed = o->fixed ? o->fixed->n_settings : 0, gen_seen[2] = {0, 0};
    size_t cap = 1024, n_rows = 0;
    struct dp_sweep_row *rows = malloc(cap * sizeof *rows);
    if (!rows) return dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
    sw->rows = rows;
    for (int i = 0; i < sw->n_graphs; i++) {
        const struct dp_sweep_graph *sg = &sw->graphs[i];
        bool gen = !strncmp(sg->graph, "generated:", 10);
        bool quota_ok = !gen || o->fixed_quota <= 0 || gen_seen[sg->precision] < o->fixed_quota;
        gen_seen[sg->precision] += gen;
        b->row_start[i] = (int)n_rows;
        if (n_rows + (size_t)n_fixed + (size_t)o->random_settings + 1 > cap) {
            cap = 2 * cap + (size_t)n_fixed + (size_t)o->random_settings;
            if (!(rows = realloc(sw->rows, cap * sizeof *rows)))
                return dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
            sw->rows = rows;
        }
        for (int f = 0; f < n_fixed && quota_ok; f++) {
            const struct dp_setting *s = &o->fixed->settings[f];
            if (s->precision != sg->precision) continue;
            struct dp_sweep_row *r = &rows[n_rows++];
            memset(r, 0, sizeof *r);
            r->graph = i;
            r->setting = *s;
            r->setting.inspector[0] = '\0';
        }
        for (int k = 0; k < o->random_settings; k++) {
            struct dp_sweep_row *r = &rows[n_rows];
            memset(r, 0, sizeof *r);
            r->graph = i;
            if (!draw_setting(b, &rng, sg->precision, &r->setting))
                return dp_error_set(err, DP_ERR_INVALID, "sweep: no valid setting can be drawn "
                                    "from the space (GPUs, workers)");
            n_rows++;
        }
    }
    b->row_start[sw->n_graphs] = (int)n_rows;
    sw->n_rows = (int)n_rows;
    return DP_OK;
}

/* ---- the work: one model at a time ---- */

static void fail_with(struct build *b, enum dp_status st, const struct dp_error *e) {
    pthread_mutex_lock(&b->mu);
    if (!b->st) {
        b->st = st;
        if (e) b->err = *e;
    }
    pthread_mutex_unlock(&b->mu);
}

static enum dp_status run_model(struct build *b, const struct model *md, struct dp_error *err) {
    const struct dp_sweep_opts *o = b->o;
    struct dp_sweep *sw = b->out;
    enum dp_status st = DP_OK;
    /* One training graph per (optimizer, precision) of the model, coarsened once. */
    struct dp_graph *g[DP_OPT_COUNT][2] = {{NULL}};
    struct dp_partition *part[DP_OPT_COUNT][2] = {{NULL}};
    struct dp_coarsen_opts co = {o->groups > 0 ? o->groups : DP_DEFAULT_GROUPS, DP_DEFAULT_SEED, 0};
    for (int e = md->first_entry; e < md->first_entry + md->n_entries && !st; e++) {
        struct dp_sweep_graph *sg = &sw->graphs[e];
        enum dp_optimizer opt = DP_OPT_SGD;
        dp_optimizer_parse(sg->optimizer, &opt);
        int p = sg->precision;
        if (!g[opt][p]) {
            struct dp_zoo_opts zo;
            dp_zoo_opts_default(&zo);
            zo.optimizer = opt;
            zo.precision = sg->precision;
            if ((st = md->zoo ? dp_zoo_build(md->zoo->name, &zo, &g[opt][p], err)
                              : dp_gen_build(&md->gen, &zo, &g[opt][p], err)) ||
                (st = dp_coarsen(g[opt][p], &co, &part[opt][p], err)))
                break;
        }
        struct dp_grouped *full = NULL;
        if ((st = dp_features(g[opt][p], part[opt][p], o->weights, sg->batch, &full, NULL, err)))
            break;
        sg->grouped = dp_grouped_clone(full, false); /* the members stay out of the data */
        dp_grouped_free(full);
        if (!sg->grouped) {
            st = dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
            break;
        }
        /* The graph costed once at its batch; its profile and every row's setting reuse it (the
         * activation peak alone took most of a row's time when each row prepared it again). */
        struct dp_sim_workload *wl = NULL;
        if (b->row_start[e] < b->row_start[e + 1] &&
            (st = dp_sim_workload_init(g[opt][p], sg->batch, &wl, err)))
            break;
        if ((st = dp_profile_graph_workload(g[opt][p], sg->batch, wl, &sg->profile, err))) {
            dp_sim_workload_free(wl);
            break;
        }
        for (int r = b->row_start[e]; r < b->row_start[e + 1] && !st; r++) {
            struct dp_sweep_row *row = &sw->rows[r];
            const struct dp_gpu *gpu = dp_gpu_find(o->catalog, row->setting.gpu);
            struct dp_sim_opts so;
            dp_sim_opts_default(&so);
            so.batch = sg->batch;
            so.seed = o->seed * 1000003u + (uint64_t)r * 131u;
            /* 8 iterations, not the default 20: the labels move by about 2% between seeds
             * either way (notes/accuracy.md), and a sweep runs tens of thousands of jobs. */
            so.iterations = 8;
            struct dp_sim_result res;
            struct dp_error se = {0};
            enum dp_status sst = dp_setting_check(&row->setting, &se);
            if (!sst) sst = dp_simulate_workload(wl, &row->setting, gpu, &so, &res, &se);
            if (sst == DP_ERR_INVALID) { /* a job the simulator refuses (an iteration of hours
                                            on a slow network): no row */
                row->iteration_ms = NAN;
                continue;
            }
            if (sst) {
                st = sst;
                if (err) *err = se;
                break;
            }
            memcpy(row->labels, res.labels, sizeof row->labels);
            row->iteration_ms = res.iteration_ms;
            row->memory_gb = res.memory_gb;
            row->oom = res.oom;
            dp_sim_result_free(&res);
        }
        dp_sim_workload_free(wl);
    }
    if (st) dp_error_prefix(err, model_name(md));
    for (int k = 0; k < DP_OPT_COUNT; k++)
        for (int p = 0; p < 2; p++) {
            dp_partition_free(part[k][p]);
            dp_graph_free(g[k][p]);
        }
    return st;
}

static void *worker(void *arg) {
    struct build *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->mu);
        bool stop = b->st || (b->o->cancel && *b->o->cancel);
        int m = stop ? b->n_models : b->next++;
        pthread_mutex_unlock(&b->mu);
        if (m >= b->n_models) return NULL;
        struct dp_error e = {0};
        enum dp_status st = run_model(b, &b->models[m], &e);
        if (st) {
            fail_with(b, st, &e);
            return NULL;
        }
        pthread_mutex_lock(&b->mu);
        int done = ++b->done;
        pthread_mutex_unlock(&b->mu);
        if (b->o->progress) b->o->progress(done, b->n_models, b->o->ud);
    }
}

enum dp_status dp_sweep_build(const struct dp_sweep_opts *o, struct dp_sweep *out,
                              struct dp_error *err) {
    memset(out, 0, sizeof *out);
    if (!o->catalog) return dp_error_set(err, DP_ERR_INVALID, "sweep: no GPU catalog");
    struct build b;
    memset(&b, 0, sizeof b);
    b.o = o;
    b.out = out;
    enum dp_status st = DP_OK;
    if (pthread_mutex_init(&b.mu, NULL))
        return dp_error_set(err, DP_ERR_NOMEM, "sweep: cannot create a mutex");
    /* Names fail now, not after minutes of simulation. */
    for (const char *p = o->models; p && *p;) {
        size_t len = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
        if (!dp_zoo_find(name)) {
            st = dp_error_set(err, DP_ERR_NOT_FOUND, "sweep: unknown zoo model '%s'", name);
            goto done;
        }
        p += len + (p[len] == ',');
    }
    for (const char *p = o->optimizers; p && *p;) {
        size_t len = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
        enum dp_optimizer opt;
        if (!dp_optimizer_parse(name, &opt)) {
            st = dp_error_set(err, DP_ERR_NOT_FOUND, "sweep: unknown optimizer '%s'", name);
            goto done;
        }
        p += len + (p[len] == ',');
    }
    if (!(b.space = calloc((size_t)o->catalog->n_gpus + 1, sizeof *b.space))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
        goto done;
    }
    for (int i = 0; i < o->catalog->n_gpus; i++) {
        const struct dp_gpu *gpu = &o->catalog->gpus[i];
        if (in_list(o->gpus, gpu->name) && !dp_gpu_check_sim(o->catalog, gpu, NULL))
            b.space[b.n_space++] = gpu;
    }
    for (const char *p = o->gpus; p && *p;) {
        size_t len = strcspn(p, ",");
        char name[DP_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(len < DP_NAME_MAX - 1 ? len : DP_NAME_MAX - 1), p);
        const struct dp_gpu *gpu = dp_gpu_find(o->catalog, name);
        if (!gpu || strcmp(gpu->name, name)) {
            st = dp_error_set(err, DP_ERR_NOT_FOUND, "sweep: --gpus: '%s' is not a catalog name",
                              name);
            goto done;
        }
        if ((st = dp_gpu_check_sim(o->catalog, gpu, err))) goto done;
        p += len + (p[len] == ',');
    }
    if (o->random_settings > 0 && b.n_space == 0) {
        st = dp_error_set(err, DP_ERR_INVALID, "sweep: no GPU of the catalog can be simulated");
        goto done;
    }
    for (int f = 0; o->fixed && f < o->fixed->n_settings; f++) {
        const struct dp_setting *s = &o->fixed->settings[f];
        if ((st = dp_gpu_check_sim(o->catalog, dp_gpu_find(o->catalog, s->gpu), err))) {
            dp_error_prefix(err, s->id);
            goto done;
        }
    }
    if ((st = plan(&b, err))) goto done;
    int n_threads = o->threads < 1 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
    pthread_t th[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < n_threads; t++)
        if (!pthread_create(&th[started], NULL, worker, &b)) started++;
    worker(&b);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    if (b.st) {
        st = b.st;
        if (err) *err = b.err;
    } else if (o->cancel && *o->cancel) {
        st = dp_error_set(err, DP_ERR_CANCELLED, "sweep: cancelled");
    }
    int kept = 0; /* drop the rows the simulator refused */
    for (int r = 0; r < out->n_rows; r++)
        if (!isnan(out->rows[r].iteration_ms)) out->rows[kept++] = out->rows[r];
    out->n_rows = kept;
    snprintf(out->source.kind, sizeof out->source.kind, "simulated");
    snprintf(out->source.where, sizeof out->source.where, "driple simulate, sweep seed %llu",
             (unsigned long long)o->seed);
done:
    free(b.space);
    free(b.models);
    free(b.row_start);
    pthread_mutex_destroy(&b.mu);
    if (st) dp_sweep_free(out);
    return st;
}

/* ---- one setting's rows as a dataset ---- */

/* A zoo row of the setting and its place in the spread order: round r of its model (batch
 * draw j, optimizer k: r = j * DP_OPT_COUNT + k), then the model's place in the sweep. */
struct zoo_row {
    int row, model, rank;
};

static int cmp_zoo_row(const void *pa, const void *pb) {
    const struct zoo_row *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->model != b->model) return a->model < b->model ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* keep[r]: row r of setting s fits and is within the zoo quota (every generated row that fits). */
static enum dp_status choose_rows(const struct dp_sweep *sw, const struct dp_setting *s,
                                  int max_zoo, bool *keep, int *n_oom, struct dp_error *err) {
    struct zoo_row *zr = max_zoo > 0 ? malloc((size_t)sw->n_rows * sizeof *zr + 1) : NULL;
    if (max_zoo > 0 && !zr) return dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
    int n_zoo = 0, model = -1, j = 0;
    const char *last_model = "", *last_opt = "";
    for (int r = 0; r < sw->n_rows; r++) {
        const struct dp_sweep_row *row = &sw->rows[r];
        if (!dp_setting_same_cluster(&row->setting, s)) continue;
        if (row->oom) {
            if (n_oom) (*n_oom)++;
            continue;
        }
        const struct dp_sweep_graph *sg = &sw->graphs[row->graph];
        if (!zr || strncmp(sg->graph, "zoo:", 4)) {
            keep[r] = true;
            continue;
        }
        bool new_model = strcmp(sg->model, last_model) != 0;
        model += new_model;
        j = new_model || strcmp(sg->optimizer, last_opt) ? 0 : j + 1;
        last_model = sg->model;
        last_opt = sg->optimizer;
        enum dp_optimizer k = DP_OPT_SGD;
        dp_optimizer_parse(sg->optimizer, &k);
        zr[n_zoo++] = (struct zoo_row){r, model, j * DP_OPT_COUNT + (int)k};
    }
    if (zr) {
        qsort(zr, (size_t)n_zoo, sizeof *zr, cmp_zoo_row);
        for (int i = 0; i < n_zoo && i < max_zoo; i++) keep[zr[i].row] = true;
    }
    free(zr);
    return DP_OK;
}

enum dp_status dp_sweep_dataset(const struct dp_sweep *sw, const struct dp_setting *s,
                                bool with_cost, int max_zoo, struct dp_dataset *ds, int *n_oom,
                                struct dp_error *err) {
    dp_dataset_init(ds, s->id);
    if (n_oom) *n_oom = 0;
    bool *keep = calloc((size_t)sw->n_rows + 1, sizeof *keep);
    enum dp_status st = keep ? choose_rows(sw, s, max_zoo, keep, n_oom, err)
                             : dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
    for (int r = 0; r < sw->n_rows && !st; r++) {
        if (!keep[r]) continue;
        const struct dp_sweep_row *row = &sw->rows[r];
        const struct dp_sweep_graph *sg = &sw->graphs[row->graph];
        struct dp_sample smp;
        memset(&smp, 0, sizeof smp);
        smp.graph = sg->graph;
        smp.model = sg->model;
        smp.batch = sg->batch;
        struct dp_grouped *gr = dp_grouped_clone(sg->grouped, false);
        if (!gr) {
            st = dp_error_set(err, DP_ERR_NOMEM, "sweep: out of memory");
            break;
        }
        if (!with_cost) dp_grouped_drop_cost(gr);
        smp.grouped = gr;
        snprintf(smp.job.optimizer, sizeof smp.job.optimizer, "%s", sg->optimizer);
        snprintf(smp.job.precision, sizeof smp.job.precision, "%s",
                 dp_precision_name(sg->precision));
        snprintf(smp.job.data_set, sizeof smp.job.data_set, "synthetic");
        snprintf(smp.job.sync, sizeof smp.job.sync, "sync");
        snprintf(smp.job.hyper, sizeof smp.job.hyper, "batch=%lld", (long long)sg->batch);
        snprintf(smp.job.job_name, sizeof smp.job.job_name, "%.40s-%s-b%lld", sg->model,
                 sg->optimizer, (long long)sg->batch);
        snprintf(smp.job.gpu, sizeof smp.job.gpu, "%.31s", s->gpu);
        memcpy(smp.labels, row->labels, sizeof smp.labels);
        smp.iteration_ms = row->iteration_ms;
        smp.memory_gb = row->memory_gb;
        smp.has_profile = true;
        smp.profile = sg->profile;
        smp.source = sw->source;
        st = dp_dataset_add_sample(ds, &smp, err);
        dp_grouped_free(gr);
    }
    free(keep);
    if (st) dp_dataset_free(ds);
    return st;
}

/* ---- pairs of rows at two batch sizes (the setting-aware loss's pair term) ---- */

struct pair_key {
    const struct dp_sweep_graph *g;
    const char                  *setting;
    int                          row;
};

static int cmp_pair_key(const void *a, const void *b) {
    const struct pair_key *x = a, *y = b;
    int c = strcmp(x->g->model, y->g->model);
    if (!c) c = strcmp(x->g->optimizer, y->g->optimizer);
    if (!c) c = (x->g->precision > y->g->precision) - (x->g->precision < y->g->precision);
    if (!c) c = strcmp(x->setting, y->setting);
    if (!c) c = (x->g->batch > y->g->batch) - (x->g->batch < y->g->batch);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

enum dp_status dp_sweep_batch_pairs(const struct dp_sweep *sw, const int *rows, const int *idx,
                                    int n, int **out, int *n_out, struct dp_error *err) {
    struct pair_key *k = malloc(((size_t)n + 1) * sizeof *k);
    int *p = malloc(((size_t)n + 1) * 2 * sizeof *p), np = 0;
    if (!k || !p) {
        free(k);
        free(p);
        return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    }
    for (int i = 0; i < n; i++) {
        const struct dp_sweep_row *r = &sw->rows[rows[idx[i]]];
        k[i] = (struct pair_key){&sw->graphs[r->graph], r->setting.id, idx[i]};
    }
    qsort(k, (size_t)n, sizeof *k, cmp_pair_key);
    for (int i = 0; i + 1 < n; i++) {
        const struct dp_sweep_graph *a = k[i].g, *b = k[i + 1].g;
        if (a->batch < b->batch && a->precision == b->precision &&
            !strcmp(k[i].setting, k[i + 1].setting) && !strcmp(a->model, b->model) &&
            !strcmp(a->optimizer, b->optimizer)) {
            p[2 * np] = k[i].row;
            p[2 * np + 1] = k[i + 1].row;
            np++;
        }
    }
    free(k);
    *out = p;
    *n_out = np;
    return DP_OK;
}
