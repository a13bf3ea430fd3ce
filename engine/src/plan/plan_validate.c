/* plan_validate.c: the planner against published training runs (tools/llm_published.csv): each
 * row's model and layout read, evaluated by the closed form with nothing fitted to the rows, its
 * modelled MFU, HFU, tokens/s per GPU and memory set beside the published figures. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"
#include "dp/plan.h"
#include "dp/shipped.h"

#define N_COLS 21
enum col {
    C_PAPER, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_FFN, C_VOCAB, C_SEQ, C_GPU, C_WORKERS, C_TP,
    C_PP, C_MICRO, C_ACCUM, C_SHARD, C_RECOMPUTE, C_PRECISION, C_MFU, C_HFU, C_TPS, C_SOURCE
};
static const char *const col_names[N_COLS] = {
    "paper", "model", "layers", "hidden", "heads", "ffn", "vocab", "seq", "gpu", "workers", "tp",
    "pp", "micro_batch", "accum", "shard", "recompute", "precision", "mfu_pct", "hfu_pct",
    "tokens_per_s_per_gpu", "source"};

/* Splits line (modified in place) at commas into N_COLS fields; false when the count differs. */
static bool split(char *line, char **f) {
    int n = 0;
    for (char *p = line;; p++) {
        if (n == N_COLS) return false;
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p = '\0';
    }
    return n == N_COLS;
}

static bool num(const char *s, double *out) {
    if (!*s) {
        *out = NAN;
        return true;
    }
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return !errno && !*end && isfinite(*out);
}

static enum dp_status row(char **f, const char *name, int line, const struct dp_gpu_catalog *cat,
                          struct dp_plan_check *c, struct dp_error *err) {
    double v[N_COLS];
    for (int i = C_LAYERS; i <= C_TPS; i++) {
        if (i == C_GPU || i == C_SHARD || i == C_RECOMPUTE || i == C_PRECISION) continue;
        bool optional = i >= C_MFU;
        if (!num(f[i], &v[i]) || (!optional && (isnan(v[i]) || v[i] < 1 || v[i] != floor(v[i]))))
            return dp_error_set(err, DP_ERR_PARSE, "%s:%d: %s '%s': expected %s", name, line,
                                col_names[i], f[i], optional ? "a number or nothing"
                                                             : "a positive integer");
    }
    memset(c, 0, sizeof *c);
    snprintf(c->paper, sizeof c->paper, "%s", f[C_PAPER]);
    snprintf(c->model, sizeof c->model, "%s", f[C_MODEL]);
    snprintf(c->source, sizeof c->source, "%s", f[C_SOURCE]);
    const struct dp_gpu *g = dp_gpu_find(cat, f[C_GPU]);
    if (!g) return dp_error_set(err, DP_ERR_PARSE, "%s:%d: gpu '%s': not in the catalog", name,
                                line, f[C_GPU]);
    snprintf(c->gpu, sizeof c->gpu, "%s", g->name);
    /* a GPT-style decoder (MPT's layout: LayerNorm, GELU, learned positions, tied output) */
    struct dp_llm m = {0};
    snprintf(m.name, sizeof m.name, "%s", f[C_MODEL]);
    m.layers = (int64_t)v[C_LAYERS];
    m.hidden = (int64_t)v[C_HIDDEN];
    m.heads = m.kv_heads = (int64_t)v[C_HEADS];
    m.head_dim = m.hidden / m.heads;
    m.ffn = (int64_t)v[C_FFN];
    m.vocab = (int64_t)v[C_VOCAB];
    m.seq = m.max_pos = (int64_t)v[C_SEQ];
    m.pos = DP_LLM_POS_LEARNED;
    m.tied = m.final_norm = true;
    m.norms_per_layer = 2;
    struct dp_setting s = {0};
    snprintf(s.gpu, sizeof s.gpu, "%s", g->name);
    s.sync = DP_SYNC_ALLREDUCE;
    s.framework = DP_FW_PYTORCH;
    s.workers = (int)v[C_WORKERS];
    s.network = s.workers <= DP_DEFAULT_GPUS_PER_MACHINE
                    ? (dp_gpu_has_nvlink(g) ? DP_NET_NVLINK : DP_NET_PCIE) : DP_NET_IB_HDR;
    s.tp = (int)v[C_TP];
    s.pp = (int)v[C_PP];
    s.accum = s.pp > 1 ? 1 : (int)v[C_ACCUM];
    s.microbatches = s.pp > 1 ? (int)v[C_ACCUM] : 1;
    enum dp_status st;
    if (!dp_shard_parse(f[C_SHARD], &s.shard) || !dp_recompute_parse(f[C_RECOMPUTE], &s.recompute) ||
        !dp_precision_parse(f[C_PRECISION], &s.precision))
        return dp_error_set(err, DP_ERR_PARSE, "%s:%d: shard '%s', recompute '%s' or precision "
                            "'%s' unknown", name, line, f[C_SHARD], f[C_RECOMPUTE],
                            f[C_PRECISION]);
    if ((st = dp_setting_finish(&s, err))) {
        dp_error_prefix(err, name);
        return st;
    }
    struct dp_plan_opts o = {(int64_t)v[C_MICRO], false, NULL};
    struct dp_plan_result r;
    if ((st = dp_plan_eval(&m, &s, g, NULL, &o, &r, err))) return st;
    c->workers = s.workers;
    c->tp = s.tp;
    c->pp = s.pp;
    c->seq = m.seq;
    c->micro_batch = o.micro_batch;
    c->pub_mfu = v[C_MFU] / 100;
    c->pub_hfu = v[C_HFU] / 100;
    c->pub_tokens_per_gpu = v[C_TPS];
    c->mfu = r.mfu;
    c->hfu = r.hfu;
    c->tokens_per_gpu = r.tokens_per_s / s.workers;
    c->memory_gb = r.memory_gb;
    c->fits = !r.oom;
    return DP_OK;
}

