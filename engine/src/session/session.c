/* session.c: the what-if session (dp/session.h): its files, the workload, which inspector
 * serves a setting, predictions through the cached embeddings, and cached simulations. */
#include "session_impl.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/ops.h"
#include "dp/zoo.h"

#define EMB_CACHE_MAX 64
#define SIM_CACHE_MAX 512
#define SIM_ITERATIONS 0 /* the simulator's default (20): about 1.5 ms for ResNet-50 */

void sess_copy(char *dst, size_t n, const char *src) {
    if (n) snprintf(dst, n, "%.*s", (int)(n - 1), src ? src : "");
}

const char *dp_pred_source_name(enum dp_pred_source s) {
    switch (s) {
    case DP_SOURCE_TRAINED: return "trained";
    case DP_SOURCE_TRANSFERRED: return "transferred";
    case DP_SOURCE_NEAREST: return "nearest (extrapolated)";
    case DP_SOURCE_SETTING_AWARE: return "setting-aware";
    default: return "none";
    }
}

/* ---- files --------------------------------------------------------------------------------- */

enum dp_status dp_session_open(const struct dp_session_opts *o, struct dp_session **out,
                               struct dp_error *err) {
    struct dp_session *ss = calloc(1, sizeof *ss);
    if (!ss) return dp_error_set(err, DP_ERR_NOMEM, "session: out of memory");
    enum dp_status st;
    /* The list is read against the catalog, as simulate and the explorer read it: a setting on a
     * GPU the catalog lacks is refused naming its JSON path (predict printed figures for one),
     * and the GPUs take their catalog names, so that "the same cluster" compares names. */
    if ((st = dp_gpu_catalog_load_default(o ? o->gpus : NULL, &ss->cat, err)) ||
        (st = dp_settings_load_default(o ? o->settings : NULL, ss->cat, &ss->list, err)) ||
        (st = dp_op_weights_load_default(o ? o->weights : NULL, &ss->weights, err))) {
        dp_session_free(ss);
        return st;
    }
    ss->params = ss->epoch_samples = ss->price = NAN;
    if ((st = sess_sa_open(ss, o ? o->sa : NULL, err))) {
        dp_session_free(ss);
        return st;
    }
    *out = ss;
    return DP_OK;
}

static void workload_free(struct dp_session *ss) {
    dp_grouped_free(ss->grouped);
    dp_partition_free(ss->part);
    dp_graph_free(ss->graph);
    free(ss->unknown);
    ss->grouped = NULL;
    ss->part = NULL;
    ss->graph = NULL;
    ss->unknown = NULL;
    ss->batch = 0;
    ss->params = NAN;
    ss->path[0] = '\0';
}

void dp_session_free(struct dp_session *ss) {
    if (!ss) return;
    workload_free(ss);
    for (int i = 0; i < ss->n_insps; i++) dp_inspector_free(ss->insps[i].insp);
    free(ss->insps);
    for (int i = 0; i < ss->n_embs; i++) free(ss->embs[i].v);
    free(ss->embs);
    free(ss->sims);
    sess_sa_free(ss);
    dp_op_weights_free(ss->weights);
    dp_settings_free(ss->list);
    dp_gpu_catalog_free(ss->cat);
    free(ss);
}

const struct dp_gpu_catalog *dp_session_catalog(const struct dp_session *ss) { return ss->cat; }
const struct dp_settings *dp_session_settings(const struct dp_session *ss) { return ss->list; }
const struct dp_op_weights *dp_session_weights(const struct dp_session *ss) { return ss->weights; }

/* ---- the workload -------------------------------------------------------------------------- */

enum dp_status dp_session_load_graph(struct dp_session *ss, const char *path,
                                     const struct dp_import_opts *io,
                                     const struct dp_coarsen_opts *co, struct dp_error *err) {
    struct dp_graph *g = NULL;
    struct dp_partition *p = NULL;
    enum dp_status st = dp_graph_load(path, io, &g, err);
    if (st) return st;
    if ((st = dp_coarsen(g, co, &p, err))) {
        dp_error_prefix(err, path); /* the engine names the graph; name the file */
        dp_graph_free(g);
        return st;
    }
    workload_free(ss);
    ss->graph = g;
    ss->part = p;
    ss->params = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) ss->params += (double)dp_graph_node(g, i)->params;
    sess_copy(ss->path, sizeof ss->path, path);
    ss->workload++;
    ss->features_gen++;
    return DP_OK;
}

