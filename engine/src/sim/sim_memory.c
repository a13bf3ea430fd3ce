/* sim_memory.c: a worker's GPU memory footprint: a liveness sweep over the activations of one
 * training step (TF's allocator: buffers freed after their last reader, aliases and in-place
 * element-wise ops share buffers, a fused batch norm's gradient reads its statistics) plus what
 * lives all step long (context, weights, gradients, optimizer slots, buckets). */
#include <stdlib.h>
#include <string.h>

#include "dp/ops.h"
#include "sim/sim_impl.h"

static bool contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* --- memory: a liveness sweep over the step's schedule --- */

/* TF's default cuDNN workspace limit (TF_CUDNN_WORKSPACE_LIMIT_IN_MB, 4 GiB in TF 1.x): the
 * autotuner never picks an algorithm that needs more. */
#define SIM_WORKSPACE_CAP 4294967296.0

bool sim_reads_stats_only(const struct dp_node *src, const struct dp_node *dst,
                          bool dst_has_batch) {
    if (strncmp(src->op, "FusedBatchNorm", 14) || contains(src->op, "Grad")) return false;
    return contains(dst->op, "FusedBatchNormGrad") || !dst_has_batch;
}

bool sim_has_batch_dim(const struct dp_node *n) {
    for (int d = 0; d < n->n_dims; d++)
        if (n->dims[d] == DP_DIM_BATCH) return true;
    return false;
}

/* A min-heap of node indices: Kahn's topological order that keeps an already topological node
 * list in its own order. */
static void heap_push(int *h, int *n, int v) {
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, int *n) {
    int top = h[0], v = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
    return top;
}

/* The sweep; fused: element-wise forward ops whose forward readers are all element-wise run
 * inside a fused kernel and are recomputed for the backward pass, so their outputs take no
 * buffer and their inputs stay alive for the backward readers instead. */
