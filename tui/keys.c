/* keys.c: the key table (key -> action -> reaction flags), the prompt line editor and mouse hit
 * testing. The help overlay and the footer are generated from the same table. */
#include "keys.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imp.h"
#include "tabs.h"
#include "text.h"

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
static int k_sync(struct app *a) { app_sync_toggle(a); return R_REDRAW; }
static int k_framework(struct app *a) { app_framework_toggle(a); return R_REDRAW; }
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
    a->export_csv = false;
    return open_prompt(a, APP_PROMPT_EXPORT, tab_of(a)->export_name);
}
static int k_export_csv(struct app *a) {
    if (!tab_of(a)->csv_file) {
        app_status(a, true, "E exports the compare rows as CSV (c opens the compare tab)");
        return R_REDRAW;
    }
    a->export_csv = true;
    return open_prompt(a, APP_PROMPT_EXPORT, tab_of(a)->csv_name);
}

/* Tab and Shift-Tab switch tabs, and only that; the panes of a tab (Predict's) and a list's
 * long lines are what Left and Right move through (k9s and lazygit keep the two apart too). */
static int k_tab_next(struct app *a) {
    app_tab_set(a, (enum app_tab)((a->tab + 1) % APP_TAB_COUNT));
    return R_RELAYOUT;
}
static int k_tab_prev(struct app *a) {
    app_tab_set(a, (enum app_tab)((a->tab + APP_TAB_COUNT - 1) % APP_TAB_COUNT));
    return R_RELAYOUT;
}
static int k_left(struct app *a) { return tab_of(a)->sideways ? tab_of(a)->sideways(a, -1) : R_NONE; }
static int k_right(struct app *a) { return tab_of(a)->sideways ? tab_of(a)->sideways(a, +1) : R_NONE; }
static int k_predict(struct app *a) { app_tab_set(a, APP_TAB_PREDICT); return R_RELAYOUT; }
static int k_compare(struct app *a) { app_tab_set(a, APP_TAB_COMPARE); return R_RELAYOUT; }
static int k_groups(struct app *a) { app_tab_set(a, APP_TAB_GROUPS); return R_RELAYOUT; }
static int k_importance(struct app *a) { app_tab_set(a, APP_TAB_IMPORTANCE); return R_RELAYOUT; }
static int k_scaling(struct app *a) { app_tab_set(a, APP_TAB_SCALING); return R_RELAYOUT; }
static int k_sort(struct app *a) {
    app_tab_set(a, APP_TAB_COMPARE); /* first: the sort's message stays */
    app_sort_next(a);
    return R_RELAYOUT;
}
static int k_sort_source(struct app *a) {
    app_tab_set(a, APP_TAB_COMPARE);
    app_sort_source_toggle(a);
    return R_RELAYOUT;
}
static int k_only_marked(struct app *a) {
    app_tab_set(a, APP_TAB_COMPARE);
    app_only_marked_toggle(a);
    return R_RELAYOUT;
}
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
static int k_hide_oom(struct app *a) {
    app_tab_set(a, APP_TAB_COMPARE);
    app_hide_oom_toggle(a);
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
    {'a',           k_sync,         "a",          "sync: parameter servers / all-reduce",     "sync"},
    {'n',           k_net_next,     "n / N",      "next / previous network",                  "net"},
    {'N',           k_net_prev,     "N",          NULL,                                        NULL},
    {'o',           k_placement,    "o",          "placement: homo / hetero (parameter servers)", NULL},
    {'m',           k_precision,    "m",          "precision: fp32 / mixed",                  NULL},
    {'F',           k_framework,    "F",          "framework: TensorFlow / PyTorch",          NULL},
    {'+',           k_batch_up,     "+ / -",      "double / halve the batch size",            "batch"},
    {'=',           k_batch_up,     "=",          NULL,                                        NULL},
    {'-',           k_batch_down,   "-",          NULL,                                        NULL},
    {'b',           k_batch_type,   "b",          "type a batch size",                        NULL},
    {'d',           k_dataset,      "d",          "set the dataset size (samples per epoch)", NULL},
    {'$',           k_price,        "$",          "set the price per GPU-hour for every GPU (empty: each GPU's catalog price)", NULL},
    {'t',           k_transfer,     "t",          "transfer an inspector to this setting (simulated data, background)", "transfer"},
    {'x',           k_cancel,       "x",          "cancel the transfer",                      NULL},
    {'f',           k_save,         "f",          "save this setting's transferred inspector to a file (found on the next start)", NULL},
    {KEY_TAB,       k_tab_next,     "Tab / S-Tab", "next / previous tab",                     NULL},
    {KEY_BTAB,      k_tab_prev,     "S-Tab",      NULL,                                        NULL},
    {KEY_LEFT,      k_left,         "Left / Right", "predict: previous / next pane; lists: scroll long lines sideways; importance: pan", NULL},
    {'h',           k_left,         "h / l",      "as Left / Right",                          NULL},
    {KEY_RIGHT,     k_right,        "Right",      NULL,                                        NULL},
    {'l',           k_right,        "l",          NULL,                                        NULL},
    {'1',           k_predict,      "1",          "predict tab",                               NULL},
    {'c',           k_compare,      "c / 2",      "compare tab (again: every GPU / every setting / every sync, framework and network)", "compare"},
    {'2',           k_compare,      "2",          NULL,                                        NULL},
    {'3',           k_groups,       "3",          "groups tab (the coarsened graph)",         NULL},
    {'i',           k_importance,   "i / 4",      "importance tab (which groups drive the metric)", "importance"},
    {'4',           k_importance,   "4",          NULL,                                        NULL},
    {'5',           k_scaling,      "5",          "scaling tab: throughput and iteration time against workers and batch size", "scaling"},
    {'/',           k_search,       "/",          "search ops by name or type (Esc in groups clears it)", "search"},
    {'s',           k_sort,         "s",          "sort compare rows: throughput, iteration, cost, utilisation", "sort"},
    {'S',           k_sort_source,  "S",          "sort on the predicted / the simulated figures", NULL},
    {' ',           NULL,           "Space",      "mark / unmark the selected GPU (compare)", NULL},
    {'M',           k_only_marked,  "M",          "compare marked GPUs only / every GPU",     NULL},
    {'O',           k_hide_oom,     "O",          "compare: hide / show rows out of GPU memory", NULL},
    {'\n',          k_enter,        "Enter",      "compare: use the row as the setting; groups: show it in importance", NULL},
    {'\r',          k_enter,        "Enter",      NULL,                                        NULL},
    {KEY_ENTER,     k_enter,        "Enter",      NULL,                                        NULL},
    {'e',           k_export,       "e",          "export: predictions as JSON (importance tab: SVG); asks before overwriting", "export"},
    {'E',           k_export_csv,   "E",          "compare: export the rows as CSV",          NULL},
    {KEY_UP,        k_up,           "Up / k",     "previous row",                             NULL},
    {'k',           k_up,           "k",          NULL,                                        NULL},
    {KEY_DOWN,      k_down,         "Down / j",   "next row",                                 NULL},
    {'j',           k_down,         "j",          NULL,                                        NULL},
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

/* Writes the export the prompt named (a->input) and says so. */
static void export_now(struct app *a) {
    const struct tab_def *t = tab_of(a);
    struct dp_error err = {0};
    if ((a->export_csv ? t->csv_file : t->export_file)(a, a->input, &err) != DP_OK)
        app_status(a, true, "%s", err.msg);
    else if (a->export_csv)
        app_status(a, false, "compare rows written to %s (CSV)", a->input);
    else
        app_status(a, false, "%s written to %s (%s)", t->export_what, a->input, t->export_kind);
}

static int prompt_commit(struct app *a) {
    enum app_prompt p = a->prompt;
    a->prompt = APP_PROMPT_NONE;
    double x;
    switch (p) {
    case APP_PROMPT_BATCH:
        /* range first: converting NaN, inf or 1e300 to an integer is undefined behaviour */
        if (!dp_amount_parse(a->input, &x) || !(x >= -1e15 && x <= 1e15) ||
            x != (double)(long long)x) {
            app_status(a, true, "batch size '%s': expected an integer", a->input);
            break;
        }
        app_batch_set(a, (int64_t)x);
        break;
    case APP_PROMPT_DATASET:
        if (!dp_amount_parse(a->input, &x))
            app_status(a, true, "'%s': expected a number (1281167, 1.28M, 50k)", a->input);
        else if (app_dataset_set(a, x)) app_status(a, false, "dataset: %.0f samples per epoch", x);
        break;
    case APP_PROMPT_PRICE:
        if (!a->input[0]) {
            if (app_price_set(a, NAN)) app_status(a, false, "price: each GPU's catalog price");
        } else if (!dp_amount_parse(a->input, &x)) {
            app_status(a, true, "'%s': expected a number of dollars (empty: the catalog's)",
                       a->input);
        } else if (app_price_set(a, x)) {
            app_status(a, false, "price: $%.2f per GPU-hour for every GPU (empty $ resets)", x);
        }
        break;
    case APP_PROMPT_SEARCH:
        app_search_set(a, a->input);
        return R_RELAYOUT;
    case APP_PROMPT_EXPORT:
        if (!a->input[0]) break;
        if (!strcmp(a->input, "-")) { /* stdout is this screen */
            app_status(a, true, "export: '-' (stdout) is the screen here; give a file name");
            break;
        }
        if (access(a->input, F_OK) == 0) { /* an existing file is the user's to give up */
            a->prompt = APP_PROMPT_OVERWRITE;
            return R_REDRAW;
        }
        export_now(a);
        break;
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

/* The overwrite prompt takes one key: y writes, n or Esc keeps the file. */
static int overwrite_prompt_key(struct app *a, int ch) {
    if (ch == 'y' || ch == 'Y') {
        a->prompt = APP_PROMPT_NONE;
        export_now(a);
        return R_REDRAW;
    }
    if (ch == 'n' || ch == 'N' || ch == KEY_ESC || ch == 7 /* Ctrl-G */) {
        a->prompt = APP_PROMPT_NONE;
        app_status(a, false, "%s kept: nothing written", a->input);
        return R_REDRAW;
    }
    return R_NONE;
}

static int prompt_key(struct app *a, int ch) {
    if (a->prompt == APP_PROMPT_QUIT) return quit_prompt_key(a, ch);
    if (a->prompt == APP_PROMPT_OVERWRITE) return overwrite_prompt_key(a, ch);
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
    if (a->help) { /* the overlay scrolls; the view keeps the offset in range */
        int step = ch == KEY_DOWN || ch == 'j'  ? 1
                   : ch == KEY_UP || ch == 'k'  ? -1
                   : ch == KEY_NPAGE || ch == ' ' ? 10
                   : ch == KEY_PPAGE           ? -10
                   : ch == KEY_HOME            ? -100000
                   : ch == KEY_END             ? 100000
                                               : 0;
        if (step) {
            a->help_scroll += step;
            if (a->help_scroll < 0) a->help_scroll = 0;
            /* no further than the last page */
            int last = keys_help_rows(a->help_w) - a->help_h;
            if (a->help_scroll > last) a->help_scroll = last > 0 ? last : 0;
            return R_REDRAW;
        }
    }
    if (!a->help && tab_of(a)->key) {
        int r = tab_of(a)->key(a, ch);
        if (r >= 0) return r;
    }
    if (ch == KEY_ESC) return R_NONE;
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
    return tab_of(a)->mouse ? tab_of(a)->mouse(a, l, y, x) : R_NONE;
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
    if (ch == 'c' || ch == '2') { /* the compare key again: the next mode */
        static const char *const what[APP_CMP_COUNT] = {
            "every GPU at this cluster", "every setting of the list",
            "this GPU and worker count under every sync, framework and network"};
        app_compare_mode(a, (enum app_cmp_mode)((a->cmp_mode + 1) % APP_CMP_COUNT));
        app_status(a, false, "compare: %s (c: the next)", what[a->cmp_mode]);
        return R_RELAYOUT;
    }
    return -1;
}

int keys_compare_enter(struct app *a) {
    int sel = a->sel[APP_TAB_COMPARE];
    if (sel < 0 || sel >= a->n_rows) return R_NONE;
    app_tab_set(a, APP_TAB_PREDICT); /* first: the applied setting's message stays */
    a->sel[APP_TAB_COMPARE] = sel;
    app_compare_apply(a);
    return R_RELAYOUT;
}

int keys_groups_key(struct app *a, int ch) {
    if (ch != KEY_ESC || !a->search[0]) return -1;
    app_search_set(a, "");
    app_status(a, false, "search cleared: every group");
    return R_RELAYOUT;
}

int keys_pane_step(struct app *a, int dir) {
    int n = tab_of(a)->n_panes, p = (int)a->pane + dir;
    a->pane = (enum app_pane)(p < 0 ? 0 : p >= n ? n - 1 : p);
    return R_REDRAW;
}

int keys_list_sideways(struct app *a, int dir) {
    int *h = &a->hscroll[a->tab];
    *h += 8 * dir;
    if (*h < 0) *h = 0;
    if (*h > 400) *h = 400;
    return R_REDRAW;
}

int keys_groups_enter(struct app *a) {
    if (app_list_len(a) == 0) return R_NONE;
    /* the selected group (or the selected op's group) in the importance pane */
    int s = a->sel[APP_TAB_GROUPS];
    a->imp_select = a->search[0] ? app_group_of_op(a, a->hits[s]) : s;
    app_tab_set(a, APP_TAB_IMPORTANCE);
    return R_RELAYOUT;
}

int keys_help_line(const char *line, char *out, size_t n) {
    const char *tab = strchr(line, '\t');
    int indent = 0;
    if (tab) {
        indent = text_cols(line) - text_cols(tab);
        snprintf(out, n, "%.*s%s", (int)(tab - line), line, tab + 1);
    } else {
        while (line[indent] == ' ') indent++;
        snprintf(out, n, "%s", line);
        indent += 2;
    }
    return indent;
}

int keys_help_lines(const char **lines, char (*buf)[KEYS_HELP_LINE], int max) {
    int n = 0;
    for (int i = 0; i < keymap_len && n < max; i++) {
        if (!keymap[i].help) continue;
        snprintf(buf[n], sizeof buf[n], "  %-12s \t%s", keymap[i].label, keymap[i].help);
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
    static const char *const legend[] = {
        "",
        "Marks:",
        "  +-/\xc2\xb1 \thalf the 80% interval of a predicted number (where the inspector gives "
        "one); ^ the raw value was outside its physical range and reads at its edge (clamped); "
        "OUT OF DISTRIBUTION in the header: the graph is unlike anything the inspector learnt "
        "from, so its numbers are a guess.",
        "  src        \tcompare: own = an inspector trained for the row, xfer = transferred to "
        "it, SA = the setting-aware inspector, near = the nearest setting's (extrapolated), "
        "sim = none (simulated figures only).",
        "  > * !      \tcompare: > the current setting, * a marked GPU, ! out of GPU memory "
        "(simulated footprint).",
        "  mem-ctrl   \tthe GPU memory controller's utilisation (busy time, nvidia-smi's "
        "utilization.memory), not how much memory is occupied: that is GPU memory (GB).",
        "Mouse: click a tab or a row. Simulated numbers come from driple's simulator, not a "
        "cluster.",
    };
    for (size_t i = 0; i < sizeof legend / sizeof legend[0] && n < max; i++) lines[n++] = legend[i];
    return n;
}

int keys_help_rows(int width) {
    const char *lines[128];
    static char buf[128][KEYS_HELP_LINE];
    int n = keys_help_lines(lines, buf, 128), rows = 0;
    for (int e = 0; e < n; e++) {
        char t[KEYS_HELP_LINE];
        int indent = keys_help_line(lines[e], t, sizeof t);
        int k = text_wrap(t, width, indent, NULL, 0);
        rows += k ? k : 1;
    }
    return rows;
}