enum dp_status dp_session_set_grouped(struct dp_session *ss, struct dp_grouped *g,
                                      const char *name, struct dp_error *err) {
    if (!g) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    workload_free(ss);
    ss->grouped = g;
    ss->batch = g->batch;
    sess_copy(ss->path, sizeof ss->path, name);
    ss->workload++;
    ss->features_gen++;
    return DP_OK;
}

enum dp_status dp_session_load_grouped(struct dp_session *ss, const char *path,
                                       struct dp_error *err) {
    struct dp_grouped *g = NULL;
    enum dp_status st = dp_grouped_load_json(path, &g, err);
    return st ? st : dp_session_set_grouped(ss, g, path, err);
}

enum dp_status dp_session_set_batch(struct dp_session *ss, int64_t batch, struct dp_error *err) {
    if (!ss->graph)
        return dp_error_set(err, DP_ERR_UNSUPPORTED, "%s: a grouped graph's features are fixed",
                            ss->path[0] ? ss->path : "session");
    if (batch < 0 || batch > DP_BATCH_MAX)
        return dp_error_set(err, DP_ERR_INVALID, "batch size %lld not in [1, %lld]",
                            (long long)batch, (long long)DP_BATCH_MAX);
    struct dp_grouped *g = NULL;
    char *unknown = NULL;
    enum dp_status st = dp_features(ss->graph, ss->part, ss->weights, batch, &g, &unknown, err);
    if (st) {
        dp_error_prefix(err, ss->path);
        return st;
    }
    dp_grouped_free(ss->grouped);
    free(ss->unknown);
    ss->grouped = g;
    ss->unknown = unknown;
    ss->batch = g->batch;
    ss->features_gen++;
    return DP_OK;
}

const struct dp_graph *dp_session_graph(const struct dp_session *ss) { return ss->graph; }
const struct dp_partition *dp_session_partition(const struct dp_session *ss) { return ss->part; }
const struct dp_grouped *dp_session_grouped(const struct dp_session *ss) { return ss->grouped; }
long dp_session_features_gen(const struct dp_session *ss) { return ss->features_gen; }
int64_t dp_session_batch(const struct dp_session *ss) { return ss->grouped ? ss->batch : 0; }
double dp_session_params(const struct dp_session *ss) { return ss->params; }
const char *dp_session_unknown_ops(const struct dp_session *ss) { return ss->unknown; }

void dp_session_set_economics(struct dp_session *ss, double epoch_samples, double price) {
    ss->epoch_samples = epoch_samples;
    ss->price = price;
}

/* Tokens per sample of a sequence workload: the input pipeline's [batch, L] integer ids (L x
 * the zoo's token streams where the graph is a zoo model); 0 for any other workload. */
static double sequence_tokens(const struct dp_graph *g) {
    const struct dp_zoo_info *z = g ? dp_zoo_find(dp_graph_name(g)) : NULL;
    if (z && strcmp(z->input_kind, "sequence")) return 0;
    for (size_t i = 0; g && i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (!dp_op_is_input_pipeline(n->op)) continue;
        if (n->n_dims == 2 && !dp_dtype_is_float(n->dtype) && n->dims[1] > 0)
            return (double)n->dims[1] * (z && z->token_streams > 0 ? z->token_streams : 1);
        return 0;
    }
    return 0;
}