enum dp_status dp_plan_validate(const char *path, const struct dp_gpu_catalog *cat,
                                struct dp_plan_check **out, int *n, struct dp_error *err) {
    char found[4096];
    enum dp_status st;
    if (!path) {
        if ((st = dp_shipped_path("tools/llm_published.csv", NULL, found, sizeof found, err)))
            return st;
        path = found;
    }
    static const struct dp_read_spec spec = {"published-runs CSV", 4 << 20, true, NULL, NULL};
    char *text = NULL;
    size_t len = 0;
    if ((st = dp_file_read(path, &spec, &text, &len, err))) return st;
    struct dp_plan_check *rows = NULL;
    int n_rows = 0, cap = 0, line = 0;
    bool header = false;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        line++; /* blank lines are skipped by strtok: numbers may undercount them */
        if (l[0] == '#' || !l[0]) continue;
        char *f[N_COLS];
        if (!split(l, f)) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: expected %d comma-separated fields",
                              path, line, N_COLS);
            goto fail;
        }
        if (!header) {
            for (int i = 0; i < N_COLS; i++)
                if (strcmp(f[i], col_names[i])) {
                    st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: header field %d is '%s', "
                                      "expected '%s'", path, line, i + 1, f[i], col_names[i]);
                    goto fail;
                }
            header = true;
            continue;
        }
        if (n_rows == cap) {
            cap = cap ? 2 * cap : 32;
            struct dp_plan_check *r = realloc(rows, (size_t)cap * sizeof *r);
            if (!r) {
                st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
                goto fail;
            }
            rows = r;
        }
        if ((st = row(f, path, line, cat, &rows[n_rows], err))) goto fail;
        n_rows++;
    }
    if (!header) {
        st = dp_error_set(err, DP_ERR_PARSE, "%s: no header line", path);
        goto fail;
    }
    free(text);
    *out = rows;
    *n = n_rows;
    return DP_OK;
fail:
    free(text);
    free(rows);
    return st;
}
