/* view_bars.c: the one-line bars of the explorer: the header (graph, setting, where the
 * prediction comes from), the tab bar with the transfer progress, the status/prompt line and
 * the footer generated from the key table. */
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "tabs.h"
#include "view_common.h"

void view_header_draw(WINDOW *w, const struct app *a) {
    char buf[512], params[16];
    werase(w);
    int cols = getmaxx(w);
    const struct dp_graph *graph = dp_session_graph(a->ss);
    view_num(params, sizeof params, dp_session_params(a->ss), 1);
    snprintf(buf, sizeof buf, " %s  ops %zu  groups %d  params %s  batch %lld",
             dp_graph_name(graph), dp_graph_n_nodes(graph), dp_session_partition(a->ss)->n_groups,
             params, (long long)dp_session_batch(a->ss));
    wattron(w, view_attr(ST_TITLE));
    view_put(w, 0, 0, 8, " driple ");
    wattroff(w, view_attr(ST_TITLE));
    wattron(w, view_attr(ST_HEAD));
    view_put(w, 0, 8, cols - 8, buf);
    wattroff(w, view_attr(ST_HEAD));

    /* line 2: the setting, then where the prediction comes from (most telling words first,
     * so that a narrow terminal cuts the least useful end) */
    const struct dp_setting *s = &a->cur;
    const struct dp_prediction *p = &a->pred.p;
    char set[2][256], src[2][256];
    enum view_style st = ST_GOOD;
    /* [0] verbose, [1] compact (the setting ids' shorthand P<ps> w<workers>) */
    snprintf(set[0], sizeof set[0], " %s  PS %d  workers %d  %s  %s  %s", s->gpu, s->ps,
             s->workers, dp_placement_name(s->placement), dp_network_name(s->network),
             dp_precision_name(s->precision));
    snprintf(set[1], sizeof set[1], " %s P%d w%d %s %s %s", s->gpu, s->ps, s->workers,
             dp_placement_name(s->placement), dp_network_name(s->network),
             dp_precision_name(s->precision));
    if (s->machines > 1) {
        size_t l0 = strlen(set[0]), l1 = strlen(set[1]);
        snprintf(set[0] + l0, sizeof set[0] - l0, "  %d machines", s->machines);
        snprintf(set[1] + l1, sizeof set[1] - l1, " m%d", s->machines);
    }
    if (!p->ok) {
        snprintf(src[0], sizeof src[0], "NO INSPECTOR: simulated only");
        snprintf(src[1], sizeof src[1], "NO INSPECTOR: simulated only");
        st = ST_WARN;
    } else if (p->from.source == DP_SOURCE_NEAREST) {
        snprintf(src[0], sizeof src[0], "EXTRAPOLATED: nearest inspector %s (t transfers)",
                 p->from.setting_id);
        snprintf(src[1], sizeof src[1], "EXTRAPOLATED from %s", p->from.setting_id);
        st = ST_WARN;
    } else {
        const struct dp_inspector *in = app_inspector(a);
        const char *base = in ? dp_inspector_provenance(in)->base_id : "";
        /* What the inspector learnt from: simulated labels must say so wherever they show. */
        const char *data = in ? dp_inspector_provenance(in)->data : "";
        bool xf = p->from.source == DP_SOURCE_TRANSFERRED && base[0];
        /* a transfer of this session is lost on quitting unless saved: say which it is */
        bool unsaved = app_pred_unsaved(a);
        const char *kept = p->from.source != DP_SOURCE_TRANSFERRED ? "" : unsaved ? " (unsaved, f saves)"
                                                                        : " (file)";
        snprintf(src[0], sizeof src[0], "%s%s inspector %s%s%s%s%s%s", dp_pred_source_name(p->from.source),
                 kept, p->from.setting_id, xf ? " (from " : "", xf ? base : "", xf ? ")" : "",
                 data[0] ? ", data: " : "", data);
        snprintf(src[1], sizeof src[1], "%s%s %s%s%s", dp_pred_source_name(p->from.source),
                 p->from.source != DP_SOURCE_TRANSFERRED ? "" : unsaved ? " (unsaved)" : " (file)",
                 p->from.setting_id, data[0] ? " " : "", data);
    }
    /* the most verbose pair that fits; the compact one is cut at its least useful end */
    int k = (int)(strlen(set[0]) + 3 + strlen(src[0])) <= cols ? 0 : 1;
    int kk = k == 0 || (int)(strlen(set[1]) + 3 + strlen(src[0])) <= cols ? 0 : 1;
    view_put(w, 1, 0, cols, set[k]);
    int x = (int)strlen(set[k]);
    view_put(w, 1, x, cols - x, " | ");
    x += 3;
    snprintf(buf, sizeof buf, "%s", src[kk]);
    wattron(w, view_attr(st));
    view_put(w, 1, x, cols - x, buf);
    wattroff(w, view_attr(st));
    wnoutrefresh(w);
}

