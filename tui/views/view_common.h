/* view_common.h: what every explorer view shares: colour pairs (or plain attributes under
 * NO_COLOR / --no-color), boxes in UTF-8 line drawing or ASCII, number formatting to a width,
 * and the view entry points (each draws one window from the app and calls wnoutrefresh). */
#ifndef DRIPLE_VIEW_COMMON_H
#define DRIPLE_VIEW_COMMON_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "layout.h"

enum view_style {
    ST_NORMAL, ST_TITLE, ST_HEAD, ST_SEL, ST_SEL_DIM, ST_WARN, ST_GOOD, ST_SIM, ST_DIM, ST_BURST,
    ST_TAB, ST_TAB_ON, ST_FOCUS, ST_KEY, ST_COUNT
};

/* Sets up colour pairs when color is true and the terminal has colours; else plain attributes. */
void view_init_colors(bool color);
/* The curses attribute of a style. */
attr_t view_attr(enum view_style s);
/* A box around w with a title; focused boxes are highlighted. UTF-8 lines or ASCII (+-|). */
void view_box(WINDOW *w, const struct app *a, const char *title, bool focused);
/* Writes x into buf right-aligned in `width` columns with 3-4 significant digits, k/M/G
 * suffixes for large values, "-" for NaN. */
void view_num(char *buf, size_t n, double x, int width);
/* Prints at most `width` columns of s at (y, x) (clipped, no wrapping). */
void view_put(WINDOW *w, int y, int x, int width, const char *s);

void view_header_draw(WINDOW *w, const struct app *a);
void view_tabs_draw(WINDOW *w, const struct app *a, const struct layout *l);
void view_status_draw(WINDOW *w, const struct app *a);
void view_footer_draw(WINDOW *w, const struct app *a);
void view_table_draw(WINDOW *w, const struct app *a);
void view_derived_draw(WINDOW *w, const struct app *a);
void view_strips_draw(WINDOW *w, const struct app *a);
void view_compare_draw(WINDOW *w, const struct app *a);
void view_groups_draw(WINDOW *w, const struct app *a);
void view_help_draw(WINDOW *w, const struct app *a);
/* Below the minimum size: one centred message on stdscr (and the quit prompt's keys when it is
 * open). */
void view_too_small_draw(int rows, int cols, const struct app *a);

#endif