double dp_session_epoch_samples(const struct dp_session *ss, const char **what) {
    const char *w = "set by the user";
    double v = ss->epoch_samples, tokens = sequence_tokens(ss->graph);
    if (isnan(v) && tokens > 0) {
        v = DP_EPOCH_TOKENS_DEFAULT / tokens;
        w = "sequences of BERT's pre-training corpus, 3.3e9 words as tokens (BooksCorpus 800M + "
            "English Wikipedia 2,500M, Devlin et al. 2019, 3.1) at the graph's tokens per sample "
            "(default; --epoch-samples sets yours)";
    } else if (isnan(v)) {
        v = DP_EPOCH_SAMPLES_DEFAULT;
        w = "ImageNet-1k training images (default; --epoch-samples sets yours)";
    }
    if (what) *what = w;
    return v;
}

double dp_session_price(const struct dp_session *ss, const struct dp_setting *s,
                        const char **source) {
    const struct dp_gpu *g = s && isnan(ss->price) ? dp_gpu_find(ss->cat, s->gpu) : NULL;
    const char *src = !isnan(ss->price) ? "set by the user" : g ? g->price_source
                                                                : "no price read";
    if (source) *source = src;
    return g ? g->price_per_gpu_hour : ss->price;
}

/* What the derived figures of setting s (NULL: workers unknown) at `batch` need besides the
 * outputs. */
static void facts_at(const struct dp_session *ss, const struct dp_setting *s, int64_t batch,
                     struct dp_derive_in *in) {
    dp_derive_in_init(in);
    in->batch = batch;
    in->workers = s ? s->workers : 0;
    in->params = ss->params;
    in->epoch_samples = dp_session_epoch_samples(ss, NULL);
    in->price_per_gpu_hour = dp_session_price(ss, s, &in->price_source);
    /* the sync in use decides the bytes (the simulation's own figure replaces it) */
    if (s) in->direct[DP_D_NET_MB_PER_ITER] = dp_sync_bytes_per_iter(s, ss->params) / 1e6;
}

void sess_facts(const struct dp_session *ss, const struct dp_setting *s,
                struct dp_derive_in *in) {
    facts_at(ss, s, ss->batch, in);
}

/* ---- inspectors ---------------------------------------------------------------------------- */

int sess_insp_new(struct dp_session *ss) {
    struct sess_insp *grown = realloc(ss->insps, ((size_t)ss->n_insps + 1) * sizeof *grown);
    if (!grown) return -1;
    ss->insps = grown;
    memset(&ss->insps[ss->n_insps], 0, sizeof *ss->insps);
    return ss->n_insps++;
}

/* The entry of file path, or -1 when it was never tried. */
static int insp_find(const struct dp_session *ss, const char *path) {
    for (int i = 0; i < ss->n_insps; i++)
        if (!ss->insps[i].session && !strcmp(ss->insps[i].path, path)) return i;
    return -1;
}

/* The loaded inspector of file path (loading it on first use); -1 with err when it fails. */
static int insp_get(struct dp_session *ss, const char *path, const char *setting_id,
                    struct dp_error *err) {
    int i = insp_find(ss, path);
    if (i >= 0) {
        if (ss->insps[i].insp) return i;
        dp_error_set(err, DP_ERR_INVALID, "inspector %s failed to load", path);
        return -1;
    }
    if ((i = sess_insp_new(ss)) < 0) {
        dp_error_set(err, DP_ERR_NOMEM, "session: out of memory");
        return -1;
    }
    struct sess_insp *e = &ss->insps[i];
    sess_copy(e->path, sizeof e->path, path);
    sess_copy(e->setting_id, sizeof e->setting_id, setting_id);
    if (dp_inspector_load(path, &e->insp, err) != DP_OK) {
        e->insp = NULL;
        return -1;
    }
    if (!e->setting_id[0]) sess_copy(e->setting_id, sizeof e->setting_id, dp_inspector_setting(e->insp));
    return i;
}

int dp_session_use_file(struct dp_session *ss, const char *path, struct dp_error *err) {
    return insp_get(ss, path, NULL, err);
}

const struct dp_inspector *dp_session_inspector(const struct dp_session *ss, int i) {
    return i >= 0 && i < ss->n_insps ? ss->insps[i].insp : NULL;
}

