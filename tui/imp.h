/* imp.h: the explorer's glue to the importance pane (tui/views/view_importance.c):
 * keeps the pane's borrowed inputs in step with the app (grouped graph per batch, the current
 * inspector, the selected metric), runs its slow work (the Graphviz layout, occlusion) on one
 * background thread, routes the tab's keys and clicks, exports the SVG. */
#ifndef DRIPLE_VIEW_IMP_H
#define DRIPLE_VIEW_IMP_H

#include <curses.h>

#include "app.h"
#include "layout.h"

struct importance_view;

/* Brings the pane up to date (layout on a new grouped graph, started in the background;
 * importances on a new inspector, batch or metric, or once the layout arrives: grad here,
 * occlusion, or a grad pass that took over IMPORTANCE_SYNC_MS, in the background, the newest
 * request only); takes in what the thread finished; cheap when nothing changed. */
void imp_sync(struct app *a);
/* Starts the pane's background layout ahead of the tab's first open (the loop calls it once the
 * first frame is up); nothing when the pane exists already. */
void imp_prepare(struct app *a);
/* True while the background thread lays out a new grouped graph or computes importances, or
 * such work waits for it (imp_sync starts it and takes the result in once done; the pane says
 * "laying out" or "computing occlusion importance..." meanwhile). */
bool imp_busy(const struct app *a);
/* True when the thread's work is finished and the next imp_sync (a redraw) takes it in. */
bool imp_ready(struct app *a);
/* Wall time of the last background layout in ms once taken in; -1 before (the benchmark). */
double imp_layout_ms(const struct app *a);
/* Draws the pane into w (the body), then wnoutrefresh; draws only (imp_sync first). */
void imp_draw(WINDOW *w, const struct app *a);
/* The tab's own keys: j/k select, arrows pan, z/Z zoom, [ ] metric, r method, 0 reset.
 * Returns enum reaction flags, or -1 when ch is not one of them. */
int imp_key(struct app *a, int ch);
/* A click in the pane (body rectangle) selects the group drawn nearest to it. */
int imp_mouse(struct app *a, struct rect body, int y, int x);
/* Writes the importance graph as SVG (Graphviz), with the importances: waits for the
 * background thread first. */
enum dp_status imp_export_svg(struct app *a, const char *path, struct dp_error *err);
/* Help lines for the tab's keys (static strings); returns the count. */
int imp_help_lines(const char **lines, int max);
/* The pane's state, read only (tests); NULL before the first imp_sync. */
const struct importance_view *imp_view(const struct app *a);
/* Frees the pane's state (a->imp), joining a running layout or computation first (it waits for
 * it: the engine cannot stop one midway); NULL-safe. app_free calls it (a->imp_release). */
void imp_free(struct app *a);

#endif
