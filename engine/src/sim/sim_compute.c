/* sim_compute.c: the GPU side of the simulator. A workload is a graph's worker ops costed at one
 * batch; a device is a catalog GPU as one worker sees it; sim_compute turns the ops into forward
 * and backward profiles: per op a roofline on the CUDA or tensor cores the op can use (by
 * architecture generation and precision), wave quantisation over the SMs, memory bandwidth,
 * the framework's host dispatch and fused element-wise kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/ops.h"
#include "sim/sim_impl.h"

/* --- the workload --- */

static bool contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* Gradient ops: in the graph's backward phase (TF's "gradients" name scope, dp_node_phase; a
 * second gradients() call's "gradients_1"), or of a type only a gradient has (ReluGrad, a
 * filter gradient). A forward transposed convolution is a Conv2DBackpropInput outside that
 * scope: forward work, though its type names a backprop. */
static bool is_backward(const struct dp_node *n) {
    return dp_node_phase(n) == DP_PHASE_BACKWARD || !strncmp(n->name, "gradients", 9) ||
           contains(n->op, "Grad") || contains(n->op, "BackpropFilter");
}

/* The input gradient of a 2-D or 3-D convolution. */
static bool conv_input_grad(const struct dp_node *n) {
    return !strcmp(n->op, "Conv2DBackpropInput") || !strcmp(n->op, "Conv3DBackpropInputV2");
}

/* A 2-D or 3-D convolution (forward or either gradient): its filter node ([kh, kw, cin, cout],
 * [kd, kh, kw, cin, cout] for a volume), or NULL. The input gradient reads the filter as its
 * second input like the forward op; the filter gradient has the filter's shape itself. */
static const struct dp_node *conv_filter(const struct dp_graph *g, const struct dp_node *n) {
    if ((!strcmp(n->op, "Conv2D") || !strcmp(n->op, "Conv3D") || conv_input_grad(n)) &&
        n->n_inputs >= 2)
        return dp_graph_node(g, (size_t)n->inputs[1]);
    if (!strcmp(n->op, "Conv2DBackpropFilter") || !strcmp(n->op, "Conv3DBackpropFilterV2"))
        return n;
    return NULL;
}

/* A conv/matmul output as a GEMM: rows (every leading dimension at the batch) and columns (the
 * last), for the wave quantisation; 0 x 0 for a weight gradient (an output without the batch
 * dimension: the reduction runs over the batch, and cuBLAS / cuDNN split it over the SMs). The
 * reduction and output widths, for tensor-core eligibility: the filter's window times cin
 * (times cout for the input gradient) or the first operand's last dimension (matmuls), and the
 * output's last dimension. */
static void gemm_shape(const struct dp_graph *g, const struct dp_node *n, int64_t batch,
                       double *m, double *cols, double *red, double *chan, double *width) {
    *m = *cols = *red = *chan = *width = 0;
    if (n->n_dims < 2) return;
    *width = n->dims[n->n_dims - 1] > 0 ? (double)n->dims[n->n_dims - 1] : 0;
    double rows = 1;
    bool has_batch = false;
    for (int d = 0; d < n->n_dims - 1; d++) {
        has_batch |= n->dims[d] == DP_DIM_BATCH;
        rows *= n->dims[d] == DP_DIM_BATCH ? (double)batch : n->dims[d] > 0 ? n->dims[d] : 0;
    }
    if (has_batch) {
        *m = rows;
        *cols = *width;
    }
    const struct dp_node *filt = conv_filter(g, n);
    if (filt && (filt->n_dims == 4 || filt->n_dims == 5)) {
        /* the window's dimensions, then cin (forward, filter gradient) or cout (input
         * gradient) */
        int r = filt->n_dims, ch = filt != n && conv_input_grad(n) ? r - 1 : r - 2;
        *red = *chan = (double)filt->dims[ch];
        for (int d = 0; d < r - 2; d++) *red *= (double)filt->dims[d];
        return;
    }
    if (n->n_inputs >= 1) {
        const struct dp_node *a = dp_graph_node(g, (size_t)n->inputs[0]);
        if (a->n_dims >= 1 && a->dims[a->n_dims - 1] > 0)
            *red = *chan = (double)a->dims[a->n_dims - 1];
    }
}

/* The variable behind a read: through Identity / ReadVariableOp / Cast / Enter hops, the node
 * with parameters; -1 when there is none. */
static int var_of(const struct dp_graph *g, int idx) {
    for (int hop = 0; hop < 4 && idx >= 0; hop++) {
        const struct dp_node *n = dp_graph_node(g, (size_t)idx);
        if (n->params > 0) return idx;
        if (n->n_inputs < 1 || !(!strcmp(n->op, "Identity") || !strcmp(n->op, "ReadVariableOp") ||
                                 !strcmp(n->op, "Cast") || !strcmp(n->op, "Enter")))
            return -1;
        idx = n->inputs[0];
    }
    return -1;
}