const char *dp_session_inspector_path(const struct dp_session *ss, int i) {
    return i >= 0 && i < ss->n_insps ? ss->insps[i].path : "";
}

int dp_session_n_inspectors(const struct dp_session *ss) { return ss->n_insps; }

static enum dp_pred_source source_of(const struct dp_inspector *insp) {
    return !strcmp(dp_inspector_provenance(insp)->origin, "transfer") ? DP_SOURCE_TRANSFERRED
                                                                       : DP_SOURCE_TRAINED;
}

static bool readable(const char *path) { return path[0] && access(path, R_OK) == 0; }

/* Takes file path (for setting id) as out's inspector: loaded now, or pending under
 * DP_RESOLVE_DEFER when not loaded yet. False (err set) when it fails to load; a file the
 * setting list names is then named by its place there too ("<list>:$.settings[k].inspector:
 * <file>: <what>"), the file alone being a stranger's to the reader. */
static bool take_file(struct dp_session *ss, const char *path, const char *id, unsigned flags,
                      struct dp_resolution *out, struct dp_error *err) {
    sess_copy(out->path, sizeof out->path, path);
    sess_copy(out->setting_id, sizeof out->setting_id, id);
    if ((flags & DP_RESOLVE_DEFER) && insp_find(ss, path) < 0) {
        out->pending = true;
        return true;
    }
    int i = insp_get(ss, path, id, err);
    if (i < 0) {
        for (int k = 0; k < ss->list->n_settings; k++)
            if (!strcmp(ss->list->settings[k].inspector, path)) {
                char where[PATH_MAX + 64];
                snprintf(where, sizeof where, "%s:$.settings[%d].inspector", ss->list->path, k);
                dp_error_prefix(err, where);
                break;
            }
        return false;
    }
    out->inspector = i;
    return true;
}

/* The message for a setting no inspector serves. */
static enum dp_status not_found(const struct dp_session *ss, const struct dp_setting *s,
                                struct dp_error *err) {
    char user[PATH_MAX];
    bool have_dir = dp_user_inspector_path(s, user, sizeof user);
    const struct dp_setting *e = dp_settings_find(ss->list, s->id);
    if (e && dp_setting_same_cluster(e, s))
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "%s: setting '%s': %s%.300s%s; no %.300s either (build the shipped "
                            "ones with 'make assets', or save a transfer there from the "
                            "explorer: t then f)", ss->list->path, e->id,
                            e->inspector[0] ? "inspector " : "names no inspector file",
                            e->inspector, e->inspector[0] ? " does not exist" : "",
                            have_dir ? user : "user inspector directory");
    if (!have_dir)
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "setting '%s' (GPU %s): no inspector: the list has none for this "
                            "cluster and there is no user inspector directory (set "
                            "DRIPLE_INSPECTORS, XDG_DATA_HOME or HOME)", s->id, s->gpu);
    return dp_error_set(err, DP_ERR_NOT_FOUND,
                        "setting '%s' (GPU %s): no inspector: %.300s does not exist. Make one: "
                        "in the explorer (driple explore) set this cluster, press t (transfer) "
                        "then f (save), or run driple transfer --from BASE.json --dataset D.json "
                        "-o that file", s->id, s->gpu, user);
}

