/* app_ui.c: the explorer's navigation state (no curses): tabs, panes, the selected row and
 * scrolling of each list, and the Groups search. */
#include "app_impl.h"
#include "tabs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the tabs' model (their rows of the tab table, tabs.c) ---- */

int app_predict_list_len(const struct app *a) {
    return a->pane == APP_PANE_TABLE ? DP_N_RESOURCES
           : a->pane == APP_PANE_DERIVED ? APP_N_DERIVED_ROWS
                                         : 0;
}

void app_predict_selected(struct app *a, int row) {
    if (a->pane == APP_PANE_TABLE) {
        a->metric = row * 3 + 1; /* the importance metric follows the resource (its active time) */
    } else if (a->pane == APP_PANE_DERIVED) {
        const struct dp_derived_info *f = &dp_derived_figures[app_derived_rows[row]];
        app_status(a, false, "%s = %s (%s)", f->label, f->formula, f->note);
    }
}

int app_compare_list_len(const struct app *a) { return a->n_rows; }

int app_groups_list_len(const struct app *a) {
    return a->search[0] ? a->n_hits : dp_session_partition(a->ss)->n_groups;
}

/* ---- navigation ---- */

int app_list_len(const struct app *a) {
    return tab_of(a)->list_len ? tab_of(a)->list_len(a) : 0;
}

void app_tab_set(struct app *a, enum app_tab t) {
    bool changed = a->tab != t;
    a->tab = t;
    a->help = false;
    /* a message about the tab left behind would read as one about this tab */
    if (changed) app_status(a, false, "%s", tab_of(a)->hint);
    if (tab_of(a)->shown) tab_of(a)->shown(a);
}

const char *app_prompt_label(const struct app *a) {
    switch (a->prompt) {
    case APP_PROMPT_BATCH: return "batch size (1 .. 1048576; 1k, 2k ...): ";
    case APP_PROMPT_SEARCH: return "search ops: /";
    case APP_PROMPT_DATASET: return "dataset size (samples per epoch; 1.28M, 50k ...): ";
    case APP_PROMPT_PRICE: return "$ per GPU-hour for every GPU (empty: each GPU's catalog price): ";
    case APP_PROMPT_EXPORT: return "export to file: ";
    case APP_PROMPT_QUIT:
        return "unsaved transfers: save before quitting? y saves and quits, n quits, Esc stays";
    case APP_PROMPT_OVERWRITE: return "the file exists: overwrite it? y overwrites, n or Esc keeps it";
    default: return "";
    }
}

bool app_prompt_one_key(const struct app *a) {
    return a->prompt == APP_PROMPT_QUIT || a->prompt == APP_PROMPT_OVERWRITE;
}

void app_status_text(const struct app *a, char *buf, size_t n) {
    if (a->prompt == APP_PROMPT_OVERWRITE)
        snprintf(buf, n, "%s: %s", a->input, app_prompt_label(a));
    else if (app_prompt_one_key(a))
        snprintf(buf, n, "%s", app_prompt_label(a));
    else if (a->prompt != APP_PROMPT_NONE)
        snprintf(buf, n, "%s%s_  (Enter: ok, Esc: cancel)", app_prompt_label(a), a->input);
    else
        snprintf(buf, n, "%s", a->status);
}

/* The selected row of the current list (of the selected pane, in a tab of panes). */
static int *selection(struct app *a) {
    return tab_of(a)->n_panes > 1 ? &a->pane_sel[a->pane] : &a->sel[a->tab];
}

void app_select(struct app *a, int row) {
    int n = app_list_len(a);
    if (row >= n) row = n - 1;
    if (row < 0) row = 0;
    *selection(a) = row;
    if (tab_of(a)->selected) tab_of(a)->selected(a, row);
}

void app_move(struct app *a, int delta) { app_select(a, *selection(a) + delta); }

void app_scroll_fit(struct app *a, int page) {
    if (page < 1) page = 1;
    a->page = page;
    int t = a->tab, s = a->sel[t];
    if (s < a->scroll[t]) a->scroll[t] = s;
    if (s >= a->scroll[t] + page) a->scroll[t] = s - page + 1;
    int n = app_list_len(a);
    if (a->scroll[t] > n - page) a->scroll[t] = n - page;
    if (a->scroll[t] < 0) a->scroll[t] = 0;
}

void app_search_set(struct app *a, const char *s) {
    app_copy(a->search, sizeof a->search, s);
    a->n_hits = 0;
    a->sel[APP_TAB_GROUPS] = a->scroll[APP_TAB_GROUPS] = 0;
    if (!s || !*s) return;
    const struct dp_graph *graph = dp_session_graph(a->ss);
    size_t n = dp_graph_n_nodes(graph);
    free(a->hits);
    a->hits = malloc((n + 1) * sizeof *a->hits);
    if (!a->hits) {
        app_status(a, true, "search: out of memory");
        return;
    }
    size_t ls = strlen(s);
    for (size_t i = 0; i < n; i++) {
        if (a->group_of_node[i] < 0) continue;
        const struct dp_node *nd = dp_graph_node(graph, i);
        bool hit = false;
        for (const char *h = nd->name; *h && !hit; h++) hit = !strncasecmp(h, s, ls);
        for (const char *h = nd->op; *h && !hit; h++) hit = !strncasecmp(h, s, ls);
        if (hit) a->hits[a->n_hits++] = (int)i;
    }
    app_status(a, a->n_hits == 0, "/%s: %d ops match", s, a->n_hits);
}