/* What a memory-bound op can be in a fused kernel. Element-wise ops and softmaxes (a row's
 * reduction and its element-wise epilogue, as cuDNN, apex and XLA run them) take in their
 * producer and fuse into their consumer; a row reduction (a layer norm's mean, a softmax
 * gradient's sum, a bias gradient) takes in its element-wise producer but ends the kernel
 * (its output is smaller than its input). Pooling, batch and local response norms are cuDNN's
 * own kernels and fuse with nothing, except the forward batch norm under XLA: its GPU backend
 * expands it into a reduction and element-wise ops (BatchNormExpander; cuDNN's batch norm only
 * under --xla_gpu_use_cudnn_batchnorm, off by default), and the element-wise part fuses with
 * its reader (a Relu): the normalised tensor is neither written nor read back. The gradient's
 * expansion reads its inputs twice (its reductions, then dx), so the Relu gradient fused into
 * it saves one tensor pass where the rule below would count two: it stays a kernel. */
enum { FUSE_NONE, FUSE_CHAIN, FUSE_SINK };
static unsigned char fuse_role(const char *op, enum dp_op_class cls, bool xla) {
    if (cls == DP_OPCLASS_ELEMWISE || !strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax") ||
        (xla && !strncmp(op, "FusedBatchNorm", 14) && !strstr(op, "Grad")))
        return FUSE_CHAIN;
    if (cls != DP_OPCLASS_REDUCE) return FUSE_NONE;
    static const char *const sinks[] = {"Mean", "Sum", "Max", "Min", "Prod", "BiasAddGrad",
                                        "L2Loss", "SoftmaxCrossEntropyWithLogits",
                                        "SparseSoftmaxCrossEntropyWithLogits"};
    for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++)
        if (!strcmp(op, sinks[k])) return FUSE_SINK;
    return FUSE_NONE;
}

/* Fusion: an element-wise op (or a softmax) whose readers are all element-wise ops,
 * softmaxes or row reductions runs inside their kernels; the tensor between them is
 * neither written nor read. With several readers (a training graph's forward output that
 * its gradient ops read again) the producer is recomputed in each reader's kernel, as
 * XLA duplicates cheap element-wise producers into their consumers and PyTorch's fused
 * layers (apex, TorchScript's bias-GELU, fused dropout) recompute in the backward pass:
 * its kernel and its output go, and each reader reads the producer's inputs instead,
 * so r readers save (1 + r) x the output's bytes less (r - 1) x the inputs' bytes
 * (2 x the output for one reader); a producer that would cost more that way stays.
 * role: per worker op, its fuse_role; worker_idx: per node, its worker op or -1; readers:
 * per node, its readers; fusing: scratch, per node. Fills the ops' fused and absorbed, or
 * under xla their fused_xla and absorbed_xla. */
static void fuse_ops(const struct dp_graph *g, struct dp_sim_workload *w, int64_t batch,
                     const unsigned char *role, const int *worker_idx, const int *readers,
                     int *fusing, bool xla) {
    size_t nn = dp_graph_n_nodes(g);
    memset(fusing, 0, nn * sizeof *fusing);
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        int wi = worker_idx[i];
        if (wi < 0 || !role[wi]) continue;
        bool hb = sim_has_batch_dim(n);
        for (int k = 0; k < n->n_inputs; k++)
            if (!sim_reads_stats_only(dp_graph_node(g, (size_t)n->inputs[k]), n, hb))
                fusing[n->inputs[k]]++;
    }
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        int wi = worker_idx[i];
        if (wi < 0 || !role[wi]) continue;
        bool hb = sim_has_batch_dim(n);
        for (int k = 0; k < n->n_inputs; k++) {
            int src = n->inputs[k], ws = worker_idx[src], r = readers[src];
            if (ws < 0 || role[ws] != FUSE_CHAIN || fusing[src] != r ||
                sim_reads_stats_only(dp_graph_node(g, (size_t)src), n, hb))
                continue;
            const struct dp_node *sn = dp_graph_node(g, (size_t)src);
            int es = dp_dtype_size(sn->dtype);
            double osz = dp_node_tensor_size(sn, batch) * (es ? es : 4);
            double in = w->ops[ws].bytes > osz ? w->ops[ws].bytes - osz : 0;
            double saved = (1 + r) * osz - (r - 1) * in;
            if (saved <= 0) continue;
            *(xla ? &w->ops[ws].absorbed_xla : &w->ops[ws].absorbed) = 1;
            *(xla ? &w->ops[wi].fused_xla : &w->ops[wi].fused) += saved / r;
        }
    }
}

/* cuDNN's non-fused Winograd F(4x4, 3x3) writes each 6x6 input tile's transform (36 values for
 * every 16 outputs: 2.25 x the tensor) and the products' (2.25 x the output) to memory and reads
 * them back: 4.5 x the bytes of the convolution's two activation-sized tensors (input and
 * output; for the filter gradient, input and output gradient), beside the filter. */
