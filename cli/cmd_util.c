/* cmd_util.c: the helpers of cmd_util.h, kept in one place so that every command writes JSON,
 * builds its benchmark graph, reads --exported-batch, names a setting (an id or the cluster
 * options) and reads its workload the same way. */
#include "cmd_util.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "dp/coarsen.h"
#include "dp/json_out.h"
#include "dp/systems.h"

void cmd_jw_labels(struct dp_jw *w, const char *key, const double *labels) {
    static const char *const part[3] = {"idle", "active", "peak"};
    dp_jw_object(w, key);
    for (int r = 0; r < DP_N_RESOURCES; r++) {
        dp_jw_object(w, dp_series_name((enum dp_series_kind)r));
        for (int k = 0; k < 3; k++) dp_jw_num(w, part[k], labels[3 * r + k]);
        dp_jw_end(w);
    }
    dp_jw_end(w);
}

void cmd_text_labels(const double *labels) {
    printf("  %-13s %12s %12s %12s\n", "resource", "idle (ms)", "active (ms)", "peak");
    for (int r = 0; r < DP_N_RESOURCES; r++)
        printf("  %-13s %12.2f %12.2f %12.2f %s\n", dp_series_name((enum dp_series_kind)r),
               labels[3 * r], labels[3 * r + 1], labels[3 * r + 2],
               dp_series_unit((enum dp_series_kind)r));
}

void cmd_text_bursts(const char *prefix, const double *m, double iteration_ms) {
    struct dp_bursts_info b = dp_bursts_info(m, iteration_ms);
    double k = b.iterations_per_cycle;
    if (!isfinite(k) || fabs(k - 1.0) < 1e-9) return;
    if (b.span_iterations)
        printf("%sbursts span iterations: one GPU burst and its idle period cover %.3g "
               "iterations (iteration = (gpu_util.idle + gpu_util.active) / %.3g)\n",
               prefix, k, k);
    else
        printf("%san iteration holds %.3g GPU bursts (iteration = (gpu_util.idle + "
               "gpu_util.active) x %.3g)\n", prefix, 1.0 / k, 1.0 / k);
}

int cmd_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cmd_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmd_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double cmd_cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

struct edge_key {
    uint64_t edge; /* lo << 32 | hi */
    int      pos;  /* index in the edge list */
};

static int cmp_edge_key(const void *pa, const void *pb) {
    const struct edge_key *a = pa, *b = pb;
    if (a->edge != b->edge) return a->edge < b->edge ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

struct dp_grouped *cmd_synthetic_grouped(int n, uint64_t seed) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
    int want = n > 1 ? (int)(1.8 * n) : 0, m = 0;
    int *e = malloc(((size_t)want + (size_t)n + 1) * 2 * sizeof *e);
    if (!e) return NULL;
    for (int i = 1; i < n; i++) { /* a spanning tree keeps it connected */
        e[2 * m] = (int)(RND() % (uint64_t)i);
        e[2 * m + 1] = i;
        m++;
    }
    for (int k = 0; k < want; k++) {
        int i = (int)(RND() % (uint64_t)n), j = (int)(RND() % (uint64_t)n);
        if (i == j) continue;
        e[2 * m] = i < j ? i : j;
        e[2 * m + 1] = i < j ? j : i;
        m++;
    }
    /* De-duplicate, keeping each edge's first occurrence in place: sort (edge, position) keys,
     * then drop every key equal to the one before it (pairwise comparison took 24 s at 1e5). */
    struct edge_key *keys = malloc(((size_t)m + 1) * sizeof *keys);
    if (!keys) {
        free(e);
        return NULL;
    }
    for (int a = 0; a < m; a++) {
        keys[a].edge = (uint64_t)(uint32_t)e[2 * a] << 32 | (uint32_t)e[2 * a + 1];
        keys[a].pos = a;
    }
    qsort(keys, (size_t)m, sizeof *keys, cmp_edge_key);
    for (int a = 1; a < m; a++)
        if (keys[a].edge == keys[a - 1].edge) e[2 * keys[a].pos] = -1; /* a later copy */
    free(keys);
    int kept = 0;
    for (int a = 0; a < m; a++)
        if (e[2 * a] >= 0) {
            e[2 * kept] = e[2 * a];
            e[2 * kept + 1] = e[2 * a + 1];
            kept++;
        }
    struct dp_grouped *g = dp_grouped_init("synthetic", n, kept);
    if (g) {
        memcpy(g->edges, e, (size_t)kept * 2 * sizeof *e);
        for (int i = 0; i < n; i++) {
            g->x[i * 3 + 0] = (double)(RND() % 10000000);
            g->x[i * 3 + 1] = (double)(1 + RND() % 50);
            g->x[i * 3 + 2] = (double)(RND() % 3000) / 1000.0;
        }
    }
    free(e);
#undef RND
    return g;
}

