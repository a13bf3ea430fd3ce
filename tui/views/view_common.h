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

/* Sets up colour pairs when color is true and the terminal has colours; else plain attributes.
 * ascii: the terminal has no UTF-8 (boxes, bars, ellipses and marks drawn in ASCII). */
void view_init(bool color, bool ascii);
/* Whether the views draw in ASCII (view_init). */
bool view_ascii(void);
/* The curses attribute of a style. */
attr_t view_attr(enum view_style s);
/* A box around w with a title; focused boxes are highlighted. UTF-8 lines or ASCII (+-|). */
void view_box(WINDOW *w, const struct app *a, const char *title, bool focused);
/* Writes x into buf right-aligned in `width` columns with 3-4 significant digits, k/M/G
 * suffixes for large values, "-" for NaN. */
void view_num(char *buf, size_t n, double x, int width);
/* Writes x in at most maxw columns (1 .. 12), as precisely as they allow: "24.54", "24.5",
 * "259", "12k", "1.3M"; "-" for NaN. No padding. */
void view_num_fit(char *buf, size_t n, double x, int maxw);
/* Whether derived figure k of p came out of its physical range and reads at its edge: the
 * setting-aware inspector's iteration time and memory, predicted directly (dp/sa.h's bits of
 * p->clamped). */
bool view_derived_clamped(const struct dp_prediction *p, enum dp_derived k);
/* Prints at most `width` columns of s at (y, x), also clipped to the window; text that does not
 * fit ends in an ellipsis in its last column, so that nothing looks whole that is cut. Returns
 * the columns printed. */
int view_put(WINDOW *w, int y, int x, int width, const char *s);
/* Prints s wrapped at blanks (text_wrap) into at most max_lines lines of width columns from
 * (y, x), later lines indented by `indent`; when s needs more lines the last one shows an
 * ellipsis. Returns the lines used. */
int view_wrap(WINDOW *w, int y, int x, int width, int max_lines, int indent, const char *s);
/* The ellipsis as drawn: "…", or "~" in ASCII. */
const char *view_ellipsis(void);

void view_header_draw(WINDOW *w, const struct app *a);
void view_tabs_draw(WINDOW *w, const struct app *a, const struct layout *l);
void view_status_draw(WINDOW *w, const struct app *a);
void view_footer_draw(WINDOW *w, const struct app *a);
void view_table_draw(WINDOW *w, const struct app *a);
void view_derived_draw(WINDOW *w, const struct app *a);
void view_strips_draw(WINDOW *w, const struct app *a);
void view_compare_draw(WINDOW *w, const struct app *a);
void view_groups_draw(WINDOW *w, const struct app *a);
void view_help_draw(WINDOW *w, const struct layout *l, const struct app *a);
void view_scaling_draw(WINDOW *w, const struct app *a);
/* Below the minimum size: one centred message on stdscr (and the quit prompt's keys when it is
 * open). */
void view_too_small_draw(int rows, int cols, const struct app *a);

#endif
