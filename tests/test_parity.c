/* test_parity.c: parity of the inspector network with the published PyTorch model, from the
 * reference data in ../shared/reference (fails when it is missing): the 8 GCN cases (outputs and
 * every intermediate), the GIN cases, and one training step (loss, every gradient, the parameters
 * after Adam) in full and transfer mode; at every kernel level the CPU has, and on 1 to 3
 * threads. Tolerances are the reference README's. */
#include <stdbool.h>
#include <stdint.h>

#include "dp/compute.h"
#include "dp/grouped.h"
#include "dp/model.h"
#include "core/json_util.h"
#include "gnn/model_impl.h"
#include "test.h"

/* The reference files (../shared/reference) are read as any JSON is. */
static const struct dp_read_spec reference_spec = {"reference JSON", (size_t)1 << 30, true, NULL,
                                                   NULL};

static double worst_out = 0; /* largest relative output error over all cases (printed) */

/* max|a-b| / max|b| (the gradient and parameter tolerance base) */
static double rel_err_max(const float *a, const double *b, size_t n) {
    double d = 0, mb = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (!(e <= d)) d = e;
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
    }
    return mb > 0 ? d / mb : d;
}

/* Flattens a (nested) numeric JSON array into a new double array. */
static void flatten(const cJSON *a, double *out, size_t *n) {
    if (cJSON_IsNumber(a)) {
        out[(*n)++] = a->valuedouble;
        return;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, a) flatten(v, out, n);
}
static size_t count(const cJSON *a) {
    if (cJSON_IsNumber(a)) return 1;
    size_t n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a) n += count(v);
    return n;
}
static double *nums(const cJSON *obj, const char *key, size_t *n) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!a) return NULL;
    size_t c = count(a);
    double *d = malloc((c + 1) * sizeof *d);
    *n = 0;
    flatten(a, d, n);
    return d;
}

static struct dp_grouped *case_graph(const cJSON *c) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
    int n = cJSON_GetObjectItemCaseSensitive(c, "num_nodes")->valueint;
    const cJSON *edges = cJSON_GetObjectItemCaseSensitive(c, "edges");
    struct dp_grouped *g = dp_grouped_init(name ? name->valuestring : "case", n,
                                           cJSON_GetArraySize(edges));
    size_t nf;
    double *f = nums(c, "features", &nf);
    CHECK(nf == (size_t)n * DP_N_FEATURES);
    memcpy(g->x, f, nf * sizeof *f);
    free(f);
    int e = 0;
    const cJSON *ed;
    cJSON_ArrayForEach(ed, edges) {
        int i = cJSON_GetArrayItem(ed, 0)->valueint, j = cJSON_GetArrayItem(ed, 1)->valueint;
        g->edges[2 * e] = i < j ? i : j;
        g->edges[2 * e + 1] = i < j ? j : i;
        e++;
    }
    return g;
}

static void check_vec(const char *cname, const char *what, const float *got, const cJSON *c,
                      const char *key, double tol) {
    size_t n;
    double *ref = nums(c, key, &n);
    if (!ref) return;
    double e = test_rel_err(got, ref, n);
    if (!(e <= tol))
        fprintf(stderr, "  %s %s: rel err %.3g > %.3g\n", cname, what, e, tol);
    CHECK(e <= tol);
    free(ref);
}

