/* test_layout.c: the explorer's screen geometry without a terminal: the minimum size, every
 * rectangle inside the screen at many sizes (80x24 included), panes that do not overlap, tabs
 * in a row, the help overlay, and hit testing. */
#include <string.h>

#include "../tui/layout.h"
#include "test.h"

static bool inside(struct rect r, int rows, int cols) {
    return r.y >= 0 && r.x >= 0 && r.h >= 0 && r.w >= 0 && r.y + r.h <= rows && r.x + r.w <= cols;
}

static bool overlap(struct rect a, struct rect b) {
    return a.h > 0 && a.w > 0 && b.h > 0 && b.w > 0 && a.y < b.y + b.h && b.y < a.y + a.h &&
           a.x < b.x + b.w && b.x < a.x + a.w;
}

static void check_size(const struct app *a, int rows, int cols) {
    struct layout l = layout_compute(rows, cols, a);
    CHECK(!l.too_small);
    CHECK(l.rows == rows && l.cols == cols);
    struct rect all[] = {l.header, l.tabs, l.body, l.table, l.derived, l.strips, l.list,
                         l.status, l.footer};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) CHECK(inside(all[i], rows, cols));
    /* the frame: header 2 rows, tabs, body, status, footer, covering every row once */
    CHECK(l.header.y == 0 && l.header.h == 2 && l.tabs.y == 2);
    CHECK(l.body.y == 3 && l.body.h == rows - 5);
    CHECK(l.status.y == rows - 2 && l.footer.y == rows - 1);
    CHECK(!overlap(l.header, l.body) && !overlap(l.body, l.status) && !overlap(l.tabs, l.body));
    /* predict panes: side by side, full width, strips below with room for 4 resources + axis */
    CHECK(!overlap(l.table, l.derived) && !overlap(l.table, l.strips) &&
          !overlap(l.derived, l.strips));
    CHECK(l.table.w + l.derived.w == cols);
    CHECK(l.table.h == LAYOUT_TOP_H && l.derived.h == LAYOUT_TOP_H);
    CHECK(l.table.w >= 42 && l.derived.w >= 38);
    CHECK(l.strips.h >= 7 && l.strips.y + l.strips.h == l.body.y + l.body.h);
    /* lists below two heading lines */
    CHECK(l.list.y == l.body.y + 2 && l.list.h == l.body.h - 2 && l.list.h >= 17);
    /* tabs in a row, left to right, disjoint, on the tab line */
    for (int i = 0; i < APP_TAB_COUNT; i++) {
        CHECK(l.tab[i].y == 2 && l.tab[i].h == 1 && inside(l.tab[i], rows, cols));
        CHECK(l.tab[i].w == layout_tab_width(i));
        if (i) CHECK(l.tab[i].x > l.tab[i - 1].x + l.tab[i - 1].w - 1);
    }
}

int main(void) {
    struct app a;
    memset(&a, 0, sizeof a);
    /* below the minimum: only the message */
    CHECK(layout_compute(23, 80, &a).too_small);
    CHECK(layout_compute(24, 79, &a).too_small);
    CHECK(layout_compute(0, 0, &a).too_small);
    CHECK(layout_compute(-5, 300, &a).too_small);
    CHECK(!layout_compute(24, 80, &a).too_small);
    /* 80x24 exactly, the e2e size, and a sweep */
    check_size(&a, 24, 80);
    check_size(&a, 30, 100);
    for (int rows = 24; rows <= 70; rows += 7)
        for (int cols = 80; cols <= 260; cols += 13) check_size(&a, rows, cols);
    /* pure: the same input gives the same rectangles */
    struct layout l1 = layout_compute(40, 120, &a), l2 = layout_compute(40, 120, &a);
    CHECK(!memcmp(&l1, &l2, sizeof l1));
    /* the help overlay fits inside the screen and is absent when closed */
    CHECK(l1.help.h == 0);
    a.help = true;
    struct layout h = layout_compute(24, 80, &a);
    CHECK(h.help.h > 0 && inside(h.help, 24, 80) && inside(h.help_box, 24, 80));
    CHECK(h.help.y + h.help.h <= h.status.y); /* the status line stays readable */
    h = layout_compute(60, 200, &a);
    /* (issue 16: wider than the old 96 columns; its lines wrap to it) */
    CHECK(h.help.h > 0 && h.help_box.w <= LAYOUT_HELP_MAX_W && inside(h.help, 60, 200));
    CHECK(h.help_box.x >= h.help.x && h.help_box.x + h.help_box.w <= h.help.x + h.help.w &&
          h.help_box.y == h.help.y && h.help_box.h == h.help.h);
    /* hit testing */
    struct rect r = {3, 5, 2, 10};
    CHECK(rect_contains(r, 3, 5) && rect_contains(r, 4, 14));
    CHECK(!rect_contains(r, 5, 5) && !rect_contains(r, 3, 15) && !rect_contains(r, 2, 6));
    struct layout l = layout_compute(24, 80, &a);
    CHECK(rect_contains(l.tab[1], 2, l.tab[1].x) && !rect_contains(l.tab[1], 2, l.tab[0].x));
    TEST_MAIN_END();
}