const struct cli_opt cmd_import_table[] = {
    {"--exported-batch", "N", "detected from the graph", 1, (double)(INT64_C(1) << 40),
     "the batch size the graph file was exported with", NULL},
    CLI_END,
};

bool cmd_import_opts(struct cli *c, struct dp_import_opts *o) {
    static struct dp_import_notes notes;
    memset(&notes, 0, sizeof notes);
    memset(o, 0, sizeof *o);
    o->notes = &notes;
    return cli_int(c, "--exported-batch", 1, INT64_C(1) << 40, &o->exported_batch);
}

void cmd_import_warnings(const char *path, const struct dp_import_opts *o, int64_t batch) {
    if (!o || !o->notes) return;
    if (o->notes->assumed_batch > 0 && batch <= 0)
        fprintf(stderr, "driple: note: %s: exported with a dynamic batch: %lld assumed (--batch N "
                "or --exported-batch N to change)\n", path, (long long)o->notes->assumed_batch);
    if (!o->notes->n_generic) return;
    fprintf(stderr, "driple: warning: %s: %zu ops of types driple does not know, kept with a "
            "generic cost (1 FLOP per output element): %s\n", path, o->notes->n_generic,
            o->notes->generic_types);
}

/* ---- naming a setting ---- */

const struct cli_opt cmd_cluster_table[] = {
    {"--gpu", "NAME", NULL, 0, 0,
     "the GPU: a catalog name or alias (V100-SXM2-16GB, A100-SXM4-40GB, ...); a near miss is an "
     "error listing the candidates", NULL},
    {"--system", "NAME", NULL, 0, 0,
     "a system of the systems catalog (DGX-1, DGX-2, DGX-A100, DGX-H100): GPUs per machine, "
     "NVLink / NVSwitch, NICs, CPU cores", NULL},
    {"--systems", "FILE", "assets/systems.json", 0, 0, "the systems catalog (driple-systems/1)",
     NULL},
    {"--sync", "ps|allreduce", "ps", 0, 0, "parameter servers or all-reduce", NULL},
    {"--ps", "N", NULL, 1, DP_MAX_PS, "parameter servers (needed with --sync ps)", NULL},
    {"--workers", "N", NULL, 1, DP_MAX_WORKERS, "workers, one GPU each", NULL},
    {"--placement", "homo|hetero", "homo", 0, 0,
     "parameter servers on the workers' machines (homo) or their own (hetero)", NULL},
    {"--network", "NET", NULL, 0, 0,
     "PCIe, NVLink, 1GbE, 10GbE, 25GbE, 40GbE, 100GbE, 200GbE, 400GbE, IB-EDR, IB-HDR or IB-NDR",
     NULL},
    {"--machines", "M", "from the GPUs per machine", 1, DP_MAX_MACHINES,
     "machines the workers use", NULL},
    {"--gpus-per-machine", "G", "the system's, else the GPU's", 1, DP_MAX_GPUS_PER_MACHINE,
     "worker GPUs in one machine", NULL},
    {"--precision", "fp32|tf32|bf16|mixed|fp8", "fp32", 0, 0,
     "training precision (mixed: fp16 AMP; tf32 and bf16 need Ampere or later, fp8 Ada, Hopper "
     "or Blackwell)", NULL},
    {"--tf32", "on|off", "the framework version's rule", 0, 0,
     "TF32 for fp32 matrix products and convolutions", NULL},
    {"--framework", "NAME[:VERSION]", "tensorflow", 0, 0,
     "tensorflow or pytorch, with a version (pytorch:1.13) for the TF32 rule", NULL},
    {"--accum", "N", "1", 1, 65536, "gradient accumulation steps (one synchronisation per N)",
     NULL},
    {"--loader", "synthetic|cpu|dali", "synthetic", 0, 0,
     "where input images are decoded (cpu: a throughput ceiling from --cpu-cores)", NULL},
    {"--cpu-cores", "N", "the system's", 1, 1024, "CPU cores per machine for --loader cpu", NULL},
    {"--allreduce", "auto|ring|tree", "auto", 0, 0, "NCCL's all-reduce algorithm", NULL},
    {"--shard", "none|zero1|zero2|zero3|fsdp", "none", 0, 0,
     "sharded data parallel (fsdp = zero3)", NULL},
    {"--tp", "N", "1", 1, DP_MAX_WORKERS, "tensor-parallel degree (inside one machine)", NULL},
    {"--pp", "N", "1", 1, DP_MAX_WORKERS, "pipeline-parallel stages", NULL},
    {"--microbatches", "M", "1", 1, DP_MAX_WORKERS, "micro-batches per pipeline flush (1F1B)",
     NULL},
    {"--ep", "N", "1", 1, DP_MAX_WORKERS, "expert-parallel degree (MoE)", NULL},
    {"--recompute", "none|selective|full", "none", 0, 0, "activation recomputation", NULL},
    {"--seq-parallel", NULL, NULL, 0, 0, "sequence parallelism with --tp", NULL},
    {"--gpus", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog (driple-gpus/1)", NULL},
    CLI_END,
};

bool cmd_cluster_opts(struct cli *c, struct cmd_cluster *o) {
    memset(o, 0, sizeof *o);
    o->gpu = cli_value(c, "--gpu");
    o->network = cli_value(c, "--network");
    o->placement = cli_value(c, "--placement");
    o->precision = cli_value(c, "--precision");
    o->sync = cli_value(c, "--sync");
    o->framework = cli_value(c, "--framework");
    o->gpus = cli_value(c, "--gpus");
    o->system = cli_value(c, "--system");
    o->systems = cli_value(c, "--systems");
    o->tf32 = cli_value(c, "--tf32");
    o->loader = cli_value(c, "--loader");
    o->allreduce = cli_value(c, "--allreduce");
    o->shard = cli_value(c, "--shard");
    o->recompute = cli_value(c, "--recompute");
    o->seq_parallel = cli_flag(c, "--seq-parallel");
    const struct {
        const char *name;
        int64_t     hi, *out;
    } counts[] = {{"--workers", DP_MAX_WORKERS, &o->workers},
                  {"--ps", DP_MAX_PS, &o->ps},
                  {"--machines", DP_MAX_MACHINES, &o->machines},
                  {"--gpus-per-machine", DP_MAX_GPUS_PER_MACHINE, &o->gpus_per_machine},
                  {"--accum", 65536, &o->accum},
                  {"--cpu-cores", 1024, &o->cpu_cores},
                  {"--tp", DP_MAX_WORKERS, &o->tp},
                  {"--pp", DP_MAX_WORKERS, &o->pp},
                  {"--microbatches", DP_MAX_WORKERS, &o->microbatches},
                  {"--ep", DP_MAX_WORKERS, &o->ep}};
    bool ok = true;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        ok = cli_int(c, counts[i].name, 1, counts[i].hi, counts[i].out) && ok;
    return ok;
}

bool cmd_cluster_given(const struct cmd_cluster *o) {
    return o->gpu || o->network || o->placement || o->workers || o->ps || o->machines || o->sync ||
           o->framework || o->system || o->gpus_per_machine;
}

bool cmd_cluster_modified(const struct cmd_cluster *o) {
    return o->precision || o->tf32 || o->loader || o->allreduce || o->shard || o->recompute ||
           o->seq_parallel || o->accum || o->cpu_cores || o->tp || o->pp || o->microbatches ||
           o->ep;
}

/* A refusal: one line naming the option and the rule (issue 28's "Bad input"), exit 2. */
static int refuse(const char *cmd, const struct dp_error *err) {
    fprintf(stderr, "driple: %s: %s\n", cmd, err->msg);
    return 2;
}

/* A value of option `name` that is none of `allowed`: the refusal's message into err. */
static bool bad_value(const char *name, const char *v, const char *allowed,
                      struct dp_error *err) {
    dp_error_set(err, DP_ERR_INVALID, "%s '%s': expected %s", name, v, allowed);
    return false;
}

/* The modifying options' names into s; false with err set for a value none of the names. */
static bool apply_names(const struct cmd_cluster *o, struct dp_setting *s, struct dp_error *err) {
    if (o->precision && dp_precision_lookup(o->precision, "--precision", &s->precision, err))
        return false;
    if (o->tf32 && !dp_tf32_parse(o->tf32, &s->tf32))
        return bad_value("--tf32", o->tf32, "on, off or auto", err);
    if (o->loader && !dp_loader_parse(o->loader, &s->loader))
        return bad_value("--loader", o->loader, "synthetic, cpu or dali", err);
    if (o->allreduce && !dp_allreduce_algo_parse(o->allreduce, &s->ar_algo))
        return bad_value("--allreduce", o->allreduce, "auto, ring or tree", err);
    if (o->shard && !dp_shard_parse(o->shard, &s->shard))
        return bad_value("--shard", o->shard, "none, zero1, zero2, zero3 or fsdp", err);
    if (o->recompute && !dp_recompute_parse(o->recompute, &s->recompute))
        return bad_value("--recompute", o->recompute, "none, selective or full", err);
    return true;
}

int cmd_cluster_modify(const struct cmd_cluster *o, const char *cmd, struct dp_setting *s) {
    struct dp_error err = {0};
    if (!apply_names(o, s, &err)) return refuse(cmd, &err);
    const struct {
        int64_t v;
        int    *field;
    } counts[] = {{o->accum, &s->accum},     {o->cpu_cores, &s->cpu_cores},
                  {o->tp, &s->tp},           {o->pp, &s->pp},
                  {o->microbatches, &s->microbatches}, {o->ep, &s->ep}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].v) *counts[i].field = (int)counts[i].v;
    if (o->seq_parallel) s->seq_parallel = true;
    return 0;
}

