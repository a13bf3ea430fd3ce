/* keys.c: the key table (key -> action -> reaction flags), the prompt line editor and mouse hit
 * testing. The help overlay and the footer are generated from the same table. */
#include "keys.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"
#include "tabs.h"

#define KEY_TAB     '\t'
#define KEY_ESC     27
#define KEY_CTRL_L  12

static int k_gpu_next(struct app *a) { app_gpu_step(a, +1); return R_REDRAW; }
static int k_gpu_prev(struct app *a) { app_gpu_step(a, -1); return R_REDRAW; }
static int k_workers_up(struct app *a) { app_workers_step(a, +1); return R_REDRAW; }
static int k_workers_down(struct app *a) { app_workers_step(a, -1); return R_REDRAW; }
static int k_ps_up(struct app *a) { app_ps_step(a, +1); return R_REDRAW; }
static int k_ps_down(struct app *a) { app_ps_step(a, -1); return R_REDRAW; }
static int k_net_next(struct app *a) { app_network_step(a, +1); return R_REDRAW; }
static int k_net_prev(struct app *a) { app_network_step(a, -1); return R_REDRAW; }
static int k_placement(struct app *a) { app_placement_toggle(a); return R_REDRAW; }
static int k_precision(struct app *a) { app_precision_toggle(a); return R_REDRAW; }
static int k_batch_up(struct app *a) { app_batch_step(a, +1); return R_REDRAW; }
static int k_batch_down(struct app *a) { app_batch_step(a, -1); return R_REDRAW; }

static int open_prompt(struct app *a, enum app_prompt p, const char *initial) {
    a->prompt = p;
    snprintf(a->input, sizeof a->input, "%s", initial);
    return R_REDRAW;
}

static int k_batch_type(struct app *a) { return open_prompt(a, APP_PROMPT_BATCH, ""); }
static int k_dataset(struct app *a) { return open_prompt(a, APP_PROMPT_DATASET, ""); }
static int k_price(struct app *a) { return open_prompt(a, APP_PROMPT_PRICE, ""); }
static int k_search(struct app *a) {
    app_tab_set(a, APP_TAB_GROUPS);
    return open_prompt(a, APP_PROMPT_SEARCH, "") | R_RELAYOUT;
}
static int k_export(struct app *a) {
    return open_prompt(a, APP_PROMPT_EXPORT, tab_of(a)->export_name);
}

