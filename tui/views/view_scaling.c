/* view_scaling.c: the scaling tab: throughput and iteration time against the worker count and
 * against the batch size on the what-if GPU, as bar plots (simulated, and predicted where an
 * inspector serves the point itself), the out-of-memory batches marked, and the largest batch
 * that fits stated. Draws only (the sweep is app_scaling.c's). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "view_common.h"

enum { Y_AXIS_W = 7 }; /* "12.3k |" */

/* One bar plot: title, bars of up to two series per category, x labels. */
struct plot {
    int y, x, h, w;
    const char *title;
    const struct app_scale_point *pts;
    int n;
    bool iter;    /* iteration time (else throughput) */
    bool pred;    /* draw the predicted series too */
    int64_t cur;  /* the what-if x, whose label stands out */
};

static double value_of(const struct app_scale_point *p, bool iter, bool pred) {
    if (pred) return p->pred_ok ? (iter ? p->pred_iter : p->pred_thru) : NAN;
    if (!p->valid || p->sim_pending || !p->sim.ok || p->sim.oom) return NAN;
    return p->sim.d[iter ? DP_D_ITERATION_MS : DP_D_THROUGHPUT];
}

/* A bar of `units` eighths of a cell, bottom at row `base`, `rows` high. */
static void bar(WINDOW *win, int base, int x, int rows, int units, enum view_style st) {
    static const char *const eighths[9] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[9] = {' ', '_', '.', ',', '-', '=', '+', '*', '#'};
    wattron(win, view_attr(st));
    for (int r = 0; r < rows && units > 0; r++, units -= 8) {
        int u = units > 8 ? 8 : units;
        if (view_ascii()) mvwaddch(win, base - r, x, (chtype)(unsigned char)ascii[u]);
        else mvwaddstr(win, base - r, x, eighths[u]);
    }
    wattroff(win, view_attr(st));
}

/* "64", "1k", "16k": an x label in at most 3 columns. */
static void x_label(char *buf, size_t n, int64_t x) {
    if (x < 1000) snprintf(buf, n, "%lld", (long long)x);
    else snprintf(buf, n, "%lldk", (long long)(x / 1024));
}

static void plot_draw(WINDOW *win, const struct plot *p) {
    char buf[64];
    wattron(win, view_attr(ST_HEAD));
    view_put(win, p->y, p->x, p->w - 1, p->title);
    wattroff(win, view_attr(ST_HEAD));
    int rows = p->h - 2, base = p->y + p->h - 2; /* bars: rows above the x labels */
    if (rows < 1 || p->w < Y_AXIS_W + 4) return;
    double mx = 0;
    for (int i = 0; i < p->n; i++) {
        double v = value_of(&p->pts[i], p->iter, false);
        if (isfinite(v)) mx = fmax(mx, v);
        v = p->pred ? value_of(&p->pts[i], p->iter, true) : NAN;
        if (isfinite(v)) mx = fmax(mx, v);
    }
    /* y axis: the top and 0 */
    wattron(win, view_attr(ST_DIM));
    for (int r = 0; r < rows; r++) mvwaddch(win, base - r, p->x + Y_AXIS_W - 1, view_ascii() ? '|' : ACS_VLINE);
    wattroff(win, view_attr(ST_DIM));
    view_num(buf, sizeof buf, mx, Y_AXIS_W - 2);
    if (mx > 0) view_put(win, base - rows + 1, p->x, Y_AXIS_W - 2, buf);
    view_put(win, base, p->x, Y_AXIS_W - 2, "    0");
    int per = p->pred ? 3 : 2; /* columns per category: the bars and a gap */
    int x0 = p->x + Y_AXIS_W, room = p->w - Y_AXIS_W - 1;
    int label_end = x0 - 1; /* labels skip where the last one still stands */
    for (int i = 0; i < p->n && (i + 1) * per <= room; i++) {
        const struct app_scale_point *pt = &p->pts[i];
        int cx = x0 + i * per;
        if (p->pred) {
            double v = value_of(pt, p->iter, true);
            if (isfinite(v) && mx > 0) bar(win, base, cx, rows, (int)lround(v / mx * rows * 8), ST_GOOD);
            cx++;
        }
        double v = value_of(pt, p->iter, false);
        if (isfinite(v) && mx > 0) {
            int u = (int)lround(v / mx * rows * 8);
            bar(win, base, cx, rows, u < 1 ? 1 : u, ST_SIM);
        } else { /* why there is no bar: out of memory, pending, or no such setting */
            const char *m = !pt->valid ? "-" : pt->sim_pending ? view_ellipsis()
                                          : pt->sim.ok && pt->sim.oom ? "X" : "?";
            enum view_style st = pt->sim.ok && pt->sim.oom ? ST_WARN : ST_DIM;
            wattron(win, view_attr(st));
            mvwaddstr(win, base, cx, m);
            wattroff(win, view_attr(st));
        }
        x_label(buf, sizeof buf, pt->x);
        int lw = (int)strlen(buf), lx = x0 + i * per;
        if (lx > label_end && lx + lw <= p->x + p->w - 1) {
            enum view_style st = pt->x == p->cur ? ST_SEL : ST_DIM;
            wattron(win, view_attr(st));
            view_put(win, base + 1, lx, lw, buf);
            wattroff(win, view_attr(st));
            label_end = lx + lw;
        }
    }
}