int cmd_cluster_apply(const struct cmd_cluster *o, const struct dp_gpu_catalog *cat,
                      const char *cmd, struct dp_setting *s) {
    struct dp_error err = {0};
    struct dp_systems *sys = NULL;
    int rc;
    if (cmd_cluster_modified(o)) {
        if ((rc = cmd_cluster_modify(o, cmd, s))) return rc;
        if (dp_setting_finish(s, &err)) return refuse(cmd, &err);
    }
    const struct dp_gpu *g = dp_gpu_find(cat, s->gpu);
    if (!g) {
        fprintf(stderr, "driple: %s: no GPU \"%s\" in %s\n", cmd, s->gpu, cat->path);
        return 1;
    }
    if (s->system[0] && dp_systems_load_default(o->systems, cat, &sys, &err)) return cli_fail(&err);
    enum dp_status st = dp_setting_check_gpu(s, g, sys, &err);
    dp_systems_free(sys);
    return st ? refuse(cmd, &err) : 0;
}

/* The --system entry (NULL when not given) into *x, its catalog kept in *sys (to free).
 * Returns 0, or the exit status after saying why. */
static int cluster_system(const struct cmd_cluster *o, const struct dp_gpu_catalog *cat,
                          const char *cmd, struct dp_systems **sys, const struct dp_system **x) {
    struct dp_error err = {0};
    *x = NULL;
    if (!o->system) return 0;
    if (dp_systems_load_default(o->systems, cat, sys, &err)) return cli_fail(&err);
    return dp_system_lookup(*sys, o->system, "--system", x, &err) ? refuse(cmd, &err) : 0;
}

