/* cmd_plan.c: `driple plan MODEL ...`: the closed-form planner of LLM training (dp/plan.h): the
 * search over tensor / pipeline / data parallelism, ZeRO stages, micro-batches and
 * recomputation for a model on a GPU count (or a budget), one setting's plan (--setting ID),
 * and the comparison with published runs (--validate). Every figure is modelled. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/json_out.h"
#include "dp/llm.h"
#include "dp/plan.h"
#include "dp/settings.h"
#include "dp/systems.h"

#define PLAN_USAGE                                                                               \
    "driple plan MODEL|CONFIG.json --gpus N | --budget-usd X | --gpu-hours H\n"                 \
    "                  --gpu NAME[,NAME..] [--system S] [--network NET] [--precision P]\n"       \
    "                  [--tokens T | --samples N] [--global-batch B] [--seq S]\n"                \
    "                  [--sort throughput|time|cost] [--top K] [--no-flash] [--json]\n"          \
    "       driple plan MODEL --setting ID [--batch B] [--seq S] [--no-flash] [--json]\n"        \
    "       driple plan --validate [CSV] [--json]\n"                                            \
    "  MODEL: a preset (driple plan --list) or a Hugging Face config.json. Modelled, not\n"     \
    "  measured: docs/planning.md gives the formulas and their sources."

#define MAX_GPUS 8

/* The model: a preset name, else a config.json path. Returns 0 or the exit status. */
static int plan_model(const char *name, int64_t seq, struct dp_llm *m) {
    const struct dp_llm_preset *p = dp_llm_preset_find(name);
    if (p) {
        *m = p->model;
        if (seq) m->seq = seq;
        struct dp_error err = {0};
        if (dp_llm_check(m, "--seq", &err)) {
            fprintf(stderr, "driple: plan: %s\n", err.msg);
            return 2;
        }
        return 0;
    }
    struct dp_error err = {0};
    if (!strstr(name, ".json") && !strchr(name, '/')) {
        fprintf(stderr, "driple: plan: '%s' is neither a preset (driple plan --list) nor a "
                "config.json\n", name);
        return 2;
    }
    if (dp_llm_load_hf(name, seq, m, &err)) return cli_fail(&err);
    return 0;
}

static void list_presets(void) {
    printf("%-14s %6s %7s %5s %4s %7s %16s %16s  %s\n", "PRESET", "LAYERS", "HIDDEN", "HEADS",
           "KV", "FFN", "PARAMS", "PUBLISHED", "SOURCE");
    for (int i = 0; i < dp_llm_preset_count(); i++) {
        const struct dp_llm_preset *p = dp_llm_preset_at(i);
        const struct dp_llm *m = &p->model;
        printf("%-14s %6lld %7lld %5lld %4lld %7lld %16lld %15lld%s  %s\n", m->name,
               (long long)m->layers, (long long)m->hidden, (long long)m->heads,
               (long long)m->kv_heads, (long long)m->ffn, (long long)dp_llm_params(m),
               (long long)p->published, p->exact ? " " : "~", p->source);
    }
    printf("\nPARAMS: counted from the architecture; PUBLISHED: as the source states it (~: "
           "rounded by the source).\n");
}

static void jw_result(struct dp_jw *w, const struct dp_plan_result *r) {
    dp_jw_int(w, "global_batch", r->global_batch);
    dp_jw_int(w, "dp", r->dp);
    dp_jw_num(w, "iteration_ms", r->iteration_ms);
    dp_jw_num(w, "tokens_per_s", r->tokens_per_s);
    dp_jw_num(w, "samples_per_s", r->samples_per_s);
    dp_jw_num(w, "mfu", r->mfu);
    dp_jw_num(w, "hfu", r->hfu);
    dp_jw_num(w, "peak_tflops", r->peak_tflops);
    dp_jw_object(w, "memory_gb");
    dp_jw_num(w, "params", r->mem_params_gb);
    dp_jw_num(w, "grads", r->mem_grads_gb);
    dp_jw_num(w, "optimizer", r->mem_optim_gb);
    dp_jw_num(w, "activations", r->mem_act_gb);
    dp_jw_num(w, "other", r->mem_other_gb);
    dp_jw_num(w, "total", r->memory_gb);
    dp_jw_end(w);
    dp_jw_bool(w, "oom", r->oom);
    dp_jw_object(w, "breakdown_ms");
    dp_jw_num(w, "compute", r->compute_ms);
    dp_jw_num(w, "bubble", r->bubble_ms);
    dp_jw_num(w, "tp_comm", r->tp_ms);
    dp_jw_num(w, "pp_comm", r->pp_ms);
    dp_jw_num(w, "dp_comm_exposed", r->dp_ms);
    dp_jw_num(w, "dp_comm_total", r->dp_total_ms);
    dp_jw_num(w, "zero_gather_exposed", r->zero_ms);
    dp_jw_num(w, "optimizer", r->optimizer_ms);
    dp_jw_num(w, "input", r->input_ms);
    dp_jw_end(w);
    dp_jw_str(w, "notes", r->notes);
    dp_jw_str(w, "source", "modelled (closed form), not measured");
}