/* Tab walks every pane of every tab (a tab of panes starts at its first), then around. */
static int k_pane_next(struct app *a) {
    if (tab_of(a)->n_panes > 1 && (int)a->pane + 1 < tab_of(a)->n_panes) {
        a->pane = (enum app_pane)(a->pane + 1);
        return R_RELAYOUT;
    }
    app_tab_set(a, (enum app_tab)((a->tab + 1) % APP_TAB_COUNT));
    if (tab_of(a)->n_panes > 1) a->pane = (enum app_pane)0;
    return R_RELAYOUT;
}
static int k_pane_prev(struct app *a) {
    if (tab_of(a)->n_panes > 1 && a->pane > 0) {
        a->pane = (enum app_pane)(a->pane - 1);
        return R_RELAYOUT;
    }
    app_tab_set(a, (enum app_tab)((a->tab + APP_TAB_COUNT - 1) % APP_TAB_COUNT));
    if (tab_of(a)->n_panes > 1) a->pane = (enum app_pane)(tab_of(a)->n_panes - 1);
    return R_RELAYOUT;
}
static int k_tab_next(struct app *a) {
    app_tab_set(a, (enum app_tab)((a->tab + 1) % APP_TAB_COUNT));
    return R_RELAYOUT;
}
static int k_tab_prev(struct app *a) {
    app_tab_set(a, (enum app_tab)((a->tab + APP_TAB_COUNT - 1) % APP_TAB_COUNT));
    return R_RELAYOUT;
}
static int k_predict(struct app *a) { app_tab_set(a, APP_TAB_PREDICT); return R_RELAYOUT; }
static int k_compare(struct app *a) { app_tab_set(a, APP_TAB_COMPARE); return R_RELAYOUT; }
static int k_groups(struct app *a) { app_tab_set(a, APP_TAB_GROUPS); return R_RELAYOUT; }
static int k_importance(struct app *a) { app_tab_set(a, APP_TAB_IMPORTANCE); return R_RELAYOUT; }
static int k_sort(struct app *a) {
    app_sort_next(a);
    app_tab_set(a, APP_TAB_COMPARE);
    return R_RELAYOUT;
}
static int k_sort_source(struct app *a) {
    app_sort_source_toggle(a);
    app_tab_set(a, APP_TAB_COMPARE);
    return R_RELAYOUT;
}
static int k_only_marked(struct app *a) { app_only_marked_toggle(a); return R_REDRAW; }
static int k_enter(struct app *a) { return tab_of(a)->enter ? tab_of(a)->enter(a) : R_NONE; }
static int k_transfer(struct app *a) { app_transfer_start(a); return R_REDRAW; }
static int k_cancel(struct app *a) { app_transfer_cancel(a); return R_REDRAW; }
static int k_save(struct app *a) { app_transfer_save(a); return R_REDRAW; }
static int k_up(struct app *a) { app_move(a, -1); return R_REDRAW; }
static int k_down(struct app *a) { app_move(a, +1); return R_REDRAW; }
static int k_pgup(struct app *a) { app_move(a, -(a->page > 1 ? a->page - 1 : 1)); return R_REDRAW; }
static int k_pgdn(struct app *a) { app_move(a, a->page > 1 ? a->page - 1 : 1); return R_REDRAW; }
static int k_home(struct app *a) { app_select(a, 0); return R_REDRAW; }
static int k_end(struct app *a) { app_select(a, 1 << 30); return R_REDRAW; }
static int k_help(struct app *a) {
    a->help = !a->help;
    a->help_scroll = 0;
    return R_RELAYOUT;
}
static int k_redraw(struct app *a) { (void)a; return R_RELAYOUT; }
static int k_quit(struct app *a) {
    /* a transfer lives only in memory until saved: ask once before it is lost */
    if (app_unsaved(a) > 0) return open_prompt(a, APP_PROMPT_QUIT, "");
    return R_QUIT;
}

