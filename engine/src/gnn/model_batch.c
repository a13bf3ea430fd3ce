/* model_batch.c: many graphs through the fast engine in one call (dp_fx_run): graphs sorted by
 * size (which decides their layer and Set2Set step counts), cut into sub-batches of equal-sized
 * graphs stacked into one block-diagonal batch each, the sub-batches the items of one phase of a
 * pool region (pool.h), so that threads take them as they come. Embeddings and outputs land in
 * the callers' order; with targets, the MSE loss, and with gradients each sub-batch's into its
 * own sums, added in sub-batch order afterwards: results are the same on any number of threads.
 * A region with a single sub-batch leaves the pool to that sub-batch's forward pass, which then
 * splits its rows. */
#include <stdlib.h>
#include <string.h>

#include "dp/compute.h"
#include "model_impl.h"
#include "pool.h"

/* Graphs per stacked sub-batch: small enough that a sub-batch's activations stay in cache; 4
 * measured fastest for training on 100-group graphs (425 ms of CPU per 32-graph step against
 * 458 for 1 and 552 for 64). */
#ifndef BATCH_CHUNK
#define BATCH_CHUNK 4
#endif

static int cmp_key(const void *a, const void *b) {
    const long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sub-batches of equal-sized graphs, at most BATCH_CHUNK each (fewer when their saved
 * activations would pass ~256 MB), in order (sorted by size, then index: order holds index
 * pairs): first position and count of each into sub; returns how many. */
static int cut_batch(const struct dp_model *m, const struct dp_grouped *const *graphs, int n,
                     const long *order, int *sub) {
    int n_sub = 0;
    for (int i = 0, j; i < n; i = j) {
        j = i + 1;
        const int ni = graphs[order[2 * i + 1]]->n_groups;
        const double per_graph = 8.0 * dp_arch_n_layers(&m->arch, ni) * ni * m->arch.hidden;
        int cap = (int)(64e6 / (per_graph > 1 ? per_graph : 1));
        cap = cap < 1 ? 1 : cap > BATCH_CHUNK ? BATCH_CHUNK : cap;
        while (j < n && j - i < cap && graphs[order[2 * j + 1]]->n_groups == ni) j++;
        sub[2 * n_sub] = i;
        sub[2 * n_sub + 1] = j - i;
        n_sub++;
    }
    return n_sub;
}

/* One call's sub-batches, read by every thread of its region. */
struct batch_run {
    const struct dp_model *m;
    struct dp_fx_job      *job;
    const long            *order;
    const int             *sub;
    int                    n_sub;
    double                 scale; /* d loss / d out: 2 / (n x n_out) */
    double                *loss;  /* per sub-batch */
    enum dp_status        *st;    /* per sub-batch */
    struct dp_error       *err;   /* per sub-batch */
};

/* Sub-batch c: forward; embeddings and outputs to the callers' rows; with targets the loss and
 * (with gradients) the backward into the sub-batch's own sums. */
static void one_sub(struct batch_run *r, int c) {
    const struct dp_model *m = r->m;
    struct dp_fx_job *job = r->job;
    const int O = m->arch.n_out, E = 2 * m->arch.hidden;
    const int first = r->sub[2 * c], B = r->sub[2 * c + 1];
    float *grads[DP_MODEL_MAX_PARAMS];
    bool any = false;
    float *gbuf = job->grads ? *job->sgrad + (size_t)c * m->n_data : NULL;
    for (int i = 0; i < m->n_params; i++) {
        grads[i] = job->grads && job->grads[i] ? gbuf + m->p[i].off : NULL;
        any |= grads[i] != NULL;
    }
    if (any) memset(gbuf, 0, m->n_data * sizeof *gbuf);
    float *out = malloc((size_t)B * O * 2 * sizeof *out), *dout = out ? out + (size_t)B * O : NULL;
    float *emb = malloc((size_t)B * E * sizeof *emb);
    float *act = malloc(dp_fx_head_act_size(m, B) * sizeof *act);
    const struct dp_grouped **sub = malloc((size_t)B * sizeof *sub);
    struct dp_fx_work *work = dp_fx_thread_work();
    double sum = 0;
    enum dp_status st = DP_OK;
    struct dp_fx_batch b;
    memset(&b, 0, sizeof b);
    if (!out || !emb || !act || !sub || !work) {
        st = dp_error_set(&r->err[c], DP_ERR_NOMEM, "batch: out of memory");
        goto done;
    }
    for (int k = 0; k < B; k++) sub[k] = job->graphs[r->order[2 * (first + k) + 1]];
    if ((st = dp_fx_batch_build(m, sub, B, &b, &r->err[c]))) goto done;
    /* head-only gradients need no saved body: keep the embeddings, redo the head */
    const bool save = any && job->body;
    if ((st = dp_fx_forward(m, &b, work, save, emb, out, &r->err[c]))) goto done;
    for (int k = 0; k < B; k++) {
        const int gi = (int)r->order[2 * (first + k) + 1];
        if (job->emb) memcpy(job->emb + (size_t)gi * E, emb + (size_t)k * E, E * sizeof *emb);
        if (job->out) memcpy(job->out + (size_t)gi * O, out + (size_t)k * O, O * sizeof *out);
        for (int o = 0; job->targets && o < O; o++) {
            double d = (double)out[k * O + o] - job->targets[(size_t)gi * O + o];
            sum += d * d;
            dout[k * O + o] = (float)(r->scale * d);
        }
    }
    if (save) {
        st = dp_fx_backward(m, &b, work, dout, grads, job->body, NULL, &r->err[c]);
    } else if (any) {
        dp_fx_head(m, B, emb, out, act);
        if (dp_fx_head_backward(m, B, emb, act, dout, grads, NULL))
            st = dp_error_set(&r->err[c], DP_ERR_NOMEM, "batch: out of memory");
    }
done:
    dp_fx_thread_work_done(work);
    dp_fx_batch_free(&b);
    free(out);
    free(emb);
    free(act);
    free(sub);
    r->loss[c] = sum;
    r->st[c] = st;
}

static void batch_region(void *ctx, int tid, int nt, struct dp_pool_region *reg) {
    struct batch_run *r = ctx;
    struct dp_pool_cursor cur;
    dp_pool_cursor_init(&cur, tid, nt);
    dp_pool_phase(reg, &cur, r->n_sub);
    for (int c; (c = dp_pool_next(reg, &cur)) >= 0;) one_sub(r, c);
    dp_pool_phase_wait(reg, &cur);
}

enum dp_status dp_fx_run(const struct dp_model *m, struct dp_fx_job *job, struct dp_error *err) {
    const int n = job->n, O = m->arch.n_out;
    enum dp_status st = DP_OK;
    job->loss = 0;
    if (n < 1) return dp_error_set(err, DP_ERR_INVALID, "batch: no graphs");
    long *order = malloc((size_t)n * 2 * sizeof *order);
    int *sub = malloc((size_t)n * 2 * sizeof *sub);
    double *subloss = malloc((size_t)n * sizeof *subloss);
    enum dp_status *subst = malloc((size_t)n * sizeof *subst);
    struct dp_error *suberr = calloc((size_t)n, sizeof *suberr);
    if (!order || !sub || !subloss || !subst || !suberr) {
        st = dp_error_set(err, DP_ERR_NOMEM, "batch: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (!job->graphs[i] || job->graphs[i]->n_groups < 1) {
            st = dp_error_set(err, DP_ERR_SHAPE, "batch: graph %d has no groups", i);
            goto done;
        }
        order[2 * i] = (long)job->graphs[i]->n_groups * 4096L * 4096L + i;
        order[2 * i + 1] = i;
    }
    qsort(order, (size_t)n, 2 * sizeof *order, cmp_key);
    const int n_sub = cut_batch(m, job->graphs, n, order, sub);
    if (job->grads && *job->n_sgrad < n_sub) {
        float *g = realloc(*job->sgrad, (size_t)n_sub * m->n_data * sizeof *g);
        if (!g) {
            st = dp_error_set(err, DP_ERR_NOMEM, "batch: out of memory");
            goto done;
        }
        *job->sgrad = g;
        *job->n_sgrad = n_sub;
    }
    struct batch_run r = {.m = m, .job = job, .order = order, .sub = sub, .n_sub = n_sub,
                          .scale = 2.0 / ((double)n * O), .loss = subloss, .st = subst,
                          .err = suberr};
    dp_pool_run(n_sub, batch_region, &r);
    double sum = 0;
    for (int c = 0; c < n_sub; c++) {
        if (subst[c] && !st) {
            st = subst[c];
            if (err) *err = suberr[c];
        }
        sum += subloss[c];
        const float *gc = job->grads ? *job->sgrad + (size_t)c * m->n_data : NULL;
        for (int i = 0; gc && i < m->n_params; i++)
            if (job->grads[i])
                for (size_t q = 0; q < m->p[i].size; q++) job->grads[i][q] += gc[m->p[i].off + q];
    }
    if (!st) job->loss = sum / ((double)n * O);
done:
    free(order);
    free(sub);
    free(subloss);
    free(subst);
    free(suberr);
    return st;
}
