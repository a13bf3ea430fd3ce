/* view_predict.c: the predict tab: the 12 metrics (predicted and simulated lines per resource),
 * the derived figures with the out-of-memory warning, and one iteration's burst/idle pattern
 * per resource drawn to scale. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_common.h"

static const char *const res_label[DP_N_RESOURCES] = {"gpu mem  %", "gpu util %", "net rx MB/s",
                                                 "net tx MB/s"};

static void row3(WINDOW *w, int y, const char *name, const char *src, const double *m,
                 enum view_style st) {
    char buf[128], a1[16], a2[16], a3[16];
    view_num(a1, sizeof a1, m[0], 7);
    view_num(a2, sizeof a2, m[1], 7);
    view_num(a3, sizeof a3, m[2], 7);
    snprintf(buf, sizeof buf, "%-11s %-4s %s %s %s", name, src, a1, a2, a3);
    wattron(w, view_attr(st));
    view_put(w, y, 1, getmaxx(w) - 2, buf);
    wattroff(w, view_attr(st));
}

void view_table_draw(WINDOW *w, const struct app *a) {
    werase(w);
    bool focus = a->tab == APP_TAB_PREDICT && a->pane == APP_PANE_TABLE;
    view_box(w, a, "Prediction: 12 metrics", focus);
    int iw = getmaxx(w) - 2;
    wattron(w, view_attr(ST_HEAD));
    view_put(w, 1, 1, iw, "resource    src  idle ms act. ms    peak");
    wattroff(w, view_attr(ST_HEAD));
    const struct app_pred *p = &a->pred;
    for (int r = 0; r < DP_N_RESOURCES; r++) {
        int y = 2 + 2 * r;
        bool sel = r == a->pane_sel[APP_PANE_TABLE];
        enum view_style st = sel ? (focus ? ST_SEL : ST_SEL_DIM) : ST_NORMAL;
        if (p->p.ok) row3(w, y, res_label[r], "pred", p->p.m + 3 * r, st);
        else {
            wattron(w, view_attr(st));
            char buf[64];
            snprintf(buf, sizeof buf, "%-11s %-4s %s", res_label[r], "pred", "      no inspector");
            view_put(w, y, 1, iw, buf);
            wattroff(w, view_attr(st));
        }
        if (p->sim.ok) row3(w, y + 1, "", "sim", p->sim.m + 3 * r, ST_SIM);
        else {
            wattron(w, view_attr(ST_DIM));
            view_put(w, y + 1, 1, iw, p->sim_pending ? "            sim   simulating..."
                                                     : "            sim        -       -       -");
            wattroff(w, view_attr(ST_DIM));
        }
    }
    if (!p->p.ok && p->p.note[0] && getmaxy(w) > 10) { /* why: on the bottom border */
        char note[200];
        snprintf(note, sizeof note, " %.180s ", p->p.note);
        wattron(w, view_attr(ST_WARN));
        view_put(w, 10, 1, iw, note);
        wattroff(w, view_attr(ST_WARN));
    }
    wnoutrefresh(w);
}

/* Short forms of the derived figures' labels and units (dp_derived_figures), for a pane of
 * about 35 columns. */
static const char *const d_label[DP_N_DERIVED] = {"iteration", "throughput", "GPU util",
                                                  "mem-ctrl", "GPU memory", "net/iter",
                                                  "epoch time", "epoch cost"};
static const char *const d_unit[DP_N_DERIVED] = {"ms", "smp/s", "%", "%", "GB", "MB", "s", "$"};