int cmd_cluster_setting(const struct cmd_cluster *o, const struct dp_gpu_catalog *cat,
                        const char *cmd, const char *usage, struct dp_setting *out) {
    struct dp_setting s;
    struct dp_error err = {0};
    struct dp_systems *sys = NULL;
    const struct dp_system *x = NULL;
    const struct dp_gpu *g = NULL;
    memset(&s, 0, sizeof s);
    if (o->sync && !dp_sync_parse(o->sync, &s.sync))
        return cli_usage(cmd, usage, "--sync %s: expected ps or allreduce", o->sync);
    int rc = cluster_system(o, cat, cmd, &sys, &x);
    if (rc) goto done;
    bool ar = s.sync == DP_SYNC_ALLREDUCE;
    const char *gpu = o->gpu ? o->gpu : x ? x->gpu : NULL;
    const char *net = o->network ? o->network : x ? dp_network_name(x->nic) : NULL;
    rc = 2;
    if (!gpu || !o->workers || (!ar && !o->ps) || !net)
        rc = cli_usage(cmd, usage,
                       "a setting by its cluster needs --gpu, --workers, --network and, with "
                       "parameter servers (--sync ps, the default), --ps (--system gives the GPU "
                       "and network; --machines, --placement, --precision, --framework optional)");
    else if (ar && o->ps) rc = cli_usage(cmd, usage, "--ps: --sync allreduce has no parameter servers");
    else if (ar && o->placement)
        rc = cli_usage(cmd, usage, "--placement: --sync allreduce has no PS to place");
    else if (o->placement && !dp_placement_parse(o->placement, &s.placement))
        rc = cli_usage(cmd, usage, "--placement %s: expected homo or hetero", o->placement);
    else if (dp_network_lookup(net, "--network", &s.network, &err) ||
             (o->framework &&
              dp_framework_lookup(o->framework, "--framework", &s.framework, &s.fw_version, &err)) ||
             dp_gpu_lookup(cat, gpu, "--gpu", &g, &err))
        rc = refuse(cmd, &err);
    else
        rc = 0;
    if (rc) goto done;
    snprintf(s.gpu, sizeof s.gpu, "%s", g->name);
    if (x) snprintf(s.system, sizeof s.system, "%s", x->name);
    s.workers = (int)o->workers;
    s.ps = (int)o->ps;
    int gpm = o->gpus_per_machine ? (int)o->gpus_per_machine : x ? x->gpus_per_machine : 0;
    s.machines = o->machines ? (int)o->machines
                             : dp_setting_cluster_machines(s.sync, s.workers, s.ps, s.network,
                                                           s.placement, gpm);
    if (dp_setting_finish(&s, &err)) {
        rc = refuse(cmd, &err);
        goto done;
    }
    if (o->gpus_per_machine && dp_setting_gpus_per_machine(&s) > o->gpus_per_machine) {
        fprintf(stderr, "driple: %s: --gpus-per-machine %lld: %d workers on %d machine(s) put %d "
                "in one\n", cmd, (long long)o->gpus_per_machine, s.workers, s.machines,
                dp_setting_gpus_per_machine(&s));
        rc = 2;
        goto done;
    }
    if ((rc = cmd_cluster_apply(o, cat, cmd, &s))) goto done;
    *out = s;
done:
    dp_systems_free(sys);
    return rc;
}

