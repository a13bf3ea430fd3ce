/* sim_network.c: the simulator's transfers. Parameter-server pulls and pushes are fluid flows
 * over per-GPU links (PCIe to the host, or NVLink between GPUs), per-machine NICs and the
 * memory of a CPU PS's host, each flow as slow as its most loaded resource, so no resource
 * carries more than its line rate times net_eff and a PS serving W workers slows all of them.
 * NCCL's collectives are sim_collective.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_impl.h"

/* --- parameter servers --- */

enum { RES_UP, RES_DOWN, RES_NIC_TX, RES_NIC_RX, RES_HOST, RES_KINDS };

static double *res(struct sim_ps *n, int kind, int i) { return &n->load[kind * n->stride + i]; }
static double res_c(const struct sim_ps *n, int kind, int i) {
    return n->load[kind * n->stride + i];
}

/* Which machine holds each worker and PS. Homo: both spread over every machine; hetero: the PS
 * on machines of their own, the workers on the rest. */
static void place(const struct dp_setting *s, struct sim_ps *n) {
    int m = n->n_machines;
    for (int w = 0; w < n->n_workers; w++) n->worker_machine[w] = w % m;
    for (int p = 0; p < n->n_ps; p++) n->ps_machine[p] = p % m;
    if (s->placement == DP_PLACE_HETERO && m >= 2) {
        int pm = n->n_ps < m - 1 ? n->n_ps : m - 1;
        for (int p = 0; p < n->n_ps; p++) n->ps_machine[p] = p % pm;
        for (int w = 0; w < n->n_workers; w++) n->worker_machine[w] = pm + w % (m - pm);
    }
}

enum dp_status sim_ps_init(const struct dp_setting *s, const struct sim_device *d,
                           const struct dp_sim_constants *k, struct sim_ps *n) {
    memset(n, 0, sizeof *n);
    n->n_workers = s->workers;
    n->n_ps = s->ps;
    n->n_machines = s->machines;
    n->stride = s->workers > s->machines ? s->workers : s->machines;
    double link = s->network == DP_NET_NVLINK ? d->nvlink : d->pcie;
    double nic = BYTES_PER_MS(dp_network_bandwidth_gbps(s->network));
    n->cap[RES_UP] = n->cap[RES_DOWN] = link * k->net_eff;
    n->cap[RES_NIC_TX] = n->cap[RES_NIC_RX] = nic * k->net_eff;
    n->cap[RES_HOST] = BYTES_PER_MS(k->ps_host_gbps);
    if (!(n->worker_machine = calloc((size_t)s->workers, sizeof(int))) ||
        !(n->ps_machine = calloc((size_t)s->ps + 1, sizeof(int))) ||
        !(n->load = calloc((size_t)RES_KINDS * n->stride, sizeof(double))))
        return DP_ERR_NOMEM;
    place(s, n);
    return DP_OK;
}

void sim_ps_free(struct sim_ps *n) {
    free(n->worker_machine);
    free(n->ps_machine);
    free(n->load);
}

/* The resources a transfer between worker w and PS p crosses (kind, index); returns the count.
 * `pull` = PS -> worker. NVLink settings keep the PS shards on the GPUs (GPU p mod workers);
 * else the PS run on a host CPU, reached over the worker's PCIe link, the NICs when they are
 * on another machine, and the PS host's memory. */
static int route(const struct dp_setting *s, const struct sim_ps *n, int w, int p, bool pull,
                 int kinds[5], int idx[5]) {
    int c = 0;
    if (s->network == DP_NET_NVLINK) {
        int g = p % n->n_workers;
        if (g == w) return 0;
        kinds[c] = pull ? RES_UP : RES_DOWN, idx[c++] = g;
        kinds[c] = pull ? RES_DOWN : RES_UP, idx[c++] = w;
        return c;
    }
    kinds[c] = pull ? RES_DOWN : RES_UP, idx[c++] = w;
    int mw = n->worker_machine[w], mp = n->ps_machine[p];
    if (!dp_network_intra(s->network) && mw != mp) {
        kinds[c] = RES_NIC_TX, idx[c++] = pull ? mp : mw;
        kinds[c] = RES_NIC_RX, idx[c++] = pull ? mw : mp;
    }
    kinds[c] = RES_HOST, idx[c++] = mp;
    return c;
}

bool sim_ps_crosses(const struct dp_setting *s, const struct sim_ps *n, int w, int p) {
    int kinds[5], idx[5];
    return route(s, n, w, p, true, kinds, idx) > 0;
}

void sim_ps_phase(const struct dp_setting *s, struct sim_ps *n, const double *shard, bool pull,
                  double *t, double *bytes, double *nic_bytes) {
    int kinds[5], idx[5];
    memset(n->load, 0, (size_t)RES_KINDS * n->stride * sizeof *n->load);
    for (int w = 0; w < n->n_workers; w++)
        for (int p = 0; p < n->n_ps; p++) {
            int c = route(s, n, w, p, pull, kinds, idx);
            for (int r = 0; r < c; r++) *res(n, kinds[r], idx[r]) += shard[p];
        }
    for (int w = 0; w < n->n_workers; w++) {
        double worst = 0, b = 0, nb = 0;
        for (int p = 0; p < n->n_ps; p++) {
            int c = route(s, n, w, p, pull, kinds, idx);
            if (!c || shard[p] <= 0) continue;
            b += shard[p];
            for (int r = 0; r < c; r++) {
                double tt = res_c(n, kinds[r], idx[r]) / n->cap[kinds[r]];
                if (tt > worst) worst = tt;
                if (kinds[r] == RES_NIC_RX) nb += shard[p];
            }
        }
        t[w] = worst;
        bytes[w] = b;
        nic_bytes[w] = nb;
    }
}

double sim_ps_nic_total(const struct sim_ps *n) {
    double sum = 0;
    for (int m = 0; m < n->n_machines; m++) sum += res_c(n, RES_NIC_TX, m);
    return sum;
}

double dp_sync_bytes_per_iter(const struct dp_setting *s, double params) {
    if (!isfinite(params) || params < 0 || s->workers < 1) return NAN;
    if (s->sync != DP_SYNC_ALLREDUCE) return 2.0 * params * 4.0;
    int W = s->workers, rpm = dp_setting_gpus_per_machine(s);
    if (rpm < 1 || rpm > W) rpm = W;
    int m = (W + rpm - 1) / rpm;
    double intra, nic;
    sim_allreduce_traffic(s->ar_algo == DP_AR_TREE ? DP_AR_TREE : DP_AR_RING,
                          params * (sim_f16_gradients(s) ? 2.0 : 4.0), W, rpm, &intra, &nic);
    return intra + m * nic / W;
}

double dp_sim_allreduce_ms(const struct dp_setting *s, const struct dp_gpu *g,
                           const struct dp_sim_constants *k, double bytes) {
    struct dp_setting one = *s;
    struct dp_sim_fabric f;
    if (one.machines < 1) one.machines = 1;
    dp_sim_fabric(&one, g, NULL, k, &f);
    return sim_allreduce_algo_ms(&f, one.ar_algo, bytes, one.workers, f.gpus_per_machine, NULL);
}
