/* tabs.c: the tab table (tabs.h): each tab's row, from the model (app*.c), the input (keys.c),
 * the geometry (layout.c) and the views. */
#include "tabs.h"

#include "imp.h"
#include "keys.h"
#include "layout.h"
#include "views/view_common.h"
#include "wins.h"

/* ---- drawing: each tab's windows ---- */

static void draw_predict(const struct wins *w, const struct app *a) {
    view_table_draw(w->table, a);
    view_derived_draw(w->derived, a);
    view_strips_draw(w->strips, a);
}

static void draw_compare(const struct wins *w, const struct app *a) {
    view_compare_draw(w->body, a);
}

static void draw_groups(const struct wins *w, const struct app *a) {
    view_groups_draw(w->body, a);
}

static void draw_importance(const struct wins *w, const struct app *a) {
    imp_draw(w->body, a);
}

static void draw_scaling(const struct wins *w, const struct app *a) {
    view_scaling_draw(w->body, a);
}

static int importance_mouse(struct app *a, const struct layout *l, int y, int x) {
    return imp_mouse(a, l->body, y, x);
}

/* ---- exporting ---- */

/* The predictions (and the compare rows, brought up to date) as JSON. */
static enum dp_status export_predictions(struct app *a, const char *path, struct dp_error *err) {
    app_compare_ensure(a);
    return app_export_json(a, path, err);
}

static enum dp_status export_csv(struct app *a, const char *path, struct dp_error *err) {
    return app_export_csv(a, path, err);
}

#define EXPORT_JSON                                                                             \
    .export_name = "driple-prediction.json", .export_what = "predictions", .export_kind = "JSON", \
    .export_file = export_predictions

const struct tab_def tab_defs[APP_TAB_COUNT] = {
    [APP_TAB_PREDICT] = {.name = "Predict",
                         .hint = "Predict: Left/Right panes, Up/Down rows (a figure's formula); Tab: next tab",
                         .n_panes = APP_PANE_COUNT, .list_len = app_predict_list_len,
                         .selected = app_predict_selected, .sideways = keys_pane_step,
                         .mouse = keys_predict_mouse, EXPORT_JSON, .layout = layout_predict,
                         .draw = draw_predict},
    [APP_TAB_COMPARE] = {.name = "Compare",
                         .hint = "Compare: s sort, Space/M mark, O hide OOM, c mode, Enter apply, "
                                 "e JSON, E CSV",
                         .n_panes = 1, .list = true, .list_len = app_compare_list_len,
                         .shown = app_compare_ensure, .key = keys_compare_key,
                         .enter = keys_compare_enter, .sideways = keys_list_sideways,
                         .mouse = keys_list_mouse, EXPORT_JSON, .csv_name = "driple-compare.csv",
                         .csv_file = export_csv, .layout = layout_list, .draw = draw_compare},
    [APP_TAB_GROUPS] = {.name = "Groups",
                        .hint = "Groups: / search (Esc clears), Left/Right scroll names, Enter: "
                                "importance",
                        .n_panes = 1, .list = true, .list_len = app_groups_list_len,
                        .key = keys_groups_key, .enter = keys_groups_enter,
                        .sideways = keys_list_sideways, .mouse = keys_list_mouse, EXPORT_JSON,
                        .layout = layout_list, .draw = draw_groups},
    [APP_TAB_IMPORTANCE] = {.name = "Importance",
                            .hint = "Importance: j/k group, arrows pan, z/Z zoom, [ ] metric, r "
                                    "method, < > names",
                            .n_panes = 1, .key = imp_key, .mouse = importance_mouse,
                            .export_name = "driple-importance.svg", .export_what = "importance",
                            .export_kind = "SVG", .export_file = imp_export_svg,
                            .prepare = imp_sync, .draw = draw_importance, .busy = imp_busy,
                            .ready = imp_ready},
    [APP_TAB_SCALING] = {.name = "Scaling",
                         .hint = "Scaling: over workers and batch sizes (g n a w ... change "
                                 "the setting)",
                         .n_panes = 1, .prepare = app_scaling_ensure, EXPORT_JSON,
                         .draw = draw_scaling},
};
_Static_assert(APP_TAB_COUNT == 5, "a new tab needs its row in tab_defs");