/* Every case of a *_forward_cases.json against the model: outputs and intermediates. */
static void forward_cases(const struct dp_model *m, const char *file) {
    cJSON *root = NULL;
    struct dp_error err = {0};
    CHECK(dp_json_load(file, &reference_spec, &root, &err) == DP_OK);
    if (!root) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const int H = dp_model_arch(m)->hidden;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "cases")) {
        struct dp_grouped *g = case_graph(c);
        const char *cname = g->graph;
        int L = cJSON_GetObjectItemCaseSensitive(c, "n_layers")->valueint;
        CHECK(dp_arch_n_layers(dp_model_arch(m), g->n_groups) == L);
        float out[DP_N_OUTPUTS];
        CHECK(dp_model_predict(m, g, out, &err) == DP_OK);
        size_t n;
        double *ref = nums(c, "output", &n);
        double e = test_rel_err(out, ref, n);
        printf("  %-18s n=%3d layers=%2d  output rel err %.3g\n", cname, g->n_groups, L, e);
        if (e > worst_out) worst_out = e;
        CHECK(e <= 1e-4);
        free(ref);
        /* intermediates from a saved forward */
        struct dp_fx_batch b;
        struct dp_fx_work w;
        memset(&w, 0, sizeof w);
        const struct dp_grouped *gs[1] = {g};
        CHECK(dp_fx_batch_build(m, gs, 1, &b, &err) == DP_OK);
        CHECK(dp_fx_forward(m, &b, &w, true, NULL, out, &err) == DP_OK);
        const size_t MH = (size_t)g->n_groups * H;
        check_vec(cname, "conv0_out", w.save, c, "conv0_out", 1e-4);
        check_vec(cname, "layer0_state", w.states, c, "layer0_state", 1e-4);
        check_vec(cname, "node_embeddings", w.states + (size_t)(L - 1) * MH, c,
                  "node_embeddings", 1e-4);
        check_vec(cname, "set2set_out", w.emb, c, "set2set_out", 1e-4);
        check_vec(cname, "mlp0_out", w.head, c, "mlp0_out", 1e-4);
        check_vec(cname, "mlp1_out", w.head + H, c, "mlp1_out", 1e-4);
        check_vec(cname, "mlp2_out", out, c, "mlp2_out", 1e-4);
        /* embed + head gives the same as predict */
        float emb[4096], out2[DP_N_OUTPUTS];
        CHECK(dp_model_embed(m, g, emb, &err) == DP_OK);
        dp_model_head(m, emb, out2);
        for (int o = 0; o < DP_N_OUTPUTS; o++) CHECK(out2[o] == out[o]);
        dp_fx_work_free(&w);
        dp_fx_batch_free(&b);
        dp_grouped_free(g);
    }
    cJSON_Delete(root);
}

/* The grouped-graph files of cases/<dir> against expected.json (what `driple predict` reads). */
static void grouped_cases(const struct dp_model *m, const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/cases/%s/expected.json", REF_DIR, dir);
    cJSON *root = NULL;
    struct dp_error err = {0};
    CHECK(dp_json_load(path, &reference_spec, &root, &err) == DP_OK);
    if (!root) return;
    const cJSON *c;
    int n_cases = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "cases")) {
        snprintf(path, sizeof path, "%s/cases/%s/%s.grouped.json", REF_DIR, dir, c->string);
        struct dp_grouped *g = NULL;
        enum dp_status st = dp_grouped_load_json(path, &g, &err);
        CHECK(st == DP_OK);
        if (st) {
            fprintf(stderr, "  %s\n", err.msg);
            continue;
        }
        float out[DP_N_OUTPUTS];
        CHECK(dp_model_predict(m, g, out, &err) == DP_OK);
        size_t n;
        double *ref = nums(c, "raw", &n);
        double e = test_rel_err(out, ref, n);
        printf("  %s/%-18s raw rel err %.3g\n", dir, c->string, e);
        if (e > worst_out) worst_out = e;
        CHECK(e <= 1e-4);
        free(ref);
        float emb[4096];
        CHECK(dp_model_embed(m, g, emb, &err) == DP_OK);
        check_vec(c->string, "set2set_out", emb, c, "set2set_out", 1e-4);
        dp_grouped_free(g);
        n_cases++;
    }
    CHECK(n_cases >= 4);
    cJSON_Delete(root);
}