void cmd_describe_tf32(const struct dp_setting *s, const struct dp_gpu_catalog *cat, char *buf,
                       size_t n) {
    const struct dp_gpu *g = dp_gpu_find(cat, s->gpu);
    if (n) buf[0] = '\0';
    if (g) dp_setting_describe_tf32(s, dp_gpu_generation(g), buf, n);
}

/* ---- the session: settings, inspectors, the workload ---- */

int cmd_session_open(const char *settings, const char *gpus, const char *weights,
                     const char *sa, struct dp_session **out) {
    struct dp_error err = {0};
    struct dp_session_opts o = {.gpus = gpus, .settings = settings, .weights = weights,
                                .sa = sa && !strcmp(sa, "none") ? "" : sa};
    return dp_session_open(&o, out, &err) ? cli_fail(&err) : 0;
}

int cmd_session_setting(struct dp_session *ss, const char *id, const struct cmd_cluster *o,
                        const char *cmd, const char *usage, struct dp_setting *s) {
    if (!id) return cmd_cluster_setting(o, dp_session_catalog(ss), cmd, usage, s);
    struct dp_error err = {0};
    bool listed;
    if (dp_session_find_setting(ss, id, s, &listed, &err)) return cli_fail(&err);
    return cmd_cluster_apply(o, dp_session_catalog(ss), cmd, s);
}

