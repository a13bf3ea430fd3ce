/* view_bars.c: the one-line bars of the explorer: the header (graph, setting, where the
 * prediction comes from), the tab bar with the transfer progress, the status/prompt line and
 * the footer generated from the key table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "text.h"
#include "tabs.h"
#include "view_common.h"

void view_header_draw(WINDOW *w, const struct app *a) {
    char l1[2][320], mark[2][160], set[2][256], src[3][320], name[96];
    werase(w);
    int cols = getmaxx(w);
    const struct dp_graph *graph = dp_session_graph(a->ss);
    const struct dp_prediction *p = &a->pred.p;
    char params[16];
    view_num(params, sizeof params, dp_session_params(a->ss), 1);
    text_elide(name, sizeof name, dp_graph_name(graph), 40, view_ascii());
    snprintf(l1[0], sizeof l1[0], " driple  %s  ops %zu  groups %d  params %s  batch %lld", name,
             dp_graph_n_nodes(graph), dp_session_partition(a->ss)->n_groups, params,
             (long long)dp_session_batch(a->ss));
    snprintf(l1[1], sizeof l1[1], " driple  %s  batch %lld", name,
             (long long)dp_session_batch(a->ss));
    /* an out-of-distribution graph is marked where the eye starts: its numbers are a guess */
    bool ood = p->ok && p->ood;
    if (isfinite(p->ood_score))
        snprintf(mark[0], sizeof mark[0], "  OUT OF DISTRIBUTION (score %.2g): unlike the "
                 "inspector's training graphs, a guess", p->ood_score);
    else
        snprintf(mark[0], sizeof mark[0], "  OUT OF DISTRIBUTION: unlike the inspector's "
                 "training graphs, a guess");
    snprintf(mark[1], sizeof mark[1], "  OUT OF DISTRIBUTION");
    int k1 = 0, km = 0;
    if (ood) { /* the most said that fits: the mark shortens before the graph's line does */
        km = text_cols(l1[0]) + text_cols(mark[0]) <= cols ? 0 : 1;
        k1 = text_cols(l1[0]) + text_cols(mark[km]) <= cols ? 0 : 1;
    } else {
        k1 = text_cols(l1[0]) <= cols ? 0 : 1;
    }
    wattron(w, view_attr(ST_HEAD));
    int x = view_put(w, 0, 0, cols, l1[k1]);
    wattroff(w, view_attr(ST_HEAD));
    wattron(w, view_attr(ST_TITLE));
    view_put(w, 0, 1, 6, "driple");
    wattroff(w, view_attr(ST_TITLE));
    if (ood) {
        wattron(w, view_attr(ST_WARN));
        view_put(w, 0, x, cols - x, mark[km]);
        wattroff(w, view_attr(ST_WARN));
    }

    /* line 2: the setting (every knob of it), then where the prediction comes from */
    const struct dp_setting *s = &a->cur;
    bool ar = s->sync == DP_SYNC_ALLREDUCE, pt = s->framework == DP_FW_PYTORCH;
    char ps[2][24], mach[2][24] = {"", ""};
    snprintf(ps[0], sizeof ps[0], ar ? "all-reduce" : "PS %d  %s", s->ps,
             dp_placement_name(s->placement));
    snprintf(ps[1], sizeof ps[1], ar ? "AR" : "P%d %s", s->ps, dp_placement_name(s->placement));
    if (s->machines != dp_setting_default_machines(s->sync, s->workers, s->ps, s->network,
                                                   s->placement)) {
        snprintf(mach[0], sizeof mach[0], "  %d machines", s->machines);
        snprintf(mach[1], sizeof mach[1], " m%d", s->machines);
    }
    snprintf(set[0], sizeof set[0], " %s  %s  workers %d  %s  %s  %s%s", s->gpu, ps[0],
             s->workers, dp_network_name(s->network), dp_precision_name(s->precision),
             pt ? "PyTorch" : "TensorFlow", mach[0]);
    snprintf(set[1], sizeof set[1], " %s %s w%d %s %s %s%s", s->gpu, ps[1], s->workers,
             dp_network_name(s->network), dp_precision_name(s->precision), pt ? "PT" : "TF",
             mach[1]);
    enum view_style st = ST_GOOD;
    const struct dp_inspector *in = app_inspector(a);
    const char *data = in ? dp_inspector_provenance(in)->data : "";
    if (!p->ok) {
        for (int k = 0; k < 3; k++) snprintf(src[k], sizeof src[k], "NO INSPECTOR: simulated only");
        st = ST_WARN;
    } else if (p->from.source == DP_SOURCE_NEAREST) {
        snprintf(src[0], sizeof src[0], "EXTRAPOLATED: nearest inspector %s (t transfers)",
                 p->from.setting_id);
        snprintf(src[1], sizeof src[1], "EXTRAPOLATED from %s", p->from.setting_id);
        snprintf(src[2], sizeof src[2], "EXTRAPOLATED from %s", p->from.setting_id);
        st = ST_WARN;
    } else {
        /* whose inspector: the setting's own id (the setting-aware one has none); the id goes
         * first where room is short, the header's line already naming the cluster */
        const char *base = in ? dp_inspector_provenance(in)->base_id : "";
        const char *id = p->from.source == DP_SOURCE_SETTING_AWARE ? "" : p->from.setting_id;
        bool xf = p->from.source == DP_SOURCE_TRANSFERRED;
        bool unsaved = app_pred_unsaved(a);
        /* a setting-aware file fine-tuned for a setting (driple transfer --from SA.json) */
        bool tuned = p->from.source == DP_SOURCE_SETTING_AWARE && !strcmp(p->origin, "fine-tuned");
        if (p->from.source == DP_SOURCE_SETTING_AWARE) data = p->data;
        const char *kept = tuned ? " (fine-tuned)" : !xf ? "" : unsaved ? " (unsaved, f saves)"
                                                                         : " (file)";
        snprintf(src[0], sizeof src[0], "%s%s inspector%s%s%s%s%s%s%s",
                 dp_pred_source_name(p->from.source), kept, id[0] ? " " : "", id,
                 xf && base[0] ? " (from " : "", xf && base[0] ? base : "",
                 xf && base[0] ? ")" : "", data[0] ? ", data: " : "", data);
        const char *kept_short = tuned ? " (fine-tuned)" : !xf ? "" : unsaved ? " (unsaved)"
                                                                             : " (file)";
        snprintf(src[1], sizeof src[1], "%s%s%s%s%s%s", dp_pred_source_name(p->from.source),
                 kept_short, id[0] ? " " : "", id, data[0] ? ", " : "", data);
        snprintf(src[2], sizeof src[2], "%s%s%s%s", dp_pred_source_name(p->from.source),
                 kept_short, data[0] ? ", " : "", data);
    }
    /* the most verbose pair that fits */
    const char *pairs[4][2] = {{set[0], src[0]}, {set[1], src[0]}, {set[1], src[1]},
                               {set[1], src[2]}};
    int k = 0;
    while (k < 3 && text_cols(pairs[k][0]) + 3 + text_cols(pairs[k][1]) > cols) k++;
    x = view_put(w, 1, 0, cols, pairs[k][0]);
    x += view_put(w, 1, x, cols - x, " | ");
    wattron(w, view_attr(st));
    view_put(w, 1, x, cols - x, pairs[k][1]);
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
    char buf[512];
    werase(w);
    app_status_text(a, buf, sizeof buf);
    enum view_style st = app_prompt_one_key(a)                          ? ST_KEY
                         : a->prompt == APP_PROMPT_NONE && a->status_err ? ST_WARN
                                                                         : ST_NORMAL;
    wattron(w, view_attr(st));
    view_wrap(w, 0, 0, getmaxx(w), getmaxy(w), 2, buf);
    wattroff(w, view_attr(st));
    if (a->prompt != APP_PROMPT_NONE && !app_prompt_one_key(a)) { /* the label stands out */
        wattron(w, view_attr(ST_KEY));
        view_put(w, 0, 0, getmaxx(w), app_prompt_label(a));
        wattroff(w, view_attr(ST_KEY));
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
    int end = quit >= 0 ? cols - qw - 3 : cols - 1;
    for (int i = 0; i < keymap_len && x >= 0; i++)
        if (keymap[i].footer && i != quit) {
            int nx = footer_item(w, x, end, keymap[i].label, keymap[i].footer);
            if (nx < 0) break;
            x = nx;
        }
    /* a column kept free at the right edge, as everywhere */
    if (quit >= 0) footer_item(w, cols - qw - 1, cols - 1, keymap[quit].label, keymap[quit].footer);
    wnoutrefresh(w);
}