static double wino_traffic(const struct dp_graph *g, const struct dp_node *n, double bytes) {
    const struct dp_node *filt = conv_filter(g, n);
    double fb = 0;
    if (filt) {
        int es = dp_dtype_size(filt->dtype);
        fb = dp_node_tensor_size(filt, 1) * (es ? es : 4);
    }
    return bytes > fb ? 4.5 * (bytes - fb) : 0;
}

/* What a graph's batch inputs say of a sample: a sequence model's tokens (the widest integer
 * [batch, tokens] input: BERT's ids, GNMT's source), an image model's pixels (a [batch, h, w, 3]
 * or [batch, 3, h, w] input). */
static void input_shape(const struct dp_graph *g, struct dp_sim_workload *w) {
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_op_class(n->op) != DP_OPCLASS_INPUT || n->n_dims < 2 || n->dims[0] != DP_DIM_BATCH)
            continue;
        const int64_t *d = n->dims;
        if (n->n_dims == 2 && !dp_dtype_is_float(n->dtype) && d[1] > w->seq_len)
            w->seq_len = (double)d[1];
        if (n->n_dims == 4 && (d[3] == 3 || d[1] == 3)) {
            double px = d[3] == 3 ? (double)d[1] * d[2] : (double)d[2] * d[3];
            if (px > w->image_px) w->image_px = px;
        }
    }
}

static int cmp_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

