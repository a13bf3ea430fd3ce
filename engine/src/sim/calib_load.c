/* calib_load.c: reading the published throughput tables into calibration rows: each row's
 * catalog GPU, setting, zoo graph and workload (one per model, precision, optimizer and batch,
 * shared by the rows that need it), and the simulation keys rows share. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"
#include "dp/systems.h"
#include "dp/zoo.h"
#include "sim/calib_impl.h"

#define LINE_MAX_LEN 16384
#define TABLE_MAX_BYTES ((size_t)1 << 26) /* 64 MiB; the published table is 390 KB */

/* Splits one CSV line (quotes allowed, "" inside them) into at most max fields, in place;
 * returns the count. */
static int split_csv(char *line, char **f, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        if (*p == '"') {
            char *w = ++p;
            f[n++] = w;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') p++;
                *w++ = *p++;
            }
            if (*p == '"') p++;
            *w = '\0';
            if (*p == ',') *p++ = '\0';
            else break;
        } else {
            f[n++] = p;
            p += strcspn(p, ",\r\n");
            if (*p == ',') *p++ = '\0';
            else {
                *p = '\0';
                break;
            }
        }
    }
    return n;
}

/* The table's model names that differ from the zoo's: Lambda's and DeepLearningExamples'
 * Transformer-XL base, DeepLearningExamples' BERT-large SQuAD fine-tuning (its pre-training
 * phases are the zoo's bert_large). */
static const char *zoo_name(const char *model, const char *notes) {
    if (!strcmp(model, "transformerxlbase") || !strcmp(model, "transformer_xl"))
        return "transformer_xl_base";
    if (!strcmp(model, "bert_large") && strstr(notes, "SQuAD")) return "bert_large_squad";
    return model;
}