void view_derived_draw(WINDOW *w, const struct app *a) {
    char buf[160], v1[16], v2[16];
    werase(w);
    bool focus = a->tab == APP_TAB_PREDICT && a->pane == APP_PANE_DERIVED;
    view_box(w, a, "Derived figures", focus);
    int iw = getmaxx(w) - 2;
    wattron(w, view_attr(ST_HEAD));
    view_put(w, 1, 1, iw, "figure       predicted simulated");
    wattroff(w, view_attr(ST_HEAD));
    const struct app_pred *p = &a->pred;
    for (int row = 0; row < APP_N_DERIVED_ROWS; row++) {
        enum dp_derived k = app_derived_rows[row];
        bool sel = row == a->pane_sel[APP_PANE_DERIVED];
        enum view_style st = sel ? (focus ? ST_SEL : ST_SEL_DIM) : ST_NORMAL;
        if (k == DP_D_MEMORY_GB && p->sim.oom) st = sel && focus ? ST_SEL : ST_WARN;
        view_num(v1, sizeof v1, p->p.ok ? p->p.d[k] : NAN, 8);
        view_num(v2, sizeof v2, p->sim.ok ? p->sim.d[k] : NAN, 8);
        if (p->sim_pending) snprintf(v2, sizeof v2, "%8s", "...");
        snprintf(buf, sizeof buf, "%-12s %s %s %s", d_label[k], v1, v2, d_unit[k]);
        wattron(w, view_attr(st));
        view_put(w, 2 + row, 1, iw, buf);
        wattroff(w, view_attr(st));
    }
    int y = 2 + APP_N_DERIVED_ROWS;
    if (y < getmaxy(w) - 1) {
        if (p->sim.oom) {
            snprintf(buf, sizeof buf, "OOM: %.1f GB > %.0f GB", p->sim.memory_gb, p->sim.gpu_memory_gb);
            wattron(w, view_attr(ST_WARN));
        } else if (!p->sim.ok && !p->sim_pending && p->sim.note[0]) {
            snprintf(buf, sizeof buf, "%.150s", p->sim.note); /* why there is no simulation */
            wattron(w, view_attr(ST_WARN));
        } else {
            char ds[16];
            view_num(ds, sizeof ds, a->dataset_size, 1);
            snprintf(buf, sizeof buf, "%s smp/epoch (d), $%.2f/GPU-h ($)", ds, a->price_hour);
            wattron(w, view_attr(ST_DIM));
        }
        view_put(w, y, 1, iw, buf);
        wattroff(w, view_attr(ST_WARN) | view_attr(ST_DIM));
    }
    wnoutrefresh(w);
}

/* One strip: the resource's burst/idle pattern over [0, T] ms, `rows` lines high; a burst
 * column's height follows its peak relative to `full`. */
static void strip(WINDOW *w, const struct app *a, int y, int x, int width, int rows,
                  const double *m3, double T, double axis, double full, enum view_style st) {
    static const char *const eighths[9] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    double idle = m3[0], act = m3[1], peak = m3[2];
    double period = idle + act;
    double level = full > 0 ? fmin(1.0, fmax(0.0, peak / full)) : 1.0;
    if (!(period > 0) || !(T > 0) || !(axis >= T) || !isfinite(level)) {
        view_put(w, y + rows - 1, x, width, "-");
        return;
    }
    int units = (int)lround(level * rows * 8); /* eighths of a cell over all rows */
    if (units < 1) units = 1;
    for (int c = 0; c < width; c++) {
        /* share of the column's time span spent in a burst (the burst opens each period) */
        double t0 = c * axis / width, t1 = (c + 1) * axis / width, on = 0;
        if (t0 >= T) break; /* this iteration is over; the axis belongs to the longer one */
        if (t1 > T) t1 = T;
        for (double t = t0; t < t1 - 1e-12;) {
            double ph = fmod(t, period);
            double end = ph < act ? t + (act - ph) : t + (period - ph);
            if (end > t1) end = t1;
            if (ph < act) on += end - t;
            if (end <= t) break;
            t = end;
        }
        bool burst = on * 2 >= t1 - t0;
        for (int r = 0; r < rows; r++) {
            int yy = y + rows - 1 - r;
            int u = burst ? units - r * 8 : 0;
            if (u > 8) u = 8;
            if (a->utf8) {
                if (u > 0) {
                    wattron(w, view_attr(st));
                    mvwaddstr(w, yy, x + c, eighths[u]);
                    wattroff(w, view_attr(st));
                } else {
                    wattron(w, view_attr(ST_DIM));
                    mvwaddstr(w, yy, x + c, r == 0 ? "·" : " ");
                    wattroff(w, view_attr(ST_DIM));
                }
            } else {
                char ch = u >= 4 ? '#' : u > 0 ? (r == 0 ? '#' : ' ') : (r == 0 ? '.' : ' ');
                wattron(w, view_attr(u > 0 ? st : ST_DIM));
                mvwaddch(w, yy, x + c, (chtype)ch);
                wattroff(w, view_attr(u > 0 ? st : ST_DIM));
            }
        }
    }
}