enum dp_status dp_sim_workload_init(const struct dp_graph *g, int64_t batch,
                                    struct dp_sim_workload **out, struct dp_error *err) {
    enum dp_status st = DP_ERR_NOMEM;
    size_t nn = dp_graph_n_nodes(g);
    struct dp_sim_workload *w = calloc(1, sizeof *w);
    double *need = NULL;      /* per node: parameters a forward op reads first / a grad op makes */
    unsigned char *claimed = NULL; /* per variable: a forward op already needs it */
    int *readers = NULL, *worker_idx = NULL;
    unsigned char *elem = NULL, *elem_xla = NULL; /* per worker op: its fuse_role, and XLA's */
    int *fusing = NULL;         /* per node: readers that are fusable worker ops */
    if (!w) goto done;
    snprintf(w->name, sizeof w->name, "%s", dp_graph_name(g));
    if (batch <= 0) batch = dp_graph_batch(g);
    if (batch <= 0) batch = 32;
    w->batch = batch;
    w->graph_f16 = dp_graph_f16(g);
    input_shape(g, w);
    int64_t gbatch = dp_graph_batch(g) > 0 ? dp_graph_batch(g) : batch;
    if (!(w->ops = calloc(nn + 1, sizeof *w->ops)) || !(w->vars = calloc(nn + 1, sizeof *w->vars)) ||
        !(need = calloc(nn + 1, sizeof *need)) || !(claimed = calloc(nn + 1, 1)) ||
        !(readers = calloc(nn + 1, sizeof *readers)) ||
        !(worker_idx = malloc((nn + 1) * sizeof *worker_idx)) || !(elem = calloc(nn + 1, 1)) ||
        !(elem_xla = calloc(nn + 1, 1)) || !(fusing = calloc(nn + 1, sizeof *fusing)))
        goto done;
    /* Which ops run on the worker GPU: those placed on a GPU; when the graph names no device
     * at all, every op with a kernel. */
    bool any_gpu = false;
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_node_on_gpu(n)) any_gpu = true;
        bool hb = sim_has_batch_dim(n);
        for (int k = 0; k < n->n_inputs; k++) /* a batch norm's statistics are not its output */
            if (!sim_reads_stats_only(dp_graph_node(g, (size_t)n->inputs[k]), n, hb))
                readers[n->inputs[k]]++;
    }
    /* Which parameters each op needs (forward, first reader) or produces (the gradient fed to
     * an Apply op: its largest backward input). */
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_op_class(n->op) != DP_OPCLASS_OPTIMIZER || n->n_inputs < 1) continue;
        int v = var_of(g, n->inputs[0]), best = -1;
        double best_sz = -1;
        for (int k = 1; k < n->n_inputs; k++) {
            const struct dp_node *in = dp_graph_node(g, (size_t)n->inputs[k]);
            double sz = dp_node_tensor_size(in, 1);
            if (is_backward(in) && sz > best_sz) best = n->inputs[k], best_sz = sz;
        }
        /* Under mixed precision the update reads the gradient unscaled after the backward
         * pass; it was made (and DDP reduces it) where the scaled gradient was. */
        for (int hop = 0; hop < 2 && best >= 0; hop++) {
            const struct dp_node *u = dp_graph_node(g, (size_t)best);
            if (strncmp(u->name, "loss_scale/unscale/", 19) || u->n_inputs < 1) break;
            best = u->inputs[0];
        }
        if (v >= 0 && best >= 0) need[best] += (double)dp_graph_node(g, (size_t)v)->params;
    }
    double need_total = 0, flops_total = 0;
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        worker_idx[i] = -1;
        if (n->params > 0) {
            w->vars[w->n_vars++] = (double)n->params;
            w->params += (double)n->params;
        }
        enum dp_op_class cls = dp_op_class(n->op);
        if (cls == DP_OPCLASS_OPTIMIZER) {
            int sl = dp_op_optimizer_slots(n->op);
            if (sl > w->slots) w->slots = sl;
        }
        if (cls == DP_OPCLASS_NONE || cls == DP_OPCLASS_INPUT || cls == DP_OPCLASS_OPTIMIZER)
            continue;
        if (any_gpu && !dp_node_on_gpu(n)) continue;
        struct sim_op *o = &w->ops[w->n_ops];
        dp_cost_node(g, i, batch, &o->flops, &o->bytes);
        if (o->flops <= 0 && o->bytes <= 0 && (n->flops > 0 || n->bytes > 0)) {
            double r = (double)batch / (double)gbatch;
            o->flops = n->flops > 0 ? n->flops * r : 0;
            o->bytes = n->bytes > 0 ? n->bytes * r : 0;
        }
        flops_total += o->flops;
        o->mm = cls == DP_OPCLASS_MATMUL;
        o->launches = 1;
        o->back = is_backward(n);
        elem[w->n_ops] = fuse_role(n->op, cls, false);
        elem_xla[w->n_ops] = fuse_role(n->op, cls, true);
        if (o->mm) {
            double red;
            gemm_shape(g, n, batch, &o->m, &o->n, &red, &o->chan, &o->width);
            o->wino = dp_op_winograd_eligible(g, n);
            if (o->wino) o->wino_bytes = wino_traffic(g, n, o->bytes);
            o->tc = red >= 8 && o->width >= 8;
            o->blas = !conv_filter(g, n);
            o->batched = o->blas && n->n_dims >= 4;
        }
        if (o->back) {
            o->pneed = need[i];
        } else {
            for (int k = 0; k < n->n_inputs; k++) {
                int v = var_of(g, n->inputs[k]);
                if (v >= 0 && !claimed[v]) {
                    claimed[v] = 1;
                    o->pneed += (double)dp_graph_node(g, (size_t)v)->params;
                }
            }
            need_total += o->pneed;
        }
        worker_idx[i] = w->n_ops++;
    }
    if (!w->n_ops) {
        st = dp_error_set(err, DP_ERR_INVALID, "graph %s has no GPU op to simulate",
                          dp_graph_name(g));
        goto done;
    }
    fuse_ops(g, w, batch, elem, worker_idx, readers, fusing, false);
    fuse_ops(g, w, batch, elem_xla, worker_idx, readers, fusing, true);
    /* Variables no forward op was seen reading are needed from the start. */
    for (int i = 0; i < w->n_ops; i++)
        if (!w->ops[i].back) {
            if (w->params > need_total) w->ops[i].pneed += w->params - need_total;
            break;
        }
    qsort(w->vars, (size_t)w->n_vars, sizeof *w->vars, cmp_desc);
    w->gflops = flops_total / 1e9;
    /* Forward records first, each phase in graph order, consecutive memory-bound ops merged. */
    struct sim_op *sorted = malloc((size_t)w->n_ops * sizeof *sorted);
    if (!sorted) goto done;
    int k = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < w->n_ops; i++) {
            const struct sim_op *o = &w->ops[i];
            if (o->back != pass) continue;
            struct sim_op *last = k && (pass ? k > w->n_fw : true) ? &sorted[k - 1] : NULL;
            if (!o->mm && last && !last->mm) {
                last->bytes += o->bytes;
                last->fused += o->fused;
                last->launches += 1;
                last->absorbed += o->absorbed;
                last->fused_xla += o->fused_xla;
                last->absorbed_xla += o->absorbed_xla;
                last->pneed += o->pneed;
                continue;
            }
            sorted[k] = *o;
            if (!o->mm) sorted[k].flops = 0;
            k++;
        }
        if (!pass) w->n_fw = k;
    }
    free(w->ops);
    w->ops = sorted;
    w->n_ops = k;
    if ((st = dp_sim_activation_bytes(g, batch, &w->act_bytes, err)) ||
        (st = sim_activation_fused(g, batch, &w->act_fused, err)))
        goto done;
    *out = w;
    w = NULL;
done:
    if (st == DP_ERR_NOMEM)
        dp_error_set(err, DP_ERR_NOMEM, "out of memory preparing %s", dp_graph_name(g));
    free(need);
    free(claimed);
    free(readers);
    free(worker_idx);
    free(elem);
    free(elem_xla);
    free(fusing);
    dp_sim_workload_free(w);
    return st;
}

void dp_sim_workload_free(struct dp_sim_workload *w) {
    if (!w) return;
    free(w->ops);
    free(w->vars);
    free(w);
}

/* Over one phase's records [from, to): the work share done before (forward: the record reaching
 * half the parameters starts; backward: it ends) and the parameters' share in the phase's first
 * (forward) or last (backward) 1/DP_SIM_CHUNKS of the work. */
/* A record's work at nominal rates (10 TFLOPS, 400 GB/s): a measure of where in a phase it
 * falls that does not depend on the GPU. */
static double nominal_work(const struct sim_op *o) { return fmax(o->flops / 1e13, o->bytes / 4e11); }

