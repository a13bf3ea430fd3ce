/* view_predict.c: the predict tab: the 12 metrics (predicted and simulated lines per resource,
 * each predicted number with its 80% interval where the inspector gives one and a mark where it
 * was clamped), the derived figures with the out-of-memory warning, and one iteration's
 * burst/idle pattern per resource drawn to scale (ASCII levels outside UTF-8). The columns
 * narrow with the pane (compact numbers, short labels) before anything is cut. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "view_common.h"

/* The resources as rows: long labels where the pane has room, short ones where it has not.
 * "mem-ctrl": the memory controller's utilisation (busy time), not memory occupancy. */
static const char *const res_long[DP_N_RESOURCES] = {"mem-ctrl util %", "GPU util %",
                                                     "net RX MB/s", "net TX MB/s"};
static const char *const res_short[DP_N_RESOURCES] = {"mem-ctrl %", "GPU util %", "RX MB/s",
                                                      "TX MB/s"};

/* How a pane's rows are laid out: label and source columns, and a cell per number. */
struct cols {
    int  label, src;   /* widths; src 0: no column (the simulated line says "sim" as label) */
    int  cell;         /* a number with its interval */
    bool compact;      /* numbers in at most 4 columns, intervals in at most 3 */
};

/* The first layout that fits iw columns (one column kept free before the border). */
static struct cols table_cols(int iw, bool interval) {
    struct cols opts[] = {
        {15, 4, interval ? 15 : 8, false},
        {10, 4, interval ? 13 : 8, false},
        {10, 0, 8, interval},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        int need = opts[i].label + (opts[i].src ? 1 + opts[i].src : 0) + 3 * (1 + opts[i].cell);
        if (need <= iw - 1) return opts[i];
    }
    return opts[2];
}

/* "±" or, in ASCII, "+-". */
static const char *pm(void) { return view_ascii() ? "+-" : "\xc2\xb1"; }

/* One predicted number into buf: the value, "^" when clamped, and "±half-interval" when lo/hi
 * are known; at most c->cell columns. */
static void cell(char *buf, size_t n, double v, double lo, double hi, bool clamped,
                 const struct cols *c) {
    char val[16], hw[16] = "";
    bool iv = isfinite(lo) && isfinite(hi) && hi >= lo;
    if (c->compact) {
        view_num_fit(val, sizeof val, v, 4);
        if (iv) view_num_fit(hw, sizeof hw, (hi - lo) / 2, view_ascii() ? 2 : 3);
    } else {
        view_num_fit(val, sizeof val, v, 7);
        if (iv) view_num_fit(hw, sizeof hw, (hi - lo) / 2, 5);
    }
    snprintf(buf, n, "%s%s%s%s", val, clamped ? "^" : "", iv ? pm() : "", hw);
}

/* A row: label, source, three cells left-aligned in their columns. */
static void row(WINDOW *w, int y, int iw, const struct cols *c, const char *label,
                const char *src, char cells[3][48], enum view_style st) {
    char buf[256];
    int x = snprintf(buf, sizeof buf, "%-*s", c->label, label);
    if (c->src) x += snprintf(buf + x, sizeof buf - (size_t)x, " %-*s", c->src, src);
    for (int k = 0; k < 3 && x < (int)sizeof buf; k++) {
        /* right-aligned values without intervals line up; cells with them left-aligned */
        int pad = c->cell - text_cols(cells[k]);
        x += snprintf(buf + x, sizeof buf - (size_t)x, " %*s%s", pad > 0 ? pad : 0, "", cells[k]);
    }
    wattron(w, view_attr(st));
    view_put(w, y, 1, iw, buf);
    wattroff(w, view_attr(st));
}