int cmd_session_inspector(struct dp_session *ss, const struct dp_setting *s,
                          struct dp_resolution *r) {
    struct dp_error err = {0};
    if (dp_session_resolve(ss, s, 0, r, &err) == DP_OK) return 0;
    if (err.status == DP_ERR_NOT_FOUND) {
        fprintf(stderr, "driple: %s; or pass --inspector M\n", err.msg);
        return 1;
    }
    return cli_fail(&err);
}

int cmd_session_workload(struct dp_session *ss, const char *graph, const char *grouped,
                         const struct dp_import_opts *io, int64_t batch, int64_t groups,
                         int64_t seed, const char *cmd, const char *usage) {
    struct dp_error err = {0};
    if (!!graph == !!grouped) return cli_usage(cmd, usage, "give one GRAPH or --grouped FILE");
    if (grouped) {
        if (batch > 0)
            return cli_usage(cmd, usage, "--batch needs a GRAPH (a grouped file's features are fixed)");
        if (io->exported_batch > 0)
            return cli_usage(cmd, usage, "--exported-batch needs a GRAPH (not --grouped FILE)");
        return dp_session_load_grouped(ss, grouped, &err) ? cli_fail(&err) : 0;
    }
    struct dp_coarsen_opts co = {(int)groups, seed, 0};
    if (dp_session_load_graph(ss, graph, io, &co, &err)) return cli_fail(&err);
    cmd_import_warnings(graph, io, batch);
    if (dp_session_set_batch(ss, batch, &err)) return cli_fail(&err);
    return 0;
}

const struct cli_opt cmd_what_if_table[] = {
    {"--grouped", "FILE", NULL, 0, 0, "a grouped graph (graph coarsen -o) instead of GRAPH", NULL},
    {"--inspector", "M", NULL, 0, 0, "the inspector file to use (driple-inspector/1)", NULL},
    {"--setting", "ID", NULL, 0, 0, "the setting by its id (V100-P1w2ho-PCIe)", NULL},
    {"--settings", "FILE", "assets/settings/default.json", 0, 0,
     "the setting list (driple-settings/1)", NULL},
    {"--weights", "FILE", "assets/op_weights.json", 0, 0,
     "the op-type weights (driple-op-weights/1)", NULL},
    {"--setting-aware", "FILE|none", "the shipped one", 0, 0,
     "the setting-aware inspector (none: without one)", NULL},
    {"--batch", "N", "the graph's", 1, (double)DP_BATCH_MAX, "the batch size", NULL},
    {"--groups", "K", CLI_STR(DP_DEFAULT_GROUPS), 1, 100000, "groups the graph is coarsened into",
     NULL},
    {"--seed", "S", CLI_STR(DP_DEFAULT_SEED), (double)(INT64_MIN + 1), (double)INT64_MAX,
     "the coarsening's seed", NULL},
    CLI_MORE(cmd_import_table),
    CLI_MORE(cmd_cluster_table),
    CLI_END,
};

bool cmd_what_if_opts(struct cli *c, struct cmd_what_if *o) {
    memset(o, 0, sizeof *o);
    o->groups = DP_DEFAULT_GROUPS;
    o->seed = DP_DEFAULT_SEED;
    o->grouped = cli_value(c, "--grouped");
    o->inspector = cli_value(c, "--inspector");
    o->setting = cli_value(c, "--setting");
    o->settings = cli_value(c, "--settings");
    o->weights = cli_value(c, "--weights");
    o->sa = cli_value(c, "--setting-aware");
    bool ok = cmd_import_opts(c, &o->io);
    ok = cmd_cluster_opts(c, &o->cl) && ok;
    ok = cli_int(c, "--batch", 1, DP_BATCH_MAX, &o->batch) && ok;
    ok = cli_int(c, "--groups", 1, 100000, &o->groups) && ok;
    return cli_int(c, "--seed", INT64_MIN + 1, INT64_MAX, &o->seed) && ok;
}