static void placement(const struct sim_op *ops, int from, int to, bool backward, double *mid,
                      double *edge) {
    double W = 0, Q = 0, w = 0, acc = 0;
    *mid = *edge = 0;
    for (int i = from; i < to; i++) {
        W += nominal_work(&ops[i]);
        Q += ops[i].pneed;
    }
    if (!(W > 0 && Q > 0)) return;
    bool found = false;
    for (int i = from; i < to; i++) {
        double start = w;
        w += nominal_work(&ops[i]);
        acc += ops[i].pneed;
        if (!found && acc >= Q / 2) {
            *mid = fmin(1, (backward ? w : start) / W);
            found = true;
        }
        if (backward ? w > W * (1 - 1.0 / DP_SIM_CHUNKS) : start < W / DP_SIM_CHUNKS)
            *edge += ops[i].pneed / Q;
    }
    *edge = fmin(1, *edge); /* a sum of shares may pass 1 by a rounding */
}

void dp_sim_workload_shape(const struct dp_sim_workload *w, struct dp_sim_workload_shape *out) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < w->n_ops; i++) {
        out->fused_bytes += w->ops[i].fused;
        out->fused_kernels += w->ops[i].absorbed;
    }
    placement(w->ops, 0, w->n_fw, false, &out->fw_param_mid, &out->fw_param_head);
    placement(w->ops, w->n_fw, w->n_ops, true, &out->bw_grad_mid, &out->bw_grad_tail);
    out->activation_bytes = w->act_bytes;
}

/* --- the device --- */

/* Dense FP16 tensor-core rate over the FP32 rate, per generation, for a GPU whose tensor
 * figure the catalog lacks (the generation's spec sheets: V100 125/15.7, T4 and Quadro RTX
 * 8.0; GA10x and AD10x 4.0 (the GA100 and GH100 differ and have their figures); H100 989/67;
 * B200 2250/75). GeForce cards too: their spec sheets give FP32-accumulate tensor math half
 * that rate, but the published mixed-precision runs show no such halving (an RTX 2080 Ti
 * trains as fast per SM and clock as a Titan RTX or Quadro RTX 6000, the same TU102), so the
 * kernels are fed at the full rate or are not bound by it. 0: no tensor cores. */
static double tensor_ratio(enum dp_gpu_gen gen) {
    switch (gen) {
    case DP_GEN_VOLTA: case DP_GEN_TURING: return 8.0;
    case DP_GEN_AMPERE: case DP_GEN_ADA: return 4.0;
    case DP_GEN_HOPPER: return 14.8;
    case DP_GEN_BLACKWELL: return 30.0;
    default: return 0;
    }
}

/* The share of a generation's FP32 lanes its SMs can keep issuing to. Kepler's SMX has 192
 * lanes behind 4 schedulers, and only instruction-level parallelism (dual issue) fills them:
 * NVIDIA's Maxwell whitepaper (GM107) gives Maxwell's 128-lane SM 1.35x the performance per
 * CUDA core, so Kepler sustains 1/1.35 of what later generations do per lane. */
static double issue_share(enum dp_gpu_gen gen) { return gen == DP_GEN_KEPLER ? 1 / 1.35 : 1.0; }

/* Kepler and Maxwell Teslas run at their application clock, by default the base clock, unless
 * the board's power cap leaves room (autoboost); a sustained training load on a K80's two dies
 * leaves little. Pascal and later (GPU Boost 3.0) sustain their boost clocks, which is what the
 * spec sheets' figures are. */
static bool runs_at_base(enum dp_gpu_gen gen) {
    return gen == DP_GEN_KEPLER || gen == DP_GEN_MAXWELL;
}

/* The share of its memory bandwidth a generation's boards keep. Kepler and Maxwell data-centre
 * GPUs (Tesla) carry GDDR5 with ECC on by default, and on GDDR memory fetching the ECC bits with
 * every transaction costs about 20% of the effective bandwidth (CUDA C++ Best Practices Guide,
 * 9.2.1 "Theoretical Bandwidth Calculation"). HBM2 and later (P100 onwards) have dedicated ECC
 * resources and pay nothing; the later GDDR boards (GeForce, Quadro, the GDDR Teslas) are not
 * told apart by generation, so they keep their figure. */
static double ecc_bandwidth_share(enum dp_gpu_gen gen) {
    return gen == DP_GEN_KEPLER || gen == DP_GEN_MAXWELL ? 0.8 : 1.0;
}

/* One direction of a x16 link, GB/s, per PCIe generation (3.0: 15.75; doubling since). */
static double pcie_gbps(int gen) { return gen >= 3 ? 15.75 * pow(2.0, gen - 3) : 0; }

double dp_sim_link_gbps(const struct dp_gpu *g, enum dp_network n) {
    if (n == DP_NET_NVLINK && g->nvlink_gbps > 0) return g->nvlink_gbps / 2;
    if (n == DP_NET_NVLINK || n == DP_NET_PCIE)
        return g->pcie_gen >= 3 ? pcie_gbps(g->pcie_gen) : dp_network_bandwidth_gbps(DP_NET_PCIE);
    return dp_network_bandwidth_gbps(n);
}

