/* render_gv.c: the grouped graph through Graphviz (the only file that includes gvc.h). Builds a
 * cgraph graph (one node per group, filled by importance, labelled with op count and top op
 * types), lays it out with dot or sfdp (falling back to neato, then dot) and renders it, or hands
 * back the node positions scaled for the terminal. Graphviz messages are captured, never printed. */
#include "dp/render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gvc.h>

#include "dp/files.h"

/* ---- sanitizer builds ----
 * Rendering text through Graphviz's pango plugin leaves fontconfig, pango and cairo caches
 * allocated at exit (their own, never freed by design). LeakSanitizer reads this hook when the
 * program is built with it (`make san`); otherwise the function is never called. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libfontconfig.so\n"
           "leak:libpango-1.0.so\n"
           "leak:libpangoft2-1.0.so\n"
           "leak:libpangocairo-1.0.so\n"
           "leak:libcairo.so\n"
           "leak:libgvplugin_pango.so\n";
}

/* ---- names ---- */

const char *dp_render_format_name(enum dp_render_format f) {
    switch (f) {
    case DP_RENDER_SVG: return "svg";
    case DP_RENDER_PNG: return "png";
    case DP_RENDER_DOT: return "dot";
    default: return "unknown";
    }
}

static const char *const layout_names[DP_LAYOUT_COUNT] = {"auto", "dot", "sfdp", "neato"};

const char *dp_render_layout_name(enum dp_render_layout_engine l) {
    return (unsigned)l < DP_LAYOUT_COUNT ? layout_names[l] : "unknown";
}

bool dp_render_layout_parse(const char *s, enum dp_render_layout_engine *out) {
    if (!s) return false;
    for (int i = 0; i < DP_LAYOUT_COUNT; i++)
        if (!strcmp(s, layout_names[i])) {
            *out = (enum dp_render_layout_engine)i;
            return true;
        }
    return false;
}

/* ---- Graphviz messages ---- */

/* Graphviz reports through a global callback; keep the last message for err (not thread-safe,
 * like Graphviz itself). */
static char gv_msg[256];

static int gv_errf(char *msg) {
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
    if (n >= sizeof gv_msg) n = sizeof gv_msg - 1;
    memcpy(gv_msg, msg, n);
    gv_msg[n] = '\0';
    return 0;
}

static void gv_capture(void) {
    gv_msg[0] = '\0';
    agseterrf(gv_errf);
}

static const char *gv_last(void) { return gv_msg[0] ? gv_msg : "no message from Graphviz"; }

/* One Graphviz context per process, made on first use and kept: Graphviz 2.43's pango plugin
 * caches a pointer to the last font name, which a freed context leaves dangling (use after free
 * under ASan on the second context), and each context leaks its plugin configuration text.
 * gvContext() reads the installed plugin configuration (written by `dot -c`). */
static GVC_t *gv_context(void) {
    static GVC_t *gvc;
    if (!gvc) gvc = gvContext();
    return gvc;
}

/* cgraph's 2.x API takes char * for names and values that it only reads. */
static void set_attr(void *obj, const char *key, const char *value) {
    agsafeset(obj, (char *)key, (char *)value, (char *)"");
}

/* ---- building the graph ---- */

