/* sim_trace.c: one worker's iteration as a timeline, and its traces sampled from it like
 * nvidia-smi (kernel-busy and memory-busy shares, memory used) and /proc/net/dev (the bytes its
 * network interface carries). Parameter servers: the pull streams the variables in forward
 * order and a forward chunk waits for its own; gradients join a FIFO send queue as the
 * backward pass makes them. All-reduce: the buckets' collective spans (shared by every worker,
 * iter_state) and the update on the GPU after the last one. */
#include <math.h>
#include <string.h>

#include "sim/sim_impl.h"

static double overlap(double u0, double u1, double a, double b) {
    double lo = u0 > a ? u0 : a, hi = u1 < b ? u1 : b;
    return hi > lo ? hi - lo : 0;
}

/* Integral over [u0, u1) of a ramp that is 0 at a, h at b (linear between), clipped to [a, b). */
static double ramp_integral(double u0, double u1, double a, double b, double h0, double h1) {
    double lo = u0 > a ? u0 : a, hi = u1 < b ? u1 : b;
    if (hi <= lo || b <= a) return 0;
    double f0 = h0 + (h1 - h0) * (lo - a) / (b - a), f1 = h0 + (h1 - h0) * (hi - a) / (b - a);
    return 0.5 * (f0 + f1) * (hi - lo);
}

static void add_span(struct timeline *tl, double a, double b, double rx, double tx) {
    if (b <= a || tl->n_spans == SIM_MAX_SPANS) return;
    tl->sp[tl->n_spans++] = (struct span){a, b, rx, tx};
}

/* Parameter servers: the data-flow timeline of one worker. */
static void timeline_ps(const struct iter_state *st, int w, double j, struct timeline *tl) {
    const struct phase_prof *fw = &st->fw, *bw = &st->bw;
    double P = st->P[w], Q = st->Q[w], half = st->lat2 / 2;
    double pnet = P > st->lat2 ? P - st->lat2 : 0, qnet = Q > st->lat2 ? Q - st->lat2 : 0;
    double t = 0;
    for (int c = 0; c < fw->n; c++) {
        double avail = st->pb[w] > 0 ? half + fw->c[c].frac * pnet : 0;
        tl->fs[c] = t > avail ? t : avail;
        t = tl->fs[c] + j * fw->c[c].t;
    }
    if (st->pb[w] > 0 && pnet > 0) add_span(tl, half, half + pnet, st->pnic[w] / pnet, 0);
    double pull_done = st->pb[w] > 0 ? P : 0;
    tl->fend = t > pull_done ? t : pull_done;
    tl->ms = tl->fend;
    t = tl->fend + j * st->mid_t;
    double tx = t, rate = qnet > 0 ? st->qb[w] / qnet : 0;
    for (int c = 0; c < bw->n; c++) {
        tl->bs[c] = t;
        t += j * bw->c[c].t;
        double start = tx > t ? tx : t;
        tx = start + (rate > 0 ? st->qb[w] * bw->c[c].frac / rate : 0);
        if (qnet > 0) add_span(tl, start, tx, 0, st->qnic[w] / qnet);
    }
    tl->bend = t;
    double sent = st->qb[w] > 0 ? tx + st->lat2 : 0;
    tl->us = tl->ue = tl->end = t > sent ? t : sent;
}

void sim_timeline(const struct iter_state *st, int w, int q, double j, struct timeline *tl) {
    tl->j = j;
    tl->n_spans = 0;
    if (!st->allreduce) {
        timeline_ps(st, w, j, tl);
        return;
    }
    double t = 0;
    for (int c = 0; c < st->fw.n; c++) {
        tl->fs[c] = t;
        t += j * st->fw.c[c].t;
    }
    tl->fend = tl->ms = t;
    t += j * st->mid_t;
    for (int c = 0; c < st->bw.n; c++) {
        tl->bs[c] = t;
        t += j * st->bw.c[c].t;
    }
    tl->bend = t;
    double done = t;
    if (q >= 0)
        for (int b = 0; b < st->n_buckets; b++) {
            const double *s0 = &st->ar_start[(size_t)q * st->n_buckets];
            const double *e0 = &st->ar_end[(size_t)q * st->n_buckets];
            double rate = e0[b] > s0[b] ? st->bucket_nic[b] / (e0[b] - s0[b]) : 0;
            add_span(tl, s0[b], e0[b], rate, rate);
            if (e0[b] > done) done = e0[b];
        }
    tl->us = done;
    tl->ue = done + j * st->update_ms;
    tl->end = tl->ue;
}

void sim_accumulate(struct iter_state *st, int accum, double extra_ms) {
    double k = 0, m = 0;
    for (int c = 0; c < st->fw.n; c++) k += st->fw.c[c].k, m += st->fw.c[c].m;
    for (int c = 0; c < st->bw.n; c++) k += st->bw.c[c].k, m += st->bw.c[c].m;
    double more = accum > 1 ? accum - 1.0 : 0;
    st->mid_t = more * (st->fw.total + st->bw.total) + accum * extra_ms;
    st->mid_k = more * k + accum * extra_ms;
    st->mid_m = more * m + accum * extra_ms;
}

enum dp_status sim_sample_worker(const struct iter_state *st, int r, double dt, int n_samples,
                                 struct dp_trace *tr, double *busy_total, struct dp_error *err) {
    const struct phase_prof *fw = &st->fw, *bw = &st->bw;
    int k = 0, w = st->rep[r];
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
                sim_timeline(st, w, q, st->jit[(size_t)q * st->n_cols + r], t);
                cached[q & 1] = q;
            }
            double u0 = a - st->T[q], u1 = b - st->T[q];
            if (u0 < 0) u0 = 0;
            if (u1 > st->T[q + 1] - st->T[q]) u1 = st->T[q + 1] - st->T[q];
            if (u1 <= u0) continue;
            for (int c = 0; c < fw->n; c++) {
                if (t->fs[c] >= u1) break;
                double ov = overlap(u0, u1, t->fs[c], t->fs[c] + t->j * fw->c[c].t);
                if (ov > 0 && fw->c[c].t > 0) {
                    busy += ov * fw->c[c].k / fw->c[c].t;
                    mem += ov * fw->c[c].m / fw->c[c].t;
                }
            }
            for (int c = 0; c < bw->n; c++) {
                if (t->bs[c] >= u1) break;
                double ov = overlap(u0, u1, t->bs[c], t->bs[c] + t->j * bw->c[c].t);
                if (ov > 0 && bw->c[c].t > 0) {
                    busy += ov * bw->c[c].k / bw->c[c].t;
                    mem += ov * bw->c[c].m / bw->c[c].t;
                }
            }
            double ov = overlap(u0, u1, t->ms, t->ms + t->j * st->mid_t);
            if (ov > 0) {
                busy += ov * st->mid_k / st->mid_t;
                mem += ov * st->mid_m / st->mid_t;
            }
            /* The update is memory-bound: busy and memory-busy alike. */
            ov = overlap(u0, u1, t->us, t->ue);
            busy += ov;
            mem += ov;
            for (int i = 0; i < t->n_spans; i++) {
                double o = overlap(u0, u1, t->sp[i].a, t->sp[i].b);
                rx += t->sp[i].rx * o;
                tx += t->sp[i].tx * o;
            }
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