static void note(struct sim_device *d, const char *what) {
    size_t len = strlen(d->notes);
    snprintf(d->notes + len, sizeof d->notes - len, "%s%s", len ? "; " : "", what);
}

void sim_device_links(const struct dp_gpu *gpu, struct sim_device *d) {
    d->nvlink = gpu->nvlink_gbps > 0 ? BYTES_PER_MS(dp_sim_link_gbps(gpu, DP_NET_NVLINK)) : 0;
    d->pcie = BYTES_PER_MS(dp_sim_link_gbps(gpu, DP_NET_PCIE));
    d->form = gpu->form_factor;
}

enum dp_status sim_device_init(const struct dp_gpu *gpu, struct sim_device *d,
                               struct dp_error *err) {
    memset(d, 0, sizeof *d);
    if (!gpu || !(gpu->fp32_tflops > 0) || !(gpu->bandwidth_gbps > 0))
        return dp_error_set(err, DP_ERR_INVALID,
                            "GPU %s has no known FP32 TFLOPS or memory bandwidth in the "
                            "catalog; cannot simulate it", gpu ? gpu->name : "(none)");
    double per = gpu->devices > 1 ? 1.0 / gpu->devices : 1.0;
    char buf[160];
    d->gen = dp_gpu_generation(gpu);
    d->fp32 = gpu->fp32_tflops * 1e9 * per;
    if (runs_at_base(d->gen) && gpu->fp32_base_tflops > 0) {
        d->fp32 = gpu->fp32_base_tflops * 1e9 * per;
        snprintf(buf, sizeof buf, "%s runs at its base clock: %.3g of the boost %.3g TFLOPS",
                 dp_gpu_gen_name(d->gen), gpu->fp32_base_tflops, gpu->fp32_tflops);
        note(d, buf);
    }
    if (issue_share(d->gen) < 1) {
        d->fp32 *= issue_share(d->gen);
        snprintf(buf, sizeof buf, "%s issues to %.0f%% of its FP32 lanes", dp_gpu_gen_name(d->gen),
                 issue_share(d->gen) * 100);
        note(d, buf);
    }
    d->bw = BYTES_PER_MS(gpu->bandwidth_gbps) * per * ecc_bandwidth_share(d->gen);
    if (ecc_bandwidth_share(d->gen) < 1) {
        snprintf(buf, sizeof buf, "%s runs with ECC on GDDR5: %.0f%% of its memory bandwidth",
                 dp_gpu_gen_name(d->gen), ecc_bandwidth_share(d->gen) * 100);
        note(d, buf);
    }
    d->memory_gb = gpu->memory_gb * per;
    d->sms = gpu->sm_count > 0 ? (int)(gpu->sm_count * per) : 0;
    if (gpu->devices > 1) {
        snprintf(buf, sizeof buf, "one of the board's %d devices: 1/%d of its figures",
                 gpu->devices, gpu->devices);
        note(d, buf);
    }
    if (gpu->fp16_tflops > 0) {
        d->tensor16 = gpu->fp16_tflops * 1e9 * per;
    } else if (tensor_ratio(d->gen) > 0) {
        double r = tensor_ratio(d->gen);
        d->tensor16 = d->fp32 * r;
        snprintf(buf, sizeof buf, "tensor rate unknown: %.3g TFLOPS estimated (%s: %gx FP32)",
                 d->tensor16 / 1e9, dp_gpu_gen_name(d->gen), r);
        note(d, buf);
    }
    if (d->gen == DP_GEN_UNKNOWN) note(d, "architecture generation unknown: no tensor cores");
    if (!d->sms) note(d, "SM count unknown: no wave quantisation");
    sim_device_links(gpu, d);
    if (gpu->pcie_gen < 3) note(d, "PCIe generation unknown: PCIe 3.0 x16 assumed");
    return DP_OK;
}

/* --- the compute profile --- */

/* 16-bit tensor-core operands (fp16 or bf16; fp8's non-GEMM work) */
static bool half_precision(const struct dp_setting *s) {
    return s->precision == DP_PREC_MIXED || s->precision == DP_PREC_BF16 ||
           s->precision == DP_PREC_FP8;
}

double dp_sim_tensor_share(enum dp_gpu_gen gen, const struct dp_setting *s) {
    if (half_precision(s)) return 1.0;
    return dp_setting_tf32_conv(s, gen) ? 0.5 : 0.0;
}

double sim_matmul_share(enum dp_gpu_gen gen, const struct dp_setting *s, bool batched) {
    if (s->precision == DP_PREC_FP8) return batched ? 1.0 : 2.0;
    if (half_precision(s)) return 1.0;
    return dp_setting_tf32_matmul(s, gen) ? 0.5 : 0.0;
}

