/* sim_collective.c: NCCL's collectives on a cluster's fabric, in the closed forms of NCCL's own
 * cost model (src/graph/tuning.cc): a ring's time is its bytes per rank over its bus bandwidth
 * plus one latency per step, the steps that cross machines paying the network's; the double
 * binary tree moves its buffer up and down (algorithm bandwidth half the bus bandwidth, at 92%
 * of the ring's bus bandwidth across machines) with a latency logarithmic in the machines. The
 * bus bandwidth of a group is its slowest link per rank: inside one machine the GPU's NVLink
 * (or PCIe); across machines the NICs the group's GPUs of a machine share, or NVLink when it is
 * slower. NCCL's automatic choice takes the faster of the two on several machines, the ring on
 * one: trees for the small messages at scale, rings for the large. */
#include <math.h>
#include <string.h>

#include "sim/sim_impl.h"

/* NCCL's tree runs at this share of the ring's bus bandwidth across machines (tuning.cc). */
#define TREE_BW_SHARE 0.92

void sim_fabric_of(const struct dp_setting *s, const struct sim_device *d,
                   const struct dp_system *sys, const struct dp_sim_constants *k,
                   struct dp_sim_fabric *f) {
    memset(f, 0, sizeof *f);
    int per = dp_setting_gpus_per_machine(s);
    f->gpus_per_machine = per > 0 ? per : 1;
    f->machines = (s->workers + f->gpus_per_machine - 1) / f->gpus_per_machine;
    if (f->machines < 1) f->machines = 1;
    /* Inside a machine NCCL rings over NVLink where every GPU of the ring has it: SXM modules
     * (mesh or NVSwitch), or a pair of PCIe cards joined by a bridge; else over PCIe. The
     * setting's PCIe (or NVLink) names the link for one machine; a system names its own. */
    bool nvl = d->nvlink > 0 && s->network != DP_NET_PCIE &&
               (d->form == DP_FORM_SXM || f->gpus_per_machine <= 2);
    double intra = nvl ? d->nvlink : d->pcie;
    if (sys) {
        nvl = sys->fabric != DP_FABRIC_PCIE;
        if (sys->fabric_gbps > 0) intra = BYTES_PER_MS(sys->fabric_gbps / 2);
        else intra = nvl && d->nvlink > 0 ? d->nvlink : d->pcie;
    }
    f->intra_gbps = intra / 1e6 * k->net_eff;
    f->intra_lat_us = dp_network_latency_us(nvl ? DP_NET_NVLINK : DP_NET_PCIE);
    /* Across machines: the system's NICs, else one NIC of the setting's network per machine,
     * shared by its GPUs. */
    enum dp_network nic = sys ? sys->nic : s->network;
    int nics = sys && sys->nics > 0 ? sys->nics : 1;
    if (!dp_network_intra(nic) && (f->machines > 1 || !dp_network_intra(s->network))) {
        f->inter_gbps = dp_network_bandwidth_gbps(nic) * nics / f->gpus_per_machine * k->net_eff;
        f->inter_lat_us = dp_network_latency_us(nic);
    }
}

void dp_sim_fabric(const struct dp_setting *s, const struct dp_gpu *g,
                   const struct dp_system *sys, const struct dp_sim_constants *k,
                   struct dp_sim_fabric *out) {
    struct dp_sim_constants def;
    struct sim_device d = {0};
    if (!k) {
        dp_sim_constants_default(&def);
        k = &def;
    }
    sim_device_links(g, &d);
    sim_fabric_of(s, &d, sys, k, out);
}

/* A group's shape on the fabric: its machines and the bus bandwidth of a ring through it
 * (GB/s per rank, one direction). False for an impossible group. */
static bool group(const struct dp_sim_fabric *f, int ranks, int rpm, int *machines,
                  double *bus) {
    if (ranks < 1 || rpm < 1 || rpm > ranks || !(f->intra_gbps > 0)) return false;
    *machines = (ranks + rpm - 1) / rpm;
    if (*machines == 1) {
        *bus = f->intra_gbps;
        return true;
    }
    if (!(f->inter_gbps > 0)) return false;
    *bus = fmin(f->intra_gbps, rpm * f->inter_gbps);
    return true;
}