/* One training step (full or transfer mode) against gcn_training_step.json. */
static void training_step(const struct dp_model *base, const cJSON *root, const char *key,
                          enum dp_train_mode mode) {
    const cJSON *batch = cJSON_GetObjectItemCaseSensitive(root, "batch");
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(root, key);
    int N = cJSON_GetObjectItemCaseSensitive(batch, "num_nodes")->valueint;
    const cJSON *graphs = cJSON_GetObjectItemCaseSensitive(batch, "graphs");
    int B = cJSON_GetArraySize(graphs);
    struct dp_grouped *gs[64];
    int k = 0;
    const cJSON *gj;
    cJSON_ArrayForEach(gj, graphs) {
        cJSON *tmp = cJSON_Duplicate(gj, 1);
        cJSON_AddNumberToObject(tmp, "num_nodes", N);
        cJSON_AddStringToObject(tmp, "name", "train");
        gs[k++] = case_graph(tmp);
        cJSON_Delete(tmp);
    }
    size_t nt;
    double *tgt = nums(batch, "targets", &nt);
    float targets[64 * DP_N_OUTPUTS];
    for (size_t i = 0; i < nt; i++) targets[i] = (float)tgt[i];
    free(tgt);

    struct dp_model *m = dp_model_clone(base);
    struct dp_trainer *t = NULL;
    struct dp_adam_opts o;
    dp_adam_default(&o);
    struct dp_error err = {0};
    CHECK(dp_trainer_init(m, mode, &o, &t, &err) == DP_OK);
    if (!t) {
        fprintf(stderr, "%s\n", err.msg);
        dp_model_free(m);
        return;
    }
    float loss = 0;
    CHECK(dp_trainer_step(t, (const struct dp_grouped *const *)gs, B, targets, true, &loss,
                          &err) == DP_OK);
    double ref_loss = cJSON_GetObjectItemCaseSensitive(step, "loss")->valuedouble;
    printf("  %s: loss %.9g (reference %.9g)\n", key, loss, ref_loss);
    CHECK_NEAR(loss, ref_loss, 1e-4 * fabs(ref_loss));
    double worst_g = 0, worst_p = 0;
    const cJSON *grads = cJSON_GetObjectItemCaseSensitive(step, "grads");
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(step, "params_after_adam_step");
    int n_grads = 0, n_after = 0;
    for (int i = 0; i < dp_model_n_params(m); i++) {
        struct dp_param p;
        dp_model_param(m, i, &p);
        size_t n;
        double *ref = nums(grads, p.name, &n);
        const float *g = dp_trainer_grad(t, i);
        if (ref) {
            CHECK(g != NULL && n == p.size);
            if (g && n == p.size) {
                double e = rel_err_max(g, ref, n);
                if (e > 1e-3) fprintf(stderr, "  %s grad %s: rel err %.3g\n", key, p.name, e);
                CHECK(e <= 1e-3);
                if (e > worst_g) worst_g = e;
            }
            n_grads++;
        } else {
            CHECK(g == NULL); /* frozen in this mode */
        }
        free(ref);
        ref = nums(after, p.name, &n);
        if (ref) {
            double e = rel_err_max(p.data, ref, n);
            if (e > 1e-3) fprintf(stderr, "  %s param %s: rel err %.3g\n", key, p.name, e);
            CHECK(e <= 1e-3);
            if (e > worst_p) worst_p = e;
            n_after++;
        } else {
            /* untrained parameters keep their values */
            const float *orig = base->data + base->p[i].off;
            CHECK(memcmp(orig, p.data, p.size * sizeof *orig) == 0);
        }
        free(ref);
    }
    /* the published transfer model's extra conv_layers.2 never enters the forward pass: our
     * model does not carry it, and the reference gives it no gradient */
    const cJSON *unused;
    cJSON_ArrayForEach(unused, cJSON_GetObjectItemCaseSensitive(step, "trainable_but_unused")) {
        CHECK(dp_model_find_param(m, unused->valuestring) < 0);
        CHECK(cJSON_GetObjectItemCaseSensitive(grads, unused->valuestring) == NULL);
    }
    printf("  %s: %d gradients (worst rel err %.3g), %d parameters after Adam (worst %.3g)\n",
           key, n_grads, worst_g, n_after, worst_p);
    CHECK(n_grads == cJSON_GetArraySize(grads));
    dp_trainer_free(t);
    dp_model_free(m);
    for (int i = 0; i < B; i++) dp_grouped_free(gs[i]);
}

