/* app_ui.c: the explorer's navigation state (no curses): tabs, panes, the selected row and
 * scrolling of each list, and the Groups search. */
#include "app_impl.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const app_tab_names[APP_TAB_COUNT] = {"Predict", "Compare", "Groups", "Importance"};

int app_list_len(const struct app *a) {
    switch (a->tab) {
    case APP_TAB_COMPARE: return a->n_rows;
    case APP_TAB_GROUPS:
        return a->search[0] ? a->n_hits : dp_session_partition(a->ss)->n_groups;
    case APP_TAB_PREDICT:
        return a->pane == APP_PANE_TABLE       ? DP_N_RESOURCES
               : a->pane == APP_PANE_DERIVED ? APP_N_DERIVED_ROWS
                                             : 0;
    default: return 0;
    }
}

void app_tab_set(struct app *a, enum app_tab t) {
    a->tab = t;
    a->help = false;
    if (t == APP_TAB_COMPARE) app_compare_ensure(a);
}

void app_pane_next(struct app *a, int dir) {
    if (a->tab != APP_TAB_PREDICT) {
        app_tab_set(a, (enum app_tab)((a->tab + dir + APP_TAB_COUNT) % APP_TAB_COUNT));
        return;
    }
    a->pane = (enum app_pane)((a->pane + dir + APP_PANE_COUNT) % APP_PANE_COUNT);
}

void app_select(struct app *a, int row) {
    int n = app_list_len(a);
    if (row >= n) row = n - 1;
    if (row < 0) row = 0;
    if (a->tab == APP_TAB_PREDICT) {
        a->pane_sel[a->pane] = row;
        if (a->pane == APP_PANE_TABLE) {
            /* the importance metric follows the selected resource (its active time) */
            a->metric = row * 3 + 1;
        } else if (a->pane == APP_PANE_DERIVED) {
            const struct dp_derived_info *f = &dp_derived_figures[app_derived_rows[row]];
            app_status(a, false, "%s = %s (%s)", f->label, f->formula, f->note);
        }
        return;
    }
    a->sel[a->tab] = row;
}

void app_move(struct app *a, int delta) {
    int cur = a->tab == APP_TAB_PREDICT ? a->pane_sel[a->pane] : a->sel[a->tab];
    app_select(a, cur + delta);
}

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