static enum dp_status sweep(const struct dp_graph *g, int64_t batch, bool fused, double *peak,
                            struct dp_error *err) {
    size_t nn = dp_graph_n_nodes(g);
    int n = (int)nn;
    enum dp_status st = DP_ERR_NOMEM;
    int *indeg = NULL, *heap = NULL, *order = NULL, *pos = NULL, *last = NULL, *buf = NULL;
    int *head = NULL, *ent_next = NULL, *ent_buf = NULL, *end = NULL;
    int *radj_start = NULL, *radj = NULL;
    double *size = NULL, *bsize = NULL;
    unsigned char *runs = NULL;
    *peak = 0;
    if (nn > (size_t)1 << 28)
        return dp_error_set(err, DP_ERR_INVALID, "graph %s: too many nodes for the memory sweep",
                            dp_graph_name(g));
    if (!nn) return DP_OK;
    size_t n_edges = 0;
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *d = dp_graph_node(g, i);
        n_edges += (size_t)d->n_inputs + (size_t)d->n_ctrl;
    }
    if (!(indeg = calloc(nn, sizeof *indeg)) || !(heap = malloc(nn * sizeof *heap)) ||
        !(order = malloc(nn * sizeof *order)) || !(pos = malloc(nn * sizeof *pos)) ||
        !(last = malloc(nn * sizeof *last)) || !(buf = malloc(nn * sizeof *buf)) ||
        !(head = malloc(nn * sizeof *head)) || !(ent_next = malloc(nn * sizeof *ent_next)) ||
        !(ent_buf = malloc(nn * sizeof *ent_buf)) || !(end = malloc(nn * sizeof *end)) ||
        !(radj_start = calloc(nn + 1, sizeof *radj_start)) ||
        !(radj = malloc((n_edges ? n_edges : 1) * sizeof *radj)) ||
        !(size = calloc(nn, sizeof *size)) || !(bsize = calloc(nn, sizeof *bsize)) ||
        !(runs = calloc(nn, 1)))
        goto done;

    /* Which ops run in a training step on the worker: those placed on a GPU (every op when
     * the graph names no GPU), not the one-off initialisers, not the variables. */
    bool any_gpu = false;
    for (size_t i = 0; i < nn; i++)
        if (dp_node_on_gpu(dp_graph_node(g, i))) any_gpu = true;
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *d = dp_graph_node(g, i);
        runs[i] = (!any_gpu || dp_node_on_gpu(d)) && dp_node_phase(d) != DP_PHASE_INIT &&
                  d->params == 0;
    }
    /* Consumers of each node (data and control edges), for the topological order. */
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *d = dp_graph_node(g, i);
        for (int k = 0; k < d->n_inputs; k++) radj_start[d->inputs[k] + 1]++;
        for (int k = 0; k < d->n_ctrl; k++) radj_start[d->ctrl[k] + 1]++;
        indeg[i] = d->n_inputs + d->n_ctrl;
    }
    for (size_t i = 0; i < nn; i++) radj_start[i + 1] += radj_start[i];
    for (size_t i = 0; i < nn; i++) head[i] = radj_start[i];
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *d = dp_graph_node(g, i);
        for (int k = 0; k < d->n_inputs; k++) radj[head[d->inputs[k]]++] = (int)i;
        for (int k = 0; k < d->n_ctrl; k++) radj[head[d->ctrl[k]]++] = (int)i;
    }
    int hn = 0, no = 0, scan = 0;
    for (int i = 0; i < n; i++)
        if (!indeg[i]) heap_push(heap, &hn, i);
    while (no < n) {
        if (!hn) { /* a cycle (a while loop's back edge): release the lowest waiting node (the
                      scan only moves forward: waiting counts never grow) */
            while (indeg[scan] <= 0) scan++;
            indeg[scan] = 0;
            heap_push(heap, &hn, scan);
        }
        int v = heap_pop(heap, &hn);
        order[no] = v;
        pos[v] = no++;
        indeg[v] = -1;
        for (int e = radj_start[v]; e < radj_start[v + 1]; e++)
            if (indeg[radj[e]] > 0 && --indeg[radj[e]] == 0) heap_push(heap, &hn, radj[e]);
    }

    /* Each batch-dimension tensor's bytes and the position of its last reader (a read of
     * batch-norm statistics does not count); a tensor made off the worker (the input batch)
     * occupies worker memory when a worker op reads it. */
    for (int i = 0; i < n; i++) {
        const struct dp_node *d = dp_graph_node(g, (size_t)i);
        int es = dp_dtype_size(d->dtype);
        if (sim_has_batch_dim(d)) size[i] = dp_node_tensor_size(d, batch) * (es ? es : 4);
        last[i] = -1;
        buf[i] = -1;
        head[i] = -1;
    }
    for (int i = 0; i < n; i++) {
        const struct dp_node *d = dp_graph_node(g, (size_t)i);
        if (dp_node_phase(d) == DP_PHASE_INIT) continue;
        bool hb = sim_has_batch_dim(d);
        for (int k = 0; k < d->n_inputs; k++) {
            int src = d->inputs[k];
            if (sim_reads_stats_only(dp_graph_node(g, (size_t)src), d, hb)) continue;
            if (pos[i] > last[src]) last[src] = pos[i];
        }
    }
    for (int p = n - 1; fused && p >= 0; p--) { /* consumers first: last[] flows to inputs */
        int i = order[p];
        const struct dp_node *d = dp_graph_node(g, (size_t)i);
        if (!runs[i] || size[i] <= 0 || dp_node_phase(d) != DP_PHASE_FORWARD ||
            dp_op_class(d->op) != DP_OPCLASS_ELEMWISE || dp_op_is_alias(d->op))
            continue;
        bool inner = false;
        for (int e = radj_start[i]; e < radj_start[i + 1]; e++) {
            const struct dp_node *r = dp_graph_node(g, (size_t)radj[e]);
            if (dp_node_phase(r) != DP_PHASE_FORWARD) continue;
            inner = dp_op_class(r->op) == DP_OPCLASS_ELEMWISE;
            if (!inner) break;
        }
        if (!inner) continue;
        size[i] = 0;
        for (int k = 0; k < d->n_inputs; k++)
            if (last[i] > last[d->inputs[k]]) last[d->inputs[k]] = last[i];
    }
    /* The sweep: a tensor takes a buffer when made (an alias shares its input's; an
     * element-wise op takes over the buffer of a same-sized input it is the last reader of, as
     * TF's forward_input_or_allocate_output does), the buffer is freed after its last reader.
     * Convolutions and matmuls add a transient workspace as large as their largest
     * batch-dimension operand, at most SIM_WORKSPACE_CAP. */
    int n_buf = 0, n_ent = 0;
    double live = 0, best = 0;
    for (int p = 0; p < n; p++) {
        int i = order[p];
        const struct dp_node *d = dp_graph_node(g, (size_t)i);
        bool worker_read = false;
        if (!runs[i] && size[i] > 0 && last[i] >= 0)
            for (int e = radj_start[i]; e < radj_start[i + 1] && !worker_read; e++)
                worker_read = runs[radj[e]] != 0;
        double ws = 0;
        if (size[i] > 0 && (runs[i] || worker_read)) {
            int b = -1;
            if (runs[i] && d->n_inputs > 0 && dp_op_is_alias(d->op)) {
                b = buf[d->inputs[0]];
                if (b >= 0 && end[b] < p) b = -1; /* freed already: only after a cycle */
            } else if (runs[i] && dp_op_class(d->op) == DP_OPCLASS_ELEMWISE) {
                for (int k = 0; k < d->n_inputs && b < 0; k++) {
                    int c = buf[d->inputs[k]];
                    if (c >= 0 && end[c] == p && bsize[c] == size[i]) b = c;
                }
            }
            int e_at = last[i] > p ? last[i] : p;
            if (b < 0) {
                b = n_buf++;
                bsize[b] = size[i];
                end[b] = e_at;
                live += size[i];
            } else if (e_at > end[b]) {
                end[b] = e_at;
            }
            buf[i] = b;
            ent_buf[n_ent] = b;
            ent_next[n_ent] = head[end[b]];
            head[end[b]] = n_ent++;
        }
        if (runs[i] && dp_op_class(d->op) == DP_OPCLASS_MATMUL && !strncmp(d->op, "Conv", 4)) {
            ws = size[i];
            for (int k = 0; k < d->n_inputs; k++)
                if (size[d->inputs[k]] > ws) ws = size[d->inputs[k]];
            if (ws > SIM_WORKSPACE_CAP) ws = SIM_WORKSPACE_CAP;
        }
        if (live + ws > best) best = live + ws;
        /* Free what dies here (an entry is stale when its buffer's end moved later since). */
        for (int e = head[p]; e >= 0; e = ent_next[e]) {
            int b = ent_buf[e];
            if (end[b] == p) {
                live -= bsize[b];
                end[b] = -1;
            }
        }
    }
    *peak = best;
    st = DP_OK;