enum dp_status dp_session_resolve(struct dp_session *ss, const struct dp_setting *s,
                                  unsigned flags, struct dp_resolution *out,
                                  struct dp_error *err) {
    memset(out, 0, sizeof *out);
    out->inspector = -1;
    for (int i = ss->n_insps - 1; i >= 0; i--)
        if (ss->insps[i].session && dp_setting_same_cluster(&ss->insps[i].target, s)) {
            out->source = DP_SOURCE_TRANSFERRED;
            out->inspector = i;
            sess_copy(out->setting_id, sizeof out->setting_id, s->id);
            sess_copy(out->path, sizeof out->path, ss->insps[i].path);
            return DP_OK;
        }
    /* the user's own file for this cluster; the setting-aware inspector; s's own file, the
     * list's entry for the same cluster */
    struct dp_error load_err = {0};
    char user[PATH_MAX];
    bool loaded = false, failed = false;
    if (dp_user_inspector_path(s, user, sizeof user) && readable(user)) {
        if (take_file(ss, user, s->id, flags, out, &load_err)) loaded = true;
        else failed = true;
    }
    if (!loaded && ss->sa && !(flags & DP_RESOLVE_PER_SETTING) && (ss->graph || !ss->grouped)) {
        memset(out, 0, sizeof *out);
        out->source = DP_SOURCE_SETTING_AWARE;
        out->inspector = -1;
        sess_copy(out->setting_id, sizeof out->setting_id, s->id);
        sess_copy(out->path, sizeof out->path, ss->sa_path);
        return DP_OK;
    }
    if (!loaded && readable(s->inspector)) {
        if (take_file(ss, s->inspector, s->id, flags, out, &load_err)) loaded = true;
        else failed = true;
    }
    for (int k = 0; !loaded && k < ss->list->n_settings; k++) {
        const struct dp_setting *e = &ss->list->settings[k];
        if (!dp_setting_same_cluster(e, s) || !readable(e->inspector) ||
            !strcmp(e->inspector, s->inspector))
            continue;
        if (take_file(ss, e->inspector, e->id, flags, out, &load_err)) loaded = true;
        else failed = true;
    }
    if (loaded) {
        if (!out->pending) out->source = source_of(ss->insps[out->inspector].insp);
        return DP_OK;
    }
    memset(out, 0, sizeof *out);
    out->inspector = -1;
    if (flags & DP_RESOLVE_NEAREST) {
        const struct dp_setting *near = dp_settings_nearest(ss->list, s, true);
        if (near && take_file(ss, near->inspector, near->id, flags, out, &load_err)) {
            out->source = DP_SOURCE_NEAREST;
            return DP_OK;
        }
        if (near) failed = true;
        memset(out, 0, sizeof *out);
        out->inspector = -1;
        if (!near && !failed)
            return dp_error_set(err, DP_ERR_NOT_FOUND,
                                "no setting of the list has an inspector file");
    }
    if (failed) {
        if (err) *err = load_err;
        return load_err.status ? load_err.status : DP_ERR_INVALID;
    }
    return not_found(ss, s, err);
}

enum dp_status dp_session_find_setting(const struct dp_session *ss, const char *id,
                                       struct dp_setting *out, bool *listed,
                                       struct dp_error *err) {
    const struct dp_setting *e = dp_settings_find(ss->list, id);
    *listed = e != NULL;
    if (e) {
        *out = *e;
        return DP_OK;
    }
    struct dp_error why = {0};
    enum dp_status st = dp_setting_parse_id(id, ss->cat, out, &why);
    if (st)
        return dp_error_set(err, st, "%s: no setting '%s' (%d settings; see 'driple compare'), "
                            "and as an id for any cluster: %.380s", ss->list->path, id,
                            ss->list->n_settings, why.msg);
    return DP_OK;
}

/* ---- predictions --------------------------------------------------------------------------- */

const float *sess_embed(struct dp_session *ss, const struct dp_inspector *in,
                        struct dp_error *err) {
    const char *key = dp_inspector_body_key(in);
    for (int i = 0; i < ss->n_embs; i++)
        if (ss->embs[i].workload == ss->workload && ss->embs[i].batch == ss->batch &&
            !strcmp(ss->embs[i].key, key))
            return ss->embs[i].v;
    if (!ss->embs && !(ss->embs = calloc(EMB_CACHE_MAX, sizeof *ss->embs))) {
        dp_error_set(err, DP_ERR_NOMEM, "session: out of memory");
        return NULL;
    }
    const struct dp_model *m = dp_inspector_model(in);
    float *v = malloc((size_t)dp_model_embed_size(m) * sizeof *v);
    if (!v) {
        dp_error_set(err, DP_ERR_NOMEM, "session: out of memory");
        return NULL;
    }
    ss->n_embed++;
    if (dp_model_embed(m, ss->grouped, v, err) != DP_OK) {
        dp_error_prefix(err, ss->path); /* the engine names the graph; name the file */
        free(v);
        return NULL;
    }
    if (ss->n_embs == EMB_CACHE_MAX) { /* drop the oldest */
        free(ss->embs[0].v);
        memmove(ss->embs, ss->embs + 1, (size_t)(ss->n_embs - 1) * sizeof *ss->embs);
        ss->n_embs--;
    }
    struct sess_emb *e = &ss->embs[ss->n_embs++];
    sess_copy(e->key, sizeof e->key, key);
    e->workload = ss->workload;
    e->batch = ss->batch;
    e->v = v;
    return v;
}