void sim_precision_notes(const struct dp_setting *s, enum dp_gpu_gen gen, char *notes, size_t n) {
    char buf[320];
    size_t len = strlen(notes);
    if (s->precision == DP_PREC_FP8)
        snprintf(buf, sizeof buf, "fp8: the layers' matrix products as fp8 GEMMs (Transformer "
                                  "Engine) at twice the fp16 rate; attention's products, "
                                  "convolutions and the rest in bf16");
    else if (s->precision == DP_PREC_FP32 && gen >= DP_GEN_AMPERE)
        dp_setting_describe_tf32(s, gen, buf, sizeof buf);
    else return;
    snprintf(notes + len, n > len ? n - len : 0, "%s%s", len ? "; " : "", buf);
}

/* The JPEG decode of an image model's input on the host CPUs or (DALI) the GPU. */
void sim_input(const struct dp_sim_workload *w, const struct dp_setting *s,
               const struct dp_system *sys, const struct sim_device *d,
               const struct dp_sim_constants *k, double *cpu_ms, double *gpu_ms, char *notes,
               size_t n) {
    char buf[200] = "";
    *cpu_ms = *gpu_ms = 0;
    if (s->loader == DP_LOADER_SYNTHETIC) return;
    double images = (double)w->batch * dp_setting_accum(s), mp = w->image_px / 1e6;
    if (!(mp > 0)) {
        snprintf(buf, sizeof buf, "loader %s: not an image model: no decoding",
                 dp_loader_name(s->loader));
    } else if (s->loader == DP_LOADER_DALI) {
        /* nvJPEG's output written, read by the crop and normalise, written as 16-bit */
        *gpu_ms = w->batch * w->image_px * (3 + 3 + 6) / (d->bw * k->eff_mem);
        snprintf(buf, sizeof buf, "loader dali: JPEG decoded on the GPU (%.3g ms a micro-batch)",
                 *gpu_ms);
    } else {
        int cores = s->cpu_cores > 0 ? s->cpu_cores : sys && sys->cpu_cores > 0 ? sys->cpu_cores : 0;
        if (!cores) {
            snprintf(buf, sizeof buf, "loader cpu: the machine's CPU cores unknown (no "
                                      "--cpu-cores, no system): no input ceiling");
        } else {
            int per = dp_setting_gpus_per_machine(s);
            *cpu_ms = images * (per > 0 ? per : 1) * mp * k->decode_ms_mp / cores;
            snprintf(buf, sizeof buf, "loader cpu: %d cores decode %.0f images/s a machine "
                                      "(decode alone, no augmentation)",
                     cores, cores * 1000 / (mp * k->decode_ms_mp));
        }
    }
    size_t len = strlen(notes);
    snprintf(notes + len, n > len ? n - len : 0, "%s%s", len ? "; " : "", buf);
}

/* One op's record before compression: kernel-busy and memory-busy time (ms), its share of the
 * launches, parameters needed or produced. */
struct oprec {
    double kern, mem, launches, params;
};

/* A phase compressed into at most SIM_CHUNKS consecutive chunks of similar length; the trace
 * treats a chunk's kernels as spread evenly over it. A chunk lasts its kernels plus the gaps
 * between them, or its host dispatch time when the host is slower (the host runs ahead of the
 * GPU only within a chunk). */
static void chunk_build(const struct oprec *v, int n, bool forward, double gap, double host,
                        struct phase_prof *p) {
    memset(p, 0, sizeof *p);
    double total = 0, bytes = 0;
    for (int i = 0; i < n; i++) {
        double g = v[i].kern + v[i].launches * gap, h = v[i].launches * host;
        total += g > h ? g : h;
        bytes += v[i].params;
    }
    if (!n) return;
    double target = total / SIM_CHUNKS, acc_b = 0, gpu = 0, hst = 0;
    struct chunk cur = {0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        gpu += v[i].kern + v[i].launches * gap;
        hst += v[i].launches * host;
        cur.t = gpu > hst ? gpu : hst;
        cur.k += v[i].kern;
        cur.m += v[i].mem;
        acc_b += v[i].params;
        cur.frac += v[i].params;
        bool last = i == n - 1;
        if (last || (cur.t >= target && p->n < SIM_CHUNKS - 1)) {
            if (forward) cur.frac = bytes > 0 ? acc_b / bytes : 0;
            else cur.frac = bytes > 0 ? cur.frac / bytes : (total > 0 ? cur.t / total : 0);
            p->total += cur.t;
            p->c[p->n++] = cur;
            memset(&cur, 0, sizeof cur);
            gpu = hst = 0;
        }
    }
}

/* Tensor cores take their operands in 16-byte vectors along the channels and the output
 * width (8 fp16 or 4 TF32 elements): cuDNN and cuBLAS pad a dimension that is not a multiple
 * and compute the padding (NVIDIA's Deep Learning Performance guide), so a 3-channel image's
 * first convolution runs at 3/8 of the fp16 rate. The share of the padded work that is real. */
static double tensor_alignment(double chan, double width, bool fp16) {
    double v = fp16 ? 8 : 4, e = 1;
    if (chan > 0) e *= chan / (ceil(chan / v) * v);
    if (width > 0) e *= width / (ceil(width / v) * v);
    return e;
}