/* White-yellow-red (ColorBrewer YlOrRd end points) at t in [0, 1]. */
static void heat_colour(double t, char buf[8]) {
    static const double stops[3][3] = {{255, 255, 204}, {253, 141, 60}, {189, 0, 38}};
    if (!(t >= 0.0)) t = 0.0;
    if (t > 1.0) t = 1.0;
    int k = t < 0.5 ? 0 : 1;
    double u = t < 0.5 ? t * 2.0 : (t - 0.5) * 2.0;
    int rgb[3];
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)lround(stops[k][c] + (stops[k + 1][c] - stops[k][c]) * u);
    snprintf(buf, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* Copies s into a label, dropping characters Graphviz would read as escapes or quotes. */
static void label_append(char *buf, size_t n, const char *s) {
    size_t len = strlen(buf);
    for (; *s && len + 1 < n; s++)
        buf[len++] = (*s == '\\' || *s == '"') ? '_' : *s;
    buf[len] = '\0';
}

static enum dp_render_layout_engine pick_engine(enum dp_render_layout_engine l, int n) {
    if (l == DP_LAYOUT_AUTO) return n <= DP_RENDER_DOT_MAX ? DP_LAYOUT_DOT : DP_LAYOUT_SFDP;
    return l;
}

/* A cgraph graph of g; with `plain` nodes are fixed-size unlabelled boxes (terminal layout). */
static Agraph_t *build(const struct dp_grouped *g, const struct dp_explain *e,
                       const struct dp_render_opts *o, bool plain, enum dp_render_layout_engine eng,
                       Agnode_t ***nodes_out) {
    Agraph_t *ag = agopen((char *)"grouped", Agundirected, NULL);
    if (!ag) return NULL;
    Agnode_t **nodes = calloc((size_t)(g->n_groups > 0 ? g->n_groups : 1), sizeof *nodes);
    if (!nodes) {
        agclose(ag);
        return NULL;
    }
    int max_types = o && o->max_types > 0 ? o->max_types : 2;
    double max_imp = 0.0;
    if (e && e->n_groups == g->n_groups)
        for (int i = 0; i < e->n_groups; i++)
            if (e->groups[i].importance > max_imp) max_imp = e->groups[i].importance;

    set_attr(ag, "outputorder", "edgesfirst");
    if (eng == DP_LAYOUT_DOT) {
        set_attr(ag, "nodesep", "0.15");
        set_attr(ag, "ranksep", "0.4");
    } else {
        set_attr(ag, "overlap", "false");
        set_attr(ag, "sep", "+6");
    }
    if (!plain) {
        char title[512] = "";
        if (o && o->title) label_append(title, sizeof title, o->title);
        else {
            label_append(title, sizeof title, g->graph ? g->graph : "grouped graph");
            if (e) {
                char tail[160];
                snprintf(tail, sizeof tail, ": importance for %s (%s)", dp_metric_name(e->metric),
                         dp_explain_method_name(e->method));
                label_append(title, sizeof title, tail);
            }
        }
        set_attr(ag, "label", title);
        set_attr(ag, "labelloc", "t");
        set_attr(ag, "fontname", "Helvetica");
    }

    for (int i = 0; i < g->n_groups; i++) {
        char name[32];
        snprintf(name, sizeof name, "g%d", i);
        Agnode_t *n = agnode(ag, name, 1);
        if (!n) goto fail;
        nodes[i] = n;
        set_attr(n, "shape", "box");
        if (plain) {
            set_attr(n, "label", "");
            set_attr(n, "width", "0.9");
            set_attr(n, "height", "0.35");
            set_attr(n, "fixedsize", "true");
            continue;
        }
        set_attr(n, "style", "filled,rounded");
        set_attr(n, "fontname", "Helvetica");
        set_attr(n, "fontsize", g->n_groups > DP_RENDER_DOT_MAX ? "9" : "11");
        const struct dp_explain_group *gr = e && e->n_groups == g->n_groups ? &e->groups[i] : NULL;
        int n_ops = gr && gr->n_ops > 0 ? gr->n_ops : (int)lround(g->x[i * DP_N_FEATURES + 1]);
        char label[512];
        snprintf(label, sizeof label, "g%d: %d ops", i, n_ops);
        if (gr) {
            for (int t = 0; t < gr->n_types && t < max_types; t++) {
                char line[160];
                size_t ln = strlen(label);
                snprintf(label + ln, sizeof label - ln, "\\n");
                snprintf(line, sizeof line, "%s (%d)", gr->types[t].op, gr->types[t].n_ops);
                label_append(label, sizeof label, line);
            }
            char pct[48];
            snprintf(pct, sizeof pct, "\\n%.1f%%", 100.0 * gr->importance);
            size_t len = strlen(label);
            snprintf(label + len, sizeof label - len, "%s", pct);
            char col[8];
            double t = max_imp > 0.0 ? gr->importance / max_imp : 0.0;
            heat_colour(t, col);
            set_attr(n, "fillcolor", col);
            set_attr(n, "fontcolor", t > 0.6 ? "white" : "black");
            char tip[128];
            snprintf(tip, sizeof tip, "group %d, rank %d, importance %.4f, attribution %.6g", i,
                     gr->rank + 1, gr->importance, gr->attribution);
            set_attr(n, "tooltip", tip);
        } else {
            set_attr(n, "fillcolor", "white");
        }
        set_attr(n, "label", label);
    }
    for (int k = 0; k < g->n_edges; k++) {
        int a = g->edges[2 * k], b = g->edges[2 * k + 1];
        if (a < 0 || b < 0 || a >= g->n_groups || b >= g->n_groups) continue;
        Agedge_t *ed = agedge(ag, nodes[a], nodes[b], NULL, 1);
        if (!ed) goto fail;
        /* Grey, thin edges keep dense graphs readable under the coloured nodes. */
        if (!plain) {
            set_attr(ed, "color", "#8c8c8c");
            set_attr(ed, "penwidth", g->n_groups > DP_RENDER_DOT_MAX ? "0.6" : "1");
        }
    }
    *nodes_out = nodes;
    return ag;
fail:
    free(nodes);
    agclose(ag);
    return NULL;
}

/* Lays ag out with the wanted engine, falling back to neato and dot when it is unavailable. */
static enum dp_status layout(GVC_t *gvc, Agraph_t *ag, enum dp_render_layout_engine eng,
                             const char **used, struct dp_error *err) {
    const char *tries[3];
    int n = 0;
    tries[n++] = layout_names[eng];
    if (eng != DP_LAYOUT_NEATO && eng != DP_LAYOUT_DOT) tries[n++] = "neato";
    if (eng != DP_LAYOUT_DOT) tries[n++] = "dot";
    for (int i = 0; i < n; i++) {
        if (gvLayout(gvc, ag, tries[i]) == 0) {
            *used = tries[i];
            return DP_OK;
        }
    }
    return dp_error_set(err, DP_ERR_RENDER,
                        "render: Graphviz layout '%s' failed: %s (if no layout engine is known, "
                        "the plugin configuration may be missing: run 'dot -c' as root)",
                        tries[0], gv_last());
}

/* Renders into memory: *data (NUL-terminated, *len bytes) is the caller's. */
static enum dp_status render(const struct dp_grouped *g, const struct dp_explain *e,
                             const struct dp_render_opts *o, enum dp_render_format f,
                             char **data, size_t *len, struct dp_error *err) {
    if (!g) return dp_error_set(err, DP_ERR_INVALID, "render: no graph");
    if ((unsigned)f >= DP_RENDER_FORMAT_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "render: unknown output format %d", (int)f);
    enum dp_render_layout_engine eng = pick_engine(o ? o->layout : DP_LAYOUT_AUTO, g->n_groups);
    if ((unsigned)eng >= DP_LAYOUT_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "render: unknown layout engine %d", (int)eng);
    gv_capture();
    GVC_t *gvc = gv_context();
    if (!gvc) return dp_error_set(err, DP_ERR_RENDER, "render: cannot create a Graphviz context");
    enum dp_status st;
    Agnode_t **nodes = NULL;
    Agraph_t *ag = build(g, e, o, false, eng, &nodes);
    if (!ag) {
        st = dp_error_set(err, DP_ERR_NOMEM, "render: cannot build the Graphviz graph");
        goto done;
    }
    const char *used = NULL;
    if ((st = layout(gvc, ag, eng, &used, err)) != DP_OK) goto done;
    const char *fmt = dp_render_format_name(f);
    unsigned int n = 0;
    char *buf = NULL;
    int rc = gvRenderData(gvc, ag, fmt, &buf, &n);
    if (rc == 0 && buf) {
        char *copy = malloc((size_t)n + 1);
        if (!copy) {
            gvFreeRenderData(buf);
            gvFreeLayout(gvc, ag);
            st = dp_error_set(err, DP_ERR_NOMEM, "render: out of memory");
            goto done;
        }
        memcpy(copy, buf, n);
        copy[n] = '\0';
        *data = copy;
        *len = n;
    }
    if (buf) gvFreeRenderData(buf);
    gvFreeLayout(gvc, ag);
    if (rc != 0) {
        st = dp_error_set(err, DP_ERR_RENDER, "render: Graphviz could not write %s: %s", fmt,
                          gv_last());
        goto done;
    }
    st = DP_OK;
done:
    free(nodes);
    if (ag) agclose(ag);
    return st;
}

enum dp_status dp_render_file(const struct dp_grouped *g, const struct dp_explain *e,
                              const struct dp_render_opts *o, enum dp_render_format f,
                              const char *file, struct dp_error *err) {
    if (!file || !*file) return dp_error_set(err, DP_ERR_INVALID, "render: no output file");
    char *data = NULL;
    size_t len = 0;
    enum dp_status st = render(g, e, o, f, &data, &len, err);
    if (st) return st;
    st = dp_out_write_all(file, data, len, err);
    free(data);
    return st;
}

enum dp_status dp_render_data(const struct dp_grouped *g, const struct dp_explain *e,
                              const struct dp_render_opts *o, enum dp_render_format f,
                              char **out, size_t *len, struct dp_error *err) {
    if (!out || !len) return dp_error_set(err, DP_ERR_INVALID, "render: no output buffer");
    return render(g, e, o, f, out, len, err);
}

enum dp_status dp_render_dot_stats(const char *text, int *n_nodes, int *n_edges,
                                   struct dp_error *err) {
    if (!text) return dp_error_set(err, DP_ERR_INVALID, "render: no DOT text");
    gv_capture();
    Agraph_t *ag = agmemread(text);
    if (!ag) return dp_error_set(err, DP_ERR_PARSE, "render: DOT does not parse: %s", gv_last());
    if (n_nodes) *n_nodes = agnnodes(ag);
    if (n_edges) *n_edges = agnedges(ag);
    agclose(ag);
    return DP_OK;
}

/* ---- layout for the terminal ---- */

void dp_layout_free(struct dp_layout *l) {
    if (!l) return;
    free(l->x);
    free(l->y);
    free(l);
}

enum dp_status dp_render_layout(const struct dp_grouped *g, enum dp_render_layout_engine engine,
                                double w, double h, bool keep_aspect, struct dp_layout **out,
                                struct dp_error *err) {
    if (!g || !out) return dp_error_set(err, DP_ERR_INVALID, "render: layout: no graph");
    if (!(w > 0.0) || !(h > 0.0))
        return dp_error_set(err, DP_ERR_INVALID, "render: layout: size %gx%g is not positive", w, h);
    enum dp_render_layout_engine eng = pick_engine(engine, g->n_groups);
    if ((unsigned)eng >= DP_LAYOUT_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "render: unknown layout engine %d", (int)eng);
    enum dp_status st = DP_ERR_NOMEM;
    struct dp_layout *l = calloc(1, sizeof *l);
    if (!l) return dp_error_set(err, DP_ERR_NOMEM, "render: out of memory");
    size_t n = (size_t)(g->n_groups > 0 ? g->n_groups : 1);
    l->x = calloc(n, sizeof *l->x);
    l->y = calloc(n, sizeof *l->y);
    l->n_nodes = g->n_groups;
    l->w = w;
    l->h = h;
    if (!l->x || !l->y) {
        dp_layout_free(l);
        return dp_error_set(err, DP_ERR_NOMEM, "render: out of memory");
    }
    gv_capture();
    GVC_t *gvc = gv_context();
    if (!gvc) {
        dp_layout_free(l);
        return dp_error_set(err, DP_ERR_RENDER, "render: cannot create a Graphviz context");
    }
    Agnode_t **nodes = NULL;
    Agraph_t *ag = build(g, NULL, NULL, true, eng, &nodes);
    if (!ag) {
        st = dp_error_set(err, DP_ERR_NOMEM, "render: cannot build the Graphviz graph");
        goto done;
    }
    if ((st = layout(gvc, ag, eng, &l->engine, err)) != DP_OK) goto done;
    /* Node centres are in points with y growing upwards; the bounding box holds them all. */
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (int i = 0; i < g->n_groups; i++) {
        double px = ND_coord(nodes[i]).x, py = ND_coord(nodes[i]).y;
        if (px < x0) x0 = px;
        if (px > x1) x1 = px;
        if (py < y0) y0 = py;
        if (py > y1) y1 = py;
    }
    double bw = x1 - x0, bh = y1 - y0;
    double sx = bw > 0.0 ? w / bw : 0.0, sy = bh > 0.0 ? h / bh : 0.0;
    if (keep_aspect) {
        double s = sx > 0.0 && sy > 0.0 ? fmin(sx, sy) : fmax(sx, sy);
        sx = sy = s;
    }
    /* Centre the drawing in the box. */
    double ox = (w - bw * sx) / 2.0, oy = (h - bh * sy) / 2.0;
    for (int i = 0; i < g->n_groups; i++) {
        l->x[i] = ox + (ND_coord(nodes[i]).x - x0) * sx;
        l->y[i] = oy + (y1 - ND_coord(nodes[i]).y) * sy;
    }
    gvFreeLayout(gvc, ag);
    st = DP_OK;
done:
    free(nodes);
    if (ag) agclose(ag);
    if (st != DP_OK) {
        dp_layout_free(l);
        return st;
    }
    *out = l;
    return DP_OK;
}