void view_tabs_draw(WINDOW *w, const struct app *a, const struct layout *l) {
    char buf[320];
    werase(w);
    for (int i = 0; i < APP_TAB_COUNT; i++) {
        enum view_style st = i == (int)a->tab ? ST_TAB_ON : ST_TAB;
        snprintf(buf, sizeof buf, " %d %s ", i + 1, tab_defs[i].name);
        wattron(w, view_attr(st));
        view_put(w, 0, l->tab[i].x, l->tab[i].w, buf);
        wattroff(w, view_attr(st));
    }
    enum app_job_state js;
    double prog;
    char phase[64];
    app_job_snapshot(a, &js, &prog, phase, sizeof phase);
    if (js == APP_JOB_IDLE) {
        wnoutrefresh(w);
        return;
    }
    /* right side: the background transfer */
    int barw = 12;
    char bar[64];
    int fill = (int)(prog * barw + 0.5);
    for (int i = 0; i < barw; i++) bar[i] = i < fill ? '#' : '.';
    bar[barw] = '\0';
    if (js == APP_JOB_RUNNING)
        snprintf(buf, sizeof buf, "transfer %s [%s] %3.0f%% %s (x cancels)", a->job.target, bar,
                 prog * 100, phase);
    else
        snprintf(buf, sizeof buf, "transfer %s: %s", a->job.target, phase);
    int len = (int)strlen(buf), cols = getmaxx(w);
    int x = l->tab[APP_TAB_COUNT - 1].x + l->tab[APP_TAB_COUNT - 1].w + 2;
    if (cols - len - 1 > x) x = cols - len - 1;
    enum view_style st = js == APP_JOB_FAILED ? ST_WARN : js == APP_JOB_DONE ? ST_GOOD : ST_KEY;
    wattron(w, view_attr(st));
    view_put(w, 0, x, cols - x, buf);
    wattroff(w, view_attr(st));
    wnoutrefresh(w);
}

void view_status_draw(WINDOW *w, const struct app *a) {
    werase(w);
    int cols = getmaxx(w);
    if (a->prompt == APP_PROMPT_QUIT) { /* one key answers: no line to edit */
        wattron(w, view_attr(ST_KEY));
        view_put(w, 0, 0, cols, keys_prompt_label(a));
        wattroff(w, view_attr(ST_KEY));
    } else if (a->prompt != APP_PROMPT_NONE) {
        const char *label = keys_prompt_label(a);
        int lx = (int)strlen(label);
        wattron(w, view_attr(ST_KEY));
        view_put(w, 0, 0, cols, label);
        wattroff(w, view_attr(ST_KEY));
        view_put(w, 0, lx, cols - lx - 1, a->input);
        int cx = lx + (int)strlen(a->input);
        if (cx < cols) mvwaddch(w, 0, cx, '_' | A_BLINK);
        view_put(w, 0, cx + 2, cols - cx - 2, "  (Enter: ok, Esc: cancel)");
    } else {
        enum view_style st = a->status_err ? ST_WARN : ST_NORMAL;
        wattron(w, view_attr(st));
        view_put(w, 0, 0, cols, a->status);
        wattroff(w, view_attr(st));
    }
    wnoutrefresh(w);
}

/* One footer item "key text" at x; returns the next x, or -1 when it does not fit before end. */
static int footer_item(WINDOW *w, int x, int end, const char *label, const char *text) {
    char key[16];
    snprintf(key, sizeof key, "%s", label); /* the first key of the label ("g / G" -> "g") */
    char *sp = strchr(key, ' ');
    if (sp) *sp = '\0';
    int kl = (int)strlen(key), tl = (int)strlen(text);
    if (x + kl + 1 + tl > end) return -1;
    wattron(w, view_attr(ST_KEY));
    view_put(w, 0, x, kl, key);
    wattroff(w, view_attr(ST_KEY));
    view_put(w, 0, x + kl + 1, tl, text);
    return x + kl + 1 + tl + 2;
}

/* The footer: every key of the table with a footer text, "q quit" kept at the right end. */
void view_footer_draw(WINDOW *w, const struct app *a) {
    (void)a;
    werase(w);
    int cols = getmaxx(w), x = 0, quit = -1;
    for (int i = 0; i < keymap_len; i++)
        if (keymap[i].footer && !strcmp(keymap[i].footer, "quit")) quit = i;
    /* "q quit": the key (first word of the label), a space, the text */
    int qw = quit >= 0 ? (int)strcspn(keymap[quit].label, " ") + 1 + (int)strlen(keymap[quit].footer) : 0;
    int end = quit >= 0 ? cols - qw - 2 : cols;
    for (int i = 0; i < keymap_len && x >= 0; i++)
        if (keymap[i].footer && i != quit) {
            int nx = footer_item(w, x, end, keymap[i].label, keymap[i].footer);
            if (nx < 0) break;
            x = nx;
        }
    if (quit >= 0) footer_item(w, cols - qw, cols, keymap[quit].label, keymap[quit].footer);
    wnoutrefresh(w);
}
