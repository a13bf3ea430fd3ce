/* keys.h: the explorer's input: one table from key to action (htop's Htop_Reaction), whose help
 * column also generates the help overlay and the footer; the line editor for prompts; mouse
 * clicks on tabs and rows. Actions change only the app (no curses drawing here). */
#ifndef DRIPLE_KEYS_H
#define DRIPLE_KEYS_H

#include "app.h"
#include "layout.h"

enum reaction { R_NONE = 0, R_REDRAW = 1 << 0, R_RELAYOUT = 1 << 1, R_QUIT = 1 << 2 };

struct keymap {
    int         key;
    int (*fn)(struct app *);     /* returns enum reaction flags; NULL: a tab's own key (its row
                                    of the tab table handles it), listed for the help */
    const char *label;           /* how the key is written in help ("g", "Tab", "F1") */
    const char *help;            /* what it does; NULL: an alias not listed */
    const char *footer;          /* short footer text; NULL: not in the footer */
};

extern const struct keymap keymap[];
extern const int keymap_len;

/* Handles one key (prompt editing when a prompt is open, then the current tab's own keys, then
 * the table). Unknown keys do nothing. Returns enum reaction flags. */
int keys_handle(struct app *a, int ch);
/* Handles a mouse press at (y, x) on a screen laid out as l (tabs, list rows, panes). */
int keys_mouse(struct app *a, const struct layout *l, int y, int x);
/* The help text, one line per entry ("g / G      next / previous GPU"), then the formulas of
 * the derived figures. A tab character in a line marks where its continuation lines align when
 * it wraps (the help overlay drops it). Lines are static or written into buf; returns the
 * number of lines (at most max). */
#define KEYS_HELP_LINE 320
int keys_help_lines(const char **lines, char (*buf)[KEYS_HELP_LINE], int max);
/* A help line as shown: its text without the tab into out (n bytes); returns the indent of its
 * continuation lines (where the tab was; else its leading blanks + 2). */
int keys_help_line(const char *line, char *out, size_t n);
/* Lines the help takes wrapped at width columns. */
int keys_help_rows(int width);

/* ---- the tabs' own input: their columns of the tab table (tabs.c) ---- */
/* Clicks on the predict panes (a pane, a row), on a list's rows (compare, groups). */
int keys_predict_mouse(struct app *a, const struct layout *l, int y, int x);
int keys_list_mouse(struct app *a, const struct layout *l, int y, int x);
/* Compare: Space marks the row's GPU, its own key (c, 2) again switches GPUs / settings; Enter
 * makes the row the what-if setting. */
int keys_compare_key(struct app *a, int ch);
int keys_compare_enter(struct app *a);
/* Groups: Enter shows the selected group (or op's group) in the importance tab; Esc clears the
 * search (the list shows every group again). */
int keys_groups_enter(struct app *a);
int keys_groups_key(struct app *a, int ch);
/* Left / Right: the predict tab's previous / next pane; a list's long lines scrolled sideways
 * (8 columns a step, back to 0 at most). */
int keys_pane_step(struct app *a, int dir);
int keys_list_sideways(struct app *a, int dir);

#endif