/* A ring moving bytes_per_rank from every rank in `steps` steps, `cross` of them (2(m - 1) of
 * an all-reduce's over m machines, m - 1 of a reduce-scatter's) across machines. */
static double ring_ms(const struct dp_sim_fabric *f, double bytes_per_rank, double bus,
                      int steps, int cross) {
    double lat = (steps - cross) * f->intra_lat_us + cross * f->inter_lat_us;
    return bytes_per_rank / (bus * 1e6) + lat / 1000;
}

double sim_allreduce_algo_ms(const struct dp_sim_fabric *f, enum dp_allreduce_algo algo,
                             double bytes, int ranks, int rpm, enum dp_allreduce_algo *used) {
    int m;
    double bus;
    if (used) *used = DP_AR_RING;
    if (!group(f, ranks, rpm, &m, &bus)) return -1;
    if (ranks < 2 || !(bytes > 0)) return 0;
    int n = ranks, g = rpm < ranks ? rpm : ranks;
    double ring = ring_ms(f, 2.0 * (n - 1) / n * bytes, bus, 2 * (n - 1), 2 * (m - 1));
    /* The tree: a chain inside each machine, a double binary tree across them; up then down. */
    double depth = m > 1 ? ceil(log2((double)m)) : 0;
    double tree_lat = 2 * ((g - 1) * f->intra_lat_us + depth * f->inter_lat_us);
    double tree = 2.0 * bytes / ((m > 1 ? TREE_BW_SHARE : 1.0) * bus * 1e6) + tree_lat / 1000;
    bool take_tree = algo == DP_AR_TREE || (algo == DP_AR_AUTO && m > 1 && tree < ring);
    if (used) *used = take_tree ? DP_AR_TREE : DP_AR_RING;
    return take_tree ? tree : ring;
}

double dp_sim_collective_ms(const struct dp_sim_fabric *f, enum dp_collective op,
                            enum dp_allreduce_algo algo, double bytes, int ranks,
                            int ranks_per_machine) {
    int m, n = ranks, g = ranks_per_machine;
    double bus;
    if (!f || !group(f, n, g, &m, &bus)) return -1;
    if (n < 2 || !(bytes > 0)) return 0;
    switch (op) {
    case DP_COLL_ALLREDUCE:
        return sim_allreduce_algo_ms(f, algo, bytes, n, g, NULL);
    case DP_COLL_REDUCE_SCATTER:
    case DP_COLL_ALLGATHER:
        return ring_ms(f, (n - 1.0) / n * bytes, bus, n - 1, m - 1);
    case DP_COLL_ALLTOALL: {
        /* every peer's 1/n at once: those in the machine over its links, the rest over its
         * share of the NICs; one round of the slowest link's latency */
        double in = (g - 1.0) / n * bytes, out = (double)(n - g) / n * bytes;
        double t = in / (f->intra_gbps * 1e6);
        if (m > 1) t = fmax(t, out / (f->inter_gbps * 1e6));
        return t + (m > 1 ? f->inter_lat_us : f->intra_lat_us) / 1000;
    }
    case DP_COLL_SENDRECV:
        return m > 1 ? bytes / (f->inter_gbps * 1e6) + f->inter_lat_us / 1000
                     : bytes / (f->intra_gbps * 1e6) + f->intra_lat_us / 1000;
    }
    return -1;
}

void sim_allreduce_traffic(enum dp_allreduce_algo used, double bytes, int ranks, int rpm,
                           double *intra_bytes, double *nic_bytes) {
    int n = ranks, m = rpm > 0 ? (ranks + rpm - 1) / rpm : 1;
    *intra_bytes = *nic_bytes = 0;
    if (n < 2 || !(bytes > 0)) return;
    if (used == DP_AR_TREE) {
        /* every edge of the spanning tree carries the buffer up and down: n - m edges inside
         * the machines, m - 1 across */
        *intra_bytes = 2.0 * (n - m) / n * bytes;
        *nic_bytes = 2.0 * (m - 1) / m * bytes;
        return;
    }
    /* the ring: 2(n - 1)/n of the buffer from every rank, one hop in rpm leaving the machine */
    double per = 2.0 * (n - 1) / n * bytes;
    if (m == 1) {
        *intra_bytes = per;
        return;
    }
    *intra_bytes = per * (rpm - 1.0) / rpm;
    *nic_bytes = per;
}
