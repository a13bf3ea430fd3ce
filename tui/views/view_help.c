/* view_help.c: the help overlay, generated from the key table plus the derived figures'
 * formulas; scrolls when the terminal is short. */
#include <stdio.h>

#include "keys.h"
#include "view_common.h"

#define HELP_MAX 96

void view_help_draw(WINDOW *w, const struct app *a) {
    const char *lines[HELP_MAX];
    static char buf[HELP_MAX][128];
    int n = keys_help_lines(lines, buf, HELP_MAX);
    werase(w);
    view_box(w, a, "Help (Esc or ? closes; j/k scroll)", true);
    int ih = getmaxy(w) - 2, iw = getmaxx(w) - 2;
    int first = a->help_scroll;
    if (first > n - ih) first = n - ih;
    if (first < 0) first = 0;
    for (int i = 0; i < ih && first + i < n; i++) view_put(w, 1 + i, 1, iw, lines[first + i]);
    wnoutrefresh(w);
}
