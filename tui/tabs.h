/* tabs.h: the explorer's tab table: everything that differs from tab to tab, one row per tab,
 * so that no key, click, layout or drawing code asks which tab it is in. A new tab: a value of
 * enum app_tab (app.h), a row in tab_defs (tabs.c), its view (tui/views/) and its layout
 * (layout.c). No curses here: the model (app_ui.c) and the pure layout read the table too. */
#ifndef DRIPLE_TABS_H
#define DRIPLE_TABS_H

#include <stdbool.h>

#include "app.h"
#include "dp/status.h"

struct layout;
struct wins;

struct tab_def {
    const char *name;          /* on the tab bar: "Predict" */
    const char *hint;          /* the status line's words when the tab opens: its keys */
    int         n_panes;       /* panes that Tab walks before the next tab (1: the tab alone) */
    bool        list;          /* a scrolling list: the loop keeps its selection in view */
    /* the rows of its list (of the selected pane, for a tab of panes) */
    int (*list_len)(const struct app *a);
    /* when it becomes the current tab (NULL: nothing), and after row `row` of it is selected
     * (NULL: nothing) */
    void (*shown)(struct app *a);
    void (*selected)(struct app *a, int row);
    /* its own keys, asked before the key table: enum reaction flags, or -1 when ch is not one of
     * them (NULL: none); Left / Right (dir -1 / +1; NULL: nothing); Enter (NULL: nothing); a
     * click below the tab bar (NULL: nothing) */
    int (*key)(struct app *a, int ch);
    int (*sideways)(struct app *a, int dir);
    int (*enter)(struct app *a);
    int (*mouse)(struct app *a, const struct layout *l, int y, int x);
    /* `e`: the file name offered, what is written ("predictions") in which form ("JSON"), and
     * the writer */
    const char *export_name, *export_what, *export_kind;
    enum dp_status (*export_file)(struct app *a, const char *path, struct dp_error *err);
    /* `E`: a CSV of its rows (NULL: none) */
    const char *csv_name;
    enum dp_status (*csv_file)(struct app *a, const char *path, struct dp_error *err);
    /* its panes inside l->body (pure geometry) */
    void (*layout)(struct layout *l);
    /* before a frame: its state follows the app (NULL: nothing to do); then draw, which only
     * draws. busy (NULL: never): background work whose result a later frame takes in, and
     * ready: that result is there */
    void (*prepare)(struct app *a);
    void (*draw)(const struct wins *w, const struct app *a);
    bool (*busy)(const struct app *a);
    bool (*ready)(struct app *a);
};

extern const struct tab_def tab_defs[APP_TAB_COUNT];

/* The current tab's row. */
static inline const struct tab_def *tab_of(const struct app *a) { return &tab_defs[a->tab]; }

#endif