static void prediction_init(struct dp_prediction *p) {
    memset(p, 0, sizeof *p);
    p->from.inspector = -1;
    dp_derive_in_init(&p->facts);
    for (int k = 0; k < DP_N_DERIVED; k++) p->d[k] = p->d_lo[k] = p->d_hi[k] = NAN;
    for (int o = 0; o < DP_N_OUTPUTS; o++) p->lo[o] = p->hi[o] = NAN;
    p->ood_score = NAN;
}

/* Runs inspector p->from.inspector's head on the cached embedding into p. */
static enum dp_status predict_inspector(struct dp_session *ss, const struct dp_setting *s,
                                        struct dp_prediction *p, struct dp_error *err) {
    const struct dp_inspector *in = ss->insps[p->from.inspector].insp;
    struct dp_error why = {0};
    const float *emb = sess_embed(ss, in, &why);
    if (!emb) {
        sess_copy(p->note, sizeof p->note, why.msg);
        return why.status == DP_ERR_NOMEM ? dp_error_set(err, DP_ERR_NOMEM, "%s", why.msg)
                                          : DP_OK;
    }
    dp_model_head(dp_inspector_model(in), emb, p->raw);
    /* durations, utilisations and rates cannot be negative: the head's LeakyReLU can dip below
     * 0, so the outputs read 0 there (raw keeps the network's output; clamped says which) */
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        double v = dp_inspector_metric(in, o, p->raw[o]);
        if (!(isfinite(p->raw[o]) && isfinite(v))) {
            snprintf(p->note, sizeof p->note, "%.200s: prediction of %s is not finite",
                     p->from.path, dp_outputs[o].name);
            return DP_OK;
        }
        if (v < 0) p->clamped |= 1u << o;
        p->m[o] = fmax(0.0, v);
    }
    const struct dp_provenance *pv = dp_inspector_provenance(in);
    sess_copy(p->origin, sizeof p->origin, pv->origin);
    sess_copy(p->data, sizeof p->data, pv->data);
    sess_facts(ss, s, &p->facts);
    dp_derive(p->m, &p->facts, p->d);
    p->ok = true;
    return DP_OK;
}

static enum dp_status need_workload(const struct dp_session *ss, struct dp_error *err) {
    return ss->grouped ? DP_OK
                       : dp_error_set(err, DP_ERR_INVALID, "session: no graph loaded to predict");
}

/* Resolves s into out (initialised first) and predicts it, unless the setting-aware inspector
 * serves it (*sa set, nothing predicted yet: its rows are predicted together). */
static enum dp_status predict_start(struct dp_session *ss, const struct dp_setting *s,
                                    unsigned flags, struct dp_prediction *out, bool *sa,
                                    struct dp_error *err) {
    prediction_init(out);
    *sa = false;
    struct dp_error why = {0};
    if (dp_session_resolve(ss, s, flags, &out->from, &why) != DP_OK) {
        sess_copy(out->note, sizeof out->note, why.msg);
        return why.status == DP_ERR_NOMEM ? dp_error_set(err, DP_ERR_NOMEM, "%s", why.msg)
                                          : DP_OK;
    }
    if (out->from.pending) {
        out->pending = true;
        return DP_OK;
    }
    *sa = out->from.source == DP_SOURCE_SETTING_AWARE;
    return *sa ? DP_OK : predict_inspector(ss, s, out, err);
}