const struct keymap keymap[] = {
    {'?',           k_help,         "? / F1",     "this help (Esc closes)",                   "help"},
    {'g',           k_gpu_next,     "g / G",      "next / previous GPU of the catalog",       "GPU"},
    {'G',           k_gpu_prev,     "G",          NULL,                                        NULL},
    {'w',           k_workers_up,   "w / W",      "more / fewer workers",                     "workers"},
    {'W',           k_workers_down, "W",          NULL,                                        NULL},
    {'p',           k_ps_up,        "p / P",      "more / fewer parameter servers",           "PS"},
    {'P',           k_ps_down,      "P",          NULL,                                        NULL},
    {'n',           k_net_next,     "n / N",      "next / previous network",                  "net"},
    {'N',           k_net_prev,     "N",          NULL,                                        NULL},
    {'o',           k_placement,    "o",          "placement: homo / hetero",                 NULL},
    {'m',           k_precision,    "m",          "precision: fp32 / mixed",                  NULL},
    {'+',           k_batch_up,     "+ / -",      "double / halve the batch size",            "batch"},
    {'=',           k_batch_up,     "=",          NULL,                                        NULL},
    {'-',           k_batch_down,   "-",          NULL,                                        NULL},
    {'b',           k_batch_type,   "b",          "type a batch size",                        NULL},
    {'d',           k_dataset,      "d",          "set the dataset size (samples per epoch)", NULL},
    {'$',           k_price,        "$",          "set the price per GPU-hour",               NULL},
    {'t',           k_transfer,     "t",          "transfer an inspector to this setting (simulated data, background)", "transfer"},
    {'x',           k_cancel,       "x",          "cancel the transfer",                      NULL},
    {'f',           k_save,         "f",          "save this setting's transferred inspector to a file (found on the next start)", NULL},
    {KEY_TAB,       k_pane_next,    "Tab / S-Tab", "next / previous pane",                    NULL},
    {KEY_BTAB,      k_pane_prev,    "S-Tab",      NULL,                                        NULL},
    {'1',           k_predict,      "1",          "predict tab",                               NULL},
    {'c',           k_compare,      "c / 2",      "compare tab (again: every GPU / every setting)", "compare"},
    {'2',           k_compare,      "2",          NULL,                                        NULL},
    {'3',           k_groups,       "3",          "groups tab (the coarsened graph)",         NULL},
    {'i',           k_importance,   "i / 4",      "importance tab (which groups drive the metric)", "importance"},
    {'4',           k_importance,   "4",          NULL,                                        NULL},
    {'/',           k_search,       "/",          "search ops by name or type",               "search"},
    {'s',           k_sort,         "s",          "sort compare rows: throughput, iteration, cost, utilisation", "sort"},
    {'S',           k_sort_source,  "S",          "sort on the predicted / the simulated figures", NULL},
    {' ',           NULL,           "Space",      "mark / unmark the selected GPU (compare)", NULL},
    {'M',           k_only_marked,  "M",          "compare marked GPUs only / every GPU",     NULL},
    {'\n',          k_enter,        "Enter",      "compare: use the row as the setting; groups: show it in importance", NULL},
    {'\r',          k_enter,        "Enter",      NULL,                                        NULL},
    {KEY_ENTER,     k_enter,        "Enter",      NULL,                                        NULL},
    {'e',           k_export,       "e",          "export: predictions as JSON (importance tab: SVG)", "export"},
    {KEY_UP,        k_up,           "Up / k",     "previous row",                             NULL},
    {'k',           k_up,           "k",          NULL,                                        NULL},
    {KEY_DOWN,      k_down,         "Down / j",   "next row",                                 NULL},
    {'j',           k_down,         "j",          NULL,                                        NULL},
    {KEY_LEFT,      k_tab_prev,     "Left / h",   "previous tab",                             NULL},
    {'h',           k_tab_prev,     "h",          NULL,                                        NULL},
    {KEY_RIGHT,     k_tab_next,     "Right / l",  "next tab",                                 NULL},
    {'l',           k_tab_next,     "l",          NULL,                                        NULL},
    {KEY_PPAGE,     k_pgup,         "PgUp / PgDn", "page up / down",                          NULL},
    {KEY_NPAGE,     k_pgdn,         "PgDn",       NULL,                                        NULL},
    {KEY_HOME,      k_home,         "Home / End", "first / last row",                         NULL},
    {KEY_END,       k_end,          "End",        NULL,                                        NULL},
    {KEY_F(1),      k_help,         "F1",         NULL,                                        NULL},
    {KEY_CTRL_L,    k_redraw,       "Ctrl-L",     "redraw the screen",                        NULL},
    {'q',           k_quit,         "q / F10",    "quit",                                     "quit"},
    {KEY_F(10),     k_quit,         "F10",        NULL,                                        NULL},
};
const int keymap_len = (int)(sizeof keymap / sizeof keymap[0]);

const char *keys_prompt_label(const struct app *a) {
    switch (a->prompt) {
    case APP_PROMPT_BATCH: return "batch size: ";
    case APP_PROMPT_SEARCH: return "search ops: /";
    case APP_PROMPT_DATASET: return "dataset size (samples per epoch): ";
    case APP_PROMPT_PRICE: return "price per GPU-hour ($): ";
    case APP_PROMPT_EXPORT: return "export to file: ";
    case APP_PROMPT_QUIT:
        return "unsaved transfers: save before quitting? y saves and quits, n quits, Esc stays";
    default: return "";
    }
}

static bool parse_double(const char *s, double *out) {
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    while (*end == ' ') end++;
    if (errno || end == s || *end) return false;
    *out = x;
    return true;
}