void view_table_draw(WINDOW *w, const struct app *a) {
    werase(w);
    bool focus = a->tab == APP_TAB_PREDICT && a->pane == APP_PANE_TABLE;
    const struct app_pred *p = &a->pred;
    int iw = getmaxx(w) - 2;
    bool interval = false, clamped = false;
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        interval |= p->p.ok && isfinite(p->p.lo[o]) && isfinite(p->p.hi[o]);
        clamped |= p->p.ok && (p->p.clamped >> o & 1u);
    }
    struct cols c = table_cols(iw, interval);
    char title[96];
    snprintf(title, sizeof title, "Prediction: 12 metrics%s%s%s%s", interval ? ", " : "",
             interval ? pm() : "", interval ? " 80% interval" : "", clamped ? ", ^ clamped" : "");
    view_box(w, a, title, focus);
    char head[3][48] = {"idle ms", "act. ms", "peak"};
    row(w, 1, iw, &c, "resource", "src", head, ST_HEAD);
    const char *const *labels = c.label >= 15 ? res_long : res_short;
    for (int r = 0; r < DP_N_RESOURCES; r++) {
        int y = 2 + 2 * r;
        bool sel = r == a->pane_sel[APP_PANE_TABLE];
        enum view_style st = sel ? (focus ? ST_SEL : ST_SEL_DIM) : ST_NORMAL;
        char cells[3][48];
        if (p->p.ok) {
            for (int k = 0; k < 3; k++) {
                int o = DP_OUTPUT(r, k);
                cell(cells[k], sizeof cells[k], p->p.m[o], p->p.lo[o], p->p.hi[o],
                     p->p.clamped >> o & 1u, &c);
            }
            row(w, y, iw, &c, labels[r], "pred", cells, st);
        } else {
            char buf[96];
            snprintf(buf, sizeof buf, "%-*s %s", c.label, labels[r],
                     p->p.pending ? "loading the inspector..." : "no inspector");
            wattron(w, view_attr(st));
            view_put(w, y, 1, iw, buf);
            wattroff(w, view_attr(st));
        }
        if (p->sim.ok) {
            struct cols plain = c;
            for (int k = 0; k < 3; k++) {
                view_num_fit(cells[k], sizeof cells[k], p->sim.m[DP_OUTPUT(r, k)],
                             c.compact ? 4 : 7);
            }
            row(w, y + 1, iw, &plain, c.src ? "" : "  sim", "sim", cells, ST_SIM);
        } else {
            char buf[96];
            snprintf(buf, sizeof buf, "%*s%s", c.src ? c.label + 1 : 2, "",
                     p->sim_pending ? "sim  simulating..." : "sim  -");
            wattron(w, view_attr(ST_DIM));
            view_put(w, y + 1, 1, iw, buf);
            wattroff(w, view_attr(ST_DIM));
        }
    }
    if (!p->p.ok && p->p.note[0] && getmaxy(w) > 10) { /* why: on the bottom border */
        char note[300];
        snprintf(note, sizeof note, " %.280s ", p->p.note);
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
    char buf[256], v1[48], v2[16];
    werase(w);
    bool focus = a->tab == APP_TAB_PREDICT && a->pane == APP_PANE_DERIVED;
    view_box(w, a, "Derived figures", focus);
    int iw = getmaxx(w) - 2;
    const struct app_pred *p = &a->pred;
    bool interval = false;
    for (int k = 0; k < DP_N_DERIVED; k++)
        interval |= p->p.ok && isfinite(p->p.d_lo[k]) && isfinite(p->p.d_hi[k]);
    /* label, predicted (with its interval), simulated, unit: wide, or compact */
    struct cols c = {12, 0, interval ? 15 : 9, false};
    int simw = 9;
    if (c.label + 1 + c.cell + 1 + simw + 1 + 5 > iw - 1) {
        c = (struct cols){10, 0, 8, interval};
        simw = 7;
    }
    snprintf(buf, sizeof buf, "%-*s %*s %*s", c.label, "figure", c.cell, "predicted", simw,
             "simulated");
    wattron(w, view_attr(ST_HEAD));
    view_put(w, 1, 1, iw, buf);
    wattroff(w, view_attr(ST_HEAD));
    for (int row_i = 0; row_i < APP_N_DERIVED_ROWS; row_i++) {
        enum dp_derived k = app_derived_rows[row_i];
        bool sel = row_i == a->pane_sel[APP_PANE_DERIVED];
        enum view_style st = sel ? (focus ? ST_SEL : ST_SEL_DIM) : ST_NORMAL;
        if (k == DP_D_MEMORY_GB && (p->sim.oom || (p->p.ok && p->p.oom)))
            st = sel && focus ? ST_SEL : ST_WARN;
        if (p->p.ok)
            cell(v1, sizeof v1, p->p.d[k], p->p.d_lo[k], p->p.d_hi[k],
                 view_derived_clamped(&p->p, k), &c);
        else
            snprintf(v1, sizeof v1, "-");
        view_num_fit(v2, sizeof v2, p->sim.ok ? p->sim.d[k] : NAN, simw - 1);
        if (p->sim_pending) snprintf(v2, sizeof v2, "...");
        snprintf(buf, sizeof buf, "%-*s %*s %*s %s", c.label, d_label[k], c.cell, v1, simw, v2,
                 d_unit[k]);
        wattron(w, view_attr(st));
        view_put(w, 2 + row_i, 1, iw, buf);
        wattroff(w, view_attr(st));
    }
    int y = 2 + APP_N_DERIVED_ROWS;
    if (y < getmaxy(w) - 1) {
        enum view_style st = ST_DIM;
        if (p->sim.oom) {
            snprintf(buf, sizeof buf, "OUT OF MEMORY: %.1f GB > %.0f GB (simulated)",
                     p->sim.memory_gb, p->sim.gpu_memory_gb);
            st = ST_WARN;
        } else if (p->p.ok && p->p.oom) { /* the setting-aware inspector's footprint */
            const struct dp_gpu *g = dp_gpu_find(dp_session_catalog(a->ss), a->cur.gpu);
            snprintf(buf, sizeof buf, "OUT OF MEMORY: %.1f GB > %.0f GB (predicted)",
                     p->p.d[DP_D_MEMORY_GB], g ? g->memory_gb : NAN);
            st = ST_WARN;
        } else if (!p->sim.ok && !p->sim_pending && p->sim.note[0]) {
            snprintf(buf, sizeof buf, "no simulation: why below"); /* the strips say it whole */
            st = ST_WARN;
        } else {
            char ds[16];
            const char *src = NULL;
            double price = dp_session_price(a->ss, &a->cur, &src);
            view_num_fit(ds, sizeof ds, a->dataset_size, 5);
            if (isnan(price)) snprintf(buf, sizeof buf, "%s/epoch (d), no price read ($)", ds);
            else snprintf(buf, sizeof buf, "%s/epoch (d), $%.2f/GPU-h ($)", ds, price);
        }
        wattron(w, view_attr(st));
        view_put(w, y, 1, iw, buf);
        wattroff(w, view_attr(st));
    }
    wnoutrefresh(w);
}