static void print_breakdown(const struct dp_plan_result *r) {
    printf("  iteration %.1f ms: compute %.1f, bubble %.1f, tp %.1f, pp %.1f, dp exposed %.1f "
           "(of %.1f), zero gathers %.1f, optimizer %.1f, input %.1f\n", r->iteration_ms,
           r->compute_ms, r->bubble_ms, r->tp_ms, r->pp_ms, r->dp_ms, r->dp_total_ms, r->zero_ms,
           r->optimizer_ms, r->input_ms);
    printf("  memory/GPU %.1f GB%s: params %.1f, grads %.1f, optimizer %.1f, activations %.1f, "
           "other %.1f\n", r->memory_gb, r->oom ? " (OOM)" : "", r->mem_params_gb,
           r->mem_grads_gb, r->mem_optim_gb, r->mem_act_gb, r->mem_other_gb);
    printf("  %.0f tokens/s, %.2f samples/s, MFU %.1f%% (HFU %.1f%%) of %.0f TFLOP/s, global "
           "batch %lld, dp %d\n", r->tokens_per_s, r->samples_per_s, 100 * r->mfu, 100 * r->hfu,
           r->peak_tflops, (long long)r->global_batch, r->dp);
}

/* --setting ID: one plan. */
static int plan_one(const struct dp_llm *m, const char *id, const struct dp_gpu_catalog *cat,
                    int64_t batch, bool no_flash, bool json) {
    struct dp_error err = {0};
    struct dp_setting s;
    struct dp_systems *systems = NULL;
    const struct dp_system *sys = NULL;
    int rc = 0;
    if (dp_setting_parse_id(id, cat, &s, &err)) {
        fprintf(stderr, "driple: plan: --setting %s\n", err.msg);
        return 2;
    }
    if (s.system[0] && (dp_systems_load_default(NULL, cat, &systems, &err) ||
                        dp_system_lookup(systems, s.system, "--setting", &sys, &err))) {
        rc = cli_fail(&err);
        goto done;
    }
    const struct dp_gpu *g = dp_gpu_find(cat, s.gpu);
    struct dp_plan_opts o = {batch, no_flash, NULL};
    struct dp_plan_result r;
    if (dp_plan_eval(m, &s, g, sys, &o, &r, &err)) {
        fprintf(stderr, "driple: plan: %s\n", err.msg);
        rc = 2;
        goto done;
    }
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "model", m->name);
        dp_jw_int(w, "params", dp_llm_params(m));
        dp_jw_str(w, "setting", s.id);
        dp_jw_int(w, "micro_batch", batch);
        jw_result(w, &r);
        rc = cmd_json_emit(w);
    } else {
        printf("%s on %s, micro-batch %lld, sequence %lld (modelled):\n", m->name, s.id,
               (long long)batch, (long long)m->seq);
        print_breakdown(&r);
    }
done:
    dp_systems_free(systems);
    return rc;
}

/* Splits "A,B" into catalog GPUs. Returns 0 or the exit status. */
static int plan_gpus(const char *list, const struct dp_gpu_catalog *cat,
                     const struct dp_gpu **gpus, int *n) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_GPUS) {
            fprintf(stderr, "driple: plan: --gpu: at most %d GPU types\n", MAX_GPUS);
            return 2;
        }
        struct dp_error err = {0};
        if (dp_gpu_lookup(cat, tok, "--gpu", &gpus[*n], &err)) {
            fprintf(stderr, "driple: plan: %s\n", err.msg);
            return 2;
        }
        (*n)++;
    }
    return 0;
}

