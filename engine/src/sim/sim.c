/* sim.c: the parameter-server training simulator. Per-op roofline times give forward and
 * backward profiles; PS pulls and pushes are fluid flows over GPU links and machine NICs; a
 * barrier closes each iteration. Traces are sampled from that timeline like nvidia-smi and
 * /proc/net/dev. Everything here is simulated. */
#include "dp/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/cost.h"

#define SIM_MAX_ITERATIONS 5000
/* Trace samples over all workers, at most: about 800 MB of traces and tens of seconds of
 * sampling. Only absurd inputs (a sample interval far below the iteration time, a batch of
 * millions) reach it; they fail instead of exhausting memory or overflowing the count. */
#define SIM_MAX_SAMPLES 1e7
#define BYTES_PER_MS(gbps) ((gbps) * 1e6) /* GB/s -> bytes per ms */

void dp_sim_constants_default(struct dp_sim_constants *c) {
    /* Calibrated on ../shared/calibration/throughput_measured.csv (notes/calibration.md);
     * net_eff, ps_host_gbps, jitter and context_gb are typical figures, not fitted (the data
     * has no multi-machine rows). */
    c->eff_matmul = 0.50;
    c->winograd = 2.25; /* = F(2x2, 3x3)'s multiplication saving; the fit's upper bound */
    c->eff_mem = 0.50;
    c->launch_us = 2.0;
    c->net_eff = 0.70;
    c->ps_host_gbps = 20.0;
    c->jitter = 0.03;
    c->context_gb = 0.4;
}

void dp_sim_opts_default(struct dp_sim_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->iterations = 20;
    o->threshold = DP_TRACE_THRESHOLD;
}

void dp_sim_result_free(struct dp_sim_result *r) {
    if (!r) return;
    for (int i = 0; i < r->n_traces; i++) dp_trace_free(r->traces[i]);
    free(r->traces);
    r->traces = NULL;
    r->n_traces = 0;
}

/* --- the compute profile --- */

/* One op of a phase: its slot (kernel + launch), kernel-busy and memory-busy time (ms at jitter
 * 1), and the parameters it needs (forward: variables it reads first) or produces (backward:
 * gradients). */
struct oprec {
    double slot, kern, mem, params;
};

struct oplist {
    int           n, cap;
    struct oprec *v;
};

static bool ops_push(struct oplist *l, double slot, double kern, double mem, double params) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        struct oprec *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct oprec){slot, kern, mem, params};
    return true;
}

/* A phase compressed into at most SIM_CHUNKS consecutive chunks of similar length; the trace
 * treats a chunk's kernels as spread evenly over it. */
#define SIM_CHUNKS 64
struct chunk {
    double t, k, m; /* slot, kernel-busy and memory-busy time (ms) */
    double frac;    /* forward: cumulative share of the pulled bytes needed by the end of the
                       chunk; backward: share of the gradient bytes produced in it */
};

struct phase_prof {
    int          n;
    double       total; /* sum of t */
    struct chunk c[SIM_CHUNKS];
};

static void chunk_build(const struct oplist *l, bool forward, struct phase_prof *p) {
    memset(p, 0, sizeof *p);
    double total = 0, bytes = 0;
    for (int i = 0; i < l->n; i++) {
        total += l->v[i].slot;
        bytes += l->v[i].params;
    }
    p->total = total;
    if (!l->n) return;
    double target = total / SIM_CHUNKS, acc_b = 0;
    struct chunk cur = {0, 0, 0, 0};
    for (int i = 0; i < l->n; i++) {
        cur.t += l->v[i].slot;
        cur.k += l->v[i].kern;
        cur.m += l->v[i].mem;
        acc_b += l->v[i].params;
        cur.frac += l->v[i].params;
        bool last = i == l->n - 1;
        if (last || (cur.t >= target && p->n < SIM_CHUNKS - 1)) {
            if (forward) cur.frac = bytes > 0 ? acc_b / bytes : 0;
            else cur.frac = bytes > 0 ? cur.frac / bytes : (total > 0 ? cur.t / total : 0);
            p->c[p->n++] = cur;
            memset(&cur, 0, sizeof cur);
        }
    }
}

/* --- helpers --- */

static bool contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* Gradient ops: TF puts them under a "gradients" name scope; their types end in Grad or name a
 * backprop. */
static bool is_backward(const struct dp_node *n) {
    return !strncmp(n->name, "gradients", 9) || contains(n->name, "/gradients") ||
           contains(n->op, "Grad") || contains(n->op, "Backprop");
}