enum dp_status dp_session_predict(struct dp_session *ss, const struct dp_setting *s,
                                  unsigned flags, struct dp_prediction *out,
                                  struct dp_error *err) {
    return dp_session_predict_many(ss, s, 1, flags, out, err);
}

enum dp_status dp_session_predict_many(struct dp_session *ss, const struct dp_setting *s, int n,
                                       unsigned flags, struct dp_prediction *out,
                                       struct dp_error *err) {
    enum dp_status st = need_workload(ss, err);
    if (st) {
        for (int i = 0; i < n; i++) prediction_init(&out[i]);
        return st;
    }
    /* runs of consecutive setting-aware rows, each through one pass of the head */
    for (int i = 0; i < n;) {
        int j = i;
        bool sa = true;
        while (j < n && sa) {
            if ((st = predict_start(ss, &s[j], flags, &out[j], &sa, err))) return st;
            j += sa;
        }
        if (j > i && (st = sess_sa_predict(ss, s + i, j - i, out + i, err))) return st;
        i = j < n ? j + 1 : j; /* row j, when there is one, is predicted already */
    }
    return DP_OK;
}

enum dp_status dp_session_predict_with(struct dp_session *ss, int i, const struct dp_setting *s,
                                       struct dp_prediction *out, struct dp_error *err) {
    prediction_init(out);
    enum dp_status st = need_workload(ss, err);
    if (st) return st;
    if (!dp_session_inspector(ss, i))
        return dp_error_set(err, DP_ERR_INVALID, "session: no inspector %d", i);
    out->from.inspector = i;
    out->from.source = source_of(ss->insps[i].insp);
    sess_copy(out->from.setting_id, sizeof out->from.setting_id, ss->insps[i].setting_id);
    sess_copy(out->from.path, sizeof out->from.path, ss->insps[i].path);
    return predict_inspector(ss, s, out, err);
}

/* ---- simulations --------------------------------------------------------------------------- */

static const struct sess_sim *sim_find(const struct dp_session *ss, const struct dp_setting *s,
                                       int64_t batch) {
    for (int i = 0; i < ss->n_sims; i++)
        if (ss->sims[i].workload == ss->workload && ss->sims[i].batch == batch &&
            dp_setting_same_cluster(&ss->sims[i].s, s))
            return &ss->sims[i];
    return NULL;
}

/* Runs the simulator for s at `batch` into a cache entry; NULL when out of memory. */
static const struct sess_sim *sim_run(struct dp_session *ss, const struct dp_setting *s,
                                      int64_t batch) {
    if (!ss->sims && !(ss->sims = calloc(SIM_CACHE_MAX, sizeof *ss->sims))) return NULL;
    struct sess_sim *e = &ss->sims[ss->next_sim]; /* a cache, not a store: the oldest goes */
    ss->next_sim = (ss->next_sim + 1) % SIM_CACHE_MAX;
    if (ss->n_sims < SIM_CACHE_MAX) ss->n_sims++;
    memset(e, 0, sizeof *e);
    e->s = *s;
    e->workload = ss->workload;
    e->batch = batch;
    const struct dp_gpu *gpu = dp_gpu_find(ss->cat, s->gpu);
    if (!ss->graph) {
        snprintf(e->note, sizeof e->note, "no graph to simulate (a grouped file)");
        return e;
    }
    if (!gpu) {
        snprintf(e->note, sizeof e->note, "GPU %.60s is not in the catalog", s->gpu);
        return e;
    }
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.batch = batch;
    o.iterations = SIM_ITERATIONS;
    struct dp_sim_result r;
    memset(&r, 0, sizeof r);
    struct dp_error err = {0};
    ss->n_sim++;
    if (dp_simulate(ss->graph, s, gpu, &o, &r, &err) != DP_OK) {
        snprintf(e->note, sizeof e->note, "simulator: %.140s", err.msg);
        dp_sim_result_free(&r);
        return e;
    }
    e->ok = true;
    memcpy(e->m, r.labels, sizeof e->m);
    e->iteration_ms = r.iteration_ms;
    e->throughput = r.throughput;
    e->mean_gpu_util = r.mean_gpu_util;
    e->memory_gb = r.memory_gb;
    e->oom = r.oom;
    e->net_mb = r.bytes_per_iter / (double)(s->workers > 0 ? s->workers : 1) / 1e6;
    dp_sim_result_free(&r);
    return e;
}