void view_scaling_draw(WINDOW *win, const struct app *a) {
    const struct app_scaling *sc = &a->scale;
    char title[320], line[512];
    werase(win);
    int rows = getmaxy(win), cols = getmaxx(win);
    snprintf(title, sizeof title,
             "Scaling %s on %s at batch %lld: simulated, predicted where an inspector serves the "
             "point itself", sc->base.id, sc->base.gpu, (long long)sc->batch);
    wattron(win, view_attr(ST_TITLE));
    view_wrap(win, 0, 0, cols - 1, 1, 0, title);
    wattroff(win, view_attr(ST_TITLE));
    if (sc->n_batches == 0) {
        view_put(win, 2, 1, cols - 2, "nothing swept yet");
        wnoutrefresh(win);
        return;
    }
    int foot = rows >= 22 ? 3 : 2, ph = (rows - 1 - foot) / 2, pw = cols / 2;
    bool pred = false;
    for (int i = 0; i < APP_SCALE_WORKERS; i++) pred |= sc->workers[i].pred_ok;
    struct plot p[4] = {
        {1, 0, ph, pw, "throughput (samples/s) vs workers", sc->workers, APP_SCALE_WORKERS,
         false, pred, sc->base.workers},
        {1, pw, ph, cols - pw, "throughput (samples/s) vs batch", sc->batches, sc->n_batches,
         false, false, sc->batch},
        {1 + ph, 0, ph, pw, "iteration (ms) vs workers", sc->workers, APP_SCALE_WORKERS, true,
         pred, sc->base.workers},
        {1 + ph, pw, ph, cols - pw, "iteration (ms) vs batch", sc->batches, sc->n_batches, true,
         false, sc->batch},
    };
    for (int k = 0; k < 4; k++) plot_draw(win, &p[k]);
    /* what the marks mean, the largest batch that fits, and why a point is missing */
    const char *why = "";
    for (int i = 0; i < APP_SCALE_WORKERS && !*why; i++)
        if (!sc->workers[i].valid && sc->workers[i].note[0]) why = sc->workers[i].note;
    snprintf(line, sizeof line, "%s. Bars: %ssimulated (magenta)%s; X out of memory, - no such "
             "setting%s%s",
             sc->fit_known ? sc->fit_note : "largest batch that fits: searching",
             pred ? "predicted (green), " : "", pred ? "" : " (no inspector for these points)",
             *why ? ": " : "", why);
    wattron(win, view_attr(ST_HEAD));
    view_wrap(win, rows - foot, 0, cols - 1, foot, 2, line);
    wattroff(win, view_attr(ST_HEAD));
    wnoutrefresh(win);
}