static const char *shard_short(enum dp_shard s) {
    return s == DP_SHARD_NONE ? "-" : dp_shard_name(s);
}

static void print_plans(const struct dp_plan_query *q, const struct dp_plan_list *l) {
    printf("%s (%lld params, sequence %lld) on %d GPUs%s: %lld layouts evaluated, %lld fit; "
           "best %d (modelled, not measured):\n", q->model->name,
           (long long)dp_llm_params(q->model), (long long)q->model->seq, q->workers,
           q->workers ? "" : " (as many as the budget buys)", (long long)l->n_candidates,
           (long long)l->n_fit, l->n_plans);
    printf("%3s %-14s %5s %3s %3s %4s %5s %3s %5s %4s %5s %2s %6s %5s %10s %9s %8s %8s %8s %8s "
           "%10s %10s  %s\n", "#", "GPU", "N", "TP", "PP", "DP", "ZERO", "MB", "M", "ACC", "RC",
           "SP", "MEM", "MFU", "TOK/S", "ITER_MS", "COMP", "BUBBLE", "TP_MS", "DP_MS", "HOURS",
           "COST_USD", "SETTING");
    for (int i = 0; i < l->n_plans; i++) {
        const struct dp_plan *p = &l->plans[i];
        const struct dp_setting *s = &p->setting;
        printf("%3d %-14s %5d %3d %3d %4d %5s %3lld %5d %4d %5s %2s %6.1f %4.1f%% %10.0f %9.1f "
               "%8.1f %8.1f %8.1f %8.1f %10.1f %10.0f  %s --batch %lld\n", i + 1, s->gpu,
               s->workers, dp_setting_tp(s), dp_setting_pp(s), p->r.dp, shard_short(s->shard),
               (long long)p->micro_batch, dp_setting_microbatches(s), dp_setting_accum(s),
               s->recompute == DP_RECOMPUTE_NONE ? "-" : dp_recompute_name(s->recompute),
               s->seq_parallel ? "y" : "-", p->r.memory_gb, 100 * p->r.mfu, p->r.tokens_per_s,
               p->r.iteration_ms, p->r.compute_ms, p->r.bubble_ms, p->r.tp_ms,
               p->r.dp_ms + p->r.zero_ms, p->train_hours, p->cost_usd, s->id,
               (long long)p->micro_batch);
    }
    printf("\nMEM: GB per GPU (most loaded stage); M: micro-batches per pipeline flush; HOURS / "
           "COST: for %.3g tokens at the catalog's price (nan: none). `driple plan %s --setting "
           "ID --batch MB` shows one plan's breakdown.\n", q->tokens > 0 ? q->tokens : 1e9,
           q->model->name);
}

static int plan_list_json(const struct dp_plan_query *q, const struct dp_plan_list *l) {
    struct dp_jw *w = dp_jw_new();
    dp_jw_str(w, "model", q->model->name);
    dp_jw_int(w, "params", dp_llm_params(q->model));
    dp_jw_int(w, "seq", q->model->seq);
    dp_jw_int(w, "candidates", l->n_candidates);
    dp_jw_int(w, "fit", l->n_fit);
    dp_jw_array(w, "plans");
    for (int i = 0; i < l->n_plans; i++) {
        const struct dp_plan *p = &l->plans[i];
        dp_jw_object(w, NULL);
        dp_jw_str(w, "setting", p->setting.id);
        dp_jw_str(w, "gpu", p->setting.gpu);
        dp_jw_int(w, "workers", p->setting.workers);
        dp_jw_int(w, "tp", dp_setting_tp(&p->setting));
        dp_jw_int(w, "pp", dp_setting_pp(&p->setting));
        dp_jw_str(w, "shard", dp_shard_name(p->setting.shard));
        dp_jw_str(w, "recompute", dp_recompute_name(p->setting.recompute));
        dp_jw_bool(w, "seq_parallel", p->setting.seq_parallel);
        dp_jw_int(w, "microbatches", dp_setting_microbatches(&p->setting));
        dp_jw_int(w, "accum", dp_setting_accum(&p->setting));
        dp_jw_int(w, "micro_batch", p->micro_batch);
        dp_jw_num(w, "train_hours", p->train_hours);
        if (isnan(p->cost_usd)) dp_jw_null(w, "cost_usd");
        else dp_jw_num(w, "cost_usd", p->cost_usd);
        jw_result(w, &p->r);
        dp_jw_end(w);
    }
    dp_jw_end(w);
    return cmd_json_emit(w);
}