/* True for a 2-D convolution (forward or either gradient) with a 3x3 kernel and unit strides:
 * cuDNN runs those with Winograd kernels, doing fewer multiplications than the direct count. */
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* 53 random bits into (0, 1): never 0, so log() in normal01 stays finite. */
static double uniform01(uint64_t *s) {
    return ((double)(splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal01(uint64_t *s) {
    double u1 = uniform01(s), u2 = uniform01(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int cmp_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Integral over [u0, u1) of a ramp that is 0 at a, h at b (linear between), clipped to [a, b). */
static double ramp_integral(double u0, double u1, double a, double b, double h0, double h1) {
    double lo = u0 > a ? u0 : a, hi = u1 < b ? u1 : b;
    if (hi <= lo || b <= a) return 0;
    double f0 = h0 + (h1 - h0) * (lo - a) / (b - a), f1 = h0 + (h1 - h0) * (hi - a) / (b - a);
    return 0.5 * (f0 + f1) * (hi - lo);
}

static double overlap(double u0, double u1, double a, double b) {
    double lo = u0 > a ? u0 : a, hi = u1 < b ? u1 : b;
    return hi > lo ? hi - lo : 0;
}

/* --- the network ---
 * PS pulls and pushes are fluid flows over per-GPU links and per-machine NICs, each flow as
 * slow as its most loaded resource. A worker's network series is its own PS traffic: NIC to a
 * remote PS, loopback to a co-located one. */

enum { RES_UP, RES_DOWN, RES_NIC_TX, RES_NIC_RX };

struct net {
    int     n_workers, n_ps, n_machines;
    int    *worker_machine, *ps_machine;
    double *load;    /* [4][max(workers, machines)] */
    double *cap;     /* per resource kind: bytes per ms */
    int     stride;
};

static double *res(struct net *n, int kind, int i) { return &n->load[kind * n->stride + i]; }

/* The resources a transfer between worker w and PS p crosses (kind, index); returns the count.
 * `pull` = PS -> worker. */
static int route(const struct dp_setting *s, const struct net *n, int w, int p, bool pull,
                 int kinds[4], int idx[4]) {
    int c = 0;
    if (s->network == DP_NET_NVLINK) { /* PS shards live on the GPUs */
        int g = p % n->n_workers;
        if (g == w) return 0;
        kinds[c] = pull ? RES_UP : RES_DOWN, idx[c++] = g;
        kinds[c] = pull ? RES_DOWN : RES_UP, idx[c++] = w;
        return c;
    }
    kinds[c] = pull ? RES_DOWN : RES_UP, idx[c++] = w; /* GPU <-> host over PCIe */
    int mw = n->worker_machine[w], mp = n->ps_machine[p];
    if (!dp_network_intra(s->network) && mw != mp) {
        kinds[c] = RES_NIC_TX, idx[c++] = pull ? mp : mw;
        kinds[c] = RES_NIC_RX, idx[c++] = pull ? mw : mp;
    }
    return c;
}

static void place(const struct dp_setting *s, struct net *n) {
    int m = n->n_machines;
    for (int w = 0; w < n->n_workers; w++) n->worker_machine[w] = w % m;
    for (int p = 0; p < n->n_ps; p++) n->ps_machine[p] = p % m;
    if (s->placement == DP_PLACE_HETERO && m >= 2) {
        int pm = n->n_ps < m - 1 ? n->n_ps : m - 1;
        for (int p = 0; p < n->n_ps; p++) n->ps_machine[p] = p % pm;
        for (int w = 0; w < n->n_workers; w++) n->worker_machine[w] = pm + w % (m - pm);
    }
}

/* Loads every flow of one phase, then each worker's completion time (ms, without latency) and
 * bytes into *t and *bytes. */
static void phase(const struct dp_setting *s, struct net *n, const double *shard, bool pull,
                  double *t, double *bytes, double *crossing) {
    int kinds[4], idx[4];
    memset(n->load, 0, (size_t)4 * n->stride * sizeof *n->load);
    *crossing = 0;
    for (int w = 0; w < n->n_workers; w++)
        for (int p = 0; p < n->n_ps; p++) {
            int c = route(s, n, w, p, pull, kinds, idx);
            for (int r = 0; r < c; r++) *res(n, kinds[r], idx[r]) += shard[p];
            if (c) *crossing += shard[p];
        }
    for (int w = 0; w < n->n_workers; w++) {
        double worst = 0, b = 0;
        for (int p = 0; p < n->n_ps; p++) {
            int c = route(s, n, w, p, pull, kinds, idx);
            if (!c || shard[p] <= 0) continue;
            b += shard[p];
            for (int r = 0; r < c; r++) {
                double tt = *res(n, kinds[r], idx[r]) / n->cap[kinds[r]];
                if (tt > worst) worst = tt;
            }
        }
        t[w] = worst;
        bytes[w] = b;
    }
}

/* --- the simulation --- */

struct iter_state {
    struct phase_prof fw, bw; /* base compute profiles */
    double  lat2;        /* a round trip (ms) */
    double *P, *Q;      /* per worker pull / push network time (ms, incl. a round trip) */
    double *pb, *qb;    /* per worker bytes pulled / pushed over links */
    double *jit;        /* [iteration][worker] compute factor */
    double *T;          /* iteration start times, n_iter + 1 */
    int     n_iter, n_workers;
    double  act_bytes, base_bytes; /* memory: activations at their peak, the rest */
};

/* One worker's iteration, relative to its start: data-flow driven. The pull streams the
 * variables in forward order at the bottleneck rate; a forward chunk starts when the previous
 * one ended and its variables have arrived. Each backward chunk's gradients join a FIFO send
 * queue drained at the push rate. */
struct timeline {
    double j;
    double fs[SIM_CHUNKS], fend;         /* forward chunk starts; end of the forward phase */
    double bs[SIM_CHUNKS], bend;         /* backward chunk starts; end of the compute */
    double txs[SIM_CHUNKS], txe[SIM_CHUNKS], tx_rate; /* send-queue busy spans, bytes/ms */
    double rx_rate, rx_end;              /* the pull: [lat2/2 .. rx_end) at rx_rate bytes/ms */
    double end;                          /* the worker is done (computed and sent) */
};

static void timeline(const struct iter_state *st, int w, double j, struct timeline *tl) {
    const struct phase_prof *fw = &st->fw, *bw = &st->bw;
    double P = st->P[w], Q = st->Q[w], half = st->lat2 / 2;
    double pnet = P > st->lat2 ? P - st->lat2 : 0, qnet = Q > st->lat2 ? Q - st->lat2 : 0;
    tl->j = j;
    tl->rx_rate = pnet > 0 ? st->pb[w] / pnet : 0;
    tl->rx_end = st->pb[w] > 0 ? half + pnet : 0;
    double t = 0;
    for (int c = 0; c < fw->n; c++) {
        double avail = st->pb[w] > 0 ? half + fw->c[c].frac * pnet : 0;
        tl->fs[c] = t > avail ? t : avail;
        t = tl->fs[c] + j * fw->c[c].t;
    }
    double pull_done = st->pb[w] > 0 ? P : 0;
    tl->fend = t > pull_done ? t : pull_done;
    t = tl->fend;
    double tx = tl->fend;
    tl->tx_rate = qnet > 0 ? st->qb[w] / qnet : 0;
    for (int c = 0; c < bw->n; c++) {
        tl->bs[c] = t;
        t += j * bw->c[c].t;
        double bytes = st->qb[w] * bw->c[c].frac;
        tl->txs[c] = tx > t ? tx : t;
        tx = tl->txs[c] + (tl->tx_rate > 0 ? bytes / tl->tx_rate : 0);
        tl->txe[c] = tx;
    }
    tl->bend = t;
    double sent = st->qb[w] > 0 ? tx + st->lat2 : 0;
    tl->end = t > sent ? t : sent;
}

/* Samples worker w's trace over the whole run: n_samples intervals of dt ms. */
static enum dp_status sample_worker(const struct iter_state *st, int w, double dt, int n_samples,
                                    struct dp_trace *tr, double *busy_total,
                                    struct dp_error *err) {
    const struct phase_prof *fw = &st->fw, *bw = &st->bw;
    int k = 0;
    struct timeline tl[2];
    int cached[2] = {-1, -1};
    *busy_total = 0;
    for (int s = 0; s < n_samples; s++) {
        double a = s * dt, b = (s + 1) * dt;
        double busy = 0, mem = 0, rx = 0, tx = 0, used = 0;
        while (k < st->n_iter && st->T[k + 1] <= a) k++;
        for (int q = k; q < st->n_iter && st->T[q] < b; q++) {
            struct timeline *t = &tl[q & 1];
            if (cached[q & 1] != q) {
                timeline(st, w, st->jit[(size_t)q * st->n_workers + w], t);
                cached[q & 1] = q;
            }
            double u0 = a - st->T[q], u1 = b - st->T[q];
            if (u0 < 0) u0 = 0;
            if (u1 > st->T[q + 1] - st->T[q]) u1 = st->T[q + 1] - st->T[q];
            if (u1 <= u0) continue;
            for (int c = 0; c < fw->n; c++) {
                double len = t->j * fw->c[c].t;
                if (t->fs[c] >= u1) break;
                double ov = overlap(u0, u1, t->fs[c], t->fs[c] + len);
                if (ov > 0 && fw->c[c].t > 0) {
                    busy += ov * fw->c[c].k / fw->c[c].t;
                    mem += ov * fw->c[c].m / fw->c[c].t;
                }
            }
            for (int c = 0; c < bw->n; c++) {
                double len = t->j * bw->c[c].t;
                if (t->bs[c] >= u1) break;
                double ov = overlap(u0, u1, t->bs[c], t->bs[c] + len);
                if (ov > 0 && bw->c[c].t > 0) {
                    busy += ov * bw->c[c].k / bw->c[c].t;
                    mem += ov * bw->c[c].m / bw->c[c].t;
                }
                tx += t->tx_rate * overlap(u0, u1, t->txs[c], t->txe[c]);
            }
            rx += t->rx_rate * overlap(u0, u1, st->lat2 / 2, t->rx_end);
            used += ramp_integral(u0, u1, 0, t->fend, 0, st->act_bytes) +
                    ramp_integral(u0, u1, t->fend, t->bend, st->act_bytes, 0);
        }
        *busy_total += busy;
        double t_ms = b, span = b - a;
        double gu = 100.0 * busy / span, mu = 100.0 * mem / span;
        enum dp_status rc;
        if ((rc = dp_trace_push(tr, DP_SERIES_GPU_UTIL, t_ms, round(gu > 100 ? 100 : gu), err)) ||
            (rc = dp_trace_push(tr, DP_SERIES_GPU_MEM_UTIL, t_ms, round(mu > 100 ? 100 : mu),
                                err)) ||
            (rc = dp_trace_push(tr, DP_SERIES_MEM_USED, t_ms,
                                (st->base_bytes + used / span) / 1048576.0, err)) ||
            (rc = dp_trace_push(tr, DP_SERIES_NET_RX, t_ms, rx / span / 1000.0, err)) ||
            (rc = dp_trace_push(tr, DP_SERIES_NET_TX, t_ms, tx / span / 1000.0, err)))
            return rc;
    }
    return DP_OK;
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

/* --- memory: a liveness sweep over the step's schedule --- */

/* TF's default cuDNN workspace limit (TF_CUDNN_WORKSPACE_LIMIT_IN_MB, 4 GiB in TF 1.x): the
 * autotuner never picks an algorithm that needs more. */
#define SIM_WORKSPACE_CAP 4294967296.0

/* Ops whose output is a view of their first input (no buffer of their own). */
/* A read of node src by node dst that does not keep src's (first) output alive: a fused batch
 * norm's gradient and its moving-average update read its per-channel statistics (outputs 1 to
 * 4, which the graph does not size), not the normalised tensor. */
static bool reads_stats_only(const struct dp_node *src, const struct dp_node *dst,
                             bool dst_has_batch) {
    if (strncmp(src->op, "FusedBatchNorm", 14) || contains(src->op, "Grad")) return false;
    return contains(dst->op, "FusedBatchNormGrad") || !dst_has_batch;
}

static bool has_batch_dim(const struct dp_node *n) {
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

enum dp_status dp_sim_activation_bytes(const struct dp_graph *g, int64_t batch, double *peak,
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
        if (has_batch_dim(d)) size[i] = dp_node_tensor_size(d, batch) * (es ? es : 4);
        last[i] = -1;
        buf[i] = -1;
        head[i] = -1;
    }
    for (int i = 0; i < n; i++) {
        const struct dp_node *d = dp_graph_node(g, (size_t)i);
        if (dp_node_phase(d) == DP_PHASE_INIT) continue;
        bool hb = has_batch_dim(d);
        for (int k = 0; k < d->n_inputs; k++) {
            int src = d->inputs[k];
            if (reads_stats_only(dp_graph_node(g, (size_t)src), d, hb)) continue;
            if (pos[i] > last[src]) last[src] = pos[i];
        }
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
        if (runs[i] && dp_op_class(d->op) == DP_OPCLASS_MATMUL) {
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

/* Parameter-sized slots an Apply op keeps per variable (TF's optimizers): Adam m and v,
 * RMSProp ms and mom (+ mg centered), Adadelta and Ftrl two accumulators, Momentum and Adagrad
 * one, plain gradient descent none. */
static double nan_or(double v, double alt) { return isnan(v) || v <= 0 ? alt : v; }

enum dp_status dp_simulate(const struct dp_graph *g, const struct dp_setting *s,
                           const struct dp_gpu *gpu, const struct dp_sim_opts *opts_in,
                           struct dp_sim_result *out, struct dp_error *err) {
    struct dp_sim_opts opts;
    struct dp_sim_constants cst;
    if (opts_in) opts = *opts_in;
    else dp_sim_opts_default(&opts);
    if (opts.constants) cst = *opts.constants;
    else dp_sim_constants_default(&cst);
    if (opts.iterations <= 0) opts.iterations = 20;
    if (!(opts.threshold > 0)) opts.threshold = DP_TRACE_THRESHOLD;

    enum dp_status st = dp_setting_check(s, err);
    if (st) return st;
    if (!gpu || isnan(gpu->fp32_tflops) || !(gpu->fp32_tflops > 0) ||
        isnan(gpu->bandwidth_gbps) || !(gpu->bandwidth_gbps > 0))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: GPU %s has no known FP32 TFLOPS or memory bandwidth in the "
                            "catalog; cannot simulate it",
                            s->id, gpu ? gpu->name : "(none)");

    memset(out, 0, sizeof *out);
    struct oplist fw = {0}, bw = {0};
    double *need = NULL; /* per node: parameters a forward op reads first / a grad op makes */
    unsigned char *claimed = NULL; /* per variable: bit 1 = a forward op already needs it */
    struct net net = {0};
    struct iter_state is = {0};
    double *shard = NULL, *vars = NULL;
    if (s->sync == DP_SYNC_ALLREDUCE)
        return dp_error_set(err, DP_ERR_INVALID, "%s: all-reduce is not simulated yet", s->id);
    size_t nn = dp_graph_n_nodes(g);
    int64_t batch = opts.batch > 0 ? opts.batch : dp_graph_batch(g);
    if (batch <= 0) batch = 32;
    int64_t gbatch = dp_graph_batch(g) > 0 ? dp_graph_batch(g) : batch;
    int W = s->workers, NP = s->ps;

    /* Which ops run on the worker GPU: those placed on a GPU; when the graph names no device
     * at all, every op with a kernel. */
    bool any_gpu = false, graph_f16 = false;
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (dp_node_on_gpu(n)) {
            any_gpu = true;
            if (n->dtype == DP_DTYPE_F16 || n->dtype == DP_DTYPE_BF16) graph_f16 = true;
        }
    }
    bool mixed = s->precision == DP_PREC_MIXED;
    double peak_fp32 = gpu->fp32_tflops * 1e9; /* FLOPs per ms */
    double peak_mm = mixed ? nan_or(gpu->fp16_tflops, gpu->fp32_tflops) * 1e9 : peak_fp32;
    double mem_bw = BYTES_PER_MS(gpu->bandwidth_gbps);
    double launch = cst.launch_us / 1000.0;
    double byte_scale = (mixed && !graph_f16) ? 0.5 : 1.0;
    int slots = 0, n_vars = 0;
    double params = 0, flops_total = 0;

    if (!(vars = calloc(nn + 1, sizeof *vars)) || !(need = calloc(nn + 1, sizeof *need)) ||
        !(claimed = calloc(nn + 1, 1))) {
        st = DP_ERR_NOMEM;
        goto fail;
    }
    /* Which parameters each op needs (forward, first reader) or produces (the gradient fed to
     * an Apply op: its largest backward input). */
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        enum dp_op_class cls = dp_op_class(n->op);
        if (cls == DP_OPCLASS_OPTIMIZER && n->n_inputs > 0) {
            int v = var_of(g, n->inputs[0]), best = -1;
            double best_sz = -1;
            for (int k = 1; k < n->n_inputs; k++) {
                const struct dp_node *in = dp_graph_node(g, (size_t)n->inputs[k]);
                double sz = dp_node_tensor_size(in, 1);
                if (is_backward(in) && sz > best_sz) best = n->inputs[k], best_sz = sz;
            }
            if (v >= 0 && best >= 0) need[best] += (double)dp_graph_node(g, (size_t)v)->params;
        }
    }
    double need_total = 0;
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (n->params > 0) {
            vars[n_vars++] = (double)n->params;
            params += (double)n->params;
        }
        enum dp_op_class cls = dp_op_class(n->op);
        if (cls == DP_OPCLASS_OPTIMIZER) {
            int sl = dp_op_optimizer_slots(n->op);
            if (sl > slots) slots = sl;
        }
        if (cls == DP_OPCLASS_NONE || cls == DP_OPCLASS_INPUT || cls == DP_OPCLASS_OPTIMIZER)
            continue;
        if (any_gpu ? !dp_node_on_gpu(n) : false) continue;
        double flops = 0, bytes = 0;
        dp_cost_node(g, i, batch, &flops, &bytes);
        if (flops <= 0 && bytes <= 0 && (n->flops > 0 || n->bytes > 0)) {
            double r = (double)batch / (double)gbatch;
            flops = n->flops > 0 ? n->flops * r : 0;
            bytes = n->bytes > 0 ? n->bytes * r : 0;
        }
        bytes *= byte_scale;
        flops_total += flops;
        if (cls == DP_OPCLASS_MATMUL && cst.winograd > 0 && dp_op_winograd_eligible(g, n))
            flops /= cst.winograd;
        /* Roofline: the slower of FLOPs over an efficient fraction of peak and bytes over an
         * efficient fraction of memory bandwidth; the slot adds the launch overhead. */
        double tf = flops / ((cls == DP_OPCLASS_MATMUL ? peak_mm : peak_fp32) *
                             (cls == DP_OPCLASS_MATMUL ? cst.eff_matmul : cst.eff_mem));
        double tm = bytes / (mem_bw * cst.eff_mem);
        double kern = tf > tm ? tf : tm;
        double memb = tm < kern ? tm : kern;
        bool back = is_backward(n);
        double pneed = 0;
        if (back) {
            pneed = need[i];
        } else {
            for (int k = 0; k < n->n_inputs; k++) {
                int v = var_of(g, n->inputs[k]);
                if (v >= 0 && !(claimed[v] & 1)) {
                    claimed[v] |= 1;
                    pneed += (double)dp_graph_node(g, (size_t)v)->params;
                }
            }
            need_total += pneed;
        }
        if (!ops_push(back ? &bw : &fw, kern + launch, kern, memb, pneed)) {
            st = DP_ERR_NOMEM;
            goto fail;
        }
    }
    if (fw.n + bw.n == 0) {
        st = dp_error_set(err, DP_ERR_INVALID, "%s: graph %s has no GPU op to simulate", s->id,
                          dp_graph_name(g));
        goto fail;
    }
    /* Variables no forward op was seen reading are needed from the start. */
    if (fw.n && params > need_total) fw.v[0].params += params - need_total;
    chunk_build(&fw, true, &is.fw);
    chunk_build(&bw, false, &is.bw);

    /* Variables sharded over the PS by size (greedy, largest first), fp32 on the wire. */
    if (!(shard = calloc((size_t)NP, sizeof *shard))) {
        st = DP_ERR_NOMEM;
        goto fail;
    }
    qsort(vars, (size_t)n_vars, sizeof *vars, cmp_desc);
    for (int v = 0; v < n_vars; v++) {
        int best = 0;
        for (int p = 1; p < NP; p++)
            if (shard[p] < shard[best]) best = p;
        shard[best] += vars[v] * 4.0;
    }

    /* Memory footprint of one worker: the CUDA context, weights (+ fp16 copies), weight
     * gradients (held until pushed at the end of the backward pass), the optimizer slots where
     * the apply runs on the GPU (NVLink shards; a host-CPU PS keeps them in host memory), and
     * the peak of the liveness sweep over activations, their gradients and workspaces. */
    double weights = params * 4.0 * (mixed ? 1.5 : 1.0);
    double grads = params * 4.0 * (mixed ? 0.5 : 1.0);
    double slot_bytes = 0;
    if (s->network == DP_NET_NVLINK)
        for (int p = 0; p < NP; p++)
            if (slots * shard[p] > slot_bytes) slot_bytes = slots * shard[p];
    double act = 0;
    if ((st = dp_sim_activation_bytes(g, batch, &act, err))) goto fail;
    act *= byte_scale;
    is.act_bytes = act;
    is.base_bytes = cst.context_gb * 1e9 + weights + grads + slot_bytes;
    out->memory_gb = (is.base_bytes + act) / 1e9;
    out->oom = !isnan(gpu->memory_gb) && out->memory_gb > gpu->memory_gb;

    /* The network. */
    net.n_workers = W;
    net.n_ps = NP;
    net.n_machines = s->machines;
    net.stride = W > s->machines ? W : s->machines;
    double link_gbps = s->network == DP_NET_NVLINK ? dp_network_bandwidth_gbps(DP_NET_NVLINK)
                                                   : dp_network_bandwidth_gbps(DP_NET_PCIE);
    double caps[4] = {BYTES_PER_MS(link_gbps * cst.net_eff), BYTES_PER_MS(link_gbps * cst.net_eff),
                      BYTES_PER_MS(dp_network_bandwidth_gbps(s->network) * cst.net_eff),
                      BYTES_PER_MS(dp_network_bandwidth_gbps(s->network) * cst.net_eff)};
    net.cap = caps;
    if (!(net.worker_machine = calloc((size_t)W, sizeof(int))) ||
        !(net.ps_machine = calloc((size_t)NP, sizeof(int))) ||
        !(net.load = calloc((size_t)4 * net.stride, sizeof(double))) ||
        !(is.P = calloc((size_t)W, sizeof(double))) ||
        !(is.Q = calloc((size_t)W, sizeof(double))) ||
        !(is.pb = calloc((size_t)W, sizeof(double))) ||
        !(is.qb = calloc((size_t)W, sizeof(double)))) {
        st = DP_ERR_NOMEM;
        goto fail;
    }
    place(s, &net);
    double lat = dp_network_latency_us(s->network) / 1000.0;
    double pull_cross, push_cross;
    phase(s, &net, shard, true, is.P, is.pb, &pull_cross);
    double nic_tx = 0, nic_rx = 0;
    for (int m = 0; m < s->machines; m++) {
        nic_tx += *res(&net, RES_NIC_TX, m);
        nic_rx += *res(&net, RES_NIC_RX, m);
    }
    phase(s, &net, shard, false, is.Q, is.qb, &push_cross);
    for (int m = 0; m < s->machines; m++) {
        nic_tx += *res(&net, RES_NIC_TX, m);
        nic_rx += *res(&net, RES_NIC_RX, m);
    }
    for (int w = 0; w < W; w++) {
        if (is.pb[w] > 0) is.P[w] += 2 * lat;
        if (is.qb[w] > 0) is.Q[w] += 2 * lat;
    }

    /* The PS apply the aggregated gradient: read it, read and write the weights and the
     * optimizer slots; on the host CPU, or on a GPU when the shards live there (NVLink). */
    double apply = 0;
    for (int p = 0; p < NP; p++) {
        double b = (3.0 + 2.0 * slots) * shard[p];
        double t = s->network == DP_NET_NVLINK ? b / (mem_bw * cst.eff_mem)
                                               : b / BYTES_PER_MS(cst.ps_host_gbps);
        if (t > apply) apply = t;
    }
    double barrier = 2 * lat;

    /* Iterations: enough to fill min_run_ms of trace, at least opts.iterations. */
    is.n_workers = W;
    is.lat2 = 2 * lat;
    double est = 0;
    for (int w = 0; w < W; w++) {
        struct timeline tl;
        timeline(&is, w, 1.0, &tl);
        if (tl.end > est) est = tl.end;
    }
    est += apply + barrier;
    /* Absurd GPU figures or batches make the iteration time overflow or vanish; every count
     * below divides by it. */
    if (!(est > 0 && est < 1e15)) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: graph %s: one iteration would take %g ms on GPU %s; cannot "
                          "simulate that (check the batch and the GPU's figures)",
                          s->id, dp_graph_name(g), est, gpu->name);
        goto fail;
    }
    if (!(opts.sample_ms > 0)) {
        opts.sample_ms = est / 50;
        if (opts.sample_ms < 1) opts.sample_ms = 1;
        if (opts.sample_ms > 100) opts.sample_ms = 100;
    }
    if (!(opts.min_run_ms > 0)) opts.min_run_ms = 200 * opts.sample_ms;
    double want = ceil(opts.min_run_ms / est);
    int n_iter = want > SIM_MAX_ITERATIONS ? SIM_MAX_ITERATIONS : (int)want;
    if (n_iter < opts.iterations)
        n_iter = opts.iterations > SIM_MAX_ITERATIONS ? SIM_MAX_ITERATIONS : opts.iterations;
    is.n_iter = n_iter;
    if (!(is.jit = malloc((size_t)n_iter * W * sizeof(double))) ||
        !(is.T = malloc(((size_t)n_iter + 1) * sizeof(double)))) {
        st = DP_ERR_NOMEM;
        goto fail;
    }
    uint64_t rng = opts.seed ^ 0x5DEECE66Dull;
    for (size_t i = 0; i < (size_t)n_iter * W; i++)
        is.jit[i] = exp(cst.jitter * normal01(&rng) - 0.5 * cst.jitter * cst.jitter);
    is.T[0] = 0;
    double sum_compute0 = 0, sum_wait0 = 0;
    for (int k = 0; k < n_iter; k++) {
        double slow = 0, end0 = 0;
        for (int w = 0; w < W; w++) {
            struct timeline tl;
            double j = is.jit[(size_t)k * W + w];
            timeline(&is, w, j, &tl);
            if (tl.end > slow) slow = tl.end;
            if (w == 0) {
                end0 = tl.end;
                sum_compute0 += j * (is.fw.total + is.bw.total);
            }
        }
        sum_wait0 += slow - end0;
        is.T[k + 1] = is.T[k] + slow + apply + barrier;
    }
    double total = is.T[n_iter];
    double n_samples = floor(total / opts.sample_ms + 1e-9);
    if (!(n_samples * W <= SIM_MAX_SAMPLES)) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: graph %s: %d iterations of %.4g ms sampled every %.4g ms would "
                          "take %.3g trace samples over the workers (at most %.0f); raise the "
                          "sample interval or lower the batch",
                          s->id, dp_graph_name(g), n_iter, total / n_iter, opts.sample_ms,
                          n_samples * W, SIM_MAX_SAMPLES);
        goto fail;
    }
    if (n_samples < 2) { /* labels need two samples; zeros would pass for an answer */
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: graph %s: %d iterations of %.4g ms sampled every %.4g ms give "
                          "%.0f trace sample(s); lower the sample interval",
                          s->id, dp_graph_name(g), n_iter, total / n_iter, opts.sample_ms,
                          n_samples);
        goto fail;
    }
    out->iteration_ms = total / n_iter;
    out->throughput = (double)batch * W / (out->iteration_ms / 1000.0);
    out->compute_ms = sum_compute0 / n_iter;
    out->wait_ms = sum_wait0 / n_iter;
    for (int w = 0; w < W; w++) {
        if (is.P[w] > out->pull_ms) out->pull_ms = is.P[w];
        if (is.Q[w] > out->push_ms) out->push_ms = is.Q[w];
    }
    out->apply_ms = apply;
    out->bytes_per_iter = pull_cross + push_cross;
    out->batch = batch;
    out->sample_ms = opts.sample_ms;
    out->n_iterations = n_iter;
    out->params = params;
    out->gflops_per_iter = flops_total / 1e9;
    for (int w = 0; w < W; w++) {
        out->bytes_pulled += is.pb[w] * n_iter;
        out->bytes_pushed += is.qb[w] * n_iter;
    }
    /* Per PS: what it sent and received, from its own side of each flow. */
    for (int p = 0; p < NP; p++)
        for (int w = 0; w < W; w++) {
            int kinds[4], idx[4];
            if (shard[p] <= 0) continue;
            if (route(s, &net, w, p, true, kinds, idx)) out->bytes_sent_ps += shard[p] * n_iter;
            if (route(s, &net, w, p, false, kinds, idx))
                out->bytes_received_ps += shard[p] * n_iter;
        }
    out->link_tx_bytes = nic_tx * n_iter;
    out->link_rx_bytes = nic_rx * n_iter;

    /* Traces of every worker; the labels and the mean utilisation are means over the workers
     * (a co-located worker's loopback traffic and a remote one's NIC traffic both count). */
    struct dp_trace **tr = calloc((size_t)W, sizeof *tr);
    if (!tr) {
        st = DP_ERR_NOMEM;
        goto fail;
    }
    out->traces = tr;
    out->n_traces = W;
    for (int w = 0; w < W; w++) {
        double busy, lab[DP_N_OUTPUTS];
        if (!(tr[w] = dp_trace_init("simulated"))) {
            st = DP_ERR_NOMEM;
            goto fail;
        }
        if ((st = sample_worker(&is, w, opts.sample_ms, (int)n_samples, tr[w], &busy, err)))
            goto fail;
        out->mean_gpu_util += (total > 0 ? 100.0 * busy / total : 0) / W;
        dp_trace_labels(tr[w], opts.threshold, lab, NULL);
        for (int i = 0; i < DP_N_OUTPUTS; i++) out->labels[i] += lab[i] / W;
        if (!opts.want_traces) { /* only the labels are wanted: hold one trace at a time */
            dp_trace_free(tr[w]);
            tr[w] = NULL;
        }
    }
    if (!opts.want_traces) dp_sim_result_free(out);
    st = DP_OK;
fail:
    if (st) {
        if (st == DP_ERR_NOMEM)
            dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory simulating %s", s->id,
                         dp_graph_name(g));
        dp_sim_result_free(out);
    }
    free(fw.v);
    free(bw.v);
    free(need);
    free(claimed);
    free(net.worker_machine);
    free(net.ps_machine);
    free(net.load);
    free(is.P);
    free(is.Q);
    free(is.pb);
    free(is.qb);
    free(is.jit);
    free(is.T);
    free(shard);
    free(vars);
    return st;
}
