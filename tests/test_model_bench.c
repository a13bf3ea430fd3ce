/* test_model_bench.c: `driple bench predict|train|transfer` through cmd_bench: small synthetic
 * runs succeed with JSON output, and bad options or files give the usage (2) or error (1) exit;
 * the synthetic benchmark graph is deterministic, duplicate-free and fast at the largest size. */
#include <stdio.h>
#include <string.h>

#include "../cli/cmd.h"
#include "../cli/cmd_util.h"
#include "dp/clock.h"
#include "test.h"

/* cmd_bench takes mutable argv, as main's: copy the literals. */
static int run(int argc, const char **argv) {
    static char buf[16][256];
    char *args[16];
    for (int i = 0; i < argc && i < 16; i++) {
        snprintf(buf[i], sizeof buf[i], "%s", argv[i]);
        args[i] = buf[i];
    }
    fflush(stdout);
    return cmd_bench(argc, args);
}

/* The largest --synthetic (1e5 groups) took 24 s to de-duplicate its edges pairwise; now
 * a sort. Same seed, same graph; no duplicate or self edge; every group has an edge. */
static void test_synthetic(void) {
    double t0 = dp_clock_ms();
    struct dp_grouped *g = cmd_synthetic_grouped(100000, 7);
    double ms = dp_clock_ms() - t0;
    CHECK(g != NULL);
    if (!g) return;
    CHECK(ms < 3000);
    CHECK(g->n_groups == 100000 && g->n_edges > 100000);
    struct dp_grouped *h = cmd_synthetic_grouped(100000, 7);
    CHECK(h && h->n_edges == g->n_edges &&
          !memcmp(h->edges, g->edges, (size_t)g->n_edges * 2 * sizeof *g->edges));
    dp_grouped_free(h);
    char *seen = calloc(100000, 1);
    int bad = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->edges[2 * e], b = g->edges[2 * e + 1];
        if (a >= b || a < 0 || b >= 100000) bad++;
        else seen[a] = seen[b] = 1;
    }
    CHECK(bad == 0);
    int lone = 0;
    for (int i = 0; i < 100000; i++) lone += !seen[i];
    CHECK(lone == 0);
    free(seen);
    dp_grouped_free(g);
    struct dp_grouped *small = cmd_synthetic_grouped(50, 3);
    int dups = 0;
    for (int e = 0; small && e < small->n_edges; e++)
        for (int f = 0; f < e; f++)
            dups += small->edges[2 * e] == small->edges[2 * f] &&
                    small->edges[2 * e + 1] == small->edges[2 * f + 1];
    CHECK(small && dups == 0);
    dp_grouped_free(small);
}

int main(void) {
    test_synthetic();
    const char *p[] = {"predict", "--random", "--synthetic", "12", "--runs", "3", "--json"};
    CHECK(run(7, p) == 0);
    const char *pg[] = {"predict", "--random", "--layer", "gat", "--synthetic", "6", "--runs", "2"};
    CHECK(run(8, pg) == 0);
    const char *t[] = {"train", "--random", "--synthetic", "8", "--runs", "2", "--batch", "4",
                       "--json"};
    CHECK(run(9, t) == 0);
    const char *tr[] = {"transfer", "--random", "--synthetic", "8", "--runs", "3", "--batch", "4"};
    CHECK(run(8, tr) == 0);
    const char *w[] = {"predict", "--weights", REF_DIR "/gcn_pretrained_weights.json", "--grouped",
                       REF_DIR "/cases/gcn/tiny3.grouped.json", "--runs", "2", "--json"};
    CHECK(run(8, w) == 0);
    const char *missing[] = {"predict", "--weights", "build/no-such-weights.json"};
    CHECK(run(3, missing) == 1);
    const char *badg[] = {"predict", "--random", "--grouped", "build/no-such-graph.json"};
    CHECK(run(4, badg) == 1);
    const char *two[] = {"predict", "--random", "--weights", "x.json"};
    CHECK(run(4, two) == 2);
    const char *none[] = {"predict"};
    CHECK(run(1, none) == 2);
    const char *layer[] = {"predict", "--random", "--layer", "sage"};
    CHECK(run(4, layer) == 2);
    const char *runs[] = {"predict", "--random", "--runs", "0"};
    CHECK(run(4, runs) == 2);
    /* 4096 copies of a 1e5-group graph (~19 GB) are refused up front, not attempted. */
    const char *huge[] = {"train", "--random", "--synthetic", "100000", "--batch", "4096"};
    CHECK(run(6, huge) == 2);
    const char *what[] = {"frobnicate"};
    CHECK(run(1, what) == 2);
    CHECK(cmd_bench(0, NULL) == 2);
    TEST_MAIN_END();
}