/* The integer after `key` in text (0: none). */
static long after(const char *text, const char *key) {
    const char *p = strstr(text, key);
    return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

/* A DeepLearningExamples row's gradient accumulation, from what its notes quote of the table:
 * the global batch over the micro-batches of all GPUs (TensorFlow's BERT), or the accumulated
 * batch per GPU over the micro-batch (PyTorch's BERT); 1 when neither is given. */
static int dle_accum(const char *notes, int batch, int gpus) {
    long global = after(notes, "global batch \""), per = after(notes, "\"Batch size / GPU\" = \"");
    long a = global > 0 ? global / ((long)batch * gpus) : per > 0 ? per / batch : 1;
    return a >= 1 && a <= 1 << 16 ? (int)a : 1;
}

/* The machine a row ran on (dp_calib_row.system). */
static void row_system(struct dp_calib_row *r, const char *notes) {
    const char *sys = r->dle || strstr(r->gpu, "DGX-1") || strstr(notes, "DGX-1") ? "DGX-1"
                      : strstr(r->gpu, "AWS") || strstr(notes, "AWS")        ? "AWS p2.8xlarge"
                      : strstr(notes, "GCE") || strstr(notes, "Compute Engine")
                          ? "Google Compute Engine"
                          : NULL;
    if (sys) snprintf(r->system, sizeof r->system, "%s", sys);
    else snprintf(r->system, sizeof r->system, "Lambda %.20s", r->catalog);
}

/* Notes a row the simulator cannot ask (c->skipped: "model (n rows)" per reason). */
static void skip_row(struct dp_calib *c, const char *model, const char *why) {
    char item[96];
    snprintf(item, sizeof item, "%s (%s)", model, why);
    c->n_skipped++;
    if (strstr(c->skipped, item)) return;
    size_t len = strlen(c->skipped);
    snprintf(c->skipped + len, sizeof c->skipped - len, "%s%s", len ? ", " : "", item);
}

/* Lambda's Transformer-XL benchmark starts DeepLearningExamples' train.py once per GPU without
 * --multi_gpu ddp (its logs print multi_gpu=None), so every process trains its own copy and
 * exchanges no gradient; the published tokens/s is the sum of the processes' own. */
static bool runs_unsynced(const char *model) { return !strcmp(model, "transformerxlbase"); }

/* Lambda's 2020 RTX 2080 Ti BERT-large "FP16" runs on 2, 4 and 8 GPUs did not run as their
 * summary rows say. Their configurations (scripts/config/config_pytorch_{2,4,8}x2080Ti*_trt*.sh
 * at lambdal/deeplearning-benchmark f0896d6c) pass run_squad.sh's arguments one place off: the
 * GPU count where the precision goes, 1 where the GPU count goes. So every one of those runs
 * was one GPU in fp32 (their logs print "n_gpu: 1, distributed training: False, 16-bits
 * training: False"), and the published figure is that one GPU's sequences/s at batch 2
 * (run_squad.sh: tqdm's it/s x its GPU count, 1, x the batch). Such a row is simulated as the
 * run was made. */
static bool ran_one_gpu_fp32(const struct dp_calib_row *r, const char *source, const char *prec) {
    return r->gpus > 1 && !strcmp(r->model, "bert_large_squad") && !strcmp(r->gpu, "RTX2080Ti") &&
           strstr(prec, "16") && strstr(source, "lambdal/deeplearning-benchmark@f0896d6c");
}

/* Lambda's tf_cnn_benchmarks runs that used XLA auto-clustering (TF_XLA_FLAGS=
 * --tf_xla_auto_jit=2): a row names its raw log directory (logs/<dir> in its source or notes,
 * LambdaColdStorage/lambda-tensorflow-benchmark at e086e0e7), and every log of the *_XLA*
 * directories the rows cite prints TensorFlow's mark_for_compilation_pass warning, which only
 * an XLA run prints; so does every log of 7502-A100-PCIE-40GB.logs, though its name does not
 * say so. The other directories' logs (Quadro RTX 6000, GTX 1080 Ti, V100-SXM3, the V100-SXM2
 * run without _XLA) never print it. */
static bool ran_xla(const char *text) {
    for (const char *p = text; (p = strstr(p, "logs/")); p += 5) {
        size_t n = strcspn(p + 5, "/ ;,)\"");
        const char *x = p + 5;
        for (const char *q = x; q + 4 <= x + n; q++)
            if (!strncmp(q, "_XLA", 4) && (q[4] == '_' || q[4] == '.')) return true;
        if (n == 24 && !strncmp(x, "7502-A100-PCIE-40GB.logs", n)) return true;
    }
    return false;
}

void dp_calib_free(struct dp_calib *c) {
    if (!c) return;
    dp_systems_free(c->systems);
    for (int i = 0; i < c->n_work; i++) dp_sim_workload_free(c->work[i].w);
    free(c->work);
    free(c->keys);
    free(c->prof);
    free(c->prof_owner);
    free(c->rows);
    free(c);
}

int dp_calib_n_rows(const struct dp_calib *c) { return c ? c->n : 0; }
int dp_calib_n_skipped(const struct dp_calib *c) { return c ? c->n_skipped : 0; }
const char *dp_calib_skipped(const struct dp_calib *c) { return c ? c->skipped : ""; }
struct dp_calib_row *dp_calib_row(struct dp_calib *c, int i) {
    return c && i >= 0 && i < c->n ? &c->rows[i] : NULL;
}

static bool grow(void **v, int *cap, int n, size_t size) {
    if (n < *cap) return true;
    int nc = *cap ? 2 * *cap : 64;
    void *p = realloc(*v, (size_t)nc * size);
    if (!p) return false;
    *v = p;
    *cap = nc;
    return true;
}

/* The column of each needed header name, or -1. */
enum { C_MODEL, C_FRAMEWORK, C_GPU, C_NUM_GPUS, C_UPDATE, C_NETWORK, C_PRECISION, C_BATCH,
       C_THROUGHPUT, C_UNIT, C_NOTES, C_COUNT, C_SOURCE = C_COUNT, C_MACHINES, C_ALL };
/* The first C_COUNT are required (but network: DeepLearningExamples' table has none, its
 * machines are DGX-1s); source and machines are optional. Each column's name in the Lambda and
 * TensorFlow tables, then in DeepLearningExamples' (num_gpus: its GPUs per machine). */
static const char *const col_names[C_ALL][2] = {
    {"model", NULL}, {"framework", NULL}, {"gpu", NULL}, {"num_gpus", "gpus_per_machine"},
    {"variable_update", "sync"}, {"network", NULL}, {"precision", NULL},
    {"batch_size_per_gpu", "batch_per_gpu"}, {"throughput", NULL}, {"unit", NULL},
    {"notes", NULL}, {"source_url_or_repo_path", "source"}, {"machines", NULL}};

/* Builds row r's setting from its table cells. */
static enum dp_status row_setting(struct dp_calib_row *r, const struct dp_gpu *g, char **f,
                                  const int *col, struct dp_error *err) {
    struct dp_setting *s = &r->setting;
    memset(s, 0, sizeof *s);
    snprintf(s->gpu, sizeof s->gpu, "%s", g->name);
    s->workers = r->replicas > 1 ? 1 : r->gpus;
    s->machines = r->machines;
    s->accum = r->accum;
    s->framework = strstr(f[col[C_FRAMEWORK]], "pytorch") ? DP_FW_PYTORCH : DP_FW_TENSORFLOW;
    s->xla = r->xla;
    const char *prec = f[col[C_PRECISION]];
    s->precision = (strstr(prec, "16") || strstr(prec, "mixed")) && !r->ran_fp32 ? DP_PREC_MIXED
                                                                                  : DP_PREC_FP32;
    if (!strcmp(f[col[C_UPDATE]], "parameter_server")) {
        /* tf_cnn_benchmarks' parameter server inside one machine: the host CPU over PCIe */
        s->sync = DP_SYNC_PS;
        s->ps = 1;
        s->network = DP_NET_PCIE;
    } else {
        /* NCCL: NVLink where the row says so or the GPU is an SXM module, else PCIe */
        s->sync = DP_SYNC_ALLREDUCE;
        bool nvl = (col[C_NETWORK] >= 0 && strstr(f[col[C_NETWORK]], "NVLink")) ||
                   g->form_factor == DP_FORM_SXM;
        s->network = nvl && g->nvlink_gbps > 0 ? DP_NET_NVLINK : DP_NET_PCIE;
        /* DGX-1s between each other: 4 x EDR InfiniBand each */
        if (r->machines > 1) s->network = DP_NET_IB_EDR;
    }
    /* DeepLearningExamples' image models read real data through DALI */
    if (r->dle && strstr(f[col[C_NOTES]], "DALI")) s->loader = DP_LOADER_DALI;
    return dp_setting_finish(s, err);
}

/* The workload of (zoo model, precision, optimizer, batch), built once. */
static int workload_of(struct dp_calib *c, const char *zoo, enum dp_precision prec,
                       enum dp_optimizer opt, int batch, int input, struct dp_error *err) {
    for (int i = 0; i < c->n_work; i++)
        if (!strcmp(c->work[i].zoo, zoo) && c->work[i].prec == prec && c->work[i].opt == opt &&
            c->work[i].batch == batch && c->work[i].input == input)
            return i;
    if (!grow((void **)&c->work, &c->cap_work, c->n_work, sizeof *c->work)) {
        dp_error_set(err, DP_ERR_NOMEM, "out of memory");
        return -1;
    }
    struct calib_work *wk = &c->work[c->n_work];
    memset(wk, 0, sizeof *wk);
    snprintf(wk->zoo, sizeof wk->zoo, "%s", zoo);
    wk->prec = prec;
    wk->opt = opt;
    wk->batch = batch;
    wk->input = input;
    struct dp_zoo_opts zo;
    dp_zoo_opts_default(&zo);
    zo.batch = batch;
    zo.input = input;
    zo.optimizer = opt;
    zo.precision = prec;
    struct dp_graph *g = NULL;
    if (dp_zoo_build(zoo, &zo, &g, err)) return -1;
    enum dp_status st = dp_sim_workload_init(g, batch, &wk->w, err);
    dp_graph_free(g);
    if (st) return -1;
    return c->n_work++;
}

/* Rows that simulate the same workload, GPU and setting share a key. */
static int key_of(struct dp_calib *c, int work, const struct dp_gpu *gpu,
                  const struct dp_system *sys, const struct dp_setting *s,
                  struct dp_error *err) {
    for (int i = 0; i < c->n_keys; i++)
        if (c->keys[i].work == work && c->keys[i].gpu == gpu &&
            dp_setting_same_cluster(&c->keys[i].setting, s) && c->keys[i].setting.xla == s->xla)
            return i;
    if (!grow((void **)&c->keys, &c->cap_keys, c->n_keys, sizeof *c->keys)) {
        dp_error_set(err, DP_ERR_NOMEM, "out of memory");
        return -1;
    }
    struct calib_key *k = &c->keys[c->n_keys];
    memset(k, 0, sizeof *k);
    k->work = work;
    k->gpu = gpu;
    k->system = sys;
    k->setting = *s;
    k->prof = -1;
    for (int i = 0; i < c->n_keys && k->prof < 0; i++) {
        const struct calib_key *o = &c->keys[i];
        if (o->work == work && o->gpu == gpu && o->setting.precision == s->precision &&
            o->setting.framework == s->framework && o->setting.xla == s->xla &&
            o->setting.loader == s->loader)
            k->prof = o->prof;
    }
    if (k->prof < 0) k->prof = c->n_prof++;
    return c->n_keys++;
}

/* Reads one table into c. */
static enum dp_status read_table(struct dp_calib *c, const char *file, struct dp_error *err) {
    /* the one bounded read ("-": standard input), then line by line from memory */
    static const struct dp_read_spec spec = {"throughput table", TABLE_MAX_BYTES, true, NULL, NULL};
    const char *path = dp_file_name(file);
    char *text = NULL;
    size_t len = 0;
    enum dp_status st = dp_file_read(file, &spec, &text, &len, err);
    if (st) return st;
    FILE *f = len ? fmemopen(text, len, "r") : NULL;
    char *line = malloc(LINE_MAX_LEN);
    int lineno = 0, col[C_ALL];
    if ((len && !f) || !line) {
        if (f) fclose(f);
        free(line);
        free(text);
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
    }
    for (int i = 0; i < C_ALL; i++) col[i] = -1;
    while (f && fgets(line, LINE_MAX_LEN, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%d: line longer than %d characters", path,
                              lineno, LINE_MAX_LEN - 2);
            break;
        }
        char *fld[32];
        int nf = split_csv(line, fld, 32);
        if (lineno == 1) {
            for (int i = 0; i < C_ALL; i++)
                for (int j = 0; j < nf; j++)
                    for (int a = 0; a < 2; a++)
                        if (col_names[i][a] && !strcmp(fld[j], col_names[i][a])) col[i] = j;
            for (int i = 0; i < C_COUNT && !st; i++)
                if (col[i] < 0 && !(i == C_NETWORK && col[C_MACHINES] >= 0))
                    st = dp_error_set(err, DP_ERR_INVALID,
                                      "%s:1: no column \"%s\": not a published throughput table "
                                      "(../shared/calibration/README.md)", path, col_names[i][0]);
            if (st) break;
            continue;
        }
        if (nf < 1 || !*fld[0]) continue;
        int need = 0;
        for (int i = 0; i < C_ALL; i++)
            if (col[i] >= need) need = col[i] + 1;
        if (nf < need) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:%d: %d fields, expected %d", path, lineno,
                              nf, need);
            break;
        }
        if (!grow((void **)&c->rows, &c->cap, c->n, sizeof *c->rows)) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s:%d: out of memory", path, lineno);
            break;
        }
        struct dp_calib_row *r = &c->rows[c->n];
        memset(r, 0, sizeof *r);
        snprintf(r->file, sizeof r->file, "%s", path);
        r->line = lineno;
        snprintf(r->model, sizeof r->model, "%s", fld[col[C_MODEL]]);
        snprintf(r->gpu, sizeof r->gpu, "%s", fld[col[C_GPU]]);
        snprintf(r->unit, sizeof r->unit, "%s", fld[col[C_UNIT]]);
        r->real_data = strstr(fld[col[C_NOTES]], "data=real") != NULL;
        char *end;
        errno = 0;
        long gpus = strtol(fld[col[C_NUM_GPUS]], &end, 10), machines = 1;
        bool bad = end == fld[col[C_NUM_GPUS]] || *end || gpus < 1 || gpus > 64;
        if (col[C_MACHINES] >= 0) {
            machines = strtol(fld[col[C_MACHINES]], &end, 10);
            bad = bad || end == fld[col[C_MACHINES]] || *end || machines < 1 || machines > 64;
        }
        long batch = strtol(fld[col[C_BATCH]], &end, 10);
        bad = bad || end == fld[col[C_BATCH]] || *end || batch < 1 || batch > (1 << 20);
        r->measured = strtod(fld[col[C_THROUGHPUT]], &end);
        bad = bad || end == fld[col[C_THROUGHPUT]] || *end || errno ||
              !(r->measured > 0 && isfinite(r->measured));
        if (bad) {
            st = dp_error_set(err, DP_ERR_INVALID,
                              "%s:%d: bad num_gpus \"%s\" (1..64), machines (1..64), "
                              "batch_size_per_gpu \"%s\" (1..1048576) or throughput \"%s\" "
                              "(> 0)", path, lineno,
                              fld[col[C_NUM_GPUS]], fld[col[C_BATCH]], fld[col[C_THROUGHPUT]]);
            break;
        }
        const char *notes = fld[col[C_NOTES]];
        r->dle = col[C_MACHINES] >= 0;
        r->machines = (int)machines;
        r->gpus = (int)(gpus * machines);
        snprintf(r->zoo, sizeof r->zoo, "%s", zoo_name(r->model, notes));
        r->accum = r->dle ? dle_accum(notes, (int)batch, r->gpus) : 1;
        r->input = r->dle && strstr(r->zoo, "bert") ? (int)after(notes, "seq_len=") : 0;
        if (ran_one_gpu_fp32(r, col[C_SOURCE] >= 0 ? fld[col[C_SOURCE]] : "",
                             fld[col[C_PRECISION]])) {
            r->ran_fp32 = true;
            r->gpus = 1;
        }
        r->replicas = runs_unsynced(r->model) ? r->gpus : 1;
        r->xla = !strstr(fld[col[C_FRAMEWORK]], "pytorch") &&
                 (ran_xla(notes) || (col[C_SOURCE] >= 0 && ran_xla(fld[col[C_SOURCE]])) ||
                  (r->dle && (strstr(notes, "with XLA") || strstr(notes, "XLA on"))));
        r->batch = (int)batch;
        const struct dp_gpu *g = dp_gpu_find(c->cat, r->gpu);
        const struct dp_zoo_info *zi = dp_zoo_find(r->zoo);
        /* DeepLearningExamples' table names models the zoo lacks, and Transformer-big's batch
         * in tokens: left out, and counted */
        if (r->dle && g && (!zi || strstr(notes, "in TOKENS"))) {
            skip_row(c, r->model, zi ? "batch in tokens" : "not in the zoo");
            continue;
        }
        if (!g || !zi) {
            st = dp_error_set(err, DP_ERR_NOT_FOUND, "%s:%d: %s \"%s\" is not in %s", path,
                              lineno, g ? "model" : "GPU", g ? r->model : r->gpu,
                              g ? "the zoo" : c->cat->path);
            break;
        }
        snprintf(r->catalog, sizeof r->catalog, "%s", g->name);
        row_system(r, notes);
        if (strstr(r->unit, "token"))
            r->tokens = (double)zi->token_streams * (r->input > 0 ? r->input : zi->default_input);
        if ((st = row_setting(r, g, fld, col, err))) {
            char pre[300];
            snprintf(pre, sizeof pre, "%s:%d", path, lineno);
            dp_error_prefix(err, pre);
            break;
        }
        bool images = !strcmp(zi->input_kind, "image");
        enum dp_optimizer opt = r->setting.framework == DP_FW_TENSORFLOW ? DP_OPT_SGD
                                : images                                 ? DP_OPT_MOMENTUM
                                                                         : DP_OPT_ADAM;
        r->optimizer = opt;
        /* DeepLearningExamples' BERT trains with LAMB (apex's fused LAMB: Adam's two slots) */
        int work = workload_of(c, r->zoo, r->setting.precision, opt, r->batch, r->input, err);
        const struct dp_system *sys = r->dle && c->systems ? dp_system_find(c->systems, "DGX1")
                                                           : NULL;
        if (work < 0 || (r->key = key_of(c, work, g, sys, &r->setting, err)) < 0) {
            char pre[300];
            snprintf(pre, sizeof pre, "%s:%d", path, lineno);
            dp_error_prefix(err, pre);
            st = err ? err->status : DP_ERR_INVALID;
            break;
        }
        r->gpu_memory_gb = g->memory_gb / (g->devices > 1 ? g->devices : 1);
        c->n++;
    }
    free(line);
    if (f) fclose(f);
    free(text);
    return st;
}

