/* cmd_util.c: the helpers of cmd_util.h, kept in one place so that every command writes JSON
 * strings, times runs, builds its benchmark graph and reads --exported-batch the same way. */
#include "cmd_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cmd_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

void cmd_json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}

double cmd_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int cmd_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct edge_key {
    uint64_t edge; /* lo << 32 | hi */
    int      pos;  /* index in the edge list */
};

static int cmp_edge_key(const void *pa, const void *pb) {
    const struct edge_key *a = pa, *b = pb;
    if (a->edge != b->edge) return a->edge < b->edge ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

struct dp_grouped *cmd_synthetic_grouped(int n, uint64_t seed) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
    int want = n > 1 ? (int)(1.8 * n) : 0, m = 0;
    int *e = malloc(((size_t)want + (size_t)n + 1) * 2 * sizeof *e);
    if (!e) return NULL;
    for (int i = 1; i < n; i++) { /* a spanning tree keeps it connected */
        e[2 * m] = (int)(RND() % (uint64_t)i);
        e[2 * m + 1] = i;
        m++;
    }
    for (int k = 0; k < want; k++) {
        int i = (int)(RND() % (uint64_t)n), j = (int)(RND() % (uint64_t)n);
        if (i == j) continue;
        e[2 * m] = i < j ? i : j;
        e[2 * m + 1] = i < j ? j : i;
        m++;
    }
    /* De-duplicate, keeping each edge's first occurrence in place: sort (edge, position) keys,
     * then drop every key equal to the one before it (pairwise comparison took 24 s at 1e5). */
    struct edge_key *keys = malloc(((size_t)m + 1) * sizeof *keys);
    if (!keys) {
        free(e);
        return NULL;
    }
    for (int a = 0; a < m; a++) {
        keys[a].edge = (uint64_t)(uint32_t)e[2 * a] << 32 | (uint32_t)e[2 * a + 1];
        keys[a].pos = a;
    }
    qsort(keys, (size_t)m, sizeof *keys, cmp_edge_key);
    for (int a = 1; a < m; a++)
        if (keys[a].edge == keys[a - 1].edge) e[2 * keys[a].pos] = -1; /* a later copy */
    free(keys);
    int kept = 0;
    for (int a = 0; a < m; a++)
        if (e[2 * a] >= 0) {
            e[2 * kept] = e[2 * a];
            e[2 * kept + 1] = e[2 * a + 1];
            kept++;
        }
    struct dp_grouped *g = dp_grouped_init("synthetic", n, kept);
    if (g) {
        memcpy(g->edges, e, (size_t)kept * 2 * sizeof *e);
        for (int i = 0; i < n; i++) {
            g->x[i * 3 + 0] = (double)(RND() % 10000000);
            g->x[i * 3 + 1] = (double)(1 + RND() % 50);
            g->x[i * 3 + 2] = (double)(RND() % 3000) / 1000.0;
        }
    }
    free(e);
#undef RND
    return g;
}

bool cmd_import_opts(struct cli *c, struct dp_import_opts *o) {
    o->exported_batch = 0;
    return cli_int(c, "--exported-batch", 1, INT64_C(1) << 40, &o->exported_batch);
}