void view_strips_draw(WINDOW *w, const struct app *a) {
    char buf[160], tbuf[16];
    werase(w);
    bool focus = a->tab == APP_TAB_PREDICT && a->pane == APP_PANE_STRIPS;
    const struct app_pred *p = &a->pred;
    bool pred = p->p.ok;
    const double *m = pred ? p->p.m : p->sim.m;
    double T = pred ? p->p.d[DP_D_ITERATION_MS] : p->sim.d[DP_D_ITERATION_MS];
    bool both = pred && p->sim.ok;
    int ih = getmaxy(w) - 3, iw = getmaxx(w) - 2;
    /* rows per resource: predicted (and simulated when there is room); with both, one time axis
     * spans the longer iteration */
    int lines = both && ih >= 8 ? 2 : 1;
    double axis = lines == 2 ? fmax(T, p->sim.d[DP_D_ITERATION_MS]) : T;
    int per = ih / (DP_N_RESOURCES * lines);
    if (per < 1) per = 1;
    if (per > 3) per = 3;
    view_num(tbuf, sizeof tbuf, axis, 1);
    snprintf(buf, sizeof buf, "One iteration, to scale: 0 .. %s ms (%s%s)", tbuf,
             pred ? "predicted" : "simulated", lines == 2 ? "; simulated below" : "");
    view_box(w, a, buf, focus);
    if (!p->p.ok && !p->sim.ok) {
        view_put(w, 1, 1, iw, "nothing to draw: no inspector and no simulation");
        wnoutrefresh(w);
        return;
    }
    double netmax = 0;
    for (int r = 2; r < DP_N_RESOURCES; r++) {
        netmax = fmax(netmax, m[3 * r + 2]);
        if (lines == 2) netmax = fmax(netmax, p->sim.m[3 * r + 2]);
    }
    int lw = 12, bw = iw - lw;
    int y = 1;
    for (int r = 0; r < DP_N_RESOURCES && y + per <= ih + 1; r++) {
        double full = r < 2 ? 100.0 : netmax;
        view_put(w, y + per - 1, 1, lw - 1, res_label[r]);
        strip(w, a, y, 1 + lw, bw, per, m + 3 * r, T, axis, full, ST_BURST);
        y += per;
        if (lines == 2 && y + per <= ih + 1) {
            wattron(w, view_attr(ST_SIM));
            view_put(w, y + per - 1, 1, lw - 1, "  simulated");
            wattroff(w, view_attr(ST_SIM));
            strip(w, a, y, 1 + lw, bw, per, p->sim.m + 3 * r, p->sim.d[DP_D_ITERATION_MS], axis, full,
                      ST_SIM);
            y += per;
        }
    }
    /* time axis */
    int ay = getmaxy(w) - 2;
    wattron(w, view_attr(ST_DIM));
    for (int c = 0; c < bw; c++) mvwaddch(w, ay, 1 + lw + c, c % 10 == 0 ? '|' : '-');
    wattroff(w, view_attr(ST_DIM));
    view_put(w, ay, 1, lw - 1, "ms");
    for (int c = 0; c < bw; c += 20) {
        view_num(tbuf, sizeof tbuf, axis * c / bw, 1);
        view_put(w, ay, 1 + lw + c + 1, 8, tbuf);
    }
    wnoutrefresh(w);
}