/* One strip: the resource's burst/idle pattern over [0, T] ms, `rows` lines high; a burst
 * column's height follows its peak relative to `full` (eighths of a cell in UTF-8, ASCII
 * levels otherwise). */
static void strip(WINDOW *w, int y, int x, int width, int rows, const double *m3, double T,
                  double axis, double full, enum view_style st) {
    static const char *const eighths[9] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[9] = {' ', '_', '.', ',', '-', '=', '+', '*', '#'};
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
            wattron(w, view_attr(u > 0 ? st : ST_DIM));
            if (u > 0 && view_ascii()) mvwaddch(w, yy, x + c, (chtype)(unsigned char)ascii[u]);
            else if (u > 0) mvwaddstr(w, yy, x + c, eighths[u]);
            else if (r == 0) mvwaddstr(w, yy, x + c, view_ascii() ? "." : "·");
            wattroff(w, view_attr(u > 0 ? st : ST_DIM));
        }
    }
}

void view_strips_draw(WINDOW *w, const struct app *a) {
    char buf[320], tbuf[16];
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
    /* the simulator's reason when it has none, wrapped over the pane's free lines */
    int note_lines = 0;
    if (!p->sim.ok && !p->sim_pending && p->sim.note[0]) { /* the last inner lines */
        snprintf(buf, sizeof buf, "no simulation: %s", p->sim.note);
        note_lines = text_wrap(buf, iw - 1, 2, NULL, 0);
        if (note_lines > 2) note_lines = 2;
        if (note_lines > ih) note_lines = ih;
        wattron(w, view_attr(ST_WARN));
        view_wrap(w, ih + 1 - note_lines, 1, iw - 1, note_lines, 2, buf);
        wattroff(w, view_attr(ST_WARN));
    }
    if (!p->p.ok && !p->sim.ok) {
        if (!note_lines) view_put(w, 1, 1, iw, "nothing to draw: no inspector and no simulation");
        wnoutrefresh(w);
        return;
    }
    double netmax = 0;
    for (int r = 2; r < DP_N_RESOURCES; r++) {
        netmax = fmax(netmax, m[3 * r + 2]);
        if (lines == 2) netmax = fmax(netmax, p->sim.m[3 * r + 2]);
    }
    int lw = 12, bw = iw - lw - 1;
    int y = 1;
    for (int r = 0; r < DP_N_RESOURCES && y + per <= ih + 1 - note_lines; r++) {
        double full = r < 2 ? 100.0 : netmax;
        view_put(w, y + per - 1, 1, lw - 1, res_short[r]);
        strip(w, y, 1 + lw, bw, per, m + 3 * r, T, axis, full, ST_BURST);
        y += per;
        if (lines == 2 && y + per <= ih + 1 - note_lines) {
            wattron(w, view_attr(ST_SIM));
            view_put(w, y + per - 1, 1, lw - 1, "  simulated");
            wattroff(w, view_attr(ST_SIM));
            strip(w, y, 1 + lw, bw, per, p->sim.m + 3 * r, p->sim.d[DP_D_ITERATION_MS], axis,
                  full, ST_SIM);
            y += per;
        }
    }
    /* time axis: a tick every 10 columns, a label every 20 where it ends before the border */
    int ay = getmaxy(w) - 2;
    wattron(w, view_attr(ST_DIM));
    for (int c = 0; c < bw; c++) mvwaddch(w, ay, 1 + lw + c, c % 10 == 0 ? '|' : '-');
    wattroff(w, view_attr(ST_DIM));
    view_put(w, ay, 1, lw - 1, "ms");
    for (int c = 0; c < bw; c += 20) {
        view_num(tbuf, sizeof tbuf, axis * c / bw, 1);
        if (c + 1 + text_cols(tbuf) < bw) view_put(w, ay, 1 + lw + c + 1, 8, tbuf);
    }
    wnoutrefresh(w);
}