static int prompt_commit(struct app *a) {
    enum app_prompt p = a->prompt;
    a->prompt = APP_PROMPT_NONE;
    double x;
    switch (p) {
    case APP_PROMPT_BATCH:
        /* range first: converting NaN, inf or 1e300 to an integer is undefined behaviour */
        if (!parse_double(a->input, &x) || !(x >= -1e15 && x <= 1e15) ||
            x != (double)(long long)x) {
            app_status(a, true, "batch size '%s': expected an integer", a->input);
            break;
        }
        app_batch_set(a, (int64_t)x);
        break;
    case APP_PROMPT_DATASET:
        if (!parse_double(a->input, &x)) app_status(a, true, "'%s': expected a number", a->input);
        else if (app_dataset_set(a, x)) app_status(a, false, "dataset: %.0f samples per epoch", x);
        break;
    case APP_PROMPT_PRICE:
        if (!parse_double(a->input, &x)) app_status(a, true, "'%s': expected a number", a->input);
        else if (app_price_set(a, x)) app_status(a, false, "price: $%.2f per GPU-hour", x);
        break;
    case APP_PROMPT_SEARCH:
        app_search_set(a, a->input);
        return R_RELAYOUT;
    case APP_PROMPT_EXPORT: {
        struct dp_error err = {0};
        if (!a->input[0]) break;
        if (!strcmp(a->input, "-")) { /* stdout is this screen */
            app_status(a, true, "export: '-' (stdout) is the screen here; give a file name");
        } else if (tab_of(a)->export_file(a, a->input, &err) != DP_OK) {
            app_status(a, true, "%s", err.msg);
        } else {
            app_status(a, false, "%s written to %s (%s)", tab_of(a)->export_what, a->input,
                       tab_of(a)->export_kind);
        }
        break;
    }
    default: break;
    }
    return R_REDRAW;
}

/* The quit prompt takes one key: y, n, or Esc (anything else is ignored). */
static int quit_prompt_key(struct app *a, int ch) {
    if (ch == 'y' || ch == 'Y') {
        a->prompt = APP_PROMPT_NONE;
        return app_transfer_save_all(a) ? R_QUIT : R_REDRAW; /* an error stays on screen */
    }
    if (ch == 'n' || ch == 'N') return R_QUIT;
    if (ch == KEY_ESC || ch == 7 /* Ctrl-G */) {
        a->prompt = APP_PROMPT_NONE;
        app_status(a, false, "not quitting (f saves the current setting's transfer)");
        return R_REDRAW;
    }
    return R_NONE;
}

static int prompt_key(struct app *a, int ch) {
    if (a->prompt == APP_PROMPT_QUIT) return quit_prompt_key(a, ch);
    size_t len = strlen(a->input);
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) return prompt_commit(a);
    if (ch == KEY_ESC || ch == 7 /* Ctrl-G */) {
        if (a->prompt == APP_PROMPT_SEARCH) app_search_set(a, ""); /* Esc drops the search */
        a->prompt = APP_PROMPT_NONE;
        app_status(a, false, "cancelled");
        return R_REDRAW;
    }
    if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        if (len > 0) a->input[len - 1] = '\0';
    } else if (ch == 21 /* Ctrl-U */) {
        a->input[0] = '\0';
    } else if (ch >= 32 && ch < 127 && len + 1 < sizeof a->input) {
        a->input[len] = (char)ch;
        a->input[len + 1] = '\0';
    }
    /* search is live: the groups list follows what is typed */
    if (a->prompt == APP_PROMPT_SEARCH) app_search_set(a, a->input);
    return R_REDRAW;
}

int keys_handle(struct app *a, int ch) {
    if (a->prompt != APP_PROMPT_NONE) return prompt_key(a, ch);
    if (a->help && (ch == KEY_ESC || ch == 'q')) {
        a->help = false;
        return R_RELAYOUT;
    }
    if (a->help && (ch == KEY_DOWN || ch == 'j')) {
        a->help_scroll++;
        return R_REDRAW;
    }
    if (a->help && (ch == KEY_UP || ch == 'k')) {
        if (a->help_scroll > 0) a->help_scroll--;
        return R_REDRAW;
    }
    if (ch == KEY_ESC) return R_NONE;
    if (!a->help && tab_of(a)->key) {
        int r = tab_of(a)->key(a, ch);
        if (r >= 0) return r;
    }
    for (int i = 0; i < keymap_len; i++)
        if (keymap[i].key == ch && keymap[i].fn) return keymap[i].fn(a);
    return R_NONE;
}

