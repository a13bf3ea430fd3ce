/* coarsen.c: the paper's preprocessing (GPU ops, no isolates, largest connected component) and
 * asynchronous fluid communities (Pares et al. 2017) reproducing networkx's asyn_fluidc step by
 * step (Python's Mersenne Twister, networkx's vertex and adjacency order) over a CSR adjacency.
 * Every buffer is allocated once up front: a sweep over a 50,000-op graph allocates nothing. */
#include "dp/coarsen.h"

#include <stdlib.h>
#include <string.h>

#include "dp/ops.h"

/* --- Python's random.Random, exactly ----------------------------------------------------------
 * MT19937 seeded as CPython's random.seed(int) does (init_by_array over the absolute value's
 * 32-bit words, least significant first), _randbelow by rejection on getrandbits(bit_length),
 * shuffle and choice as in Lib/random.py. With networkx's adjacency order (below), a seed gives
 * the grouping networkx's asyn_fluidc(G, k, seed=seed) gives, on any machine. */

#define MT_N 624
#define MT_M 397

struct rng {
    uint32_t mt[MT_N];
    int      i;
};

static void mt_init(struct rng *r, uint32_t s) {
    r->mt[0] = s;
    for (int i = 1; i < MT_N; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->i = MT_N;
}

static void rng_seed(struct rng *r, int64_t seed) {
    uint64_t n = seed < 0 ? 0 - (uint64_t)seed : (uint64_t)seed;
    uint32_t key[2] = {(uint32_t)n, (uint32_t)(n >> 32)};
    int len = key[1] ? 2 : 1;
    mt_init(r, 19650218u);
    int i = 1, j = 0;
    for (int k = MT_N > len ? MT_N : len; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] +
                   (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            r->mt[0] = r->mt[MT_N - 1];
            i = 1;
        }
        if (j >= len) j = 0;
    }
    for (int k = MT_N - 1; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            r->mt[0] = r->mt[MT_N - 1];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000u;
    r->i = MT_N;
}

static uint32_t rng_u32(struct rng *r) {
    if (r->i >= MT_N) { /* regenerate the state, in the reference's three runs */
        uint32_t *mt = r->mt, y;
        int k = 0;
        for (; k < MT_N - MT_M; k++) {
            y = (mt[k] & 0x80000000u) | (mt[k + 1] & 0x7fffffffu);
            mt[k] = mt[k + MT_M] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        for (; k < MT_N - 1; k++) {
            y = (mt[k] & 0x80000000u) | (mt[k + 1] & 0x7fffffffu);
            mt[k] = mt[k + (MT_M - MT_N)] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        y = (mt[MT_N - 1] & 0x80000000u) | (mt[0] & 0x7fffffffu);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        r->i = 0;
    }
    uint32_t y = r->mt[r->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static int bit_length(uint32_t n) {
#if defined(__GNUC__)
    return n ? 32 - __builtin_clz(n) : 0;
#else
    int bits = 0;
    while (bits < 32 && (n >> bits)) bits++;
    return bits;
#endif
}

/* random._randbelow(n) for 1 <= n < 2^31: getrandbits(n.bit_length()) until below n. */
static uint32_t rng_below(struct rng *r, uint32_t n) {
    int shift = 32 - bit_length(n);
    for (;;) {
        uint32_t x = rng_u32(r) >> shift;
        if (x < n) return x;
    }
}

/* random.shuffle: from the end, j = _randbelow(i + 1). */
static void shuffle(struct rng *r, int *a, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint32_t)i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* --- undirected simple graph of the GPU ops -------------------------------------------------- */

struct csr {
    int  n;
    int *start; /* n + 1 */
    int *adj;   /* start[n] neighbours, in networkx's adjacency order (see build_csr) */
};

static void csr_free(struct csr *c) {
    free(c->start);
    free(c->adj);
    c->start = c->adj = NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Builds the simple undirected graph on vertices `local` (graph index -> vertex or -1): data and
 * control inputs between two kept ops, multi-edges collapsed, self loops dropped. Each vertex's
 * neighbours come in the order networkx's Graph.add_edges_from leaves them when fed the edges
 * (input, op) for each op in graph order and each of its inputs in order (Driple's code): the
 * order in which each neighbour's first edge appears. Pairs are de-duplicated through an
 * open-addressing set. */
static enum dp_status build_csr(const struct dp_graph *g, const int *local, int n, struct csr *c,
                                int64_t *n_edges) {
    size_t nn = dp_graph_n_nodes(g), m = 0;
    for (size_t i = 0; i < nn; i++) {
        if (local[i] < 0) continue;
        const struct dp_node *nd = dp_graph_node(g, i);
        m += (size_t)nd->n_inputs + (size_t)nd->n_ctrl;
    }
    size_t cap = 16;
    while (cap < 2 * m + 2) cap *= 2;
    uint64_t *set = calloc(cap, sizeof *set);
    uint32_t *pairs = malloc((2 * m + 2) * sizeof *pairs); /* new pairs in first-seen order */
    c->n = n;
    c->start = calloc((size_t)n + 2, sizeof *c->start);
    c->adj = NULL;
    if (!set || !pairs || !c->start) goto oom;
    size_t u = 0;
    for (size_t i = 0; i < nn; i++) {
        int dst = local[i];
        if (dst < 0) continue;
        const struct dp_node *nd = dp_graph_node(g, i);
        for (int pass = 0; pass < 2; pass++) {
            const int *in = pass ? nd->ctrl : nd->inputs;
            int cnt = pass ? nd->n_ctrl : nd->n_inputs;
            for (int e = 0; e < cnt; e++) {
                int src = local[in[e]];
                if (src < 0 || src == dst) continue;
                uint64_t lo = (uint64_t)(src < dst ? src : dst), hi = (uint64_t)(src < dst ? dst : src);
                uint64_t key = (lo << 32 | hi) + 1;
                size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
                while (set[h] && set[h] != key) h = (h + 1) & (cap - 1);
                if (set[h]) continue; /* a multi-edge */
                set[h] = key;
                pairs[2 * u] = (uint32_t)src;
                pairs[2 * u + 1] = (uint32_t)dst;
                c->start[src + 1]++;
                c->start[dst + 1]++;
                u++;
            }
        }
    }
    *n_edges = (int64_t)u;
    for (int v = 0; v < n; v++) c->start[v + 1] += c->start[v];
    c->adj = malloc((2 * u + 1) * sizeof *c->adj);
    if (!c->adj) goto oom;
    /* Fill in first-seen order through per-vertex cursors. */
    int *cur = malloc(((size_t)n + 1) * sizeof *cur);
    if (!cur) goto oom;
    memcpy(cur, c->start, (size_t)n * sizeof *cur);
    for (size_t e = 0; e < u; e++) {
        int a = (int)pairs[2 * e], b = (int)pairs[2 * e + 1];
        c->adj[cur[a]++] = b;
        c->adj[cur[b]++] = a;
    }
    free(cur);
    free(set);
    free(pairs);
    return DP_OK;
oom:
    free(set);
    free(pairs);
    csr_free(c);
    return DP_ERR_NOMEM;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The adjacency order of networkx's G.subgraph(nodes).copy(), which Driple's code runs when the
 * graph has more than one component: for each vertex, the neighbours before it (ascending),
 * then those after it in their previous order. `tmp` has room for the largest degree. */
static void copy_order(struct csr *c, int *tmp) {
    for (int v = 0; v < c->n; v++) {
        int *a = c->adj + c->start[v], d = c->start[v + 1] - c->start[v], lo = 0, k = 0;
        for (int i = 0; i < d; i++)
            if (a[i] < v) tmp[lo++] = a[i];
        qsort(tmp, (size_t)lo, sizeof *tmp, cmp_int);
        k = lo;
        for (int i = 0; i < d; i++)
            if (a[i] > v) tmp[k++] = a[i];
        memcpy(a, tmp, (size_t)d * sizeof *a);
    }
}

/* Component labels (-1 for isolated vertices); returns the count of non-trivial components and
 * the label of the largest (ties: the one holding the lowest vertex). */
static int components(const struct csr *c, int *label, int *queue, int *largest, int *largest_n) {
    int n_comp = 0;
    *largest = -1;
    *largest_n = 0;
    for (int v = 0; v < c->n; v++) label[v] = -2;
    for (int s = 0; s < c->n; s++) {
        if (label[s] != -2) continue;
        if (c->start[s] == c->start[s + 1]) {
            label[s] = -1;
            continue;
        }
        int head = 0, tail = 0;
        queue[tail++] = s;
        label[s] = n_comp;
        while (head < tail) {
            int v = queue[head++];
            for (int e = c->start[v]; e < c->start[v + 1]; e++)
                if (label[c->adj[e]] == -2) {
                    label[c->adj[e]] = n_comp;
                    queue[tail++] = c->adj[e];
                }
        }
        if (tail > *largest_n) {
            *largest_n = tail;
            *largest = n_comp;
        }
        n_comp++;
    }
    return n_comp;
}

bool dp_graph_unplaced(const struct dp_graph *g) {
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++)
        if (dp_graph_node(g, i)->device[0]) return false;
    return true;
}

bool dp_graph_op_on_gpu(const struct dp_node *n, bool unplaced) {
    return unplaced || dp_node_on_gpu(n);
}

enum dp_status dp_graph_stats(const struct dp_graph *g, struct dp_graph_stats *out,
                              struct dp_error *err) {
    size_t nn = dp_graph_n_nodes(g);
    struct dp_graph_stats s = {0};
    s.n_ops = (int)nn;
    s.unplaced = dp_graph_unplaced(g);
    int *local = malloc((nn + 1) * sizeof *local);
    if (!local) return dp_error_set(err, DP_ERR_NOMEM, "graph stats: out of memory");
    for (size_t i = 0; i < nn; i++) {
        const struct dp_node *nd = dp_graph_node(g, i);
        local[i] = dp_graph_op_on_gpu(nd, s.unplaced) ? s.n_gpu_ops++ : -1;
        if (nd->params > 0 || dp_op_is_variable(nd->op)) {
            s.n_variables++;
            int sz = dp_dtype_size(nd->dtype);
            s.param_count += (double)nd->params;
            s.param_bytes += (double)nd->params * (sz > 0 ? sz : 4);
        }
    }
    struct csr c = {0};
    int *label = NULL, *queue = NULL;
    enum dp_status st = build_csr(g, local, s.n_gpu_ops, &c, &s.n_gpu_edges);
    if (st) goto done;
    label = malloc(((size_t)s.n_gpu_ops + 1) * sizeof *label);
    queue = malloc(((size_t)s.n_gpu_ops + 1) * sizeof *queue);
    if (!label || !queue) {
        st = DP_ERR_NOMEM;
        goto done;
    }
    int largest;
    s.n_components = components(&c, label, queue, &largest, &s.largest_component);
    for (int v = 0; v < s.n_gpu_ops; v++) s.n_isolated += label[v] == -1;
    *out = s;
done:
    free(label);
    free(queue);
    free(local);
    csr_free(&c);
    if (st) return dp_error_set(err, st, "graph stats: out of memory");
    return DP_OK;
}

void dp_partition_free(struct dp_partition *p) {
    if (!p) return;
    free(p->op_index);
    free(p->group);
    free(p->edges);
    free(p);
}

/* --- fluid communities ------------------------------------------------------------------------ */

struct fluid {
    int    *com;      /* n: community, -1 = none yet */
    int    *order;    /* n */
    int    *count;    /* k */
    double *density;  /* k */
    double *acc;      /* k: this vertex's sum per community */
    int    *touched;  /* k: communities touched, in first-touch order (networkx's Counter) */
    int    *best;     /* k */
    int    *joined;   /* n: vertices in the order they first got a community (networkx's dict) */
};

/* networkx asyn_fluidc: returns the number of sweeps run. */
static int fluid_run(const struct csr *c, int k, int max_iter, struct rng *r, struct fluid *f) {
    int n = c->n;
    for (int v = 0; v < n; v++) f->order[v] = v;
    shuffle(r, f->order, n);
    for (int v = 0; v < n; v++) f->com[v] = -1;
    for (int i = 0; i < k; i++) {
        f->joined[i] = f->order[i];
        f->com[f->order[i]] = i;
        f->count[i] = 1;
        f->density[i] = 1.0;
        f->acc[i] = 0;
    }
    int unassigned = n - k, iter = 0;
    for (bool cont = true; cont;) {
        cont = false;
        iter++;
        for (int v = 0; v < n; v++) f->order[v] = v; /* list(G), then shuffled, each sweep */
        shuffle(r, f->order, n);
        for (int oi = 0; oi < n; oi++) {
            int v = f->order[oi], nt = 0, own = f->com[v];
            if (own >= 0) {
                f->acc[own] = f->density[own];
                f->touched[nt++] = own;
            }
            for (int e = c->start[v]; e < c->start[v + 1]; e++) {
                int cu = f->com[c->adj[e]];
                if (cu < 0) continue;
                if (f->acc[cu] == 0) f->touched[nt++] = cu;
                f->acc[cu] += f->density[cu];
            }
            if (nt == 0) continue;
            double max = 0;
            for (int t = 0; t < nt; t++)
                if (f->acc[f->touched[t]] > max) max = f->acc[f->touched[t]];
            int nb = 0;
            bool keep = false;
            for (int t = 0; t < nt; t++) {
                int cu = f->touched[t];
                if (max - f->acc[cu] < 0.0001) {
                    f->best[nb++] = cu;
                    keep |= cu == own;
                }
                f->acc[cu] = 0; /* reset for the next vertex */
            }
            if (keep) continue;
            cont = true;
            int nc = f->best[rng_below(r, (uint32_t)nb)];
            if (own >= 0) {
                f->count[own]--;
                f->density[own] = f->count[own] > 0 ? 1.0 / f->count[own] : 1.0;
            } else {
                f->joined[n - unassigned] = v;
                unassigned--;
            }
            f->com[v] = nc;
            f->count[nc]++;
            f->density[nc] = 1.0 / f->count[nc];
        }
        if (unassigned > 0) cont = true; /* a sweep may reach no one new by chance */
        if (iter > max_iter) break;      /* networkx stops after max_iter + 1 sweeps */
    }
    /* Ops the sweeps never reached (a graph wider than max_iter hops from every seed, e.g. a long
     * chain) join their nearest community: a breadth-first fill from the assigned ops in the order
     * they joined, with `joined` itself as the queue. O(ops + edges) where sweeping on until
     * everyone is reached cost O(ops x width): 108 s for a 200,000-op chain. */
    for (int head = 0, tail = n - unassigned; head < tail; head++) {
        int v = f->joined[head];
        for (int e = c->start[v]; e < c->start[v + 1]; e++) {
            int w = c->adj[e];
            if (f->com[w] >= 0) continue;
            f->com[w] = f->com[v];
            f->count[f->com[v]]++;
            f->joined[tail++] = w;
            unassigned--;
        }
    }
    for (int v = 0; v < n; v++)
        if (f->com[v] < 0) {
            f->com[v] = 0;
            f->count[0]++;
            f->joined[n - unassigned--] = v;
        }
    return iter;
}

static enum dp_status partition_edges(const struct csr *c, struct dp_partition *p) {
    size_t m = 0;
    for (int v = 0; v < c->n; v++)
        for (int e = c->start[v]; e < c->start[v + 1]; e++)
            if (c->adj[e] > v && p->group[v] != p->group[c->adj[e]]) m++;
    uint64_t *keys = malloc((m + 1) * sizeof *keys);
    if (!keys) return DP_ERR_NOMEM;
    size_t k = 0;
    for (int v = 0; v < c->n; v++)
        for (int e = c->start[v]; e < c->start[v + 1]; e++) {
            int w = c->adj[e];
            if (w <= v || p->group[v] == p->group[w]) continue;
            uint64_t a = (uint64_t)p->group[v], b = (uint64_t)p->group[w];
            keys[k++] = a < b ? a << 32 | b : b << 32 | a;
        }
    qsort(keys, k, sizeof *keys, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || keys[i] != keys[i - 1]) keys[u++] = keys[i];
    p->edges = malloc((2 * u + 1) * sizeof *p->edges);
    if (!p->edges) {
        free(keys);
        return DP_ERR_NOMEM;
    }
    for (size_t i = 0; i < u; i++) {
        p->edges[2 * i] = (int)(keys[i] >> 32);
        p->edges[2 * i + 1] = (int)(keys[i] & 0xffffffffu);
    }
    p->n_edges = (int)u;
    free(keys);
    return DP_OK;
}

/* Groups whose ops are not one connected piece (BFS inside each group). */
static int count_disconnected(const struct csr *c, const int *group, int k, int *seen, int *queue,
                              int *pieces) {
    for (int v = 0; v < c->n; v++) seen[v] = 0;
    for (int i = 0; i < k; i++) pieces[i] = 0;
    for (int s = 0; s < c->n; s++) {
        if (seen[s]) continue;
        pieces[group[s]]++;
        int head = 0, tail = 0;
        queue[tail++] = s;
        seen[s] = 1;
        while (head < tail) {
            int v = queue[head++];
            for (int e = c->start[v]; e < c->start[v + 1]; e++) {
                int w = c->adj[e];
                if (!seen[w] && group[w] == group[s]) {
                    seen[w] = 1;
                    queue[tail++] = w;
                }
            }
        }
    }
    int bad = 0;
    for (int i = 0; i < k; i++) bad += pieces[i] > 1;
    return bad;
}

enum dp_status dp_coarsen(const struct dp_graph *g, const struct dp_coarsen_opts *opts,
                          struct dp_partition **out, struct dp_error *err) {
    int k = opts && opts->k ? opts->k : DP_DEFAULT_GROUPS;
    int64_t seed = opts ? opts->seed : DP_DEFAULT_SEED;
    int max_iter = opts && opts->max_iter > 0 ? opts->max_iter : DP_DEFAULT_MAX_ITER;
    const char *gname = dp_graph_name(g);
    if (k < 1) return dp_error_set(err, DP_ERR_INVALID, "%s: %d groups asked (need >= 1)", gname, k);
    size_t nn = dp_graph_n_nodes(g);
    enum dp_status st = DP_ERR_NOMEM;
    struct dp_partition *p = calloc(1, sizeof *p);
    int *local = malloc((nn + 1) * sizeof *local), *label = NULL, *queue = NULL;
    struct csr all = {0}, kept = {0};
    struct fluid f = {0};
    if (!p || !local) goto done;
    p->seed = seed;
    int n_gpu = 0;
    p->unplaced = dp_graph_unplaced(g);
    for (size_t i = 0; i < nn; i++)
        local[i] = dp_graph_op_on_gpu(dp_graph_node(g, i), p->unplaced) ? n_gpu++ : -1;
    p->n_gpu_ops = n_gpu;
    if (n_gpu == 0) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: no op is placed on a GPU (devices are named, none a GPU); nothing "
                          "to group",
                          gname);
        goto done;
    }
    if ((st = build_csr(g, local, n_gpu, &all, &p->n_gpu_edges))) goto done;
    label = malloc(((size_t)n_gpu + 1) * sizeof *label);
    queue = malloc(((size_t)n_gpu + 1) * sizeof *queue);
    if (!label || !queue) {
        st = DP_ERR_NOMEM;
        goto done;
    }
    int largest, largest_n;
    p->n_components = components(&all, label, queue, &largest, &largest_n);
    for (int v = 0; v < n_gpu; v++) p->n_isolated += label[v] == -1;
    if (largest < 0) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "%s: the %d GPU ops share no edge (every one is isolated); nothing to group",
                          gname, n_gpu);
        goto done;
    }
    /* Keep the largest component, in graph order. */
    p->n_ops = largest_n;
    p->op_index = malloc((size_t)largest_n * sizeof *p->op_index);
    p->group = malloc((size_t)largest_n * sizeof *p->group);
    if (!p->op_index || !p->group) {
        st = DP_ERR_NOMEM;
        goto done;
    }
    int n = 0;
    for (size_t i = 0; i < nn; i++) {
        int v = local[i];
        if (v >= 0 && label[v] == largest) {
            p->op_index[n] = (int)i;
            local[i] = n++;
        } else {
            local[i] = -1;
        }
    }
    int64_t kept_edges;
    if ((st = build_csr(g, local, n, &kept, &kept_edges))) goto done;
    if (p->n_components > 1) copy_order(&kept, label);
    if (k > n) k = n;
    p->n_groups = k;
    f.com = p->group;
    f.order = queue;
    f.count = calloc((size_t)k, sizeof *f.count);
    f.density = calloc((size_t)k, sizeof *f.density);
    f.acc = calloc((size_t)k, sizeof *f.acc);
    f.touched = calloc((size_t)k, sizeof *f.touched);
    f.best = calloc((size_t)k, sizeof *f.best);
    f.joined = malloc(((size_t)n + 1) * sizeof *f.joined);
    if (!f.count || !f.density || !f.acc || !f.touched || !f.best || !f.joined) {
        st = DP_ERR_NOMEM;
        goto done;
    }
    struct rng r;
    rng_seed(&r, seed);
    p->iterations = fluid_run(&kept, k, max_iter, &r, &f);
    /* Groups are numbered as networkx lists them: by first appearance of each community among
     * the vertices in the order they joined one (so no group is empty). */
    for (int i = 0; i < k; i++) f.touched[i] = -1;
    int ng = 0;
    for (int j = 0; j < n; j++) {
        int c = p->group[f.joined[j]];
        if (f.touched[c] < 0) f.touched[c] = ng++;
    }
    for (int v = 0; v < n; v++) p->group[v] = f.touched[p->group[v]];
    p->n_groups = ng;
    p->n_disconnected = count_disconnected(&kept, p->group, ng, label, queue, f.count);
    if ((st = partition_edges(&kept, p))) goto done;
    st = DP_OK;
    *out = p;
    p = NULL;
done:
    /* the failures with their own message set it already; only allocations remain */
    if (st == DP_ERR_NOMEM)
        dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory while coarsening", gname);
    dp_partition_free(p);
    free(local);
    free(label);
    free(queue);
    free(f.count);
    free(f.density);
    free(f.acc);
    free(f.touched);
    free(f.best);
    free(f.joined);
    csr_free(&all);
    csr_free(&kept);
    return st;
}