done:
    if (st) dp_error_set(err, st, "out of memory sweeping the memory of %s", dp_graph_name(g));
    free(indeg);
    free(heap);
    free(order);
    free(pos);
    free(last);
    free(buf);
    free(head);
    free(ent_next);
    free(ent_buf);
    free(end);
    free(radj_start);
    free(radj);
    free(size);
    free(bsize);
    free(runs);
    return st;
}


enum dp_status dp_sim_activation_bytes(const struct dp_graph *g, int64_t batch, double *peak,
                                       struct dp_error *err) {
    return sweep(g, batch, false, peak, err);
}

enum dp_status sim_activation_fused(const struct dp_graph *g, int64_t batch, double *peak,
                                    struct dp_error *err) {
    return sweep(g, batch, true, peak, err);
}

/* Per-worker bytes besides activations: the CUDA context, weights (fp16 copies under mixed
 * precision), gradients, optimizer slots where the update runs on the worker. */
static double base_bytes(const struct dp_sim_workload *w, const struct dp_setting *s,
                         const struct dp_sim_constants *k, const double *shard, int n_ps) {
    bool ar = s->sync == DP_SYNC_ALLREDUCE;
    /* fp32 variables (the master weights), plus their 16-bit copies under mixed and bf16
     * precision (autocast's cast weights), their fp8 copies under fp8 */
    double copy = s->precision == DP_PREC_MIXED || s->precision == DP_PREC_BF16 ? 0.5
                  : s->precision == DP_PREC_FP8                                  ? 0.25
                                                                                 : 0;
    double weights = w->params * 4.0 * (1 + copy);
    /* gradients, held until pushed or reduced: 16-bit under TensorFlow's mixed precision
     * (all-reduced compact), fp32 under PyTorch's AMP (fp32 parameters) */
    double grads = w->params * (sim_f16_gradients(s) ? 2.0 : 4.0);
    /* optimizer slots where the update runs on this GPU: every parameter's under all-reduce,
     * the largest PS shard's when the shards live on the GPUs (NVLink), none for a CPU PS */
    double slots = 0;
    if (ar) slots = w->slots * w->params * 4.0;
    else if (s->network == DP_NET_NVLINK)
        for (int p = 0; p < n_ps; p++)
            if (w->slots * shard[p] > slots) slots = w->slots * shard[p];
    /* (PyTorch DDP's buckets are views of the gradients: nothing more) */
    return k->context_gb * 1e9 + weights + grads + slots;
}

bool sim_f16_gradients(const struct dp_setting *s) {
    return s->framework == DP_FW_TENSORFLOW &&
           (s->precision == DP_PREC_MIXED || s->precision == DP_PREC_BF16);
}

double dp_sim_byte_scale(bool graph_f16, const struct dp_setting *s) {
    bool half = s->precision == DP_PREC_MIXED || s->precision == DP_PREC_BF16 ||
                s->precision == DP_PREC_FP8;
    return half && !graph_f16 ? 0.5 : 1.0;
}

void sim_footprint(const struct dp_sim_workload *w, const struct dp_setting *s,
                   const struct dp_sim_constants *k, const double *shard, int n_ps,
                   double *act, double *base) {
    double byte_scale = dp_sim_byte_scale(w->graph_f16, s);
    /* A fusing framework keeps the fused chains' inputs, not their outputs. */
    double fuse = s->framework == DP_FW_PYTORCH ? k->fuse_pt : k->fuse_tf;
    *act = (w->act_bytes - fuse * (w->act_bytes - w->act_fused)) * byte_scale;
    *base = base_bytes(w, s, k, shard, n_ps);
}