enum dp_status dp_calib_load(const char *const *paths, int n_paths,
                             const struct dp_gpu_catalog *cat, struct dp_calib **out,
                             struct dp_error *err) {
    struct dp_calib *c = calloc(1, sizeof *c);
    if (!c) return dp_error_set(err, DP_ERR_NOMEM, "calibrate: out of memory");
    c->cat = cat;
    /* the DGX-1's fabric and NICs for DeepLearningExamples' rows; without the catalog, a
     * generic machine of the GPU */
    struct dp_error ignored = {0};
    if (dp_systems_load_default(NULL, cat, &c->systems, &ignored)) c->systems = NULL;
    enum dp_status st = DP_OK;
    for (int i = 0; i < n_paths && !st; i++) st = read_table(c, paths[i], err);
    if (!st && !c->n)
        st = dp_error_set(err, DP_ERR_INVALID, "%s: no rows",
                          n_paths ? dp_file_name(paths[0]) : "calibrate");
    if (!st && (!(c->prof = calloc((size_t)c->n_prof, sizeof *c->prof)) ||
                !(c->prof_owner = calloc((size_t)c->n_prof, sizeof *c->prof_owner))))
        st = dp_error_set(err, DP_ERR_NOMEM, "calibrate: out of memory");
    if (st) {
        dp_calib_free(c);
        return st;
    }
    *out = c;
    return DP_OK;
}