/* Tiles of 128 x 128 outputs spread over the SMs in waves: the share of the last wave's SMs
 * that idle lowers the kernel's rate (1 when the SM count is unknown). */
static double wave_efficiency(double m, double n, int sms) {
    if (sms <= 0 || m <= 0 || n <= 0) return 1;
    double tiles = ceil(m / 128) * ceil(n / 128), waves = ceil(tiles / sms);
    return tiles / (waves * sms);
}

enum dp_status sim_compute(const struct dp_sim_workload *w, const struct sim_device *d,
                           const struct dp_setting *s, const struct dp_sim_constants *k,
                           struct phase_prof *fw, struct phase_prof *bw, double *update_ms,
                           struct dp_error *err) {
    bool pt = s->framework == DP_FW_PYTORCH;
    /* The tensor-core rate conv/matmul kernels run at (0: the FP32 CUDA cores; also mixed
     * precision without tensor cores: cuDNN computes fp16 in fp32). */
    double tc_conv = d->tensor16 * dp_sim_tensor_share(d->gen, s);
    double tc_mm = d->tensor16 * sim_matmul_share(d->gen, s, false);
    double tc_bmm = d->tensor16 * sim_matmul_share(d->gen, s, true);
    bool fp16 = half_precision(s); /* tensor-core operands: 16-bit, else TF32 */
    double byte_scale = dp_sim_byte_scale(w->graph_f16, s);
    double fuse = pt ? k->fuse_pt : k->fuse_tf;
    /* XLA auto-clustering (TensorFlow only): its fusions take in batch norms too (fuse_role),
     * so fewer kernels run and launch */
    bool xla = s->xla && !pt;
    double host = (pt ? k->host_pt_us : k->host_tf_us) / 1000, gap = k->gap_us / 1000;
    /* The generation's scale, never past the peak. */
    double mem_rate = d->bw * k->eff_mem, gs = k->gen_scale[d->gen];
    double e_cuda = fmin(1.0, k->eff_cuda * gs), e_conv = fmin(1.0, k->eff_tensor * gs);
    double e_mm = fmin(1.0, k->eff_tensor_mm * gs);
    struct oprec *rec = malloc(((size_t)w->n_ops + 1) * sizeof *rec);
    if (!rec) return dp_error_set(err, DP_ERR_NOMEM, "out of memory simulating %s", w->name);
    for (int pass = 0; pass < 2; pass++) {
        int n = 0, from = pass ? w->n_fw : 0, to = pass ? w->n_ops : w->n_fw;
        for (int i = from; i < to; i++) {
            const struct sim_op *o = &w->ops[i];
            double bytes = o->bytes * byte_scale, launches = o->launches, tf = 0;
            if (o->mm) {
                double q = wave_efficiency(o->m, o->n, d->sms);
                double cuda = d->fp32 * e_cuda * q;
                double tc = !o->blas ? tc_conv : o->batched ? tc_bmm : tc_mm;
                if (tc > 0 && o->tc) {
                    double a = tensor_alignment(o->chan, o->width, fp16);
                    /* cuDNN pads channels itself; cuBLAS pads nothing, and off the 16-byte
                     * vectors its kernels load element by element (step 14) */
                    if (o->blas && a < 1) a = fmin(1.0, k->tc_unaligned * (fp16 ? 1 : 2));
                    tf = o->flops / fmax(tc * (o->blas ? e_mm : e_conv) * q * a, cuda);
                } else {
                    tf = o->flops / cuda;
                    /* cuDNN runs Winograd where it is faster than the direct kernel: its
                     * products at the Winograd speed-up, its transforms' traffic added */
                    double wb = bytes + o->wino_bytes * byte_scale, tw = tf / k->winograd;
                    if (o->wino && fmax(tw, wb / mem_rate) < fmax(tf, bytes / mem_rate)) {
                        tf = tw;
                        bytes = wb;
                    }
                }
            } else {
                bytes -= fuse * (xla ? o->fused_xla : o->fused) * byte_scale;
                if (bytes < 0) bytes = 0;
                launches -= fuse * (xla ? o->absorbed_xla : o->absorbed);
            }
            double tm = bytes / mem_rate, kern = tf > tm ? tf : tm;
            rec[n++] = (struct oprec){kern, tm < kern ? tm : kern, launches, o->pneed};
        }
        chunk_build(rec, n, pass == 0, gap, host, pass == 0 ? fw : bw);
    }
    free(rec);
    /* The optimizer update on the GPU: read the gradient, read and write the weights and the
     * slots (fp32 masters); one fused multi-tensor kernel per ~64 variables under PyTorch
     * (DeepLearningExamples' apex / fused optimizers), one op per variable under TensorFlow. */
    double upd_bytes = w->params * 4.0 * (3.0 + 2.0 * w->slots);
    double launches = pt ? ceil(w->n_vars / 64.0) : w->n_vars;
    double gpu_t = upd_bytes / mem_rate + launches * gap, host_t = launches * host;
    *update_ms = gpu_t > host_t ? gpu_t : host_t;
    return DP_OK;
}
