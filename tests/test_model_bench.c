/* test_model_bench.c: `driple bench predict|train|transfer` through cmd_bench: small synthetic
 * runs succeed with JSON output, and bad options or files give the usage (2) or error (1) exit. */
#include <stdio.h>
#include <string.h>

#include "../tui/cmd.h"
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

int main(void) {
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
    const char *what[] = {"frobnicate"};
    CHECK(run(1, what) == 2);
    CHECK(cmd_bench(0, NULL) == 2);
    TEST_MAIN_END();
}