int cmd_what_if_inspector(const struct cmd_what_if *o, const char *cmd, const char *usage,
                          struct dp_session **ss, int *insp, struct dp_setting *s,
                          bool *have_setting) {
    bool by_cluster = cmd_cluster_given(&o->cl);
    if ((o->inspector != NULL) + (o->setting != NULL) + by_cluster != 1)
        return cli_usage(cmd, usage, "give one of --inspector M, --setting ID or --gpu NAME ... "
                                     "--network NET (exactly one of --inspector, --setting and "
                                     "the cluster options)");
    if (o->inspector && cmd_cluster_modified(&o->cl))
        return cli_usage(cmd, usage, "--precision, --accum and the other options that modify a "
                                     "setting need --setting ID or --gpu NAME ...; --inspector M "
                                     "predicts for its own");
    int rc = cmd_session_open(o->settings, o->cl.gpus, o->weights, o->sa, ss);
    if (rc) return rc;
    *have_setting = true;
    if (!o->inspector) {
        struct dp_resolution r;
        if ((rc = cmd_session_setting(*ss, o->setting, &o->cl, cmd, usage, s)) ||
            (rc = cmd_session_inspector(*ss, s, &r)))
            return rc;
        *insp = r.inspector;
        return 0;
    }
    struct dp_error err = {0};
    if ((*insp = dp_session_use_file(*ss, o->inspector, &err)) < 0) return cli_fail(&err);
    const struct dp_setting *e = dp_settings_find(
        dp_session_settings(*ss), dp_inspector_setting(dp_session_inspector(*ss, *insp)));
    *have_setting = e != NULL;
    if (e) *s = *e;
    return 0;
}

/* ---- writing results ---- */

void cmd_jw_raw(struct dp_jw *w, const char *key, const float raw[DP_N_OUTPUTS]) {
    dp_jw_array(w, key);
    for (int o = 0; o < DP_N_OUTPUTS; o++) dp_jw_float(w, NULL, raw[o]);
    dp_jw_end(w);
}

int cmd_json_emit(struct dp_jw *w) {
    struct dp_error err = {0};
    int rc = dp_jw_print(w, stdout, "stdout", &err) ? cli_fail(&err) : 0;
    dp_jw_free(w);
    return rc;
}

void cmd_print_formulas(void) {
    printf("formulas:\n");
    for (int k = 0; k < DP_N_DERIVED; k++)
        printf("  %-16s = %s  (%s)\n", dp_derived_figures[k].key, dp_derived_figures[k].formula,
               dp_derived_figures[k].note);
}


const struct cli_opt cmd_economics_table[] = {
    {"--epoch-samples", "N", "1281167 (ImageNet-1k)", 0, 0,
     "samples per epoch, 1 .. 1e15 (k, M, G: x 1e3, 1e6, 1e9)", NULL},
    {"--price", "USD_PER_GPU_HOUR", "each GPU's catalog price", 0, 1e4,
     "the price of one GPU-hour", NULL},
    CLI_END,
};

bool cmd_economics_opts(struct cli *c, double *samples, double *price) {
    *price = NAN;
    const char *v = cli_value(c, "--epoch-samples");
    double x;
    if (v && !(dp_amount_parse(v, &x) && x >= 1 && x <= 1e15)) {
        fprintf(stderr, "driple: %s: --epoch-samples '%s': expected a count in [1, 1e15] (k, M "
                        "and G suffixes read as x 1e3, 1e6, 1e9)\n", c->cmd, v);
        c->bad = true;
        return false;
    }
    if (v) *samples = x;
    return cli_double(c, "--price", 0, 1e4, price);
}
