/* wins.h: the explorer's curses windows, one per rectangle of the layout (made by the loop in
 * explore.c, drawn into by the views through the tab table). */
#ifndef DRIPLE_WINS_H
#define DRIPLE_WINS_H

#include <curses.h>

struct wins {
    WINDOW *header, *tabs, *table, *derived, *strips, *body, *status, *footer, *help;
};

#endif