/* --validate: the planner on published runs, their median errors. */
static int plan_validate(const char *csv, const struct dp_gpu_catalog *cat, bool json) {
    struct dp_plan_check *rows = NULL;
    int n = 0, n_mfu = 0, n_tps = 0, n_fit = 0;
    struct dp_error err = {0};
    if (dp_plan_validate(csv, cat, &rows, &n, &err)) return cli_fail(&err);
    double *e_mfu = calloc((size_t)n + 1, sizeof *e_mfu), *e_tps = calloc((size_t)n + 1,
                                                                           sizeof *e_tps);
    if (!e_mfu || !e_tps) {
        free(e_mfu);
        free(e_tps);
        free(rows);
        fprintf(stderr, "driple: plan --validate: out of memory\n");
        return 1;
    }
    struct dp_jw *w = json ? dp_jw_new() : NULL;
    if (w) dp_jw_array(w, "rows");
    else
        printf("%-9s %-9s %-14s %4s %6s %3s %3s %8s %8s %7s %10s %10s %7s %7s  %s\n", "PAPER",
               "MODEL", "GPU", "N", "SEQ", "TP", "PP", "MFU_PUB", "MFU_MOD", "ERR_PT", "TOKS_PUB",
               "TOKS_MOD", "ERR_%", "MEM_GB", "SOURCE");
    for (int i = 0; i < n; i++) {
        const struct dp_plan_check *r = &rows[i];
        double em = 100 * (r->mfu - r->pub_mfu);
        double et = 100 * (r->tokens_per_gpu / r->pub_tokens_per_gpu - 1);
        if (!isnan(em)) e_mfu[n_mfu++] = fabs(em);
        if (!isnan(et)) e_tps[n_tps++] = fabs(et);
        n_fit += r->fits;
        if (w) {
            dp_jw_object(w, NULL);
            dp_jw_str(w, "paper", r->paper);
            dp_jw_str(w, "model", r->model);
            dp_jw_str(w, "gpu", r->gpu);
            dp_jw_int(w, "workers", r->workers);
            dp_jw_int(w, "seq", r->seq);
            dp_jw_num(w, "published_mfu", r->pub_mfu);
            dp_jw_num(w, "modelled_mfu", r->mfu);
            dp_jw_num(w, "published_tokens_per_s_per_gpu", r->pub_tokens_per_gpu);
            dp_jw_num(w, "modelled_tokens_per_s_per_gpu", r->tokens_per_gpu);
            dp_jw_num(w, "modelled_memory_gb", r->memory_gb);
            dp_jw_bool(w, "predicted_to_fit", r->fits);
            dp_jw_str(w, "source", r->source);
            dp_jw_end(w);
        } else {
            printf("%-9s %-9s %-14s %4d %6lld %3d %3d %7.1f%% %7.1f%% %+7.1f %10.0f %10.0f %+6.1f%% "
                   "%7.1f%s  %s\n", r->paper, r->model, r->gpu, r->workers, (long long)r->seq,
                   r->tp, r->pp, 100 * r->pub_mfu, 100 * r->mfu, em, r->pub_tokens_per_gpu,
                   r->tokens_per_gpu, et, r->memory_gb, r->fits ? "" : " OOM", r->source);
        }
    }
    double med_mfu = n_mfu ? cmd_median(e_mfu, n_mfu) : NAN;
    double med_tps = n_tps ? cmd_median(e_tps, n_tps) : NAN;
    int rc = 0;
    if (w) {
        dp_jw_end(w);
        dp_jw_int(w, "n_rows", n);
        dp_jw_num(w, "median_abs_mfu_error_points", med_mfu);
        dp_jw_num(w, "median_abs_throughput_error_pct", med_tps);
        dp_jw_int(w, "predicted_to_fit", n_fit);
        dp_jw_str(w, "fitted", "nothing: the simulator's constants as shipped");
        rc = cmd_json_emit(w);
    } else {
        printf("\n%d published runs, none fitted on (the simulator's constants as shipped): "
               "median |MFU error| %.1f points, median |tokens/s error| %.1f%%; %d of %d "
               "predicted to fit (all ran).\n", n, med_mfu, med_tps, n_fit, n);
    }
    free(e_mfu);
    free(e_tps);
    free(rows);
    return rc;
}