enum dp_status dp_session_simulate(struct dp_session *ss, const struct dp_setting *s, bool defer,
                                   struct dp_simulation *out, bool *pending,
                                   struct dp_error *err) {
    return dp_session_simulate_at(ss, s, ss->batch, defer, out, pending, err);
}

enum dp_status dp_session_simulate_at(struct dp_session *ss, const struct dp_setting *s,
                                      int64_t batch, bool defer, struct dp_simulation *out,
                                      bool *pending, struct dp_error *err) {
    *pending = false;
    enum dp_status st = need_workload(ss, err);
    if (st) return st;
    if (batch < 1 || batch > DP_BATCH_MAX)
        return dp_error_set(err, DP_ERR_INVALID, "batch size %lld not in [1, %lld]",
                            (long long)batch, (long long)DP_BATCH_MAX);
    const struct sess_sim *e = sim_find(ss, s, batch);
    if (!e && defer) {
        *pending = true;
        return DP_OK;
    }
    if (!e && !(e = sim_run(ss, s, batch)))
        return dp_error_set(err, DP_ERR_NOMEM, "session: out of memory");
    memset(out, 0, sizeof *out);
    dp_derive_in_init(&out->facts);
    const struct dp_gpu *gpu = dp_gpu_find(ss->cat, s->gpu);
    out->gpu_memory_gb = gpu ? gpu->memory_gb : NAN;
    out->memory_gb = NAN;
    for (int k = 0; k < DP_N_DERIVED; k++) out->d[k] = NAN;
    sess_copy(out->note, sizeof out->note, e->note);
    if (!e->ok) return DP_OK;
    out->ok = true;
    memcpy(out->m, e->m, sizeof out->m);
    out->memory_gb = e->memory_gb;
    out->oom = e->oom;
    struct dp_derive_in *facts = &out->facts; /* the simulator's own figures, where it has them */
    facts_at(ss, s, batch, facts);
    facts->direct[DP_D_ITERATION_MS] = e->iteration_ms;
    facts->direct[DP_D_THROUGHPUT] = e->throughput;
    facts->direct[DP_D_MEAN_GPU_UTIL] = e->mean_gpu_util;
    facts->direct[DP_D_MEMORY_GB] = e->memory_gb;
    facts->direct[DP_D_NET_MB_PER_ITER] = e->net_mb;
    dp_derive(e->m, facts, out->d);
    return DP_OK;
}

void dp_prediction_use_simulation(struct dp_prediction *p, const struct dp_simulation *sim) {
    if (sim->ok && !isfinite(p->d[DP_D_MEMORY_GB])) p->d[DP_D_MEMORY_GB] = sim->memory_gb;
}

void dp_session_counts(const struct dp_session *ss, long *n_embed, long *n_sim) {
    if (n_embed) *n_embed = ss->n_embed;
    if (n_sim) *n_sim = ss->n_sim;
}

/* The next list setting from ss->preload whose inspector file is readable and not tried; -1. */
static int preload_index(const struct dp_session *ss) {
    for (int k = ss->preload; k < ss->list->n_settings; k++) {
        const char *f = ss->list->settings[k].inspector;
        if (readable(f) && insp_find(ss, f) < 0) return k;
    }
    return -1;
}

bool dp_session_preload_left(const struct dp_session *ss) { return preload_index(ss) >= 0; }

bool dp_session_preload_next(struct dp_session *ss) {
    int k = preload_index(ss);
    if (k < 0) {
        ss->preload = ss->list->n_settings;
        return false;
    }
    const struct dp_setting *e = &ss->list->settings[k];
    struct dp_error err = {0}; /* a file that fails shows its error when it is used */
    insp_get(ss, e->inspector, e->id, &err);
    ss->preload = k + 1;
    return true;
}