/* Every reference case under the kernel level and thread count in effect. */
static void all_cases(const struct dp_model *gcn, const struct dp_model *gin, const cJSON *root) {
    char path[512];
    printf("GCN forward cases:\n");
    snprintf(path, sizeof path, "%s/gcn_forward_cases.json", REF_DIR);
    forward_cases(gcn, path);
    grouped_cases(gcn, "gcn");
    if (gin) {
        printf("GIN forward cases:\n");
        snprintf(path, sizeof path, "%s/gin_forward_cases.json", REF_DIR);
        forward_cases(gin, path);
        grouped_cases(gin, "gin");
    }
    printf("worst output rel err over all cases: %.3g\n", worst_out);
    if (root) {
        printf("training step:\n");
        training_step(gcn, root, "full_training_step", DP_TRAIN_FULL);
        training_step(gcn, root, "transfer_step", DP_TRAIN_HEAD);
    }
}

int main(void) {
    char path[512];
    struct dp_error err = {0};
    struct dp_model *gcn = NULL, *gin = NULL;

    snprintf(path, sizeof path, "%s/gcn_pretrained_weights.json", REF_DIR);
    enum dp_status st = dp_model_load_torch_json_new(path, &gcn, &err);
    if (st) fprintf(stderr, "reference data missing or unreadable: %s\n", err.msg);
    CHECK(st == DP_OK);
    if (!gcn) TEST_MAIN_END();
    CHECK(dp_model_arch(gcn)->layer == DP_LAYER_GCN && dp_model_arch(gcn)->gru);
    CHECK(dp_model_n_params(gcn) == 18);

    snprintf(path, sizeof path, "%s/gin_random_weights.json", REF_DIR);
    CHECK(dp_model_load_torch_json_new(path, &gin, &err) == DP_OK);
    if (gin) CHECK(dp_model_arch(gin)->layer == DP_LAYER_GIN);

    /* loading the GIN file into a GCN model fails cleanly and leaves the model untouched */
    struct dp_model *copy = dp_model_clone(gcn);
    snprintf(path, sizeof path, "%s/gin_random_weights.json", REF_DIR);
    CHECK(dp_model_load_torch_json(copy, path, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "gin_random_weights.json");
    CHECK(memcmp(copy->data, gcn->data, gcn->n_data * sizeof *gcn->data) == 0);
    dp_model_free(copy);

    snprintf(path, sizeof path, "%s/gcn_training_step.json", REF_DIR);
    cJSON *root = NULL;
    CHECK(dp_json_load(path, &reference_spec, &root, &err) == DP_OK);

    /* every kernel level this CPU has on the own products (the same tolerances), on one
     * thread; then the best level with every product on OpenBLAS and on auto (each shape on its
     * table's backend); then auto on 2 and 3 threads (rows split within a layer, graphs within a
     * training step). $DRIPLE_KERNELS picks the backend of the threaded runs (tests/run_all.sh
     * runs this binary again under each). */
    static const char *const levels[] = {"portable", "avx2", "avx512", "openblas", "auto"};
    dp_threads_set(1);
    for (int l = 0; l < 5; l++) {
        CHECK(dp_kernels_set(levels[l]));
        if (l < 3 && strcmp(dp_kernels(), levels[l])) continue; /* above this CPU */
        printf("== kernels %s, products %s, 1 thread\n", dp_kernels(), dp_kernels_backend());
        all_cases(gcn, gin, root);
    }
    const char *env = getenv("DRIPLE_KERNELS");
    CHECK(dp_kernels_set(env && *env ? env : "auto"));
    for (int t = 2; t <= 3; t++) {
        dp_threads_set(t);
        printf("== kernels %s, products %s, %d threads\n", dp_kernels(), dp_kernels_backend(), t);
        all_cases(gcn, gin, root);
    }
    cJSON_Delete(root);
    dp_model_free(gin);
    dp_model_free(gcn);
    TEST_MAIN_END();
}
