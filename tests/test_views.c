/* test_views.c: what the explorer's views draw, read back from curses windows on a terminal
 * written to /dev/null: how sure a prediction is (each predicted number's 80% interval beside
 * it, a mark where a value was clamped, OUT OF DISTRIBUTION in the header, the setting-aware
 * source) before any inspector in the shipped assets says so (issues 12 and 14 fill these in),
 * at 80 columns and at 200; no line runs into a border or the window's edge. */
#include <curses.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../tui/app.h"
#include "../tui/views/view_common.h"
#include "test.h"

#define GRAPH "tests/data/graph/small.json"

/* Row y of w as text (UTF-8), trailing blanks kept. */
static void row_text(WINDOW *w, int y, char *buf, int n) {
    buf[0] = '\0';
    int len = 0;
    for (int x = 0; x < getmaxx(w) && len + 8 < n; x++) {
        cchar_t c;
        wchar_t wc[CCHARW_MAX + 1];
        attr_t at;
        short pair;
        if (mvwin_wch(w, y, x, &c) == ERR || getcchar(&c, wc, &at, &pair, NULL) == ERR) break;
        char mb[8];
        int k = wctomb(mb, wc[0] ? wc[0] : L' ');
        if (k > 0) {
            memcpy(buf + len, mb, (size_t)k);
            len += k;
        }
    }
    buf[len] = '\0';
}

/* Whether any row of w has a letter or digit right before a box border or in the last column
 * (text cut), and whether one contains needle; returns the count of rows containing it. */
static int scan(WINDOW *w, const char *needle, bool *cut) {
    char line[2048];
    int found = 0;
    for (int y = 0; y < getmaxy(w); y++) {
        row_text(w, y, line, sizeof line);
        if (needle && strstr(line, needle)) found++;
        const char *b = line;
        while ((b = strstr(b, "\xe2\x94\x82"))) { /* "│" */
            if (b > line && ((b[-1] >= '0' && b[-1] <= '9') || (b[-1] >= 'a' && b[-1] <= 'z') ||
                             (b[-1] >= 'A' && b[-1] <= 'Z')))
                *cut = true;
            b += 3;
        }
    }
    return found;
}

static void check_at(struct app *a, int cols) {
    resizeterm(30, cols);
    WINDOW *hdr = newwin(2, cols, 0, 0), *tab = newwin(11, cols / 2 > 42 ? cols / 2 : 42, 3, 0);
    WINDOW *der = newwin(11, cols - getmaxx(tab), 3, getmaxx(tab));
    CHECK(hdr && tab && der);
    if (!hdr || !tab || !der) return;
    view_header_draw(hdr, a);
    view_table_draw(tab, a);
    view_derived_draw(der, a);
    bool cut = false;
    CHECK(scan(hdr, "OUT OF DISTRIBUTION", &cut) == 1);
    CHECK(scan(hdr, "setting-aware", &cut) == 1);
    /* every predicted row carries intervals; the simulated rows do not */
    CHECK(scan(tab, "\xc2\xb1", &cut) == DP_N_RESOURCES + 1); /* + the title's legend */
    CHECK(scan(tab, "^", &cut) >= 1);
    CHECK(scan(der, "\xc2\xb1", &cut) >= 1);
    CHECK(!cut);
    delwin(hdr);
    delwin(tab);
    delwin(der);
}

int main(void) {
    if (!setlocale(LC_ALL, "C.UTF-8")) setlocale(LC_ALL, "");
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
    if (!scr) scr = newterm("xterm", out, in);
    CHECK(scr != NULL);
    if (!scr) return 1;
    struct app a;
    struct app_opts o = {GRAPH, NULL, NULL, NULL, 0, 0, NULL, ""};
    struct dp_error err = {0};
    CHECK(app_init(&a, &o, &err) == DP_OK);
    view_init(false, false);
    /* how sure: intervals around every output and derived figure, one clamped output, an
     * out-of-distribution graph, the setting-aware inspector as the source */
    struct dp_prediction *p = &a.pred.p;
    CHECK(p->ok);
    for (int k = 0; k < DP_N_OUTPUTS; k++) {
        p->lo[k] = p->m[k] * 0.8;
        p->hi[k] = p->m[k] * 1.25;
    }
    for (int k = 0; k < DP_N_DERIVED; k++) {
        p->d_lo[k] = p->d[k] * 0.9;
        p->d_hi[k] = p->d[k] * 1.1;
    }
    p->clamped = 1u << DP_OUT_GPU_UTIL_PEAK;
    p->ood = true;
    p->ood_score = 1.7;
    p->from.source = DP_SOURCE_SETTING_AWARE;
    check_at(&a, 80);
    check_at(&a, 200);
    app_free(&a);
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
    TEST_MAIN_END();
}