static const struct cli_opt plan_opts[] = {
    {"--gpus", "N", NULL, 1, DP_MAX_WORKERS, "GPUs to plan for", NULL},
    {"--budget-usd", "X", NULL, 1e-6, 1e12, "a budget in dollars instead of --gpus", NULL},
    {"--gpu-hours", "H", NULL, 1e-6, 1e12, "a budget in GPU-hours instead of --gpus", NULL},
    {"--gpu", "NAME[,NAME..]", NULL, 0, 0, "the GPU types to plan on (at most 8)", NULL},
    {"--system", "NAME", NULL, 0, 0, "a system of the systems catalog (DGX-A100, DGX-H100, ...)",
     NULL},
    {"--network", "NET", "the system's", 0, 0, "the network between machines", NULL},
    {"--precision", "bf16|mixed|fp8|tf32|fp32", "bf16 (mixed before Ampere)", 0, 0,
     "training precision", NULL},
    {"--tokens", "T", NULL, 1, 1e16, "tokens to train on (time and cost to train)", NULL},
    {"--samples", "N", NULL, 1, 1e14, "samples to train on", NULL},
    {"--global-batch", "B", "the search's", 1, 1 << 24, "the global batch in sequences", NULL},
    {"--seq", "S", "the model's", 1, 1 << 20, "sequence length", NULL},
    {"--batch", "B", "1", 1, 1 << 16, "micro-batch with --setting", NULL},
    {"--sort", "throughput|time|cost", "throughput", 0, 0, "how plans are ranked", NULL},
    {"--top", "K", "10", 1, 1000, "plans printed", NULL},
    {"--setting", "ID", NULL, 0, 0, "one plan by its setting id instead of a search", NULL},
    {"--catalog", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog", NULL},
    {"--hf-config", "CONFIG.json", NULL, 0, 0, "the model from its Hugging Face config", NULL},
    {"--no-flash", NULL, NULL, 0, 0, "attention without flash attention", NULL},
    {"--list", NULL, NULL, 0, 0, "list the LLM presets", NULL},
    {"--validate", NULL, NULL, 0, 0, "compare with the published runs (tools/llm_published.csv)",
     NULL},
    {"--json", NULL, NULL, 0, 0, "print the plans as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_plan_spec = {
    "plan", "searches tp x pp x dp x ZeRO x micro-batch x accumulation x recompute for an LLM",
    PLAN_USAGE, plan_opts, NULL};

int cmd_plan(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_plan_spec)) return c.rc;
    int64_t gpus_n = 0, seq = 0, gb = 0, top = 10, batch = 1;
    double budget = 0, hours = 0, tokens = 0, samples = 0;
    cli_int(&c, "--gpus", 1, DP_MAX_WORKERS, &gpus_n);
    cli_int(&c, "--seq", 1, 1 << 20, &seq);
    cli_int(&c, "--global-batch", 1, 1 << 24, &gb);
    cli_int(&c, "--top", 1, 1000, &top);
    cli_int(&c, "--batch", 1, 1 << 16, &batch);
    cli_double(&c, "--budget-usd", 1e-6, 1e12, &budget);
    cli_double(&c, "--gpu-hours", 1e-6, 1e12, &hours);
    cli_double(&c, "--tokens", 1, 1e16, &tokens);
    cli_double(&c, "--samples", 1, 1e14, &samples);
    const char *gpu = cli_value(&c, "--gpu"), *sys_name = cli_value(&c, "--system");
    const char *net = cli_value(&c, "--network"), *prec = cli_value(&c, "--precision");
    const char *sort = cli_value(&c, "--sort"), *setting = cli_value(&c, "--setting");
    const char *catalog = cli_value(&c, "--catalog"), *hf = cli_value(&c, "--hf-config");
    bool json = cli_flag(&c, "--json"), no_flash = cli_flag(&c, "--no-flash");
    bool list = cli_flag(&c, "--list"), validate = cli_flag(&c, "--validate");
    const char *model_name = hf ? hf : cli_positional(&c, 0);
    const char *csv = validate ? cli_positional(&c, 0) : NULL;
    struct dp_gpu_catalog *cat = NULL;
    struct dp_systems *systems = NULL;
    struct dp_plan_list *plans = NULL;
    struct dp_error err = {0};
    int rc = 0;
    if (c.bad || !cli_check_unused(&c)) {
        rc = cli_usage("plan", PLAN_USAGE, "bad arguments");
        goto done;
    }
    if (list) {
        list_presets();
        goto done;
    }
    if (dp_gpu_catalog_load_default(catalog, &cat, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (validate) {
        rc = plan_validate(csv, cat, json);
        goto done;
    }
    if (!model_name) {
        rc = cli_usage("plan", PLAN_USAGE, "which model? (a preset: driple plan --list, or a "
                       "config.json)");
        goto done;
    }
    struct dp_llm m;
    if ((rc = plan_model(model_name, seq, &m))) goto done;
    if (setting) {
        rc = plan_one(&m, setting, cat, batch, no_flash, json);
        goto done;
    }
    if (!gpu) {
        rc = cli_usage("plan", PLAN_USAGE, "--gpu NAME[,NAME..]: which GPU types?");
        goto done;
    }
    if (!gpus_n && !(budget > 0) && !(hours > 0)) {
        rc = cli_usage("plan", PLAN_USAGE, "how many GPUs? --gpus N, --budget-usd X or "
                       "--gpu-hours H");
        goto done;
    }
    if (tokens > 0 && samples > 0) {
        rc = cli_usage("plan", PLAN_USAGE, "--tokens or --samples, not both");
        goto done;
    }
    const struct dp_gpu *gl[MAX_GPUS];
    struct dp_plan_query q = {0};
    if ((rc = plan_gpus(gpu, cat, gl, &q.n_gpus))) goto done;
    q.model = &m;
    q.gpus = gl;
    q.workers = (int)gpus_n;
    q.budget_usd = budget;
    q.gpu_hours = hours;
    q.global_batch = gb;
    q.tokens = samples > 0 ? samples * (double)m.seq : tokens;
    q.top = (int)top;
    q.flash_off = no_flash;
    q.base.sync = DP_SYNC_ALLREDUCE;
    q.base.framework = DP_FW_PYTORCH;
    q.base.network = DP_NET_IB_HDR;
    q.sort = budget > 0 || hours > 0 ? DP_PLAN_SORT_TIME : DP_PLAN_SORT_THROUGHPUT;
    if (sort) {
        if (!strcmp(sort, "throughput")) q.sort = DP_PLAN_SORT_THROUGHPUT;
        else if (!strcmp(sort, "time")) q.sort = DP_PLAN_SORT_TIME;
        else if (!strcmp(sort, "cost")) q.sort = DP_PLAN_SORT_COST;
        else {
            rc = cli_usage("plan", PLAN_USAGE, "--sort '%s': expected throughput, time or cost",
                           sort);
            goto done;
        }
    }
    if (net && dp_network_lookup(net, "--network", &q.base.network, &err)) {
        rc = cli_usage("plan", PLAN_USAGE, "%s", err.msg);
        goto done;
    }
    if (prec && dp_precision_lookup(prec, "--precision", &q.base.precision, &err)) {
        rc = cli_usage("plan", PLAN_USAGE, "%s", err.msg);
        goto done;
    }
    for (int i = 0; i < q.n_gpus && prec; i++) {
        struct dp_setting probe = q.base;
        snprintf(probe.gpu, sizeof probe.gpu, "%s", gl[i]->name);
        if (dp_setting_check_gpu(&probe, gl[i], NULL, &err)) {
            fprintf(stderr, "driple: plan: %s\n", err.msg);
            rc = 2;
            goto done;
        }
    }
    if (sys_name) {
        if (dp_systems_load_default(NULL, cat, &systems, &err) ||
            dp_system_lookup(systems, sys_name, "--system", &q.system, &err)) {
            rc = cli_usage("plan", PLAN_USAGE, "%s", err.msg);
            goto done;
        }
    }
    if (dp_plan_search(&q, &plans, &err)) {
        fprintf(stderr, "driple: plan: %s\n", err.msg);
        rc = err.status == DP_ERR_INVALID ? 2 : 1;
        goto done;
    }
    if (json) rc = plan_list_json(&q, plans);
    else if (!plans->n_plans)
        printf("%s: none of the %lld layouts on these GPUs fits in memory%s (modelled)\n",
               m.name, (long long)plans->n_candidates,
               budget > 0 || hours > 0 ? " within the budget" : "");
    else print_plans(&q, plans);
done:
    dp_plan_list_free(plans);
    dp_systems_free(systems);
    dp_gpu_catalog_free(cat);
    cli_done(&c);
    return rc;
}