int keys_mouse(struct app *a, const struct layout *l, int y, int x) {
    if (l->too_small) return R_NONE;
    if (a->help) {
        a->help = false;
        return R_RELAYOUT;
    }
    for (int i = 0; i < APP_TAB_COUNT; i++)
        if (rect_contains(l->tab[i], y, x)) {
            app_tab_set(a, (enum app_tab)i);
            return R_RELAYOUT;
        }
    return tab_of(a)->mouse(a, l, y, x);
}

/* ---- the tabs' own input (their columns of the tab table, tabs.c) ---- */

int keys_predict_mouse(struct app *a, const struct layout *l, int y, int x) {
    if (rect_contains(l->table, y, x)) {
        a->pane = APP_PANE_TABLE;
        int row = (y - l->table.y - 2) / 2; /* border, heading, then 2 lines per resource */
        if (y - l->table.y >= 2) app_select(a, row);
    } else if (rect_contains(l->derived, y, x)) {
        a->pane = APP_PANE_DERIVED;
        if (y - l->derived.y >= 2) app_select(a, y - l->derived.y - 2);
    } else if (rect_contains(l->strips, y, x)) {
        a->pane = APP_PANE_STRIPS;
    }
    return R_REDRAW;
}

int keys_list_mouse(struct app *a, const struct layout *l, int y, int x) {
    if (rect_contains(l->list, y, x)) {
        int row = a->scroll[a->tab] + (y - l->list.y);
        if (row < app_list_len(a)) app_select(a, row);
    }
    return R_REDRAW;
}

int keys_compare_key(struct app *a, int ch) {
    if (ch == ' ') {
        app_mark_toggle(a);
        return R_REDRAW;
    }
    if (ch == 'c' || ch == '2') { /* the compare key again: the other mode */
        app_compare_mode(a, a->cmp_mode == APP_CMP_GPUS ? APP_CMP_SETTINGS : APP_CMP_GPUS);
        app_status(a, false, "compare: %s",
                   a->cmp_mode == APP_CMP_GPUS ? "every GPU at this cluster" : "every setting");
        return R_RELAYOUT;
    }
    return -1;
}

int keys_compare_enter(struct app *a) {
    app_compare_apply(a);
    app_tab_set(a, APP_TAB_PREDICT);
    return R_RELAYOUT;
}

int keys_groups_enter(struct app *a) {
    if (app_list_len(a) == 0) return R_NONE;
    /* the selected group (or the selected op's group) in the importance pane */
    int s = a->sel[APP_TAB_GROUPS];
    a->imp_select = a->search[0] ? app_group_of_op(a, a->hits[s]) : s;
    app_tab_set(a, APP_TAB_IMPORTANCE);
    return R_RELAYOUT;
}

int keys_help_lines(const char **lines, char (*buf)[128], int max) {
    int n = 0;
    for (int i = 0; i < keymap_len && n < max; i++) {
        if (!keymap[i].help) continue;
        snprintf(buf[n], sizeof buf[n], "  %-12s %s", keymap[i].label, keymap[i].help);
        lines[n] = buf[n];
        n++;
    }
    if (n < max) lines[n++] = "";
    n += imp_help_lines(lines + n, max - n);
    if (n < max) lines[n++] = "";
    if (n < max) lines[n++] = "Derived figures (predicted from the 12 metrics; simulated ones from the simulator):";
    for (int k = 0; k < DP_N_DERIVED && n < max; k++) {
        const struct dp_derived_info *f = &dp_derived_figures[k];
        snprintf(buf[n], sizeof buf[n], "  %s = %s (%s)", f->label, f->formula, f->note);
        lines[n] = buf[n];
        n++;
    }
    if (n < max) lines[n++] = "";
    if (n < max) lines[n++] = "Compare columns: src own = an inspector trained for the row, xfer = transferred,";
    if (n < max) lines[n++] = "  near = the nearest setting's (extrapolated), sim = none (simulated figures);";
    if (n < max) lines[n++] = "  > the current setting, * a marked GPU, ! out of GPU memory (simulated footprint).";
    if (n < max) lines[n++] = "Mouse: click a tab or a row. Simulated numbers come from driple's simulator, not a cluster.";
    return n;
}
